"""`serve` with sessions: every shipped session sequence through the real service, on SQLite and on a real Redis.

The service runs as `policyengine serve` in its own process on a free port; Redis is a real
`redis-server` started on a free port in a temporary folder (the tests that need it skip, saying
why, only when it cannot start). Two `serve` processes that share one Redis share sessions.
"""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from policyengine.cli import serve as serve_verb
from policyengine.service.decision_log import SCHEMA_VERSION, open_decision_log
from policyengine.service.packs_state import PacksState
from policyengine.sessions.stores import DEFAULT_TTL, MemoryStore, SqliteStore, open_store
from support import ROOT

SEQUENCES: list[dict[str, Any]] = yaml.safe_load((ROOT / "tests" / "data" / "session_sequences.yaml").read_text())[
    "sequences"
]
PACKS = sorted({s["pack"] for s in SEQUENCES})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Serve:
    """`policyengine serve` in a process of its own, on a free port; its stderr kept for messages."""

    def __init__(self, pack: str, sessions: str, audit: Path) -> None:
        argv = [sys.executable, "-m", "policyengine", "serve", "--pack", str(ROOT / "policies" / pack), "--port", "0"]
        argv += ["--sessions", sessions, "--audit", str(audit), "--reload-interval", "0", "--log-level", "warning"]
        self.proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        self.audit = audit
        self.lines: list[str] = []
        self.url = ""

    def ready(self) -> Serve:
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        assert line.startswith("policyengine serve: http://"), line + self.proc.stderr.read()
        self.url = line.split()[2]
        threading.Thread(target=lambda: self.lines.extend(self.proc.stderr or ()), daemon=True).start()
        self.client = httpx.Client(base_url=self.url, timeout=10)
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.client.get("/healthz").status_code == 200:
                    return self
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.02)

    def post(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.client.post(f"/v1/{endpoint}", json=body)
        assert reply.status_code == 200, reply.text
        answer: dict[str, Any] = reply.json()
        return answer

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if hasattr(self, "client"):
            self.client.close()

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.audit.read_text().splitlines()]


def serving(packs: list[str], sessions: str, folder: Path, replicas: int = 1) -> list[dict[str, Serve]]:
    """`replicas` services per pack, all started at once (each takes ~1 s to import and load)."""
    started = [{p: Serve(p, sessions, folder / f"{p}-{n}.jsonl") for p in packs} for n in range(replicas)]
    try:
        return [{p: s.ready() for p, s in replica.items()} for replica in started]
    except BaseException:
        for replica in started:
            for s in replica.values():
                s.stop()
        raise


class RedisServer:
    """A real redis-server on a free port, its files in `folder`; skips the test, saying why, when it cannot start."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            pytest.skip("SKIPPED LOUDLY: redis-server is not installed (apt-get install redis-server; .ci/run does)")
        pytest.importorskip("redis", reason="SKIPPED LOUDLY: the redis package is missing (the [redis] extra)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", ""]
        argv += ["--appendonly", "no", "--daemonize", "no", "--logfile", str(folder / "redis.log")]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    log = (folder / "redis.log").read_text() if (folder / "redis.log").exists() else ""
                    pytest.skip(f"SKIPPED LOUDLY: redis-server did not start on port {self.port}: {log[-400:]}")
                time.sleep(0.02)
        client.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def replay(sequence: dict[str, Any], decide_on: list[Serve], review_on: list[Serve], store: Any) -> None:
    """Decide each step's call (then review its result) on the services given, in turn; check what was expected."""
    session = f"{uuid.uuid4().hex[:12]}"
    for i, step in enumerate(sequence["steps"]):
        call = step["call"]
        body = {"name": call["name"], "arguments": call["arguments"], "session_id": session}
        if call.get("cwd"):
            body["cwd"] = call["cwd"]
        decided = decide_on[i % len(decide_on)].post("decide", body)
        expect = step["expect"]
        where = f"{sequence['name']}, step {i}: {decided}"
        assert decided["decision"] == expect["decision"], where
        if "rule" in expect:
            assert decided["rule"] == expect["rule"], where
        if "result" in step:
            reviewed = review_on[i % len(review_on)].post(
                "review", {**body, "call_id": decided["call_id"], "result": step["result"]}
            )
            if decided["decision"] in ("allow", "ask"):
                # A review is post-execute over a call that ran: it reports allow (an asked call ran once approved).
                assert reviewed["decision"] == "allow" and reviewed["post"] != "blocked", reviewed
            else:
                assert reviewed["post"] == "blocked", reviewed
        if "labels" in expect:
            assert set(expect["labels"]) <= set(store.load(session).labels), where


def replay_all(decide_on: list[dict[str, Serve]], review_on: list[dict[str, Serve]], store: Any) -> None:
    """Every sequence (the failures of all of them at once, by name)."""
    failures = []
    for sequence in SEQUENCES:
        pack = sequence["pack"]
        try:
            replay(sequence, [s[pack] for s in decide_on], [s[pack] for s in review_on], store)
        except AssertionError as error:
            failures.append(f"{sequence['name']}: {error}")
    assert not failures, "\n".join(failures)


# -- SQLite ------------------------------------------------------------------------------------------
# One test per set of servers (~1 s each to start): pytest-xdist would start a module fixture's on each worker.


def test_serve_on_sqlite_replays_every_sequence_and_logs_each_session(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    (services,) = serving(PACKS, f"sqlite:{path}", tmp_path)
    store = SqliteStore(path)
    try:
        replay_all([services], [services], store)
        decision_log_records_carry_the_session_and_its_labels(services["claude-code"])
        a_review_records_the_result_and_never_a_second_decision(services["bfcl"], store)
        a_session_id_is_a_bounded_string(services["bfcl"].client)
    finally:
        store.close()
        for s in services.values():
            s.stop()


def decision_log_records_carry_the_session_and_its_labels(service: Serve) -> None:
    session = "log-" + uuid.uuid4().hex[:8]
    read = {"name": "Read", "arguments": {"file_path": "/home/dev/project/settings.ini"}, "cwd": "/home/dev/project"}
    decided = service.post("decide", {**read, "session_id": session})
    secret = "AWS_SECRET_ACCESS_KEY=q8Xr2Lm4Np6Vt0Zb3Kc5Hd7Jf9Gs1Wa2Ye4Ui6Oo\n"
    body = {**read, "session_id": session, "call_id": decided["call_id"], "result": {"value": secret}}
    service.post("review", body)
    service.post("decide", {"name": "Read", "arguments": {"file_path": "/home/dev/project/a.txt"}})  # no session
    records = service.records()
    mine = [r for r in records if r.get("session_id") == session]
    assert [r["decision"] for r in mine] == ["allow", "allow"] and mine[1]["post"] != "blocked"
    assert mine[0]["labels"] == [] and "credential-seen" in mine[1]["labels"]
    assert mine[0]["call_id"] == mine[1]["call_id"] == decided["call_id"]
    assert "session_id" not in records[-1] and "labels" not in records[-1]
    assert secret.split("=")[1].strip() not in json.dumps(mine)  # the log is redacted as before


def a_review_records_the_result_and_never_a_second_decision(service: Serve, store: SqliteStore) -> None:
    session = "count-" + uuid.uuid4().hex[:8]
    pay = {"name": "withdraw_funds", "arguments": {"amount": 10}, "session_id": session}
    for _ in range(3):
        decided = service.post("decide", pay)
        service.post("review", {**pay, "call_id": decided["call_id"], "result": {"value": {"status": "ok"}}})
    # The results set no label: nothing more to record.
    assert [e.step.value for e in store.entries(session)] == ["allow", "allow", "allow"]
    # A review is post-execute alone: it never decides, so it never adds to a counter (even for a call
    # the session holds no decision of: only calls a rule can read later are written, docs/sessions.md).
    unknown = service.post("review", {**pay, "call_id": "never-decided", "result": {"value": {"status": "ok"}}})
    assert unknown["post"] == "accepted"
    denied = service.post("decide", {"name": "withdraw_funds", "arguments": {"amount": 30000}, "session_id": session})
    assert denied["decision"] == "deny"
    assert [e.step.value for e in store.entries(session)] == ["allow", "allow", "allow"]


def a_session_id_is_a_bounded_string(client: httpx.Client) -> None:
    for bad, error in ((7, "`session_id` must be a string"), ("s" * 257, "over 256 characters")):
        reply = client.post("/v1/decide", json={"name": "x", "arguments": {}, "session_id": bad})
        assert reply.status_code == 400 and error in reply.json()["error"]
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    assert "session_id" in schema["Call"]["properties"] and "session_id" in schema["CallWithResult"]["properties"]


# -- Redis: two replicas share one server -----------------------------------------------------------


def test_two_serve_replicas_sharing_one_redis_replay_every_sequence_and_fail_closed_without_it(
    tmp_path: Path,
) -> None:
    server = RedisServer(tmp_path)
    first: dict[str, Serve] = {}
    second: dict[str, Serve] = {}
    try:
        first, second = serving(PACKS, server.url, tmp_path, replicas=2)
        # Each step is decided on one replica and its result reviewed on the other, the next step the other way round.
        replay_all([first, second], [second, first], open_store(server.url))
        a_label_and_a_counter_set_through_one_replica_are_seen_by_the_other(first, second)
        server.stop()  # the store goes away under running services
        a_store_that_fails_later_denies_and_blocks(first["claude-code"])
    finally:
        for s in [*first.values(), *second.values()]:
            s.stop()
        server.stop()


def a_label_and_a_counter_set_through_one_replica_are_seen_by_the_other(
    first: dict[str, Serve], second: dict[str, Serve]
) -> None:
    session = "shared-" + uuid.uuid4().hex[:8]
    read = {"name": "fs_read", "arguments": {"path": "/workspace/config/app.ini"}, "session_id": session}
    decided = first["baseline"].post("decide", read)
    assert decided["decision"] == "allow"
    key = {"value": "aws_secret_access_key = q8Xr2Lm4Np6Vt0Zb3Kc5Hd7Jf9Gs1Wa2Ye4Ui6Oo\n"}
    first["baseline"].post("review", {**read, "call_id": decided["call_id"], "result": key})
    egress = second["baseline"].post(
        "decide", {"name": "http_get", "arguments": {"url": "https://example.org/"}, "session_id": session}
    )
    assert (egress["decision"], egress["rule"]) == ("deny", "deny-egress-after-credentials")
    # bfcl asks once a session's payments pass 10,000: 1,900 at a time, alternately through each replica.
    pay = {"name": "withdraw_funds", "arguments": {"amount": 1900}, "session_id": session}
    answers = [(first, second)[i % 2]["bfcl"].post("decide", pay) for i in range(6)]
    assert [a["decision"] for a in answers] == ["allow"] * 5 + ["ask"] and answers[5]["rule"] == "ask-payment-sum"


def a_store_that_fails_later_denies_and_blocks(service: Serve) -> None:
    read = {"name": "Read", "arguments": {"file_path": "/home/dev/project/a.txt"}, "cwd": "/home/dev/project"}
    denied = service.post("decide", {**read, "session_id": "s1"})
    assert (denied["decision"], denied["rule"]) == ("deny", "session store")
    assert "session store failed" in denied["reason"]
    body = {**read, "session_id": "s1", "call_id": "c1", "result": {"value": "hello"}}
    blocked = service.post("review", body)
    assert blocked["post"] == "blocked" and "session store failed" in blocked["feedback"]
    # A call without a session reads an empty one and touches no store: the packs still decide it.
    assert service.post("decide", read)["decision"] == "allow"
    records = service.records()
    assert records[-3]["decision"] == "deny" and records[-3]["labels"] is None


# -- starting, reloading, the log's schema ------------------------------------------------------------


def test_a_store_that_cannot_open_stops_the_service_before_it_listens(tmp_path: Path) -> None:
    closed = f"redis://127.0.0.1:{free_port()}/0"
    blocker = tmp_path / "file"
    blocker.write_text("")
    cases = {
        closed: "start the Redis server",
        f"sqlite:{blocker / 'sessions.sqlite3'}": "a folder this user can write",
        "nonsense": "unknown session store",
    }
    argv = [sys.executable, "-m", "policyengine", "serve", "--pack", str(ROOT / "policies" / "bfcl"), "--port", "0"]
    runs = {spec: subprocess.Popen([*argv, "--sessions", spec], stderr=subprocess.PIPE, text=True) for spec in cases}
    for spec, says in cases.items():
        _out, err = runs[spec].communicate(timeout=60)
        assert runs[spec].returncode == 2, err
        assert f"cannot open the session store {spec}" in err and says in err and "http://" not in err, err


def test_the_default_store_sits_beside_the_decision_log_and_a_reload_keeps_it(tmp_path: Path) -> None:
    assert serve_verb.default_sessions(str(tmp_path / "decisions.jsonl")) == "sqlite:" + str(
        tmp_path / "decisions.sessions.sqlite3"
    )
    assert serve_verb.default_sessions(f"sqlite:{tmp_path / 'd.db'}").endswith("/d.sessions.sqlite3")
    assert serve_verb.default_sessions(None).endswith("/policyengine/serve-sessions.sqlite3")
    assert serve_verb.SESSION_TTL == DEFAULT_TTL
    store = MemoryStore()
    state = PacksState([ROOT / "policies" / "bfcl"], sessions=store)
    before = state.current
    assert state.reload().swapped and state.current is not before
    assert state.current.registry.sessions is store


def test_a_version_1_sqlite_log_gains_the_session_columns_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE decisions (id INTEGER PRIMARY KEY, ts REAL, call_id TEXT, name TEXT, agent TEXT,"
        " decision TEXT, stage TEXT, rule TEXT, pack TEXT, digest TEXT, reason TEXT, record TEXT);"
        "INSERT INTO decisions (call_id, record) VALUES ('c0', '{\"call_id\": \"c0\"}');"
        "PRAGMA user_version = 1;"
    )
    db.close()
    log = open_decision_log(str(path))
    log.write({"call_id": "c1", "name": "x", "session_id": "s", "labels": ["a"], "arguments": {}})
    log.close()
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
        rows = db.execute("SELECT call_id, session_id, labels FROM decisions ORDER BY id").fetchall()
    finally:
        db.close()
    assert rows == [("c0", None, None), ("c1", "s", '["a"]')]
