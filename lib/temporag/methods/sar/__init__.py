"""SAR (Hu et al.): a structure-aligned ReAct agent with verification for TKGQA — Algorithm 1, step by step.

Where each part of the paper lives:

* **Iterative answer verification** (Alg. 1 lines 1–10): :meth:`.agent.Agent.run`; the critic P_verify is
  :class:`.verify.LLMVerifier`, its offline rule-based counterpart :class:`.verify.RuleVerifier`; N = 2.
* **Reasoning and answer generation** (lines 11–23): :meth:`.agent.Agent.reason` keeps the thought /
  action / observation memory; P_reasoning is :class:`.policies.LLMPolicy`; the offline scripted policy
  :class:`.policies.OfflinePolicy` writes the same kind of turns; :func:`.actions.parse_step` reads
  ``SEARCH(sub_query, type, time)`` / ``FINISH(answer)`` and never raises.
* **Structure-aligned evidence retrieval** (lines 24–34): :class:`.tools.StructuredSearch` — temporal
  FILTER (:meth:`.search.TimeIndex.filter`, granularity-aware), decomposition into (h, r, t) by
  P_decomp (:class:`.decompose.LLMDecomposer`) or the offline linker (:class:`.decompose.OfflineDecomposer`),
  Eq. 1 from entity and relation *name* embeddings vectorised over the filtered KG
  (:func:`.search.eq1_scores`), TOP-K (K = 15) and chronological RE-ORDER (:func:`.search.structured_search`).
* **Baselines** (Table 1): :class:`NaiveRAG` (the kit's semantic retriever and one reader call) and
  :class:`ReActRAG` (the same agent with plain semantic search instead of SEARCH, no verifier).
* **Ablations** (Table 2) are arguments: ``SAR(decompose="none")`` is w/o Decompose (the sub-query's own
  embedding against the facts' texts, same FILTER and RE-ORDER); ``SAR(verifier=None)`` is w/o Validation.
* **Protocol**: :func:`paper_sample` draws equal Single and Multiple questions (the paper's 560).

Choices the paper leaves open are listed in :mod:`.search` and :mod:`.agent`; the prompts are the kit's
words in the paper's structure.  ``policy="offline"`` needs no LLM anywhere: it is how SAR's retrieval is
measured on every question, with :mod:`temporag.answer.template_reader` answering from the evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from temporag.methods.base import Method, QuestionRecord, Retrieval, check_shared
from temporag.methods.sar.agent import Agent, AgentResult, answers_at
from temporag.methods.sar.decompose import make_decomposer
from temporag.methods.sar.policies import LLMPolicy, OfflinePolicy
from temporag.methods.sar.search import DEFAULT_K, TimeIndex
from temporag.methods.sar.tools import PlainSemanticSearch, StructuredSearch, UndecomposedSearch
from temporag.methods.sar.verify import LLMVerifier, RuleVerifier
from temporag.methods.workspace import KGWorkspace
from temporag.progress import tqdm

DEFAULT_N = 2  # verification iterations (§Hyper-parameter Studies)
DEFAULT_STEPS = 6  # the kit's step budget per REASONING attempt (the paper states none)
PAPER_SAMPLE = 560  # §Experiment Settings: questions, half Single, half Multiple

__all__ = [
    "DEFAULT_K",
    "DEFAULT_N",
    "NaiveRAG",
    "ReActRAG",
    "answers_at",
    "SAR",
    "paper_sample",
    "to_record",
]


class SAR(Method):
    """SAR through the kit's retrieval interface.

    ``retrieve`` runs the offline scripted policy (no LLM) and ranks the facts its SEARCHes observed;
    ``pipeline(questions, llm, policy="llm")`` is the paper's agent.  ``decompose`` is "auto" (P_decomp for
    the LLM policy, the linker offline), "llm", "offline" or "none" (w/o Decompose); ``verifier`` is "auto"
    (the LLM critic for the LLM policy, the rule-based one offline), "llm", "rules" or None.
    """

    name = "SAR"
    evidence = "kg_fact"
    plain_search = False

    def __init__(
        self,
        kg,
        encoder=None,
        *,
        workspace: KGWorkspace | None = None,
        k: int = DEFAULT_K,
        n_verify: int = DEFAULT_N,
        max_steps: int = DEFAULT_STEPS,
        decompose: str = "auto",
        verifier: str | None = "auto",
        symmetric: bool = False,
    ) -> None:
        if decompose not in ("auto", "llm", "offline", "none"):
            raise ValueError(f"decompose must be 'auto', 'llm', 'offline' or 'none', got {decompose!r}")
        if verifier not in ("auto", "llm", "rules", None):
            raise ValueError(f"verifier must be 'auto', 'llm', 'rules' or None, got {verifier!r}")
        self.kg = kg
        self.workspace = workspace or KGWorkspace(kg, encoder)
        self.k, self.n_verify, self.max_steps = k, n_verify, max_steps
        self.decompose, self.verifier, self.symmetric = decompose, verifier, symmetric

    # -- assembling the agent -------------------------------------------------------------------------
    @cached_property
    def index(self) -> TimeIndex:
        """The KG in time order, so every FILTER is one slice."""
        return TimeIndex(self.kg)

    def search_tool(self, policy: str, llm=None, k: int | None = None):
        k = k or self.k
        if self.plain_search:
            return PlainSemanticSearch(self.workspace, k)
        kind = self.decompose if self.decompose != "auto" else ("llm" if policy == "llm" else "offline")
        if kind == "none":
            return UndecomposedSearch(self.workspace, self.index, k)
        decomposer = make_decomposer(kind, self.workspace.parser.linker, llm)
        return StructuredSearch(self.workspace, self.index, decomposer, k, self.symmetric)

    def agent(self, policy: str = "offline", llm=None, *, k: int | None = None, n_verify: int | None = None):
        if policy == "llm":
            if llm is None:
                raise ValueError("policy='llm' needs an llm")
            actor = LLMPolicy(llm, self.kg)
        elif policy == "offline":
            actor = OfflinePolicy(self.workspace)
        else:
            raise ValueError(f"policy must be 'offline' or 'llm', got {policy!r}")
        kind = self.verifier if self.verifier != "auto" else ("llm" if policy == "llm" else "rules")
        if kind == "llm":
            if llm is None:
                raise ValueError("verifier='llm' needs an llm")
            critic = LLMVerifier(llm, self.kg)
        elif kind == "rules":
            critic = RuleVerifier(self.workspace)
        else:
            critic = None
        n = self.n_verify if n_verify is None else n_verify
        return Agent(actor, self.search_tool(policy, llm, k), critic, max_steps=self.max_steps, n_verify=n)

    def run(
        self,
        questions: Sequence,
        policy: str = "offline",
        llm=None,
        *,
        k: int | None = None,
        n_verify: int | None = None,
        progress: bool = True,
    ) -> list[AgentResult]:
        """Algorithm 1 for every question (records with ``.question``), one AgentResult each."""
        agent = self.agent(policy, llm, k=k, n_verify=n_verify)
        texts = [q.question for q in questions]
        agent.policy.prepare(texts)
        if agent.verifier is not None:
            agent.verifier.prepare(texts)
        desc = f"{self.name} ({policy} policy)"
        if llm is not None and policy == "llm" and texts:
            # questions side by side, each one's turns in order; the first runs alone so that the lazy
            # resources (encoder, vectors) load once, not once per thread
            first = [agent.run(texts[0])]
            return first + llm.map_questions(
                agent.run, texts[1:], progress=progress and len(texts) >= 20, desc=desc
            )
        return [agent.run(t) for t in tqdm(texts, desc=desc, disable=not progress or len(texts) < 20)]

    # -- the retrieval interface ----------------------------------------------------------------------
    @property
    def default_k(self) -> int:
        """K: the facts each SEARCH returns when ``retrieve`` is given no k."""
        return self.k

    def within_k(self, ids: Sequence[int], k: int) -> bool:
        """``k`` counts facts per SEARCH: at most ``k`` per step of every reasoning attempt."""
        return len(ids) <= k * self.max_steps * (self.n_verify + 1)

    def retrieve(
        self, questions: Sequence, k: int | None = None, *, progress: bool = True, **shared
    ) -> Retrieval:
        """The offline policy's evidence: every fact its SEARCHes (K = ``k`` each, default the model's
        K) observed, in order.  No shared input applies: SAR embeds its decomposed sub-queries."""
        check_shared(shared)
        results = self.run(questions, "offline", k=k, progress=progress)
        return Retrieval(
            [np.asarray(r.evidence(), dtype=np.int64) for r in results],
            [r.search_s for r in results],
            [r.to_trace() for r in results],
            evidence=self.evidence,
        )

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        return self.kg.verbalise_many(ids)

    def pipeline(
        self,
        questions: Sequence,
        llm=None,
        *,
        k: int | None = None,
        top_k: int = 10,
        progress: bool = True,
        policy: str | None = None,
        n_verify: int | None = None,
    ) -> list[QuestionRecord]:
        """The agent end to end; ``policy`` defaults to "llm" when an ``llm`` is given, else "offline"."""
        policy = policy or ("llm" if llm is not None else "offline")
        results = self.run(questions, policy, llm, k=k, n_verify=n_verify, progress=progress)
        return [to_record(q, r, top_k) for q, r in zip(questions, results)]


class ReActRAG(SAR):
    """The ReAct RAG baseline: SAR's agent and prompts with the kit's plain semantic search as its tool and
    no verifier."""

    name = "ReAct RAG"
    plain_search = True

    def __init__(self, kg, encoder=None, **kwargs) -> None:
        kwargs.setdefault("verifier", None)
        kwargs.setdefault("n_verify", 0)
        super().__init__(kg, encoder, **kwargs)


class NaiveRAG(Method):
    """The Naive RAG baseline: the kit's semantic retriever (top-K facts by cosine) and one reader call."""

    name = "Naive RAG"
    evidence = "kg_fact"

    def __init__(self, kg, encoder=None, *, workspace: KGWorkspace | None = None) -> None:
        self.kg = kg
        self.workspace = workspace or KGWorkspace(kg, encoder)

    default_k = DEFAULT_K

    def retrieve(
        self, questions: Sequence, k: int | None = None, *, progress: bool = True, **shared
    ) -> Retrieval:
        """The semantic retriever's top ``k`` (default K) facts; ``q_vecs`` are passed on to it."""
        k = self.default_k if k is None else k
        found = self.workspace.semantic.retrieve(questions, k, progress=progress, **shared)
        return Retrieval(found.ids, found.latency_s, evidence=self.evidence)

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        return self.kg.verbalise_many(ids)


def to_record(question, result: AgentResult, top_k: int = 10) -> QuestionRecord:
    """One agent run as the kit's per-question record (calls, tokens and model seconds summed)."""
    usage = result.usage
    error = None
    if result.outcome == "llm_error":
        error = "; ".join(usage.errors[-1:]) or "LLM call failed"
    return QuestionRecord(
        quid=getattr(question, "quid", None),
        evidence_ids=result.evidence(),
        retrieval_s=float(result.search_s),
        answers=list(result.answers[:top_k]),
        error=error,
        llm_calls=usage.calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        reader_s=float(usage.seconds),
        trace=result.to_trace(),
    )


def paper_sample(questions: Sequence, n: int = PAPER_SAMPLE, seed: int = 0) -> tuple[list, dict]:
    """The paper's protocol: a seeded sample of ``n`` questions, half Single and half Multiple.

    When a label has fewer than n/2 questions, both halves shrink to the smaller one (so they stay
    equal); the returned dict says what was asked for and what was drawn."""
    rng = np.random.default_rng(seed)
    single = [i for i, q in enumerate(questions) if q.qlabel == "Single"]
    multiple = [i for i, q in enumerate(questions) if q.qlabel == "Multiple"]
    half = min(n // 2, len(single), len(multiple))
    chosen = sorted(
        rng.choice(single, half, replace=False).tolist() + rng.choice(multiple, half, replace=False).tolist()
    )
    info = {
        "asked": n,
        "drawn": 2 * half,
        "per_label": half,
        "single_available": len(single),
        "multiple_available": len(multiple),
        "seed": seed,
    }
    return [questions[i] for i in chosen], info
