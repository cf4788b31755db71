"""Per-cell progress of a papermill run, and the lines a batch prints for each of its jobs.

papermill reports cells to a tqdm bar, which several jobs at once would garble.  The engine registered
by :func:`engine_name` is papermill's own nbclient engine with one addition: after each code cell it
calls ``on_cell(done, total, seconds)``.  The runner passes that callback down
(``run_notebook(..., on_cell=...)``); a batch turns the calls into one line per cell and job
(:class:`Printer`), whichever process or machine ran the job.  Inside a long cell, the kernel's progress
bars reach the same printer through ``on_progress`` (:mod:`temporag.progress`): "in cell 10/12 ·
reader: 34/200 calls · 2.4 s/call · ETA 6 min 43 s".
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

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


class Printer:
    """One line per event and job, prefixed ``[i/n label]`` so parallel jobs stay readable; thread-safe."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stdout
        self._lock = threading.Lock()
        self._cells: dict[int, tuple[int, int]] = {}  # per job: code cells done, of how many

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
