"""The compiled JSON Schema validator against `jsonschema` (the reference), keyword by keyword and on random schemas.

Every verdict is checked both ways: ours (`validator(x) == []`) and jsonschema's `is_valid`. The
deliberate differences (RE2 patterns, exact multipleOf, tuples as arrays, draft-07 $ref
siblings) are pinned in their own table, each with jsonschema's opposite verdict, so that a
difference that disappears is noticed too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no stubs installed (types-jsonschema is not a dev dependency)
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyengine.errors import DefinitionError
from policyengine.tools.json_schema_validator import MAX_DEPTH, MAX_MESSAGES, JsonSchemaValidator, compile_json_schema
from policyengine.values.frozen import freeze
from support import scaled

ORACLES: dict[str, type[Any]] = {
    "2020-12": jsonschema.Draft202012Validator,
    "7": jsonschema.Draft7Validator,
    "4": jsonschema.Draft4Validator,
}
FALLBACK = "is not valid against the schema"  # the message that means the slow pass found nothing


def verdicts(schema: Any, instance: Any, draft: str = "2020-12") -> tuple[list[str], bool]:
    """(our messages, jsonschema's verdict); also asserts our two passes agree with each other."""
    ours = compile_json_schema(schema)
    messages = ours(instance)
    assert ours.is_valid(instance) is (messages == [])
    assert not any(FALLBACK in message for message in messages), messages
    return messages, ORACLES[draft](schema).is_valid(instance)


# ---------------------------------------------------------------------------------------------
# Every keyword, with its look-alikes: (rule, schema, valid instances, invalid instances, draft)
# ---------------------------------------------------------------------------------------------

LONG = "x" * 1000
TABLE: list[tuple[str, Any, list[Any], list[Any], str]] = [
    ("true_schema_accepts_everything", True, [None, 1, "a", [], {}], [], "2020-12"),
    ("false_schema_refuses_everything", False, [], [None, 0, "", [], {}], "2020-12"),
    ("empty_schema_accepts_everything", {}, [None, True, 1.5, {"a": [1]}], [], "2020-12"),
    ("type_string", {"type": "string"}, ["", "1", "é"], [1, None, True, ["a"], {"a": "b"}], "2020-12"),
    (
        "type_integer_takes_integral_floats",
        {"type": "integer"},
        [0, -3, 1.0, 10**30],
        [True, False, 1.5, "1"],
        "2020-12",
    ),
    ("type_number_excludes_booleans", {"type": "number"}, [0, 1.5, -2, 10**30], [True, False, "1", None], "2020-12"),
    ("type_boolean_excludes_numbers", {"type": "boolean"}, [True, False], [0, 1, "true", None], "2020-12"),
    ("type_null", {"type": "null"}, [None], [0, "", False, []], "2020-12"),
    ("type_object", {"type": "object"}, [{}, {"a": 1}], [[], "{}", None], "2020-12"),
    ("type_array", {"type": "array"}, [[], [1, "a"]], [{}, "[]", None], "2020-12"),
    ("type_list_is_a_union", {"type": ["string", "null"]}, ["a", None], [0, False, []], "2020-12"),
    ("type_list_integer_or_boolean", {"type": ["integer", "boolean"]}, [1, True, 2.0], [1.5, "1", None], "2020-12"),
    ("type_number_or_string", {"type": ["number", "string"]}, [1, 1.5, "x"], [True, None, []], "2020-12"),
    ("enum_of_strings", {"enum": ["read", "write"]}, ["read", "write"], ["READ", "rea", 1, None, ["read"]], "2020-12"),
    ("enum_one_equals_one_point_zero", {"enum": [1, "1"]}, [1, 1.0, "1"], [True, 2, "1.0"], "2020-12"),
    ("enum_true_is_not_one", {"enum": [True, None]}, [True, None], [1, 1.0, False, 0], "2020-12"),
    ("enum_zero_is_not_false", {"enum": [0]}, [0, 0.0], [False, None, "0"], "2020-12"),
    (
        "enum_compares_containers_deeply",
        {"enum": [[1, {"a": True}]]},
        [[1, {"a": True}], [1.0, {"a": True}]],
        [[True, {"a": True}], [1, {"a": 1}], [1], [[1, {"a": True}]]],
        "2020-12",
    ),
    ("const_string", {"const": "on"}, ["on"], ["off", "On", None], "2020-12"),
    ("const_false_is_not_zero", {"const": False}, [False], [0, 0.0, None, ""], "2020-12"),
    (
        "const_object_ignores_key_order",
        {"const": {"a": 1, "b": [2]}},
        [{"b": [2], "a": 1}, {"a": 1.0, "b": [2.0]}],
        [{"a": 1}, {"a": 1, "b": [2], "c": 3}, {"a": True, "b": [2]}],
        "2020-12",
    ),
    ("const_null", {"const": None}, [None], [0, False, "", []], "2020-12"),
    ("minLength_counts_code_points", {"minLength": 2}, ["ab", "éé", "😀😀", 5, None], ["a", "é", "😀", ""], "2020-12"),
    ("maxLength_counts_code_points", {"maxLength": 2}, ["ab", "😀😀", "", 1234], ["abc", "😀😀😀"], "2020-12"),
    ("pattern_is_a_search_not_a_full_match", {"pattern": "b+"}, ["abbc", "b", 3, None], ["", "ac", "B"], "2020-12"),
    ("pattern_anchored", {"pattern": "^[a-z]+$"}, ["abc"], ["abc1", "1abc", ""], "2020-12"),
    ("pattern_with_alternation", {"pattern": "^a|b$"}, ["ax", "xb"], ["xa", "bx"], "2020-12"),
    ("pattern_unicode", {"pattern": "^é{2}$"}, ["éé"], ["é", "ééé", "ee"], "2020-12"),
    ("pattern_unicode_escape_is_read", {"pattern": "^\\u0041+$"}, ["AA"], ["a", "u0041"], "2020-12"),
    ("minimum", {"minimum": 3}, [3, 3.0, 4, 100], [2, 2.999, -3], "2020-12"),
    ("maximum", {"maximum": 1000}, [1000, -5, 999.5], [1001, 1000.5, 10**20], "2020-12"),
    ("maximum_ignores_booleans", {"maximum": 0}, [True, "5", None], [1], "2020-12"),
    ("exclusiveMinimum", {"exclusiveMinimum": 0}, [1, 0.001], [0, 0.0, -1], "2020-12"),
    ("exclusiveMaximum", {"exclusiveMaximum": 1.5}, [1, 1.4], [1.5, 2], "2020-12"),
    ("minimum_and_exclusiveMinimum_together", {"minimum": 1, "exclusiveMinimum": 2}, [3], [2, 1, 0], "2020-12"),
    ("draft4_exclusiveMaximum_flag", {"maximum": 3, "exclusiveMaximum": True}, [2, 2.99], [3, 4], "4"),
    ("draft4_exclusiveMinimum_flag_false", {"minimum": 3, "exclusiveMinimum": False}, [3, 4], [2], "4"),
    ("multipleOf_integer", {"multipleOf": 3}, [0, 9, -6, 9.0, 3 * 10**30], [10, 9.5, 3 * 10**30 + 1], "2020-12"),
    ("multipleOf_float_exact", {"multipleOf": 0.5}, [1, 1.5, 0, -2.5], [0.2, 1.25], "2020-12"),
    ("multipleOf_ignores_non_numbers", {"multipleOf": 2}, ["3", True, None], [3], "2020-12"),
    (
        "properties",
        {"properties": {"a": {"type": "integer"}}},
        [{}, {"a": 1}, {"b": "x"}, [1], "a"],
        [{"a": "1"}, {"a": True}],
        "2020-12",
    ),
    ("required", {"required": ["a", "b"]}, [{"a": 1, "b": None}, "not an object", [1]], [{"a": 1}, {}], "2020-12"),
    (
        "additionalProperties_false",
        {"properties": {"a": {}}, "additionalProperties": False},
        [{}, {"a": 1}],
        [{"b": 1}, {"a": 1, "A": 2}],
        "2020-12",
    ),
    (
        "additionalProperties_schema",
        {"properties": {"a": {}}, "additionalProperties": {"type": "string"}},
        [{"a": 1, "b": "x"}],
        [{"b": 1}],
        "2020-12",
    ),
    (
        "patternProperties_searches_keys",
        {"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False},
        [{"x-a": "1"}, {}],
        [{"x-a": 1}, {"y": "1"}, {"ax-": "1"}],
        "2020-12",
    ),
    (
        "patternProperties_and_properties_both_apply",
        {"properties": {"ab": {"type": "string"}}, "patternProperties": {"b": {"minLength": 2}}},
        [{"ab": "xx"}, {"cb": "yy"}],
        [{"ab": "x"}, {"ab": 12}],
        "2020-12",
    ),
    (
        "propertyNames",
        {"propertyNames": {"pattern": "^[a-z]+$", "maxLength": 3}},
        [{"abc": 1}, {}],
        [{"abcd": 1}, {"A": 1}],
        "2020-12",
    ),
    (
        "minProperties_maxProperties",
        {"minProperties": 1, "maxProperties": 2},
        [{"a": 1}, {"a": 1, "b": 2}, []],
        [{}, {"a": 1, "b": 2, "c": 3}],
        "2020-12",
    ),
    ("items_schema", {"items": {"type": "string"}}, [[], ["a", "b"], {"a": 1}], [["a", 1], [None]], "2020-12"),
    (
        "prefixItems_then_items",
        {"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
        [[1], [1, "a"], []],
        [[1, "a", 3], ["a"], [1, 2]],
        "2020-12",
    ),
    (
        "prefixItems_then_items_schema",
        {"prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
        [[1, "a", "b"]],
        [[1, "a", 2]],
        "2020-12",
    ),
    (
        "draft7_items_array_is_prefixItems",
        {"items": [{"type": "integer"}], "additionalItems": {"type": "string"}},
        [[1], [1, "a"], []],
        [["a"], [1, 2]],
        "7",
    ),
    ("draft7_additionalItems_false", {"items": [{}, {}], "additionalItems": False}, [[1, 2]], [[1, 2, 3]], "7"),
    ("draft7_additionalItems_alone_does_nothing", {"additionalItems": False}, [[1, 2]], [], "7"),
    (
        "draft7_additionalItems_ignored_without_items_array",
        {"items": {"type": "integer"}, "additionalItems": False},
        [[1, 2, 3]],
        [["a"]],
        "7",
    ),
    ("contains", {"contains": {"type": "integer"}}, [[1], ["a", 2], "x"], [[], ["a", True]], "2020-12"),
    (
        "minContains_maxContains",
        {"contains": {"const": 1}, "minContains": 2, "maxContains": 3},
        [[1, 1], [1, 1, 1, 2]],
        [[1], [1, 1, 1, 1], []],
        "2020-12",
    ),
    ("minContains_zero_accepts_no_match", {"contains": {"const": 1}, "minContains": 0}, [[], [2]], [], "2020-12"),
    ("minItems_maxItems", {"minItems": 1, "maxItems": 2}, [[1], [1, 2], "ab"], [[], [1, 2, 3]], "2020-12"),
    (
        "uniqueItems_uses_json_equality",
        {"uniqueItems": True},
        [[1, True], [0, False], [[1], [True]], [{"a": 1}, {"a": 2}]],
        [[1, 1.0], ["a", "a"], [{"a": 1}, {"a": 1.0}], [[1, [2]], [1, [2.0]]]],
        "2020-12",
    ),
    ("uniqueItems_false_allows_duplicates", {"uniqueItems": False}, [[1, 1]], [], "2020-12"),
    ("allOf", {"allOf": [{"type": "integer"}, {"minimum": 2}]}, [2, 3], [1, "2", 2.5], "2020-12"),
    ("anyOf", {"anyOf": [{"type": "string"}, {"minimum": 2}]}, ["a", 2, None], [1], "2020-12"),
    ("oneOf_exactly_one", {"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 2.5], [3, 1.5], "2020-12"),
    ("not", {"not": {"type": "string"}}, [1, None], ["a", ""], "2020-12"),
    (
        "if_then_else",
        {"if": {"type": "integer"}, "then": {"minimum": 0}, "else": {"type": "string"}},
        [1, "a"],
        [-1, None, 1.5],
        "2020-12",
    ),
    ("if_without_then_or_else_does_nothing", {"if": {"type": "integer"}}, [1, "a"], [], "2020-12"),
    ("then_without_if_does_nothing", {"then": False, "else": False}, [1, "a"], [], "2020-12"),
    ("dependentRequired", {"dependentRequired": {"a": ["b"]}}, [{}, {"b": 1}, {"a": 1, "b": 2}], [{"a": 1}], "2020-12"),
    (
        "dependentSchemas",
        {"dependentSchemas": {"a": {"required": ["b"]}}},
        [{}, {"a": 1, "b": 2}],
        [{"a": 1}],
        "2020-12",
    ),
    (
        "draft7_dependencies_both_forms",
        {"dependencies": {"a": ["b"], "c": {"properties": {"d": {"type": "string"}}}}},
        [{"a": 1, "b": 1}, {"c": 1, "d": "x"}, {"d": 1}],
        [{"a": 1}, {"c": 1, "d": 1}],
        "7",
    ),
    (
        "ref_to_defs",
        {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
        [{"a": 1}],
        [{"a": "1"}],
        "2020-12",
    ),
    (
        "ref_to_definitions",
        {"definitions": {"n": {"type": "integer"}}, "items": {"$ref": "#/definitions/n"}},
        [[1, 2]],
        [[1, "2"]],
        "7",
    ),
    (
        "ref_to_a_json_pointer",
        {"properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}}},
        [{"b": "x"}],
        [{"b": 1}],
        "2020-12",
    ),
    (
        "ref_pointer_escapes",
        {
            "$defs": {"a/b": {"type": "string"}, "c d": {"type": "integer"}},
            "properties": {"x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/c%20d"}},
        },
        [{"x": "1", "y": 1}],
        [{"x": 1}, {"y": "1"}],
        "2020-12",
    ),
    (
        "ref_to_the_root_is_recursive",
        {"type": "object", "properties": {"child": {"$ref": "#"}, "n": {"type": "integer"}}},
        [{"child": {"child": {"n": 1}}}],
        [{"child": {"child": {"n": "1"}}}],
        "2020-12",
    ),
    (
        "ref_siblings_apply_in_2020_12",
        {"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "minLength": 2},
        ["ab"],
        ["a", 1],
        "2020-12",
    ),
    (
        "ref_with_the_root_id",
        {"$id": "https://example.com/s", "$defs": {"n": {"type": "null"}}, "$ref": "https://example.com/s#/$defs/n"},
        [None],
        [0],
        "2020-12",
    ),
    ("format_is_only_an_annotation", {"format": "email"}, ["not an email", 1], [], "2020-12"),
    (
        "unknown_keywords_and_annotations_are_ignored",
        {"title": "t", "description": "d", "default": 1, "examples": [1], "x-policy-role": "path", "frobnicate": 1},
        [1, "a"],
        [],
        "2020-12",
    ),
    (
        "unevaluatedProperties_alone_is_additionalProperties",
        {"properties": {"a": {}}, "unevaluatedProperties": False},
        [{"a": 1}],
        [{"b": 1}],
        "2020-12",
    ),
    (
        "unevaluatedItems_alone_is_items",
        {"prefixItems": [{}], "unevaluatedItems": {"type": "string"}},
        [[1, "a"]],
        [[1, 2]],
        "2020-12",
    ),
    (
        "mcp_write_file",
        {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
            "additionalProperties": False,
            "$schema": "http://json-schema.org/draft-07/schema#",
        },
        [{"path": "/a", "content": ""}],
        [{"path": "/a"}, {"path": 1, "content": ""}, {"path": "/a", "content": "", "x": 1}, "/a", None],
        "7",
    ),
    (
        "pydantic_optional_field",
        {"properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}}},
        [{"n": None}, {"n": 3}, {}],
        [{"n": "3"}, {"n": True}],
        "2020-12",
    ),
    ("long_strings", {"maxLength": 999}, ["x" * 999], [LONG], "2020-12"),
]


@pytest.mark.parametrize(("schema", "valid", "invalid", "draft"), [row[1:] for row in TABLE], ids=[r[0] for r in TABLE])
def test_each_keyword_gives_jsonschemas_verdict(schema: Any, valid: list[Any], invalid: list[Any], draft: str) -> None:
    for instance in valid:
        messages, reference = verdicts(schema, instance, draft)
        assert reference, f"the table is wrong: jsonschema refuses {instance!r}"
        assert messages == [], (instance, messages)
    for instance in invalid:
        messages, reference = verdicts(schema, instance, draft)
        assert not reference, f"the table is wrong: jsonschema accepts {instance!r}"
        assert messages, instance


# (rule, schema, instance, our verdict, draft): jsonschema gives the opposite one, for the reason in the rule.
DIFFERENCES: list[tuple[str, Any, Any, bool, str]] = [
    ("digit_class_is_ascii_as_in_ecma262", {"pattern": "^\\d$"}, "\u0663", False, "2020-12"),
    ("dollar_does_not_match_before_a_final_newline", {"pattern": "^a$"}, "a\n", False, "2020-12"),
    ("a_surrogate_pair_escape_is_one_character", {"pattern": "^\\ud83d\\ude00$"}, "😀", True, "2020-12"),
    ("multipleOf_is_exact_on_the_numbers_as_written", {"multipleOf": 0.1}, 0.3, True, "2020-12"),
    ("multipleOf_is_exact_on_small_steps", {"multipleOf": 0.01}, 19.99, True, "2020-12"),
    ("a_tuple_is_an_array", {"type": "array", "items": {"type": "integer"}}, (1, 2), True, "2020-12"),
    ("a_tuple_is_an_array_for_type_alone", {"type": "array"}, ("a",), True, "2020-12"),
    (
        "draft7_ref_siblings_still_apply",
        {"definitions": {"s": {}}, "$ref": "#/definitions/s", "type": "string"},
        1,
        False,
        "7",
    ),
    ("draft7_dependencies_apply_in_a_2020_12_schema_too", {"dependencies": {"a": ["b"]}}, {"a": 1}, False, "2020-12"),
    (
        "draft7_additionalItems_applies_after_prefixItems",
        {"prefixItems": [{}], "additionalItems": False},
        [1, 2],
        False,
        "2020-12",
    ),
]


@pytest.mark.parametrize(
    ("schema", "instance", "ours", "draft"), [r[1:] for r in DIFFERENCES], ids=[r[0] for r in DIFFERENCES]
)
def test_deliberate_differences_from_jsonschema(schema: Any, instance: Any, ours: bool, draft: str) -> None:
    validator = compile_json_schema(schema)
    assert (validator(instance) == []) is ours
    assert validator.is_valid(instance) is ours
    assert ORACLES[draft](schema).is_valid(instance) is not ours


# ---------------------------------------------------------------------------------------------
# Random schemas from the supported keywords, random instances: the same verdict as jsonschema
# ---------------------------------------------------------------------------------------------

KEYS = ["a", "b", "x-1"]
TYPES = ["string", "integer", "number", "boolean", "null", "object", "array"]
# Patterns on which RE2 and Python's re agree for the strings drawn (ASCII and é, no newline).
PATTERNS = ["^a", "b$", "a+b", "^[a-c]{2}$", "^$", "x|y", "é", "^[^a]*$", "1"]
NUMBERS = st.sampled_from([-2, 0, 1, 2, 3, 1.5, 2.0, -0.5])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 2.5, -1.5]), st.text("abxy1é-", max_size=4)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=10,
)
COUNTS = st.integers(0, 3)


def merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


def one(name: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({name: values})


COMMON_ASSERTIONS = [
    one("type", st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True)),
    one("enum", st.lists(JSON, min_size=1, max_size=3)),
    one("const", JSON),
    one("minimum", NUMBERS),
    one("maximum", NUMBERS),
    one("exclusiveMinimum", NUMBERS),
    one("exclusiveMaximum", NUMBERS),
    one("multipleOf", st.sampled_from([1, 2, 3])),
    one("minLength", COUNTS),
    one("maxLength", COUNTS),
    one("pattern", st.sampled_from(PATTERNS)),
    one("minItems", COUNTS),
    one("maxItems", COUNTS),
    one("uniqueItems", st.booleans()),
    one("minProperties", COUNTS),
    one("maxProperties", COUNTS),
    one("required", st.lists(st.sampled_from(KEYS), max_size=2, unique=True)),
]
NAMES = st.lists(st.sampled_from(KEYS), max_size=2)
ASSERTIONS = {
    "2020-12": st.one_of(*COMMON_ASSERTIONS, one("dependentRequired", st.dictionaries(st.sampled_from(KEYS), NAMES))),
    "7": st.one_of(*COMMON_ASSERTIONS),
}


def applicators(draft: str) -> Callable[[st.SearchStrategy[Any]], st.SearchStrategy[dict[str, Any]]]:
    """The keywords with sub-schemas, in the spelling of `draft`."""

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
        keyed = st.dictionaries(st.sampled_from(KEYS), children, max_size=2)
        listed = st.lists(children, min_size=1, max_size=3)
        common = [
            one("properties", keyed),
            one("patternProperties", st.dictionaries(st.sampled_from(PATTERNS), children, max_size=2)),
            one("additionalProperties", children),
            one("propertyNames", children),
            one("items", children),
            one("allOf", listed),
            one("anyOf", listed),
            one("oneOf", listed),
            one("not", children),
            st.fixed_dictionaries({"if": children}, optional={"then": children, "else": children}),
            ASSERTIONS[draft],
        ]
        if draft == "7":
            specific = [
                one("dependencies", st.dictionaries(st.sampled_from(KEYS), NAMES | children, max_size=2)),
                st.fixed_dictionaries({"items": listed}, optional={"additionalItems": children}),
                one("contains", children),
            ]
        else:
            specific = [
                one("dependentSchemas", keyed),
                one("prefixItems", listed),
                st.fixed_dictionaries({"contains": children}, optional={"minContains": COUNTS, "maxContains": COUNTS}),
            ]
        return st.lists(st.one_of(*common, *specific), min_size=1, max_size=3).map(merged)

    return extend


def schemas(draft: str) -> st.SearchStrategy[Any]:
    leaves = st.booleans() | st.lists(ASSERTIONS[draft], max_size=3).map(merged)
    return st.recursive(leaves, applicators(draft), max_leaves=6)


SCHEMAS = schemas("2020-12")


def assert_same_verdicts(schema: Any, instances: list[Any], draft: str) -> None:
    ours, reference = compile_json_schema(schema), ORACLES[draft](schema)
    for instance in instances:
        messages = ours(instance)
        assert (messages == []) is reference.is_valid(instance), (schema, instance, messages)
        assert ours.is_valid(instance) is (messages == [])
        assert not any(FALLBACK in message for message in messages), messages
        assert ours(freeze(instance)) == messages  # frozen containers are the same JSON


@settings(max_examples=scaled(110), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, st.lists(JSON, min_size=4, max_size=8))
def test_random_schemas_and_instances_get_jsonschemas_verdict(schema: Any, instances: list[Any]) -> None:
    assert_same_verdicts(schema, instances, "2020-12")


@settings(max_examples=scaled(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas("7"), st.lists(JSON, min_size=4, max_size=8))
def test_random_draft7_schemas_get_draft7_verdicts(schema: Any, instances: list[Any]) -> None:
    assert_same_verdicts(schema, instances, "7")


@settings(max_examples=scaled(40), deadline=None)
@given(SCHEMAS)
def test_a_recursive_schema_of_random_parts_gets_jsonschemas_verdict(part: Any) -> None:
    schema = {"$defs": {"part": part}, "anyOf": [{"$ref": "#/$defs/part"}, {"items": {"$ref": "#"}}]}
    ours, reference = compile_json_schema(schema), jsonschema.Draft202012Validator(schema)
    instance: object
    for instance in ([1, [2, ["a"]]], [[{"a": 1}]], "ab", [[[]]]):
        assert ours.is_valid(instance) is reference.is_valid(instance), (schema, instance)


# ---------------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------------

SEARCH = {
    "type": "object",
    "properties": {
        "query": {
            "type": "object",
            "properties": {"limit": {"type": "integer", "maximum": 1000}, "text": {"type": "string"}},
            "required": ["text"],
        },
        "sort": {"enum": ["date", "stars"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "odd key": {"type": "boolean"},
    },
    "additionalProperties": False,
}


def test_a_message_names_the_json_path_of_the_failing_value() -> None:
    problems = compile_json_schema(SEARCH)(
        {"query": {"limit": 5000}, "sort": "size", "tags": ["a", 3], "odd key": 1, "extra": 1}
    )
    assert problems == [
        '$.query: missing the required property "text"',
        "$.query.limit: 5000 is more than the maximum 1000",
        '$.sort: "size" is not one of ["date", "stars"]',
        "$.tags[1]: 3 is not a string",
        '$["odd key"]: 1 is not a boolean',
        '$: the property "extra" is not allowed',
    ]


def test_a_valid_instance_has_no_message() -> None:
    assert compile_json_schema(SEARCH)({"query": {"text": "x", "limit": 1000}, "tags": []}) == []


def test_messages_stop_at_the_cap() -> None:
    assert len(compile_json_schema({"additionalProperties": False})({f"k{i}": i for i in range(100)})) == MAX_MESSAGES
    assert len(compile_json_schema({"required": [f"k{i}" for i in range(100)]})({})) == MAX_MESSAGES


def test_a_long_attacker_string_is_shortened_in_messages() -> None:
    (problem,) = compile_json_schema({"maxLength": 3})("A" * 100_000)
    assert len(problem) < 200 and "100000 characters" in problem


def test_an_optional_field_explains_the_branch_of_its_type() -> None:
    schema = {"properties": {"n": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}}}
    assert compile_json_schema(schema)({"n": 0}) == ["$.n: 0 is less than the minimum 1"]
    assert compile_json_schema(schema)({"n": "x"}) == ['$.n: "x" is valid against none of the schemas of `anyOf`']


def test_oneOf_says_which_schemas_matched() -> None:
    (problem,) = compile_json_schema({"oneOf": [{"type": "integer"}, {"minimum": 0}]})(3)
    assert "schemas 0, 1 of `oneOf`" in problem


# ---------------------------------------------------------------------------------------------
# Frozen instances
# ---------------------------------------------------------------------------------------------


def test_frozen_dicts_and_lists_are_objects_and_arrays() -> None:
    validator = compile_json_schema(SEARCH)
    good = {"query": {"text": "x"}, "tags": ["a", "b"], "sort": "date"}
    bad = {"query": {"text": 1}, "tags": ["a", ["b"]]}
    assert validator(freeze(good)) == [] and validator.is_valid(freeze(good))
    assert validator(freeze(bad)) == validator(bad) != []


def test_frozen_values_compare_as_json_in_enum_const_and_uniqueItems() -> None:
    assert compile_json_schema({"const": {"a": [1, True]}})(freeze({"a": [1.0, True]})) == []
    assert compile_json_schema({"enum": [[1, 2]]})(freeze([1, 2])) == []
    assert compile_json_schema({"uniqueItems": True})(freeze([{"a": [1]}, {"a": [1.0]}])) != []


# ---------------------------------------------------------------------------------------------
# Hostile instances: a call always ends, quickly, with messages
# ---------------------------------------------------------------------------------------------

TREE = {
    "$defs": {"node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
    "$ref": "#/$defs/node",
}


def nested(depth: int, leaf: Any = None) -> Any:
    value: Any = {"kids": [] if leaf is None else leaf}
    for _ in range(depth):
        value = {"kids": [value]}
    return value


def test_a_recursive_schema_follows_a_deep_valid_instance() -> None:
    assert compile_json_schema(TREE)(nested(60)) == []
    assert compile_json_schema(TREE)(nested(60, leaf=[1])) != []


def test_a_recursive_schema_follows_at_most_max_depth_levels() -> None:
    validator = compile_json_schema(TREE)
    assert validator(nested(MAX_DEPTH // 2 - 1)) == []  # two levels (an object, an array) per step
    (problem,) = validator(nested(MAX_DEPTH // 2 + 5))
    assert problem.startswith("$.kids[0].kids[0]") and f"more than {MAX_DEPTH} levels" in problem


def test_an_instance_nested_10000_deep_fails_cleanly() -> None:
    validator = compile_json_schema(TREE)
    start = time.process_time()
    problems = validator(nested(10_000))
    assert len(problems) == 1 and "nested too deeply" in problems[0]
    assert not validator.is_valid(nested(10_000))
    assert time.process_time() - start < 1


def test_a_not_around_a_recursion_too_deep_fails_closed() -> None:
    # The inner schema fails only at the innermost object (no kids): `not` passes whenever it gets there.
    kids = {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/x"}}
    schema = {"not": {"$ref": "#/$defs/x"}, "$defs": {"x": {"properties": {"kids": kids}, "required": ["kids"]}}}
    validator = compile_json_schema(schema)
    assert validator(nested(20)) == []
    assert jsonschema.Draft202012Validator(schema).is_valid(nested(20))
    assert "nested too deeply" in validator(nested(10_000))[0]


def test_deep_values_in_enum_const_and_uniqueItems_fail_cleanly() -> None:
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    assert compile_json_schema({"enum": [[[1]]]})(deep) != []
    assert compile_json_schema({"const": [[]]})(deep) != []
    problems = compile_json_schema({"uniqueItems": True})([deep, 1])
    assert len(problems) == 1 and "nested too deeply" in problems[0]


def test_a_redos_pattern_runs_in_linear_time() -> None:
    validator = compile_json_schema({"pattern": "^(a+)+$", "patternProperties": {"^(a|aa)+$": {}}})
    start = time.process_time()
    assert validator("a" * 100_000 + "!") != []
    assert validator({"a" * 100_000 + "!": 1}) == []
    assert time.process_time() - start < 5  # a hang guard: a backtracking engine takes hours here


def test_a_lone_surrogate_is_matched_not_raised() -> None:
    validator = compile_json_schema({"pattern": "^a.b$", "patternProperties": {"^\\w": {"type": "string"}}})
    assert validator("a\ud800b") == []
    assert validator("\ud800") != []
    assert validator({"x\ud800": 1}) != []


@pytest.mark.parametrize(
    "instance",
    [
        {1, 2},
        object(),
        b"bytes",
        float("nan"),
        float("inf"),
        10**5000,
        {"a": {1, 2}},
        [object()],
        {1: "non-string key"},
    ],
    ids=["set", "object", "bytes", "nan", "inf", "huge-int", "set-inside", "object-inside", "int-key"],
)
def test_values_that_are_not_json_get_messages_not_exceptions(instance: Any) -> None:
    schema = {
        "type": ["object", "array", "string", "number"],
        "properties": {"a": {"enum": [[1]]}},
        "additionalProperties": {"type": "string"},
        "items": {"const": 1},
        "uniqueItems": True,
        "multipleOf": 0.5,
        "maximum": 10,
        "propertyNames": {"pattern": "a"},
    }
    validator = compile_json_schema(schema)
    assert isinstance(validator(instance), list)
    assert isinstance(validator.is_valid(instance), bool)


# ---------------------------------------------------------------------------------------------
# Schemas the engine cannot understand are refused when compiling
# ---------------------------------------------------------------------------------------------

BAD_SCHEMAS: list[tuple[str, Any, str]] = [
    ("required_must_be_an_array", {"required": "x"}, "#/required"),
    ("minimum_must_be_a_number", {"properties": {"limit": {"minimum": "3"}}}, "#/properties/limit/minimum"),
    ("maximum_must_be_finite", {"maximum": float("nan")}, "#/maximum"),
    ("minLength_must_be_a_count", {"minLength": -1}, "#/minLength"),
    ("maxItems_is_no_boolean", {"maxItems": True}, "#/maxItems"),
    ("multipleOf_must_be_positive", {"multipleOf": 0}, "#/multipleOf"),
    ("type_must_be_a_json_type", {"type": "dict"}, "#/type"),
    ("type_list_must_not_be_empty", {"type": []}, "#/type"),
    ("enum_must_be_an_array", {"items": {"enum": "ab"}}, "#/items/enum"),
    ("properties_must_be_an_object", {"properties": ["a"]}, "#/properties"),
    ("a_subschema_must_be_an_object_or_boolean", {"properties": {"a": "string"}}, "#/properties/a"),
    ("allOf_must_not_be_empty", {"allOf": []}, "#/allOf"),
    ("uniqueItems_must_be_boolean", {"uniqueItems": "yes"}, "#/uniqueItems"),
    ("dependentRequired_takes_names", {"dependentRequired": {"a": "b"}}, "#/dependentRequired/a"),
    ("pattern_must_compile_in_re2", {"pattern": "(?<=a)b"}, "#/pattern"),
    ("backreferences_are_refused", {"properties": {"p": {"pattern": "(a)\\1"}}}, "#/properties/p/pattern"),
    ("patternProperties_keys_must_compile", {"patternProperties": {"a/(?=b)": {}}}, "#/patternProperties/a~1(?=b)"),
    ("remote_refs_are_refused", {"$ref": "https://example.com/schema.json"}, "#/$ref"),
    ("anchor_refs_are_refused", {"$ref": "#node"}, "#/$ref"),
    ("a_ref_to_nothing_is_refused", {"items": {"$ref": "#/$defs/missing"}}, "#/items/$ref"),
    (
        "a_ref_cycle_in_place_is_refused",
        {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"},
        "/$ref",
    ),
    ("a_ref_to_itself_is_refused", {"$ref": "#"}, "#/$ref"),
    (
        "refs_under_a_nested_id_are_refused",
        {"$defs": {"x": {"$id": "other.json", "items": {"$ref": "#/a"}}}, "items": {"$ref": "#/$defs/x"}},
        "#/$defs/x/items/$ref",
    ),
    ("dynamicRef_is_refused", {"$dynamicRef": "#meta"}, "#/$dynamicRef"),
    (
        "unevaluatedProperties_next_to_allOf_is_refused",
        {"allOf": [{}], "unevaluatedProperties": False},
        "#/unevaluatedProperties",
    ),
    ("unused_definitions_are_checked_too", {"$defs": {"unused": {"pattern": "("}}}, "#/$defs/unused/pattern"),
    ("a_schema_is_not_a_list", [{"type": "string"}], "#"),
]


@pytest.mark.parametrize(("schema", "pointer"), [r[1:] for r in BAD_SCHEMAS], ids=[r[0] for r in BAD_SCHEMAS])
def test_a_schema_the_engine_cannot_read_is_refused_naming_the_pointer(schema: Any, pointer: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        compile_json_schema(schema, where="tool 'search' inputSchema")
    assert caught.value.message.startswith("tool 'search' inputSchema: #")
    assert pointer in caught.value.message
    assert caught.value.hint


def test_a_schema_nested_beyond_the_stack_is_refused() -> None:
    schema: Any = {}
    for _ in range(5_000):
        schema = {"items": schema}
    with pytest.raises(DefinitionError, match="nests too deeply"):
        compile_json_schema(schema)


def test_a_compiled_validator_is_reused_and_keeps_no_state_between_calls() -> None:
    validator = compile_json_schema(TREE)
    assert isinstance(validator, JsonSchemaValidator)
    for _ in range(3):
        assert validator(nested(5)) == []
        assert validator(nested(10_000)) != []
        assert validator(nested(5, leaf=[1])) != []
