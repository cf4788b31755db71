"""Content-addressed on-disk cache with atomic writes and signed entries that heal.

A killed run must never leave a half-written file that a re-run would trust, so every write
goes to a temporary file in the same folder and is renamed into place.

Atomic writes do not protect against what happens to a file afterwards (a disk error, a copy cut
short, a hand edit, a file planted in a shared or merged cache), and one bad entry must not make
every later run crash on it — nor run code, nor change a result.  So every entry written here gets a
sidecar ``<entry>.mac``: the sha256 of its bytes and the HMAC-SHA256 (:mod:`temporag.cache_key`, a key
kept outside the cache) of that sha256 and the entry's name.  Every entry is checked before it is
trusted: an entry without a signature, whose bytes or name do not match it, or that does not load is
logged with its path, removed, and rebuilt by the caller as if it had never been cached.  Entries are
data only (``.npy``, ``.npz`` read without pickle, JSON, ONNX, FAISS): nothing in a cache is unpickled.
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

from temporag import datatree
from temporag.cache_key import key_path, sign, verify
from temporag.config import _env_flag, get_settings

log = logging.getLogger(__name__)
SIDECAR = ".mac"
LEGACY_SIDECAR = ".sha256"  # the unsigned hash of kits before signatures: removed with its entry
MANIFEST = ".sha256.json"  # a folder entry's file hashes (signed like any entry)
READ_ONLY_SETTING = "TEMPORAG_CACHE_READONLY"


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
    """The slot of one cache entry.  An entry already there that fails its check (no signature, or bytes
    that differ from it) is removed first, so a caller that tests ``path.exists()`` rebuilds it instead of
    trusting it (in a read-only cache it cannot be removed: loaders check again, see :func:`problem`)."""
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

_VERIFIED: dict[str, tuple] = {}  # entries whose bytes matched their signature: path -> (size, mtime, key)


def sidecar_path(path: str | Path) -> Path:
    """Where the signature of an entry's bytes is kept."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR)


def _stat_key(path: Path) -> tuple:
    st = path.stat()
    return st.st_size, st.st_mtime_ns, str(key_path())


def _signed_parts(path: Path, digest: str) -> tuple[str, ...]:
    """What an entry's signature covers: its sha256 and its name (namespace/file), so an entry signed for
    one slot does not pass in another (two files swapped with their sidecars).  A folder's manifest is
    signed before the folder is renamed into place, so its folder's name is not part of it."""
    slot = MANIFEST if path.name == MANIFEST else f"{path.parent.name}/{path.name}"
    return ("temporag-cache-entry", slot, digest)


def _recorded(path: Path) -> tuple[str, str] | None:
    """(sha256, signature) from an entry's sidecar, or None when it has none that parses."""
    try:
        parts = sidecar_path(path).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    return (parts[0], parts[1]) if len(parts) == 2 and all(len(p) == 64 for p in parts) else None


def recorded_sha256(path: str | Path) -> str | None:
    """The sha256 of an entry's bytes as written (unsigned: tells corruption, not tampering — what a merge
    checks in another machine's cache, whose signatures this machine cannot check)."""
    recorded = _recorded(Path(path))
    return recorded[0] if recorded else None


def _write_sidecar(path: Path, digest: str) -> None:
    def _write(tmp: Path) -> None:
        tmp.write_text(f"{digest} {sign(*_signed_parts(path, digest))}\n", encoding="ascii")

    atomic_write(sidecar_path(path), _write)


def discard(path: str | Path, problem: str) -> None:
    """Remove an invalid entry (and its sidecar), saying which file and why, so it gets rebuilt."""
    path = Path(path)
    log.warning("cache entry %s is invalid (%s); removed, it will be rebuilt", path, problem)
    record_heal(f"cache entry {_cache_relative(path)} was invalid ({problem[:160]}): removed and rebuilt")
    _VERIFIED.pop(str(path), None)
    for p in (path, sidecar_path(path), path.with_name(path.name + LEGACY_SIDECAR)):
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:  # a read-only cache: the caller's rebuild says so where it writes
            log.warning("could not remove %s: %s", p, exc)


def _check_bytes(path: Path, data: bytes | None = None) -> str | None:
    """None when the entry's bytes match its signature; else what is wrong.  The one sha256 pass over
    the bytes is all the signature costs (the HMAC is taken of the digest)."""
    key = str(path)
    try:
        stat = _stat_key(path)
    except FileNotFoundError:
        return "missing"
    if _VERIFIED.get(key) == stat:
        return None
    recorded = _recorded(path)
    if recorded is None:
        return f"not signed with this machine's cache key (no valid {sidecar_path(path).name})"
    actual = hashlib.sha256(data).hexdigest() if data is not None else file_sha256(path)
    if not verify(recorded[1], *_signed_parts(path, actual)):
        return f"bytes do not match the signature in {sidecar_path(path).name} (changed, or signed elsewhere)"
    _VERIFIED[key] = stat
    return None


def problem(path: str | Path) -> str | None:
    """What is wrong with a cache entry (missing, unsigned, bytes that differ from its signature), or None
    when it can be trusted — for loaders of formats this module does not read itself (ONNX, FAISS)."""
    return _check_bytes(Path(path))


def save_with_hash(path: str | Path, write: Callable[[Path], None]) -> Path:
    """``write(tmp)`` atomically into ``path`` with its signature beside it: every later
    :func:`cache_path` checks the entry against it before it is trusted (a file of any format)."""
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
    """An array entry with its signature beside it."""

    def _write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.save(f, array, allow_pickle=False)

    return save_with_hash(path, _write)


def _read_checked(path: Path, load: Callable[[io.BytesIO], Any], check=None) -> Any:
    """The object ``load`` reads from a signed entry's bytes (read once: hashed and loaded from memory),
    else None: an entry that is unsigned, differs from its signature, does not load or fails ``check`` is
    logged, removed and must be rebuilt."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if sidecar_path(path).exists():  # written after its entry: the entry was removed since
            record_heal(f"cache entry {_cache_relative(path)} was missing (its hash remained): rebuilt")
        return None
    problem = _check_bytes(path, data)
    obj = None
    if problem is None:
        try:
            obj = load(io.BytesIO(data))
        except Exception as exc:  # noqa: BLE001 - a garbled entry can fail in many ways
            problem = f"does not load ({type(exc).__name__}: {exc})"
    if problem is None and check is not None:
        problem = check(obj)
    if problem is not None:
        discard(path, problem)
        return None
    return obj


def load_npy(path: str | Path, check: Callable[[np.ndarray], str | None] | None = None) -> np.ndarray | None:
    """The array of a valid entry, else None (an invalid entry is logged, removed and must be rebuilt).

    ``check`` returns what is wrong with a loaded array (e.g. its shape for the texts it stands for),
    or None: a signed entry of the wrong shape is not trusted either."""
    return _read_checked(Path(path), lambda f: np.load(f, allow_pickle=False), check)


def save_json(path: str | Path, obj: Any) -> Path:
    def _write(tmp: Path) -> None:
        tmp.write_text(json.dumps(obj, indent=2, default=str, ensure_ascii=False), encoding="utf-8")

    return atomic_write(path, _write)


def save_tree(path: str | Path, obj: Any, types: tuple[type, ...]) -> Path:
    """A structure of ``types`` instances, containers and arrays (STAR-RAG's rule graph, IA-RAG's build)
    as a signed ``.npz`` entry read without pickle (:mod:`temporag.datatree`)."""

    def _write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            datatree.dump(obj, f, types)

    return save_with_hash(path, _write)


def load_tree(path: str | Path, types: tuple[type, ...]) -> Any:
    """The structure of a valid :func:`save_tree` entry, else None (logged, removed: rebuild it)."""
    return _read_checked(Path(path), lambda f: datatree.load(f, types))


# -- folder entries (a trained model) ---------------------------------------------------------------------


def record_folder(folder: str | Path) -> None:
    """Write the sha256 of every file of a folder entry (e.g. a trained model before it is renamed into
    place) into its manifest, and sign the manifest, so :func:`check_folder` can tell a cut, garbled,
    replaced or added file later."""
    folder = Path(folder)
    digests = {name: file_sha256(folder / name) for name in _folder_files(folder)}
    manifest = folder / MANIFEST
    save_with_hash(manifest, lambda tmp: tmp.write_text(json.dumps(digests, indent=2), encoding="utf-8"))


def _folder_files(folder: Path) -> list[str]:
    """The files of a folder entry, relative to it, its manifest and the manifest's signature aside."""
    return [
        str(p.relative_to(folder))
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in (MANIFEST, MANIFEST + SIDECAR)
    ]


def folder_problem(folder: str | Path) -> str | None:
    """What is wrong with a folder entry, or None: a manifest that is missing or not signed with this
    machine's key, a file whose bytes differ from the manifest (or is missing), a file it does not list."""
    folder = Path(folder)
    manifest = folder / MANIFEST
    if not manifest.exists():
        return f"no {MANIFEST} (written before manifests were signed)"
    problem = _check_bytes(manifest)
    if problem is not None:
        return f"{MANIFEST}: {problem}"
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"unreadable manifest {MANIFEST} ({exc})"
    for name, digest in recorded.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if file_sha256(path) != digest:
            return f"sha256 of {name} differs from the one recorded when it was written"
    extra = [name for name in _folder_files(folder) if name not in recorded]
    return f"{extra[0]} is not in its manifest (added after it was written)" if extra else None


def check_folder(folder: str | Path) -> bool:
    """True when a folder entry can be trusted; else it is logged with the reason and removed, and False
    tells the caller to rebuild it."""
    import shutil

    folder = Path(folder)
    problem = folder_problem(folder)
    if problem is None:
        return True
    log.warning("cache entry %s is invalid (%s); removed, it will be rebuilt", folder, problem)
    record_heal(f"cache entry {_cache_relative(folder)} was invalid ({problem[:160]}): removed and rebuilt")
    shutil.rmtree(folder, ignore_errors=True)
    return False
