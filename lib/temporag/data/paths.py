"""Locating and opening data files under the data setting (plain or gzip-compressed).

Every loader finds its files through :func:`data_file` and reads them through :func:`open_text`, so
two checks live here once for all of them:

* a file the catalog pins (size and sha256 of the release the kit was checked against) is verified the
  first time a process uses it: a mismatch warns (or fails with ``TEMPORAG_DATA_STRICT=1``), because a
  truncated or different file otherwise loads silently and moves every number;
* a read that fails half-way (a cut or corrupt ``.gz``, bytes that are not UTF-8) becomes a
  :class:`DataFormatError` naming the file and where reading stopped, not a bare ``EOFError``.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import warnings
import zlib
from pathlib import Path

from temporag.cache import save_json
from temporag.config import get_settings
from temporag.data import catalog, fetch
from temporag.data.errors import DataFormatError, MissingDataError

log = logging.getLogger(__name__)

_READ_ERRORS = (EOFError, OSError, zlib.error, UnicodeDecodeError)  # gzip.BadGzipFile is an OSError
_FIX = "check it with `temporag data check` and get a good copy with `temporag data fetch`"


class DataIntegrityWarning(UserWarning):
    """A pinned data file differs from the release the kit pins (size or sha256)."""


def data_file(relative: str, dataset: str, data_dir: str | Path | None = None) -> Path:
    """Path of ``relative`` under the data folder, accepting the file with or without ``.gz``; a file
    the catalog pins is checked against its pinned checksum (once per process)."""
    root = Path(data_dir) if data_dir is not None else get_settings().data_dir
    plain = root / relative
    candidates = (
        [plain, plain.with_name(plain.name + ".gz")]
        if not relative.endswith(".gz")
        else [
            plain,
            plain.with_name(plain.name[:-3]),
        ]
    )
    for candidate in candidates:
        if candidate.exists():
            check_pinned(relative, candidate)
            return candidate
    raise MissingDataError(candidates[-1] if not relative.endswith(".gz") else plain, dataset)


_PINNED: dict[tuple[str, int, int], str | None] = {}  # (path, size, mtime) -> problem or None
_VERIFIED_FILE = "data_verified.json"  # in the cache: files that matched, so other processes skip hashing


def _known_good(key: tuple[str, int, int]) -> bool:
    try:
        return "|".join(map(str, key)) in json.loads((get_settings().cache_dir / _VERIFIED_FILE).read_text())
    except (OSError, ValueError, TypeError):
        return False


def _remember_good(key: tuple[str, int, int]) -> None:
    path = get_settings().cache_dir / _VERIFIED_FILE
    try:
        known = json.loads(path.read_text())
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    known["|".join(map(str, key))] = "sha256 ok"
    try:
        save_json(path, known)
    except OSError as exc:  # a read-only cache only costs a re-check next time
        log.debug("could not record %s: %s", path, exc)


def check_pinned(relative: str, path: str | Path) -> str | None:
    """Compare a data file with its catalog entry; returns the problem (after warning, or raising
    ``ChecksumError`` when ``TEMPORAG_DATA_STRICT`` is set), None when it matches or is not pinned."""
    path = Path(path)
    name = relative[:-3] if relative.endswith(".gz") else relative
    try:
        entry = catalog.entry(name)
    except KeyError:
        return None
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _PINNED and _known_good(key):
        _PINNED[key] = None
    if key not in _PINNED:
        if path.suffix != ".gz" and entry.size is not None and st.st_size != entry.size:
            _PINNED[key] = (
                f"{st.st_size:,} bytes, the pinned release has {entry.size:,} (sha256 {entry.raw_sha256})"
            )
        else:
            result = fetch.verify(entry, path, progress=False)
            _PINNED[key] = (
                None
                if result.status in ("ok", "unverified")
                else f"{result.message}: sha256 {result.actual}, the pinned release has {result.expected}"
            )
            if _PINNED[key] is None:
                _remember_good(key)
        problem = _PINNED[key]
        if problem is not None:
            message = (
                f"{path}: {problem} — numbers computed from it will not be comparable; "
                f"`temporag data check {entry.dataset}` shows it, `temporag data fetch {entry.dataset}` "
                "replaces it (TEMPORAG_DATA_STRICT=1 makes this an error)"
            )
            if get_settings().data_strict:
                del _PINNED[key]  # fail again next time too
                raise fetch.ChecksumError(message)
            log.warning("%s", message)
            warnings.warn(message, DataIntegrityWarning, stacklevel=3)
    return _PINNED[key]


def mismatches() -> dict[str, str]:
    """The data files this process read that differ from their pinned release: {file name: problem}
    (``Results`` records them in results.json, the runner names them in its summary line)."""
    return {Path(key[0]).name: problem for key, problem in _PINNED.items() if problem}


class CheckedText:
    """A text stream whose read errors name the file and where reading stopped (line, or byte of the
    uncompressed content), as a :class:`DataFormatError`."""

    def __init__(self, path: Path, raw: io.BufferedIOBase, newline: str | None) -> None:
        self.path = path
        self._raw = raw
        self._text = io.TextIOWrapper(raw, encoding="utf-8", newline=newline)
        self.lines = 0  # complete lines handed out so far

    def _error(self, exc: BaseException, whole_file: bool) -> DataFormatError:
        try:
            where = f"; reading stopped at byte {self._raw.tell():,} of its content"
        except (OSError, ValueError):
            where = ""
        kind = "is not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else "is truncated or corrupt"
        problem = f"the file {kind} ({type(exc).__name__}: {exc}{where})"
        return DataFormatError(self.path, None if whole_file else self.lines + 1, problem, _FIX)

    def read(self, size: int | None = -1) -> str:
        try:
            text = self._text.read(size)
        except _READ_ERRORS as exc:
            raise self._error(exc, whole_file=True) from exc
        self.lines += text.count("\n")
        return text

    def __iter__(self) -> CheckedText:
        return self

    def __next__(self) -> str:
        try:
            line = next(self._text)
        except _READ_ERRORS as exc:
            raise self._error(exc, whole_file=False) from exc
        self.lines += 1
        return line

    def close(self) -> None:
        self._text.close()

    def __enter__(self) -> CheckedText:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_text(path: str | Path, newline: str | None = None) -> CheckedText:
    """Open a text file, transparently un-gzipping ``*.gz``; ``newline`` as for ``open``.  Read errors
    become :class:`DataFormatError` naming the file and the position."""
    path = Path(path)
    raw = gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")  # noqa: SIM115
    return CheckedText(path, raw, newline)
