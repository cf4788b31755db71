"""Steps 2 and 3 of the rule graph — rule nodes (Eq. 1) and candidate edges with temporal spans (Eq. 2).

* :func:`rule_nodes` — every fact (s, r, o, t) is a member of ⟨c_s, r, c_o⟩ for each label pair of its
  entities; the members are the node's support set supp(u).
* :func:`candidate_edges` — rule-node pairs at Hamming distance 1 whose support sets hold events that
  overlap (share at least two of s, r, o; footnote 3), with |T_uv| and Σ T_uv of their spans.

Why the span construction is exact yet cheap.  A naive T_uv compares every event of u with every event
of v: billions of pairs on MultiTQ.  Two events "overlap" (d_H ≤ 2 with the timestamp counted as always
different, footnote 3) when they share two of (s, r, o), i.e. they are the same triple or two triples
that differ in one component.  So spans only arise inside a triple or between two triples sharing
(s, o), (s, r) or (r, o) — 5.6M triple pairs on MultiTQ.  For each such pair of triples the count is
n_i·n_j and the sum of |t − t'| comes from merging the two time-sorted lists with prefix sums; both are
then added to every Hamming-1 rule-node pair the two triples map to.  |T_uv| and Σ T_uv are all that
Eqs. 5–6 need, so no span is ever materialised.  (The tests check both steps against brute force.)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from temporag.data.tkg import CSRIndex, TemporalKG
from temporag.methods.star_rag.labels import EntityLabels
from temporag.progress import tqdm

TEMPORAL_PAIRS = ("all", "consecutive")


# ---------------------------------------------------------------------------------------------------
# rule nodes (Eq. 1)


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


# ---------------------------------------------------------------------------------------------------
# candidate edges with temporal spans (Eq. 2, T_uv)


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
