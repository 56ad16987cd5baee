"""Cerberus document schemas compiled once into plain closures: the fast path of argument validation.

`compile_schema` turns a schema of the tools.py dialect (`ParameterValidator`: booleans are not
numbers, `regex` is an RE2 full match, `description` and `meta` are no-ops) into a
`FastValidator` that accepts and refuses exactly what Cerberus 1.3 accepts and refuses, and
returns the same normalised document (defaults filled in). Cerberus rebuilds child validators,
copies schemas and hashes them on every call; the closures here do none of that.

The compiled subset: type (string, integer, float, number, boolean, dict, list, or a list of
them), required, nullable, allowed, min, max, minlength, maxlength, empty, regex, schema,
allow_unknown (a bool), default, keysrules, valuesrules, description and meta. Anything else
(coerce, rename, the *of rules, dependencies, check_with, registry references, ...) makes
`compile_schema` return None so that the caller keeps Cerberus.

What Cerberus does, reproduced here (each was checked against Cerberus 1.3.8):
- normalisation runs before validation: a missing field with a `default` gets it, and so does a
  field whose value is None when it is not nullable; the default is then validated like a sent
  value, and it satisfies `required`; defaults apply inside nested dicts, to None items of a
  list with a `schema`, and to None values under `valuesrules`;
- a None value is valid exactly when the field is nullable: every other rule is skipped;
- `empty` only acts when the rule is written: `empty: true` on an empty value skips `allowed`,
  `minlength`, `maxlength` and `regex` (so an empty string passes `minlength: 3`), `empty: false`
  refuses it; without the rule an empty value meets those rules like any other;
- `allowed` on a list (or dict) requires every item (or key) to be allowed; membership is
  Python's `in`, so 1 matches True and NaN only matches itself;
- `min`/`max` compare with `<`/`>` whatever the type (strings compare, NaN never fails) and a
  comparison Python refuses (a string against a number) is no error;
- `minlength`/`maxlength` and `empty` look at the normalised value: defaults filled into a dict
  count;
- unknown fields are refused at every level unless allowed; a dict inherits the allow_unknown of
  the document around it unless it sets its own, while the items of a list and the values of
  `valuesrules` inherit the document's (a list field's own allow_unknown is ignored);
- a non-mapping document is refused (Cerberus raises DocumentError; the caller's fallback does).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from typing import Any, Final

import re2

from policyengine.values.frozen import thaw

__all__ = ["FastValidator", "compile_schema"]

# A check returns the normalised value, or _FAIL; a step is one validation rule's predicate.
Check = Callable[[Any], Any]
Step = Callable[[Any], bool]


class _Fail:
    """The sentinel a check returns for an invalid value (None is a valid normalised value)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<invalid>"


_FAIL: Final = _Fail()
_NO_DEFAULT: Final = object()


class _Unsupported(Exception):
    """A rule or constraint outside the compiled subset: the caller keeps Cerberus."""


_RULES: Final = frozenset(
    {
        "type",
        "required",
        "nullable",
        "allowed",
        "min",
        "max",
        "minlength",
        "maxlength",
        "empty",
        "regex",
        "schema",
        "allow_unknown",
        "default",
        "keysrules",
        "valuesrules",
        "description",
        "meta",
    }
)

# The types of ParameterValidator: (included, excluded) classes, as its TypeDefinitions say.
_TYPES: Final[dict[str, tuple[tuple[type, ...], tuple[type, ...]]]] = {
    "string": ((str,), ()),
    "integer": ((int,), (bool,)),
    "float": ((float, int), (bool,)),
    "number": ((int, float), (bool,)),
    "boolean": ((bool,), ()),
    "dict": ((Mapping,), ()),
    "list": ((Sequence,), (str,)),
}


# Exact built-in types answer the ABC questions (Mapping, Sequence, Sized, Iterable) without
# ABCMeta.__instancecheck__, which costs ~100 ns a call; other types still take the ABC path.
_ATOMS: Final = frozenset({str, int, float, bool, type(None)})
_CONTAINERS: Final = frozenset({str, list, dict})


def _is_mapping(value: Any) -> bool:
    kind = type(value)
    return kind is dict or (kind is not list and kind not in _ATOMS and isinstance(value, Mapping))


def _is_sequence(value: Any) -> bool:
    """A Sequence that is not a string: Cerberus's list type."""
    kind = type(value)
    if kind is list:
        return True
    return kind is not dict and kind not in _ATOMS and isinstance(value, Sequence) and not isinstance(value, str)


def _is_iterable(value: Any) -> bool:
    kind = type(value)
    return kind in _CONTAINERS or (kind not in _ATOMS and isinstance(value, Iterable))


def _is_sized(value: Any) -> bool:
    kind = type(value)
    return kind in _CONTAINERS or (kind not in _ATOMS and isinstance(value, Sized))


class FastValidator:
    """A compiled document schema: call it with a document to get (valid, normalised document)."""

    __slots__ = ("_check",)

    def __init__(self, check: Callable[[Mapping[Any, Any]], Any]) -> None:
        self._check = check

    def __call__(self, document: Mapping[Any, Any]) -> tuple[bool, dict[Any, Any] | None]:
        """Return (True, normalised plain copy) when Cerberus accepts the document, else (False, None)."""
        if type(document) is not dict and not isinstance(document, Mapping):
            return False, None
        try:
            result = self._check(document)
        except Exception:
            # Cerberus raises on the same input (a set `allowed` meeting a list, a string RE2
            # cannot encode); False sends the caller to Cerberus, which raises it there.
            return False, None
        if result is _FAIL:
            return False, None
        return True, result


def compile_schema(schema: Mapping[str, Any], *, allow_unknown: bool = False) -> FastValidator | None:
    """Compile a Cerberus document schema once; None when it uses a rule outside the subset."""
    if not isinstance(schema, Mapping) or not isinstance(allow_unknown, bool):
        return None
    try:
        check = _compile_document(schema, allow_unknown, in_keys=False)
    except _Unsupported:
        return None
    return FastValidator(check)


def _compile_document(schema: Any, allow_unknown: bool, *, in_keys: bool) -> Callable[[Mapping[Any, Any]], Any]:
    """The check of a (sub-)document: its fields, unknown fields, defaults and required fields."""
    if not isinstance(schema, Mapping):
        raise _Unsupported
    fields: dict[str, Check] = {}
    defaults: list[tuple[str, Any]] = []
    required: list[str] = []
    for key, rules in schema.items():
        # Registry references and odd field names are rare; Cerberus handles them.
        if not isinstance(key, str):
            raise _Unsupported
        check, default, is_required = _compile_rules(rules, allow_unknown, in_keys=in_keys)
        fields[key] = check
        if default is not _NO_DEFAULT:
            defaults.append((key, default))
        elif is_required:
            # A field with a default is never missing after normalisation.
            required.append(key)
    get = fields.get
    # Scalars go in as they are; containers are copied so that no two documents share one.
    default_items = tuple((key, value, isinstance(value, (dict, list))) for key, value in defaults)
    required_keys = tuple(required)

    def check_document(document: Mapping[Any, Any]) -> Any:
        out: dict[Any, Any] = {}
        for key, value in document.items():
            field = get(key)
            if field is None:
                if not allow_unknown:
                    return _FAIL
                out[key] = value
                continue
            value = field(value)
            if value is _FAIL:
                return _FAIL
            out[key] = value
        for key, default, mutable in default_items:
            if key not in out:
                if default is _FAIL:
                    return _FAIL
                # A plain deep copy: no two documents share a default's containers.
                out[key] = thaw(default) if mutable else default
        for key in required_keys:
            if key not in out:
                return _FAIL
        return out

    return check_document


def _compile_rules(rules: Any, allow_unknown: bool, *, in_keys: bool) -> tuple[Check, Any, bool]:
    """A field's check (normalise, then validate), its normalised default, and whether it is required."""
    if not isinstance(rules, Mapping):
        raise _Unsupported
    for name in rules:
        if name not in _RULES:
            raise _Unsupported
    if in_keys and "default" in rules:
        # Cerberus renames a key whose normalised form differs; keys never need that here.
        raise _Unsupported
    nullable = _flag(rules, "nullable")
    is_required = _flag(rules, "required")
    child_unknown = rules.get("allow_unknown", allow_unknown)
    if not isinstance(child_unknown, bool):
        raise _Unsupported
    if "description" in rules and not isinstance(rules["description"], str):
        raise _Unsupported
    if "meta" in rules and rules["meta"] is None:
        # Cerberus's rule schema for meta is {}, which refuses None.
        raise _Unsupported
    types = _types(rules)
    may_map = types is None or "dict" in types
    may_seq = types is None or "list" in types

    on_map = _mapping_normaliser(rules, allow_unknown, child_unknown, may_map, may_seq, in_keys)
    on_seq: Check | None = None
    if "schema" in rules and may_seq:
        # The items of a list inherit the document's allow_unknown, not the list field's.
        on_seq = _sequence_normaliser(_compile_rules(rules["schema"], allow_unknown, in_keys=in_keys)[0])
    elif "schema" in rules and not isinstance(rules["schema"], Mapping):
        raise _Unsupported

    empty: bool | None = None
    if "empty" in rules:
        empty = _flag(rules, "empty")
    kept, skippable = _value_steps(rules)
    inner = _assemble(nullable, types, on_map, on_seq, empty, kept, skippable)

    default: Any = _NO_DEFAULT
    if "default" in rules:
        try:
            default = inner(thaw(rules["default"]))
        except Exception:
            # Cerberus raises whenever it uses this default; refusing defers to it.
            default = _FAIL
    if default is _NO_DEFAULT or nullable:
        return inner, default, is_required
    # Normalisation replaces a None value of a non-nullable field by its default.
    filled = default

    def check_with_default(value: Any) -> Any:
        if value is None:
            return filled if filled is _FAIL else thaw(filled)
        return inner(value)

    return check_with_default, default, is_required


def _flag(rules: Mapping[str, Any], name: str) -> bool:
    value = rules.get(name, False)
    if not isinstance(value, bool):
        raise _Unsupported
    return value


def _types(rules: Mapping[str, Any]) -> tuple[str, ...] | None:
    if "type" not in rules:
        return None
    declared = rules["type"]
    names = (declared,) if isinstance(declared, str) else declared
    if not isinstance(names, (list, tuple)) or not names:
        raise _Unsupported
    for name in names:
        if not isinstance(name, str) or name not in _TYPES:
            raise _Unsupported
    return tuple(names)


def _mapping_normaliser(
    rules: Mapping[str, Any], allow_unknown: bool, child_unknown: bool, may_map: bool, may_seq: bool, in_keys: bool
) -> Check | None:
    """How a dict value is normalised and its content validated (keysrules, valuesrules, schema)."""
    key_check = value_check = doc_check = None
    if "keysrules" in rules:
        key_check = _compile_rules(rules["keysrules"], allow_unknown, in_keys=True)[0]
    if "valuesrules" in rules:
        value_check = _compile_rules(rules["valuesrules"], allow_unknown, in_keys=in_keys)[0]
    if "schema" in rules and may_map:
        doc_check = _compile_document(rules["schema"], child_unknown, in_keys=in_keys)
        if value_check is not None:
            # Cerberus validates the values after the schema has filled defaults in; fusing the
            # two passes would check the values too early.
            raise _Unsupported
    elif "schema" in rules and not may_seq:
        raise _Unsupported
    copy = "allow_unknown" in rules or "schema" in rules
    if not may_map or (key_check is None and value_check is None and not copy):
        return None

    def normalise_mapping(value: Any) -> Any:
        if value_check is not None:
            values: dict[Any, Any] = {}
            for key, item in value.items():
                item = value_check(item)
                if item is _FAIL:
                    return _FAIL
                values[key] = item
            value = values
        if doc_check is not None:
            value = doc_check(value)
            if value is _FAIL:
                return _FAIL
        elif copy:
            # Cerberus normalises the dict through an empty schema: a copy.
            value = dict(value)
        if key_check is not None:
            for key in value:
                if key_check(key) is _FAIL:
                    return _FAIL
        return value

    return normalise_mapping


def _sequence_normaliser(item_check: Check) -> Check:
    def normalise_sequence(value: Sequence[Any]) -> Any:
        items: list[Any] = []
        for item in value:
            item = item_check(item)
            if item is _FAIL:
                return _FAIL
            items.append(item)
        return items

    return normalise_sequence


def _value_steps(rules: Mapping[str, Any]) -> tuple[tuple[Step, ...], tuple[Step, ...]]:
    """The value rules as predicates: those an empty value with `empty: true` still meets, and the rest."""
    kept: list[Step] = []
    skippable: list[Step] = []
    for name in rules:
        constraint = rules[name]
        if name == "allowed":
            skippable.append(_allowed(constraint))
        elif name in ("min", "max"):
            kept.append(_bound(constraint, lower=name == "min"))
        elif name in ("minlength", "maxlength"):
            skippable.append(_length(constraint, lower=name == "minlength"))
        elif name == "regex":
            skippable.append(_regex(constraint))
    return tuple(kept), tuple(skippable)


def _allowed(constraint: Any) -> Step:
    if isinstance(constraint, (set, frozenset)):
        allowed: Any = frozenset(constraint)
    elif isinstance(constraint, (list, tuple)):
        # A tuple keeps list membership: identity or ==, no hashing of the value.
        allowed = tuple(constraint)
    else:
        raise _Unsupported

    def check_allowed(value: Any) -> bool:
        if _is_iterable(value) and not isinstance(value, str):
            return all(item in allowed for item in value)
        return value in allowed

    return check_allowed


def _bound(constraint: Any, *, lower: bool) -> Step:
    if constraint is None or not isinstance(constraint, (int, float, str)):
        raise _Unsupported

    def check_min(value: Any) -> bool:
        try:
            return not value < constraint
        except TypeError:
            return True

    def check_max(value: Any) -> bool:
        try:
            return not value > constraint
        except TypeError:
            return True

    return check_min if lower else check_max


def _length(constraint: Any, *, lower: bool) -> Step:
    if not isinstance(constraint, int) or isinstance(constraint, bool):
        raise _Unsupported

    def check_minlength(value: Any) -> bool:
        return not (_is_iterable(value) and len(value) < constraint)

    def check_maxlength(value: Any) -> bool:
        return not (_is_iterable(value) and len(value) > constraint)

    return check_minlength if lower else check_maxlength


def _regex(constraint: Any) -> Step:
    if not isinstance(constraint, str):
        raise _Unsupported
    try:
        fullmatch = re2.compile(constraint).fullmatch
    except Exception:
        raise _Unsupported from None

    def check_regex(value: Any) -> bool:
        return not isinstance(value, str) or fullmatch(value) is not None

    return check_regex


def _type_test(types: tuple[str, ...]) -> Step:
    if types == ("dict",):
        return _is_mapping
    if types == ("list",):
        return _is_sequence
    # The only exclusions are bool (from integer, float, number) and str (from list), and only
    # `boolean` and `string` take them back: one isinstance over the union answers the rest.
    classes = [cls for name in types for cls in _TYPES[name][0]]
    included = tuple(sorted(set(classes), key=lambda cls: (isinstance(cls, abc.ABCMeta), classes.index(cls))))
    bool_ok = "boolean" in types
    str_ok = "string" in types

    def test(value: Any) -> bool:
        return (
            isinstance(value, included)
            and (bool_ok or not isinstance(value, bool))
            and (str_ok or not isinstance(value, str))
        )

    return test


def _assemble(
    nullable: bool,
    types: tuple[str, ...] | None,
    on_map: Check | None,
    on_seq: Check | None,
    empty: bool | None,
    kept: tuple[Step, ...],
    skippable: tuple[Step, ...],
) -> Check:
    """The check of one value, specialised for the common shapes (a typed scalar, maybe nullable)."""
    none_result: Any = None if nullable else _FAIL
    if on_map is None and on_seq is None and empty is None and not kept and not skippable:
        if types is None:
            return lambda value: none_result if value is None else value
        if len(types) == 1 and types[0] not in ("dict", "list"):
            included, excluded = _TYPES[types[0]]

            def check_scalar(value: Any) -> Any:
                if value is None:
                    return none_result
                if isinstance(value, included) and not isinstance(value, excluded):
                    return value
                return _FAIL

            return check_scalar

    type_test = None if types is None else _type_test(types)
    steps = kept + skippable

    def check_value(value: Any) -> Any:
        if value is None:
            return none_result
        if type_test is not None and not type_test(value):
            # A wrong type drops every other rule, so normalisation cannot change the verdict.
            return _FAIL
        if on_map is not None and _is_mapping(value):
            value = on_map(value)
            if value is _FAIL:
                return _FAIL
        elif on_seq is not None and _is_sequence(value):
            value = on_seq(value)
            if value is _FAIL:
                return _FAIL
        todo = steps
        if empty is not None and _is_sized(value) and len(value) == 0:
            if not empty:
                return _FAIL
            todo = kept
        for step in todo:
            if not step(value):
                return _FAIL
        return value

    return check_value
