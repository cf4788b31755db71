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
  into this cache — each checked against the hash of its bytes first — to save the rebuild elsewhere.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from temporag.cache import SIDECAR, atomic_write, file_sha256
from temporag.llm import ResponseCache

log = logging.getLogger(__name__)
LLM_FILE = "llm.sqlite"


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
    """Cache files worth copying: inside a namespace folder, not a temporary, lock or sidecar file."""
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or len(rel.parts) < 2 or rel.parts[0].startswith(LLM_FILE):
            continue
        if path.name.startswith(".") or path.name.endswith((SIDECAR, ".tmp", ".lock")):
            continue
        yield path, rel


def merge_cache_dirs(source: Path, dest: Path) -> dict[str, int]:
    """Copy into ``dest`` what ``source`` holds and ``dest`` lacks: LLM responses (row by row) and file
    entries (an entry whose bytes differ from its recorded hash is left out, with a warning)."""
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
        sidecar = path.with_name(path.name + SIDECAR)
        if sidecar.exists() and sidecar.read_text().strip() != file_sha256(path):
            log.warning("cache entry %s differs from its recorded hash; not merged", path)
            counts["skipped"] += 1
            continue
        atomic_write(out, lambda tmp, src=path: shutil.copyfile(src, tmp))
        if sidecar.exists():
            atomic_write(
                out.with_name(out.name + SIDECAR), lambda tmp, src=sidecar: shutil.copyfile(src, tmp)
            )
        counts["files"] += 1
    return counts
