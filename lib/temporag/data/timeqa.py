"""TimeQA (Chen et al., NeurIPS 2021): the human-paraphrased subset and test-sample contexts.

What is staged: ``human_annotated_train.json`` (320 documents, 1,171 questions), the same questions
with their full document context as ``human_train.{easy,hard}.jsonl``, and the 678 deduplicated
contexts of TimeBench's 500 easy + 500 hard test sample.  The main synthetic splits, the human test
files, TimeBench's questions and DyG-RAG's questions are not shared (absent or held out); their
loaders raise ``MissingDataError`` unless ``TEMPORAG_DATA`` points at a folder that has them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from temporag.data import complextr
from temporag.data._read import (
    UniqueKeys,
    get_field,
    get_int,
    get_list,
    get_str,
    load_question_file,
    need_dict,
    read_json_list,
    read_jsonl,
    split_file,
)
from temporag.data.paths import data_file

DATASET = "timeqa"
HUMAN_ANNOTATED_FILES = {
    "train": "timeqa/human_annotated_train.json",
    "test": "timeqa/human_annotated_test.json",
}
HUMAN_FILES = {
    (split, variant): f"timeqa/human_{split}.{variant}.jsonl"
    for split in ("train", "test")
    for variant in ("easy", "hard")
}
TIMEBENCH_CONTEXTS_FILE = "timeqa/timebench/contexts_test_sample.jsonl"
TIMEBENCH_QUESTION_FILES = {v: f"timeqa/timebench/timeqa_{v}_500.jsonl" for v in ("easy", "hard")}
DYG_RAG_QUESTION_FILE = "timeqa/dyg_rag/Question.json"
VARIANTS = ("easy", "hard")

_DOC_HINT = (
    'expected a JSON list of TimeQA documents {"index", "type", "link", '
    '"questions": [[question, [{"para", "from", "end", "answer"}, ...]], ...], "paras": [str, ...]}'
)
_ITEM_HINT = (
    'expected one TimeQA item per line: {"idx", "question", "context", "targets": [str], '
    '"from": [int], "end": [int], "paragraphs": [{"title", "text"}]}'
)
_CONTEXT_HINT = 'expected one context per line: {"doc_id": int, "links": [str], "context": str}'
_TIMEBENCH_HINT = (
    'expected one TimeBench item per line: {"question", "context", "answer": [str], "question_type", "idx"}'
)


@dataclass(frozen=True)
class AnswerSpan:
    """A gold answer and where it sits: characters [start, end) of paragraph ``para``."""

    para: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class HumanQuestion:
    """One question of a human-annotated document; ``idx`` matches the jsonl files' ``idx``."""

    idx: str
    question: str
    spans: tuple[AnswerSpan, ...]

    @property
    def answers(self) -> tuple[str, ...]:
        return tuple(s.text for s in self.spans)


@dataclass(frozen=True)
class Document:
    """A Wikipedia page (``link``) with one temporal relation (``type``, a Wikidata property)."""

    index: str
    type: str
    link: str
    paras: tuple[str, ...]
    questions: tuple[HumanQuestion, ...]


@dataclass(frozen=True)
class Paragraph:
    title: str
    text: str


@dataclass(frozen=True)
class Item:
    """One question with its whole page as ``context``; answer ``starts``/``ends`` index ``context``."""

    idx: str
    question: str
    context: str
    targets: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    paragraphs: tuple[Paragraph, ...]


@dataclass(frozen=True)
class TimeBenchContext:
    """A context chunk of the TimeBench test sample and the TimeQA pages it comes from."""

    doc_id: int
    links: tuple[str, ...]
    context: str


@dataclass(frozen=True)
class TimeBenchQuestion:
    """A TimeBench test item; ``answers == ("",)`` marks an unanswerable question."""

    idx: str
    question: str
    answers: tuple[str, ...]
    question_type: str
    context: str


def _parse_question(doc_index: str, n: int, value: object, where) -> HumanQuestion:
    if not (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], list)
    ):
        raise where.error(f"questions[{n}] should be [question, [answer spans]]")
    spans = []
    for a in value[1]:
        rec = need_dict(a, where)
        spans.append(
            AnswerSpan(
                get_int(rec, "para", where),
                get_int(rec, "from", where),
                get_int(rec, "end", where),
                get_str(rec, "answer", where),
            )
        )
    return HumanQuestion(f"{doc_index}#{n}", value[0], tuple(spans))


def parse_human_annotated(path: str | Path) -> list[Document]:
    """A ``human_annotated_*.json`` file: documents with their paragraphs and span-annotated questions."""
    docs = []
    for where, value in read_json_list(path, _DOC_HINT):
        rec = need_dict(value, where)
        index = get_str(rec, "index", where)
        paras = get_list(rec, "paras", str, where)
        questions = tuple(
            _parse_question(index, n, q, where)
            for n, q in enumerate(get_field(rec, "questions", list, where))
        )
        for q in questions:
            for s in q.spans:
                if not 0 <= s.para < len(paras):
                    raise where.error(f"{q.idx}: answer paragraph {s.para} is outside 0..{len(paras) - 1}")
        docs.append(
            Document(index, get_str(rec, "type", where), get_str(rec, "link", where), paras, questions)
        )
    return docs


def load_human_annotated(split: str = "train", data_dir: str | Path | None = None) -> list[Document]:
    """Human-annotated documents (train: 320 docs / 1,171 questions; test is held out)."""
    if split not in HUMAN_ANNOTATED_FILES:
        raise KeyError(f"unknown split {split!r}; known: {sorted(HUMAN_ANNOTATED_FILES)}")
    return parse_human_annotated(data_file(HUMAN_ANNOTATED_FILES[split], DATASET, data_dir))


def questions_of(documents: list[Document]) -> list[HumanQuestion]:
    """All questions of the documents, in file order."""
    return [q for doc in documents for q in doc.questions]


def parse_items(path: str | Path) -> list[Item]:
    """A ``human_{split}.{easy,hard}.jsonl`` file (one question with its page context per line)."""
    out = []
    for where, value in read_jsonl(path, _ITEM_HINT):
        rec = need_dict(value, where)
        targets = get_list(rec, "targets", str, where)
        starts, ends = get_list(rec, "from", int, where), get_list(rec, "end", int, where)
        if not len(targets) == len(starts) == len(ends):
            raise where.error(
                f"targets/from/end have different lengths ({len(targets)}/{len(starts)}/{len(ends)})"
            )
        paragraphs = []
        for p in get_field(rec, "paragraphs", list, where):
            p = need_dict(p, where)
            paragraphs.append(Paragraph(get_str(p, "title", where), get_str(p, "text", where)))
        out.append(
            Item(
                get_str(rec, "idx", where),
                get_str(rec, "question", where),
                get_str(rec, "context", where),
                targets,
                starts,
                ends,
                tuple(paragraphs),
            )
        )
    return out


def load_human_items(
    variant: str = "easy", split: str = "train", data_dir: str | Path | None = None
) -> list[Item]:
    """Human-paraphrased questions with full context; ``hard`` rewrites the time expression."""
    if (split, variant) not in HUMAN_FILES:
        raise KeyError(f"unknown split/variant {split!r}/{variant!r}; variants: {VARIANTS}")
    return parse_items(data_file(HUMAN_FILES[(split, variant)], DATASET, data_dir))


def load_timebench_contexts(data_dir: str | Path | None = None) -> list[TimeBenchContext]:
    """The 678 distinct contexts of TimeBench's TimeQA test sample (documents only, no questions)."""
    path = data_file(TIMEBENCH_CONTEXTS_FILE, DATASET, data_dir)
    out, ids = [], UniqueKeys("doc_id")
    for where, value in read_jsonl(path, _CONTEXT_HINT):
        rec = need_dict(value, where)
        ctx = TimeBenchContext(
            get_int(rec, "doc_id", where), get_list(rec, "links", str, where), get_str(rec, "context", where)
        )
        ids.add(ctx.doc_id, where)
        out.append(ctx)
    return out


def parse_timebench_questions(path: str | Path) -> list[TimeBenchQuestion]:
    """A TimeBench ``timeqa_{easy,hard}_500.jsonl`` file."""
    out = []
    for where, value in read_jsonl(path, _TIMEBENCH_HINT):
        rec = need_dict(value, where)
        out.append(
            TimeBenchQuestion(
                get_str(rec, "idx", where),
                get_str(rec, "question", where),
                get_list(rec, "answer", str, where),
                get_str(rec, "question_type", where),
                get_str(rec, "context", where),
            )
        )
    return out


def load_timebench_questions(
    variant: str = "easy", data_dir: str | Path | None = None, questions_file: str | Path | None = None
) -> list[TimeBenchQuestion]:
    """TimeBench's 500-question test sample (held out: absent from the shared folder)."""
    return load_question_file(
        parse_timebench_questions,
        questions_file,
        lambda: split_file(TIMEBENCH_QUESTION_FILES, variant, DATASET, data_dir),
    )


def load_dyg_rag_questions(
    data_dir: str | Path | None = None, questions_file: str | Path | None = None
) -> list[complextr.DygQuestion]:
    """DyG-RAG's 2,613 processed TimeQA test questions (held out: absent from the shared folder)."""
    return load_question_file(
        complextr.parse_questions, questions_file, lambda: data_file(DYG_RAG_QUESTION_FILE, DATASET, data_dir)
    )
