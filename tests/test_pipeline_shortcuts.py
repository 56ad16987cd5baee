"""The per-call shortcuts of the pipeline give exactly what the general path gives."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from policyengine import Registry, define_tool, load_pack
from policyengine.enforce.install import pack_bundle
from policyengine.enforce.pack_stages import FoundRedLine
from policyengine.runtime.rewrites import render as _render
from policyengine.tools.definition import render_text
from policyengine.values.call import ToolCall
from policyengine.values.frozen import FrozenDict, FrozenList, freeze
from policyengine.values.results import Outcome, Stage
from support import rules_pack

PARAMETERS = {
    "path": {"type": "string", "required": True, "description": "a path"},
    "mode": {"type": "string", "default": "r", "description": "how"},
}


async def _echo(args: Any) -> Any:
    return args["path"]


def _tool(execute: Any = _echo, **options: Any) -> Any:
    return define_tool(name="echo", description="echo", parameters=PARAMETERS, execute=execute, **options)


@pytest.mark.parametrize("value", ["", "text", "ünïcode\n", '{"json": 1}'])
def test_a_string_value_renders_to_the_text_block_the_general_path_builds(value: str) -> None:
    definition = _tool()
    call = ToolCall("c", "echo", FrozenDict(path="x"), "agent")
    rendered = _render(call.arguments, definition, value)
    assert rendered == freeze(render_text({}, value))
    assert type(rendered) is FrozenList and type(rendered[0]) is FrozenDict


def test_a_custom_render_is_still_called_and_checked() -> None:
    definition = _tool(output={"render": lambda _args, value: [{"type": "text", "text": value.upper()}]})
    call = ToolCall("c", "echo", FrozenDict(path="x"), "agent")
    assert _render(call.arguments, definition, "abc") == freeze([{"type": "text", "text": "ABC"}])
    broken = _tool(output={"render": lambda _args, value: [{"type": "text"}]})
    with pytest.raises(ValueError, match="without a string `text`"):
        _render(call.arguments, broken, "abc")


def test_arguments_that_normalisation_leaves_alone_are_kept_as_the_same_frozen_object() -> None:
    definition = _tool()
    sent = freeze({"path": "a", "mode": "w"})
    frozen, problems = definition.validate_arguments(sent)
    assert problems == [] and frozen is sent


def test_arguments_that_normalisation_changes_come_back_as_a_new_frozen_document() -> None:
    definition = _tool()
    sent = freeze({"path": "a"})
    frozen, problems = definition.validate_arguments(sent)
    assert problems == [] and frozen == {"path": "a", "mode": "r"} and type(frozen) is FrozenDict


def _registry(tmp_path: Path, execute: Any, rules: list[dict[str, Any]]) -> Registry:
    registry = Registry()
    registry.register(_tool(execute))
    registry.install(pack_bundle(load_pack(rules_pack(tmp_path, "p", rules))))
    return registry


def test_a_pack_without_execute_rules_for_the_tool_runs_the_body_as_if_no_pack_were_there(tmp_path: Path) -> None:
    async def boom(_args: Any) -> str:
        raise RuntimeError("disk on fire")

    rules = [{"id": "other", "stage": "execute", "tools": ["not-echo"], "timeout": 1}]
    with_pack = _registry(tmp_path, boom, rules)
    bare = Registry()
    bare.register(_tool(boom))
    for registry in (with_pack, bare):
        result = asyncio.run(registry.call("echo", {"path": "x"}))
        assert (result.outcome, result.stage) == (Outcome.ERROR, Stage.EXECUTE)
        assert result.source is not None and result.source.name == "echo"
        assert "disk on fire" in (result.reason or "")


def test_an_execute_rule_for_the_tool_still_wraps_the_body(tmp_path: Path) -> None:
    async def slow(_args: Any) -> str:
        await asyncio.sleep(5)
        return "late"

    registry = _registry(tmp_path, slow, [{"id": "quick", "stage": "execute", "tools": ["echo"], "timeout": 0.05}])
    result = asyncio.run(registry.call("echo", {"path": "x"}))
    assert result.outcome is Outcome.TIMED_OUT
    assert "rule quick" in (result.reason or "")


def test_a_pack_guard_denies_through_the_pack_shortcut_with_the_rules_reason(tmp_path: Path) -> None:
    rules = [
        {
            "id": "no-etc",
            "stage": "guard",
            "tools": ["*"],
            "when": "path_within(arguments.path, '/etc')",
            "reason": "Red line: {arguments.path}",
        }
    ]
    registry = _registry(tmp_path, _echo, rules)
    result = asyncio.run(registry.call("echo", {"path": "/ETC/./passwd"}))
    assert (result.outcome, result.stage, result.reason) == (Outcome.DENIED, Stage.GUARD, "Red line: /ETC/./passwd")
    assert result.source is not None and result.source.rule_id == "no-etc"
    assert asyncio.run(registry.call("echo", {"path": "/srv/x"})).outcome is Outcome.OK


STAGED_RULES = [
    {
        "id": "no-keys",
        "stage": "pre-execute",
        "tools": ["*"],
        "when": "path_matches(arguments.path, '*.pem')",
        "decision": "deny",
        "reason": "keys",
    },
    {
        "id": "ask-srv",
        "stage": "pre-execute",
        "tools": ["*"],
        "when": "starts_with(arguments.path, '/srv/')",
        "decision": "ask",
        "reason": "srv",
    },
    {"id": "no-etc", "stage": "guard", "tools": ["*"], "when": "path_within(arguments.path, '/etc')", "reason": "etc"},
]
STAGED_CASES = [
    ("/etc/a.pem", Outcome.DENIED, Stage.PRE_EXECUTE, "no-keys"),  # pre-execute denies first: no guard runs
    ("/etc/passwd", Outcome.DENIED, Stage.GUARD, "no-etc"),
    ("/srv/x", Outcome.DENIED, Stage.APPROVAL, "ask-srv"),  # no approval service: the ask is refused
    ("/home/x", Outcome.OK, None, None),
]


@pytest.mark.parametrize("python_guard", [False, True], ids=["packs-only", "with-a-python-guard"])
@pytest.mark.parametrize(("path", "outcome", "stage", "rule"), STAGED_CASES)
def test_pre_execute_and_guards_answer_the_same_whether_one_pass_serves_both_or_not(
    tmp_path: Path, python_guard: bool, path: str, outcome: Outcome, stage: Stage | None, rule: str | None
) -> None:
    registry = _registry(tmp_path, _echo, STAGED_RULES)
    if python_guard:
        registry.guard(lambda _call: None)
    # One pass serves both stages only when packs alone feed them.
    assert isinstance(registry.installation.guards, FoundRedLine) is not python_guard
    result = asyncio.run(registry.call("echo", {"path": path}))
    assert (result.outcome, result.stage) == (outcome, stage)
    assert (result.source.rule_id if result.source else None) == rule
    assert set(result.timings) >= {"pre-execute", "guard"} or stage is Stage.PRE_EXECUTE


def test_explaining_a_call_still_hears_pre_execute_then_guard_rules_in_order(tmp_path: Path) -> None:
    from policyengine.packs.rules import EXPLAIN

    registry = _registry(tmp_path, _echo, STAGED_RULES)
    heard: list[str] = []
    token = EXPLAIN.set(lambda rule, _result: heard.append(rule.id))
    try:
        result = asyncio.run(registry.call("echo", {"path": "/etc/passwd"}))
    finally:
        EXPLAIN.reset(token)
    assert result.stage is Stage.GUARD
    assert heard == ["no-keys", "ask-srv", "no-etc"]
