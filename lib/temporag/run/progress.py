"""The runner's view of a running notebook: per-cell progress, the kernel's progress bars, printed lines.

Three parts, one job — telling the console what a headless notebook is doing:

* papermill's nbclient engine with one addition (:func:`engine_name`): after each code cell it calls
  ``on_cell(done, total, seconds)``; the runner registers it when a caller asks for progress;
* the kernel's bars (:mod:`temporag.progress` writes their state to ``TEMPORAG_PROGRESS_FILE``): :func:`watch`
  points the variable at a fresh file and reports a line such as "reader (SmolLM2-135M): 34/200 calls ·
  0.42 call/s · ETA 6 min" (:func:`describe`) at most every ``TEMPORAG_PROGRESS_EVERY`` seconds (default 15);
* :class:`Printer`: one line per cell and job, prefixed ``[i/n label]``, so several jobs at once (papermill's
  own tqdm bar would garble them) stay readable, whichever process or machine ran the job.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from temporag.progress import ENV_FILE

log = logging.getLogger(__name__)
ENV_EVERY = "TEMPORAG_PROGRESS_EVERY"
POLL_S = 1.0  # the runner looks at the progress file this often

ENGINE_NAME = "temporag-progress"
OnCell = Callable[[int, int, float], None]
_REGISTERED: list[type] = []


def engine_name() -> str:
    """Register the progress engine with papermill (once; papermill is slow to import, so not before a
    notebook runs) and return its name."""
    from papermill.engines import NBClientEngine, papermill_engines

    if not _REGISTERED:

        class CellProgressEngine(NBClientEngine):
            """nbclient execution that reports each finished code cell to ``on_cell`` (a keyword)."""

            @classmethod
            def execute_managed_notebook(cls, nb_man, kernel_name, on_cell: OnCell | None = None, **kwargs):
                if on_cell is not None:
                    _report_cells(nb_man, on_cell)
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

        papermill_engines.register(ENGINE_NAME, CellProgressEngine)
        _REGISTERED.append(CellProgressEngine)
    return ENGINE_NAME


def _report_cells(nb_man, on_cell: OnCell) -> None:
    """Wrap the execution manager's ``cell_complete`` so that each finished code cell is reported."""
    code = [i for i, c in enumerate(nb_man.nb.cells) if c.cell_type == "code"]
    t0 = time.perf_counter()
    complete = nb_man.cell_complete

    def cell_complete(cell, cell_index=None, **kw):
        result = complete(cell, cell_index=cell_index, **kw)
        if cell_index in code:
            on_cell(code.index(cell_index) + 1, len(code), time.perf_counter() - t0)
        return result

    nb_man.cell_complete = cell_complete


def read(path: str | Path) -> dict[str, Any] | None:
    """The last state a kernel wrote, or None (no file yet, or caught mid-replace)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def describe_bar(bar: dict[str, Any]) -> str:
    """'reader: 34/200 calls · 0.42 call/s · ETA 6 min 35 s' (no total: count and rate only)."""
    n, total, unit = bar["n"], bar.get("total"), bar.get("unit") or "it"
    one = n == 1 and not total
    plural = "" if unit == "it" else " " + (unit if unit.endswith("s") or one else unit + "s")
    done = f"{n:,}/{total:,.0f}" if total else f"{n:,}"
    parts = [f"{bar['desc'] or 'working'}: {done}{plural}"]
    elapsed = bar.get("elapsed_s") or 0.0
    if n and elapsed > 0:
        rate = n / elapsed
        parts.append(f"{rate:.3g} {unit}/s" if rate >= 1 else f"{1 / rate:.3g} s/{unit}")
        if total and total > n:
            parts.append(f"ETA {_duration((total - n) / rate)}")
    return " · ".join(parts)


def describe(state: dict[str, Any] | None) -> str:
    """All open bars, outermost first, joined by ' › '; '' when none is open."""
    if not state:
        return ""
    return " › ".join(describe_bar(b) for b in state.get("bars", []))


def print_every_s() -> float:
    """Seconds between two progress lines of one run (``TEMPORAG_PROGRESS_EVERY``, default 15)."""
    raw = os.environ.get(ENV_EVERY) or "15"
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise ValueError(f"{ENV_EVERY}={raw!r} must be a number of seconds") from None


@contextmanager
def watch(on_progress: Callable[[str], None], every_s: float | None = None) -> Iterator[Path]:
    """While the block runs (a notebook executes), point ``TEMPORAG_PROGRESS_FILE`` at a fresh file for the
    kernel it starts and call ``on_progress(text)`` with the open bars' description when it changed, at
    most every ``every_s`` seconds.  Restores the variable and removes the file afterwards."""
    every_s = print_every_s() if every_s is None else every_s
    fd, name = tempfile.mkstemp(prefix="temporag-progress-", suffix=".json")
    os.close(fd)
    path = Path(name)
    before = os.environ.get(ENV_FILE)
    os.environ[ENV_FILE] = str(path)
    stop = threading.Event()

    def poll() -> None:
        last_text, last_time = "", float("-inf")
        while not stop.wait(POLL_S):
            text = describe(read(path))
            if text and text != last_text and time.monotonic() - last_time >= every_s:
                try:
                    on_progress(text)
                except Exception:  # noqa: BLE001 - a broken printer must not stop the run
                    log.exception("progress callback failed")
                last_text, last_time = text, time.monotonic()

    thread = threading.Thread(target=poll, name="temporag-progress", daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        thread.join(timeout=5)
        if before is None:
            os.environ.pop(ENV_FILE, None)
        else:
            os.environ[ENV_FILE] = before
        path.unlink(missing_ok=True)



class Printer:
    """One line per event and job, prefixed ``[i/n label]`` so parallel jobs stay readable; thread-safe."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stdout
        self._lock = threading.Lock()
        self._cells: dict[int, tuple[int, int]] = {}  # per job: code cells done, of how many
        self.finished: dict[int, Any] = {}  # per job: its outcome once reported (a summary after Ctrl-C)

    def line(self, index: int, label: str, text: str) -> None:
        with self._lock:
            print(f"[{index + 1}/{self.total} {label}] {text}", file=self.stream, flush=True)

    def cell(self, index: int, label: str, done: int, total: int, seconds: float) -> None:
        self._cells[index] = (done, total)
        self.line(index, label, f"cell {done}/{total} · {seconds:.0f} s")

    def progress(self, index: int, label: str, text: str) -> None:
        """What the running cell is doing (its progress bars: done of total, rate, ETA)."""
        done, total = self._cells.get(index, (0, 0))
        where = f"in cell {done + 1}/{total} · " if total and done < total else ""
        self.line(index, label, f"{where}{text}")
