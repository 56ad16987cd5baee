"""An MCP server that puts rule packs in front of an upstream MCP server's tools (`policyengine mcp-proxy`).

The proxy starts the upstream server as a subprocess, speaks MCP to it over its stdin/stdout as a
client, and serves the same tools over its own stdin/stdout. Every tools/call runs through
`Registry.call`: pre-execute and guards decide; `ask` is put to the person through MCP elicitation
to the proxy's client; the upstream call is the tool's body, under the packs' execute rules and
the proxy's own deadline; post-execute rules rewrite the result; an audit record is written.

The canonical value of a call (what post-execute rules read as `result.value`, and the audit
records) is the upstream's CallToolResult itself: `{content, structuredContent?, isError?}`, so a
redaction reaches both what the model reads and the structured result. The content blocks the
client receives are rendered from that value.

Sessions: the client connection is the session. The proxy makes a random session id when the
connection opens and passes it to every call's decision and review, so session rules see what
happened earlier on that connection (and nothing of another's); the store is `--sessions`.

docs/mcp-proxy.md is the user's guide.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from policyengine.audit import AuditRecorder
from policyengine.enforce.install import PolicyLayers
from policyengine.errors import DefinitionError, PolicyEngineError
from policyengine.runtime.approval import ApprovalAnswer, ApprovalRequest
from policyengine.runtime.registry import Registry
from policyengine.tools.catalog import tool_from_spec
from policyengine.tools.definition import ToolDefinition
from policyengine.tools.json_schema_validator import JsonSchemaValidator, compile_json_schema
from policyengine.values.decisions import SourceKind
from policyengine.values.frozen import thaw
from policyengine.values.results import Outcome, ToolResult

log = logging.getLogger("policyengine.mcp_proxy")

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024
DEFAULT_APPROVAL_TIMEOUT = 300.0
# The handshake and tools/list wait at least this long: a server may take seconds to start.
STARTUP_TIMEOUT = 30.0
# How long the upstream gets to exit once its stdin is closed, and again after SIGTERM.
EXIT_GRACE = 2.0
# How much of an oversized line is kept to find the id of the request it answers.
_HEAD = 512
# `off`: every tools/call goes through the SDK's request dispatch (slower; the fast path's reference).
FAST_PATH_ENV = "POLICYENGINE_MCP_FAST_PATH"
# The JSON-RPC error code the proxy's own transport gives a reply it refused for its size.
REPLY_TOO_LARGE = -32099
# A reply's id, when it is the first or second key of the message (every SDK writes it there).
_REPLY_ID = re.compile(rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')

# The MCP result every call's value is: the rules' `result.value`, the audit's `result.value`.
RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {"type": "array", "items": {"type": "object"}},
        "structuredContent": {"type": "object"},
        "isError": {"type": "boolean"},
    },
    "required": ["content"],
}
# Accepting the form is the approval: nothing needs to be filled in.
APPROVAL_FORM: dict[str, Any] = {"type": "object", "properties": {}}
_SHOWN_ARGUMENTS = 2000  # characters of a call's arguments an approval question shows

# The request being served, so the approval service elicits on the session that made the call.
_REQUEST: ContextVar[ServerRequestContext[Any, Any] | None] = ContextVar("policyengine_mcp_request", default=None)
# True while the proxy answers a tools/call itself (Proxy.claim): that request has no channel of its
# own in the SDK, so questions to the person go on the connection's channel.
_ON_CONNECTION: ContextVar[bool] = ContextVar("policyengine_mcp_on_connection", default=False)


class UpstreamStartError(PolicyEngineError):
    """The upstream MCP server could not be started or did not complete the MCP handshake."""


class UpstreamFailure(Exception):
    """The upstream could not answer a call (it exited, broke the protocol, or answered too much)."""


class MalformedLine(Exception):
    """A line on a JSON-RPC stream that is no message, or too long to be read."""


class ApprovalUnavailable(Exception):
    """Nobody can be asked: the client cannot elicit, or no MCP request is being served."""


@dataclass(frozen=True)
class ProxyOptions:
    """What `policyengine mcp-proxy` was told."""

    command: tuple[str, ...]
    packs: tuple[str, ...]
    audit: str | None = None
    save_tools: str | None = None
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    approval_timeout: float = DEFAULT_APPROVAL_TIMEOUT
    cwd: str | None = None
    sessions: str | None = None  # a store spec (sessions.open_store); None: this process's memory
    otel: bool = False  # export each audit record as an OpenTelemetry span and log record (OTEL_* environment)


# -- the upstream connection --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Oversized:
    """A line longer than the limit: its first bytes (to find its request id) and its size."""

    head: bytes
    size: int


class _Lines:
    """Newline-delimited messages out of byte chunks; a line over the limit is skipped, never held."""

    __slots__ = ("_buffer", "_head", "_size", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._head: bytes | None = None  # the start of an oversized line being skipped
        self._size = 0

    def feed(self, chunk: bytes) -> list[bytes | _Oversized]:
        """The lines `chunk` completes (blank lines dropped)."""
        out: list[bytes | _Oversized] = []
        pos = 0
        while pos < len(chunk):
            newline = chunk.find(b"\n", pos)
            end = len(chunk) if newline < 0 else newline
            if self._head is not None:
                self._size += end - pos
            else:
                self._buffer += chunk[pos:end]
                if len(self._buffer) > self.limit:
                    self._head, self._size = bytes(self._buffer[:_HEAD]), len(self._buffer)
                    self._buffer.clear()
            if newline < 0:
                break
            pos = newline + 1
            if self._head is not None:
                out.append(_Oversized(self._head, self._size))
                self._head = None
            elif self._buffer and not self._buffer.isspace():
                out.append(bytes(self._buffer))
            self._buffer.clear()
        return out


class MessageReader:
    """JSON-RPC messages read straight off a byte stream, for a dispatcher to iterate.

    No task and no memory stream sit between the pipe and the dispatcher: each hop would cost an
    event-loop iteration per message. A line that is no JSON-RPC message, or is over the limit,
    arrives as an exception (the dispatcher hands it to its `on_stream_exception`), or as
    `on_oversized` makes it.
    """

    def __init__(
        self,
        stream: asyncio.StreamReader,
        limit: int,
        who: str,
        on_oversized: Callable[[_Oversized], SessionMessage | Exception] | None = None,
    ) -> None:
        self._stream = stream
        self._lines = _Lines(limit)
        self._who = who
        self._on_oversized = on_oversized
        self._ready: deque[SessionMessage | Exception] = deque()
        self.ended = anyio.Event()  # the other side closed its end (or exited)
        # Sees each message, in order, before the dispatcher does; True takes it off the stream.
        self.claim: Callable[[SessionMessage | Exception], bool] | None = None
        self.on_end: Callable[[], None] | None = None

    async def receive(self) -> SessionMessage | Exception:
        """The next message; anyio.EndOfStream once the other side closed its end."""
        ready = self._ready
        while not ready:
            if self.ended.is_set():
                raise anyio.EndOfStream
            try:
                chunk = await self._stream.read(1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self.ended.set()
                if self.on_end is not None:
                    self.on_end()
                continue
            claim = self.claim
            for line in self._lines.feed(chunk):
                message = self._oversized(line) if isinstance(line, _Oversized) else self._message(line)
                if claim is None or not claim(message):
                    ready.append(message)
        return ready.popleft()

    def _message(self, line: bytes) -> SessionMessage | Exception:
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError:
            shown = line[:120].decode("utf-8", "replace")
            return MalformedLine(f"{self._who} wrote a line that is not a JSON-RPC message: {shown!r}")

    def _oversized(self, line: _Oversized) -> SessionMessage | Exception:
        if self._on_oversized is not None:
            return self._on_oversized(line)
        return MalformedLine(f"{self._who} sent a message of {line.size:,} bytes, over the limit; it was dropped")

    def __aiter__(self) -> MessageReader:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Stop reading (the descriptor is closed by its owner)."""
        self.ended.set()
        self._ready.clear()

    async def __aenter__(self) -> MessageReader:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class MessageWriter:
    """JSON-RPC messages written straight to a byte stream, one line each, by whoever sends them.

    `StreamWriter.write` is synchronous, so concurrent senders never interleave inside a line, and
    `drain` only waits while the pipe is full.
    """

    def __init__(self, stream: asyncio.StreamWriter) -> None:
        self._stream = stream

    def write_line(self, data: bytes) -> None:
        """Queue one line of JSON (without its newline); anyio.BrokenResourceError once the other side is gone."""
        if self._stream.is_closing():
            raise anyio.BrokenResourceError
        try:
            self._stream.write(data + b"\n")
        except (ConnectionError, OSError) as error:
            raise anyio.BrokenResourceError from error

    async def drain(self) -> None:
        """Wait while the pipe is full (returns at once otherwise)."""
        try:
            await self._stream.drain()
        except (ConnectionError, OSError) as error:
            raise anyio.BrokenResourceError from error

    async def send(self, message: SessionMessage, /) -> None:
        """Write one message, waiting while the pipe is full."""
        self.write_line(message.message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8"))
        await self.drain()

    async def aclose(self) -> None:
        """Close the write end (the other side reads EOF)."""
        if not self._stream.is_closing():
            self._stream.close()

    async def __aenter__(self) -> MessageWriter:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _reply_too_large(limit: int) -> Callable[[_Oversized], SessionMessage | Exception]:
    """An error reply for the request an oversized line answers, or an exception if it names none."""

    def refuse(line: _Oversized) -> SessionMessage | Exception:
        what = f"the upstream's reply is {line.size:,} bytes, over the proxy's limit of {limit:,} (--max-result-bytes)"
        match = _REPLY_ID.match(line.head)
        if match is None:
            return MalformedLine(f"{what}, and it names no request id")
        request_id: int | str = json.loads(match.group(1))
        error = types.ErrorData(code=REPLY_TOO_LARGE, message=what)
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))

    return refuse


async def stop_process(process: asyncio.subprocess.Process) -> None:
    """Close the process's stdin, give it time to exit, then terminate and kill it."""
    if process.stdin is not None and not process.stdin.is_closing():
        process.stdin.close()
    for step in (None, process.terminate, process.kill):
        if step is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError, OSError):
                step()
        with anyio.move_on_after(EXIT_GRACE):
            await process.wait()
        if process.returncode is not None:
            return
    log.warning("mcp-proxy: the upstream MCP server (pid %d) would not exit; abandoning it", process.pid)


# The largest message the proxy's own client may send (tool arguments can carry whole files).
MAX_CLIENT_MESSAGE_BYTES = 64 * 1024 * 1024


def _is_stream(fd: int) -> bool:
    """Whether an event loop can watch fd (a pipe, socket or terminal; not a regular file)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@contextlib.asynccontextmanager
async def client_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The proxy's stdin and stdout as JSON-RPC message streams, read and written by the event loop.

    The SDK's stdio_server reads and writes through worker threads (three thread hops per call,
    most of what the proxy first added to a call's latency). This does the same on the event loop
    where the descriptors allow it (pipes, sockets, terminals) and falls back to stdio_server
    otherwise. As stdio_server does, fd 0 and fd 1 point elsewhere while it serves, so a stray
    print cannot corrupt the wire.
    """
    if not (_is_stream(0) and _is_stream(1)):
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.fdopen(os.dup(0), "rb", buffering=0), os.fdopen(os.dup(1), "wb", buffering=0)
    saved_in, saved_out = os.dup(0), os.dup(1)
    nowhere = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nowhere, 0)
    os.close(nowhere)
    os.dup2(2, 1)
    try:
        reader = asyncio.StreamReader(limit=1 << 20, loop=loop)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), wire_in
        )
        write_transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, wire_out)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        try:
            yield MessageReader(reader, MAX_CLIENT_MESSAGE_BYTES, "the client"), MessageWriter(writer)
        finally:
            read_transport.close()
            write_transport.close()
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


class _Gone(Exception):
    """The upstream's stdout ended while a call waited (it exited, or closed it)."""


class Upstream:
    """The upstream MCP server: its process, the client session to it, and the calls in flight.

    The handshake and tools/list go through the SDK's ClientSession. tools/call, the hot path, is
    written and matched here: its replies are taken off the stream before the SDK's dispatcher sees
    them, which saves the dispatcher's per-request streams, cancel scopes and tracing span.
    """

    def __init__(
        self,
        command: Sequence[str],
        process: asyncio.subprocess.Process,
        reader: MessageReader,
        writer: MessageWriter,
        dispatcher: JSONRPCDispatcher[Any],
        call_timeout: float,
    ) -> None:
        self.command = tuple(command)
        self.process = process
        self.reader = reader
        self.writer = writer
        self.dispatcher = dispatcher
        self.call_timeout = call_timeout
        self.session: ClientSession | None = None
        self.tools: list[dict[str, Any]] = []
        self._calls: dict[str, asyncio.Future[Any]] = {}
        self._next_id = 0
        dispatcher.on_stream_exception = self._broken
        reader.claim = self._claim
        reader.on_end = self._ended

    @property
    def name(self) -> str:
        """The upstream's own name (serverInfo), else its command."""
        info = self.session.initialize_result if self.session is not None else None
        return info.server_info.name if info is not None else os.path.basename(self.command[0])

    def _claim(self, message: SessionMessage | Exception) -> bool:
        """Take a reply to one of our tools/call requests off the stream; True if it was one.

        A line that is no message may have been a reply: every call in flight ends, before any later
        line can answer one of them.
        """
        if isinstance(message, Exception):
            self._fail_all(UpstreamFailure(f"{message} while this call was waiting for its reply"))
            return False  # the dispatcher logs it
        reply = message.message
        if not isinstance(reply, (types.JSONRPCResponse, types.JSONRPCError)) or not isinstance(reply.id, str):
            return False
        future = self._calls.get(reply.id)
        if future is None:
            return False
        if not future.done():
            if isinstance(reply, types.JSONRPCResponse):
                future.set_result(reply.result)
            elif reply.error.code == REPLY_TOO_LARGE:
                future.set_exception(UpstreamFailure(reply.error.message))
            else:
                error = reply.error
                future.set_exception(UpstreamFailure(f"the upstream answered with error {error.code}: {error.message}"))
        return True

    def _fail_all(self, error: Exception) -> None:
        for future in self._calls.values():
            if not future.done():
                future.set_exception(error)

    def _ended(self) -> None:
        self._fail_all(_Gone())

    async def _broken(self, error: Exception) -> None:
        """Say on stderr that the upstream wrote something that is no message (the calls it hit have ended)."""
        log.error("mcp-proxy: %s", error)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """tools/call on the upstream; its raw result, or UpstreamFailure / TimeoutError saying why not."""
        if self.reader.ended.is_set():
            raise UpstreamFailure(await self._gone())
        self._next_id += 1
        request_id = f"pe-{self._next_id}"
        request = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        try:
            line = json.dumps(request, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as error:
            raise UpstreamFailure(f"the arguments cannot be sent as JSON: {error}") from None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._calls[request_id] = future
        try:
            self.writer.write_line(line.encode("utf-8"))
            async with asyncio.timeout(self.call_timeout):
                await self.writer.drain()
                result = await future
        except _Gone:
            raise UpstreamFailure(await self._gone()) from None
        except anyio.BrokenResourceError:
            raise UpstreamFailure(await self._gone()) from None
        except TimeoutError:
            self._cancel(request_id, f"no answer within {self.call_timeout:g}s")
            raise TimeoutError(
                f"the upstream did not answer within {self.call_timeout:g}s (--call-timeout); the call was cancelled"
            ) from None
        except asyncio.CancelledError:
            self._cancel(request_id, "the call was cancelled (a deadline, or the client)")
            raise
        finally:
            del self._calls[request_id]
        if not isinstance(result, dict):
            raise UpstreamFailure("the upstream's reply to tools/call has no result object")
        return result

    def _cancel(self, request_id: str, reason: str) -> None:
        """Tell the upstream to stop working on a request nobody waits for any more (best effort)."""
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason},
        }
        with contextlib.suppress(anyio.BrokenResourceError):
            self.writer.write_line(json.dumps(note).encode("utf-8"))

    async def _gone(self) -> str:
        """Why the upstream cannot answer any more, with its exit code once it has one."""
        process = self.process
        with anyio.move_on_after(1.0):
            await process.wait()
        what = (
            f"has exited (exit code {process.returncode})"
            if process.returncode is not None
            else "closed its stdout and answers no more"
        )
        return (
            f"the upstream MCP server `{' '.join(self.command)}` {what}; the proxy does not restart it: "
            "restart the proxy (your MCP client restarts its server entry)"
        )

    async def list_tools(self, timeout: float) -> list[dict[str, Any]]:
        """Every tool the upstream lists (all pages), as raw MCP tool objects."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _page in range(1000):
            params = {"cursor": cursor} if cursor else None
            raw = await self.dispatcher.send_raw_request("tools/list", params, {"timeout": timeout})
            listed = raw.get("tools")
            if not isinstance(listed, list):
                raise UpstreamFailure("the upstream's tools/list result has no `tools` array")
            tools.extend(listed)
            cursor = raw.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools
        raise UpstreamFailure("the upstream's tools/list never ends (over 1,000 pages)")


@contextlib.asynccontextmanager
async def connect(options: ProxyOptions) -> AsyncIterator[Upstream]:
    """Start the upstream, complete the MCP handshake and list its tools; stop it on the way out."""
    command = list(options.command)
    shown = " ".join(command)
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,  # the upstream's log goes where the proxy's goes (the MCP client's log)
            cwd=options.cwd,
            env=dict(os.environ),  # what the MCP client gave the proxy (API keys...) is the upstream's too
            start_new_session=True,  # a terminal's Ctrl-C reaches the proxy, which stops the upstream in order
        )
    except OSError as error:
        raise UpstreamStartError(
            f"cannot start the upstream MCP server `{shown}`: {error.strerror or error}",
            hint="after `--` give the command that starts it, e.g. `-- npx -y @modelcontextprotocol/server-everything`",
        ) from None
    assert process.stdout is not None and process.stdin is not None
    limit = options.max_result_bytes
    reader = MessageReader(process.stdout, limit, "the upstream", _reply_too_large(limit))
    writer = MessageWriter(process.stdin)
    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(reader, writer)
    upstream = Upstream(command, process, reader, writer, dispatcher, options.call_timeout)
    try:
        startup = max(options.call_timeout, STARTUP_TIMEOUT)
        session = ClientSession(dispatcher=dispatcher, read_timeout_seconds=startup)
        async with session:
            upstream.session = session
            try:
                await session.initialize()
                upstream.tools = await upstream.list_tools(startup)
            except (MCPError, UpstreamFailure, TimeoutError, RuntimeError, ValidationError) as error:
                detail = str(error) or type(error).__name__
                # The session may see the pipe close before the reader marks its end (a race under load):
                # a process that is gone within a second exited before the handshake, whichever came first.
                with anyio.move_on_after(1.0):
                    await process.wait()
                code = process.returncode
                if reader.ended.is_set() or code is not None:
                    detail = f"it exited{'' if code is None else f' (exit code {code})'} before the MCP handshake"
                raise UpstreamStartError(
                    f"the upstream MCP server `{shown}` did not start: {detail}",
                    hint="run the command alone: it must speak MCP on its stdout, and log only to stderr",
                ) from None
            yield upstream
    finally:
        with anyio.CancelScope(shield=True):
            await stop_process(process)


# -- tools --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProxiedTool:
    """One upstream tool: its spec as listed, its definition in the registry, its output check."""

    spec: Mapping[str, Any]
    definition: ToolDefinition
    output: JsonSchemaValidator | None

    @property
    def registered_spec(self) -> dict[str, Any]:
        """The spec the definition was built from (what `--save-tools` writes, for `dry-run --tools`)."""
        return registered_spec(self.spec)


def registered_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """An upstream tool's spec as the proxy registers it: its value is the whole MCP result."""
    return {**spec, "outputSchema": RESULT_SCHEMA}


def render_result(_arguments: Mapping[str, Any], value: Any) -> Any:
    """The content blocks of an MCP result value (after any rewrite of the value)."""
    return value["content"]


def proxied_tool(spec: Mapping[str, Any], upstream: Upstream) -> ProxiedTool:
    """The registry's definition of one upstream tool, its body calling the upstream; DefinitionError if unusable."""
    name = spec.get("name")
    schema = spec.get("outputSchema")
    if schema is not None and not isinstance(schema, Mapping):
        raise DefinitionError(f"tool {name!r}: its outputSchema is not a JSON Schema object")
    output = None if schema is None else compile_json_schema(schema, where=f"tool {name!r}: outputSchema")

    async def execute(arguments: Mapping[str, Any]) -> dict[str, Any]:
        return mcp_value(str(name), await upstream.call(str(name), arguments), output)

    # Not trusted: the upstream's own specs may not declare an argument plain content, out of red lines' sight.
    definition = tool_from_spec(registered_spec(spec), source="the upstream's tools/list", trusted=False)
    definition = definition.with_execute(execute, render=render_result)
    return ProxiedTool(spec, definition, output)


def mcp_value(name: str, raw: Mapping[str, Any], output: JsonSchemaValidator | None) -> dict[str, Any]:
    """The canonical value of an upstream CallToolResult; UpstreamFailure if it is not one."""
    try:
        types.CallToolResult.model_validate(raw, by_name=False)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'result'}: {e['msg']}" for e in error.errors(include_url=False)[:3]
        )
        raise UpstreamFailure(f"the upstream's reply to tools/call is not a CallToolResult ({problems})") from None
    value: dict[str, Any] = {"content": raw.get("content", [])}
    structured = raw.get("structuredContent")
    failed = raw.get("isError") is True
    if structured is not None:
        value["structuredContent"] = structured
    if failed:
        value["isError"] = True
    elif output is not None:
        problem = output_problem(output, structured)
        if problem is not None:
            raise UpstreamFailure(f"the upstream's result for {name!r} does not fit its outputSchema: {problem}")
    return value


def output_problem(output: JsonSchemaValidator, structured: Any) -> str | None:
    """Why structured content does not fit a tool's outputSchema; None when it fits."""
    if structured is None:
        return "it has no structuredContent"
    if output.is_valid(structured):
        return None
    return "; ".join(output(structured)[:3])


# -- approval through elicitation ---------------------------------------------------------------


def can_elicit(session: Any) -> bool:
    """Whether the client declared form elicitation (an empty `elicitation: {}` means form)."""
    capabilities: types.ClientCapabilities | None = session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    return not (elicitation.form is None and elicitation.url is not None)


def approval_question(request: ApprovalRequest) -> str:
    """What the person is asked: the call as policy saw it, and why it needs them."""
    call = request.call
    arguments = json.dumps(thaw(call.arguments), ensure_ascii=False, default=str)
    if len(arguments) > _SHOWN_ARGUMENTS:
        arguments = arguments[: _SHOWN_ARGUMENTS - 1] + "…"
    why = f"\n{request.reason}" if request.reason else ""
    rule = request.source.rule_id if request.source is not None and request.source.rule_id else None
    by = f" (rule {rule})" if rule else ""
    return f"Policy asks you{by}: allow the tool call {call.name} {arguments} once?{why}\nAccept allows this call only."


class ElicitationApproval:
    """The approval service: asks the person behind the MCP client that made the call, by elicitation.

    Accept allows the call once; decline, cancel, an error, or a client that cannot elicit deny.
    """

    name = "mcp elicitation"

    def identity(self) -> str:
        """Who answers, for the audit record: the person behind the MCP client that made the call."""
        ctx = _REQUEST.get()
        client = _agent(ctx) if ctx is not None else "mcp-client"
        return f"the person at MCP client {client!r} (elicitation)"

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Elicit once on the session of the request being served."""
        ctx = _REQUEST.get()
        if ctx is None:
            raise ApprovalUnavailable("no MCP request is being served, so there is nobody to ask")
        if not can_elicit(ctx.session):
            raise ApprovalUnavailable(
                "the MCP client does not support elicitation (it declared no `elicitation` capability), "
                "so nobody could be asked"
            )
        on_connection = _ON_CONNECTION.get()
        if not on_connection and not ctx.session.can_send_request:
            raise ApprovalUnavailable(
                f"this connection (MCP {ctx.session.protocol_version}) cannot carry a request to the client, "
                "so nobody could be asked; connect with the handshake (initialize) to get approvals"
            )
        related = None if on_connection else ctx.request_id  # None: the connection's channel
        answer = await ctx.session.elicit_form(approval_question(request), APPROVAL_FORM, related)
        return ApprovalAnswer.ALLOWED_ONCE if answer.action == "accept" else ApprovalAnswer.DENIED


# -- the proxy ----------------------------------------------------------------------------------


@dataclass
class Proxy:
    """The registry with the packs and the upstream's tools, and the MCP handlers that call through it."""

    registry: Registry
    layers: PolicyLayers
    tools: dict[str, ProxiedTool] = field(default_factory=dict)
    listed: list[dict[str, Any]] = field(default_factory=list)
    recorder: AuditRecorder | None = None
    # The client's session, once a request showed it; from then on tools/call takes the fast path.
    session: Any = None
    client: MessageWriter | None = None
    in_flight: dict[Any, asyncio.Task[None]] = field(default_factory=dict)
    # The client connection's session (made when it opens): every call on it reads and writes this session.
    session_id: str | None = None
    store: Any = None

    def open_session(self) -> str:
        """A new session for the client connection that opens now (random: a client cannot pick another's)."""
        self.session_id = "mcp-proxy-" + secrets.token_hex(16)
        return self.session_id

    @classmethod
    def load(cls, options: ProxyOptions) -> Proxy:
        """The packs on a fresh registry (all-or-nothing: PackLoadError lists every problem)."""
        store = None
        if options.sessions is not None and options.sessions != "memory":
            from policyengine.sessions import open_store

            store = open_store(options.sessions)  # SessionStoreError: nothing starts
        registry = Registry(
            sessions=store,
            approval=ElicitationApproval(),
            approval_timeout=options.approval_timeout,
            # Relative paths resolve where the upstream really runs.
            cwd=str(Path(options.cwd or os.getcwd()).resolve()),
        )
        layers = PolicyLayers.install(registry, list(options.packs))
        proxy = cls(registry, layers)
        proxy.store = store
        if options.audit or options.otel:
            # Every call's record, redacted by the packs in force (reloads included), written 0600.
            proxy.recorder = AuditRecorder(
                options.audit or None,
                packs=lambda: layers.packs,
                otel=options.otel,
                front_end="mcp-proxy",
            )
            registry.on_result(proxy.recorder, name="audit")
        return proxy

    def adopt(self, upstream: Upstream, warn: Callable[[str], None]) -> None:
        """Register every upstream tool; one the registry cannot describe is left out (never served unchecked)."""
        for spec in upstream.tools:
            name = spec.get("name") if isinstance(spec, Mapping) else None
            try:
                types.Tool.model_validate(spec, by_name=False)
                tool = proxied_tool(spec, upstream)
                self.registry.register(tool.definition)
            except (ValidationError, PolicyEngineError) as error:
                detail = error.errors(include_url=False)[0]["msg"] if isinstance(error, ValidationError) else error
                warn(f"mcp-proxy: left out the upstream's tool {name!r}, which policy cannot check: {detail}")
                continue
            self.tools[tool.definition.name] = tool
            self.listed.append(dict(spec))

    def save_tools(self, path: str) -> None:
        """Write the registered specs as a catalog `dry-run --tools` reads."""
        specs = [tool.registered_spec for tool in self.tools.values()]
        Path(path).write_text(json.dumps({"tools": specs}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> dict[str, Any]:
        """tools/list: the upstream's tools as it listed them (those policy can check)."""
        self.adopt_session(ctx)
        return {"tools": self.listed}

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> dict[str, Any]:
        """tools/call: one call through the whole pipeline."""
        self.adopt_session(ctx)
        token = _REQUEST.set(ctx)
        try:
            result = await self.registry.call(
                params.name, params.arguments or {}, agent=_agent(ctx), session_id=self.session_id
            )
        finally:
            _REQUEST.reset(token)
        return self.reply(result)

    def adopt_session(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Keep the client's session from a request the SDK served: tools/call can take the fast path now.

        Only a handshake connection (one whose requests can carry a question back to the client)
        is kept: the fast path asks on the connection's channel, which only such a connection has.
        """
        if self.session is None and ctx.session.can_send_request:
            self.session = ctx.session

    def claim(self, message: SessionMessage | Exception) -> bool:
        """Take a tools/call (or its cancellation) off the client's stream, to answer it here.

        The SDK's request dispatch (a validated request model, a task group, middleware, a
        response model serialised back) costs about as much as the rest of the proxy; a
        tools/call needs none of it once the session is initialised. Anything else, and a
        tools/call whose params the SDK should refuse, stays with the SDK.
        """
        if self.session is None or self.client is None or not isinstance(message, SessionMessage):
            return False
        root = message.message
        if isinstance(root, types.JSONRPCRequest) and root.method == "tools/call":
            params = root.params
            if not (isinstance(params, dict) and isinstance(params.get("name"), str)):
                return False
            if not isinstance(params.get("arguments") or {}, dict):
                return False
            key = root.id
            task = asyncio.get_running_loop().create_task(self._answer(key, params))
            self.in_flight[key] = task
            task.add_done_callback(lambda _done: self.in_flight.pop(key, None))
            return True
        if isinstance(root, types.JSONRPCNotification) and root.method == "notifications/cancelled":
            running = self.in_flight.get((root.params or {}).get("requestId"))
            if running is None:
                return False
            running.cancel()  # as the SDK does: a cancelled request gets no answer
            return True
        return False

    async def _answer(self, request_id: Any, params: dict[str, Any]) -> None:
        """One tools/call of the fast path: the pipeline, then the JSON-RPC answer written to the client."""
        ctx: ServerRequestContext[Any, Any] = ServerRequestContext(
            session=self.session,
            lifespan_context=None,
            protocol_version=self.session.protocol_version,
            method="tools/call",
            params=params,
            request_id=request_id,
        )
        token, on_connection = _REQUEST.set(ctx), _ON_CONNECTION.set(True)
        try:
            arguments = params.get("arguments") or {}
            result = await self.registry.call(params["name"], arguments, agent=_agent(ctx), session_id=self.session_id)
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": self.reply(result)}
        except asyncio.CancelledError:
            return
        except Exception as error:  # never a silent client: a fault is an error reply
            problem = {"code": types.INTERNAL_ERROR, "message": f"the proxy failed: {type(error).__name__}: {error}"}
            answer = {"jsonrpc": "2.0", "id": request_id, "error": problem}
        finally:
            _REQUEST.reset(token)
            _ON_CONNECTION.reset(on_connection)
        assert self.client is not None
        with contextlib.suppress(anyio.BrokenResourceError):
            self.client.write_line(json.dumps(answer, ensure_ascii=False, default=str).encode("utf-8"))
            await self.client.drain()

    def reply(self, result: ToolResult) -> dict[str, Any]:
        """The CallToolResult for a pipeline result: the (rewritten) upstream result, or an error saying why."""
        if result.outcome is Outcome.OK:
            value = result.value
            if not isinstance(value, Mapping):  # a rewrite the output schema let through; never an unchecked reply
                return _error_reply(
                    f"the result of {result.name!r} is not an MCP result after policy rewrote it", result
                )
            reply: dict[str, Any] = {"content": thaw(result.content)}
            structured = value.get("structuredContent")
            if structured is not None:
                reply["structuredContent"] = thaw(structured)
            if value.get("isError") is True:
                reply["isError"] = True
            elif result.rewrites and structured is not None:
                # A rewrite may leave structured content the client would refuse: say so here, not there.
                tool = self.tools.get(result.name)
                problem = output_problem(tool.output, reply["structuredContent"]) if tool and tool.output else None
                if problem is not None:
                    reason = (
                        f"the result of {result.name!r} no longer fits its outputSchema once policy rewrote it "
                        f"({', '.join(s.name for s in result.rewrites)}): {problem}"
                    )
                    return _error_reply(reason, result)
            return reply
        return _error_reply(None, result)


def _error_reply(reason: str | None, result: ToolResult) -> dict[str, Any]:
    content = [{"type": "text", "text": reason}] if reason else thaw(result.content)
    if not content:
        content = [{"type": "text", "text": result.reason or f"the call ended {result.outcome.value}"}]
    meta: dict[str, Any] = {"policyengine/outcome": result.outcome.value if reason is None else "error"}
    if result.stage is not None:
        meta["policyengine/stage"] = result.stage.value
    if result.source is not None and result.source.kind is SourceKind.RULE:
        meta["policyengine/rule"] = result.source.name
    return {"content": content, "isError": True, "_meta": meta}


def _agent(ctx: ServerRequestContext[Any, Any]) -> str:
    """The client's name (clientInfo), which the audit records as the agent."""
    params = ctx.session.client_params
    return params.client_info.name if params is not None and params.client_info.name else "mcp-client"


def _leaves(group: BaseExceptionGroup[Any]) -> list[BaseException]:
    """The exceptions inside a (nested) exception group."""
    out: list[BaseException] = []
    for error in group.exceptions:
        out.extend(_leaves(error) if isinstance(error, BaseExceptionGroup) else [error])
    return out


def build_server(proxy: Proxy, upstream: Upstream) -> Server[Any]:
    """The MCP server the client talks to: tools only, the upstream's instructions passed on."""
    from policyengine import __version__

    info = upstream.session.initialize_result if upstream.session is not None else None
    server: Server[Any] = Server(
        f"policyengine-mcp-proxy ({upstream.name})",
        version=__version__,
        instructions=info.instructions if info is not None else None,
    )
    # Registered by method: these handlers answer plain dicts (the upstream's own JSON), not models.
    server.add_request_handler("tools/list", types.PaginatedRequestParams, proxy.list_tools)
    server.add_request_handler("tools/call", types.CallToolRequestParams, proxy.call_tool)
    return server


async def serve(options: ProxyOptions, proxy: Proxy, warn: Callable[[str], None]) -> None:
    """Start the upstream, then serve MCP over stdio until the client closes it."""
    async with connect(options) as upstream:
        proxy.adopt(upstream, warn)
        if options.save_tools:
            proxy.save_tools(options.save_tools)
        server = build_server(proxy, upstream)
        async with client_stdio() as (read_stream, write_stream):
            session = proxy.open_session()  # stdio: one client connection per proxy process
            if proxy.registry.installation.sessions is not None:
                # Where to find this connection's session in a shared store (--sessions), for whoever reads it.
                warn(f"mcp-proxy: this client connection is session {session}")
            fast = os.environ.get(FAST_PATH_ENV, "on") != "off"
            if fast and isinstance(read_stream, MessageReader) and isinstance(write_stream, MessageWriter):
                proxy.client = write_stream
                read_stream.claim = proxy.claim
            try:
                await server.run(read_stream, write_stream, server.create_initialization_options())
            finally:
                for task in list(proxy.in_flight.values()):
                    task.cancel()


def run(options: ProxyOptions, *, warn: Callable[[str], None] | None = None) -> int:
    """Load the packs (PackLoadError: nothing starts), then proxy until the client disconnects; the exit code."""
    say = warn or (lambda message: print(message, file=sys.stderr, flush=True))
    proxy = Proxy.load(options)
    try:
        anyio.run(serve, options, proxy, say)
    except KeyboardInterrupt:
        return 130  # stopped from a terminal: the upstream was stopped on the way out
    except BaseExceptionGroup as group:
        # The SDK's task groups wrap what failed: a user's error is reported as itself.
        mine = group.subgroup(lambda error: isinstance(error, PolicyEngineError))
        if mine is None:
            raise
        raise _leaves(mine)[0] from None
    finally:
        close = getattr(proxy.store, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()
        if proxy.recorder is not None:
            proxy.recorder.close()
            lost, why = proxy.recorder.failures, proxy.recorder.last_error
            if lost:
                say(f"mcp-proxy: {lost} audit record(s) could not be written to {options.audit}: {why}")
    return 0


__all__ = [
    "DEFAULT_APPROVAL_TIMEOUT",
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_MAX_RESULT_BYTES",
    "ElicitationApproval",
    "Proxy",
    "ProxyOptions",
    "UpstreamStartError",
    "run",
]
