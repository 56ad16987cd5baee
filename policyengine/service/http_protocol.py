"""Uvicorn's HTTP/1.1 protocols with a deadline on the request head: a connection that sends none is closed.

Uvicorn times out an idle connection only after a response (`--keep-alive-timeout`); a connection
that never completes a request head stays open for good, and `--max-connections` of them make the
service answer 503 to everyone: a denial of service any local process could mount (measured:
a connection with half a head, or none, was still open after 24 s). Here every connection waiting
for a head (just opened, or between two requests) must complete one within `header_timeout`
seconds, or it is closed; one sweeper (`deadlines.py`) watches them all. And a response's head
and body leave in one `send` (`_OnePass`), not two.
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


class _OnePass:
    """A connection's transport that sends a response's head and body with one `send`.

    Uvicorn writes a response's head and then its body, each `write` a `send` on the socket at
    once, so every answer crossed loopback as two segments and the sender paid for delivering
    each (~9% of serve's CPU a decision, benchmarks/README.md). Here a write is held until the
    next one, which goes out joined to it, or until the loop's next pass; `close` sends what is
    held first, `abort` drops it. Order is kept: every write of the connection, the protocol's
    own included, goes through here. Everything else is the transport's.
    """

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._held: bytes | None = None
        self._loop = asyncio.get_running_loop()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Hold `data`, or send it joined to what is held."""
        if not data:
            return
        if self._held is None:
            self._held = bytes(data)
            self._loop.call_soon(self._send)  # a lone write waits one pass at most
        else:
            held, self._held = self._held, None
            self._transport.write(held + bytes(data))

    def _send(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        """Send what is held, then close."""
        self._send()
        self._transport.close()

    def abort(self) -> None:
        """Drop what is held and abort."""
        self._held = None
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


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


def protocol_class(
    http: str = "auto", header_timeout: float = DEFAULT_HEADER_TIMEOUT, one_send: bool = True
) -> type[asyncio.Protocol]:
    """Uvicorn's protocol for `http`, closing connections that send no request head within `header_timeout`.

    With `one_send`, a response's head and body leave in one `send` (`_OnePass`).
    """
    base: Any = _parser(http)
    waiting: Deadlines[Any] = Deadlines(header_timeout, _close_if_idle)

    class HeadDeadline(base):  # type: ignore[misc]
        """`base`, with the head deadline (uvicorn's `cycle` is the request whose head came last)."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if one_send:
                self.transport = _OnePass(transport)  # reading and flow control keep the transport itself
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
