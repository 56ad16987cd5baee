"""Differential tests: the compiled fast path against Cerberus with the tools.py dialect.

The property tests run 100 generated cases each (hypothesis draws new ones every run);
POLICYENGINE_TEST_SCALE=10 runs ten times as many (tests/support.py, scaled).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from cerberus import SchemaError
from cerberus.utils import mapping_hash
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from policyengine.tools.cerberus_dialect import ParameterValidator
from policyengine.tools.definition import ToolDefinition
from policyengine.tools.validator import compile_schema
from policyengine.values.frozen import freeze, thaw
from support import scaled

SCALAR_TYPES = ["string", "integer", "float", "number", "boolean"]
FIELD_NAMES = ["a", "b", "c", "d"]
ALPHABET = "abcxy1 é"
REGEXES = ["a+", "[a-c]*", "x|y", ".*", r"\d{1,3}", "(ab)+", "", "a"]
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

# ---------------------------------------------------------------------------------------------
# The oracle
# ---------------------------------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    """Deep equality that also compares types (True is not 1) and lets NaN equal NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def cerberus_verdict(schema: Mapping[str, Any], document: Any, allow_unknown: bool = False) -> tuple[Any, Any]:
    """(True, document), (False, errors) or ("raises", exception type) from Cerberus itself."""
    try:
        validator = ParameterValidator(copy.deepcopy(schema), allow_unknown=allow_unknown)
    except SchemaError:
        # Never reaches the fast path: define_tool refuses it. It must not compile either.
        assert compile_schema(schema, allow_unknown=allow_unknown) is None, schema
        reject()
    except TypeError:
        # Cerberus crashes hashing or sorting some schemas (a list in a list, a None key in a
        # default): define_tool fails on them too, so the fast path never meets them.
        reject()
    try:
        valid = validator.validate(copy.deepcopy(document))
    except Exception as exc:
        return "raises", type(exc).__name__
    return (True, validator.document) if valid else (False, validator.errors)


def assert_agrees(schema: Mapping[str, Any], document: Any, allow_unknown: bool = False) -> bool:
    """Assert the fast path and Cerberus agree on the document; return the verdict."""
    fast = compile_schema(schema, allow_unknown=allow_unknown)
    assert fast is not None, f"schema unexpectedly unsupported: {schema!r}"
    before = copy.deepcopy(document)
    ok, normalised = fast(document)
    assert same(document, before), "the fast path changed its input"
    expected, detail = cerberus_verdict(schema, document, allow_unknown)
    if expected == "raises":
        # Cerberus raises; the fast path must refuse so that the caller's fallback raises too.
        assert (ok, normalised) == (False, None), (schema, document, detail)
        return False
    assert ok is expected, f"fast={ok} cerberus={expected} {detail!r}\nschema={schema!r}\ndocument={document!r}"
    if ok:
        assert same(normalised, detail), f"normalised {normalised!r} != cerberus {detail!r}"
    else:
        assert normalised is None
    return bool(ok)


# ---------------------------------------------------------------------------------------------
# Strategies: schemas of the supported subset, documents near them
# ---------------------------------------------------------------------------------------------

texts = st.one_of(
    st.text(ALPHABET, max_size=4),
    st.sampled_from(["", "a", "ab", "x", "y", "12", "aaa", "x" * 300, "ß", "\u0000"]),
    st.text(max_size=3),  # any code point, surrogates included (RE2 cannot encode those)
)
ints = st.one_of(st.integers(-3, 5), st.sampled_from([2**70, -(2**64), 10**30]), st.integers())
floats = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.5, math.nan, math.inf, -math.inf, 1e30]),
    st.floats(allow_nan=True, allow_infinity=True),
)
scalars = st.one_of(st.none(), st.booleans(), ints, floats, texts)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(FIELD_NAMES), inner, max_size=3)
    ),
    max_leaves=6,
)


def cerberus_can_hash(value: Any) -> bool:
    """Cerberus hashes every schema and cannot hash a list inside a list: define_tool would fail."""
    try:
        mapping_hash({"value": value})
    except TypeError:
        return False
    return True


schema_values = json_values.filter(lambda value: value is not None and cerberus_can_hash(value))


# Strategies are built once, here: building (and validating) them inside every draw dominated the cost.
TYPED_SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "string": texts,
    "integer": st.one_of(ints, st.booleans()),
    "float": st.one_of(floats, ints, st.booleans()),
    "number": st.one_of(floats, ints, st.booleans()),
    "boolean": st.one_of(st.booleans(), st.sampled_from([0, 1])),
}


def typed_scalar(name: str) -> st.SearchStrategy[Any]:
    """Values of a scalar type, with the neighbours that trip naive checks (bools, ints as floats)."""
    return TYPED_SCALARS[name]


KIND_OF: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "float": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "boolean": lambda value: isinstance(value, bool),
}


def as_types(rules: Mapping[str, Any]) -> list[str]:
    declared = rules.get("type")
    if declared is None:
        return []
    return [declared] if isinstance(declared, str) else list(declared)


SHAPES = st.sampled_from([*SCALAR_TYPES, "dict", "list", "dict", "list", "union", "untyped"])
FLAT_SHAPES = st.sampled_from([*SCALAR_TYPES, "union", "untyped"])
UNION_TYPES = st.lists(st.sampled_from(SCALAR_TYPES), min_size=1, max_size=3, unique=True)
CONTAINERS = st.sampled_from(["dict", "list"])
ALLOWED_SIZES = st.sampled_from([0, 1, 1, 1])
NUMERIC_BOUNDS = st.one_of(st.integers(-3, 5), st.sampled_from([0.5, 2**70, 1e30, -1e30]))
REGEX_RULES = st.sampled_from(REGEXES)
DICT_CONTENTS = st.sampled_from(["schema", "schema", "valuesrules", "free"])


@st.composite
def rules_sets(draw: st.DrawFn, depth: int, *, for_keys: bool = False) -> dict[str, Any]:
    """One field's rules from the supported subset; containers nest while depth lasts."""
    containers = depth > 0
    shape = draw(SHAPES if containers else FLAT_SHAPES)
    if shape == "union":
        types: list[str] = draw(UNION_TYPES)
        with_container: bool = draw(st.booleans())
        if containers and with_container:
            types.append(draw(CONTAINERS))
    elif shape == "untyped":
        types = []
    else:
        types = [shape]
    rules: dict[str, Any] = {}
    if types:
        rules["type"] = types if len(types) > 1 or draw(st.booleans()) else types[0]
    flag = st.booleans()
    if draw(flag):
        rules["nullable"] = draw(st.booleans())
    if draw(flag):
        rules["required"] = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:
        rules["description"] = draw(st.text(ALPHABET, max_size=8))
    if draw(st.integers(0, 5)) == 0:
        rules["meta"] = draw(schema_values)
    sized = {"string", "dict", "list"} & set(types) or not types
    if draw(flag) and sized:
        rules["empty"] = draw(st.booleans())
    if draw(st.integers(0, 4)) == 0:
        # Mostly values of the declared types, so that documents can meet the rule.
        typed = [typed_scalar(t) for t in types if t in SCALAR_TYPES]
        pool = st.one_of(*typed) if typed and draw(st.integers(0, 4)) > 0 else scalars
        rules["allowed"] = draw(st.lists(pool, min_size=draw(ALLOWED_SIZES), max_size=4).filter(cerberus_can_hash))
    for bound in ("min", "max"):
        if draw(st.integers(0, 4)) == 0:
            # String bounds on strings, numbers on the rest, and now and then the wrong one.
            wanted = "string" in types and draw(st.booleans())
            wanted ^= draw(st.integers(0, 9)) == 0
            rules[bound] = draw(texts if wanted else NUMERIC_BOUNDS)
    for length in ("minlength", "maxlength"):
        if draw(st.integers(0, 4)) == 0 and sized:
            rules[length] = draw(st.integers(0, 4))
    if draw(st.integers(0, 3)) == 0 and ("string" in types or not types):
        rules["regex"] = draw(REGEX_RULES)
    if "dict" in types:
        container = draw(DICT_CONTENTS)
        if container == "schema":
            rules["schema"] = draw(document_schemas(depth - 1, for_keys=for_keys))
        elif container == "valuesrules":
            rules["valuesrules"] = draw(rules_sets(depth - 1, for_keys=for_keys))
        if draw(st.booleans()):
            rules["allow_unknown"] = draw(st.booleans())
        if draw(st.integers(0, 3)) == 0:
            keysrules = draw(rules_sets(0, for_keys=True))
            if draw(st.integers(0, 3)) > 0:
                keysrules["type"] = "string"  # keys are strings: other types refuse every key
            rules["keysrules"] = keysrules
    if "list" in types:
        if draw(st.integers(0, 3)) > 0:
            rules["schema"] = draw(rules_sets(depth - 1, for_keys=for_keys))
        if draw(st.integers(0, 2)) == 0:
            rules["allow_unknown"] = draw(st.booleans())  # ignored for the items: they inherit
    if not types and draw(st.integers(0, 4)) == 0:
        rules["allow_unknown"] = draw(st.booleans())
    if not for_keys and draw(st.integers(0, 2)) == 0:
        rules["default"] = draw(st.one_of(values_for(rules, depth), json_values).filter(cerberus_can_hash))
    # Cerberus iterates rules in schema order; shuffle them so that order is never relied on.
    names = draw(st.permutations(list(rules)))
    return {name: rules[name] for name in names}


@st.composite
def document_schemas(draw: st.DrawFn, depth: int, *, for_keys: bool = False) -> dict[str, Any]:
    """A document schema: field name -> rules."""
    names = draw(st.lists(st.sampled_from(FIELD_NAMES), max_size=4, unique=True))
    return {name: draw(rules_sets(depth, for_keys=for_keys)) for name in names}


@st.composite
def values_for(draw: st.DrawFn, rules: Mapping[str, Any], depth: int = 3) -> Any:
    """A value near what the rules accept: mostly conforming, sometimes perturbed."""
    if draw(st.integers(0, 9)) < 3:
        return draw(perturbed(rules, depth))
    return draw(conforming(rules, depth))


def _bounds(rules: Mapping[str, Any]) -> tuple[Any, Any]:
    """The numeric min and max, or None where absent, not numeric or contradictory."""
    low, high = rules.get("min"), rules.get("max")
    low = low if isinstance(low, (int, float)) else None
    high = high if isinstance(high, (int, float)) else None
    if low is not None and high is not None and low > high:
        return None, None
    return low, high


@st.composite
def conforming(draw: st.DrawFn, rules: Mapping[str, Any], depth: int) -> Any:
    """A value built to meet the rules (type, allowed, bounds, lengths, regex, nested schema)."""
    types = as_types(rules) or [*SCALAR_TYPES, "dict", "list"]
    kind = draw(st.sampled_from(types))
    allowed = rules.get("allowed") or []
    shortest = rules.get("minlength", 0) + (rules.get("empty") is False)
    longest = max(shortest, rules.get("maxlength", shortest + 3))
    fitting = [value for value in allowed if kind in SCALAR_TYPES and KIND_OF[kind](value)]
    if kind in SCALAR_TYPES and fitting and draw(st.integers(0, 5)) > 0:
        return draw(st.sampled_from(fitting))
    if kind == "string":
        if rules.get("regex"):
            return draw(st.from_regex(rules["regex"], fullmatch=True))
        return draw(st.text(ALPHABET, min_size=shortest, max_size=longest))
    low, high = _bounds(rules)
    if kind == "integer":
        low = None if low is None else math.ceil(low)
        high = None if high is None else math.floor(high)
        return draw(st.integers(low, high) if low is None or high is None or low <= high else ints)
    if kind in ("float", "number"):
        return draw(st.one_of(st.floats(low, high, allow_nan=False), st.integers(-3, 5)))
    if kind == "boolean":
        return draw(st.booleans())
    inner = rules.get("schema")
    if kind == "dict":
        if isinstance(inner, Mapping) and depth > 0:
            return draw(documents_for(inner, depth - 1))
        names = FIELD_NAMES
        keysrules = rules.get("keysrules", {})
        if isinstance(keysrules.get("allowed"), list):
            names = sorted({k for k in keysrules["allowed"] if isinstance(k, str)}) or FIELD_NAMES
        keys = st.sampled_from(names)
        if keysrules.get("regex") and draw(st.booleans()):
            keys = st.from_regex(keysrules["regex"], fullmatch=True)
        values = values_for(rules["valuesrules"], depth - 1) if "valuesrules" in rules and depth > 0 else json_values
        # Too few distinct keys for minlength makes an invalid dict, which is fine too.
        return draw(st.dictionaries(keys, values, min_size=min(shortest, 1), max_size=longest))
    if allowed:
        items: st.SearchStrategy[Any] = st.sampled_from(allowed)
    elif isinstance(inner, Mapping) and depth > 0:
        items = values_for(inner, depth - 1)
    else:
        items = json_values
    return draw(st.lists(items, min_size=shortest, max_size=longest))


@st.composite
def perturbed(draw: st.DrawFn, rules: Mapping[str, Any], depth: int) -> Any:
    """A value at an edge: None, noise, empty, a bound, another type, or a conforming one."""
    choice = draw(st.integers(0, 8))
    if choice == 0:
        return None
    if choice == 1:
        return draw(json_values)
    if choice == 2:
        return draw(st.sampled_from(["", [], {}, 0, False, 0.0, True, 1]))
    if choice == 3 and ("min" in rules or "max" in rules):
        bound = rules.get("min", rules.get("max"))
        if isinstance(bound, str):
            return draw(st.sampled_from([bound, bound + "a", bound[:-1]]))
        return draw(st.sampled_from([bound, bound + 1, bound - 1, bound + 0.5, float(bound), -bound]))
    if choice == 4 and rules.get("allowed"):
        return draw(st.lists(st.sampled_from(rules["allowed"]), max_size=3))
    if choice == 5:
        return draw(typed_scalar(draw(st.sampled_from(SCALAR_TYPES))))
    return swapped(draw(conforming(rules, depth)))


def swapped(value: Any) -> Any:
    """The same value in a neighbouring type: bool <-> int, int -> float, str <-> list."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return bool(value) if value in (0, 1) else float(value) if abs(value) < 2**53 else str(value)
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return list(value)
    if isinstance(value, list):
        return "".join(map(str, value))
    if isinstance(value, dict):
        return list(value)
    return value


@st.composite
def documents_for(draw: st.DrawFn, schema: Mapping[str, Any], depth: int = 3) -> dict[Any, Any]:
    """A document near the schema: required fields mostly there, others often, sometimes extra keys."""
    document: dict[Any, Any] = {}
    for name, rules in schema.items():
        if draw(st.integers(0, 9)) < (9 if rules.get("required") else 6):
            document[name] = draw(values_for(rules, depth))
    if draw(st.integers(0, 5)) == 0:
        extra = draw(st.sampled_from([*FIELD_NAMES, "zz", 1, None, ("t",)]))
        document[extra] = draw(json_values)
    keys = draw(st.permutations(list(document)))
    return {key: document[key] for key in keys}


@st.composite
def schema_and_document(draw: st.DrawFn) -> tuple[dict[str, Any], Any, bool]:
    schema = draw(document_schemas(3))
    document = draw(documents_for(schema))
    return schema, document, draw(st.integers(0, 5)) == 0


# ---------------------------------------------------------------------------------------------
# (a) generated schemas and documents
# ---------------------------------------------------------------------------------------------


@settings(max_examples=scaled(100), deadline=None, suppress_health_check=SLOW)
@given(schema_and_document())
def test_generated_schemas_agree_with_cerberus(case: tuple[dict[str, Any], Any, bool]) -> None:
    schema, document, allow_unknown = case
    assert_agrees(schema, document, allow_unknown)
    # One field at a time too: a whole document is often refused for one field, hiding the rest.
    for name, value in document.items():
        if name in schema:
            assert_agrees({name: schema[name]}, {name: value}, allow_unknown)


@st.composite
def flat_case(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    schema = draw(document_schemas(0))
    return schema, draw(documents_for(schema))


@settings(max_examples=scaled(100), deadline=None, suppress_health_check=SLOW)
@given(flat_case())
def test_flat_schemas_agree_with_cerberus(case: tuple[dict[str, Any], Any]) -> None:
    """Scalar fields only: many more draws of the value rules, where the edge cases live."""
    schema, document = case
    assert_agrees(schema, document)


@st.composite
def nested_rules(draw: st.DrawFn, depth: int) -> dict[str, Any]:
    """Dicts, lists and valuesrules nested with allow_unknown set, unset, true or false anywhere."""
    kind = draw(st.sampled_from(["string", "dict", "dict", "list", "values"] if depth else ["string"]))
    rules: dict[str, Any] = {"type": "dict" if kind == "values" else kind}
    if draw(st.integers(0, 2)) > 0:
        rules["allow_unknown"] = draw(st.booleans())
    if kind == "dict":
        names = draw(st.lists(st.sampled_from(FIELD_NAMES), max_size=2, unique=True))
        rules["schema"] = {name: draw(nested_rules(depth - 1)) for name in names}
    elif kind == "list":
        rules["schema"] = draw(nested_rules(depth - 1))
    elif kind == "values":
        rules["valuesrules"] = draw(nested_rules(depth - 1))
    return rules


@st.composite
def nested_value(draw: st.DrawFn, rules: Mapping[str, Any]) -> Any:
    """A value that meets the rules, except for unknown keys slipped into some dicts."""
    if rules["type"] == "string":
        return draw(st.sampled_from(["s", ""]))
    if rules["type"] == "list":
        return draw(st.lists(nested_value(rules["schema"]), max_size=2))
    if "valuesrules" in rules:
        return draw(st.dictionaries(st.sampled_from(FIELD_NAMES), nested_value(rules["valuesrules"]), max_size=2))
    value = {name: draw(nested_value(inner)) for name, inner in rules["schema"].items()}
    if draw(st.booleans()):
        value["zz"] = "unknown"
    return value


@settings(max_examples=scaled(100), deadline=None, suppress_health_check=SLOW)
@given(nested_rules(3), st.booleans(), st.data())
def test_allow_unknown_inheritance_agrees(rules: dict[str, Any], allow_unknown: bool, data: st.DataObject) -> None:
    """Who inherits allow_unknown from whom: nested dicts, list items, valuesrules' values."""
    assert_agrees({"f": rules}, {"f": data.draw(nested_value(rules))}, allow_unknown)


@settings(max_examples=scaled(100), deadline=None, suppress_health_check=SLOW)
@given(document_schemas(2), st.one_of(scalars, st.lists(json_values, max_size=2)))
def test_non_mapping_documents_are_refused(schema: dict[str, Any], document: Any) -> None:
    fast = compile_schema(schema)
    assert fast is not None
    assert fast(document) == (False, None)
    assert cerberus_verdict(schema, document) == ("raises", "DocumentError")


def test_generated_schemas_mostly_accept() -> None:
    """Guard against a vacuous oracle: near-valid documents must often be valid."""
    verdicts: list[bool] = []

    @settings(max_examples=scaled(100), deadline=None, suppress_health_check=SLOW, database=None)
    @given(schema_and_document())
    def collect(case: tuple[dict[str, Any], Any, bool]) -> None:
        verdicts.append(assert_agrees(*case))

    collect()
    assert 0.1 < sum(verdicts) / len(verdicts) < 0.95


# ---------------------------------------------------------------------------------------------
# Named subtleties, each checked against Cerberus
# ---------------------------------------------------------------------------------------------

NAN = math.nan
SUBTLETIES: list[tuple[str, dict[str, Any], Any, bool]] = [
    ("empty string meets minlength without empty", {"a": {"type": "string", "minlength": 2}}, {"a": ""}, False),
    ("empty: true skips minlength", {"a": {"type": "string", "minlength": 2, "empty": True}}, {"a": ""}, True),
    ("empty: true skips regex", {"a": {"type": "string", "regex": "a+", "empty": True}}, {"a": ""}, True),
    ("empty: true skips allowed", {"a": {"type": "string", "allowed": ["x"], "empty": True}}, {"a": ""}, True),
    ("empty: true keeps min", {"a": {"type": "string", "min": "b", "empty": True}}, {"a": ""}, False),
    ("empty: false with minlength 0", {"a": {"type": "string", "minlength": 0, "empty": False}}, {"a": ""}, False),
    ("empty: false on an empty list", {"a": {"type": "list", "empty": False}}, {"a": []}, False),
    (
        "empty dict still checks its schema",
        {"a": {"type": "dict", "empty": True, "schema": {"b": {"required": True}}}},
        {"a": {}},
        False,
    ),
    (
        "defaults make a dict non-empty",
        {"a": {"type": "dict", "empty": False, "schema": {"x": {"default": 1}}}},
        {"a": {}},
        True,
    ),
    (
        "defaults count for minlength",
        {"a": {"type": "dict", "minlength": 1, "schema": {"x": {"default": 1}}}},
        {"a": {}},
        True,
    ),
    ("None skips type", {"a": {"type": "integer", "nullable": True, "min": 3}}, {"a": None}, True),
    ("None refused without nullable", {"a": {"type": "string"}}, {"a": None}, False),
    ("None replaced by the default", {"a": {"type": "string", "default": "d"}}, {"a": None}, True),
    ("None kept when nullable", {"a": {"type": "string", "default": "d", "nullable": True}}, {"a": None}, True),
    ("default None refused when not nullable", {"a": {"type": "string", "default": None}}, {}, False),
    ("invalid default refused", {"a": {"type": "integer", "default": "x"}}, {}, False),
    ("default satisfies required", {"a": {"type": "integer", "required": True, "default": 1}}, {}, True),
    ("required is missing", {"a": {"type": "integer", "required": True}}, {}, False),
    (
        "required may be None when nullable",
        {"a": {"type": "integer", "required": True, "nullable": True}},
        {"a": None},
        True,
    ),
    ("nested default", {"a": {"type": "dict", "schema": {"b": {"type": "integer", "default": 3}}}}, {"a": {}}, True),
    ("default dict normalised", {"a": {"type": "dict", "default": {}, "schema": {"b": {"default": 3}}}}, {}, True),
    (
        "list item None -> default",
        {"a": {"type": "list", "schema": {"type": "string", "default": "z"}}},
        {"a": [None]},
        True,
    ),
    (
        "valuesrules None -> default",
        {"a": {"type": "dict", "valuesrules": {"type": "integer", "default": 0}}},
        {"a": {"x": None}},
        True,
    ),
    ("unknown field refused", {"a": {"type": "string"}}, {"a": "x", "b": 1}, False),
    ("unknown nested field refused", {"a": {"type": "dict", "schema": {}}}, {"a": {"b": 1}}, False),
    ("nested allow_unknown", {"a": {"type": "dict", "allow_unknown": True, "schema": {}}}, {"a": {"b": 1}}, True),
    (
        "list allow_unknown ignored",
        {"a": {"type": "list", "allow_unknown": True, "schema": {"type": "dict", "schema": {}}}},
        {"a": [{"b": 1}]},
        False,
    ),
    ("non-string key refused", {"a": {"type": "string"}}, {1: "x"}, False),
    ("allowed on a list: every item", {"a": {"type": "list", "allowed": [1, 2]}}, {"a": [1, 3]}, False),
    ("allowed on a dict: its keys", {"a": {"type": "dict", "allowed": ["k"]}}, {"a": {"k": 1}}, True),
    ("allowed: 1 matches True", {"a": {"type": "integer", "allowed": [True]}}, {"a": 1}, True),
    ("allowed: NaN is not NaN", {"a": {"type": "float", "allowed": [NAN]}}, {"a": float("nan")}, False),
    ("min on a string compares", {"a": {"type": "string", "min": "b"}}, {"a": "a"}, False),
    ("min number on a string: no error", {"a": {"type": "string", "min": 5}}, {"a": "x"}, True),
    ("min on a list: no error", {"a": {"type": "list", "min": 5}}, {"a": [1]}, True),
    ("NaN passes min and max", {"a": {"type": "float", "min": 0, "max": 1}}, {"a": NAN}, True),
    ("inf breaks max", {"a": {"type": "float", "max": 1e308}}, {"a": math.inf}, False),
    ("huge int is a float", {"a": {"type": "float", "max": 1e30}}, {"a": 10**30}, True),
    ("huge int over a float max", {"a": {"type": "number", "max": 1e30}}, {"a": 10**31}, False),
    ("bool is not an integer", {"a": {"type": "integer"}}, {"a": True}, False),
    ("bool is not a float", {"a": {"type": "float"}}, {"a": False}, False),
    ("int is a float", {"a": {"type": "float"}}, {"a": 1}, True),
    ("type list", {"a": {"type": ["integer", "string"]}}, {"a": "x"}, True),
    ("type list refuses", {"a": {"type": ["integer", "string"]}}, {"a": 1.5}, False),
    ("regex is a full match", {"a": {"type": "string", "regex": "a|b"}}, {"a": "ab"}, False),
    ("regex on an empty string", {"a": {"type": "string", "regex": "a*"}}, {"a": ""}, True),
    ("regex ignores non-strings", {"a": {"type": ["integer", "string"], "regex": "a"}}, {"a": 5}, True),
    (
        "valuesrules' values inherit the document's allow_unknown, not the field's",
        {"a": {"type": "dict", "allow_unknown": True, "valuesrules": {"type": "dict", "schema": {"b": {}}}}},
        {"a": {"k": {"b": 1, "zz": 1}}},
        False,
    ),
    (
        "keysrules",
        {"a": {"type": "dict", "keysrules": {"type": "string", "regex": "a+"}}},
        {"a": {"aa": 1, "b": 1}},
        False,
    ),
    ("surrogates: RE2 cannot encode", {"a": {"type": "string", "regex": ".*"}}, {"a": "\ud800"}, False),
]


@pytest.mark.parametrize(("schema", "document", "valid"), [c[1:] for c in SUBTLETIES], ids=[c[0] for c in SUBTLETIES])
def test_subtleties(schema: dict[str, Any], document: Any, valid: bool) -> None:
    assert assert_agrees(schema, document) is valid


def test_normalised_document_is_plain_and_fresh() -> None:
    schema = freeze({"a": {"type": "dict", "default": {"b": [1]}, "schema": {"b": {"type": "list"}}}})
    fast = compile_schema(schema)
    assert fast is not None
    ok, first = fast({})
    assert ok and first == {"a": {"b": [1]}} and type(first["a"]) is dict and type(first["a"]["b"]) is list
    first["a"]["b"].append(2)
    assert fast({}) == (True, {"a": {"b": [1]}})


def test_top_level_allow_unknown_is_inherited() -> None:
    schema = {"a": {"type": "dict", "schema": {}}, "l": {"type": "list", "schema": {"type": "dict", "schema": {}}}}
    assert assert_agrees(schema, {"z": 1, "a": {"y": 2}, "l": [{"x": 3}]}, allow_unknown=True)
    assert not assert_agrees({"a": {"type": "dict", "allow_unknown": False, "schema": {}}}, {"a": {"y": 2}}, True)


# ---------------------------------------------------------------------------------------------
# (b) the BFCL multi-turn catalog and its calls
# ---------------------------------------------------------------------------------------------


def test_bfcl_catalog_compiles(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    for tool in bfcl_catalog.values():
        assert compile_schema(tool.parameters) is not None, tool.name
        if tool.output_schema:
            assert compile_schema({"value": thaw(tool.output_schema)}) is not None, tool.name


def test_bfcl_calls_agree_with_cerberus(
    bfcl_catalog: dict[str, ToolDefinition], bfcl_calls: tuple[dict[str, Any], ...]
) -> None:
    compared = accepted = 0
    for call in bfcl_calls:
        tool = bfcl_catalog.get(call["name"])
        if tool is None:  # the corpus calls a tool its catalog lacks
            continue
        accepted += assert_agrees(thaw(tool.parameters), call["arguments"])
        compared += 1
    assert compared > 1000 and accepted > compared // 2


@settings(max_examples=scaled(100), deadline=None, suppress_health_check=SLOW)
@given(st.data())
def test_bfcl_mutated_calls_agree_with_cerberus(
    bfcl_catalog: dict[str, ToolDefinition], bfcl_calls: tuple[dict[str, Any], ...], data: st.DataObject
) -> None:
    """Real calls with one argument dropped, retyped, nulled or added; outputs near their schemas."""
    call = data.draw(st.sampled_from([c for c in bfcl_calls if c["name"] in bfcl_catalog]))
    tool = bfcl_catalog[call["name"]]
    arguments = dict(call["arguments"])
    mutation = data.draw(st.sampled_from(["drop", "retype", "null", "add", "none"]))
    names = sorted(thaw(tool.parameters))
    if mutation == "drop" and arguments:
        arguments.pop(data.draw(st.sampled_from(sorted(arguments))))
    elif mutation in ("retype", "null") and names:
        name = data.draw(st.sampled_from(names))
        arguments[name] = None if mutation == "null" else data.draw(json_values)
    elif mutation == "add":
        arguments[data.draw(st.sampled_from(["extra", *names]))] = data.draw(json_values)
    assert_agrees(thaw(tool.parameters), arguments)
    if tool.output_schema:
        output = {"value": thaw(tool.output_schema)}
        assert_agrees(output, {"value": data.draw(values_for(output["value"]))})


# ---------------------------------------------------------------------------------------------
# (c) rules outside the subset fall back to Cerberus
# ---------------------------------------------------------------------------------------------

UNSUPPORTED: list[dict[Any, Any]] = [
    {"a": {"type": "string", "coerce": str}},
    {"a": {"type": "string", "rename": "b"}},
    {"a": {"type": "string", "rename_handler": str}},
    {"a": {"oneof": [{"type": "string"}, {"type": "integer"}]}},
    {"a": {"anyof": [{"type": "string"}]}},
    {"a": {"allof": [{"type": "string"}]}},
    {"a": {"noneof": [{"type": "string"}]}},
    {"a": {"anyof_type": ["string", "integer"]}},
    {"a": {"type": "string", "dependencies": "b"}, "b": {"type": "string"}},
    {"a": {"type": "string", "excludes": "b"}, "b": {"type": "string"}},
    {"a": {"type": "string", "check_with": lambda field, value, error: None}},
    {"a": {"type": "string", "default_setter": lambda document: "x"}},
    {"a": {"type": "string", "readonly": True}},
    {"a": {"type": "dict", "purge_unknown": True}},
    {"a": {"type": "string", "forbidden": ["x"]}},
    {"a": {"type": "list", "contains": 1}},
    {"a": {"type": "list", "items": [{"type": "string"}]}},
    {"a": {"type": "dict", "require_all": True, "schema": {}}},
    {"a": {"type": "dict", "keyschema": {"type": "string"}}},
    {"a": {"type": "dict", "valueschema": {"type": "string"}}},
    {"a": {"type": "string", "validator": lambda field, value, error: None}},
    {"a": {"type": "datetime"}},
    {"a": {"type": []}},
    {"a": {"type": "string", "regex": r"(a)\1"}},
    {"a": {"type": "dict", "allow_unknown": {"type": "string"}, "schema": {}}},
    {"a": "a_registered_rules_set"},
    {"a": {"type": "dict", "schema": "a_registered_schema"}},
    {"a": {"type": ["dict", "list"], "schema": {"b": {"type": "string"}}}},
    {"a": {"type": "dict", "schema": {"b": {"type": "string", "coerce": int}}}},
    {"a": {"type": "list", "schema": {"type": "string", "forbidden": ["x"]}}},
    {"a": {"type": "dict", "valuesrules": {"type": "string", "coerce": str}}},
    {"a": {"type": "dict", "keysrules": {"type": "string", "default": "k"}}},
    {"a": {"type": "dict", "valuesrules": {"type": "integer"}, "schema": {"b": {"type": "integer"}}}},
    {"a": {"type": "string", "nullable": "yes"}},
    {"a": {"type": "string", "minlength": True}},
    {1: {"type": "string"}},
]


@pytest.mark.parametrize("schema", UNSUPPORTED, ids=[repr(s)[:60] for s in UNSUPPORTED])
def test_unsupported_rules_return_none(schema: dict[Any, Any]) -> None:
    assert compile_schema(schema) is None


def test_unsupported_arguments_return_none() -> None:
    assert compile_schema([("a", {"type": "string"})]) is None  # type: ignore[arg-type]
    assert compile_schema({"a": {"type": "string"}}, allow_unknown={"type": "string"}) is None  # type: ignore[arg-type]
