"""Helpers the test modules import by name (fixtures shared by several modules live in conftest.py).

Tool definitions and registries:
  `make_tool(...)` builds a tool definition with sensible defaults (a string value rendered as
  'rendered:<value>'); `make_registry(*tools)` a registry with those tools and a `Recorder`
  observer; `Probe` counts a body's runs; `wait_until` polls a condition from async code.

Registries of counting tools:
  `make_bench()` and `make_kit()` both return a `Kit`: a Registry, a Counter of how often each
  tool body ran and the results a recording observer saw. The bench has the five seed-like tools
  of BENCH_TOOLS; the kit has the tools of TOOLS (and knobs some of them read). Every body is
  async, so nothing runs in a worker thread and tests stay fast.

Approvals:
  `RecordingApproval` records every request and answers as scripted (HANG: never answers).

Rule packs:
  `write_pack(root, name, files, **manifest)` writes `root/name/pack.yaml` and one rule file per
  entry of `files` (a YAML string, written as is, or a dict/list dumped as block YAML), in that
  order. `rules_pack(root, name, rules, lists=...)` is the one-file shortcut.

Volume:
  `scaled(n)` is how many examples (or fuzz iterations) a volume-heavy test runs: n in the suite,
  n times POLICYENGINE_TEST_SCALE when that is set (POLICYENGINE_TEST_SCALE=10 for a long run).
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from policyengine import (
    ApprovalAnswer,
    ApprovalRequest,
    PolicyLayers,
    Registry,
    ToolDefinition,
    ToolResult,
    define_tool,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"  # the BFCL tools and calls, vendored
BFCL_TOOLS = EXAMPLES / "bfcl-tools.jsonl"
BFCL_CALLS = EXAMPLES / "bfcl-calls.jsonl"

STRING: dict[str, Any] = {"type": "string"}
SECRET_RECORD: dict[str, Any] = {"type": "dict", "schema": {"user": STRING, "token": STRING}}
CREDENTIALS: dict[str, Any] = {"type": "dict", "schema": {"user": STRING, "api_token": STRING}}

SECRET_TOKEN = "tok-5ecr3t-value-0042"

# The corpus differentials (a fast path against the code it replaces, on every corpus call) cost
# minutes all together: the suite takes a fixed stride of each corpus, POLICYENGINE_FULL_CORPUS=1
# takes all of it (CONTRIBUTING.md). The stride is fixed, not drawn: a failure repeats.
FULL_CORPUS = os.environ.get("POLICYENGINE_FULL_CORPUS") == "1"


def corpus_stride(items: Sequence[Any], stride: int, start: int = 0) -> list[Any]:
    """Every `stride`-th item from `start` (all of them with POLICYENGINE_FULL_CORPUS=1)."""
    return list(items) if FULL_CORPUS else list(items[start::stride])


"""The api_token the kit's `login`, `secrets` and `gated` tools return."""


def scaled(examples: int) -> int:
    """`examples` times POLICYENGINE_TEST_SCALE (unset: 1), at least 1: see the module docstring."""
    return max(1, round(examples * float(os.environ.get("POLICYENGINE_TEST_SCALE", "1"))))


# -- content -------------------------------------------------------------------------------------


def text(message: str) -> list[dict[str, Any]]:
    """One text content block."""
    return [{"type": "text", "text": message}]


def render_plain(_args: Any, value: Any) -> list[dict[str, Any]]:
    """A render that shows the value as it is, as one text block."""
    return text(str(value))


def render_tagged(_args: Any, value: Any) -> list[dict[str, Any]]:
    """A render that marks its output, so a test can tell rendered content from the rest."""
    return text(f"rendered:{value}")


# -- one tool, one registry ------------------------------------------------------------------------


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


# -- approvals -------------------------------------------------------------------------------------

HANG = object()
"""Scripted approval behaviour: never answer."""


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


# -- registries of counting tools --------------------------------------------------------------------


@dataclass
class Kit:
    """A registry plus what its tool bodies and its recording observer saw."""

    registry: Registry
    runs: Counter[str] = field(default_factory=Counter)
    results: list[ToolResult] = field(default_factory=list)
    fail_first: int = 2  # make_kit's `flaky` raises this many times before it answers
    started: asyncio.Event | None = None  # make_kit's `gated` sets it, then awaits `release`
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

    def tool(
        self,
        name: str,
        parameters: Mapping[str, Any],
        body: Callable[..., Any],
        output: Mapping[str, Any] | None = None,
        description: str | None = None,
    ) -> None:
        """Register a tool whose value is a string rendered as is, unless `output` says otherwise."""
        self.registry.register(
            define_tool(
                name=name,
                description=description or f"test tool {name}",
                parameters=parameters,
                execute=body,
                output=output or {"schema": STRING, "render": render_plain},
            )
        )

    def counted(self, name: str, fmt: str) -> Callable[[Any], Any]:
        """An async body that counts its runs under `name` and returns `fmt` filled with the arguments."""

        async def body(args: Any) -> str:
            self.runs[name] += 1
            return fmt.format(**args)

        return body


BENCH_TOOLS = ("greet", "fs_write", "fs_read", "shell", "fs_delete")


def make_bench(*, observe: bool = True, **registry_kwargs: Any) -> Kit:
    """A registry with the five counting tools of BENCH_TOOLS; keyword arguments go to Registry(...)."""
    bench = Kit(Registry(**registry_kwargs))

    def required(description: str) -> dict[str, Any]:
        return {"type": "string", "required": True, "description": description}

    bench.tool(
        "greet",
        {"name": required("who to greet")},
        bench.counted("greet", "Hello, {name}!"),
        description="Greet someone by name.",
    )
    bench.tool(
        "fs_write",
        {"path": required("workspace path"), "content": {"type": "string", "description": "what to write"}},
        bench.counted("fs_write", "wrote {path}"),
        description="Write a file in the workspace.",
    )
    bench.tool(
        "fs_read",
        {"path": required("workspace path")},
        bench.counted("fs_read", "contents of {path}"),
        description="Read a file in the workspace.",
    )
    bench.tool(
        "shell",
        {"command": required("the command line")},
        bench.counted("shell", "ran {command}"),
        description="Run a shell command.",
    )

    async def fs_delete(args: Any) -> int:
        bench.runs["fs_delete"] += 1
        return len(args["paths"])

    bench.tool(
        "fs_delete",
        {
            "paths": {
                "type": "list",
                "required": True,
                "schema": {"type": "string"},
                "description": "workspace paths to delete",
            }
        },
        fs_delete,
        {"schema": {"type": "integer"}, "render": render_plain},
        description="Delete files in the workspace.",
    )
    if observe:
        bench.registry.on_result(bench.results.append, name="recorder")
    return bench


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


def make_kit(*, observe: bool = True, **registry_kwargs: Any) -> Kit:
    """A registry with the tools of TOOLS; keyword arguments go to Registry(...)."""
    kit = Kit(Registry(**registry_kwargs))
    string = {"type": "string", "required": True, "description": "a string"}
    optional = {"type": "string"}

    kit.tool("read", {"path": string}, kit.counted("read", "contents of {path}"))
    kit.tool(
        "probe",
        {"path": string, "count": {"type": "integer", "required": True}},
        kit.counted("probe", "probed {path}"),
    )
    kit.tool("fs_write", {"path": string, "content": optional}, kit.counted("fs_write", "wrote {path}"))
    kit.tool("fs_edit", {"path": string, "old": optional, "new": optional}, kit.counted("fs_edit", "edited {path}"))
    kit.tool("fs_read", {"path": string}, kit.counted("fs_read", "contents of {path}"))
    kit.tool("shell", {"command": string}, kit.counted("shell", "ran {command}"))
    kit.tool("send_message", {"message": string}, kit.counted("send_message", "sent"))

    async def login(args: Any) -> dict[str, str]:
        kit.runs["login"] += 1
        return {"user": args["user"], "api_token": SECRET_TOKEN}

    kit.tool("login", {"user": string}, login, {"schema": CREDENTIALS})

    async def secrets(_args: Any) -> dict[str, Any]:
        kit.runs["secrets"] += 1
        return {"user": "ada", "api_token": SECRET_TOKEN, "count": 3}

    counted_credentials = {"type": "dict", "schema": {**CREDENTIALS["schema"], "count": {"type": "integer"}}}
    kit.tool("secrets", {}, secrets, {"schema": counted_credentials})

    async def slow(args: Any) -> str:
        kit.runs["slow"] += 1
        await asyncio.sleep(args["seconds"])
        return "slept"

    kit.tool("slow", {"seconds": {"type": "number", "required": True}}, slow)

    async def flaky(_args: Any) -> str:
        kit.runs["flaky"] += 1
        if kit.runs["flaky"] <= kit.fail_first:
            raise RuntimeError(f"transient failure #{kit.runs['flaky']}")
        return "ok"

    kit.tool("flaky", {}, flaky)

    async def gated(_args: Any) -> dict[str, str]:
        kit.runs["gated"] += 1
        assert kit.started is not None and kit.release is not None, "create the events inside the loop"
        kit.started.set()
        await kit.release.wait()
        return {"user": "ada", "api_token": SECRET_TOKEN}

    kit.tool("gated", {}, gated, {"schema": CREDENTIALS})

    async def number(_args: Any) -> int:
        kit.runs["number"] += 1
        return 7

    kit.tool("number", {}, number, {"schema": {"type": "integer"}, "render": render_plain})

    if observe:
        kit.registry.on_result(kit.results.append, name="recorder")
    return kit


# -- rule packs --------------------------------------------------------------------------------------

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when PyYAML has it: the same YAML, faster


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's safe_load, as the pack reader parses with it


def read_yaml(path: Path) -> Any:
    """A data file parsed with libyaml (~7x PyYAML's speed, the same data), a fresh copy each call."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


@functools.cache
def load_yaml(path: Path) -> Any:
    """A data file parsed once per process (read_yaml); shared, so never change what it returns."""
    return read_yaml(path)


def dump(data: Any) -> str:
    """Block-style YAML, keys in insertion order."""
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, default_flow_style=False, allow_unicode=True)


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
        body = content if isinstance(content, str) else dump(content)
        (folder / filename).write_text(body, encoding="utf-8")
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


class MutatingApproval:
    """An approval service that hands the call it is asked about to `mutate`, then allows it once."""

    def __init__(self, mutate: Callable[[Any], None]) -> None:
        self.mutate = mutate

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.mutate(request.call)
        return ApprovalAnswer.ALLOWED_ONCE


def load_shell_word_cases(path: Path, keys: set[str], minimum: int) -> list[dict[str, Any]]:
    """A shell-words case file (tests/data/shell_words_*.yaml); a missing or malformed file fails collection."""
    cases = read_yaml(path)
    if not isinstance(cases, list) or len(cases) < minimum:
        raise AssertionError(f"{path.name} must hold a list of at least {minimum} cases")
    for case in cases:
        if not isinstance(case, dict) or not isinstance(case.get("command"), str) or set(case) - keys:
            raise AssertionError(f"malformed case in {path.name}: {case!r}")
        if not case.get("unknown") and "programs" not in case:
            raise AssertionError(f"a case must list programs or be unknown: {case!r}")
    return cases


def check_shell_word_case(case: dict[str, Any]) -> None:
    """One shell-words case (programs, operands present or absent, argv lines present or absent, or unknown)."""
    from policyengine.arguments.shell import CommandError, parse_command

    text = case["command"]
    if case.get("unknown"):
        try:
            parse_command(text)
        except CommandError:
            return
        raise AssertionError(f"{text!r} must be unknown (CommandError)")
    command = parse_command(text)
    assert list(command.programs) == case["programs"], command
    operands = [str(operand) for operand in command.operands]
    for operand in case.get("has_operands", []):
        assert operand in operands, command
    for operand in case.get("not_operands", []):
        assert operand not in operands, command
    for line in case.get("lines", []):
        assert line in command.lines, command.lines
    for line in case.get("not_lines", []):
        assert not any(found.startswith(line) for found in command.lines), command.lines


def reference_entries(sequence: Mapping[str, Any], *, with_cwd: bool = True) -> list[str]:
    """The decision entries (allow, ask, deny) a session's log holds after a sequence of
    tests/data/session_sequences.yaml, replayed through the reference path (`evaluate_sync`, then
    `review_recorded_sync` for a step's result) on a memory store: what every front end must write.
    `with_cwd=False` for a front end whose calls carry no working directory (MCP).
    """
    from policyengine import load_pack, pack_bundle
    from policyengine.enforce.evaluate import evaluate_sync, review_recorded_sync
    from policyengine.sessions import MemoryStore

    store = MemoryStore()
    store.log = {}
    registry = Registry(sessions=store)
    registry.install(pack_bundle(load_pack(ROOT / "policies" / sequence["pack"])))
    for i, step in enumerate(sequence["steps"]):
        call = step["call"]
        cwd = call.get("cwd") if with_cwd else None
        options: dict[str, Any] = {"session_id": "reference", "call_id": f"step-{i}", "cwd": cwd}
        decided = evaluate_sync(registry, call["name"], call["arguments"], **options)
        assert decided is not None and decided.decision.value == step["expect"]["decision"], (sequence["name"], i)
        if "result" in step and decided.decision.value != "deny":
            review_recorded_sync(registry, call["name"], call["arguments"], step["result"], **options)
    return [e.step.value for e in store.log.get("reference", []) if e.step.value != "result"]


def stop_helpers(place: Path, timeout: float = 10.0) -> None:
    """SIGTERM the hook helpers started under `place` and wait until they are gone.

    Each helper writes its pid in its lock file once it serves. Waiting matters: a helper closing
    its session store removes the SQLite WAL file, and a folder being removed meanwhile fails
    (test_init's teardown did: FileNotFoundError on sessions.sqlite3-wal).
    """
    deadline = time.monotonic() + timeout
    stopped: list[int] = []
    for lock in place.glob("hook-*.lock"):
        while not lock.read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.05)  # started, not yet serving
        text = lock.read_text().strip()
        if text:
            try:
                os.kill(int(text), signal.SIGTERM)
            except ProcessLookupError:
                continue  # gone already
            stopped.append(int(text))
    for pid in stopped:
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def _running(pid: int) -> bool:
    """Whether the process runs (a zombie has exited: only its parent's wait is missing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
