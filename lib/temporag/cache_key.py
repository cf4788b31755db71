"""The key that signs cache entries, kept outside the cache.

A hash beside an entry only catches corruption: whoever can write the entry can write its hash.  So every
entry the kit caches (arrays, rule graphs, IA-RAG builds, ONNX exports, trained models' manifests, LLM
answers) carries an HMAC-SHA256 made with a key that is not in the cache: an entry planted or swapped by
anyone without the key — a merged cache, a shared folder — fails its check and is rebuilt.

The key is ``$TEMPORAG_CACHE_KEY_FILE``, else ``$XDG_CONFIG_HOME/temporag/cache.key`` (``~/.config/…``),
created 0600 with 32 random bytes on first use.  People who share one cache folder share this file too
(point ``TEMPORAG_CACHE_KEY_FILE`` at it); merging someone's cache re-signs what it imports with yours.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import threading
from pathlib import Path

log = logging.getLogger(__name__)
KEY_SETTING = "TEMPORAG_CACHE_KEY_FILE"
_KEYS: dict[str, bytes] = {}
_LOCK = threading.Lock()


def key_path() -> Path:
    """Where the signing key is read from (and created on first use)."""
    explicit = os.environ.get(KEY_SETTING)
    if explicit:
        return Path(explicit).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "temporag" / "cache.key"


def cache_key() -> bytes:
    """The signing key: read from :func:`key_path`, created there (0600) when it does not exist yet.  Where
    it can be neither read nor made, a key for this process only, said once: nothing cached then is
    trusted by a later run (it is rebuilt), which costs time, never a wrong result."""
    path = key_path()
    with _LOCK:
        if str(path) not in _KEYS:
            _KEYS[str(path)] = _read_or_create(path)
        return _KEYS[str(path)]


def _read_or_create(path: Path) -> bytes:
    if not path.exists():
        try:
            _create(path)
        except OSError as exc:
            return _ephemeral(path, exc)
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        return _ephemeral(path, exc)
    if len(text) < 32:
        return _ephemeral(path, ValueError(f"holds {len(text)} characters, expected 64 hex digits"))
    return text.encode("ascii")


def _create(path: Path) -> None:
    """Write a new key 0600 beside ``path`` and link it into place: a process starting at the same moment
    either links first (and the other reads its key) or finds the whole file, never a half-written one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_hex(32) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)


def _ephemeral(path: Path, exc: Exception) -> bytes:
    log.warning(
        "cache key %s cannot be read or made (%s); cache entries written now are trusted by this process "
        "only — set %s to a file you can write",
        path,
        exc,
        KEY_SETTING,
    )
    return secrets.token_bytes(32)


def sign(*parts: str | bytes) -> str:
    """HMAC-SHA256 (hex) of ``parts`` with the cache key; parts are separated so they cannot run together."""
    mac = hmac.new(cache_key(), digestmod=hashlib.sha256)
    for part in parts:
        mac.update(part.encode("utf-8") if isinstance(part, str) else part)
        mac.update(b"\x00")
    return mac.hexdigest()


def verify(mac: str | None, *parts: str | bytes) -> bool:
    """Whether ``mac`` is the signature of ``parts`` (constant time)."""
    return isinstance(mac, str) and hmac.compare_digest(mac, sign(*parts))
