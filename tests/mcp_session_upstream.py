"""An upstream MCP server for the session sequences (tests/data/session_sequences.yaml), written with the SDK.

Run as `python tests/mcp_session_upstream.py` with MCP_SESSION_SCRIPT naming a JSON file:
`{"tools": [MCP tool specs], "results": {tool: [value or null, ...]}}`. The n-th call of a tool
answers the n-th value of its list (a string as text, anything else as JSON text and structured
content), or "ok" past the end or for null. `tool_specs` and `script` build that file from
sequences, for the proxy's tests and the adapters' (which define the same tools in their frameworks).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

SEQUENCES_FILE = Path(__file__).parent / "data" / "session_sequences.yaml"


def load_sequences() -> list[dict[str, Any]]:
    """Every sequence, as written."""
    return list(yaml.safe_load(SEQUENCES_FILE.read_text(encoding="utf-8"))["sequences"])


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "object"


def tool_specs(sequence: dict[str, Any]) -> list[dict[str, Any]]:
    """One MCP tool spec per tool the sequence calls: every argument it passes, none required, no annotations."""
    properties: dict[str, dict[str, Any]] = {}
    for step in sequence["steps"]:
        call = step["call"]
        known = properties.setdefault(call["name"], {})
        for key, value in call["arguments"].items():
            known.setdefault(key, {"type": _json_type(value)})
    return [
        {
            "name": name,
            "description": f"The sequence's tool {name}.",
            "inputSchema": {"type": "object", "properties": p},
        }
        for name, p in properties.items()
    ]


def runs(step: dict[str, Any]) -> bool:
    """Whether the step's call reaches the tool: allowed, or asked and (as every front end's test does) approved."""
    return bool(step["expect"]["decision"] in ("allow", "ask"))


def script(sequence: dict[str, Any]) -> dict[str, Any]:
    """The upstream's script: the tools, and each tool's results in the order its calls reach it."""
    results: dict[str, list[Any]] = {}
    for step in sequence["steps"]:
        if runs(step):
            results.setdefault(step["call"]["name"], []).append((step.get("result") or {}).get("value"))
    return {"tools": tool_specs(sequence), "results": results}


def answer(value: Any) -> dict[str, Any]:
    """A CallToolResult carrying a scripted value."""
    if value is None:
        return {"content": [{"type": "text", "text": "ok"}]}
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    reply: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(value)}]}
    if isinstance(value, dict):
        reply["structuredContent"] = value
    return reply


def main() -> None:
    """Serve the script's tools over stdio until the client closes stdin."""
    import anyio
    import mcp.types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    plan = json.loads(Path(os.environ["MCP_SESSION_SCRIPT"]).read_text(encoding="utf-8"))
    pending: dict[str, list[Any]] = {name: list(values) for name, values in plan["results"].items()}

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        return {"tools": plan["tools"]}

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> dict[str, Any]:
        queue = pending.get(params.name) or []
        return answer(queue.pop(0) if queue else None)

    async def serve() -> None:
        server: Server[Any] = Server("session-sequences", version="1.0")
        server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools)
        server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
        server.middleware = []
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
