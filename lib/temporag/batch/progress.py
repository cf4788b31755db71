"""The lines a batch prints for each of its jobs.

papermill reports cells to a tqdm bar, which several jobs at once would garble.  The runner's progress
engine (:mod:`temporag.cell_progress`) calls ``on_cell(done, total, seconds)`` after each code cell;
a batch turns the calls into one line per cell and job (:class:`Printer`), whichever process or machine
ran the job.  Inside a long cell, the kernel's progress bars reach the same printer through
``on_progress`` (:mod:`temporag.progress`): "in cell 10/12 · reader: 34/200 calls · 2.4 s/call · ETA 6 min".
"""

from __future__ import annotations

import sys
import threading
from typing import TextIO


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
