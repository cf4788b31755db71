"""ComplexTR (Tan et al., 2024) in DyG-RAG's processed form: a 112-document corpus + gold questions.

Only the test set exists; the shared folder holds a seeded half of its 329 questions (164), the
other half is held out.  DyG-RAG's corpus/question format is also used by its demo corpus and by
its TimeQA/TempReason questions, so the two format readers here are reused by those loaders.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from temporag.data._read import (
    UniqueKeys,
    get_int,
    get_str,
    load_question_file,
    need_dict,
    read_json_list,
    split_file,
)
from temporag.data.paths import data_file

DATASET = "complextr"
CORPUS_FILE = "complextr/dyg_rag/Corpus.json"
QUESTION_FILES = {
    "shared_half": "complextr/dyg_rag/Question.shared_half.json",
    "holdout_half": "complextr/dyg_rag/Question.holdout_half.json",
}
DEMO_CORPUS_FILE = "dyg-rag/demo_Corpus.json"
_CORPUS_HINT = 'expected a JSON list of {"doc_id": int, "title": str, "context": str} (DyG-RAG Corpus.json)'
_QUESTION_HINT = 'expected a JSON list of {"id": int, "question": str, "answer": str} (DyG-RAG Question.json)'


@dataclass(frozen=True)
class CorpusDoc:
    doc_id: int
    title: str
    context: str


@dataclass(frozen=True)
class DygQuestion:
    """One DyG-RAG question: a single gold answer string."""

    id: int
    question: str
    answer: str


def parse_corpus(path: str | Path) -> list[CorpusDoc]:
    """A DyG-RAG ``Corpus.json`` (any data set); doc ids must be unique."""
    docs, ids = [], UniqueKeys("doc_id")
    for where, value in read_json_list(path, _CORPUS_HINT):
        rec = need_dict(value, where)
        doc = CorpusDoc(
            get_int(rec, "doc_id", where), get_str(rec, "title", where), get_str(rec, "context", where)
        )
        ids.add(doc.doc_id, where)
        docs.append(doc)
    return docs


def parse_questions(path: str | Path) -> list[DygQuestion]:
    """A DyG-RAG ``Question.json`` (any data set); question ids must be unique."""
    out, ids = [], UniqueKeys("id")
    for where, value in read_json_list(path, _QUESTION_HINT):
        rec = need_dict(value, where)
        q = DygQuestion(
            get_int(rec, "id", where), get_str(rec, "question", where), get_str(rec, "answer", where)
        )
        ids.add(q.id, where)
        out.append(q)
    return out


def load_corpus(data_dir: str | Path | None = None) -> list[CorpusDoc]:
    """The 112 ComplexTR documents DyG-RAG retrieves from."""
    return parse_corpus(data_file(CORPUS_FILE, DATASET, data_dir))


def load_questions(
    split: str = "shared_half", data_dir: str | Path | None = None, questions_file: str | Path | None = None
) -> list[DygQuestion]:
    """ComplexTR gold questions of a split, or of any file in the same format (``questions_file`` wins)."""
    return load_question_file(
        parse_questions, questions_file, lambda: split_file(QUESTION_FILES, split, DATASET, data_dir)
    )


def load_demo_corpus(data_dir: str | Path | None = None) -> list[CorpusDoc]:
    """DyG-RAG's 12-document demo corpus (a TimeQA example), handy for quick notebook smoke runs."""
    return parse_corpus(data_file(DEMO_CORPUS_FILE, "dyg-rag", data_dir))
