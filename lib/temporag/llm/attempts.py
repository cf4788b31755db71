"""One request to the backend, attempt by attempt, until it returns a chat completion or gives up.

The policy pieces (which failures are transient, how long to wait, the breaker) are in
:mod:`~temporag.llm.retry`; this is the loop that applies them to a single request, so a hanging or
refusing endpoint costs a bounded number of seconds and attempts, never a run's worth.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from temporag.llm import retry
from temporag.llm.responses import extract_text
from temporag.llm.types import EndpointError, LLMError, LLMUnavailable, Messages, describe_error

log = logging.getLogger("temporag.llm")  # the client's messages, under the name users configure


def complete_with_retries(
    backend: Any,
    messages: Messages,
    params: dict[str, Any],
    *,
    attempts: int,
    breaker: retry.Breaker,
    timeout_s: float,
    budget_s: float,
    base_delay_s: float,
    max_delay_s: float,
    where: str,
) -> tuple[dict, float, str, str | None]:
    """(raw completion, seconds, text, finish reason) of the first attempt that returns a chat
    completion.  Transient failures — including a body that is not a completion — are retried
    with backoff (or after the server's ``Retry-After``); running out of attempts, or an
    endpoint-wide refusal, is an :class:`EndpointError`.  Each failed attempt's seconds count against
    the breaker's retry budget at once (``budget_s``, default 2 × the timeout), and a call stops retrying
    timeouts before they overrun it, so a hanging server costs about two timeouts, not minutes.
    ``where`` names endpoint and model in the errors."""
    last: BaseException | None = None
    timed_out_s = 0.0
    made = 0
    for attempt in range(attempts):
        if attempt and breaker.open:  # another thread (or this call's failures) opened it
            raise LLMUnavailable(breaker.message()) from last
        made += 1
        t0 = time.perf_counter()
        try:
            raw = backend.complete(messages, params)
            text, finish_reason = extract_text(raw, where)
            return raw, time.perf_counter() - t0, text, finish_reason
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified below
            last = exc
            if not retry.is_transient(exc):
                kind = EndpointError if retry.endpoint_wide(exc) else LLMError
                raise kind(f"LLM call to {where} failed: {describe_error(exc)}") from exc
            spent = time.perf_counter() - t0
            breaker.spend(describe_error(exc), spent)  # at once: a hang opens it within the budget
            if retry.is_timeout(exc):
                timed_out_s += spent
                # another timeout would overrun the budget (2 timeouts by default): give up now
                if timed_out_s + timeout_s > budget_s + 0.5 * timeout_s or breaker.open:
                    break
            if attempt < attempts - 1:
                delay = retry.backoff_s(attempt, base_delay_s, max_delay_s, exc)
                log.info(
                    "transient LLM failure (%s); retry %d/%d in %.2f s",
                    describe_error(exc),
                    attempt + 1,
                    attempts - 1,
                    delay,
                )
                time.sleep(delay)
    assert last is not None
    raise EndpointError(
        f"LLM call to {where} failed after {made} attempt{'s' if made != 1 else ''}; last error: "
        f"{describe_error(last)} — is the server up and TEMPORAG_LLM_TIMEOUT long enough?"
    ) from last
