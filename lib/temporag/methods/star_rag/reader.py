"""STAR-RAG's reader prompt (Appendix E's task in the kit's own words) and its answer clean-up.

The reader itself is the kit's one reader, :func:`temporag.answer.readers.read_many`: STAR-RAG hands it this
prompt builder, this answer post-processing, the completion budget and *no* stop sequence (the
Appendix-E reply may hold a "Thought:" before its list).  The messages and parameters are pinned byte for
byte by the tests, so cached replies stay valid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial

from temporag.answer.readers import read_many
from temporag.llm import cl100k_count

READER_STYLES = ("plain", "appendix-e")

_READER_SYSTEM = (
    "You answer questions about dated events between actors. Each event reads "
    "'subject relation object on date': the subject does the relation to the object, so keep that "
    "direction. Use the events whose relation matches the question, then apply the question's time "
    "condition exactly: before or after a date or another event, the first or the last one, or a "
    "given year, month or day. Reply with 'Answer:' and a Python list of strings, nothing else."
)

_DEMO = (
    "Example (not about the events below).\n"
    "Events:\n"
    "1. Kenya Praise or endorse Uganda on 2009-03-02\n"
    "2. Kenya Praise or endorse Tanzania on 2009-06-15\n"
    "3. Kenya Praise or endorse Rwanda on 2010-01-20\n"
    "Question: Who did Kenya praise last before Rwanda?\n"
    "Answer: ['Tanzania', 'Uganda']"
)
_THOUGHT_DEMO = "Thought: Kenya praised Rwanda on 2010-01-20; the latest earlier praise is Tanzania.\n"

_ANSWER_FORMAT = {
    "entity": "Candidates are names written as in the events.",
    "time": "Candidates are dates written YYYY-MM-DD, YYYY-MM or YYYY, as precise as the question asks.",
}


def build_star_prompt(
    question: str,
    events: Sequence[str],
    answer_type: str | None = None,
    n_candidates: int = 10,
    one_shot: bool = False,
    thought: bool = False,
) -> list[dict[str, str]]:
    """System + user messages: the numbered events, the question, and the request for ``n_candidates``
    ranked answer candidates as a Python list.

    Appendix E adds a one-shot demonstration and a "Thought:" before the answer: ``one_shot`` and
    ``thought`` switch them on (the kit's own example and wording).  Both are off for the embedded 135M
    reader, which copies the demonstration's events into its answers and does not reason usefully."""
    listed = "\n".join(f"{i}. {e}" for i, e in enumerate(events, 1)) or "(no events retrieved)"
    demo = _DEMO.replace("Answer:", _THOUGHT_DEMO + "Answer:") if thought else _DEMO
    ask = (
        f"Write 'Thought:' with one short sentence, then 'Answer:' and a Python list of up to "
        f"{n_candidates} short answer candidates, best first."
        if thought
        else f"Write 'Answer:' and a Python list of up to {n_candidates} short answer candidates, best first."
    )
    parts = [
        demo if one_shot else "",
        f"Events:\n{listed}",
        f"Question: {question.strip()}",
        _ANSWER_FORMAT.get(answer_type or "", ""),
        ask,
    ]
    return [
        {"role": "system", "content": _READER_SYSTEM},
        {"role": "user", "content": "\n\n".join(p for p in parts if p)},
    ]


def style_flags(reader_style: str) -> tuple[bool, bool]:
    """(one_shot, thought) of a reader style: "appendix-e" switches both on, "plain" neither."""
    if reader_style not in READER_STYLES:
        raise ValueError(f"reader_style must be one of {READER_STYLES}, got {reader_style!r}")
    appendix_e = reader_style == "appendix-e"
    return appendix_e, appendix_e


def reader_budget(n_candidates: int = 10, thought: bool = False) -> int:
    """Completion tokens: room for ``n_candidates`` short names (≈ 12 tokens each), plus a thought."""
    return 16 + 12 * n_candidates + (60 if thought else 0)


def prompt_tokens(messages: list[dict[str, str]]) -> int:
    """Tokens of a prompt by cl100k_base (the kit's labelled fallback count; no model needed)."""
    return cl100k_count("\n".join(f"{m['role']}: {m['content']}" for m in messages))


_DATE_TAIL = re.compile(r"\s+(?:on|in|at)\s+\d{4}(?:-\d{2}){0,2}\s*$", re.I)


def clean_candidate(answer: str, answer_type: str | None) -> str:
    """Drop the date an entity candidate copied from its event line ('Iran on 2005-03-02' → 'Iran')."""
    return _DATE_TAIL.sub("", answer).strip() if answer_type == "entity" else answer


def clean_answers(answers: Sequence[str], answer_type: str | None) -> list[str]:
    """The reader's parsed candidates, cleaned, without empties and repeats (rank order kept)."""
    return list(dict.fromkeys(a for a in (clean_candidate(x, answer_type) for x in answers) if a))


def read_events(
    llm,
    questions: Sequence,
    events: Sequence[Sequence[str]],
    *,
    reader_style: str = "plain",
    top_k: int = 10,
    progress: bool = True,
    desc: str = "STAR-RAG reader",
) -> list:
    """Ranked answer candidates for each question record from its events, through the kit's one reader
    (:func:`temporag.answer.readers.read_many`) with STAR-RAG's prompt, budget, clean-up and no stop
    sequence."""
    one_shot, thought = style_flags(reader_style)
    return read_many(
        llm,
        [q.question for q in questions],
        events,
        answer_types=[q.answer_type for q in questions],
        top_k=top_k,
        max_tokens=reader_budget(top_k, thought),
        stop=None,
        progress=progress,
        desc=desc,
        prompt_builder=partial(build_star_prompt, n_candidates=top_k, one_shot=one_shot, thought=thought),
        postprocess=clean_answers,
    )


class StarReader:
    """STAR-RAG's reader for any retriever that has ``evidence_lines``, ``reader_style`` and ``name``:
    the same prompt, budget and clean-up whatever the evidence, so two retrievers compare on what they
    show the reader and nothing else."""

    reader_style: str = "plain"

    def prompt(self, question, ids: Sequence[int], top_k: int = 10) -> list[dict[str, str]]:
        """The reader messages for one question record and its evidence (their tokens are counted)."""
        one_shot, thought = style_flags(self.reader_style)
        return build_star_prompt(
            question.question, self.evidence_lines(ids), question.answer_type, top_k, one_shot, thought
        )

    def read(self, llm, questions: Sequence, retrieval, *, top_k: int = 10, progress: bool = True, desc=None):
        """Ranked answer candidates from each question's evidence lines (:func:`read_events`)."""
        return read_events(
            llm,
            questions,
            [self.evidence_lines(ids) for ids in retrieval.ids],
            reader_style=self.reader_style,
            top_k=top_k,
            progress=progress,
            desc=desc or f"reader: {self.name}",
        )
