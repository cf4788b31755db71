"""Appendix D: the T1–T5 temporal reasoning types (Fig. 6), by rules offline or by the LLM.

T1 time-anchored (a fixed date, "in / before / after May 2001"), T2 explicit interval ("between X and
Y"), T3 numerical offset from a date ("8 years before April 1926"), T4 event-to-event relative with no
duration ("after he was a member of Isamaa"), T5 multi-hop (a duration and an event).  The groups of
Tables 5 and 10: Explicit = T1 + T2, Relative = T4, Compositional = T3 + T5.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from temporag.llm import LLMError, parse_json_reply
from temporag.timeutil import _OFFSET, extract_time_mentions

TYPES = ("T1", "T2", "T3", "T4", "T5")
GROUPS = {"T1": "Explicit", "T2": "Explicit", "T3": "Compositional", "T4": "Relative", "T5": "Compositional"}
_DURATION = re.compile(_OFFSET, re.I)
_INTERVAL = re.compile(r"\b(between\b.+\band\b|from\b.+\b(?:to|until)\b)", re.I)
_RELATIVE_CUE = re.compile(r"\b(before|after|when|while|during|since|until|prior to)\b", re.I)


def classify_rule(question: str) -> str:
    """The rule-based T1–T5 label of one question (Fig. 6's definitions applied literally)."""
    dates = extract_time_mentions(question)
    duration = _DURATION.search(question)
    if duration:
        tail = question[duration.end() :]
        anchored = any(m.start >= duration.end() for m in dates) and not re.search(
            r"\b(he|she|they|it|him|her|worked|studied|held|was|were|joined|played|member)\b", tail, re.I
        )
        return "T3" if anchored else "T5"
    if len(dates) >= 2 and _INTERVAL.search(question):
        return "T2"
    if dates:
        return "T1"
    return "T4" if _RELATIVE_CUE.search(question) else "T1"


CLASSIFY_PROMPT = """Classify the temporal reasoning type of the question.
T1 time-anchored: a fixed date or period ("in 2001", "since 2001", "before May 2001"); no other event,
no duration.
T2 explicit interval: a fixed start and end ("between X and Y", "from X to Y").
T3 numerical offset from a date: a duration applied to a fixed date ("8 years before April 1926").
T4 event-to-event: time given relative to another event, with no duration ("after he was a member of Isamaa").
T5 multi-hop: a duration and an event together ("3 years after he worked for University B").
Reply with JSON only: {{"type": "T1" | "T2" | "T3" | "T4" | "T5"}}
Question: {question}"""


def classify_llm(questions: Sequence[str], llm) -> list[str]:
    """Fig. 6 by the LLM; an unusable reply falls back to the rule label."""
    prompts = [[{"role": "user", "content": CLASSIFY_PROMPT.format(question=q)}] for q in questions]
    out = []
    for q, r in zip(
        questions, llm.chat_many(prompts, json_mode=True, max_tokens=20, desc="T1-T5 classifier")
    ):
        label = None
        if r.error is None:
            try:
                obj = parse_json_reply(r.text)
                label = str(obj.get("type", "")).upper().strip() if isinstance(obj, dict) else None
            except LLMError:
                label = None
        out.append(label if label in TYPES else classify_rule(q))
    return out


def classify(questions: Sequence[str], classifier: str = "rule", llm=None) -> list[str]:
    """T1–T5 labels with ``classifier="rule"`` (offline) or ``"llm"`` (Fig. 6)."""
    if classifier == "rule":
        return [classify_rule(q) for q in questions]
    if classifier == "llm":
        if llm is None:
            raise ValueError("classifier='llm' needs an LLM client")
        return classify_llm(questions, llm)
    raise ValueError(f"classifier must be 'rule' or 'llm', got {classifier!r}")
