"""Naive RAG baseline: rank verbalised facts by cosine to the question, read the top k.

The steps, in the order the tour notebook walks them:

* verbalise and embed: each distinct (s, r, o) text is embedded once (166,760 for MultiTQ instead of
  461,329 facts; ``embed.kg_triple_vectors``) and the date enters as a separate cheap signal;
* score (:meth:`SemanticRetriever.fact_scores`): cosine of the fact's triple text to the question, plus
  :func:`time_bonus` for a fact whose day falls inside a period the question names
  (:func:`question_times`);
* rank (:func:`temporag.retrieval.topk.top_k_stable`): the k best facts, ties between facts of one
  triple in chronological (file) order; :func:`top_events` finds the same k from the triple scores
  without scoring every fact, one question at a time from a float16 copy of the vectors made exact where
  it matters
  (:mod:`temporag.methods.semantic.cosines`);
* read: the kit's one reader over the facts as ``s r o on YYYY-MM-DD`` lines
  (:meth:`SemanticRetriever.evidence_lines`, inherited ``pipeline``).

Tables and figures of the tour live in :mod:`temporag.methods.semantic.report`, what it records in
:mod:`temporag.methods.semantic.record`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from temporag.methods.base import Method, Retrieval, check_shared, question_texts
from temporag.methods.params import check as check_params
from temporag.methods.semantic.cosines import TripleScores, half_precision_copy
from temporag.progress import tqdm
from temporag.retrieval.embed import Encoder, kg_triple_vectors
from temporag.retrieval.topk import top_k_stable
from temporag.timeutil import TimeValue, extract_time_mentions

TIME_BONUS = 0.1  # in cosine units: enough to reorder facts of one triple, not to beat a better triple

__all__ = [
    "TIME_BONUS",
    "SemanticRetriever",
    "event_scores",
    "question_times",
    "time_bonus",
    "top_events",
    "top_of",
    "TripleScores",
]


def question_times(question: str) -> list[TimeValue]:
    """The periods a question names ("in March 2009" → the month 2009-03)."""
    return [m.value for m in extract_time_mentions(question)]


def time_bonus(
    kg, fact_ids: np.ndarray, times: Sequence[TimeValue], weight: float = TIME_BONUS
) -> np.ndarray:
    """``weight`` for facts whose time overlaps a period named in the question, else 0."""
    bonus = np.zeros(len(fact_ids), dtype=np.float32)
    if not times:
        return bonus
    starts, ends = kg.t_start[fact_ids], kg.t_end[fact_ids]
    for t in times:
        bonus[(starts <= t.last_day) & (ends >= t.first_day)] = weight
    return bonus


def event_scores(
    kg, scores: TripleScores, facts: np.ndarray, times: Sequence[TimeValue], weight: float
) -> np.ndarray:
    """Scores of the given events: the exact cosine of their triple plus the date bonus."""
    out = scores.exact(kg.triple_of_fact[facts])
    if times:
        out = out + time_bonus(kg, facts, times, weight)
    return out


def top_events(
    kg, scores: TripleScores, times: Sequence[TimeValue], k: int, weight: float = TIME_BONUS
) -> np.ndarray:
    """The k best events of one question, exactly ``top_k_stable`` over all 461K event scores, found from
    the 166,760 triple scores instead: the k best triples hold at least k events, which bounds the k-th
    best event score from below, and only triples within one date bonus of that bound (plus the coarse
    cosines' error and a float32 rounding margin) can still place an event in the top k."""
    row = scores.coarse
    m = min(k, len(row))
    if m <= 0:
        return np.empty(0, dtype=np.int64)
    # the m best triples (and any tied with the m-th): a threshold by partition, cheaper than argpartition
    best = np.partition(row, len(row) - m)[len(row) - m]
    first = kg.by_triple.ids_of(np.flatnonzero(row >= best))
    lower = -np.inf
    if len(first) >= k:
        exact = event_scores(kg, scores, first, times, weight)
        lower = np.partition(exact, len(first) - k)[len(first) - k]
    reach = weight if times else 0.0
    cands = kg.by_triple.ids_of(np.flatnonzero(row >= lower - reach - scores.error - 1e-6))
    return cands[top_k_stable(event_scores(kg, scores, cands, times, weight), k)]


def top_of(
    kg,
    scores: TripleScores,
    facts: np.ndarray,
    times: Sequence[TimeValue],
    k: int,
    weight: float = TIME_BONUS,
) -> np.ndarray:
    """The k best of the given events, exactly ``facts[top_k_stable(event_scores(...), k)]`` (ties: the
    earlier position in ``facts``), scoring exactly only events whose coarse score reaches the k-th best."""
    if scores.error == 0.0 or len(facts) <= k:
        return facts[top_k_stable(event_scores(kg, scores, facts, times, weight), k)]
    triples = kg.triple_of_fact[facts]
    bonus = time_bonus(kg, facts, times, weight) if times else np.zeros(len(facts), dtype=np.float32)
    approx = scores.coarse[triples] + bonus
    # k events scored exactly bound the k-th best from below; only events within the coarse error remain
    some = np.argpartition(-approx, k - 1)[:k]
    lower = (scores.exact(triples[some]) + bonus[some]).min()
    keep = np.flatnonzero(approx >= lower - scores.error - 1e-6)
    exact = scores.exact(triples[keep]) + bonus[keep]
    return facts[keep[top_k_stable(exact, k)]]


class SemanticRetriever(Method):
    """Global dense retrieval over every fact of the KG (the tour's Naive RAG, TECQA's w/o SG pool and
    STAR-RAG's seed ranking)."""

    name = "Naive RAG (semantic)"
    evidence = "kg_fact"
    default_k = 50  # facts per question when ``retrieve`` is given no k

    def __init__(self, kg, encoder: Encoder | None = None, time_weight: float = TIME_BONUS) -> None:
        self.kg = kg
        self.encoder = encoder if encoder is not None else Encoder()
        self.time_weight = time_weight
        self.triple_vectors = kg_triple_vectors(self.kg, self.encoder)

    def embed_questions(self, questions: Sequence[str]) -> np.ndarray:
        return self.encoder.encode(list(questions))

    @cached_property
    def half_vectors(self):
        """The triple vectors in float16 (128 MB): one question's coarse cosines read half the bytes."""
        return half_precision_copy(self.triple_vectors)

    def cosines(self, q_vec: np.ndarray) -> TripleScores:
        """One question's cosines to every triple: coarse from the float16 copy, exact where asked."""
        return TripleScores.for_questions(self.triple_vectors, q_vec, self.half_vectors)[0]

    def fact_scores(self, q_vec: np.ndarray, question: str) -> np.ndarray:
        """Cosine of every fact's triple text to the question, plus the date bonus."""
        return event_scores(
            self.kg,
            TripleScores(self.triple_vectors @ q_vec),
            np.arange(len(self.kg)),
            question_times(question),
            self.time_weight,
        )

    def top(self, q_vec: np.ndarray, question: str, k: int) -> np.ndarray:
        """The k best facts, ``top_k_stable(fact_scores(...), k)`` up to float ties, without scoring every
        fact or reading the float32 vectors of every triple."""
        return top_events(self.kg, self.cosines(q_vec), question_times(question), k, self.time_weight)

    def retrieve(
        self,
        questions: Sequence,
        k: int | None = None,
        *,
        progress: bool = True,
        q_vecs: np.ndarray | None = None,
        **shared,
    ) -> Retrieval:
        """Ranked top-k (default :attr:`default_k`) fact ids per question and per-question latency
        (question embedding excluded; ``q_vecs`` reuses vectors another step already computed)."""
        check_shared(shared)
        k = self.default_k if k is None else k
        check_params(k=k)
        texts = question_texts(questions)
        if q_vecs is None:
            q_vecs = self.embed_questions(texts)
        _ = self.half_vectors  # built once, before the clock starts
        ranked, latency = [], np.zeros(len(texts))
        for i, (text, vec) in enumerate(
            tqdm(list(zip(texts, q_vecs)), desc="semantic retrieval", disable=not progress or len(texts) < 50)
        ):
            t0 = time.perf_counter()
            ranked.append(self.top(vec, text, k))
            latency[i] = time.perf_counter() - t0
        return Retrieval(ranked, latency, evidence=self.evidence)

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        """Facts as ``s r o on YYYY-MM-DD``, the text that was embedded."""
        return self.kg.verbalise_many(ids)
