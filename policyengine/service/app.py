"""The decision service: packs over HTTP on Starlette (`create_app`), as `policyengine dry-run` decides.

`POST /v1/decide` answers what pre-execute and the guards do with a call; `POST /v1/review`
what post-execute makes of its result. Every answer carries `pack_digest`, the digest of the
installation that decided it: a request takes the current snapshot once, when it starts, so a
reload in the middle never mixes two policies. Anything that goes wrong while deciding denies
(fails closed); nothing a client sends reaches a 500. A request's `session_id` names the agent's
session: a decide records the call in it, a review records its result under the decision the
session holds (`review_recorded`), and a session store that fails denies or blocks.
"""

from __future__ import annotations

import asyncio
import bisect
import concurrent.futures
import contextlib
import hmac
import json
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from policyengine.enforce.evaluate import (
    Evaluation,
    Verdict,
    evaluate,
    evaluate_now,
    fault_denial,
    review_recorded_now,
)
from policyengine.service.deadlines import Deadlines
from policyengine.service.decision_log import DecisionLog, decision_record
from policyengine.service.packs_state import PacksState, ReloadResult, Snapshot
from policyengine.tools.definition import content_problems
from policyengine.values.call import new_call_id
from policyengine.values.decisions import Source, SourceKind
from policyengine.values.frozen import thaw

log = logging.getLogger("policyengine.service")

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_DECISION_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "OFFLOAD_BYTES",
    "OPENAPI",
    "ServiceMetrics",
    "create_app",
]

DEFAULT_MAX_BODY_BYTES = 1 << 20
DEFAULT_BODY_TIMEOUT = 10.0
DEFAULT_DECISION_TIMEOUT = 5.0
# Calls this large are decided in a worker thread, the event loop answering the others meanwhile:
# a 1 MB call can take seconds (60,000 encoded tags for policies/bfcl: 2.2 s), and on the loop
# it held every other client for as long. Below it the thread hop (~50 us) would cost more than
# most decisions take (~30 us).
OFFLOAD_BYTES = 64 * 1024
SERVICE = Source(SourceKind.REGISTRY, "policy service")

_DECIDE_KEYS = frozenset({"name", "arguments", "cwd", "call_id", "agent", "session_id"})
# A session id is a key in the store (a Redis key, a SQLite value): bounded, like any name a client picks.
MAX_SESSION_ID = 256
_REVIEW_KEYS = _DECIDE_KEYS | {"result"}


class BadRequest(Exception):
    """A request the service refuses before deciding anything: status and reason for the client."""

    def __init__(self, status: int, reason: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = dict(headers or {})


LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)


class _DecisionTally(Collector):
    """Decisions and their latency, counted in plain dicts on the event loop and exported at scrape time.

    prometheus-client's labelled Counter and Histogram take a lock and check the labels on every
    call: 3.6 us a decision (of a budget of ~60; benchmarks/load.py), against 0.5 us here. Only the
    event loop's thread counts and scrapes (GET /metrics runs on it too), so no lock is needed.
    """

    def __init__(self) -> None:
        self.decisions: dict[tuple[str, str, str], int] = {}
        self.buckets: dict[str, list[int]] = {}  # per endpoint: count per bucket, then the overflow
        self.sums: dict[str, float] = {}

    def decided(self, endpoint: str, decision: str, rule: str, seconds: float) -> None:
        """Count one answer and its latency."""
        key = (endpoint, decision, rule)
        self.decisions[key] = self.decisions.get(key, 0) + 1
        counts = self.buckets.get(endpoint)
        if counts is None:
            counts = self.buckets[endpoint] = [0] * (len(LATENCY_BUCKETS) + 1)
            self.sums[endpoint] = 0.0
        counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.sums[endpoint] += seconds

    def collect(self) -> Iterator[Metric]:
        """The two metric families, as a labelled Counter and Histogram would show them."""
        decisions = CounterMetricFamily(
            "policyengine_decisions",
            "Decisions answered, by endpoint, decision (post outcome for reviews) and deciding rule",
            labels=["endpoint", "decision", "rule"],
        )
        for labels, count in sorted(self.decisions.items()):
            decisions.add_metric(list(labels), count)
        yield decisions
        latency = HistogramMetricFamily(
            "policyengine_decision_seconds",
            "Time to decide, from the parsed request to the answer",
            labels=["endpoint"],
        )
        for endpoint, counts in sorted(self.buckets.items()):
            running, cumulative = 0, []
            for bound, count in zip((*map(repr, LATENCY_BUCKETS), "+Inf"), counts, strict=True):
                running += count
                cumulative.append((bound, running))
            latency.add_metric([endpoint], cumulative, self.sums[endpoint])
        yield latency


@dataclass
class ServiceMetrics:
    """The service's Prometheus metrics, on a registry of their own (one per app)."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        self.tally = _DecisionTally()
        self.registry.register(self.tally)
        self.rejected = Counter(
            "policyengine_rejected_requests",
            "Requests refused before deciding, by status",
            ["status"],
            registry=self.registry,
        )
        self.reloads = Counter("policyengine_reloads", "Pack reloads that swapped in new packs", registry=self.registry)
        self.reload_failures = Counter(
            "policyengine_reload_failures",
            "Pack reloads that failed (the last good packs kept deciding)",
            registry=self.registry,
        )
        self.log_failures = Counter(
            "policyengine_decision_log_failures", "Decisions the decision log could not write", registry=self.registry
        )

    def reloaded(self, result: ReloadResult) -> None:
        """Count a reload."""
        (self.reloads if result.swapped else self.reload_failures).inc()


# -- the OpenAPI document ---------------------------------------------------------------------------

_NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
_CALL_PROPERTIES: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1, "description": "the tool's name"},
    "arguments": {"type": "object", "description": "the call's arguments"},
    "cwd": {**_NULLABLE_STRING, "description": "where the call's relative paths start (default: the packs' cwd)"},
    "call_id": {**_NULLABLE_STRING, "description": "the call's id (default: a new one, echoed back)"},
    "agent": {**_NULLABLE_STRING, "description": "who makes the call (default: agent)"},
    "session_id": {
        **_NULLABLE_STRING,
        "maxLength": MAX_SESSION_ID,
        "description": "the agent's session: rules that read `session` see what the session did before; a decide "
        "records the call in it, a review the labels and secrets of its result, under the call_id the "
        "decide answered (default: none, an empty session, nothing recorded)",
    },
}
_DECISION_PROPERTIES: dict[str, Any] = {
    "decision": {"type": "string", "enum": ["allow", "deny", "ask", "invalid"]},
    "stage": {**_NULLABLE_STRING, "description": "the pipeline stage that decided"},
    "rule": {**_NULLABLE_STRING, "description": "the deciding rule (null: a pack's default)"},
    "pack": _NULLABLE_STRING,
    "reason": _NULLABLE_STRING,
    "call_id": {"type": "string"},
    "pack_digest": {"type": "string", "description": "the digest of the installation that decided"},
}
_ERROR = {
    "description": "refused before deciding",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def _json_body(ref: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}}


def _answer(ref: str, description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
    }


_V1_ERRORS = {"400": _ERROR, "401": _ERROR, "408": _ERROR, "413": _ERROR}

OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "policyengine decision service", "version": "1"},
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Call": {
                "type": "object",
                "required": ["name", "arguments"],
                "additionalProperties": False,
                "properties": _CALL_PROPERTIES,
            },
            "CallWithResult": {
                "type": "object",
                "required": ["name", "arguments", "result"],
                "additionalProperties": False,
                "properties": {
                    **_CALL_PROPERTIES,
                    "result": {
                        "type": "object",
                        "required": ["value"],
                        "additionalProperties": False,
                        "properties": {
                            "value": {"description": "the tool's output"},
                            "content": {"type": ["array", "null"], "description": "the content blocks the model sees"},
                        },
                    },
                },
            },
            "Decision": {"type": "object", "required": list(_DECISION_PROPERTIES), "properties": _DECISION_PROPERTIES},
            "Review": {
                "type": "object",
                "required": [*_DECISION_PROPERTIES, "post", "value", "content", "rewrites", "feedback"],
                "properties": {
                    **_DECISION_PROPERTIES,
                    "post": {"type": "string", "enum": ["accepted", "rewritten", "blocked"]},
                    "value": {"description": "the value as post-execute left it (null when blocked)"},
                    "content": {"type": "array", "description": "the content the model may see"},
                    "rewrites": {"type": "array", "items": {"type": "string"}},
                    "feedback": _NULLABLE_STRING,
                },
            },
            "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
            "Packs": {
                "type": "object",
                "properties": {
                    "pack_digest": {"type": "string"},
                    "packs": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "version": {"type": "string"},
                                "digest": {"type": "string"},
                                "path": {"type": "string"},
                                "rules": {"type": "integer"},
                            },
                        },
                    },
                },
            },
            "Health": {
                "type": "object",
                "properties": {
                    "ok": {"type": "boolean"},
                    "pack_digest": {"type": "string"},
                    "digests": {"type": "object", "additionalProperties": {"type": "string"}},
                    "loaded_at": {"type": "number"},
                    "reload_error": _NULLABLE_STRING,
                },
            },
        },
    },
    "paths": {
        "/v1/decide": {
            "post": {
                "summary": "What pre-execute and the guards do with a call",
                "security": [{"bearer": []}],
                "requestBody": _json_body("Call"),
                "responses": {"200": _answer("Decision", "the decision"), **_V1_ERRORS},
            }
        },
        "/v1/review": {
            "post": {
                "summary": "What post-execute makes of a call's result (and the call's decision)",
                "security": [{"bearer": []}],
                "requestBody": _json_body("CallWithResult"),
                "responses": {"200": _answer("Review", "the review"), **_V1_ERRORS},
            }
        },
        "/v1/packs": {
            "get": {
                "summary": "The packs deciding now",
                "security": [{"bearer": []}],
                "responses": {"200": _answer("Packs", "the packs"), "401": _ERROR},
            }
        },
        "/healthz": {
            "get": {
                "summary": "Liveness, the packs' digests, the last reload error",
                "responses": {"200": _answer("Health", "health")},
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus metrics",
                "responses": {"200": {"description": "Prometheus text", "content": {"text/plain": {}}}},
            }
        },
        "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}},
    },
}
"""The service's OpenAPI document, hand-written (tests/test_serve.py checks it against the routes)."""


# -- requests ---------------------------------------------------------------------------------------


class _BodyDeadlines(Deadlines[asyncio.Task[Any]]):
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


async def _read_body(scope: Scope, receive: Receive, limit: int, deadlines: _BodyDeadlines) -> bytes:
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


def _encode(payload: Any) -> bytes:
    """JSON as Starlette's JSONResponse writes it (compact, UTF-8, no NaN)."""
    return json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


async def _send_json(send: Send, status: int, data: bytes, headers: Mapping[str, str] | None = None) -> None:
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


def _parse(raw: bytes, keys: frozenset[str], with_result: bool) -> dict[str, Any]:
    """The request object, checked against its shape; BadRequest says what is wrong and where."""
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_no_constants, object_pairs_hook=_one_of_each)
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


# -- deciding ---------------------------------------------------------------------------------------


def _denied(name: str, error: BaseException) -> Evaluation:
    log.error("policyengine serve: evaluating %r failed", name, exc_info=error)
    return fault_denial(SERVICE, name, "deciding", error)


def _kwargs(snapshot: Snapshot, body: Mapping[str, Any], call_id: str, result: Any) -> dict[str, Any]:
    return {
        "agent": body.get("agent") or "agent",
        "call_id": call_id,
        "cwd": body.get("cwd"),
        "result": result,
        "require_tool": snapshot.require_tool,
        "session_id": body.get("session_id") or None,
    }


def _evaluate_now(
    snapshot: Snapshot, body: Mapping[str, Any], call_id: str, result: Mapping[str, Any] | None
) -> Evaluation | None:
    """The evaluation when the packs decide synchronously (packs alone do), else None; any fault denies."""
    try:
        # Nothing can swap the registry under a decision in progress: the snapshot is immutable.
        kwargs = _kwargs(snapshot, body, call_id, result)
        if result is not None and kwargs["session_id"]:
            # The call was decided (and counted) by /v1/decide: a review records its result, never a second decision.
            del kwargs["result"]
            return review_recorded_now(snapshot.registry, body["name"], body["arguments"], result, **kwargs)
        return evaluate_now(snapshot.registry, body["name"], body["arguments"], **kwargs)
    except Exception as error:  # fails closed: a service that cannot decide denies
        return _denied(body["name"], error)


async def _evaluate(
    snapshot: Snapshot,
    body: Mapping[str, Any],
    call_id: str,
    result: Mapping[str, Any] | None,
    aside: tuple[concurrent.futures.Executor, float] | None = None,
) -> Evaluation:
    """The evaluation on this snapshot's registry; any fault denies (and blocks a result).

    With `aside` (an executor and a deadline in seconds), the synchronous evaluation runs on the
    executor and a call it has not decided by the deadline is denied; the thread runs on to its
    end (a thread cannot be stopped), the executor's size bounding how many do.
    """
    answer: Evaluation | None
    if aside is None:
        answer = _evaluate_now(snapshot, body, call_id, result)
    else:
        executor, timeout = aside
        work = asyncio.get_running_loop().run_in_executor(executor, _evaluate_now, snapshot, body, call_id, result)
        try:
            answer = await asyncio.wait_for(work, timeout)
        except TimeoutError:
            log.warning("policyengine serve: tool %r not decided within %gs; denied", body["name"], timeout)
            reason = (
                f"Denied: the policy service could not decide tool {body['name']!r} within {timeout:g}s "
                "(its arguments are too large or too costly to check); the call is refused."
            )
            answer = Evaluation(Verdict.DENY, None, SERVICE, reason)
    if answer is None and result is not None and body.get("session_id"):
        # Only asynchronous stages (not packs) get here: reviewing them again would count the call twice.
        reason = "Blocked: the policy service reviews results in a session only for packs (synchronous stages)."
        answer = Evaluation(Verdict.DENY, None, SERVICE, reason)
    if answer is None:
        try:
            answer = await evaluate(
                snapshot.registry, body["name"], body["arguments"], **_kwargs(snapshot, body, call_id, result)
            )
        except Exception as error:  # fails closed: a service that cannot decide denies
            answer = _denied(body["name"], error)
    return _closed(answer, result)


def _labels_held(snapshot: Snapshot, session_id: str | None) -> list[str] | None:
    """The labels the session holds now (right after the call was decided or reviewed), for the decision log."""
    if not session_id:
        return None
    if snapshot.registry.installation.sessions is None:
        return []  # packs without session rules: no label is ever set
    try:
        return sorted(snapshot.registry.installation.sessions.store.load(session_id).labels)
    except Exception:  # the store failed: the call was denied for it, and the record says the labels are unknown
        return None


def _closed(answer: Evaluation, result: Mapping[str, Any] | None) -> Evaluation:
    """ERROR denies; a result of a call the policy would not admit (or could not review) is blocked."""
    if answer.decision is Verdict.ERROR:
        answer = replace(answer, decision=Verdict.DENY, reason=answer.reason or "the policy answered error")
    if result is not None and (answer.post is None or answer.decision in (Verdict.DENY, Verdict.INVALID)):
        answer = answer.blocked()  # never reaches the model, whatever it holds
    return answer


def _fields(answer: Evaluation, snapshot: Snapshot, call_id: str, reviewed: bool) -> dict[str, Any]:
    """The answer's JSON fields: the decision, and for a review what post-execute made of the result."""
    fields = _decision_fields(answer, snapshot, call_id)
    return fields | _review_fields(answer) if reviewed else fields


def _decision_fields(answer: Evaluation, snapshot: Snapshot, call_id: str) -> dict[str, Any]:
    source = answer.source
    return {
        "decision": answer.decision.value,
        "stage": answer.stage.value if answer.stage else None,
        "rule": source.rule_id if source else None,
        "pack": source.pack if source else None,
        "reason": answer.reason,
        "call_id": call_id,
        "pack_digest": snapshot.digest,
    }


def _review_fields(answer: Evaluation) -> dict[str, Any]:
    assert answer.post is not None
    return {
        "post": answer.post.value,
        "value": thaw(answer.value),
        "content": thaw(answer.content),
        "rewrites": [s.name for s in answer.rewrites],
        "feedback": answer.feedback,
    }


# -- authentication ---------------------------------------------------------------------------------


_OPEN_PATHS = frozenset({"/healthz", "/metrics", "/openapi.json"})


class _BearerAuth:
    """Every request but the probes and the schema needs `Authorization: Bearer <token>`, before its body is read."""

    def __init__(self, app: ASGIApp, token: str, metrics: ServiceMetrics) -> None:
        self.app = app
        self.token = token.encode("utf-8")
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # An allowlist, not a prefix: a path spelt so that it slips past a check of `/v1/` still needs the token.
        if scope["type"] != "http" or scope.get("path") in _OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        scheme, _, credential = given.partition(b" ")
        if scheme.lower() == b"bearer" and hmac.compare_digest(credential.strip(), self.token):
            await self.app(scope, receive, send)
            return
        error = "invalid_token" if given else "invalid_request"
        reason = "the bearer token is wrong" if given else "this service needs `Authorization: Bearer <token>`"
        self.metrics.rejected.labels("401").inc()
        response = JSONResponse(
            {"error": reason},
            status_code=401,
            headers={"WWW-Authenticate": f'Bearer realm="policyengine", error="{error}"'},
        )
        await response(scope, receive, send)


# -- the app ----------------------------------------------------------------------------------------


def create_app(
    state: PacksState,
    *,
    token: str | None = None,
    decision_log: DecisionLog | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    decision_timeout: float = DEFAULT_DECISION_TIMEOUT,
    offload_bytes: int = OFFLOAD_BYTES,
    reload_interval: float | None = 2.0,
    poll: Callable[[], Awaitable[None]] | None = None,
    metrics: ServiceMetrics | None = None,
    handle_sighup: bool = True,
    otel: Callable[[Mapping[str, Any]], None] | None = None,
) -> ASGIApp:
    """The decision service over `state`'s packs.

    `reload_interval` (seconds; None: never) is how often the pack folders are polled for
    changes, and `poll` is awaited on the same beat (a bundle source, say); SIGHUP reloads at
    once when the app runs on the main thread. `decision_log` is closed at shutdown. A call
    whose body has `offload_bytes` or more is decided in a worker thread and denied when it is
    not decided within `decision_timeout` seconds, and logged in another; smaller ones are
    decided and logged on the event loop.
    """
    metrics = metrics or ServiceMetrics()
    state.listeners.append(metrics.reloaded)

    deadlines = _BodyDeadlines(body_timeout)
    # Two threads: large calls decide beside the loop, not beside each other (the GIL shares one core).
    deciders = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="policyengine-decide")
    # Logging a large call (redaction, JSON) takes as long as deciding it: 1.2 s for 1 MiB of card
    # numbers, which on the loop held every other client's answer as long. One thread writes them.
    loggers = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="policyengine-log")

    async def refuse(send: Send, error: BadRequest) -> None:
        metrics.rejected.labels(str(error.status)).inc()
        await _send_json(send, error.status, _encode({"error": error.reason}), error.headers)

    def record(answer: Evaluation, body: Mapping[str, Any], call_id: str, snapshot: Snapshot, result: Any) -> None:
        if decision_log is None and otel is None:
            return
        try:
            entry = decision_record(
                answer,
                name=body["name"],
                arguments=body["arguments"],
                call_id=call_id,
                agent=body.get("agent") or "agent",
                cwd=body.get("cwd") if body.get("cwd") is not None else snapshot.registry.cwd,
                result=result,
                session_id=body.get("session_id") or None,
                labels=_labels_held(snapshot, body.get("session_id")),
            )
            entry["pack_digest"] = snapshot.digest
            if otel is not None:
                # The decision record as an OpenTelemetry span and log (never its arguments: audit/_otel.py).
                otel({**entry, "front_end": "service"})
            if decision_log is None:
                return
            before = decision_log.failures
            decision_log.write(entry)
            if decision_log.failures != before:
                metrics.log_failures.inc()
        except Exception:  # the decision stands; a log that cannot be written is counted and said
            metrics.log_failures.inc()
            log.exception("policyengine serve: could not log the decision on call %s", call_id)

    async def answer(scope: Scope, receive: Receive, send: Send, endpoint: str) -> None:
        """POST /v1/decide and /v1/review, straight on ASGI: the request path is the service's budget."""
        snapshot = state.current  # taken once: this request decides on it whatever reloads meanwhile
        reviewing = endpoint == "review"
        try:
            raw = await _read_body(scope, receive, max_body_bytes, deadlines)
            body = _parse(raw, _REVIEW_KEYS if reviewing else _DECIDE_KEYS, reviewing)
        except BadRequest as error:
            await refuse(send, error)
            return
        started = time.perf_counter()
        call_id = body.get("call_id") or new_call_id()
        result = body.get("result") if reviewing else None
        aside = (deciders, decision_timeout) if len(raw) >= offload_bytes else None
        evaluation = await _evaluate(snapshot, body, call_id, result, aside)
        try:
            fields = _fields(evaluation, snapshot, call_id, reviewing)
            data = _encode(fields)
        except Exception as error:  # an answer json cannot write (a value _evaluate let through): deny, never a 500
            log.exception("policyengine serve: the answer to call %s could not be written", call_id)
            reason = (
                f"Denied: the policy service could not write its answer ({type(error).__name__}); the call is refused."
            )
            evaluation = _closed(Evaluation(Verdict.DENY, None, SERVICE, reason), result)
            fields = _fields(evaluation, snapshot, call_id, reviewing)
            data = _encode(fields)
        if reviewing:
            # The rule that shaped the result: the one that blocked or rewrote last, else the pre-execute rule.
            outcome, rule = fields["post"], fields["rewrites"][-1] if fields["rewrites"] else fields["rule"]
        else:
            outcome, rule = fields["decision"], fields["rule"]
        metrics.tally.decided(endpoint, outcome, rule or "", time.perf_counter() - started)
        if aside is None:
            record(evaluation, body, call_id, snapshot, result)
        elif decision_log is not None or otel is not None:
            # Awaited before the answer goes out, as on the loop: an answered decision is always logged.
            await asyncio.get_running_loop().run_in_executor(
                loggers, record, evaluation, body, call_id, snapshot, result
            )
        await _send_json(send, 200, data)

    async def packs(_request: Request) -> Response:
        snapshot = state.current
        listed = [
            {"name": p.name, "version": p.version, "digest": p.digest, "path": str(p.path), "rules": len(p.rules)}
            for p in snapshot.packs
        ]
        return JSONResponse({"pack_digest": snapshot.digest, "packs": listed})

    async def healthz(_request: Request) -> Response:
        snapshot = state.current
        return JSONResponse(
            {
                "ok": True,
                "pack_digest": snapshot.digest,
                "digests": {p.name: p.digest for p in snapshot.packs},
                "loaded_at": snapshot.loaded_at,
                "reloads": state.reloads,
                "reload_failures": state.failures,
                "reload_error": state.last_error,
            }
        )

    async def metrics_text(_request: Request) -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    async def openapi(_request: Request) -> Response:
        return JSONResponse(OPENAPI)

    async def watch(wake: asyncio.Event) -> None:
        """Reload when a pack file changes, on the poll beat or at once on SIGHUP; never dies."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(reload_interval):
                    await wake.wait()
            hup = wake.is_set()
            wake.clear()
            try:
                if poll is not None:
                    await poll()
                if hup or await asyncio.to_thread(state.changed):
                    await state.reload_async()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("policyengine serve: the reload watcher failed; it tries again on the next beat")

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        hup = handle_sighup and hasattr(signal, "SIGHUP") and threading.current_thread() is threading.main_thread()
        if hup:
            loop.add_signal_handler(signal.SIGHUP, wake.set)
        watcher = asyncio.create_task(watch(wake)) if reload_interval is not None or hup else None
        try:
            yield
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            if hup:
                loop.remove_signal_handler(signal.SIGHUP)
            await deadlines.stop()
            deciders.shutdown(wait=False, cancel_futures=True)
            loggers.shutdown(wait=True)  # every answered decision's line is written before the log closes
            if decision_log is not None:
                decision_log.close()

    app = Starlette(
        routes=[
            Route("/v1/packs", packs, methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics_text, methods=["GET"]),
            Route("/openapi.json", openapi, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    hot = {"/v1/decide": "decide", "/v1/review": "review"}

    async def service(scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = hot.get(scope["path"]) if scope["type"] == "http" else None
        if endpoint is None:
            await app(scope, receive, send)
        elif scope["method"] == "POST":
            await answer(scope, receive, send, endpoint)
        else:
            metrics.rejected.labels("405").inc()
            await _send_json(send, 405, _encode({"error": f"{endpoint} takes POST"}), {"Allow": "POST"})

    if token is not None:
        return _BearerAuth(service, token, metrics)
    return service
