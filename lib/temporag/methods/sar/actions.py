"""The agent's actions (Algorithm 1, lines 14–21) and a parser that never raises.

An action is ``SEARCH(sub_query, type, time)`` with type ∈ {ANYTIME, BEFORE, AFTER, IN}, or
``FINISH(answer)``.  Real model output is loose — square brackets, keyword arguments, a missing type,
quotes or none, names with commas and parentheses ("Ministry of Finance, Economy, Trade and Industry",
"Citizen (Norway)"), a reply cut off by the token budget — so :func:`parse_step` accepts all of those
and turns anything else into a ``MALFORMED`` action carrying the reason, which the agent records as an
outcome instead of raising.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from temporag.answer.readers import parse_ranked_answers
from temporag.methods.sar.search import TYPES, parse_filter_time

SEARCH, FINISH, MALFORMED = "SEARCH", "FINISH", "MALFORMED"

_ACTION = re.compile(r"\b(SEARCH|FINISH)\b\s*[\[(]", re.I)
_THOUGHT = re.compile(r"^\s*\**\s*thought\s*\d*\s*\**\s*:\s*", re.I)
_ACTION_HEAD = re.compile(r"^\s*\**\s*action\s*\d*\s*\**\s*:\s*", re.I | re.M)
_KEYWORD = re.compile(r"^\s*(sub_?query|query|type|time|answer)\s*[=:]\s*", re.I)
_TYPE_SYNONYMS = {
    "ANYTIME": "ANYTIME",
    "ANY": "ANYTIME",
    "NONE": "ANYTIME",
    "ALL": "ANYTIME",
    "ANY TIME": "ANYTIME",
    "BEFORE": "BEFORE",
    "AFTER": "AFTER",
    "IN": "IN",
    "ON": "IN",
    "DURING": "IN",
    "AT": "IN",
}
_NO_TIME = {"", "none", "null", "n/a", "na", "-", "anytime", "any", "nil", "unknown"}
_QUOTES = "'\"`\u2018\u2019\u201c\u201d"


@dataclass(frozen=True)
class Action:
    """One parsed action; ``error`` says why a MALFORMED one could not be read."""

    kind: str
    sub_query: str = ""
    type: str = "ANYTIME"
    time: str | None = None
    answer: str = ""
    error: str | None = None

    def text(self) -> str:
        """The canonical written form (what the trace viewer and the agent's memory show)."""
        if self.kind == SEARCH:
            return f'SEARCH("{self.sub_query}", {self.type}, {self.time or "none"})'
        if self.kind == FINISH:
            return f"FINISH({self.answer})"
        return f"MALFORMED ({self.error})"

    def key(self) -> tuple:
        """Identity of a search: two searches with equal keys return equal facts."""
        return (self.kind, " ".join(self.sub_query.casefold().split()), self.type, self.time)


def _balanced(text: str, start: int) -> tuple[str, bool]:
    """The text inside the bracket opened at ``start``, honouring nested brackets and quotes; the flag
    says whether it was closed (a reply cut by the token budget is not)."""
    opener = text[start]
    closer = ")" if opener == "(" else "]"
    depth, quote = 0, None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in '"`' or (ch == "'" and (i == start + 1 or text[i - 1] in " ,([")):
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0 and ch == closer:
                return text[start + 1 : i], True
    return text[start + 1 :].split("\n")[0], False


def _unquote(text: str) -> str:
    text = _KEYWORD.sub("", text.strip()).strip()
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1]
    return text.strip()


_QUOTED_FIRST = re.compile(r"^([\"'`\u201c\u2018])(.*?)[\"'`\u201d\u2019]\s*(?:,|$)", re.S)


def _split_quoted(inner: str) -> list[str] | None:
    """Arguments when the sub-query is quoted: the quoted string (apostrophes inside names kept), then
    the rest split on commas."""
    body = _KEYWORD.sub("", inner.strip())
    m = _QUOTED_FIRST.match(body)
    if not m:
        return None
    rest = body[m.end() :]
    return [m.group(2)] + [p for p in rest.split(",") if p.strip()]


def _as_type(text: str) -> str | None:
    return _TYPE_SYNONYMS.get(_unquote(text).upper().replace("_", " ").strip())


def _as_time(text: str) -> str | None:
    value = _unquote(text)
    return None if value.casefold() in _NO_TIME else value


def parse_search(inner: str) -> Action:
    """SEARCH arguments: (sub_query[, type[, time]]) in any of the loose forms models write."""
    args = _split_quoted(inner)
    if args is None:
        parts = [p for p in inner.split(",")]
        # names may hold commas: the type and time are the last fields that read as a type / a time
        args = parts
        if len(parts) >= 3 and _as_type(parts[-2]):
            args = [",".join(parts[:-2]), parts[-2], parts[-1]]
        elif len(parts) >= 2 and _as_type(parts[-1]):
            args = [",".join(parts[:-1]), parts[-1]]
        elif len(parts) >= 2 and parse_filter_time(_unquote(parts[-1])) is not None:
            args = [",".join(parts[:-1]), parts[-1]]  # a time without a type
        else:
            args = [",".join(parts)]
    sub_query = _unquote(args[0])
    if not sub_query:
        return Action(MALFORMED, error="SEARCH without a sub-query")
    kind, time = "ANYTIME", None
    if len(args) >= 2:
        kind = _as_type(args[1]) or ""
        if not kind:
            # "SEARCH(q, 2010)": a time without a type reads as IN that time
            time = _as_time(args[1])
            kind = "IN" if time else "ANYTIME"
        if len(args) >= 3:
            time = _as_time(",".join(args[2:]))
    if kind != "ANYTIME" and time is None:
        kind = "ANYTIME"
    if kind == "ANYTIME":
        time = None
    assert kind in TYPES
    return Action(SEARCH, sub_query=sub_query, type=kind, time=time)


_ANSWER_WORDS = re.compile(r"\b(final answer|answer is|answer:|answers are)\b", re.I)


def _loose_answer(text: str) -> str:
    """An answer stated in prose ("Final answer: Iran", "The answer is: China."), which ReAct agents often
    write instead of FINISH(...); read with the kit's answer parser, first sentence only."""
    if not _ANSWER_WORDS.search(text):
        return ""
    found = parse_ranked_answers(text, top_k=1)
    answer = found[0].strip(" -") if found else ""
    return answer if answer and len(answer.split()) <= 8 else ""


def parse_step(text: str | None) -> tuple[str, Action]:
    """(thought, action) from one model turn; the action is MALFORMED (with the reason) when none is found."""
    text = (text or "").strip()
    head = _ACTION_HEAD.search(text)
    inline = _ACTION.search(text)
    thought_part = text[: head.start()] if head else (text[: inline.start()] if inline else text)
    thought = " ".join(_THOUGHT.sub("", line).strip() for line in thought_part.splitlines() if line.strip())
    body = text[head.end() :] if head else text
    m = _ACTION.search(body) or _ACTION.search(text)
    if not m:
        loose = _loose_answer(text)
        if loose:
            return thought, Action(FINISH, answer=loose, error="an answer stated without FINISH(...)")
        return thought, Action(MALFORMED, error="no SEARCH(...) or FINISH(...) in the reply")
    source = body if _ACTION.search(body) else text
    inner, _closed = _balanced(source, m.end() - 1)
    if m.group(1).upper() == FINISH:
        answer = _unquote(inner)
        if not answer:
            return thought, Action(MALFORMED, error="FINISH without an answer")
        return thought, Action(FINISH, answer=answer)
    return thought, parse_search(inner)
