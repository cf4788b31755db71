"""Which model a client's requests go to: its name is part of every cache key, so it must be known, and
known the same way, before the first request.

A backend names its model, or the settings do; a served endpoint with none configured is asked once per
process (one thread asks, the others wait for its answer, and a failure counts against the endpoint's
breaker).  The answer is remembered in the cache, so a later run whose server cannot list its models
still knows which model it served last time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from temporag.llm import retry
from temporag.llm.cache import ResponseCache, best_effort
from temporag.llm.concurrency import FLIGHTS
from temporag.llm.types import EndpointError, LLMError, LLMUnavailable

log = logging.getLogger("temporag.llm")  # the client's messages, under the name users configure

UNRESOLVED = "(not resolved yet)"  # a served model's label before the server was asked


def discovers_model(backend: Any) -> bool:
    """True for a server backend with no model configured: its name must be asked for."""
    return hasattr(backend, "_model") and getattr(backend, "_model", None) is None


def model_label(backend: Any, resolved: str | None) -> str:
    """The model's name if known without asking anyone, else a placeholder (for messages)."""
    if resolved is not None:
        return resolved
    if hasattr(backend, "_model"):
        return getattr(backend, "_model", None) or UNRESOLVED
    name = getattr(backend, "model_name", None)
    return str(name) if name else type(backend).__name__


def resolve_model(
    backend: Any, endpoint: str, breaker: Callable[[], retry.Breaker], cache: ResponseCache | None
) -> str:
    """The model ``backend`` answers with: its own name, else the one the server lists (remembered in
    ``cache``), else the one it served last time; an :class:`EndpointError` when none of them is known.
    ``breaker()`` is the endpoint's breaker, looked up only when the server must be asked."""
    if not discovers_model(backend):
        name = getattr(backend, "model_name", None)
        return str(name) if name else type(backend).__name__
    with retry._STATS_LOCK:  # one thread asks the server; the others wait for its answer
        known = retry._DISCOVERED.get(endpoint)
    if known is None:
        known, _ = FLIGHTS.do(f"models:{endpoint}", lambda: _discover(backend, endpoint, breaker))
    if isinstance(known, str):
        if cache is not None:
            best_effort(cache.remember_model, endpoint, known)
        backend._model = known
        return known
    remembered = best_effort(cache.remembered_model, endpoint) if cache else None
    if remembered:
        log.warning(
            "the model served at %s cannot be listed (%s); using %r, the model it served last time "
            "(remembered in %s) — set TEMPORAG_LLM_MODEL to choose",
            endpoint,
            known,
            remembered,
            cache.path,
        )
        backend._model = remembered
        return remembered
    raise EndpointError(
        f"cannot tell which model {endpoint} serves: {known}. No model is remembered for it in the "
        "LLM cache either — set TEMPORAG_LLM_MODEL (or llm_model) to the served model's name"
    )


def _discover(backend: Any, endpoint: str, breaker: Callable[[], retry.Breaker]) -> str | LLMError:
    """Ask the server once per process and endpoint which model it serves."""
    with retry._STATS_LOCK:
        known = retry._DISCOVERED.get(endpoint)
    if known is not None:
        return known
    if breaker().open:
        known = LLMUnavailable(breaker().message())
    else:
        try:
            known = str(backend.model_name)
        except LLMError as exc:
            known = exc
            breaker().failure(str(exc))
    with retry._STATS_LOCK:
        retry._DISCOVERED[endpoint] = known
    return known
