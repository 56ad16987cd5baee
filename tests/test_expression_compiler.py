"""The expression compiler: compiled closures must behave exactly like jmespath 1.1.0's TreeInterpreter.

Except for one deliberate difference: an ordering comparison of anything but two numbers or two
strings raises OrderingError where jmespath gives null. Every comparison below is against
`Reference`, jmespath with that one rule, and `expected` checks the reference against jmespath
itself, so the two differ nowhere else.

The property tests draw 100 to 500 cases each; POLICYENGINE_TEST_SCALE=10 draws ten times as
many (tests/support.py, scaled).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jmespath
import jmespath.functions
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jmespath.exceptions import JMESPathError
from jmespath.visitor import Options, TreeInterpreter

from policyengine.language.expression_compiler import OrderingError, compile_ast, compile_text, search
from policyengine.language.functions import FUNCTIONS, OPTIONS
from policyengine.packs.loader import load_pack
from policyengine.values.frozen import FrozenDict, FrozenList, freeze
from support import scaled

# The suite still uses `foo` string literals, which jmespath parses with a deprecation warning.
pytestmark = pytest.mark.filterwarnings("ignore:deprecated string literal syntax:PendingDeprecationWarning")

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = Path(__file__).resolve().parent / "data" / "jmespath-compliance"  # MIT, see its README
BUILTINS = jmespath.functions.Functions()

# The vendored suite predates jmespath 1.1.0 in a few places (see its README): jmespath itself
# disagrees with these cases, so they are checked against jmespath's behaviour, not the file.
KNOWN_PARSE_DEVIATIONS = {
    ("escape.json", '"foo\nbar"'),  # raw newline in a quoted identifier: 1.1.0 refuses it
    ("escape.json", '"c:\\\\windows\\path"'),  # `\p` is not an escape in 1.1.0
    ("benchmarks.json", "foo[bar > baz][qux > baz]"),  # no `?`: a syntax error, listed as a benchmark
}
KNOWN_RESULT_DEVIATIONS = {("syntax.json", "@"), ("syntax.json", "@.foo")}  # now valid expressions


# --- comparing outcomes ---------------------------------------------------------------------------


def _kind(value: Any) -> str:
    """The JSON kind of a value, keeping booleans, integers and floats apart."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_equal(a: Any, b: Any, *, exact_types: bool = False) -> bool:
    """Deep equality where true != 1 and 1 != 1.0; exact_types also tells list from FrozenList."""
    if _kind(a) != _kind(b) or (exact_types and type(a) is not type(b)):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y, exact_types=exact_types) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k], exact_types=exact_types) for k in a)
    if _kind(a) in ("boolean", "integer", "float", "string", "null"):
        return bool(a == b)
    return a is b  # e.g. an _Expression: only itself


Outcome = tuple[str, Any]


def outcome(run: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    """("ok", value) or ("raise", exception class): what run(*args, **kwargs) did."""
    try:
        return ("ok", run(*args, **kwargs))
    except Exception as error:
        return ("raise", type(error))


def same_outcome(got: Outcome, want: Outcome) -> bool:
    """Same value (exact types, containers included) or the same exception class."""
    if got[0] != want[0]:
        return False
    if got[0] == "raise":
        return got[1] is want[1]
    return json_equal(got[1], want[1], exact_types=True)


def show(result: Outcome) -> str:
    """A readable outcome for assertion messages."""
    return f"raised {result[1].__name__}" if result[0] == "raise" else f"returned {result[1]!r}"


# --- the reference: jmespath with the engine's ordering rule, written out independently ------------

_ORDER_OPS = {"lt": operator.lt, "lte": operator.le, "gt": operator.gt, "gte": operator.ge}
_SYMBOLS = {"lt": "<", "lte": "<=", "gt": ">", "gte": ">="}


def _number(x: Any) -> bool:
    """A JSON number: int or float, never a boolean."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def reference_order(op: str, x: Any, y: Any) -> Outcome:
    """What `x op y` must do: compare two numbers or two strings, raise OrderingError otherwise."""
    if (_number(x) and _number(y)) or (isinstance(x, str) and isinstance(y, str)):
        return ("ok", _ORDER_OPS[op](x, y))
    return ("raise", OrderingError)


class Reference(TreeInterpreter):  # type: ignore[misc]
    """jmespath 1.1.0, except ordering comparisons follow reference_order."""

    def visit_comparator(self, node: dict[str, Any], value: Any) -> Any:
        if node["value"] not in _ORDER_OPS:
            return super().visit_comparator(node, value)
        x, y = self.visit(node["children"][0], value), self.visit(node["children"][1], value)
        result = reference_order(node["value"], x, y)
        if result[0] == "raise":
            raise OrderingError(node["value"], x, y)
        return result[1]


def expected(parsed: Any, data: Any, options: Options = OPTIONS) -> Outcome:
    """The reference's outcome, checked against jmespath: they differ only where ordering raised."""
    want = outcome(Reference(options).visit, parsed.parsed, data)
    plain = outcome(parsed.search, data, options=options)
    assert same_outcome(want, plain) or want == ("raise", OrderingError), (
        f"the reference differs from jmespath beyond the ordering rule: {show(want)} versus {show(plain)}"
    )
    return want


# --- (a) the JMESPath compliance suite ------------------------------------------------------------


def _conformance_cases() -> Iterator[tuple[str, Any, dict[str, Any]]]:
    for path in sorted(CONFORMANCE.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            for case in group["cases"]:
                yield path.name, group["given"], case


CASES = list(_conformance_cases())
# Missing test data fails, it never skips: without the files the compliance cases would vanish.
assert len({name for name, _given, _case in CASES}) >= 15, f"JMESPath compliance files missing under {CONFORMANCE}"


def _case_id(case: tuple[str, Any, dict[str, Any]]) -> str:
    return f"{case[0].removesuffix('.json')}:{case[2]['expression']}"


@pytest.mark.parametrize("functions", [BUILTINS, FUNCTIONS], ids=["builtins", "policy"])
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_conformance(case: tuple[str, Any, dict[str, Any]], functions: jmespath.functions.Functions) -> None:
    """Each compiled case gives the suite's result (plain and frozen input) or jmespath's exception."""
    file, document, spec = case
    expression = spec["expression"]
    try:
        parsed = jmespath.compile(expression)
    except JMESPathError:
        # Refused at parse time, before any compiler sees it.
        assert "error" in spec or (file, expression) in KNOWN_PARSE_DEVIATIONS, "jmespath refused a valid case"
        return
    assert (file, expression) not in KNOWN_PARSE_DEVIATIONS, "a known deviation parses now: update the list"
    compiled = compile_ast(parsed.parsed, functions)
    if compiled is None:
        return  # falls back to jmespath; counted in test_conformance_coverage
    options = Options(custom_functions=functions)
    for data in (document, freeze(document)):
        want = expected(parsed, data, options)
        got = outcome(compiled, data)
        assert same_outcome(got, want), f"{expression!r}: compiled {show(got)}, reference {show(want)}"
        if (file, expression) in KNOWN_RESULT_DEVIATIONS:
            continue
        if want == ("raise", OrderingError):
            # The suite expects null from ordering non-numbers; the engine raises by design.
            assert spec.get("result", "missing") is None, f"{expression!r}: {spec}"
            continue
        if "result" in spec:
            assert got[0] == "ok" and json_equal(got[1], spec["result"]), f"{expression!r}: {show(got)}"
        elif "error" in spec:
            assert got[0] == "raise", f"{expression!r} should raise {spec['error']}, {show(got)}"


def test_conformance_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    """Report how much of the suite compiles; nearly all of it must."""
    compiled = fallback = refused = 0
    for _file, _document, spec in CASES:
        try:
            parsed = jmespath.compile(spec["expression"])
        except JMESPathError:
            refused += 1
            continue
        if compile_ast(parsed.parsed, BUILTINS) is None:
            fallback += 1
        else:
            compiled += 1
    with capsys.disabled():
        print(f"\njpcompile conformance: {compiled} compiled, {fallback} fell back, {refused} refused by the parser")
    assert compiled / (compiled + fallback) > 0.95


# --- (b) differential tests against jmespath with the policy functions -----------------------------

RULE_EXPRESSIONS = [
    # shipped-pack and docs/functions.md conditions (named lists written out as literals)
    "agent == 'release-bot'",
    "agent == 'reviewer' && glob_match(name, ['shell_*', 'exec_*', 'run_?'])",
    "arguments.amount > `2000`",
    "arguments.amount >= `10000`",
    "product([arguments.price, arguments.amount]) > `25000`",
    "length(to_string(result.value)) > `20`",
    "!is_string(arguments.path)",
    "lower(arguments.environment) == 'production'",
    "normalize_path(arguments.path) != arguments.path",
    "path_escapes(arguments.path)",
    "path_within(arguments.path, ['/etc', '/usr', '/bin', '/boot', 'c:/windows'])",
    "regex_match(arguments.url, '[?&](token|key)=')",
    "contains_any(upper(arguments.query), ['DROP TABLE', 'TRUNCATE ', 'DELETE FROM'])",
    "length(arguments.paths[?path_matches(@, ['.env', '.env.*'])]) > `0`",
    "length(strings(arguments)[?path_matches(@, ['.env', '.env.*', '*.pem'])]) > `0`",
    "strings(arguments)[?regex_match(@, ['AKIA[0-9A-Z]{16}', '(?i)token\\s*=\\s*\\S{6,}'])] | length(@) > `0`",
    "[arguments.path, arguments.paths, arguments.source][] | [?path_within(@, ['/etc', '/root'])] | length(@) > `0`",
    "is_string(arguments.path) && path_matches(arguments.path, ['*.pem', '.env'])",
    "regex_replace(arguments.command, '\\s+', ' ')",
    "paths(@)[?path_within(@, ['/etc', '/usr'])] | length(@) > `0`",
    "paths(@)[?!path_surely_within(@, '/workspace')] | length(@) > `0`",
    "paths(@)[?path_matches(@, ['.env', '.env.*'])] | join(', ', @)",
    "amounts(@)[?@ > `2000`] | length(@) > `0`",
    "(length(urls(@)) > `0` || length(emails(@)) > `0`) && length(secrets(@)) > `0`",
    # comparisons: numbers, strings, booleans versus 0/1, null, containers
    "arguments.amount == `0`",
    "arguments.amount == `1`",
    "arguments.amount != `1.0`",
    "arguments.flag == `true`",
    "arguments.flag != `false`",
    "arguments.amount == arguments.price",
    "arguments.flag == arguments.amount",
    "arguments.amount == arguments.flag",
    "arguments.tags[?@ == `1`]",
    "arguments.amount < arguments.price",
    "arguments.path < 'm'",
    "`5` <= arguments.amount",
    "arguments.missing == `null`",
    'arguments.tags == `["prod"]`',
    "arguments.nested == `{}`",
    "arguments.amount > `1` || arguments.price <= `2.5`",
    "arguments.amount && arguments.price",
    "arguments.tags || 'none'",
    "!arguments.amount",
    "!arguments.tags",
    "!(arguments.amount > `3`)",
    # filters and projections over lists of frozen arguments
    "arguments.items[?price > `10`].name",
    "arguments.items[?name == 'x' || price == `0`]",
    "arguments.items[?contains(tags, 'prod')].name | [0]",
    "arguments.items[*].price",
    "arguments.items[].tags[]",
    "arguments.items[*].tags[0]",
    "arguments.tags[?@ == 'prod']",
    "arguments.tags[?!@]",
    "arguments.nested.*",
    "arguments.nested.*.x",
    "arguments.paths[-1]",
    "arguments.paths[::-1]",
    "arguments.paths[1:3]",
    "arguments.paths[:-1:2]",
    "arguments.tags[]",
    "arguments.*[]",
    "[arguments.amount, arguments.price]",
    "{a: arguments.amount, p: arguments.path}",
    "arguments.nested.[x, y]",
    "arguments.nested.{x: x}",
    # built-ins, exprefs and type errors (wrong types must raise the same exception class)
    "sort_by(arguments.items, &price)[*].name",
    "max_by(arguments.items, &price).name",
    "min_by(arguments.items, &name)",
    "map(&length(@), arguments.paths)",
    "map(&name, arguments.items)",
    "length(arguments.tags)",
    "contains(arguments.tags, `1`)",
    "contains(['a', 'b'], name)",
    "starts_with(arguments.path, '/etc')",
    "keys(arguments) | sort(@)",
    "type(arguments.amount)",
    "to_number(arguments.price)",
    "not_null(arguments.missing, arguments.path, 'x')",
    "sum(arguments.tags)",
    "join(',', arguments.paths)",
    'merge(arguments.nested, `{"k": 1}`)',
    "length(@)",
    "@",
    "arguments | path",
]

_TEXT = st.sampled_from(
    [
        "",
        "x",
        "prod",
        "production",
        "Production",
        "/etc/passwd",
        ".env",
        "a/../.env",
        "keys/x.pem",
        "shell_exec",
        "run_1",
        "reviewer",
        "release-bot",
        "DROP TABLE users",
        "https://h/?token=abcdefgh",
        "AKIAABCDEFGHIJKLMNOP",
        "m",
        "c:\\windows\\x",
    ]
) | st.text(max_size=6)
_NUMBER = (
    st.sampled_from([0, 1, -1, 2, 3, 10, 11, 2500, 10000, 0.0, 1.0, 2.5, -0.5, 1e5])
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
)
_LEAF = st.none() | st.booleans() | _NUMBER | _TEXT
_KEYS = st.sampled_from(["name", "price", "tags", "x", "y", "path", "value", "k"])
_JSON = st.recursive(
    _LEAF, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=12
)
_ITEM = st.fixed_dictionaries(
    {},
    optional={
        "name": _TEXT | _LEAF,
        "price": _NUMBER | _LEAF,
        "tags": st.lists(_TEXT | _LEAF, max_size=3) | _LEAF,
    },
)
_ARGUMENTS = st.fixed_dictionaries(
    {},
    optional={
        "path": _TEXT | _LEAF,
        "paths": st.lists(_TEXT, max_size=4) | _JSON,
        "source": _TEXT | _JSON,
        "amount": _NUMBER | _LEAF,
        "price": _NUMBER | _LEAF,
        "flag": _LEAF,
        "query": _TEXT | _LEAF,
        "url": _TEXT,
        "environment": _TEXT | _LEAF,
        "command": _TEXT,
        "tags": st.lists(_LEAF, max_size=4) | _LEAF,
        "items": st.lists(_ITEM | _LEAF, max_size=4) | _LEAF,
        "nested": st.dictionaries(_KEYS, _JSON, max_size=3) | _JSON,
    },
)
CALLS = st.fixed_dictionaries(
    {"name": _TEXT, "agent": _TEXT, "arguments": _ARGUMENTS},
    optional={"result": st.fixed_dictionaries({"value": _JSON})},
)

COMPILED_RULES = [(text, jmespath.compile(text), compile_text(text, FUNCTIONS)) for text in RULE_EXPRESSIONS]


def test_rule_expressions_all_compile() -> None:
    """Every rule-like expression compiles: none of them needs the interpreter."""
    assert len(RULE_EXPRESSIONS) >= 60
    assert [text for text, _parsed, fn in COMPILED_RULES if fn is None] == []


@settings(max_examples=scaled(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call=CALLS, frozen=st.booleans())
def test_rule_expressions_match_jmespath(call: dict[str, Any], frozen: bool) -> None:
    """Random call documents x rule-like expressions: same value or same exception class."""
    document = freeze(call) if frozen else call
    for text, parsed, fn in COMPILED_RULES:
        assert fn is not None
        want = expected(parsed, document)
        got = outcome(fn, document)
        assert same_outcome(got, want), f"{text!r}: compiled {show(got)}, reference {show(want)}"


def _pack_expressions() -> list[tuple[str, Any]]:
    """Every condition and template placeholder of the shipped packs, lists already folded in."""
    found: list[tuple[str, Any]] = []
    for folder in sorted((ROOT / "policies").iterdir()):
        if not (folder / "pack.yaml").exists():
            continue
        for rule in load_pack(folder).rules:
            templates = [t for t in (rule.reason, rule.content, rule.block) if t is not None]
            expressions = [rule.when] + [p for t in templates for p in t.parts if not isinstance(p, str)]
            found.extend((f"{folder.name}/{rule.id}: {e.text}", e.parsed) for e in expressions if e is not None)
    return found


PACK_EXPRESSIONS = _pack_expressions()


def test_pack_expressions_all_compile() -> None:
    """The shipped packs' expressions (with frozen list literals) all compile."""
    assert PACK_EXPRESSIONS
    assert [label for label, parsed in PACK_EXPRESSIONS if compile_ast(parsed.parsed, FUNCTIONS) is None] == []


@cache
def _compiled_pack_expressions() -> list[Any]:
    """The pack expressions compiled once (compiling them per example was most of this test's time)."""
    compiled = [compile_ast(parsed.parsed, FUNCTIONS) for _, parsed in PACK_EXPRESSIONS]
    assert all(fn is not None for fn in compiled)
    return compiled


@settings(max_examples=scaled(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call=CALLS)
def test_pack_expressions_match_jmespath(call: dict[str, Any]) -> None:
    """The shipped packs' expressions agree with jmespath on random frozen calls."""
    document = freeze(call)
    for (label, parsed), fn in zip(PACK_EXPRESSIONS, _compiled_pack_expressions(), strict=True):
        want = expected(parsed, document)
        got = outcome(fn, document)
        assert same_outcome(got, want), f"{label}: compiled {show(got)}, reference {show(want)}"


# Random expressions from a small grammar: every node type, nested in every other, on small documents.
_ATOMS = st.sampled_from(
    [
        "a",
        "b",
        "c",
        "a.b",
        "@",
        "`1`",
        "`0`",
        "`1.0`",
        "`0.0`",
        "`2`",
        "`-1`",
        "`true`",
        "`false`",
        "`null`",
        "'x'",
        "''",
        "`[]`",
        "`{}`",
        "`[1, true, 0]`",
        '`{"a": 1}`',
        '"a"',
        "*",
        "[*]",
        "[]",
    ]
)
_UNARY = [
    "({}).a",
    "({})[0]",
    "({})[-1]",
    "({})[1:]",
    "({})[::-1]",
    "({})[:-1:2]",
    "({})[-2::-2]",
    "({})[*].a",
    "({})[*]",
    "({})[]",
    "({})[].b",
    "({}).*",
    "({}).*.a",
    "({})[?a]",
    "({})[?!b].a",
    "!({})",
    "length({})",
    "to_array({})",
    "type({})",
    "sort_by({}, &a)",
    "max_by({}, &a)",
    "min_by({}, &b)",
    "keys({})",
    "values({})",
    "sort({})",
    "max({})",
    "sum({})",
    "avg({})",
    "abs({})",
    "to_string({})",
    "to_number({})",
    "join(',', {})",
    "reverse({})",
    "floor({})",
    "({}).[a, b]",
    "({}).{{x: a}}",
]
_BINARY = [
    "({}) == ({})",
    "({}) != ({})",
    "({}) < ({})",
    "({}) <= ({})",
    "({}) > ({})",
    "({}) >= ({})",
    "({}) || ({})",
    "({}) && ({})",
    "({}) | ({})",
    "[({}), ({})]",
    "{{k: ({}), j: ({})}}",
    "({})[?({})]",
    "({})[?a == ({})].b",
    "not_null({}, {})",
    "map(&({1}), {0})",
    "contains({}, {})",
    "starts_with({}, {})",
    "merge({}, {})",
]


def _combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    unary = st.tuples(st.sampled_from(_UNARY), inner).map(lambda t: t[0].format(t[1]))
    binary = st.tuples(st.sampled_from(_BINARY), inner, inner).map(lambda t: t[0].format(t[1], t[2]))
    return unary | binary


EXPRESSIONS = st.recursive(_ATOMS, _combine, max_leaves=6)
_SMALL = st.none() | st.booleans() | st.sampled_from([0, 1, 2, -1, 0.0, 1.0, 2.5]) | st.sampled_from(["", "x", "a"])
DOCUMENTS = st.recursive(
    _SMALL,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=15,
)


@settings(
    max_examples=scaled(500), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(expression=EXPRESSIONS, document=DOCUMENTS, frozen=st.booleans())
def test_random_expressions_match_jmespath(expression: str, document: Any, frozen: bool) -> None:
    """Grammar-generated expressions: compiled and interpreted agree exactly."""
    try:
        parsed = jmespath.compile(expression)
    except JMESPathError:
        assume(False)
        return
    fn = compile_ast(parsed.parsed, FUNCTIONS)
    assert fn is not None, expression
    data = freeze(document) if frozen else document
    want = expected(parsed, data)
    got = outcome(fn, data)
    assert same_outcome(got, want), f"{expression!r} on {data!r}: compiled {show(got)}, reference {show(want)}"
    # The interpreter the engine falls back to when a node does not compile agrees too.
    fallback = outcome(search, parsed.parsed, data, OPTIONS)
    assert same_outcome(fallback, want), f"{expression!r} on {data!r}: fallback {show(fallback)}"


# --- targeted quirks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "document", "expected"),
    [
        ("a == `1`", {"a": True}, False),  # jmespath: 1 never equals true
        ("a == `0`", {"a": False}, False),
        ("a == `true`", {"a": 1}, False),
        ("a == `1`", {"a": 1.0}, True),  # numbers compare by value
        ("a == b", {"a": 1, "b": True}, False),  # the 0/1 rule holds between two fields, either way round
        ("a != b", {"a": False, "b": 0.0}, True),
        ("a == b", {"a": [1], "b": [True]}, True),  # but nested values use Python ==
        ("a < b", {"a": "a", "b": "b"}, True),  # 1.1.0 orders strings too
        ("a <= `1.5`", {"a": 1}, True),  # integers and floats order together
        ("!a", {"a": 0}, False),  # !0 is false: 0 is truthy in JMESPath
        ("!a", {"a": {}}, True),
        ("a || b", {"a": 0, "b": 1}, 0),
        ("a && b", {"a": [], "b": 1}, []),
        ("a[?b]", {"a": [{"b": 0}, {"b": ""}, {"b": []}]}, [{"b": 0}]),
        ("a[*].b", {"a": [{"b": None}, {"b": 1}, 3]}, [1]),  # projections drop nulls
        ("a[0]", {"a": "abc"}, None),  # strings are not indexable
        ("a.b", {"a": ["b"]}, None),
        ("a.*", {"a": [1]}, None),
        ("[a]", None, None),  # multi-select on null is null ...
        ("[a]", 5, [None]),  # ... but not on other non-objects
        ("a[::-2]", {"a": [1, 2, 3, 4, 5]}, [5, 3, 1]),
        ("a[]", {"a": [[1], 2, [[3]]]}, [1, 2, [3]]),
    ],
)
def test_quirks(expression: str, document: Any, expected: Any) -> None:
    """Hand-picked corner cases of the interpreter, plain and frozen."""
    fn = compile_text(expression, FUNCTIONS)
    assert fn is not None
    for data in (document, freeze(document)):
        assert json_equal(fn(data), expected)
        assert json_equal(jmespath.search(expression, data, options=OPTIONS), expected)


def test_type_errors_and_exprefs() -> None:
    """Function errors come from call_function; exprefs are jmespath _Expression objects."""
    data = freeze({"items": [{"n": 2}, {"n": "x"}], "s": 1})
    for expression in ("lower(s)", "sort_by(items, &n)", "length(@, @)", "nope(s)", "`[1]`[::0]", "a < `1`"):
        fn = compile_text(expression, FUNCTIONS)
        assert fn is not None
        want = expected(jmespath.compile(expression), data)
        got = outcome(fn, data)
        assert got[0] == "raise" and same_outcome(got, want), expression
    fn = compile_text("[&n][0]", FUNCTIONS)
    assert fn is not None
    assert type(fn(data)).__name__ == "_Expression"
    expref = fn(data)
    assert expref.visit(expref.expression, {"n": 3}) == 3
    # A function visiting some other node through the expref gets a real interpreter.
    assert expref.visit({"type": "field", "children": [], "value": "m"}, {"m": 4}) == 4


def test_literals_and_unsupported_nodes() -> None:
    """Literals are returned as stored (frozen lists stay frozen); unknown nodes fall back."""
    frozen_list = freeze(["a", "b"])
    fn = compile_ast({"type": "literal", "children": [], "value": frozen_list}, FUNCTIONS)
    assert fn is not None and fn(None) is frozen_list and isinstance(fn(None), FrozenList)
    assert compile_ast({"type": "let", "children": []}, FUNCTIONS) is None
    assert compile_ast({"type": "subexpression", "children": [{"type": "field"}]}, FUNCTIONS) is None
    assert (
        compile_ast({"type": "comparator", "value": "spaceship", "children": [{"type": "current"}] * 2}, BUILTINS)
        is None
    )
    multi = compile_text("{a: a}", FUNCTIONS)
    assert multi is not None and type(multi(freeze({"a": 1}))) is dict and not isinstance(multi({}), FrozenDict)


# --- ordering comparisons: two numbers or two strings, anything else raises -------------------------


def _json_type(x: Any) -> str:
    """JMESPath's name for the type of a JSON value."""
    return {"integer": "number", "float": "number"}.get(_kind(x), _kind(x))


# Values of every JSON type, with the ones Python would order (booleans as ints, lists) among them.
_ORDER_VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0, 1, -1, 0.0, 1.0, 10000, 9999.5, "", "a", "b", "10", "abc", True, False])
    | st.text(max_size=4)
    | st.lists(st.integers() | st.booleans() | st.text(max_size=2), max_size=2)
    | st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2)
)
# Each shape goes through a different closure: literal on the right (one per operator for a
# number, another for a string, another for a literal never ordered), on the left, two fields, a filter.
_ORDER_SHAPES = ["a {op} `{lit}`", "`{lit}` {op} a", "a {op} b", "[a][?@ {op} `{lit}`] | [0]"]


def _order_case(shape: str, op: str, x: Any, y: Any) -> tuple[str, Any, Outcome]:
    """The expression for `shape`, its document, and the outcome the ordering rule demands."""
    text = shape.format(op=_SYMBOLS[op], lit=json.dumps(y).replace("`", "\\`"))
    # With the literal first, it is the left operand.
    want = reference_order(op, y, x) if shape.startswith("`") else reference_order(op, x, y)
    if shape.startswith("[a]") and want[0] == "ok":
        want = ("ok", x if want[1] else None)
    return text, {"a": x, "b": y}, want


@settings(max_examples=scaled(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    x=_ORDER_VALUES,
    y=_ORDER_VALUES,
    op=st.sampled_from(sorted(_ORDER_OPS)),
    shape=st.sampled_from(_ORDER_SHAPES),
    frozen=st.booleans(),
)
def test_ordering_compiles_to_the_reference_rule_on_random_values(
    x: Any, y: Any, op: str, shape: str, frozen: bool
) -> None:
    """Every ordering fast path compares two numbers or two strings and raises on any other pair."""
    text, document, want = _order_case(shape, op, x, y)
    data = freeze(document) if frozen else document
    fn = compile_text(text, FUNCTIONS)
    assert fn is not None, text
    for label, run in (("compiled", fn), ("fallback", lambda d: search(jmespath.compile(text).parsed, d, OPTIONS))):
        got = outcome(run, data)
        assert same_outcome(got, want), f"{text!r} on {data!r}: {label} {show(got)}, the rule says {show(want)}"


@pytest.mark.parametrize(
    ("expression", "document", "message"),
    [
        ("amount >= `10000`", {"amount": [50000]}, "`>=` needs two numbers or two strings, got array and number"),
        ("amount >= `10000`", {}, "`>=` needs two numbers or two strings, got null and number"),
        ("amount > `1`", {"amount": True}, "`>` needs two numbers or two strings, got boolean and number"),
        ("amount < `1.5`", {"amount": "1"}, "`<` needs two numbers or two strings, got string and number"),
        ("name <= 'm'", {"name": 5}, "`<=` needs two numbers or two strings, got number and string"),
        ("`1` < amount", {"amount": {}}, "`<` needs two numbers or two strings, got number and object"),
        ("a > b", {"a": False, "b": True}, "`>` needs two numbers or two strings, got boolean and boolean"),
        ("a < `null`", {"a": 1}, "`<` needs two numbers or two strings, got number and null"),
    ],
)
def test_ordering_error_names_the_operator_and_both_types(expression: str, document: Any, message: str) -> None:
    """The error says which comparison failed and why, for the compiled code and the fallback alike."""
    fn = compile_text(expression, FUNCTIONS)
    assert fn is not None
    for data in (document, freeze(document)):
        for run in (fn, lambda d: search(jmespath.compile(expression).parsed, d, OPTIONS)):
            with pytest.raises(OrderingError) as caught:
                run(data)
            assert str(caught.value) == f"ordering comparison {message}"
            assert isinstance(caught.value, JMESPathError)  # the engine's fail-closed path catches it as one


def test_ordering_fast_paths_keep_python_numbers_exact() -> None:
    """Huge integers, floats at the limits and mixed int/float compare as Python compares them."""
    cases = [(10**30, 1e30, "gte"), (2**63, 2**63 - 1, "gt"), (1, 1.0, "lte"), (-0.0, 0, "gte"), (1e308, 1.7e308, "lt")]
    for x, y, op in cases:
        for text in (f"a {_SYMBOLS[op]} b", f"a {_SYMBOLS[op]} `{json.dumps(y)}`"):
            fn = compile_text(text, FUNCTIONS)
            assert fn is not None
            want = _ORDER_OPS[op](x, y)
            assert fn({"a": x, "b": y}) is want, text


def test_equality_still_compares_any_two_values() -> None:
    """Only ordering changed: == and != between values of different types are false and true, never errors."""
    for expression, document, result in [
        ("a == `10000`", {"a": [10000]}, False),
        ("a != `10000`", {}, True),
        ("a == b", {"a": True, "b": 1}, False),
        ("a != 'x'", {"a": None}, True),
    ]:
        fn = compile_text(expression, FUNCTIONS)
        assert fn is not None and fn(freeze(document)) is result
        assert jmespath.search(expression, document, options=OPTIONS) is result
