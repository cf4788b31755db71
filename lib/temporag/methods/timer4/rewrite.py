"""Rewrite (Eq. 5, Algorithm 1 line 7): implicit temporal references become explicit dates.

"After the Danish ministry, who was the first to visit Iraq?" names no date; the fact retriever's
background facts contain the ministry's visit, and the rewrite turns the question into "After
2008-03-01, who was the first to visit Iraq?", which the time-aware retriever and the rerank can use.

* :func:`llm_rewrite` — the paper's step: the LLM sees the background facts and the question (the kit's
  own prompt in the structure of the paper's Figure 5: task, one worked example, facts, question) and
  returns the question with explicit timestamps, or the question unchanged when it is unsure.  Replies
  go through the kit's client, so they are cached.
* :func:`offline_rewrite` — no LLM: the kit's offline parse (TECQA's :class:`OfflineParser`) finds the
  entity that names the reference event ("after X", "before X", "in the same month as X"); the best
  background fact involving X (the pivot entity and the parsed relation preferred, then retrieval rank)
  gives the date, which replaces the reference at the question's granularity.  No such fact: unchanged.

Both return :class:`Rewrite` records.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from temporag.timeutil import iso_day

REWRITE_MODES = ("offline", "llm", "none")

REWRITE_PROMPT = """Rewrite the question so that every time it refers to through an event becomes an \
explicit date taken from the facts below (or from what you know). Keep every other word. Reply with the \
rewritten question only, without any explanation. If you are not sure, reply with the question unchanged.

Example. From the fact "[Kenya, Sign formal agreement, Uganda, 2009-06-14]" the question
"Who was the first to praise Uganda after Kenya signed an agreement with it?" becomes
"Who was the first to praise Uganda after 2009-06-14?"

Facts:
{facts}

Question: {question}
Rewritten question:"""


@dataclass(frozen=True)
class Rewrite:
    """One question before and after the rewrite, with where the date came from."""

    question: str
    rewritten: str
    method: str
    source_fact: int | None = None
    reference: str | None = None
    raw: dict = field(default_factory=dict, compare=False)

    @property
    def changed(self) -> bool:
        return self.rewritten.strip() != self.question.strip()

    def to_dict(self) -> dict:
        return {
            "rewritten": self.rewritten,
            "changed": self.changed,
            "method": self.method,
            "source_fact": self.source_fact,
            "reference": self.reference,
            **({"raw": self.raw} if self.raw else {}),
        }


def unchanged(questions: Sequence[str]) -> list[Rewrite]:
    """w/o rewrite: every question as it is."""
    return [Rewrite(q, q, "none") for q in questions]


# ----------------------------------------------------------------------------------------------------
# LLM


def fact_lines(kg, facts: Sequence[int]) -> str:
    """Facts as '[s, p, o, YYYY-MM-DD]' lines, the form of the paper's rewriting example."""
    return "\n".join(f"[{s}, {r}, {o}, {d}]" for s, r, o, d in kg.as_quadruples(facts))


def _reply_question(reply: str, question: str) -> str:
    """The rewritten question from a reply; the original when the reply is empty or not a question."""
    for line in (reply or "").splitlines():
        line = line.strip().strip("'\"`*").strip()
        line = re.sub(r"^(rewritten question|question|answer)\s*:\s*", "", line, flags=re.I).strip("'\"` ")
        if not line:
            continue
        words = len(line.split())
        if words < 3 or words > 3 * len(question.split()) + 5:
            return question
        return line
    return question


def llm_rewrite(
    llm,
    kg,
    questions: Sequence[str],
    background: Sequence[Sequence[int]],
    *,
    facts: int = 15,
    progress: bool = True,
) -> list[Rewrite]:
    """Eq. 5: q* = LLM(Prompt(q, f)) with the top ``facts`` background facts of each question."""
    prompts = [
        [
            {
                "role": "user",
                "content": REWRITE_PROMPT.format(facts=fact_lines(kg, list(bg)[:facts]), question=q),
            }
        ]
        for q, bg in zip(questions, background, strict=True)
    ]
    replies = llm.chat_many(prompts, max_tokens=64, progress=progress, desc="TimeR4 rewrite")
    return [
        Rewrite(
            q,
            _reply_question(r.text, q) if r.error is None else q,
            "llm",
            raw={"reply": r.text, **({"error": r.error} if r.error else {})},
        )
        for q, r in zip(questions, replies)
    ]


# ----------------------------------------------------------------------------------------------------
# offline rule

_BEFORE_AFTER = re.compile(r"\b(before|after)\s+(?:the\s+)?$", re.I)
_SAME_PERIOD = re.compile(
    r"(?:\b(?:in|on|during)\s+)?\bthe\s+same\s+(day|month|year)\s+(?:as|of|that)\s+(?:the\s+)?$", re.I
)
_TRAILING_AUX = re.compile(r"^\s+(did|does|do|had|has|was|were)\b(?=\s*[?,.]|\s*$)", re.I)
_CUT = {"day": 10, "month": 7, "year": 4}


def reference_fact(kg, background: Sequence[int], reference: int, main: int | None, relation: int | None):
    """The best background fact naming the reference entity: also the pivot and the parsed relation
    preferred, then the retrieval rank.  None when no background fact names it."""
    best, best_key = None, None
    for rank, f in enumerate(background):
        f = int(f)
        ends = (int(kg.s[f]), int(kg.o[f]))
        if reference not in ends:
            continue
        key = (-(main is not None and main in ends and main != reference), -(int(kg.r[f]) == relation), rank)
        if best_key is None or key < best_key:
            best, best_key = f, key
    return best


def rewrite_one(kg, question: str, constraints, background: Sequence[int]) -> Rewrite:
    """The offline rule for one parsed question (``constraints`` from TECQA's offline parser)."""
    mentions = constraints.raw.get("constraint_mentions", [])
    entities = constraints.raw.get("constraint_entities", [])
    relation = constraints.relations[0] if constraints.relations else None
    for text, entity in zip(mentions, entities):
        start = question.find(text)
        if start < 0:
            continue
        end = start + len(text)
        head = question[:start]
        same = _SAME_PERIOD.search(head)
        ba = None if same else _BEFORE_AFTER.search(head)
        if not (same or ba):
            continue
        fact = reference_fact(kg, background, int(entity), constraints.main, relation)
        if fact is None:
            continue
        iso = iso_day(int(kg.t_start[fact]))
        tail = _TRAILING_AUX.sub("", question[end:], count=1)
        if same:
            gran = same.group(1).lower()
            lead = ("on" if gran == "day" else "in") if same.start() else ("On" if gran == "day" else "In")
            new = f"{head[: same.start()]}{lead} {iso[: _CUT[gran]]}{tail}"
        else:
            new = f"{head[: ba.start()]}{ba.group(1)} {iso}{tail}"
        return Rewrite(question, new, "offline", fact, text)
    return Rewrite(question, question, "offline")


def offline_rewrite(
    kg, parser, questions: Sequence[str], background: Sequence[Sequence[int]]
) -> list[Rewrite]:
    """The rule rewrite for many questions (one batched offline parse)."""
    parsed = parser.parse_many(list(questions))
    return [
        rewrite_one(kg, q, c, np.asarray(bg)) for q, c, bg in zip(questions, parsed, background, strict=True)
    ]


def linked_background(kg, parser, questions: Sequence[str], n: int) -> list[np.ndarray]:
    """w/o fact retrieval (Table 5): background facts from entity linking instead of the FKS — the KG
    facts joining the question's linked entities, the parsed relation first, then chronological."""
    out = []
    for c in parser.parse_many(list(questions)):
        ents = [e for e in c.entities]
        if not ents:
            out.append(np.empty(0, dtype=np.int64))
            continue
        facts = kg.by_entity.many(ents)
        if len(ents) > 1:
            both = np.isin(kg.s[facts], ents) & np.isin(kg.o[facts], ents)
            facts = facts[both] if both.any() else facts
        rel = c.relations[0] if c.relations else -1
        order = np.lexsort((facts, kg.t_start[facts], kg.r[facts] != rel))
        out.append(facts[order][:n].astype(np.int64))
    return out
