"""`policyengine serve`: the real server (Uvicorn on a free 127.0.0.1 port) exercised over HTTP with httpx."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from policyengine.cli import serve as serve_verb
from policyengine.cli.main import main
from policyengine.enforce import decision_point
from policyengine.errors import UsageError
from policyengine.service import app as service_app
from policyengine.service import deciding as service_deciding
from policyengine.service.app import OPENAPI, create_app
from policyengine.service.decision_log import DecisionLog, open_decision_log
from policyengine.service.packs_state import PacksState
from served import Served
from support import ROOT, rules_pack

TOKEN = "s3rv3-t0ken-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_BODY = 64 * 1024

RULES: list[dict[str, Any]] = [
    {"id": "deny-rm", "stage": "pre-execute", "tools": ["rm"], "decision": "deny", "reason": "rm is not allowed"},
    {"id": "ask-shell", "stage": "pre-execute", "tools": ["shell"], "decision": "ask", "reason": "run a command?"},
    {"id": "allow-read", "stage": "pre-execute", "tools": ["read", "shell"], "decision": "allow"},
    {
        "id": "no-shadow",
        "stage": "guard",
        "tools": ["*"],
        "when": "arguments.path == '/etc/shadow'",
        "reason": "red line: /etc/shadow",
    },
    {"id": "redact-token", "stage": "post-execute", "tools": ["read"], "redact": [{"keys": ["token"]}]},
    {
        "id": "block-big",
        "stage": "post-execute",
        "tools": ["read"],
        "when": "length(to_string(result.value)) > `200`",
        "block": "The result is too large; read less.",
    },
]


def wait_for(condition: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


# Both HTTP parsers serve mostly alike, but they refuse malformed requests each in its own way.
@pytest.fixture(scope="module", params=["httptools", "h11"])
def service(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[httpx.Client, Path, Path]]:
    root = tmp_path_factory.mktemp("serve")
    pack = rules_pack(root, "svc", RULES, default="deny", default_reason="nothing allowed this")
    log_path = root / "decisions.jsonl"
    state = PacksState([pack])
    app = create_app(
        state,
        token=TOKEN,
        decision_log=open_decision_log(str(log_path)),
        max_body_bytes=MAX_BODY,
        body_timeout=0.3,
        reload_interval=None,
    )
    served = Served(app, http=request.param)
    with httpx.Client(base_url=served.url, headers=AUTH, timeout=10) as client:
        yield client, pack, log_path
    served.stop()


def decide(client: httpx.Client, name: str, arguments: Any, **extra: Any) -> dict[str, Any]:
    reply = client.post("/v1/decide", json={"name": name, "arguments": arguments, **extra})
    assert reply.status_code == 200, reply.text
    return reply.json()  # type: ignore[no-any-return]


def test_decide_answers_each_decision_with_rule_and_digest(service: tuple[httpx.Client, Path, Path]) -> None:
    client, _pack, _log = service
    digest = client.get("/v1/packs").json()["pack_digest"]
    assert digest.startswith("sha256:")
    cases = [
        ("rm", {"path": "x"}, "deny", "deny-rm", "pre-execute"),
        ("shell", {"command": "ls"}, "ask", "ask-shell", "pre-execute"),
        ("read", {"path": "a.txt"}, "allow", "allow-read", "pre-execute"),
        ("read", {"path": "/etc/shadow"}, "deny", "no-shadow", "guard"),
        ("other", {}, "deny", None, "pre-execute"),
    ]
    for name, arguments, decision, rule, stage in cases:
        answer = decide(client, name, arguments, call_id=f"c-{name}", agent="tester", cwd="/work")
        assert (answer["decision"], answer["rule"], answer["stage"]) == (decision, rule, stage), answer
        assert answer["pack_digest"] == digest and answer["call_id"] == f"c-{name}"
    assert decide(client, "other", {})["reason"] == "nothing allowed this"


def test_review_accepts_rewrites_and_blocks(service: tuple[httpx.Client, Path, Path]) -> None:
    client, _pack, _log = service

    def review(name: str, arguments: Any, result: Any) -> dict[str, Any]:
        reply = client.post("/v1/review", json={"name": name, "arguments": arguments, "result": result})
        assert reply.status_code == 200, reply.text
        return reply.json()  # type: ignore[no-any-return]

    accepted = review("read", {"path": "a"}, {"value": {"text": "hi"}, "content": [{"type": "text", "text": "hi"}]})
    assert (accepted["decision"], accepted["post"], accepted["value"]) == ("allow", "accepted", {"text": "hi"})
    assert accepted["content"] == [{"type": "text", "text": "hi"}] and accepted["pack_digest"].startswith("sha256:")
    rewritten = review("read", {"path": "a"}, {"value": {"token": "abc", "n": 1}})
    assert rewritten["post"] == "rewritten" and rewritten["rewrites"] == ["redact-token"]
    assert rewritten["value"] == {"token": "[REDACTED]", "n": 1} and "abc" not in json.dumps(rewritten["content"])
    blocked = review("read", {"path": "a"}, {"value": "x" * 300})
    assert blocked["post"] == "blocked" and blocked["value"] is None
    assert blocked["feedback"] == "The result is too large; read less."
    assert blocked["content"] == [{"type": "text", "text": blocked["feedback"]}]
    # A result of a call the policy denies never reaches the model, whatever it holds.
    denied = review("rm", {"path": "x"}, {"value": "gone"})
    assert (denied["decision"], denied["post"], denied["rule"], denied["value"]) == ("deny", "blocked", "deny-rm", None)
    assert denied["feedback"] == "rm is not allowed"


def test_the_decision_log_replays_through_dry_run_to_the_same_decisions(
    service: tuple[httpx.Client, Path, Path], tmp_path: Path
) -> None:
    client, pack, log_path = service
    calls = [("rm", {"path": "q"}), ("shell", {"command": "ls"}), ("read", {"path": "/etc/shadow"}), ("zz", {})]
    answers = {}
    for i, (name, arguments) in enumerate(calls):
        answers[f"replay-{i}"] = decide(client, name, arguments, call_id=f"replay-{i}")
    reply = client.post(
        "/v1/review", json={"name": "read", "arguments": {}, "call_id": "replay-r", "result": {"value": {"token": "t"}}}
    )
    answers["replay-r"] = reply.json()
    output = tmp_path / "replayed.jsonl"
    code = main(
        ["dry-run", "--pack", str(pack), str(log_path), "--output", str(output), "--workers", "1"], out=io.StringIO()
    )
    assert code == 0
    replayed = {r["call_id"]: r for r in map(json.loads, output.read_text().splitlines())}
    for call_id, answer in answers.items():
        assert (replayed[call_id]["decision"], replayed[call_id]["rule"]) == (answer["decision"], answer["rule"])
    logged = {r["call_id"]: r for r in map(json.loads, log_path.read_text().splitlines())}
    assert logged["replay-r"]["result"]["value"] == {"token": "[REDACTED]"}  # as post-execute left it
    assert logged["replay-0"]["pack_digest"] == answers["replay-0"]["pack_digest"]


def test_packs_healthz_metrics_and_openapi(service: tuple[httpx.Client, Path, Path]) -> None:
    client, _pack, _log = service
    packs = client.get("/v1/packs").json()
    assert [(p["name"], p["version"]) for p in packs["packs"]] == [("svc", "1.0.0")]
    assert packs["packs"][0]["digest"] == packs["pack_digest"]
    plain = httpx.Client(base_url=str(client.base_url))  # no token: health and metrics stay open to probes
    health = plain.get("/healthz").json()
    assert health["ok"] is True and health["reload_error"] is None
    assert health["digests"] == {"svc": packs["pack_digest"]}
    decide(client, "rm", {})
    metrics = plain.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    assert 'policyengine_decisions_total{decision="deny",endpoint="decide",rule="deny-rm"}' in metrics.text
    assert 'policyengine_decision_seconds_bucket{endpoint="decide"' in metrics.text
    assert "policyengine_reloads_total" in metrics.text and "policyengine_reload_failures_total" in metrics.text
    document = plain.get("/openapi.json").json()
    assert document == OPENAPI
    routes = {"/v1/decide": "post", "/v1/review": "post", "/v1/packs": "get"}
    routes |= {"/healthz": "get", "/metrics": "get", "/openapi.json": "get"}
    assert {path: next(iter(ops)) for path, ops in document["paths"].items()} == routes
    for path, method in routes.items():  # every documented route answers its method (not 404/405)
        if method == "get":
            assert client.get(path).status_code == 200


def test_authentication(service: tuple[httpx.Client, Path, Path]) -> None:
    client, _pack, _log = service
    body = {"name": "read", "arguments": {}}
    url = str(client.base_url)
    missing = httpx.post(url + "/v1/decide", json=body)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer ")
    wrong = httpx.post(url + "/v1/decide", json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert httpx.get(url + "/v1/packs", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    assert httpx.post(url + "/v1//decide", json=body).status_code == 401  # not a prefix check: anything not open
    assert httpx.post(url + "/v1/decide", json=body, headers=AUTH).json()["decision"] == "allow"


def test_limits_and_malformed_bodies(service: tuple[httpx.Client, Path, Path]) -> None:
    client, _pack, _log = service
    big = json.dumps({"name": "read", "arguments": {"x": "a" * MAX_BODY}}).encode()
    declared = client.post("/v1/decide", content=big, headers={"Content-Type": "application/json"})
    assert declared.status_code == 413 and "limit" in declared.json()["error"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit holds while reading
        for _ in range(8):
            yield b" " * 16384

    assert client.post("/v1/decide", content=chunks()).status_code == 413
    bad: list[tuple[bytes, str]] = [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"name": "read", "arguments": {"n": NaN}}', "NaN"),
        (b'{"arguments": {}}', "`name`"),
        (b'{"name": "read"}', "`arguments` is missing"),
        (b'{"name": "read", "arguments": [1]}', "`arguments` must be an object"),
        (b'{"name": "read", "args": {}}', "unknown field"),
        (b'{"name": "read", "arguments": {}, "cwd": 3}', "`cwd`"),
        (b"[" * 100_00 + b"]" * 100_00, "nested too deeply"),
    ]
    for raw, why in bad:
        reply = client.post("/v1/decide", content=raw)
        assert reply.status_code == 400 and why in reply.json()["error"], (raw[:40], reply.text)
    shapes: list[tuple[Any, str]] = [
        (None, "`result`"),
        ({"content": []}, "`result`"),
        ({"value": 1, "content": "x"}, "content"),
    ]
    for result, why in shapes:
        reply = client.post("/v1/review", json={"name": "read", "arguments": {}, "result": result})
        assert reply.status_code == 400 and why in reply.json()["error"], reply.text
    # Nothing above hurt the server.
    assert decide(client, "read", {})["decision"] == "allow"


@pytest.mark.parametrize(
    ("endpoint", "raw"),
    [
        ("/v1/decide", b'{"name": "read", "name": "delete", "arguments": {}}'),
        ("/v1/decide", b'{"name": "read", "arguments": {"path": "notes.txt", "path": "/etc/shadow"}}'),
        ("/v1/decide", b'{"name": "read", "arguments": {"path": "notes.txt", "pa\\u0074h": "/etc/shadow"}}'),
        ("/v1/decide", b'{"name": "read", "arguments": {"deep": [{"k": 1, "k": 2}]}}'),
        ("/v1/decide", b'{"name": "read", "arguments": {}, "arguments": {"path": "/etc/shadow"}}'),
        ("/v1/review", b'{"name": "read", "arguments": {}, "result": {"value": {"a": 1, "a": 2}}}'),
    ],
    ids=["name", "argument", "escaped-spelling", "nested", "arguments", "result"],
)
def test_a_key_given_twice_is_refused_not_resolved(
    service: tuple[httpx.Client, Path, Path], endpoint: str, raw: bytes
) -> None:
    client, _pack, _log = service
    reply = client.post(endpoint, content=raw, headers={"Content-Type": "application/json"})
    assert reply.status_code == 400 and "twice" in reply.json()["error"], reply.text


def test_the_same_key_in_different_objects_is_not_a_repeat(service: tuple[httpx.Client, Path, Path]) -> None:
    client, _pack, _log = service
    raw = b'{"name": "read", "arguments": {"a": {"k": 1}, "b": {"k": 1}, "list": [{"k": 1}, {"k": 2}], "K": 3, "k": 4}}'
    reply = client.post("/v1/decide", content=raw, headers={"Content-Type": "application/json"})
    assert reply.status_code == 200 and reply.json()["decision"] == "allow", reply.text


def test_a_slow_body_times_out(service: tuple[httpx.Client, Path, Path]) -> None:
    client, _pack, _log = service
    port = client.base_url.port
    assert port is not None
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        head = f"POST /v1/decide HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 50\r\n\r\n{{"
        sock.sendall(head.encode())
        started = time.monotonic()
        reply = sock.recv(4096).decode()
    assert reply.startswith("HTTP/1.1 408") and time.monotonic() - started < 3


def read_reply(sock: socket.socket) -> str:
    """One whole HTTP/1.1 response with a Content-Length (head and body may come in separate packets)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096) or b"\r\n\r\n"
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")) if k.lower() == b"content-length"), 0
    )
    while len(body) < length and (more := sock.recv(4096)):
        body += more
    return (head + b"\r\n\r\n" + body).decode()


def test_slow_bodies_time_out_together_while_others_are_answered(service: tuple[httpx.Client, Path, Path]) -> None:
    # One watcher cancels every late read (no timer per request): several at once, none holding up the rest.
    client, _pack, _log = service
    port = client.base_url.port
    assert port is not None
    head = f"POST /v1/decide HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 50\r\n\r\n{{"
    slow = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(5)]
    try:
        started = time.monotonic()
        for sock in slow:
            sock.sendall(head.encode())
        # A body sent in pieces inside the deadline is read whole and decided.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as steady:
            body = json.dumps({"name": "rm", "arguments": {}}).encode()
            steady.sendall(f"POST /v1/decide HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n".encode())
            steady.sendall(f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:5])
            time.sleep(0.05)
            steady.sendall(body[5:])
            assert '"rule":"deny-rm"' in read_reply(steady)
        assert decide(client, "read", {})["decision"] == "allow"
        replies = [read_reply(sock) for sock in slow]
    finally:
        for sock in slow:
            sock.close()
    assert all(reply.startswith("HTTP/1.1 408") for reply in replies), replies
    assert time.monotonic() - started < 3
    assert decide(client, "read", {})["decision"] == "allow"  # the cancelled reads left nothing behind


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_a_connection_that_sends_no_request_head_is_closed(http: str) -> None:
    # Without a head deadline such connections stayed open for good (24 s measured), and
    # --max-connections of them answer 503 to everyone.
    served = Served(create_app(PacksState([ROOT / "policies" / "baseline"]), reload_interval=None), http, 0.4)
    port = int(served.url.rsplit(":", 1)[1])
    body = json.dumps({"name": "read_file", "arguments": {"path": "README.md"}}).encode()
    request = b"POST /v1/decide HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    try:
        silent = socket.create_connection(("127.0.0.1", port), timeout=5)
        halfway = socket.create_connection(("127.0.0.1", port), timeout=5)
        halfway.sendall(b"POST /v1/decide HTTP/1.1\r\nHost: x\r\n")
        # Kept alive after an answer, then half a second request: the deadline starts again.
        again = socket.create_connection(("127.0.0.1", port), timeout=5)
        again.sendall(request)
        assert '"decision"' in read_reply(again)
        again.sendall(b"POST /v1/decide HTTP/1.1\r\n")
        # A connection sending whole requests, each within the deadline, is served throughout.
        steady = socket.create_connection(("127.0.0.1", port), timeout=5)
        started = time.monotonic()
        for _ in range(4):
            steady.sendall(request)
            assert '"decision"' in read_reply(steady)
            time.sleep(0.25)
        for sock in (silent, halfway, again):
            assert sock.recv(4096) == b""  # closed, with nothing to answer (recv would time out after 5 s)
        assert time.monotonic() - started < 3
        steady.sendall(request)
        assert '"decision"' in read_reply(steady)
    finally:
        for sock in (silent, halfway, again, steady):
            sock.close()
        served.stop()


def test_the_decision_endpoints_take_post_only(service: tuple[httpx.Client, Path, Path]) -> None:
    client, _pack, _log = service
    for path in ("/v1/decide", "/v1/review"):
        reply = client.get(path)
        assert reply.status_code == 405 and reply.headers["allow"] == "POST" and "POST" in reply.json()["error"]


def test_decision_metrics_read_as_prometheus_client_would_write_them() -> None:
    # The plain-dict tally replaces a labelled Counter and Histogram on the request path: same text, same numbers.
    from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

    ours = service_app.ServiceMetrics()
    registry = CollectorRegistry()
    decisions = Counter(
        "policyengine_decisions", ours.tally.collect.__doc__ or "", ["endpoint", "decision", "rule"], registry=registry
    )
    latency = Histogram(
        "policyengine_decision_seconds", "", ["endpoint"], buckets=service_app.LATENCY_BUCKETS, registry=registry
    )
    import random

    rng = random.Random(15)
    for _ in range(2000):
        endpoint = rng.choice(["decide", "review"])
        decision = rng.choice(["allow", "deny", "ask", "accepted", "blocked"])
        rule = rng.choice(["", "deny-rm", "no-shadow"])
        seconds = rng.choice([0.0, *service_app.LATENCY_BUCKETS, 2.0]) * rng.choice([1.0, 0.5, 1.000001])
        ours.tally.decided(endpoint, decision, rule, seconds)
        decisions.labels(endpoint, decision, rule).inc()
        latency.labels(endpoint).observe(seconds)

    def samples(text: bytes) -> dict[str, float]:
        lines = [line for line in text.decode().splitlines() if line and not line.startswith("#")]
        pairs = (line.rsplit(" ", 1) for line in lines if "_created" not in line)
        return {name: float(value) for name, value in pairs}

    mine = {
        k: v
        for k, v in samples(generate_latest(ours.registry)).items()
        if k.startswith(("policyengine_decisions", "policyengine_decision_seconds"))
    }
    theirs = samples(generate_latest(registry))
    assert mine.keys() == theirs.keys() and len(mine) > 40
    assert all(mine[k] == pytest.approx(theirs[k]) for k in mine)


def test_an_engine_fault_denies_without_a_500(
    service: tuple[httpx.Client, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, _pack, _log = service

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("engine on fire")

    monkeypatch.setattr(decision_point, "evaluate_sync", broken)  # the engine itself fails
    answer = decide(client, "read", {})
    assert answer["decision"] == "deny" and "engine on fire" in answer["reason"] and answer["stage"] is None
    reply = client.post("/v1/review", json={"name": "read", "arguments": {}, "result": {"value": "secret"}})
    assert reply.status_code == 200 and reply.json()["post"] == "blocked" and reply.json()["value"] is None
    # Arguments too deep to freeze are the engine's problem too: denied, never a crash.
    monkeypatch.undo()
    calls = []
    review_fields = service_deciding._review_fields

    def unwritable_once(answer: Any) -> dict[str, Any]:
        calls.append(answer)
        if len(calls) == 1:
            raise TypeError("not JSON")
        return review_fields(answer)

    monkeypatch.setattr(service_deciding, "_review_fields", unwritable_once)
    reply = client.post("/v1/review", json={"name": "read", "arguments": {}, "result": {"value": "v"}})
    assert reply.status_code == 200 and reply.json()["post"] == "blocked" and reply.json()["decision"] == "deny"
    assert "could not write its answer" in reply.json()["feedback"]
    monkeypatch.undo()
    for depth in (400, 900, 5000):
        raw = '{"name": "read", "arguments": ' + '{"a": ' * depth + "{}" + "}" * depth + "}"
        reply = client.post("/v1/decide", content=raw)
        assert reply.status_code in (200, 400), reply.text
        assert reply.status_code == 400 or reply.json()["decision"] in ("allow", "deny", "invalid")
    assert decide(client, "read", {})["decision"] == "allow"


def _read_reply(sock: socket.socket) -> tuple[str, bytes]:
    """One HTTP/1.1 response off a raw socket: the head, and the body its Content-Length announces."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    length = next(int(line.split(b":")[1]) for line in lines if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        body += chunk
    return head.decode(), body


def _answered_on(answers: list[tuple[int, str, str]], digest: str) -> bool:
    return sum(a[2] == digest for a in answers) >= 3


def _replace(path: Path, text: str) -> None:
    """Write atomically: the poller never reads half a file."""
    tmp = path.with_suffix(".tmp-write")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def test_reload_under_load_and_a_bad_pack_keeps_the_last_good_one(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "live", RULES[:3], default="deny")
    state = PacksState([pack])
    app = create_app(state, reload_interval=0.05)
    entered = threading.Event()

    async def watched(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/decide" and dict(scope["headers"]).get(b"x-slow"):
            entered.set()
        await app(scope, receive, send)

    served = Served(watched)
    manifest = (pack / "pack.yaml").read_text()
    digests = [state.current.digest]
    answers: list[tuple[int, str, str]] = []
    stop = threading.Event()

    def client_loop() -> None:
        with httpx.Client(base_url=served.url, timeout=10) as client:
            while not stop.is_set():
                reply = client.post("/v1/decide", json={"name": "rm", "arguments": {}})
                body = reply.json()
                answers.append((reply.status_code, body.get("decision"), body.get("pack_digest")))

    clients = [threading.Thread(target=client_loop) for _ in range(4)]
    try:
        for thread in clients:
            thread.start()
        wait_for(lambda: len(answers) >= 3)  # the clients are calling before the first edit
        for version in ("2.0.0", "3.0.0"):
            _replace(pack / "pack.yaml", manifest.replace("1.0.0", version))
            new = wait_for(lambda: (d := state.current.digest) not in digests and d)
            digests.append(new)
            wait_for(partial(_answered_on, answers, new))  # and keep calling after it
        stop.set()
        for thread in clients:
            thread.join(10)
        assert {a[0] for a in answers} == {200} and {a[1] for a in answers} == {"deny"}
        assert {a[2] for a in answers} == set(digests)  # each answer on the old packs or the new, none failed
        # A request decides on the packs it started with: its body arrives after a reload, yet the old packs answer.
        port = int(served.url.rsplit(":", 1)[1])
        body = json.dumps({"name": "rm", "arguments": {}}).encode()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            request = b"POST /v1/decide HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\nContent-Length: %d\r\n\r\n" % len(body)
            sock.sendall(request + body[:5])
            assert entered.wait(5)  # the request has started: the app took its snapshot
            _replace(pack / "pack.yaml", manifest.replace("1.0.0", "3.5.0"))
            digests.append(wait_for(lambda: (d := state.current.digest) not in digests and d))
            sock.sendall(body[5:])
            head, answer = _read_reply(sock)
        assert head.startswith("HTTP/1.1 200") and json.loads(answer)["pack_digest"] == digests[-2]
        with httpx.Client(base_url=served.url) as client:
            # A pack that fails to load: the last good one keeps deciding, and /healthz says why.
            (pack / "rules.yaml").write_text("rules:\n  - id: broken\n    stage: nowhere\n", encoding="utf-8")
            health = wait_for(lambda: client.get("/healthz").json()["reload_error"] and client.get("/healthz").json())
            assert "rules.yaml" in health["reload_error"] and health["pack_digest"] == digests[-1]
            answer = client.post("/v1/decide", json={"name": "rm", "arguments": {}}).json()
            assert (answer["decision"], answer["pack_digest"]) == ("deny", digests[-1])
            metrics = client.get("/metrics").text
            assert "policyengine_reload_failures_total 1.0" in metrics and "policyengine_reloads_total 3.0" in metrics
            rules_pack(tmp_path, "live", RULES[:3], default="allow", version="4.0.0")
            health = wait_for(lambda: (h := client.get("/healthz").json())["reload_error"] is None and h)
            assert health["pack_digest"] not in digests
    finally:
        stop.set()
        served.stop()


def test_cli_serves_with_token_audit_and_sighup(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "cli", RULES[:1], default="allow")
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    audit = tmp_path / "audit.jsonl"
    argv = [sys.executable, "-m", "policyengine", "serve", "--pack", str(pack), "--port", "0"]
    argv += ["--token-file", str(token_file), "--audit", str(audit), "--reload-interval", "0", "--log-level", "warning"]
    argv += ["--http", "h11"]  # the fixture's tests run on both parsers; the option is passed through
    argv += ["--workers", "1"]  # one process: the SIGHUP reaches the packs that answer next
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("policyengine serve: http://127.0.0.1:"), line
        url = line.split()[2]
        with httpx.Client(base_url=url, headers=AUTH, timeout=10) as client:
            wait_for(lambda: _ok(client))
            first = client.post("/v1/decide", json={"name": "rm", "arguments": {}}).json()
            assert first["decision"] == "deny"
            rules_pack(tmp_path, "cli", RULES[:1], default="allow", version="9.9.9")
            proc.send_signal(signal.SIGHUP)
            wait_for(lambda: client.get("/v1/packs").json()["packs"][0]["version"] == "9.9.9")
            second = client.post("/v1/decide", json={"name": "rm", "arguments": {}}).json()
            assert second["pack_digest"] != first["pack_digest"]
        proc.send_signal(signal.SIGTERM)
        # Uvicorn shuts down cleanly (lifespan writes and closes the log), and serve says so: exit 0.
        assert proc.wait(10) == 0
        records = [json.loads(line) for line in audit.read_text().splitlines()]
        assert [r["decision"] for r in records] == ["deny", "deny"] and records[0]["rule"] == "deny-rm"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def _ok(client: httpx.Client) -> bool:
    try:
        return client.get("/healthz").status_code == 200
    except httpx.TransportError:
        return False


def test_cli_refuses_bad_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    assert main(["serve"], out=io.StringIO(), err=err) == 2 and "--pack" in err.getvalue()
    empty = tmp_path / "empty"
    empty.write_text("\n")
    err = io.StringIO()
    pack = str(ROOT / "policies" / "baseline")
    assert main(["serve", "--pack", pack, "--token-file", str(empty)], out=io.StringIO(), err=err) == 2
    assert "does not hold one token" in err.getvalue()
    err = io.StringIO()
    assert main(["serve", "--pack", pack, "--decision-timeout", "0"], out=io.StringIO(), err=err) == 2
    assert "--decision-timeout 0 is not a positive number of seconds" in err.getvalue()
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    parser_args = ["serve", "--pack", pack]
    err = io.StringIO()
    assert main(parser_args, out=io.StringIO(), err=err) == 2
    assert "pip install 'agent-policyengine[server]'" in err.getvalue()
    taken = serve_verb.bind("127.0.0.1", 0)
    try:
        with pytest.raises(UsageError, match="cannot listen"):
            serve_verb.bind("127.0.0.1", taken.getsockname()[1])
    finally:
        taken.close()


def test_a_bundle_is_served_and_a_bad_one_keeps_the_last_good_packs(tmp_path: Path) -> None:
    from policyengine.service.bundles import build_bundle, generate_keys, sign_bundle

    generate_keys(tmp_path / "key", tmp_path / "key.pub")
    source = rules_pack(tmp_path / "src", "signed", RULES[:1], default="allow")
    bundle = tmp_path / "signed.tar.gz"
    build_bundle(source, bundle)
    sign_bundle(bundle, tmp_path / "key")
    folders, poller = serve_verb._bundle(str(bundle), str(tmp_path / "key.pub"), str(tmp_path / "work"), [])
    state = PacksState(folders)
    poll = poller(state)
    first = state.current.digest
    assert [p.name for p in state.current.packs] == ["signed"]
    asyncio.run(poll())  # unchanged: nothing reloads
    assert (state.current.digest, state.reloads) == (first, 0)
    rules_pack(tmp_path / "src", "signed", RULES[:1], default="allow", version="2.0.0")
    build_bundle(source, bundle)
    sign_bundle(bundle, tmp_path / "key")
    asyncio.run(poll())
    assert state.current.digest != first and state.current.packs[0].version == "2.0.0"
    second = state.current.digest
    rules_pack(tmp_path / "src", "signed", RULES[:1], default="deny", version="3.0.0")
    build_bundle(source, bundle)  # not signed again: the old signature does not verify
    asyncio.run(poll())
    assert state.current.digest == second and state.last_error is not None and "refused" in state.last_error
    with pytest.raises(UsageError, match="--bundle"):
        serve_verb._bundle(str(bundle), str(tmp_path / "key.pub"), str(tmp_path / "work2"), [])


def test_a_pack_catalog_validates_calls_as_dry_run_does(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "cat", RULES[:3], default="allow", catalog="tools.jsonl")
    parameters = {"type": "dict", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    spec = {"name": "read", "description": "read a file", "parameters": parameters}
    (pack / "tools.jsonl").write_text(json.dumps(spec) + "\n")
    served = Served(create_app(PacksState([pack]), reload_interval=None))
    try:
        with httpx.Client(base_url=served.url) as client:
            assert decide(client, "read", {"path": "a"})["decision"] == "allow"
            bad = decide(client, "read", {"path": 3})
            assert (bad["decision"], bad["stage"]) == ("invalid", "validation")
            assert decide(client, "rm", {})["decision"] == "invalid"  # not in the catalog
    finally:
        served.stop()
    assert PacksState([pack], unknown_tools="decide").current.require_tool is False


def test_a_large_call_is_decided_beside_the_loop_and_denied_at_its_deadline() -> None:
    # policies/bfcl takes seconds on 60,000 encoded tags (4.4 s in-process, session 42); decided on the event
    # loop, such a call held every other client's answer that long. Decided in a thread, the others go on, and
    # it is denied at --decision-timeout. The deadline sits far from both calls: 0.6 s against ~11 ms for the
    # quick one (a 0.3 s deadline failed it at load 9-10 on 2 cores).
    pack = ROOT / "policies" / "bfcl"
    costly: dict[str, Any] = {
        "name": "post_tweet",
        "arguments": {"content": "hi", "tags": ["/etc/%2e%2e/x"] * 60000, "mentions": []},
    }
    app = create_app(PacksState([pack]), reload_interval=None, max_body_bytes=2 << 20, decision_timeout=0.6)
    served = Served(app)
    try:
        with httpx.Client(base_url=served.url, timeout=60) as client:
            # Large but quick: decided in the thread as on the loop (a real decision either way).
            padding = "x" * 100_000
            token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
            assert len(padding) > service_app.OFFLOAD_BYTES
            quick = decide(client, "post_tweet", {"content": padding, "tags": [], "mentions": []})
            assert quick["decision"] == "allow"
            leak = decide(client, "post_tweet", {"content": padding + " " + token, "tags": [], "mentions": []})
            assert (leak["decision"], leak["rule"]) == ("deny", "no-credentials-in-posts")
            slow = decide(client, costly["name"], costly["arguments"])
            assert slow["decision"] == "deny" and "within 0.6s" in slow["reason"], slow
            assert slow["stage"] is None and slow["rule"] == "policy service"  # the service denied, no rule
            # Deciding on the loop would have answered the costly call itself, not denied it at 0.6 s. The
            # thread is still checking the tags: small calls are answered meanwhile (how long they wait
            # beside it is the machine's: no clock asserted).
            for _ in range(5):
                assert decide(client, "ls", {})["decision"] == "allow"
    finally:
        served.stop()


class _HeldLog:
    """A decision log that holds the write of one call until released: the test sees what the loop does meanwhile."""

    def __init__(self, inner: DecisionLog, held_call: str) -> None:
        self.inner, self.held_call = inner, held_call
        self.entered, self.release = threading.Event(), threading.Event()

    @property
    def failures(self) -> int:
        return self.inner.failures

    @failures.setter
    def failures(self, value: int) -> None:
        self.inner.failures = value

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

    def write(self, record: Mapping[str, Any]) -> None:
        if record.get("call_id") == self.held_call:
            self.entered.set()
            self.release.wait(timeout=60)
        self.inner.write(record)

    def write_many(self, records: Sequence[Mapping[str, Any]]) -> None:
        for record in records:
            self.write(record)

    def close(self) -> None:
        self.inner.close()


def test_a_large_call_is_logged_beside_the_loop_and_logged_before_its_answer(tmp_path: Path) -> None:
    # Deciding this call is quick, but redacting its 1 MB of card numbers for the log took 1.2 s on the
    # event loop, holding every other client's answer that long. The log holds the large call's write
    # until the test releases it: small calls answered meanwhile show the write is off the loop, with no
    # clock in the test (a write on the loop would hold them until their 10 s timeout).
    cards = "4111 1111 1111 1111 " * 50_000
    log_path = tmp_path / "decisions.jsonl"
    held = _HeldLog(open_decision_log(str(log_path)), "large")
    app = create_app(
        PacksState([ROOT / "policies" / "bfcl"]),
        decision_log=held,
        reload_interval=None,
        max_body_bytes=2 << 20,
    )
    served = Served(app)
    try:
        answered: list[dict[str, Any]] = []

        def large() -> None:
            with httpx.Client(base_url=served.url, timeout=60) as client:
                answered.append(decide(client, "echo", {"content": cards, "file_name": "notes.txt"}, call_id="large"))
                # Logged before answered: the line is in the file when the answer arrives.
                answered.append({"logged": '"call_id": "large"' in log_path.read_text(encoding="utf-8")})

        with httpx.Client(base_url=served.url, timeout=10) as client:
            assert decide(client, "ls", {})["decision"] == "allow"  # warm
            sender = threading.Thread(target=large)
            sender.start()
            try:
                assert held.entered.wait(timeout=60), "the large call was never logged"
                for _ in range(5):
                    assert decide(client, "ls", {})["decision"] == "allow"
                assert answered == []  # not answered before its log line is written
            finally:
                held.release.set()
                sender.join()
        assert answered[0]["decision"] == "allow" and answered[1] == {"logged": True}
    finally:
        served.stop()
    lines = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines()]
    [entry] = [line for line in lines if line["call_id"] == "large"]
    assert entry["redacted"] is True and "4111 1111 1111 1111" not in json.dumps(entry)


def test_the_bfcl_calls_are_decided_as_dry_run_decides_them(tmp_path: Path) -> None:
    pack = ROOT / "policies" / "bfcl"
    lines = (ROOT / "examples" / "bfcl-calls.jsonl").read_text().splitlines()[::8]  # ~145 calls, every session kind
    served = Served(create_app(PacksState([pack]), reload_interval=None))
    try:
        with httpx.Client(base_url=served.url) as client:
            answers = {}
            for line in lines:
                call = json.loads(line)
                reply = client.post("/v1/decide", json={k: call[k] for k in ("name", "arguments", "call_id")})
                answers[call["call_id"]] = reply.json()
    finally:
        served.stop()
    calls, output = tmp_path / "calls.jsonl", tmp_path / "replayed.jsonl"
    calls.write_text("\n".join(lines) + "\n")
    assert (
        main(["dry-run", "--pack", str(pack), str(calls), "--output", str(output), "--workers", "1"], out=io.StringIO())
        == 0
    )
    replayed = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(replayed) == len(answers) and {r["decision"] for r in replayed} >= {"allow", "ask"}
    for record in replayed:
        answer = answers[record["call_id"]]
        assert (answer["decision"], answer["rule"], answer["reason"]) == (
            record["decision"],
            record["rule"],
            record["reason"],
        )


def test_the_cli_repeats_the_services_defaults_exactly() -> None:
    # Repeated so `serve --help` needs no Starlette: a drift would document one default and run another.
    repeated = (serve_verb.MAX_BODY_BYTES, serve_verb.BODY_TIMEOUT, serve_verb.DECISION_TIMEOUT)
    assert repeated == (
        service_app.DEFAULT_MAX_BODY_BYTES,
        service_app.DEFAULT_BODY_TIMEOUT,
        service_app.DEFAULT_DECISION_TIMEOUT,
    )


def test_the_cli_loads_no_server_package_until_serve_runs() -> None:
    code = "import sys, policyengine.cli.main as m; m.verb_modules(); "
    code += "print(sorted(n for n in ('starlette', 'uvicorn', 'prometheus_client') if n in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert loaded.stdout.strip() == "[]"
