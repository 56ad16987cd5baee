"""Sessions through the framework adapters: every sequence of tests/data/session_sequences.yaml, replayed
through LangChain's `create_agent` (PolicyMiddleware) and the OpenAI Agents SDK (PolicyGuard), real frameworks.

Each step is one agent run in which a scripted model calls the step's tool once; the tools are
defined in the framework and answer the step's scripted result. One session per sequence: the
LangChain thread (`configurable.thread_id`), the Agents SDK run's trace group (`group_id`).
An `ask` pauses the run (a langgraph interrupt, an SDK interruption); the test approves it and
the call runs, as a person would. A denial is the error the model reads: its text is the rule's reason.
"""

from __future__ import annotations

import json
import uuid
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, Runner, RunResult, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tracing import set_trace_processors
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langchain_chat import ScriptedChat
from mcp_session_upstream import load_sequences, runs, tool_specs
from policyengine import load_pack
from policyengine.adapters.langchain import PolicyMiddleware
from policyengine.adapters.openai_agents import PolicyGuard

ROOT = Path(__file__).resolve().parents[1]
SEQUENCES = load_sequences()
# The Agents SDK replays run with tracing on (the trace's group id is the session): nothing made here is exported.
set_trace_processors([])
PACKS = sorted({s["pack"] for s in SEQUENCES})
IDS = [s["name"] for s in SEQUENCES]

# What each scripted tool answers next, by tool name (set per sequence; a tool past its list answers "ok").
RESULTS: dict[str, list[Any]] = {}
RAN: list[str] = []


def _answer(name: str) -> Any:
    RAN.append(name)
    queue = RESULTS.get(name) or []
    value = queue.pop(0) if queue else None
    return "ok" if value is None else value


def _script(sequence: dict[str, Any]) -> None:
    RESULTS.clear()
    RAN.clear()
    for step in sequence["steps"]:
        if runs(step):
            RESULTS.setdefault(step["call"]["name"], []).append((step.get("result") or {}).get("value"))


def _cwd(pack: str) -> str | None:
    """The cwd the pack's sequences were written in (one per pack), which the adapter is given."""
    found = {s["call"].get("cwd") for q in SEQUENCES if q["pack"] == pack for s in q["steps"]}
    assert len(found) == 1
    cwd = found.pop()
    return str(cwd) if cwd is not None else None


def _specs(pack: str) -> list[dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for sequence in SEQUENCES:
        if sequence["pack"] == pack:
            for spec in tool_specs(sequence):
                known = merged.setdefault(spec["name"], spec)
                known["inputSchema"]["properties"].update(spec["inputSchema"]["properties"])
    return list(merged.values())


@cache
def _reasons() -> dict[tuple[str, str], str]:
    """Each rule's reason up to its first placeholder (built at first use: collection loads no pack)."""
    return {
        (pack, rule.id): str(getattr(rule.reason, "text", "")).split("{")[0]
        for pack in PACKS
        for rule in load_pack(ROOT / "policies" / pack).rules
    }


def _denied_by(text: str, pack: str, rule: str) -> bool:
    """Whether a denial's text is the pack's rule's reason (its words up to the first placeholder)."""
    reason = _reasons()[pack, rule]
    return bool(reason) and text.startswith(reason)


# -- LangChain -----------------------------------------------------------------------------------


def _langchain_tool(spec: dict[str, Any]) -> StructuredTool:
    name = spec["name"]

    def body(**arguments: Any) -> Any:
        return _answer(name)

    return StructuredTool.from_function(
        body, name=name, description=spec["description"], args_schema=spec["inputSchema"], infer_schema=False
    )


@cache
def _langchain(pack: str) -> tuple[PolicyMiddleware, Any]:
    """The pack's middleware (its gate, its session store) and an agent with the pack's tools and a checkpointer."""
    middleware = PolicyMiddleware(packs=[ROOT / "policies" / pack], cwd=_cwd(pack))
    tools = [_langchain_tool(spec) for spec in _specs(pack)]
    return middleware, create_agent(ScriptedChat(), tools, middleware=[middleware], checkpointer=InMemorySaver())


@pytest.mark.parametrize("index", range(len(SEQUENCES)), ids=IDS)
def test_langchain_replays_every_sequence_in_one_thread(index: int) -> None:
    sequence = SEQUENCES[index]
    middleware, agent = _langchain(sequence["pack"])
    _script(sequence)
    thread = f"thread-{uuid.uuid4().hex}"
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    for number, step in enumerate(sequence["steps"], 1):
        call, expect = step["call"], step["expect"]
        ran = len(RAN)
        asked = [[call["name"], call["arguments"], f"call-{number}"]]
        state = agent.invoke({"messages": [HumanMessage(json.dumps(asked))]}, config)
        where = f"step {number} ({call['name']})"
        if expect["decision"] == "ask":
            [pause] = state["__interrupt__"]
            assert pause.value["rule"] == expect["rule"], where
            assert len(RAN) == ran, where  # paused before the tool
            state = agent.invoke(Command(resume={pause.id: {"type": "approve"}}), config)
        else:
            assert "__interrupt__" not in state, where
        [message] = [m for m in state["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == f"call-{number}"]
        if expect["decision"] == "deny":
            assert message.status == "error", where
            assert _denied_by(str(message.content), sequence["pack"], expect["rule"]), f"{where}: {message.content}"
            assert len(RAN) == ran, where
        else:
            assert message.status == "success", f"{where}: {message.content}"
            assert RAN[ran:] == [call["name"]], where
        if "labels" in expect:
            store = middleware.gate.registry.sessions
            assert store is not None
            assert set(expect["labels"]) <= set(store.load(thread).labels), where


def test_langchain_without_a_thread_every_call_shares_the_gates_session() -> None:
    sequence = next(s for s in SEQUENCES if s["name"] == "baseline: a credential read, then a network tool, is denied")
    middleware = PolicyMiddleware(packs=[ROOT / "policies" / "baseline"])
    unthreaded = create_agent(ScriptedChat(), [_langchain_tool(s) for s in _specs("baseline")], middleware=[middleware])
    _script(sequence)
    messages = []
    for number, step in enumerate(sequence["steps"], 1):  # two separate invocations, no checkpointer, no thread
        call = [[step["call"]["name"], step["call"]["arguments"], f"call-{number}"]]
        state = unthreaded.invoke({"messages": [HumanMessage(json.dumps(call))]})
        [message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        messages.append(message)
    assert messages[0].status == "success"
    assert _denied_by(str(messages[1].content), "baseline", "deny-egress-after-credentials"), messages[1].content
    store = middleware.gate.registry.sessions
    assert store is not None and "credential-seen" in store.load(middleware.gate.shared_session).labels


# -- OpenAI Agents SDK ---------------------------------------------------------------------------


def _sdk_tool(spec: dict[str, Any]) -> FunctionTool:
    name = spec["name"]

    async def invoke(context: Any, arguments: str) -> Any:
        return _answer(name)

    schema = {**spec["inputSchema"], "additionalProperties": False}
    return FunctionTool(
        name=name,
        description=spec["description"],
        params_json_schema=schema,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


@cache
def _sdk(pack: str) -> tuple[PolicyGuard, list[Any]]:
    """The pack's guard (its gate, its session store) and the pack's tools, protected."""
    guard = PolicyGuard(packs=[ROOT / "policies" / pack], cwd=_cwd(pack))
    return guard, guard.protect([_sdk_tool(spec) for spec in _specs(pack)])


def _outputs(model: ScriptedModel) -> dict[str, str]:
    """What the model read back for each tool call, by call id (from its last request)."""
    last = model.last_call
    assert last is not None and isinstance(last.input, list)
    return {
        i["call_id"]: i["output"] for i in last.input if isinstance(i, dict) and i.get("type") == "function_call_output"
    }


@pytest.mark.parametrize("index", range(len(SEQUENCES)), ids=IDS)
def test_openai_agents_replays_every_sequence_in_one_trace_group(index: int) -> None:
    # The SDK reads OPENAI_AGENTS_DISABLE_TRACING once, when it is first imported: a test that set it (the README
    # recipe's) would leave tracing off for the process, and with it the trace group this test names the session by.
    set_tracing_disabled(False)
    sequence = SEQUENCES[index]
    guard, tools = _sdk(sequence["pack"])
    _script(sequence)
    group = f"conversation-{uuid.uuid4().hex}"
    config = RunConfig(group_id=group)  # the SDK's conversation thread
    for number, step in enumerate(sequence["steps"], 1):
        call, expect = step["call"], step["expect"]
        ran, call_id = len(RAN), f"call-{number}"
        model = ScriptedModel(
            [[function_call(call["name"], call["arguments"], call_id=call_id)], [assistant_message("done")]]
        )
        agent: Agent[Any] = Agent(name="replay", model=model, tools=tools)
        result: RunResult = Runner.run_sync(agent, "go", run_config=config)
        where = f"step {number} ({call['name']})"
        if expect["decision"] == "ask":
            [item] = result.interruptions
            assert item.call_id == call_id, where
            assert len(RAN) == ran, where  # paused before the body
            reason = guard.reason(item)
            assert reason is not None and _denied_by(reason, sequence["pack"], expect["rule"]), f"{where}: {reason}"
            state = result.to_state()
            state.approve(item)
            result = Runner.run_sync(agent, state, run_config=config)
        assert not result.interruptions, where
        output = _outputs(model)[call_id]
        if expect["decision"] == "deny":
            assert _denied_by(output, sequence["pack"], expect["rule"]), f"{where}: {output}"
            assert len(RAN) == ran, where
        else:
            assert RAN[ran:] == [call["name"]], f"{where}: {output}"
        if "labels" in expect:
            store = guard.gate.registry.sessions
            assert store is not None
            assert set(expect["labels"]) <= set(store.load(group).labels), where


def test_openai_agents_session_id_names_the_session_when_tracing_is_off() -> None:
    sequence = SEQUENCES[0]  # claude-code: a credential read, then any web fetch, is denied
    pack = sequence["pack"]
    guard = PolicyGuard(packs=[ROOT / "policies" / pack], cwd=_cwd(pack), session_id=lambda run: run.context["chat"])
    tools = guard.protect([_sdk_tool(spec) for spec in _specs(pack)])
    _script(sequence)
    config = RunConfig(tracing_disabled=True)
    outputs = []
    for number, step in enumerate(sequence["steps"], 1):
        call = step["call"]
        model = ScriptedModel(
            [[function_call(call["name"], call["arguments"], call_id=f"c{number}")], [assistant_message("done")]]
        )
        Runner.run_sync(Agent(name="a", model=model, tools=tools), "go", context={"chat": "c-1"}, run_config=config)
        outputs.append(_outputs(model)[f"c{number}"])
    assert _denied_by(outputs[1], pack, "deny-egress-after-credentials"), outputs
    store = guard.gate.registry.sessions
    assert store is not None and "credential-seen" in store.load("c-1").labels
