"""The seed's example: a `greet` tool, a permission gate, and a guard, called end to end.

Run: python examples/permission_gate.py
"""

from __future__ import annotations

import asyncio

from policyengine import Registry, define_tool, deny

DENY_TOOLS = {"fs_write", "fs_edit"}


def build_registry() -> Registry:
    """A registry with greet, fs_write and fs_read, and the seed's permission gate."""
    registry = Registry()
    registry.register(
        define_tool(
            name="greet",
            description="Greet someone by name.",
            parameters={"name": {"type": "string", "required": True, "description": "The name to greet"}},
            output={"schema": {"type": "string"}, "render": lambda _a, v: [{"type": "text", "text": v}]},
            execute=greet,
        )
    )
    for name in ("fs_write", "fs_read"):
        registry.register(
            define_tool(
                name=name,
                description=f"{name} on the workspace (a stand-in; it only echoes).",
                parameters={
                    "path": {"type": "string", "required": True, "description": "Workspace-relative path"},
                    "content": {"type": "string", "description": "What to write (fs_write only)"},
                },
                output={"schema": {"type": "string"}},
                execute=lambda args, _name=name: f"{_name} {args['path']}: done",
            )
        )

    @registry.on_pre_execute(name="permission-gate")
    async def permission_gate(call, next):  # type: ignore[no-untyped-def]
        if call.name in DENY_TOOLS:
            return deny(f"Denied by policy: {call.name} may not write files in this workspace.")
        path = call.arguments.get("path")
        if isinstance(path, str) and ".env" in path:
            return deny(f"Denied by policy: {path} may hold secrets.")
        return await next()

    @registry.guard(name="no-system-dirs")
    def no_system_dirs(call):  # type: ignore[no-untyped-def]
        path = call.arguments.get("path", "")
        return f"Red line: {path} is a system directory." if path.startswith("/etc") else None

    @registry.on_result(name="print")
    def show(result):  # type: ignore[no-untyped-def]
        print(f"{result.name:9} {result.outcome.value:7} {result.text}")

    return registry


async def greet(args):  # type: ignore[no-untyped-def]
    """The seed's greet body: returns the canonical value, a string."""
    return f"Hello, {args['name']}!"


async def main() -> None:
    """Call greet (allowed), fs_write (denied), fs_read on .env (denied) and /etc (red line)."""
    registry = build_registry()
    await registry.call("greet", {"name": "Ada"})
    await registry.call("fs_write", {"path": "notes.txt", "content": "hi"})
    await registry.call("fs_read", {"path": "config/.env"})
    await registry.call("fs_read", {"path": "/etc/passwd"})
    await registry.call("fs_read", {"path": "README.md"})


if __name__ == "__main__":
    asyncio.run(main())
