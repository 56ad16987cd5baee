"""Tool catalogs: BFCL, OpenAI and MCP definitions from JSON Lines or JSON; problems collected."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from policyengine import PackLoadError, PolicyEngineError, Registry, ToolDefinition, UsageError
from policyengine.tools.catalog import CatalogError, load_catalog
from policyengine.tools.json_schema import ANY_TYPES
from support import BFCL_TOOLS

# The calls of the BFCL corpus that do not validate, and why: `make_transaction` has no doc in
# the corpus, and close_ticket is called with "ticket_001" where the doc declares an integer.
BFCL_INVALID = {
    "multi_turn_base_121:3:1": "unknown tool make_transaction",
    "multi_turn_base_173:3:0": "ticket_id: must be of integer type",
}


def write_jsonl(path: Path, items: list[Any]) -> Path:
    """One JSON value a line."""
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def bfcl_tool(name: str = "cat", **overrides: Any) -> dict[str, Any]:
    """A BFCL-style definition (type: dict, response), like the corpus's."""
    spec: dict[str, Any] = {
        "name": name,
        "description": f"Tool {name}.",
        "parameters": {
            "type": "dict",
            "properties": {"file_name": {"type": "string", "description": "The file."}},
            "required": ["file_name"],
        },
        "response": {"type": "dict", "properties": {"file_content": {"type": "string"}}},
        "suite": "gorilla_file_system",
    }
    spec.update(overrides)
    return spec


def openai_tool(name: str = "get_weather", parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    """An OpenAI chat-completions tool."""
    function: dict[str, Any] = {"name": name, "description": f"Tool {name}."}
    if parameters is not None:
        function["parameters"] = parameters
    return {"type": "function", "function": function}


def mcp_tool(name: str = "read_file", input_schema: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """An MCP tools/list entry."""
    schema = input_schema or {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    return {"name": name, "description": f"Tool {name}.", "inputSchema": schema, **extra}


def problems_of(info: pytest.ExceptionInfo[CatalogError]) -> list[tuple[str, int, str]]:
    """(code, line, message) of every problem of a CatalogError."""
    return [(p.code, p.location.line if p.location else 0, p.message) for p in info.value.problems]


# -- BFCL corpus ----------------------------------------------------------------------------------


def test_every_bfcl_tool_loads(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    names = [json.loads(line)["name"] for line in BFCL_TOOLS.read_text("utf-8").splitlines() if line.strip()]
    assert len(bfcl_catalog) == len(names) == 129
    assert list(bfcl_catalog) == names  # file order is kept


def test_bfcl_nested_dict_keeps_its_properties(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    updates = bfcl_catalog["edit_ticket"].parameters["updates"]
    assert updates["type"] == "dict"
    assert updates["required"] is True
    assert set(updates["schema"]) == {"description", "status", "priority"}
    assert updates["schema"]["priority"]["type"] == "integer"
    edit = bfcl_catalog["edit_ticket"]
    assert edit.validate_arguments({"ticket_id": 1, "updates": {"status": "closed"}})[1] == []
    assert edit.validate_arguments({"ticket_id": 1, "updates": {"priority": "high"}})[1] == [
        "updates.priority: must be of integer type"
    ]


@pytest.mark.parametrize(("tool", "flag"), [("ls", "a"), ("du", "human_readable")])
def test_bfcl_booleans_with_defaults(bfcl_catalog: dict[str, ToolDefinition], tool: str, flag: str) -> None:
    rules = bfcl_catalog[tool].parameters[flag]
    assert rules["type"] == "boolean"
    assert rules["default"] is False
    assert "required" not in rules
    frozen, problems = bfcl_catalog[tool].validate_arguments({})
    assert problems == []
    assert frozen == {flag: False}  # the default is filled in, as the tool would see it
    assert bfcl_catalog[tool].validate_arguments({flag: 1})[1] == [f"{flag}: must be of boolean type"]


def test_bfcl_float_and_array_types(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    numbers = bfcl_catalog["mean"].parameters["numbers"]
    assert numbers["type"] == "list"
    assert numbers["schema"]["type"] == "float"
    assert bfcl_catalog["mean"].validate_arguments({"numbers": [1, 2.5]})[1] == []
    assert bfcl_catalog["mean"].validate_arguments({"numbers": [True]})[1] != []  # a boolean is no number


def test_bfcl_none_default_means_null_not_the_text_none(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    file_name = bfcl_catalog["echo"].parameters["file_name"]
    assert "default" not in file_name
    assert file_name["nullable"] is True
    frozen, problems = bfcl_catalog["echo"].validate_arguments({"content": "hi"})
    assert problems == []
    assert frozen is not None and "file_name" not in frozen
    assert bfcl_catalog["echo"].validate_arguments({"content": "hi", "file_name": None})[1] == []


def test_bfcl_response_becomes_a_lenient_output_schema(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    ticket = bfcl_catalog["get_ticket"]
    assert ticket.output_schema["type"] == "dict"
    assert all(rules["nullable"] for rules in ticket.output_schema["schema"].values())
    # Recorded responses omit fields, send nulls and add undeclared keys (BFCL's {"error": ...}).
    assert ticket.validate_value({"id": 1})[1] == []
    assert ticket.validate_value({"id": None, "title": None})[1] == []
    assert ticket.validate_value({"error": "no such ticket"})[1] == []
    assert ticket.validate_value({"id": "one"})[1] == ["value.id: must be of integer type"]
    tweets = bfcl_catalog["get_user_tweets"].output_schema["schema"]["user_tweets"]
    assert tweets["schema"]["schema"]["tags"]["schema"] == {"type": "string", "nullable": True}


def test_bfcl_free_form_output_object_is_allowed(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    messages = bfcl_catalog["view_messages_sent"].output_schema["schema"]["messages"]
    assert messages["type"] == "dict"
    assert messages["allow_unknown"] is True
    assert "schema" not in messages
    assert bfcl_catalog["view_messages_sent"].validate_value({"messages": {"USR001": ["Hello"]}})[1] == []


def test_bfcl_calls_mostly_validate(
    bfcl_catalog: dict[str, ToolDefinition], bfcl_calls: tuple[dict[str, Any], ...]
) -> None:
    failures: dict[str, str] = {}
    for call in bfcl_calls:
        definition = bfcl_catalog.get(call["name"])
        if definition is None:
            failures[call["call_id"]] = f"unknown tool {call['name']}"
            continue
        frozen, problems = definition.validate_arguments(call["arguments"])
        if frozen is None:
            failures[call["call_id"]] = "; ".join(problems)
    assert len(bfcl_calls) == 1161
    assert failures == BFCL_INVALID


def test_catalog_tools_describe_but_never_run(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    registry = Registry()
    registry.register(bfcl_catalog["cat"])
    result = asyncio.run(registry.call("cat", {"file_name": "a.txt"}))
    assert result.outcome.value == "error"
    assert "cannot run" in str(result.reason)
    with pytest.raises(UsageError, match="catalog"):
        bfcl_catalog["cat"].execute({"file_name": "a.txt"})


def test_catalog_definitions_export_back_to_openai_and_mcp(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    spec = bfcl_catalog["cd"].to_openai()["function"]
    assert spec["parameters"]["properties"]["folder"]["type"] == "string"
    assert spec["parameters"]["required"] == ["folder"]
    mcp = bfcl_catalog["get_ticket"].to_mcp()
    assert mcp["outputSchema"]["type"] == "object"  # MCP wants an object, not a nullable one


# -- other shapes and files -----------------------------------------------------------------------


def test_openai_array_in_a_json_file(tmp_path: Path) -> None:
    params = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name.", "minLength": 2},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "ratio": {"type": "number"},
        },
        "required": ["city"],
    }
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([openai_tool("get_weather", params), openai_tool("ping")], indent=2), "utf-8")
    tools = load_catalog(path)
    assert list(tools) == ["get_weather", "ping"]
    weather = tools["get_weather"].parameters
    assert weather["city"] == {"type": "string", "description": "City name.", "minlength": 2, "required": True}
    assert weather["unit"] == {"type": "string", "allowed": ["c", "f"], "default": "c"}
    assert weather["days"] == {"type": "integer", "min": 1, "max": 14}
    assert weather["ratio"] == {"type": "number"}
    assert tools["ping"].parameters == {}  # an OpenAI function may have no parameters
    # Validation is JSON Schema's own, but an undeclared top-level key is refused (the engine cannot place it).
    (problem,) = tools["get_weather"].validate_arguments({"city": "Oslo", "unit": "k"})[1]
    assert problem == '$.unit: "k" is not one of ["c", "f"]'
    assert tools["get_weather"].validate_arguments({"city": "Oslo", "extra": 1})[1] != []
    assert tools["get_weather"].to_openai()["function"]["parameters"] == params  # handed back as given


def test_mcp_tools_list_with_refs_unions_and_patterns(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "pattern": "^/"},
            "encoding": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "limit": {"type": ["integer", "null"]},
            "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "options": {"$ref": "#/$defs/Options"},
            "tags": {"type": "array"},
            "anything": {"description": "Whatever you like."},
            "meta": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["path"],
        "$defs": {"Options": {"type": "object", "properties": {"depth": {"type": "integer"}}}},
    }
    output = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    path = tmp_path / "mcp.json"
    rpc = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [mcp_tool("read_file", schema, outputSchema=output)]}}
    path.write_text(json.dumps(rpc), "utf-8")
    tool = load_catalog(path)["read_file"]
    params = tool.parameters
    assert params["encoding"]["nullable"] is True and params["encoding"]["type"] == "string"
    assert params["limit"] == {"type": "integer", "nullable": True}
    assert params["id"]["type"] == ["string", "integer"]
    assert params["options"]["schema"] == {"depth": {"type": "integer"}}
    assert params["anything"]["type"] == list(ANY_TYPES)
    assert params["anything"]["nullable"] is True
    ok = {
        "path": "/a",
        "encoding": None,
        "limit": None,
        "id": 3,
        "options": {"depth": 1},
        "tags": [1, "x", None, {"k": 1}],
        "anything": {"a": [1]},
        "meta": {"k": "v"},
    }
    assert tool.validate_arguments(ok)[1] == []
    assert tool.validate_arguments({"path": "relative"})[1] != []  # JSON Schema patterns search: ^ still anchors
    assert tool.validate_arguments({"path": "/a", "id": 1.5})[1] != []
    assert tool.validate_arguments({"path": "/a", "options": {"depth": "deep"}})[1] != []
    assert tool.validate_arguments({"path": "/a", "options": {"depth": 1, "other": 2}})[1] == []  # open, as declared
    assert tool.validate_arguments({"path": "/a", "meta": {"k": 1}})[1] != []
    assert tool.output_schema["schema"]["text"] == {"type": "string", "nullable": True}
    assert "required" not in tool.output_schema["schema"]["text"]


def test_unanchored_pattern_searches_like_json_schema(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": "ab|cd"}}}
    tool = load_catalog(write_jsonl(tmp_path / "t.jsonl", [mcp_tool("search", schema)]))["search"]
    assert tool.validate_arguments({"q": "xxcdxx"})[1] == []
    assert tool.validate_arguments({"q": "ab\nzz"})[1] == []
    assert tool.validate_arguments({"q": "zz"})[1] != []


def test_free_form_object_parameter_allows_unknown_keys(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"headers": {"type": "object", "description": "Any headers."}}}
    tool = load_catalog(write_jsonl(tmp_path / "t.jsonl", [mcp_tool("fetch", schema)]))["fetch"]
    assert tool.parameters["headers"] == {"type": "dict", "description": "Any headers.", "allow_unknown": True}
    assert tool.validate_arguments({"headers": {"X-A": "1", "nested": [{"deep": None}]}})[1] == []


def test_anthropic_input_schema_and_single_definition_file(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"name": "calc", "description": "Add.", "input_schema": {"type": "object"}}))
    assert list(load_catalog(path)) == ["calc"]


def test_mixed_shapes_in_json_lines(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mixed.jsonl", [bfcl_tool("cat"), openai_tool("weather"), mcp_tool("read")])
    assert list(load_catalog(str(path))) == ["cat", "weather", "read"]


def test_empty_file_is_an_empty_catalog(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n", "utf-8")
    assert load_catalog(path) == {}


# -- problems -------------------------------------------------------------------------------------


def test_all_problems_are_collected_with_lines_and_tool_names(tmp_path: Path) -> None:
    lines = [
        json.dumps(bfcl_tool("cat")),
        '{"name": "broken", ',
        json.dumps(bfcl_tool("cat")),
        json.dumps(bfcl_tool("empty", description="")),
        json.dumps({"hello": "world"}),
        json.dumps(bfcl_tool("typo", parameters={"type": "dict", "properties": {"n": {"type": "integr"}}})),
        json.dumps(mcp_tool("bad name!")),
        json.dumps(bfcl_tool("ok")),
    ]
    path = tmp_path / "tools.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    found = problems_of(info)
    assert [(code, line) for code, line, _ in found] == [
        ("PE702", 2),
        ("PE703", 3),
        ("PE704", 4),
        ("PE701", 5),
        ("PE704", 6),
        ("PE704", 7),
    ]
    messages = [message for _, _, message in found]
    assert "invalid JSON at line 2" in messages[0]
    assert "'cat' is defined twice" in messages[1] and f"{path}:1" in messages[1]
    assert "'empty'" in messages[2] and "description is empty" in messages[2]
    assert "'typo'" in messages[4] and "parameters.n" in messages[4] and "'integr'" in messages[4]
    assert "'bad name!'" in messages[5]
    text = str(info.value)
    assert f"{path}:2:" in text
    assert "6 problems; no tool was loaded" in text
    error = info.value
    assert isinstance(error, PolicyEngineError) and isinstance(error, PackLoadError)
    assert error.exit_code == 2


def test_json_file_problems_point_at_each_item(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(
        '{\n  "tools": [\n    ' + json.dumps(mcp_tool("a")) + ",\n    " + json.dumps({"name": "b"}) + "\n  ]\n}\n",
        "utf-8",
    )
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    (problem,) = info.value.problems
    assert problem.code == "PE701"
    assert problem.location is not None and (problem.location.line, problem.location.column) == (4, 5)
    assert "'b'" in problem.message


def test_json_syntax_error_is_located(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text('{\n  "tools": [\n    {"name": "x",}\n  ]\n}\n', "utf-8")
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    (problem,) = info.value.problems
    assert (problem.code, str(problem.location)) == ("PE702", f"{path}:3:18")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('"just a string"', "not a JSON str"),
        ('{"tools": {"a": 1}}', "`tools` must be an array"),
        (json.dumps([mcp_tool("r", {"type": "string"})]), "input_schema must be a JSON Schema of an object"),
        (json.dumps([mcp_tool("r", {"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}})]), "$ref"),
        (json.dumps([mcp_tool("r", {"type": "object", "properties": {"x": {"pattern": "(?=a)"}}})]), "pattern"),
        (json.dumps([mcp_tool("r", {"type": "object", "required": "x"})]), "required"),
        (json.dumps([bfcl_tool("r", parameters={"type": "dict", "required": ["x"]})]), "undeclared properties ['x']"),
    ],
)
def test_refused_catalogs(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "tools.json"
    path.write_text(content, "utf-8")
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    assert expected in str(info.value)


def test_unreadable_and_non_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(CatalogError) as info:
        load_catalog(tmp_path / "missing.jsonl")
    assert info.value.codes == ("PE108",)
    assert "missing.jsonl" in str(info.value)
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(bfcl_tool("cat")).encode() + b"\n" + '{"name": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    assert info.value.codes == ("PE109",)
    assert info.value.problems[0].location is not None and info.value.problems[0].location.line == 2


def test_problem_codes_are_registered() -> None:
    from policyengine.tools.catalog import BAD_JSON, DUPLICATE_TOOL, NOT_A_TOOL, REFUSED_TOOL
    from policyengine.values.problems import CODES

    codes = (NOT_A_TOOL, BAD_JSON, DUPLICATE_TOOL, REFUSED_TOOL)
    assert len(set(codes)) == 4
    assert all(code in CODES for code in codes)
