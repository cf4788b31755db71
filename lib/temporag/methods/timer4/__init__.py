"""TimeR4 (Qian et al., EMNLP 2024): retrieve → rewrite → retrieve → rerank, then reason.

The paper's steps (slides 9–14 and Algorithm 1) and where they live:

* Fact retrieval, Eqs. 1–4 (Algorithm 1 lines 3, 6, 12–16) — :class:`store.KnowledgeStore` built by
  :func:`fact_store` with the off-the-shelf embedder (the FKS); :meth:`TimeR4.fact_retrieval`.
* Rewrite, Eq. 5 (line 7) — :mod:`rewrite`: ``rewrite="llm"`` (the paper's prompt structure) or
  ``"offline"`` (a rule over the kit's offline parse), ``"none"`` for w/o rewrite.
* Time-aware retrieval, Eqs. 6–8 (lines 1, 2, 4, 8) — :mod:`negatives` writes training questions and
  three kinds of hard negatives from the KG's train period, :mod:`train` fine-tunes the embedder with
  a softmax (InfoNCE) loss over them (Eq. 8 read pair by pair and the released code's loss are switches),
  :func:`time_store` builds the TKS; :meth:`TimeR4.time_retrieval`.
* Rerank, Eqs. 9–10 (line 9) — :mod:`rerank`; ``rerank="eq9" | "window" | "off"``.
* Reasoning, Eq. 11 (line 10) — the kit's one reader with :data:`READER_RULES` (slide 14's task).  The
  paper fine-tunes LLaMA2-7B on it; that is out of scope on a CPU (see runbooks/gpu-box-vllm.md).

Choices the paper leaves open: the fusion of content and date in a fact vector (``store.DATE_WEIGHT``),
μ of Eq. 10 (0.8, the code's alpha), w_p = w_n = 1, the rerank pool (100 candidates → top 15), Eq. 9 for
"after" and "in" constraints, the templates of the training questions.  Table 5's ablations are
arguments of one object: ``TimeR4.variant(background="linking")`` (w/o fact retrieval),
``rewrite="none"``, ``temporal=False``, ``rerank="off"``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from temporag.cache import content_hash
from temporag.methods.base import Method, Retrieval, check_shared
from temporag.methods.timer4.rerank import (
    DEFAULT_MU,
    RERANK_MODES,
    TimeConstraint,
    question_constraint,
    rerank_facts,
)
from temporag.methods.timer4.rewrite import (
    REWRITE_MODES,
    Rewrite,
    linked_background,
    llm_rewrite,
    offline_rewrite,
    unchanged,
)
from temporag.methods.timer4.store import KnowledgeStore, build_store, fact_text
from temporag.retrieval.blas import one_blas_thread
from temporag.retrieval.embed import Encoder
from temporag.retrieval.topk import top_k_stable

N_FACTS = 15  # n of the paper (Figure 3's peak)
POOL = 100  # candidates the time-aware retriever hands to the rerank

READER_RULES = (
    "The facts are historical events written 'subject relation object in date'. Answer from them, keep "
    "every answer as short as possible and list all the possible answers."
)


def fact_store(kg, encoder=None, **kwargs) -> KnowledgeStore:
    """The FKS: every fact embedded by the off-the-shelf model (triple vectors shared with the kit)."""
    return build_store(kg, encoder or Encoder(), "FKS", **kwargs)


def time_store(
    kg, model_path, triple_ids=None, name: str = "TKS", exact: bool = False, **kwargs
) -> KnowledgeStore:
    """The TKS: every fact (or the facts of ``triple_ids``: a candidate pool) by the fine-tuned model;
    ``exact``: searched exhaustively instead of through the IVF index."""
    store = build_store(kg, Encoder(model=str(model_path)), name, triple_ids=triple_ids, **kwargs)
    store.exact_search = exact
    return store


def candidate_triples(store: KnowledgeStore, q_vecs: np.ndarray, per_question: int = 200) -> np.ndarray:
    """The union of every question's ``per_question`` most similar triples (the smoke profile's TKS pool)."""
    picks = [top_k_stable(store.triple_vectors @ v, per_question) for v in q_vecs]
    rows = np.unique(np.concatenate(picks)) if picks else np.empty(0, dtype=np.int64)
    return rows if store.triple_ids is None else store.triple_ids[rows]


@dataclass
class Stages:
    """What one question set went through: background facts, rewrites, constraints, candidates."""

    background: list[np.ndarray]
    rewrites: list[Rewrite]
    constraints: list[TimeConstraint]
    pool_ids: list[np.ndarray]
    pool_sims: list[np.ndarray]
    latency_s: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class Options:
    """The knobs of one TimeR4 variant (Table 5's ablations, the released code's switches)."""

    rewrite: str = "offline"  # Eq. 5: "llm" | "offline" | "none" (w/o rewrite)
    background: str = "fks"  # the rewrite's facts: "fks" (Eqs. 3-4) | "linking" (w/o fact retrieval)
    temporal: bool = True  # the fine-tuned time-aware store (False: w/o temporal retrieval)
    rerank: str = "eq9"  # Eqs. 9-10: "eq9" | "window" | "off"
    mu: float = DEFAULT_MU  # Eq. 10's weight of the time score
    window_days: int = 30  # the "window" rerank's half-width
    n: int = N_FACTS  # facts handed to the reader
    pool: int = POOL  # candidates the time-aware retrieval hands to the rerank
    rewrite_facts: int = N_FACTS  # background facts the rewrite reads


class TimeR4(Method):
    """The whole method over one KG; knobs select the paper's ablations and the released code's switches."""

    name = "TimeR4"
    evidence = "kg_fact"
    reader_instructions = READER_RULES

    def __init__(
        self,
        kg,
        fks: KnowledgeStore,
        tks: KnowledgeStore | None = None,
        *,
        parser=None,
        llm=None,
        rewrite: str = "offline",
        background: str = "fks",
        temporal: bool = True,
        rerank: str = "eq9",
        mu: float = DEFAULT_MU,
        window_days: int = 30,
        n: int = N_FACTS,
        pool: int = POOL,
        rewrite_facts: int = N_FACTS,
        memo: dict | None = None,
    ) -> None:
        if rewrite not in REWRITE_MODES:
            raise ValueError(f"rewrite must be one of {REWRITE_MODES}, got {rewrite!r}")
        if rerank not in RERANK_MODES:
            raise ValueError(f"rerank must be one of {RERANK_MODES}, got {rerank!r}")
        if background not in ("fks", "linking"):
            raise ValueError(f"background must be 'fks' or 'linking', got {background!r}")
        if rewrite == "llm" and llm is None:
            raise ValueError("rewrite='llm' needs an llm (e.g. run.llm())")
        if (rewrite == "offline" or background == "linking") and parser is None:
            raise ValueError(
                "the offline rewrite and w/o fact retrieval need the offline parser: "
                "parser=tecqa.make_offline_parser(kg, encoder)"
            )
        if temporal and tks is None:
            raise ValueError("temporal=True needs the time-aware store (tks=time_store(...))")
        self.kg, self.fks, self.tks, self.parser, self.llm = kg, fks, tks, parser, llm
        self.options = Options(
            rewrite, background, temporal, rerank, mu, window_days, n, pool, rewrite_facts
        )
        self.memo = memo if memo is not None else {}

    def variant(self, **changes) -> TimeR4:
        """The same stores and memo with other knobs (``tks=``, ``llm=`` swap those objects): ablations
        and code switches share every stage they have in common."""
        objects = {"fks": self.fks, "tks": self.tks, "parser": self.parser, "llm": self.llm}
        objects.update({k: changes.pop(k) for k in list(changes) if k in objects})
        fks, tks = objects.pop("fks"), objects.pop("tks")
        knobs = {**dataclasses.asdict(self.options), **changes}
        return TimeR4(self.kg, fks, tks, memo=self.memo, **objects, **knobs)

    # -- stages (memoised per question set, so variants reuse what they share) ---------------------
    def _memo(self, key, make):
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    def question_vectors(self, store: KnowledgeStore, texts: Sequence[str]) -> np.ndarray:
        return self._memo(
            ("qvec", store.key, content_hash(list(texts))),
            lambda: store.encoder.encode(list(texts), progress=False),
        )

    def _search(self, store: KnowledgeStore, texts: Sequence[str], k: int):
        def run():
            vecs = self.question_vectors(store, texts)
            _ = store.facts if store.partial or store.exact_search else store.index  # built before timing
            ids, sims, lat = [], [], np.zeros(len(texts))
            with one_blas_thread():
                for i, v in enumerate(vecs):
                    t0 = time.perf_counter()
                    a, b = store.search(v, k)
                    lat[i] = time.perf_counter() - t0
                    ids.append(a)
                    sims.append(b)
            return ids, sims, lat

        return self._memo(("search", store.key, k, content_hash(list(texts))), run)

    def fact_retrieval(self, texts: Sequence[str]):
        """Eqs. 3–4 with the FKS: top-n background facts, similarities, seconds per question."""
        return self._search(self.fks, texts, self.options.rewrite_facts)

    def rewrite_questions(self, texts: Sequence[str], progress: bool = True) -> tuple[list, list[Rewrite]]:
        """Eq. 5 on the background facts (FKS, or entity linking for w/o fact retrieval)."""
        key = content_hash(list(texts))
        if self.options.background == "fks":
            background = self.fact_retrieval(texts)[0]
        else:
            background = self._memo(
                ("linked", self.options.rewrite_facts, key),
                lambda: linked_background(self.kg, self.parser, texts, self.options.rewrite_facts),
            )
        if self.options.rewrite == "none":
            return background, unchanged(texts)
        if self.options.rewrite == "offline":
            make = lambda: offline_rewrite(self.kg, self.parser, texts, background)  # noqa: E731
        else:
            make = lambda: llm_rewrite(
                self.llm,
                self.kg,
                texts,
                background,
                facts=self.options.rewrite_facts,  # noqa: E731
                progress=progress,
            )
        return background, self._memo(("rewrite", self.options.rewrite, self.options.background, key), make)

    def time_retrieval(self, rewritten: Sequence[str]):
        """Eqs. 6–7 with the TKS (the FKS for w/o temporal retrieval): the rerank's candidate pool."""
        store = self.tks if self.options.temporal else self.fks
        return self._search(store, rewritten, max(self.options.pool, self.options.n))

    def stages(self, texts: Sequence[str], progress: bool = True) -> Stages:
        background, rewrites = self.rewrite_questions(texts, progress)
        rewritten = [r.rewritten for r in rewrites]
        pool_ids, pool_sims, pool_lat = self.time_retrieval(rewritten)
        fks_lat = self.fact_retrieval(texts)[2] if self.options.background == "fks" else np.zeros(len(texts))
        return Stages(
            background,
            rewrites,
            [question_constraint(q) for q in rewritten],
            pool_ids,
            pool_sims,
            fks_lat + pool_lat,
        )

    # -- the retrieval interface -----------------------------------------------------------------
    @property
    def default_k(self) -> int:
        """n: the reranked facts a question's context holds when ``retrieve`` is given no k."""
        return self.options.n

    def retrieve(
        self, questions: Sequence, k: int | None = None, *, progress: bool = True, **shared
    ) -> Retrieval:
        """f+ for every question: FKS → rewrite → TKS → rerank (Algorithm 1 lines 6–9), top ``k`` (n).
        No shared input applies: the stores embed the (rewritten) questions with their own encoders."""
        check_shared(shared)
        texts = [getattr(q, "question", q) for q in questions]
        k = k or self.options.n
        st = self.stages(texts, progress)
        ids, traces, latency = [], [], st.latency_s.copy()
        for i, (pool, sims, c) in enumerate(zip(st.pool_ids, st.pool_sims, st.constraints)):
            t0 = time.perf_counter()
            top, _ = rerank_facts(
                pool,
                sims,
                self.kg.t_start[pool],
                c,
                k,
                mu=self.options.mu,
                mode=self.options.rerank,
                window_days=self.options.window_days,
            )
            latency[i] += time.perf_counter() - t0
            ids.append(top)
            traces.append(
                {
                    "rewrite": st.rewrites[i].to_dict(),
                    "constraint": c.to_dict(),
                    "background": np.asarray(st.background[i][:k]).tolist(),
                }
            )
        return Retrieval(ids, latency, traces, "kg_fact")

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        return [fact_text(self.kg, f) for f in ids]
