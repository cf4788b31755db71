"""TempReason (Tan et al., ACL 2023): test questions per level, id joins, TimeBench facts/contexts.

Only test questions exist (closed-book "pure" setting), split 50/50 into a shared and a held-out
half by row.  L2/L3 rows have TempReason's own ids (and L2 the exact date and all golds) joined in;
about a fifth of them also have the official ReasonQA ``fact_context`` and OBQA ``context`` (from
TimeBench), and the distinct documents of those are a small retrieval corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from temporag.data._read import (
    UniqueKeys,
    get_int,
    get_list,
    get_str,
    load_question_file,
    need_dict,
    read_jsonl,
)
from temporag.data.paths import data_file

DATASET = "tempreason"
LEVELS = ("l1", "l1_future", "l2", "l3")
JOINED_LEVELS = ("l2", "l3")
HALVES = ("shared", "holdout")
CORPUS_FILE = "tempreason/timebench_context/corpus_docs.jsonl"
DOC_KINDS = ("context", "fact_context")
_Q_HINT = 'expected one question per line: {"row": int, "level": str, "question": str, "answer": str}'
_IDS_HINT = 'expected one join per line: {"row": int, "level": str, "original_id": str, ...}'
_CTX_HINT = (
    'expected one item per line: {"row", "level", "original_id", "question", "answers": [str], '
    '"fact_context", "context", "timebench_line"}'
)
_DOC_HINT = (
    'expected one document per line: {"doc_id": int, "kind": "context"|"fact_context", "keys": [str], "text"}'
)


@dataclass(frozen=True)
class Question:
    """``row`` is the 0-based row of the source CSV: the key every join uses."""

    row: int
    level: str
    question: str
    answer: str


@dataclass(frozen=True)
class QuestionIds:
    """TempReason's id (``L<level>_<QID>_<property>_<n>``); L2 adds the date and all golds joined by ', '."""

    row: int
    level: str
    original_id: str
    date: str | None = None
    answer_dyg_rag: str | None = None

    @property
    def doc_key(self) -> str:
        """``L<level>_<QID>_<property>``: the key of this question's documents in the corpus."""
        return self.original_id.rsplit("_", 1)[0]


@dataclass(frozen=True)
class ContextItem:
    """A question with its facts (ReasonQA setting) and Wikipedia context (OBQA setting)."""

    row: int
    level: str
    original_id: str
    question: str
    answers: tuple[str, ...]
    fact_context: str
    context: str
    timebench_line: int


@dataclass(frozen=True)
class CorpusDoc:
    doc_id: int
    kind: str
    keys: tuple[str, ...]
    text: str


def _check_level(level: str, allowed: tuple[str, ...]) -> None:
    if level not in allowed:
        raise KeyError(f"unknown TempReason level {level!r}; known: {allowed}")


def _check_half(half: str) -> None:
    if half not in HALVES:
        raise KeyError(f"unknown half {half!r}; known: {HALVES}")


def _check_row(rec: dict, where, rows: UniqueKeys, level: str | None) -> tuple[int, str]:
    row, rec_level = get_int(rec, "row", where), get_str(rec, "level", where)
    if level is not None and rec_level != level:
        raise where.error(f"level {rec_level!r} in a {level} file")
    rows.add(row, where)
    return row, rec_level


def question_file(level: str, half: str = "shared") -> str:
    _check_level(level, LEVELS)
    _check_half(half)
    return f"tempreason/test_{level}.{half}_half.jsonl"


def parse_questions(path: str | Path, level: str | None = None) -> list[Question]:
    """Questions in the kit's TempReason JSONL format; ``level`` (if given) must match every record."""
    out: list[Question] = []
    rows = UniqueKeys("row")
    for where, value in read_jsonl(path, _Q_HINT):
        rec = need_dict(value, where)
        row, rec_level = _check_row(rec, where, rows, level)
        out.append(Question(row, rec_level, get_str(rec, "question", where), get_str(rec, "answer", where)))
    return out


def load_questions(
    level: str = "l2",
    half: str = "shared",
    data_dir: str | Path | None = None,
    questions_file: str | Path | None = None,
) -> list[Question]:
    """Test questions of one level (shared half: l1 2,000, l1_future 1,000, l2 2,698, l3 2,213)."""
    return load_question_file(
        lambda path: parse_questions(path, level if questions_file is None else None),
        questions_file,
        lambda: data_file(question_file(level, half), DATASET, data_dir),
    )


def load_ids(
    level: str = "l2", half: str = "shared", data_dir: str | Path | None = None
) -> dict[int, QuestionIds]:
    """Row → TempReason id (L2 also the exact date and DyG-RAG's full gold list) for L2/L3."""
    _check_level(level, JOINED_LEVELS)
    _check_half(half)
    path = data_file(f"tempreason/ids/test_{level}.{half}_half.ids.jsonl", DATASET, data_dir)
    out: dict[int, QuestionIds] = {}
    rows = UniqueKeys("row")
    for where, value in read_jsonl(path, _IDS_HINT):
        rec = need_dict(value, where)
        row, rec_level = _check_row(rec, where, rows, level)
        out[row] = QuestionIds(
            row,
            rec_level,
            get_str(rec, "original_id", where),
            get_str(rec, "date", where, optional=True),
            get_str(rec, "answer_dyg_rag", where, optional=True),
        )
    return out


def load_with_context(
    level: str = "l2", half: str = "shared", data_dir: str | Path | None = None
) -> list[ContextItem]:
    """L2/L3 questions that have facts and context (shared half: 513 L2, 434 L3)."""
    _check_level(level, JOINED_LEVELS)
    _check_half(half)
    path = data_file(
        f"tempreason/timebench_context/test_{level}.{half}_half.with_context.jsonl", DATASET, data_dir
    )
    out: list[ContextItem] = []
    rows = UniqueKeys("row")
    for where, value in read_jsonl(path, _CTX_HINT):
        rec = need_dict(value, where)
        row, rec_level = _check_row(rec, where, rows, level)
        out.append(
            ContextItem(
                row,
                rec_level,
                get_str(rec, "original_id", where),
                get_str(rec, "question", where),
                get_list(rec, "answers", str, where),
                get_str(rec, "fact_context", where),
                get_str(rec, "context", where),
                get_int(rec, "timebench_line", where),
            )
        )
    return out


def load_corpus_docs(data_dir: str | Path | None = None) -> list[CorpusDoc]:
    """The 1,995 distinct documents (222 contexts, 1,773 fact blocks) behind the L2/L3 context items."""
    path = data_file(CORPUS_FILE, DATASET, data_dir)
    out: list[CorpusDoc] = []
    ids = UniqueKeys("doc_id")
    for where, value in read_jsonl(path, _DOC_HINT):
        rec = need_dict(value, where)
        doc = CorpusDoc(
            get_int(rec, "doc_id", where),
            get_str(rec, "kind", where),
            get_list(rec, "keys", str, where),
            get_str(rec, "text", where),
        )
        if doc.kind not in DOC_KINDS:
            raise where.error(f"kind {doc.kind!r} is not one of {DOC_KINDS}")
        ids.add(doc.doc_id, where)
        out.append(doc)
    return out
