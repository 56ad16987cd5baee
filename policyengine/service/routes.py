"""The service's endpoints: `/v1/decide` and `/v1/review` on plain ASGI (the request path is the budget), the rest.

A decision request takes the current snapshot once, when it starts, so a reload in the middle
never mixes two policies; its record goes to the decision log's writer and the answer is sent
once the record is written (a large call's record is written by a thread of its own).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from policyengine.enforce.evaluate import Evaluation, Verdict
from policyengine.service.deciding import SERVICE, answer_fields, closed, evaluate_request, labels_held
from policyengine.service.decision_log import DecisionLog, decision_record
from policyengine.service.log_writer import LogWriter
from policyengine.service.metrics import ServiceMetrics
from policyengine.service.openapi import OPENAPI
from policyengine.service.packs_state import PacksState, ServedPacks
from policyengine.service.requests import (
    DECIDE_KEYS,
    REVIEW_KEYS,
    BadRequest,
    BodyDeadlines,
    encode,
    parse,
    read_body,
    send_json,
)
from policyengine.values.call import new_call_id

log = logging.getLogger("policyengine.service")

__all__ = ["DecisionEndpoints", "InfoEndpoints", "served_record"]


def served_record(
    answer: Evaluation, body: Mapping[str, Any], call_id: str, snapshot: ServedPacks, result: Any
) -> dict[str, Any]:
    """The decision log's record of a served call (built by `decision_record`, with the snapshot's digest)."""
    return decision_record(
        answer,
        name=body["name"],
        arguments=body["arguments"],
        call_id=call_id,
        agent=body.get("agent") or "agent",
        cwd=body.get("cwd") if body.get("cwd") is not None else snapshot.registry.cwd,
        result=result,
        session_id=body.get("session_id") or None,
        labels=labels_held(snapshot, body.get("session_id")),
        pack_digest=snapshot.digest,
    )


class DecisionEndpoints:
    """POST /v1/decide and /v1/review: read, parse, decide, count, log, answer."""

    def __init__(
        self,
        state: PacksState,
        metrics: ServiceMetrics,
        *,
        decision_log: DecisionLog | None,
        max_body_bytes: int,
        body_timeout: float,
        decision_timeout: float,
        offload_bytes: int,
        otel: Callable[[Mapping[str, Any]], None] | None = None,
    ) -> None:
        self.state = state
        self.otel = otel  # the decision record as an OpenTelemetry span and log (never its arguments: audit/_otel.py)
        self.metrics = metrics
        self.decision_log = decision_log
        self.writer: LogWriter | None = None  # started with the event loop (lifespan)
        self.max_body_bytes = max_body_bytes
        self.decision_timeout = decision_timeout
        self.offload_bytes = offload_bytes
        self.deadlines = BodyDeadlines(body_timeout)
        # Two threads: large calls decide beside the loop, not beside each other (the GIL shares one core).
        self.deciders = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="policyengine-decide")
        # Logging a large call (redaction, JSON) takes as long as deciding it: 1.2 s for 1 MiB of card
        # numbers, which held every small call's batch as long. One thread of its own writes them.
        self.loggers = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="policyengine-log")

    def start(self, loop: asyncio.AbstractEventLoop, log_batch: int, log_interval: float) -> None:
        """Start the log writer on `loop` (at startup)."""
        if self.decision_log is not None:
            self.writer = LogWriter(
                self.decision_log, loop, batch=log_batch, interval=log_interval, failed=self.metrics.log_failed
            )

    async def stop(self) -> None:
        """Stop the deadlines and threads; every answered decision's record is written before the log closes."""
        await self.deadlines.stop()
        self.deciders.shutdown(wait=False, cancel_futures=True)
        await asyncio.to_thread(self.loggers.shutdown, True)
        if self.writer is not None:
            await self.writer.close()
        elif self.decision_log is not None:
            self.decision_log.close()

    async def refuse(self, send: Any, error: BadRequest) -> None:
        """Answer a request refused before deciding."""
        self.metrics.rejected(str(error.status))
        await send_json(send, error.status, encode({"error": error.reason}), error.headers)

    def record_now(
        self, answer: Evaluation, body: Mapping[str, Any], call_id: str, snapshot: ServedPacks, result: Any
    ) -> None:
        """Build and write one record in this thread (a large call's, in the loggers' thread)."""
        assert self.decision_log is not None
        try:
            entry = served_record(answer, body, call_id, snapshot, result)
            self.export(entry)
            before = self.decision_log.failures
            self.decision_log.write(entry)
            if self.decision_log.failures != before:
                self.metrics.log_failed()
        except Exception:  # the decision stands; a log that cannot be written is counted and said
            self.metrics.log_failed()
            log.exception("policyengine serve: could not log the decision on call %s", call_id)

    async def record(
        self, answer: Evaluation, body: Mapping[str, Any], call_id: str, snapshot: ServedPacks, result: Any
    ) -> None:
        """Log one decision through the writer and wait until it is written (or counted as failed)."""
        assert self.writer is not None
        try:
            entry = served_record(answer, body, call_id, snapshot, result)
        except Exception:  # the decision stands; a record that cannot be built is counted and said
            self.metrics.log_failed()
            log.exception("policyengine serve: could not log the decision on call %s", call_id)
            return
        self.export(entry)
        await self.writer.submit(entry)

    def export(self, entry: Mapping[str, Any]) -> None:
        """The record to OpenTelemetry, when it is on; an exporter that fails is said, the decision stands."""
        if self.otel is None:
            return
        try:
            self.otel({**entry, "front_end": "service"})
        except Exception:
            log.exception("policyengine serve: could not export the decision on call %s", entry.get("call_id"))

    async def answer(self, scope: Any, receive: Any, send: Any, endpoint: str) -> None:
        """One decide or review request, straight on ASGI."""
        snapshot = self.state.current  # taken once: this request decides on it whatever reloads meanwhile
        reviewing = endpoint == "review"
        try:
            raw = await read_body(scope, receive, self.max_body_bytes, self.deadlines)
            body = parse(raw, REVIEW_KEYS if reviewing else DECIDE_KEYS, reviewing)
        except BadRequest as error:
            await self.refuse(send, error)
            return
        started = time.perf_counter()
        call_id = body.get("call_id") or new_call_id()
        result = body.get("result") if reviewing else None
        aside = (self.deciders, self.decision_timeout) if len(raw) >= self.offload_bytes else None
        evaluation = await evaluate_request(snapshot, body, call_id, result, aside)
        try:
            fields = answer_fields(evaluation, snapshot, call_id, reviewing)
            data = encode(fields)
        except Exception as error:  # an answer json cannot write (a value let through): deny, never a 500
            log.exception("policyengine serve: the answer to call %s could not be written", call_id)
            reason = (
                f"Denied: the policy service could not write its answer ({type(error).__name__}); the call is refused."
            )
            evaluation = closed(Evaluation(Verdict.DENY, None, SERVICE, reason), result)
            fields = answer_fields(evaluation, snapshot, call_id, reviewing)
            data = encode(fields)
        if reviewing:
            # The rule that shaped the result: the one that blocked or rewrote last, else the pre-execute rule.
            outcome, rule = fields["post"], fields["rewrites"][-1] if fields["rewrites"] else fields["rule"]
        else:
            outcome, rule = fields["decision"], fields["rule"]
        self.metrics.tally.decided(endpoint, outcome, rule or "", time.perf_counter() - started)
        if self.decision_log is not None:
            # Awaited before the answer goes out: an answered decision is always logged.
            if aside is None and self.writer is not None:
                await self.record(evaluation, body, call_id, snapshot, result)
            else:
                await asyncio.get_running_loop().run_in_executor(
                    self.loggers, self.record_now, evaluation, body, call_id, snapshot, result
                )
        elif self.otel is not None:
            try:
                self.export(served_record(evaluation, body, call_id, snapshot, result))
            except Exception:  # the decision stands
                log.exception("policyengine serve: could not export the decision on call %s", call_id)
        await send_json(send, 200, data)


class InfoEndpoints:
    """GET /v1/packs, /healthz, /metrics and /openapi.json (Starlette routes)."""

    def __init__(self, state: PacksState, metrics: ServiceMetrics) -> None:
        self.state = state
        self.metrics = metrics

    async def packs(self, _request: Request) -> Response:
        """The packs deciding now."""
        snapshot = self.state.current
        listed = [
            {"name": p.name, "version": p.version, "digest": p.digest, "path": str(p.path), "rules": len(p.rules)}
            for p in snapshot.packs
        ]
        return JSONResponse({"pack_digest": snapshot.digest, "packs": listed})

    async def healthz(self, _request: Request) -> Response:
        """Liveness, the packs' digests, the reload counts and the last reload error."""
        snapshot = self.state.current
        return JSONResponse(
            {
                "ok": True,
                "pack_digest": snapshot.digest,
                "digests": {p.name: p.digest for p in snapshot.packs},
                "loaded_at": snapshot.loaded_at,
                "reloads": self.state.reloads,
                "reload_failures": self.state.failures,
                "reload_error": self.state.last_error,
                "pid": os.getpid(),  # which worker answered (serve --workers N)
            }
        )

    async def metrics_text(self, _request: Request) -> Response:
        """Prometheus text."""
        return Response(generate_latest(self.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    async def openapi(self, _request: Request) -> Response:
        """The OpenAPI document."""
        return JSONResponse(OPENAPI)
