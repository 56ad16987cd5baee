"""`policyengine mcp-proxy` end to end: the real CLI entry as a subprocess, an upstream written with the SDK.

Two proxies start once for the module, side by side (tests/mcp_upstream_server.py behind each,
policies/baseline layered with tests/data/mcp_proxy), and the SDK's stdio client drives them:

  proxy A  a client that answers elicitation as `ELICIT.answer` says; --audit and --save-tools on;
           it answers tools/call on its fast path (Proxy.claim) once the session is known;
  proxy B  a client without the elicitation capability; every tools/call goes through the SDK's
           dispatch (POLICYENGINE_MCP_FAST_PATH=off), the reference the fast path is compared
           with; the crash test crashes its upstream (it runs after the comparison).

Each upstream appends the name of every tool body it runs to its own log file, so a test proves
that a denied call never reached it. The sessions live on one event loop in a background thread;
tests call `a(proxies, ...)` or `proxies.call("b", ...)`, which block until the call returns.
"""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import sys
import threading
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError as McpError
from mcp.shared.message import SessionMessage

import mcp_upstream_server as upstream
from policyengine.adapters import mcp_proxy
from policyengine.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PACKS = ["--pack", str(ROOT / "policies" / "baseline"), "--pack", str(ROOT / "tests" / "data" / "mcp_proxy")]
CALL_TIMEOUT = 0.5
MAX_RESULT_BYTES = 64 * 1024
T = TypeVar("T")


@dataclass
class Elicit:
    """What proxy A's client answers when asked, and what it was asked."""

    answer: str = "accept"  # accept | decline | cancel | error
    asked: list[str] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params.message)
        if self.answer == "error":
            return types.ErrorData(code=types.INTERNAL_ERROR, message="the client's dialog crashed")
        if self.answer == "accept":
            return types.ElicitResult(action="accept", content={})
        return types.ElicitResult(action=self.answer)  # type: ignore[arg-type]


ELICIT = Elicit()


class Proxies:
    """Both proxies' client sessions, held open on an event loop in a background thread."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.stop = asyncio.Event()
        self.sessions: dict[str, ClientSession] = {}
        self.holders: list[Any] = []

    def params(self, name: str, extra: list[str], env: dict[str, str] | None = None) -> StdioServerParameters:
        upstream_cmd = ["--", sys.executable, str(ROOT / "tests" / "mcp_upstream_server.py")]
        packs = one_call_packs(self.tmp)
        args = ["-m", "policyengine", "mcp-proxy", *packs, "--call-timeout", str(CALL_TIMEOUT), *extra, *upstream_cmd]
        env = {"MCP_UPSTREAM_LOG": str(self.log(name)), **(env or {})}
        return StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env=env)

    def log(self, name: str) -> Path:
        return self.tmp / f"upstream-{name}.log"

    async def hold(self, name: str, params: StdioServerParameters, ready: asyncio.Future[None], **kw: Any) -> None:
        with open(self.tmp / f"proxy-{name}.stderr", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write, **kw) as s:
                await s.initialize()
                self.sessions[name] = s
                ready.set_result(None)
                await self.stop.wait()

    def start(self) -> None:
        extra_a = [
            "--audit",
            str(self.tmp / "audit.jsonl"),
            "--save-tools",
            str(self.tmp / "tools.json"),
            "--max-result-bytes",
            str(MAX_RESULT_BYTES),
        ]

        async def both() -> None:
            ready_a, ready_b = self.loop.create_future(), self.loop.create_future()
            self.holders.append(
                asyncio.ensure_future(self.hold("a", self.params("a", extra_a), ready_a, elicitation_callback=ELICIT))
            )
            sdk_dispatch = self.params("b", [], {mcp_proxy.FAST_PATH_ENV: "off"})
            self.holders.append(asyncio.ensure_future(self.hold("b", sdk_dispatch, ready_b)))
            ready = asyncio.gather(ready_a, ready_b)
            await asyncio.wait([ready, *self.holders], timeout=60, return_when=asyncio.FIRST_COMPLETED)
            for holder in self.holders:
                if holder.done():
                    holder.result()  # a proxy that failed to start raises here
            if not ready.done():
                raise TimeoutError("the proxies did not start within 60s")

        self.run(both(), timeout=90)

    def run(self, coro: Awaitable[T], timeout: float = 30) -> T:
        async def wrap() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(timeout)

    def call(self, name: str, tool: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        return self.run(self.sessions[name].call_tool(tool, arguments or {}))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        try:
            self.run(asyncio.wait(self.holders, timeout=15), timeout=20)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)


def one_call_packs(tmp: Path) -> list[str]:
    """PACKS, baseline without its session rules: these tests share two connections (one session each), and a
    label one test earns (a credential read) would decide the next test's calls; sessions through the proxy are
    tests/test_sessions_mcp_proxy.py's."""
    copy = tmp / "baseline-one-call"
    if not copy.exists():
        shutil.copytree(ROOT / "policies" / "baseline", copy, ignore=shutil.ignore_patterns("session.yaml", "tests"))
        manifest = copy / "pack.yaml"
        manifest.write_text(manifest.read_text().replace("session.yaml, ", "").replace("tests: [tests/*.yaml]\n", ""))
    return ["--pack", str(copy), *PACKS[2:]]


@pytest.fixture(scope="module")
def proxies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxies]:
    """Proxy A and proxy B, started once for the module."""
    p = Proxies(tmp_path_factory.mktemp("mcp-proxy"))
    try:
        p.start()
    except BaseException:
        for name in ("a", "b"):
            err = p.tmp / f"proxy-{name}.stderr"
            if err.exists():
                print(f"proxy {name} stderr:\n{err.read_text()}", file=sys.stderr)
        p.close()
        raise
    yield p
    p.close()


def a(proxies: Proxies, tool: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
    return proxies.call("a", tool, arguments)


def ran(proxies: Proxies, name: str, tool: str) -> int:
    """How often the upstream behind proxy `name` really ran `tool`."""
    log = proxies.log(name)
    return log.read_text().split().count(tool) if log.exists() else 0


def text(result: types.CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, types.TextContent))


def denied(result: types.CallToolResult, rule: str, stage: str = "pre-execute", outcome: str = "denied") -> None:
    assert result.is_error, text(result)
    assert result.meta is not None, text(result)
    assert result.meta.get("policyengine/outcome") == outcome, result.meta
    assert result.meta.get("policyengine/stage") == stage, result.meta
    assert result.meta.get("policyengine/rule") == rule, result.meta


# -- catalog --------------------------------------------------------------------------------------


def test_tools_list_is_the_upstreams_own(proxies: Proxies) -> None:
    listed = proxies.run(proxies.sessions["a"].list_tools())
    got = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
    assert [t["name"] for t in got] == [t["name"] for t in upstream.TOOLS]
    for mine, theirs in zip(got, upstream.TOOLS, strict=True):
        for key in ("description", "inputSchema", "outputSchema", "annotations"):
            assert mine.get(key) == theirs.get(key), (theirs["name"], key)


def test_annotations_become_tags_and_schema_roles_become_roles() -> None:
    specs = {t["name"]: t for t in upstream.TOOLS}
    delete = mcp_proxy.proxied_tool(specs["delete_record"], None).definition  # type: ignore[arg-type]
    fetch = mcp_proxy.proxied_tool(specs["fetch"], None).definition  # type: ignore[arg-type]
    document = mcp_proxy.proxied_tool(specs["open_document"], None).definition  # type: ignore[arg-type]
    assert {"destructive", "idempotent"} <= delete.tags
    assert {"open-world", "read-only"} <= fetch.tags
    assert document.roles is not None and document.roles["target"] == "path"
    assert fetch.roles is not None and fetch.roles["url"] == "url"


# -- pre-execute, guards, approval ---------------------------------------------------------------


FAST_PATH_CASES: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"text": "hello"}),
    ("read_file", {"path": ".env"}),
    ("write_file", {"path": "/etc/passwd", "content": "x"}),
    ("leak", {}),
    ("echo", {"text": 3}),
    ("no_such_tool", {}),
]


def test_the_fast_path_answers_exactly_as_the_sdk_dispatch(proxies: Proxies) -> None:
    proxies.run(proxies.sessions["a"].list_tools())  # the session is known: A answers on its fast path
    for tool, arguments in FAST_PATH_CASES:
        fast, reference = a(proxies, tool, arguments), proxies.call("b", tool, arguments)
        assert fast.model_dump(mode="json") == reference.model_dump(mode="json"), tool


def test_an_allowed_call_reaches_the_upstream(proxies: Proxies) -> None:
    before = ran(proxies, "a", "echo")
    result = a(proxies, "echo", {"text": "hello"})
    assert not result.is_error and text(result) == "hello"
    assert ran(proxies, "a", "echo") == before + 1


@pytest.mark.parametrize(
    ("tool", "arguments", "rule", "stage"),
    [
        ("write_file", {"path": "notes.txt", "content": "x"}, "deny-direct-writes", "pre-execute"),
        ("delete_record", {"id": 7}, "deny-destructive-tools", "pre-execute"),  # by its destructiveHint
        ("read_file", {"path": "/etc/shadow"}, "no-system-dirs", "guard"),
        ("open_document", {"target": "config/.env"}, "deny-env-files", "pre-execute"),
    ],
)
def test_a_denied_call_never_reaches_the_upstream(
    proxies: Proxies, tool: str, arguments: dict[str, Any], rule: str, stage: str
) -> None:
    before = ran(proxies, "a", tool)
    denied(a(proxies, tool, arguments), rule, stage)
    assert ran(proxies, "a", tool) == before


def test_an_asked_call_runs_once_a_person_accepts(proxies: Proxies) -> None:
    ELICIT.answer, asked, before = "accept", len(ELICIT.asked), ran(proxies, "a", "run")
    result = a(proxies, "run", {"command": "ls -la"})
    assert not result.is_error and text(result) == "ran ls -la"
    assert ran(proxies, "a", "run") == before + 1
    assert len(ELICIT.asked) == asked + 1
    assert "ls -la" in ELICIT.asked[-1] and "ask-before-shell" in ELICIT.asked[-1]


@pytest.mark.parametrize("answer", ["decline", "cancel", "error"])
def test_an_asked_call_is_denied_unless_a_person_accepts(proxies: Proxies, answer: str) -> None:
    ELICIT.answer, asked, before = answer, len(ELICIT.asked), ran(proxies, "a", "run")
    try:
        result = a(proxies, "run", {"command": "ls"})
    finally:
        ELICIT.answer = "accept"
    denied(result, "ask-before-shell", "approval")
    assert len(ELICIT.asked) == asked + 1
    assert ran(proxies, "a", "run") == before
    expected = "the client's dialog crashed" if answer == "error" else "a person denied the call"
    assert expected in text(result)


def test_a_red_line_is_never_put_to_a_person(proxies: Proxies) -> None:
    asked, before = len(ELICIT.asked), ran(proxies, "a", "run")
    result = a(proxies, "run", {"command": "rm -rf build"})  # ask-before-shell matches too
    denied(result, "no-deletes-through-shell", "guard")
    assert len(ELICIT.asked) == asked  # the guard denied before anyone was asked
    assert ran(proxies, "a", "run") == before


def test_a_client_without_elicitation_is_denied_without_asking(proxies: Proxies) -> None:
    before = ran(proxies, "b", "run")
    result = proxies.call("b", "run", {"command": "ls"})
    denied(result, "ask-before-shell", "approval")
    assert "does not support elicitation" in text(result)
    assert ran(proxies, "b", "run") == before


# -- results ----------------------------------------------------------------------------------


def test_a_credential_arrives_redacted_in_content_and_structured_content(proxies: Proxies) -> None:
    # The SDK client validates structuredContent against the tool's outputSchema: redaction must keep it valid.
    result = a(proxies, "leak")
    assert not result.is_error
    assert upstream.FAKE_TOKEN not in result.model_dump_json()
    assert result.structured_content == {"service": "billing", "token": "[REDACTED]"}
    assert "[REDACTED]" in text(result)


def test_invalid_calls_end_as_error_results(proxies: Proxies) -> None:
    unknown = a(proxies, "no_such_tool")
    assert unknown.is_error and "unknown tool 'no_such_tool'" in text(unknown)
    wrong = a(proxies, "echo", {"text": 5})
    assert wrong.is_error and "invalid arguments for tool 'echo'" in text(wrong)


# -- failures ---------------------------------------------------------------------------------


def test_a_pack_deadline_stops_a_slow_call(proxies: Proxies) -> None:
    start = time.monotonic()
    result = a(proxies, "slow", {"seconds": 5})
    assert time.monotonic() - start < 3
    assert result.is_error and result.meta is not None and result.meta["policyengine/outcome"] == "timed_out"
    assert "slow-deadline" in text(result)


def test_a_hanging_upstream_hits_the_call_timeout(proxies: Proxies) -> None:
    result = a(proxies, "hang")
    assert result.is_error and result.meta is not None and result.meta["policyengine/outcome"] == "timed_out"
    assert f"did not answer within {CALL_TIMEOUT:g}s (--call-timeout)" in text(result)
    assert text(a(proxies, "echo", {"text": "still serving"})) == "still serving"


def test_a_call_the_client_gives_up_on_is_cancelled_upstream_and_audited(proxies: Proxies) -> None:
    session = proxies.sessions["a"]
    with pytest.raises(McpError):
        proxies.run(session.call_tool("hang", {}, read_timeout_seconds=0.2))  # the SDK sends notifications/cancelled
    assert text(a(proxies, "echo", {"text": "still serving"})) == "still serving"
    audit = [json.loads(line) for line in (proxies.tmp / "audit.jsonl").read_text().splitlines()]
    assert [r["result"]["outcome"] for r in audit if r["name"] == "hang"][-1] == "cancelled"


def test_an_oversized_result_is_refused(proxies: Proxies) -> None:
    result = a(proxies, "huge", {"size": MAX_RESULT_BYTES * 2})
    assert result.is_error and "--max-result-bytes" in text(result)
    assert len(text(a(proxies, "huge", {"size": 1000}))) == 1000


@pytest.mark.parametrize(
    ("kind", "says"),
    [("garbage", "not a JSON-RPC message"), ("shape", "is not a CallToolResult")],
)
def test_a_malformed_reply_ends_as_an_error(proxies: Proxies, kind: str, says: str) -> None:
    result = a(proxies, "malformed", {"kind": kind})
    assert result.is_error and says in text(result), text(result)
    assert text(a(proxies, "echo", {"text": "still serving"})) == "still serving"


def test_after_an_upstream_crash_calls_end_as_errors_and_policy_still_answers(proxies: Proxies) -> None:
    crashed = proxies.call("b", "crash")
    assert crashed.is_error and "has exited (exit code 3)" in text(crashed), text(crashed)
    later = proxies.call("b", "echo", {"text": "anyone?"})
    assert later.is_error and "has exited" in text(later) and "restart the proxy" in text(later)
    denied(proxies.call("b", "write_file", {"path": "a", "content": "b"}), "deny-direct-writes")
    assert [t.name for t in proxies.run(proxies.sessions["b"].list_tools()).tools][:1] == ["echo"]


# -- audit ------------------------------------------------------------------------------------


def test_the_audit_replays_through_dry_run_to_the_same_decisions(proxies: Proxies) -> None:
    ELICIT.answer = "accept"
    a(proxies, "run", {"command": "pwd"})  # ask, allowed
    ELICIT.answer = "decline"
    try:
        a(proxies, "run", {"command": "pwd"})  # ask, refused
    finally:
        ELICIT.answer = "accept"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("echo", {"text": "x"}),
        ("write_file", {"path": "a", "content": "b"}),
        ("delete_record", {"id": 1}),
        ("run", {"command": "shred secrets.txt"}),
        ("leak", {}),
        ("fetch", {"url": "https://example.com/?key=" + upstream.FAKE_TOKEN}),
        ("echo", {"text": 1}),
    ]
    for tool, arguments in calls:
        a(proxies, tool, arguments)
    audit, replay = proxies.tmp / "audit.jsonl", proxies.tmp / "replay.jsonl"
    recorded = [json.loads(line) for line in audit.read_text().splitlines()]
    out, err = io.StringIO(), io.StringIO()
    packs = one_call_packs(proxies.tmp)
    argv = ["dry-run", str(audit), *packs, "--tools", str(proxies.tmp / "tools.json"), "--output", str(replay)]
    assert main([*argv, "--format", "json"], out=out, err=err) == 0, err.getvalue()
    replayed = [json.loads(line) for line in replay.read_text().splitlines()]
    assert len(replayed) == len(recorded) >= 10
    # A record whose credentials were redacted before it was written (docs/audit.md) replays what is left.
    kept = [not r.get("redacted") for r in recorded]
    decided = [(r["name"], r["decision"], r["rule"]) for r in recorded]
    again = [(r["name"], r["decision"], r["rule"]) for r in replayed]
    assert [d for d, k in zip(decided, kept, strict=True) if k] == [d for d, k in zip(again, kept, strict=True) if k]
    assert {d for _n, d, _r in decided} >= {"allow", "ask", "deny", "invalid"}
    fetched = [r for r in recorded if r["name"] == "fetch" and r["decision"] == "deny"]
    assert fetched and all(r["redacted"] and upstream.FAKE_TOKEN not in json.dumps(r) for r in fetched)
    leaks = [r for r in recorded if r["name"] == "leak"]
    assert leaks and all(upstream.FAKE_TOKEN not in json.dumps(r["result"]) for r in leaks)  # audited redacted


# -- the command line and the pieces --------------------------------------------------------------


def test_the_command_line_refuses_what_cannot_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(*argv: str) -> tuple[int, str]:
        err = io.StringIO()
        return main(["mcp-proxy", *argv], out=io.StringIO(), err=err), err.getvalue()

    code, said = run(*PACKS)
    assert code == 2 and "needs the command that starts the upstream MCP server" in said
    code, said = run(*PACKS, "--")
    assert code == 2 and "after `--`" in said
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pack.yaml").write_text("name: broken\nversion: '1.0.0'\nfiles: [missing.yaml]\n")
    code, said = run("--pack", str(broken), "--", sys.executable, "-c", "pass")
    assert code == 2 and "missing.yaml" in said
    code, said = run(*PACKS, "--call-timeout", "0", "--", "x")
    assert code == 2 and "--call-timeout" in said
    code, said = run(*PACKS, "--", str(tmp_path / "no-such-server"))
    assert code == 2 and "cannot start the upstream MCP server" in said
    code, said = run(*PACKS, "--", sys.executable, "-c", "print('not MCP')")
    assert code == 2 and "did not start: it exited (exit code 0) before the MCP handshake" in said
    monkeypatch.delitem(sys.modules, "policyengine.adapters.mcp_proxy")
    monkeypatch.setitem(sys.modules, "mcp", None)
    code, said = run(*PACKS, "--", "x")
    assert code == 2 and "pip install 'agent-policyengine[mcp]'" in said


def test_lines_over_the_limit_are_skipped_and_named() -> None:
    lines = mcp_proxy._Lines(limit=20)
    assert lines.feed(b'{"a": 1}\n\n{"b"') == [b'{"a": 1}']
    assert lines.feed(b": 2}\n") == [b'{"b": 2}']
    out = lines.feed(b'{"jsonrpc":"2.0","id":7,' + b"x" * 50)
    assert out == []
    (big,) = lines.feed(b"yyy\n")
    assert isinstance(big, mcp_proxy._Oversized) and big.size == 24 + 50 + 3
    refuse = mcp_proxy._reply_too_large(20)
    reply = refuse(mcp_proxy._Oversized(b'{"jsonrpc": "2.0", "id": "pe-4", "result": {', 10**6))
    assert isinstance(reply, SessionMessage) and isinstance(reply.message, types.JSONRPCError)
    assert reply.message.id == "pe-4" and "--max-result-bytes" in reply.message.error.message
    assert isinstance(refuse(mcp_proxy._Oversized(b'{"result": {"id": 3', 10**6)), mcp_proxy.MalformedLine)
    assert lines.feed(b"  \r\n") == []
