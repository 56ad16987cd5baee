"""`serve --workers N`: real worker processes forked by `policyengine serve`, answering on one port.

Every test starts the real CLI in a process of its own on a free port and talks HTTP to it. A
client learns which worker answers its keep-alive connection from `/healthz`'s `pid`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from policyengine.cli import serve as serve_verb
from policyengine.service.decision_log import rotated_files
from support import ROOT, rules_pack

RULES: list[dict[str, Any]] = [
    {"id": "deny-rm", "stage": "pre-execute", "tools": ["rm"], "decision": "deny", "reason": "rm is not allowed"},
    {"id": "allow-read", "stage": "pre-execute", "tools": ["read"], "decision": "allow"},
]


def wait_for(condition: Callable[[], Any], timeout: float = 20.0, what: str = "a condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Serve:
    """`policyengine serve --workers N` in a process of its own on a free port; its stderr collected."""

    def __init__(self, pack: Path, workers: int, *extra: str) -> None:
        argv = [sys.executable, "-m", "policyengine", "serve", "--pack", str(pack), "--port", "0"]
        argv += ["--workers", str(workers), "--log-level", "warning", *extra]
        self.proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        assert line.startswith("policyengine serve: http://"), line + self.proc.stderr.read()
        self.url = line.split()[2]
        self.lines: list[str] = [line]
        threading.Thread(target=lambda: self.lines.extend(self.proc.stderr or ()), daemon=True).start()
        wait_for(lambda: any("workers: pids" in x for x in self.lines), what="the workers line")
        with self.client() as client:
            wait_for(lambda: _healthy(client), what="the service")

    def client(self) -> httpx.Client:
        """A client on one keep-alive connection (so one worker answers it)."""
        return httpx.Client(base_url=self.url, timeout=30, limits=httpx.Limits(max_connections=1))

    def pids(self) -> set[int]:
        """The worker pids of the startup line."""
        line = next(x for x in self.lines if "workers: pids" in x)
        return {int(p) for p in line.split("pids", 1)[1].replace(",", " ").split()}

    def client_on(self, avoid: set[int] = frozenset(), tries: int = 200) -> tuple[httpx.Client, int]:  # type: ignore[assignment]
        """A client whose connection a worker not in `avoid` answers."""
        for _ in range(tries):
            client = self.client()
            pid = int(client.get("/healthz").json()["pid"])
            if pid not in avoid:
                return client, pid
            client.close()
        raise AssertionError(f"no worker but {avoid} answered {tries} new connections")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        return self.proc.returncode


def _healthy(client: httpx.Client) -> bool:
    try:
        return client.get("/healthz").status_code == 200
    except httpx.TransportError:
        return False


def _decide(client: httpx.Client, name: str) -> dict[str, Any]:
    answer: dict[str, Any] = client.post("/v1/decide", json={"name": name, "arguments": {}}).json()
    return answer


def _allowed(client: httpx.Client, name: str) -> bool:
    return bool(_decide(client, name)["decision"] == "allow")


def _version(client: httpx.Client) -> str:
    return str(client.get("/v1/packs").json()["packs"][0]["version"])


def _is_version(client: httpx.Client, version: str) -> bool:
    return _version(client) == version


def _log_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for f in rotated_files(path) for line in f.read_text().splitlines()]


def test_two_workers_answer_decisions_and_a_reload_reaches_both(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "live", RULES, default="deny")
    serve = Serve(pack, 2, "--reload-interval", "0.2", "--sessions", f"sqlite:{tmp_path / 's.db'}")
    first, first_pid = serve.client_on()
    second, second_pid = serve.client_on({first_pid})
    try:
        assert {first_pid, second_pid} == serve.pids()
        before = {_decide(c, "rm")["pack_digest"] for c in (first, second)}
        assert len(before) == 1 and _decide(first, "rm")["decision"] == "deny"
        rules_pack(tmp_path, "live", RULES[1:], default="allow", version="2.0.0")  # rm now allowed
        for client in (first, second):  # each worker polls the folder itself: both reach the new packs
            wait_for(partial(_allowed, client, "rm"), what="the reload")
            assert _decide(client, "rm")["pack_digest"] not in before and _version(client) == "2.0.0"
        # SIGHUP to the parent reaches every worker too.
        rules_pack(tmp_path, "live", RULES, default="deny", version="3.0.0")
        serve.proc.send_signal(signal.SIGHUP)
        for client in (first, second):
            wait_for(partial(_is_version, client, "3.0.0"), what="SIGHUP")
    finally:
        first.close()
        second.close()
        assert serve.stop() == 0


def _pids_of_connections_opened_at_once(url: str, count: int) -> list[int]:
    """Open `count` connections before any is used (as a load generator does), then ask each which worker answers."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sockets = [socket.create_connection((host, int(port)), timeout=20) for _ in range(count)]
    pids = []
    try:
        for sock in sockets:
            sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        for sock in sockets:
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(
                next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
            )
            while len(body) < length:
                body += sock.recv(65536)
            pids.append(int(json.loads(body)["pid"]))
    finally:
        for sock in sockets:
            sock.close()
    return pids


@pytest.mark.skipif(
    not serve_verb.balanced_accepts(), reason="the kernel balances sockets sharing a port on Linux only"
)
def test_connections_opened_at_once_are_spread_over_the_workers(tmp_path: Path) -> None:
    # On one shared socket, the worker whose loop woke first accepted the whole burst: wrk's 64
    # keep-alive connections all went to one worker in 2 of 6 runs. Each worker now listens on a
    # socket of its own and the kernel hashes connections over them (all 32 on one: p = 2**-31 a burst).
    serve = Serve(rules_pack(tmp_path, "live", RULES), 2, "--sessions", f"sqlite:{tmp_path / 's.db'}")
    try:
        for _burst in range(4):  # the shared socket gave one burst to one worker about one time in three
            pids = _pids_of_connections_opened_at_once(serve.url, 32)
            assert set(pids) == serve.pids(), sorted(pids)
    finally:
        assert serve.stop() == 0


def test_metrics_add_up_every_workers_decisions(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "m", RULES, default="deny")
    serve = Serve(pack, 2, "--reload-interval", "0", "--sessions", f"sqlite:{tmp_path / 's.db'}")
    first, first_pid = serve.client_on()
    second, _ = serve.client_on({first_pid})
    try:
        for _ in range(7):
            first.post("/v1/decide", json={"name": "rm", "arguments": {}})
        for _ in range(5):
            second.post("/v1/decide", json={"name": "read", "arguments": {}})
        second.post("/v1/decide", content=b"not json")

        def totals() -> dict[str, float]:
            lines = first.get("/metrics").text.splitlines()
            return {k: float(v) for k, v in (x.rsplit(" ", 1) for x in lines if x and not x.startswith("#"))}

        # Each worker writes its counts once a second: whichever worker is scraped shows both. A write
        # may fall between worker two's last decision and its 400, so each count is waited for.
        key = 'policyengine_decisions_total{decision="%s",endpoint="decide",rule="%s"}'
        wait_for(lambda: totals().get(key % ("deny", "deny-rm")) == 7.0, what="worker one's counts")
        wait_for(lambda: totals().get(key % ("allow", "allow-read")) == 5.0, what="worker two's counts")
        rejected = 'policyengine_rejected_requests_total{status="400"}'
        wait_for(lambda: totals().get(rejected) == 1.0, what="worker two's rejected request")
        assert totals()['policyengine_decision_seconds_count{endpoint="decide"}'] == 12.0
    finally:
        first.close()
        second.close()
        assert serve.stop() == 0


def test_sigterm_under_load_exits_0_with_every_answered_decision_logged(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "load", RULES, default="deny")
    audit = tmp_path / "decisions.jsonl"
    serve = Serve(pack, 2, "--audit", str(audit), "--reload-interval", "0")
    answered: list[str] = []
    stop = threading.Event()

    def hammer(n: int) -> None:
        i = 0
        while not stop.is_set():
            try:
                with serve.client() as client:
                    for _ in range(50):
                        call_id = f"c{n}-{i}"
                        i += 1
                        reply = client.post(
                            "/v1/decide", json={"name": "rm", "arguments": {"k": "x" * 200}, "call_id": call_id}
                        )
                        if reply.status_code == 200 and reply.json()["call_id"] == call_id:
                            answered.append(call_id)
            except httpx.TransportError:  # the service stopped under us: what it answered is what counts
                if serve.proc.poll() is not None:
                    return
                time.sleep(0.01)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: len(answered) >= 400, what="load")
        assert serve.stop() == 0
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    logged = [r["call_id"] for r in _log_records(audit)]
    assert len(answered) >= 400
    assert set(answered) <= set(logged), f"{len(set(answered) - set(logged))} answered decisions are not logged"
    assert len(logged) == len(set(logged))  # none written twice
    # `policyengine logs` reads what both workers wrote as one log.
    read = subprocess.run(
        [sys.executable, "-m", "policyengine", "logs", str(audit), "--format", "jsonl"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert sorted(json.loads(line)["call_id"] for line in read.stdout.splitlines()) == sorted(logged)
    assert not any("exited" in line or "Traceback" in line for line in serve.lines), serve.lines


def test_a_killed_worker_is_replaced_and_said(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "k", RULES, default="deny")
    serve = Serve(pack, 2, "--reload-interval", "0", "--sessions", f"sqlite:{tmp_path / 's.db'}")
    try:
        original = serve.pids()
        victim = min(original)
        os.kill(victim, signal.SIGKILL)
        said = wait_for(
            lambda: [x for x in serve.lines if f"(pid {victim}) exited with signal 9 (SIGKILL)" in x],
            what="the restart",
        )
        assert "starting another" in said[0]
        # The replacement answers: some connection reaches a worker that was not there at the start.
        client, pid = wait_for(lambda: _new_worker(serve, original), what="a new worker")
        try:
            assert (
                pid not in original
                and client.post("/v1/decide", json={"name": "rm", "arguments": {}}).json()["decision"] == "deny"
            )
        finally:
            client.close()
    finally:
        assert serve.stop() == 0


def _new_worker(serve: Serve, original: set[int]) -> tuple[httpx.Client, int] | None:
    try:
        return serve.client_on(original, tries=20)
    except (AssertionError, httpx.TransportError):
        return None


def test_a_label_set_through_one_worker_is_seen_by_a_call_another_answers(tmp_path: Path) -> None:
    sequence = yaml_sequence("claude-code: a credential read, then any web fetch, is denied")
    serve = Serve(
        ROOT / "policies" / "claude-code", 2, "--reload-interval", "0", "--sessions", f"sqlite:{tmp_path / 's.db'}"
    )
    first, first_pid = serve.client_on()
    second, second_pid = serve.client_on({first_pid})
    try:
        read, fetch = sequence["steps"]
        session = {"session_id": "run-workers"}
        decided = first.post("/v1/decide", json={**read["call"], **session}).json()
        assert decided["decision"] == "allow"
        reviewed = first.post(
            "/v1/review", json={**read["call"], **session, "call_id": decided["call_id"], "result": read["result"]}
        ).json()
        assert reviewed["post"] in ("accepted", "rewritten")
        denied = second.post("/v1/decide", json={**fetch["call"], **session}).json()
        assert second.get("/healthz").json()["pid"] == second_pid != first_pid
        assert (denied["decision"], denied["rule"]) == ("deny", fetch["expect"]["rule"])
        # Without the first worker's label the same call through the second worker is not denied.
        other = second.post("/v1/decide", json={**fetch["call"], "session_id": "run-clean"}).json()
        assert other["decision"] != "deny"
    finally:
        first.close()
        second.close()
        assert serve.stop() == 0


def yaml_sequence(name: str) -> dict[str, Any]:
    import yaml

    sequences = yaml.safe_load((ROOT / "tests" / "data" / "session_sequences.yaml").read_text())["sequences"]
    found: dict[str, Any] = next(s for s in sequences if s["name"] == name)
    return found


def test_memory_sessions_refuse_several_workers(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "mem", RULES, default="deny")
    argv = [sys.executable, "-m", "policyengine", "serve", "--pack", str(pack), "--port", "0"]
    done = subprocess.run([*argv, "--sessions", "memory", "--workers", "2"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "--sessions memory keeps sessions in one process" in done.stderr
    done = subprocess.run([*argv, "--workers", "0"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "--workers 0 is not a count" in done.stderr
