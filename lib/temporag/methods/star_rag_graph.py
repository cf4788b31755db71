"""STAR-RAG's rule graph (§3.2, Alg. 1 lines 1–6, Alg. 2, Appendix B): labels, rule nodes, MDL edges.

Steps, each a function the notebook calls in the paper's order:

1. :func:`label_entities` — Alg. 2: relation set per entity, frequent relation subsets by Apriori
   (``efficient-apriori``, subsets of at most three relations, footnote 2), TypeIDs, the first
   ``k_type`` labels per entity, the whole relation set as the fallback label.
2. :func:`rule_nodes` — Eq. 1: every fact (s, r, o, t) is a member of ⟨c_s, r, c_o⟩ for each label
   pair of its entities; the members are the node's support set.
3. :func:`candidate_edges` — Eq. 2 and the temporal spans T_uv: rule-node pairs at Hamming distance 1
   whose support sets hold events sharing at least two of (s, r, o) (footnote 3, see below).
4. :func:`mdl_select` — Eqs. 3–7 with L(M) of Appendix B: greedy insertion in a fixed order while
   the total description length drops, with O(1) incremental ΔL per candidate.  Spans that no selected
   edge explains are priced by a uniform code over the KG's period (L_null), so every part of L(G, M)
   is a non-negative bit count and an edge pays off by compressing its spans below that code.

Why the span construction is exact yet cheap.  A naive T_uv compares every event of u with every event
of v: billions of pairs on MultiTQ.  Two events "overlap" (d_H ≤ 2 with the timestamp counted as always
different, footnote 3) when they share two of (s, r, o), i.e. they are the same triple or two triples
that differ in one component.  So spans only arise inside a triple or between two triples sharing
(s, o), (s, r) or (r, o) — 5.6M triple pairs on MultiTQ.  For each such pair of triples the count is
n_i·n_j and the sum of |t − t'| comes from merging the two time-sorted lists with prefix sums; both are
then added to every Hamming-1 rule-node pair the two triples map to.  |T_uv| and Σ T_uv are all that
Eqs. 5–6 need, so no span is ever materialised.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from temporag.data.tkg import CSRIndex, TemporalKG

log = logging.getLogger(__name__)

LOG2E = math.log2(math.e)
GRAPH_VERSION = 4  # bump when the construction changes (part of the cache key)
ORDERS = ("specific", "support")
TEMPORAL_PAIRS = ("all", "consecutive")
EDGE_ORDERS = ("gain", "pairs")


# ---------------------------------------------------------------------------------------------------
# 1 · entity labelling (Alg. 2)


def relation_sets(kg: TemporalKG) -> list[tuple[int, ...]]:
    """RelSet[e]: the sorted relation ids of the facts where e is subject or object (Alg. 2 line 1)."""
    ent = np.concatenate([kg.s, kg.o]).astype(np.int64)
    rel = np.concatenate([kg.r, kg.r]).astype(np.int64)
    key = np.unique(ent * kg.n_relations + rel)
    ents, rels = key // kg.n_relations, key % kg.n_relations
    bounds = np.searchsorted(ents, np.arange(kg.n_entities + 1))
    rels_list = rels.tolist()
    return [tuple(rels_list[bounds[e] : bounds[e + 1]]) for e in range(kg.n_entities)]


def frequent_relation_subsets(
    relsets: Sequence[tuple[int, ...]], min_support: float, max_length: int = 3
) -> tuple[list[tuple[int, ...]], np.ndarray, list[np.ndarray]]:
    """Apriori (Alg. 2 line 2) over the entities' relation sets: (patterns, entity counts, members).

    ``min_support`` is the share of entities whose relation set must contain a subset; entities without
    any relation are left out of the transactions (they have no facts to summarise).
    """
    from efficient_apriori import itemsets_from_transactions

    tx_ids = [i for i, rs in enumerate(relsets) if rs]
    transactions = [relsets[i] for i in tx_ids]
    if not transactions:
        return [], np.zeros(0, dtype=np.int64), []
    found, _ = itemsets_from_transactions(
        transactions, min_support=min_support, max_length=max_length, output_transaction_ids=True
    )
    tx_ids_arr = np.asarray(tx_ids, dtype=np.int64)
    patterns, counts, members = [], [], []
    for by_len in found.values():
        for pattern, item in by_len.items():
            patterns.append(tuple(sorted(int(r) for r in pattern)))
            counts.append(int(item.itemset_count))
            members.append(np.sort(tx_ids_arr[np.fromiter(item.members, dtype=np.int64)]))
    return patterns, np.asarray(counts, dtype=np.int64), members


@dataclass(frozen=True)
class EntityLabels:
    """C(e) for every entity: TypeIDs of relation patterns (Apriori patterns first, then fallbacks)."""

    min_support: float
    k_type: int
    max_length: int
    order: str
    patterns: list[tuple[int, ...]]  # TypeID -> relation ids
    pattern_entities: np.ndarray  # entities whose relation set contains the pattern (fallback: equals it)
    n_frequent: int  # TypeIDs below this are Apriori patterns, the rest are fallback relation sets
    offsets: np.ndarray  # CSR over entities
    labels: np.ndarray  # TypeIDs, each entity's in rank order

    def of(self, entity: int) -> np.ndarray:
        return self.labels[self.offsets[entity] : self.offsets[entity + 1]]

    @property
    def counts(self) -> np.ndarray:
        """Number of labels per entity (0 for an entity without facts)."""
        return np.diff(self.offsets)

    @cached_property
    def used(self) -> np.ndarray:
        """TypeIDs assigned to at least one entity (the label alphabet 𝒜 of Appendix B)."""
        return np.unique(self.labels)

    @property
    def n_labels(self) -> int:
        return int(len(self.used))

    def is_fallback(self, type_id: int) -> bool:
        return type_id >= self.n_frequent

    @cached_property
    def padded(self) -> np.ndarray:
        """(entities × k_type) TypeIDs, -1 where an entity has fewer labels."""
        out = np.full((len(self.offsets) - 1, max(1, self.k_type)), -1, dtype=np.int64)
        counts = self.counts
        rows = np.repeat(np.arange(len(counts)), counts)
        cols = np.arange(len(self.labels)) - np.repeat(self.offsets[:-1], counts)
        out[rows, cols] = self.labels
        return out

    def name(self, type_id: int, kg: TemporalKG, short: bool = False) -> str:
        """A readable label: its relations, e.g. '{Consult, Make statement}' (fallbacks marked *)."""
        rels = [kg.relation_labels[r] for r in self.patterns[type_id]]
        if short:
            rels = [r if len(r) <= 18 else r[:17] + "…" for r in rels]
            if len(rels) > 3:
                rels = rels[:3] + [f"+{len(rels) - 3}"]
        star = "*" if self.is_fallback(type_id) else ""
        return f"T{type_id}{star}{{{', '.join(rels)}}}"

    def summary(self) -> dict:
        counts = self.counts[self.counts > 0]
        fallback_entities = int(np.sum(self.labels >= self.n_frequent))
        return {
            "min_support": self.min_support,
            "k_type": self.k_type,
            "max_length": self.max_length,
            "order": self.order,
            "frequent_subsets": self.n_frequent,
            "frequent_by_length": {
                int(k): int(v)
                for k, v in zip(
                    *np.unique([len(p) for p in self.patterns[: self.n_frequent]], return_counts=True)
                )
            },
            "labels_in_use": self.n_labels,
            "fallback_labels": int(len(self.patterns) - self.n_frequent),
            "entities_with_fallback": fallback_entities,
            "entities_labelled": int(len(counts)),
            "mean_labels_per_entity": float(counts.mean()) if len(counts) else 0.0,
        }


def label_entities(
    kg: TemporalKG,
    min_support: float = 0.05,
    k_type: int = 2,
    max_length: int = 3,
    order: str = "specific",
    mined: tuple | None = None,
) -> EntityLabels:
    """Alg. 2: label every entity with the first ``k_type`` frequent relation subsets it contains.

    ``mined`` = (relation sets, Apriori output) lets a parameter sweep reuse one mining run per support.

    "Sort F" (line 3) is not specified; ``order="specific"`` ranks longer subsets first, then by
    support, so an entity's first labels are its most specific frequent patterns (the paper's example
    labels Oman with three-relation subsets); ``order="support"`` ranks by support only (then the most
    common single relations come first).  Ties break on the relation ids.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if k_type < 1:
        raise ValueError("k_type must be at least 1")
    if mined is None:
        relsets = relation_sets(kg)
        mined = (relsets, frequent_relation_subsets(relsets, min_support, max_length))
    relsets, (patterns, counts, members) = mined
    if order == "specific":
        rank = sorted(range(len(patterns)), key=lambda i: (-len(patterns[i]), -counts[i], patterns[i]))
    else:
        rank = sorted(range(len(patterns)), key=lambda i: (-counts[i], len(patterns[i]), patterns[i]))
    patterns = [patterns[i] for i in rank]
    counts = counts[rank] if len(rank) else counts
    members = [members[i] for i in rank]
    n_freq = len(patterns)
    # (TypeID, entity) incidences; the first k_type TypeIDs per entity are its labels (line 9)
    if members:
        inc_type = np.concatenate([np.full(len(m), t, dtype=np.int64) for t, m in enumerate(members)])
        inc_ent = np.concatenate(members)
        by = np.lexsort((inc_type, inc_ent))
        inc_type, inc_ent = inc_type[by], inc_ent[by]
        starts = np.searchsorted(inc_ent, inc_ent, side="left")
        keep = (np.arange(len(inc_ent)) - starts) < k_type
        inc_type, inc_ent = inc_type[keep], inc_ent[keep]
    else:
        inc_type = inc_ent = np.zeros(0, dtype=np.int64)
    has = np.zeros(kg.n_entities, dtype=bool)
    has[inc_ent] = True
    # fallback (lines 6–8): the entity's whole relation set becomes its single label
    fallback_sets: dict[tuple[int, ...], list[int]] = {}
    for e in np.flatnonzero(~has).tolist():
        if relsets[e]:
            fallback_sets.setdefault(relsets[e], []).append(e)
    fb_order = sorted(fallback_sets, key=lambda p: (-len(p), p))
    fb_type, fb_ent, fb_counts = [], [], []
    for j, pattern in enumerate(fb_order):
        ents = fallback_sets[pattern]
        fb_type.extend([n_freq + j] * len(ents))
        fb_ent.extend(ents)
        fb_counts.append(len(ents))
    all_type = np.concatenate([inc_type, np.asarray(fb_type, dtype=np.int64)])
    all_ent = np.concatenate([inc_ent, np.asarray(fb_ent, dtype=np.int64)])
    by = np.lexsort((all_type, all_ent))
    all_type, all_ent = all_type[by], all_ent[by]
    offsets = np.zeros(kg.n_entities + 1, dtype=np.int64)
    np.cumsum(np.bincount(all_ent, minlength=kg.n_entities), out=offsets[1:])
    return EntityLabels(
        min_support=float(min_support),
        k_type=int(k_type),
        max_length=int(max_length),
        order=order,
        patterns=patterns + fb_order,
        pattern_entities=np.concatenate([counts.astype(np.int64), np.asarray(fb_counts, dtype=np.int64)]),
        n_frequent=n_freq,
        offsets=offsets,
        labels=all_type,
    )


def labelling_grid(
    kg: TemporalKG,
    supports: Sequence[float],
    k_types: Sequence[int],
    max_length: int = 3,
    order: str = "specific",
) -> list[dict]:
    """Labels and rule nodes for each (support threshold, K_type): how both knobs size the rule graph."""
    relsets = relation_sets(kg)
    rows = []
    for sup in supports:
        mined = (relsets, frequent_relation_subsets(relsets, sup, max_length))
        for k in k_types:
            lab = label_entities(kg, sup, k, max_length, order, mined=mined)
            summary = lab.summary()
            rows.append(
                {
                    "min_support": sup,
                    "K_type": k,
                    "frequent subsets": summary["frequent_subsets"],
                    "labels in use": summary["labels_in_use"],
                    "fallback labels": summary["fallback_labels"],
                    "entities with fallback": summary["entities_with_fallback"],
                    "labels per entity": summary["mean_labels_per_entity"],
                    "rule nodes": len(rule_nodes(kg, lab)),
                }
            )
    return rows


# ---------------------------------------------------------------------------------------------------
# 2 · candidate rule nodes (Eq. 1)


@dataclass(frozen=True)
class RuleNodes:
    """Rule nodes ⟨c_s, r, c_o⟩ (sorted by key) and their support sets, both ways."""

    a_s: np.ndarray
    r: np.ndarray
    a_o: np.ndarray
    support: CSRIndex  # node -> fact ids (ascending)
    of_fact: CSRIndex  # fact -> node ids
    key_base: tuple[int, int]  # (n_relations, label key range) for node_key

    def __len__(self) -> int:
        return len(self.r)

    @cached_property
    def sizes(self) -> np.ndarray:
        """|supp(u)| for every node."""
        return np.diff(self.support.offsets)

    @cached_property
    def keys(self) -> np.ndarray:
        return node_key(self.a_s, self.r, self.a_o, *self.key_base)

    def lookup(self, a_s, r, a_o) -> np.ndarray:
        """Node ids of (a_s, r, a_o) triples that exist (KeyError-free: callers pass real members)."""
        return np.searchsorted(self.keys, node_key(a_s, r, a_o, *self.key_base))

    def name(self, u: int, kg: TemporalKG, labels: EntityLabels) -> str:
        return (
            f"⟨{labels.name(int(self.a_s[u]), kg, short=True)}, {kg.relation_labels[int(self.r[u])]}, "
            f"{labels.name(int(self.a_o[u]), kg, short=True)}⟩"
        )


def node_key(a_s, r, a_o, n_relations: int, n_types: int) -> np.ndarray:
    """One int64 per ⟨c_s, r, c_o⟩ (sortable, so node ids are found by binary search)."""
    a_s, r, a_o = (np.asarray(x, dtype=np.int64) for x in (a_s, r, a_o))
    return (a_s * n_relations + r) * n_types + a_o


def _expand_facts(kg: TemporalKG, labels: EntityLabels, facts: np.ndarray) -> tuple[np.ndarray, ...]:
    """(fact, c_s, c_o) rows: one per label pair of each fact's subject and object (Eq. 1's φ)."""
    pad = labels.padded
    k = pad.shape[1]
    rows_f, rows_a, rows_b = [], [], []
    for i in range(k):
        for j in range(k):
            a = pad[kg.s[facts], i]
            b = pad[kg.o[facts], j]
            ok = (a >= 0) & (b >= 0)
            rows_f.append(facts[ok])
            rows_a.append(a[ok])
            rows_b.append(b[ok])
    return np.concatenate(rows_f), np.concatenate(rows_a), np.concatenate(rows_b)


def rule_nodes(kg: TemporalKG, labels: EntityLabels) -> RuleNodes:
    """Eq. 1: the candidate rule set 𝒰 and supp(u) for every node."""
    facts = np.arange(len(kg), dtype=np.int64)
    f, a, b = _expand_facts(kg, labels, facts)
    base = (kg.n_relations, max(1, len(labels.patterns)))
    keys = node_key(a, kg.r[f], b, *base)
    order = np.lexsort((f, keys))  # rows grouped by node, facts ascending inside a node
    keys, f = keys[order], f[order]
    new = np.ones(len(keys), dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    uniq = keys[new]
    node_of_row = np.cumsum(new) - 1
    offsets = np.append(np.flatnonzero(new), len(keys)).astype(np.int64)
    n_types = base[1]
    a_o = uniq % n_types
    rest = uniq // n_types
    r = rest % kg.n_relations
    a_s = rest // kg.n_relations
    support = CSRIndex(offsets, f.astype(np.int32))
    of_fact = CSRIndex.build(f, len(kg), node_of_row.astype(np.int32))
    return RuleNodes(a_s.astype(np.int32), r.astype(np.int32), a_o.astype(np.int32), support, of_fact, base)


def count_hamming1_pairs(nodes: RuleNodes) -> int:
    """|𝒲|: unordered node pairs at Hamming distance exactly 1 (Eq. 2), whether or not they share events."""
    total = 0
    a_s, r, a_o = (x.astype(np.int64) for x in (nodes.a_s, nodes.r, nodes.a_o))
    big = np.int64(1 << 21)
    for key in (r * big + a_o, a_s * big + a_o, a_s * big + r):
        _, counts = np.unique(key, return_counts=True)
        total += int((counts * (counts - 1) // 2).sum())
    return total


def hamming1_pairs_bruteforce(nodes: RuleNodes) -> set[tuple[int, int]]:
    """All Hamming-1 node pairs by brute force (for tests on small graphs)."""
    out = set()
    cols = np.stack([nodes.a_s, nodes.r, nodes.a_o], axis=1)
    for u in range(len(cols)):
        d = (cols[u + 1 :] != cols[u]).sum(axis=1)
        for v in np.flatnonzero(d == 1) + u + 1:
            out.add((u, int(v)))
    return out


# ---------------------------------------------------------------------------------------------------
# 3 · candidate edges with temporal spans (Eq. 2, T_uv)


@dataclass(frozen=True)
class CandidateEdges:
    """Hamming-1 node pairs {u, v} (u < v) with |T_uv| > 0, their span count and span sum (days)."""

    u: np.ndarray
    v: np.ndarray
    n_spans: np.ndarray  # |T_uv|
    span_sum: np.ndarray  # Σ_{d ∈ T_uv} d, in days
    kind: np.ndarray  # which component differs: 0 subject label, 1 relation, 2 object label
    n_hamming1: int  # |𝒲|, including pairs whose supports share no overlapping events
    temporal_pairs: str

    def __len__(self) -> int:
        return len(self.u)

    @property
    def mean_span(self) -> np.ndarray:
        return self.span_sum / np.maximum(self.n_spans, 1)


@dataclass
class _Triples:
    """Distinct (s, r, o) with their facts sorted by time: the unit every span is computed on."""

    s: np.ndarray
    r: np.ndarray
    o: np.ndarray
    offsets: np.ndarray
    times: np.ndarray  # int64 days relative to t0, grouped by triple, ascending within a triple
    cum: np.ndarray  # prefix sums of times (len + 1)
    seg_key: np.ndarray  # triple id * shift + time, ascending (for searchsorted)
    shift: int

    @property
    def n(self) -> np.ndarray:
        return np.diff(self.offsets)


def _triples(kg: TemporalKG) -> _Triples:
    ts, tr, to = (x.astype(np.int64) for x in kg.triple_columns)
    tof = kg.triple_of_fact.astype(np.int64)
    t = kg.t_start.astype(np.int64)
    t = t - t.min()
    order = np.lexsort((t, tof))
    times = t[order]
    offsets = np.zeros(len(ts) + 1, dtype=np.int64)
    np.cumsum(np.bincount(tof, minlength=len(ts)), out=offsets[1:])
    cum = np.concatenate([[0], np.cumsum(times)])
    shift = int(times.max()) + 2 if len(times) else 2
    seg = np.repeat(np.arange(len(ts), dtype=np.int64), np.diff(offsets))
    return _Triples(ts, tr, to, offsets, times, cum, seg * shift + times, shift)


def _within_sums(tri: _Triples) -> np.ndarray:
    """Σ_{p<q} (t_q − t_p) inside each triple's sorted time list."""
    n = tri.n
    pos = np.arange(len(tri.times)) - np.repeat(tri.offsets[:-1], n)
    coef = 2 * pos - np.repeat(n, n) + 1
    return np.bincount(np.repeat(np.arange(len(n)), n), weights=coef * tri.times, minlength=len(n)).astype(
        np.int64
    )


def _cross_sums(tri: _Triples, i: np.ndarray, j: np.ndarray, chunk: int = 4_000_000) -> np.ndarray:
    """Σ_{x ∈ T_i, y ∈ T_j} |x − y| for triple pairs (i, j): merge of sorted lists via prefix sums.

    The shorter list is streamed as queries into the longer one; cost Σ min(n_i, n_j) lookups."""
    n = tri.n
    small = np.where(n[i] <= n[j], i, j)
    big = np.where(n[i] <= n[j], j, i)
    out = np.zeros(len(i), dtype=np.int64)
    reps = n[small]
    ends = np.cumsum(reps)
    start = 0
    while start < len(i):
        stop = int(np.searchsorted(ends, (ends[start - 1] if start else 0) + chunk, side="right"))
        stop = max(stop, start + 1)
        sl = slice(start, stop)
        r = reps[sl]
        task = np.repeat(np.arange(start, stop), r)
        within = np.arange(int(r.sum())) - np.repeat(np.cumsum(r) - r, r)
        y = tri.times[tri.offsets[small[task]] + within]
        b = big[task]
        b0, nb = tri.offsets[b], n[b]
        p = np.searchsorted(tri.seg_key, b * tri.shift + y, side="right")
        c = p - b0
        s_le = tri.cum[p] - tri.cum[b0]
        tot = tri.cum[b0 + nb] - tri.cum[b0]
        f = y * c - s_le + (tot - s_le) - y * (nb - c)
        out[sl] = np.bincount(task - start, weights=f, minlength=stop - start).astype(np.int64)
        start = stop
    return out


def _pairs_within_groups(group_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All index pairs (i < j) of triples with the same ``group_key`` (e.g. the same subject and object).

    The count is Σ C(n_g, 2) over groups — 5.6M over MultiTQ's three groupings — so no cap is needed."""
    order = np.argsort(group_key, kind="stable")
    gk = group_key[order]
    ends = np.searchsorted(gk, gk, side="right")
    later = ends - np.arange(len(gk)) - 1  # how many later members each position pairs with
    total = int(later.sum())
    pos_i = np.repeat(np.arange(len(gk)), later)
    offs = np.arange(total) - np.repeat(np.cumsum(later) - later, later)
    return order[pos_i], order[pos_i + 1 + offs]


def _scatter(
    kind: str,
    tri: _Triples,
    labels: EntityLabels,
    nodes: RuleNodes,
    i: np.ndarray,
    j: np.ndarray,
    cnt: np.ndarray,
    ssum: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Add a triple pair's (count, span sum) to every Hamming-1 node pair it maps to.

    kind: "same" (i == j, spans inside a triple), "so" (share s, o), "sr" (share s, r), "ro" (share r, o).
    Returns (edge keys u*N+v with u<v, counts, sums) — not yet aggregated.
    """
    pad = labels.padded
    k = pad.shape[1]
    N = np.int64(len(nodes))
    keys_out, cnt_out, sum_out = [], [], []

    def emit(au, ru, bu, av, rv, bv, ok, c, s):
        if not ok.any():
            return
        x = nodes.lookup(au[ok], ru[ok], bu[ok]).astype(np.int64)
        y = nodes.lookup(av[ok], rv[ok], bv[ok]).astype(np.int64)
        keys_out.append(np.minimum(x, y) * N + np.maximum(x, y))
        cnt_out.append(c[ok])
        sum_out.append(s[ok])

    si, ri, oi = tri.s[i], tri.r[i], tri.o[i]
    sj, rj, oj = tri.s[j], tri.r[j], tri.o[j]
    if kind == "so":  # ⟨a, r, b⟩ – ⟨a, r', b⟩ for a ∈ C(s), b ∈ C(o)
        for x in range(k):
            for y in range(k):
                a, b = pad[si, x], pad[oi, y]
                emit(a, ri, b, a, rj, b, (a >= 0) & (b >= 0), cnt, ssum)
        return _concat(keys_out, cnt_out, sum_out)
    if kind == "same":  # label variants of one triple: differ in a, or differ in b
        for x in range(k):
            for x2 in range(x + 1, k):
                for y in range(k):
                    a, a2, b = pad[si, x], pad[si, x2], pad[oi, y]
                    emit(a, ri, b, a2, ri, b, (a >= 0) & (a2 >= 0) & (b >= 0), cnt, ssum)
        for x in range(k):
            for y in range(k):
                for y2 in range(y + 1, k):
                    a, b, b2 = pad[si, x], pad[oi, y], pad[oi, y2]
                    emit(a, ri, b, a, ri, b2, (a >= 0) & (b >= 0) & (b2 >= 0), cnt, ssum)
        return _concat(keys_out, cnt_out, sum_out)
    if kind == "sr":  # shared subject: triples differ in the object
        shared, free_i, free_j = si, oi, oj
    elif kind == "ro":  # shared object: triples differ in the subject
        shared, free_i, free_j = oi, si, sj
    else:
        raise ValueError(kind)
    r = ri
    for x in range(k):  # same shared-side label, different free-side labels
        a = pad[shared, x]
        for y in range(k):
            b = pad[free_i, y]
            for y2 in range(k):
                b2 = pad[free_j, y2]
                ok = (a >= 0) & (b >= 0) & (b2 >= 0) & (b != b2)
                if kind == "sr":
                    emit(a, r, b, a, r, b2, ok, cnt, ssum)
                else:
                    emit(b, r, a, b2, r, a, ok, cnt, ssum)
    for x in range(k):  # different shared-side labels, same free-side label
        for x2 in range(k):
            if x == x2:
                continue
            a, a2 = pad[shared, x], pad[shared, x2]
            for y in range(k):
                b = pad[free_i, y]
                for y2 in range(k):
                    b2 = pad[free_j, y2]
                    ok = (a >= 0) & (a2 >= 0) & (b >= 0) & (b == b2)
                    if kind == "sr":
                        emit(a, r, b, a2, r, b2, ok, cnt, ssum)
                    else:
                        emit(b, r, a, b2, r, a2, ok, cnt, ssum)
    return _concat(keys_out, cnt_out, sum_out)


def _concat(keys, cnts, sums) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not keys:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    return np.concatenate(keys), np.concatenate(cnts), np.concatenate(sums)


def _aggregate(keys: np.ndarray, cnts: np.ndarray, sums: np.ndarray) -> tuple[np.ndarray, ...]:
    if len(keys) == 0:
        return keys, cnts, sums
    uniq, inv = np.unique(keys, return_inverse=True)
    c = np.bincount(inv, weights=cnts, minlength=len(uniq))
    s = np.bincount(inv, weights=sums, minlength=len(uniq))
    return uniq, np.rint(c).astype(np.int64), np.rint(s).astype(np.int64)


class _Accumulator:
    """Sums (count, span sum) per edge key across chunks, compacting as it goes to bound memory."""

    def __init__(self, compact_every: int = 30_000_000) -> None:
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.pending = 0
        self.compact_every = compact_every

    def add(self, keys, cnts, sums) -> None:
        if len(keys) == 0:
            return
        self.parts.append(_aggregate(keys, cnts, sums))
        self.pending += len(self.parts[-1][0])
        if self.pending > self.compact_every:
            self.parts = [self.result()]
            self.pending = len(self.parts[0][0])

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.parts:
            z = np.zeros(0, dtype=np.int64)
            return z, z, z
        if len(self.parts) == 1:
            return self.parts[0]
        return _aggregate(*(np.concatenate(x) for x in zip(*self.parts)))


def candidate_edges(
    kg: TemporalKG,
    labels: EntityLabels,
    nodes: RuleNodes,
    temporal_pairs: str = "all",
    chunk: int = 400_000,
    progress: bool = False,
) -> CandidateEdges:
    """Eq. 2 candidate edges with their temporal spans T_uv (exact; see the module docstring).

    ``temporal_pairs="all"`` follows the paper: every pair (f ∈ supp u, f' ∈ supp v, f ≠ f') of events
    sharing two of (s, r, o).  ``"consecutive"`` is the released code's reading: only pairs of events of
    the same entity pair that follow each other in time.
    """
    if temporal_pairs not in TEMPORAL_PAIRS:
        raise ValueError(f"temporal_pairs must be one of {TEMPORAL_PAIRS}")
    from tqdm.auto import tqdm

    tri = _triples(kg)
    acc = _Accumulator()
    n = tri.n
    if temporal_pairs == "all":
        same = np.flatnonzero(n > 1)
        acc.add(
            *_scatter(
                "same", tri, labels, nodes, same, same, n[same] * (n[same] - 1), 2 * _within_sums(tri)[same]
            )
        )
        E, R = np.int64(kg.n_entities), np.int64(kg.n_relations)
        groupings = [
            ("so", tri.s * E + tri.o),
            ("sr", tri.s * R + tri.r),
            ("ro", tri.r * E + tri.o),
        ]
        for kind, gkey in groupings:
            i_all, j_all = _pairs_within_groups(gkey)
            bar = tqdm(total=len(i_all), desc=f"spans ({kind})", disable=not progress, unit="pair")
            for start in range(0, len(i_all), chunk):
                i, j = i_all[start : start + chunk], j_all[start : start + chunk]
                cnt = n[i] * n[j]
                ssum = _cross_sums(tri, i, j)
                acc.add(*_scatter(kind, tri, labels, nodes, i, j, cnt, ssum))
                bar.update(len(i))
            bar.close()
            del i_all, j_all
    else:
        # consecutive events of one entity pair: sort facts by (s, o, t, fact id), link neighbours
        f = np.lexsort((np.arange(len(kg)), kg.t_start, kg.o, kg.s))
        pair = kg.s[f].astype(np.int64) * kg.n_entities + kg.o[f]
        link = np.flatnonzero(pair[1:] == pair[:-1])
        f1, f2 = f[link], f[link + 1]
        ti, tj = kg.triple_of_fact[f1].astype(np.int64), kg.triple_of_fact[f2].astype(np.int64)
        span = np.abs(kg.t_start[f2].astype(np.int64) - kg.t_start[f1])
        same = ti == tj
        ones = np.ones(int(same.sum()), dtype=np.int64)
        acc.add(*_scatter("same", tri, labels, nodes, ti[same], ti[same], 2 * ones, 2 * span[same]))
        d = ~same
        acc.add(
            *_scatter("so", tri, labels, nodes, ti[d], tj[d], np.ones(int(d.sum()), dtype=np.int64), span[d])
        )
    keys, cnt, ssum = acc.result()
    N = np.int64(len(nodes))
    u, v = (keys // N).astype(np.int32), (keys % N).astype(np.int32)
    kind = np.where(nodes.a_s[u] != nodes.a_s[v], 0, np.where(nodes.r[u] != nodes.r[v], 1, 2)).astype(np.int8)
    return CandidateEdges(u, v, cnt, ssum, kind, count_hamming1_pairs(nodes), temporal_pairs)


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


# ---------------------------------------------------------------------------------------------------
# 4 · MDL selection (Eqs. 3–7, Appendix B)


@dataclass
class MDLResult:
    """Which candidate edges the greedy MDL search kept, and the description lengths (bits)."""

    selected: np.ndarray  # bool per candidate edge
    order: np.ndarray  # the fixed examination order (candidate indices)
    L_before: float
    L_after: float
    parts_before: dict
    parts_after: dict
    passes: int
    examined: int
    trace: np.ndarray  # total L after each accepted edge
    accepted: np.ndarray  # candidate indices in the order they were accepted
    null_window_days: float
    model_cost: bool

    @property
    def n_selected(self) -> int:
        return int(self.selected.sum())


def _entropy_code(counts: np.ndarray) -> np.ndarray:
    """−log2 p for an empirical distribution given as counts (inf where the count is 0)."""
    total = counts.sum()
    with np.errstate(divide="ignore"):
        return -np.log2(counts / total)


def node_code_lengths(kg: TemporalKG, labels: EntityLabels, nodes: RuleNodes) -> np.ndarray:
    """L(u) = −log2 p_s(a_s) − log2 p_r(r) − log2 p_o(a_o), probabilities from the facts (Appendix B).

    With several labels per entity, every (fact, label) incidence counts once."""
    n_types = len(labels.patterns)
    cnt = labels.counts
    lab_of_s = np.repeat(np.arange(kg.n_entities), cnt)
    per_entity_s = np.bincount(kg.s, minlength=kg.n_entities)
    per_entity_o = np.bincount(kg.o, minlength=kg.n_entities)
    ps = np.bincount(labels.labels, weights=per_entity_s[lab_of_s], minlength=n_types)
    po = np.bincount(labels.labels, weights=per_entity_o[lab_of_s], minlength=n_types)
    pr = np.bincount(kg.r, minlength=kg.n_relations).astype(float)
    return _entropy_code(ps)[nodes.a_s] + _entropy_code(pr)[nodes.r] + _entropy_code(po)[nodes.a_o]


def data_costs(
    cand: CandidateEdges, nodes: RuleNodes, null_window_days: float, min_span_days: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-edge L_cov (Eq. 5), L_time (Eq. 6) and L_null, in bits; all three are >= 0.

    Why three terms.  Eqs. 5–6 only ever add bits, so read literally no edge could lower L(G, M): the
    spans must cost something when no edge explains them.  L_null codes each span of T_uv uniformly over
    ``null_window_days`` days (|T_uv| log2 W); an edge is worth keeping when its exponential code plus its
    coverage cost undercut that.  L_time codes spans at the KG's one-day resolution, so the mean span is
    floored at ``min_span_days`` (an exponential with mean below the resolution would claim more than
    certainty about a span and give a negative code length).
    """
    T = cand.n_spans.astype(float)
    prod = nodes.sizes[cand.u].astype(float) * nodes.sizes[cand.v].astype(float)
    l_cov = np.log2(prod / T)
    mean = np.maximum(cand.span_sum / T, min_span_days)
    l_time = T * (LOG2E + np.log2(mean))
    l_null = T * math.log2(max(float(null_window_days), 1.0))
    return l_cov, l_time, l_null


def _edges_cost(n_edges: int, sdl: float) -> float:
    """Σ_{(u→v)} L(u→v) = 2|E| log2(2|E|) − Σ_u deg(u) log2 deg(u), given sdl = Σ deg log2 deg."""
    if n_edges == 0:
        return 0.0
    return 2 * n_edges * math.log2(2 * n_edges) - sdl


def description_length(
    kg: TemporalKG,
    labels: EntityLabels,
    nodes: RuleNodes,
    cand: CandidateEdges,
    selected: np.ndarray,
    null_window_days: float,
    model_cost: bool = True,
) -> dict:
    """L(𝒢, M) = L(M) + L_cov + L_time + L_null for the model made of the ``selected`` edges (full sum).

    L_cov and L_time run over the selected edges (Eqs. 5–6), L_null over the spans of the candidates
    left out; every part is non-negative.  ``model_cost=False`` leaves L(M) out of the total."""
    sel = np.flatnonzero(selected)
    l_cov, l_time, l_null = data_costs(cand, nodes, null_window_days)
    in_model = np.zeros(len(nodes), dtype=bool)
    in_model[cand.u[sel]] = True
    in_model[cand.v[sel]] = True
    deg = np.bincount(np.concatenate([cand.u[sel], cand.v[sel]]), minlength=len(nodes)).astype(float)
    sdl = float((deg[deg > 0] * np.log2(deg[deg > 0])).sum())
    const = _model_constant(kg, labels, cand)
    l_nodes = float(node_code_lengths(kg, labels, nodes)[in_model].sum())
    l_edges = _edges_cost(len(sel), sdl)
    parts = {
        "L(M) constants": const,
        "L(M) nodes": l_nodes,
        "L(M) edges": l_edges,
        "L_cov": float(l_cov[sel].sum()),
        "L_time": float(l_time[sel].sum()),
        "L_null": float(l_null.sum() - l_null[sel].sum()),
    }
    parts["L(M)"] = const + l_nodes + l_edges
    model = parts["L(M)"] if model_cost else 0.0
    parts["total"] = model + parts["L_cov"] + parts["L_time"] + parts["L_null"]
    return parts


def _model_constant(kg: TemporalKG, labels: EntityLabels, cand: CandidateEdges) -> float:
    """log2(A²|R|) + log2(2|W|): choosing nodes among atomic rules and edges among Hamming-1 pairs."""
    A, R = labels.n_labels, kg.n_relations
    return math.log2(A * A * R) + math.log2(max(1, 2 * cand.n_hamming1))


def mdl_select(
    kg: TemporalKG,
    labels: EntityLabels,
    nodes: RuleNodes,
    cand: CandidateEdges,
    null_window_days: float | None = None,
    model_cost: bool = True,
    edge_order: str = "gain",
    max_passes: int = 20,
) -> MDLResult:
    """Greedy MDL edge insertion (Alg. 1 lines 4–6, Eq. 7) with incremental ΔL.

    Candidates are examined in a fixed order — ``"gain"``: by their own data cost L_cov + L_time,
    most negative first; ``"pairs"``: by |T_uv|, largest first — and an edge is kept when
    ΔL = ΔL(M) + ΔL_cov + ΔL_time < 0.  ΔL(M) costs O(1): the node codes of endpoints new to M, and the
    change of Σ L(u→v) = 2|E| log2 2|E| − Σ deg log2 deg.  Passes repeat while any edge is added
    (an edge rejected early can pay off once its endpoints have higher degree).  ``model_cost=False``
    drops ΔL(M) (Eq. 7 read literally).  ``null_window_days`` (default: the KG's time range) is the
    window of the uniform code that prices spans no edge explains (see :func:`data_costs`); with a
    one-day window that code is free and no edge is kept.
    """
    if edge_order not in EDGE_ORDERS:
        raise ValueError(f"edge_order must be one of {EDGE_ORDERS}")
    window = float(null_window_days) if null_window_days else default_null_window(kg)
    l_cov, l_time, l_null = data_costs(cand, nodes, window)
    data = l_cov + l_time - l_null  # ΔL_data of adding the edge: its spans move from the null code to it
    node_len = node_code_lengths(kg, labels, nodes)
    # an edge whose own data cost is >= 0 can never pay for itself when ΔL(M) > 0; skip it up front
    viable = np.flatnonzero(data < 0)
    if edge_order == "gain":
        order = viable[np.lexsort((cand.v[viable], cand.u[viable], data[viable]))]
    else:
        order = viable[np.lexsort((cand.v[viable], cand.u[viable], -cand.n_spans[viable]))]
    selected = np.zeros(len(cand), dtype=bool)
    deg = np.zeros(len(nodes), dtype=np.int64)
    const = _model_constant(kg, labels, cand)
    total = (const if model_cost else 0.0) + float(l_null.sum())
    L_before = total
    n_edges, sdl = 0, 0.0
    trace, accepted = [], []
    u_arr, v_arr = cand.u.tolist(), cand.v.tolist()
    data_l, node_l = data.tolist(), node_len.tolist()
    log2 = math.log2

    def dl_term(d: int) -> float:
        return d * log2(d) if d > 1 else 0.0

    passes, examined = 0, 0
    remaining = order.tolist()
    while remaining and passes < max_passes:
        passes += 1
        rejected = []
        for e in remaining:
            examined += 1
            u, v = u_arr[e], v_arr[e]
            delta = data_l[e]
            if model_cost:
                du, dv = int(deg[u]), int(deg[v])
                new_sdl = sdl - dl_term(du) - dl_term(dv) + dl_term(du + 1) + dl_term(dv + 1)
                delta += _edges_cost(n_edges + 1, new_sdl) - _edges_cost(n_edges, sdl)
                if du == 0:
                    delta += node_l[u]
                if dv == 0:
                    delta += node_l[v]
            if delta < 0:
                selected[e] = True
                if model_cost:
                    sdl = new_sdl
                deg[u] += 1
                deg[v] += 1
                n_edges += 1
                total += delta
                trace.append(total)
                accepted.append(e)
            else:
                rejected.append(e)
        if len(rejected) == len(remaining):
            break
        remaining = rejected
    parts = description_length(kg, labels, nodes, cand, selected, window, model_cost)
    parts_before = description_length(kg, labels, nodes, cand, np.zeros_like(selected), window, model_cost)
    return MDLResult(
        selected=selected,
        order=order,
        L_before=L_before,
        L_after=parts["total"],
        parts_before=parts_before,
        parts_after=parts,
        passes=passes,
        examined=examined,
        trace=np.asarray(trace),
        accepted=np.asarray(accepted, dtype=np.int64),
        null_window_days=window,
        model_cost=model_cost,
    )


def default_null_window(kg: TemporalKG) -> float:
    """The KG's time range in days (MultiTQ: 4,016): a span no edge explains is coded uniformly in it."""
    return float(max(1, int(kg.t_start.max()) - int(kg.t_start.min())))


# ---------------------------------------------------------------------------------------------------
# the whole graph, cached


@dataclass(frozen=True)
class GraphParams:
    """Everything the rule graph depends on besides the KG (part of its cache key)."""

    min_support: float = 0.05
    k_type: int = 2
    max_length: int = 3
    order: str = "specific"
    temporal_pairs: str = "all"
    null_window_days: float | None = None
    model_cost: bool = True
    edge_order: str = "gain"

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class RuleGraph:
    """Labels, rule nodes, candidate edges and the MDL-selected rule graph, with build timings."""

    params: GraphParams
    labels: EntityLabels
    nodes: RuleNodes
    candidates: CandidateEdges
    mdl: MDLResult
    timings: dict = field(default_factory=dict)
    kg_name: str = ""
    slice_note: str = ""

    @property
    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        sel = self.mdl.selected
        return self.candidates.u[sel], self.candidates.v[sel]

    def edge_weights(self, weight: str = "rate") -> np.ndarray:
        """Weights of the selected edges for Ã: ``rate`` = λ_uv (1 / mean span in days, floored at
        one day: events that follow closely pull harder), ``uniform`` = 1, ``spans`` = |T_uv|."""
        sel = self.mdl.selected
        if weight == "uniform":
            return np.ones(int(sel.sum()))
        if weight == "spans":
            return self.candidates.n_spans[sel].astype(float)
        if weight == "rate":
            return 1.0 / np.maximum(self.candidates.mean_span[sel], 1.0)
        raise ValueError(f"unknown edge weight {weight!r}")

    def stats(self) -> dict:
        deg = np.bincount(np.concatenate(self.edges), minlength=len(self.nodes))
        return {
            **self.labels.summary(),
            "rule_nodes": len(self.nodes),
            "mean_support": float(self.nodes.sizes.mean()) if len(self.nodes) else 0.0,
            "hamming1_pairs": int(self.candidates.n_hamming1),
            "candidate_edges_with_spans": len(self.candidates),
            "selected_edges": self.mdl.n_selected,
            "nodes_with_edges": int((deg > 0).sum()),
            "max_degree": int(deg.max()) if len(deg) else 0,
            "L_before_bits": self.mdl.L_before,
            "L_after_bits": self.mdl.L_after,
            "null_window_days": self.mdl.null_window_days,
            "mdl_passes": self.mdl.passes,
            **{f"seconds_{k}": round(v, 2) for k, v in self.timings.items()},
        }


def build_rule_graph(kg: TemporalKG, params: GraphParams | None = None, progress: bool = False) -> RuleGraph:
    """Alg. 1 lines 1–6 end to end (no cache; see :func:`load_or_build`)."""
    params = params or GraphParams()
    timings = {}
    t0 = time.perf_counter()
    labels = label_entities(kg, params.min_support, params.k_type, params.max_length, params.order)
    timings["labels"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    nodes = rule_nodes(kg, labels)
    timings["nodes"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    cand = candidate_edges(kg, labels, nodes, params.temporal_pairs, progress=progress)
    timings["candidate_edges"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    mdl = mdl_select(kg, labels, nodes, cand, params.null_window_days, params.model_cost, params.edge_order)
    timings["mdl"] = time.perf_counter() - t1
    timings["total"] = time.perf_counter() - t0
    log.info(
        "rule graph: %d labels, %d nodes, %d candidate edges, %d selected in %.1fs",
        labels.n_labels,
        len(nodes),
        len(cand),
        mdl.n_selected,
        timings["total"],
    )
    return RuleGraph(params, labels, nodes, cand, mdl, timings, kg_name=kg.name)


def kg_fingerprint(kg: TemporalKG) -> str:
    from temporag.cache import content_hash

    return content_hash(kg.s, kg.r, kg.o, kg.t_start, kg.t_end, kg.n_entities, kg.n_relations)


def graph_cache_path(kg: TemporalKG, params: GraphParams | None = None):
    """Where the rule graph for this KG content and these parameters is cached."""
    from temporag.cache import cache_path, content_hash

    params = params or GraphParams()
    key = content_hash("star_rag_graph", GRAPH_VERSION, kg_fingerprint(kg), params.to_dict())
    return cache_path("star_rag", key, ".pkl")


def load_or_build(
    kg: TemporalKG, params: GraphParams | None = None, progress: bool = False, cache: bool = True
) -> RuleGraph:
    """The rule graph from the cache (keyed by the KG's content and the parameters), else built and saved
    atomically.  ``timings['loaded_from_cache']`` tells which happened."""
    from temporag.cache import load_pickle, save_pickle

    params = params or GraphParams()
    path = graph_cache_path(kg, params)
    if cache and path.exists():
        t0 = time.perf_counter()
        graph = load_pickle(path)
        graph.timings = {**graph.timings, "load": time.perf_counter() - t0, "loaded_from_cache": 1.0}
        return graph
    graph = build_rule_graph(kg, params, progress=progress)
    if cache:
        save_pickle(path, graph)
    graph.timings["loaded_from_cache"] = 0.0
    return graph
