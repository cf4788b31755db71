"""The lines a batch prints for each of its jobs.

papermill reports cells to a tqdm bar, which several jobs at once would garble.  The runner's progress
engine (:mod:`temporag.cell_progress`) calls ``on_cell(done, total, seconds)`` after each code cell;
a batch turns the calls into one line per cell and job (:class:`Printer`), whichever process or machine
ran the job.
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

    def line(self, index: int, label: str, text: str) -> None:
        with self._lock:
            print(f"[{index + 1}/{self.total} {label}] {text}", file=self.stream, flush=True)

    def cell(self, index: int, label: str, done: int, total: int, seconds: float) -> None:
        self.line(index, label, f"cell {done}/{total} · {seconds:.0f} s")
