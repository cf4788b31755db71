"""The local engine: a batch's jobs on this machine, ``n_jobs`` at a time.

One job at a time runs in this process (as ``temporag reproduce`` always did); more run each in a child
process (:func:`temporag.batch.jobs.run_in_child`), started by a pool of threads that only wait on them.
The jobs share the caches through the file system, which is built for it: atomic writes, a build lock
per expensive entry (:func:`temporag.cache.building`), a sqlite LLM cache in WAL mode with an in-flight
lock per request, and one writer per output folder.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from temporag.batch.jobs import Job, run_in_child
from temporag.run import oserrors
from temporag.run.progress import Printer
from temporag.run.runner import RunOutcome


def log_file(job: Job) -> Path:
    """Where a child job's output goes: ``<runs>/logs/<label>.log`` (rewritten by each run)."""
    return Path(job.runs_dir) / "logs" / (re.sub(r"[^A-Za-z0-9_.=-]+", "_", job.label).strip("_") + ".log")


def report(printer: Printer, index: int, job: Job, outcome: RunOutcome) -> None:
    """The closing line(s) of one job."""
    printer.finished[index] = outcome
    where = f" → {outcome.output_dir}" if outcome.output_dir else ""
    # its status line counts what is missing; the note itself is printed once, in the summary
    printer.line(index, job.label, f"{outcome.shown} {outcome.seconds:.1f} s{where}")
    for heal in outcome.healed:
        printer.line(index, job.label, f"healed: {heal}")
    if outcome.status == "failed" and outcome.error:
        printer.line(index, job.label, "error: " + outcome.error.strip().splitlines()[-1][:300])


def on_event(printer: Printer, index: int, job: Job, event: dict) -> None:
    """Print a child job's ``cell`` or ``progress`` event (the other events are the engine's)."""
    if event.get("event") == "cell":
        printer.cell(index, job.label, event["done"], event["of"], event["s"])
    elif event.get("event") == "progress":
        printer.progress(index, job.label, event["text"])


def run_one(job: Job, index: int, printer: Printer, in_process: bool) -> RunOutcome:
    current = None if job.force else job.current()
    if current is not None:  # nothing to do: no process started for it
        report(printer, index, job, current)
        return current
    printer.line(index, job.label, "started")
    on_cell = lambda done, of, s: printer.cell(index, job.label, done, of, s)
    on_progress = lambda text: printer.progress(index, job.label, text)
    try:
        if in_process:
            outcome = job.run_here(on_cell, on_progress)
        else:
            outcome = run_in_child(job, log_file(job), lambda e: on_event(printer, index, job, e))
    except OSError as exc:  # e.g. its log file on a full disk: this job fails, named; the batch goes on
        outcome = RunOutcome(job.notebook, "failed", 0.0, None, oserrors.describe(exc, job.runs_dir))
    report(printer, index, job, outcome)
    return outcome


def run_local(jobs: list[Job], n_jobs: int = 1, printer: Printer | None = None) -> list[RunOutcome]:
    """Run every job, ``n_jobs`` at once; outcomes in the order of ``jobs`` (a failure never stops the
    others)."""
    printer = printer or Printer(len(jobs))
    if n_jobs <= 1:
        return [run_one(job, i, printer, in_process=True) for i, job in enumerate(jobs)]
    with ThreadPoolExecutor(max_workers=n_jobs, thread_name_prefix="temporag-job") as pool:
        futures = [pool.submit(run_one, job, i, printer, False) for i, job in enumerate(jobs)]
        return [f.result() for f in futures]
