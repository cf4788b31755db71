"""Per-cell progress of a papermill run: papermill's own nbclient engine with one addition, after each
code cell it calls ``on_cell(done, total, seconds)``.  The runner registers it when a caller asks for
progress (``run_notebook(..., on_cell=...)``); a batch prints them (:mod:`temporag.batch.progress`).
It lives beside the runner, not in ``batch/``, so the runner depends on no batch module."""

from __future__ import annotations

import time
from collections.abc import Callable

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
