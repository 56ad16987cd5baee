"""Tool definitions: definition-time checks, argument and value validation, JSON Schema export."""

from __future__ import annotations

from typing import Any

import pytest

import policyengine
from policyengine import (
    DefinitionError,
    FrozenDict,
    FrozenError,
    RegistrationError,
    Registry,
    ToolDefinition,
    define_tool,
)

GREET_PARAMETERS = {"name": {"type": "string", "required": True, "description": "who to greet"}}


def _greet(args: Any) -> str:
    return f"hello {args['name']}"


def make_tool(**overrides: Any) -> ToolDefinition:
    spec: dict[str, Any] = {
        "name": "greet",
        "description": "Greet a person by name. Do not use it for anything else.",
        "parameters": GREET_PARAMETERS,
        "execute": _greet,
    }
    spec.update(overrides)
    return define_tool(**spec)


def _problem_for(problems: list[str], parameter: str) -> str:
    matching = [p for p in problems if p.split(":", 1)[0] == parameter]
    assert matching, f"no problem names {parameter!r}: {problems!r}"
    return matching[0]


# --------------------------------------------------------------------------- valid definitions


def test_seed_greet_tool_defines_fine() -> None:
    tool = make_tool()
    assert isinstance(tool, ToolDefinition)
    assert tool.name == "greet"
    assert tool.parameters == GREET_PARAMETERS
    assert tool.is_async is False
    assert tool.validate_arguments({"name": "Ada"}) == ({"name": "Ada"}, [])


def test_definition_parameters_are_a_frozen_snapshot() -> None:
    parameters = {"name": {"type": "string", "required": True}}
    tool = make_tool(parameters=parameters)
    parameters["name"]["type"] = "integer"
    parameters["extra"] = {"type": "string"}
    assert tool.validate_arguments({"name": "Ada"})[1] == []
    assert tool.validate_arguments({"name": "Ada", "extra": "x"})[1] != []
    assert isinstance(tool.parameters, FrozenDict)
    with pytest.raises(FrozenError):
        tool.parameters["name"]["required"] = False


@pytest.mark.parametrize("name", ["greet", "_private", "fs.read_file", "web-search", "a", "A1_b.c-d", "x" * 64])
def test_valid_tool_names_are_accepted(name: str) -> None:
    assert make_tool(name=name).name == name


def test_async_execute_and_sync_finalize_content_are_accepted() -> None:
    async def body(args: Any) -> str:
        return "hi"

    def finalize(content: Any) -> Any:
        return content

    tool = make_tool(execute=body, finalize_content=finalize)
    assert tool.is_async is True
    assert tool.finalize_content is finalize


def test_call_execute_passes_ctx_only_to_two_parameter_bodies() -> None:
    seen: list[tuple[Any, ...]] = []

    def one(args: Any) -> str:
        seen.append((args,))
        return "one"

    def two(args: Any, ctx: Any) -> str:
        seen.append((args, ctx))
        return "two"

    args = make_tool().validate_arguments({"name": "Ada"})[0]
    assert args is not None
    assert make_tool(execute=one).call_execute(args, "CTX") == "one"
    assert make_tool(execute=two).call_execute(args, "CTX") == "two"
    assert seen == [(args,), (args, "CTX")]


# --------------------------------------------------------------------------- malformed definitions


@pytest.mark.parametrize(
    "bad_name",
    ["", " ", "read file", "greet ", " greet", "-tool", ".tool", "x" * 129, "tool!", "a/b", "greet\n", "ツール"],
)
def test_bad_tool_names_are_refused_naming_the_name(bad_name: str) -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(name=bad_name)
    assert repr(bad_name) in str(info.value)
    assert "not valid" in str(info.value)


@pytest.mark.parametrize("name", ["1password_lookup", "9", "x" * 128, "mcp__github__create_issue", "get-weather.v2"])
def test_mcp_style_tool_names_are_accepted(name: str) -> None:
    assert make_tool(name=name).name == name


@pytest.mark.parametrize("bad_name", [None, 42, b"greet"])
def test_non_string_tool_names_are_refused(bad_name: Any) -> None:
    with pytest.raises(DefinitionError, match="not valid"):
        make_tool(name=bad_name)


@pytest.mark.parametrize("description", ["", "   ", "\n\t", None])
def test_empty_description_is_refused_naming_the_tool(description: Any) -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(description=description)
    assert "'greet'" in str(info.value)
    assert "description" in str(info.value)


@pytest.mark.parametrize("parameters", [["name"], "name: string", None, 3, [("name", {"type": "string"})]])
def test_parameters_that_are_not_a_mapping_are_refused(parameters: Any) -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(parameters=parameters)
    assert "'greet'" in str(info.value)
    assert "parameters" in str(info.value)


@pytest.mark.parametrize(
    ("parameters", "fragments"),
    [
        ({"name": {"type": "strng"}}, ["name", "strng"]),
        ({"name": {"type": "string", "requried": True}}, ["name", "requried", "unknown rule"]),
        ({"name": {"type": "string", "frobnicate": 1}}, ["name", "frobnicate"]),
        ({"name": "string"}, ["name"]),
        ({"name": {"type": "string", "required": "yes"}}, ["name", "required"]),
        ({"opts": {"type": "dict", "schema": {"depth": {"type": "integr"}}}}, ["opts", "integr"]),
    ],
)
def test_invalid_cerberus_rules_are_refused_naming_tool_and_parameter(
    parameters: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(parameters=parameters)
    message = str(info.value)
    assert "'greet'" in message
    assert "Cerberus" in message
    for fragment in fragments:
        assert fragment in message


def test_invalid_regex_rule_is_refused_at_definition_time() -> None:
    """A broken regex is a malformed definition; it must not surface later as re.error."""
    with pytest.raises(DefinitionError) as info:
        make_tool(parameters={"path": {"type": "string", "regex": "("}})
    assert "'greet'" in str(info.value)
    assert "path" in str(info.value)


@pytest.mark.parametrize(
    ("parameters", "entry"),
    [
        ({"options": {"type": "dict"}}, "options"),
        ({"options": {"type": "dict", "description": "anything goes"}}, "options"),
        ({"options": {"type": ["string", "dict"]}}, "options"),
        ({"options": {"type": "dict", "schema": {"inner": {"type": "dict"}}}}, "inner"),
        ({"items": {"type": "list", "schema": {"type": "dict"}}}, "items"),
    ],
)
def test_free_form_object_parameters_are_refused(parameters: dict[str, Any], entry: str) -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(parameters=parameters)
    message = str(info.value)
    assert "'greet'" in message
    assert "free-form" in message
    assert entry in message


def test_dict_parameter_with_a_typed_schema_is_accepted() -> None:
    tool = make_tool(parameters={"options": {"type": "dict", "schema": {"depth": {"type": "integer"}}}})
    assert tool.validate_arguments({"options": {"depth": 2}}) == ({"options": {"depth": 2}}, [])


@pytest.mark.parametrize(
    "rules",
    [
        {"description": "no type at all"},
        {"type": "list", "description": "items of any type"},
    ],
    ids=["untyped", "list-without-item-schema"],
)
def test_parameter_that_admits_free_form_objects_without_a_dict_type_is_refused(rules: dict[str, Any]) -> None:
    """SPEC 2: parameters are a typed schema with no free-form objects; an untyped slot admits any object."""
    with pytest.raises(DefinitionError, match="greet"):
        make_tool(parameters={"blob": rules})


def test_free_form_output_schema_is_refused() -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(output={"schema": {"type": "dict"}})
    assert "output.schema" in str(info.value)
    assert "free-form" in str(info.value)


def test_invalid_output_schema_is_refused() -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(output={"schema": {"type": "strng"}})
    assert "output.schema" in str(info.value)
    with pytest.raises(DefinitionError, match=r"output\.schema"):
        make_tool(output={"schema": ["string"]})


@pytest.mark.parametrize("output", [{"schema": {"type": "string"}, "rendr": _greet}, {"content": 1}])
def test_output_with_unknown_key_is_refused(output: dict[str, Any]) -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(output=output)
    assert "'greet'" in str(info.value)
    assert "unknown output key" in str(info.value)
    for key in set(output) - {"schema", "render"}:
        assert key in str(info.value)


@pytest.mark.parametrize("execute", [None, "greet", 42, {"fn": _greet}])
def test_non_callable_execute_is_refused(execute: Any) -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(execute=execute)
    assert "'greet'" in str(info.value)
    assert "execute must be callable" in str(info.value)


@pytest.mark.parametrize("render", ["text", 42])
def test_non_callable_render_is_refused(render: Any) -> None:
    with pytest.raises(DefinitionError) as info:
        make_tool(output={"schema": {"type": "string"}, "render": render})
    assert "'greet'" in str(info.value)
    assert "output.render must be callable" in str(info.value)


def test_non_callable_finalize_content_is_refused() -> None:
    with pytest.raises(DefinitionError, match="finalize_content must be callable"):
        make_tool(finalize_content="not a function")


def test_async_finalize_content_is_refused() -> None:
    async def finalize(content: Any) -> Any:
        return content

    with pytest.raises(DefinitionError) as info:
        make_tool(finalize_content=finalize)
    assert "'greet'" in str(info.value)
    assert "synchronous" in str(info.value)


def test_parameters_with_non_json_data_are_refused() -> None:
    with pytest.raises(DefinitionError, match="greet"):
        make_tool(parameters={"mode": {"type": "string", "allowed": {"a", "b"}}})


# --------------------------------------------------------------------------- validate_arguments

RICH_PARAMETERS: dict[str, Any] = {
    "path": {"type": "string", "required": True, "description": "file to read", "minlength": 1, "maxlength": 200},
    "count": {"type": "integer", "min": 1, "max": 10, "default": 3, "description": "how many"},
    "ratio": {"type": "float", "min": 0, "max": 1},
    "size": {"type": "number"},
    "recursive": {"type": "boolean"},
    "tags": {"type": "list", "schema": {"type": "string"}, "maxlength": 5},
    "options": {
        "type": "dict",
        "schema": {
            "depth": {"type": "integer", "required": True},
            "mode": {"type": "string", "allowed": ["fast", "safe"]},
        },
    },
    "format": {"type": "string", "allowed": ["json", "text"]},
    "note": {"type": "string", "nullable": True},
}


@pytest.fixture
def rich() -> ToolDefinition:
    return make_tool(name="read_file", description="Read a file.", parameters=RICH_PARAMETERS)


def test_valid_arguments_come_back_frozen_and_normalised(rich: ToolDefinition) -> None:
    raw = {"path": "a.txt", "tags": ["x"], "options": {"depth": 1}}
    args, problems = rich.validate_arguments(raw)
    assert problems == []
    assert args == {"path": "a.txt", "tags": ["x"], "options": {"depth": 1}, "count": 3}
    assert isinstance(args, FrozenDict)
    with pytest.raises(FrozenError):
        args["tags"].append("y")
    assert raw == {"path": "a.txt", "tags": ["x"], "options": {"depth": 1}}  # input untouched


@pytest.mark.parametrize(
    ("arguments", "parameter", "fragment"),
    [
        ({"path": 5}, "path", "string"),
        ({"path": ["a"]}, "path", "string"),
        ({"path": "a", "count": "3"}, "count", "integer"),
        ({"path": "a", "count": 2.0}, "count", "integer"),
        ({"path": "a", "recursive": "yes"}, "recursive", "boolean"),
        ({"path": "a", "recursive": 1}, "recursive", "boolean"),
        ({"path": "a", "tags": "x"}, "tags", "list"),
        ({"path": "a", "options": "deep"}, "options", "dict"),
        ({"path": "a", "note": 3}, "note", "string"),
    ],
)
def test_wrong_type_names_the_parameter(
    rich: ToolDefinition, arguments: dict[str, Any], parameter: str, fragment: str
) -> None:
    args, problems = rich.validate_arguments(arguments)
    assert args is None
    assert fragment in _problem_for(problems, parameter)


def test_missing_required_parameter_is_named(rich: ToolDefinition) -> None:
    args, problems = rich.validate_arguments({"count": 2})
    assert args is None
    assert "required" in _problem_for(problems, "path")


def test_unknown_parameter_is_named(rich: ToolDefinition) -> None:
    args, problems = rich.validate_arguments({"path": "a", "pathh": "b"})
    assert args is None
    assert "unknown" in _problem_for(problems, "pathh")


def test_every_problem_is_reported_not_just_the_first(rich: ToolDefinition) -> None:
    _args, problems = rich.validate_arguments({"count": "x", "bogus": 1})
    assert {p.split(":", 1)[0] for p in problems} >= {"path", "count", "bogus"}


@pytest.mark.parametrize("parameter", ["count", "ratio", "size"])
@pytest.mark.parametrize("flag", [True, False])
def test_booleans_are_refused_for_numeric_parameters(rich: ToolDefinition, parameter: str, flag: bool) -> None:
    args, problems = rich.validate_arguments({"path": "a", parameter: flag})
    assert args is None
    assert _problem_for(problems, parameter)


def test_ints_are_accepted_for_float_and_number_parameters(rich: ToolDefinition) -> None:
    args, problems = rich.validate_arguments({"path": "a", "ratio": 1, "size": 7})
    assert problems == []
    assert args is not None
    assert args["ratio"] == 1
    assert args["size"] == 7
    args, problems = rich.validate_arguments({"path": "a", "ratio": 0.5, "size": 2.5})
    assert problems == []


@pytest.mark.parametrize(
    ("arguments", "parameter", "fragment"),
    [
        ({"path": "a", "count": 0}, "count", "min"),
        ({"path": "a", "count": 11}, "count", "max"),
        ({"path": "a", "ratio": 1.5}, "ratio", "max"),
        ({"path": "", "count": 2}, "path", "length"),
        ({"path": "a", "format": "xml"}, "format", "unallowed"),
        ({"path": "a", "tags": ["a", "b", "c", "d", "e", "f"]}, "tags", "length"),
        ({"path": None}, "path", "null"),
    ],
)
def test_constraint_violations_name_the_parameter(
    rich: ToolDefinition, arguments: dict[str, Any], parameter: str, fragment: str
) -> None:
    args, problems = rich.validate_arguments(arguments)
    assert args is None
    assert fragment in _problem_for(problems, parameter)


def test_nullable_parameter_accepts_null(rich: ToolDefinition) -> None:
    args, problems = rich.validate_arguments({"path": "a", "note": None})
    assert problems == []
    assert args is not None
    assert args["note"] is None


@pytest.mark.parametrize(
    ("arguments", "path", "fragment"),
    [
        ({"path": "a", "options": {"depth": "x"}}, "options.depth", "integer"),
        ({"path": "a", "options": {}}, "options.depth", "required"),
        ({"path": "a", "options": {"depth": 1, "extra": 2}}, "options.extra", "unknown"),
        ({"path": "a", "options": {"depth": 1, "mode": "slow"}}, "options.mode", "unallowed"),
        ({"path": "a", "options": {"depth": True}}, "options.depth", "integer"),
        ({"path": "a", "tags": ["ok", 3]}, "tags.1", "string"),
        ({"path": "a", "tags": ["ok", {"x": 1}]}, "tags.1", "string"),
    ],
)
def test_nested_dict_and_list_schemas_are_validated(
    rich: ToolDefinition, arguments: dict[str, Any], path: str, fragment: str
) -> None:
    args, problems = rich.validate_arguments(arguments)
    assert args is None
    assert fragment in _problem_for(problems, path)


def test_list_of_typed_dicts_is_validated_per_item() -> None:
    tool = make_tool(
        parameters={
            "edits": {
                "type": "list",
                "schema": {"type": "dict", "schema": {"line": {"type": "integer", "required": True}}},
            }
        }
    )
    assert tool.validate_arguments({"edits": [{"line": 1}, {"line": 2}]})[1] == []
    args, problems = tool.validate_arguments({"edits": [{"line": 1}, {"line": "two"}]})
    assert args is None
    assert "integer" in _problem_for(problems, "edits.1.line")


@pytest.mark.parametrize("arguments", [["name"], "name=Ada", None, 3])
def test_arguments_that_are_not_an_object_are_refused(arguments: Any) -> None:
    args, problems = make_tool().validate_arguments(arguments)
    assert args is None
    assert len(problems) == 1
    assert "must be an object" in problems[0]


def test_non_json_arguments_are_refused_naming_the_path() -> None:
    args, problems = make_tool().validate_arguments({"name": {"a", "b"}})
    assert args is None
    assert problems and "$.name" in problems[0]


# --------------------------------------------------------------------------- validate_value


def test_validate_value_checks_the_output_schema() -> None:
    tool = make_tool(output={"schema": {"type": "dict", "schema": {"greeting": {"type": "string", "required": True}}}})
    value, problems = tool.validate_value({"greeting": "hello"})
    assert problems == []
    assert value == {"greeting": "hello"}
    assert isinstance(value, FrozenDict)

    value, problems = tool.validate_value({"greeting": 5})
    assert value is None
    assert any("greeting" in p and "string" in p for p in problems), problems

    value, problems = tool.validate_value({})
    assert value is None
    assert any("greeting" in p and "required" in p for p in problems), problems

    value, problems = tool.validate_value({"greeting": "hi", "extra": 1})
    assert value is None
    assert any("extra" in p for p in problems), problems

    value, problems = tool.validate_value("hello")
    assert value is None
    assert problems


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"type": "string"}, "text", 5),
        ({"type": "integer"}, 3, True),
        ({"type": "float"}, 2, "2"),
        ({"type": "list", "schema": {"type": "integer"}}, [1, 2], [1, "2"]),
        ({"type": "string"}, "text", None),
    ],
)
def test_validate_value_accepts_good_and_refuses_bad_canonical_values(schema: Any, good: Any, bad: Any) -> None:
    tool = make_tool(output={"schema": schema})
    assert tool.validate_value(good) == (good, [])
    value, problems = tool.validate_value(bad)
    assert value is None
    assert problems


def test_validate_value_without_output_schema_accepts_any_json_but_refuses_non_json() -> None:
    tool = make_tool()
    assert tool.validate_value({"anything": [1, None]}) == ({"anything": [1, None]}, [])
    value, problems = tool.validate_value({"raw": b"bytes"})
    assert value is None
    assert problems and "bytes" in problems[0]


# --------------------------------------------------------------------------- JSON Schema export

EXPECTED_INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "file to read", "minLength": 1, "maxLength": 200},
        "count": {"type": "integer", "description": "how many", "default": 3, "minimum": 1, "maximum": 10},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "size": {"type": "number"},
        "recursive": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        "options": {
            "type": "object",
            "properties": {
                "depth": {"type": "integer"},
                "mode": {"type": "string", "enum": ["fast", "safe"]},
            },
            "required": ["depth"],
            "additionalProperties": False,
        },
        "format": {"type": "string", "enum": ["json", "text"]},
        "note": {"type": ["string", "null"]},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def test_json_schema_export_of_every_parameter_kind(rich: ToolDefinition) -> None:
    assert rich.to_json_schema() == EXPECTED_INPUT_SCHEMA


def test_to_openai_shape(rich: ToolDefinition) -> None:
    assert rich.to_openai() == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": EXPECTED_INPUT_SCHEMA,
        },
    }


def test_to_mcp_shape_without_output_schema(rich: ToolDefinition) -> None:
    assert rich.to_mcp() == {
        "name": "read_file",
        "description": "Read a file.",
        "inputSchema": EXPECTED_INPUT_SCHEMA,
    }


def test_to_mcp_includes_object_output_schema() -> None:
    tool = make_tool(output={"schema": {"type": "dict", "schema": {"greeting": {"type": "string", "required": True}}}})
    spec = tool.to_mcp()
    assert spec["inputSchema"] == {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "who to greet"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    assert spec["outputSchema"] == {
        "type": "object",
        "properties": {"greeting": {"type": "string"}},
        "required": ["greeting"],
        "additionalProperties": False,
    }


def test_to_mcp_output_schema_is_always_an_object_schema() -> None:
    """MCP's Tool.outputSchema must be `type: object`; a scalar canonical value cannot be exported as-is."""
    spec = make_tool(output={"schema": {"type": "string"}}).to_mcp()
    assert "outputSchema" not in spec or spec["outputSchema"].get("type") == "object"


def test_exported_schemas_are_plain_json_and_independent_copies(rich: ToolDefinition) -> None:
    import json

    first = rich.to_openai()
    assert json.loads(json.dumps(first)) == first
    first["function"]["parameters"]["properties"]["path"]["type"] = "integer"
    first["function"]["parameters"]["required"].append("count")
    assert rich.to_openai()["function"]["parameters"] == EXPECTED_INPUT_SCHEMA


def test_nullable_list_and_dict_keep_items_and_properties_in_export() -> None:
    tool = make_tool(
        parameters={
            "ids": {"type": "list", "nullable": True, "schema": {"type": "integer"}, "minlength": 1},
            "opts": {"type": "dict", "nullable": True, "schema": {"depth": {"type": "integer"}}},
        }
    )
    properties = tool.to_json_schema()["properties"]
    assert properties["ids"] == {"type": ["array", "null"], "items": {"type": "integer"}, "minItems": 1}
    assert properties["opts"] == {
        "type": ["object", "null"],
        "properties": {"depth": {"type": "integer"}},
        "additionalProperties": False,
    }


@pytest.mark.parametrize("value", ["abc", "abc1", "1abc", ""])
def test_an_exported_regex_matches_the_whole_string_as_the_validator_does(value: str) -> None:
    import jsonschema  # type: ignore[import-untyped]  # no stubs installed (types-jsonschema is not a dev dependency)

    tool = make_tool(parameters={"user": {"type": "string", "regex": "[a-z]+", "required": True}})
    schema = tool.to_json_schema()
    assert schema["properties"]["user"]["pattern"] == "^(?:[a-z]+)$"
    exported_ok = jsonschema.Draft202012Validator(schema).is_valid({"user": value})
    assert exported_ok == (tool.validate_arguments({"user": value})[1] == [])


def test_nullable_enum_export_admits_null() -> None:
    tool = make_tool(parameters={"mode": {"type": "string", "nullable": True, "allowed": ["a", "b"]}})
    assert tool.validate_arguments({"mode": None})[1] == []  # the validator accepts null ...
    exported = tool.to_json_schema()["properties"]["mode"]
    assert None in exported["enum"]  # ... so the exported enum must too


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "a"},
        {"path": "a", "count": 5, "tags": ["x"], "options": {"depth": 1, "mode": "safe"}, "note": None},
        {"path": "a", "count": 0},
        {"path": "a", "count": True},
        {"path": "a", "extra": 1},
        {"count": 2},
        {"path": "a", "options": {"depth": 1, "other": 1}},
        {"path": "a", "tags": ["x", 1]},
        {"path": "a", "format": "xml"},
        {"path": "a", "ratio": 1},
    ],
)
def test_exported_schema_agrees_with_the_validator(rich: ToolDefinition, arguments: dict[str, Any]) -> None:
    import jsonschema

    schema = rich.to_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    exported_ok = jsonschema.Draft202012Validator(schema).is_valid(arguments)
    validator_ok = rich.validate_arguments(arguments)[1] == []
    assert exported_ok == validator_ok


# --------------------------------------------------------------------------- registry


def test_registry_refuses_a_duplicate_tool_name() -> None:
    registry = Registry()
    first = make_tool()
    assert registry.register(first) is first
    with pytest.raises(RegistrationError) as info:
        registry.register(make_tool(description="Another greeter."))
    assert "'greet'" in str(info.value)
    assert registry.tools["greet"] is first
    assert list(registry.tools) == ["greet"]


def test_registry_accepts_distinct_names() -> None:
    registry = Registry()
    registry.register(make_tool())
    registry.register(make_tool(name="greet2"))
    assert set(registry.tools) == {"greet", "greet2"}


@pytest.mark.parametrize(
    "thing",
    [
        None,
        "greet",
        {"name": "greet", "description": "d", "parameters": GREET_PARAMETERS, "execute": _greet},
        _greet,
    ],
)
def test_registry_refuses_something_that_is_not_a_definition(thing: Any) -> None:
    registry = Registry()
    with pytest.raises(RegistrationError):
        registry.register(thing)
    assert len(registry.tools) == 0


def test_definition_errors_are_policyengine_errors() -> None:
    assert issubclass(DefinitionError, policyengine.PolicyEngineError)
    assert issubclass(RegistrationError, policyengine.PolicyEngineError)
