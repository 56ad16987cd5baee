"""Reading a request: its body under a size limit and a deadline, its JSON checked against its shape, and answers.

Everything a client can get wrong is refused here, before anything is decided, as a `BadRequest`
whose status and reason go back to the client.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from starlette.types import Receive, Scope, Send

from policyengine.service.deadlines import Deadlines
from policyengine.tools.definition import content_problems

__all__ = [
    "DECIDE_KEYS",
    "MAX_SESSION_ID",
    "REVIEW_KEYS",
    "BadRequest",
    "BodyDeadlines",
    "encode",
    "parse",
    "read_body",
    "send_json",
]

DECIDE_KEYS = frozenset({"name", "arguments", "cwd", "call_id", "agent", "session_id"})
# A session id is a key in the store (a Redis key, a SQLite value): bounded, like any name a client picks.
MAX_SESSION_ID = 256
REVIEW_KEYS = DECIDE_KEYS | {"result"}


class BadRequest(Exception):
    """A request the service refuses before deciding anything: status and reason for the client."""

    def __init__(self, status: int, reason: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = dict(headers or {})


class BodyDeadlines(Deadlines[asyncio.Task[Any]]):
    """Body reads that must finish by a deadline: the late ones are cancelled, and their reader answers 408."""

    def __init__(self, timeout: float) -> None:
        super().__init__(timeout, self._cancel)
        self.expired: set[asyncio.Task[Any]] = set()

    def _cancel(self, task: asyncio.Task[Any], _note: Any) -> None:
        self.expired.add(task)
        task.cancel()


def _content_length(scope: Scope) -> bytes | None:
    for key, value in scope["headers"]:
        if key == b"content-length":
            return bytes(value)
    return None


async def read_body(scope: Scope, receive: Receive, limit: int, deadlines: BodyDeadlines) -> bytes:
    """The body, refused once it passes `limit` bytes (before parsing) or takes over the deadline to arrive."""
    declared = _content_length(scope)
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):
            raise BadRequest(400, f"Content-Length {declared[:40].decode('latin-1')!r} is not a number of bytes")
        if int(declared) > limit:
            raise BadRequest(413, f"the body is {int(declared):,} bytes, over the {limit:,}-byte limit")
    task = asyncio.current_task()
    assert task is not None
    # A read finishes, or is cancelled, before its wait ends: both run on the event loop's one thread.
    deadlines.start(task)
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise BadRequest(400, "the client disconnected before sending the whole body")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise BadRequest(413, f"the body is over the {limit:,}-byte limit")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    except asyncio.CancelledError:
        if task not in deadlines.expired:
            raise
        deadlines.expired.discard(task)
        task.uncancel()
        raise BadRequest(408, f"the body took over {deadlines.timeout:g}s to arrive; send it at once") from None
    finally:
        deadlines.end(task)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


_JSON_HEADERS = [(b"content-type", b"application/json")]


# Built once: json.dumps and json.loads with options build an encoder or a decoder per call (~1 and ~5 us).
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode(payload: Any) -> bytes:
    """JSON as Starlette's JSONResponse writes it (compact, UTF-8, no NaN)."""
    return _ENCODER.encode(payload).encode("utf-8")


async def send_json(send: Send, status: int, data: bytes, headers: Mapping[str, str] | None = None) -> None:
    """One JSON response: its head, then its body."""
    head = [*_JSON_HEADERS, (b"content-length", str(len(data)).encode("ascii"))]
    if headers:
        head += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": data})


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class _RepeatedKey(ValueError):
    """An object of the body names one key twice."""


def _one_of_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object from its pairs; a key given twice is refused, not resolved."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                # Parsers disagree on which copy wins (first, last, both): a decision on one copy
                # while the tool runs on the other would be a bypass, so neither is chosen.
                raise _RepeatedKey(f"an object names the key {key[:80]!r} twice; send each key once")
            seen.add(key)
    return found


_DECODER = json.JSONDecoder(parse_constant=_no_constants, object_pairs_hook=_one_of_each)


def parse(raw: bytes, keys: frozenset[str], with_result: bool) -> dict[str, Any]:
    """The request object, checked against its shape; BadRequest says what is wrong and where."""
    try:
        body = _DECODER.decode(raw.decode("utf-8"))
    except _RepeatedKey as error:
        raise BadRequest(400, f"the body is not JSON this service reads: {error}") from None
    except UnicodeDecodeError as error:
        raise BadRequest(400, f"the body is not UTF-8 (byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise BadRequest(
            400, f"the body is not JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None
    except RecursionError:
        raise BadRequest(400, "the body is not JSON this service reads: nested too deeply") from None
    except ValueError as error:  # NaN, Infinity, an integer of too many digits
        raise BadRequest(400, f"the body is not JSON this service reads: {error}") from None
    if not isinstance(body, dict):
        raise BadRequest(400, f"the body must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - keys)
    if unknown:
        # A misspelt key (`args`) silently evaluated as no arguments could allow what should be denied.
        raise BadRequest(400, f"unknown field(s) {', '.join(map(repr, unknown))}; expected {', '.join(sorted(keys))}")
    if not isinstance(body.get("name"), str) or not body["name"]:
        raise BadRequest(400, "`name` must be the tool's name, a non-empty string")
    if "arguments" not in body:
        raise BadRequest(400, "`arguments` is missing; send {} for a call without arguments")
    if not isinstance(body["arguments"], dict):
        raise BadRequest(400, f"`arguments` must be an object, got {type(body['arguments']).__name__}")
    for key in ("cwd", "call_id", "agent", "session_id"):
        if body.get(key) is not None and not isinstance(body[key], str):
            raise BadRequest(400, f"`{key}` must be a string or null, got {type(body[key]).__name__}")
    if len(body.get("session_id") or "") > MAX_SESSION_ID:
        raise BadRequest(400, f"`session_id` is over {MAX_SESSION_ID} characters; send a shorter id")
    if with_result:
        result = body.get("result")
        if not isinstance(result, dict) or "value" not in result:
            raise BadRequest(400, "`result` must be an object with the tool's `value` (and optionally `content`)")
        extra = sorted(set(result) - {"value", "content"})
        if extra:
            raise BadRequest(
                400, f"unknown field(s) {', '.join(map(repr, extra))} in `result`; expected value, content"
            )
        if result.get("content") is not None and content_problems(result["content"]):
            raise BadRequest(400, f"`result.content` is malformed: {'; '.join(content_problems(result['content']))}")
    return body
