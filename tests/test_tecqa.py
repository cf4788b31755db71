"""TECQA steps on hand-made timelines (subgraph, anchors, KNTN, serialisation), its analyses, and the
pipeline on real MultiTQ questions over a slice of the real KG with a fake reader."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import fake_llm
from slices import iraq_visits

from temporag.data.tkg import TemporalKG
from temporag.methods import tecqa
from temporag.methods.tecqa import Constraints, analysis
from temporag.timeutil import TimeValue, day_of, make_time


def _timeline_kg() -> TemporalKG:
    """Iraq is visited on days 0..20 (one visit a day by entity 2+day%3); plus other facts."""
    entities = ["Iraq", "Danish_Ministry", "Jack_Straw", "Iran", "Peter_Pace", "Kuwait"]
    relations = ["Make_a_visit", "Praise_or_endorse"]
    s, r, o, t = [], [], [], []
    for day in range(21):
        s.append(2 + day % 3)
        r.append(0)
        o.append(0)
        t.append(day)
    s += [1, 1, 5, 5]  # the Danish visit on day 10; a praise; Kuwait ↔ Danish facts (context)
    r += [0, 1, 0, 0]
    o += [0, 0, 1, 1]
    t += [10, 11, 12, 13]
    arr = lambda x: np.asarray(x, dtype=np.int32)  # noqa: E731
    return TemporalKG(arr(s), arr(r), arr(o), arr(t), arr(t), entities, relations)


def _c(kg, question="q", main="Iraq", others=(), rel="Make a visit") -> Constraints:
    ents = [kg.label_to_entity[main]] + [kg.label_to_entity[e] for e in others]
    return Constraints(question, tuple(ents), (kg.relation_labels.index(rel),), ents[0])


def test_subgraph_main_and_context_follow_eqs_3_to_5():
    kg = _timeline_kg()
    c = _c(kg, others=("Danish Ministry", "Kuwait"))
    f_main, f_ctx = tecqa.subgraph_parts(kg, c)
    assert len(f_main) == 22  # 21 visits + the Danish visit; the praise has another relation
    assert set(kg.r[f_main].tolist()) == {0}
    assert sorted(f_ctx.tolist()) == [23, 24]  # Kuwait ↔ Danish Ministry, both auxiliary entities
    assert np.array_equal(tecqa.subgraph(kg, c), np.union1d(f_main, f_ctx))
    # one auxiliary entity: no fact joins it to itself, so F_context is empty
    assert len(tecqa.subgraph_parts(kg, _c(kg, others=("Danish Ministry",)))[1]) == 0
    assert len(tecqa.subgraph(kg, Constraints("q", (), (), None))) == 0


def test_knn_keeps_exactly_the_k_nearest_on_both_sides():
    kg = _timeline_kg()
    facts = np.arange(21, dtype=np.int32)  # one fact per day 0..20
    kept = tecqa.knn_temporal(kg, facts, [TimeValue(10, 10, "day")], k=5)
    # day 10 itself, then 9 and 11, then 8 and 12: two before, two after
    assert sorted(kg.t_start[kept].tolist()) == [8, 9, 10, 11, 12]
    kept = tecqa.knn_temporal(kg, facts, [TimeValue(10, 10, "day")], k=4)
    assert sorted(kg.t_start[kept].tolist()) == [8, 9, 10, 11]  # the tie at distance 2 goes to the earlier
    # two anchors: the union of both neighbourhoods (Eq. 8)
    kept = tecqa.knn_temporal(kg, facts, [TimeValue(0, 0, "day"), TimeValue(20, 20, "day")], k=2)
    assert sorted(kg.t_start[kept].tolist()) == [0, 1, 19, 20]
    # fewer facts than K: keep all
    assert len(tecqa.knn_temporal(kg, facts[:3], [TimeValue(10, 10, "day")], k=40)) == 3
    assert len(tecqa.knn_temporal(kg, facts, [], k=5)) == 0


def test_month_anchor_keeps_granularity():
    kg = _timeline_kg()
    april = make_time(1970, 1)  # days 0..30 are January 1970
    facts = np.arange(21, dtype=np.int32)
    assert (tecqa.temporal_distance(kg, facts, april) == 0).all()
    jan5 = TimeValue(day_of("1970-01-05"), day_of("1970-01-05"), "day")
    assert tecqa.temporal_distance(kg, facts, jan5)[[0, 4, 7]].tolist() == [4, 0, 3]


def test_explicit_anchors_normalise_with_granularity():
    anchors = tecqa.explicit_anchors("Who signed an agreement with China in April 2005?")
    assert [(a.iso, a.granularity) for a in anchors] == [("2005-04", "month")]
    anchors = tecqa.explicit_anchors("Before 25 April 2005, who used force against Iraq in 2005?")
    assert [a.iso for a in anchors] == ["2005-04-25", "2005"]
    assert tecqa.explicit_anchors("Who visited Iraq first?") == []


def test_serialisation_orders_by_proximity_then_time():
    kg = _timeline_kg()
    facts = np.array([3, 9, 10, 11, 12, 20], dtype=np.int32)
    ordered, delta = tecqa.serialise(kg, facts, [TimeValue(10, 10, "day"), TimeValue(20, 20, "day")])
    assert ordered.tolist() == [10, 20, 9, 11, 12, 3]
    assert delta.tolist() == [0, 0, 1, 1, 2, 7]


def test_implicit_anchors_take_the_top_n_similar_facts():
    kg = _timeline_kg()
    facts = np.array([0, 5, 21, 22], dtype=np.int32)
    sims = np.array([0.1, 0.3, 0.9, 0.5], dtype=np.float32)
    anchors, top = tecqa.implicit_anchors(kg, facts, sims, 2)
    assert top.tolist() == [21, 22] and [a.first_day for a in anchors] == [10, 11]


def test_chain_and_ablation_variants_on_a_hand_made_case():
    kg = _timeline_kg()
    # triple vectors: the Danish visit's triple points along the question vector, the rest elsewhere
    dim = 4
    vecs = np.zeros((kg.n_triples, dim), dtype=np.float32)
    vecs[:, 1] = 1.0
    danish = kg.triple_of_fact[21]
    vecs[danish] = [1.0, 0, 0, 0]
    q_vec = np.array([1.0, 0, 0, 0], dtype=np.float32)
    model = tecqa.TECQA(kg, triple_vectors=vecs)
    c = _c(kg, "After the Danish Ministry, who was the first to visit Iraq?", others=("Danish Ministry",))
    chain = model.chain(c, q_vec, k=3, n=1)
    assert [a.first_day for a in chain.implicit] == [10]
    assert chain.facts[0] == 21 and chain.delta[0] == 0  # the anchor event leads the chain
    assert sorted(kg.t_start[chain.facts].tolist()) == [9, 10, 10]
    random_chain = model.chain(c, q_vec, k=3, n=1, order="random", rng=np.random.default_rng(1))
    assert sorted(random_chain.facts.tolist()) == sorted(chain.facts.tolist())
    semantic = model.chain(c, q_vec, k=3, n=1, prune="semantic")
    assert 21 in semantic.facts and len(semantic.facts) == 3
    pooled = model.chain(c, q_vec, k=3, n=1, pool=np.array([0, 1, 21], dtype=np.int32))
    assert sorted(pooled.facts.tolist()) == [0, 1, 21]
    chains, latency = model.chains([c, c], np.stack([q_vec, q_vec]), k=3, n=1, progress=False)
    assert [x.facts.tolist() for x in chains] == [chain.facts.tolist()] * 2 and latency.shape == (2,)
    # the retrieval interface: the chain's ids in serialised order, cut to k, with its trace
    retrieval = tecqa.as_retrieval(kg, chains, latency, k=2)
    assert [ids.tolist() for ids in retrieval.ids] == [chain.facts[:2].tolist()] * 2
    assert retrieval.traces[0]["subgraph_size"] == 22 and retrieval.traces[0]["anchors_implicit"] == [
        "1970-01-11"
    ]
    assert retrieval.traces[0]["main"] == "Iraq" and retrieval.traces[0]["chain_length"] == 3
    assert tecqa.reader_lines(kg, chain.facts[:1]) == ["[Danish Ministry, Make a visit, Iraq, 1970-01-11]"]


def test_reference_anchor_mask():
    kg = _timeline_kg()
    c = _c(kg, others=("Danish Ministry",))
    c = Constraints(c.question, c.entities, c.relations, c.main, raw={"constraint_entities": [1]})
    mask = analysis.reference_anchor_mask(kg, np.array([0, 21, 22, 24]), "After the Danish Ministry ...?", c)
    assert mask.tolist() == [False, True, True, False]
    assert analysis.reference_anchor_mask(kg, np.array([0]), "Who first visited Iraq?", _c(kg)) is None


def test_integrity_uses_the_reference_anchor_and_leaves_anchorless_questions_out():
    kg = _timeline_kg()
    c = _c(kg, others=("Danish Ministry",))
    ref = Constraints(c.question, c.entities, c.relations, c.main, raw={"constraint_entities": [1]})
    q = lambda text, answer: type(
        "Q", (), {"question": text, "answers": (answer,), "answer_type": "entity"}
    )()
    questions = [
        q("After the Danish Ministry, who visited Iraq?", "Jack Straw"),
        q("Who first visited Iraq?", "Iran"),
    ]
    # fact 21 is the Danish visit (the anchor), fact 0 Jack Straw's visit, fact 1 Iran's
    result = analysis.integrity(kg, questions, [np.array([21, 0]), np.array([1])], [ref, _c(kg)])
    assert result["answer"].tolist() == [1.0, 1.0]
    assert result["anchor"][0] == 1.0 and np.isnan(result["anchor"][1])
    assert result["chain"][0] == 1.0 and np.isnan(result["chain"][1])
    result = analysis.integrity(kg, questions[:1], [np.array([0])], [ref])  # answer without its anchor
    assert (result["answer"][0], result["anchor"][0], result["chain"][0]) == (1.0, 0.0, 0.0)


def test_failure_modes_count_empty_and_truncated_chains():
    kg = _timeline_kg()
    q = lambda qtype: type(
        "Q", (), {"question": "q", "answers": ("Peter Pace",), "answer_type": "entity", "qtype": qtype}
    )()
    chain = lambda sub, facts: tecqa.EvidenceChain(
        "q", _c(kg), np.asarray(sub), [], [], np.array([]), np.asarray(facts), np.zeros(len(facts))
    )
    # Peter Pace (entity 4) visits on days 2, 5, 8, ...: fact 2 holds him, fact 0 does not
    chains = [chain([], []), chain([0, 2], [0]), chain([0, 2], [2]), chain([0], [0])]
    questions = [q("equal"), q("first_last"), q("first_last"), q("first_last")]
    modes = analysis.failure_modes(kg, questions, chains)
    assert (modes["empty_subgraph"], modes["first_last_questions"], modes["first_last_truncated"]) == (
        1,
        3,
        1,
    )
    assert modes["truncated_idx"] == [1] and modes["empty_idx"] == [0]
    assert modes["empty_from_wrong_main_entity"] == 0  # Iraq has a fact with Peter Pace


# -- real data ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_table5_case_subgraph_and_anchor_on_real_kg(kg):
    from temporag.retrieval.embed import Encoder

    enc = Encoder()
    parser = tecqa.make_offline_parser(kg, enc)
    q = "After the Danish Ministry of Defence and Security, who was the first to visit Iraq?"
    c = parser.parse(q)
    assert kg.entity_labels[c.main] == "Iraq"
    assert [kg.relation_labels[r] for r in c.relations] == ["Make a visit"]
    sub = tecqa.subgraph(kg, c)
    assert len(sub) == 1065  # the paper's Table 5 count
    # implicit anchor on a small vector table: embed only this subgraph's triples
    triples = np.unique(kg.triple_of_fact[sub])
    vecs = np.zeros((kg.n_triples, enc.dim), dtype=np.float32)
    texts = kg.triple_texts()
    vecs[triples] = enc.encode([texts[i] for i in triples])
    chain = tecqa.TECQA(kg, enc, vecs).chain(c, enc.encode([q])[0], k=40, n=2)
    assert "2006-01-05" in [a.iso for a in chain.implicit]
    assert "Jack Straw" in {kg.entity_labels[int(kg.s[f])] for f in chain.facts[:5]}


def test_pipeline_on_real_questions_with_a_fake_reader(kg, questions, tmp_cache):
    """Parse → subgraph → anchors → KNTN → serialise → read, on three shared questions over the Iraq-visit
    slice of the real KG (embedded into a temporary cache)."""
    sub = iraq_visits(kg)
    picked = [q for q in questions if q.quid in (3000000, 3000029, 3000030)]
    model = tecqa.TECQA(sub, k=5, n=1)
    llm = fake_llm("Answer: ['Jack Straw', 'Iran']")
    records = model.pipeline(picked, llm, k=4, progress=False)
    assert [r.quid for r in records] == [3000000, 3000029, 3000030]
    first = records[0]
    assert first.trace["main"] == "Iraq" and first.trace["relation"] == ["Make a visit"]
    assert first.trace["subgraph_size"] == 1065  # the paper's Table 5 count: every visit to or by Iraq
    assert first.trace["anchors_implicit"] == ["2006-01-05"]  # the Danish ministry's visit
    assert len(first.evidence_ids) == 4 and sub.entity_labels[int(sub.s[first.evidence_ids[0]])] == (
        "Defense / Security Ministry (Denmark)"
    )
    assert records[1].trace["anchors_explicit"] == ["2011-06"]
    assert records[2].trace["subgraph_size"] == 3  # Ismet Yilmaz's three visits
    assert all(r.answers == ["Jack Straw", "Iran"] and r.llm_calls == 1 for r in records)
    assert (first.prompt_tokens, first.completion_tokens) == (100, 10) and llm.backend.calls == 3
    prompt = "\n".join(m["content"] for m in llm.backend.seen[0][0])
    assert (
        "[Jack Straw, Make a visit, Iraq, 2006-01-06]" in prompt
        and "[subject, relation, object, date]" in prompt
    )
    # the reader is asked for TECQA's five ranked answers, the same as ``TECQA.read``
    assert model.retrieve(picked[:1], k=4, progress=False).ids[0].tolist() == first.evidence_ids


def test_offline_and_llm_parsers_return_the_same_record(kg, tmp_cache):
    sub = iraq_visits(kg)
    offline = tecqa.make_offline_parser(sub)
    replies = {
        "Entities": "['Ismet Yilmaz', 'Iraq']",
        "Relation:": "Make a visit",
        "Main entity:": "Ismet Yilmaz",
    }

    def reply(prompt: str) -> str:
        return next(text for cue, text in replies.items() if prompt.rstrip().endswith(cue))

    llm_parser = tecqa.make_parser(sub, "llm", llm=fake_llm(reply), offline=offline)
    question = "In which year did Ismet Yilmaz visit Iraq for the first time?"
    by_llm, by_offline = llm_parser.parse(question), offline.parse(question)
    assert type(by_llm) is type(by_offline) is Constraints
    assert (by_llm.main, by_llm.relations) == (by_offline.main, by_offline.relations)
    assert sub.entity_labels[by_llm.main] == "Ismet Yilmaz" and by_llm.parser == "llm"
    assert llm_parser.parse_many([]) == []
    with pytest.raises(ValueError, match="needs an llm"):
        tecqa.make_parser(sub, "llm", offline=offline)
