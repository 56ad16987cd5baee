"""The logs verb: query a decision log (SQLite, or JSON Lines and its rotated files) by rule, decision, tool, time."""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from policyengine.cli.common import EXIT_OK
from policyengine.cli.report import table
from policyengine.errors import UsageError

NAME = "logs"
HELP = "query a decision log (SQLite or JSON Lines) by rule, decision, tool and time"
DECISIONS = ("allow", "deny", "ask", "invalid", "error")
_RELATIVE = re.compile(r"(\d+)\s*([smhdw])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SQLITE_MAGIC = b"SQLite format 3\x00"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The logs verb's options."""
    parser.add_argument(
        "target",
        metavar="TARGET",
        help="the decision log: FILE.jsonl (rotated FILE.1... read too), FILE.db, sqlite:PATH",
    )
    parser.add_argument("--rule", metavar="ID", help="only decisions by this rule")
    parser.add_argument("--decision", choices=DECISIONS, help="only this decision")
    parser.add_argument("--tool", metavar="NAME", help="only calls of this tool")
    parser.add_argument(
        "--since", metavar="TIME", help="from TIME: ISO 8601 (UTC unless it says) or relative: 15m, 2h, 1d"
    )
    parser.add_argument("--until", metavar="TIME", help="up to TIME (same forms as --since)")
    parser.add_argument("--limit", type=int, metavar="N", help="the N most recent matches (still printed oldest first)")
    parser.add_argument(
        "--format",
        choices=["table", "jsonl"],
        default="table",
        help="a table for people, or the records as JSON Lines that `policyengine dry-run` replays",
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """Print the matching records, oldest first."""
    now = time.time()
    query = Query(
        rule=args.rule,
        decision=args.decision,
        tool=args.tool,
        since=parse_time(args.since, now, "--since") if args.since else None,
        until=parse_time(args.until, now, "--until") if args.until else None,
        limit=args.limit,
    )
    if query.limit is not None and query.limit < 0:
        raise UsageError(f"--limit must be 0 or more, got {query.limit}")
    if query.since is not None and query.until is not None and query.since > query.until:
        raise UsageError(f"--since {args.since} is after --until {args.until}", hint="swap them")
    records = read_log(args.target, query, err)
    if args.format == "jsonl":
        for record in records:
            print(json.dumps(record, ensure_ascii=False, default=str), file=out)
    else:
        from policyengine.cli.monitor_hits import count_hits, hits_table

        rows = [_row(r) for r in records]
        print(table(rows, ["time (UTC)", "decision", "tool", "rule", "agent", "reason"], color), file=out)
        print(f"{len(rows):,} decisions", file=out)
        monitored = count_hits(records)
        if monitored:  # rules in monitor mode: what they would have done to these calls
            print("\n" + hits_table(monitored, color), file=out)
    return EXIT_OK


class Query:
    """The filters of one `logs` run; a None filter matches everything."""

    def __init__(
        self,
        *,
        rule: str | None = None,
        decision: str | None = None,
        tool: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int | None = None,
    ) -> None:
        self.rule, self.decision, self.tool = rule, decision, tool
        self.since, self.until, self.limit = since, until, limit

    def matches(self, record: Mapping[str, Any]) -> bool:
        """True when a JSON Lines record passes every filter."""
        if self.rule is not None and record.get("rule") != self.rule:
            return False
        if self.decision is not None and record.get("decision") != self.decision:
            return False
        if self.tool is not None and record.get("name") != self.tool:
            return False
        if self.since is not None or self.until is not None:
            ts = record.get("timestamp")
            if not isinstance(ts, int | float) or isinstance(ts, bool):
                return False
            if (self.since is not None and ts < self.since) or (self.until is not None and ts > self.until):
                return False
        return True


def parse_time(text: str, now: float, option: str) -> float:
    """Seconds since the epoch for ISO 8601 (UTC unless it has an offset) or `15m`/`2h`/`1d` ago."""
    relative = _RELATIVE.fullmatch(text.strip())
    if relative:
        return now - int(relative.group(1)) * _SECONDS[relative.group(2)]
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"{option} {text!r}: not a time",
            hint="use ISO 8601 (2026-01-31T12:00:00Z, 2026-01-31) or a relative time (30s, 15m, 2h, 1d, 1w)",
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def read_log(target: str, query: Query, err: TextIO) -> list[dict[str, Any]]:
    """The records of a decision log that match `query`, oldest first (the newest `limit` of them)."""
    from policyengine.service.decision_log import is_sqlite_target, rotated_files, sqlite_path

    if is_sqlite_target(target) or _looks_sqlite(Path(target)):
        return _read_sqlite(Path(sqlite_path(target)), query)
    files = rotated_files(target)
    if not files:
        raise UsageError(
            f"no decision log at {target} (nor rotated {target}.1...)",
            hint="give the decision log the service writes: FILE.jsonl, FILE.db or sqlite:PATH",
        )
    matches = [r for r in _read_jsonl(files, err) if query.matches(r)]
    if query.limit is not None:
        # max(): with fewer matches than the limit, a negative start would cut from the end.
        matches = matches[max(0, len(matches) - query.limit) :] if query.limit else []
    return matches


def _looks_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def _read_jsonl(files: list[Path], err: TextIO) -> Iterator[dict[str, Any]]:
    bad = 0
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as error:
            raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
        for raw in data.splitlines():
            if not raw.strip():
                continue
            record = _parse(raw)
            if record is not None:
                yield record
            else:
                bad += 1
    if bad:
        # A torn line (a crash mid-write) must not hide the rest of the log.
        print(f"warning: skipped {bad:,} lines that are not JSON records", file=err)


def _read_sqlite(path: Path, query: Query) -> list[dict[str, Any]]:
    import sqlite3  # here: every verb's module loads when the parser is built

    from policyengine.service.decision_log import SCHEMA_VERSION

    if not path.is_file():
        raise UsageError(
            f"no decision log at {path}", hint="give the decision log the service writes: FILE.db or sqlite:PATH"
        )
    clauses, params = _where(query)
    sql = "SELECT record FROM decisions" + (" WHERE " + " AND ".join(clauses) if clauses else "")
    sql += " ORDER BY ts DESC, id DESC" if query.limit is not None else " ORDER BY ts, id"
    if query.limit is not None:
        sql += " LIMIT ?"
        params.append(query.limit)
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise UsageError(f"cannot open the decision log {path}: {error}") from None
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise UsageError(
                f"{path}: decision log schema version {version} is newer than this policyengine's ({SCHEMA_VERSION})",
                hint="upgrade policyengine",
            )
        rows = db.execute(sql, params).fetchall()
    except sqlite3.Error as error:
        raise UsageError(
            f"{path} is not a policyengine decision log: {error}",
            hint="give a database a decision service wrote (open_decision_log), or a JSON Lines log",
        ) from None
    finally:
        db.close()
    records = [record for record in map(_parse, (text for (text,) in rows)) if record is not None]
    return records[::-1] if query.limit is not None else records


def _parse(raw: str | bytes | None) -> dict[str, Any] | None:
    """A record from one line or row; None when it is not a JSON object."""
    try:
        record = json.loads(raw) if raw else None
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _where(query: Query) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (("rule", query.rule), ("decision", query.decision), ("name", query.tool)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if query.since is not None:
        clauses.append("ts >= ?")
        params.append(query.since)
    if query.until is not None:
        clauses.append("ts <= ?")
        params.append(query.until)
    return clauses, params


def _row(record: Mapping[str, Any]) -> list[str]:
    ts = record.get("timestamp")
    when = (
        datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S")
        if isinstance(ts, int | float) and not isinstance(ts, bool)
        else "?"
    )
    reason = str(record.get("reason") or "").replace("\n", " ")
    return [
        when,
        str(record.get("decision") or ""),
        str(record.get("name") or ""),
        str(record.get("rule") or ""),
        str(record.get("agent") or ""),
        reason[:80] + ("..." if len(reason) > 80 else ""),
    ]
