"""What every part of the client shares: messages, the response record, the errors and their wording."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from temporag.redact import redact_text

Messages = list[dict[str, str]]

TOKENS_API = "api usage"
TOKENS_MODEL = "model tokenizer"
TOKENS_FALLBACK = "cl100k_base (fallback)"


class LLMError(RuntimeError):
    """An LLM call that cannot succeed; the message names endpoint, model and cause."""


class EndpointError(LLMError):
    """A call failed because of the endpoint, not the request (down, hanging, refusing, unauthorised);
    these failures, in a row, open the circuit breaker."""


class LLMUnavailable(EndpointError):
    """The circuit breaker is open: this run no longer calls the endpoint."""


class TransientLLMError(RuntimeError):
    """Raised by a backend for failures worth retrying (overload, dropped connection...)."""


class MalformedResponseError(TransientLLMError):
    """The server answered, but not with a chat completion (a proxy page, a cut body); retried like a
    dropped connection.  ``raw_text`` keeps what it sent."""

    def __init__(self, message: str, raw_text: str = "") -> None:
        super().__init__(message)
        self.raw_text = raw_text


@dataclass(frozen=True)
class LLMResponse:
    """One chat completion with the accounting the papers' cost tables need.

    ``latency_s`` is what this call took (near zero for a cache hit); ``original_latency_s`` is what the
    call that produced the text took, so cost tables stay meaningful when a notebook is re-run from cache.
    ``unparsed`` marks a reply the caller's ``accept`` check rejected (prose where a list was asked for):
    it is returned for the record but never cached, so a re-run asks again.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    token_source: str
    latency_s: float
    cached: bool
    model: str
    error: str | None = None
    original_latency_s: float | None = None
    finish_reason: str | None = None
    unparsed: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def describe_error(exc: BaseException) -> str:
    """``Type: message`` of an exception, cut to a readable length, redacted (a server or client error may
    quote the URL it was sent to, query string and all)."""
    text = redact_text(str(exc).strip() or repr(exc))
    return f"{type(exc).__name__}: {text[:500]}"


def check_messages(messages: Sequence[dict[str, str]]) -> Messages:
    """Copy messages into plain dicts and fail early, with the position, on a malformed one."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise ValueError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts")
    out: Messages = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content', got {m!r}")
        out.append({"role": str(m["role"]), "content": str(m["content"])})
    return out


def messages_text(messages: Messages) -> str:
    return "\n".join(f"{m.get('role', '')}: {m.get('content', '')}" for m in messages)
