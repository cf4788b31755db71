"""TECQA steps on hand-made timelines (subgraph, anchors, KNTN, serialisation) and on real MultiTQ data."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.data.tkg import TemporalKG, day_number
from temporag.methods import tecqa, tecqa_analysis
from temporag.methods.tecqa import Constraints
from temporag.timeutil import TimeValue, make_time


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
    jan5 = TimeValue(day_number("1970-01-05"), day_number("1970-01-05"), "day")
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
    chains, latency = model.build([c, c], np.stack([q_vec, q_vec]), k=3, n=1, progress=False)
    assert len(chains) == 2 and (latency >= 0).all()
    assert tecqa.reader_lines(kg, chain.facts[:1]) == ["[Danish Ministry, Make a visit, Iraq, 1970-01-11]"]


def test_reference_anchor_mask():
    kg = _timeline_kg()
    c = _c(kg, others=("Danish Ministry",))
    c = Constraints(c.question, c.entities, c.relations, c.main, raw={"constraint_entities": [1]})
    mask = tecqa_analysis.reference_anchor_mask(
        kg, np.array([0, 21, 22, 24]), "After the Danish Ministry ...?", c
    )
    assert mask.tolist() == [False, True, True, False]
    assert tecqa_analysis.reference_anchor_mask(kg, np.array([0]), "Who first visited Iraq?", _c(kg)) is None


# -- real data ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_table5_case_subgraph_and_anchor_on_real_kg(kg):
    from temporag.embed import Encoder

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
