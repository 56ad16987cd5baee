"""Cerberus rules as JSON Schema (draft 2020-12), for tool specs and the exported schemas/*.yaml files.

Cerberus rules and their JSON Schema form:
- `type` (a name or a list) -> `type`; `nullable` adds "null"; float and number -> number;
- `allowed` -> `enum` (on a list: the enum of its items); `forbidden` -> `not: {enum}`;
- `min`/`max` -> `minimum`/`maximum`; `minlength`/`maxlength` -> `minLength`/`maxLength` on
  strings, `minItems`/`maxItems` on lists, `minProperties`/`maxProperties` on dicts;
  `empty: false` -> a minimum length of 1;
- `regex` -> `pattern`, anchored, because Cerberus matches the whole string;
- `schema` -> `properties` (dict) or `items` (list); `keysrules` -> `propertyNames`;
  `valuesrules` -> `additionalProperties`; fields not in a dict's `schema` ->
  `additionalProperties: false` unless `allow_unknown`;
- `required` -> the parent's `required`; `dependencies` on names -> `dependentRequired`;
  `dependencies` with values -> `if {required: [field]} then {the values}`; `excludes` ->
  `not {required: [field, other]}` per pair;
- `anyof`/`oneof`/`allof`/`noneof` -> `anyOf`/`oneOf`/`allOf`/`not anyOf`; `items` -> `prefixItems`;
- `default` -> `default`; `meta.description` (or a tool parameter's `description`) -> `description`.
Rules that only normalise or call code (`coerce`, `rename`, `check_with`, ...) have no JSON Schema
form and are left out. One difference remains on purpose: JSON Schema keeps booleans apart from
numbers, where plain Cerberus lets `true` pass as an integer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "DIALECT",
    "field_schema",
    "object_schema",
    "pattern_from_regex",
    "regex_from_pattern",
    "to_json_schema",
]

DIALECT = "https://json-schema.org/draft/2020-12/schema"

_LENGTHS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}
_OF_RULES = {"anyof": "anyOf", "oneof": "oneOf", "allof": "allOf"}
# Cerberus type names and their JSON Schema types (both dialects: ours for tools, the schemas/ files).
_JSON_TYPES = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "boolean": "boolean",
    "dict": "object",
    "list": "array",
}


def to_json_schema(cerberus_schema: Mapping[str, Any], *, title: str, description: str = "") -> dict[str, Any]:
    """A Cerberus document schema as a standalone JSON Schema (draft 2020-12) of an object."""
    out: dict[str, Any] = {"$schema": DIALECT, "title": title}
    if description:
        out["description"] = description
    out.update(_document(cerberus_schema, allow_unknown=False))
    return out


def object_schema(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A Cerberus document schema (field -> rules; a tool's parameters, say) as the JSON Schema of an object."""
    return _document(fields, allow_unknown=False)


def field_schema(rules: Mapping[str, Any]) -> dict[str, Any]:
    """One field's Cerberus rules (a tool's output schema, say) as a JSON Schema."""
    return _field(rules)


def _document(fields: Mapping[str, Any], *, allow_unknown: Any) -> dict[str, Any]:
    """A Cerberus document schema (field -> rules) as a JSON Schema object."""
    out: dict[str, Any] = {
        "type": "object",
        "properties": {str(name): _field(rules) for name, rules in fields.items()},
    }
    required = [str(name) for name, rules in fields.items() if rules.get("required")]
    if required:
        out["required"] = required
    if isinstance(allow_unknown, Mapping):
        out["additionalProperties"] = _field(allow_unknown)
    elif not allow_unknown:
        out["additionalProperties"] = False
    dependent: dict[str, list[str]] = {}
    conditions: list[dict[str, Any]] = []
    pairs: list[list[str]] = []
    for name, rules in fields.items():
        depends = rules.get("dependencies")
        if isinstance(depends, Mapping):
            # A field with value dependencies needs each named field present with one of the values.
            conditions.append(
                {
                    "if": {"required": [name]},
                    "then": {
                        "required": list(depends),
                        "properties": {other: {"enum": _as_list(values)} for other, values in depends.items()},
                    },
                }
            )
        elif depends:
            dependent[name] = _as_list(depends)
        for other in _as_list(rules.get("excludes")):
            pair = sorted([str(name), str(other)])
            if pair not in pairs:  # `a excludes b` and `b excludes a` are one constraint
                pairs.append(pair)
    conditions.extend({"not": {"required": pair}} for pair in pairs)
    if dependent:
        out["dependentRequired"] = dependent
    if conditions:
        out["allOf"] = conditions
    return out


def _field(rules: Mapping[str, Any]) -> dict[str, Any]:
    """The Cerberus rules of one field (or of a list's items) as a JSON Schema."""
    out: dict[str, Any] = {}
    meta = rules.get("meta")
    description = meta.get("description") if isinstance(meta, Mapping) else rules.get("description")
    if isinstance(description, str):
        out["description"] = description
    names = _as_list(rules.get("type"))
    types: list[str] = []
    for name in names:
        mapped = _JSON_TYPES.get(name)
        if mapped is not None and mapped not in types:
            types.append(mapped)
    nullable = bool(rules.get("nullable"))
    if names and all(name in _JSON_TYPES for name in names):
        # A Cerberus type without a JSON counterpart (datetime, set...) leaves the type open.
        typed = [*types, "null"] if nullable else types
        out["type"] = typed[0] if len(typed) == 1 else typed
    elif not names and not nullable:
        out["not"] = {"type": "null"}  # Cerberus refuses null unless the field is nullable
    if "allowed" in rules:
        allowed = list(rules["allowed"])
        if types == ["array"]:
            out["items"] = {"enum": allowed}  # Cerberus checks each item of a list against `allowed`
        else:
            out["enum"] = [*allowed, None] if nullable else allowed
    if "forbidden" in rules:
        forbidden = {"enum": list(rules["forbidden"])}
        out["not"] = {"anyOf": [out["not"], forbidden]} if "not" in out else forbidden
    for ours, theirs in (("min", "minimum"), ("max", "maximum")):
        if ours in rules:
            out[theirs] = rules[ours]
    kinds = types or list(_LENGTHS)
    for kind in kinds:
        if kind not in _LENGTHS:
            continue
        low, high = _LENGTHS[kind]
        if "minlength" in rules:
            out[low] = rules["minlength"]
        if "maxlength" in rules:
            out[high] = rules["maxlength"]
        if rules.get("empty") is False:
            out[low] = max(out.get(low, 0), 1)
    if isinstance(rules.get("regex"), str):
        out["pattern"] = pattern_from_regex(rules["regex"])
    inner = rules.get("schema")
    if isinstance(inner, Mapping):
        if "object" in types:
            document = _document(inner, allow_unknown=rules.get("allow_unknown", False))
            del document["type"]  # the field's own type stands (it may be nullable or a union)
            out.update(document)
        elif "array" in types:
            out["items"] = {**out.get("items", {}), **_field(inner)}  # beside an `allowed` of the items
    if isinstance(rules.get("keysrules"), Mapping):
        out["propertyNames"] = _field(rules["keysrules"])
    if isinstance(rules.get("valuesrules"), Mapping):
        values = _field(rules["valuesrules"])
        if "properties" in out:
            # additionalProperties beside properties would skip the declared ones; Cerberus checks all.
            out.setdefault("allOf", []).append({"additionalProperties": values})
        else:
            out["additionalProperties"] = values
    if isinstance(rules.get("items"), list):
        out["prefixItems"] = [_field(item) for item in rules["items"]]
        out["minItems"] = out["maxItems"] = len(rules["items"])
    for ours, theirs in _OF_RULES.items():
        if isinstance(rules.get(ours), list):
            out[theirs] = [_field(option) for option in rules[ours]]
    if isinstance(rules.get("noneof"), list):
        out["not"] = {"anyOf": [_field(option) for option in rules["noneof"]]}
    if "default" in rules:
        out["default"] = rules["default"]
    return out


def pattern_from_regex(regex: str) -> str:
    """A Cerberus regex (matched against the whole string) as a JSON Schema pattern (a search)."""
    if regex.startswith("^") and _ends_anchored(regex) and not _top_level_bar(regex):
        return regex
    return f"^(?:{regex})$"


def regex_from_pattern(pattern: str) -> str:
    """A JSON Schema pattern (a search) as a Cerberus regex (matched against the whole string)."""
    if _top_level_bar(pattern):
        return f"(?s:.*)(?:{pattern})(?s:.*)"
    # `.*` before a leading ^ or after a trailing $ could only match nothing, so it is left out.
    head = "" if pattern.startswith("^") else "(?s:.*)"
    tail = "" if _ends_anchored(pattern) else "(?s:.*)"
    return f"{head}{pattern}{tail}"


def _ends_anchored(regex: str) -> bool:
    return regex.endswith("$") and not regex.endswith("\\$")


def _top_level_bar(regex: str) -> bool:
    """True when `regex` has an alternation outside every group and class (so ^a|b$ is not anchored)."""
    depth, in_class, escaped = 0, False, False
    for char in regex:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]
