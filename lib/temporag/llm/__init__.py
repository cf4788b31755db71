"""The kit's only LLM client (a small package; ``from temporag.llm import LLM`` is all most code needs).

One class, :class:`LLM`, talks to any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
llama.cpp server, ...) configured by ``TEMPORAG_LLM_BASE_URL`` / ``TEMPORAG_LLM_MODEL`` /
``TEMPORAG_LLM_API_KEY`` (``OPENAI_API_KEY`` only for OpenAI's own host: :mod:`~temporag.llm.endpoint`);
with no endpoint set it runs the embedded SmolLM2-135M-Instruct in-process through llama-cpp-python, so
every notebook works offline on a laptop and moves to a GPU box by changing one setting.

Why the extra machinery around a plain API call, module by module:

* :mod:`~temporag.llm.client` — :class:`LLM`: a served endpoint gets up to ``TEMPORAG_LLM_CONCURRENCY``
  requests in flight (default 16; the embedded model one), results in input order, so a concurrent run
  records exactly what a sequential one does; ``map_questions`` runs multi-step methods question by
  question side by side; a reply the caller cannot parse is marked ``unparsed`` and never cached;
* :mod:`~temporag.llm.models` — which model an endpoint serves (part of every cache key): configured, or
  asked of the server once per process and remembered in the cache for when it cannot be asked;
* :mod:`~temporag.llm.responses` — the response records, read from a raw completion (token counts
  labelled with where they came from), rebuilt from the cache or another thread's answer, so every path
  reports the same record; :mod:`~temporag.llm.replies` reads the reply text (JSON, the caller's check);
* :mod:`~temporag.llm.cache` — every successful response is cached in sqlite keyed by the request's
  content hash (WAL, one connection per thread, shared by processes), checked with sqlite's
  ``quick_check`` when first opened; a damaged file is moved aside and its readable rows salvaged;
* :mod:`~temporag.llm.concurrency` — ordered concurrent maps with a progress bar (calls/s, ETA) and the
  in-process single flight: two threads asking the same thing send one request (two processes: the
  per-request flock of the cache);
* :mod:`~temporag.llm.attempts` — one request's attempts, bounded by the retry budget;
* :mod:`~temporag.llm.retry` — transient failures are retried with exponential backoff and jitter (a 429's
  ``Retry-After`` is honoured); after ``TEMPORAG_LLM_BREAKER`` consecutive failed calls, or once failures
  in a row used the retry budget (``TEMPORAG_LLM_RETRY_BUDGET``, default 2 × the timeout; a timeout
  counts at once), the circuit breaker stops every thread's next request; the per-process call tally;
* :mod:`~temporag.llm.backends` — the OpenAI-compatible and the embedded llama-cpp backends; token counts
  travel with every response, labelled with where they came from.

A backend is any object with ``complete(messages, params) -> dict`` returning an OpenAI-shaped chat
completion dict; tests inject fakes through ``LLM(backend=...)``.
"""

from __future__ import annotations

import time  # noqa: F401 - tests patch temporag.llm.time.sleep (the backoff's sleep)

from temporag.llm.backends import (
    _LLAMA_MODELS,
    DEFAULT_N_CTX,
    EMBEDDED_ENDPOINT,
    EMBEDDED_PACKAGE,
    EMBEDDED_PIP,
    LlamaCppBackend,
    OpenAIBackend,
    cl100k_count,
    close_embedded_models,
    find_embedded_gguf,
)
from temporag.llm.cache import CACHE_SCHEMA, ResponseCache, database_problem, salvage_rows
from temporag.llm.client import LLM, Accept
from temporag.llm.concurrency import SingleFlight, ordered_map
from temporag.llm.replies import parse_json_reply, usage_summary
from temporag.llm.retry import (
    Breaker,
    backoff_s,
    breaker_for,
    call_stats,
    is_timeout,
    is_transient,
    reset_breakers,
    retry_after_s,
)
from temporag.llm.types import (
    TOKENS_API,
    TOKENS_FALLBACK,
    TOKENS_MODEL,
    EndpointError,
    LLMError,
    LLMResponse,
    LLMUnavailable,
    MalformedResponseError,
    Messages,
    TransientLLMError,
)

__all__ = [
    "CACHE_SCHEMA",
    "DEFAULT_N_CTX",
    "EMBEDDED_ENDPOINT",
    "EMBEDDED_PACKAGE",
    "EMBEDDED_PIP",
    "LLM",
    "TOKENS_API",
    "TOKENS_FALLBACK",
    "TOKENS_MODEL",
    "_LLAMA_MODELS",
    "Accept",
    "Breaker",
    "EndpointError",
    "LLMError",
    "LLMResponse",
    "LLMUnavailable",
    "LlamaCppBackend",
    "MalformedResponseError",
    "Messages",
    "OpenAIBackend",
    "ResponseCache",
    "SingleFlight",
    "TransientLLMError",
    "backoff_s",
    "breaker_for",
    "call_stats",
    "cl100k_count",
    "close_embedded_models",
    "database_problem",
    "find_embedded_gguf",
    "is_timeout",
    "is_transient",
    "ordered_map",
    "parse_json_reply",
    "reset_breakers",
    "retry_after_s",
    "salvage_rows",
    "usage_summary",
]
