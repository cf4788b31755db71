"""The whole rule graph (Alg. 1 lines 1–6): labels → rule nodes → candidate edges → MDL, cached.

:func:`load_or_build` keys the cache by the KG's content, the parameters and :data:`GRAPH_VERSION`, so a
changed construction never loads a stale graph.  The entry is a signed, data-only ``.npz``
(:func:`temporag.cache.save_tree`): loading it builds only the classes of :data:`GRAPH_TYPES`, never runs
code named by the file.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field

import numpy as np

from temporag.cache import building, cache_path, content_hash, load_tree, save_tree
from temporag.data.tkg import CSRIndex, TemporalKG
from temporag.methods import artifacts
from temporag.methods.star_rag.labels import EntityLabels, label_entities
from temporag.methods.star_rag.mdl import MDLResult, mdl_select
from temporag.methods.star_rag.nodes_spans import CandidateEdges, RuleNodes, candidate_edges, rule_nodes

log = logging.getLogger(__name__)

# bump when the construction or the stored classes change (part of the cache key);
# 5: the graph's classes moved into the temporag.methods.star_rag package (construction unchanged);
# the move from .pkl to .npz needed no bump: the suffix is part of the entry's name
GRAPH_VERSION = 5


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


# every class a cached rule graph is made of: all that loading one may build
GRAPH_TYPES = (RuleGraph, GraphParams, EntityLabels, RuleNodes, CSRIndex, CandidateEdges, MDLResult)


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
    return content_hash(kg.s, kg.r, kg.o, kg.t_start, kg.t_end, kg.n_entities, kg.n_relations)


def graph_cache_path(kg: TemporalKG, params: GraphParams | None = None):
    """Where the rule graph for this KG content and these parameters is cached."""
    params = params or GraphParams()
    key = content_hash("star_rag_graph", GRAPH_VERSION, kg_fingerprint(kg), params.to_dict())
    return cache_path("star_rag", key, ".npz")


def load_or_build(
    kg: TemporalKG, params: GraphParams | None = None, progress: bool = False, cache: bool = True
) -> RuleGraph:
    """The rule graph from the cache (keyed by the KG's content and the parameters), else built and saved
    atomically; an unreadable cache entry is rebuilt.  ``timings['loaded_from_cache']`` tells which
    happened.  Runs that need the same graph at once build it once: the others wait on its build lock,
    then load it."""

    params = params or GraphParams()
    path = graph_cache_path(kg, params)
    graph = None
    if cache and path.exists():  # an entry that is there is read without its build lock (read-only cache)
        graph = _load_cached(path)
    if graph is None:
        with building(path) if cache else contextlib.nullcontext():
            graph = _load_or_build(kg, params, path, progress, cache)
    if cache:  # what this run used, by content; a rebuild that differs from the first is said
        artifacts.note(
            "star_rag_graph",
            path.stem,
            graph_digest(graph),
            seed=None,  # nothing sampled: labels, nodes, edges and the MDL pass are fixed orders
            made=not graph.timings.get("loaded_from_cache"),
            cache_dir=path.parent.parent,
            what="STAR-RAG's rule graph",
        )
    return graph


def graph_digest(graph: RuleGraph) -> str:
    """sha256 of what the rule graph is (labels, nodes, candidate and selected edges), never of its
    timings: the same KG and parameters give the same digest, built or loaded."""
    labels, nodes, cand, mdl = graph.labels, graph.nodes, graph.candidates, graph.mdl
    return artifacts.digest(
        labels.offsets, labels.labels, [list(p) for p in labels.patterns],
        nodes.a_s, nodes.r, nodes.a_o,
        cand.u, cand.v, cand.n_spans, cand.span_sum, cand.kind,
        mdl.selected, mdl.accepted, round(float(mdl.L_after), 6),
    )  # fmt: skip


def _load_cached(path) -> RuleGraph | None:
    """The cached graph, or None when the entry is missing or unreadable (removed: it gets rebuilt)."""
    if not path.exists():
        return None
    t0 = time.perf_counter()
    try:
        graph = load_tree(path, GRAPH_TYPES)
    except OSError as exc:  # an unreadable cache entry costs a rebuild, not the run
        log.warning("rule-graph cache %s is unreadable (%s); rebuilding it", path, exc)
        return None
    if not isinstance(graph, RuleGraph):  # None: invalid, said and removed by load_tree
        return None
    graph.timings = {**graph.timings, "load": time.perf_counter() - t0, "loaded_from_cache": 1.0}
    return graph


def _load_or_build(kg: TemporalKG, params: GraphParams, path, progress: bool, cache: bool) -> RuleGraph:
    if cache:
        graph = _load_cached(path)
        if graph is not None:
            return graph
    graph = build_rule_graph(kg, params, progress=progress)
    if cache:
        save_tree(path, graph, GRAPH_TYPES)
    graph.timings["loaded_from_cache"] = 0.0
    return graph
