"""TimeQuestions (Jia et al., CIKM 2021; EXAQT): questions only, no KG.

The shared folder holds the dev split (3,236 questions); test is held out and train is absent.
Answers are either Wikidata entities (QID + label) or literal values (ISO timestamps, numbers).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from temporag.data._read import (
    UniqueKeys,
    get_field,
    get_int,
    get_list,
    get_str,
    load_question_file,
    need_dict,
    read_json_list,
    split_file,
)

DATASET = "timequestions"
QUESTION_FILES = {split: f"timequestions/questions/{split}.json" for split in ("train", "dev", "test")}
QUESTION_TYPES = ("Explicit", "Implicit", "Temp.Ans", "Ordinal")
ANSWER_TYPES = ("Entity", "Value")
_HINT = (
    'expected a JSON list of TimeQuestions records {"Id", "Question", "Temporal signal", '
    '"Temporal question type", "Answer": [{"AnswerType": "Entity"|"Value", ...}], ...}'
)


@dataclass(frozen=True)
class Answer:
    """An entity (``qid``, ``label``, ``url``) or a literal ``value``; ``text`` is what a reader says."""

    answer_type: str
    qid: str | None = None
    label: str | None = None
    url: str | None = None
    value: str | None = None

    @property
    def text(self) -> str:
        return (self.label if self.answer_type == "Entity" else self.value) or ""


@dataclass(frozen=True)
class Question:
    id: int
    question: str
    signals: tuple[str, ...]
    types: tuple[str, ...]
    answers: tuple[Answer, ...]
    source: str
    created: str
    split: str


def _answer(value: object, where) -> Answer:
    rec = need_dict(value, where)
    kind = get_str(rec, "AnswerType", where)
    if kind == "Entity":
        return Answer(
            kind,
            qid=get_str(rec, "WikidataQid", where),
            label=get_str(rec, "WikidataLabel", where),
            url=get_str(rec, "WikipediaURL", where, optional=True),
        )
    if kind == "Value":
        return Answer(kind, value=get_str(rec, "AnswerArgument", where))
    raise where.error(f"AnswerType {kind!r} is not one of {ANSWER_TYPES}")


def parse_questions(path: str | Path) -> list[Question]:
    """A TimeQuestions JSON file in the EXAQT release format."""
    out, ids = [], UniqueKeys("Id")
    for where, value in read_json_list(path, _HINT):
        rec = need_dict(value, where)
        qid = get_int(rec, "Id", where)
        ids.add(qid, where)
        types = get_list(rec, "Temporal question type", str, where)
        unknown = [t for t in types if t not in QUESTION_TYPES]
        if unknown:
            raise where.error(f"unknown temporal question type(s) {unknown}; known: {QUESTION_TYPES}")
        answers = tuple(_answer(a, where) for a in get_field(rec, "Answer", list, where))
        out.append(
            Question(
                qid,
                get_str(rec, "Question", where),
                get_list(rec, "Temporal signal", str, where),
                types,
                answers,
                get_str(rec, "Data source", where, optional=True) or "",
                get_str(rec, "Question creation date", where, optional=True) or "",
                get_str(rec, "Data set", where, optional=True) or "",
            )
        )
    return out


def load_questions(
    split: str = "dev", data_dir: str | Path | None = None, questions_file: str | Path | None = None
) -> list[Question]:
    """Questions of a split (only dev is shared), or of any file in the same format."""
    return load_question_file(
        parse_questions, questions_file, lambda: split_file(QUESTION_FILES, split, DATASET, data_dir)
    )
