"""What an agent's SEARCH action runs: SAR's structure-aligned search and the two semantic stand-ins.

* :class:`StructuredSearch` — the paper's SEARCH: FILTER → decomposition → Eq. 1 → TOP-K → RE-ORDER.
* :class:`UndecomposedSearch` — Table 2's "w/o Decompose": the same FILTER, TOP-K and RE-ORDER, but the
  sub-query's own embedding against each fact's text instead of the (h, r, t) components.
* :class:`PlainSemanticSearch` — ReAct RAG's tool: the kit's semantic retriever over all facts with the
  sub-query as the query; its type and time are ignored (a plain RAG search has no temporal filter).

All three take the same (sub_query, type, time) and return a :class:`~.search.SearchResult`; the latency
they report excludes embedding the query and any LLM call, like every retrieval latency in the kit.
"""

from __future__ import annotations

import time
from functools import cached_property

import numpy as np

from temporag.linking import name_key
from temporag.methods.sar.decompose import LLMDecomposer, OfflineDecomposer, Triple
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


class Resources:
    """Everything SAR shares across questions, built lazily and once: name vectors (cached on disk by
    ``embed``), the time index, the offline parser, the template reader, the triple vectors."""

    def __init__(self, kg, encoder=None) -> None:
        self.kg = kg
        self._encoder = encoder
        self._text_vectors: dict[str, np.ndarray] = {}
        self._templates: dict[str, object] = {}

    @cached_property
    def encoder(self):
        from temporag.embed import Encoder

        return self._encoder or Encoder()

    @cached_property
    def name_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        from temporag.embed import kg_name_vectors

        return kg_name_vectors(self.kg, self.encoder)

    @property
    def entity_vectors(self) -> np.ndarray:
        return self.name_vectors[0]

    @property
    def relation_vectors(self) -> np.ndarray:
        return self.name_vectors[1]

    @cached_property
    def triple_vectors(self) -> np.ndarray:
        """Vectors of the KG's distinct 's r o' texts (loaded once, shared with the semantic retriever)."""
        return self.semantic.triple_vectors

    @cached_property
    def index(self) -> TimeIndex:
        return TimeIndex(self.kg)

    @cached_property
    def parser(self):
        from temporag.methods.tecqa import OfflineParser

        return OfflineParser(self.kg, self.encoder, self.entity_vectors, self.relation_vectors)

    def templates(self, questions) -> list:
        """The template of each question (:func:`temporag.template_reader.analyse` of the offline parse),
        parsed in one batch and memoised: the offline policy, the rule-based verifier and the LLM-free
        scoring of every method's context share them."""
        from temporag.template_reader import analyse_many

        todo = [q for q in dict.fromkeys(questions) if q not in self._templates]
        if todo:
            self._templates.update(zip(todo, analyse_many(todo, self.parser.parse_many(todo))))
        return [self._templates[q] for q in questions]

    def read_contexts(self, questions, contexts) -> list:
        """The template reader's reading of each question's context (fact ids): an LLM-free answer."""
        templates = self.templates([q.question for q in questions])
        return self.reader.read_many(templates, [np.asarray(c, dtype=np.int64) for c in contexts])

    @cached_property
    def reader(self):
        from temporag.template_reader import TemplateReader

        return TemplateReader(self.kg)

    @cached_property
    def semantic(self):
        """The kit's semantic retriever (Naive RAG, ReAct RAG's search); it loads the triple vectors."""
        from temporag.methods.semantic import SemanticRetriever

        return SemanticRetriever(self.kg, self.encoder)

    @cached_property
    def relation_ids(self) -> dict[tuple[str, ...], int]:
        return {name_key(label): i for i, label in enumerate(self.kg.relation_labels)}

    def embed(self, text: str) -> np.ndarray:
        """A short text's vector, memoised (sub-queries and their parts repeat across questions)."""
        vec = self._text_vectors.get(text)
        if vec is None:
            vec = self.encoder.encode([text], progress=False)[0]
            self._text_vectors[text] = vec
        return vec

    def part_vector(self, text: str | None, kind: str) -> np.ndarray | None:
        """The vector a query part is compared with names by: a KG name (any form the linker knows) gives
        that name's own vector, anything else is embedded; an unnamed part gives None."""
        if is_unknown(text):
            return None
        if kind == "entity":
            eid = self.parser.linker.aliases.get(name_key(text))
            if eid is not None:
                return self.entity_vectors[eid]
        else:
            rid = self.relation_ids.get(name_key(text))
            if rid is not None:
                return self.relation_vectors[rid]
        return self.embed(text)

    def decomposer(self, kind: str, llm=None):
        """ "offline" (the linker) or "llm" (P_decomp, offline fallback)."""
        offline = OfflineDecomposer(self.parser.linker)
        if kind == "offline":
            return offline
        if kind == "llm":
            if llm is None:
                raise ValueError("decompose='llm' needs an llm")
            return LLMDecomposer(llm, offline)
        raise ValueError(f"decompose must be 'llm' or 'offline', got {kind!r}")


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

    def __init__(self, resources: Resources, decomposer, k: int = DEFAULT_K, symmetric: bool = False):
        self.res = resources
        self.decomposer = decomposer
        self.k = k
        self.symmetric = symmetric

    def vectors(self, triple: Triple):
        res = self.res
        return (
            res.part_vector(triple.head, "entity"),
            res.part_vector(triple.relation, "relation"),
            res.part_vector(triple.tail, "entity"),
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
        res = self.res
        _ = res.index  # built before timing
        t0 = time.perf_counter()
        facts, scores, filtered = structured_search(
            res.index,
            res.entity_vectors,
            res.relation_vectors,
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

    def __init__(self, resources: Resources, k: int = DEFAULT_K):
        self.res = resources
        self.k = k

    def __call__(self, sub_query: str, kind: str = "ANYTIME", time_text: str | None = None) -> SearchResult:
        kind, period, note = _period(kind, time_text)
        res = self.res
        query = res.embed(sub_query)
        _ = res.index, res.triple_vectors
        order = wants_order(sub_query, kind)
        t0 = time.perf_counter()
        facts, scores, filtered = semantic_filtered_search(
            res.index,
            res.kg,
            res.triple_vectors,
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

    def __init__(self, resources: Resources, k: int = DEFAULT_K):
        self.res = resources
        self.k = k

    def __call__(self, sub_query: str, kind: str = "ANYTIME", time_text: str | None = None) -> SearchResult:
        from temporag.methods.semantic import top_k_stable

        res = self.res
        query = res.embed(sub_query)
        retriever = res.semantic
        t0 = time.perf_counter()
        scores = retriever.fact_scores(query, sub_query)
        top = top_k_stable(scores, self.k)
        latency = time.perf_counter() - t0
        return SearchResult(
            top.astype(np.int64), scores[top], latency, (None, None, None), "none", len(scores)
        )
