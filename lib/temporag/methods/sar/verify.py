"""Iterative answer verification (Algorithm 1, lines 1–10): a critic returns VALID or INVALID with feedback.

The paper's verifier is an LLM prompt (P_verify) that predicts the expected answer type, checks that the
answer addresses the question with that type, meets every temporal constraint and is supported by the
retrieved facts.  :class:`LLMVerifier` is that prompt in the kit's words.  :class:`RuleVerifier` is the
offline counterpart — labelled as rule-based wherever it is reported — checking the same three things
with the question's template: the answer's type and granularity, that a retrieved fact with the question's
relation supports it, and that the temporal constraint could be applied (the reference event was found).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from temporag.methods.sar.agent import Attempt, Verdict
from temporag.timeutil import try_parse_time

VERIFY_PROMPT = """You check a proposed answer to a question about dated events before it is returned.
1. Say what type of answer the question expects: a name (person, country, organisation) or a date, and how \
precise a date (year, month or day).
2. Check the proposed answer has that type.
3. Check it meets every time condition of the question (before, after, first, last, in, same \
day/month/year as).
4. Check the facts below support it.

Question: {question}
Proposed answer: {answer}
Facts found:
{facts}

Reply with one line: VALID, or INVALID: what is wrong and what to search for instead."""

_INVALID = re.compile(r"\bINVALID\b|\bNOT\s+VALID\b", re.I)
_VALID = re.compile(r"\bVALID\b", re.I)


def parse_verdict(text: str | None) -> Verdict:
    """VALID / INVALID (checked first: "INVALID" contains "VALID") with the feedback after it; a reply with
    neither is taken as VALID and marked "unparsed" (a retry could not use feedback it does not give)."""
    text = (text or "").strip()
    bad = _INVALID.search(text)
    if bad:
        feedback = text[bad.end() :].lstrip(" :.-\n").strip() or "the answer was judged invalid"
        first = re.split(r"(?<=[.!?])\s", feedback.splitlines()[0], maxsplit=1)[0]
        return Verdict(False, first[:200], "llm", text)
    if _VALID.search(text):
        return Verdict(True, "", "llm", text)
    return Verdict(True, "", "unparsed", text)


class LLMVerifier:
    """P_verify through the kit's LLM client; shows the attempt's first ``max_facts`` observed facts."""

    name = "llm"

    def __init__(self, llm, kg, *, max_facts: int = 20, max_tokens: int = 60) -> None:
        self.llm = llm
        self.kg = kg
        self.max_facts = max_facts
        self.max_tokens = max_tokens

    def prepare(self, questions: Sequence[str]) -> None:
        """Nothing to precompute."""

    def verify(self, question: str, attempt: Attempt) -> tuple[Verdict, list]:
        facts = list(dict.fromkeys(attempt.evidence()))[: self.max_facts]
        lines = "\n".join(f"- {self.kg.verbalise(f)}" for f in facts) or "- none"
        prompt = VERIFY_PROMPT.format(question=question, answer=", ".join(attempt.answers[:3]), facts=lines)
        try:
            response = self.llm.chat([{"role": "user", "content": prompt}], max_tokens=self.max_tokens)
        except Exception as exc:  # noqa: BLE001 - a failed check keeps the answer (recorded)
            response = self.llm.error_response(exc)
            return Verdict(True, "", "unparsed", f"verifier call failed: {response.error}"), [response]
        return parse_verdict(response.text), [response]


class RuleVerifier:
    """The offline critic (rule-based, no LLM): type, support and temporal constraint by the template."""

    name = "rules"

    def __init__(self, workspace) -> None:
        self.workspace = workspace

    def prepare(self, questions: Sequence[str]) -> None:
        self.workspace.templates(list(questions))

    def verify(self, question: str, attempt: Attempt) -> tuple[Verdict, list]:
        tq = self.workspace.templates([question])[0]
        kg = self.workspace.kg
        answer = attempt.answers[0]
        if tq.answer_type == "time":
            value = try_parse_time(answer)
            if value is None:
                return Verdict(False, f"expected a date, got {answer!r}", "rules"), []
            if value.granularity != tq.granularity:
                return Verdict(False, f"expected a {tq.granularity}, got {answer!r}", "rules"), []
        elif answer not in kg.label_to_entity:
            return Verdict(False, f"expected an entity of the graph, got {answer!r}", "rules"), []
        reading = self.workspace.reader.read(tq, np.asarray(attempt.evidence(), dtype=np.int64))
        relation = kg.relation_labels[tq.relations[0]] if tq.relations else "the relation"
        resolvable = tq.time is not None or tq.anchor_entity is not None
        if tq.constraint is not None and resolvable and reading.anchor is None:
            return Verdict(
                False,
                "the reference event of the time constraint was not found; search for it more broadly",
                "rules",
            ), []
        if reading.relaxed in ("relation", "all"):
            return Verdict(
                False, f"no retrieved fact has the relation {relation!r}; search without it", "rules"
            ), []
        if answer not in reading.answers:
            return Verdict(
                False,
                f"{answer!r} is not supported by a retrieved fact meeting the question's time condition",
                "rules",
            ), []
        return Verdict(True, "", "rules"), []
