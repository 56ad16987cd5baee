"""JSON Schema tool specs are first class: MCP and OpenAI specs define tools as they are, and get bodies publicly."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from policyengine import DefinitionError, Outcome, PolicyLayers, Registry, define_tool, evaluate
from policyengine.tools.catalog import CatalogError, load_catalog, tool_from_spec
from support import rules_pack

WRITE_FILE = {
    "name": "write_file",
    "inputSchema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "x-policy-role": "path"},
            "content": {"type": "string"},
            "options": {"type": "object", "description": "Free-form options."},
        },
        "required": ["path", "content"],
    },
    "outputSchema": {"type": "object", "properties": {"written": {"type": "integer"}}},
    "annotations": {"title": "Write", "destructiveHint": True, "openWorldHint": False},
}


def test_an_mcp_tool_without_a_description_and_with_a_free_form_object_is_a_tool() -> None:
    tool = tool_from_spec(WRITE_FILE)
    assert tool.description == ""
    assert tool.tags == frozenset({"destructive"})
    assert tool.roles == {"path": "path"}
    options = {"mode": "w", "nested": {"list": [1, None, {"x": True}]}}
    frozen, problems = tool.validate_arguments({"path": "/tmp/a", "content": "x", "options": options})
    assert problems == []
    assert frozen is not None and frozen["options"]["nested"]["list"][2]["x"] is True


def test_a_spec_tool_hands_its_spec_back_unchanged() -> None:
    assert tool_from_spec(WRITE_FILE).to_mcp() == WRITE_FILE
    openai = {
        "type": "function",
        "function": {"name": "ping", "description": "Ping.", "parameters": {"type": "object"}},
    }
    assert tool_from_spec(openai).to_openai() == openai


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "/a"},  # content missing
        {"path": 1, "content": "x"},
        {"path": True, "content": "x"},
        {"path": "/a", "content": ["x"]},
        {"path": "/a", "content": "x", "options": "not an object"},
    ],
)
def test_arguments_that_do_not_fit_the_json_schema_are_refused_with_the_place(arguments: dict[str, Any]) -> None:
    frozen, problems = tool_from_spec(WRITE_FILE).validate_arguments(arguments)
    assert frozen is None and problems
    assert any(key in " ".join(problems) for key in ("path", "content", "options"))


def test_json_schema_arguments_are_validated_never_changed() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 3}}}
    tool = define_tool(name="count", input_schema=schema, execute=lambda a: a)
    assert tool.validate_arguments({}) == ({}, [])  # JSON Schema's default is an annotation: nothing filled in
    assert tool.validate_arguments({"n": 1.0})[1] == []  # 1.0 is an integer in JSON Schema
    assert tool.validate_arguments({"n": True})[1] != []  # and true is not


def test_a_recursive_schema_validates_exactly_and_reads_as_any_for_lint() -> None:
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "$defs": {
            "node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}
        },
    }
    tool = define_tool(name="walk", input_schema=schema, execute=lambda a: a)
    assert tool.validate_arguments({"tree": {"kids": [{"kids": []}]}})[1] == []
    assert tool.validate_arguments({"tree": {"kids": [{"kids": "no"}]}})[1] != []
    assert tool.parameters["tree"]["type"] == "dict"


def test_define_tool_takes_exactly_one_dialect() -> None:
    with pytest.raises(DefinitionError, match="exactly one of `parameters`"):
        define_tool(name="t", description="d", execute=print)
    with pytest.raises(DefinitionError, match="exactly one of `parameters`"):
        define_tool(name="t", description="d", parameters={}, input_schema={"type": "object"}, execute=print)


def test_the_cerberus_dialect_still_refuses_free_form_objects_and_points_at_json_schema() -> None:
    with pytest.raises(DefinitionError, match="free-form object") as info:
        define_tool(name="t", description="d", parameters={"o": {"type": "dict"}}, execute=print)
    assert "input_schema" in str(info.value)


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "object", "properties": {"q": {"type": "string", "pattern": "(a)\\1"}}}, "pattern"),
        ({"type": "object", "properties": {"q": {"$ref": "https://example.com/s.json"}}}, "$ref"),
        ({"type": "object", "properties": {"n": {"type": "integer", "minimum": "3"}}}, "minimum"),
        ({"type": "array"}, "object"),
    ],
)
def test_a_schema_the_engine_cannot_understand_is_refused_at_definition(schema: dict[str, Any], fragment: str) -> None:
    with pytest.raises(DefinitionError, match=r"'q'|'n'|input_schema") as info:
        define_tool(name="t", input_schema=schema, execute=print)
    assert fragment in str(info.value)


def test_a_catalog_tool_gets_a_body_by_with_execute_and_runs_through_the_pipeline() -> None:
    catalog_tool = tool_from_spec(WRITE_FILE)
    seen: list[Any] = []

    async def body(arguments: Any) -> dict[str, int]:
        seen.append(arguments)
        return {"written": len(arguments["content"])}

    registry = Registry()
    registry.register(catalog_tool)
    refused = asyncio.run(registry.call("write_file", {"path": "/a", "content": "xyz"}))
    assert refused.outcome is Outcome.ERROR and "cannot run" in str(refused.reason)
    registry.unregister("write_file")
    registry.register(catalog_tool.with_execute(body))
    result = asyncio.run(registry.call("write_file", {"path": "/a", "content": "xyz"}))
    assert result.outcome is Outcome.OK and result.value == {"written": 3}
    assert [dict(a) for a in seen] == [{"path": "/a", "content": "xyz"}]
    with pytest.raises(DefinitionError, match="callable"):
        catalog_tool.with_execute("not a function")  # type: ignore[arg-type]


def test_an_mcp_sdk_tool_object_is_read_through_model_dump() -> None:
    from mcp.types import Tool

    tool = tool_from_spec(Tool.model_validate(WRITE_FILE))
    assert tool.to_mcp() == WRITE_FILE


def test_catalogs_load_from_a_path_a_file_object_or_memory(tmp_path: Path) -> None:
    text = json.dumps({"tools": [WRITE_FILE]})
    path = tmp_path / "tools.json"
    path.write_text(text, "utf-8")
    expected = load_catalog(path)["write_file"].to_mcp()
    assert load_catalog(io.StringIO(text))["write_file"].to_mcp() == expected
    assert load_catalog(io.BytesIO(text.encode()))["write_file"].to_mcp() == expected
    assert load_catalog([WRITE_FILE])["write_file"].to_mcp() == expected
    assert load_catalog({"tools": [WRITE_FILE]})["write_file"].to_mcp() == expected
    assert load_catalog(WRITE_FILE)["write_file"].to_mcp() == expected


def test_problems_of_specs_in_memory_name_their_place() -> None:
    with pytest.raises(CatalogError) as info:
        load_catalog([WRITE_FILE, {"name": "x"}, WRITE_FILE])
    assert [(p.code, str(p.location)) for p in info.value.problems] == [
        ("PE701", "<specs>:2:1"),
        ("PE703", "<specs>:3:1"),
    ]


def test_policy_reads_a_free_form_argument_frozen_and_denies_on_it(tmp_path: Path) -> None:
    rule = {
        "id": "no-root-mode",
        "stage": "pre-execute",
        "tools": ["write_file"],
        "when": "arguments.options.mode == 'root'",
        "decision": "deny",
        "reason": "no root mode",
    }
    registry = Registry()
    registry.register(tool_from_spec(WRITE_FILE).with_execute(lambda a: {"written": 0}))
    PolicyLayers.install(registry, [rules_pack(tmp_path, "p", [rule])])
    denied = asyncio.run(evaluate(registry, "write_file", {"path": "/a", "content": "", "options": {"mode": "root"}}))
    allowed = asyncio.run(evaluate(registry, "write_file", {"path": "/a", "content": "", "options": {"mode": "user"}}))
    assert (denied.decision.value, denied.rule, allowed.decision.value) == ("deny", "no-root-mode", "allow")


@pytest.mark.parametrize(
    ("schema", "accepted"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}}, False),
        ({"type": "object", "properties": {}}, False),
        ({"type": "object"}, False),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True}, True),
        ({"type": "object", "additionalProperties": {"type": "string"}}, True),
        ({"type": "object", "patternProperties": {"^x": {"type": "string"}}}, True),
        ({"type": "object", "anyOf": [{"properties": {"a": {}}}, {"properties": {"extra": {}}}]}, True),
    ],
)
def test_an_undeclared_top_level_argument_is_refused_unless_the_schema_opens_the_object(
    schema: dict[str, Any], accepted: bool
) -> None:
    tool = define_tool(name="t", input_schema=schema, execute=print)
    assert (tool.validate_arguments({"extra": "x"})[1] == []) is accepted
    assert tool.to_mcp()["inputSchema"] == schema  # the closure is the engine's reading, not a change to the spec


def test_nested_objects_keep_json_schema_meaning() -> None:
    schema = {"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    tool = define_tool(name="t", input_schema=schema, execute=print)
    assert tool.validate_arguments({"o": {"a": "x", "b": [1]}})[1] == []


def test_an_untrusted_spec_cannot_declare_an_argument_plain_content() -> None:
    spec = {
        "name": "save",
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "x-policy-role": "text"},
                "to": {"type": "string", "format": "uri"},
            },
        },
    }
    assert tool_from_spec(spec).roles == {"path": "text", "to": "url"}
    assert tool_from_spec(spec, trusted=False).roles == {"to": "url"}


def test_with_execute_can_give_a_render_and_refuses_what_cannot_be_called() -> None:
    tool = tool_from_spec(WRITE_FILE).with_execute(
        lambda a: {"written": 1}, render=lambda a, v: [{"type": "text", "text": "1"}]
    )
    assert tool.render({}, None) == [{"type": "text", "text": "1"}]
    with pytest.raises(DefinitionError, match="render must be callable"):
        tool.with_execute(print, render=3)  # type: ignore[arg-type]
