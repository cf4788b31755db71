"""STAR-RAG (Zhu, Liu, He, Luo: "Right answer at the right time: temporal retrieval-augmented generation
via graph summarization"), step by step in the order of §3 and Alg. 1.

Offline — the rule graph (Alg. 1 lines 1–6), cached by :func:`load_or_build`:

==========================================  =====================================================
paper                                       kit
==========================================  =====================================================
§3.2, Alg. 2 line 1: relation set per       :func:`labels.relation_sets`
entity
Alg. 2 line 2: frequent relation subsets    :func:`labels.frequent_relation_subsets`
(Apriori, ≤ 3 relations, footnote 2)
Alg. 2 lines 3–9: TypeIDs, first K_type     :func:`labels.label_entities` → :class:`EntityLabels`
labels, fallback label
Eq. 1: rule nodes ⟨c_s, r, c_o⟩, supp(u)    :func:`nodes_spans.rule_nodes` → :class:`RuleNodes`
Eq. 2 + footnote 3: Hamming-1 pairs and     :func:`nodes_spans.candidate_edges` → :class:`CandidateEdges`
temporal spans T_uv
Appendix B: L(M), node and edge codes       :func:`mdl.node_code_lengths`, :func:`mdl.description_length`
Eqs. 5–6: L_cov, L_time (+ the kit's L_null) :func:`mdl.data_costs`
Eq. 7, Alg. 1 lines 4–6: greedy MDL         :func:`mdl.mdl_select` → :class:`MDLResult`
Alg. 1 lines 1–6 end to end                 :func:`graph.build_rule_graph` / :func:`load_or_build`
==========================================  =====================================================

Online — retrieval (§3.3, Alg. 1 lines 7–16) and reading (Appendix E), in :class:`StarRAG`:

==========================================  =====================================================
Alg. 1 line 8: top-K1 anchor events         :meth:`StarRAG.anchors` (the semantic baseline's cosine)
Alg. 1 line 9, Appendix C: seeds and γ      :func:`retrieval.seed_personalisation`
(θ = 0.6, β = 0.7, τ = 1/|U_seed|)
Alg. 1 lines 10–13: PPR, restart α = 0.2    :meth:`StarRAG.propagate` (:mod:`temporag.methods.star_rag.ppr`)
Alg. 1 line 14: top-K2 rule nodes by π      :meth:`StarRAG.top_rules`
Alg. 1 line 15: union of their supports     :meth:`StarRAG.candidates`
Alg. 1 line 16: re-rank, return top-K1      :meth:`StarRAG.rerank`; all questions: :meth:`StarRAG.retrieve`
Appendix E: reader prompt and answers       :mod:`reader` through :func:`temporag.answer.readers.read_many`
§4.5, Table 4: no-rule / uniform ablations  :meth:`StarRAG.variant` (``use_rules``, ``personalisation``)
§4.6, Fig. 5: K1 × K2 sensitivity           :meth:`StarRAG.sweep`
==========================================  =====================================================

Choices the paper leaves open (each an argument, shown in the notebook): how Apriori's subsets are
sorted (``order="specific"``: longest first, then by support), ``min_support`` (5%) and ``K_type`` (2),
what spans no edge explains cost (``null_window_days``: a uniform code over the KG's period), the edge
weights of the PPR (``edge_weight="rate"``: 1 / mean span), and the reader's wording.

The released code said to be the authors' retrieves differently around the PPR: :mod:`released`
(:class:`ReleasedCodeRAG`, one switch per step) re-implements it from our reading, and
:mod:`code_tables` holds the paper-vs-code table (file:line evidence) and the table that takes it apart.
Its consecutive-event spans are ``GraphParams(temporal_pairs="consecutive")``.

Tables and figures live in :mod:`temporag.methods.star_rag.report`, the numbers behind them in
:mod:`temporag.methods.star_rag.experiments`, what a run keeps in :mod:`temporag.methods.star_rag.record`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from temporag.data import cronquestions, forecast
from temporag.data.errors import MissingDataError
from temporag.data.multitq import Question
from temporag.methods.base import Method, QuestionRecord, Retrieval, check_shared
from temporag.methods.semantic import SemanticRetriever
from temporag.methods.star_rag.graph import (
    GRAPH_VERSION,
    GraphParams,
    RuleGraph,
    build_rule_graph,
    graph_cache_path,
    kg_fingerprint,
    load_or_build,
)
from temporag.methods.star_rag.labels import (
    EntityLabels,
    frequent_relation_subsets,
    label_entities,
    relation_sets,
)
from temporag.methods.star_rag.mdl import (
    MDLResult,
    data_costs,
    default_null_window,
    description_length,
    mdl_select,
    node_code_lengths,
)
from temporag.methods.star_rag.nodes_spans import (
    CandidateEdges,
    RuleNodes,
    candidate_edges,
    count_hamming1_pairs,
    rule_nodes,
)
from temporag.methods.star_rag.reader import (
    READER_STYLES,
    StarReader,
    build_star_prompt,
    clean_answers,
    clean_candidate,
    prompt_tokens,
    read_events,
    reader_budget,
    style_flags,
)
from temporag.methods.star_rag.released import ReleasedCodeRAG
from temporag.methods.star_rag.retrieval import (
    ALPHA,
    BETA,
    K1,
    K2,
    PERSONALISATIONS,
    THETA,
    TOL,
    QueryScores,
    RuleGraphSearch,
    StarTrace,
    seed_personalisation,
)
from temporag.retrieval.embed import Encoder

__all__ = [
    "ALPHA",
    "BETA",
    "GRAPH_VERSION",
    "K1",
    "K2",
    "PERSONALISATIONS",
    "READER_STYLES",
    "THETA",
    "TOL",
    "CandidateEdges",
    "EntityLabels",
    "GraphParams",
    "MDLResult",
    "QueryScores",
    "RuleGraph",
    "RuleGraphSearch",
    "ReleasedCodeRAG",
    "RuleNodes",
    "StarRAG",
    "StarTrace",
    "build",
    "build_rule_graph",
    "build_star_prompt",
    "candidate_edges",
    "clean_answers",
    "clean_candidate",
    "count_hamming1_pairs",
    "data_costs",
    "default_null_window",
    "description_length",
    "frequent_relation_subsets",
    "graph_cache_path",
    "kg_fingerprint",
    "label_entities",
    "load_or_build",
    "mdl_select",
    "node_code_lengths",
    "prompt_tokens",
    "read_events",
    "reader_budget",
    "relation_sets",
    "rule_nodes",
    "seed_personalisation",
    "style_flags",
    "table2_inputs",
]


@dataclass
class StarRAG(RuleGraphSearch, StarReader, Method):
    """STAR-RAG behind the kit's retrieval interface: ``retrieve`` → :class:`Retrieval` (top-K1 events,
    latency, JSON-ready traces), ``pipeline`` → :class:`QuestionRecord` rows through the one reader.

    The ablations are settings of this one class (:meth:`variant`, :meth:`ablations`):
    ``use_rules=False`` is STAR-RAG-no-rule (the anchors themselves, i.e. semantic search),
    ``personalisation="uniform"`` is STAR-RAG-uniform.  ``reader_style`` picks the reader prompt
    ("plain", or "appendix-e": Appendix E's one-shot demonstration and Thought)."""

    use_rules: bool = True
    reader_style: str = "plain"

    evidence = "kg_fact"

    def __post_init__(self) -> None:
        style_flags(self.reader_style)  # a clear error for an unknown style, before any work
        super().__post_init__()

    @property
    def name(self) -> str:
        if not self.use_rules:
            return "STAR-RAG-no-rule"
        return "STAR-RAG-uniform" if self.personalisation == "uniform" else "STAR-RAG"

    def variant(self, **changes) -> StarRAG:
        """The same graph and encoder with other settings (ablations, readings of the released code).
        The PPR transition matrix is rebuilt only when the graph or the edge weights change."""
        settings = [f.name for f in fields(self) if f.init]
        unknown = sorted(set(changes) - set(settings))
        if unknown:
            raise TypeError(f"unknown STAR-RAG setting(s) {unknown}; the settings are {settings}")
        if "graph" in changes or changes.get("edge_weight", self.edge_weight) != self.edge_weight:
            return type(self)(**{**{k: getattr(self, k) for k in settings}, **changes})
        if changes.get("personalisation", self.personalisation) not in PERSONALISATIONS:
            raise ValueError(f"personalisation must be one of {PERSONALISATIONS}")
        style_flags(changes.get("reader_style", self.reader_style))
        clone = copy.copy(self)
        clone.__dict__.update(changes)
        clone._mark = np.zeros(len(self.kg), dtype=bool)  # scratch space is never shared
        return clone

    def ablations(self) -> dict[str, StarRAG]:
        """Table 4's rows: the full method, without the rule graph, with a uniform γ."""
        return {
            "STAR-RAG": self,
            "STAR-RAG-no-rule": self.variant(use_rules=False),
            "STAR-RAG-uniform": self.variant(personalisation="uniform"),
        }

    @property
    def default_k(self) -> int:
        """K1: the events a question's context holds when ``retrieve`` is given no k."""
        return self.k1

    def retrieve(
        self,
        questions: Sequence,
        k: int | None = None,
        *,
        progress: bool = True,
        k2: int | None = None,
        q_vecs: np.ndarray | None = None,
        **shared,
    ) -> Retrieval:
        """The top-``k`` (K1) events per question, per-question latency (embedding excluded) and
        JSON-ready traces (:meth:`StarTrace.to_record`; no-rule: the events and the time).
        ``questions`` are records with ``.question`` (or plain strings); ``q_vecs`` reuses question
        vectors across variants."""
        check_shared(shared)
        texts = [getattr(q, "question", q) for q in questions]
        if q_vecs is None:
            q_vecs = self.semantic.embed_questions(texts)
        k1 = k or self.k1
        if not self.use_rules:
            ranked, latency = self.anchors_only(texts, q_vecs, k1, progress)
            traces = [{"facts": r.tolist(), "retrieval_s": float(s)} for r, s in zip(ranked, latency)]
            return Retrieval(ranked, latency, traces, evidence=self.evidence)
        setting = (k1, k2 or self.k2)
        runs = self.run(texts, q_vecs, [setting], progress)[setting]
        return Retrieval(
            [t.facts for t in runs], [t.seconds for t in runs], [t.to_record() for t in runs], self.evidence
        )

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        """Events as the reader sees them: 'subject relation object on date'."""
        return self.kg.verbalise_many(np.asarray(ids, dtype=np.int64))

    def pipeline(
        self, questions: Sequence, llm=None, *, k: int | None = None, top_k: int = 10, progress: bool = True
    ) -> list[QuestionRecord]:
        """The inherited pipeline with K1 (this retriever's) as the default number of events."""
        return super().pipeline(questions, llm, k=k or self.k1, top_k=top_k, progress=progress)


def build(
    kg,
    params: GraphParams | None = None,
    *,
    graph: RuleGraph | None = None,
    semantic: SemanticRetriever | None = None,
    progress: bool = False,
    **settings,
) -> StarRAG:
    """STAR-RAG on the rule graph ``graph`` (default: built or loaded from the cache with ``params``) and
    the semantic baseline's vectors; ``settings`` are :class:`StarRAG`'s (k1, k2, reader_style, ...)."""
    graph = graph or load_or_build(kg, params, progress=progress)
    semantic = semantic or SemanticRetriever(kg, Encoder())
    return StarRAG(kg, graph, semantic, **settings)


def table2_inputs(dataset: str, data_dir=None) -> tuple[object, list]:
    """(kg, questions as MultiTQ ``Question`` records) for Table 2's CronQuestions / Forecast columns, or
    raise ``MissingDataError`` naming what is absent (ForecastTKGQuestions has no questions staged)."""
    if dataset == "CronQuestions":
        kg = cronquestions.load_kg(data_dir=data_dir)
        raw = cronquestions.load_complex_questions("valid", data_dir=data_dir)
        qs = []
        for q in raw:
            if q.answer_type == "entity":
                answers = tuple(kg.entity_labels[kg.entity_id[a]] for a in q.answers if a in kg.entity_id)
            else:
                answers = tuple(str(a) for a in q.answers)
            qs.append(Question(q.uniq_id, q.text, answers, q.answer_type, "year", q.type, "Multiple"))
        return kg, qs
    if dataset == "Forecast":
        forecast.load_mappings(data_dir)  # the KG side is staged (raises if not)
        raise MissingDataError(
            "forecasttkgquestions/questions (ForecastTKGQuestions QA pairs: none are staged, only the "
            "ICEWS21 KG, and the kit has no question loader for them)",
            "forecasttkgquestions",
        )
    raise KeyError(f"unknown Table 2 data set {dataset!r}")
