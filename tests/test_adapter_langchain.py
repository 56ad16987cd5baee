"""The LangChain adapter, end to end with `create_agent`, langgraph interrupts and a scripted model (no network).

Every tool body records its invocations: a call policy refuses must leave no record. One agent
graph (the packs loaded once) serves every test, each on its own checkpointer thread. The model
calls the tools the human message lists as JSON, then answers; the ToolMessages in the final
state are exactly what it read.
"""

from __future__ import annotations

import asyncio
import json
from itertools import count
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import ValidationError

import policyengine.enforce.decision_point as decision_point_module
from langchain_chat import ScriptedChat
from policyengine import Registry, deny
from policyengine.adapters.gate import PolicyGate
from policyengine.adapters.langchain import PolicyMiddleware
from policyengine.enforce.evaluate import PostOutcome, Verdict
from policyengine.errors import UsageError

PACK = Path(__file__).parent / "data" / "adapters"
TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"

CALLS: list[tuple[str, dict[str, Any]]] = []


@tool
def run_shell(command: str) -> str:
    """Run a shell command."""
    CALLS.append(("run_shell", {"command": command}))
    return f"ran {command}"


@tool
def write_file(path: str, text: str) -> str:
    """Write a file."""
    CALLS.append(("write_file", {"path": path, "text": text}))
    return "written"


@tool
def read_config(name: str) -> str:
    """Read a configuration entry."""
    CALLS.append(("read_config", {"name": name}))
    if name == "internal":
        return "INTERNAL ONLY: the on-call rota"
    return f"{name}: github token {TOKEN}"


@tool
def remember(note: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Store a note; answers with a state update, as tools that change the agent's state do."""
    CALLS.append(("remember", {"note": note}))
    return Command(update={"messages": [ToolMessage(f"stored: {note}", tool_call_id=tool_call_id)]})


@tool(response_format="content_and_artifact")
def fetch_account(name: str) -> tuple[str, dict[str, Any]]:
    """Fetch an account: a summary for the model, the record for the application."""
    CALLS.append(("fetch_account", {"name": name}))
    if name == "internal":
        return "one account", {"name": name, "notes": "INTERNAL ONLY: the on-call rota"}
    return "one account", {"name": name, "api_token": TOKEN, "plan": "team"}


MIDDLEWARE = PolicyMiddleware(packs=[PACK], tools=[read_config])
AGENT = create_agent(
    ScriptedChat(),
    [run_shell, write_file, read_config, remember, fetch_account],
    middleware=[MIDDLEWARE],
    checkpointer=InMemorySaver(),
)
THREADS = count()


@pytest.fixture(autouse=True)
def _fresh_calls() -> None:
    CALLS.clear()


def _config() -> RunnableConfig:
    return {"configurable": {"thread_id": f"t{next(THREADS)}"}}


def _start(*calls: tuple[str, dict[str, Any]]) -> tuple[dict[str, Any], RunnableConfig]:
    config = _config()
    state = AGENT.invoke({"messages": [HumanMessage(json.dumps(calls))]}, config)
    return state, config


def _read(state: dict[str, Any]) -> dict[str, ToolMessage]:
    """The ToolMessages the model read, by call id."""
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


def test_a_denied_call_never_reaches_the_body_and_the_model_reads_why() -> None:
    state, _ = _start(("write_file", {"path": "a.txt", "text": "x"}))
    assert CALLS == []
    assert "__interrupt__" not in state
    message = _read(state)["call-0"]
    assert (message.content, message.status) == ("Denied by policy: write_file may not write files.", "error")
    assert state["messages"][-1].content == "done"


def test_an_asked_call_pauses_and_runs_once_approved() -> None:
    state, config = _start(("run_shell", {"command": "ls -la"}))
    assert CALLS == []  # paused before the body
    [pause] = state["__interrupt__"]
    assert pause.value == {
        "type": "tool_approval",
        "tool_call_id": "call-0",
        "name": "run_shell",
        "args": {"command": "ls -la"},
        "description": "Run the shell command `ls -la`?",
        "rule": "ask-before-shell",
        "pack": "adapters-test",
    }
    state = AGENT.invoke(Command(resume={pause.id: {"type": "approve"}}), config)
    assert CALLS == [("run_shell", {"command": "ls -la"})]
    assert _read(state)["call-0"].content == "ran ls -la"
    assert state["messages"][-1].content == "done"


def test_a_rejected_call_never_reaches_the_body() -> None:
    state, config = _start(("run_shell", {"command": "make deploy"}))
    [pause] = state["__interrupt__"]
    state = AGENT.invoke(Command(resume={pause.id: {"type": "reject", "message": "not today"}}), config)
    assert CALLS == []
    message = _read(state)["call-0"]
    assert message.status == "error"
    assert "rejected the call to `run_shell` with reason: not today" in str(message.content)


def test_an_answer_that_is_not_approve_or_reject_is_refused_and_can_be_given_again() -> None:
    state, config = _start(("run_shell", {"command": "make"}))
    [pause] = state["__interrupt__"]
    with pytest.raises(ValidationError):
        AGENT.invoke(Command(resume={pause.id: {"type": "edit", "edited_action": {}}}), config)
    assert CALLS == []
    state = AGENT.invoke(Command(resume={pause.id: {"type": "approve"}}), config)
    assert CALLS == [("run_shell", {"command": "make"})]


def test_a_red_line_is_never_asked_and_approving_its_neighbour_does_not_let_it_through() -> None:
    state, config = _start(("run_shell", {"command": "ls"}), ("run_shell", {"command": "rm -rf /workspace/build"}))
    [pause] = state["__interrupt__"]  # only `ls` is put to a person
    assert pause.value["tool_call_id"] == "call-0"
    state = AGENT.invoke(Command(resume={pause.id: {"type": "approve"}}), config)
    assert CALLS == [("run_shell", {"command": "ls"})]
    assert _read(state)["call-1"].content == "Red line: run_shell would delete files."


def test_a_credential_in_a_result_reaches_the_model_redacted() -> None:
    state, _ = _start(("read_config", {"name": "ci"}))
    assert CALLS == [("read_config", {"name": "ci"})]
    assert _read(state)["call-0"].content == "ci: github token [REDACTED]"
    assert TOKEN not in repr(state["messages"])


def test_a_result_inside_a_command_is_redacted_too() -> None:
    note = f"the token is {TOKEN}"
    state, _ = _start(("remember", {"note": note}))
    assert len(CALLS) == 1 and CALLS[0] == ("remember", {"note": note})
    assert _read(state)["call-0"].content == "stored: the token is [REDACTED]"


def test_an_artifact_beside_the_content_is_redacted_too() -> None:
    state, _ = _start(("fetch_account", {"name": "ci"}))
    message = _read(state)["call-0"]
    assert (message.content, message.status) == ("one account", "success")
    assert message.artifact == {"name": "ci", "api_token": "[REDACTED]", "plan": "team"}
    assert TOKEN not in repr(state["messages"])


def test_a_blocked_artifact_withholds_the_whole_message() -> None:
    state, _ = _start(("fetch_account", {"name": "internal"}))
    message = _read(state)["call-0"]
    assert (message.content, message.status) == ("The result of fetch_account is internal and was withheld.", "error")
    assert message.artifact is None and "INTERNAL ONLY" not in repr(state["messages"])


def test_a_blocked_result_is_replaced_by_the_feedback() -> None:
    state, _ = _start(("read_config", {"name": "internal"}))
    message = _read(state)["call-0"]
    assert (message.content, message.status) == ("The result of read_config is internal and was withheld.", "error")


def test_the_async_path_enforces_the_same() -> None:
    config = _config()
    calls = [
        ("write_file", {"path": "b", "text": "y"}),
        ("read_config", {"name": "ci"}),
        ("run_shell", {"command": "ls"}),
    ]
    state = asyncio.run(AGENT.ainvoke({"messages": [HumanMessage(json.dumps(calls))]}, config))
    [pause] = state["__interrupt__"]
    assert CALLS == [("read_config", {"name": "ci"})]
    state = asyncio.run(AGENT.ainvoke(Command(resume={pause.id: {"type": "approve"}}), config))
    assert CALLS == [("read_config", {"name": "ci"}), ("run_shell", {"command": "ls"})]
    read = _read(state)
    assert read["call-0"].content == "Denied by policy: write_file may not write files."
    assert read["call-1"].content == "ci: github token [REDACTED]"
    assert read["call-2"].content == "ran ls"


# The shared gate, which both adapters (and this middleware's tests above) rely on.


def test_the_gate_falls_back_to_the_asynchronous_stages_when_a_listener_is_written_in_python() -> None:
    gate = PolicyGate([PACK], registry=Registry())

    @gate.registry.on_pre_execute
    async def no_lookups(call: Any, next: Any) -> Any:
        return deny("no lookups today") if call.name == "lookup" else await next()

    async def inside_a_loop() -> tuple[Verdict, Verdict]:
        return gate.decide("lookup", {}).decision, (await gate.adecide("lookup", {})).decision

    assert gate.decide("lookup", {}).reason == "no lookups today"
    assert asyncio.run(inside_a_loop()) == (Verdict.DENY, Verdict.DENY)
    assert gate.decide("other", {}).decision is Verdict.ALLOW
    assert gate.review("other", {}, {"n": 1}).post is PostOutcome.ACCEPTED
    assert gate.review("other", {}, f"key {TOKEN}").value == "key [REDACTED]"


def test_the_gate_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    gate = MIDDLEWARE.gate
    assert gate.decide("read_config", {"name": 3}).decision is Verdict.DENY  # invalid against the tool's schema
    assert gate.decide("read_config", "[1]").reason == (
        "invalid arguments for tool 'read_config': expected a JSON object, got list"
    )

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(decision_point_module, "evaluate_sync", broken)  # the engine itself fails
    denied = gate.decide("read_config", {"name": "ci"})
    assert (denied.decision, denied.reason) == (
        Verdict.DENY,
        "Denied: the policy gate failed while deciding tool 'read_config' (RuntimeError: boom); the call is refused.",
    )
    blocked = gate.review("read_config", {"name": "ci"}, f"ci: {TOKEN}")
    assert blocked.post is PostOutcome.BLOCKED and TOKEN not in repr(blocked)
    assert "the policy gate failed while reviewing the result of tool 'read_config'" in str(blocked.feedback)


def test_the_middleware_needs_packs() -> None:
    with pytest.raises(UsageError, match="needs packs"):
        PolicyMiddleware()
