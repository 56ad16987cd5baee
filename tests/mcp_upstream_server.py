"""An upstream MCP server for the mcp-proxy tests and benchmark, written with the official SDK.

Run as `python tests/mcp_upstream_server.py`; it speaks MCP over stdio. Every tool body appends
its name to the file named by MCP_UPSTREAM_LOG (when set), so a test can prove that a call the
proxy denied never reached this process. The tools misbehave on request: `slow` sleeps, `crash`
exits the process, `huge` answers more bytes than a proxy should accept, `malformed` writes a
line that is not JSON-RPC or a reply whose result is not a CallToolResult.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Any

import anyio
import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

# A GitHub token shape the secret scanner knows; fake, and only ever returned by `leak`.
FAKE_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
LOG = os.environ.get("MCP_UPSTREAM_LOG")


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or list(properties)}


TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Answer the text it is given.",
        "inputSchema": _schema({"text": {"type": "string"}}),
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "read_file",
        "description": "Read a text file.",
        "inputSchema": _schema({"path": {"type": "string"}}),
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "write_file",
        "description": "Write a text file.",
        "inputSchema": _schema({"path": {"type": "string"}, "content": {"type": "string"}}),
        "annotations": {"destructiveHint": True},
    },
    {
        "name": "delete_record",
        "description": "Delete a record by id.",
        "inputSchema": _schema({"id": {"type": "integer"}}),
        "annotations": {"destructiveHint": True, "idempotentHint": True},
    },
    {
        "name": "open_document",
        "description": "Open a document; `target` is a path (declared by x-policy-role).",
        "inputSchema": _schema({"target": {"type": "string", "x-policy-role": "path"}}),
    },
    {
        "name": "run",
        "description": "Run a shell command.",
        "inputSchema": _schema({"command": {"type": "string"}}),
    },
    {
        "name": "fetch",
        "description": "Fetch a URL.",
        "inputSchema": _schema({"url": {"type": "string", "format": "uri"}}),
        "annotations": {"openWorldHint": True, "readOnlyHint": True},
    },
    {
        "name": "leak",
        "description": "Report the service configuration (it includes a credential).",
        "inputSchema": _schema({}),
        "outputSchema": _schema({"service": {"type": "string"}, "token": {"type": "string"}}),
    },
    {
        "name": "slow",
        "description": "Sleep, then answer.",
        "inputSchema": _schema({"seconds": {"type": "number"}}),
    },
    {
        "name": "hang",
        "description": "Never answer.",
        "inputSchema": _schema({}),
    },
    {
        "name": "huge",
        "description": "Answer a text of `size` bytes.",
        "inputSchema": _schema({"size": {"type": "integer"}}),
    },
    {
        "name": "malformed",
        "description": "Answer with a line that is not JSON-RPC (`garbage`) or a result of the wrong shape (`shape`).",
        "inputSchema": _schema({"kind": {"type": "string", "enum": ["garbage", "shape"]}}),
    },
    {
        "name": "crash",
        "description": "Exit the server process.",
        "inputSchema": _schema({}),
    },
    {
        "name": "counter",
        "description": "How often each tool body ran.",
        "inputSchema": _schema({}),
        "outputSchema": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
]

_counts: Counter[str] = Counter()


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _wire() -> int:
    """The descriptor stdio_server writes replies to (fd 1 is diverted while it serves)."""
    from mcp.server import stdio

    claim = stdio._claims.get(1)
    return claim.private_fd if claim is not None and claim.private_fd is not None else 1


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> dict[str, Any]:
    """Run one tool; its name is logged before anything else happens."""
    name, args = params.name, params.arguments or {}
    _counts[name] += 1
    if LOG:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(name + "\n")
    if name == "echo":
        return _text(str(args.get("text", "")))
    if name == "read_file":
        return _text(f"contents of {args.get('path')}")
    if name in ("write_file", "delete_record", "open_document"):
        return _text(f"{name} done")
    if name == "run":
        return _text(f"ran {args.get('command')}")
    if name == "fetch":
        return _text(f"fetched {args.get('url')}")
    if name == "leak":
        config = {"service": "billing", "token": FAKE_TOKEN}
        return {"content": [{"type": "text", "text": json.dumps(config)}], "structuredContent": config}
    if name == "slow":
        await anyio.sleep(float(args.get("seconds", 0)))
        return _text("slept")
    if name == "hang":
        await anyio.sleep_forever()
    if name == "huge":
        return _text("x" * int(args.get("size", 0)))
    if name == "malformed":
        if args.get("kind") == "garbage":
            os.write(_wire(), b"this line is not JSON-RPC\n")
        else:
            reply = {"jsonrpc": "2.0", "id": ctx.request_id, "result": {"content": "not a list of blocks"}}
            os.write(_wire(), (json.dumps(reply) + "\n").encode())
        return _text("the real answer, which comes too late")
    if name == "crash":
        sys.stderr.flush()
        os._exit(3)
    if name == "counter":
        counts = dict(_counts)
        return {"content": [{"type": "text", "text": json.dumps(counts)}], "structuredContent": counts}
    return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}


async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> dict[str, Any]:
    """Every tool, as written above."""
    return {"tools": TOOLS}


async def main() -> None:
    """Serve over stdio until the client closes stdin."""
    server: Server[Any] = Server("upstream-test-server", version="1.0")
    # By method: these handlers answer plain dicts, written exactly as a hand-made server would.
    server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    server.middleware = []  # no tracing spans: the benchmark measures the transport, not OpenTelemetry
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
