"""Progress bars a batch can see from outside the kernel: what a long cell is doing, its rate and ETA.

A notebook run by the runner executes in a Jupyter kernel; its tqdm bars go into the notebook's outputs
(widgets), out of sight of ``temporag reproduce``, which would otherwise know only "cell 9/12".  So the
library's bars are :class:`tqdm` (tqdm.auto's bar, unchanged in the notebook) with one addition: when
the runner names a file in ``TEMPORAG_PROGRESS_FILE`` (:func:`watch`), each open bar's state — what,
done of total, rate — is written there (atomically, at most once a second), and a thread of the runner
reads it and reports a line such as "reader (SmolLM2-135M): 34/200 calls · 0.42 call/s · ETA 6 min"
(:func:`describe`) at most every ``TEMPORAG_PROGRESS_EVERY`` seconds (default 15).  A file is a side
channel that survives anything the kernel does to its output streams, needs no kernel protocol, and
costs nothing outside a batch (the variable is unset).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm as _auto_tqdm

log = logging.getLogger(__name__)
ENV_FILE = "TEMPORAG_PROGRESS_FILE"
ENV_EVERY = "TEMPORAG_PROGRESS_EVERY"
WRITE_EVERY_S = 1.0  # the kernel rewrites the file at most this often (and when a bar opens or closes)
POLL_S = 1.0  # the runner looks at it this often

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
