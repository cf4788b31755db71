"""An operating-system error as one line that says what it is and where: a full disk is "disk full",
never a bare ``[Errno 28]`` under some other heading (a full disk once read "cannot reach the Dask
scheduler at None")."""

from __future__ import annotations

import errno
import re
import shutil
from pathlib import Path

#: below this many free bytes a file system is taken as full: a run's smallest write (its stamp, the
#: executed notebook) needs more, and some writers swallow the ENOSPC (papermill's saves of the executed
#: notebook left one cut short, with no error, on a 200 KiB tmpfs filled to the last 8 KiB)
FULL_BELOW = 256 * 1024

#: errno → (what it is, what to do); the rest are named by their strerror and errno name
KNOWN = {
    errno.ENOSPC: ("disk full", "free space on that file system (df -h) and run the same command again"),
    errno.EDQUOT: ("disk quota exceeded", "free space or raise the quota, then run the same command again"),
    errno.EROFS: ("read-only file system", "choose a writable folder (--runs-dir, -p output_dir=...)"),
    errno.EACCES: ("permission denied", "make the folder writable, or choose another"),
    errno.EPERM: ("operation not permitted", "make the folder writable, or choose another"),
    errno.EIO: ("input/output error (a failing disk or network mount?)", "check the device, then run again"),
    errno.EMFILE: ("too many open files", "raise the limit (ulimit -n) or run fewer jobs at once (-j)"),
}


def errno_name(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, "") if isinstance(exc.errno, int) else ""


def describe(exc: OSError, where: Path | str | None = None, doing: str = "writing") -> str:
    """``disk full (ENOSPC) writing /runs/smoke/.tour.staging-12/_run.json: free space on that file
    system (df -h) and run the same command again``.  ``where`` names the path when the error does
    not (a write on an open file carries none)."""
    path = exc.filename or where
    what, fix = KNOWN.get(exc.errno or 0, (exc.strerror or str(exc) or type(exc).__name__, ""))
    name = errno_name(exc)
    line = f"{what}{f' ({name})' if name else ''} {doing} {path}" if path else f"{what} ({name or exc})"
    if exc.filename2:
        line += f" → {exc.filename2}"
    return f"{line}: {fix}" if fix else line


_TRACED = re.compile(r"\[Errno (\d+)\] ([^\n:]+)(?::\s*'([^'\n]+)')?")


def from_text(text: str, where: Path | str | None = None) -> str | None:
    """The :func:`describe` line of the last OS error quoted in ``text`` (a notebook cell's traceback, as
    ``[Errno 28] No space left on device: '/path'``) when it is one :data:`KNOWN` names, else None."""
    found = list(_TRACED.finditer(text or ""))
    if not found:
        return None
    number, strerror, path = found[-1].groups()
    if int(number) not in KNOWN:
        return None
    return describe(OSError(int(number), strerror.strip(), path), where)


def full_disk(path: Path | str, symptom: str = "") -> str | None:
    """"disk full (ENOSPC?) …" when the file system holding ``path`` (or its nearest existing parent)
    has less than :data:`FULL_BELOW` bytes free, else None: the cause to name when a run's files come out
    cut short or unreadable with no error of their own (``symptom``: what it showed as)."""
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        free = shutil.disk_usage(path).free
    except OSError:
        return None
    if free >= FULL_BELOW:
        return None
    what, fix = KNOWN[errno.ENOSPC]
    seen = f" ({symptom})" if symptom else ""
    return f"{what} (ENOSPC?): {free:,} bytes free on the file system of {path}{seen}: {fix}"
