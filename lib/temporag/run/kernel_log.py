"""A notebook kernel's own stdout and stderr go to a log file beside its output folder, not the console.

What a notebook prints reaches its executed copy over the kernel protocol (IOPub); the kernel
*process*'s own streams carry only the kernel's housekeeping.  Inherited from ``temporag reproduce``, they
put it on the console between the runner's lines: ipykernel's "Kernel is running over TCP without
encryption" warning on every run, "Parent appears to have exited" after a kill, and (seen once in ~30
fault runs) screens of ``ZMQError: Socket operation on non-socket`` tracebacks — the signature of a zmq
socket closed under a kernel that is still shutting down (ipykernel's PR #1518 silenced one such race,
for IOPub sends), written by a kernel that finishes its shutdown after the runner has moved on.  None of
it is about the run, so the runner starts each kernel with both streams going to ``.kernel.log`` in the
run's staging folder (hidden): a failed run keeps it with its outputs (``.<folder>.failed/``), a run that
is published drops it first, so nothing is left beside (or added to) the output folder.  A run whose
kernel died quotes that file's last lines (a segfault's traceback, what it said before an out-of-memory
kill) and names where it is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

TAIL_LINES = 8


NAME = ".kernel.log"


def log_path(run_dir: Path) -> Path:
    """The kernel log of a run writing ``run_dir`` (its staging folder, or where a failed run is kept)."""
    return Path(run_dir) / NAME


def manager_class(log: IO[str]) -> type:
    """An nbclient ``kernel_manager_class`` whose kernels write their stdout and stderr to ``log``
    (jupyter_client's documented way to launch a kernel differently: override ``_async_launch_kernel``)."""
    from jupyter_client.manager import AsyncKernelManager

    class LoggedKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            await super()._async_launch_kernel(kernel_cmd, **{**kw, "stdout": log, "stderr": log})

        _launch_kernel = _async_launch_kernel

    return LoggedKernelManager


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of a kernel log ('' when there is none)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])
