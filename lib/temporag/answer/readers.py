"""Answer generation from retrieved evidence: prompt → LLM → parsed ranked answer list.

Every paper in the kit ends the same way: a reader LLM sees the question and a handful of verbalised
facts and names the answers, and Hits@k is computed on its ranked list.  Real model output is messy —
a Python list one time, a numbered list wrapped in prose the next, cut off mid-string when the token
budget runs out — so the parser here is deliberately forgiving and the prompt deliberately plain.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from temporag.llm import LLM, LLMResponse

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------------------------------
# prompt

_SYSTEM = (
    "You answer questions about events from a list of dated facts. Mind temporal words such as before, "
    "after, first, last, in and during. Reply only with a Python list of answers, best first, at most "
    "{top_k}."
)

_TYPE_HINTS = {
    "entity": "Answers are names copied exactly from the facts.",
    "time": "Answers are dates (YYYY-MM-DD, YYYY-MM or YYYY) as precise as the question asks.",
    "date": "Answers are dates written YYYY-MM-DD.",
    "day": "Answers are dates written YYYY-MM-DD.",
    "month": "Answers are months written YYYY-MM.",
    "year": "Answers are years written YYYY.",
    "number": "Answers are numbers written with digits.",
    "yes/no": "The only possible answers are 'yes' and 'no'.",
}
_TIME_TYPES = {"time", "date", "day", "month", "year"}

# One worked exchange before the real question: small local models (SmolLM2-135M) copy the facts back
# or ramble when only told the format, but reliably imitate an answer they have seen.
_EXAMPLE_FACTS = (
    "France Praise or endorse Germany on 2014-05-01",
    "Germany Criticize or denounce Russia on 2014-07-02",
    "Germany Criticize or denounce Ukraine on 2014-08-09",
)
_EXAMPLE_ENTITY = ("Who did Germany criticize in 2014?", "['Russia', 'Ukraine']")
_EXAMPLE_TIME = ("When did Germany first criticize Russia?", "['2014-07-02']")


def _user_turn(question: str, lines: Sequence[str], hint: str | None) -> str:
    question = question.strip()
    if lines:
        facts = "Facts:\n" + "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
    else:
        facts = "Facts: none were retrieved; answer from what you know."
    # The question goes before and after the facts: short-context models attend to the end.
    parts = [f"Question: {question}", facts, f"Question: {question}"]
    if hint:
        parts.append(hint)
    return "\n\n".join(parts) + "\nAnswers:"


def build_reader_prompt(
    question: str,
    evidence_lines: Sequence[str],
    *,
    answer_type: str | None = None,
    top_k: int = 10,
    instructions: str | None = None,
    example: bool = True,
) -> list[dict[str, str]]:
    """Messages asking for up to ``top_k`` ranked answers as a Python list.

    Facts are numbered; ``answer_type`` (entity / time / year / month / day ...) adds a one-line format
    hint because strict Hits@k compares strings exactly, and picks the worked example (``example=False``
    drops it to save ~120 prompt tokens on strong models); ``instructions`` appends a method's own rule
    to the system message (e.g. "answer the rewritten question").
    """
    top_k = max(1, int(top_k))
    kind = (answer_type or "").strip().lower()
    hint = _TYPE_HINTS.get(kind) or (
        f"The expected kind of answer is: {answer_type}." if answer_type else None
    )
    system = _SYSTEM.format(top_k=top_k)
    if instructions:
        system += " " + instructions.strip()
    messages = [{"role": "system", "content": system}]
    if example:
        ex_question, ex_answer = _EXAMPLE_TIME if kind in _TIME_TYPES else _EXAMPLE_ENTITY
        messages.append({"role": "user", "content": _user_turn(ex_question, _EXAMPLE_FACTS, None)})
        messages.append({"role": "assistant", "content": ex_answer})
    lines = [str(line).strip() for line in evidence_lines if str(line).strip()]
    messages.append({"role": "user", "content": _user_turn(question, lines, hint)})
    return messages


# ----------------------------------------------------------------------------------------------------
# parsing

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)
_FENCE = re.compile(r"```[^\n`]*\n?(.*?)(?:```|\Z)", re.S)
_NUMBERED = re.compile(r"^\s*(?:\(?\d{1,2}[.):]|#\d{1,2}[.:]?|\[\d{1,2}\])\s+(.+?)\s*$")
# "Iran [1]" / "Iran [fact 2, 3]": a reference after an answer, not part of it (years have 4 digits).
_INLINE_CITATION = re.compile(
    r"(?<=\S)[ \t]*\[(?:(?:facts?|source|ref)\s*)?#?\d{1,3}(?:\s*[,-]\s*#?\d{1,3})*\]", re.I
)
_BULLET = re.compile(r"^\s*(?:[-*•·+]|\u2013|\u2014)\s+(.+?)\s*$")
_ANSWER_HEAD = re.compile(
    r"^\s*(?:\*\*|__)?\s*(?:final\s+|ranked\s+|possible\s+|top\s+\d+\s+)?answers?\s*(?:\*\*|__)?\s*[:：]"
    r"\s*(?:\*\*|__)?\s*(.*)$",
    re.I,
)
_PROSE_ANSWER = re.compile(r"\b(answer|answers)\s+(?:is|are|would\s+be|should\s+be)\s*:?\s*(.+)", re.I | re.S)
_ANSWER_KEYS = {"answers", "answer", "ranked answers", "final answer", "final answers", "predictions"}
_QUOTES = "'\"`\u2018\u2019\u201c\u201d\u00ab\u00bb"
_NON_ANSWERS = {"", "none", "n/a", "na", "unknown", "no answer", "null", "...", "…", "etc"}
_MAX_BARE_WORDS = 12


def parse_ranked_answers(text: str | None, top_k: int = 10) -> list[str]:
    """Ranked answers from raw LLM output, best first, deduplicated, at most ``top_k``.

    Tried in order: a JSON object with an ``answers`` key, a Python/JSON list (also a truncated one:
    complete items are kept, the cut-off last item is dropped), an ``Answer(s):`` block, "the answer is
    X" prose, numbered or bulleted lines, then a single short bare answer.  Returns ``[]`` when nothing
    answer-like is found.
    """
    if not text or not text.strip():
        return []
    text = _INLINE_CITATION.sub("", _THINK.sub("", text))
    fenced = [m.group(1) for m in _FENCE.finditer(text)]
    sources = [f for f in fenced if f.strip()] + [_FENCE.sub(lambda m: m.group(1), text)]
    for source in sources:
        items = _parse_structured(source)
        if items is not None:
            return _finish(items, top_k)
    return _finish(_parse_bare(sources[-1]), top_k)


def reply_parses(text: str | None) -> bool:
    """True when a reply holds an answer structure (a list, an ``Answer:`` line, numbered lines, "the
    answer is X", or a short bare answer); prose that names no answer does not.  The reader's check on
    every reply (``LLM.chat(accept=...)``): a served endpoint's unparsable reply is counted apart and
    never cached, so a re-run after fixing the server asks again."""
    if not text or not text.strip():
        return False
    text = _INLINE_CITATION.sub("", _THINK.sub("", text))
    source = _FENCE.sub(lambda m: m.group(1), text)
    return _parse_structured(source) is not None or bool(_parse_bare(source))


def _parse_structured(text: str) -> list[str] | None:
    """Items from the first answer structure found, or None when the text has none."""
    for parse in (_from_object, _from_list, _from_answer_block, _from_prose):
        items = parse(text)
        if items is not None:
            return items
    return _from_lines(text.splitlines())


def _literal(chunk: str) -> Any:
    for load in (json.loads, ast.literal_eval):
        try:
            return load(chunk)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def _flatten(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        out: list[str] = []
        for v in value:
            out.extend(_flatten(v))
        return out
    if isinstance(value, dict):
        for key in ("answer", "name", "entity", "value", "text"):
            if key in value:
                return _flatten(value[key])
        return []
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def _from_object(text: str) -> list[str] | None:
    """``{"answers": [...]}`` (JSON or Python dict), the shape JSON-mode replies take."""
    for start in [m.start() for m in re.finditer(r"\{", text)][:10]:
        for end in [m.end() for m in re.finditer(r"\}", text[start:])][:10]:
            obj = _literal(text[start : start + end])
            if isinstance(obj, dict):
                for key, value in obj.items():
                    if str(key).lower().replace("_", " ") in _ANSWER_KEYS:
                        return _flatten(value)
                break
    return None


_CITATION = re.compile(r"^(?:(?:facts?|source|ref)\s*)?#?\d{1,3}(?:\s*[,-]\s*#?\d{1,3})*$", re.I)


def _is_citation(value: Any) -> bool:
    """``[1]`` / ``[1, 3]`` / ``[fact 2]``: references to facts, not answers (years have 4 digits)."""
    if isinstance(value, list):
        return bool(value) and all(isinstance(v, int) and not isinstance(v, bool) and v < 1000 for v in value)
    return bool(_CITATION.match(str(value).strip()))


def _from_list(text: str) -> list[str] | None:
    """The first bracketed list: parsed as a literal when well-formed, else split tolerantly."""
    starts = [m.start() for m in re.finditer(r"\[", text)][:10]
    for start in starts:
        for m in list(re.finditer(r"\]", text[start:]))[:20]:
            value = _literal(text[start : start + m.end()])
            if isinstance(value, list):
                if _is_citation(value):
                    break
                return _flatten(value)
    # Not a valid literal: apostrophes inside names, unquoted items, or a list cut off by max_tokens.
    for start in starts:
        close = text.find("]", start)
        truncated = close < 0
        inner = (text[start + 1 :] if truncated else text[start + 1 : close]).strip()
        if _is_citation(inner):
            continue
        if not inner:
            return [] if not truncated else None
        if inner[0] in _QUOTES:
            # Split only at quote-comma-quote boundaries so names like "Côte d'Ivoire" survive.
            pieces = re.split(r"(?<=['\"\u2019\u201d])\s*,\s*(?=['\"\u2018\u201c])", inner)
            if truncated:
                last = pieces[-1].strip()
                if not (len(last) >= 2 and last[-1] in _QUOTES):
                    pieces = pieces[:-1]  # the item the token budget cut off is unreliable
            return pieces
        if truncated:
            if "\n" in inner:
                return None  # a stray "[" before other text, not a list
            pieces = inner.split(",")
            return pieces[:-1] if len(pieces) > 1 else pieces
        return inner.split(",")
    return None


def _split_plain(rest: str) -> list[str]:
    """Split "Iran, Iraq and Syria" when the reply said answers (plural)."""
    return [p for p in re.split(r"\s*(?:;|,|\band\b)\s*", rest) if p.strip()]


def _from_answer_block(text: str) -> list[str] | None:
    """``Answer: X`` on one line, or an ``Answers:`` header followed by numbered/bulleted lines."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _ANSWER_HEAD.match(line)
        if not m:
            continue
        rest = m.group(1).strip()
        plural = "answers" in line.lower()
        if rest:
            listed = _from_list(rest)
            if listed is not None:
                return listed
            return _split_plain(rest) if plural else [rest]
        following: list[str] = []
        for nxt in lines[i + 1 :]:
            if not nxt.strip():
                if following:
                    break
                continue
            following.append(nxt)
        items = _from_lines(following)
        if items is not None:
            return items
        if following:
            listed = _from_list(following[0])
            return listed if listed is not None else following[:1]
        return []
    return None


def _from_prose(text: str) -> list[str] | None:
    """Find '... so the answer is Iran.' anywhere in the reply."""
    m = _PROSE_ANSWER.search(text)
    if not m:
        return None
    rest = re.split(r"(?<=[^A-Z.])\.(?:\s|$)|\n", m.group(2).strip(), maxsplit=1)[0].strip()
    if not rest or rest.endswith(":") or len(rest.split()) > _MAX_BARE_WORDS:
        return None
    listed = _from_list(rest)
    if listed is not None:
        return listed
    return _split_plain(rest) if m.group(1).lower() == "answers" else [rest]


def _from_lines(lines: Iterable[str]) -> list[str] | None:
    """Numbered ("1. X", "1) X") or bulleted ("- X") lines; None if there are none."""
    items = []
    for line in lines:
        m = _NUMBERED.match(line) or _BULLET.match(line)
        if m:
            items.append(m.group(1))
    return items or None


def _parse_bare(text: str) -> list[str]:
    """A single short answer on the first line; longer prose is not an answer."""
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        return [line] if len(line.split()) <= _MAX_BARE_WORDS else []
    return []


def _clean(item: str) -> str:
    s = str(item).strip()
    s = re.sub(r"^(?:\*\*|__)(.*?)(?:\*\*|__)", r"\1", s)  # **Iran** — explanation
    s = re.sub(r"^\d{1,2}[.)]\s+", "", s)  # "1. Iran" inside a list literal
    s = re.sub(r"\s+[-\u2013\u2014]\s+\S+(?:\s+\S+){2,}$", "", s)  # drop " - because ..." tails
    s = re.sub(r"\s*\((?:see\s+|from\s+)?facts?\s*#?\d[^)]*\)\s*$", "", s, flags=re.I)  # "(fact 3)"
    s = s.strip().strip("*_").strip()
    for _ in range(3):
        s = s.strip().rstrip(".,;:!?").strip()
        if len(s) >= 2 and s[0] in _QUOTES and s[-1] in _QUOTES:
            s = s[1:-1]
        else:
            s = s.strip(_QUOTES)
    return re.sub(r"\s+", " ", s).strip()


def _finish(items: Iterable[str], top_k: int) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        cleaned = _clean(item)
        key = cleaned.casefold()
        if key in _NON_ANSWERS or key in seen:
            continue
        seen.add(key)
        out.append(cleaned)
        if len(out) >= top_k:
            break
    return out


# ----------------------------------------------------------------------------------------------------
# reading

#: a paper's own prompt: (question, evidence lines, answer type) -> chat messages
PromptBuilder = Callable[[str, Sequence[str], "str | None"], list[dict[str, str]]]
#: a paper's clean-up of the parsed answers: (answers, answer type) -> answers
Postprocess = Callable[[list[str], "str | None"], list[str]]


@dataclass(frozen=True)
class ReaderResult:
    """A reader's ranked answers with the raw reply and the call's accounting (for audits)."""

    question: str
    answers: list[str] = field(default_factory=list)
    raw_text: str = ""
    response: LLMResponse | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def unparsed(self) -> bool:
        """The reply held no answer structure (prose for a list): counted apart, see :func:`reply_parses`."""
        return self.response is not None and self.response.unparsed


def reader_max_tokens(top_k: int) -> int:
    """Token budget for a list of ``top_k`` short names or dates (~14 tokens each with quotes): enough to
    finish, little room to ramble — small models otherwise repeat one name until the budget runs out."""
    return 32 + 14 * max(1, top_k)


# Generation stops when the list closes: the reply we asked for is complete there, and whatever a model
# adds after it (explanations) costs latency without changing the parsed answers.
READER_STOP: tuple[str, ...] = ("]",)


def _reply_for_parsing(response: LLMResponse, stop: Sequence[str] | None) -> str:
    """The reply with the "]" the stop sequence swallowed put back, so a list that was complete parses
    as complete (a reply cut by the token budget, finish_reason "length", stays truncated)."""
    text = response.text
    if stop and "]" in stop and response.finish_reason == "stop" and text.count("[") > text.count("]"):
        return text + "]"
    return text


def read_answers(
    llm: LLM,
    question: str,
    evidence_lines: Sequence[str],
    *,
    answer_type: str | None = None,
    top_k: int = 10,
    instructions: str | None = None,
    max_tokens: int | None = None,
    stop: Sequence[str] | None = READER_STOP,
    example: bool = True,
) -> ReaderResult:
    """Ask ``llm`` for ranked answers given the evidence; raises :class:`LLMError` if the call fails."""
    messages = build_reader_prompt(
        question,
        evidence_lines,
        answer_type=answer_type,
        top_k=top_k,
        instructions=instructions,
        example=example,
    )
    response = llm.chat(
        messages, max_tokens=max_tokens or reader_max_tokens(top_k), stop=stop, accept=reply_parses
    )
    return ReaderResult(
        question=question,
        answers=parse_ranked_answers(_reply_for_parsing(response, stop), top_k=top_k),
        raw_text=response.text,
        response=response,
    )


def read_many(
    llm: LLM,
    questions: Sequence[str],
    evidence: Sequence[Sequence[str]],
    *,
    answer_types: Sequence[str | None] | str | None = None,
    top_k: int = 10,
    instructions: str | None = None,
    max_tokens: int | None = None,
    stop: Sequence[str] | None = READER_STOP,
    example: bool = True,
    progress: bool = True,
    desc: str = "reader",
    prompt_builder: PromptBuilder | None = None,
    postprocess: Postprocess | None = None,
) -> list[ReaderResult]:
    """``read_answers`` over a batch with a progress bar; a failed call becomes a result with ``error``
    set and no answers, so one bad question never loses the rest of a long run.

    A paper with its own reader prompt passes ``prompt_builder(question, evidence_lines, answer_type)``
    (it replaces :func:`build_reader_prompt`, so ``instructions`` and ``example`` do not apply) and, to
    tidy the parsed list, ``postprocess(answers, answer_type)``; the call, the parsing, the stop
    handling and the failure accounting stay this function's."""
    if len(questions) != len(evidence):
        raise ValueError(f"{len(questions)} questions but {len(evidence)} evidence lists; they must pair up")
    if answer_types is None or isinstance(answer_types, str):
        types: list[str | None] = [answer_types] * len(questions)
    else:
        types = list(answer_types)
        if len(types) != len(questions):
            raise ValueError(f"{len(questions)} questions but {len(types)} answer types")
    if prompt_builder is None:
        prompts = [
            build_reader_prompt(q, ev, answer_type=t, top_k=top_k, instructions=instructions, example=example)
            for q, ev, t in zip(questions, evidence, types, strict=True)
        ]
    else:
        prompts = [prompt_builder(q, ev, t) for q, ev, t in zip(questions, evidence, types, strict=True)]
    responses = llm.chat_many(
        prompts,
        max_tokens=max_tokens or reader_max_tokens(top_k),
        stop=stop,
        accept=reply_parses,
        progress=progress,
        desc=desc,
    )
    results = []
    for question, answer_type, response in zip(questions, types, responses, strict=True):
        if response.error is not None:
            results.append(ReaderResult(question=question, response=response, error=response.error))
        else:
            answers = parse_ranked_answers(_reply_for_parsing(response, stop), top_k=top_k)
            if postprocess is not None:
                answers = postprocess(answers, answer_type)
            results.append(
                ReaderResult(question=question, answers=answers, raw_text=response.text, response=response)
            )
    failed = sum(1 for r in results if r.error)
    if failed:
        log.warning("reader: %d of %d questions failed (see ReaderResult.error)", failed, len(results))
    unparsed = sum(1 for r in results if r.unparsed)
    if unparsed:
        log.warning(
            "reader: %d of %d replies held no answer list (ReaderResult.unparsed)", unparsed, len(results)
        )
    return results
