"""The released code's retrieval (``star_rag.released``) step by step against by-hand references on a
real MultiTQ slice, each switch changing what it should; the pairing bug on a tiny KG; the
decomposition table and the paper-vs-code table."""

from __future__ import annotations

import re

import numpy as np
import pytest
from fakes import fake_llm
from test_star_rag import facts_about, kg_slice, stub_semantic
from test_star_rag_graph import make_kg

from temporag.answer import evaluate
from temporag.methods import star_rag
from temporag.methods.base import Method, Retrieval
from temporag.methods.star_rag import code_tables, record, report
from temporag.methods.star_rag.released import ReleasedCodeRAG
from temporag.methods.star_rag.time_words import final_operation, question_day, rerank_direction
from temporag.timeutil import day_of

# -- the question's date and words ------------------------------------------------------------------


def test_question_day_and_the_two_word_lists():
    assert question_day("Who visited Iraq in March 2010?") == day_of("2010-01-01")  # the year only
    assert question_day("Who visited Iraq on 2010-03-05?") == day_of("2010-03-05")
    assert question_day("Who visited Iraq first?") is None
    assert rerank_direction("Before Iran, who did China praise?") == "before"
    assert rerank_direction("Who received aid from China?") == "after"  # 'from' is an 'after' word
    assert rerank_direction("Who praised China in 2010?") is None
    assert final_operation("Who was praised by China?") == ("before", True)  # 'by' is a 'before' word
    assert final_operation("Who did it prior to 2010?") == ("before", False)
    assert final_operation("Who did it no later than 2010?") == ("before", True)
    assert final_operation("Who did it later than 2010?") == ("after", False)
    assert final_operation("Who did it after 2010?") == ("after", True)
    assert final_operation("Who did it in 2010?") == (None, True)


# -- a real slice of MultiTQ --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slice_setup(kg, questions):
    """Every fact about the entities of six real before/after questions (at most 4,000), its rule graph
    from consecutive events, random triple vectors, and the released-code retriever on it."""
    picked = [q for q in questions if q.qtype in ("before_after", "after_first", "before_last")][:6]
    sub = kg_slice(kg, facts_about(kg, picked, 4000))
    params = star_rag.GraphParams(min_support=0.2, k_type=2, temporal_pairs="consecutive")
    graph = star_rag.build_rule_graph(sub, params)
    semantic = stub_semantic(sub)
    released = ReleasedCodeRAG(sub, graph, semantic, anchor_triples=40)
    q_vecs = semantic.embed_questions([q.question for q in picked])
    rows_of_scores = q_vecs @ semantic.triple_vectors.T
    return released, picked, q_vecs, rows_of_scores


def anchors_by_hand(rel: ReleasedCodeRAG, scores: np.ndarray, question: str) -> list[int]:
    """Step 1 by its definition: triples by score, their earliest events, the top relation, the filter
    and the (violates, days away, −score) order."""
    kg = rel.kg
    triples = sorted(range(kg.n_triples), key=lambda t: (-scores[t], t))[: rel.anchor_triples]
    events = []
    for t in triples:
        mine = np.flatnonzero(kg.triple_of_fact == t).tolist()
        events += sorted(mine, key=lambda f: (kg.t_start[f], f))[: rel.events_per_triple]
    if rel.relation_filter:
        events = [f for f in events if kg.r[f] == kg.triple_columns[1][triples[0]]]
    day = question_day(question)
    day = int(kg.t_start[events[0]]) if day is None else day
    side = rerank_direction(question)

    def ok(f):
        return side is None or (kg.t_start[f] <= day if side == "before" else kg.t_start[f] >= day)

    if rel.time_filter and any(ok(f) for f in events):
        events = [f for f in events if ok(f)]
    score = {f: scores[kg.triple_of_fact[f]] for f in events}
    key = {f: (not ok(f), abs(int(kg.t_start[f]) - day), -score[f], i) for i, f in enumerate(events)}
    return (
        sorted(events, key=key.get)
        if rel.time_order
        else sorted(events, key=lambda f: (-score[f], key[f][3]))
    )


def test_anchors_follow_the_code_and_the_time_switches_change_them(slice_setup):
    released, picked, _, rows = slice_setup
    kg = released.kg
    changed = 0
    for q, scores in zip(picked, rows):
        for variant in (released, released.variant(time_filter=False), released.variant(time_order=False)):
            got, info = variant.anchors(scores, q.question)
            assert got.tolist() == anchors_by_hand(variant, scores, q.question)
        anchors, info = released.anchors(scores, q.question)
        assert len(set(kg.r[anchors].tolist())) == 1  # only the top triple's relation
        assert info["direction"] == rerank_direction(q.question)
        loose, _ = released.variant(time_filter=False).anchors(scores, q.question)
        assert set(anchors.tolist()) <= set(loose.tolist())
        changed += len(loose) > len(anchors)
        wide, _ = released.variant(relation_filter=False, time_filter=False).anchors(scores, q.question)
        assert set(loose.tolist()) <= set(wide.tolist())
    assert changed > 0  # the before/after filter dropped events for some real question


def test_self_loops_keep_a_lone_seed_mass_and_match_a_dense_solve(slice_setup):
    released = slice_setup[0]
    graph, n = released.graph, len(released.graph.nodes)
    u, v = graph.edges
    w = graph.edge_weights("spans")
    lone = np.flatnonzero(np.bincount(np.concatenate([u, v]), minlength=n) == 0)
    assert len(lone) and len(u)
    dense = np.zeros((n, n))
    np.add.at(dense, (u, v), w)
    np.add.at(dense, (v, u), w)
    dense[lone, lone] = 1.0
    dense /= dense.sum(axis=1, keepdims=True)
    rng = np.random.default_rng(0)
    gammas = np.zeros((n, 2))
    gammas[rng.choice(n, 6, replace=False), 0] = rng.uniform(size=6)
    gammas[np.concatenate([lone[:2], np.unique(u)[:2]]), 1] = [0.4, 0.1, 0.3, 0.2]
    gammas /= gammas.sum(axis=0)
    for j in range(2):
        exact = 0.2 * gammas[:, j] @ np.linalg.inv(np.eye(n) - 0.8 * dense)
        assert np.allclose(released.propagate(gammas)[:, j], exact, atol=1e-4)
    assert np.allclose(released.propagate(gammas)[lone[:2], 1], [0.4, 0.1], atol=1e-6)
    without = released.variant(self_loops=False).propagate(gammas)  # lone mass flows back into γ
    assert without[lone[0], 1] < 0.4 and np.isclose(without[:, 1].sum(), 1.0, atol=1e-4)


def test_pool_walk_and_shown_events(slice_setup):
    released, picked, _, rows = slice_setup
    kg, nodes = released.kg, released.graph.nodes
    for q, scores in zip(picked, rows):
        anchors, _ = released.anchors(scores, q.question)
        rules = released._rules_of_batch([anchors])[0]
        assert 0 < len(rules) <= 5
        in_rules = set(np.concatenate([nodes.support[int(r)] for r in rules]).tolist())
        pool = released.pool_events(anchors, rules, scores)
        assert set(pool.tolist()) <= in_rules and len(pool) == min(50, len(in_rules))
        pool_scores = scores[kg.triple_of_fact[pool]]
        assert np.all(np.diff(pool_scores) <= 0)  # ranked by cosine
        as_released = released.variant(pool="anchors+rules").pool_events(anchors, rules, scores)
        assert set(as_released.tolist()) <= in_rules | set(anchors.tolist())
        assert released.variant(ppr=False)._rules_of_batch([anchors])[0].size == 0
        assert released.pool_events(anchors, rules[:0], scores).tolist() == as_released_of(
            released, anchors, scores
        )
        walked = released.walk(pool)
        assert walked[0] == pool[0] and len(set(walked)) == len(walked) <= 10
        assert len(walked) == 10 or len(pool) < 10  # a full walk unless the pool runs out
        for f in walked[:1]:
            assert released.nearest_neighbours(f).tolist() == neighbours_by_hand(released, f)
        plain = released.variant(neighbours=0).walk(pool)
        assert plain == pool[:10].tolist()
        shown = released.shown(walked, anchors, q.question)
        assert len(set(kg.triple_of_fact[shown].tolist())) == len(shown)  # one event per (s, r, o)
        assert len(released.evidence_lines(shown)) <= 10
        flat = released.variant(grouping=False).shown(walked, anchors, q.question)
        assert len(flat) <= 10 and set(flat.tolist()) <= set(shown.tolist()) | set(anchors.tolist())


def as_released_of(rel, anchors, scores):
    """With no rule events the pool is the anchors ranked by cosine (the code's fallback)."""
    s = scores[rel.kg.triple_of_fact[anchors]]
    return anchors[np.lexsort((np.arange(len(anchors)), -s))][:50].tolist()


def neighbours_by_hand(rel, f):
    kg, nodes = rel.kg, rel.graph.nodes
    mine = set(nodes.of_fact[f].tolist())
    near = [
        g
        for g in range(len(kg))
        if g != f
        and kg.r[g] == kg.r[f]
        and (kg.s[g] == kg.s[f] or kg.o[g] == kg.o[f])
        and mine & set(nodes.of_fact[g].tolist())
    ]
    return sorted(near, key=lambda g: (abs(int(kg.t_start[g]) - int(kg.t_start[f])), g))[: rel.neighbours]


def test_retrieve_is_the_steps_behind_the_method_interface(slice_setup):
    released, picked, q_vecs, rows = slice_setup
    assert isinstance(released, Method) and released.name == "released code"
    retrieval = released.retrieve(picked, q_vecs=q_vecs, progress=False)
    assert isinstance(retrieval, Retrieval) and len(retrieval) == len(picked)
    for q, scores, ids, trace in zip(picked, rows, retrieval.ids, retrieval.traces):
        anchors, _ = released.anchors(scores, q.question)
        rules = released._rules_of_batch([anchors])[0]
        walked = released.walk(released.pool_events(anchors, rules, scores))
        assert ids.tolist() == released.shown(walked, anchors, q.question).tolist() == trace["facts"]
        assert trace["rules"] == rules.tolist() and trace["walk"] == walked
        assert trace["lines"] == len(released.evidence_lines(ids))
    llm = fake_llm("Answer: ['Iran']")
    records = released.pipeline(picked[:2], llm, progress=False)
    user = llm.backend.seen[0][0][1]["content"]
    assert released.evidence_lines(retrieval.ids[0])[0] in user and records[0].answers == ["Iran"]
    with pytest.raises(ValueError, match="pool"):
        released.variant(pool="everything")
    with pytest.raises(TypeError, match="unknown released-code setting"):
        released.variant(restart=0.8)


# -- the grouping and its pairing bug on a tiny KG ------------------------------------------------------


def test_grouped_lines_and_the_released_pairing_drop_an_object():
    # e0 r0 → e1 and e2 on the same day, e3 on a later day: one (subject, relation) group
    kg = make_kg([(0, 0, 1, 10), (0, 0, 2, 10), (0, 0, 3, 12), (4, 1, 0, 11)], n_ent=5, n_rel=2)
    graph = star_rag.build_rule_graph(kg, star_rag.GraphParams(min_support=0.2, k_type=1))
    rel = ReleasedCodeRAG(kg, graph, stub_semantic(kg))
    ids = [0, 1, 3, 2]
    assert rel.evidence_lines(ids) == [
        "e0 r0 (e1 on 1970-01-11; e2 on 1970-01-11; e3 on 1970-01-13)",
        "e4 r1 (e0 on 1970-01-12)",
    ]
    bug = rel.variant(pairing="released")
    assert bug.evidence_lines(ids)[0] == "e0 r0 (e1 on 1970-01-11; e2 on 1970-01-13)"  # e3 gone, date shifted
    assert rel.variant(grouping=False).evidence_lines(ids) == kg.verbalise_many(np.array(ids))
    question = type("Q", (), {"answers": ("e3",), "answer_type": "entity", "question": "Who?"})()
    for method, recalled in ((rel, 1.0), (bug, 0.0)):
        got = code_tables.shown_recall(kg, method, Retrieval([np.array([0, 1, 2])], [0.0]), [question])
        assert got.tolist() == [recalled]
    s, o, first, _ = bug.shown_tuples([0, 1, 2])
    assert o.tolist() == [1, 2] and first.tolist() == [10, 12]


# -- the tables ------------------------------------------------------------------------------------------


class _Results:
    def __init__(self):
        self.metrics = {}

    def metric(self, key, value, **context):
        self.metrics[key] = (value, context)
        return value

    def predictions(self, key, records):
        self.metrics[f"predictions/{key}"] = records


def test_decomposition_rows_recall_tokens_and_reader(slice_setup):
    released, picked, q_vecs, _ = slice_setup
    star = star_rag.StarRAG(released.kg, released.graph, released.semantic, k1=10, k2=20)
    methods = code_tables.decomposition_methods(star, released)
    assert list(methods)[:3] == ["semantic top-10", "Alg. 1 as printed", "released code"]
    assert methods["released code, no PPR (rule graph off)"].ppr is False
    assert methods["released code as it runs (both bugs)"].pool == "anchors+rules"
    known = {code_tables.ALG1: star.retrieve(picked, q_vecs=q_vecs, progress=False)}
    retrievals = code_tables.decomposition_retrievals(methods, picked, q_vecs, known)
    assert retrievals[code_tables.ALG1] is known[code_tables.ALG1] and len(retrievals) == len(methods) == 9
    gold = {q.question: q.answers[0] for q in picked}
    llm = fake_llm(lambda user: f"Answer: ['{next(a for t, a in gold.items() if t in user)}']")
    results = _Results()
    table, numbers = code_tables.decomposition(
        methods, retrievals, picked, llm=llm, reader_questions=picked, n_read=4, seed=1
    )
    record.decomposition(results, numbers)
    assert table["retrieval"].tolist() == list(methods)
    for name, row in table.set_index("retrieval").iterrows():
        recall = code_tables.shown_recall(released.kg, methods[name], retrievals[name], picked)
        assert row["answer recall"] == pytest.approx(recall.mean())
        multiple = [q.qlabel == "Multiple" for q in picked]
        assert row["recall Multiple"] == pytest.approx(recall[multiple].mean())
        tokens = [
            star_rag.prompt_tokens(methods[name].prompt(q, ids))
            for q, ids in zip(picked, retrievals[name].ids)
        ]
        assert row["prompt tokens (cl100k)"] == pytest.approx(np.mean(tokens))
        assert row["n read"] == 4 and row["Hit@1"] == 1.0 and row["reader"] == "fake-model"
        assert results.metrics[f"decomposition/{name}/hits@1"][1]["rule"] == evaluate.STRICT
    assert llm.backend.calls == 4 * len(methods)
    traces = results.metrics["predictions/released_code"]
    assert [t["quid"] for t in traces] == [q.quid for q in picked]
    assert [t["facts"] for t in traces] == [r.tolist() for r in retrievals[code_tables.RELEASED].ids]
    summary = report.decomposition_summary(table)
    released_row = table.set_index("retrieval").loc[code_tables.RELEASED]
    assert f"{released_row['answer recall']:.0%} with the released code" in summary
    assert "Reader Hit@1 (fake-model, 4 questions)" in summary
    llm_free, numbers = code_tables.decomposition(methods, retrievals, picked)
    assert "Hit@1" not in llm_free and len(llm_free) == len(methods)
    assert not any("hits@1_by" in row for row in numbers["rows"].values())
    figure = report.decomposition_figure(table)
    assert sum(len(bars) for bars in figure.axes[0].containers) == 3 * len(methods)


def test_paper_vs_code_rows_cite_file_and_line():
    table = code_tables.paper_vs_code()
    assert len(table) == 15 and list(table.columns)[0] == "step"
    for evidence in table["evidence (file:line)"]:
        assert re.search(r"[\w/]+\.py:\d+", evidence), evidence
    text = table.to_string()
    assert "|" not in text  # tables.md is markdown: a pipe would split a cell
    assert "0.8" not in table.loc[table.step == "PPR restart probability", "kit"].item()
    assert "θ = 0.4" not in text and "restart 0.8" not in text
    restart = table.set_index("step").loc["PPR restart probability"]
    assert "0.2" in restart["paper"] and "0.2" in restart["released code (our reading)"]
    assert table.set_index("step").loc["K2 (rules kept after the PPR)", "released code (our reading)"] == "5"


def test_answer_tuple_mask_is_the_fact_mask_on_facts(kg, questions):
    ids = np.arange(0, 4000, 7)
    for q in [next(x for x in questions if x.answer_type == kind) for kind in ("entity", "time")]:
        by_fact = evaluate.answer_fact_mask(kg, ids, q.answers, q.answer_type)
        by_tuple = evaluate.answer_tuple_mask(
            kg, kg.s[ids], kg.o[ids], kg.t_start[ids], kg.t_end[ids], q.answers, q.answer_type
        )
        assert by_tuple.tolist() == by_fact.tolist()
    day = day_of("2005-01-03")
    year_2005 = evaluate.answer_tuple_mask(
        kg, [0, 1], [2, 3], [day, day + 400], [day, day + 400], ["2005"], "time"
    )
    assert year_2005.tolist() == [True, False]
