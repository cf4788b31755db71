"""A batch job — one notebook with one parameter set — and how it runs in a process of its own.

Parallel jobs run as separate processes (``python -m temporag.batch.jobs``), never threads of one:
the runner points the kernel at its staging folder through environment variables, and the LLM
client's circuit breakers and call counts are per process, so two jobs in one process would mix them.
A child process also isolates memory (each job may load a model) and is exactly what a distributed
worker runs, so the local pool and the Dask engine share this one code path.

The child reads its job as JSON on stdin and keeps reading: when its parent dies (even by SIGKILL)
the pipe closes, and the child exits at once (its kernel follows: ipykernel quits when its parent
goes), so a killed batch leaves no orphan finishing notebooks behind the next run's back.  It reports
on stdout, one ``@temporag {json}`` line per event: ``cell`` (after each code cell), ``progress`` (the
kernel's progress bars inside a long cell) and ``done`` (the :class:`~temporag.run.runner.RunOutcome`).
Everything else it prints goes to its log file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import temporag
from temporag.run import terminate
from temporag.run.runner import RunOutcome, current_run, run_notebook

MARK = "@temporag "
OnEvent = Callable[[dict], None]


@dataclass(frozen=True)
class Job:
    """One notebook run of a batch.  Paths are absolute, so the job means the same in any process (and on
    any worker that sees the checkout at the same path)."""

    notebook: str
    parameters: dict[str, Any]
    label: str
    notebook_dir: str
    figures_dir: str
    runs_dir: str
    force: bool = False
    kernel: str | None = None
    wait_s: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Job:
        return cls(**json.loads(text))

    def current(self) -> RunOutcome | None:
        """The "skipped" outcome when the job's folder already holds a current run (see
        :func:`temporag.run.runner.current_run`), else None."""
        return current_run(
            self.notebook,
            dict(self.parameters),
            notebook_dir=Path(self.notebook_dir),
            figures_dir=Path(self.figures_dir),
            runs_dir=Path(self.runs_dir),
        )

    def run_here(
        self,
        on_cell: Callable[[int, int, float], None] | None = None,
        on_progress: Callable[[str], None] | None = None,
    ) -> RunOutcome:
        """Run the job in this process (what the child does; also the sequential ``--jobs 1`` path)."""
        return run_notebook(
            self.notebook,
            dict(self.parameters),
            force=self.force,
            notebook_dir=Path(self.notebook_dir),
            figures_dir=Path(self.figures_dir),
            runs_dir=Path(self.runs_dir),
            kernel=self.kernel,
            wait_s=self.wait_s,
            on_cell=on_cell,
            on_progress=on_progress,
        )


def label_for(notebook: str, parameters: dict[str, Any], varying: list[str] | None = None) -> str:
    """Short name of a job for progress lines: notebook, profile and the parameters that vary."""
    keys = varying if varying is not None else [k for k in parameters if k != "profile"]
    shown = " ".join(f"{k}={parameters[k]}" for k in keys if k in parameters and k != "profile")
    return " ".join(x for x in (notebook, str(parameters.get("profile", "smoke")), shown) if x)


def child_env() -> dict[str, str]:
    """The child's environment: this one, with this checkout's ``lib`` first on the path so the child
    imports the same temporag as its parent."""
    lib = str(Path(temporag.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH", "")
    env = dict(os.environ)
    env["PYTHONPATH"] = lib + (os.pathsep + path if path else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_in_child(job: Job, log_file: Path, on_event: OnEvent | None = None) -> RunOutcome:
    """Run ``job`` in a child process; its events go to ``on_event``, its output to ``log_file``.
    A child that dies without reporting (killed, out of memory) is a failed outcome naming its log."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "temporag.batch.jobs"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=child_env(),
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        with terminate.child(proc.pid):  # SIGTERM to this process reaches the job too
            proc.stdin.write(job.to_json() + "\n")
            proc.stdin.flush()  # stdin stays open: the child exits when it closes (this process died)
            outcome = None
            for line in proc.stdout:
                if not line.startswith(MARK):
                    log.write(line)
                    continue
                event = json.loads(line[len(MARK) :])
                if event.get("event") == "done":
                    outcome = RunOutcome.from_dict(event["outcome"])
                elif on_event is not None:
                    on_event(event)
            proc.stdin.close()
            code = proc.wait()
    if outcome is None:
        outcome = RunOutcome(
            job.notebook,
            "failed",
            0.0,
            None,
            f"the job's process ended with exit code {code} before reporting; its log: {log_file}",
        )
    return outcome


def _emit(stream, event: dict) -> None:
    stream.write(MARK + json.dumps(event, default=str) + "\n")
    stream.flush()


def _exit_when_parent_goes() -> None:
    """Read stdin until it closes — the parent died or gave up on us — then leave at once."""
    for _ in sys.stdin:
        pass
    os._exit(3)


def main() -> int:
    """Child entry point: one job from stdin, events on stdout (the real stdout; anything else the job
    prints — papermill, logging — goes to stderr, the parent's log file)."""
    import logging

    job = Job.from_json(sys.stdin.readline())
    threading.Thread(target=_exit_when_parent_goes, daemon=True).start()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    events = sys.stdout
    sys.stdout = sys.stderr
    try:
        with terminate.as_interrupt():  # SIGTERM: the runner removes its staging folder, as for Ctrl-C
            outcome = job.run_here(
                lambda done, of, s: _emit(events, {"event": "cell", "done": done, "of": of, "s": s}),
                lambda text: _emit(events, {"event": "progress", "text": text}),
            )
    except terminate.Terminated:
        return terminate.EXIT
    finally:
        sys.stdout = events
    _emit(events, {"event": "done", "outcome": outcome.to_dict()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
