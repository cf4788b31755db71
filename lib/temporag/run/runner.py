"""Batch reproduction: execute notebooks with papermill, keep going past failures, skip what is current.

A run is current only if it finished: each notebook executes into a staging folder beside its output
folder, which is moved into place (with its run stamp ``_run.json``) only when the notebook ran to the
end and its LLM calls did not all fail.  A failed or killed run therefore leaves the last complete
run untouched (a failed run's outputs are kept in ``.<name>.failed/`` beside it for inspection), and
the next ``reproduce`` re-runs it unless that complete run is current.  A run with some LLM answers
missing (failed calls, a served model's unparsed replies) is published but stamped *incomplete*: never
current, so the next plain ``reproduce`` runs it again and only the missing calls are sent (the rest
come from the LLM cache).

A notebook is current when its published folder holds its executed copy, results.json and a run stamp
whose fingerprint of the inputs (notebook source, parameters, library source, data files, settings) is
unchanged and whose list of files (sha256 of each) still matches the folder — a folder another run or a
hand changed after publishing is run again; ``force`` re-runs.  Output folders: see
:mod:`temporag.notebook.outputs` (the committed paper run in ``figures/<paper>/``, every other run under
``runs/``, or ``-p output_dir=...``); one run writes a folder at a time.  The executed notebook a run
leaves names no folder of the machine it ran on (:mod:`temporag.run.executed`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import json
import logging
import os
import shutil
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from temporag import __version__
from temporag.cache import content_hash, file_sha256, save_json
from temporag.config import REPO_ROOT, export_absolute_paths, get_settings
from temporag.methods import registry
from temporag.notebook import outputs
from temporag.notebook.outputs import output_name  # noqa: F401 - re-exported: runner.output_name is public
from temporag.notebook.params import ParameterError, check_given
from temporag.redact import redact, redact_text
from temporag.run import kernel_log, oserrors, owned
from temporag.run.executed import finish_notebook
from temporag.run.progress import engine_name, watch

log = logging.getLogger(__name__)
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
FIGURES_DIR = outputs.FIGURES_DIR
RUNS_DIR = outputs.RUNS_DIR


def reading_order() -> list[str]:
    """Every registered notebook in its declared order (:mod:`temporag.methods.registry`; the leaderboard,
    which reads every paper's committed run, declares itself last)."""
    return registry.notebooks()


def notebook_path(name: str, notebook_dir: Path | None = None) -> Path:
    """A notebook's file: in ``notebook_dir`` (default notebooks/), or in the package that registered it."""
    local = (notebook_dir or NOTEBOOK_DIR) / f"{name}.ipynb"
    return local if local.exists() else registry.notebook_file(name) or local


@dataclass(frozen=True)
class RunOutcome:
    name: str
    status: str  # "ok" | "skipped" | "incomplete" (published, LLM answers missing) | "failed"
    seconds: float
    executed: Path | None
    error: str = ""
    output_dir: Path | None = None
    note: str = ""  # e.g. "2 of 6 LLM calls failed"
    kept: Path | None = None  # a failed run's outputs, beside (never in) output_dir
    counts: str = ""  # what the run warned about, e.g. "data mismatch: full.txt; 6/10 LLM calls failed"
    healed: tuple[str, ...] = ()  # cache repairs the run made (a damaged entry rebuilt, answers salvaged)

    @property
    def shown(self) -> str:
        """The status as a summary line shows it, e.g. ``ok (data mismatch: full.txt)``."""
        return f"{self.status} ({self.counts})" if self.counts else self.status

    def to_dict(self) -> dict:
        """JSON-ready, for a batch job that ran in another process or on another machine."""
        return {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict) -> RunOutcome:
        paths = {"executed", "output_dir", "kept"}
        fields = {k: Path(v) if k in paths and v is not None else v for k, v in data.items()}
        return cls(**{**fields, "healed": tuple(fields.get("healed") or ())})


def available_notebooks(notebook_dir: Path | None = None) -> list[str]:
    """Notebook names present in ``notebook_dir`` or registered by a method package with its own
    notebook file, in the kit's reading order (tour first, leaderboard last, others after it)."""
    notebook_dir = notebook_dir or NOTEBOOK_DIR
    names = {p.stem for p in notebook_dir.glob("*.ipynb")}
    names |= {e.notebook_name for e in registry.entries() if e.notebook_path and e.notebook_path.exists()}
    order = reading_order()
    return sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))


KIT = Path(__file__).resolve().parents[1]  # the temporag package


def _library_fingerprint(modules: list[str] | None = None) -> str:
    """The kit code a run depends on: the modules it imported (``kit_modules`` of its results.json, paths
    relative to the package), or every module of the kit when that is not known yet (a first run, an
    older stamp).  A module that is gone hashes as missing, so removing one makes the run stale too."""
    files = sorted(KIT.rglob("*.py")) if modules is None else [KIT / m for m in sorted(modules)]
    digests = [(p.relative_to(KIT).as_posix(), file_sha256(p) if p.exists() else None) for p in files]
    return content_hash(__version__, digests if modules is not None else [d for _, d in digests])


def run_modules(results_file: Path) -> list[str] | None:
    """The kit modules a finished run imported, as its results.json records them (None: not recorded)."""
    try:
        modules = json.loads(Path(results_file).read_text()).get("kit_modules")
    except (OSError, ValueError, AttributeError):
        return None
    return modules if isinstance(modules, list) and all(isinstance(m, str) for m in modules) else None


def _data_fingerprint() -> str:
    data_dir = get_settings().data_dir
    files = sorted(p for p in data_dir.rglob("*") if p.is_file()) if data_dir.exists() else []
    return content_hash(
        [(str(p.relative_to(data_dir)), p.stat().st_size, int(p.stat().st_mtime)) for p in files]
    )


# settings that change a run's time, or who may be sent what, never its results
_NOT_RESULTS = ("llm_concurrency", "llm_retry_budget", "llm_api_key", "llm_send_openai_key", "llm_allow_http")


def fingerprint(notebook: Path, parameters: dict, modules: list[str] | None = None) -> str:
    """What decides "current": the notebook, its parameters, the kit code it ran (``modules``; the whole
    kit when unknown), the data files and the settings that change results."""
    return content_hash(
        file_sha256(notebook),
        parameters,
        _library_fingerprint(modules),
        _data_fingerprint(),
        # how many LLM requests were in flight changes how long a run takes, never what it computes
        {k: v for k, v in get_settings().to_dict().items() if k not in _NOT_RESULTS},
    )


def resolve_output_dir(
    name: str,
    parameters: dict,
    declared: dict,
    figures_dir: Path = FIGURES_DIR,
    runs_dir: Path = RUNS_DIR,
) -> Path:
    """``output_dir`` when given (checked: nothing but the committed run goes under figures/), else the
    default folder of this profile and question set."""
    if parameters.get("output_dir"):
        out_dir = Path(parameters["output_dir"]).expanduser().resolve()
        outputs.check_output_dir(out_dir, parameters, declared, figures_dir)
        return out_dir
    return outputs.default_output_dir(name, parameters, declared, figures_dir, runs_dir)


def manifest(folder: Path) -> dict[str, str]:
    """sha256 of every file a run left in its folder (relative path → digest), but its stamp and hidden
    files (e.g. Jupyter's .ipynb_checkpoints): what the stamp records, so that a folder another run or a
    hand changed after publishing is never taken for the run the stamp describes."""
    folder = Path(folder)
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.name != outputs.STAMP
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    return {p.relative_to(folder).as_posix(): file_sha256(p) for p in files}


def changed_since_stamp(out_dir: Path) -> list[str]:
    """Files of a published folder added, changed or removed since its stamp was written (every file when
    the stamp records no manifest: nothing vouches for them); [] for a folder as its run left it."""
    try:
        recorded = json.loads((Path(out_dir) / outputs.STAMP).read_text()).get("files")
    except (OSError, ValueError):
        recorded = None
    now = manifest(out_dir)
    if not isinstance(recorded, dict):
        return sorted(now) or ["(no manifest)"]
    return sorted(k for k in set(recorded) | set(now) if recorded.get(k) != now.get(k))


def _is_current(out_dir: Path, executed_name: str, source: Path, params: dict) -> bool:
    stamp_file = out_dir / outputs.STAMP
    if not all(p.exists() for p in (out_dir / executed_name, out_dir / "results.json", stamp_file)):
        return False
    try:
        recorded = json.loads(stamp_file.read_text())
        modules = recorded.get("modules")
        if recorded.get("fingerprint") != fingerprint(source, params, modules):
            return False
    except (OSError, ValueError, AttributeError):
        return False
    if recorded.get("status", "ok") != "ok":  # an incomplete run: LLM answers are missing
        log.info("%s holds an incomplete run (%s): running it again", out_dir, recorded.get("note", ""))
        return False
    changed = changed_since_stamp(out_dir)
    if changed:
        log.warning(
            "%s changed after its run was published (%s): running it again", out_dir, ", ".join(changed[:5])
        )
    return not changed


def _read_results(results_json: Path) -> dict:
    try:
        data = json.loads(results_json.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run_counts(results_json: Path) -> str:
    """What a run warned about inside its notebook, counted for the console: data files that differ
    from their pinned release, failed LLM calls and unparsed replies (``unparsed`` where the client
    records it), trained or sampled artifacts that differ from their recorded sha256, e.g.
    ``data mismatch: full.txt; 6/10 LLM calls failed; 2 unparsed replies``."""
    data = _read_results(results_json)
    parts = []
    mismatched = data.get("data_mismatches") or {}
    if mismatched:
        parts.append(f"data mismatch: {', '.join(sorted(mismatched))}")
    calls = data.get("llm_calls") or {}
    n, failed, unparsed = (int(calls.get(k) or 0) for k in ("calls", "failed", "unparsed"))
    if failed:
        parts.append(f"{failed}/{n} LLM calls failed")
    if unparsed:
        parts.append(f"{unparsed} unparsed repl{'y' if unparsed == 1 else 'ies'}")
    healed = run_heals(results_json)
    if healed:
        parts.append(f"{len(healed)} cache repair{'' if len(healed) == 1 else 's'}")
    changed = sorted({str(a.get("kind")) for a in data.get("artifacts_changed") or [] if isinstance(a, dict)})
    if changed:  # a model or graph made again that differs from the first one: numbers may have moved
        parts.append(f"made again and differs from the recorded sha256: {', '.join(changed)}")
    return "; ".join(parts)


def run_heals(results_json: Path) -> tuple[str, ...]:
    """The cache repairs a run's kernel made (``cache_heals`` in results.json), each one line."""
    healed = _read_results(results_json).get("cache_heals") or []
    return tuple(str(h) for h in healed) if isinstance(healed, list) else ()


#: what an incomplete run's note ends with: how it gets complete
RESUME = (
    "not current: the next `temporag reproduce` runs it again and sends only the missing calls "
    "(every answer received is cached)"
)


def _llm_verdict(results_json: Path) -> tuple[str, str]:
    """("failed", why) when a run's LLM calls all failed; ("incomplete", what is missing) when some
    failed, or a served endpoint's replies could not be parsed (never cached, so a re-run asks again);
    ("", "") otherwise.  An incomplete run is published (its numbers are the best there are) but never
    current, so the next plain ``reproduce`` completes it."""
    data = _read_results(results_json)
    if not data:
        return "", ""
    calls = data.get("llm_calls") or {}
    n, failed = int(calls.get("calls") or 0), int(calls.get("failed") or 0)
    pending = int(calls.get("unparsed_pending") or 0)
    cause = str(calls.get("last_error") or "").splitlines()[0][:400] if failed else ""
    if n and failed == n:
        return "failed", f"all {n} LLM calls failed, so its reader numbers mean nothing — last error: {cause}"
    missing = []
    if failed:
        missing.append(
            f"{failed} of {n} LLM calls failed (left out of the reader metrics) — last error: {cause}"
        )
    if pending:
        missing.append(
            f"{pending} repl{'y' if pending == 1 else 'ies'} of the served model could not be parsed "
            "(not cached)"
        )
    return ("incomplete", "; ".join(missing) + f"; {RESUME}") if missing else ("", "")


def run_notebook(
    name: str,
    parameters: dict,
    *,
    force: bool = False,
    notebook_dir: Path = NOTEBOOK_DIR,
    figures_dir: Path = FIGURES_DIR,
    runs_dir: Path = RUNS_DIR,
    kernel: str | None = None,
    wait_s: float = 0.0,
    on_cell: Callable[[int, int, float], None] | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Execute one notebook into its output folder (staged, published only when it finished).
    ``on_cell(done, total, seconds)`` is called after each code cell and ``on_progress(text)`` with the
    library's open progress bars inside a long cell (:mod:`temporag.progress`): a batch's progress lines."""
    try:
        source, parameters, out_dir = _prepare(name, parameters, notebook_dir, figures_dir, runs_dir)
    except (ParameterError, owned.NotKitFolder) as exc:
        log.error("%s: %s", name, exc)
        return RunOutcome(name, "failed", 0.0, None, str(exc))
    outputs.sweep_runs(out_dir, figures_dir, runs_dir)  # what killed runs left, here and beside others
    t0 = time.perf_counter()
    try:
        with outputs.hold(out_dir, wait_s):
            return _run_locked(
                name, source, parameters, out_dir, force, notebook_dir, kernel, on_cell, on_progress
            )
    except outputs.OutputLocked as exc:
        log.error("%s: %s", name, exc)
        return RunOutcome(name, "failed", 0.0, None, str(exc), out_dir)
    except BaseException as exc:
        shutil.rmtree(outputs.staging_dir(out_dir), ignore_errors=True)  # this process's, half-written
        # a write that failed silently shows later as a file cut short (a notebook that is not JSON)
        seen = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:120]}"
        full = oserrors.full_disk(out_dir, seen) if isinstance(exc, Exception) else None
        if not isinstance(exc, OSError) and full is None:  # Ctrl-C, a bug: the caller says what happened
            raise
        # a full disk or a read-only folder: named as what it is, with its path; the batch goes on
        error = oserrors.describe(exc, out_dir) if isinstance(exc, OSError) else str(full)
        log.error("%s: %s", name, error)
        return RunOutcome(name, "failed", time.perf_counter() - t0, None, error, out_dir)


def _prepare(
    name: str, parameters: dict, notebook_dir: Path, figures_dir: Path, runs_dir: Path
) -> tuple[Path, dict, Path]:
    """(notebook, checked parameters, output folder) of a run; :class:`ParameterError` before any kernel
    starts for a name the notebook does not declare or a value out of range.  The kernel runs in
    notebooks/, so a question file is passed as the user meant it (relative to here)."""
    source = notebook_path(name, notebook_dir)
    export_absolute_paths()  # the kernel's cwd is notebooks/: a relative TEMPORAG_DATA means the caller's
    if parameters.get("questions_file"):
        questions = str(Path(parameters["questions_file"]).expanduser().resolve())
        parameters = {**parameters, "questions_file": questions}
    declared = outputs.declared_parameters(source)
    check_given(name, parameters, declared)
    if parameters.get("questions_file"):
        _check_questions_file(Path(parameters["questions_file"]))
    out_dir = resolve_output_dir(name, parameters, declared, figures_dir, runs_dir)
    outputs.check_replaceable(out_dir, figures_dir)  # publishing replaces it: only a folder the kit made
    return source, parameters, out_dir


def _check_questions_file(path: Path) -> None:
    """A questions file that holds no questions (``[]``), or is past the kit's caps (size, nesting depth),
    is one line before a kernel starts (its format is checked by the notebook's loader, which names file
    and line)."""
    from temporag.data._read import read_json_file
    from temporag.data.errors import InputLimitError

    try:
        records = read_json_file(path, "a questions file is a JSON list of question records")
    except InputLimitError as exc:
        raise ParameterError(f"questions_file={str(path)!r}: {exc}") from None
    except (OSError, ValueError):
        return  # missing, unreadable or not JSON: the loader says which and where
    if isinstance(records, (list, dict)) and not records:
        raise ParameterError(
            f"questions_file={str(path)!r} holds no questions ({json.dumps(records)}): give a file with at "
            "least one question record, or leave questions_file unset for the split"
        )


def current_run(
    name: str,
    parameters: dict,
    *,
    notebook_dir: Path = NOTEBOOK_DIR,
    figures_dir: Path = FIGURES_DIR,
    runs_dir: Path = RUNS_DIR,
) -> RunOutcome | None:
    """The "skipped" outcome when the notebook's folder already holds a complete, current run, else None
    (also for parameters the runner would refuse).  A read-only look without the folder's lock, so a
    batch need not start a process for a job that has nothing to do; :func:`run_notebook` decides again
    under the lock."""
    try:
        source, parameters, out_dir = _prepare(name, parameters, notebook_dir, figures_dir, runs_dir)
    except (ParameterError, OSError, ValueError):
        return None
    outputs.sweep_runs(out_dir, figures_dir, runs_dir)  # what killed runs left, here and beside others
    executed = f"{name}.ipynb"
    if _is_current(out_dir, executed, source, {**parameters, "output_dir": str(out_dir)}):
        return RunOutcome(name, "skipped", 0.0, out_dir / executed, output_dir=out_dir)
    return None


def _run_locked(
    name: str,
    source: Path,
    parameters: dict,
    out_dir: Path,
    force: bool,
    notebook_dir: Path,
    kernel: str | None,
    on_cell: Callable[[int, int, float], None] | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> RunOutcome:
    import papermill as pm

    outputs.recover(out_dir)
    executed_name = f"{name}.ipynb"
    params = {**parameters, "output_dir": str(out_dir)}
    stamp = fingerprint(source, params)
    if not force and _is_current(out_dir, executed_name, source, params):
        return RunOutcome(name, "skipped", 0.0, out_dir / executed_name, output_dir=out_dir)
    staging = outputs.staging_dir(out_dir)
    staging.mkdir(parents=True)
    env_before = {k: os.environ.get(k) for k in (outputs.ENV_STAGING, outputs.ENV_FINAL)}
    os.environ[outputs.ENV_STAGING], os.environ[outputs.ENV_FINAL] = str(staging), str(out_dir)
    t0 = time.perf_counter()
    error = ""
    progress = {}
    if on_cell is not None:
        progress = {"engine_name": engine_name(), "on_cell": on_cell}
    watching = contextlib.ExitStack()
    kernel_log_file = kernel_log.log_path(staging)  # the kernel process's own streams: not the console
    kernel_streams = watching.enter_context(  # never through a link planted where the log goes
        open(kernel_log_file, "w", encoding="utf-8", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW, 0o666))
    )
    if on_progress is not None:  # the kernel's progress bars, read from a side-channel file
        watching.enter_context(watch(on_progress))
    try:
        for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
            try:
                pm.execute_notebook(
                    str(source),
                    str(staging / executed_name),
                    parameters={**params, "output_dir": str(staging)},
                    kernel_name=kernel,
                    progress_bar=False,
                    cwd=str(source.parent),
                    start_timeout=kernel_start_timeout(),
                    **progress,
                    kernel_manager_class=kernel_log.manager_class(kernel_streams),
                )
                break
            except RuntimeError as exc:
                if KERNEL_START_CRASH not in str(exc) or attempt == KERNEL_START_ATTEMPTS:
                    raise
                log.warning("%s: its kernel died while starting (no cell ran); starting another", name)
    except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
        error = f"{type(exc).__name__}: {exc}".strip() or traceback.format_exc()
        # a full disk met inside a cell, named as such, with the file the cell's error names; the staging
        # folder is gone by the time this is read, so an error that names no file is not pinned on it
        cache = get_settings().cache_dir
        unnamed = f"a file its error does not name (the run's folder: {out_dir}; the cache: {cache})"
        named = oserrors.from_text(error, unnamed)
        if named:
            error += f"\n{named}"
        if "DeadKernelError" in error or "Kernel died" in error:  # what the kernel said last
            last = kernel_log.tail(kernel_log_file)
            kept = kernel_log.log_path(outputs.failed_dir(out_dir))  # a failed run's staging is kept there
            error += f"\nthe kernel's own output ({kept}), last lines:\n{last}"
        error = redact_text(error)  # a cell's traceback may quote the endpoint, key and all
    finally:
        watching.close()
        for key, value in env_before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    seconds = time.perf_counter() - t0
    verdict, note = ("failed", "") if error else _llm_verdict(staging / "results.json")
    counts = run_counts(staging / "results.json")
    healed = run_heals(staging / "results.json")
    if (staging / executed_name).exists():  # no machine path in any notebook a run leaves
        final = outputs.failed_dir(out_dir) if verdict == "failed" else out_dir
        committed = verdict != "failed" and outputs.is_committed_run(
            params, outputs.declared_parameters(source)
        )
        finish_notebook(staging / executed_name, final, slim=committed)  # slim: kept in git with its figures
    if verdict == "failed":
        error = error or note
        save_json(staging / outputs.STAMP, _stamp("failed", stamp, params, seconds, note, error))
        kept = outputs.keep_failed(staging, out_dir)
        executed = kept / executed_name
        log.error("%s failed: %s", name, error.splitlines()[0] if error else "")
        return RunOutcome(
            name,
            "failed",
            seconds,
            executed if executed.exists() else None,
            error,
            out_dir,
            kept=kept,
            counts=counts,
            healed=healed,
        )
    modules = run_modules(staging / "results.json")  # the kit code this run ran: its fingerprint's part
    stamp = fingerprint(source, params, modules)
    status = verdict or "ok"  # "incomplete": published, but not current (see _llm_verdict)
    recorded = {**_stamp(status, stamp, params, seconds, note), "modules": modules}
    kernel_log_file.unlink(missing_ok=True)  # housekeeping of a run that worked: not published
    recorded["files"] = manifest(staging)
    save_json(staging / outputs.STAMP, recorded)
    outputs.publish(staging, out_dir)
    if note:  # the caller prints it (once: the command line's summary); a log line would repeat it
        log.info("%s: %s", name, note)
    return RunOutcome(
        name,
        status,
        seconds,
        out_dir / executed_name,
        output_dir=out_dir,
        note=note,
        counts=counts,
        healed=healed,
    )


# A kernel process that dies before answering its first request ran no cell, so starting another is safe;
# seen when several jobs start kernels at the same moment on a loaded 2-core machine.  A kernel that is
# merely slow (TEMPORAG_KERNEL_START_TIMEOUT) is not retried: that would only double the wait.
KERNEL_START_CRASH = "Kernel died before replying to kernel_info"
KERNEL_START_ATTEMPTS = 2


def kernel_start_timeout() -> float:
    """Seconds a notebook's kernel may take to start: TEMPORAG_KERNEL_START_TIMEOUT, else papermill's 60.
    On a machine loaded far past its cores a niced kernel can need longer, and every notebook of a batch
    then fails with "Kernel didn't respond in 60 seconds" before running a cell."""
    raw = os.environ.get("TEMPORAG_KERNEL_START_TIMEOUT") or "60"
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ValueError(f"TEMPORAG_KERNEL_START_TIMEOUT={raw!r} must be a number of seconds > 0")
    return value


def _stamp(status: str, fingerprint: str, params: dict, seconds: float, note: str, error: str = "") -> dict:
    """The run stamp ``_run.json``: what decides "current" (the fingerprint) and what an index shows."""
    return {
        "status": status,
        "fingerprint": fingerprint,
        "parameters": redact(params),
        "seconds": round(seconds, 1),
        "finished": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "note": note,
        **({"error": error.strip()[-2000:]} if status == "failed" else {}),
    }


def reproduce(
    names: list[str] | None = None,
    profile: str = "smoke",
    extra: dict | None = None,
    force: bool = False,
    notebook_dir: Path | None = None,
    figures_dir: Path | None = None,
    kernel: str | None = None,
    runs_dir: Path | None = None,
    wait_s: float = 0.0,
) -> list[RunOutcome]:
    """Run several notebooks in order; a failing one is reported and the batch goes on."""
    notebook_dir = notebook_dir or NOTEBOOK_DIR
    figures_dir = figures_dir or FIGURES_DIR
    runs_dir = runs_dir or RUNS_DIR
    names = names or available_notebooks(notebook_dir)
    missing = [n for n in names if not notebook_path(n, notebook_dir).exists()]
    if missing:
        raise FileNotFoundError(
            f"no such notebook(s): {missing}; available: {available_notebooks(notebook_dir)}"
        )
    outcomes = []
    for name in names:
        log.info("running %s (profile %s)", name, profile)
        outcome = run_notebook(
            name,
            {"profile": profile, **(extra or {})},
            force=force,
            notebook_dir=notebook_dir,
            figures_dir=figures_dir,
            runs_dir=runs_dir,
            kernel=kernel,
            wait_s=wait_s,
        )
        where = f"  → {outcome.output_dir}" if outcome.output_dir else ""
        print(f"[{outcome.shown:>7}] {name:<12} {outcome.seconds:7.1f}s{where}", flush=True)
        if outcome.note:
            print(f"          note: {outcome.note}", flush=True)
        for heal in outcome.healed:
            print(f"          healed: {heal}", flush=True)
        outcomes.append(outcome)
    return outcomes


def summary(outcomes: list[RunOutcome]) -> str:
    lines = ["notebook      status    seconds  output"]
    for o in outcomes:
        # o.shown: the status with what the run warned about inside its notebook, counted
        lines.append(f"{o.name:<13} {o.shown:<9} {o.seconds:7.1f}  {o.output_dir or o.executed or ''}")
        if o.error:
            lines.append("    " + o.error.strip().splitlines()[-1][:300])
        if o.kept:
            lines.append(f"    this run's outputs: {o.kept} (the last complete run, if any, is unchanged)")
        lines += [f"    healed: {h}" for h in o.healed]  # each one line, bounded where it is made
        if o.note:
            lines.append("    note: " + clip_note(o.note))
    return "\n".join(lines)


def clip_note(note: str, width: int = 300) -> str:
    """A run's note for one summary line: whole when it fits, else cut at a word boundary with "…" — what
    comes before the closing :data:`RESUME` (a long last error) is cut, never how to resume."""
    tail = f"; {RESUME}" if note.endswith(f"; {RESUME}") else ""
    head = note[: len(note) - len(tail)]
    room = max(width - len(tail), 40)
    if len(head) > room:
        head = head[: room - 1].rsplit(" ", 1)[0].rstrip(" ,;:—-") + "…"
    return head + tail
