"""The query side (§3.3, Alg. 1 lines 7–16): seeded personalised PageRank on the rule graph.

1. :meth:`RuleGraphSearch.anchors` — the top-K1 events by cosine (line 8).  Events are facts; the
   cosine is the semantic baseline's (distinct-triple vectors plus its date bonus), so STAR-RAG-no-rule
   (``use_rules=False``) is exactly the semantic baseline.
2. :func:`seed_personalisation` — map anchors to rule nodes and blend coverage and rank (Appendix C:
   θ = 0.6, β = 0.7, τ = 1/|U_seed|), or the uniform variant (``personalisation="uniform"``).
3. :func:`temporag.methods.star_rag.ppr.personalized_pagerank` — restart α = 0.2, tolerance 1e-5 (lines
10–13).
4. top-K2 rules, their support sets, re-ranked by the same cosine, top-K1 returned (lines 14–16).

Anchors and the final re-ranking use one score, so the output equals the semantic top-K1 except where
an anchor's rule nodes all fall outside the top-K2; the rule graph then swaps that anchor for the
best-scoring event of a better-supported rule.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from temporag.methods.semantic import (
    SemanticRetriever,
    TripleScores,
    event_scores,
    question_times,
    top_events,
    top_of,
)
from temporag.methods.star_rag.graph import RuleGraph
from temporag.methods.star_rag.nodes_spans import RuleNodes
from temporag.methods.star_rag.params import PARAMETERS as _PARAMETERS
from temporag.methods.star_rag.ppr import (
    Transition,
    personalized_pagerank,
    personalized_pagerank_many,
    transition_matrix,
)
from temporag.progress import tqdm
from temporag.retrieval.topk import top_k_stable

K1, K2 = 10, 20
ALPHA, TOL = 0.2, 1e-5
THETA, BETA = 0.6, 0.7
PERSONALISATIONS = ("paper", "uniform")


# ---------------------------------------------------------------------------------------------------
# seeded personalisation (Appendix C)


def seed_personalisation(
    nodes: RuleNodes,
    anchors: Sequence[int],
    theta: float = THETA,
    beta: float = BETA,
    tau: float | None = None,
    mode: str = "paper",
) -> tuple[np.ndarray, np.ndarray]:
    """(U_seed, γ): the rule nodes of the ranked anchors and their personalisation mass.

    paper: s_u = (1 − θ) c̃_u + θ p̃_u with c̃ the normalised support size and p̃ the normalised sum of
    β^(j−1) over the anchors f_j the node supports; γ ∝ s + τ (τ = 1/|U_seed| by default).
    uniform: γ = 1/|U_seed| (STAR-RAG-uniform)."""
    if mode not in PERSONALISATIONS:
        raise ValueError(f"mode must be one of {PERSONALISATIONS}")
    node_parts, weight_parts = [], []
    for j, f in enumerate(anchors):
        members = nodes.of_fact[int(f)]
        node_parts.append(members)
        weight_parts.append(np.full(len(members), beta**j))
    if not node_parts or sum(len(p) for p in node_parts) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    all_nodes = np.concatenate(node_parts).astype(np.int64)
    seeds, inv = np.unique(all_nodes, return_inverse=True)
    if mode == "uniform":
        return seeds, np.full(len(seeds), 1.0 / len(seeds))
    p = np.bincount(inv, weights=np.concatenate(weight_parts), minlength=len(seeds))
    c = nodes.sizes[seeds].astype(float)
    s = (1 - theta) * c / c.sum() + theta * p / p.sum()
    tau = 1.0 / len(seeds) if tau is None else tau
    gamma = (s + tau) / (s + tau).sum()
    return seeds, gamma


# ---------------------------------------------------------------------------------------------------
# one question's retrieval, for the walk-through and the audit trail


@dataclass
class StarTrace:
    """What one retrieval did, for the notebook's step-by-step views and the audit trail."""

    facts: np.ndarray  # the top-K1 events returned
    anchors: np.ndarray
    seeds: np.ndarray
    gamma: np.ndarray
    rules: np.ndarray  # top-K2 rule nodes by π
    rule_mass: np.ndarray
    n_candidates: int
    iterations: int
    seconds: float  # this question's retrieval time (embedding excluded; shared batch work pro rata)

    @property
    def swapped_anchors(self) -> int:
        """Anchors that are not among the returned events (0: STAR-RAG returned the semantic top-K1)."""
        return int((~np.isin(self.anchors, self.facts)).sum())

    @property
    def seed_rules_in_top(self) -> int:
        return int(np.isin(self.rules, self.seeds).sum())

    def to_record(self) -> dict:
        """The JSON-ready trace ``Retrieval.traces`` and ``results.json`` hold."""
        return {
            "facts": self.facts.tolist(),
            "anchors": self.anchors.tolist(),
            "seeds": len(self.seeds),
            "rules": self.rules.tolist(),
            "seed_rules_in_top": self.seed_rules_in_top,
            "swapped_anchors": self.swapped_anchors,
            "candidates": self.n_candidates,
            "ppr_iterations": self.iterations,
            "retrieval_s": self.seconds,
        }


class QueryScores:
    """One question's event scores, computed only for the events asked about.

    score(f) = cos(q, triple(f)) + the semantic baseline's date bonus (``semantic.event_scores``) over the
    question's :class:`~temporag.methods.semantic.TripleScores` (a batch's matrix-product row, or one
    question's float16-bounded cosines made exact where a ranking needs them); :meth:`top` is the
    baseline's top-k from the 166,760 triple scores (``semantic.top_events``)."""

    def __init__(self, retriever: RuleGraphSearch, cosines: TripleScores | np.ndarray, question: str) -> None:
        self.retriever = retriever
        self.cosines = TripleScores.wrap(cosines)
        self.times = question_times(question)

    def of(self, facts: np.ndarray) -> np.ndarray:
        """Scores of the given events."""
        weight = self.retriever.semantic.time_weight
        return event_scores(self.retriever.kg, self.cosines, facts, self.times, weight)

    def all(self) -> np.ndarray:
        return self.of(np.arange(len(self.retriever.kg)))

    def top(self, k: int) -> np.ndarray:
        """The top-k events, ``top_k_stable(self.all(), k)`` (ties: earlier fact first)."""
        weight = self.retriever.semantic.time_weight
        return top_events(self.retriever.kg, self.cosines, self.times, k, weight)

    def top_of(self, facts: np.ndarray, k: int) -> np.ndarray:
        """The top-k of the given events, ``facts[top_k_stable(self.of(facts), k)]``."""
        weight = self.retriever.semantic.time_weight
        return top_of(self.retriever.kg, self.cosines, facts, self.times, k, weight)


# ---------------------------------------------------------------------------------------------------
# the search (Alg. 1 lines 7–16); :class:`temporag.methods.star_rag.StarRAG` puts it behind the interface


@dataclass
class RuleGraphSearch:
    """Alg. 1's query side over a built rule graph: anchors, γ, PPR, top-K2 rules, re-ranking.

    Questions are processed in batches of ``batch_size``: the cosine of every distinct triple is one
    matrix product per batch (reading the 166,760 × 384 vectors once instead of once per question) and
    the batch's PPRs iterate together; each question is charged its share of that work plus its own
    steps.  Results are those of the one-question path."""

    kg: object
    graph: RuleGraph
    semantic: SemanticRetriever
    k1: int = K1
    k2: int = K2
    alpha: float = ALPHA
    tol: float = TOL
    theta: float = THETA
    beta: float = BETA
    personalisation: str = "paper"
    edge_weight: str = "rate"
    batch_size: int = 64
    dtype: type = np.float32  # PPR arithmetic; float32 halves memory traffic, far below the 1e-5 tolerance
    trans: Transition = field(init=False, repr=False)

    def __post_init__(self) -> None:
        _PARAMETERS.check(K1=self.k1, K2=self.k2)
        if self.personalisation not in PERSONALISATIONS:
            raise ValueError(
                f"personalisation must be one of {PERSONALISATIONS}, got {self.personalisation!r}"
            )
        u, v = self.graph.edges
        self.trans = transition_matrix(
            len(self.graph.nodes), u, v, self.graph.edge_weights(self.edge_weight), symmetric=True
        )
        self._mark = np.zeros(len(self.kg), dtype=bool)

    # -- helpers ---------------------------------------------------------------------------------
    def _union(self, parts: list[np.ndarray]) -> np.ndarray:
        """Sorted union of fact-id arrays (a boolean scratch mask beats sorting for large unions)."""
        if not parts:
            return np.zeros(0, dtype=np.int64)
        members = np.concatenate(parts)
        self._mark[members] = True
        out = np.flatnonzero(self._mark)
        self._mark[members] = False
        return out

    # -- steps ---------------------------------------------------------------------------------
    def query(self, q_vec: np.ndarray, question: str) -> QueryScores:
        """One question's scorer over exact float32 cosines (the semantic baseline's ``fact_scores``,
        computed lazily per event)."""
        [cosines] = TripleScores.for_questions(self.semantic.triple_vectors, q_vec)
        return QueryScores(self, cosines, question)

    def anchors(self, scores: QueryScores, k1: int | None = None) -> np.ndarray:
        """Alg. 1 line 8: the top-K1 events."""
        return scores.top(k1 or self.k1)

    def personalise(self, anchors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Alg. 1 line 9 / Appendix C."""
        return seed_personalisation(
            self.graph.nodes, anchors, self.theta, self.beta, mode=self.personalisation
        )

    def propagate(self, seeds: np.ndarray, gamma: np.ndarray) -> tuple[np.ndarray, int]:
        """Alg. 1 lines 10–13: PPR from γ on the rule graph."""
        full = np.zeros(self.trans.n)
        full[seeds] = gamma
        return personalized_pagerank(self.trans, full, self.alpha, self.tol, dtype=self.dtype)

    @staticmethod
    def top_rules(pi: np.ndarray, k2: int) -> np.ndarray:
        """Alg. 1 line 14: the top-K2 rule nodes by π (only nodes the walk reached)."""
        reached = np.flatnonzero(pi > 0)
        return reached[top_k_stable(pi[reached], k2)]

    def candidates(self, rules: np.ndarray) -> np.ndarray:
        """Alg. 1 line 15: the union of the rules' support sets (ascending fact ids)."""
        sup = self.graph.nodes.support
        return self._union([sup[int(r)] for r in rules])

    @staticmethod
    def rerank(candidates: np.ndarray, scores: QueryScores, k1: int) -> np.ndarray:
        """Alg. 1 line 16: the top-K1 candidates by the same score (ties: earlier fact first)."""
        return scores.top_of(candidates, k1)

    # -- many questions --------------------------------------------------------------------------
    def _batches(self, n: int, desc: str, progress: bool):
        starts = range(0, n, self.batch_size)
        for start in tqdm(starts, desc=desc, disable=not progress or len(starts) < 2):
            yield list(range(start, min(start + self.batch_size, n)))

    def _score_batch(self, questions, q_vecs, batch) -> tuple[list[QueryScores], float]:
        # one question reads the float16 copy (built once, before the clock starts; a scorer without it
        # reads the float32 vectors); a batch shares one matrix product
        half = getattr(self.semantic, "half_vectors", None) if len(batch) == 1 else None
        t0 = time.perf_counter()
        cosines = TripleScores.for_questions(self.semantic.triple_vectors, q_vecs[batch], half)
        scores = [QueryScores(self, c, questions[i]) for c, i in zip(cosines, batch)]
        return scores, (time.perf_counter() - t0) / len(batch)

    def run(
        self,
        questions: Sequence[str],
        q_vecs: np.ndarray,
        settings: Sequence[tuple[int, int]] | None = None,
        progress: bool = True,
    ) -> dict[tuple[int, int], list[StarTrace]]:
        """Traces for every question and every (K1, K2) in ``settings`` (default: this retriever's).

        Per batch: one matrix product for the cosines, one batched PPR per distinct K1."""
        settings = list(settings or [(self.k1, self.k2)])
        k1s = sorted({a for a, _ in settings})
        out: dict[tuple[int, int], list[StarTrace]] = {st: [] for st in settings}
        for batch in self._batches(len(questions), "STAR-RAG retrieval", progress):
            b = len(batch)
            scores, shared = self._score_batch(questions, q_vecs, batch)
            for a in k1s:
                spent = np.full(b, shared)
                anchors, seeds, gammas = [], [], np.zeros((self.trans.n, b))
                for j in range(b):
                    t0 = time.perf_counter()
                    anchors.append(self.anchors(scores[j], a))
                    sd, gm = self.personalise(anchors[j])
                    seeds.append(sd)
                    gammas[sd, j] = gm
                    spent[j] += time.perf_counter() - t0
                ok = np.flatnonzero(gammas.sum(axis=0) > 0)
                pis = np.zeros((self.trans.n, b))
                iters = np.zeros(b, dtype=int)
                if len(ok):
                    t0 = time.perf_counter()
                    pis[:, ok], iters[ok] = personalized_pagerank_many(
                        self.trans, gammas[:, ok], self.alpha, self.tol, dtype=self.dtype
                    )
                    spent += (time.perf_counter() - t0) / b
                for bk in [bb for aa, bb in settings if aa == a]:
                    for j in range(b):
                        t0 = time.perf_counter()
                        rules = self.top_rules(pis[:, j], bk)
                        cands = self.candidates(rules)
                        facts = self.rerank(cands, scores[j], a)
                        own = time.perf_counter() - t0
                        out[(a, bk)].append(
                            StarTrace(
                                facts=facts,
                                anchors=anchors[j],
                                seeds=seeds[j],
                                gamma=gammas[seeds[j], j],
                                rules=rules,
                                rule_mass=pis[rules, j],
                                n_candidates=len(cands),
                                iterations=int(iters[j]),
                                seconds=float(spent[j] + own),
                            )
                        )
        return out

    def anchors_only(self, questions: Sequence[str], q_vecs: np.ndarray, k: int, progress: bool):
        """STAR-RAG-no-rule: the anchors themselves (semantic search only), timed the same way."""
        ranked, latency = [], []
        for batch in self._batches(len(questions), "no-rule retrieval", progress):
            scores, shared = self._score_batch(questions, q_vecs, batch)
            for one in scores:
                t0 = time.perf_counter()
                ranked.append(self.anchors(one, k))
                latency.append(shared + time.perf_counter() - t0)
        return ranked, np.asarray(latency)

    def trace_one(
        self, q_vec: np.ndarray, question: str, k1: int | None = None, k2: int | None = None
    ) -> StarTrace:
        """One question, with everything the walk-through shows (anchors, seeds, γ, rules, π mass)."""
        setting = (k1 or self.k1, k2 or self.k2)
        return self.run([question], np.atleast_2d(q_vec), [setting], progress=False)[setting][0]

    def sweep(
        self,
        questions: Sequence[str],
        q_vecs: np.ndarray,
        k1s: Sequence[int],
        k2s: Sequence[int],
        progress: bool = True,
    ) -> dict[tuple[int, int], list[np.ndarray]]:
        """Top-K1 events for every (K1, K2) pair (Fig. 5)."""
        texts = [getattr(q, "question", q) for q in questions]
        runs = self.run(texts, q_vecs, [(a, b) for a in k1s for b in k2s], progress)
        return {key: [t.facts for t in traces] for key, traces in runs.items()}
