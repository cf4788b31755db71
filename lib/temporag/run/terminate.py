"""SIGTERM stops ``temporag reproduce`` the way Ctrl-C does: it says what it stopped and cleans up.

``kill PID`` (a job scheduler's time limit, systemd, a CI timeout) sends SIGTERM, and Python's default is
to die at once without running any clean-up: the run's staging folder stayed, nothing was printed, the
exit status was 143.  While :func:`as_interrupt` is in force, SIGTERM raises :class:`Terminated` instead
— a :class:`KeyboardInterrupt`, so every clean-up written for Ctrl-C runs (the runner removes its staging
folder and gives its lock back, the command prints the summary of what finished) — and the command still
exits 143 (128 + 15), as a terminated process does.  Child jobs (``--jobs N``), which a Ctrl-C in a
terminal reaches through the process group but a ``kill PID`` does not, are sent the signal too
(:func:`child`), and stop and clean up the same way.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: the exit status of a command stopped by SIGTERM
EXIT = 128 + signal.SIGTERM

_CHILDREN: set[int] = set()  # job processes this one started and that are still running


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would raise :class:`KeyboardInterrupt` (and handled like it)."""


def _on_sigterm(signum: int, frame: object) -> None:
    # once: the clean-up is not cut short by a second one (a process manager signals the whole group, and
    # this process forwards it to its children too); SIGKILL still stops a clean-up that hangs
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for pid in list(_CHILDREN):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    raise Terminated("SIGTERM")


@contextmanager
def as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the main thread for the ``with`` block (elsewhere: nothing
    changes, a signal handler can only be set from the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def child(pid: int) -> Iterator[None]:
    """A job process running for the ``with`` block: sent SIGTERM when this process gets one."""
    _CHILDREN.add(pid)
    try:
        yield
    finally:
        _CHILDREN.discard(pid)
