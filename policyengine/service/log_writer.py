"""The decision log's writer: group commit on the event loop, each answer sent once its record is written.

A request hands its record to `LogWriter.submit` and awaits the future it gets back. The first
record of a group schedules one write on the loop (`call_soon`, or `call_later(interval)` to let
the group fill); every record submitted until that write runs joins it, up to `batch` a write,
and the write (redaction, JSON, one `write` or one SQLite transaction for the lot) resolves their
futures. Under load a loop pass decides many calls, so a write carries many records; at rest a
record is written at once. An answered decision is always logged (the answer waits for the
write); a record that cannot be written is counted and the decision stands.

Why on the loop and not in a thread of its own (as it was): the redaction is Python and RE2,
and RE2 lets go of the GIL on every search, so a writer thread and the loop handed the GIL to
each other ~50 times a group: 1.8 context switches a decision, and 214-299 us of CPU a decision
against 151-196 us with the same groups written on the loop (the app driven in-process by 64
clients, benchmarks/README.md). The work is the same; it now runs between the loop's passes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from policyengine.service.decision_log import DecisionLog

log = logging.getLogger("policyengine.service")

__all__ = ["DEFAULT_BATCH", "LogWriter"]

DEFAULT_BATCH = 256


class LogWriter:
    """Writes `sink` in groups on `loop`: `submit` (on the loop) queues, `close` (at shutdown) drains everything."""

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
        if interval < 0:
            raise ValueError(f"interval must be 0 or more seconds, got {interval}")
        self.sink = sink
        self.loop = loop
        self.batch = batch
        self.interval = interval
        self.failed = failed
        self.batches = 0
        self._queue: list[tuple[Mapping[str, Any], asyncio.Future[None]]] = []
        self._pending: asyncio.Handle | asyncio.TimerHandle | None = None

    def submit(self, record: Mapping[str, Any]) -> asyncio.Future[None]:
        """Queue `record`; the future resolves once it is written (or counted as failed). On the loop only."""
        future = self.loop.create_future()
        self._queue.append((record, future))
        if self._pending is None:
            if self.interval > 0:
                self._pending = self.loop.call_later(self.interval, self._flush)
            else:
                self._pending = self.loop.call_soon(self._flush)
        elif self.interval > 0 and len(self._queue) >= self.batch and isinstance(self._pending, asyncio.TimerHandle):
            self._pending.cancel()  # a full group goes now, not at the timer
            self._pending = self.loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        """Write everything queued, `batch` records a write, and wake their requests."""
        self._pending = None
        queue, self._queue = self._queue, []
        for start in range(0, len(queue), self.batch):
            taken = queue[start : start + self.batch]
            self._write([record for record, _ in taken])
            self.batches += 1
            for _, future in taken:
                if not future.done():  # a request whose client went away was cancelled: nothing to wake
                    future.set_result(None)

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
        """Write everything queued and close the sink (at shutdown, once no request is left)."""
        if self._pending is not None:
            self._pending.cancel()
        self._flush()
        self.sink.close()
