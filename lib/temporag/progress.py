"""Progress bars a batch can see from outside the kernel: what a long cell is doing, its rate and ETA.

A notebook run by the runner executes in a Jupyter kernel; its tqdm bars go into the notebook's outputs
(widgets), out of sight of ``temporag reproduce``, which would otherwise know only "cell 9/12".  So the
library's bars are :class:`tqdm` (tqdm.auto's bar, unchanged in the notebook) with one addition: when
the runner names a file in ``TEMPORAG_PROGRESS_FILE``, each open bar's state — what, done of total, rate —
is written there (atomically, at most once a second).  The runner's side — reading that file and printing
lines — is :mod:`temporag.run.progress`.  A file is a side channel that survives anything the kernel does
to its output streams, needs no kernel protocol, and costs nothing outside a batch (the variable is unset).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import weakref
from typing import Any

from tqdm.auto import tqdm as _auto_tqdm

log = logging.getLogger(__name__)
ENV_FILE = "TEMPORAG_PROGRESS_FILE"
WRITE_EVERY_S = 1.0  # the kernel rewrites the file at most this often (and when a bar opens or closes)

_LOCK = threading.Lock()
# id(bar) → bar, in the order they opened (outer loops first); a bar dropped without being closed leaves
_OPEN: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_LAST_WRITE = [0.0]


class tqdm(_auto_tqdm):  # noqa: N801 - a drop-in for tqdm.auto.tqdm
    """tqdm.auto's bar that also reports to the batch's progress file (when there is one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.disable and os.environ.get(ENV_FILE):
            with _LOCK:
                _OPEN[id(self)] = self
            _write(force=True)

    def update(self, n: float | None = 1) -> bool | None:
        shown = super().update(n)
        if not self.disable and id(self) in _OPEN:
            _write()
        return shown

    def close(self) -> None:
        super().close()
        if id(self) in _OPEN:
            with _LOCK:
                _OPEN.pop(id(self), None)
            _write(force=True)


def _state(bar: Any) -> dict[str, Any]:
    elapsed = time.time() - bar.start_t if getattr(bar, "start_t", None) else 0.0
    return {
        "desc": str(bar.desc or "").rstrip(": "),
        "n": bar.n,
        "total": bar.total,
        "unit": str(bar.unit or "it"),
        "elapsed_s": round(elapsed, 2),
    }


def _write(force: bool = False) -> None:
    """The open bars' state into the progress file; never lets a reporting problem stop the work."""
    path = os.environ.get(ENV_FILE)
    now = time.monotonic()
    if not path or (not force and now - _LAST_WRITE[0] < WRITE_EVERY_S):
        return
    with _LOCK:
        _LAST_WRITE[0] = now
        state = {"time": time.time(), "pid": os.getpid(), "bars": [_state(b) for b in list(_OPEN.values())]}
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(state, f)
            os.replace(tmp, path)
        except OSError as exc:
            log.debug("progress file %s not written: %s", path, exc)
