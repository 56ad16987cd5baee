"""Session stores: an append-only log of entries per session id, folded on load, with the same semantics everywhere.

- `MemoryStore`: one process (a `Registry`, a dry-run, one MCP proxy); bounded, thread-safe.
- `SqliteStore`: one machine, several processes (the Claude Code hook, `serve`); a file made 0600.
- `RedisStore`: several `serve` replicas sharing sessions (the `redis` package, an extra).

Each store keeps the folded state of the sessions it saw and reads only the entries appended
since (by itself or another process), so a load costs the new entries, not the session.
Sessions expire `ttl` seconds after their last entry. Every failure is a `SessionStoreError`:
the engine then fails closed for rules that read the session.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from policyengine.errors import SessionStoreError
from policyengine.values.session import Entry, SessionState

DEFAULT_TTL = 24 * 3600.0  # a day after a session's last entry
MAX_SESSIONS = 10_000  # sessions a process keeps folded (the memory store's bound on live sessions)


class _Folded:
    """Folded states by session id, least recently used first, bounded (shared by the stores)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.states: OrderedDict[str, tuple[SessionState, Any]] = OrderedDict()

    def get(self, session_id: str) -> tuple[SessionState, Any] | None:
        found = self.states.get(session_id)
        if found is not None:
            self.states.move_to_end(session_id)
        return found

    def put(self, session_id: str, state: SessionState, mark: Any) -> None:
        self.states[session_id] = (state, mark)
        self.states.move_to_end(session_id)
        while len(self.states) > self.limit:
            self.states.popitem(last=False)


class MemoryStore:
    """Sessions of one process, in memory: bounded to `limit` sessions (least recently used go first)."""

    def __init__(self, *, ttl: float = DEFAULT_TTL, limit: int = MAX_SESSIONS, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)
        self.ttl, self._lock = ttl, threading.Lock()
        self._folded = _Folded(limit)
        self.log: dict[str, list[Entry]] | None = None  # set to {} to keep every entry (tests, soak checks)

    @property
    def key(self) -> bytes:
        """The fingerprint key: random per store."""
        return self._key

    def load(self, session_id: str) -> SessionState:
        """The session's state, or a new one (also when its last entry is older than the ttl)."""
        with self._lock:
            found = self._folded.get(session_id)
            if found is None or time.time() - found[1] > self.ttl:
                return SessionState(session_id)
            return found[0]

    def append(self, session_id: str, entry: Entry) -> None:
        """Fold the entry into the session's state."""
        with self._lock:
            found = self._folded.get(session_id)
            state = found[0] if found is not None and time.time() - found[1] <= self.ttl else SessionState(session_id)
            state.add(entry)
            self._folded.put(session_id, state, time.time())
            if self.log is not None:
                self.log.setdefault(session_id, []).append(entry)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    time REAL NOT NULL,
    entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_session ON entries (session, id);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class SqliteStore:
    """Sessions in one SQLite file (0600), shared by every process that opens it; WAL, one writer at a time."""

    def __init__(self, path: str | os.PathLike[str], *, ttl: float = DEFAULT_TTL, limit: int = MAX_SESSIONS) -> None:
        self.path, self.ttl = Path(path), ttl
        self._lock = threading.Lock()
        self._folded = _Folded(limit)
        self._appended = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)  # created private, never world-readable
            os.close(fd)
            os.chmod(self.path, 0o600)
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('key', ?)", (secrets.token_hex(32),))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            (hexkey,) = self._db.execute("SELECT value FROM meta WHERE name = 'key'").fetchone()
            self._key = bytes.fromhex(hexkey)
            self._expire()
        except (OSError, sqlite3.Error, ValueError) as error:
            raise SessionStoreError(
                f"session store {self.path}: {error}", hint="check the folder exists and is writable by this user"
            ) from error

    @property
    def key(self) -> bytes:
        """The fingerprint key, kept in the file so every process that shares it makes the same prints."""
        return self._key

    def _expire(self) -> None:
        cutoff = time.time() - self.ttl
        self._db.execute(
            "DELETE FROM entries WHERE session IN (SELECT session FROM entries GROUP BY session HAVING MAX(time) < ?)",
            (cutoff,),
        )

    def _version(self) -> int:
        # Changes whenever another connection commits (never for this one's own writes): while it holds,
        # no other process wrote, so a folded session is whole without a query (SQLite's data_version).
        (version,) = self._db.execute("PRAGMA data_version").fetchone()
        return int(version)

    def load(self, session_id: str) -> SessionState:
        """The session's state: the entries this process has not folded yet are read and folded."""
        with self._lock:
            try:
                now, version = time.time(), self._version()
                found = self._folded.get(session_id)
                if found is not None and found[1][2] == version:
                    state, (_last, latest, _v) = found
                else:
                    state, latest = self._read(session_id, found, version)
                if state.count and latest < now - self.ttl:
                    return SessionState(session_id)  # expired: its last entry is older than the ttl
                return state
            except (sqlite3.Error, ValueError) as error:
                raise SessionStoreError(f"session store {self.path}: {error}") from error

    def _read(
        self, session_id: str, found: tuple[SessionState, Any] | None, version: int
    ) -> tuple[SessionState, float]:
        """Fold the entries written since `found` was folded (by any process)."""
        state, (last, latest, _v) = found if found is not None else (SessionState(session_id), (0, 0.0, -1))
        rows = self._db.execute(
            "SELECT id, time, entry FROM entries WHERE session = ? AND id > ? ORDER BY id", (session_id, last)
        ).fetchall()
        if found is not None and not rows and state.count and not self._alive(session_id, last):
            state, latest = SessionState(session_id), 0.0  # purged since it was folded
        for row_id, written, text in rows:
            if state.count and written - latest > self.ttl:
                state = SessionState(session_id)  # the session had expired before this entry came
            state.add(Entry.from_json(text))
            last, latest = row_id, max(latest, written)
        self._folded.put(session_id, state, (last, latest, version))
        return state, latest

    def _alive(self, session_id: str, last: int) -> bool:
        return (
            self._db.execute("SELECT 1 FROM entries WHERE session = ? AND id = ?", (session_id, last)).fetchone()
            is not None
        )

    def append(self, session_id: str, entry: Entry) -> None:
        """Write the entry (committed before returning); fold it into this process's state when nothing else wrote."""
        with self._lock:
            try:
                written = time.time()
                row_id = self._db.execute(
                    "INSERT INTO entries (session, time, entry) VALUES (?, ?, ?)",
                    (session_id, written, entry.to_json()),
                ).lastrowid
                found = self._folded.get(session_id)
                if found is not None and row_id is not None:
                    state, (_last, latest, version) = found
                    if version == self._version() and not (state.count and written - latest > self.ttl):
                        state.add(entry)  # no other process wrote since it was folded: this entry is the next
                        self._folded.put(session_id, state, (row_id, written, version))
                self._appended += 1
                if self._appended % 1000 == 0:
                    self._expire()
            except sqlite3.Error as error:
                raise SessionStoreError(f"session store {self.path}: {error}") from error

    def entries(self, session_id: str) -> list[Entry]:
        """Every entry of the session, in log order (for replay and checks)."""
        with self._lock:
            rows = self._db.execute("SELECT entry FROM entries WHERE session = ? ORDER BY id", (session_id,)).fetchall()
        return [Entry.from_json(text) for (text,) in rows]

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()


class RedisStore:
    """Sessions in Redis, one list per session, shared by every replica that points at the same server."""

    PREFIX = "policyengine:session:"

    def __init__(self, url: str, *, ttl: float = DEFAULT_TTL, limit: int = MAX_SESSIONS) -> None:
        try:
            import redis  # an extra: agent-policyengine[redis]
        except ImportError as error:
            raise SessionStoreError(
                f"session store {url}: the redis package is not installed (install this project's [redis] extra)"
            ) from error
        self.url, self.ttl = url, ttl
        self._lock = threading.Lock()
        self._folded = _Folded(limit)
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError, ValueError)
        try:
            self._client = redis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=5.0)
            self._client.set("policyengine:key", secrets.token_hex(32), nx=True)
            hexkey = self._client.get("policyengine:key")
            self._key = bytes.fromhex(hexkey.decode() if isinstance(hexkey, bytes) else str(hexkey))
        except self._errors as error:
            raise SessionStoreError(f"session store {url}: {error}") from error

    @property
    def key(self) -> bytes:
        """The fingerprint key, kept in Redis so every replica makes the same prints."""
        return self._key

    def load(self, session_id: str) -> SessionState:
        """The session's state: entries past those this process folded are read (LRANGE) and folded."""
        with self._lock:
            try:
                found = self._folded.get(session_id)
                state, seen = found if found is not None else (SessionState(session_id), 0)
                rows = self._client.lrange(self.PREFIX + session_id, seen, -1)
                if found is not None and not rows and seen and not self._client.exists(self.PREFIX + session_id):
                    state, seen = SessionState(session_id), 0  # expired since it was folded
                for text in rows:
                    state.add(Entry.from_json(text))
                self._folded.put(session_id, state, seen + len(rows))
                return state
            except self._errors as error:
                raise SessionStoreError(f"session store {self.url}: {error}") from error

    def append(self, session_id: str, entry: Entry) -> None:
        """RPUSH the entry and push the session's expiry out (one round trip)."""
        key = self.PREFIX + session_id
        try:
            pipe = self._client.pipeline(transaction=True)
            pipe.rpush(key, entry.to_json())
            pipe.expire(key, max(1, int(self.ttl)))
            pipe.execute()
        except self._errors as error:
            raise SessionStoreError(f"session store {self.url}: {error}") from error

    def entries(self, session_id: str) -> list[Entry]:
        """Every entry of the session, in log order."""
        return [Entry.from_json(t) for t in self._client.lrange(self.PREFIX + session_id, 0, -1)]


def open_store(spec: str, *, ttl: float = DEFAULT_TTL) -> MemoryStore | SqliteStore | RedisStore:
    """A store from its spelling: `memory`, `sqlite:PATH` (or a path ending .db/.sqlite), `redis://...`."""
    if spec == "memory":
        return MemoryStore(ttl=ttl)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(spec, ttl=ttl)
    if spec.startswith("sqlite:"):
        return SqliteStore(spec.removeprefix("sqlite:"), ttl=ttl)
    if spec.endswith((".db", ".sqlite", ".sqlite3")):
        return SqliteStore(spec, ttl=ttl)
    raise SessionStoreError(f"unknown session store {spec!r}: write `memory`, `sqlite:PATH` or `redis://HOST:PORT/DB`")
