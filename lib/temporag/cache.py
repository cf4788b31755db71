"""Content-addressed on-disk cache with atomic writes and entries that heal.

A killed run must never leave a half-written file that a re-run would trust, so every write
goes to a temporary file in the same folder and is renamed into place.

Atomic writes do not protect against what happens to a file afterwards (a disk error, a copy cut
short, a hand edit), and one bad entry must not make every later run crash on it.  So every entry
written here gets a sidecar ``<entry>.sha256`` holding the hash of its bytes, and every entry is
checked before it is trusted: an entry whose bytes differ from its hash, or that does not load, is
logged with its path, removed, and rebuilt by the caller as if it had never been cached.  Entries
written before sidecars existed ("legacy") are checked by loading them (and by the caller's own
check, e.g. an embedding chunk's shape and norms); a legacy entry that passes is adopted (its
sidecar is written), so the cache keys never change.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from temporag.config import _env_flag, get_settings

log = logging.getLogger(__name__)
SIDECAR = ".sha256"
READ_ONLY_SETTING = "TEMPORAG_CACHE_READONLY"


class CacheEntryError(RuntimeError):
    """A cache entry could not be read; it has been removed, so running again rebuilds it."""


# -- what this process repaired ------------------------------------------------------------------------
# A heal is said in the log of the process that made it — inside a notebook that is a cell's output, out
# of sight of `temporag reproduce`.  So each is noted here too: Results records them in results.json
# (``cache_heals``) and the runner's summary shows them on the console.
_HEALS: list[str] = []
_HEALS_LOCK = threading.Lock()


def record_heal(what: str) -> None:
    """Note one repair of a cache (a damaged entry removed and rebuilt, a database moved aside)."""
    with _HEALS_LOCK:
        _HEALS.append(what)


def heals() -> list[str]:
    """Every repair this process made, in order."""
    with _HEALS_LOCK:
        return list(_HEALS)


def _cache_relative(path: Path) -> str:
    try:
        return Path(path).resolve().relative_to(get_settings().cache_dir.resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


def content_hash(*parts: Any) -> str:
    """Stable sha256 of JSON-serialisable parts, bytes or numpy arrays (hex, 16 chars): a cache key."""
    return content_digest(*parts)[:16]


def content_digest(*parts: Any) -> str:
    """The whole sha256 (hex) that :func:`content_hash` shortens: numpy arrays by dtype, shape and bytes,
    bytes as they are, anything else as sorted-key JSON; what an artifact's recorded digest is."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            h.update(str(part.dtype).encode())
            h.update(str(part.shape).encode())
            h.update(np.ascontiguousarray(part).tobytes())
        elif isinstance(part, bytes):
            h.update(part)
        else:
            h.update(json.dumps(part, sort_keys=True, default=str).encode())
        h.update(b"\x00")
    return h.hexdigest()


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def cache_path(namespace: str, key: str, suffix: str, cache_dir: str | Path | None = None) -> Path:
    """The slot of one cache entry.  An entry already there that fails its check (bytes differ from its
    recorded hash; a legacy ``.npy``/``.pkl`` whose framing is cut or garbled) is removed first, so a
    caller that tests ``path.exists()`` rebuilds it instead of crashing on it."""
    root = Path(cache_dir) if cache_dir is not None else get_settings().cache_dir
    folder = root / namespace
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}{suffix}"
    if path.exists():
        problem = _check_bytes(path)
        if problem is not None:
            discard(path, problem)
    return path


def read_only(folder: str | Path) -> bool:
    """Whether a cache folder must be used read-only: ``TEMPORAG_CACHE_READONLY=1``, or a folder this
    process cannot write (a read-only mount; a ``chmod -R a-w`` copy for anyone but root, whom permission
    bits do not stop — hence the setting).  A folder not made yet is judged by its nearest parent."""
    if _env_flag(READ_ONLY_SETTING):
        return True
    folder = Path(folder)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return not os.access(folder, os.W_OK)


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp_path)`` then rename the result to ``path`` in one step."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        try:
            write(tmp_path)
        except OSError as exc:
            if exc.filename is not None or exc.errno is None:
                raise
            # a write on an open file (a full disk in torch's ONNX export) names no file: name the entry
            raise type(exc)(exc.errno, exc.strerror, str(path)) from exc
        os.chmod(tmp_path, 0o644)  # mkstemp makes 0600; results are meant to be shared
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()
    return path


# -- one builder per entry --------------------------------------------------------------------------


@contextmanager
def exclusive(lock_file: str | Path, *, block: bool = True) -> Iterator[bool]:
    """An exclusive ``flock`` on ``lock_file`` for the ``with`` block.

    Yields True once held; with ``block=False`` yields False at once when another process holds it (the
    block then runs without the lock: check the flag).  The kernel releases a ``flock`` when its holder
    dies, so a killed run never blocks the next one; the lock file is removed on release (a waiter that
    locked the removed file notices and locks the new one), so no lock files pile up beside entries.
    """
    lock_file = Path(lock_file)
    fd = lock_fd(lock_file, block=block)
    if fd is None:
        yield False
        return
    try:
        yield True
    finally:
        unlock_fd(lock_file, fd)


def lock_fd(lock_file: Path, *, block: bool = True) -> int | None:
    """An open descriptor holding the exclusive ``flock`` of ``lock_file`` (created if missing), or None
    with ``block=False`` when another process holds it.  A file removed by its last holder between our
    open and our lock is not the lock any more: we lock the new one (see :func:`exclusive`)."""
    import fcntl

    lock_file.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock_file, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            current = os.stat(lock_file).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            return fd
        os.close(fd)


def unlock_fd(lock_file: Path, fd: int) -> None:
    """Remove ``lock_file`` while still holding it, then release it: no lock file is left behind."""
    try:
        os.unlink(lock_file)
    except FileNotFoundError:
        pass
    os.close(fd)


def building(path: str | Path, *, block: bool = True):
    """The build lock of one cache entry: an expensive entry (an embedding chunk, a rule graph) that
    several runs need at once is built by one of them while the others wait, then load it — built
    once, never twice and never half-read.  Check for the entry again once the lock is held.
    ``with building(path) as held:`` (``held`` is False only with ``block=False`` when another process
    is building it)."""
    path = Path(path)
    return exclusive(path.with_name(f".{path.name}.building"), block=block)


# -- validation ------------------------------------------------------------------------------------------

_VERIFIED: dict[str, tuple[int, int]] = {}  # entries whose bytes matched their hash: path -> (size, mtime)


def sidecar_path(path: str | Path) -> Path:
    """Where the hash of an entry's bytes is kept."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR)


def _stat_key(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _recorded_hash(path: Path) -> str | None:
    try:
        text = sidecar_path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) == 64 else None


def _write_sidecar(path: Path, digest: str) -> None:
    def _write(tmp: Path) -> None:
        tmp.write_text(digest + "\n", encoding="ascii")

    atomic_write(sidecar_path(path), _write)


def discard(path: str | Path, problem: str) -> None:
    """Remove an invalid entry (and its sidecar), saying which file and why, so it gets rebuilt."""
    path = Path(path)
    log.warning("cache entry %s is invalid (%s); removed, it will be rebuilt", path, problem)
    record_heal(f"cache entry {_cache_relative(path)} was invalid ({problem[:160]}): removed and rebuilt")
    _VERIFIED.pop(str(path), None)
    for p in (path, sidecar_path(path)):
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:  # a read-only cache: the caller's rebuild says so where it writes
            log.warning("could not remove %s: %s", p, exc)


def _framing_problem(path: Path) -> str | None:
    """Cheap structural check of a legacy entry: a cut or garbled file fails it without a full load."""
    size = path.stat().st_size
    if path.suffix == ".npy":
        try:
            with open(path, "rb") as f:
                version = np.lib.format.read_magic(f)
                read_header = (
                    np.lib.format.read_array_header_1_0
                    if version == (1, 0)
                    else np.lib.format.read_array_header_2_0
                )
                shape, _, dtype = read_header(f)
                header_end = f.tell()
        except Exception as exc:  # noqa: BLE001 - any failure means the header is unreadable
            return f"unreadable .npy header ({type(exc).__name__}: {exc})"
        expected = header_end + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if size != expected:
            return f".npy holds {size:,} bytes, its header {shape} {dtype} needs {expected:,}"
    elif path.suffix == ".pkl":
        with open(path, "rb") as f:
            head = f.read(2)
            f.seek(max(0, size - 1))
            tail = f.read(1)
        if len(head) < 2 or head[0] != 0x80 or tail != b".":  # PROTO opcode first, STOP opcode last
            return "not a complete pickle (cut short or overwritten)"
    return None


def _check_bytes(path: Path, data: bytes | None = None) -> str | None:
    """None when the entry's bytes match its recorded hash (or, with no hash recorded, when its framing
    is whole); else what is wrong."""
    key = str(path)
    try:
        stat = _stat_key(path)
    except FileNotFoundError:
        return "missing"
    if _VERIFIED.get(key) == stat:
        return None
    recorded = _recorded_hash(path)
    if recorded is None:
        return _framing_problem(path)
    actual = hashlib.sha256(data).hexdigest() if data is not None else file_sha256(path)
    if actual != recorded:
        return f"sha256 of its bytes is {actual[:12]}…, {sidecar_path(path).name} says {recorded[:12]}…"
    _VERIFIED[key] = stat
    return None


def _adopt(path: Path, data: bytes | None = None) -> None:
    """Record the hash of a legacy entry that passed its load check, so later runs check it by hash."""
    if _recorded_hash(path) is None and not read_only(path.parent):
        try:
            _write_sidecar(path, hashlib.sha256(data).hexdigest() if data is not None else file_sha256(path))
            _VERIFIED[str(path)] = _stat_key(path)
        except OSError as exc:  # a read-only cache still works, it just stays unadopted
            log.debug("could not record the hash of %s: %s", path, exc)


def adopt(path: str | Path) -> None:
    """Record the hash of an entry written before hashes were (it passed its caller's load check)."""
    _adopt(Path(path))


def has_hash(path: str | Path) -> bool:
    """Whether the hash of the entry's bytes was recorded when it was written."""
    return _recorded_hash(Path(path)) is not None


def save_with_hash(path: str | Path, write: Callable[[Path], None]) -> Path:
    """``write(tmp)`` atomically into ``path`` with the hash of its bytes beside it: every later
    :func:`cache_path` checks the entry against that hash before it is trusted (a file of any format)."""
    return _save_with_hash(path, write)


def _save_with_hash(path: str | Path, write: Callable[[Path], None]) -> Path:
    """``atomic_write`` plus the sidecar with the hash of exactly the bytes written."""
    path = Path(path)
    digest: list[str] = []

    def _write(tmp: Path) -> None:
        write(tmp)
        digest.append(file_sha256(tmp))

    atomic_write(path, _write)
    _write_sidecar(path, digest[0])
    _VERIFIED[str(path)] = _stat_key(path)
    return path


# -- typed entries -------------------------------------------------------------------------------------


def save_npy(path: str | Path, array: np.ndarray) -> Path:
    """An array entry with the hash of its bytes beside it."""

    def _write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.save(f, array, allow_pickle=False)

    return _save_with_hash(path, _write)


def load_npy(path: str | Path, check: Callable[[np.ndarray], str | None] | None = None) -> np.ndarray | None:
    """The array of a valid entry, else None (an invalid entry is logged, removed and must be rebuilt).

    ``check`` returns what is wrong with a loaded array (e.g. its shape for the texts it stands for),
    or None; it is how an entry without a recorded hash is validated before it is adopted."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if sidecar_path(path).exists():  # written after its entry: the entry was removed since
            record_heal(f"cache entry {_cache_relative(path)} was missing (its hash remained): rebuilt")
        return None
    problem = _check_bytes(path, data)
    array = None
    if problem is None:
        try:
            array = np.load(io.BytesIO(data), allow_pickle=False)
        except Exception as exc:  # noqa: BLE001 - a garbled entry can fail in many ways
            problem = f"does not load as .npy ({type(exc).__name__}: {exc})"
    if problem is None and check is not None:
        problem = check(array)
    if problem is not None:
        discard(path, problem)
        return None
    _adopt(path, data)
    return array


def save_json(path: str | Path, obj: Any) -> Path:
    def _write(tmp: Path) -> None:
        tmp.write_text(json.dumps(obj, indent=2, default=str, ensure_ascii=False), encoding="utf-8")

    return atomic_write(path, _write)


def save_pickle(path: str | Path, obj: Any) -> Path:
    """A pickled entry (e.g. STAR-RAG's rule graph) with the hash of its bytes beside it."""
    import pickle

    def _write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)

    return _save_with_hash(path, _write)


def load_pickle(path: str | Path) -> Any:
    """The object of a pickled entry.  An entry whose bytes differ from their hash, or that does not
    unpickle, is logged and removed, and :class:`CacheEntryError` says to run again (which rebuilds it);
    a legacy entry that unpickles is adopted."""
    import pickle

    path = Path(path)
    problem = _check_bytes(path)
    if problem is None:
        try:
            with open(path, "rb") as f:
                obj = pickle.load(f)
        except Exception as exc:  # noqa: BLE001 - truncated or garbled pickles fail in many ways
            problem = f"does not unpickle ({type(exc).__name__}: {exc})"
    if problem is not None:
        discard(path, problem)
        raise CacheEntryError(
            f"cache entry {path} was invalid ({problem}); it has been removed — run again to rebuild it"
        )
    _adopt(path)
    return obj


# -- folder entries (a trained model) ---------------------------------------------------------------------

MANIFEST = ".sha256.json"


def record_folder(folder: str | Path) -> None:
    """Write the sha256 of every file of a folder entry (e.g. a trained model before it is renamed into
    place) into its manifest, so :func:`check_folder` can tell a cut or garbled file later."""
    folder = Path(folder)
    digests = {
        str(p.relative_to(folder)): file_sha256(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }
    save_json(folder / MANIFEST, digests)


def folder_problem(folder: str | Path) -> str | None:
    """What is wrong with a folder entry, or None: a file whose bytes differ from the manifest (or is
    missing); without a manifest (written before manifests were), a ``.safetensors`` file whose header
    does not match its size."""
    folder = Path(folder)
    try:
        recorded = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        recorded = None
    except (OSError, ValueError) as exc:
        return f"unreadable manifest {MANIFEST} ({exc})"
    if recorded is not None:
        for name, digest in recorded.items():
            path = folder / name
            if not path.is_file():
                return f"{name} is missing"
            if file_sha256(path) != digest:
                return f"sha256 of {name} differs from the one recorded when it was written"
        return None
    for path in sorted(folder.rglob("*.safetensors")):
        problem = _safetensors_problem(path)
        if problem:
            return f"{path.relative_to(folder)}: {problem}"
    return None


def _safetensors_problem(path: Path) -> str | None:
    """A .safetensors file is an 8-byte header length, a JSON header and the tensors' bytes: a file cut
    short (or garbled in its header) does not add up."""
    size = path.stat().st_size
    try:
        with open(path, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            if n <= 0 or 8 + n > size:
                return f"header of {n:,} bytes in a file of {size:,}"
            header = json.loads(f.read(n))
    except (OSError, ValueError) as exc:
        return f"unreadable header ({type(exc).__name__})"
    ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"]
    expected = 8 + n + max(ends, default=0)
    return None if expected == size else f"{size:,} bytes, its header needs {expected:,}"


def check_folder(folder: str | Path) -> bool:
    """True when a folder entry can be trusted (a legacy one that passes gets its manifest); else it is
    logged with the reason and removed, and False tells the caller to rebuild it."""
    import shutil

    folder = Path(folder)
    problem = folder_problem(folder)
    if problem is None:
        if not (folder / MANIFEST).exists() and not read_only(folder):
            try:
                record_folder(folder)
            except OSError as exc:  # a read-only cache still works, it just stays unrecorded
                log.debug("could not record the hashes of %s: %s", folder, exc)
        return True
    log.warning("cache entry %s is invalid (%s); removed, it will be rebuilt", folder, problem)
    record_heal(f"cache entry {_cache_relative(folder)} was invalid ({problem[:160]}): removed and rebuilt")
    shutil.rmtree(folder, ignore_errors=True)
    return False
