"""Helpers for the rule-pack tests: write packs into a tmp folder, build a registry of tools.

`write_pack(root, name, files, **manifest)` writes `root/name/pack.yaml` and one rule file
per entry of `files` (a YAML string, written as is, or a dict/list dumped as block YAML),
in that order. `rules_pack(root, name, rules, lists=...)` is the one-file shortcut.

`make_kit()` returns a Kit: a Registry with counting tools (see TOOLS), a Counter of body
runs, the results a recording observer saw, and knobs (events, failure counts) the bodies
read. Every body is async, so nothing runs in a worker thread and tests stay fast.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from helpers_pipeline import RecordingApproval as RecordingApproval  # one approval recorder for every kit

from policyengine import (
    PolicyLayers,
    Registry,
    ToolResult,
    define_tool,
)

SECRET_TOKEN = "tok-5ecr3t-value-0042"
"""The api_token the `login` and `secrets` tools return."""

TOOLS = (
    "read",  # read(path: str) -> "contents of PATH"
    "probe",  # probe(path: str, count: int) -> "probed PATH"
    "fs_write",
    "fs_edit",
    "fs_read",
    "shell",
    "send_message",
    "login",  # login(user) -> {user, api_token}
    "secrets",  # secrets() -> {user, api_token, count}
    "slow",  # slow(seconds: float): sleeps, then returns "slept"
    "flaky",  # flaky(): raises kit.fail_first times, then returns "ok"
    "gated",  # gated(): sets kit.started, awaits kit.release, returns {user, api_token}
    "number",  # number() -> 7 (an integer value, for type errors over result.value)
)


def dump(data: Any) -> str:
    """Block-style YAML, keys in insertion order."""
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True)


def write_pack(
    root: Path,
    name: str,
    files: Mapping[str, str | Mapping[str, Any] | Sequence[Any]],
    *,
    default: str = "allow",
    version: str = "1.0.0",
    description: str | None = None,
    default_reason: str | None = None,
    manifest: str | None = None,
    **extra: Any,
) -> Path:
    """Write a pack folder; `manifest` (a YAML string) replaces the generated pack.yaml."""
    folder = Path(root) / name
    folder.mkdir(parents=True, exist_ok=True)
    if manifest is None:
        fields: dict[str, Any] = {
            "name": name,
            "version": version,
            "description": description or f"test pack {name}",
            "default": default,
        }
        if default_reason is not None:
            fields["default_reason"] = default_reason
        fields["files"] = list(files)
        fields.update(extra)
        manifest = dump(fields)
    (folder / "pack.yaml").write_text(manifest, encoding="utf-8")
    for filename, content in files.items():
        text = content if isinstance(content, str) else dump(content)
        (folder / filename).write_text(text, encoding="utf-8")
    return folder


def rules_pack(
    root: Path,
    name: str,
    rules: Sequence[Mapping[str, Any]],
    *,
    lists: Mapping[str, Sequence[Any]] | None = None,
    filename: str = "rules.yaml",
    **manifest: Any,
) -> Path:
    """A pack with one rule file holding `lists` (if any) and `rules`."""
    body: dict[str, Any] = {}
    if lists:
        body["lists"] = {k: list(v) for k, v in lists.items()}
    body["rules"] = [dict(r) for r in rules]
    return write_pack(root, name, {filename: body}, **manifest)


@dataclass
class Kit:
    """A registry plus what its bodies and its recording observer saw."""

    registry: Registry
    runs: Counter[str] = field(default_factory=Counter)
    results: list[ToolResult] = field(default_factory=list)
    fail_first: int = 2
    started: asyncio.Event | None = None
    release: asyncio.Event | None = None

    def call(self, name: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any) -> ToolResult:
        """registry.call_sync, for tests that are not async."""
        return self.registry.call_sync(name, arguments, **kwargs)

    def install(self, *folders: Path) -> PolicyLayers:
        """Install packs as layers, in order, after whatever is already there."""
        return PolicyLayers.install(self.registry, list(folders))

    def observed(self, call_id: str) -> ToolResult:
        """The one result the observer saw for `call_id`."""
        seen = [r for r in self.results if r.call_id == call_id]
        assert len(seen) == 1, f"observer saw {len(seen)} results for {call_id}"
        return seen[0]


def _text(_args: Any, value: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": str(value)}]


CREDENTIALS = {"type": "dict", "schema": {"user": {"type": "string"}, "api_token": {"type": "string"}}}


def make_kit(*, observe: bool = True, **registry_kwargs: Any) -> Kit:
    """A registry with the tools of TOOLS; keyword arguments go to Registry(...)."""
    kit = Kit(Registry(**registry_kwargs))
    reg = kit.registry
    string = {"type": "string", "required": True, "description": "a string"}

    def tool(name: str, parameters: Mapping[str, Any], body: Any, output: Mapping[str, Any] | None = None) -> None:
        reg.register(
            define_tool(
                name=name,
                description=f"test tool {name}",
                parameters=parameters,
                execute=body,
                output=output or {"schema": {"type": "string"}, "render": _text},
            )
        )

    def counted(name: str, fmt: str) -> Any:
        async def body(args: Any) -> str:
            kit.runs[name] += 1
            return fmt.format(**args)

        return body

    tool("read", {"path": string}, counted("read", "contents of {path}"))
    tool(
        "probe",
        {"path": string, "count": {"type": "integer", "required": True}},
        counted("probe", "probed {path}"),
    )
    optional = {"type": "string"}
    tool("fs_write", {"path": string, "content": optional}, counted("fs_write", "wrote {path}"))
    tool("fs_edit", {"path": string, "old": optional, "new": optional}, counted("fs_edit", "edited {path}"))
    tool("fs_read", {"path": string}, counted("fs_read", "contents of {path}"))
    tool("shell", {"command": string}, counted("shell", "ran {command}"))
    tool("send_message", {"message": string}, counted("send_message", "sent"))

    async def login(args: Any) -> dict[str, str]:
        kit.runs["login"] += 1
        return {"user": args["user"], "api_token": SECRET_TOKEN}

    tool("login", {"user": string}, login, {"schema": CREDENTIALS})

    async def secrets(_args: Any) -> dict[str, Any]:
        kit.runs["secrets"] += 1
        return {"user": "ada", "api_token": SECRET_TOKEN, "count": 3}

    tool(
        "secrets",
        {},
        secrets,
        {"schema": {"type": "dict", "schema": {**CREDENTIALS["schema"], "count": {"type": "integer"}}}},
    )

    async def slow(args: Any) -> str:
        kit.runs["slow"] += 1
        await asyncio.sleep(args["seconds"])
        return "slept"

    tool("slow", {"seconds": {"type": "number", "required": True}}, slow)

    async def flaky(_args: Any) -> str:
        kit.runs["flaky"] += 1
        if kit.runs["flaky"] <= kit.fail_first:
            raise RuntimeError(f"transient failure #{kit.runs['flaky']}")
        return "ok"

    tool("flaky", {}, flaky)

    async def gated(_args: Any) -> dict[str, str]:
        kit.runs["gated"] += 1
        assert kit.started is not None and kit.release is not None, "create the events inside the loop"
        kit.started.set()
        await kit.release.wait()
        return {"user": "ada", "api_token": SECRET_TOKEN}

    tool("gated", {}, gated, {"schema": CREDENTIALS})

    async def number(_args: Any) -> int:
        kit.runs["number"] += 1
        return 7

    tool("number", {}, number, {"schema": {"type": "integer"}, "render": _text})

    if observe:
        reg.on_result(kit.results.append, name="recorder")
    return kit
