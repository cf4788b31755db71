"""What a run trained or sampled, with the seed it came from and the sha256 of what it is.

TimeR4's retriever, STAR-RAG's rule graph and IA-RAG's calibrated threshold are made by the kit, not
downloaded: the same inputs and seed must give the same artifact, and a run must say which one it used.
The first time an artifact is made its digest is kept in the cache (``<cache>/artifacts/<kind>/<key>.json``,
outside the entry itself, so it survives the entry being removed as damaged); one made again later — after
a cache repair, on another machine — is compared with it, and a difference is said as a warning and kept
for ``results.json`` (``artifacts_changed``), whence the runner's summary line says it on the console.
Every artifact a process used is listed by :func:`used` (``results.json``: ``artifacts``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from temporag.cache import content_digest, read_only, save_json

log = logging.getLogger(__name__)
_LOCK = threading.Lock()
_USED: dict[tuple[str, str], Artifact] = {}


@dataclass(frozen=True)
class Artifact:
    """One trained or sampled artifact as a run used it."""

    kind: str  # "timer4_retriever", "star_rag_graph", "ia_rag_tau"
    key: str  # its cache key (every input that determines it)
    sha256: str  # of what it is (a model's weights, a graph's content), never of timings
    seed: int | None
    made: bool  # made by this process (False: loaded from the cache)
    recorded_sha256: str | None  # what the first one made under this key was, when known

    @property
    def changed(self) -> bool:
        return self.recorded_sha256 is not None and self.recorded_sha256 != self.sha256


def digest(*parts: Any) -> str:
    """sha256 (hex) of numpy arrays (dtype, shape and bytes), bytes, or JSON-able parts (sorted keys): the
    cache's one way of hashing content, unshortened."""
    return content_digest(*parts)


def _ledger(cache_dir: Path, kind: str, key: str) -> Path:
    return Path(cache_dir) / "artifacts" / kind / f"{key}.json"


def note(
    kind: str,
    key: str,
    sha256: str,
    *,
    seed: int | None,
    made: bool,
    cache_dir: str | Path,
    what: str = "",
    **details: Any,
) -> Artifact:
    """Record that this process used (``made`` or loaded) an artifact; the first digest under ``key``
    is kept in the cache, a later one that differs is warned about.  ``what`` names it for people."""
    ledger = _ledger(Path(cache_dir), kind, key)
    try:
        recorded = json.loads(ledger.read_text(encoding="utf-8"))
        recorded_sha = str(recorded["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        recorded_sha = None
    if recorded_sha is None and not read_only(ledger.parent):
        entry = {"sha256": sha256, "seed": seed, "recorded": time.strftime("%Y-%m-%dT%H:%M:%S"), **details}
        try:
            save_json(ledger, entry)
        except OSError as exc:  # the artifact is still used; only its later comparison is lost
            log.debug("could not record %s %s: %s", kind, key, exc)
    artifact = Artifact(kind, key, sha256, seed, made, recorded_sha)
    if artifact.changed:
        log.warning(
            "%s (%s %s) %s from seed %s but differs from the one first made under the same inputs "
            "(sha256 %s…, recorded %s…): numbers computed with it may differ from earlier runs",
            what or kind,
            kind,
            key,
            "was made again" if made else "was loaded",
            seed,
            sha256[:12],
            recorded_sha[:12],
        )
    with _LOCK:
        _USED[(kind, key)] = artifact
    return artifact


def used() -> list[dict[str, Any]]:
    """Every artifact this process used, for ``results.json``."""
    with _LOCK:
        return [asdict(a) for a in _USED.values()]


def changed() -> list[dict[str, Any]]:
    """The artifacts this process used that differ from the first one made under their key."""
    with _LOCK:
        return [asdict(a) for a in _USED.values() if a.changed]


def forget() -> None:
    """Start a fresh list of used artifacts (a new run in the same process; tests)."""
    with _LOCK:
        _USED.clear()
