"""Reading replies: JSON inside prose, the caller's check that a reply parses, and a batch's usage summary
for the papers' cost tables."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from temporag import limits
from temporag.llm.types import LLMError, LLMResponse

#: a caller's check of a reply's text: False (or an exception) marks the reply unparsed and keeps it out
#: of the cache, so that a re-run asks again
Accept = Callable[[str], bool]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript|js|python|py)?[ \t]*\n?(.*?)(?:```|\Z)", re.S)


def parse_json_reply(text: str) -> Any:
    """First JSON object or list in an LLM reply, tolerating prose and ```json fences around it.

    Small models wrap JSON in explanations even in JSON mode; a clear :class:`LLMError` (with the start
    of the reply) beats a bare JSONDecodeError deep in a notebook.
    """
    if text is None:
        raise LLMError("expected a JSON object or list in the LLM reply, got None")
    problem = reply_too_long(text)
    if problem:  # a cached reply too: the cap holds whatever the reply came from
        raise LLMError(f"the LLM reply is {problem}")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    depth = limits.max_json_depth()
    for chunk in candidates:
        for i, ch in enumerate(chunk):
            if ch in "{[":
                try:
                    obj, _ = limits.decode(chunk, i, depth)
                except json.JSONDecodeError:
                    continue
                except limits.LimitError as exc:
                    raise LLMError(f"the JSON in the LLM reply is {exc}") from None
                return obj
    snippet = text.strip().replace("\n", " ")
    snippet = snippet[:200] + ("..." if len(snippet) > 200 else "")
    raise LLMError(f"no JSON object or list found in the LLM reply: {snippet!r}")


def reply_too_long(text: str) -> str:
    """What is wrong with a reply past ``TEMPORAG_LLM_MAX_REPLY_BYTES`` (its UTF-8 size), "" when none."""
    limit = limits.max_reply_bytes()
    if len(text) <= limit // 4:  # at most 4 bytes a character: surely inside, without encoding it
        return ""
    size = len(text.encode("utf-8", "surrogatepass"))
    return limits.too_large(size, limit, "TEMPORAG_LLM_MAX_REPLY_BYTES") if size > limit else ""


def accepts(accept: Accept | None, text: str) -> bool:
    """Whether ``text`` passes the caller's check (no check passes everything)."""
    if accept is None:
        return True
    try:
        return bool(accept(text))
    except Exception:  # noqa: BLE001 - a parser that raises rejects the reply
        return False


def parses_as_json(text: str) -> bool:
    """The check of a JSON-mode call: the reply holds a JSON object or list (raises otherwise)."""
    parse_json_reply(text)
    return True


def usage_summary(responses: Iterable[LLMResponse]) -> dict[str, Any]:
    """Calls, cache hits, errors, tokens and latency of a batch, for "tokens and cost per question" tables.

    ``mean_latency_s`` uses each response's original latency (what the model took when it produced the
    text), so the table reads the same on a cached re-run; ``wall_s`` is what this run actually spent.
    Failed calls count as calls and errors but add no tokens or latency to the means; unparsed replies
    (rejected by the caller's check, never cached) are counted apart.
    """
    rs = list(responses)
    ok = [r for r in rs if r.error is None]
    prompt = sum(r.prompt_tokens for r in ok)
    completion = sum(r.completion_tokens for r in ok)
    latencies = [r.original_latency_s if r.original_latency_s is not None else r.latency_s for r in ok]
    n_ok = len(ok)
    return {
        "calls": len(rs),
        "cached": sum(1 for r in rs if r.cached),
        "errors": len(rs) - n_ok,
        "unparsed": sum(1 for r in ok if r.unparsed),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "mean_prompt_tokens": prompt / n_ok if n_ok else 0.0,
        "mean_completion_tokens": completion / n_ok if n_ok else 0.0,
        "mean_latency_s": sum(latencies) / n_ok if n_ok else 0.0,
        "wall_s": sum(r.latency_s for r in rs),
        "token_source": ", ".join(sorted({r.token_source for r in ok if r.token_source})) or None,
        "models": sorted({r.model for r in ok}),
    }
