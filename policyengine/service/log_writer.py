"""The decision log's writer: group commit off the event loop, each answer sent once its record is written.

The event loop hands a record to `LogWriter.submit` and awaits the future it gets back; one
thread takes every record queued (up to `batch` at a time) and writes them with one
`write_many` (redaction, JSON, one write or one SQLite transaction for the lot), then resolves
their futures with one call into the loop. While it writes a batch the next one gathers, so under
load a write carries many records and at rest a record is written at once; `interval` (seconds)
makes the writer wait that long for a batch to fill before writing it. An answered decision is
always logged (the answer waits for the write), as when the loop wrote each record itself; a
record that cannot be written is counted and the decision stands.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from policyengine.service.decision_log import DecisionLog

log = logging.getLogger("policyengine.service")

__all__ = ["DEFAULT_BATCH", "LogWriter"]

DEFAULT_BATCH = 256


class LogWriter:
    """One thread writing `sink` in batches; `submit` on the event loop, `close` at shutdown drains everything."""

    def __init__(
        self,
        sink: DecisionLog,
        loop: asyncio.AbstractEventLoop,
        *,
        batch: int = DEFAULT_BATCH,
        interval: float = 0.0,
        failed: Callable[[int], None] | None = None,
    ) -> None:
        if batch < 1:
            raise ValueError(f"batch must be 1 or more, got {batch}")
        self.sink = sink
        self.loop = loop
        self.batch = batch
        self.interval = interval
        self.failed = failed
        self.batches = 0
        # deque.append and popleft are atomic: the loop appends, the thread pops, no lock between them.
        self._queue: collections.deque[tuple[Mapping[str, Any], asyncio.Future[None] | None]] = collections.deque()
        self._wake = threading.Event()
        self._idle = False
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="policyengine-log-writer", daemon=True)
        self._thread.start()

    def submit(self, record: Mapping[str, Any]) -> asyncio.Future[None]:
        """Queue `record`; the future resolves once it is written (or counted as failed). On the loop only."""
        future = self.loop.create_future()
        self._queue.append((record, future))
        if self._idle:  # wake the writer only when it sleeps: one Event.set per batch, not per record
            self._idle = False
            self._wake.set()
        return future

    def _run(self) -> None:
        queue = self._queue
        while True:
            if not queue:
                if self._closing:
                    return
                self._idle = True
                if not queue and not self._closing:  # checked after `_idle`: a record queued meanwhile wakes us
                    self._wake.wait()
                self._wake.clear()
                self._idle = False
                continue
            if self.interval > 0 and len(queue) < self.batch and not self._closing:
                self._wake.wait(self.interval)  # let the batch fill (close wakes it at once)
                self._wake.clear()
            taken = [queue.popleft() for _ in range(min(self.batch, len(queue)))]
            self._write([record for record, _ in taken])
            self.batches += 1
            futures = [future for _, future in taken if future is not None]
            if futures:
                with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits them any more
                    self.loop.call_soon_threadsafe(_resolve, futures)

    def _write(self, records: list[Mapping[str, Any]]) -> None:
        before = self.sink.failures
        try:
            self.sink.write_many(records)
        except Exception:  # a sink must not raise; one that does has failed every record of the batch
            log.exception("policyengine serve: the decision log raised while writing %d records", len(records))
            self.sink.failures += len(records)
        failures = self.sink.failures - before
        if failures and self.failed is not None:
            self.failed(failures)

    async def close(self) -> None:
        """Write everything queued, stop the thread, close the sink (at shutdown, once no request is left)."""
        self._closing = True
        self._wake.set()
        await asyncio.to_thread(self._thread.join)
        self.sink.close()


def _resolve(futures: list[asyncio.Future[None]]) -> None:
    """Wake the requests whose records were written (on the loop)."""
    for future in futures:
        if not future.done():  # a request whose client went away was cancelled: nothing to wake
            future.set_result(None)
