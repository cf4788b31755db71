"""Caches across machines: what a worker with its own cache sends back, and merging one cache into another.

On one machine, or on machines sharing ``TEMPORAG_CACHE`` on a file system with working ``flock`` (NFSv4,
Lustre, CephFS), every job reads and writes the one cache: nothing to merge.  A worker with a cache of
its own (a local disk, faster and safe for sqlite, whose WAL mode does not work over a network file
system) keeps what it computes.  Then:

* LLM responses — the expensive part, and what "resume without repeating a call" is about — travel with
  the job: the worker returns the rows its job added (:func:`rows_since`), the driver adds them to its
  cache (:meth:`temporag.llm.ResponseCache.add_rows`), and before a batch the driver gives each worker
  the rows it lacks (:func:`missing_rows`), so a job that lands on another worker after a failure still
  finds every answer received so far;
* file entries (embeddings, rule graphs) are deterministic and rebuilt by each worker that needs them
  (once, under the entry's build lock); ``temporag cache merge DIR`` copies a worker's folder's entries
  into this cache to save the rebuild elsewhere.

Merging is the user's decision to trust another cache, so what it imports is signed with this machine's
cache key (:mod:`temporag.cache_key`) — and so it imports only formats that cannot run code when read
(:data:`DATA_ONLY`: arrays read without pickle, FAISS indexes, JSON).  A pickle or any file of another
kind is left out with one line naming it; ONNX exports and trained models are not imported either (a
graph or a model folder is more than data to its loader): they are rebuilt here from the local weights.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from temporag.cache import LEGACY_SIDECAR, SIDECAR, file_sha256, recorded_sha256, save_with_hash
from temporag.llm import ResponseCache

log = logging.getLogger(__name__)
LLM_FILE = "llm.sqlite"
DATA_ONLY = (".npy", ".npz", ".faiss", ".json")  # what a merge imports: formats whose readers run no code


def llm_cache(cache_dir: Path) -> ResponseCache:
    return ResponseCache(Path(cache_dir) / LLM_FILE)


def rows_since(cache_dir: Path, since: float) -> list[tuple]:
    """LLM responses added to ``cache_dir`` at or after ``since`` (a time.time() value)."""
    path = Path(cache_dir) / LLM_FILE
    return llm_cache(cache_dir).rows(since=since) if path.exists() else []


def missing_rows(cache_dir: Path, present: set[str]) -> list[tuple]:
    """LLM responses of ``cache_dir`` whose keys are not in ``present`` (what another cache lacks)."""
    path = Path(cache_dir) / LLM_FILE
    return llm_cache(cache_dir).rows(exclude=present) if path.exists() else []


def _entries(root: Path):
    """Cache files worth copying: inside a namespace folder, not a temporary, lock or signature file."""
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or len(rel.parts) < 2 or rel.parts[0].startswith(LLM_FILE):
            continue
        if path.name.startswith(".") or path.name.endswith((SIDECAR, LEGACY_SIDECAR, ".tmp", ".lock")):
            continue
        yield path, rel


def _refusal(path: Path, rel: Path) -> str | None:
    """Why an entry of another cache is not imported, or None."""
    if len(rel.parts) != 2:
        return "a file of a folder entry (a trained model): trained again here"
    if path.suffix == ".onnx":
        return "an ONNX export: exported again here from the local weights"
    if path.suffix not in DATA_ONLY:
        return f"{path.suffix or 'no suffix'} is not a data-only format ({', '.join(DATA_ONLY)})"
    recorded = recorded_sha256(path)
    if recorded is not None and recorded != file_sha256(path):
        return "its bytes differ from the hash recorded when it was written (cut or garbled)"
    return None


def merge_cache_dirs(source: Path, dest: Path) -> dict[str, int]:
    """Copy into ``dest`` what ``source`` holds and ``dest`` lacks: LLM responses (row by row) and file
    entries of a data-only format, each signed with this machine's key (merging trusts ``source``); any
    other file is left out with one line naming it."""
    source, dest = Path(source), Path(dest)
    if not source.is_dir():
        raise FileNotFoundError(f"cache folder {source} does not exist")
    counts = {"llm_rows": 0, "files": 0, "skipped": 0}
    if (source / LLM_FILE).exists():
        target = llm_cache(dest)
        counts["llm_rows"] = target.add_rows(missing_rows(source, target.keys()))
    for path, rel in _entries(source):
        out = dest / rel
        if out.exists():
            continue
        refused = _refusal(path, rel)
        if refused is not None:
            log.warning("cache entry %s not merged: %s", path, refused)
            counts["skipped"] += 1
            continue
        save_with_hash(out, lambda tmp, src=path: shutil.copyfile(src, tmp))
        counts["files"] += 1
    return counts
