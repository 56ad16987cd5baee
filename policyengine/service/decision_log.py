"""Decision logs: every decision the service makes, in the audit format `policyengine dry-run` replays.

Two sinks behind one interface (`open_decision_log`): a JSON Lines file rotated by size, and a
SQLite database (WAL) with one indexed row per decision. Both redact credentials in a record's
arguments, result and reason before writing, and mark such a record `"redacted": true`: a
replay of it may then decide differently from the live call (the decision recorded is the live
one). docs/decision-logs.md describes the formats.

Neither sink raises from `write` or `write_many`: a log that cannot be written must not take the
decision service down. Failures are counted (`failures`, `last_error`) and said once on stderr.
`write_many` writes a batch at once (one locked write of many lines, one SQLite transaction): the
service's log writer (log_writer.py) commits its records in such groups. Several processes may
write one log (`serve --workers N`): JSON Lines batches are written under an exclusive `flock`
of the file, which rotation holds too; SQLite locks its own database.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO, TypeVar

from policyengine.arguments.redact import REDACTED
from policyengine.arguments.secret_reader import known_clean
from policyengine.arguments.secret_scanner import hide_secrets
from policyengine.enforce.evaluate import Evaluation
from policyengine.errors import UsageError
from policyengine.runtime.audit import printable
from policyengine.values.frozen import thaw

_T = TypeVar("_T")

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "SQLITE_SUFFIXES",
    "DecisionLog",
    "JsonLinesLog",
    "SqliteLog",
    "decision_record",
    "is_sqlite_target",
    "open_decision_log",
    "redact_record",
    "rotated_files",
    "sqlite_path",
]

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
SCHEMA_VERSION = 2
SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY,
    ts REAL,
    call_id TEXT,
    name TEXT,
    agent TEXT,
    decision TEXT,
    stage TEXT,
    rule TEXT,
    pack TEXT,
    digest TEXT,
    reason TEXT,
    record TEXT,
    session_id TEXT,
    labels TEXT
);
CREATE INDEX IF NOT EXISTS decisions_ts ON decisions (ts);
CREATE INDEX IF NOT EXISTS decisions_rule ON decisions (rule);
CREATE INDEX IF NOT EXISTS decisions_decision ON decisions (decision);
CREATE INDEX IF NOT EXISTS decisions_name ON decisions (name);
CREATE INDEX IF NOT EXISTS decisions_session ON decisions (session_id);
"""
"""The SQLite schema, version SCHEMA_VERSION (`PRAGMA user_version`); `record` is the whole JSON record.

Version 2 added `session_id` and `labels` (a JSON list); a version 1 log gains them when opened.
"""
# What version 1 lacked, added in place so an old log keeps its rows and stays readable.
_UPGRADE_1 = (
    "ALTER TABLE decisions ADD COLUMN session_id TEXT",
    "ALTER TABLE decisions ADD COLUMN labels TEXT",
)

# The fields scanned for credentials: what the agent sent, what the tool returned, and the
# reason, which a rule may have filled in from the arguments.
# `monitored`: a monitor hit's reason is a rule's template, which may quote the arguments.
_REDACTED_FIELDS = ("arguments", "result", "reason", "monitored")


class DecisionLog(Protocol):
    """A decision log sink: thread-safe; `write` never raises (see `failures` and `last_error`)."""

    failures: int
    written: int
    last_error: str | None

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one record (redacted first, if the sink redacts)."""

    def write_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Write records at once, in order (one write, one transaction); each that fails is counted."""

    def close(self) -> None:
        """Flush and close; later writes are counted as failures."""


def is_sqlite_target(target: str) -> bool:
    """True when `target` names a SQLite log: `sqlite:PATH`, or a path ending in .db, .sqlite or .sqlite3."""
    return target.startswith("sqlite:") or target.lower().endswith(SQLITE_SUFFIXES)


def sqlite_path(target: str) -> str:
    """The file path of a SQLite target (`sqlite:PATH` -> PATH)."""
    return target[len("sqlite:") :] if target.startswith("sqlite:") else target


def open_decision_log(
    target: str, *, max_bytes: int = 64 << 20, backups: int = 5, redact_secrets: bool = True
) -> DecisionLog:
    """The sink for `target`: SQLite for `sqlite:PATH` or a .db/.sqlite/.sqlite3 path, else rotating JSON Lines.

    Raises UsageError when the log cannot be opened (so a service refuses to start without it);
    `max_bytes` and `backups` apply to JSON Lines only.
    """
    if not target:
        raise UsageError("decision log: empty target", hint="give a FILE.jsonl, a FILE.db or sqlite:PATH")
    if is_sqlite_target(target):
        return SqliteLog(sqlite_path(target), redact_secrets=redact_secrets)
    return JsonLinesLog(target, max_bytes=max_bytes, backups=backups, redact_secrets=redact_secrets)


# -- records ---------------------------------------------------------------------------------------


def decision_record(
    evaluation: Evaluation,
    *,
    name: str,
    arguments: Mapping[str, Any] | None,
    call_id: str = "",
    agent: str = "agent",
    cwd: str | None = None,
    result: Mapping[str, Any] | None = None,
    timestamp: float | None = None,
    session_id: str | None = None,
    labels: list[str] | None = None,
    pack_digest: str | None = None,
) -> dict[str, Any]:
    """One audit-format record (runtime/audit.py's fields) of a decision, which `policyengine dry-run` replays.

    The result is recorded as post-execute left it (what policy hid never reaches the log), and
    only when post-execute judged it: `result` is accepted so a caller can pass what it has, but
    a result the policy did not see (the call was denied first) is not logged. A call of a session
    carries `session_id` and `labels`, the labels the session held once it was decided (null when
    the store could not say). A service's record carries `pack_digest`, the installation that decided.
    Every decision record is built here (the service's included).
    """
    source = evaluation.source
    record: dict[str, Any] = {
        "call_id": call_id,
        "name": name,
        "arguments": thaw(dict(arguments or {})),
        "agent": agent,
        "timestamp": time.time() if timestamp is None else timestamp,
        "decision": evaluation.decision.value,
        "stage": evaluation.stage.value if evaluation.stage else None,
        "rule": source.rule_id if source else None,
        "reason": evaluation.reason,
        "pack": source.pack if source else None,
        "digest": source.digest if source else None,
        "rewrites": [s.name for s in evaluation.rewrites],
    }
    if cwd is not None:
        record["cwd"] = cwd  # a dry-run resolves the replayed call's relative paths against it
    if evaluation.monitored:  # only then: a log of packs with no rule in monitor mode is as it was
        record["monitored"] = [hit.to_json() for hit in evaluation.monitored]
    if session_id:
        record["session_id"] = session_id
        record["labels"] = None if labels is None else list(labels)
    if evaluation.post is not None and result is not None:
        blocked = evaluation.post.value == "blocked"
        record["post"] = evaluation.post.value
        record["result"] = {
            "outcome": "blocked" if blocked else "ok",
            "value": None if blocked else thaw(evaluation.value),
            "content": thaw(evaluation.content),
        }
    if pack_digest is not None:
        record["pack_digest"] = pack_digest
    return _ScannedRecord(record) if arguments and known_clean(arguments) else record


class _ScannedRecord(dict[str, Any]):
    """A record whose arguments the decision's secret reader found nothing in: redaction need not scan them again.

    Only decision_record makes one, and only on content the reader found clean (secret_reader.known_clean);
    a copy is a plain dict again, and is scanned, and so are arguments put in the record afterwards.
    """

    __slots__ = ("clean",)

    def __init__(self, record: dict[str, Any]) -> None:
        super().__init__(record)
        self.clean = record["arguments"]  # the very object read clean: another one in its place is scanned


def redact_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy with every credential in arguments, result and reason replaced by [REDACTED], marked `redacted`."""
    hidden = 0

    def hide(_value: Any) -> str:
        nonlocal hidden
        hidden += 1
        return REDACTED

    out = dict(record)
    scanned = type(record) is _ScannedRecord and record.get("arguments") is record.clean
    for field in _REDACTED_FIELDS:
        if field not in out or (scanned and field == "arguments"):
            continue
        try:
            out[field] = hide_secrets(thaw(out[field]), hide)
        except (ValueError, RecursionError):
            # Too deep to scan: nothing unscanned reaches the log.
            out[field] = REDACTED
            hidden += 1
    if hidden:
        out["redacted"] = True
    return out


# Built once: json.dumps with options builds an encoder per call (~0.5 us of a ~5 us line).
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def _line(record: Mapping[str, Any]) -> bytes:
    """One JSON line, newline included; ASCII-escaped when the record holds text UTF-8 cannot carry."""
    try:
        text = _ENCODER.encode(record)
    except ValueError:
        # An integer too long for json to print must not hide a decision: write it as a string.
        text = _ENCODER.encode(printable(record))
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \ud800 escape in the call
        return (json.dumps(json.loads(text), ensure_ascii=True) + "\n").encode("ascii")


# -- the sinks -------------------------------------------------------------------------------------


class _Sink:
    """What both sinks share: a lock, redaction, failure counting and one stderr warning."""

    def __init__(self, where: str, redact_secrets: bool, stderr: TextIO | None = None) -> None:
        self.where = where
        self.redact_secrets = redact_secrets
        self.failures = 0
        self.written = 0
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._warned = False
        self._closed = False
        self._stderr = stderr
        self._sent = 0  # lines of the batch in progress already written

    def _prepare(self, record: Mapping[str, Any]) -> dict[str, Any]:
        return redact_record(record) if self.redact_secrets else dict(record)

    def _prepared(self, records: Sequence[Mapping[str, Any]], form: Callable[[dict[str, Any]], _T]) -> list[_T]:
        """Each record redacted and put in the sink's form; one that fails is counted and left out, not the batch."""
        out: list[_T] = []
        for record in records:
            try:
                out.append(form(self._prepare(record)))
            except Exception as error:
                with self._lock:
                    self._fail(error)
        return out

    def _fail(self, error: BaseException) -> None:
        self.failures += 1
        self.last_error = f"{type(error).__name__}: {error}"
        if not self._warned:
            # Once: a full disk would otherwise print a line per decision.
            self._warned = True
            with contextlib.suppress(Exception):
                print(
                    f"policyengine: cannot write the decision log {self.where}: {self.last_error}; "
                    "decisions go on unlogged (this is said once; check the path, its permissions and free space)",
                    file=self._stderr or sys.stderr,
                )


class JsonLinesLog(_Sink):
    """A JSON Lines decision log rotated by size: FILE, then FILE.1 (newest) ... FILE.N (oldest, dropped next).

    A batch of records is one `os.write` of whole lines on an O_APPEND descriptor, under the
    sink's lock and an exclusive `flock` of the file (several processes may share it); rotation
    happens between writes, under the same flock, so no line is split or lost. A process that
    finds the file rotated under it (its descriptor no longer FILE's) reopens FILE. The file is
    created 0600.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int = 64 << 20,
        backups: int = 5,
        redact_secrets: bool = True,
        stderr: TextIO | None = None,
    ) -> None:
        if max_bytes < 1:
            raise UsageError(f"decision log: max_bytes must be positive, got {max_bytes}")
        if backups < 0:
            raise UsageError(f"decision log: backups must be 0 or more, got {backups}")
        super().__init__(str(path), redact_secrets, stderr)
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.backups = backups
        self._fd: int | None = None
        self._torn = False  # the file may end mid-line
        try:
            self._open()
        except OSError as error:
            raise UsageError(
                f"cannot open the decision log {self.path}: {error.strerror or error}",
                hint="check that the folder exists and is writable",
            ) from None

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return self._fd

    def write(self, record: Mapping[str, Any]) -> None:
        """Append one record as one line, rotating first if it would take the file past max_bytes."""
        self.write_many((record,))

    def write_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Append records as lines, in order: as few writes as rotation allows, each of whole lines."""
        lines = self._prepared(records, _line)
        if not lines:
            return
        with self._lock:
            self._sent = 0
            try:
                if self._closed:
                    raise ValueError("the decision log is closed")
                fd = self._locked()
                try:
                    self._append(fd, lines)
                finally:
                    if self._fd is not None:
                        fcntl.flock(self._fd, fcntl.LOCK_UN)
            except Exception as error:
                # What a failed batch did not write is counted; what it wrote stays written.
                for _ in range(len(lines) - self._sent):
                    self._fail(error)
                self._drop()  # reopen on the next batch: the disk may recover

    def _locked(self) -> int:
        """The descriptor of FILE as it is now, under an exclusive flock (reopened if FILE was rotated)."""
        for _ in range(100):
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return fd
            # Another process rotated FILE while we waited: write to the new one.
            fcntl.flock(fd, fcntl.LOCK_UN)
            self._drop()
            self._torn = False
        raise OSError(f"{self.path} keeps changing under the decision log")

    def _append(self, fd: int, lines: list[bytes]) -> None:
        """Write the lines in as few writes as rotation allows (FILE is locked)."""
        size = os.fstat(fd).st_size
        start = 0
        while start < len(lines):
            # The lines that fit; a line bigger than max_bytes still goes in whole, alone in a fresh file.
            end, total = start, 0
            while end < len(lines) and (size + total + len(lines[end]) <= self.max_bytes or (size + total) == 0):
                total += len(lines[end])
                end += 1
            if end == start:
                fd = self._rotate(fd)
                size = os.fstat(fd).st_size  # others may have written to the new FILE already
                continue
            data = b"".join(lines[start:end])
            if self._torn:
                # A failed write left part of a line: start on a line of our own, so the torn
                # record is lost alone and every later record stays readable.
                data = b"\n" + data
            view = memoryview(data)
            while view:
                count = os.write(fd, view)
                size += count
                self._torn = True
                view = view[count:]
            self._torn = False
            self.written += end - start
            self._sent += end - start
            start = end

    def _rotate(self, fd: int) -> int:
        """FILE.N-1 -> FILE.N ... FILE -> FILE.1 (FILE.N dropped); with no backups, FILE starts over.

        Runs holding FILE's flock, and returns the new FILE's descriptor, locked.
        """
        self._torn = False  # the next line starts a new file
        if self.backups == 0:
            os.truncate(self.path, 0)
            return fd
        for n in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{n}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{n + 1}"))
        with contextlib.suppress(FileNotFoundError):  # removed by someone else: nothing to keep
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        # Unlocking the old file lets a process waiting on it in, to find FILE changed and reopen. The new
        # FILE is checked like any other: another process may have filled and rotated it before we lock it.
        fcntl.flock(fd, fcntl.LOCK_UN)
        self._drop()
        return self._locked()

    def _drop(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        """Close the file; later writes count as failures."""
        with self._lock:
            self._closed = True
            self._drop()


class SqliteLog(_Sink):
    """A SQLite decision log: one row per decision in `decisions` (see SCHEMA), WAL mode, one locked connection."""

    def __init__(self, path: str | Path, *, redact_secrets: bool = True, stderr: TextIO | None = None) -> None:
        super().__init__(str(path), redact_secrets, stderr)
        self.path = Path(path)
        try:
            # Created 0600 before SQLite sees it: the journal files take the database's permissions.
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
            self._db: sqlite3.Connection | None = _connect(self.path)
        except (OSError, sqlite3.Error) as error:
            raise UsageError(
                f"cannot open the decision log {self.path}: {_why(error)}",
                hint="check that the folder exists and is writable, and that the file is a SQLite database",
            ) from None

    def write(self, record: Mapping[str, Any]) -> None:
        """Insert one record as one row (the whole record in `record`)."""
        self.write_many((record,))

    def write_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Insert records as rows, in order, in one transaction."""
        rows = self._prepared(records, _row)
        if not rows:
            return
        with self._lock:
            try:
                if self._db is None:
                    raise ValueError("the decision log is closed")
                with self._db:
                    self._db.executemany(
                        "INSERT INTO decisions (ts, call_id, name, agent, decision, stage, rule, pack, digest, reason,"
                        " record, session_id, labels) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        rows,
                    )
                self.written += len(rows)
            except Exception as error:
                for _ in rows:  # the transaction rolled back: none of them is written
                    self._fail(error)

    def close(self) -> None:
        """Close the connection; later writes count as failures."""
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None


def _row(prepared: Mapping[str, Any]) -> tuple[Any, ...]:
    """A prepared record as a row of `decisions`."""
    return (
        _number(prepared.get("timestamp")),
        *(_text(prepared.get(k)) for k in ("call_id", "name", "agent", "decision", "stage", "rule", "pack")),
        _text(prepared.get("digest")),
        _text(prepared.get("reason")),
        _line(prepared).decode("utf-8", "surrogatepass").rstrip("\n"),
        _text(prepared.get("session_id")),
        None if prepared.get("labels") is None else json.dumps(prepared["labels"]),
    )


def _connect(path: Path) -> sqlite3.Connection:
    """A connection to a decision log with the schema in place (created if missing, refused if newer)."""
    # Server threads share the connection; the sink's lock serialises them.
    db = sqlite3.connect(path, check_same_thread=False, timeout=5.0)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"schema version {version} is newer than this policyengine's ({SCHEMA_VERSION}); upgrade policyengine"
            )
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across a crash of the process, fast
        with db:
            if version == 1:
                for statement in _UPGRADE_1:
                    db.execute(statement)
            db.executescript(SCHEMA)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.close()
        raise
    return db


def _why(error: BaseException) -> str:
    return str(error.strerror or error) if isinstance(error, OSError) else str(error)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def rotated_files(path: str | Path) -> list[Path]:
    """A JSON Lines log and its rotated files that exist, oldest first (FILE.N ... FILE.1, FILE)."""
    path = Path(path)
    older: list[tuple[int, Path]] = []
    if path.parent.is_dir():
        prefix = path.name + "."
        for candidate in path.parent.iterdir():
            suffix = candidate.name[len(prefix) :]
            if candidate.name.startswith(prefix) and suffix.isdigit() and candidate.is_file():
                older.append((int(suffix), candidate))
    files = [p for _, p in sorted(older, reverse=True)]
    if path.is_file():
        files.append(path)
    return files
