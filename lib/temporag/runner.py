"""Batch reproduction: execute notebooks with papermill, keep going past failures, skip what is current.

A notebook is current when its executed copy and results.json exist and the fingerprint of its
inputs (notebook source, parameters, library source, data checksums) is unchanged; ``force`` re-runs.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from temporag import __version__
from temporag.cache import content_hash, file_sha256, save_json
from temporag.config import REPO_ROOT, get_settings

log = logging.getLogger(__name__)
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
FIGURES_DIR = REPO_ROOT / "figures"
ORDER = ["00_tour", "tecqa", "star_rag", "timer4", "ia_rag", "sar", "leaderboard"]


@dataclass(frozen=True)
class RunOutcome:
    name: str
    status: str  # "ok" | "skipped" | "failed"
    seconds: float
    executed: Path | None
    error: str = ""


def available_notebooks(notebook_dir: Path | None = None) -> list[str]:
    """Notebook names present, in the kit's reading order (tour first, leaderboard last)."""
    notebook_dir = notebook_dir or NOTEBOOK_DIR
    names = sorted(p.stem for p in notebook_dir.glob("*.ipynb"))
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def output_name(name: str) -> str:
    """Figures folder of a notebook: '00_tour' → 'tour'."""
    return name.split("_", 1)[1] if name[:2].isdigit() and "_" in name else name


def _library_fingerprint() -> str:
    lib = REPO_ROOT / "lib" / "temporag"
    return content_hash(__version__, *[file_sha256(p) for p in sorted(lib.rglob("*.py"))])


def _data_fingerprint() -> str:
    data_dir = get_settings().data_dir
    files = sorted(p for p in data_dir.rglob("*") if p.is_file()) if data_dir.exists() else []
    return content_hash(
        [(str(p.relative_to(data_dir)), p.stat().st_size, int(p.stat().st_mtime)) for p in files]
    )


def fingerprint(notebook: Path, parameters: dict) -> str:
    return content_hash(
        file_sha256(notebook),
        parameters,
        _library_fingerprint(),
        _data_fingerprint(),
        get_settings().to_dict(),
    )


def run_notebook(
    name: str,
    parameters: dict,
    *,
    force: bool = False,
    notebook_dir: Path = NOTEBOOK_DIR,
    figures_dir: Path = FIGURES_DIR,
    kernel: str | None = None,
) -> RunOutcome:
    """Execute one notebook; the executed copy lands in figures/<name>/<name>.ipynb."""
    import papermill as pm

    source = notebook_dir / f"{name}.ipynb"
    out_dir = figures_dir / output_name(name)
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / f"{name}.ipynb"
    stamp_file = out_dir / "_run.json"
    params = {**parameters, "output_dir": str(out_dir)}
    stamp = fingerprint(source, params)
    if not force and executed.exists() and (out_dir / "results.json").exists() and stamp_file.exists():
        if json.loads(stamp_file.read_text()).get("fingerprint") == stamp:
            return RunOutcome(name, "skipped", 0.0, executed)
    t0 = time.perf_counter()
    try:
        pm.execute_notebook(
            str(source),
            str(executed),
            parameters=params,
            kernel_name=kernel,
            progress_bar=False,
            cwd=str(notebook_dir),
        )
    except Exception as exc:  # papermill raises PapermillExecutionError with the cell's traceback
        message = f"{type(exc).__name__}: {exc}".strip()
        log.error("%s failed: %s", name, message.splitlines()[0] if message else exc)
        return RunOutcome(
            name,
            "failed",
            time.perf_counter() - t0,
            executed if executed.exists() else None,
            message or traceback.format_exc(),
        )
    seconds = time.perf_counter() - t0
    save_json(stamp_file, {"fingerprint": stamp, "parameters": params, "seconds": round(seconds, 1)})
    return RunOutcome(name, "ok", seconds, executed)


def reproduce(
    names: list[str] | None = None,
    profile: str = "smoke",
    extra: dict | None = None,
    force: bool = False,
    notebook_dir: Path | None = None,
    figures_dir: Path | None = None,
    kernel: str | None = None,
) -> list[RunOutcome]:
    """Run several notebooks in order; a failing one is reported and the batch goes on."""
    notebook_dir = notebook_dir or NOTEBOOK_DIR
    figures_dir = figures_dir or FIGURES_DIR
    names = names or available_notebooks(notebook_dir)
    missing = [n for n in names if not (notebook_dir / f"{n}.ipynb").exists()]
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
            kernel=kernel,
        )
        print(f"[{outcome.status:>7}] {name:<12} {outcome.seconds:7.1f}s", flush=True)
        outcomes.append(outcome)
    return outcomes


def summary(outcomes: list[RunOutcome]) -> str:
    lines = ["notebook      status    seconds  output"]
    for o in outcomes:
        lines.append(f"{o.name:<13} {o.status:<9} {o.seconds:7.1f}  {o.executed or ''}")
        if o.error:
            lines.append("    " + o.error.strip().splitlines()[-1][:300])
    return "\n".join(lines)
