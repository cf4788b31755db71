"""The client's :class:`LLMResponse` records: read from a backend's raw chat completion, rebuilt from the
cache's stored record or another thread's answer, and made for a failed batch item.

Every way a response reaches a caller builds the same record, so a cached, shared or concurrent run
reports exactly what a sequential one does; the reply text's own reading (JSON, the caller's check) is in
:mod:`~temporag.llm.replies`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from temporag.llm.backends import cl100k_count
from temporag.llm.cache import CACHE_SCHEMA
from temporag.llm.models import UNRESOLVED
from temporag.llm.replies import reply_too_long
from temporag.llm.types import (
    TOKENS_API,
    TOKENS_FALLBACK,
    TOKENS_MODEL,
    LLMError,
    LLMResponse,
    MalformedResponseError,
    Messages,
    describe_error,
    messages_text,
)

log = logging.getLogger("temporag.llm")  # the client's messages, under the name users configure


def extract_text(raw: Any, where: str) -> tuple[str, str | None]:
    """(text, finish reason) of a chat completion; a body that is none, or a reply longer than
    ``TEMPORAG_LLM_MAX_REPLY_BYTES``, is a :class:`MalformedResponseError` naming ``where`` (endpoint and
    model), retried like a dropped connection and then a failed call."""
    try:
        choice = raw["choices"][0]
        message = choice.get("message") or {}
        text = message.get("content")
        if text is None:
            text = choice.get("text", "")  # plain-completion servers
        text, finish_reason = str(text or ""), choice.get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise MalformedResponseError(
            f"{where} returned no chat completion: {str(raw)[:300]!r}", str(raw)
        ) from exc
    problem = reply_too_long(text)
    if problem:
        raise MalformedResponseError(f"{where} sent a reply of {problem}: {text[:200]!r}…", text[:300])
    return text, finish_reason


def token_counts(backend: Any, raw: dict[str, Any], messages: Messages, text: str) -> tuple[int, int, str]:
    """(prompt tokens, completion tokens, where the counts came from): the server's usage, else the
    model's own tokenizer, else cl100k_base, labelled so that cost tables say which they report."""
    usage = raw.get("usage") if isinstance(raw, dict) else None
    if usage and usage.get("prompt_tokens") is not None and usage.get("completion_tokens") is not None:
        source = getattr(backend, "usage_source", TOKENS_API)
        return int(usage["prompt_tokens"]), int(usage["completion_tokens"]), source
    counter = getattr(backend, "count_tokens", None)
    if callable(counter):
        try:
            return counter(messages_text(messages)), counter(text), TOKENS_MODEL
        except Exception as exc:  # noqa: BLE001 - fall through to the labelled fallback
            log.debug("model tokenizer failed (%s); using cl100k_base", exc)
    return cl100k_count(messages_text(messages)), cl100k_count(text), TOKENS_FALLBACK


def cache_record(response: LLMResponse) -> dict[str, Any]:
    """What the cache stores of a successful response: everything :func:`from_cache` rebuilds it from."""
    return {
        "text": response.text,
        "prompt_tokens": response.prompt_tokens,
        "completion_tokens": response.completion_tokens,
        "token_source": response.token_source,
        "latency_s": response.latency_s,
        "model": response.model,
        "finish_reason": response.finish_reason,
        "schema": CACHE_SCHEMA,
    }


def from_cache(stored: dict[str, Any], t0: float) -> LLMResponse:
    """A cache hit: the stored reply and its original cost, with this call's own (near zero) latency."""
    return LLMResponse(
        text=stored["text"],
        prompt_tokens=stored["prompt_tokens"],
        completion_tokens=stored["completion_tokens"],
        token_source=stored["token_source"],
        latency_s=time.perf_counter() - t0,
        cached=True,
        model=stored["model"],
        original_latency_s=stored["latency_s"],
        finish_reason=stored.get("finish_reason"),
        unparsed=bool(stored.get("unparsed", False)),
    )


def shared(response: LLMResponse, t0: float) -> LLMResponse:
    """The answer another thread received, as the cache would give it (the same record a sequential run
    reads for a repeated request)."""
    if response.unparsed:  # not cached: a sequential run would have asked again and got it
        return response
    return LLMResponse(
        text=response.text,
        prompt_tokens=response.prompt_tokens,
        completion_tokens=response.completion_tokens,
        token_source=response.token_source,
        latency_s=time.perf_counter() - t0,
        cached=True,
        model=response.model,
        original_latency_s=response.original_latency_s,
        finish_reason=response.finish_reason,
    )


def failed(exc: BaseException, model_label: str, latency_s: float = 0.0) -> LLMResponse:
    """The record a batch keeps for an item that failed: no text, no tokens, the cause in ``error``."""
    return LLMResponse(
        text="",
        prompt_tokens=0,
        completion_tokens=0,
        token_source="",
        latency_s=latency_s,
        cached=False,
        model=model_label if model_label != UNRESOLVED else "unknown",
        error=str(exc) if isinstance(exc, LLMError) else describe_error(exc),
    )
