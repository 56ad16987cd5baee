"""A response's head and body leave in one send (service/http_protocol.py `_OnePass`), and nothing else changes."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from policyengine.service.app import create_app
from policyengine.service.http_protocol import _OnePass
from policyengine.service.packs_state import PacksState
from served import Served

ROOT = Path(__file__).resolve().parent.parent


class _Recording:
    """A transport that records what is sent, and closes."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closing = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closing, "written after close"
        self.sent.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = self.aborted = True

    def get_extra_info(self, name: str) -> str:
        return f"extra {name}"


def _run(steps: Any) -> _Recording:
    async def drive() -> _Recording:
        raw = _Recording()
        await steps(_OnePass(raw), raw)
        return raw

    return asyncio.run(drive())


def test_a_head_and_its_body_leave_in_one_send() -> None:
    async def steps(one: _OnePass, raw: _Recording) -> None:
        one.write(b"HTTP/1.1 200 OK\r\n\r\n")
        assert raw.sent == []  # held until its body
        one.write(b'{"decision":"allow"}')
        assert raw.sent == [b'HTTP/1.1 200 OK\r\n\r\n{"decision":"allow"}']
        await asyncio.sleep(0)
        assert len(raw.sent) == 1  # the pass's callback finds nothing held

    _run(steps)


def test_a_lone_write_leaves_at_the_next_pass_in_order() -> None:
    async def steps(one: _OnePass, raw: _Recording) -> None:
        one.write(b"a")
        one.write(b"")  # an empty write sends and holds nothing
        await asyncio.sleep(0)
        assert raw.sent == [b"a"]
        one.write(b"b")
        one.write(b"c")
        one.write(b"d")
        await asyncio.sleep(0)
        assert raw.sent == [b"a", b"bc", b"d"]
        assert one.get_extra_info("peername") == "extra peername"  # the rest is the transport's

    _run(steps)


def test_close_sends_what_is_held_first_and_abort_drops_it() -> None:
    async def closing(one: _OnePass, raw: _Recording) -> None:
        one.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        one.close()
        assert raw.sent == [b"HTTP/1.1 400 Bad Request\r\n\r\n"] and raw.closing
        await asyncio.sleep(0)  # the pass's callback writes nothing to a closed transport

    assert _run(closing).sent == [b"HTTP/1.1 400 Bad Request\r\n\r\n"]

    async def aborting(one: _OnePass, raw: _Recording) -> None:
        one.write(b"HTTP/1.1 200 OK\r\n\r\n")
        one.abort()
        await asyncio.sleep(0)

    raw = _run(aborting)
    assert raw.sent == [] and raw.aborted


def _exchange(port: int, *steps: bytes) -> bytes:
    """Send each step on one connection, the next once an answer to the last has come; read until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        received = b""
        for n, data in enumerate(steps):
            sock.sendall(data)
            while n < len(steps) - 1 and not _has_answer(received):
                received += sock.recv(65536)
        sock.settimeout(2)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            received += chunk
        return received


def _has_answer(received: bytes) -> bool:
    """Whether `received` holds a whole answer (a head and the body its Content-Length gives)."""
    head, _, body = received.partition(b"\r\n\r\n")
    length = [line for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")]
    return bool(length) and len(body) >= int(length[0].split(b":")[1])


def _request(body: dict[str, Any], close: bool = False) -> bytes:
    data = json.dumps(body).encode()
    connection = b"Connection: close\r\n" if close else b""
    return b"POST /v1/decide HTTP/1.1\r\nHost: x\r\n%sContent-Length: %d\r\n\r\n%s" % (connection, len(data), data)


_PIPELINED = b"".join(
    [
        _request({"name": "read_file", "arguments": {"path": "README.md"}, "call_id": "c1"}),
        _request({"name": "write_file", "arguments": {"path": "/etc/passwd", "content": "x"}, "call_id": "c2"}),
        b"GET /v1/packs HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n",
        _request({"name": "read_file", "arguments": {"path": ".env"}, "call_id": "c3"}, close=True),
    ]
)
_GOOD_THEN_MALFORMED = (
    _request({"name": "read_file", "arguments": {"path": "a"}, "call_id": "c4"}),
    b"NOT HTTP\r\n\r\n",
)


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_answers_are_the_same_bytes_with_one_send_as_with_two(http: str) -> None:
    # The same requests, pipelined on one connection (a close at the end; a malformed request after a good one's
    # answer on another), answered by a real server with each protocol: the same bytes in the same order.
    answers: dict[bool, list[bytes]] = {}
    for one_send in (True, False):
        app = create_app(PacksState([ROOT / "policies" / "baseline"]), reload_interval=None)
        served = Served(app, http, one_send=one_send)
        try:
            port = int(served.url.rsplit(":", 1)[1])
            answers[one_send] = [_exchange(port, _PIPELINED), _exchange(port, *_GOOD_THEN_MALFORMED)]
        finally:
            served.stop()
    pipelined, malformed = answers[True]
    assert pipelined.count(b"HTTP/1.1 200 OK") == 5 and b'"call_id":"c3"' in pipelined
    assert pipelined.index(b'"call_id":"c1"') < pipelined.index(b'"call_id":"c2"') < pipelined.index(b'"c3"')
    assert malformed.startswith(b"HTTP/1.1 200 OK") and b"HTTP/1.1 400" in malformed
    normalised = {key: [_without_date(answer) for answer in value] for key, value in answers.items()}
    assert normalised[True] == normalised[False]


def _without_date(answer: bytes) -> bytes:
    return b"\r\n".join(line for line in answer.split(b"\r\n") if not line.lower().startswith(b"date:"))
