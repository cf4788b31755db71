"""What an agent's SEARCH action runs: SAR's structure-aligned search and the two semantic stand-ins.

* :class:`StructuredSearch` — the paper's SEARCH: FILTER → decomposition → Eq. 1 → TOP-K → RE-ORDER.
* :class:`UndecomposedSearch` — Table 2's "w/o Decompose": the same FILTER, TOP-K and RE-ORDER, but the
  sub-query's own embedding against each fact's text instead of the (h, r, t) components.
* :class:`PlainSemanticSearch` — ReAct RAG's tool: the kit's semantic retriever over all facts with the
  sub-query as the query; its type and time are ignored (a plain RAG search has no temporal filter).

All three take the same (sub_query, type, time) and return a :class:`~.search.SearchResult`; the latency
they report excludes embedding the query and any LLM call, like every retrieval latency in the kit.  They
read the KG's vectors from the kit's :class:`~temporag.methods.workspace.KGWorkspace`.
"""

from __future__ import annotations

import time

import numpy as np

from temporag.methods.sar.decompose import Triple
from temporag.methods.sar.search import (
    DEFAULT_K,
    SearchResult,
    TimeIndex,
    is_unknown,
    latest_first,
    parse_filter_time,
    semantic_filtered_search,
    structured_search,
    wants_order,
)
from temporag.methods.workspace import KGWorkspace
from temporag.retrieval.topk import top_k_stable


def _period(kind: str, time_text: str | None):
    """(type, period, note): an unknown type or an unparsable time makes the search ANYTIME."""
    kind = (kind or "ANYTIME").upper()
    if kind == "ANYTIME":
        return kind, None, ""
    period = parse_filter_time(time_text)
    if period is None:
        return "ANYTIME", None, f"time {time_text!r} is not a date; searched ANYTIME"
    return kind, period, ""


class StructuredSearch:
    """The paper's SEARCH over the whole KG (lines 24–34)."""

    name = "SEARCH (structure-aligned, Eq. 1)"

    def __init__(
        self,
        workspace: KGWorkspace,
        index: TimeIndex,
        decomposer,
        k: int = DEFAULT_K,
        symmetric: bool = False,
    ):
        self.workspace = workspace
        self.index = index
        self.decomposer = decomposer
        self.k = k
        self.symmetric = symmetric

    def part_vector(self, text: str | None, kind: str) -> np.ndarray | None:
        """The vector a query part is compared with names by (:meth:`KGWorkspace.name_vector`); a part
        that names nothing ('?', 'who') gives None."""
        return None if is_unknown(text) else self.workspace.name_vector(text, kind)

    def vectors(self, triple: Triple):
        return (
            self.part_vector(triple.head, "entity"),
            self.part_vector(triple.relation, "relation"),
            self.part_vector(triple.tail, "entity"),
        )

    def __call__(self, sub_query: str, kind: str = "ANYTIME", time_text: str | None = None) -> SearchResult:
        kind, period, note = _period(kind, time_text)
        triple, responses = self.decomposer(sub_query)
        head, rel, tail = self.vectors(triple)
        wording = f"{triple.hint} {sub_query}"
        if head is None and rel is None and tail is None:
            note = (note + "; " if note else "") + "the sub-query names no entity or relation"
            return SearchResult(
                np.empty(0, np.int64),
                np.empty(0, np.float32),
                0.0,
                triple.parts(),
                triple.source,
                note=note,
                responses=responses,
            )
        order = wants_order(wording, kind)
        workspace = self.workspace
        t0 = time.perf_counter()
        facts, scores, filtered = structured_search(
            self.index,
            workspace.entity_vectors,
            workspace.relation_vectors,
            head,
            rel,
            tail,
            kind,
            period,
            self.k,
            order=order,
            latest=latest_first(wording, kind),
            symmetric=self.symmetric,
        )
        latency = time.perf_counter() - t0
        return SearchResult(
            facts, scores, latency, triple.parts(), triple.source, filtered, order, note, responses
        )


class UndecomposedSearch:
    """SEARCH without decomposition: FILTER, the sub-query's embedding against the facts' texts, TOP-K,
    RE-ORDER (Table 2, w/o Decompose)."""

    name = "SEARCH without decomposition (sub-query vs fact text)"

    def __init__(self, workspace: KGWorkspace, index: TimeIndex, k: int = DEFAULT_K):
        self.workspace = workspace
        self.index = index
        self.k = k

    def __call__(self, sub_query: str, kind: str = "ANYTIME", time_text: str | None = None) -> SearchResult:
        kind, period, note = _period(kind, time_text)
        workspace = self.workspace
        query = workspace.embed(sub_query)
        _ = workspace.triple_vectors  # loaded before timing
        order = wants_order(sub_query, kind)
        t0 = time.perf_counter()
        facts, scores, filtered = semantic_filtered_search(
            self.index,
            workspace.kg,
            workspace.triple_vectors,
            query,
            kind,
            period,
            self.k,
            order=order,
            latest=latest_first(sub_query, kind),
        )
        latency = time.perf_counter() - t0
        return SearchResult(facts, scores, latency, (None, None, None), "none", filtered, order, note)


class PlainSemanticSearch:
    """ReAct RAG's search: the kit's semantic retriever (cosine over every fact's text, a small bonus for
    dates the query names); type and time are not used."""

    name = "plain semantic search (no temporal filter, no decomposition)"

    def __init__(self, workspace: KGWorkspace, k: int = DEFAULT_K):
        self.workspace = workspace
        self.k = k

    def __call__(self, sub_query: str, kind: str = "ANYTIME", time_text: str | None = None) -> SearchResult:
        query = self.workspace.embed(sub_query)
        retriever = self.workspace.semantic
        t0 = time.perf_counter()
        scores = retriever.fact_scores(query, sub_query)
        top = top_k_stable(scores, self.k)
        latency = time.perf_counter() - t0
        return SearchResult(
            top.astype(np.int64), scores[top], latency, (None, None, None), "none", len(scores)
        )
