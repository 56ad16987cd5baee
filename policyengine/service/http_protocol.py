"""Uvicorn's HTTP/1.1 protocols with a deadline on the request head: a connection that sends none is closed.

Uvicorn times out an idle connection only after a response (`--keep-alive-timeout`); a connection
that never completes a request head stays open for good, and `--max-connections` of them make the
service answer 503 to everyone: a denial of service any local process could mount (measured:
a connection with half a head, or none, was still open after 24 s). Here every connection waiting
for a head (just opened, or between two requests) must complete one within `header_timeout`
seconds, or it is closed; one sweeper (`deadlines.py`) watches them all.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from policyengine.service.deadlines import Deadlines

__all__ = ["DEFAULT_HEADER_TIMEOUT", "HTTP_PARSERS", "protocol_class"]

DEFAULT_HEADER_TIMEOUT = 10.0
HTTP_PARSERS = ("auto", "httptools", "h11")


def _close_if_idle(protocol: Any, cycle: Any) -> None:
    """Close a connection with no request in progress that has not begun a new one since it began to wait."""
    current = protocol.cycle
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
    waiting: Deadlines[Any] = Deadlines(header_timeout, _close_if_idle)

    class HeadDeadline(base):  # type: ignore[misc]
        """`base`, with the head deadline (uvicorn's `cycle` is the request whose head came last)."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            waiting.start(self, self.cycle)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if waiting.waits(self) and self.cycle is not waiting.note(self):
                waiting.end(self)  # a head came: the request's own limits take over

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                waiting.start(self, self.cycle)

        def connection_lost(self, exc: Exception | None) -> None:
            waiting.end(self)
            super().connection_lost(exc)

    HeadDeadline.__name__ = HeadDeadline.__qualname__ = f"HeadDeadline{base.__name__}"
    return HeadDeadline
