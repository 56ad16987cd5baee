"""JSON Schema (draft 2020-12, plus the draft-07 spellings MCP servers emit) compiled once into closures.

`compile_json_schema(schema)` returns a `JsonSchemaValidator`; calling it with an instance returns
the list of problems: [] when the instance is valid, else at most MAX_MESSAGES messages, each
naming the JSON path of the failing value (`$.query.limit: 5000 is more than the maximum 1000`).
A call never raises: every check is a predicate that runs first, and only a refusal pays for a
second pass that writes the messages. `is_valid(instance)` is that predicate alone.

Semantics: JSON types, whatever the Python classes (a `bool` is no number, `1.0` is an integer,
objects are Mappings such as FrozenDict, arrays are lists, tuples or FrozenLists); enum, const
and uniqueItems compare as JSON (1 == 1.0, true != 1, deep); string lengths count code points.
Deliberate differences from a reference validator such as `jsonschema`:
- `pattern` and `patternProperties` are RE2 searches (linear time on attacker-controlled
  strings): no lookaround or backreferences (refused when compiling); `\\d`, `\\w` and `$` keep
  ECMA-262's meaning (ASCII digits, `$` only at the very end); `\\uXXXX` escapes are read; a lone
  surrogate in a string is matched as U+FFFD;
- `multipleOf` on floats is exact arithmetic on the numbers as written (0.3 is a multiple of 0.1);
- `$ref` siblings always apply (2020-12), also in draft-07 schemas, where they were ignored.
Refused when compiling (DefinitionError naming the JSON pointer and a fix): a keyword whose value
has the wrong shape, a pattern RE2 cannot compile, a `$ref` outside the document (or inside a
sub-schema with its own `$id`), a `$ref` cycle that never descends into the instance,
`$dynamicRef`/`$recursiveRef`, and `unevaluatedProperties`/`unevaluatedItems` next to in-place
applicators (alone they are read like additionalProperties/items). `format`, annotations and
unknown keywords are ignored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from fractions import Fraction
from json.encoder import encode_basestring_ascii as _quote
from typing import Any, Final
from urllib.parse import unquote

import re2

from policyengine.errors import DefinitionError
from policyengine.values.frozen import FrozenDict, FrozenList

__all__ = ["MAX_DEPTH", "MAX_MESSAGES", "JsonSchemaValidator", "compile_json_schema"]

MAX_MESSAGES: Final = 20
# Levels of nesting a recursive schema follows into an instance; frozen arguments stop at 100.
MAX_DEPTH: Final = 128

Check = Callable[[Any, int], bool]
Explain = Callable[[Any, str, int, list[str]], None]

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.never_capture = True  # matching never reads groups; RE2 then keeps to its fastest engines
_RE2_OPTIONS.log_errors = False
_ATOMS: Final = frozenset({str, int, float, bool, type(None), list, tuple})
_TYPE_WORDS: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
    "object": "an object",
    "array": "an array",
}
_SURE: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int,),  # not float: a float is a number only when finite, which its type cannot tell
    "boolean": (bool,),
    "null": (type(None),),
    "object": (dict, FrozenDict),
    "array": (list, tuple, FrozenList),
}
_BOUND_TESTS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "min": lambda value, bound: value >= bound,
    "max": lambda value, bound: value <= bound,
    "xmin": lambda value, bound: value > bound,
    "xmax": lambda value, bound: value < bound,
}
_BOUND_WORDS: Final = {
    "min": "less than the minimum",
    "max": "more than the maximum",
    "xmin": "not more than the exclusive minimum",
    "xmax": "not less than the exclusive maximum",
}
_IN_PLACE: Final = ("allOf", "anyOf", "oneOf", "if", "$ref", "dependentSchemas", "dependencies")


class _TooDeep(Exception):
    """An instance nests deeper than MAX_DEPTH where the schema follows it."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class _Node:
    """A compiled (sub-)schema: its predicate, what explains a refusal, and whether a value has its type."""

    __slots__ = ("accepts", "check", "explain", "names", "sure")

    def __init__(self) -> None:
        self.check: Check = _true
        self.explain: Explain = _explain_nothing
        self.accepts: Check = _true
        # Exact classes whose values always pass (a schema that only says `type`): the loops over
        # properties and items test `type(item) in sure` and skip the call.
        self.sure: frozenset[type] = frozenset()
        self.names: tuple[str, ...] | None = None  # the types, for a schema that only says `type`


class JsonSchemaValidator:
    """A compiled JSON Schema: `validator(instance)` is [] when valid, else messages naming JSON paths."""

    __slots__ = ("_check", "_root")

    def __init__(self, root: _Node) -> None:
        self._root, self._check = root, root.check

    def is_valid(self, instance: Any) -> bool:
        """True when the instance is valid; never raises."""
        try:
            return self._check(instance, 0)
        except Exception:
            return False  # too deep, or stack exhausted: a validation that cannot complete is a refusal

    def __call__(self, instance: Any) -> list[str]:
        """[] when the instance is valid, else up to MAX_MESSAGES messages `<JSON path>: <problem>`; never raises."""
        try:
            if self._check(instance, 0):
                return []
        except Exception:
            pass
        return self.explain(instance)

    def explain(self, instance: Any) -> list[str]:
        """The messages of the slow pass alone ([] for a valid instance); never raises."""
        out: list[str] = []
        try:
            self._root.explain(instance, "$", 0, out)
        except _TooDeep as deep:
            where = deep.path if len(deep.path) <= 100 else f"{deep.path[:100]}..."
            out.append(f"{where}: nested too deeply to validate (more than {MAX_DEPTH} levels)")
        except RecursionError:
            out.append(f"$: nested too deeply to validate (more than {MAX_DEPTH} levels)")
        except Exception as error:
            out.append(f"$: cannot be validated ({type(error).__name__})")
        if not out and not self.is_valid(instance):
            out.append("$: is not valid against the schema")  # never expected: the tests pin both passes
        return out[:MAX_MESSAGES]


def compile_json_schema(schema: Mapping[str, Any] | bool, *, where: str = "schema") -> JsonSchemaValidator:
    """Compile a JSON Schema once; raise DefinitionError (naming `where` and a JSON pointer) when it is unusable."""
    compiler = _Compiler(schema, where)
    try:
        root = compiler.target("")
        compiler.refuse_cycles()
    except RecursionError:
        raise DefinitionError(
            f"{where}: the schema nests too deeply to compile", hint="flatten it, or name repeated parts in $defs"
        ) from None
    return JsonSchemaValidator(root)


# ---------------------------------------------------------------------------------------------
# Values: types, JSON equality, messages
# ---------------------------------------------------------------------------------------------


def _true(_value: Any, _depth: int) -> bool:
    return True


def _false(_value: Any, _depth: int) -> bool:
    return False


def _explain_nothing(_value: Any, _path: str, _depth: int, _out: list[str]) -> None:
    return None


def _is_object(value: Any) -> bool:
    return isinstance(value, dict) or (type(value) not in _ATOMS and isinstance(value, Mapping))


def _is_number(value: Any) -> bool:
    # NaN and infinity are no JSON numbers (from a float subclass too): every comparison with NaN is false.
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    if isinstance(value, int):
        return not isinstance(value, bool)
    return isinstance(value, float) and value.is_integer()


def _type_test(names: tuple[str, ...]) -> Check:
    """The predicate of a `type` keyword."""
    named = set(names)
    if named == {"string"}:
        return lambda value, _d: isinstance(value, str)
    if named == {"object"}:
        return lambda value, _d: _is_object(value)
    if named == {"array"}:
        return lambda value, _d: isinstance(value, (list, tuple))
    if named == {"integer"}:
        return lambda value, _d: _is_integer(value)
    plain = {"string": (str,), "boolean": (bool,), "null": (type(None),), "array": (list, tuple), "object": (dict,)}
    classes = tuple(cls for name in names for cls in plain.get(name, ()))
    numbers = "number" in named
    integers = "integer" in named and not numbers
    mappings = "object" in named

    def test(value: Any, _depth: int) -> bool:
        if isinstance(value, classes):
            return True
        if numbers and _is_number(value):
            return True
        if integers and _is_integer(value):
            return True
        return mappings and _is_object(value)

    return test


_OTHER: Final = object()  # tags the key of a value that is no JSON: it equals itself only


def _key(value: Any, limit: int) -> Any:
    """A hashable key equal for JSON-equal values (1 and 1.0 alike, true apart from 1); _TooDeep past `limit`."""
    kind = type(value)
    if kind is str or value is None:
        return value
    if kind is bool:
        return (bool, value)
    if kind is int or kind is float:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool | int | float):
        return float(value) if isinstance(value, float) else int(value)
    if limit <= 0:
        raise _TooDeep("$")
    if _is_object(value):
        return (dict, frozenset((name, _key(item, limit - 1)) for name, item in value.items()))
    if isinstance(value, (list, tuple)):
        return (list, tuple(_key(item, limit - 1) for item in value))
    return (_OTHER, id(value))  # the caller holds the value, so its id stays unique meanwhile


def _depth_of(value: Any) -> int:
    """How deep a (schema-given, so finite) JSON value nests: 0 for a scalar."""
    if _is_object(value):
        return 1 + max((_depth_of(item) for item in value.values()), default=0)
    if isinstance(value, (list, tuple)):
        return 1 + max((_depth_of(item) for item in value), default=0)
    return 0


def _show(value: Any) -> str:
    """A short, safe rendering of an (attacker-controlled) value for a message."""
    if isinstance(value, str):
        text = _quote(value[:60])
        return text if len(value) <= 60 else f'{text[:-1]}..." ({len(value)} characters)'
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        try:
            digits = str(int(value))
        except ValueError:  # more digits than int-to-str converts
            return f"an integer of {value.bit_length()} bits"
        return digits if len(digits) <= 40 else f"{digits[:20]}... ({len(digits)} digits)"
    if isinstance(value, float):
        return repr(float(value))
    if _is_object(value):
        return f"an object of {len(value)} properties"
    if isinstance(value, (list, tuple)):
        return f"an array of {len(value)} items"
    return f"a {type(value).__name__} (not JSON)"


def _child(path: str, key: str) -> str:
    if len(key) <= 60 and key.isidentifier() and key.isascii():
        return f"{path}.{key}"
    return f"{path}[{_show(key)}]"


def _scrub(text: str) -> str:
    """The text with lone surrogates (which UTF-8 cannot encode) replaced by U+FFFD."""
    return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)


def _matcher(regex: Any) -> Callable[[str], bool]:
    def search(text: str) -> bool:
        try:
            return regex.Match(text) is not None
        except UnicodeEncodeError:
            return regex.Match(_scrub(text)) is not None

    return search


def _fraction(number: int | float) -> Fraction:
    """A number as written: floats through their shortest repr, so 0.1 is one tenth."""
    if isinstance(number, float):
        return Fraction(Decimal(repr(float(number))))
    return Fraction(int(number))


def _multiple_test(divisor: int | float) -> Callable[[Any], bool]:
    exact = _fraction(divisor)

    def is_multiple(value: Any) -> bool:
        if type(value) is int and type(divisor) is int:
            return value % divisor == 0
        try:
            return (_fraction(value) / exact).denominator == 1
        except (ValueError, OverflowError, ArithmeticError):
            return False  # infinity or NaN is no multiple of anything

    return is_multiple


def _member_test(members: list[Any] | tuple[Any, ...]) -> Check:
    """The predicate of an enum: JSON equality with one of the members."""
    if all(isinstance(member, str) for member in members):
        allowed = frozenset(members)
        return lambda value, _d: isinstance(value, str) and value in allowed
    limit = max((_depth_of(member) for member in members), default=0)
    keys = frozenset(_key(member, limit + 1) for member in members)

    def check_member(value: Any, _depth: int) -> bool:
        try:
            return _key(value, limit) in keys
        except _TooDeep:
            return False  # deeper than every member: equal to none

    return check_member


def _all(checks: list[Check]) -> Check:
    """The conjunction of predicates, without a loop for the common short cases."""
    if not checks:
        return _true
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value, depth: first(value, depth) and second(value, depth)
    every = tuple(checks)

    def check_all(value: Any, depth: int) -> bool:
        for check in every:  # noqa: SIM110 (all() over a generator costs a frame per call)
            if not check(value, depth):
                return False
        return True

    return check_all


# ---------------------------------------------------------------------------------------------
# The compiler
# ---------------------------------------------------------------------------------------------

SchemaCheck = tuple[Check, Explain]


class _Compiler:
    """Compiles one schema document; $ref targets are compiled once and called lazily."""

    def __init__(self, root: Any, where: str) -> None:
        self.root, self.where = root, where
        self.targets: dict[str, _Node] = {}
        self.type_checks: dict[Check, tuple[str, ...]] = {}  # the predicates of bare type rules, and their types
        # Refs met in the in-place part of each target (before any descent into the instance).
        self.edges: dict[str, list[tuple[str, str]]] = {}
        self.region: str | None = None
        self.resource = False  # inside a sub-schema with its own $id: refs there mean something else
        base = root.get("$id") if isinstance(root, Mapping) else None
        self.base = base.split("#")[0] if isinstance(base, str) else None

    def fail(self, pointer: str, message: str, hint: str) -> DefinitionError:
        return DefinitionError(f"{self.where}: #{pointer}: {message}", hint=hint)

    # -- references ---------------------------------------------------------------------------

    def target(self, pointer: str) -> _Node:
        """The node of the sub-schema at `pointer`, compiled on first use."""
        node = self.targets.get(pointer)
        if node is None:
            node = self.targets[pointer] = _Node()
            schema, inside = self.resolve(pointer)
            saved = self.region, self.resource
            self.region, self.resource = pointer, inside
            try:
                self.fill(node, schema, pointer)
            finally:
                self.region, self.resource = saved
        return node

    def resolve(self, pointer: str) -> tuple[Any, bool]:
        """The value at a JSON pointer, and whether it lies under a sub-schema with its own $id."""
        node, inside = self.root, False
        for token in pointer.split("/")[1:]:
            inside = inside or (node is not self.root and _has_own_id(node))
            name = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and name in node:
                node = node[name]
            elif isinstance(node, (list, tuple)) and name.isdigit() and int(name) < len(node):
                node = node[int(name)]
            else:
                raise LookupError(pointer)
        return node, inside

    def reference(self, ref: Any, pointer: str) -> _Node:
        where = f"{pointer}/$ref"
        if not isinstance(ref, str):
            raise self.fail(where, f"$ref must be a string, got {_show(ref)}", 'write "#/$defs/Name"')
        if self.resource:
            raise self.fail(where, f"$ref {ref!r} under a sub-schema with its own $id", "move it to the root's $defs")
        document, _, fragment = ref.partition("#")
        hint = 'only references inside this schema are read: "#", "#/$defs/Name" or another JSON pointer'
        if (document and document != self.base) or (fragment and not fragment.startswith("/")):
            raise self.fail(where, f"cannot resolve $ref {ref!r}", hint)
        target = unquote(fragment)  # RFC 6901: a URI fragment is percent-decoded, then read as a pointer
        try:
            self.resolve(target)
        except LookupError:
            raise self.fail(where, f"$ref {ref!r} points at nothing in this schema", hint) from None
        if self.region is not None:
            self.edges.setdefault(self.region, []).append((target, where))
        return self.target(target)

    def refuse_cycles(self) -> None:
        """Refuse $refs that lead back to themselves without descending into the instance."""
        state: dict[str, int] = {}

        def visit(pointer: str) -> None:
            state[pointer] = 1
            for target, where in self.edges.get(pointer, ()):
                if state.get(target) == 1:
                    raise self.fail(
                        where,
                        "this $ref leads back to itself without descending into the instance",
                        "a recursive schema must go through properties or items before it repeats",
                    )
                if target not in state:
                    visit(target)
            state[pointer] = 2

        for pointer in list(self.edges):
            if pointer not in state:
                visit(pointer)

    # -- sub-schemas --------------------------------------------------------------------------

    def node(self, schema: Any, pointer: str, *, descend: bool) -> _Node:
        """A sub-schema's node: `descend` when it applies to a part of the instance, not to the instance."""
        node = _Node()
        saved = self.region, self.resource
        if descend:
            self.region = None
        try:
            self.fill(node, schema, pointer)
        finally:
            self.region, self.resource = saved
        return node

    def schemas(self, schema: Mapping[str, Any], name: str, pointer: str, *, descend: bool) -> list[_Node]:
        value = schema[name]
        if not isinstance(value, (list, tuple)) or (not value and name != "prefixItems"):
            raise self.fail(f"{pointer}/{name}", f"`{name}` must be a non-empty array of schemas", "e.g. [{...}]")
        return [self.node(item, f"{pointer}/{name}/{i}", descend=descend) for i, item in enumerate(value)]

    def schema_map(self, schema: Mapping[str, Any], name: str, pointer: str, *, descend: bool) -> dict[str, _Node]:
        value = schema[name]
        if not isinstance(value, Mapping):
            raise self.fail(f"{pointer}/{name}", f"`{name}` must be an object of schemas", "e.g. {name: {...}}")
        return {
            key: self.node(item, f"{pointer}/{name}/{_escape(key)}", descend=descend) for key, item in value.items()
        }

    def count(self, schema: Mapping[str, Any], name: str, pointer: str) -> int | None:
        if name not in schema:
            return None
        value = schema[name]
        if isinstance(value, float) and value.is_integer() and value >= 0:
            return int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(f"{pointer}/{name}", f"`{name}` must be an integer >= 0, got {_show(value)}", "e.g. 1")
        return value

    def number(self, schema: Mapping[str, Any], name: str, pointer: str) -> int | float | None:
        if name not in schema:
            return None
        value = schema[name]
        if not _is_number(value) or (isinstance(value, float) and not math.isfinite(value)):
            raise self.fail(f"{pointer}/{name}", f"`{name}` must be a finite number, got {_show(value)}", "e.g. 0")
        return value  # type: ignore[no-any-return]

    def names(self, value: Any, where: str) -> tuple[str, ...]:
        """An array of property names (required, dependentRequired)."""
        if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
            raise self.fail(where, f"must be an array of property names, got {_show(value)}", 'e.g. ["path"]')
        return tuple(value)

    def pattern(self, source: Any, where: str) -> Any:
        """An RE2 search set of one pattern (re2.Set's matcher is far cheaper per call than re2.compile's)."""
        if not isinstance(source, str):
            raise self.fail(where, f"a pattern must be a string, got {_show(source)}", 'e.g. "^[a-z]+$"')
        translated = _translate(source)
        try:
            re2.compile(translated, _RE2_OPTIONS)
            regex = re2.Set.SearchSet(_RE2_OPTIONS)
            regex.Add(translated)
            regex.Compile()
        except (re2.error, UnicodeEncodeError) as error:
            detail = error.args[0] if error.args else error
            detail = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else detail
            raise self.fail(
                where,
                f"pattern {source!r} is not valid RE2: {detail}",
                "patterns use RE2 syntax (linear time): no lookaround, no backreferences",
            ) from None
        return regex

    # -- one schema ---------------------------------------------------------------------------

    def fill(self, node: _Node, schema: Any, pointer: str) -> None:
        """Compile `schema` into `node`."""
        if schema is True or schema is False:
            node.check = node.accepts = _true if schema else _false
            if not schema:
                node.explain = _explain_false
            return
        if not isinstance(schema, Mapping):
            raise self.fail(pointer, f"a schema must be an object or a boolean, got {_show(schema)}", "e.g. {}")
        if pointer and _has_own_id(schema):
            self.resource = True
        for name in ("$dynamicRef", "$recursiveRef"):
            if name in schema:
                raise self.fail(f"{pointer}/{name}", f"`{name}` is not supported", "use $ref to a local definition")
        for name in ("$defs", "definitions"):
            if name in schema:
                if not isinstance(schema[name], Mapping):
                    raise self.fail(f"{pointer}/{name}", f"`{name}` must be an object of schemas", "e.g. {Name: {...}}")
                for key in schema[name]:
                    if not self.resource:  # compiled now so that its errors surface, used when referenced
                        self.target(f"{pointer}/{name}/{_escape(key)}")

        rules: list[SchemaCheck] = []
        names = self.types(schema, pointer)
        family_types = {"string", "number", "integer", "object", "array"}
        single = names[0] if names is not None and len(names) == 1 and names[0] in family_types else None
        families = [
            self.string_rule(schema, pointer, names if single == "string" else None),
            self.number_rule(schema, pointer, names if single in ("number", "integer") else None),
            self.object_rule(schema, pointer, names if single == "object" else None),
            self.array_rule(schema, pointer, names if single == "array" else None),
        ]
        fused = any(family is not None and family[1] for family in families)
        enum = self.enum_rule(schema, pointer)
        if names is not None:
            test = _type_test(names)
            node.accepts = test
            only_strings = enum is not None and enum[1] and names == ("string",)
            if not fused and not only_strings:
                rules.append((test, _type_explainer(test, names)))
                self.type_checks[test] = names
        if enum is not None:
            rules.append(enum[0])
        rules.extend(family[0] for family in families if family is not None)
        rules.extend(self.applicator_rules(schema, pointer, node))
        only = self.type_checks.get(rules[0][0]) if len(rules) == 1 else None
        if only is not None:
            node.names, node.sure = only, frozenset(cls for name in only for cls in _SURE[name])
        node.check = _all([check for check, _ in rules])
        node.explain = _explainer(rules)

    def types(self, schema: Mapping[str, Any], pointer: str) -> tuple[str, ...] | None:
        if "type" not in schema:
            return None
        declared = schema["type"]
        names = (declared,) if isinstance(declared, str) else declared
        if not isinstance(names, (list, tuple)) or not names or not all(name in _TYPE_WORDS for name in names):
            raise self.fail(
                f"{pointer}/type",
                f"`type` must be a JSON type or a non-empty array of them, got {json.dumps(declared, default=str)}",
                f"use {', '.join(_TYPE_WORDS)}",
            )
        return tuple(names)

    def enum_rule(self, schema: Mapping[str, Any], pointer: str) -> tuple[SchemaCheck, bool] | None:
        """The rule of enum and const together, and whether it only admits strings."""
        if "enum" not in schema and "const" not in schema:
            return None
        checks: list[Check] = []
        texts: list[str] = []
        strings = True
        for name in ("enum", "const"):
            if name not in schema:
                continue
            members = schema[name] if name == "enum" else [schema[name]]
            if not isinstance(members, (list, tuple)):
                raise self.fail(f"{pointer}/enum", "`enum` must be an array of values", 'e.g. ["read", "write"]')
            texts.append(f"is not {_literal(members[0])}" if name == "const" else f"is not one of {_literal(members)}")
            strings = strings and all(isinstance(member, str) for member in members)
            checks.append(_member_test(members))
        check = _all(checks)
        text = " and ".join(texts)

        def explain(value: Any, path: str, _depth: int, out: list[str]) -> None:
            out.append(f"{path}: {_show(value)} {text}")

        return (check, explain), strings

    # -- families: the keywords of one JSON type, in one closure ------------------------------

    def string_rule(self, schema: Mapping[str, Any], pointer: str, names: tuple[str, ...] | None) -> Any:
        low, high = self.count(schema, "minLength", pointer), self.count(schema, "maxLength", pointer)
        source = schema.get("pattern")
        search = _matcher(self.pattern(source, f"{pointer}/pattern")) if "pattern" in schema else None
        if low is None and high is None and search is None:
            return None
        lo, hi, other = low or 0, math.inf if high is None else high, names is None

        def check(value: Any, _depth: int) -> bool:
            if not isinstance(value, str):
                return other
            return lo <= len(value) <= hi and (search is None or search(value))

        def explain(value: Any, path: str, _depth: int, out: list[str]) -> None:
            if not isinstance(value, str):
                _type_message(value, path, names, out)
                return
            size = len(value)
            if size < lo:
                out.append(f"{path}: {_show(value)} is shorter than the minimum length {lo}")
            if size > hi:
                out.append(f"{path}: {_show(value)} is longer than the maximum length {hi}")
            if search is not None and not search(value):
                out.append(f"{path}: {_show(value)} does not match the pattern {_literal(source)}")

        return (check, explain), not other

    def number_rule(self, schema: Mapping[str, Any], pointer: str, names: tuple[str, ...] | None) -> Any:
        bounds: list[tuple[int | float, str]] = []  # (bound, one of min, max, xmin, xmax)
        for name, kind in (("minimum", "min"), ("maximum", "max")):
            bound = self.number(schema, name, pointer)
            exclusive_name = f"exclusive{name.title()}"
            exclusive = schema.get(exclusive_name)
            if isinstance(exclusive, bool):  # draft-04: a flag on minimum/maximum
                if exclusive and bound is not None:
                    kind = f"x{kind}"
            elif exclusive_name in schema:
                bounds.append((self.number(schema, exclusive_name, pointer), f"x{kind}"))  # type: ignore[arg-type]
            if bound is not None:
                bounds.append((bound, kind))
        divisor = self.number(schema, "multipleOf", pointer)
        if divisor is not None and divisor <= 0:
            raise self.fail(f"{pointer}/multipleOf", "`multipleOf` must be more than 0", "e.g. 1 or 0.01")
        if not bounds and divisor is None:
            return None
        entry = _is_integer if names == ("integer",) else _is_number
        other = names is None
        lo = max((bound for bound, kind in bounds if kind == "min"), default=-math.inf)
        hi = min((bound for bound, kind in bounds if kind == "max"), default=math.inf)
        xlo = max((bound for bound, kind in bounds if kind == "xmin"), default=-math.inf)
        xhi = min((bound for bound, kind in bounds if kind == "xmax"), default=math.inf)
        multiple = _multiple_test(divisor) if divisor is not None else None

        def check(value: Any, _depth: int) -> bool:
            if type(value) is not int and not entry(value):
                return other
            return lo <= value <= hi and xlo < value < xhi and (multiple is None or multiple(value))

        def check_range(value: Any, _depth: int) -> bool:
            if type(value) is not int and not entry(value):
                return other
            return lo <= value <= hi  # type: ignore[no-any-return]

        def explain(value: Any, path: str, _depth: int, out: list[str]) -> None:
            if not entry(value):
                _type_message(value, path, names, out)
                return
            for bound, kind in bounds:
                if not _BOUND_TESTS[kind](value, bound):
                    out.append(f"{path}: {_show(value)} is {_BOUND_WORDS[kind]} {_show(bound)}")
            if multiple is not None and not multiple(value):
                out.append(f"{path}: {_show(value)} is not a multiple of {_show(divisor)}")

        simple = multiple is None and xlo == -math.inf and xhi == math.inf
        return (check_range if simple else check, explain), not other

    def object_rule(self, schema: Mapping[str, Any], pointer: str, names: tuple[str, ...] | None) -> Any:
        has = schema.__contains__
        properties = self.schema_map(schema, "properties", pointer, descend=True) if has("properties") else {}
        patterns: list[tuple[Callable[[str], bool], _Node]] = []
        if has("patternProperties"):
            for source, item in self.schema_map(schema, "patternProperties", pointer, descend=True).items():
                where = f"{pointer}/patternProperties/{_escape(source)}"
                patterns.append((_matcher(self.pattern(source, where)), item))
        extra: _Node | None = None
        if has("additionalProperties"):
            extra = self.node(schema["additionalProperties"], f"{pointer}/additionalProperties", descend=True)
        if has("unevaluatedProperties"):
            where = f"{pointer}/unevaluatedProperties"
            self.refuse_unevaluated(schema, where)
            unevaluated = self.node(schema["unevaluatedProperties"], where, descend=True)
            extra = extra or unevaluated  # next to additionalProperties every property is evaluated already
        key_node = None
        if has("propertyNames"):
            key_node = self.node(schema["propertyNames"], f"{pointer}/propertyNames", descend=True)
        required = self.names(schema["required"], f"{pointer}/required") if has("required") else ()
        low, high = self.count(schema, "minProperties", pointer), self.count(schema, "maxProperties", pointer)
        dependent_required: list[tuple[str, tuple[str, ...]]] = []
        dependent_schemas: list[tuple[str, _Node]] = []
        for name in ("dependentRequired", "dependentSchemas", "dependencies"):
            if not has(name):
                continue
            if not isinstance(schema[name], Mapping):
                raise self.fail(f"{pointer}/{name}", f"`{name}` must be an object", 'e.g. {"a": ["b"]}')
            for key, item in schema[name].items():
                where = f"{pointer}/{name}/{_escape(key)}"
                if name == "dependentRequired" or (name == "dependencies" and isinstance(item, (list, tuple))):
                    dependent_required.append((key, self.names(item, where)))
                else:
                    dependent_schemas.append((key, self.node(item, where, descend=False)))
        if extra is not None and extra.check is _true:
            extra = None  # additionalProperties: true says nothing
        rules = properties or patterns or extra or key_node or required or dependent_required or dependent_schemas
        if not rules and low is None and high is None:
            return None
        lo, hi, other = low or 0, math.inf if high is None else high, names is None
        sized = low is not None or high is not None
        get = {key: item.check for key, item in properties.items()}.get
        entry = {key: (item.sure, item.check) for key, item in properties.items()}.get
        closed = extra is not None and extra.check is _false
        extra_check = None if extra is None or closed else extra.check
        extra_sure = extra.sure if extra is not None else frozenset()
        walk = bool(properties) or closed or extra_check is not None
        simple = not patterns and key_node is None and not dependent_required and not dependent_schemas

        def check(value: Any, depth: int) -> bool:
            if not isinstance(value, dict) and not _is_object(value):
                return other
            for key in required:
                if key not in value:
                    return False
            if sized and not lo <= len(value) <= hi:
                return False
            if not simple:
                return check_rest(value, depth)
            if walk:
                depth += 1
                for key, item in value.items():
                    found = entry(key)
                    if found is None:
                        if closed:
                            return False
                        if extra_check is not None and type(item) not in extra_sure and not extra_check(item, depth):
                            return False
                    elif type(item) not in found[0] and not found[1](item, depth):
                        return False
            return True

        def check_rest(value: Any, depth: int) -> bool:
            inner = depth + 1
            for key, item in value.items():
                test = get(key)
                matched = test is not None
                if test is not None and not test(item, inner):
                    return False
                for search, pattern_node in patterns:
                    if isinstance(key, str) and search(key):
                        matched = True
                        if not pattern_node.check(item, inner):
                            return False
                if not matched and (closed or (extra_check is not None and not extra_check(item, inner))):
                    return False
                if key_node is not None and not key_node.check(key, inner):
                    return False
            for key, needed in dependent_required:
                if key in value and not all(name in value for name in needed):
                    return False
            return all(key not in value or item.check(value, depth) for key, item in dependent_schemas)

        def explain(value: Any, path: str, depth: int, out: list[str]) -> None:
            if not _is_object(value):
                _type_message(value, path, names, out)
                return
            for key in required:
                if key not in value:
                    out.append(f"{path}: missing the required property {_show(key)}")
            size = len(value)
            if size < lo:
                out.append(f"{path}: has {size} properties, fewer than the minimum {lo}")
            if size > hi:
                out.append(f"{path}: has {size} properties, more than the maximum {hi}")
            inner = depth + 1
            for key, item in value.items():
                if len(out) >= MAX_MESSAGES:
                    return
                found = properties.get(key)
                applied = [] if found is None else [found]
                applied.extend(node for search, node in patterns if isinstance(key, str) and search(key))
                if not applied and closed:
                    out.append(f"{path}: the property {_show(key)} is not allowed")
                elif not applied and extra is not None:
                    applied.append(extra)
                failing = [node for node in applied if _fails(node.check, item, inner)]
                if failing:  # the path is only built for a value that fails
                    where = _child(path, key) if isinstance(key, str) else f"{path}[{_show(key)}]"
                    for node in failing:
                        node.explain(item, where, inner, out)
                if key_node is not None and _fails(key_node.check, key, inner):
                    key_node.explain(key, f"{path}: the property name {_show(key)}", inner, out)
            for key, needed in dependent_required:
                for name in needed:
                    if key in value and name not in value:
                        out.append(f"{path}: missing the property {_show(name)}, required with {_show(key)}")
            for key, item in dependent_schemas:
                if key in value:
                    _explain_if(item, value, path, depth, out)

        return (check, explain), not other

    def array_rule(self, schema: Mapping[str, Any], pointer: str, names: tuple[str, ...] | None) -> Any:
        has = schema.__contains__
        prefix: list[_Node] = []
        rest: _Node | None = None
        items = schema.get("items")
        if isinstance(items, (list, tuple)):  # draft-07: items as an array is prefixItems
            if has("prefixItems"):
                raise self.fail(f"{pointer}/items", "`items` is an array next to `prefixItems`", "keep prefixItems")
            prefix = self.schemas(schema, "items", pointer, descend=True)
        elif has("prefixItems"):
            prefix = self.schemas(schema, "prefixItems", pointer, descend=True)
        if has("items") and not isinstance(items, (list, tuple)):
            rest = self.node(items, f"{pointer}/items", descend=True)
        elif has("additionalItems"):
            additional = self.node(schema["additionalItems"], f"{pointer}/additionalItems", descend=True)
            rest = additional if prefix else None  # draft-07 ignores it without an items array
        if has("unevaluatedItems"):
            where = f"{pointer}/unevaluatedItems"
            self.refuse_unevaluated(schema, where, also=("contains",))
            unevaluated = self.node(schema["unevaluatedItems"], where, descend=True)
            rest = rest or unevaluated
        contains = self.node(schema["contains"], f"{pointer}/contains", descend=True) if has("contains") else None
        least, most = self.count(schema, "minContains", pointer), self.count(schema, "maxContains", pointer)
        low, high = self.count(schema, "minItems", pointer), self.count(schema, "maxItems", pointer)
        unique = schema.get("uniqueItems", False)
        if not isinstance(unique, bool):
            raise self.fail(f"{pointer}/uniqueItems", "`uniqueItems` must be true or false", "e.g. true")
        if not (prefix or rest or contains or unique) and low is None and high is None:
            return None
        lo, hi, other = low or 0, math.inf if high is None else high, names is None
        at_least = 1 if least is None else least
        at_most = math.inf if most is None else most
        prefix_checks = tuple(item.check for item in prefix)
        start = len(prefix)
        rest_check = rest.check if rest is not None else None
        rest_sure = rest.sure if rest is not None else frozenset()

        def check(value: Any, depth: int) -> bool:
            if not isinstance(value, (list, tuple)):
                return other
            size = len(value)
            if not lo <= size <= hi:
                return False
            depth += 1
            for test, item in zip(prefix_checks, value, strict=False):  # an array may be shorter
                if not test(item, depth):
                    return False
            if rest_check is not None:
                for item in value[start:] if start else value:
                    if type(item) not in rest_sure and not rest_check(item, depth):
                        return False
            if unique and _first_duplicate(value) is not None:
                return False
            if contains is not None:
                found = sum(1 for item in value if contains.check(item, depth))
                return at_least <= found <= at_most
            return True

        def explain(value: Any, path: str, depth: int, out: list[str]) -> None:
            if not isinstance(value, (list, tuple)):
                _type_message(value, path, names, out)
                return
            size = len(value)
            if size < lo:
                out.append(f"{path}: has {size} items, fewer than the minimum {lo}")
            if size > hi:
                out.append(f"{path}: has {size} items, more than the maximum {hi}")
            for index, item in enumerate(value):
                if len(out) >= MAX_MESSAGES:
                    return
                _explain_if(prefix[index] if index < start else rest, item, f"{path}[{index}]", depth + 1, out)
            if unique:
                try:
                    pair = _first_duplicate(value)
                except _TooDeep:
                    raise _TooDeep(path) from None
                if pair is not None:
                    out.append(f"{path}: items {pair[0]} and {pair[1]} are equal; the items must be unique")
            if contains is not None:
                found = sum(1 for item in value if contains.check(item, depth + 1))
                if found < at_least:
                    out.append(f"{path}: {found} items match `contains`, fewer than the minimum {at_least}")
                if found > at_most:
                    out.append(f"{path}: {found} items match `contains`, more than the maximum {at_most}")

        return (check, explain), not other

    def refuse_unevaluated(self, schema: Mapping[str, Any], where: str, also: tuple[str, ...] = ()) -> None:
        found = [name for name in (*_IN_PLACE, *also) if name in schema]
        if found:
            raise self.fail(
                where,
                f"`{where.rsplit('/', 1)[1]}` next to {', '.join(found)} is not supported",
                "use additionalProperties/items, or list the properties/items in this schema itself",
            )

    # -- in-place applicators -----------------------------------------------------------------

    def applicator_rules(self, schema: Mapping[str, Any], pointer: str, node: _Node) -> list[SchemaCheck]:
        rules: list[SchemaCheck] = []
        if "$ref" in schema:
            target = self.reference(schema["$ref"], pointer)
            rules.append(_ref_rule(target))
            if "type" not in schema:
                node.accepts = lambda value, depth: target.accepts(value, depth)
        if "allOf" in schema:
            for item in self.schemas(schema, "allOf", pointer, descend=False):
                rules.append((item.check, item.explain))
        if "anyOf" in schema:
            branches = self.schemas(schema, "anyOf", pointer, descend=False)
            if all(branch.names is not None for branch in branches):
                # anyOf of bare types (pydantic's Optional[str]) is one type test.
                union = tuple(dict.fromkeys(name for branch in branches for name in branch.names or ()))
                test = _type_test(union)
                rules.append((test, _type_explainer(test, union)))
                self.type_checks[test] = union
                if "type" not in schema:
                    node.accepts = test
            else:
                rules.append(_any_rule(branches))
        if "oneOf" in schema:
            rules.append(_one_rule(self.schemas(schema, "oneOf", pointer, descend=False)))
        if "not" in schema:
            rules.append(_not_rule(self.node(schema["not"], f"{pointer}/not", descend=False)))
        conditional = {
            name: self.node(schema[name], f"{pointer}/{name}", descend=False)
            for name in ("if", "then", "else")
            if name in schema
        }
        if "if" in conditional and ("then" in conditional or "else" in conditional):
            rules.append(_if_rule(conditional["if"], conditional.get("then"), conditional.get("else")))
        return rules


def _has_own_id(schema: Any) -> bool:
    """True for a sub-schema that starts a resource of its own (draft-07's `"$id": "#name"` is an anchor)."""
    found = schema.get("$id") if isinstance(schema, Mapping) else None
    return isinstance(found, str) and not found.startswith("#")


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _literal(value: Any) -> str:
    """A value of the schema as JSON, shortened."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 100 else f"{text[:100]}..."


def _type_message(value: Any, path: str, names: tuple[str, ...] | None, out: list[str]) -> None:
    if names is not None:
        out.append(f"{path}: {_show(value)} is not {' or '.join(_TYPE_WORDS[name] for name in names)}")


def _type_explainer(test: Check, names: tuple[str, ...]) -> Explain:
    def explain(value: Any, path: str, depth: int, out: list[str]) -> None:
        if not test(value, depth):
            _type_message(value, path, names, out)

    return explain


def _explain_false(value: Any, path: str, _depth: int, out: list[str]) -> None:
    out.append(f"{path}: no value is allowed here (the schema is false), got {_show(value)}")


def _fails(check: Check, value: Any, depth: int) -> bool:
    """True when a check refuses; a check that gives up too deep refuses too (its explanation finds where)."""
    try:
        return not check(value, depth)
    except _TooDeep:
        return True


def _explain_if(node: _Node | None, value: Any, path: str, depth: int, out: list[str]) -> None:
    if node is not None and _fails(node.check, value, depth):
        node.explain(value, path, depth, out)


def _explainer(rules: list[SchemaCheck]) -> Explain:
    def explain(value: Any, path: str, depth: int, out: list[str]) -> None:
        for check, describe in rules:
            if len(out) >= MAX_MESSAGES:
                return
            if _fails(check, value, depth):
                describe(value, path, depth, out)

    return explain


def _first_duplicate(items: Any) -> tuple[int, int] | None:
    """The indexes of the first two JSON-equal items, or None; _TooDeep on a hostile nesting."""
    seen: dict[Any, int] = {}
    for index, item in enumerate(items):
        earlier = seen.setdefault(_key(item, MAX_DEPTH), index)
        if earlier != index:
            return earlier, index
    return None


def _ref_rule(target: _Node) -> SchemaCheck:
    def check(value: Any, depth: int) -> bool:
        if depth > MAX_DEPTH:
            raise _TooDeep("$")  # raised, not False: a `not` around it must not turn it into a pass
        return target.check(value, depth)

    def explain(value: Any, path: str, depth: int, out: list[str]) -> None:
        if depth > MAX_DEPTH:
            raise _TooDeep(path)
        target.explain(value, path, depth, out)

    return check, explain


def _any_rule(branches: list[_Node]) -> SchemaCheck:
    checks = tuple(branch.check for branch in branches)

    def check(value: Any, depth: int) -> bool:
        for test in checks:  # noqa: SIM110 (any() over a generator costs a frame per call)
            if test(value, depth):
                return True
        return False

    def explain(value: Any, path: str, depth: int, out: list[str]) -> None:
        # Optional[X] is anyOf [X, null]: when one branch has the value's type, its problems say why.
        typed = [branch for branch in branches if branch.accepts(value, depth)]
        if len(typed) == 1:
            typed[0].explain(value, path, depth, out)
        else:
            out.append(f"{path}: {_show(value)} is valid against none of the schemas of `anyOf`")

    return check, explain


def _one_rule(branches: list[_Node]) -> SchemaCheck:
    checks = tuple(branch.check for branch in branches)

    def valid(value: Any, depth: int) -> list[int]:
        return [index for index, branch in enumerate(branches) if branch.check(value, depth)]

    def check(value: Any, depth: int) -> bool:
        found = 0
        for test in checks:
            if test(value, depth):
                found += 1
                if found > 1:
                    return False
        return found == 1

    def explain(value: Any, path: str, depth: int, out: list[str]) -> None:
        passed = valid(value, depth)
        typed = [branch for branch in branches if branch.accepts(value, depth)]
        if not passed and len(typed) == 1:
            typed[0].explain(value, path, depth, out)
        elif not passed:
            out.append(f"{path}: {_show(value)} is valid against none of the schemas of `oneOf`")
        else:
            which = ", ".join(str(index) for index in passed)
            out.append(f"{path}: {_show(value)} is valid against the schemas {which} of `oneOf`, not just one")

    return check, explain


def _not_rule(inner: _Node) -> SchemaCheck:
    def check(value: Any, depth: int) -> bool:
        return not inner.check(value, depth)

    def explain(value: Any, path: str, depth: int, out: list[str]) -> None:
        try:
            inner.check(value, depth)
        except _TooDeep:
            inner.explain(value, path, depth, [])  # raises again, naming where
            raise _TooDeep(path) from None
        out.append(f"{path}: {_show(value)} is valid against the schema of `not`, which forbids it")

    return check, explain


def _if_rule(condition: _Node, then: _Node | None, otherwise: _Node | None) -> SchemaCheck:
    def branch(value: Any, depth: int) -> _Node | None:
        return then if condition.check(value, depth) else otherwise

    def check(value: Any, depth: int) -> bool:
        chosen = branch(value, depth)
        return chosen is None or chosen.check(value, depth)

    def explain(value: Any, path: str, depth: int, out: list[str]) -> None:
        _explain_if(branch(value, depth), value, path, depth, out)

    return check, explain


_HEX: Final = frozenset("0123456789abcdefABCDEF")


def _translate(pattern: str) -> str:
    """An ECMA-262 pattern in RE2 syntax: `\\uXXXX` (and surrogate pairs) and `\\u{X}` become `\\x{X}`."""
    if "\\u" not in pattern:
        return pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char != "\\" or i + 1 == len(pattern):
            out.append(char)
            i += 1
            continue
        if pattern[i + 1] != "u":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        digits = pattern[i + 2 : i + 6]
        if pattern[i + 2 : i + 3] == "{" and "}" in pattern[i + 3 :]:
            end = pattern.index("}", i + 3)
            out.append(f"\\x{{{pattern[i + 3 : end]}}}")
            i = end + 1
        elif len(digits) == 4 and all(c in _HEX for c in digits):
            code = int(digits, 16)
            low = pattern[i + 8 : i + 12] if pattern[i + 6 : i + 8] == "\\u" else ""
            if 0xD800 <= code < 0xDC00 and len(low) == 4 and all(c in _HEX for c in low) and int(low, 16) >= 0xDC00:
                code = 0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00)
                i += 6
            out.append(f"\\x{{{code:X}}}")
            i += 6
        else:
            out.append(pattern[i : i + 2])  # left for RE2 to refuse, with its own message
            i += 2
    return "".join(out)
