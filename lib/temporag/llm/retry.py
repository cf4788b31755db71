"""Which failures are worth retrying and how long to wait; the circuit breaker; the per-process call tally.

Shared by every thread and every client of one endpoint in a process, so their state sits behind locks:
a breaker opened by one thread stops the others' next request at once, and the tally that results.json
records is exact however many requests were in flight.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from temporag.llm.types import LLMResponse, TransientLLMError

log = logging.getLogger(__name__)

MAX_RETRY_AFTER_S = 300.0  # a Retry-After longer than this is a server asking for an outage: give up


def is_transient(exc: BaseException) -> bool:
    """Failures that a later identical request may not hit: timeouts, 5xx, 429, refused connections."""
    if isinstance(exc, (TransientLLMError, TimeoutError, ConnectionError)):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a hard dependency
        return False
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 or exc.status_code in (408, 409, 429)
    return False


def is_timeout(exc: BaseException) -> bool:
    """A request the server never answered in time: the sign of a hanging endpoint, which the breaker
    counts at once (not after the retries), so a hang costs about two timeouts rather than minutes."""
    if isinstance(exc, TimeoutError):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, openai.APITimeoutError)


def endpoint_wide(exc: BaseException) -> bool:
    """A non-transient failure that every request to this endpoint would hit (key, permission, URL)."""
    return getattr(exc, "status_code", None) in (401, 403, 404)


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds a 429/503 reply asked to wait (``Retry-After``: seconds or an HTTP date;
    ``retry-after-ms`` too), or None."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def backoff_s(attempt: int, base: float, cap: float, exc: BaseException | None = None) -> float:
    """Wait before retry ``attempt + 1``: what the server asked for (Retry-After), else exponential backoff
    (``base · 2^attempt`` capped at ``cap``) with up to 25 % jitter, so that many threads retrying at
    once do not hit the server in lock step."""
    asked = retry_after_s(exc) if exc is not None else None
    if asked is not None:
        return min(asked, MAX_RETRY_AFTER_S) * (1.0 + 0.05 * random.random())
    return min(cap, base * 2**attempt) * (1.0 + 0.25 * random.random())


# ----------------------------------------------------------------------------------------------------
# circuit breaker


@dataclass
class Breaker:
    """Consecutive endpoint failures of one endpoint; ``open`` once they reach ``threshold``, or once the
    seconds spent on them reach ``budget_s`` (the run's retry budget: a hanging server opens it after
    about two timeouts whatever the threshold)."""

    endpoint: str
    threshold: int
    budget_s: float | None = None
    consecutive: int = 0
    failed_s: float = 0.0
    last_error: str | None = None
    open: bool = False
    reason: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def success(self) -> None:
        with self._lock:
            self.consecutive, self.failed_s, self.last_error = 0, 0.0, None

    def failure(self, error: str) -> None:
        """A call failed (after its retries) because of the endpoint."""
        with self._lock:
            self.consecutive += 1
            self.last_error = error
            self._check()

    def spend(self, error: str, seconds: float) -> None:
        """One failed attempt took ``seconds``: counted against the retry budget as it happens, so every
        thread waiting on a hanging server stops within the budget."""
        with self._lock:
            self.failed_s += max(0.0, seconds)
            self.last_error = error
            self._check()

    def _check(self) -> None:
        over_count = self.threshold > 0 and self.consecutive >= self.threshold
        over_budget = self.budget_s is not None and self.budget_s > 0 and self.failed_s >= self.budget_s
        if (over_count or over_budget) and not self.open:
            self.reason = self._why()  # what opened it, not what later in-flight failures add
            self.open = True
            log.error("%s", self.message())

    def _why(self) -> str:
        if self.threshold > 0 and self.consecutive >= self.threshold:
            return f"its last {self.consecutive} calls failed"
        return (
            f"failed attempts in a row took {self.failed_s:.1f} s, the retry budget "
            f"(TEMPORAG_LLM_RETRY_BUDGET, {self.budget_s:g} s)"
        )

    def message(self) -> str:
        return (
            f"not calling {self.endpoint} any more in this run: {self.reason or self._why()} "
            f"(last error: {self.last_error}). Every answer received so far is cached: fix the endpoint "
            "(server up? TEMPORAG_LLM_BASE_URL, TEMPORAG_LLM_TIMEOUT) and run the same command again to "
            "resume where this run stopped (in a live kernel: temporag.llm.reset_breakers())"
        )


_BREAKERS: dict[str, Breaker] = {}
_DISCOVERED: dict[str, Any] = {}  # endpoint -> model listed by the server, or the LLMError why not
_STATS_LOCK = threading.Lock()
_STATS: dict[str, Any] = {
    "calls": 0,
    "cached": 0,
    "failed": 0,
    "unparsed": 0,
    # unparsed replies a re-run asks for again (a served endpoint's, never cached): answers still missing
    "unparsed_pending": 0,
    "last_error": None,
    # what the successful calls cost, cached ones included (a re-run from cache reports the same cost):
    # tokens and the model's own seconds (original latency), for the runbooks' cost tables
    "prompt_tokens": 0,
    "completion_tokens": 0,
    "model_seconds": 0.0,
}


def breaker_for(endpoint: str, threshold: int, budget_s: float | None = None) -> Breaker:
    with _STATS_LOCK:
        if endpoint not in _BREAKERS:
            _BREAKERS[endpoint] = Breaker(endpoint, threshold, budget_s)
        return _BREAKERS[endpoint]


def reset_breakers() -> None:
    """Close every circuit breaker and forget model discovery (after fixing an endpoint in a live kernel)."""
    with _STATS_LOCK:
        _BREAKERS.clear()
        _DISCOVERED.clear()


def call_stats() -> dict[str, Any]:
    """Calls made through any client in this process so far: calls, cached, failed, unparsed, last_error,
    and the tokens and model seconds of the successful ones.  ``Results`` records the calls of its run in
    results.json, and the runner reports a run whose calls all failed as failed."""
    with _STATS_LOCK:
        return dict(_STATS)


def tally(
    *,
    cached: bool = False,
    error: str | None = None,
    response: LLMResponse | None = None,
    pending: bool = False,
) -> None:
    """Count one call (thread-safe); ``pending``: an unparsed reply a re-run asks for again."""
    with _STATS_LOCK:
        _STATS["calls"] += 1
        _STATS["cached"] += int(cached)
        if response is not None:
            _STATS["unparsed"] += int(response.unparsed)
            _STATS["unparsed_pending"] += int(response.unparsed and pending)
            _STATS["prompt_tokens"] += response.prompt_tokens
            _STATS["completion_tokens"] += response.completion_tokens
            seconds = response.original_latency_s
            _STATS["model_seconds"] += float(seconds if seconds is not None else response.latency_s)
        if error is not None:
            _STATS["failed"] += 1
            _STATS["last_error"] = error[:500]
