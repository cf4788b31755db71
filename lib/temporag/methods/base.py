"""The one retrieval interface every method implements, so notebooks and the leaderboard call them alike.

A method ranks *evidence ids* for each question: KG fact ids (rows of ``TemporalKG``) for the MultiTQ
methods, or unit ids of a document corpus (IA-RAG's interval event units) for the document methods —
``Retrieval.evidence`` says which.  ``Method.evidence_lines`` turns ids into the text a reader sees,
so one reader path (``temporag.answer.readers``) serves every method, and ``Method.pipeline`` returns the
same per-question record for all of them: what was retrieved, what the reader answered, and what it
cost (LLM calls, tokens, seconds).

An agentic method (SAR) interleaves retrieval and reading: it overrides ``pipeline`` and still
returns :class:`QuestionRecord` rows, with the sum of its calls and tokens.

The retrieval contract (``tests/test_method_contract.py`` checks it for every registered method)::

    retrieve(questions, k=None, *, progress=True, **shared) -> Retrieval

one ranking per question, each within ``k`` as the method reads it (:meth:`Method.within_k`; ``k=None``
means the method's documented :attr:`Method.default_k`), evidence of the method's declared kind.
``shared`` are inputs a caller computes once for many methods (:data:`SHARED_INPUTS`); a method uses
those it can and ignores the others, and an unknown name is an error (:func:`check_shared`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from temporag.answer.readers import read_many

EVIDENCE_KINDS = ("kg_fact", "document_unit")

#: what a caller may pass to every method's ``retrieve`` as a keyword, computed once for many methods
SHARED_INPUTS = {
    "q_vecs": "the questions' vectors from the kit's encoder (SemanticRetriever.embed_questions: float32, "
    "one unit-norm row per question, in question order); methods that embed with the same encoder reuse "
    "them instead of embedding again",
}


def check_shared(shared: dict) -> None:
    """Refuse a shared input the kit does not define (a typo would otherwise be ignored silently)."""
    unknown = sorted(set(shared) - set(SHARED_INPUTS))
    if unknown:
        raise TypeError(f"unknown shared input(s) {unknown}; the shared inputs are {sorted(SHARED_INPUTS)}")


def question_texts(questions: Sequence) -> list[str]:
    """The question strings of question records (anything with ``.question``) or of plain strings, so a
    method's ``retrieve`` serves notebooks (records) and benches (texts) alike."""
    return [q if isinstance(q, str) else q.question for q in questions]


@dataclass
class Retrieval:
    """Ranked evidence ids per question, per-question retrieval latency, optional per-question traces.

    ``latency_s`` excludes question embedding (shared by every method), so latencies compare methods.
    ``traces`` hold whatever a method wants to show of one question's retrieval (anchors, rules, a
    parse); they must be JSON-ready dicts so they can go into ``results.json``.
    """

    ids: list[np.ndarray]
    latency_s: np.ndarray
    traces: list[dict[str, Any]] | None = None
    evidence: str = "kg_fact"

    def __post_init__(self) -> None:
        self.ids = [np.asarray(r, dtype=np.int64) for r in self.ids]
        self.latency_s = np.asarray(self.latency_s, dtype=float)
        if len(self.latency_s) != len(self.ids):
            raise ValueError(f"{len(self.ids)} rankings but {len(self.latency_s)} latencies")
        if self.traces is not None and len(self.traces) != len(self.ids):
            raise ValueError(f"{len(self.ids)} rankings but {len(self.traces)} traces")
        if self.evidence not in EVIDENCE_KINDS:
            raise ValueError(f"evidence must be one of {EVIDENCE_KINDS}, got {self.evidence!r}")

    def __len__(self) -> int:
        return len(self.ids)

    def top(self, k: int) -> list[np.ndarray]:
        """The first ``k`` ids of every ranking (a method may return fewer)."""
        if k <= 0:
            raise ValueError(f"k must be a positive number of evidence items, got {k}")
        return [r[:k] for r in self.ids]

    def sizes(self) -> np.ndarray:
        return np.array([len(r) for r in self.ids], dtype=int)

    def select(self, index: Sequence[int], k: int | None = None) -> Retrieval:
        """The rankings of the questions at ``index`` (e.g. a reader sample), cut to their first ``k`` ids."""
        return Retrieval(
            [self.ids[i][:k] for i in index],
            self.latency_s[list(index)],
            None if self.traces is None else [self.traces[i] for i in index],
            self.evidence,
        )


@dataclass(frozen=True)
class QuestionRecord:
    """One question through a method's pipeline; ``to_dict`` is what ``results.json`` stores."""

    quid: Any
    evidence_ids: list[int]
    retrieval_s: float
    answers: list[str] = field(default_factory=list)
    error: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reader_s: float = 0.0
    trace: dict[str, Any] | None = None

    @property
    def answered(self) -> bool:
        """The reader produced a reply (a failed call is not a wrong answer)."""
        return self.llm_calls > 0 and self.error is None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if out["trace"] is None:
            del out["trace"]
        return out


class Method(ABC):
    """What every method provides.  Subclasses set ``name`` and ``evidence`` and implement ``retrieve``
    and ``evidence_lines``; the default ``read`` and ``pipeline`` use the kit's one reader."""

    name: str = "method"
    evidence: str = "kg_fact"
    #: extra instructions for the reader prompt (the paper's reasoning rules), None for the default
    reader_instructions: str | None = None
    #: what ``retrieve`` gives when ``k`` is None: the method's native context size (None: all it finds)
    default_k: int | None = None

    @abstractmethod
    def retrieve(
        self, questions: Sequence, k: int | None = None, *, progress: bool = True, **shared
    ) -> Retrieval:
        """Ranked evidence ids for each question record (records carry ``.question``); ``k=None`` means
        :attr:`default_k`; ``shared`` are :data:`SHARED_INPUTS` a caller computed once."""

    def within_k(self, ids: Sequence[int], k: int) -> bool:
        """Whether one ranking respects ``k`` as this method reads it: at most ``k`` items, unless the
        method's ``k`` counts something else (groups of events, facts per search step)."""
        return len(ids) <= k

    @abstractmethod
    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        """The text a reader is shown for these evidence ids, in the given order."""

    def read(self, llm, questions: Sequence, retrieval: Retrieval, *, top_k: int = 10, progress: bool = True):
        """Answers from each question's retrieved evidence, through ``readers.read_many``."""
        return read_many(
            llm,
            [q.question for q in questions],
            [self.evidence_lines(ids) for ids in retrieval.ids],
            answer_types=[getattr(q, "answer_type", None) for q in questions],
            top_k=top_k,
            instructions=self.reader_instructions,
            progress=progress,
            desc=f"{self.name} reader",
        )

    def pipeline(
        self, questions: Sequence, llm=None, *, k: int | None = 20, top_k: int = 10, progress: bool = True
    ) -> list[QuestionRecord]:
        """Retrieve the top ``k`` for every question, then (with an ``llm``) read ranked answers."""
        retrieval = self.retrieve(questions, k, progress=progress)
        results = self.read(llm, questions, retrieval, top_k=top_k, progress=progress) if llm else None
        return records_from(questions, retrieval, results)


def records_from(questions: Sequence, retrieval: Retrieval, reader_results=None) -> list[QuestionRecord]:
    """Join a retrieval and (optionally) reader results into per-question records."""
    if len(questions) != len(retrieval):
        raise ValueError(f"{len(questions)} questions but {len(retrieval)} rankings")
    out = []
    for i, q in enumerate(questions):
        base = dict(
            quid=getattr(q, "quid", i),
            evidence_ids=retrieval.ids[i].tolist(),
            retrieval_s=float(retrieval.latency_s[i]),
            trace=retrieval.traces[i] if retrieval.traces is not None else None,
        )
        if reader_results is not None:
            res = reader_results[i]
            resp = res.response
            ok = resp is not None and resp.error is None
            base.update(
                answers=list(res.answers),
                error=res.error,
                llm_calls=1 if resp is not None else 0,
                prompt_tokens=resp.prompt_tokens if ok else 0,
                completion_tokens=resp.completion_tokens if ok else 0,
                reader_s=float(resp.original_latency_s or resp.latency_s) if ok else 0.0,
            )
        out.append(QuestionRecord(**base))
    return out
