"""The OpenAI Agents SDK adapter, end to end with the real SDK and a scripted model (no network, no key).

Every tool body records its invocations: a call policy refuses must leave no record. One guard
(the packs loaded once) protects the tools of every test; each test scripts its own model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, RunResult, ToolApprovalItem, ToolExecutionConfig, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from policyengine.adapters.openai_agents import PolicyGuard, protect
from policyengine.errors import UsageError

PACK = Path(__file__).parent / "data" / "adapters"
TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
CONFIG = RunConfig(tracing_disabled=True)

CALLS: list[tuple[str, dict[str, Any]]] = []


@function_tool
def run_shell(command: str) -> str:
    """Run a shell command."""
    CALLS.append(("run_shell", {"command": command}))
    return f"ran {command}"


@function_tool
def write_file(path: str, text: str) -> str:
    """Write a file."""
    CALLS.append(("write_file", {"path": path, "text": text}))
    return "written"


@function_tool
def read_config(name: str) -> str:
    """Read a configuration entry."""
    CALLS.append(("read_config", {"name": name}))
    if name == "internal":
        return "INTERNAL ONLY: the on-call rota"
    return f"{name}: github token {TOKEN}"


GUARD = PolicyGuard(packs=[PACK])
TOOLS = GUARD.protect([run_shell, write_file, read_config])


@pytest.fixture(autouse=True)
def _fresh_calls() -> None:
    CALLS.clear()


def _agent(*steps: Any) -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(steps)
    return Agent(name="ops", model=model, tools=TOOLS), model


def _run(agent: Agent[Any], given: Any) -> RunResult:
    return Runner.run_sync(agent, given, run_config=CONFIG)


def _outputs(model: ScriptedModel) -> dict[str, str]:
    """What the model read back for each tool call, by call id (from its last request)."""
    last = model.last_call
    assert last is not None and isinstance(last.input, list)
    return {
        i["call_id"]: i["output"] for i in last.input if isinstance(i, dict) and i.get("type") == "function_call_output"
    }


def test_a_denied_call_never_reaches_the_body_and_the_model_reads_why() -> None:
    agent, model = _agent(
        [function_call("write_file", {"path": "a.txt", "text": "x"}, call_id="w1")],
        [assistant_message("could not write")],
    )
    result = _run(agent, "write a.txt")
    assert CALLS == []
    assert not result.interruptions
    assert _outputs(model) == {"w1": "Denied by policy: write_file may not write files."}
    assert result.final_output == "could not write"


def _asked(command: str, call_id: str) -> tuple[Agent[Any], ScriptedModel, RunResult, ToolApprovalItem]:
    agent, model = _agent(
        [function_call("run_shell", {"command": command}, call_id=call_id)], [assistant_message("ok")]
    )
    result = _run(agent, f"run {command}")
    assert CALLS == []  # paused before the body
    [item] = result.interruptions
    assert item.call_id == call_id
    assert GUARD.reason(item) == f"Run the shell command `{command}`?"
    return agent, model, result, item


def test_an_asked_call_pauses_and_runs_once_approved() -> None:
    agent, model, paused, item = _asked("ls -la", "s1")
    state = paused.to_state()
    state.approve(item)
    result = _run(agent, state)
    assert CALLS == [("run_shell", {"command": "ls -la"})]
    assert _outputs(model) == {"s1": "ran ls -la"}
    assert result.final_output == "ok"


def test_a_rejected_call_never_reaches_the_body() -> None:
    agent, model, paused, item = _asked("make deploy", "s2")
    state = paused.to_state()
    state.reject(item, rejection_message="not today")
    result = _run(agent, state)
    assert CALLS == []
    assert _outputs(model) == {"s2": "not today"}
    assert result.final_output == "ok"


def test_with_guardrails_before_approval_an_asked_call_still_pauses_and_a_denied_one_is_refused() -> None:
    config = RunConfig(
        tracing_disabled=True, tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=True)
    )
    agent, model = _agent(
        [
            function_call("run_shell", {"command": "ls"}, call_id="p1"),
            function_call("write_file", {"path": "a", "text": "b"}, call_id="p2"),
        ],
        [assistant_message("ok")],
    )
    paused = Runner.run_sync(agent, "go", run_config=config)
    [item] = paused.interruptions
    state = paused.to_state()
    state.approve(item)
    Runner.run_sync(agent, state, run_config=config)
    assert CALLS == [("run_shell", {"command": "ls"})]
    assert _outputs(model) == {"p1": "ran ls", "p2": "Denied by policy: write_file may not write files."}


def test_a_red_line_is_never_asked_and_no_approval_lets_it_through() -> None:
    # `ls` approved for good (always_approve): the SDK then skips asking for run_shell, yet the
    # red line still refuses the delete that follows.
    agent, model = _agent(
        [function_call("run_shell", {"command": "ls"}, call_id="r1")],
        [function_call("run_shell", {"command": "rm -rf /workspace/build"}, call_id="r2")],
        [assistant_message("done")],
    )
    paused = _run(agent, "clean up")
    [item] = paused.interruptions
    state = paused.to_state()
    state.approve(item, always_approve=True)
    result = _run(agent, state)
    assert not result.interruptions  # the red line was never put to a person
    assert CALLS == [("run_shell", {"command": "ls"})]
    assert _outputs(model)["r2"] == "Red line: run_shell would delete files."
    assert result.final_output == "done"


def test_a_credential_in_a_result_reaches_the_model_redacted() -> None:
    agent, model = _agent([function_call("read_config", {"name": "ci"}, call_id="c1")], [assistant_message("read")])
    result = _run(agent, "read the ci config")
    assert CALLS == [("read_config", {"name": "ci"})]
    assert _outputs(model) == {"c1": "ci: github token [REDACTED]"}
    assert TOKEN not in repr(result.new_items)  # nor in the run's own record of the output


def test_a_blocked_result_is_replaced_by_the_feedback() -> None:
    agent, model = _agent([function_call("read_config", {"name": "internal"}, call_id="c2")], [assistant_message("ok")])
    _run(agent, "read the rota")
    assert CALLS == [("read_config", {"name": "internal"})]
    assert _outputs(model) == {"c2": "The result of read_config is internal and was withheld."}


def test_arguments_that_are_not_json_are_denied_even_once_approved() -> None:
    agent, model = _agent([function_call("read_config", "{not json", call_id="m1")], [assistant_message("ok")])
    paused = _run(agent, "read")
    [item] = paused.interruptions  # the SDK itself asks about arguments it cannot parse
    state = paused.to_state()
    state.approve(item)
    _run(agent, state)
    assert CALLS == []
    assert "invalid arguments for tool 'read_config': not JSON" in _outputs(model)["m1"]


def test_protect_refuses_what_it_cannot_guard() -> None:
    with pytest.raises(UsageError, match="takes function tools"):
        GUARD.protect(["not a tool"])
    with pytest.raises(UsageError, match="needs packs"):
        protect([run_shell])
    assert run_shell.tool_input_guardrails is None  # protect() copies; the originals stay unguarded
