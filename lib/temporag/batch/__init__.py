"""Batch reproduction at scale: parallel jobs, parameter grids, a distributed engine, an HTML index.

``temporag reproduce`` builds a list of :class:`~temporag.batch.jobs.Job` (notebooks × one parameter set,
or a grid file's expansion, :mod:`temporag.batch.grid`) and hands it to an engine: ``local`` (this
machine, ``--jobs N`` at once, :mod:`temporag.batch.local`) or ``dask`` (a Dask distributed cluster,
:mod:`temporag.batch.dask_engine`).  Whatever the engine, each job is one papermill execution through
:func:`temporag.run.runner.run_notebook`, so outputs land in the same folders, are staged and published the
same way, and are skipped while current.  :mod:`temporag.batch.index` renders the executed notebooks
and their headline numbers as a static HTML site.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from temporag.batch.dask_engine import run_dask
from temporag.batch.jobs import Job, label_for
from temporag.batch.local import run_local
from temporag.run.progress import Printer
from temporag.run.runner import RunOutcome

ENGINES = ("local", "dask")


def plan(
    names: list[str],
    profile: str,
    extra: dict[str, Any],
    *,
    notebook_dir: Path,
    figures_dir: Path,
    runs_dir: Path,
    force: bool = False,
    kernel: str | None = None,
    wait_s: float = 0.0,
) -> list[Job]:
    """One job per notebook with the same parameters (the plain ``reproduce``)."""
    parameters = {"profile": profile, **extra}
    return [
        Job(
            notebook=name,
            parameters=parameters,
            label=label_for(name, parameters),
            notebook_dir=str(Path(notebook_dir).resolve()),
            figures_dir=str(Path(figures_dir).resolve()),
            runs_dir=str(Path(runs_dir).resolve()),
            force=force,
            kernel=kernel,
            wait_s=wait_s,
        )
        for name in names
    ]


def run(
    jobs: list[Job],
    *,
    engine: str = "local",
    n_jobs: int = 1,
    address: str | None = None,
    worker_cache: str = "shared",
    printer: Printer | None = None,
) -> list[RunOutcome]:
    """Run ``jobs`` on ``engine``; outcomes in job order, a failure never stops the others."""
    printer = printer or Printer(len(jobs))
    if engine == "local":
        return run_local(jobs, n_jobs, printer)
    if engine == "dask":
        return run_dask(jobs, address=address, n_workers=n_jobs, worker_cache=worker_cache, printer=printer)
    raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
