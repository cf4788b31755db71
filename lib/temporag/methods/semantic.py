"""Naive RAG baseline: rank verbalised facts by cosine to the question, read the top k.

Each distinct (s, r, o) text is embedded once (166,760 for MultiTQ instead of 461,329 facts) and the
date enters as a separate cheap signal: a fact whose day falls inside a period the question names
gets a fixed bonus.  Ties between facts of one triple keep chronological (file) order.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from temporag.embed import Encoder, kg_triple_vectors
from temporag.params import check as check_params
from temporag.timeutil import TimeValue, extract_time_mentions

TIME_BONUS = 0.1  # in cosine units: enough to reorder facts of one triple, not to beat a better triple


def question_times(question: str) -> list[TimeValue]:
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


def top_k_stable(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best scores, ties broken by lower index (file order = chronological)."""
    k = min(k, len(scores))
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
    cand = np.flatnonzero(scores >= threshold)
    order = np.lexsort((cand, -scores[cand]))
    return cand[order[:k]]


@dataclass
class SemanticRetriever:
    """Global dense retrieval over every fact of the KG."""

    kg: object
    encoder: Encoder = field(default_factory=Encoder)
    time_weight: float = TIME_BONUS

    def __post_init__(self) -> None:
        self.triple_vectors = kg_triple_vectors(self.kg, self.encoder)

    def embed_questions(self, questions: Sequence[str]) -> np.ndarray:
        return self.encoder.encode(list(questions))

    def fact_scores(self, q_vec: np.ndarray, question: str) -> np.ndarray:
        """Cosine of every fact's triple text to the question, plus the date bonus."""
        triple_scores = self.triple_vectors @ q_vec
        scores = triple_scores[self.kg.triple_of_fact]
        times = question_times(question)
        if times:
            scores = scores + time_bonus(self.kg, np.arange(len(self.kg)), times, self.time_weight)
        return scores

    def retrieve(
        self, questions: Sequence[str], k: int = 50, q_vecs: np.ndarray | None = None, progress: bool = True
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Ranked top-k fact ids per question, and per-question latency in seconds (embedding excluded)."""
        check_params(k=k)
        if q_vecs is None:
            q_vecs = self.embed_questions(questions)
        ranked, latency = [], np.zeros(len(questions))
        for i, (q, vec) in enumerate(
            tqdm(
                list(zip(questions, q_vecs)),
                desc="semantic retrieval",
                disable=not progress or len(questions) < 50,
            )
        ):
            t0 = time.perf_counter()
            ranked.append(top_k_stable(self.fact_scores(vec, q), k).astype(np.int32))
            latency[i] = time.perf_counter() - t0
        return ranked, latency


def pipeline(
    kg,
    questions: Sequence,
    k: int = 20,
    llm=None,
    encoder: Encoder | None = None,
    retriever: SemanticRetriever | None = None,
) -> list[dict]:
    """Naive RAG end to end: retrieve top-k facts, then (if an LLM is given) read a ranked answer list."""
    retriever = retriever or SemanticRetriever(kg, encoder or Encoder())
    ranked, latency = retriever.retrieve([q.question for q in questions], k=k)
    records = [
        {"quid": q.quid, "facts": r.tolist(), "retrieval_s": float(t)}
        for q, r, t in zip(questions, ranked, latency)
    ]
    if llm is not None:
        from temporag.readers import read_many

        results = read_many(
            llm,
            [q.question for q in questions],
            [kg.verbalise_many(r) for r in ranked],
            answer_types=[q.answer_type for q in questions],
        )
        for rec, res in zip(records, results):
            rec["answers"] = list(res.answers)
            rec["error"] = res.error
    return records
