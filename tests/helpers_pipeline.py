"""Shared helpers for the pipeline tests: a registry whose tool bodies count their runs.

`make_bench()` returns a Bench: a Registry with `greet`, `fs_write`, `fs_read`, `shell`
and `fs_delete` registered, a Counter of how often each body ran, and the list of
results a recording observer saw. `RecordingApproval` is an approval service that
records every request and answers with a scripted behaviour.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from policyengine import ApprovalAnswer, ApprovalRequest, Registry, ToolResult, define_tool

TOOL_NAMES = ("greet", "fs_write", "fs_read", "shell", "fs_delete")

HANG = object()
"""Scripted approval behaviour: never answer."""


@dataclass
class Bench:
    """A registry plus what its tools and its recording observer saw."""

    registry: Registry
    runs: Counter[str] = field(default_factory=Counter)
    results: list[ToolResult] = field(default_factory=list)

    def call(self, name: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> ToolResult:
        """registry.call_sync, for tests that are not async."""
        return self.registry.call_sync(name, arguments, **kwargs)


def make_bench(*, observe: bool = True, **registry_kwargs: Any) -> Bench:
    """A registry with five counting tools; keyword arguments go to Registry(...)."""
    bench = Bench(Registry(**registry_kwargs))
    reg = bench.registry

    def text(_args: Any, value: Any) -> list[dict[str, Any]]:
        return [{"type": "text", "text": str(value)}]

    async def greet(args: Any) -> str:
        bench.runs["greet"] += 1
        return f"Hello, {args['name']}!"

    async def fs_write(args: Any) -> str:
        bench.runs["fs_write"] += 1
        return f"wrote {args['path']}"

    async def fs_read(args: Any) -> str:
        bench.runs["fs_read"] += 1
        return f"contents of {args['path']}"

    async def shell(args: Any) -> str:
        bench.runs["shell"] += 1
        return f"ran {args['command']}"

    async def fs_delete(args: Any) -> int:
        bench.runs["fs_delete"] += 1
        return len(args["paths"])

    string = {"type": "string"}
    reg.register(
        define_tool(
            name="greet",
            description="Greet someone by name.",
            parameters={"name": {"type": "string", "required": True, "description": "who to greet"}},
            output={"schema": string, "render": text},
            execute=greet,
        )
    )
    reg.register(
        define_tool(
            name="fs_write",
            description="Write a file in the workspace.",
            parameters={
                "path": {"type": "string", "required": True, "description": "workspace path"},
                "content": {"type": "string", "description": "what to write"},
            },
            output={"schema": string, "render": text},
            execute=fs_write,
        )
    )
    reg.register(
        define_tool(
            name="fs_read",
            description="Read a file in the workspace.",
            parameters={"path": {"type": "string", "required": True, "description": "workspace path"}},
            output={"schema": string, "render": text},
            execute=fs_read,
        )
    )
    reg.register(
        define_tool(
            name="shell",
            description="Run a shell command.",
            parameters={"command": {"type": "string", "required": True, "description": "the command line"}},
            output={"schema": string, "render": text},
            execute=shell,
        )
    )
    reg.register(
        define_tool(
            name="fs_delete",
            description="Delete files in the workspace.",
            parameters={
                "paths": {
                    "type": "list",
                    "required": True,
                    "schema": {"type": "string"},
                    "description": "workspace paths to delete",
                }
            },
            output={"schema": {"type": "integer"}, "render": text},
            execute=fs_delete,
        )
    )
    if observe:
        reg.on_result(bench.results.append, name="recorder")
    return bench


class RecordingApproval:
    """An approval service that records each request and answers as scripted.

    `answer` is returned as is (an ApprovalAnswer, or anything else to test bad answers),
    raised when it is an exception, or never given when it is HANG.
    """

    def __init__(self, answer: Any = ApprovalAnswer.ALLOWED_ONCE) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        if self.answer is HANG:
            await asyncio.Event().wait()
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer
