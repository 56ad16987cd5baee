"""Small factories for the execute, post-execute, finalize and observer tests.

`make_tool(...)` builds a tool definition with sensible defaults (a string value
rendered as one text block); `Recorder` is a result observer that keeps every result
it is given; `Probe` wraps a body and counts its runs; `wait_until` polls a
condition from async code without sleeping longer than needed.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from policyengine import Registry, ToolDefinition, ToolResult, define_tool

STRING = {"type": "string"}
SECRET_RECORD = {"type": "dict", "schema": {"user": STRING, "token": STRING}}


def text(message: str) -> list[dict[str, Any]]:
    """One text content block."""
    return [{"type": "text", "text": message}]


def render_tagged(_args: Any, value: Any) -> list[dict[str, Any]]:
    """A render that marks its output, so a test can tell rendered content from the rest."""
    return text(f"rendered:{value}")


async def say_hello(_args: Any) -> str:
    """The default body: returns the canonical value 'hello'."""
    return "hello"


def make_tool(
    name: str = "echo",
    execute: Callable[..., Any] = say_hello,
    *,
    parameters: dict[str, Any] | None = None,
    schema: dict[str, Any] | None = None,
    render: Callable[..., Any] | None = render_tagged,
    finalize_content: Callable[..., Any] | None = None,
    run_in_thread: bool = True,
) -> ToolDefinition:
    """A tool definition; by default a string value rendered as 'rendered:<value>'."""
    output: dict[str, Any] = {"schema": STRING if schema is None else schema}
    if render is not None:
        output["render"] = render
    return define_tool(
        name=name,
        description=f"The {name} test tool.",
        parameters={} if parameters is None else parameters,
        output=output,
        execute=execute,
        finalize_content=finalize_content,
        run_in_thread=run_in_thread,
    )


@dataclass
class Recorder:
    """A synchronous result observer that remembers what it saw and on which thread."""

    results: list[ToolResult] = field(default_factory=list)
    threads: list[int] = field(default_factory=list)

    def __call__(self, result: ToolResult) -> None:
        self.results.append(result)
        self.threads.append(threading.get_ident())

    @property
    def outcomes(self) -> list[Any]:
        """The outcomes seen so far, in order."""
        return [r.outcome for r in self.results]


def make_registry(*tools: ToolDefinition, **registry_kwargs: Any) -> tuple[Registry, Recorder]:
    """A registry with `tools` (or one default `echo`) and a recording observer installed."""
    registry = Registry(**registry_kwargs)
    for tool in tools or (make_tool(),):
        registry.register(tool)
    recorder = Recorder()
    registry.on_result(recorder, name="recorder")
    return registry, recorder


@dataclass
class Probe:
    """Counts how often a body ran and what it was given."""

    runs: int = 0
    arguments: list[Any] = field(default_factory=list)
    contexts: list[Any] = field(default_factory=list)
    threads: list[int] = field(default_factory=list)

    def seen(self, args: Any, ctx: Any = None) -> None:
        """Record one run of the body."""
        self.runs += 1
        self.arguments.append(args)
        self.contexts.append(ctx)
        self.threads.append(threading.get_ident())


async def wait_until(condition: Callable[[], bool], timeout: float = 2.0) -> None:
    """Poll `condition` every millisecond or so; fail the test if it never holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition never became true")
        await asyncio.sleep(0.002)
