"""Step 4 of the rule graph — selecting edges by minimum description length (Eqs. 3–7, Appendix B).

Greedy insertion in a fixed order while the total description length L(G, M) drops, with an O(1)
incremental ΔL per candidate (Alg. 1 lines 4–6).  Spans that no selected edge explains are priced by a
uniform code over the KG's period (L_null), so every part of L(G, M) is a non-negative bit count and an
edge pays off by compressing its spans below that code — the choice the paper leaves open (Eqs. 5–6 only
ever add bits, so read literally no edge could lower L).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from temporag.data.tkg import TemporalKG
from temporag.methods.star_rag.labels import EntityLabels
from temporag.methods.star_rag.nodes_spans import CandidateEdges, RuleNodes

LOG2E = math.log2(math.e)
EDGE_ORDERS = ("gain", "pairs")


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
