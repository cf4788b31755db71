"""STAR-RAG rule graph: Apriori labels, rule nodes, exact Hamming-1 spans, incremental MDL (tiny KGs + a
real MultiTQ slice, brute-force references below), the cached build, and (slow) the full-KG graph."""

from __future__ import annotations

import math

import numpy as np
import pytest

from temporag.data.tkg import TemporalKG
from temporag.methods import star_rag
from temporag.methods.star_rag import RuleNodes


def make_kg(facts: list[tuple[int, int, int, int]], n_ent: int, n_rel: int) -> TemporalKG:
    s, r, o, t = (np.asarray(c, dtype=np.int32) for c in zip(*facts))
    return TemporalKG(
        s, r, o, t, t.copy(), [f"e{i}" for i in range(n_ent)], [f"r{i}" for i in range(n_rel)], name="toy"
    )


# relation sets: e0 {0,1,2}, e1 {0,1,2}, e2 {0,1}, e3 {0,3}, e4 {3}, e5 {3}
TOY = [
    (0, 0, 1, 0),
    (0, 1, 1, 3),
    (0, 2, 1, 5),
    (1, 2, 0, 9),
    (2, 0, 3, 2),
    (2, 1, 0, 4),
    (4, 3, 5, 7),
    (3, 3, 5, 8),
    (5, 3, 4, 20),
    (0, 0, 1, 11),
]


def random_kg(seed: int, n_ent: int = 9, n_rel: int = 4, n_facts: int = 90, days: int = 40) -> TemporalKG:
    rng = np.random.default_rng(seed)
    facts = set()
    while len(facts) < n_facts:
        s, o = rng.choice(n_ent, 2, replace=False)
        facts.add((int(s), int(rng.integers(n_rel)), int(o), int(rng.integers(days))))
    return make_kg(sorted(facts, key=lambda f: f[3]), n_ent, n_rel)


# -- brute-force references: the definitions, pair by pair (small graphs only) ----------------------


def hamming1_pairs_bruteforce(nodes: RuleNodes) -> set[tuple[int, int]]:
    """All Hamming-1 node pairs by brute force (for tests on small graphs)."""
    out = set()
    cols = np.stack([nodes.a_s, nodes.r, nodes.a_o], axis=1)
    for u in range(len(cols)):
        d = (cols[u + 1 :] != cols[u]).sum(axis=1)
        for v in np.flatnonzero(d == 1) + u + 1:
            out.add((u, int(v)))
    return out


def spans_bruteforce(
    kg: TemporalKG, nodes: RuleNodes, u: int, v: int, temporal_pairs: str = "all"
) -> list[int]:
    """T_uv by definition (for tests): |t' − t| over f ∈ supp(u), f' ∈ supp(v), f ≠ f' sharing ≥ 2 of
    s, r, o (or, for ``"consecutive"``, over the time-adjacent events of one entity pair)."""
    out = []
    if temporal_pairs == "all":
        for f in nodes.support[u].tolist():
            for g in nodes.support[v].tolist():
                if f == g:
                    continue
                shared = int(kg.s[f] == kg.s[g]) + int(kg.r[f] == kg.r[g]) + int(kg.o[f] == kg.o[g])
                if shared >= 2:
                    out.append(abs(int(kg.t_start[g]) - int(kg.t_start[f])))
        return out
    f = np.lexsort((np.arange(len(kg)), kg.t_start, kg.o, kg.s))
    su, sv = set(nodes.support[u].tolist()), set(nodes.support[v].tolist())
    for a, b in zip(f[:-1].tolist(), f[1:].tolist()):
        if kg.s[a] != kg.s[b] or kg.o[a] != kg.o[b]:
            continue
        span = abs(int(kg.t_start[b]) - int(kg.t_start[a]))
        out.extend([span] * ((a in su and b in sv) + (b in su and a in sv)))
    return out


def test_relation_sets_and_apriori_patterns():
    kg = make_kg(TOY, 6, 4)
    relsets = star_rag.relation_sets(kg)
    assert relsets == [(0, 1, 2), (0, 1, 2), (0, 1), (0, 3), (3,), (3,)]
    patterns, counts, members = star_rag.frequent_relation_subsets(relsets, min_support=0.5, max_length=3)
    found = {p: int(c) for p, c in zip(patterns, counts)}
    # support >= 3 of 6 entities: {0}:4, {1}:3, {3}:3, {0,1}:3
    assert found == {(0,): 4, (1,): 3, (3,): 3, (0, 1): 3}
    assert {p: m.tolist() for p, m in zip(patterns, members)}[(0, 1)] == [0, 1, 2]


def test_labels_first_k_type_specific_order_and_fallback():
    kg = make_kg(TOY, 6, 4)
    lab = star_rag.label_entities(kg, min_support=0.5, k_type=2)
    names = [lab.patterns[t] for t in range(lab.n_frequent)]
    # longest first, then by support, then by relation ids
    assert names == [(0, 1), (0,), (1,), (3,)]
    got = [[lab.patterns[t] for t in lab.of(e)] for e in range(6)]
    assert got[0] == [(0, 1), (0,)]  # K_type = 2 keeps the first two of [(0,1), (0,), (1,)]
    assert got[3] == [(0,), (3,)]
    assert got[4] == [(3,)]
    one = star_rag.label_entities(kg, min_support=0.5, k_type=1)
    assert [[one.patterns[t] for t in one.of(e)] for e in range(6)][0] == [(0, 1)]
    # at support 0.6 only {0} (4/6) is frequent: e4, e5 fall back to their whole relation set
    fb = star_rag.label_entities(kg, min_support=0.6, k_type=2)
    assert fb.n_frequent == 1
    assert [fb.patterns[t] for t in fb.of(4)] == [(3,)] and fb.is_fallback(int(fb.of(4)[0]))
    assert fb.of(4).tolist() == fb.of(5).tolist()  # one TypeID per distinct fallback set
    assert fb.summary()["entities_with_fallback"] == 2
    by_support = star_rag.label_entities(kg, min_support=0.5, k_type=2, order="support")
    assert [by_support.patterns[t] for t in by_support.of(0)] == [(0,), (1,)]  # ties: shorter first


def test_rule_nodes_support_sets_follow_eq1():
    kg = random_kg(1)
    lab = star_rag.label_entities(kg, min_support=0.3, k_type=2)
    nodes = star_rag.rule_nodes(kg, lab)
    expected: dict[tuple[int, int, int], set[int]] = {}
    for f in range(len(kg)):
        for a in lab.of(int(kg.s[f])):
            for b in lab.of(int(kg.o[f])):
                expected.setdefault((int(a), int(kg.r[f]), int(b)), set()).add(f)
    got = {
        (int(nodes.a_s[u]), int(nodes.r[u]), int(nodes.a_o[u])): set(nodes.support[u].tolist())
        for u in range(len(nodes))
    }
    assert got == expected
    for f in range(len(kg)):  # the fact -> nodes index is the inverse of supp
        assert {
            u
            for u in range(len(nodes))
            if f in got[tuple(int(x) for x in (nodes.a_s[u], nodes.r[u], nodes.a_o[u]))]
        } == set(nodes.of_fact[f].tolist())


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("mode", ["all", "consecutive"])
def test_hamming1_edges_and_spans_match_bruteforce(seed, mode):
    kg = random_kg(seed)
    lab = star_rag.label_entities(kg, min_support=0.25, k_type=3)
    assert lab.counts.max() >= 2  # several labels per entity, so label-variant pairs occur
    nodes = star_rag.rule_nodes(kg, lab)
    cand = star_rag.candidate_edges(kg, lab, nodes, mode)
    pairs = hamming1_pairs_bruteforce(nodes)
    assert cand.n_hamming1 == len(pairs)
    got = {
        (int(u), int(v)): (int(c), int(s)) for u, v, c, s in zip(cand.u, cand.v, cand.n_spans, cand.span_sum)
    }
    expected = {}
    for u, v in pairs:
        spans = spans_bruteforce(kg, nodes, u, v, mode)
        if spans:
            expected[(u, v)] = (len(spans), sum(spans))
    assert got == expected
    for u, v, k in zip(cand.u, cand.v, cand.kind):
        cols = [(nodes.a_s[u], nodes.a_s[v]), (nodes.r[u], nodes.r[v]), (nodes.a_o[u], nodes.a_o[v])]
        assert [a != b for a, b in cols].index(True) == k


def test_spans_on_a_real_multitq_slice(kg):
    # every fact of five entities that share many relations: a real, dense corner of MultiTQ
    ents = [kg.entity_id[e] for e in ("Iran", "Iraq", "Oman", "Qatar", "China")]
    pick = np.flatnonzero(np.isin(kg.s, ents) & np.isin(kg.o, ents))[:400]
    sub = TemporalKG(
        kg.s[pick], kg.r[pick], kg.o[pick], kg.t_start[pick], kg.t_end[pick], kg.entities, kg.relations
    )
    lab = star_rag.label_entities(sub, min_support=0.6, k_type=2)
    nodes = star_rag.rule_nodes(sub, lab)
    cand = star_rag.candidate_edges(sub, lab, nodes)
    rng = np.random.default_rng(0)
    for e in rng.choice(len(cand), size=min(25, len(cand)), replace=False):
        spans = spans_bruteforce(sub, nodes, int(cand.u[e]), int(cand.v[e]))
        assert (len(spans), sum(spans)) == (cand.n_spans[e], cand.span_sum[e])


def _full_dl(kg, lab, nodes, cand, selected, unit):
    return star_rag.description_length(kg, lab, nodes, cand, selected, unit)["total"]


def test_incremental_delta_l_equals_full_recomputation():
    kg = random_kg(5, n_ent=10, n_facts=120, days=300)
    lab = star_rag.label_entities(kg, min_support=0.25, k_type=2)
    nodes = star_rag.rule_nodes(kg, lab)
    cand = star_rag.candidate_edges(kg, lab, nodes)
    unit = 1000.0  # a null window where part of the candidates pay for themselves, over two passes
    res = star_rag.mdl_select(kg, lab, nodes, cand, null_window_days=unit)
    assert res.passes == 2
    assert 0 < res.n_selected < len(cand)
    assert res.L_after == pytest.approx(
        _full_dl(kg, lab, nodes, cand, res.selected, unit), rel=1e-9, abs=1e-6
    )
    assert res.L_after < res.L_before
    # replay the accepted edges in order: each recorded total equals the full recomputation
    chosen = np.zeros(len(cand), dtype=bool)
    totals = []
    for e in res.accepted:
        chosen[e] = True
        totals.append(_full_dl(kg, lab, nodes, cand, chosen, unit))
    assert len(res.accepted) == res.n_selected
    assert np.allclose(totals, res.trace, rtol=1e-9, atol=1e-6)
    # greedy fixed point: no unselected edge lowers the description length any more
    base = res.L_after
    for e in np.flatnonzero(~res.selected):
        trial = res.selected.copy()
        trial[e] = True
        assert _full_dl(kg, lab, nodes, cand, trial, unit) >= base - 1e-6


def test_model_cost_switch_and_null_window():
    kg = random_kg(7, n_ent=10, n_facts=120, days=300)
    lab = star_rag.label_entities(kg, min_support=0.25, k_type=2)
    nodes = star_rag.rule_nodes(kg, lab)
    cand = star_rag.candidate_edges(kg, lab, nodes)
    with_model = star_rag.mdl_select(kg, lab, nodes, cand, null_window_days=300.0)
    data_only = star_rag.mdl_select(kg, lab, nodes, cand, null_window_days=300.0, model_cost=False)
    assert data_only.n_selected > with_model.n_selected > 0
    l_cov, l_time, l_null = star_rag.data_costs(cand, nodes, 300.0)
    assert data_only.selected.tolist() == ((l_cov + l_time - l_null) < 0).tolist()  # Eq. 7 literally
    assert (l_cov >= -1e-12).all()  # |T_uv| <= |supp u| |supp v|
    assert (l_time > 0).all() and (l_null > 0).all()
    wide = star_rag.mdl_select(kg, lab, nodes, cand, null_window_days=3000.0)
    assert wide.n_selected >= with_model.n_selected  # a costlier null code makes more edges pay off
    assert star_rag.mdl_select(kg, lab, nodes, cand, null_window_days=1.0).n_selected == 0  # a free null code
    # Eq. 6 by hand for one edge, and the uniform null code
    e = 0
    T, S = cand.n_spans[e], cand.span_sum[e]
    assert l_time[e] == pytest.approx(T / math.log(2) + T * math.log2(max(S / T, 1.0)))
    assert l_null[e] == pytest.approx(T * math.log2(300.0))


def test_description_length_is_a_positive_bit_count():
    kg = random_kg(5, n_ent=10, n_facts=120, days=300)
    lab = star_rag.label_entities(kg, min_support=0.25, k_type=2)
    nodes = star_rag.rule_nodes(kg, lab)
    cand = star_rag.candidate_edges(kg, lab, nodes)
    res = star_rag.mdl_select(kg, lab, nodes, cand, null_window_days=1000.0)
    parts = res.parts_after
    assert all(v >= 0 for v in parts.values()), parts
    assert 0 < res.L_after < res.L_before
    empty = star_rag.description_length(kg, lab, nodes, cand, np.zeros(len(cand), dtype=bool), 1000.0)
    assert empty["L_cov"] == empty["L_time"] == empty["L(M) edges"] == 0.0
    # the empty model's total is the greedy search's starting point
    assert empty["L(M) nodes"] == 0.0 and empty["total"] == pytest.approx(res.L_before)
    assert res.trace[0] < res.L_before and np.all(np.diff(res.trace) < 0)


def test_labelling_grid_sizes_the_graph_by_hand():
    from temporag.methods.star_rag import experiments

    kg = make_kg(TOY, 6, 4)
    grid = experiments.labelling_grid(kg, [0.5, 0.6], [1, 2])
    first = grid.iloc[1]  # support 0.5, K_type 2: e0-e2 {0,1}+{0}, e3 {0}+{3}, e4, e5 {3}
    assert (first["frequent subsets"], first["labels in use"], first["fallback labels"]) == (4, 3, 0)
    assert first["labels per entity"] == pytest.approx(10 / 6)
    # rule nodes by Eq. 1: every (label of s, r, label of o) of the ten facts, counted by hand
    labels = star_rag.label_entities(kg, 0.5, 2)
    by_hand = {
        (int(a), int(kg.r[f]), int(b))
        for f in range(len(kg))
        for a in labels.of(int(kg.s[f]))
        for b in labels.of(int(kg.o[f]))
    }
    assert first["rule nodes"] == len(by_hand) == 16  # r0: 4 + 2, r1: 4, r2: 4, r3: 2
    sparse = grid.iloc[2]  # support 0.6: only {0}; e4 and e5 share the fallback {3}
    assert (sparse["frequent subsets"], sparse["fallback labels"], sparse["entities with fallback"]) == (
        1,
        1,
        2,
    )


def test_cached_build_roundtrip(tmp_cache):
    kg = random_kg(3)
    params = star_rag.GraphParams(min_support=0.25, k_type=2, null_window_days=30.0)
    first = star_rag.load_or_build(kg, params)
    assert first.timings["loaded_from_cache"] == 0.0
    again = star_rag.load_or_build(kg, params)
    assert again.timings["loaded_from_cache"] == 1.0
    assert np.array_equal(first.mdl.selected, again.mdl.selected)
    assert list((tmp_cache / "star_rag").glob("*.npz"))
    other = star_rag.load_or_build(
        kg, star_rag.GraphParams(min_support=0.25, k_type=1, null_window_days=30.0)
    )
    assert other.timings["loaded_from_cache"] == 0.0


@pytest.mark.slow
def test_full_multitq_rule_graph(kg):
    graph = star_rag.load_or_build(kg, star_rag.GraphParams())
    st = graph.stats()
    assert st["frequent_subsets"] == 1001 and st["labels_in_use"] == 657
    assert st["rule_nodes"] == 47_631
    assert st["hamming1_pairs"] > st["candidate_edges_with_spans"] > st["selected_edges"] > 10_000
    assert st["L_after_bits"] < st["L_before_bits"]


def test_cache_key_has_the_version_and_a_broken_entry_is_rebuilt(tmp_cache, monkeypatch):
    from temporag.methods.star_rag import graph as graph_module

    kg = random_kg(4)
    params = star_rag.GraphParams(min_support=0.25, k_type=2, null_window_days=30.0)
    path = star_rag.graph_cache_path(kg, params)
    with monkeypatch.context() as patched:
        patched.setattr(graph_module, "GRAPH_VERSION", graph_module.GRAPH_VERSION + 1)
        assert star_rag.graph_cache_path(kg, params) != path  # a new construction never loads an old graph
    assert path.is_relative_to(tmp_cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not an archive")  # e.g. cut short, or planted without a signature
    rebuilt = star_rag.load_or_build(kg, params)
    assert rebuilt.timings["loaded_from_cache"] == 0.0 and rebuilt.mdl.n_selected > 0
    assert star_rag.load_or_build(kg, params).timings["loaded_from_cache"] == 1.0
