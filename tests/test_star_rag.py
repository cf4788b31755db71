"""STAR-RAG query side: sparse PPR vs a dense solve, the Appendix C personalisation, Alg. 1 retrieval
(batched = one at a time, lazy top-k = full scan) behind the Method interface, the no-rule and uniform
variants, the Appendix E reader through the one reader path (requests pinned byte for byte), and
``pipeline()`` on real questions with the fake LLM."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from fakes import fake_llm
from reference import pagerank_dense, pagerank_plain
from slices import kg_slice
from test_star_rag_graph import random_kg

from temporag.methods import star_rag
from temporag.methods.base import Retrieval
from temporag.methods.star_rag.ppr import (
    personalized_pagerank,
    personalized_pagerank_many,
    transition_matrix,
)
from temporag.retrieval.topk import top_k_stable

# -- PPR -----------------------------------------------------------------------------------------------


def _random_graph(seed: int, n: int = 30, m: int = 45):
    rng = np.random.default_rng(seed)
    u = rng.integers(0, n - 6, m)  # the last six nodes stay isolated
    v = rng.integers(0, n - 6, m)
    keep = u != v
    return n, u[keep], v[keep], rng.uniform(0.5, 2.0, keep.sum())


@pytest.mark.parametrize("symmetric", [True, False])
def test_ppr_matches_dense_solve_and_sums_to_one(symmetric):
    n, u, v, w = _random_graph(0)
    trans = transition_matrix(n, u, v, w, symmetric=symmetric)
    assert trans.isolated[-6:].all()
    gamma = np.zeros(n)
    gamma[[0, 3, n - 1]] = [0.5, 0.3, 0.2]  # one seed is an isolated node
    pi, iters = personalized_pagerank(trans, gamma, alpha=0.2, tol=1e-12)
    exact = pagerank_dense(trans, gamma, alpha=0.2)
    assert np.allclose(pi, exact, atol=1e-10)
    assert pi.sum() == pytest.approx(1.0, abs=1e-10)
    assert (pi >= 0).all() and iters > 5
    plain, plain_iters = pagerank_plain(trans, gamma, alpha=0.2, tol=1e-5)
    fast, fast_iters = personalized_pagerank(trans, gamma, alpha=0.2, tol=1e-5)
    assert fast_iters == plain_iters  # the isolated-node shortcut gives the same iterates
    assert np.allclose(fast, plain, atol=1e-12)


def test_ppr_batch_equals_single_and_networkx():
    import networkx as nx

    n, u, v, w = _random_graph(1)
    trans = transition_matrix(n, u, v, w, symmetric=True)
    rng = np.random.default_rng(2)
    gammas = np.zeros((n, 5))
    for j in range(5):
        gammas[rng.choice(n, 3, replace=False), j] = rng.uniform(0.1, 1.0, 3)
    batch, iters = personalized_pagerank_many(trans, gammas, tol=1e-9)
    for j in range(5):
        single, it = personalized_pagerank(trans, gammas[:, j], tol=1e-9)
        assert np.allclose(batch[:, j], single, atol=1e-14) and iters[j] == it
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for a, b, x in zip(u, v, w):
        g.add_edge(int(a), int(b), weight=g.get_edge_data(int(a), int(b), {"weight": 0})["weight"] + x)
    pers = {i: gammas[i, 0] for i in range(n)}
    # networkx's alpha is the damping factor: restart 0.2 = damping 0.8; dangling mass follows γ
    ref = nx.pagerank(g, alpha=0.8, personalization=pers, dangling=pers, tol=1e-12, max_iter=1000)
    assert np.allclose(batch[:, 0], [ref[i] for i in range(n)], atol=1e-6)


def test_ppr_float32_stays_within_tolerance():
    n, u, v, w = _random_graph(3)
    trans = transition_matrix(n, u, v, w)
    gamma = np.zeros(n)
    gamma[[1, 2]] = 1
    p64, _ = personalized_pagerank(trans, gamma)
    p32, _ = personalized_pagerank(trans, gamma, dtype=np.float32)
    assert np.abs(p64 - p32).sum() < 1e-5


# -- personalisation (Appendix C) --------------------------------------------------------------------


def test_seed_personalisation_by_hand():
    # nodes 0, 1, 2 with supports of size 4, 2, 1; anchors f0 (rank 1) in nodes 0 and 1, f1 in node 2
    nodes = SimpleNamespace(
        of_fact={0: np.array([0, 1]), 1: np.array([2])},
        sizes=np.array([4, 2, 1]),
    )
    nodes.of_fact = _Index(nodes.of_fact)
    seeds, gamma = star_rag.seed_personalisation(nodes, [0, 1], theta=0.6, beta=0.7)
    assert seeds.tolist() == [0, 1, 2]
    c = np.array([4, 2, 1]) / 7
    p = np.array([1, 1, 0.7]) / 2.7
    s = 0.4 * c + 0.6 * p
    expected = (s + 1 / 3) / (s + 1 / 3).sum()
    assert np.allclose(gamma, expected)
    _, uni = star_rag.seed_personalisation(nodes, [0, 1], mode="uniform")
    assert np.allclose(uni, 1 / 3) and not np.allclose(uni, gamma)
    with pytest.raises(ValueError):
        star_rag.seed_personalisation(nodes, [0], mode="bogus")


class _Index:
    def __init__(self, d):
        self.d = d

    def __getitem__(self, k):
        return self.d[k]


# -- retrieval (Alg. 1) on a small KG with stub vectors ------------------------------------------------


def stub_semantic(kg, seed: int = 0, dim: int = 16):
    """The semantic baseline's interface with random unit vectors: fast, and no model or cache."""
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(kg.n_triples, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)

    def embed_questions(texts):
        out = np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(size=dim) for t in texts])
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)

    return SimpleNamespace(triple_vectors=vecs, time_weight=0.1, embed_questions=embed_questions)


@pytest.fixture(scope="module")
def toy_star():
    kg = random_kg(11, n_ent=12, n_rel=5, n_facts=400, days=365)
    kg.name = "toy-star"
    graph = star_rag.build_rule_graph(kg, star_rag.GraphParams(min_support=0.2, k_type=2))
    assert graph.mdl.n_selected > 0
    star = star_rag.StarRAG(kg, graph, stub_semantic(kg), k1=5, k2=4, batch_size=3)
    rng = np.random.default_rng(0)
    q = rng.normal(size=(7, 16)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    questions = [f"question {i}" + (" in 1970" if i % 2 else "") for i in range(7)]
    return star, q, questions


def test_lazy_top_k_equals_full_scan(toy_star):
    star, q, questions = toy_star
    for vec, text in zip(q, questions):
        scores = star.query(vec, text)
        for k in (1, 5, 17):
            assert scores.top(k).tolist() == top_k_stable(scores.all(), k).tolist()


def test_retrieval_follows_algorithm_1(toy_star):
    star, q, questions = toy_star
    retrieval = star.retrieve(questions, q_vecs=q, progress=False)
    assert isinstance(retrieval, Retrieval) and retrieval.evidence == "kg_fact"
    assert retrieval.sizes().tolist() == [5] * 7
    json.dumps(retrieval.traces)  # JSON-ready, as results.json needs
    for i, (vec, text, trace) in enumerate(zip(q, questions, retrieval.traces)):
        scores = star.query(vec, text)
        anchors = top_k_stable(scores.all(), 5)
        assert trace["anchors"] == anchors.tolist()
        seeds, gamma = star.personalise(anchors)
        pi, _ = star.propagate(seeds, gamma)
        reached = np.flatnonzero(pi > 0)
        rules = reached[top_k_stable(pi[reached], 4)]
        assert trace["rules"] == rules.tolist()
        candidates = np.unique(np.concatenate([star.graph.nodes.support[int(r)] for r in rules]))
        assert trace["candidates"] == len(candidates)
        expected = candidates[top_k_stable(scores.all()[candidates], 5)]
        assert retrieval.ids[i].tolist() == trace["facts"] == expected.tolist()
        assert trace["swapped_anchors"] == len(set(anchors.tolist()) - set(expected.tolist()))
        assert trace["retrieval_s"] == retrieval.latency_s[i]
        one = star.trace_one(vec, text)  # batched == one at a time
        assert one.facts.tolist() == expected.tolist() and one.seeds.tolist() == seeds.tolist()


def test_one_question_at_a_time_with_float16_cosines_equals_the_batched_product(toy_star):
    # one question alone scores from the float16 copy (exact only where a ranking can reach); the events
    # shown must be those of the batched float32 product
    import torch

    star, q, questions = toy_star
    semantic = stub_semantic(star.kg)
    semantic.half_vectors = torch.from_numpy(semantic.triple_vectors).to(torch.float16)
    with_half = star_rag.StarRAG(star.kg, star.graph, semantic, k1=5, k2=4, batch_size=1)
    [scores], _ = with_half._score_batch(questions, q, [0])
    assert scores.cosines.error > 0  # the coarse path was taken
    batched = star.retrieve(questions, q_vecs=q, progress=False)
    alone = with_half.retrieve(questions, q_vecs=q, progress=False)
    assert [ids.tolist() for ids in alone.ids] == [ids.tolist() for ids in batched.ids]
    assert [t["anchors"] for t in alone.traces] == [t["anchors"] for t in batched.traces]


def test_no_rule_variant_is_the_anchors_and_large_k2_returns_them(toy_star):
    # when every seed rule is among the top-K2, the re-ranking returns the semantic top-K1 itself
    star, q, questions = toy_star
    wide = star.retrieve(questions, k2=10_000, q_vecs=q, progress=False)
    no_rule = star.variant(use_rules=False)
    assert no_rule.name == "STAR-RAG-no-rule" and star.name == "STAR-RAG"
    plain = no_rule.retrieve(questions, q_vecs=q, progress=False)
    for i, trace in enumerate(wide.traces):
        assert trace["facts"] == trace["anchors"] and trace["swapped_anchors"] == 0
        assert plain.ids[i].tolist() == trace["anchors"] == plain.traces[i]["facts"]
    assert set(plain.traces[0]) == {"facts", "retrieval_s"}


def test_uniform_variant_and_ablations(toy_star):
    star, q, questions = toy_star
    ablations = star.ablations()
    assert list(ablations) == ["STAR-RAG", "STAR-RAG-no-rule", "STAR-RAG-uniform"]
    assert [m.name for m in ablations.values()] == list(ablations)
    uniform = ablations["STAR-RAG-uniform"]
    paper = [star.trace_one(v, t, k2=2) for v, t in zip(q, questions)]
    flat = [uniform.trace_one(v, t, k2=2) for v, t in zip(q, questions)]
    assert any(not np.allclose(a.gamma, b.gamma) for a, b in zip(paper, flat))
    for trace in flat:
        assert np.allclose(trace.gamma, 1 / len(trace.seeds))
    assert star.personalisation == "paper" and uniform.trans is star.trans  # a copy sharing the matrix
    sweep = star.sweep(questions, q, [2, 5], [1, 4], progress=False)
    full = star.retrieve(questions, q_vecs=q, progress=False)
    assert [f.tolist() for f in sweep[(5, 4)]] == [r.tolist() for r in full.ids]
    assert [f.tolist() for f in sweep[(2, 1)]] == [
        star.trace_one(v, t, 2, 1).facts.tolist() for v, t in zip(q, questions)
    ]
    with pytest.raises(TypeError, match="unknown STAR-RAG setting"):
        star.variant(restart=0.8)
    with pytest.raises(ValueError, match="reader_style"):
        star.variant(reader_style="chatty")
    with pytest.raises(ValueError, match="personalisation"):
        star.variant(personalisation="flat")


@pytest.mark.slow
def test_retrieval_on_real_multitq(kg, questions):
    """The full rule graph (cached) with real MiniLM vectors: STAR-RAG's anchors are the semantic
    baseline's top-10 on a few shared questions (slow: builds or loads the full-KG graph and vectors)."""
    star = star_rag.build(kg)
    assert star.graph.params == star_rag.GraphParams()
    sample = questions[:12]
    q_vecs = star.semantic.embed_questions([x.question for x in sample])
    retrieval = star.retrieve(sample, q_vecs=q_vecs, progress=False)
    for q, vec, ids, trace in zip(sample, q_vecs, retrieval.ids, retrieval.traces):
        semantic_top = top_k_stable(star.semantic.fact_scores(vec, q.question), 10)
        assert len(ids) == 10 and trace["anchors"] == semantic_top.tolist()
        assert trace["ppr_iterations"] > 0 and trace["candidates"] >= 10


# -- reading through the one reader path ---------------------------------------------------------------

GOLDEN = Path(__file__).parent / "fixtures" / "star_rag_reader_requests.json"


def test_reader_requests_match_the_golden_requests_byte_for_byte(kg, questions):
    """STAR-RAG's reader sends exactly the messages and LLM parameters of the golden file
    (fixtures/star_rag_reader_requests.json), so the sqlite LLM cache of earlier runs keeps hitting."""
    by_quid = {q.quid: q for q in questions}
    for case in json.loads(GOLDEN.read_text()):
        question = by_quid[case["quid"]]
        llm = fake_llm("Answer: ['Iran on 2005-03-02', 'Iraq']")
        events = [kg.verbalise_many(np.array(case["fact_ids"]))]
        (result,) = star_rag.read_events(
            llm, [question], events, reader_style=case["reader_style"], progress=False
        )
        messages, params = llm.backend.seen[0]
        assert messages == case["messages"]
        assert params == case["params"]  # max_tokens 136 / 196, temperature 0, and no stop sequence
        assert result.answers == case["answers"]


def test_reader_answers_are_cleaned_and_failures_kept(kg, questions, caplog):
    entity = next(q for q in questions if q.answer_type == "entity")
    time_q = next(q for q in questions if q.answer_type == "time")
    reply = "Thought: the visits.\nAnswer: ['Iraq on 2006-01-05', 'Iraq', 'Jack Straw in 2006', '']"
    llm = fake_llm(reply, fail_when=lambda user: "FAIL" in user)
    failing = SimpleNamespace(question="FAIL", answer_type="entity")
    events = [kg.verbalise_many(np.arange(3))] * 3
    got = star_rag.read_events(
        llm, [entity, time_q, failing], events, reader_style="appendix-e", progress=False
    )
    assert got[0].answers == ["Iraq", "Jack Straw"]  # dates copied from event lines dropped, repeats too
    assert got[1].answers == ["Iraq on 2006-01-05", "Iraq", "Jack Straw in 2006"]  # time: as parsed
    assert got[2].error is not None and got[2].answers == []
    assert "1 of 3 questions failed" in caplog.text
    assert (
        star_rag.clean_candidate("Armed Gang (Thailand) on 2005-01-20", "entity") == "Armed Gang (Thailand)"
    )
    assert star_rag.reader_budget(10) == 136 and star_rag.reader_budget(10, thought=True) == 196
    plain = star_rag.build_star_prompt("Who visited Iraq?", ["a Make a visit Iraq on 2006-01-05"], "entity")
    assert "Example" not in plain[1]["content"] and "Thought" not in plain[1]["content"]
    assert star_rag.prompt_tokens(plain) == 148  # cl100k_base, pinned


def facts_about(kg, picked, limit: int) -> np.ndarray:
    """Every fact about the entities the picked questions name (at most ``limit``): a real corner of
    MultiTQ, small enough to build its rule graph in the fast suite."""
    named = [
        e
        for e, label in enumerate(kg.entity_labels)
        if len(label) > 4 and any(label in q.question for q in picked)
    ]
    return np.flatnonzero(np.isin(kg.s, named) | np.isin(kg.o, named))[:limit]


@pytest.fixture(scope="module")
def real_slice(kg, questions):
    """Every fact about the entities two real questions name (at most 1,500)."""
    picked = [next(q for q in questions if q.answer_type == kind) for kind in ("entity", "time")]
    sub = kg_slice(kg, facts_about(kg, picked, 1500))
    graph = star_rag.build_rule_graph(sub, star_rag.GraphParams(min_support=0.2, k_type=2))
    return star_rag.StarRAG(sub, graph, stub_semantic(sub), k1=5, k2=4), picked


def test_pipeline_on_real_questions_with_the_fake_llm(real_slice):
    star, picked = real_slice
    assert star.graph.mdl.n_selected > 0
    llm = fake_llm("Answer: ['Iran on 2005-03-02', 'Iraq', 'Iran']")
    records = star.pipeline(picked, llm, progress=False)
    retrieval = star.retrieve(picked, progress=False)
    assert [r.quid for r in records] == [q.quid for q in picked]
    for record, ids, trace in zip(records, retrieval.ids, retrieval.traces):
        assert record.evidence_ids == ids.tolist() == trace["facts"] and len(ids) == 5
        assert record.trace["anchors"] == trace["anchors"]
        assert (record.llm_calls, record.prompt_tokens, record.completion_tokens) == (1, 100, 10)
    assert records[0].answers == ["Iran", "Iraq"]  # entity question: copied dates dropped
    assert records[1].answers == ["Iran on 2005-03-02", "Iraq", "Iran"]  # time question: kept as parsed
    messages, params = llm.backend.seen[0]
    listed = "\n".join(f"{i}. {line}" for i, line in enumerate(star.evidence_lines(retrieval.ids[0]), 1))
    assert f"Events:\n{listed}\n\nQuestion: {picked[0].question}" in messages[1]["content"]
    assert params == {"temperature": 0.0, "max_tokens": 136, "stop": None, "json_mode": False}
    no_llm = star.variant(use_rules=False).pipeline(picked, progress=False)
    assert all(r.llm_calls == 0 and r.answers == [] for r in no_llm)
    assert [r.evidence_ids for r in no_llm] == [r.trace["anchors"] for r in records]


def test_table2_inputs_report_missing_data(shared_data):
    from temporag.data.errors import MissingDataError

    for name in ("CronQuestions", "Forecast"):
        with pytest.raises(MissingDataError):
            star_rag.table2_inputs(name, shared_data)


def _swept_with_one_gold(star, q, texts):
    """(gold, question records whose gold is the toy KG's first entity, STAR's K1 × K2 sweep of 2 and 5)."""
    gold = star.kg.entity_labels[0]
    records = [
        SimpleNamespace(quid=i, question=t, answers=(gold,), answer_type="entity")
        for i, t in enumerate(texts)
    ]
    return gold, records, star.sweep(records, q, [2, 5], [2, 5], progress=False)


def test_hits_grid_reads_every_cell_on_one_seeded_sample(toy_star):
    from temporag.methods.star_rag import paper_tables

    star, q, texts = toy_star
    gold, records, sweep = _swept_with_one_gold(star, q, texts)
    llm = fake_llm(f"Answer: ['{gold}']")
    matrix, n, failed = paper_tables.hits_grid(llm, star, sweep, records, records[1:6], [2, 5], 3, seed=0)
    assert n == 3 and matrix.tolist() == [[1.0, 1.0], [1.0, 1.0]] and failed.tolist() == [[0, 0], [0, 0]]
    assert llm.backend.calls == 4 * 3  # one call per sampled question and (K1, K2) cell
    first_cell = llm.backend.seen[0][0][1]["content"]  # K1 = 2: two events listed
    assert "\n2. " in first_cell and "\n3. " not in first_cell


def test_star_rag_declares_its_reader_defaults():
    from temporag.config import get_settings
    from temporag.methods.registry import declarations

    declared = declarations("star_rag")
    offline, served = get_settings(llm_base_url=None), get_settings(llm_base_url="http://gpu:8000/v1")
    smoke = declared.resolve({"profile": "smoke"}, offline)
    assert (smoke["heatmap_reader_sample"], smoke["reader_style"]) == (0, "plain")
    assert smoke["decomposition_reader_sample"] == 0
    paper = declared.resolve({"profile": "paper"}, served)
    assert (paper["heatmap_reader_sample"], paper["reader_style"]) == (30, "appendix-e")
    assert paper["decomposition_reader_sample"] == 30 and paper["reader_sample"] is None  # served: all
    kept = declared.resolve({"profile": "paper", "heatmap_reader_sample": 5, "reader_style": "plain"}, served)
    assert (kept["heatmap_reader_sample"], kept["reader_style"]) == (5, "plain")
    with pytest.raises(ValueError, match="reader_style must be one of"):
        declared.resolve({"profile": "smoke", "reader_style": "verbose"}, offline)


def test_hits_grid_leaves_failed_calls_out_of_each_cell(toy_star):
    """Fig. 5: a failed reader call is left out of its cell and counted in the failed grid, never scored
    as a wrong answer."""
    from temporag.methods.star_rag import paper_tables

    star, q, texts = toy_star
    gold, records, sweep = _swept_with_one_gold(star, q, texts)
    probe = fake_llm(f"Answer: ['{gold}']")
    paper_tables.hits_grid(probe, star, sweep, records, records[1:6], [2, 5], 3, seed=0)
    asked = {t for t in texts if t in probe.backend.seen[0][0][-1]["content"]}
    llm = fake_llm(f"Answer: ['{gold}']", fail_when=lambda user: any(t in user for t in asked))
    matrix, n, failed = paper_tables.hits_grid(llm, star, sweep, records, records[1:6], [2, 5], 3, seed=0)
    assert n == 3 and matrix.tolist() == [[1.0, 1.0], [1.0, 1.0]] and failed.tolist() == [[1, 1], [1, 1]]
