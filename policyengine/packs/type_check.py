"""Type checking of rule conditions and templates against a tool catalog, before anything runs.

An abstract interpreter over the JMESPath AST computes, for each sub-expression, the set of JSON
values it can take (a `JType`) when the call document is typed by the catalog: `arguments` by the
tool's parameters (Cerberus dialect), `name`, `agent`, `call_id` as strings, `cwd` and `roles` as
optional, `result` only in post-execute. It reports only what is certain: a type that may be
anything (`any`) never gives a finding, and a rule that selects several tools is reported only when
the fault holds for every one of them.
"""

from __future__ import annotations

import difflib
import gc
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from jmespath.parser import Parser

from policyengine.arguments.roles import Role, key_roles, role_named
from policyengine.language.expressions import Expression, Template, placeholder_end
from policyengine.language.functions import PolicyFunctions
from policyengine.language.tool_names import fold_tool_name, tool_matches
from policyengine.packs.yaml_source import NodeSite, ScalarSpan, SourceDoc
from policyengine.values.problems import Location, Problem, Severity, register_code
from policyengine.values.results import Stage

if TYPE_CHECKING:
    from policyengine.packs.loader import Pack
    from policyengine.packs.rules import Rule
    from policyengine.tools.definition import ToolDefinition

__all__ = [
    "PE601",
    "PE602",
    "PE603",
    "PE604",
    "PE605",
    "PE606",
    "PE607",
    "Analysis",
    "JType",
    "check_types",
    "document_type",
    "fields_type",
    "schema_type",
    "union",
]

PE601 = register_code("PE601", "argument path the tool does not have")
PE602 = register_code("PE602", "comparison of incompatible types")
PE603 = register_code("PE603", "function, filter or projection applied to the wrong type")
PE604 = register_code("PE604", "condition always false, null or true given the types")
PE605 = register_code("PE605", "template names an argument the tool does not have")
PE606 = register_code("PE606", "tools entry matches no tool of the catalog")
PE607 = register_code("PE607", "internal error of the type check (please report)")

# -- the lattice -------------------------------------------------------------------------------

NULL, BOOLEAN, NUMBER, STRING, ARRAY, OBJECT, EXPREF, ANY = (
    "null",
    "boolean",
    "number",
    "string",
    "array",
    "object",
    "expref",
    "any",
)
_ORDER = (STRING, NUMBER, BOOLEAN, ARRAY, OBJECT, NULL, EXPREF)


@dataclass(frozen=True, slots=True, eq=False)
class JType:
    """A set of JSON values: its kinds, with the element type of its arrays and the fields of its objects."""

    kinds: frozenset[str]
    item: JType | None = None  # arrays: the type of every element
    fields: tuple[tuple[str, JType], ...] = ()  # objects: the declared keys
    # Objects: the type of a key not in `fields` when present; None when no other key can be present.
    rest: JType | None = None
    const: str | None = None  # strings: the only string value (the tool's name in a rule for one tool)

    @property
    def known(self) -> bool:
        """True when the type says something: not `any`, and not empty (unreachable)."""
        return bool(self.kinds) and ANY not in self.kinds

    def member(self, name: str) -> JType | None:
        """The declared type of key `name`, or None when the object does not declare it."""
        for key, value in self.fields:
            if key == name:
                return value
        return None

    def __repr__(self) -> str:
        return f"JType({describe(self)})"


def _kinds(*names: str) -> frozenset[str]:
    return frozenset(names)


ANY_T = JType(_kinds(ANY))
EMPTY_T = JType(frozenset())
NULL_T = JType(_kinds(NULL))
BOOL_T = JType(_kinds(BOOLEAN))
NUM_T = JType(_kinds(NUMBER))
STR_T = JType(_kinds(STRING))
REF_T = JType(_kinds(EXPREF))


def array_of(item: JType) -> JType:
    """Arrays whose elements are of type `item`."""
    return JType(_kinds(ARRAY), item=item)


def object_of(fields: Mapping[str, JType], rest: JType | None = None) -> JType:
    """Objects with these keys; other keys have type `rest` (None: no other key)."""
    return JType(_kinds(OBJECT), fields=tuple(fields.items()), rest=rest)


OPEN_OBJECT = object_of({}, ANY_T)


def _absent(rest: JType | None) -> JType:
    """The type of a key an object does not declare: null, or `rest` when other keys may be there."""
    return NULL_T if rest is None else union(rest, NULL_T)


def union(a: JType, b: JType) -> JType:
    """The smallest type holding every value of a and of b."""
    if a is b or not b.kinds:
        return a
    if not a.kinds:
        return b
    if ANY in a.kinds or ANY in b.kinds:
        return ANY_T
    item = a.item if b.item is None else b.item if a.item is None else union(a.item, b.item)
    fields, rest = a.fields, a.rest
    if OBJECT in a.kinds and OBJECT in b.kinds:
        mine, theirs = dict(a.fields), dict(b.fields)
        keys = list(mine) + [k for k in theirs if k not in mine]
        fields = tuple((k, union(mine.get(k) or _absent(a.rest), theirs.get(k) or _absent(b.rest))) for k in keys)
        rest = None if a.rest is None and b.rest is None else union(a.rest or NULL_T, b.rest or NULL_T)
    elif OBJECT in b.kinds:
        fields, rest = b.fields, b.rest
    if STRING in a.kinds and STRING in b.kinds:
        const = a.const if a.const == b.const else None
    else:
        const = a.const if STRING in a.kinds else b.const
    return JType(a.kinds | b.kinds, item, fields, rest, const)


def _restrict(t: JType, kinds: frozenset[str]) -> JType:
    """t with only the given kinds (their structure kept)."""
    if kinds == t.kinds:
        return t
    return JType(
        kinds,
        t.item if ARRAY in kinds else None,
        t.fields if OBJECT in kinds else (),
        t.rest if OBJECT in kinds else None,
        t.const if STRING in kinds else None,
    )


_OF_KIND = {
    NULL: NULL_T,
    BOOLEAN: BOOL_T,
    NUMBER: NUM_T,
    STRING: STR_T,
    ARRAY: array_of(ANY_T),
    OBJECT: OPEN_OBJECT,
    EXPREF: REF_T,
}


def keep(t: JType, kinds: frozenset[str]) -> JType:
    """The values of t of these kinds (of `any`: any value of these kinds)."""
    if ANY in t.kinds:
        out = EMPTY_T
        for kind in kinds:
            out = union(out, _OF_KIND[kind])
        return out
    return _restrict(t, t.kinds & kinds)


def drop(t: JType, kinds: frozenset[str]) -> JType:
    """The values of t not of these kinds (`any` stays `any`)."""
    if ANY in t.kinds or not t.kinds & kinds:
        return t
    return _restrict(t, t.kinds - kinds)


def meet(a: JType, b: JType) -> JType:
    """The values in both a and b, as far as kinds tell (the structure is a's)."""
    if not b.known:
        return a if b.kinds else b
    return keep(a, b.kinds)


def value_type(value: Any, depth: int = 0) -> JType:
    """The type of a literal value (folded named lists included)."""
    if value is None:
        return NULL_T
    if isinstance(value, bool):
        return BOOL_T
    if isinstance(value, int | float):
        return NUM_T
    if isinstance(value, str):
        return STR_T
    if depth > 32:
        return ANY_T
    if isinstance(value, list | tuple):
        item = EMPTY_T
        for element in value:
            item = union(item, value_type(element, depth + 1))
        return array_of(item)
    if isinstance(value, Mapping):
        return object_of({str(k): value_type(v, depth + 1) for k, v in value.items()})
    return ANY_T


def describe(t: JType) -> str:
    """`a string`, `a number or null`, `an array of strings`...: the type in words, for messages."""
    if ANY in t.kinds:
        return "any value"
    if not t.kinds:
        return "nothing"
    parts = []
    for kind in _ORDER:
        if kind not in t.kinds:
            continue
        if kind == ARRAY and t.item is not None and t.item.known and len(t.item.kinds) == 1:
            parts.append(f"an array of {_plural(next(iter(t.item.kinds)))}")
        elif kind == NULL:
            parts.append("null")
        else:
            parts.append(("an " if kind[0] in "aeiou" else "a ") + kind + (" reference" if kind == EXPREF else ""))
    return " or ".join(parts)


def _plural(kind: str) -> str:
    return {NULL: "nulls", EXPREF: "expression references"}.get(kind, f"{kind}s")


# -- Cerberus parameters -> types ----------------------------------------------------------------

_SCALARS = {"string": STR_T, "integer": NUM_T, "float": NUM_T, "number": NUM_T, "boolean": BOOL_T}
_MAX_DEPTH = 40
# Rules that may change a value's type or a key's name during normalisation: their field is `any`.
_RESHAPING = ("coerce", "rename", "rename_handler")


def schema_type(rules: Any, closed: bool = True, depth: int = 0) -> JType:
    """The type of the values one Cerberus rule set accepts (after validation); `any` where unsure.

    With closed=False every object may hold keys its schema does not declare (a rule that selects
    tools by glob or tag cannot know which keys the tools it meets have).
    """
    if not isinstance(rules, Mapping) or depth > _MAX_DEPTH or any(k in rules for k in _RESHAPING):
        return ANY_T
    options = rules.get("anyof", rules.get("oneof"))
    if options is not None:
        if not isinstance(options, list | tuple) or not options or not all(isinstance(o, Mapping) for o in options):
            return ANY_T
        base = {k: v for k, v in rules.items() if k not in ("anyof", "oneof")}
        out = EMPTY_T
        for option in options:
            out = union(out, schema_type({**base, **option}, closed, depth + 1))
        return out
    names = rules.get("anyof_type", rules.get("oneof_type", rules.get("type")))
    if any(k.startswith(("anyof_", "oneof_")) and k not in ("anyof_type", "oneof_type") for k in map(str, rules)):
        return ANY_T  # *of-rules over schemas: not worth modelling
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list | tuple) or not names:
        return ANY_T
    out = NULL_T if rules.get("nullable") else EMPTY_T
    for name in names:
        if name in _SCALARS:
            out = union(out, _SCALARS[name])
        elif name == "list":
            out = union(out, array_of(_items_type(rules, closed, depth)))
        elif name == "dict":
            out = union(out, _dict_type(rules, closed, depth))
        else:  # date, datetime, set, binary, a custom type: not JSON we can name
            return ANY_T
    return out


def _items_type(rules: Mapping[str, Any], closed: bool, depth: int) -> JType:
    items, inner = rules.get("items"), rules.get("schema")
    if isinstance(items, list | tuple) and items:
        out = EMPTY_T
        for rule in items:
            out = union(out, schema_type(rule, closed, depth + 1))
        return out
    return schema_type(inner, closed, depth + 1) if isinstance(inner, Mapping) else ANY_T


def _dict_type(rules: Mapping[str, Any], closed: bool, depth: int) -> JType:
    inner = rules.get("schema")
    if not isinstance(inner, Mapping):
        values = rules.get("valuesrules")
        return object_of({}, schema_type(values, closed, depth + 1) if isinstance(values, Mapping) else ANY_T)
    return fields_type(inner, closed, rules.get("allow_unknown", False), depth + 1)


def fields_type(schema: Mapping[str, Any], closed: bool = True, allow_unknown: Any = False, depth: int = 0) -> JType:
    """The object a Cerberus document schema describes: a key that is not required may be missing (null)."""
    fields: dict[str, JType] = {}
    rest: JType | None = None
    if not closed or allow_unknown is True:
        rest = ANY_T
    elif isinstance(allow_unknown, Mapping):
        rest = schema_type(allow_unknown, closed, depth + 1)
    for key, rules in schema.items():
        kind = schema_type(rules, closed, depth + 1)
        if not (isinstance(rules, Mapping) and rules.get("required")):
            kind = union(kind, NULL_T)
        if isinstance(rules, Mapping) and any(k in rules for k in _RESHAPING):
            rest = ANY_T  # a renamed key lands under a name the schema does not declare
        fields[str(key)] = kind
    return object_of(fields, rest)


def document_type(definition: ToolDefinition | None, *, post: bool, exact: bool) -> JType:
    """The call document rules read for one tool (`values/call.py`), `result` in post-execute only."""
    name = STR_T
    if definition is not None and exact:
        name = JType(_kinds(STRING), const=definition.name)
    arguments = OPEN_OBJECT if definition is None else fields_type(definition.parameters, closed=exact)
    fields = {
        "name": name,
        "arguments": arguments,
        "agent": STR_T,
        "call_id": STR_T,
        "cwd": union(STR_T, NULL_T),
        "roles": union(object_of({}, STR_T), NULL_T),
    }
    if post:
        fields["result"] = object_of({"value": ANY_T, "content": ANY_T})
    fields["session"] = SESSION_T
    return object_of(fields)


# The session document (values/session.py, docs/sessions.md): never null (a call with no session id reads an empty one).
_CALL_T = object_of(
    {
        "call_id": STR_T,
        "name": STR_T,
        "tags": array_of(STR_T),
        "decision": STR_T,
        "labels": array_of(STR_T),
        "amount": NUM_T,
        "time": NUM_T,
    }
)
SESSION_T = object_of(
    {
        "id": STR_T,
        "now": NUM_T,
        "labels": object_of({}, object_of({"call_id": STR_T, "rule": STR_T, "time": NUM_T})),
        "calls": array_of(_CALL_T),
        "earlier": array_of(
            object_of(
                {
                    "minute": NUM_T,
                    "name": STR_T,
                    "tags": array_of(STR_T),
                    "decision": STR_T,
                    "count": NUM_T,
                    "amount": NUM_T,
                }
            )
        ),
        "secrets": array_of(STR_T),
        "overflowed": BOOL_T,
        "key": STR_T,
    }
)


# -- functions ---------------------------------------------------------------------------------

# What each function returns (docs/functions.md, jmespath's built-ins); the rest is computed below.
_RETURNS: dict[str, JType] = {
    **dict.fromkeys(["abs", "ceil", "floor", "sum", "length", "product"], NUM_T),
    "avg": union(NUM_T, NULL_T),
    "to_number": union(NUM_T, NULL_T),
    **dict.fromkeys(
        [
            "contains",
            "starts_with",
            "ends_with",
            "glob_match",
            "regex_match",
            "path_within",
            "path_surely_within",
            "path_matches",
            "path_surely_matches",
            "path_unknown",
            "path_escapes",
            "contains_any",
            "is_string",
            "tool_matches",
        ],
        BOOL_T,
    ),
    **dict.fromkeys(["join", "to_string", "type", "lower", "upper", "normalize_path", "regex_replace"], STR_T),
    **dict.fromkeys(
        (
            "keys",
            "paths",
            "paths_outside_cwd",
            "written",
            "swept",
            "cache_folders",
            "urls",
            "commands",
            "programs",
            "invocations",
            "emails",
            "secrets",
            "strings",
            "tool_words",
            "address_values",
        ),
        array_of(STR_T),
    ),
    "amounts": array_of(ANY_T),
    "merge": OPEN_OBJECT,
    "session_count": NUM_T,
    "session_sum": NUM_T,
    "session_secrets": array_of(STR_T),
}
_TABLE: Mapping[str, Mapping[str, Any]] = PolicyFunctions.FUNCTION_TABLE
# Functions that apply an &expression to each element of an array: (array argument, expref argument).
_EXPREF_FUNCTIONS = {"map": (1, 0), "sort_by": (0, 1), "max_by": (0, 1), "min_by": (0, 1)}
_TYPE_NAMES = {"string": STRING, "number": NUMBER, "boolean": BOOLEAN, "array": ARRAY, "object": OBJECT, "null": NULL}


def _fits(t: JType, allowed: Sequence[str]) -> bool:
    """False only when no value of t can pass a jmespath signature entry allowing `allowed`."""
    if not allowed or not t.known:
        return True
    for kind in t.kinds:
        if kind == ARRAY:
            item = t.item
            if "array" in allowed or item is None or not item.known:
                return True
            if ("array-string" in allowed and STRING in item.kinds) or (
                "array-number" in allowed and NUMBER in item.kinds
            ):
                return True
        elif kind in allowed:
            return True
    return False


def _wanted(allowed: Sequence[str]) -> str:
    words = {
        "array-string": "an array of strings",
        "array-number": "an array of numbers",
        "expref": "an &expression",
        "array": "an array",
        "object": "an object",
    }
    return " or ".join(words.get(a, f"a {a}") for a in allowed)


def _return_type(name: str, args: Sequence[JType]) -> JType:
    """What `name(args...)` returns, as precisely as the argument types tell."""
    fixed = _RETURNS.get(name)
    if fixed is not None:
        return fixed
    first = args[0] if args else ANY_T
    if name == "not_null":
        out = EMPTY_T
        for arg in args:
            out = union(out, arg)
        return out if out.kinds else NULL_T
    if not first.known:
        return ANY_T
    if name in ("reverse", "sort"):
        return keep(first, _kinds(ARRAY, STRING))
    if name in ("max", "min"):
        return union(first.item or ANY_T, NULL_T)
    if name == "to_array":
        rest = drop(first, _kinds(ARRAY))
        return union(keep(first, _kinds(ARRAY)), array_of(rest) if rest.kinds else EMPTY_T)
    if name == "values":
        out = first.rest or EMPTY_T
        for _key, value in first.fields:
            out = union(out, value)
        return array_of(out)
    return ANY_T


# -- the interpreter ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """One fault in one expression for one tool: what, where (a child path in the AST), how to fix it."""

    code: str  # PE601-PE604; PE601 becomes PE605 in a template
    path: tuple[int, ...]
    message: str
    hint: str
    operator: bool = False  # point at the node's operator or brackets, not the whole node


@dataclass(frozen=True, slots=True)
class _Scope:
    """Where an expression is evaluated: the origin of the current node, what conditions narrowed."""

    origin: str | None  # the document path of the current node ("" for the document), None when unknown
    narrowed: Mapping[str, JType] = field(default_factory=dict)
    silent: bool = False  # unreachable code: nothing found there is reported
    element: bool = False  # the current node is each element of a projection


def _join(origin: str | None, name: str) -> str | None:
    if origin is None:
        return None
    return name if origin == "" else f"{origin}.{name}"


_SYMBOLS = {"eq": "==", "ne": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
_ORDERING = frozenset({"lt", "lte", "gt", "gte"})
_PATHS = frozenset({"field", "subexpression", "current", "identity", "index_expression"})
_NUMBER_TEXT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _is_null(node: Any) -> bool:
    """The null literal: `` `null` ``, or a bare `null` (a field no document has)."""
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    return (kind == "literal" and node.get("value") is None) or (kind == "field" and node.get("value") == "null")


def _literal_text(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "`" + json.dumps(value, ensure_ascii=False) + "`"


class Analysis:
    """Types one expression over one document type and collects what is certainly wrong in it."""

    def __init__(self, tool: ToolDefinition | None, *, condition: bool, post: bool) -> None:
        self.tool, self.condition, self.post = tool, condition, post
        self.findings: dict[tuple[str, tuple[int, ...]], Finding] = {}

    def run(self, expression: Expression, document: JType) -> dict[tuple[str, tuple[int, ...]], Finding]:
        """Every finding of the expression, keyed by (code, node path)."""
        root = expression.parsed.parsed
        result, _ = self.eval(root, document, _Scope(""), ())
        if self.condition and not self.findings and result.known:
            if result.kinds == {NULL}:
                self.add(
                    _Scope(""),
                    Finding(
                        PE604,
                        (),
                        "the condition is always null: the rule never applies",
                        "check the paths it reads against the tool's parameters",
                    ),
                )
            elif result.kinds <= {NUMBER}:
                self.add(
                    _Scope(""),
                    Finding(
                        PE604,
                        (),
                        "the condition is always a number, and every number is true in JMESPath (even 0): "
                        "the rule applies to every call",
                        "compare it, e.g. `... > `0``",
                    ),
                )
        return self.findings

    def add(self, scope: _Scope, finding: Finding) -> None:
        """Record a finding unless the code is unreachable."""
        if not scope.silent:
            self.findings.setdefault((finding.code, finding.path), finding)

    def quiet(self, node: Any, cur: JType, scope: _Scope) -> tuple[JType, str | None]:
        """The type of a node without reporting (for narrowing, which evaluates it a second time)."""
        return self.eval(node, cur, replace(scope, silent=True), ())

    def eval(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        """(type, origin) of `node` evaluated on a current node of type `cur`."""
        if not isinstance(node, dict):
            return ANY_T, None
        method = getattr(self, "_" + str(node.get("type")), None)
        if method is None:
            return ANY_T, None
        kind, origin = method(node, cur, scope, path)
        if scope.narrowed and origin is not None:
            narrowed = scope.narrowed.get(origin)
            if narrowed is not None:
                kind = narrowed
        return kind, origin

    # paths

    def _current(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        return cur, scope.origin

    _identity = _current

    def _literal(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        return value_type(node.get("value")), None

    def _field(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        name = str(node.get("value"))
        if name == "null":
            # A bare `null` is a field name in JMESPath, not the literal; no document has that key, so it is
            # null, and `x != null` (as docs/rules.md writes it) works as meant.
            return NULL_T, None
        origin = _join(scope.origin, name)
        if not cur.known:
            return ANY_T, origin
        found, possible = EMPTY_T, False
        if OBJECT in cur.kinds:
            declared = cur.member(name)
            if declared is not None:
                found, possible = declared, True
            elif cur.rest is not None:
                found, possible = union(cur.rest, NULL_T), True
        if cur.kinds - {OBJECT}:
            found = union(found, NULL_T)  # a field of anything else is null
        if not possible and cur.kinds - {NULL} and scope.origin is not None:
            self._missing(cur, scope.origin, name, scope, path)
            return ANY_T, None  # reported once; what follows from it would repeat the same fault
        return (found if found.kinds else NULL_T), origin

    def _missing(self, base: JType, origin: str, name: str, scope: _Scope, path: tuple[int, ...]) -> None:
        where = _join(origin, name)
        if OBJECT not in base.kinds:
            message = f"{origin or 'the call document'} is {describe(base)}, so {where} is always null"
            hint = f"read {origin} itself, or check the type the tool declares"
        elif origin == "":
            if name == "result" and not self.post:
                message = "`result` is in the call document only in post-execute rules: here it is always null"
                hint = "move the rule to stage: post-execute, or read arguments instead"
            else:
                keys = [k for k, _ in base.fields]
                message = f"the call document has no field {name!r}: {where} is always null"
                hint = _suggest(name, keys, f"the call document holds {', '.join(keys)}", lambda k: k)
        elif origin == "arguments" and self.tool is not None:
            keys = [k for k, _ in base.fields]
            message = f"tool {self.tool.name!r} has no parameter {name!r}: {where} is always null"
            hint = _suggest(
                name,
                keys,
                f"{self.tool.name} takes {', '.join(keys) or 'no parameters'}",
                lambda k: f"arguments.{k}",
                self.tool,
            )
        else:
            keys = [k for k, _ in base.fields]
            message = f"{origin} has no field {name!r}: {where} is always null"
            hint = _suggest(name, keys, f"its fields are {', '.join(keys) or 'none'}", lambda k: f"{origin}.{k}")
        if name in ("true", "false"):
            hint = f"write `{name}` (in backticks) for the JSON boolean: a bare {name} is a field name, read as null"
        if self.condition:
            message += ", so the rule can never test it"
        else:
            message += ", and the template shows null there"
        self.add(scope, Finding(PE601, path, message, hint))

    def _subexpression(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        kind, origin = cur, scope.origin
        for i, child in enumerate(node.get("children") or ()):
            step = scope if i == 0 else replace(scope, origin=origin, element=False)
            kind, origin = self.eval(child, kind, step, (*path, i))
        return kind, origin

    def _index_expression(
        self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]
    ) -> tuple[JType, str | None]:
        children = node.get("children") or ()
        if not children:
            return ANY_T, None
        kind, origin = self.eval(children[0], cur, scope, (*path, 0))
        for child in children[1:]:
            if not isinstance(child, dict) or not kind.known:
                return ANY_T, None
            what = "[N] indexes" if child.get("type") == "index" else "a slice [a:b] cuts"
            if self._not_a(kind, ARRAY, origin, f"{what} arrays", scope, path, operator=False):
                return ANY_T, None
            element = kind.item or ANY_T
            maybe_null = bool(kind.kinds - {ARRAY})
            if child.get("type") == "index":
                kind, origin = union(element, NULL_T), (None if origin is None else f"{origin}[{child.get('value')}]")
            else:
                kind, origin = array_of(element), None
            if maybe_null:
                kind = union(kind, NULL_T)
        return kind, origin

    def _not_a(
        self,
        base: JType,
        kind: str,
        origin: str | None,
        what: str,
        scope: _Scope,
        path: tuple[int, ...],
        *,
        operator: bool = True,
        each: bool = False,
    ) -> bool:
        """Report (and return True) when `base` certainly holds no `kind` (null alone is left alone)."""
        if not base.known or kind in base.kinds or not base.kinds - {NULL}:
            return False
        subject = origin or "the value"
        if each:
            subject = "each element of the projection before it" + (f" ({origin})" if origin else "")
        message = f"{what}, but {subject} is {describe(base)}: the result is always null"
        if self.condition:
            message += ", so the rule cannot match through it"
        self.add(
            scope,
            Finding(PE603, path, message, f"apply it to {_OF_KIND_WORDS[kind]}, or check the tool's types", operator),
        )
        return True

    # projections

    def _element_scope(self, scope: _Scope, origin: str | None, silent: bool) -> _Scope:
        return _Scope(None if origin is None else f"{origin}[]", {}, scope.silent or silent, True)

    def _projection(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        left, right = (node.get("children") or [None, None])[:2]
        over = self._over_array(left, cur, scope, path, "a projection [*] applies to arrays")
        if over is None:
            return ANY_T, None
        base, element, inner = over
        body, _ = self.eval(right, element, inner, (*path, 1))
        return self._collected(base, body), None

    def _over_array(
        self, left: Any, cur: JType, scope: _Scope, path: tuple[int, ...], message: str
    ) -> tuple[JType, JType, _Scope] | None:
        """What `left` gives, its element type and scope; None (reported) when it is surely no array."""
        base, origin = self.eval(left, cur, scope, (*path, 0))
        plain = isinstance(left, dict) and left.get("type") in ("identity", "current")
        if self._not_a(base, ARRAY, origin, message, scope, path, each=plain and scope.element):
            return None
        element = (base.item or ANY_T) if base.known else ANY_T
        return base, element, self._element_scope(scope, origin, silent=not element.kinds)

    def _collected(self, base: JType, body: JType) -> JType:
        """What a projection over `base` returns: the non-null results, or null when base is no array."""
        out = array_of(drop(body, _kinds(NULL)))
        if not base.known or base.kinds - {ARRAY}:
            out = union(out, NULL_T)
        return out

    def _value_projection(
        self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]
    ) -> tuple[JType, str | None]:
        left, right = (node.get("children") or [None, None])[:2]
        base, origin = self.eval(left, cur, scope, (*path, 0))
        if self._not_a(base, OBJECT, origin, "`*` projects the values of an object", scope, path):
            return ANY_T, None
        element = ANY_T
        if base.known:
            element = base.rest or EMPTY_T
            for _key, value in base.fields:
                element = union(element, value)
        body, _ = self.eval(right, element, _Scope(None, {}, scope.silent or not element.kinds, True), (*path, 1))
        out = array_of(drop(body, _kinds(NULL)))
        return (union(out, NULL_T) if not base.known or base.kinds - {OBJECT} else out), None

    def _filter_projection(
        self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]
    ) -> tuple[JType, str | None]:
        children = node.get("children") or []
        if len(children) != 3:
            return ANY_T, None
        left, right, condition = children
        over = self._over_array(left, cur, scope, path, "a filter [?...] applies to arrays")
        if over is None:
            return ANY_T, None
        base, element, inner = over
        self.eval(condition, element, inner, (*path, 2))
        narrowed = self.narrow(condition, True, element, inner)
        body, _ = self.eval(right, element, self._narrowed(inner, narrowed), (*path, 1))
        return self._collected(base, body), None

    def _flatten(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        over = self._over_array((node.get("children") or [None])[0], cur, scope, path, "[] flattens arrays")
        if over is None:
            return ANY_T, None
        base = over[0]
        if not base.known:
            return union(array_of(ANY_T), NULL_T), None
        element = base.item or ANY_T
        flat = ANY_T
        if element.known:
            flat = drop(element, _kinds(ARRAY))
            if ARRAY in element.kinds:
                flat = union(flat, element.item or ANY_T)
        out = array_of(flat)
        return (union(out, NULL_T) if base.kinds - {ARRAY} else out), None

    def _multi_select_list(
        self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]
    ) -> tuple[JType, str | None]:
        item = EMPTY_T
        for i, child in enumerate(node.get("children") or ()):
            kind, _ = self.eval(child, cur, replace(scope, element=False), (*path, i))
            item = union(item, kind)
        out = array_of(item)
        return (union(out, NULL_T) if not cur.known or NULL in cur.kinds else out), None

    def _multi_select_dict(
        self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]
    ) -> tuple[JType, str | None]:
        fields: dict[str, JType] = {}
        for i, pair in enumerate(node.get("children") or ()):
            if not isinstance(pair, dict):
                return ANY_T, None
            value = (pair.get("children") or [None])[0]
            fields[str(pair.get("value"))], _ = self.eval(value, cur, replace(scope, element=False), (*path, i, 0))
        out = object_of(fields)
        return (union(out, NULL_T) if not cur.known or NULL in cur.kinds else out), None

    def _pipe(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        left, right = (node.get("children") or [None, None])[:2]
        kind, origin = self.eval(left, cur, scope, (*path, 0))
        return self.eval(right, kind, replace(scope, origin=origin, element=False), (*path, 1))

    # logic

    def _narrowed(self, scope: _Scope, narrowed: Mapping[str, JType]) -> _Scope:
        if not narrowed:
            return scope
        silent = scope.silent or any(not t.kinds for t in narrowed.values())
        return replace(scope, narrowed={**scope.narrowed, **narrowed}, silent=silent)

    def _and_expression(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        left, right = (node.get("children") or [None, None])[:2]
        a, _ = self.eval(left, cur, scope, (*path, 0))
        b, _ = self.eval(right, cur, self._narrowed(scope, self.narrow(left, True, cur, scope)), (*path, 1))
        return union(a, b), None

    def _or_expression(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        left, right = (node.get("children") or [None, None])[:2]
        a, _ = self.eval(left, cur, scope, (*path, 0))
        b, _ = self.eval(right, cur, self._narrowed(scope, self.narrow(left, False, cur, scope)), (*path, 1))
        return union(a, b), None

    def _not_expression(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        self.eval((node.get("children") or [None])[0], cur, scope, (*path, 0))
        return BOOL_T, None

    def narrow(self, node: Any, truthy: bool, cur: JType, scope: _Scope) -> dict[str, JType]:
        """What `node` being truthy (or falsy) tells about the paths it tests: {origin: narrowed type}."""
        if not isinstance(node, dict):
            return {}
        kind = node.get("type")
        children = node.get("children") or []
        if kind == "not_expression" and children:
            return self.narrow(children[0], not truthy, cur, scope)
        if (kind == "and_expression" and truthy) or (kind == "or_expression" and not truthy):
            first = self.narrow(children[0], truthy, cur, scope)
            second = self.narrow(children[1], truthy, cur, self._narrowed(scope, first))
            out = dict(first)
            for key, narrowed in second.items():
                out[key] = meet(out[key], narrowed) if key in out else narrowed
            return out
        if kind == "function_expression" and node.get("value") == "is_string" and len(children) == 1:
            return self._narrow_kind(children[0], _kinds(STRING), truthy, cur, scope)
        if kind == "comparator" and len(children) == 2:
            return self._narrow_comparison(node, truthy, cur, scope)
        if kind in _PATHS and truthy:
            value, origin = self.quiet(node, cur, scope)
            return {} if origin is None else {origin: drop(value, _kinds(NULL))}
        return {}

    def _narrow_kind(
        self, node: Any, kinds: frozenset[str], positive: bool, cur: JType, scope: _Scope
    ) -> dict[str, JType]:
        value, origin = self.quiet(node, cur, scope)
        if origin is None:
            return {}
        return {origin: keep(value, kinds) if positive else drop(value, kinds)}

    def _narrow_comparison(self, node: Any, truthy: bool, cur: JType, scope: _Scope) -> dict[str, JType]:
        op = node.get("value")
        left, right = node["children"]
        if not isinstance(left, dict) or not isinstance(right, dict):
            return {}
        if left.get("type") == "literal" or _is_null(left):
            left, right = right, left
        if right.get("type") != "literal" and not _is_null(right):
            return {}
        literal = right.get("value") if right.get("type") == "literal" else None
        if op in _ORDERING:
            # An ordering that did not raise compared two numbers or two strings, whatever it answered.
            wanted = NUMBER if isinstance(literal, int | float) and not isinstance(literal, bool) else STRING
            if isinstance(literal, str | int | float) and not isinstance(literal, bool):
                return self._narrow_kind(left, _kinds(wanted), True, cur, scope)
            return {}
        positive = (op == "eq") == truthy
        if literal is None:
            return self._narrow_kind(left, _kinds(NULL), positive, cur, scope)
        subject = left.get("children") or []
        if left.get("type") == "function_expression" and left.get("value") == "type" and len(subject) == 1:
            named = _TYPE_NAMES.get(literal) if isinstance(literal, str) else None
            if named is not None:
                return self._narrow_kind(subject[0], _kinds(named), positive, cur, scope)
        return {}

    def _comparator(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        children = node.get("children") or []
        if len(children) != 2:
            return BOOL_T, None
        op = str(node.get("value"))
        (a, a_origin), (b, b_origin) = (
            self.eval(child, cur, replace(scope, element=False), (*path, i)) for i, child in enumerate(children)
        )
        if not a.known or not b.known:
            return BOOL_T, None
        names = [self._operand(children[0], a_origin), self._operand(children[1], b_origin)]
        literals = [isinstance(c, dict) and c.get("type") == "literal" for c in children]
        # Point at the literal when exactly one side is one (`> '0'`), else at the operator.
        where, operator = (path, True)
        if literals[0] != literals[1]:
            where, operator = (*path, 0 if literals[0] else 1), False
        symbol = _SYMBOLS.get(op, op)
        if op in _ORDERING:
            if not (NUMBER in a.kinds and NUMBER in b.kinds) and not (STRING in a.kinds and STRING in b.kinds):
                consequence = (
                    "so it raises whenever it is evaluated and the rule fails closed (deny, or block after execution)"
                    if self.condition
                    else "so the placeholder fails and shows an error marker"
                )
                self.add(
                    scope,
                    Finding(
                        PE602,
                        where,
                        f"`{symbol}` orders {names[0]} ({describe(a)}) against {names[1]} ({describe(b)}): "
                        f"an ordering needs two numbers or two strings, {consequence}",
                        self._comparison_hint(children, (a, b)),
                        operator,
                    ),
                )
            return BOOL_T, None
        if op not in ("eq", "ne"):
            return BOOL_T, None
        nulls = [_is_null(c) for c in children]
        if any(nulls):
            other, other_name = (b, names[1]) if nulls[0] else (a, names[0])
            # `!= null` on a value that is never null is a common defensive test: only `==` is reported.
            if op == "eq" and NULL not in other.kinds and not all(nulls):
                self.add(
                    scope,
                    Finding(
                        PE604,
                        path,
                        f"{other_name} is {describe(other)}, never null, so `{symbol} null` is always false",
                        "a required parameter is always present once the arguments are validated: "
                        "drop the test, or test what you meant (e.g. length(...) == `0`, == '')",
                    ),
                )
            return BOOL_T, None
        if not a.kinds & b.kinds:
            answer = "false" if op == "eq" else "true"
            self.add(
                scope,
                Finding(
                    PE602,
                    where,
                    f"`{symbol}` compares {names[0]} ({describe(a)}) with {names[1]} ({describe(b)}): "
                    f"values of different types are never equal, so it is always {answer}",
                    self._comparison_hint(children, (a, b)),
                    operator,
                ),
            )
        elif (
            op == "eq" and a.const is not None and literals[1] and isinstance(b_value := children[1].get("value"), str)
        ):
            self._other_name(a, b_value, scope, path)
        elif (
            op == "eq" and b.const is not None and literals[0] and isinstance(a_value := children[0].get("value"), str)
        ):
            self._other_name(b, a_value, scope, path)
        return BOOL_T, None

    def _other_name(self, name: JType, literal: str, scope: _Scope, path: tuple[int, ...]) -> None:
        if name.kinds == {STRING} and literal != name.const:
            self.add(
                scope,
                Finding(
                    PE604,
                    path,
                    f"name is always {name.const!r} in this rule, so name == {literal!r} is always false",
                    f"add {literal!r} to the rule's tools:, or drop the test",
                ),
            )

    def _operand(self, node: Any, origin: str | None) -> str:
        if _is_null(node):
            return "null"
        if isinstance(node, dict):
            if node.get("type") == "literal":
                return _literal_text(node.get("value"))
            if node.get("type") == "function_expression":
                return f"{node.get('value')}(...)"
        if origin == "":
            return "@"
        return origin or "the value"

    def _comparison_hint(self, children: Sequence[Any], types: Sequence[JType]) -> str:
        for i, child in enumerate(children):
            if not (isinstance(child, dict) and child.get("type") == "literal"):
                continue
            value, other = child.get("value"), types[1 - i]
            if isinstance(value, str) and NUMBER in other.kinds and _NUMBER_TEXT.fullmatch(value.strip()):
                return f"write `{value.strip()}` (a JSON number, in backticks): '{value}' is a string"
            if isinstance(value, str) and BOOLEAN in other.kinds and value in ("true", "false"):
                return f"write `{value}` (a JSON boolean, in backticks): '{value}' is a string"
            if isinstance(value, int | float) and not isinstance(value, bool) and STRING in other.kinds:
                return f"write '{value}' (a string, in quotes), or compare to_number(...) with `{value}`"
        return "compare values of one type: to_number() and to_string() convert"

    # functions

    def _expref(self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]) -> tuple[JType, str | None]:
        return REF_T, None  # its body is typed by the function that applies it (map, sort_by...)

    def _function_expression(
        self, node: Any, cur: JType, scope: _Scope, path: tuple[int, ...]
    ) -> tuple[JType, str | None]:
        name = str(node.get("value"))
        children = node.get("children") or []
        arg_scope = replace(scope, element=False)
        args = [self.eval(child, cur, arg_scope, (*path, i)) for i, child in enumerate(children)]
        spec = _TABLE.get(name)
        signature = spec.get("signature", ()) if spec is not None else ()
        failed = False
        for i, (kind, origin) in enumerate(args):
            if not signature:
                break
            allowed = signature[min(i, len(signature) - 1)].get("types") or []
            if _fits(kind, allowed):
                continue
            failed = True
            position = f"argument {i + 1}" if len(children) > 1 else "its argument"
            consequence = (
                "it raises at run time, so the rule fails closed (deny, or block after execution)"
                if self.condition
                else "the placeholder fails and shows an error marker"
            )
            self.add(
                scope,
                Finding(
                    PE603,
                    (*path, i),
                    f"{name}() needs {_wanted(allowed)} as {position}, but {self._operand(children[i], origin)} "
                    f"is {describe(kind)}: {consequence}",
                    "pass a value of that type (an optional value is tested first: is_string(x) && ...)",
                ),
            )
        if failed:
            return ANY_T, None
        if name in _EXPREF_FUNCTIONS and len(args) == 2:
            return self._apply_expref(name, node, args, scope, path), None
        return _return_type(name, [kind for kind, _ in args]), None

    def _apply_expref(
        self,
        name: str,
        node: Any,
        args: Sequence[tuple[JType, str | None]],
        scope: _Scope,
        path: tuple[int, ...],
    ) -> JType:
        """Type the &expression's body on the elements of the array it is applied to."""
        array_at, ref_at = _EXPREF_FUNCTIONS[name]
        ref = node["children"][ref_at]
        array, origin = args[array_at]
        body_node = (
            (ref.get("children") or [None])[0] if isinstance(ref, dict) and ref.get("type") == "expref" else None
        )
        if body_node is None:
            return ANY_T
        element = (array.item or ANY_T) if array.known else ANY_T
        inner = self._element_scope(scope, origin, silent=not element.kinds)
        body, _ = self.eval(body_node, element, replace(inner, element=False), (*path, ref_at, 0))
        if name != "map" and body.known and not body.kinds & {NUMBER, STRING}:
            self.add(
                scope,
                Finding(
                    PE603,
                    (*path, ref_at),
                    f"{name}() orders by numbers or strings, but its &expression gives {describe(body)}: "
                    "it raises at run time",
                    "order by a number or a string field of the elements",
                ),
            )
        if name == "map":
            return array_of(body)
        if name == "sort_by":
            return keep(array, _kinds(ARRAY)) if array.known else ANY_T
        return union(element, NULL_T)


_OF_KIND_WORDS = {ARRAY: "an array", OBJECT: "an object", STRING: "a string"}


def _suggest(
    name: str,
    keys: Sequence[str],
    fallback: str,
    spell: Callable[[str], str],
    tool: ToolDefinition | None = None,
) -> str:
    """`did you mean X?` by spelling, else by the role the names share (recipient -> to), else the keys."""
    close = difflib.get_close_matches(name, list(keys), n=1, cutoff=0.6)
    if not close:
        wanted = key_roles(name) - {Role.TEXT}
        if wanted:
            declared = tool.roles if tool is not None and tool.roles else {}
            for key in keys:
                roles = set(key_roles(key))
                named = role_named(str(declared.get(key.lower(), ""))) if declared else None
                if named is not None:
                    roles = {named}
                if wanted & roles:
                    close = [key]
                    break
    if close:
        return f"did you mean {spell(close[0])}? ({fallback})"
    return fallback


# -- where things are in the rule files -------------------------------------------------------


class _SpanParser(Parser):  # type: ignore[misc]
    """jmespath's parser, recording the tokens each node spans (the AST itself has no positions)."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: dict[int, tuple[int, int]] = {}
        self.operators: dict[int, int] = {}
        self.nodes: list[Any] = []  # keeps every recorded node alive, so no id is reused

    def _expression(self, binding_power: int = 0) -> Any:
        # jmespath's own loop (parser.py, 1.1.0), with the spans recorded after every nud and led.
        first = self._index
        left_token = self._lookahead_token(0)
        self._advance()
        nud: Any = getattr(self, f"_token_nud_{left_token['type']}", self._error_nud_token)
        left = nud(left_token)
        self._mark(left, first, first)
        current = self._current_token()
        while binding_power < self.BINDING_POWER[current]:
            led: Any = getattr(self, f"_token_led_{current}", None)
            if led is None:
                self._error_led_token(self._lookahead_token(0))
            else:
                operator = self._index
                self._advance()
                left = led(left)
                self._mark(left, first, operator)
                current = self._current_token()
        return left

    def _mark(self, node: Any, first: int, operator: int) -> None:
        self.nodes.append(node)
        self.spans[id(node)] = (first, self._index - 1)
        self.operators.setdefault(id(node), operator)


@dataclass
class _Positions:
    """One expression text parsed with positions: its AST and character spans by node id."""

    ast: Any
    spans: dict[int, tuple[int, int]]
    operators: dict[int, tuple[int, int]]
    nodes: list[Any]  # every node of `ast` and of its intermediate forms, kept alive so no id is reused


def _positions(text: str) -> _Positions | None:
    """Parse `text` again with positions (None if that fails: the problem is then put at the expression)."""
    parser = _SpanParser()
    try:
        parsed = parser._parse(text)
    except Exception:  # anything the re-parse trips on only costs the precise column
        return None
    tokens = parser._tokens
    starts = [int(t["start"]) for t in tokens]
    # The lexer's `end` is unreliable (literals, operators): a token ends where the next one starts, less blanks.
    ends = [s + len(text[s : starts[k + 1]].rstrip()) if k + 1 < len(starts) else s for k, s in enumerate(starts)]
    spans = {key: (starts[a], max(ends[b], starts[a] + 1)) for key, (a, b) in parser.spans.items()}
    operators: dict[int, tuple[int, int]] = {}
    for key, index in parser.operators.items():
        end = index
        if tokens[index]["type"] in ("filter", "lbracket"):
            depth = 0
            for k in range(index, len(tokens)):
                kind = tokens[k]["type"]
                depth += kind in ("filter", "lbracket")
                depth -= kind == "rbracket"
                if depth == 0:
                    end = k
                    break
        operators[key] = (starts[index], max(ends[end], starts[index] + 1))
    return _Positions(parsed.parsed, spans, operators, parser.nodes)


def _span(expression: Expression, positions: _Positions, finding: Finding) -> tuple[int, int]:
    """Character span of the finding's node in the expression text (the nearest located ancestor)."""
    resolved, raw = expression.parsed.parsed, positions.ast
    best = positions.spans.get(id(raw), (0, max(1, len(expression.text))))
    for index in finding.path:
        mine, theirs = resolved.get("children"), raw.get("children")
        if not isinstance(mine, list) or not isinstance(theirs, list):
            return best
        step = index
        # `lists.NAME.x` was folded to `<literal>.x`: the raw node has one child more.
        first = theirs[0] if theirs else None
        folded = first == {"type": "field", "children": [], "value": "lists"} and len(theirs) == len(mine) + 1
        if raw.get("type") == "subexpression" and folded:
            if index == 0:
                a, b = positions.spans.get(id(theirs[0])), positions.spans.get(id(theirs[1]))
                return (a[0], b[1]) if a and b else best
            step = index + 1
        if index >= len(mine) or step >= len(theirs) or not isinstance(theirs[step], dict):
            return best
        resolved, raw = mine[index], theirs[step]
        if not isinstance(resolved, dict) or resolved.get("type") != raw.get("type"):
            # A named list folded into a literal: the raw node is the `lists.NAME` it was written as.
            folded_list = isinstance(resolved, dict) and resolved.get("type") == "literal"
            return positions.spans.get(id(raw), best) if folded_list else best
        best = positions.spans.get(id(raw), best)
    if finding.operator and id(raw) in positions.operators:
        return positions.operators[id(raw)]
    return best


# The line breaks PyYAML counts (as in packs/yaml_source.py).
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
# Only marks and raw scalar text are read: the base loader (libyaml, no implicit tag resolution) is the fastest.
_LOADER: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


@dataclass
class _File:
    """A rule file composed again with libyaml (fast), for the nodes of its rules."""

    name: str
    lines: list[str]
    rules: dict[str, yaml.MappingNode]


class _Sources:
    """Rule files read once each, and only when a problem needs a place in them."""

    def __init__(self) -> None:
        self.files: dict[str, _File | None] = {}

    def file(self, name: str) -> _File | None:
        """The composed file, or None when it cannot be read or parsed any more."""
        if name not in self.files:
            self.files[name] = _compose(name)
        return self.files[name]

    def node(self, rule: Rule, key: str) -> tuple[_File, yaml.Node] | None:
        """The YAML node of the rule's `key`, with its file."""
        if rule.location is None:
            return None
        found = self.file(rule.location.file)
        mapping = found.rules.get(rule.id) if found is not None else None
        if found is None or mapping is None:
            return None
        for k, v in mapping.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return found, v
        return None

    def fallback(self, rule: Rule) -> tuple[Location | None, str | None, int]:
        """The rule's id: where a problem goes when its own place cannot be found."""
        loc = rule.location
        found = self.file(loc.file) if loc is not None else None
        line = (
            found.lines[loc.line - 1]
            if found is not None and loc is not None and loc.line <= len(found.lines)
            else None
        )
        return loc, line, max(1, len(rule.id))

    def in_scalar(
        self, rule: Rule, key: str, text: str, start: int, end: int
    ) -> tuple[Location | None, str | None, int]:
        """Where characters start..end of the scalar value of `key` (whose value is `text`) are."""
        located = self.node(rule, key)
        if located is None:
            return self.fallback(rule)
        source, node = located
        if not isinstance(node, yaml.ScalarNode) or node.value != text:
            return self.fallback(rule)
        mark, last = node.start_mark, node.end_mark
        first_char = source.lines[mark.line][mark.column : mark.column + 1] if mark.line < len(source.lines) else ""
        span = ScalarSpan(text, node.style, mark.line, mark.column, last.line, last.column, first_char in ("&", "!"))
        doc = SourceDoc(source.name, None, source.lines, sites={("v",): NodeSite(1, span)})
        begin = doc.position(("v",), start)
        finish = doc.position(("v",), max(start, end - 1))
        width = finish.column - begin.column + 1 if finish.line == begin.line else 1
        line = source.lines[begin.line - 1] if begin.line <= len(source.lines) else None
        return begin, line, max(1, width)


def _compose(name: str) -> _File | None:
    try:
        text = Path(name).read_bytes().decode("utf-8-sig")
        root = yaml.compose(text, Loader=_LOADER)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    rules: dict[str, yaml.MappingNode] = {}
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if not (isinstance(key, yaml.ScalarNode) and key.value == "rules" and isinstance(value, yaml.SequenceNode)):
                continue
            for item in value.value:
                if not isinstance(item, yaml.MappingNode):
                    continue
                for k, v in item.value:
                    if isinstance(k, yaml.ScalarNode) and k.value == "id" and isinstance(v, yaml.ScalarNode):
                        rules.setdefault(v.value, item)
    return _File(name, _BREAK.split(text), rules)


def _placeholders(text: str) -> list[tuple[int, int]]:
    """(start, end) of each `{...}` placeholder's inside, in order, as compile_template splits the text."""
    found: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in "{}" and text[i : i + 2] == char * 2:
            i += 2
        elif char == "{":
            end = placeholder_end(text, i)
            if end is None:
                break
            found.append((i + 1, end))
            i = end + 1
        else:
            i += 1
    return found


# -- the checker -------------------------------------------------------------------------------

_TEMPLATE_KEYS = ("reason", "content", "block")
_MAX_SUGGESTIONS = 100
_CODE_IN_TEMPLATE = {PE601: PE605}


class _Checker:
    """Checks rules against one catalog, caching per tool document type and per (expression, tool)."""

    def __init__(self, tools: Mapping[str, ToolDefinition], packs: Sequence[Pack]) -> None:
        self.tools = tools
        # Typos are a few names; hundreds of names a catalog lacks mean another catalog, and a did-you-mean
        # for each would cost more than the whole check (difflib: ~1 ms a name against 100 tools).
        self.unknown = len({n for pack in packs for rule in pack.rules for n in rule.tools.names if n not in tools})
        self.suggest = self.unknown <= _MAX_SUGGESTIONS
        self.order = {name: i for i, name in enumerate(tools)}
        self.folded = {fold_tool_name(name) for name in tools}
        self.by_tag: dict[str, set[str]] = {}
        for name, definition in tools.items():
            for tag in definition.tags:
                self.by_tag.setdefault(tag, set()).add(name)
        self.globs: dict[str, set[str]] = {}
        self.documents: dict[tuple[str | None, bool, bool], JType] = {}
        self.analyses: dict[tuple[int, str | None, bool, bool, bool], dict[tuple[str, tuple[int, ...]], Finding]] = {}
        self.positions: dict[str, _Positions | None] = {}
        self.hints: dict[str, str] = {}
        self.templates: dict[int, tuple[Template, list[tuple[int, Expression]]]] = {}
        self.sources = _Sources()

    def select(self, rule: Rule) -> list[str]:
        """The catalog tools the rule applies to, in catalog order."""
        matcher = rule.tools
        # Folded as at run time (ToolMatcher.matches): `bash` selects the catalog's `Bash`.
        found = {name for name in self.tools if fold_tool_name(name) in matcher.folded}
        for glob in matcher.globs:
            hit = self.globs.get(glob)
            if hit is None:
                hit = self.globs[glob] = {name for name in self.tools if tool_matches(name, (glob,))}
            found |= hit
        for tag in matcher.tags:
            found |= self.by_tag.get(tag, set())
        return sorted(found, key=self.order.__getitem__)

    def document(self, tool: str | None, post: bool, exact: bool) -> JType:
        """The call document's type for one tool (None: a tool the catalog does not describe)."""
        key = (tool, post, exact)
        hit = self.documents.get(key)
        if hit is None:
            definition = self.tools[tool] if tool is not None else None
            hit = self.documents[key] = document_type(definition, post=post, exact=exact)
        return hit

    def analyse(
        self, expression: Expression, tool: str | None, post: bool, exact: bool, condition: bool
    ) -> dict[tuple[str, tuple[int, ...]], Finding]:
        """Findings of one expression for one tool (cached: templates repeat across rules)."""
        key = (id(expression), tool, post, exact, condition)
        hit = self.analyses.get(key)
        if hit is None:
            definition = self.tools[tool] if tool is not None else None
            analysis = Analysis(definition, condition=condition, post=post)
            try:
                hit = analysis.run(expression, self.document(tool, post, exact))
            except RecursionError:  # an expression nested beyond what the checker walks: nothing certain
                hit = {}
            self.analyses[key] = hit
        return hit

    def rule(self, rule: Rule) -> list[Problem]:
        """Every problem of one rule."""
        selected = self.select(rule)
        exact = not rule.tools.globs and not rule.tools.tags
        problems = self.tool_entries(rule, selected, exact) if self.tools else []
        targets: list[str | None] = list(selected) or [None]
        post = rule.stage is Stage.POST_EXECUTE
        if rule.when is not None:
            problems += self.expression(rule, "when", rule.when, 0, targets, exact, post, condition=True)
        for key in _TEMPLATE_KEYS:
            template: Template | None = getattr(rule, key)
            if template is None:
                continue
            for offset, part in self.placeholders(template):
                problems += self.expression(rule, key, part, offset, targets, exact, post, condition=False)
        return problems

    def placeholders(self, template: Template) -> list[tuple[int, Expression]]:
        """(offset in the template text, expression) of each placeholder (cached: reasons repeat across rules)."""
        # By identity: the same text compiles to other expressions in a pack with other lists.
        cached = self.templates.get(id(template))
        if cached is not None and cached[0] is template:
            return cached[1]
        parts = [p for p in template.parts if isinstance(p, Expression)]
        places = _placeholders(template.text)
        if len(places) != len(parts) or any(
            template.text[a:b] != p.text for (a, b), p in zip(places, parts, strict=True)
        ):
            places = [(0, 0)] * len(parts)  # cannot be matched up: locate at the template
        found = [(a, p) for (a, _b), p in zip(places, parts, strict=True)]
        self.templates[id(template)] = (template, found)
        return found

    def expression(
        self,
        rule: Rule,
        key: str,
        expression: Expression,
        offset: int,
        targets: Sequence[str | None],
        exact: bool,
        post: bool,
        *,
        condition: bool,
    ) -> list[Problem]:
        """The findings every target tool shares, as located problems."""
        results = [self.analyse(expression, tool, post, exact, condition) for tool in targets]
        first = results[0]
        if not first:
            return []
        shared = [k for k in first if all(k in other for other in results[1:])]
        problems = []
        for finding_key in shared:
            finding = first[finding_key]
            message = finding.message
            if len(targets) > 1:
                names = ", ".join(str(t) for t in targets[:4]) + (", ..." if len(targets) > 4 else "")
                message += f" (for every tool the rule selects: {names})"
            code = finding.code if condition else _CODE_IN_TEMPLATE.get(finding.code, finding.code)
            if not condition:
                message = f"in the {key} template: {message}"
            text = expression.text
            if text not in self.positions:
                self.positions[text] = _positions(text)
            positions = self.positions[text]
            start, end = _span(expression, positions, finding) if positions is not None else (0, len(text))
            whole = rule.when.text if condition and rule.when is not None else getattr(rule, key).text
            loc, line, width = self.sources.in_scalar(rule, key, whole, offset + start, offset + end)
            problems.append(
                Problem(
                    code,
                    message,
                    loc,
                    rule_id=rule.id,
                    hint=finding.hint,
                    severity=Severity.WARNING,
                    source_line=line,
                    caret_width=width,
                )
            )
        return problems

    def tool_entries(self, rule: Rule, selected: Sequence[str], exact: bool) -> list[Problem]:
        """PE606: names written in `tools:` that the catalog lacks; or the whole list, when it selects nothing."""
        missing = [n for n in rule.tools.names if fold_tool_name(n) not in self.folded]
        if not missing and selected:
            return []
        located = self.sources.node(rule, "tools")
        entries: list[tuple[str, yaml.Node]] = []
        if located is not None and isinstance(located[1], yaml.SequenceNode):
            entries = [(str(item.value), item) for item in located[1].value if isinstance(item, yaml.ScalarNode)]
        # When the file cannot be read again, a name from a list cannot be told from one written in `tools:`:
        # only a rule that selects nothing is reported then, at its id.
        problems = []
        for entry, node in entries:
            listed = fold_tool_name(entry) in self.folded
            if entry.startswith(("@", "tag:")) or any(c in entry for c in "*?[") or listed:
                continue
            hint = self.tool_hint(entry)
            problems.append(
                self._entry_problem(rule, node, f"tools: names {entry!r}, which is not in the catalog", hint)
            )
        # Globs and tags are open-world (they select tools a catalog may not describe): a rule that selects by
        # them and meets no catalog tool is lint's PE502, not a slip this check can be sure of.
        if not problems and not selected and exact:
            written = ", ".join(entry for entry, _ in entries) or ", ".join(sorted(rule.tools.names)) or "none"
            problems.append(
                self._entry_problem(
                    rule,
                    located[1] if located is not None else None,
                    f"tools: selects no tool of the catalog (entries: {written})",
                    "check the names, globs and tags against the catalog, or delete the rule if those tools are gone",
                )
            )
        return problems

    def tool_hint(self, entry: str) -> str:
        """A did-you-mean for a tool name, once per name (difflib is slow, and a big pack repeats its names)."""
        hint = self.hints.get(entry)
        if hint is None:
            close = []
            if self.suggest:
                close = difflib.get_close_matches(entry, list(self.tools), n=1, cutoff=0.75)
            hint = self.hints[entry] = (
                f"did you mean {close[0]!r}? (tool names are compared folded: case, -, _ and camelCase aside)"
                if close
                else "name a tool of the catalog, or a glob or tag:NAME for tools it may not describe"
                + (
                    ""
                    if self.suggest
                    else f" ({self.unknown:,} tool names of the packs are not in this catalog: "
                    "is it the catalog of these tools?)"
                )
            )
        return hint

    def _entry_problem(self, rule: Rule, node: yaml.Node | None, message: str, hint: str) -> Problem:
        if node is None or rule.location is None:
            loc, line, width = self.sources.fallback(rule)
        else:
            source = self.sources.file(rule.location.file)
            mark, last = node.start_mark, node.end_mark
            loc = Location(rule.location.file, mark.line + 1, mark.column + 1)
            line = source.lines[mark.line] if source is not None and mark.line < len(source.lines) else None
            width = last.column - mark.column if last.line == mark.line and last.column > mark.column else 1
        return Problem(
            PE606,
            message,
            loc,
            rule_id=rule.id,
            hint=hint,
            severity=Severity.WARNING,
            source_line=line,
            caret_width=max(1, width),
        )


def _internal_error(rule: Rule, error: Exception) -> Problem:
    """PE607 at the rule's id: the type check failed on it (the rule itself may be fine)."""
    return Problem(
        PE607,
        f"internal error type-checking this rule: {type(error).__name__}: {error} (please report)"[:400],
        rule.location,
        rule_id=rule.id,
        hint="this is a policyengine bug, not a mistake in the rule; the rule was not type-checked",
        severity=Severity.WARNING,
    )


def check_types(packs: Sequence[Pack], tools: Mapping[str, ToolDefinition]) -> list[Problem]:
    """Type-check every rule's condition and templates against the catalog; warnings, by file, line, column."""
    checker = _Checker(tools, packs)
    problems: list[Problem] = []
    # As in the loader: the cyclic collector would rescan the loaded packs at every burst of YAML nodes and
    # types allocated here (a 10,000-rule pack: most of the time); reference counting frees what is short-lived.
    enabled = gc.isenabled()
    gc.disable()
    try:
        for pack in packs:
            for rule in pack.rules:
                try:
                    problems += checker.rule(rule)
                except Exception as error:  # a checker bug must not stop `check`: say so at the rule, go on
                    problems.append(_internal_error(rule, error))
        problems.sort(key=Problem.sort_key)
    finally:
        if enabled:
            gc.enable()
    return problems
