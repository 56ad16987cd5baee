"""Uvicorn's HTTP/1.1 protocols with a deadline on the request head: a connection that sends none is closed.

Uvicorn times out an idle connection only after a response (`--keep-alive-timeout`); a connection
that never completes a request head stays open for good, and `--max-connections` of them make the
service answer 503 to everyone: a denial of service any local process could mount (measured:
a connection with half a head, or none, was still open after 24 s). Here every connection waiting
for a head (just opened, or between two requests) must complete one within `header_timeout`
seconds, or it is closed. One task per event loop sweeps the waiting connections every quarter of
the timeout (at most 1 s), so a request pays a dict entry, not a timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

__all__ = ["DEFAULT_HEADER_TIMEOUT", "HTTP_PARSERS", "protocol_class"]

DEFAULT_HEADER_TIMEOUT = 10.0
HTTP_PARSERS = ("auto", "httptools", "h11")


class _Waiting:
    """The connections waiting for a request head, and when each must have one; swept by one task."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.since: dict[Any, tuple[float, Any]] = {}  # protocol -> (deadline, the cycle it waited after)
        self.sweeper: asyncio.Task[None] | None = None

    def wait(self, protocol: Any) -> None:
        """`protocol` waits for a head from now on."""
        self.since[protocol] = (time.monotonic() + self.timeout, protocol.cycle)
        if self.sweeper is None or self.sweeper.done():
            self.sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        beat = min(1.0, self.timeout / 4)
        while self.since:
            await asyncio.sleep(beat)
            now = time.monotonic()
            late = [p for p, (deadline, _cycle) in self.since.items() if deadline <= now]
            for protocol in late:
                _deadline, cycle = self.since.pop(protocol)
                current = protocol.cycle
                # Close only a connection with no request in progress that has not begun a new one since.
                if current is cycle and (current is None or current.response_complete):
                    with contextlib.suppress(Exception):
                        protocol.transport.close()


def _parser(http: str) -> type[asyncio.Protocol]:
    """Uvicorn's protocol class for `http` (auto: httptools when installed, else h11)."""
    if http not in HTTP_PARSERS:
        raise ValueError(f"unknown HTTP parser {http!r}; expected one of {', '.join(HTTP_PARSERS)}")
    if http in ("auto", "httptools"):
        try:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
        except ImportError:
            if http == "httptools":
                raise
        else:
            return HttpToolsProtocol
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return H11Protocol


def protocol_class(http: str = "auto", header_timeout: float = DEFAULT_HEADER_TIMEOUT) -> type[asyncio.Protocol]:
    """Uvicorn's protocol for `http`, closing connections that send no request head within `header_timeout`."""
    base: Any = _parser(http)
    waiting = _Waiting(header_timeout)

    class HeadDeadline(base):  # type: ignore[misc]
        """`base`, with the head deadline (uvicorn's `cycle` is the request whose head came last)."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            waiting.wait(self)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            entry = waiting.since.get(self)
            if entry is not None and self.cycle is not entry[1]:
                del waiting.since[self]  # a head came: the request's own limits take over

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                waiting.wait(self)

        def connection_lost(self, exc: Exception | None) -> None:
            waiting.since.pop(self, None)
            super().connection_lost(exc)

    HeadDeadline.__name__ = HeadDeadline.__qualname__ = f"HeadDeadline{base.__name__}"
    return HeadDeadline
