"""TECQA (Liu et al.): temporal evidence chains for TKGQA — one step function per part of §4.

The method in the order of the paper (and of ``notebooks/tecqa.ipynb``):

=================  =====================================================================================
§4.2.1, Eqs. 1–2   structural constraints: :class:`~temporag.question.parsing.Constraints` from the kit's
                   :class:`~temporag.question.parsing.OfflineParser` (no LLM;
                   :mod:`temporag.question.parsing`) or
                   :class:`~.parser.LLMParser` (the paper's three prompts, appendix F.1's structure);
                   both ground mentions to the KG by name-embedding cosine (Eq. 2) — :func:`make_parser`
§4.2.2, Eqs. 3–5   structure-guided subgraph F_main ∪ F_context → :func:`temporag.question.parsing.subgraph`
§4.3, Eq. 6        explicit anchors (:func:`~.chain.explicit_anchors`: regex + ISO with granularity) and
                   implicit anchors = dates of the top-N most similar subgraph facts
                   (:func:`~.chain.implicit_anchors`)
§4.3, Eqs. 7–8     k-nearest temporal neighbours of every anchor → :func:`~.chain.knn_temporal`
§4.3, Eq. 9        proximity serialisation → :func:`~.chain.serialise`
§4.4               reasoning: the kit's one reader over :func:`reader_lines` with :data:`READER_RULES`
                   (:meth:`TECQA.read`, inherited from :class:`~temporag.methods.base.Method`)
=================  =====================================================================================

:class:`TECQA` runs §4.2.2–4.3 for many questions with per-question latency (:meth:`TECQA.chains`) and
implements the kit's retrieval interface: :meth:`TECQA.retrieve` parses, embeds and returns each chain
as ranked fact ids with a trace (parse, anchors, subgraph size); ``pipeline`` adds the reader.  The
ablations of Table 2 are arguments of :meth:`TECQA.chain` (``prune="semantic"`` for w/o KNTN,
``order="random"`` for w/o PS, ``pool=`` global semantic top-K for w/o SG).

Choices the paper leaves open: the offline parser (the paper only has the LLM one); the relation
grounding restricted to relations the KG attests for the main entity (``relation_prior="kg"``); ties
in the K-nearest selection (earlier fact, then lower id) and in serialisation (more similar first).
Tables and figures: :mod:`temporag.methods.tecqa.report`; the numbers behind them
:mod:`temporag.methods.tecqa.experiments`; what a run keeps :mod:`temporag.methods.tecqa.record`.

Beyond the paper, without an LLM (every switch off by default, so the paper-faithful variant is unchanged):
the offline parser's :data:`IMPROVED_PARSER` switches (date words, role scheme, relation union, main entity
alternatives) and the
question-guided chain ``chain="guided"`` (:mod:`.guided`); :mod:`.beyond` compares the variants.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from temporag.methods.base import Method, Retrieval, check_shared, question_texts
from temporag.methods.tecqa.chain import (
    EvidenceChain,
    explicit_anchors,
    fact_days,
    fact_similarity,
    implicit_anchors,
    knn_temporal,
    proximity,
    serialise,
    temporal_distance,
)
from temporag.methods.tecqa.guided import guided_chain, question_focus
from temporag.methods.tecqa.params import PARAMETERS
from temporag.methods.tecqa.parser import PARSERS, LLMParser, make_parser
from temporag.progress import tqdm
from temporag.question.parsing import (
    IMPROVED_PARSER,
    Constraints,
    OfflineParser,
    make_offline_parser,
    subgraph,
    subgraph_parts,
)
from temporag.retrieval.embed import Encoder, kg_triple_vectors
from temporag.retrieval.topk import top_k_stable

log = logging.getLogger(__name__)

DEFAULT_K = 40  # temporal neighbours per anchor (§5.1, MultiTQ and CronQuestions)
DEFAULT_N = 2  # implicit anchors (§5.1, MultiTQ; 5 for CronQuestions)
READER_TOP_K = 5  # answers the reader ranks
CHAINS = ("paper", "guided")  # §4.3 as printed | the kit's LLM-free question-guided chain (.guided)
GUIDED_MAX_FACTS = 20  # the guided chain's budget: the paper's ~20 facts in context

__all__ = [
    "CHAINS",
    "DEFAULT_K",
    "GUIDED_MAX_FACTS",
    "IMPROVED_PARSER",
    "DEFAULT_N",
    "PARSERS",
    "READER_RULES",
    "TECQA",
    "Constraints",
    "EvidenceChain",
    "LLMParser",
    "OfflineParser",
    "as_retrieval",
    "explicit_anchors",
    "fact_days",
    "fact_similarity",
    "guided_chain",
    "question_focus",
    "implicit_anchors",
    "knn_temporal",
    "make_offline_parser",
    "make_parser",
    "proximity",
    "reader_lines",
    "serialise",
    "subgraph",
    "subgraph_parts",
    "temporal_distance",
]

# §4.4 reasoning: the paper's rules for the reader, in the kit's words
READER_RULES = (
    "Answer only from the facts above; each is [subject, relation, object, date] and they are ordered "
    "by closeness in time to the question's reference date. Apply the question's time constraint first "
    "(before / after / in / same month as); for 'first' pick the earliest remaining fact, for 'last' the "
    "latest. For an entity answer give the subject or object the question asks for; for a time answer "
    "write the date at the granularity the question asks (YYYY, YYYY-MM or YYYY-MM-DD). Remove duplicates."
)


def reader_lines(kg, facts: Sequence[int]) -> list[str]:
    """Facts as '[subject, relation, object, date]' lines, the form of the paper's reasoning prompt."""
    return [f"[{s}, {r}, {o}, {d}]" for s, r, o, d in kg.as_quadruples(facts)]


def as_retrieval(kg, chains: Sequence[EvidenceChain], latency: np.ndarray, k: int | None = None) -> Retrieval:
    """Chains as the kit's :class:`Retrieval`: each chain's (first ``k``) fact ids, in serialised order,
    with the chain's trace."""
    return Retrieval(
        [c.facts[:k] if k else c.facts for c in chains], latency, traces=[c.trace(kg) for c in chains]
    )


class TECQA(Method):
    """§4.2–4.3 for many questions: parse, subgraph, anchors, pruning, serialisation, with latency.

    ``triple_vectors`` are the normalised vectors of the KG's distinct triple texts
    (``embed.kg_triple_vectors``); they are loaded from the cache on first use unless given.  ``parser``
    is "offline" or "llm" (the latter reads with ``llm``, or with the LLM given to ``pipeline``).
    """

    name = "TECQA"
    evidence = "kg_fact"
    reader_instructions = READER_RULES

    def __init__(
        self,
        kg,
        encoder=None,
        triple_vectors: np.ndarray | None = None,
        *,
        parser: str = "offline",
        llm=None,
        k: int = DEFAULT_K,
        n: int = DEFAULT_N,
        chain: str = "paper",
    ) -> None:
        PARAMETERS.check(parser=parser, K=k, N=n)
        if chain not in ("paper", "guided"):
            raise ValueError(f"chain must be 'paper' or 'guided', got {chain!r}")
        self.chain_name = chain
        self.kg = kg
        self._encoder = encoder
        self._triple_vectors = triple_vectors
        self.parser_name = parser
        self.llm = llm
        self.k, self.n = k, n

    @cached_property
    def encoder(self):
        return self._encoder or Encoder()

    @cached_property
    def triple_vectors(self) -> np.ndarray:
        if self._triple_vectors is not None:
            return self._triple_vectors
        return kg_triple_vectors(self.kg, self.encoder)

    @cached_property
    def offline_parser(self) -> OfflineParser:
        """The offline parser (also the LLM parser's grounding tables and the shared anchor definition)."""
        return make_offline_parser(self.kg, self.encoder)

    def embed_questions(self, questions: Sequence[str]) -> np.ndarray:
        return self.encoder.encode(list(questions))

    # -- §4.2.1 ----------------------------------------------------------------------------------------
    def parse(self, questions: Sequence, progress: bool = True) -> list[Constraints]:
        """Structural constraints of every question with the parser this model was made with."""
        texts = question_texts(questions)
        if self.parser_name == "offline":
            return self.offline_parser.parse_many(texts)
        parser = make_parser(self.kg, "llm", llm=self.llm, offline=self.offline_parser)
        return parser.parse_many(texts, progress=progress)

    # -- §4.2.2–4.3 ------------------------------------------------------------------------------------
    def chain(
        self,
        constraints: Constraints,
        q_vec: np.ndarray,
        k: int = DEFAULT_K,
        n: int = DEFAULT_N,
        *,
        pool: np.ndarray | None = None,
        prune: str = "temporal",
        order: str = "proximity",
        rng: np.random.Generator | None = None,
        chain: str = "paper",
        max_facts: int = GUIDED_MAX_FACTS,
    ) -> EvidenceChain:
        """One question's evidence chain.

        ``pool`` replaces the structure-guided subgraph (w/o SG: global semantic top-K); ``prune``
        is "temporal" (KNTN, Eqs. 7–8) or "semantic" (top-K by similarity: w/o KNTN); ``order`` is
        "proximity" (Eq. 9) or "random" (w/o PS, shuffled with ``rng``).  ``chain="guided"`` replaces
        §4.3 by the kit's LLM-free question-guided chain (:mod:`.guided`; ``k`` is unused, ``n`` is the
        implicit-anchor fallback, at most ``max_facts`` facts); ``"paper"`` (default) is §4.3 as printed.
        """
        if chain not in CHAINS:
            raise ValueError(f"chain must be one of {CHAINS}, got {chain!r}")
        kg = self.kg
        facts = subgraph(kg, constraints) if pool is None else np.asarray(pool, dtype=np.int32)
        sims = fact_similarity(kg, self.triple_vectors, q_vec, facts)
        explicit = explicit_anchors(constraints.question)
        if chain == "guided":
            ordered, delta, anchors, _source = guided_chain(
                kg, constraints, facts, fact_days(kg, facts), sims, explicit, n, max_facts
            )
            implicit = [a for a in anchors if a not in explicit]
            return EvidenceChain(
                constraints.question,
                constraints,
                facts,
                explicit,
                implicit,
                ordered[:1],
                ordered,
                delta,
                "guided",
            )
        implicit, anchor_facts = implicit_anchors(kg, facts, sims, n)
        anchors = list(dict.fromkeys([*explicit, *implicit]))
        if prune == "temporal":
            kept = knn_temporal(kg, facts, anchors, k)
        elif prune == "semantic":
            kept = np.sort(facts[top_k_stable(sims, k)])
        else:
            raise ValueError(f"prune must be 'temporal' or 'semantic', got {prune!r}")
        ordered, delta = serialise(kg, kept, anchors, fact_similarity(kg, self.triple_vectors, q_vec, kept))
        if order == "random":
            perm = (rng or np.random.default_rng(0)).permutation(len(ordered))
            ordered, delta = ordered[perm], delta[perm]
        elif order != "proximity":
            raise ValueError(f"order must be 'proximity' or 'random', got {order!r}")
        variant = "tecqa" if (pool is None and prune == "temporal" and order == "proximity") else "variant"
        return EvidenceChain(
            constraints.question,
            constraints,
            facts,
            explicit,
            implicit,
            anchor_facts,
            ordered,
            delta,
            variant,
        )

    def chains(
        self,
        constraints: Sequence[Constraints],
        q_vecs: np.ndarray,
        k: int | None = None,
        n: int | None = None,
        *,
        pools: Sequence[np.ndarray] | None = None,
        prune: str = "temporal",
        order: str = "proximity",
        seed: int = 0,
        progress: bool = True,
        desc: str = "TECQA chains",
        chain: str = "paper",
        max_facts: int = GUIDED_MAX_FACTS,
    ) -> tuple[list[EvidenceChain], np.ndarray]:
        """Chains for many questions (``k``/``n`` default to the model's) and per-question retrieval latency
        in seconds (parsing and question embedding excluded, like the semantic baseline's)."""
        k = self.k if k is None else k
        n = self.n if n is None else n
        PARAMETERS.check(K=k, N=n)  # before any vector is loaded
        _ = self.triple_vectors  # load before timing
        rng = np.random.default_rng(seed)
        chains, latency = [], np.zeros(len(constraints))
        for i, (c, v) in enumerate(
            tqdm(list(zip(constraints, q_vecs)), desc=desc, disable=not progress or len(constraints) < 50)
        ):
            t0 = time.perf_counter()
            pool = None if pools is None else pools[i]
            chains.append(
                self.chain(
                    c, v, k, n, pool=pool, prune=prune, order=order, rng=rng, chain=chain, max_facts=max_facts
                )
            )
            latency[i] = time.perf_counter() - t0
        return chains, latency

    # -- the retrieval interface -----------------------------------------------------------------------
    def retrieve(
        self,
        questions: Sequence,
        k: int | None = None,
        *,
        progress: bool = True,
        constraints: Sequence[Constraints] | None = None,
        q_vecs: np.ndarray | None = None,
        **shared,
    ) -> Retrieval:
        """Parse, embed and chain every question (the model's ``chain``: the paper's, or the kit's
        question-guided one); the first ``k`` facts of each chain (None: all of it, :attr:`default_k`).

        Pass ``constraints`` / ``q_vecs`` that an earlier step computed to skip re-parsing/embedding."""
        check_shared(shared)
        texts = question_texts(questions)
        constraints = self.parse(texts, progress=progress) if constraints is None else constraints
        q_vecs = self.embed_questions(texts) if q_vecs is None else q_vecs
        chains, latency = self.chains(constraints, q_vecs, progress=progress, chain=self.chain_name)
        return as_retrieval(self.kg, chains, latency, k)

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        return reader_lines(self.kg, ids)

    def read(
        self, llm, questions: Sequence, retrieval: Retrieval, *, top_k: int = READER_TOP_K, progress=True
    ):
        """§4.4: the reader answers from each serialised chain with TECQA's rules (a ranked list)."""
        return super().read(llm, questions, retrieval, top_k=top_k, progress=progress)

    def pipeline(
        self, questions: Sequence, llm=None, *, k: int = 20, top_k: int = READER_TOP_K, progress=True
    ):
        """TECQA end to end: parse → subgraph → anchors → KNTN → serialise → read the first ``k`` facts
        (the paper's ~20).  With ``parser="llm"`` and no parser LLM given, ``llm`` parses too."""
        if self.parser_name == "llm" and self.llm is None:
            if llm is None:
                raise ValueError("parser='llm' needs an llm")
            self.llm = llm
        return super().pipeline(questions, llm, k=k, top_k=top_k, progress=progress)
