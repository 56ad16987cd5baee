"""The decision service: packs over HTTP on Starlette (`create_app`), as `policyengine dry-run` decides.

`POST /v1/decide` answers what pre-execute and the guards do with a call; `POST /v1/review`
what post-execute makes of its result. Every answer carries `pack_digest`, the digest of the
installation that decided it: a request takes the current snapshot once, when it starts, so a
reload in the middle never mixes two policies. Anything that goes wrong while deciding denies
(fails closed); nothing a client sends reaches a 500. A request's `session_id` names the agent's
session: a decide records the call in it, a review records its result under the decision the
session holds (`review_recorded`), and a session store that fails denies or blocks.

`create_app` assembles the parts: requests.py (reading and parsing), deciding.py (the
evaluation and the answer's fields), routes.py (the endpoints), auth.py (the bearer token),
metrics.py, log_writer.py (the decision log's group commit), reloading.py (the watcher) and
openapi.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from policyengine.service.auth import BearerAuth
from policyengine.service.decision_log import DecisionLog
from policyengine.service.log_writer import DEFAULT_BATCH
from policyengine.service.metrics import LATENCY_BUCKETS, ServiceMetrics
from policyengine.service.openapi import OPENAPI
from policyengine.service.packs_state import PacksState
from policyengine.service.reloading import watch
from policyengine.service.requests import encode, send_json
from policyengine.service.routes import DecisionEndpoints, InfoEndpoints

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_DECISION_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "LATENCY_BUCKETS",
    "METRICS_SAVE_INTERVAL",
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
# How often a worker writes its metrics for the others' scrapes (with several workers).
METRICS_SAVE_INTERVAL = 1.0


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
    log_batch: int = DEFAULT_BATCH,
    log_interval: float = 0.0,
    metrics_share: Path | None = None,
    otel: Callable[[Mapping[str, Any]], None] | None = None,
) -> ASGIApp:
    """The decision service over `state`'s packs.

    `reload_interval` (seconds; None: never) is how often the pack folders are polled for
    changes, and `poll` is awaited on the same beat (a bundle source, say); SIGHUP reloads at
    once when the app runs on the main thread. `decision_log` is written by a batching writer
    (`log_batch` records at most per write, `log_interval` seconds to let a batch fill) and closed
    at shutdown, after every queued record is written. A call whose body has `offload_bytes` or
    more is decided in a worker thread and denied when it is not decided within
    `decision_timeout` seconds, and logged in another. `metrics_share` is the folder where the
    workers of one service keep their metrics, summed at every scrape.
    """
    metrics = metrics or ServiceMetrics(share=metrics_share)
    state.listeners.append(metrics.reloaded)
    decisions = DecisionEndpoints(
        state,
        metrics,
        decision_log=decision_log,
        max_body_bytes=max_body_bytes,
        body_timeout=body_timeout,
        decision_timeout=decision_timeout,
        offload_bytes=offload_bytes,
        otel=otel,
    )
    info = InfoEndpoints(state, metrics)

    async def save_metrics() -> None:
        while True:
            await asyncio.sleep(METRICS_SAVE_INTERVAL)
            metrics.save()

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        decisions.start(loop, log_batch, log_interval)
        hup = handle_sighup and hasattr(signal, "SIGHUP") and threading.current_thread() is threading.main_thread()
        if hup:
            loop.add_signal_handler(signal.SIGHUP, wake.set)
        tasks = []
        if reload_interval is not None or hup:
            tasks.append(asyncio.create_task(watch(state, wake, reload_interval, poll)))
        if metrics.share is not None:
            metrics.save()
            tasks.append(asyncio.create_task(save_metrics()))
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if hup:
                loop.remove_signal_handler(signal.SIGHUP)
            await decisions.stop()
            metrics.save()  # the last counts, this worker's log failures included

    app = Starlette(
        routes=[
            Route("/v1/packs", info.packs, methods=["GET"]),
            Route("/healthz", info.healthz, methods=["GET"]),
            Route("/metrics", info.metrics_text, methods=["GET"]),
            Route("/openapi.json", info.openapi, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    hot = {"/v1/decide": "decide", "/v1/review": "review"}

    async def service(scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = hot.get(scope["path"]) if scope["type"] == "http" else None
        if endpoint is None:
            await app(scope, receive, send)
        elif scope["method"] == "POST":
            await decisions.answer(scope, receive, send, endpoint)
        else:
            metrics.rejected("405")
            await send_json(send, 405, encode({"error": f"{endpoint} takes POST"}), {"Allow": "POST"})

    if token is not None:
        return BearerAuth(service, token, metrics)
    return service
