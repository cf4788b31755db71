"""The agent loop of Algorithm 1: REASONING (lines 11–23) inside the verification loop (lines 1–10).

One loop serves every policy: a policy only writes the next "Thought: … Action: …" turn, the loop parses
it (:func:`~.actions.parse_step`), runs SEARCH, keeps the thought / action / observation memory and
stops.  So the LLM policy and the offline scripted policy leave the same traces and the same records.

Every way a REASONING attempt can end is an *outcome*, recorded, never an exception:

* ``finish`` — the policy gave FINISH(answer);
* ``malformed_action`` — a turn held no readable action twice in a row (the first gets a reminder);
* ``repeated_search`` — the policy issued a SEARCH identical to an earlier one (it would see the same facts);
* ``step_budget`` — ``max_steps`` turns passed without FINISH;
* ``llm_error`` — the model call failed after the client's retries (the record carries the error).

Verification (lines 3–9): after each attempt the verifier returns VALID or INVALID with feedback; on
INVALID the agent reasons again from a fresh memory with all feedback so far, at most N times.  An attempt
without an answer is INVALID without asking the verifier, and the verdict on the last allowed attempt is
not requested because it could not change the returned answer (both save calls, same answers).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from temporag.answer.readers import parse_ranked_answers
from temporag.methods.sar.actions import FINISH, MALFORMED, SEARCH, Action, parse_step


@dataclass
class Step:
    """One thought / action / observation triple of the memory."""

    thought: str
    action: Action
    raw: str = ""
    observation: list[int] = field(default_factory=list)
    search: dict | None = None
    note: str = ""

    def to_dict(self) -> dict:
        out = {"thought": self.thought, "action": self.action.text(), "observation": self.observation}
        if self.search:
            out["search"] = self.search
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Verdict:
    """The verifier's decision on one attempt; ``source`` is "llm", "rules" or "unparsed" (an LLM reply
    with neither VALID nor INVALID, taken as VALID)."""

    valid: bool
    feedback: str = ""
    source: str = "llm"
    raw: str = ""

    def to_dict(self) -> dict:
        return {"valid": self.valid, "feedback": self.feedback, "source": self.source}


@dataclass
class Attempt:
    steps: list[Step]
    outcome: str
    answers: list[str]
    feedback: list[str] = field(default_factory=list)  # the feedback this attempt was given
    verdict: Verdict | None = None

    def evidence(self) -> list[int]:
        return [f for s in self.steps for f in s.observation]

    def to_dict(self) -> dict:
        return {
            "outcome": self.outcome,
            "answers": self.answers,
            "feedback_in": self.feedback,
            "verdict": self.verdict.to_dict() if self.verdict else None,
            "steps": [s.to_dict() for s in self.steps],
        }


@dataclass
class Usage:
    """LLM calls, tokens and model seconds of one question (failed calls count as calls, add no tokens)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def add(self, responses) -> None:
        for r in responses:
            self.calls += 1
            if r.error is not None:
                self.errors.append(r.error)
                continue
            self.prompt_tokens += r.prompt_tokens
            self.completion_tokens += r.completion_tokens
            self.seconds += float(r.original_latency_s or r.latency_s)


@dataclass
class PolicyReply:
    """A policy's next turn: its text and the LLM responses it cost (none for the scripted policy)."""

    text: str
    responses: list = field(default_factory=list)
    error: str | None = None


@dataclass
class AgentResult:
    question: str
    attempts: list[Attempt]
    usage: Usage
    search_s: float = 0.0
    searches: int = 0

    @property
    def answers(self) -> list[str]:
        return self.attempts[-1].answers if self.attempts else []

    @property
    def outcome(self) -> str:
        return self.attempts[-1].outcome if self.attempts else "llm_error"

    def evidence(self) -> list[int]:
        """Every fact any SEARCH observed, in the order seen, once."""
        return list(dict.fromkeys(f for a in self.attempts for f in a.evidence()))

    def answers_at(self, n: int) -> list[str]:
        """The answer Algorithm 1 returns with at most ``n`` verification iterations (Fig. 4)."""
        return answers_at(self.to_trace(), n)

    def to_trace(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "outcome": self.outcome,
            "attempts": [a.to_dict() for a in self.attempts],
            "searches": self.searches,
            "llm_errors": self.usage.errors,
        }


def attempt_at(trace: dict, n: int) -> dict | None:
    """From a recorded trace, the attempt whose answer Algorithm 1 returns with at most ``n`` verification
    iterations: a run with a larger N contains the run with a smaller one (attempt i+1 exists only when
    attempt i was judged INVALID), so one run at the largest N gives every point of Fig. 4."""
    attempts = trace["attempts"]
    for i, attempt in enumerate(attempts):
        verdict = attempt.get("verdict")
        if i == n or verdict is None or verdict["valid"]:
            return attempt
    return attempts[-1] if attempts else None


def answers_at(trace: dict, n: int) -> list[str]:
    """The answer Algorithm 1 returns with at most ``n`` verification iterations (:func:`attempt_at`)."""
    attempt = attempt_at(trace, n)
    return attempt["answers"] if attempt is not None else []


def failed_at(trace: dict, n: int) -> bool:
    """Whether the answer at ``n`` verification iterations is a failed model call (``llm_error``): such a
    question has no answer to score, it is left out of Hits@1 and counted as failed."""
    attempt = attempt_at(trace, n)
    return attempt is None or attempt.get("outcome") == "llm_error"


_NO_ANSWER = {"", "unknown", "none", "n/a", "no answer", "i don't know"}


def _finish_answers(answer: str) -> list[str]:
    """FINISH's argument as ranked answers: a Python list of names is taken as written (KG names such as
    "Company - Owner or Operator (Thailand)" must survive), anything else through the kit's answer parser."""

    try:
        value = ast.literal_eval(answer.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = None
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in dict.fromkeys(value) if v.strip().casefold() not in _NO_ANSWER]
    if answer.strip().strip("'\"").casefold() in _NO_ANSWER:
        return []
    return parse_ranked_answers(answer) or [answer.strip()]


class Agent:
    """REASONING with a policy and a search tool, inside the verification loop.

    ``policy`` has ``begin(question, feedback) -> state`` and ``step(state, memory) -> PolicyReply``;
    ``search(sub_query, type, time) -> SearchResult``; ``verifier`` (optional) has
    ``verify(question, attempt) -> (Verdict, responses)``.
    """

    def __init__(
        self,
        policy,
        search,
        verifier=None,
        *,
        max_steps: int = 6,
        n_verify: int = 2,
        malformed_retries: int = 1,
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        if n_verify < 0:
            raise ValueError(f"n_verify (N) must be 0 or more, got {n_verify}")
        self.policy = policy
        self.search = search
        self.verifier = verifier
        self.max_steps = max_steps
        self.n_verify = n_verify if verifier is not None else 0
        self.malformed_retries = malformed_retries

    def reason(self, question: str, feedback: list[str], usage: Usage, result: AgentResult) -> Attempt:
        """Lines 11–23: one attempt from a fresh memory."""
        memory: list[Step] = []
        seen: set[tuple] = set()
        state = self.policy.begin(question, list(feedback))
        malformed = 0
        for _ in range(self.max_steps):
            reply = self.policy.step(state, memory)
            usage.add(reply.responses)
            if reply.error is not None:
                return Attempt(memory, "llm_error", [], list(feedback))
            thought, action = parse_step(reply.text)
            step = Step(thought, action, reply.text)
            memory.append(step)
            if action.kind == MALFORMED:
                step.note = action.error or "malformed action"
                malformed += 1
                if malformed > self.malformed_retries:
                    return Attempt(memory, "malformed_action", [], list(feedback))
                continue
            malformed = 0
            if action.kind == FINISH:
                step.note = action.error or ""
                return Attempt(memory, "finish", _finish_answers(action.answer), list(feedback))
            assert action.kind == SEARCH
            if action.key() in seen:
                step.note = "repeated search: the same facts again"
                return Attempt(memory, "repeated_search", [], list(feedback))
            seen.add(action.key())
            found = self.search(action.sub_query, action.type, action.time)
            usage.add(found.responses)
            result.search_s += found.latency_s
            result.searches += 1
            step.observation = [int(f) for f in found.facts]
            step.search = found.describe()
            step.note = found.note
        return Attempt(memory, "step_budget", [], list(feedback))

    def run(self, question: str) -> AgentResult:
        """Lines 1–10: reason, verify, reason again with the feedback, at most N times."""
        usage = Usage()
        result = AgentResult(question, [], usage)
        feedback: list[str] = []
        for i in range(self.n_verify + 1):
            attempt = self.reason(question, feedback, usage, result)
            result.attempts.append(attempt)
            if self.verifier is None or i == self.n_verify:
                break
            if not attempt.answers:
                attempt.verdict = Verdict(
                    False, f"no answer was given (the attempt ended: {attempt.outcome})", "rules"
                )
            else:
                attempt.verdict, responses = self.verifier.verify(question, attempt)
                usage.add(responses)
            if attempt.verdict.valid:
                break
            feedback.append(attempt.verdict.feedback)
        return result
