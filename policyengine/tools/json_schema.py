"""Cerberus rules <-> JSON Schema: tool specs and the exported schemas/*.yaml files one way, catalogs' views the other.

`to_json_schema`, `object_schema` and `field_schema` write Cerberus rules as JSON Schema (draft 2020-12);
`parameters_view` and `output_view` read JSON-Schema-ish tool schemas (BFCL, OpenAI, MCP) as Cerberus
rules (see "The other way" below).

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
  `not {required: [field, other]}` per pair; required fields that exclude each other -> `anyOf`
  of each one required;
- `anyof`/`oneof`/`allof`/`noneof` -> `anyOf`/`oneOf`/`allOf`/`not anyOf`; `items` -> `prefixItems`;
- `default` -> `default`; `meta.description` (or a tool parameter's `description`) -> `description`.
Rules that only normalise or call code (`coerce`, `rename`, `check_with`, ...) have no JSON Schema
form and are left out. One difference remains on purpose: JSON Schema keeps booleans apart from
numbers, where plain Cerberus lets `true` pass as an integer.

The other way: JSON-Schema-ish types become the Cerberus dialect of `define_tool`: string, integer,
float/number, boolean, array -> list (`items` -> `schema`), dict/object -> dict (`properties`
-> `schema`). A parameter with type `any`, or with no type, accepts every JSON value: its
type is the list of all JSON types and it is nullable. Objects with properties refuse keys
they do not declare unless `additionalProperties` says otherwise (the parameters object
itself always refuses them). `enum`/`const` -> allowed, `default`, `minimum`/`maximum`, lengths
and `pattern` carry over; `anyOf`/`oneOf` become a union (a null branch: nullable); local `$ref`s
are resolved; keywords Cerberus cannot express (`format`, `multipleOf`, `exclusiveMinimum`, ...)
are left out. `x-policy-role` (or a `format` such as uri, email, path) declares a role. BFCL
specs are validated through this view; specs in JSON Schema proper validate against their own
schema (tools/json_schema_validator.py) and keep the view for lint, the type checker and roles.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from policyengine.errors import DefinitionError

__all__ = [
    "ANY_TYPES",
    "DIALECT",
    "field_schema",
    "object_schema",
    "output_view",
    "parameters_view",
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
    # Cerberus: a required field that excludes another required field is required only when the
    # other is absent (`decision` or `label`): one of them, never both (the pair rule below).
    either: list[list[str]] = []
    for name in list(required):
        others = [str(o) for o in _as_list(fields[name].get("excludes")) if str(o) in required]
        if others:
            group = sorted({name, *others})
            if group not in either:
                either.append(group)
    required = [name for name in required if not any(name in group for group in either)]
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
    conditions.extend({"anyOf": [{"required": [name]} for name in group]} for group in either)
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


# Every JSON type, for parameters declared `any` or without a type.
ANY_TYPES: tuple[str, ...] = ("string", "integer", "number", "boolean", "list", "dict")

_TYPES: dict[str, str | None] = {
    "string": "string",
    "str": "string",
    "integer": "integer",
    "int": "integer",
    "float": "float",
    "number": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "list",
    "list": "list",
    "tuple": "list",
    "dict": "dict",
    "object": "dict",
    "null": None,
}
_ANY_NAMES = frozenset({"any", "Any"})


def parameters_view(
    node: Any, tool: str, *, where: str = "parameters", bfcl: bool = False, lenient: bool = False
) -> dict[str, Any]:
    """A JSON-Schema-ish parameters object as a Cerberus document schema; raise DefinitionError where it has none.

    `lenient`: a part with no Cerberus form (a recursive $ref, allOf of several schemas, ...) becomes
    "any JSON value" instead of an error. Tools described in JSON Schema validate against the schema
    itself; the view only tells lint, the type checker and roles what the arguments are.
    """
    return _Converter(tool, bfcl, lenient).parameters(node, where)


def output_view(
    node: Any, tool: str, *, where: str = "output", bfcl: bool = False, lenient: bool = False
) -> dict[str, Any]:
    """A response or outputSchema as the Cerberus rules of a tool's value: lenient, as recorded results need.

    Every field is nullable and optional and objects are open: recorded results omit declared fields
    and add others.
    """
    return _Converter(tool, bfcl, lenient).output(node, where)


class _Converter:
    """JSON-Schema-ish schemas of one tool -> the Cerberus dialect of define_tool."""

    def __init__(self, tool: str, bfcl: bool, lenient: bool = False) -> None:
        self.tool, self.bfcl, self.lenient = tool, bfcl, lenient
        self.defs: Mapping[str, Any] = {}
        self.resolving: list[str] = []

    def fail(self, where: str, message: str, hint: str | None = None) -> DefinitionError:
        """A DefinitionError naming the tool and the place in its schema."""
        return DefinitionError(f"tool {self.tool!r}: {where}: {message}", hint=hint)

    def parameters(self, node: Any, where: str) -> dict[str, Any]:
        """The top-level parameters object -> a Cerberus document schema."""
        if node is None:
            return {}
        if not isinstance(node, Mapping) or _types_of(node) not in ([], ["dict"], ["object"]):
            raise self.fail(where, "must be an object schema", 'use {"type": "object", "properties": {...}}')
        self.defs = _definitions(node)
        return self.document(node, where, output=False)

    def output(self, node: Any, where: str) -> dict[str, Any]:
        """A response or outputSchema -> the Cerberus rules of the canonical value."""
        if not isinstance(node, Mapping):
            raise self.fail(where, "must be a schema object")
        self.defs = _definitions(node)
        rules = self.field(node, where, output=True)
        if "null" not in _types_of(node) and rules["type"] != list(ANY_TYPES):
            # The fields are nullable, the value itself is what the tool declared (MCP: an object).
            del rules["nullable"]
        return rules

    def document(self, node: Mapping[str, Any], where: str, *, output: bool) -> dict[str, Any]:
        """The `properties` of an object schema, with `required` folded into each field."""
        properties = node.get("properties") or {}
        required = node.get("required") or []
        if not isinstance(properties, Mapping) or not isinstance(required, list):
            raise self.fail(where, "`properties` must be an object and `required` an array")
        fields = {}
        for key, sub in properties.items():
            rules = self.field(sub, f"{where}.{key}", output=output)
            # Recorded responses omit fields, so nothing of an output is required.
            if key in required and not output:
                rules["required"] = True
            fields[str(key)] = rules
        missing = [key for key in required if key not in properties]
        if missing and not self.lenient:
            raise self.fail(where, f"`required` names undeclared properties {missing}")
        return fields

    def field(self, node: Any, where: str, *, output: bool) -> dict[str, Any]:
        """One JSON-Schema-ish node -> Cerberus rules (any JSON value, when lenient and it has no such form)."""
        if not self.lenient:
            return self.strict_field(node, where, output=output)
        # A role is policy, not shape: a misspelt one is refused even here, and a part with no
        # Cerberus form keeps the role it declares (else `allOf` would hide a path from red lines).
        role = self.role(node, where) if isinstance(node, Mapping) else None
        try:
            return self.strict_field(node, where, output=output)
        except DefinitionError:
            rules: dict[str, Any] = {"type": list(ANY_TYPES), "nullable": True, "allow_unknown": True}
            if isinstance(node, Mapping) and isinstance(node.get("description"), str):
                rules["description"] = node["description"]
            if role is not None:
                rules["role"] = role
            return rules

    def role(self, node: Mapping[str, Any], where: str) -> str | None:
        """The policy role the node declares (`x-policy-role`, else its format); raise on an unknown one."""
        role = _role_of(node)
        # A misspelt role would otherwise give the key no role at all: red lines reading
        # paths(@) would not see a path declared `x-policy-role: pth`.
        if role is not None and (role not in ROLE_NAMES or not isinstance(node.get("x-policy-role", role), str)):
            raise self.fail(where, f"unknown x-policy-role {role!r}", f"use one of {', '.join(ROLE_NAMES)}")
        return role

    def strict_field(self, node: Any, where: str, *, output: bool) -> dict[str, Any]:
        """One JSON-Schema-ish node -> Cerberus rules; raise DefinitionError where it has none."""
        if not isinstance(node, Mapping):
            raise self.fail(where, f"a schema must be an object, got {json.dumps(node)}")
        if "$ref" in node:
            return self.reference(node, where, output=output)
        for key in ("allOf", "anyOf", "oneOf"):
            if key in node:
                return self.union(node, key, where, output=output)
        rules: dict[str, Any] = {}
        names = _types_of(node)
        types: list[str] = []
        nullable = output
        for name in names or ["any"]:
            if name in _ANY_NAMES:
                types.extend(t for t in ANY_TYPES if t not in types)
                nullable = True
                continue
            if name not in _TYPES:
                raise self.fail(where, f"unknown type {name!r}", f"use one of: {', '.join(sorted(_TYPES))} or any")
            mapped = _TYPES[name]
            if mapped is None:
                nullable = True
            elif mapped not in types:
                types.append(mapped)
        if not types:
            raise self.fail(where, "`null` is the only type; such a parameter carries nothing")
        rules["type"] = types[0] if len(types) == 1 else types
        containers = {"dict", "list"} & set(types)
        description = node.get("description", node.get("title"))
        if isinstance(description, str):
            rules["description"] = description
        role = self.role(node, where)
        if role is not None:
            rules["role"] = role
        # Cerberus checks `allowed` item by item on a list, JSON Schema compares the whole value:
        # an enum of whole lists or objects has no Cerberus form and is left out.
        if ("enum" in node or "const" in node) and not containers:
            values = list(node["enum"]) if "enum" in node else [node["const"]]
            nullable = nullable or None in values
            rules["allowed"] = [v for v in values if v is not None]
        if "default" in node:
            default = node["default"]
            # BFCL's docs are generated from Python signatures: `x: str = None` appears as the
            # string "None". Kept, it would fill arguments with the text "None"; it means null.
            if self.bfcl and default == "None" and "string" in types:
                nullable = True
            else:
                rules["default"] = default
        for theirs, ours in (("minimum", "min"), ("maximum", "max")):
            if theirs in node:
                rules[ours] = node[theirs]
        for theirs, ours in (("minLength", "minlength"), ("maxLength", "maxlength")):
            if theirs in node and "string" in types:
                rules[ours] = node[theirs]
        for theirs, ours in (("minItems", "minlength"), ("maxItems", "maxlength")):
            if theirs in node and "list" in types:
                rules[ours] = node[theirs]
        if isinstance(node.get("pattern"), str):
            rules["regex"] = regex_from_pattern(node["pattern"])
        if containers == {"list"}:
            items = node.get("items")
            if isinstance(items, Mapping):
                rules["schema"] = self.field(items, f"{where}[]", output=output)
            else:
                # No items schema (or tuple-style items): any JSON value per item.
                rules["schema"] = {"type": list(ANY_TYPES), "nullable": True, "allow_unknown": True}
        elif containers == {"dict"}:
            rules.update(self.object(node, where, output=output))
        elif containers:
            # One Cerberus `schema` cannot describe both a list and a dict: both stay free-form.
            rules["allow_unknown"] = True
        if nullable:
            rules["nullable"] = True
        return rules

    def object(self, node: Mapping[str, Any], where: str, *, output: bool) -> dict[str, Any]:
        """The rules that describe an object's keys."""
        extra = node.get("additionalProperties")
        # Outputs of recorded tools carry undeclared keys (BFCL returns {"error": ...}); only a
        # rewrite is validated against them, and a redaction must not fail over such a key.
        allow: Any = True if output else extra is True or (extra is None and "properties" not in node)
        if isinstance(extra, Mapping):
            allow = self.field(extra, f"{where}.*", output=output)
        rules: dict[str, Any] = {}
        if "properties" in node or extra is False or isinstance(extra, Mapping):
            rules["schema"] = self.document(node, where, output=output)
        if allow:
            # An object without properties is free-form: define_tool refuses a dict without a
            # `schema` unless it says allow_unknown, so that is what it says.
            rules["allow_unknown"] = allow
        return rules

    def union(self, node: Mapping[str, Any], key: str, where: str, *, output: bool) -> dict[str, Any]:
        """allOf of one schema, or anyOf/oneOf: null branches make it nullable, the rest a union."""
        branches = node[key]
        if not isinstance(branches, list) or not branches:
            raise self.fail(where, f"`{key}` must be a non-empty array of schemas")
        rest = {k: v for k, v in node.items() if k != key}
        if key == "allOf":
            if len(branches) != 1 or not isinstance(branches[0], Mapping):
                raise self.fail(where, "allOf is supported with exactly one schema", "merge the schemas into one")
            return self.field({**branches[0], **rest}, where, output=output)
        real = [b for b in branches if not (isinstance(b, Mapping) and _types_of(b) == ["null"])]
        nullable = output or len(real) < len(branches)
        if len(real) == 1:
            rules = self.field({**real[0], **rest} if isinstance(real[0], Mapping) else real[0], where, output=output)
        else:
            options = [self.field(b, f"{where}|{i}", output=output) for i, b in enumerate(real)]
            types: list[str] = []
            for option in options:
                kinds = option["type"]
                types.extend(t for t in ([kinds] if isinstance(kinds, str) else kinds) if t not in types)
            rules = {"type": types, "anyof": options}
            if {"dict", "list"} & set(types):
                rules["allow_unknown"] = True  # each branch of `anyof` keeps its own schema
            description = rest.get("description")
            if isinstance(description, str):
                rules["description"] = description
        if nullable:
            rules["nullable"] = True
        return rules

    def reference(self, node: Mapping[str, Any], where: str, *, output: bool) -> dict[str, Any]:
        """A local $ref (#/$defs/X or #/definitions/X), resolved in place."""
        ref = node["$ref"]
        match = re.fullmatch(r"#/(?:\$defs|definitions)/([^/]+)", ref) if isinstance(ref, str) else None
        if match is None or match.group(1) not in self.defs:
            raise self.fail(where, f"cannot resolve $ref {ref!r}", "only local #/$defs/NAME references are read")
        target = match.group(1)
        if target in self.resolving:
            raise self.fail(where, f"recursive $ref {ref!r}", "a recursive schema has no Cerberus form; flatten it")
        self.resolving.append(target)
        try:
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return self.field({**self.defs[target], **rest}, where, output=output)
        finally:
            self.resolving.pop()


# The roles a spec may declare (language.roles.Role's values; tools sits below language, and a
# test keeps the two and the Cerberus dialect's `role` rule the same).
ROLE_NAMES = ("path", "url", "command", "secret", "email", "amount", "glob", "text")

# JSON Schema formats that say what a string is for policy; `x-policy-role` says it outright.
_FORMAT_ROLES = {
    "uri": "url",
    "url": "url",
    "iri": "url",
    "uri-reference": "url",
    "iri-reference": "url",
    "email": "email",
    "idn-email": "email",
    "path": "path",
    "file-path": "path",
    "password": "secret",
}


def _role_of(node: Mapping[str, Any]) -> str | None:
    """The policy role a JSON Schema node declares: `x-policy-role`, else its `format`."""
    role = node.get("x-policy-role")
    if role is not None:
        return role if isinstance(role, str) else repr(role)
    fmt = node.get("format")
    return _FORMAT_ROLES.get(fmt) if isinstance(fmt, str) else None


def _types_of(node: Mapping[str, Any]) -> list[str]:
    """The type names a JSON-Schema-ish node declares ([] when it declares none)."""
    kinds = node.get("type")
    if isinstance(kinds, str):
        return [kinds]
    if isinstance(kinds, list):
        return [str(k) for k in kinds]
    return []


def _definitions(node: Mapping[str, Any]) -> dict[str, Any]:
    """The named schemas a root schema declares for local $refs ($defs, or the older definitions)."""
    out: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        if isinstance(node.get(key), Mapping):
            out.update(node[key])
    return out
