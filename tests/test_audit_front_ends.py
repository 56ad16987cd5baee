"""Every front end's audit file is 0600 and holds no red-team credential in clear; asked calls record the approval.

Each front end is run for real: the Registry with an AuditRecorder, the MCP proxy (the SDK's stdio
client against `python -m policyengine mcp-proxy`), the Claude Code hook (the CLI in a process of
its own), a LangChain `create_agent` run and an OpenAI Agents SDK run. Each value is sent as a
call's arguments and comes back as its result, so arguments and results (refused calls included)
are both checked. The whole corpus (every secret of tests/adversarial/secrets.yaml and the calls of
tests/adversarial/calls-*.yaml whose arguments carry a credential no earlier one did) goes through
the registry; the other front ends, which write through the same record, redaction and writer, get
the secrets.yaml cases (scanning the whole corpus costs about a minute a front end).
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client

from langchain_chat import ScriptedChat
from policyengine import PolicyLayers, Registry
from policyengine.adapters.langchain import PolicyMiddleware
from policyengine.adapters.openai_agents import PolicyGuard
from policyengine.arguments.secret_scanner import is_credential_key, text_has_secret
from policyengine.audit import AuditRecorder
from policyengine.tools.catalog import tool_from_spec
from support import load_yaml

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "policies" / "baseline"
ADAPTERS = ROOT / "tests" / "data" / "adapters"
MCP_PACKS = [BASELINE, ROOT / "tests" / "data" / "mcp_proxy"]
BATCH = 60  # corpus values per call: the hook and the agents run a process or a graph step per call


# -- the corpus ----------------------------------------------------------------------------------


@cache
def detector_cases() -> tuple[Any, ...]:
    """The values tests/adversarial/secrets.yaml says are secrets."""
    cases = load_yaml(ROOT / "tests" / "adversarial" / "secrets.yaml")
    return tuple(c["value"] for c in cases if c.get("secret"))


@cache
def whole_corpus() -> tuple[Any, ...]:
    """The red-team corpus's secrets: secret cases of secrets.yaml, and calls-*.yaml arguments that carry one."""
    values: list[Any] = list(detector_cases())
    for path in sorted(glob.glob(str(ROOT / "tests" / "adversarial" / "calls-*.yaml"))):
        for case in load_yaml(Path(path)).get("cases", []):  # libyaml, parsed once per process
            arguments = (case.get("call") or {}).get("arguments")
            if isinstance(arguments, dict) and text_has_secret(json.dumps(arguments)):
                values.append(arguments)
    assert len(values) > 500, len(values)  # missing data fails, never skips
    return tuple(values)


@cache
def corpus() -> tuple[Any, ...]:
    """Every secret of secrets.yaml, and the calls that carry a credential no earlier value did (many repeat one)."""
    chosen: list[Any] = []
    seen: set[str] = set()
    cases = len(detector_cases())
    for n, (value, carried) in enumerate(zip(whole_corpus(), _carried(), strict=True)):
        if n < cases or not carried <= seen:
            chosen.append(value)
            seen |= carried
    assert seen == credentials()
    return tuple(chosen)


def text_of(value: Any) -> str:
    """A corpus value as the text a tool is sent: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str):
        yield key, value


def _credentials_of(value: Any) -> frozenset[str]:
    found: set[str] = set()
    for key, text in _strings(value):
        if is_credential_key(key) and len(text) >= 8 and not any(c.isspace() for c in text):
            found.add(text)
        for word in text.split():
            word = word.strip("\"'`,;()[]{}<>")
            for part in (word, word.rpartition("=")[2], word.rpartition(":")[2]):
                if len(part) >= 12 and text_has_secret(part):
                    found.add(part)
    return frozenset(found)


@cache
def _carried() -> tuple[frozenset[str], ...]:
    return tuple(_credentials_of(value) for value in whole_corpus())


@cache
def credentials() -> frozenset[str]:
    """The corpus's credentials as literal strings: values under credential keys, and words read as one."""
    found = frozenset().union(*_carried())
    assert len(found) > 300, len(found)
    return found


def batches(size: int = BATCH) -> list[list[Any]]:
    """The secrets.yaml cases in batches of `size` (one call, event or graph step each)."""
    values = list(detector_cases())
    return [values[i : i + size] for i in range(0, len(values), size)]


@cache
def detector_credentials() -> frozenset[str]:
    return frozenset().union(*_carried()[: len(detector_cases())])


def assert_private_and_clean(
    path: Path, *, front_end: str, least: int, sent: frozenset[str] | None = None
) -> list[dict[str, Any]]:
    """The audit file is 0600, of `front_end`, and no credential `sent` is in it, raw or JSON-escaped."""
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, oct(path.stat().st_mode)
    text = path.read_text("utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) >= least and {r["front_end"] for r in records} == {front_end}
    watched = sent if sent is not None else detector_credentials()
    assert len(watched) > 150
    leaked = sorted(c for c in watched if c in text or json.dumps(c)[1:-1] in text)
    assert leaked == [], leaked[:10]
    assert any(r.get("redacted") for r in records)
    return records


# -- the registry (library use) ------------------------------------------------------------------

STORE_SPEC = {
    "name": "store",
    "description": "Store a note and answer it back.",
    "inputSchema": {"type": "object", "properties": {"payload": {}}, "required": ["payload"]},
}


def test_the_registry_recorder_writes_0600_and_no_corpus_credential(tmp_path: Path) -> None:
    """The whole corpus as arguments (results carry the secrets.yaml cases: the front ends below, and the echo here)."""
    registry = Registry()
    registry.register(tool_from_spec(STORE_SPEC).with_execute(lambda a: {"stored": a["payload"]}))
    registry.register(tool_from_spec({**STORE_SPEC, "name": "keep"}).with_execute(lambda a: {"kept": True}))
    layers = PolicyLayers.install(registry, [str(BASELINE)])
    path = tmp_path / "audit.jsonl"
    recorder = AuditRecorder(path, packs=lambda: layers.packs)
    registry.on_result(recorder, name="audit")
    for n, value in enumerate(corpus()):
        registry.call_sync("store" if n < len(detector_cases()) else "keep", {"payload": value}, call_id=f"r{n}")
    recorder.close()
    assert recorder.failures == 0
    records = assert_private_and_clean(path, front_end="registry", least=len(corpus()), sent=credentials())
    assert {r["pack_digest"] for r in records} == {layers.packs[0].digest}


def test_a_registry_approval_records_who_answered_when_and_what(tmp_path: Path) -> None:
    from policyengine import ApprovalAnswer, ApprovalRequest

    class Person:
        name = "alice at the console"

        async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
            return ApprovalAnswer.ALLOWED_ONCE if request.call.call_id == "yes" else ApprovalAnswer.DENIED

    spec = {**STORE_SPEC, "name": "run_shell", "inputSchema": {"type": "object", "properties": {"command": {}}}}
    registry = Registry(approval=Person())
    registry.register(tool_from_spec(spec).with_execute(lambda a: "ran"))
    layers = PolicyLayers.install(registry, [str(ADAPTERS)])
    path = tmp_path / "audit.jsonl"
    registry.on_result(recorder := AuditRecorder(path, packs=layers.packs), name="audit")
    registry.call_sync("run_shell", {"command": "ls"}, call_id="yes")
    registry.call_sync("run_shell", {"command": "ls"}, call_id="no")
    recorder.close()
    yes, no = (json.loads(line) for line in path.read_text("utf-8").splitlines())
    assert (yes["decision"], yes["rule"], yes["result"]["outcome"]) == ("ask", "ask-before-shell", "ok")
    assert (yes["approval"]["answer"], yes["approval"]["by"]) == ("allowed-once", "alice at the console")
    assert (no["approval"]["answer"], no["result"]["outcome"]) == ("denied", "denied")
    assert yes["timestamp"] - 60 < yes["approval"]["at"] <= yes["timestamp"]


# -- the MCP proxy -----------------------------------------------------------------------------------


async def _through_proxy(audit: Path, calls: Sequence[tuple[str, dict[str, Any]]], answer: str) -> list[Any]:
    async def elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        if answer == "accept":
            return types.ElicitResult(action="accept", content={})
        return types.ElicitResult(action="decline")

    packs = [a for p in MCP_PACKS for a in ("--pack", str(p))]
    upstream = ["--", sys.executable, str(ROOT / "tests" / "mcp_upstream_server.py")]
    args = ["-m", "policyengine", "mcp-proxy", *packs, "--audit", str(audit), *upstream]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env=dict(os.environ))
    with open(audit.with_suffix(".stderr"), "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, elicitation_callback=elicit) as session,
        ):
            await session.initialize()
            return [await session.call_tool(name, arguments) for name, arguments in calls]


def test_the_mcp_proxy_audit_is_0600_and_holds_no_corpus_credential(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    calls = [("echo", {"text": text_of(value)}) for value in detector_cases()]
    replies = asyncio.run(_through_proxy(audit, calls, "accept"))
    assert len(replies) == len(calls)
    assert_private_and_clean(audit, front_end="mcp-proxy", least=len(calls))


def test_the_mcp_proxy_records_the_persons_answer_to_its_elicitation(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    asyncio.run(_through_proxy(audit, [("run", {"command": "pwd"})], "accept"))
    asyncio.run(_through_proxy(audit, [("run", {"command": "pwd"})], "decline"))
    allowed, declined = (json.loads(line) for line in audit.read_text("utf-8").splitlines())
    assert allowed["decision"] == declined["decision"] == "ask"
    assert allowed["approval"]["answer"] == "allowed-once" and declined["approval"]["answer"] == "denied"
    assert "MCP client" in allowed["approval"]["by"] and "elicitation" in allowed["approval"]["by"]
    assert isinstance(allowed["approval"]["at"], float)


def test_an_existing_audit_file_others_can_read_is_tightened_and_said(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    audit.write_text("")
    audit.chmod(0o644)
    asyncio.run(_through_proxy(audit, [("echo", {"text": "hello"})], "accept"))
    assert stat.S_IMODE(audit.stat().st_mode) == 0o600
    assert "tightened to 0600" in audit.with_suffix(".stderr").read_text("utf-8")


# -- the Claude Code hook ----------------------------------------------------------------------------


def _hook(audit: Path, event: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "policyengine", "hook", "claude-code", "--pack", str(BASELINE)]
    sessions = f"sqlite:{audit.with_suffix('.sessions.sqlite3')}"
    env = {**os.environ, "POLICYENGINE_HOOK_HELPER": "off", "POLICYENGINE_CACHE": str(audit.parent / "cache")}
    return subprocess.run(
        [*command, "--audit", str(audit), "--sessions", sessions],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=env,
        cwd=str(ROOT),
        timeout=120,
        check=False,
    )


def _event(hook: str, name: str, arguments: dict[str, Any], call_id: str, response: Any = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "session_id": "audit-test",
        "cwd": "/workspace",
        "hook_event_name": hook,
        "tool_name": name,
        "tool_input": arguments,
        "tool_use_id": call_id,
    }
    if hook == "PostToolUse":
        event["tool_response"] = response
    return event


def test_the_claude_code_hook_audit_is_0600_and_holds_no_corpus_credential(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    for n, batch in enumerate(batches(size=150)):
        arguments = {"content": json.dumps(batch)}
        pre = _hook(audit, _event("PreToolUse", "mcp__notes__store", arguments, f"h{n}"))
        post = _hook(
            audit,
            _event(
                "PostToolUse", "mcp__notes__store", arguments, f"h{n}", [{"type": "text", "text": json.dumps(batch)}]
            ),
        )
        assert pre.returncode == post.returncode == 0, pre.stderr + post.stderr
    assert_private_and_clean(audit, front_end="claude-code-hook", least=2 * len(batches(size=150)))


def test_the_hook_records_the_question_and_then_the_users_yes(tmp_path: Path) -> None:
    """Claude Code asks its user; the hook sees the question (PreToolUse) and, if the user allowed it, the run."""
    audit = tmp_path / "audit.jsonl"
    arguments = {"command": "git push --force origin main"}
    pre = _hook(audit, _event("PreToolUse", "Bash", arguments, "ask-1"))
    assert json.loads(pre.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask", pre.stdout + pre.stderr
    _hook(audit, _event("PostToolUse", "Bash", arguments, "ask-1", {"stdout": "", "stderr": "", "interrupted": False}))
    asked, ran = (json.loads(line) for line in audit.read_text("utf-8").splitlines())
    assert (asked["event"], asked["decision"], asked["approval"]["answer"]) == ("PreToolUse", "ask", "asked")
    assert (ran["event"], ran["approval"]["answer"]) == ("PostToolUse", "allowed-once")
    assert ran["approval"]["by"] == asked["approval"]["by"] == "the Claude Code user (permission prompt)"


# -- LangChain -----------------------------------------------------------------------------------------


@tool
def store(payload: str) -> str:
    """Store a note and answer it back."""
    return payload


@tool
def run_shell(command: str) -> str:
    """Run a shell command."""
    return f"ran {command}"


def test_a_langchain_run_writes_0600_and_no_corpus_credential(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    middleware = PolicyMiddleware(packs=[ADAPTERS], audit=audit)
    agent = create_agent(ScriptedChat(), [store, run_shell], middleware=[middleware], checkpointer=InMemorySaver())
    for n, batch in enumerate(batches()):
        calls = [("store", {"payload": text_of(value)}) for value in batch]
        agent.invoke({"messages": [HumanMessage(json.dumps(calls))]}, {"configurable": {"thread_id": f"t{n}"}})
    assert middleware.gate.audit is not None and middleware.gate.audit.failures == 0
    assert_private_and_clean(audit, front_end="langchain", least=len(detector_cases()))


def test_a_langchain_approval_records_the_answer(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    middleware = PolicyMiddleware(packs=[ADAPTERS], audit=audit)
    agent = create_agent(ScriptedChat(), [run_shell], middleware=[middleware], checkpointer=InMemorySaver())
    answers = {"t-yes": {"type": "approve"}, "t-no": {"type": "reject", "message": "not today"}}
    for thread, answer in answers.items():
        config: Any = {"configurable": {"thread_id": thread}}
        state = agent.invoke({"messages": [HumanMessage(json.dumps([["run_shell", {"command": "ls"}]]))]}, config)
        [pause] = state["__interrupt__"]
        agent.invoke(Command(resume={pause.id: answer}), config)
    yes, no = (json.loads(line) for line in audit.read_text("utf-8").splitlines())
    assert (yes["decision"], yes["post"], yes["approval"]["answer"]) == ("ask", "accepted", "allowed-once")
    assert (no["decision"], no["approval"]["answer"]) == ("ask", "denied") and "not today" in no["approval"]["reason"]
    assert yes["approval"]["by"] == "langgraph interrupt (Command(resume=...))"
    assert yes["session_id"] == "t-yes" and stat.S_IMODE(audit.stat().st_mode) == 0o600


# -- the OpenAI Agents SDK -------------------------------------------------------------------------------


@function_tool(name_override="store")
def agents_store(payload: str) -> str:
    """Store a note and answer it back."""
    return payload


@function_tool(name_override="run_shell")
def agents_shell(command: str) -> str:
    """Run a shell command."""
    return f"ran {command}"


CONFIG = RunConfig(tracing_disabled=True)


def test_an_agents_sdk_run_writes_0600_and_no_corpus_credential(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    guard = PolicyGuard(packs=[ADAPTERS], audit=audit)
    tools = guard.protect([agents_store])
    for n, batch in enumerate(batches()):
        calls = [function_call("store", {"payload": text_of(v)}, call_id=f"a{n}-{i}") for i, v in enumerate(batch)]
        agent = Agent(name="ops", model=ScriptedModel([calls, [assistant_message("ok")]]), tools=tools)
        Runner.run_sync(agent, "store these", run_config=CONFIG)
    assert guard.gate.audit is not None and guard.gate.audit.failures == 0
    assert_private_and_clean(audit, front_end="openai-agents", least=len(detector_cases()))


def test_an_agents_sdk_approval_records_the_question_and_the_answer(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    guard = PolicyGuard(packs=[ADAPTERS], audit=audit)
    tools = guard.protect([agents_shell])
    for call_id, approve in (("s-yes", True), ("s-no", False)):
        steps = [[function_call("run_shell", {"command": "ls"}, call_id=call_id)], [assistant_message("ok")]]
        agent = Agent(name="ops", model=ScriptedModel(steps), tools=tools)
        paused = Runner.run_sync(agent, "run ls", run_config=CONFIG)
        [item] = paused.interruptions
        state = paused.to_state()
        state.approve(item) if approve else state.reject(item, rejection_message="not today")
        Runner.run_sync(agent, state, run_config=CONFIG)
    records = [json.loads(line) for line in audit.read_text("utf-8").splitlines()]
    answers = [(r["call_id"], r["approval"]["answer"]) for r in records]
    assert answers == [("s-yes", "asked"), ("s-yes", "allowed-once"), ("s-no", "asked")]
    assert records[1]["post"] == "accepted" and records[1]["approval"]["by"] == "openai-agents RunState.approve/reject"
    assert stat.S_IMODE(audit.stat().st_mode) == 0o600


@pytest.fixture(autouse=True)
def _no_inherited_otel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The subprocesses here export nothing: no OTEL_* endpoint leaks in from the machine."""
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
