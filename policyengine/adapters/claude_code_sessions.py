"""The hook's sessions: where they live, opened only for packs that have session rules, one decision at a time.

Claude Code runs the hook once per event, in a fresh process (or the warm helper answers), so a
session's log cannot live in memory: by default it is one SQLite file under the cache folder,
`<cache>/sessions.sqlite3` (0600, WAL), which every hook process and the helper open, so state
survives helper restarts and two processes of one session see each other's entries. `--sessions
SPEC` (or `$POLICYENGINE_HOOK_SESSIONS`) names another store (`sqlite:PATH`, `redis://...`).

The store is opened on the first call that carries a session id, never for a pack set without
session rules. A session's decisions are taken one at a time across processes (a lock byte per
session in `<store>.lock`), so parallel tool calls of one session are decided in arrival order
and counters stay exact. Every failure is a `SessionStoreError` naming the store: the hook then
denies (PreToolUse) or withholds the output (PostToolUse).
"""

from __future__ import annotations

import contextlib
import os
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from policyengine.errors import SessionStoreError

if TYPE_CHECKING:
    from policyengine.packs.loader import Pack
    from policyengine.runtime.session_steps import HasSessions, Sessions
    from policyengine.values.session import Entry, SessionState, SessionStore

FILE = "sessions.sqlite3"
# A session busy this long (another process deciding in it, stuck) denies the call: under the helper's
# REPLY_SECONDS (cli/hook.py), so the helper answers before its client gives up and decides again.
LOCK_SECONDS = 5.0
_LOCK_SLOTS = 1 << 20  # lock bytes: two sessions share one with a chance of one in a million


def default_spec(cache: Path | None) -> str | None:
    """The default store: sessions.sqlite3 in the cache folder; None when the cache folder is turned off."""
    return None if cache is None else f"sqlite:{cache / FILE}"


def session_rules(packs: Sequence[Pack]) -> tuple[Any, ...]:
    """Each pack's session rules (enforce/session_rules.py), for the packs that have any."""
    if not any(_may_have_sessions(p) for p in packs):
        return ()  # not even the session modules are imported: a pack without session rules costs what it did
    from policyengine.enforce.session_rules import PackSessionRules

    return tuple(r for r in (PackSessionRules.of(p) for p in packs) if r is not None)


def _may_have_sessions(pack: Pack) -> bool:
    """Whether a rule of the pack labels, or names `session` anywhere (what PackSessionRules.of then decides)."""
    for rule in pack.rules:
        if rule.labels:
            return True
        for part in (rule.when, rule.reason, rule.content, rule.block):
            if part is not None and "session" in (getattr(part, "text", "") or ""):
                return True
    return False


class LazyStore:
    """A session store opened on first use (and again after a failure), with a per-session lock for deciding."""

    def __init__(self, spec: str | None) -> None:
        self.spec = spec
        self._store: SessionStore | None = None
        self._inode: int | None = None  # of the SQLite file this store opened

    @property
    def where(self) -> str:
        """The store's spelling in messages: its file, or its URL."""
        return self.spec.removeprefix("sqlite:") if self.spec is not None else "(none)"

    def _opened(self) -> SessionStore:
        if self._store is not None and self._inode is not None and self._inode != _inode(self.where):
            # The file was removed or replaced (sessions cleared by hand): the helper follows, as every process does.
            with contextlib.suppress(Exception):
                getattr(self._store, "close", lambda: None)()
            self._store = None
        if self._store is None:
            if self.spec is None:
                raise SessionStoreError(
                    "no session store: the cache folder is turned off (POLICYENGINE_CACHE=off) and no --sessions "
                    "was given; give the hook --sessions sqlite:PATH or set POLICYENGINE_HOOK_SESSIONS"
                )
            from policyengine.sessions.stores import open_store

            try:
                store = open_store(self.spec)
            except SessionStoreError as error:
                raise SessionStoreError(f"{error.message}; check that the folder exists and is writable") from error
            self._store = cast("SessionStore", store)
            self._inode = _inode(self.where) if self.spec.startswith("sqlite:") else None
        return self._store

    @property
    def key(self) -> bytes:
        """The store's fingerprint key (opens the store)."""
        return self._opened().key

    def load(self, session_id: str) -> SessionState:
        """The session folded so far."""
        return self._opened().load(session_id)

    def append(self, session_id: str, entry: Entry) -> None:
        """One more entry in the session's log."""
        self._opened().append(session_id, entry)

    @contextlib.contextmanager
    def turn(self, session_id: str | None) -> Iterator[None]:
        """Hold the session's lock while a call is decided in it (load, decide, write); nothing without an id."""
        if not session_id or self.spec is None or not self.spec.startswith("sqlite:"):
            yield  # no id: nothing is read or written. Redis: no local file to lock (documented)
            return
        try:
            import fcntl
        except ImportError:  # Windows: no helper, no parallel decisions to order
            yield
            return
        lock = self.where + ".lock"
        slot = zlib.crc32(session_id.encode("utf-8", "surrogatepass")) % _LOCK_SLOTS
        try:
            Path(lock).parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as error:
            raise SessionStoreError(
                f"session store {self.where}: cannot open its lock {lock}: {error.strerror or error}; "
                "check that the folder exists and is writable"
            ) from None
        try:
            deadline = time.monotonic() + LOCK_SECONDS
            while True:
                try:
                    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SessionStoreError(
                            f"session store {self.where}: the session is busy (another call held its lock for "
                            f"{LOCK_SECONDS:g} s)"
                        ) from None
                    time.sleep(0.002)
            yield
        finally:
            os.close(fd)  # releases the lock


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class HookSessions:
    """The packs' session rules and their (lazily opened) store, as the runtime's session steps take them."""

    sessions: Sessions
    store: LazyStore

    @classmethod
    def of(cls, packs: Sequence[Pack], store: LazyStore) -> HookSessions | None:
        """The sessions of these packs; None when no pack has session rules (the store is then never touched)."""
        rules = session_rules(packs)
        if not rules:
            return None
        from policyengine.runtime.session_steps import Sessions

        return cls(Sessions(rules, store), store)

    @property
    def installation(self) -> HasSessions:
        """What the session steps read of an installation (its `sessions`): the hook decides without a registry."""
        return self
