"""The sqlite response cache: one file shared by every run, thread and process on a machine.

Checked before it is trusted: the first open in a process runs sqlite's own ``quick_check``; a damaged
database is moved aside with a one-line message, the answers sqlite can still read from it are copied
into a fresh one, and only the rest is asked again (unchecked, a garbled page would fail or cost every
call that reads it).

A read-only cache (a read-only mount, a folder this process cannot write, ``TEMPORAG_CACHE_READONLY=1``)
is opened read-only by sqlite itself, serves every answer it holds without a lock, and a miss is sent and
said in one line ("cache is read-only; answer not cached"), never a failed call.

Every answer row carries a signature (column ``mac``: an HMAC of its key, model, endpoint and response
with the cache key of :mod:`temporag.cache_key`, kept outside the cache): a row changed by hand, copied in
from another cache without ``temporag cache merge``, or written before answers were signed is not trusted
— it is removed and the question asked again.  Old caches get the column on first open and nothing is
re-signed: their answers are asked again once (said in one line), since a row without a signature cannot
be told from a planted one.  Merging (:meth:`ResponseCache.add_rows`) is the user's decision to trust
another cache: what it imports is signed with this machine's key.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from temporag.cache import exclusive, read_only, record_heal
from temporag.cache_key import sign, verify

log = logging.getLogger(__name__)
_client_log = logging.getLogger("temporag.llm")  # best_effort speaks for the client, under its name

T = TypeVar("T")

CACHE_SCHEMA = 1
_COLUMNS = "key, model, endpoint, response, created, mac"
_CHECKED: set[tuple[str, int]] = set()  # (path, pid) whose database passed the check in this process
_CHECK_LOCK = threading.RLock()  # re-entered by the fresh cache a salvage fills
_SALVAGE_QUERIES = 20_000  # how hard salvage tries around damaged pages before giving up on the rest
_MISSES_SAID = 5  # misses of a read-only cache said one per line; the rest in one line


_RECORD_FIELDS: dict[str, type | tuple[type, ...]] = {
    "text": str,
    "prompt_tokens": int,
    "completion_tokens": int,
    "token_source": str,
    "latency_s": (int, float),
    "model": str,
}


def _row_parts(key: str, model: str | None, endpoint: str | None, response: str) -> tuple[str, ...]:
    """What an answer row's signature covers: everything a cached reply is rebuilt from and looked up by."""
    return ("temporag-llm-answer", key, model or "", endpoint or "", response)


def _record_problem(record: Any) -> str | None:
    """What is wrong with a stored response, or None (every field a cached reply is rebuilt from)."""
    if not isinstance(record, dict):
        return f"holds {type(record).__name__}, not a response record"
    for name, kind in _RECORD_FIELDS.items():
        if not isinstance(record.get(name), kind) or isinstance(record.get(name), bool):
            return f"field {name!r} is {record.get(name)!r}"
    return None


class ResponseCache:
    """sqlite store of successful responses, safe for several processes at once.

    WAL lets readers proceed while one process writes; the busy timeout makes a writer wait for a lock
    instead of failing.  One connection per (process, thread): sqlite connections must not cross either.
    A row that does not parse into a response record is logged, deleted and recomputed, never trusted
    nor allowed to fail its question forever.  ``claim`` is the per-request in-flight lock; the
    ``models`` table remembers which model an endpoint served when none was configured.

    ``read_only`` (None: :func:`temporag.cache.read_only` of its folder) opens it through sqlite's
    read-only URI: nothing is written, locked or moved, and writes are dropped (a put says so).
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0, read_only: bool | None = None):
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._read_only = read_only
        self._misses = 0
        self._misses_lock = threading.Lock()
        self._unsigned_said = False

    @property
    def read_only(self) -> bool:
        """True when this cache is used without writing to it (decided once, on first use)."""
        if self._read_only is None:
            self._read_only = read_only(self.path.parent) or (
                self.path.exists() and not os.access(self.path, os.W_OK)
            )
        return self._read_only

    def _connect(self) -> sqlite3.Connection | None:
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            return conn
        if self.read_only:
            return self._connect_read_only()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        check_database(self.path)
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        for attempt in range(20):  # switching to WAL needs a brief exclusive lock; others may hold it
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, endpoint TEXT, "
                    "response TEXT NOT NULL, created REAL NOT NULL, mac TEXT)"
                )
                columns = {r[1] for r in conn.execute("PRAGMA table_info(responses)")}
                if "mac" not in columns:  # a cache from before answers were signed: its rows are re-asked
                    conn.execute("ALTER TABLE responses ADD COLUMN mac TEXT")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS models (endpoint TEXT PRIMARY KEY, model TEXT NOT NULL, "
                    "updated REAL NOT NULL)"
                )
                break
            except sqlite3.OperationalError:
                if attempt == 19:
                    raise
                time.sleep(0.05 * (attempt + 1))
        self._local.conn = conn
        self._local.pid = os.getpid()
        return conn

    def _connect_read_only(self) -> sqlite3.Connection | None:
        """A read-only connection, or None when there is nothing to read (no file, or one sqlite cannot
        trust).  The file alone is read ``immutable=1`` (no locks, no ``-shm``: nothing written); a
        write-ahead log left beside it by a run that did not finish is read through ``mode=ro`` where
        sqlite can (its ``-shm`` file is there, or can be made)."""
        if getattr(self._local, "pid", None) == os.getpid() and getattr(self._local, "empty", False):
            return None
        conn = None
        if self.path.exists():
            wal = self.path.with_name(self.path.name + "-wal")
            has_log = wal.exists() and wal.stat().st_size > 0
            for flags in ("mode=ro", "mode=ro&immutable=1") if has_log else ("mode=ro&immutable=1",):
                try:
                    conn = sqlite3.connect(f"{self.path.absolute().as_uri()}?{flags}", uri=True)
                    found = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
                    conn.execute("SELECT 1 FROM responses LIMIT 1").fetchall()
                except sqlite3.Error as exc:
                    problem = str(exc)
                    if conn is not None:
                        conn.close()
                    conn = None
                    continue
                if found == ["ok"]:
                    if "immutable" in flags:
                        self._say_wal_unread()
                    break
                problem = f"sqlite quick_check: {' '.join(found)[:160]}"
                conn.close()
                conn = None
                break
            if conn is None:
                log.warning(
                    "LLM cache %s is read-only and cannot be read (%s); every call is sent",
                    self.path,
                    problem,
                )
        self._local.conn, self._local.pid, self._local.empty = conn, os.getpid(), conn is None
        return conn

    def _say_wal_unread(self) -> None:
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists() and wal.stat().st_size:
            log.warning(
                "LLM cache %s is read-only and its write-ahead log %s (%d bytes) cannot be read without "
                "its -shm file; answers written last by a run that did not finish are asked again",
                self.path,
                wal.name,
                wal.stat().st_size,
            )

    def not_cached(self, key: str) -> None:
        """Say that an answer is not kept because this cache is read-only (the first few, then once)."""
        with self._misses_lock:
            self._misses += 1
            n = self._misses
        if n <= _MISSES_SAID:
            log.warning("LLM cache %s is read-only; answer not cached: %s", self.path, key)
        if n == _MISSES_SAID:
            log.warning("LLM cache %s is read-only: further answers not cached are not listed", self.path)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record of ``key``; None when absent, unsigned or invalid (such a row is deleted)."""
        conn = self._connect()
        if conn is None:
            return None
        try:
            row = conn.execute(
                "SELECT response, model, endpoint, mac FROM responses WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.OperationalError:  # a read-only cache from before answers were signed
            if not self.read_only:
                raise
            row = conn.execute("SELECT response, model, endpoint, NULL FROM responses WHERE key = ?", (key,))
            row = row.fetchone()
        if not row:
            return None
        response, model, endpoint, mac = row
        if mac is None:
            self._say_unsigned()
            self.delete(key)
            return None
        if not verify(mac, *_row_parts(key, model, endpoint, response)):
            problem = "its signature does not match (changed, or copied from another cache)"
        else:
            try:
                record = json.loads(response)
                problem = _record_problem(record)
            except (TypeError, ValueError) as exc:  # JSONDecodeError is a ValueError
                record, problem = None, f"not JSON ({exc})"
        if problem is not None:
            log.warning(
                "LLM cache row %s in %s is invalid (%s); removed, the call will be made again",
                key,
                self.path,
                problem,
            )
            self.delete(key)
            return None
        return record

    def _say_unsigned(self) -> None:
        if not self._unsigned_said:
            self._unsigned_said = True
            log.warning(
                "LLM cache %s holds answers written before answers were signed; they are asked again",
                self.path,
            )

    def delete(self, key: str) -> None:
        if not self.read_only:
            self._connect().execute("DELETE FROM responses WHERE key = ?", (key,))

    def remember_model(self, endpoint: str, model: str) -> None:
        """Which model ``endpoint`` served when it was asked (``/models``), for offline re-runs."""
        if self.read_only:
            return
        self._connect().execute(
            "INSERT OR REPLACE INTO models (endpoint, model, updated) VALUES (?, ?, ?)",
            (endpoint, model, time.time()),
        )

    def remembered_model(self, endpoint: str) -> str | None:
        conn = self._connect()
        if conn is None:
            return None
        try:
            row = conn.execute("SELECT model FROM models WHERE endpoint = ?", (endpoint,)).fetchone()
        except sqlite3.OperationalError:  # a read-only cache written before models were remembered
            if not self.read_only:
                raise
            row = None
        return str(row[0]) if row else None

    @contextlib.contextmanager
    def claim(self, key: str) -> Iterator[bool]:
        """Hold the in-flight lock of one request; yields True when another holder had to be waited for
        (then look in the cache again before calling).  A lock file per request, ``flock``-ed
        (:func:`temporag.cache.exclusive`): the kernel releases it when its holder dies, so a killed run
        never blocks the next one.  A read-only cache has no locks: nothing it lacks will ever be written
        to it, so there is no answer to wait for."""
        if self.read_only:
            yield False
            return
        lock_path = self.path.with_name(self.path.name + ".inflight") / f"{key}.lock"
        with exclusive(lock_path, block=False) as held:
            if held:
                yield False
                return
        log.info("another run is computing this LLM request (%s); waiting for its answer", key)
        with exclusive(lock_path):
            yield True

    def put(self, key: str, model: str, endpoint: str, response: dict[str, Any]) -> None:
        if self.read_only:
            self.not_cached(key)
            return
        text = json.dumps(response)
        self._connect().execute(
            "INSERT OR REPLACE INTO responses (key, model, endpoint, response, created, mac) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (key, model, endpoint, text, time.time(), sign(*_row_parts(key, model, endpoint, text))),
        )

    def rows(self, since: float | None = None, exclude: set[str] | None = None) -> list[tuple]:
        """Stored responses as ``(key, model, endpoint, response, created)`` rows — those created at or after
        ``since`` and not keyed in ``exclude`` — to copy them into another cache (:meth:`add_rows`)."""
        query, args = "SELECT key, model, endpoint, response, created FROM responses", ()
        if since is not None:
            query, args = query + " WHERE created >= ?", (since,)
        conn = self._connect()
        if conn is None:
            return []
        return [r for r in conn.execute(query, args).fetchall() if not exclude or r[0] not in exclude]

    def keys(self) -> set[str]:
        conn = self._connect()
        return {r[0] for r in conn.execute("SELECT key FROM responses")} if conn is not None else set()

    def add_rows(self, rows: Iterable[Sequence[Any]]) -> int:
        """Add responses from another cache (a worker's; ``temporag cache merge``): the caller's decision to
        trust them, so each is signed with this machine's key.  A key already here is kept, a row whose
        response does not parse into a record is left out.  Returns how many were added (none to a
        read-only cache)."""
        if self.read_only:
            log.warning("LLM cache %s is read-only; answers from another cache not merged into it", self.path)
            return 0
        conn, added = self._connect(), 0
        for key, model, endpoint, response, created in rows:
            try:
                problem = _record_problem(json.loads(response))
            except (TypeError, ValueError) as exc:
                problem = str(exc)
            if problem is not None:
                log.warning("LLM cache row %s from another cache is invalid (%s); not merged", key, problem)
                continue
            cursor = conn.execute(
                "INSERT OR IGNORE INTO responses (key, model, endpoint, response, created, mac) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (key, model, endpoint, response, created, sign(*_row_parts(key, model, endpoint, response))),
            )
            added += cursor.rowcount
        return added

    def __bool__(self) -> bool:  # an empty cache is still a cache
        return True

    def __len__(self) -> int:
        conn = self._connect()
        return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]) if conn is not None else 0

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None
        self._local.empty = False


def best_effort(operation: Callable[..., T], *args: Any) -> T | None:
    """``operation(*args)`` for a bound :class:`ResponseCache` method, or None when sqlite fails: a cache
    operation whose failure costs the client a call, never the run."""
    try:
        return operation(*args)
    except sqlite3.Error as exc:
        _client_log.warning("LLM cache %s failed (%s): %s", operation.__name__, operation.__self__.path, exc)
        return None


# ----------------------------------------------------------------------------------------------------
# integrity


def database_problem(path: Path) -> str | None:
    """Why the sqlite file at ``path`` cannot be trusted (sqlite's ``quick_check``), or None when it is
    sound or absent."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        conn = sqlite3.connect(path, timeout=60.0)
        try:
            found = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:  # "file is not a database", "database disk image is malformed"
        return str(exc)
    if found == ["ok"]:
        return None
    first = " ".join(" ".join(found).replace("*** in database main ***", "").split())
    return f"sqlite quick_check: {first[:160]}{'...' if len(first) > 160 else ''}"


def check_database(path: Path) -> None:
    """Check ``path`` once per process; a damaged database is moved aside and what it holds salvaged.

    One process at a time checks (a lock beside the file), so two runs opening a damaged cache together
    move it aside once."""
    token = (str(path), os.getpid())
    with _CHECK_LOCK:
        if token in _CHECKED:
            return
        try:
            with exclusive(path.with_name(path.name + ".check.lock")):
                problem = database_problem(path)
                if problem is not None:
                    _move_aside_and_salvage(path, problem)
        except OSError as exc:  # a read-only cache: use it as it is
            log.debug("LLM cache %s not checked (%s)", path, exc)
        _CHECKED.add(token)


def _move_aside_and_salvage(path: Path, problem: str) -> None:
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    try:
        os.replace(path, aside)
    except OSError as exc:
        log.warning(
            "LLM cache %s is damaged (%s) and cannot be moved aside (%s); its rows are not trusted",
            path,
            problem,
            exc,
        )
        return
    for suffix in ("-wal", "-shm"):  # sqlite finds a WAL by name: move it with its database
        with contextlib.suppress(FileNotFoundError):
            os.replace(path.with_name(path.name + suffix), aside.with_name(aside.name + suffix))
    rows = salvage_rows(aside)
    fresh = ResponseCache(path)
    _CHECKED.add((str(path), os.getpid()))  # the fresh file needs no check (and must not recurse)
    kept = fresh.add_rows(rows)
    fresh.close()
    log.warning(
        "LLM cache %s was damaged (%s): moved aside to %s; %d answers salvaged from it, the others will be "
        "asked again",
        path,
        problem,
        aside.name,
        kept,
    )
    record_heal(
        f"LLM cache {path.name} was damaged ({problem[:120]}): moved aside to {aside.name}; {kept} answers "
        "salvaged, the others will be asked again"
    )


def salvage_rows(path: Path) -> list[tuple]:
    """Every ``responses`` row sqlite can still read from a damaged file and whose signature holds (as
    ``(key, model, endpoint, response, created)``): the whole table when it reads, else rowid ranges
    halved around the pages that fail, within a bounded number of queries."""
    try:
        conn = sqlite3.connect(path, timeout=5.0)
    except sqlite3.Error:
        return []
    rows = _readable_rows(conn)
    return [row[:5] for row in rows if verify(row[5], *_row_parts(*row[:4]))]


def _readable_rows(conn: sqlite3.Connection) -> list[tuple]:
    try:  # a cache from before answers were signed has nothing to salvage: no row of it is trusted
        if "mac" not in {r[1] for r in conn.execute("PRAGMA table_info(responses)")}:
            conn.close()
            return []
    except sqlite3.DatabaseError:
        pass
    out: list[tuple] = []
    budget = [_SALVAGE_QUERIES]

    def scan(lo: int, hi: int) -> None:  # rowids in [lo, hi)
        if budget[0] <= 0 or lo >= hi:
            return
        budget[0] -= 1
        try:
            out.extend(
                conn.execute(
                    f"SELECT {_COLUMNS} FROM responses WHERE rowid >= ? AND rowid < ?", (lo, hi)
                ).fetchall()
            )
        except sqlite3.DatabaseError:
            if hi - lo > 1:
                mid = (lo + hi) // 2
                scan(lo, mid)
                scan(mid, hi)

    try:
        try:
            return conn.execute(f"SELECT {_COLUMNS} FROM responses").fetchall()
        except sqlite3.DatabaseError:
            pass
        try:
            top = int(conn.execute("SELECT max(rowid) FROM responses").fetchone()[0] or 0) + 1
        except sqlite3.DatabaseError:
            top = 1 << 24
        scan(1, top)
    finally:
        conn.close()
    return out
