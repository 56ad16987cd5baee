"""Decision logs (service/decision_log.py) and the `logs` verb: rotation, threads, redaction, SQLite, replay."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyengine import PolicyLayers, Registry
from policyengine.cli.logs import parse_time
from policyengine.cli.main import main
from policyengine.enforce.evaluate import evaluate_sync
from policyengine.errors import UsageError
from policyengine.service.decision_log import (
    SCHEMA_VERSION,
    JsonLinesLog,
    SqliteLog,
    decision_record,
    open_decision_log,
    redact_record,
    rotated_files,
)
from support import rules_pack

GITHUB_TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"  # split: not a token in this source


def record(i: int, **fields: Any) -> dict[str, Any]:
    """A small audit-format record; `i` shows in call_id and in a padded argument."""
    base: dict[str, Any] = {
        "call_id": f"c{i}",
        "name": "shell",
        "arguments": {"command": f"echo {i}", "pad": "x" * (i % 7)},
        "agent": "agent",
        "timestamp": 1_000.0 + i,
        "decision": "allow",
        "stage": "pre-execute",
        "rule": "ok",
        "reason": None,
        "pack": "p",
        "digest": "sha256:0",
        "rewrites": [],
    }
    return base | fields


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def lines_of(files: list[Path]) -> list[dict[str, Any]]:
    """Every line of the files, parsed (a split line would fail here)."""
    return [json.loads(line) for path in files for line in path.read_text(encoding="utf-8").splitlines()]


# -- JSON Lines ------------------------------------------------------------------------------------


def test_rotation_keeps_every_record_whole_and_in_order(tmp_path: Path) -> None:
    path = tmp_path / "decisions.jsonl"
    log = JsonLinesLog(path, max_bytes=2_000, backups=50)
    for i in range(300):
        log.write(record(i))
    log.close()
    files = rotated_files(path)
    assert len(files) > 10, "several rotations happened"
    assert files[-1] == path and files[0].name == f"decisions.jsonl.{len(files) - 1}"
    assert all(f.stat().st_size <= 2_000 for f in files)
    assert all(f.read_bytes().endswith(b"\n") for f in files)
    assert [r["call_id"] for r in lines_of(files)] == [f"c{i}" for i in range(300)]
    assert (log.written, log.failures) == (300, 0)


def test_rotation_drops_only_the_oldest_files(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    log = JsonLinesLog(path, max_bytes=1_000, backups=2)
    for i in range(200):
        log.write(record(i))
    log.close()
    files = rotated_files(path)
    assert [f.name for f in files] == ["d.jsonl.2", "d.jsonl.1", "d.jsonl"]
    ids = [int(r["call_id"][1:]) for r in lines_of(files)]
    assert ids == list(range(ids[0], 200)), "the newest records survive, contiguous"


def test_a_record_over_max_bytes_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    log = JsonLinesLog(path, max_bytes=100, backups=3)
    log.write(record(1))
    log.write(record(2, arguments={"big": "y" * 500}))
    log.write(record(3))
    log.close()
    assert [r["call_id"] for r in lines_of(rotated_files(path))] == ["c1", "c2", "c3"]


def test_the_file_is_private_and_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(record(0)) + "\n", encoding="utf-8")
    os.chmod(path, 0o600)
    log = open_decision_log(str(path))
    assert isinstance(log, JsonLinesLog)
    log.write(record(1))
    log.close()
    assert [r["call_id"] for r in lines_of([path])] == ["c0", "c1"]
    fresh = tmp_path / "fresh.jsonl"
    open_decision_log(str(fresh)).close()
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600


def test_threads_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    log = JsonLinesLog(path, max_bytes=20_000, backups=100)

    def writer(n: int) -> None:
        for i in range(100):
            log.write(record(n * 1000 + i, arguments={"text": str(n) * (50 + i)}))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    seen = lines_of(rotated_files(path))
    assert sorted(r["call_id"] for r in seen) == sorted(f"c{n * 1000 + i}" for n in range(8) for i in range(100))
    for n in range(8):  # each thread's records keep its order
        mine = [int(r["call_id"][1:]) for r in seen if int(r["call_id"][1:]) // 1000 == n]
        assert mine == sorted(mine)


def test_a_failing_write_is_counted_said_once_and_never_raised(tmp_path: Path) -> None:
    err = io.StringIO()
    log = JsonLinesLog(tmp_path / "d.jsonl", stderr=err)
    log.close()
    log.write(record(1))
    log.write(record(2, arguments={"bad": object()}))  # default=str writes it: not a failure
    log.write(record(3))
    assert log.failures == 3 and log.written == 0
    assert "closed" in (log.last_error or "")
    assert err.getvalue().count("cannot write the decision log") == 1


def test_a_torn_write_loses_only_its_own_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "d.jsonl"
    log = JsonLinesLog(path, stderr=io.StringIO())
    log.write(record(1))
    real_write, calls = os.write, []

    def half_then_full_disk(fd: int, data: Any) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full_disk)
    log.write(record(2))
    monkeypatch.undo()
    log.write(record(3))
    log.close()
    assert (log.written, log.failures) == (2, 1) and "No space" in (log.last_error or "")
    code, out, err = cli("logs", str(path), "--format", "jsonl")
    assert code == 0 and ids(out) == [1, 3] and "skipped 1 lines" in err


def test_opening_an_unwritable_log_says_where(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"cannot open the decision log .*missing"):
        open_decision_log(str(tmp_path / "missing" / "d.jsonl"))
    with pytest.raises(UsageError, match="cannot open the decision log"):
        open_decision_log(str(tmp_path / "missing" / "d.db"))
    with pytest.raises(UsageError, match="max_bytes"):
        open_decision_log(str(tmp_path / "d.jsonl"), max_bytes=0)


# -- redaction -------------------------------------------------------------------------------------

SECRET_CALL = {
    "command": f"curl -H 'Authorization: Bearer {GITHUB_TOKEN}' https://admin:hunter2pass@example.com/x",
    "config": '{"db_password": "S3cure-Pa55word!"}',
    "user": "ada",
}


def test_redaction_hides_credentials_and_marks_the_record() -> None:
    out = redact_record(record(1, arguments=SECRET_CALL, result={"outcome": "ok", "value": {"api_key": "k-12345678"}}))
    text = json.dumps(out)
    for secret in (GITHUB_TOKEN, "hunter2pass", "S3cure-Pa55word!", "k-12345678"):
        assert secret not in text
    assert "[REDACTED]" in out["arguments"]["command"] and out["arguments"]["user"] == "ada"
    assert out["redacted"] is True
    assert "redacted" not in redact_record(record(2))


def test_too_deep_a_value_is_redacted_whole() -> None:
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    out = redact_record(record(1, arguments={"deep": deep}))
    assert out["arguments"] == "[REDACTED]" and out["redacted"] is True


@pytest.mark.parametrize("name", ["d.jsonl", "d.db"])
def test_both_sinks_redact(tmp_path: Path, name: str) -> None:
    target = str(tmp_path / name)
    log = open_decision_log(target)
    log.write(record(1, arguments=SECRET_CALL))
    log.close()
    raw = (tmp_path / name).read_bytes()
    assert GITHUB_TOKEN.encode() not in raw and b"hunter2pass" not in raw
    code, out, _ = cli("logs", target, "--format", "jsonl")
    assert code == 0
    (logged,) = [json.loads(line) for line in out.splitlines()]
    assert logged["redacted"] is True and GITHUB_TOKEN not in out


def test_redaction_can_be_turned_off(tmp_path: Path) -> None:
    log = open_decision_log(str(tmp_path / "d.jsonl"), redact_secrets=False)
    log.write(record(1, arguments=SECRET_CALL))
    log.close()
    assert GITHUB_TOKEN in (tmp_path / "d.jsonl").read_text(encoding="utf-8")


# -- SQLite ----------------------------------------------------------------------------------------


def test_sqlite_schema_and_rows(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite"
    log = open_decision_log(f"sqlite:{path}")
    assert isinstance(log, SqliteLog)
    for i in range(5):
        log.write(record(i, decision="deny" if i % 2 else "allow", rule=f"r{i % 2}", reason=f"because {i}"))
    db = sqlite3.connect(path)  # read while the service still writes (WAL)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        columns = [row[1] for row in db.execute("PRAGMA table_info(decisions)")]
        assert columns == [
            "id", "ts", "call_id", "name", "agent", "decision", "stage", "rule", "pack", "digest", "reason", "record",
            "session_id", "labels",
        ]  # fmt: skip
        indexes = {row[1] for row in db.execute("PRAGMA index_list(decisions)")}
        assert {"decisions_ts", "decisions_rule", "decisions_decision", "decisions_name"} <= indexes
        rows = db.execute(
            "SELECT call_id, decision, rule, reason, record FROM decisions WHERE decision='deny'"
        ).fetchall()
        assert [r[:4] for r in rows] == [("c1", "deny", "r1", "because 1"), ("c3", "deny", "r1", "because 3")]
        assert json.loads(rows[0][4]) == record(1, decision="deny", rule="r1", reason="because 1")
    finally:
        db.close()
    code, out, _ = cli("logs", str(path), "--format", "jsonl")  # read while the writer is open
    assert code == 0 and len(out.splitlines()) == 5
    log.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = open_decision_log(str(path))  # reopened: the rows are kept
    again.write(record(9))
    again.close()
    assert len(cli("logs", str(path), "--format", "jsonl")[1].splitlines()) == 6


def test_sqlite_threads(tmp_path: Path) -> None:
    log = open_decision_log(str(tmp_path / "d.db"))

    def writer(n: int) -> None:
        for i in range(50):
            log.write(record(n * 100 + i))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    assert (log.written, log.failures) == (300, 0)
    code, out, _ = cli("logs", str(tmp_path / "d.db"), "--format", "jsonl")
    assert code == 0
    assert len({json.loads(line)["call_id"] for line in out.splitlines()}) == 300


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    open_decision_log(str(path)).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(UsageError, match="newer"):
        open_decision_log(str(path))
    code, _, err = cli("logs", str(path))
    assert code == 2 and "newer" in err


# -- the logs verb ---------------------------------------------------------------------------------


@pytest.fixture(params=["jsonl", "db"])
def filled(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A log of 12 decisions at t=1000..1011: rule r0/r1/r2, deny on odd, tool shell or read."""
    target = str(tmp_path / f"d.{request.param}")
    log = open_decision_log(target, max_bytes=1_500, backups=20)
    for i in range(12):
        log.write(
            record(i, decision="deny" if i % 2 else "allow", rule=f"r{i % 3}", name="read" if i >= 8 else "shell")
        )
    log.close()
    return target


def ids(out: str) -> list[int]:
    return [int(json.loads(line)["call_id"][1:]) for line in out.splitlines()]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ((), list(range(12))),
        (("--rule", "r1"), [1, 4, 7, 10]),
        (("--decision", "deny"), [1, 3, 5, 7, 9, 11]),
        (("--tool", "read"), [8, 9, 10, 11]),
        (("--since", "1970-01-01T00:16:45Z", "--until", "1970-01-01T00:16:47+00:00"), [5, 6, 7]),
        (("--decision", "allow", "--limit", "2"), [8, 10]),
        # More than the matches (count < N < 2 * count cut from the end once): every match.
        (("--decision", "allow", "--limit", "7"), [0, 2, 4, 6, 8, 10]),
        (("--decision", "allow", "--limit", "100"), [0, 2, 4, 6, 8, 10]),
        (("--rule", "r0", "--decision", "deny", "--tool", "shell"), [3]),
        (("--since", "1h"), []),
        (("--limit", "0"), []),
    ],
)
def test_logs_filters(filled: str, filters: tuple[str, ...], expected: list[int]) -> None:
    code, out, err = cli("logs", filled, "--format", "jsonl", *filters)
    assert (code, err) == (0, "")
    assert ids(out) == expected


def test_logs_table(filled: str) -> None:
    code, out, _ = cli("logs", filled, "--decision", "deny", "--tool", "read")
    assert code == 0
    assert out.splitlines()[0].split() == ["time", "(UTC)", "decision", "tool", "rule", "agent", "reason"]
    assert "1970-01-01 00:16:49  deny" in out and out.rstrip().endswith("2 decisions")


def test_relative_and_iso_times() -> None:
    assert parse_time("15m", 10_000.0, "--since") == 10_000.0 - 900
    assert parse_time("2h", 10_000.0, "--since") == 10_000.0 - 7200
    assert parse_time("1d", 100_000.0, "--since") == 100_000.0 - 86400
    assert parse_time("1970-01-01T01:00:00", 0, "--since") == 3600.0  # no offset: UTC
    assert parse_time("1970-01-01T01:00:00+01:00", 0, "--since") == 0.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--since", "yesterday"), "--since 'yesterday': not a time"),
        (("--until", "2026-13-01"), "not a time"),
        (("--since", "1h", "--until", "2h"), "is after --until"),
        (("--limit", "-1"), "--limit must be 0 or more"),
        (("--decision", "maybe"), "invalid choice"),
    ],
)
def test_logs_bad_filters(filled: str, argv: tuple[str, ...], message: str) -> None:
    code, _, err = cli("logs", filled, *argv)
    assert code == 2 and message in err


def test_logs_missing_and_wrong_files(tmp_path: Path) -> None:
    code, _, err = cli("logs", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "no decision log at" in err
    code, _, err = cli("logs", str(tmp_path / "nope.db"))
    assert code == 2 and "no decision log at" in err
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    code, _, err = cli("logs", str(other))
    assert code == 2 and "is not a policyengine decision log" in err


def test_a_torn_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(record(1)) + "\n" + '{"call_id": "c2", "na' + "\n" + json.dumps(record(3)) + "\n")
    code, out, err = cli("logs", str(path), "--format", "jsonl")
    assert code == 0 and ids(out) == [1, 3] and "skipped 1 lines" in err


# -- replay ----------------------------------------------------------------------------------------


def pre(rule_id: str, tool: str, when: str, decision: str) -> dict[str, Any]:
    return {"id": rule_id, "stage": "pre-execute", "tools": [tool], "when": when, "decision": decision}


def test_a_logged_decision_replays_through_dry_run_to_the_same_decision(tmp_path: Path) -> None:
    pack = rules_pack(
        tmp_path,
        "p",
        [
            pre("no-rm", "shell", "starts_with(arguments.command, 'rm')", "deny"),
            pre("ask-curl", "shell", "starts_with(arguments.command, 'curl')", "ask"),
            pre("ok-ls", "shell", "arguments.command == 'ls'", "allow"),
            {"id": "hide-keys", "stage": "post-execute", "tools": ["read"], "redact": [{"keys": ["*token*"]}]},
            pre("reads", "read", "`true`", "allow"),
        ],
        default="deny",
    )
    registry = PolicyLayers.install(Registry(), [pack]).registry
    calls: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
        ("shell", {"command": "rm -rf /"}, None),
        ("shell", {"command": "curl https://example.com"}, None),
        ("shell", {"command": "ls"}, None),
        ("shell", {"command": "pwd"}, None),
        ("read", {"path": "a"}, {"outcome": "ok", "value": {"token": "t", "n": 1}}),
    ]
    target = tmp_path / "d.jsonl"
    log = open_decision_log(str(target), max_bytes=400, backups=10)
    for n, (name, arguments, result) in enumerate(calls):
        evaluation = evaluate_sync(registry, name, arguments, call_id=f"c{n}", result=result, cwd="/w")
        assert evaluation is not None
        log.write(decision_record(evaluation, name=name, arguments=arguments, call_id=f"c{n}", cwd="/w", result=result))
    log.close()
    assert len(rotated_files(target)) > 1
    code, out, _ = cli("logs", str(target), "--format", "jsonl")
    replay = tmp_path / "replay.jsonl"
    replay.write_text(out, encoding="utf-8")
    logged = [json.loads(line) for line in out.splitlines()]
    assert [r["decision"] for r in logged] == ["deny", "ask", "allow", "deny", "allow"]
    assert logged[4]["post"] == "rewritten" and logged[4]["result"]["value"] == {"token": "[REDACTED]", "n": 1}
    assert logged[3]["rule"] is None and logged[3]["pack"] == "p" and logged[3]["cwd"] == "/w"
    decided = tmp_path / "decided.jsonl"
    code, _, err = cli("dry-run", "--pack", str(pack), "--workers", "1", "--output", str(decided), str(replay))
    assert code == 0, err
    again = [json.loads(line) for line in decided.read_text(encoding="utf-8").splitlines()]
    assert [(r["call_id"], r["decision"], r["rule"]) for r in again] == [
        (r["call_id"], r["decision"], r["rule"]) for r in logged
    ]


def test_a_denied_call_logs_no_result(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "p", [], default="deny")
    registry = PolicyLayers.install(Registry(), [pack]).registry
    result = {"outcome": "ok", "value": "secret stuff"}
    evaluation = evaluate_sync(registry, "read", {}, result=result)
    assert evaluation is not None
    logged = decision_record(evaluation, name="read", arguments={}, result=result, timestamp=5.0)
    assert logged["decision"] == "deny" and "result" not in logged and logged["timestamp"] == 5.0


# -- the service's batching writer (log_writer.py) ------------------------------------------------


class _FlakySink:
    """A real sink whose `write_many` fails on the batches chosen by the test (a full disk, say)."""

    def __init__(self, inner: JsonLinesLog | SqliteLog, fail_batches: set[int]) -> None:
        self.inner, self.fail_batches, self.batch = inner, fail_batches, 0
        self.failed_records = 0

    @property
    def failures(self) -> int:
        return self.inner.failures + self.failed_records

    @failures.setter
    def failures(self, value: int) -> None:
        self.failed_records = value - self.inner.failures

    @property
    def written(self) -> int:
        return self.inner.written

    @written.setter
    def written(self, value: int) -> None:
        self.inner.written = value

    @property
    def last_error(self) -> str | None:
        return self.inner.last_error

    @last_error.setter
    def last_error(self, value: str | None) -> None:
        self.inner.last_error = value

    def write(self, record: Any) -> None:
        self.write_many([record])

    def write_many(self, records: Any) -> None:
        self.batch += 1
        if self.batch in self.fail_batches:
            raise OSError(28, "No space left on device")  # a sink must not raise: the writer counts them all
        self.inner.write_many(records)

    def close(self) -> None:
        self.inner.close()


def _read_back(path: Path, kind: str) -> list[str]:
    if kind == "sqlite":
        with sqlite3.connect(path) as db:
            return [row[0] for row in db.execute("SELECT call_id FROM decisions ORDER BY id")]
    return [r["call_id"] for r in lines_of(rotated_files(path))]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    count=st.integers(0, 400),
    batch=st.integers(1, 64),
    interval=st.sampled_from([0.0, 0.0005, 0.002]),
    pauses=st.lists(st.integers(0, 400), max_size=8),
    awaited=st.sampled_from(["each", "at-pauses", "at-close"]),
    kind=st.sampled_from(["jsonl", "sqlite"]),
    fail=st.sets(st.integers(1, 12), max_size=3),
)
def test_the_batching_writer_loses_nothing(
    tmp_path: Path,
    count: int,
    batch: int,
    interval: float,
    pauses: list[int],
    awaited: str,
    kind: str,
    fail: set[int],
) -> None:
    # Count in = written + counted as failed, every future resolved, order kept; flushes fall wherever the
    # submitting loop pauses, whatever the batch bound and the timer.
    import asyncio

    from policyengine.service.log_writer import LogWriter

    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / ("d.db" if kind == "sqlite" else "d.jsonl")
    inner = SqliteLog(path) if kind == "sqlite" else JsonLinesLog(path, max_bytes=3_000, backups=500)
    sink = _FlakySink(inner, fail)
    failed: list[int] = []

    async def drive() -> list[asyncio.Future[None]]:
        writer = LogWriter(sink, asyncio.get_running_loop(), batch=batch, interval=interval, failed=failed.append)
        futures: list[asyncio.Future[None]] = []
        for i in range(count):
            futures.append(writer.submit(record(i)))
            if awaited == "each":
                await futures[-1]
            elif i in pauses:
                if awaited == "at-pauses":
                    await asyncio.gather(*futures)
                else:
                    await asyncio.sleep(0)
        await writer.close()
        return futures

    with contextlib.redirect_stderr(io.StringIO()):
        futures = asyncio.run(drive())
    assert all(f.done() and f.exception() is None for f in futures)
    logged = _read_back(path, kind)
    assert len(logged) + sum(failed) == count and sink.failures == sum(failed)
    assert logged == sorted(logged, key=lambda c: int(c[1:]))  # in the order submitted
    if not fail:
        assert logged == [f"c{i}" for i in range(count)]


class _CountingSink:
    """A sink that keeps each group it is given and the thread that gave it."""

    def __init__(self) -> None:
        self.groups: list[list[str]] = []
        self.threads: set[int] = set()
        self.failures = 0
        self.closed = False

    def write(self, record: Any) -> None:
        self.write_many([record])

    def write_many(self, records: Any) -> None:
        self.groups.append([r["call_id"] for r in records])
        self.threads.add(threading.get_ident())

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize(("batch", "interval"), [(256, 0.0), (4, 0.0), (256, 0.01), (4, 0.01)])
def test_records_of_one_loop_pass_share_one_write_on_the_loops_thread(batch: int, interval: float) -> None:
    # Group commit without a thread: what the loop's requests submit before it next runs its callbacks is one
    # write (`batch` records at most a write), made on the loop's own thread; a later pass starts a new group.
    import asyncio

    from policyengine.service.log_writer import LogWriter

    sink = _CountingSink()

    async def drive() -> int:
        writer = LogWriter(sink, asyncio.get_running_loop(), batch=batch, interval=interval)  # type: ignore[arg-type]
        first = [writer.submit({"call_id": f"a{i}"}) for i in range(10)]
        assert sink.groups == []  # nothing is written inside submit: the group gathers until the loop runs it
        await asyncio.gather(*first)
        second = [writer.submit({"call_id": f"b{i}"}) for i in range(3)]
        await asyncio.gather(*second)
        await writer.close()
        return threading.get_ident()

    loop_thread = asyncio.run(drive())
    firsts = [f"a{i}" for i in range(10)]
    assert sink.groups == [firsts[i : i + batch] for i in range(0, 10, batch)] + [["b0", "b1", "b2"]]
    assert sink.threads == {loop_thread} and sink.closed


def test_closing_the_writer_writes_what_is_queued_before_its_timer() -> None:
    import asyncio

    from policyengine.service.log_writer import LogWriter

    sink = _CountingSink()

    async def drive() -> list[bool]:
        writer = LogWriter(sink, asyncio.get_running_loop(), interval=3600.0)  # type: ignore[arg-type]
        futures = [writer.submit({"call_id": f"c{i}"}) for i in range(5)]
        await writer.close()  # SIGTERM's drain: the hour-long timer is not waited for
        return [f.done() for f in futures]

    assert asyncio.run(drive()) == [True] * 5
    assert sink.groups == [[f"c{i}" for i in range(5)]] and sink.closed


def test_several_processes_share_one_rotated_log_without_losing_a_line(tmp_path: Path) -> None:
    # serve --workers N: each worker's sink appends batches to the same file and rotates it under an flock.
    import multiprocessing

    path = tmp_path / "shared.jsonl"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append_batches, args=(str(path), n)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    files = rotated_files(path)
    assert len(files) > 20, "rotation happened many times, under every process"
    seen = lines_of(files)  # a torn or interleaved line would not parse
    assert sorted(r["call_id"] for r in seen) == sorted(f"c{n * 10_000 + i}" for n in range(4) for i in range(600))
    for n in range(4):  # each process's records keep its order
        mine = [int(r["call_id"][1:]) for r in seen if int(r["call_id"][1:]) // 10_000 == n]
        assert mine == sorted(mine)
    assert all(f.stat().st_size <= 4_000 for f in files)


def _append_batches(path: str, n: int) -> None:
    log = JsonLinesLog(path, max_bytes=4_000, backups=500)
    for start in range(0, 600, 20):
        log.write_many([record(n * 10_000 + i) for i in range(start, start + 20)])
    log.close()
    os._exit(0 if (log.written, log.failures) == (600, 0) else 1)
