"""Content-addressed on-disk cache with atomic writes.

A killed run must never leave a half-written file that a re-run would trust, so every write
goes to a temporary file in the same folder and is renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from temporag.config import get_settings


def content_hash(*parts: Any) -> str:
    """Stable sha256 of JSON-serialisable parts, bytes or numpy arrays (hex, 16 chars)."""
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
    return h.hexdigest()[:16]


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def cache_path(namespace: str, key: str, suffix: str, cache_dir: str | Path | None = None) -> Path:
    root = Path(cache_dir) if cache_dir is not None else get_settings().cache_dir
    folder = root / namespace
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{key}{suffix}"


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp_path)`` then rename the result to ``path`` in one step."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        write(tmp_path)
        os.chmod(tmp_path, 0o644)  # mkstemp makes 0600; results are meant to be shared
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()
    return path


def save_npy(path: str | Path, array: np.ndarray) -> Path:
    def _write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.save(f, array, allow_pickle=False)

    return atomic_write(path, _write)


def save_json(path: str | Path, obj: Any) -> Path:
    def _write(tmp: Path) -> None:
        tmp.write_text(json.dumps(obj, indent=2, default=str, ensure_ascii=False), encoding="utf-8")

    return atomic_write(path, _write)


def save_pickle(path: str | Path, obj: Any) -> Path:
    import pickle

    def _write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)

    return atomic_write(path, _write)


def load_pickle(path: str | Path) -> Any:
    import pickle

    with open(path, "rb") as f:
        return pickle.load(f)
