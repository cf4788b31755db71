"""The client: :class:`LLM` — cache, single flight, retries, breaker, accounting and concurrent batches."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from temporag.cache import content_hash
from temporag.config import Settings, get_settings
from temporag.llm import models, responses, retry
from temporag.llm.attempts import complete_with_retries
from temporag.llm.backends import DEFAULT_N_CTX, EMBEDDED_ENDPOINT, LlamaCppBackend, OpenAIBackend
from temporag.llm.cache import ResponseCache, best_effort
from temporag.llm.concurrency import FLIGHTS, in_worker, ordered_map
from temporag.llm.endpoint import api_key_for, check_transport
from temporag.llm.replies import Accept, accepts, parse_json_reply, parses_as_json
from temporag.llm.types import (
    EndpointError,
    LLMError,
    LLMResponse,
    LLMUnavailable,
    Messages,
    check_messages,
    describe_error,
)
from temporag.redact import redact_url

log = logging.getLogger("temporag.llm")


class LLM:
    """Chat client with caching, retries, a circuit breaker, token accounting and concurrent batches.

    ``LLM()`` reads the settings: an endpoint if ``TEMPORAG_LLM_BASE_URL`` is set, else the embedded
    SmolLM2.  ``backend=`` injects any object with ``complete(messages, params) -> dict`` (tests, custom
    runtimes).  ``cache=False`` disables the sqlite cache (or pass a :class:`ResponseCache`);
    ``retry_base_delay`` is the first backoff step in seconds, doubled each retry, with jitter, capped
    at ``retry_max_delay``.  ``concurrency`` (default: the settings' ``llm_concurrency``, 16 for a served
    endpoint, always 1 for the embedded model) is how many requests :meth:`chat_many` and
    :meth:`map_questions` keep in flight.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        backend: Any = None,
        cache: bool | ResponseCache = True,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 30.0,
        n_ctx: int = DEFAULT_N_CTX,
        concurrency: int | None = None,
    ) -> None:
        self.settings: Settings = settings if settings is not None else get_settings()
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        if backend is None:
            if self.settings.offline_llm:
                backend = LlamaCppBackend(n_ctx=n_ctx, threads=self.settings.threads)
            else:
                url = self.settings.llm_base_url
                check_transport(url, self.settings.llm_allow_http)
                backend = OpenAIBackend(
                    url,
                    self.settings.llm_model,
                    timeout=self.settings.llm_timeout,
                    api_key=api_key_for(self.settings),
                )
        elif not callable(getattr(backend, "complete", None)):
            raise TypeError(f"backend {backend!r} has no complete(messages, params) method")
        self.backend = backend
        self._concurrency = concurrency
        self._model: str | None = None
        self._cache: ResponseCache | None
        if isinstance(cache, ResponseCache):
            self._cache = cache
        elif cache:
            read_only = True if getattr(self.settings, "cache_readonly", False) else None  # None: detect
            self._cache = ResponseCache(self.settings.cache_dir / "llm.sqlite", read_only=read_only)
        else:
            self._cache = None

    def __repr__(self) -> str:  # never touches the network
        return f"LLM(model={self._model_label()!r}, endpoint={self.endpoint!r})"

    @property
    def concurrency(self) -> int:
        """Requests this client keeps in flight: 1 for the in-process model (one llama context), else
        ``concurrency=`` or the settings' ``llm_concurrency``."""
        if isinstance(self.backend, LlamaCppBackend):
            return 1
        if self._concurrency is not None:
            return max(1, int(self._concurrency))
        return self.settings.effective_llm_concurrency

    # -- identity ------------------------------------------------------------------------------------
    def _model_label(self) -> str:
        """The model's name if known without asking anyone, else a placeholder (for messages)."""
        return models.model_label(self.backend, self._model)

    @property
    def model_name(self) -> str:
        """The model's name, resolved on first use and then kept (it is part of every cache key)."""
        if self._model is None:
            self._model = models.resolve_model(self.backend, self.endpoint, lambda: self.breaker, self._cache)
        return self._model

    @property
    def endpoint(self) -> str:
        """The backend's endpoint without credentials: what messages, the cache and its keys name."""
        named = getattr(self.backend, "endpoint", None) or f"backend:{type(self.backend).__name__}"
        return redact_url(str(named))

    @property
    def breaker(self) -> retry.Breaker:
        """The circuit breaker of this client's endpoint (shared by every client and thread)."""
        return retry.breaker_for(self.endpoint, int(self.settings.llm_breaker), self.retry_budget_s)

    @property
    def retry_budget_s(self) -> float:
        """Seconds of failed attempts in a row after which the breaker opens (default 2 × the timeout)."""
        budget = getattr(self.settings, "llm_retry_budget", None)
        return float(budget) if budget is not None else 2.0 * float(self.settings.llm_timeout)

    def describe(self) -> dict[str, Any]:
        """What to save beside results: which model answered, where, and with which call policy."""
        try:
            model = self.model_name
        except LLMError:
            model = self._model_label()
        return {
            "model": model,
            "backend": type(self.backend).__name__,
            "endpoint": self.endpoint,
            "offline": self.endpoint == EMBEDDED_ENDPOINT,
            "max_retries": self.settings.llm_max_retries,
            "timeout_s": self.settings.llm_timeout,
            "retry_budget_s": self.retry_budget_s,
            "breaker": self.settings.llm_breaker,
            "concurrency": self.concurrency,
            "cache": str(self._cache.path) if self._cache is not None else None,
        }

    def request_key(self, messages: Messages, params: dict[str, Any]) -> str:
        """Cache key: everything that determines the reply, nothing that does not (e.g. timeouts)."""
        return content_hash(self.model_name, self.endpoint, messages, params)

    # -- calls ---------------------------------------------------------------------------------------
    def chat(
        self,
        messages: Sequence[dict[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        json_mode: bool = False,
        accept: Accept | None = None,
    ) -> LLMResponse:
        """One chat completion, from cache if this exact request succeeded before.

        ``accept(text)`` is the caller's check that the reply can be parsed: a reply it rejects is
        returned with ``unparsed=True`` and, from a served endpoint, never cached (a cached one it
        rejects is dropped and asked again), so a re-run after fixing the server asks again.
        Raises :class:`LLMError` once retries are exhausted, on a non-transient failure, or at once
        (:class:`LLMUnavailable`) while the endpoint's circuit breaker is open.
        """
        try:
            response = self._chat(messages, temperature, max_tokens, stop, json_mode, accept)
        except Exception as exc:
            retry.tally(error=str(exc) if isinstance(exc, LLMError) else describe_error(exc))
            raise
        # a served endpoint's unparsed reply is not cached: the run is incomplete until a re-run gets one
        retry.tally(cached=response.cached, response=response, pending=not self._keeps_unparsed)
        return response

    def _chat(self, messages, temperature, max_tokens, stop, json_mode, accept) -> LLMResponse:
        msgs = check_messages(messages)
        params = {
            "temperature": float(temperature),
            "max_tokens": int(max_tokens),
            "stop": list(stop) if stop else None,
            "json_mode": bool(json_mode),
        }
        t0 = time.perf_counter()
        key = self.request_key(msgs, params)
        stored = self._cached(key, accept)
        if stored is not None:
            return responses.from_cache(stored, t0)
        response, shared = FLIGHTS.do(key, lambda: self._fetch(key, msgs, params, accept, t0))
        if shared:  # another thread sent this very request: its answer, as a cache hit would give it
            return responses.shared(response, t0)
        return response

    def _fetch(self, key: str, msgs: Messages, params: dict[str, Any], accept, t0: float) -> LLMResponse:
        """The request itself, under the cross-process in-flight lock of its key."""
        breaker = self.breaker
        if breaker.open:
            raise LLMUnavailable(breaker.message())
        claim = self._cache.claim(key) if self._cache is not None else contextlib.nullcontext(False)
        with claim as waited:
            if waited:  # another run held this request: it has probably answered it by now
                stored = self._cached(key, accept)
                if stored is not None:
                    return responses.from_cache(stored, t0)
                if breaker.open:
                    raise LLMUnavailable(breaker.message())
            # after a failed call, one attempt per call: an outage costs a few requests, not hours
            attempts = 1 if breaker.consecutive else max(0, int(self.settings.llm_max_retries)) + 1
            try:
                raw, latency, text, finish_reason = complete_with_retries(
                    self.backend,
                    msgs,
                    params,
                    attempts=attempts,
                    breaker=self.breaker,
                    timeout_s=float(self.settings.llm_timeout),
                    budget_s=self.retry_budget_s,
                    base_delay_s=self.retry_base_delay,
                    max_delay_s=self.retry_max_delay,
                    where=f"{self.endpoint} (model {self._model_label()})",
                )
            except EndpointError as exc:
                breaker.failure(str(exc))
                raise
            except LLMError:
                breaker.success()  # the endpoint answered; this request was the problem
                raise
            breaker.success()
            prompt_tokens, completion_tokens, source = responses.token_counts(self.backend, raw, msgs, text)
            unparsed = not accepts(accept, text)
            response = LLMResponse(
                text=text,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                token_source=source,
                latency_s=latency,
                cached=False,
                model=str(raw.get("model") or self.model_name),
                original_latency_s=latency,
                finish_reason=finish_reason,
                unparsed=unparsed,
            )
            if unparsed:
                log.warning("LLM reply could not be parsed (not cached; a re-run asks again): %r", text[:200])
            elif self._cache is not None:
                self._cache_put(key, response)
        return response

    def chat_json(self, messages: Sequence[dict[str, str]], **kwargs: Any) -> tuple[Any, LLMResponse]:
        """``chat`` in JSON mode, returning the parsed object too (LLMError if the reply holds none; such a
        reply is not cached)."""
        response = self.chat(messages, json_mode=True, accept=parses_as_json, **kwargs)
        return parse_json_reply(response.text), response

    def chat_many(
        self,
        batch: Iterable[Sequence[dict[str, str]]],
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        json_mode: bool = False,
        accept: Accept | None = None,
        progress: bool = True,
        desc: str = "LLM calls",
    ) -> list[LLMResponse]:
        """``chat`` over a batch, up to :attr:`concurrency` requests in flight, results in input order,
        with a progress bar (calls/s and ETA).

        A failing item becomes an :class:`LLMResponse` with ``error`` set and empty text, so one bad
        question never loses the work done on the others.  Once the circuit breaker is open the
        remaining items are answered from the cache where they can be and recorded as failed (with
        the cause) where they cannot, without a request.
        """
        items = list(batch)
        counts = {"failed": 0, "skipped": 0}

        def one(messages) -> LLMResponse:
            t0 = time.perf_counter()
            try:
                return self.chat(
                    messages,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    stop=stop,
                    json_mode=json_mode,
                    accept=accept,
                )
            except Exception as exc:  # noqa: BLE001 - recorded per item, the batch goes on
                if not isinstance(exc, LLMUnavailable):
                    log.warning("LLM call failed: %s", exc)
                return self.error_response(exc, time.perf_counter() - t0)

        def done(_i: int, response: LLMResponse) -> None:
            if response.error is not None:
                counts["failed"] += 1
                counts["skipped"] += int(response.error.startswith("not calling "))

        out = ordered_map(
            one,
            items,
            workers=self.concurrency,
            progress=progress and not in_worker(),
            desc=desc,
            on_done=done,
        )
        if counts["skipped"]:
            log.error(
                "%d of %d LLM calls were not made because the circuit breaker is open: %s",
                counts["skipped"],
                len(items),
                self.breaker.message(),
            )
        return out

    def map_questions(
        self, fn: Callable[[Any], Any], items: Sequence[Any], *, progress: bool = True, desc: str = ""
    ) -> list[Any]:
        """``[fn(x) for x in items]`` with up to :attr:`concurrency` items at once, results in input
        order: for methods whose questions each take several LLM steps (an agent's turns, a parse then a
        read), each question's own steps stay in order while questions run side by side.  ``fn`` must
        touch no state another item writes; every LLM call it makes goes through this client's cache."""
        return ordered_map(fn, items, workers=self.concurrency, progress=progress, desc=desc, unit="q")

    def error_response(self, exc: BaseException, latency_s: float = 0.0) -> LLMResponse:
        """The record a batch keeps for an item that failed (never asks the network for the model)."""
        return responses.failed(exc, self._model_label(), latency_s)

    # -- internals -----------------------------------------------------------------------------------
    def _cached(self, key: str, accept: Accept | None) -> dict[str, Any] | None:
        """The stored record of ``key`` when it passes ``accept``; one that does not is dropped (it was
        cached before replies were checked) and asked again."""
        if self._cache is None:
            return None
        stored = best_effort(self._cache.get, key)
        if stored is not None and not accepts(accept, stored["text"]):
            if self._keeps_unparsed:
                return {**stored, "unparsed": True}
            log.info("cached LLM reply %s cannot be parsed; dropped, asking again", key)
            best_effort(self._cache.delete, key)
            return None
        return stored

    @property
    def _keeps_unparsed(self) -> bool:
        """Unparsable replies of a served endpoint are never cached: prose where a list was asked for
        usually means a misconfigured server (chat template, a proxy), and a re-run after the fix must
        ask again.  The embedded model is deterministic and local: asking it again gives the same prose,
        so its replies are cached (and still counted as unparsed)."""
        return isinstance(self.backend, LlamaCppBackend)

    def _cache_put(self, key: str, response: LLMResponse) -> None:
        record = responses.cache_record(response)
        best_effort(self._cache.put, key, self.model_name, self.endpoint, record)
