"""Tool catalogs: tool definitions read from JSON Lines or JSON, in BFCL, OpenAI or MCP shape.

A catalog describes tools that run elsewhere, so that arguments can be validated and rules
checked against real tool names; its definitions have bodies that refuse to run.

Shapes of one definition (extra keys such as BFCL's `suite` are ignored):
- BFCL: `{name, description, parameters: {type: dict, properties, required}, response}`;
- OpenAI: `{type: function, function: {name, description, parameters}}`;
- MCP: `{name, description, inputSchema, outputSchema?}` (and Anthropic's `input_schema`).

Files: JSON Lines (one definition a line), or JSON holding an array of definitions, an object
with a `tools` array (MCP's tools/list result, bare or inside a JSON-RPC `result`), or one
definition.

JSON-Schema-ish types become the Cerberus dialect of `define_tool`: string, integer,
float/number, boolean, array -> list (`items` -> `schema`), dict/object -> dict (`properties`
-> `schema`). A parameter with type `any`, or with no type, accepts every JSON value: its
type is the list of all JSON types and it is nullable. Objects with properties refuse keys
they do not declare unless `additionalProperties` says otherwise (the parameters object
itself always refuses them), as every definition of the registry does. `enum`/`const` ->
allowed, `default`, `minimum`/`maximum`, lengths and `pattern` carry over; `anyOf`/`oneOf`
become a union (a null branch: nullable); local `$ref`s are resolved; keywords Cerberus
cannot express (`format`, `multipleOf`, `exclusiveMinimum`, ...) are left out.

A response or outputSchema becomes the output schema with every field nullable and not
required, and its objects open: recorded results omit declared fields and add others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policyengine.errors import DefinitionError, UsageError
from policyengine.tools.definition import ToolDefinition, define_tool
from policyengine.tools.json_schema import regex_from_pattern
from policyengine.values.problems import Location, PackLoadError, Problem, ProblemSink, register_code

__all__ = ["CatalogError", "load_catalog"]

NOT_A_TOOL = register_code("PE701", "catalog entry is not a tool definition")
BAD_JSON = register_code("PE702", "invalid JSON in a tool catalog")
DUPLICATE_TOOL = register_code("PE703", "tool defined twice in a catalog")
REFUSED_TOOL = register_code("PE704", "tool definition refused")
UNREADABLE = "PE108"  # the codes a pack file uses for the same trouble
NOT_UTF8 = "PE109"

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
_LINES_SUFFIXES = frozenset({".jsonl", ".ndjson"})
_WS = re.compile(r"[ \t\n\r]*")


class CatalogError(PackLoadError):
    """A catalog failed to load; carries every problem, located at file:line:column."""

    def __init__(self, problems: Sequence[Problem], *, summary: str = "no tool was loaded") -> None:
        # A PackLoadError, so the CLI renders catalog problems as text, JSON or SARIF like a pack's.
        super().__init__(problems, summary=summary)


@dataclass(frozen=True)
class _Entry:
    """One definition as found in the file, with where it starts."""

    data: Any
    line: int
    column: int


def load_catalog(path: str | Path) -> dict[str, ToolDefinition]:
    """Every tool of a catalog file by name; raise CatalogError listing all problems."""
    path = Path(path)
    display = str(path)
    sink = ProblemSink()
    try:
        raw = path.read_bytes()
    except OSError as error:
        problem = Problem(
            UNREADABLE,
            f"cannot read tool catalog {display}: {error.strerror or error}",
            Location.start_of(display),
            hint="pass a JSON Lines or JSON file of tool definitions",
        )
        raise CatalogError([problem]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        problem = Problem(NOT_UTF8, f"{display} is not UTF-8 text: {error.reason}", Location(display, line, 1))
        raise CatalogError([problem]) from None
    source = _Source(display, text, sink)
    tools: dict[str, ToolDefinition] = {}
    first: dict[str, _Entry] = {}
    for entry in source.entries(path.suffix.lower() in _LINES_SUFFIXES):
        definition = source.definition(entry)
        if definition is None:
            continue
        earlier = first.setdefault(definition.name, entry)
        if earlier is not entry:
            source.problem(
                DUPLICATE_TOOL,
                f"tool {definition.name!r} is defined twice (first at {display}:{earlier.line})",
                entry,
                hint="tool names are the only identity a model sends back; keep one definition",
            )
            continue
        tools[definition.name] = definition
    if sink.has_errors:
        raise CatalogError(sink.sorted())
    return tools


class _Source:
    """The text of one catalog file and the problems found in it."""

    def __init__(self, display: str, text: str, sink: ProblemSink) -> None:
        self.display, self.text, self.sink = display, text, sink
        self.lines = text.split("\n")
        self._cursor = (0, 1)  # (offset, its line), where _entry last counted

    def problem(self, code: str, message: str, entry: _Entry, hint: str | None = None) -> None:
        """Record a problem located at the start of `entry`."""
        source_line = self.lines[entry.line - 1].rstrip("\r") if entry.line <= len(self.lines) else None
        location = Location(self.display, entry.line, entry.column)
        self.sink.add(Problem(code, message, location, hint=hint, source_line=source_line))

    def entries(self, json_lines: bool) -> list[_Entry]:
        """The definitions of the file, each with its position; bad JSON becomes problems."""
        if json_lines or not self.text.strip():
            return self._json_lines()  # an empty file is empty JSON Lines: no tools
        try:
            whole = json.loads(self.text)
        except json.JSONDecodeError as error:
            # Several values, or an error after a first line that parses alone: JSON Lines with
            # a bad line. Otherwise the file is one JSON document with an error inside.
            first = next((line for line in self.lines if line.strip()), "")
            if error.msg == "Extra data" or _parses(first):
                return self._json_lines()
            self.problem(BAD_JSON, f"invalid JSON: {error.msg}", _Entry(None, error.lineno, error.colno))
            return []
        if isinstance(whole, list):
            return self._items(())
        if isinstance(whole, dict):
            if "tools" in whole:
                return self._items(("tools",))
            result = whole.get("result")
            if isinstance(result, dict) and "tools" in result:
                return self._items(("result", "tools"))
            start = _WS.match(self.text).end()  # type: ignore[union-attr]
            return [self._entry(whole, start)]
        self.problem(
            NOT_A_TOOL,
            f"a tool catalog holds tool definitions, not a JSON {type(whole).__name__}",
            _Entry(None, 1, 1),
            hint="write an array of definitions, an object with a `tools` array, or JSON Lines",
        )
        return []

    def _json_lines(self) -> list[_Entry]:
        entries = []
        # Split on \n only: str.splitlines would also split on U+2028 inside JSON strings.
        for number, line in enumerate(self.lines, 1):
            if not line.strip():
                continue
            try:
                entries.append(_Entry(json.loads(line), number, 1))
            except json.JSONDecodeError as error:
                self.problem(
                    BAD_JSON,
                    f"invalid JSON at line {number}: {error.msg}",
                    _Entry(None, number, error.colno),
                    hint="JSON Lines hold one complete JSON object per line",
                )
        return entries

    def _items(self, keys: tuple[str, ...]) -> list[_Entry]:
        """Entries for the items of the array at `keys`, in text that is already valid JSON."""
        decoder = json.JSONDecoder()
        text = self.text

        def skip(pos: int) -> int:
            return _WS.match(text, pos).end()  # type: ignore[union-attr]

        pos: int | None = skip(0)
        for key in keys:
            assert pos is not None
            found = None
            pos = skip(pos + 1)  # past '{'
            while text[pos] != "}":
                name, pos = decoder.raw_decode(text, pos)
                pos = skip(skip(pos) + 1)  # past ':'
                if name == key:
                    found = pos  # the last occurrence wins, as in json.loads
                pos = skip(decoder.raw_decode(text, pos)[1])
                pos = skip(pos + 1) if text[pos] == "," else pos
            pos = found
        assert pos is not None
        if text[pos] != "[":
            self.problem(
                NOT_A_TOOL,
                f"`{'.'.join(keys)}` must be an array of tool definitions",
                self._entry(None, pos),
            )
            return []
        entries = []
        pos = skip(pos + 1)
        while text[pos] != "]":
            item, end = decoder.raw_decode(text, pos)
            entries.append(self._entry(item, pos))
            pos = skip(end)
            pos = skip(pos + 1) if text[pos] == "," else pos
        return entries

    def _entry(self, data: Any, offset: int) -> _Entry:
        # Items come in text order: count lines from the previous item, not from the start.
        start, line = self._cursor if offset >= self._cursor[0] else (0, 1)
        line += self.text.count("\n", start, offset)
        self._cursor = (offset, line)
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return _Entry(data, line, column)

    def definition(self, entry: _Entry) -> ToolDefinition | None:
        """The ToolDefinition of one entry, or None after recording why it has none."""
        data = entry.data
        function = isinstance(data, Mapping) and data.get("type") == "function"
        if function and isinstance(data.get("function"), Mapping):
            data = data["function"]  # OpenAI chat-completions wrapper
        name = data.get("name") if isinstance(data, Mapping) else None
        shape = _shape(data, function) if isinstance(data, Mapping) else None
        if not isinstance(name, str) or shape is None:
            what = f"tool {name!r} is" if isinstance(name, str) else "this is"
            self.problem(
                NOT_A_TOOL,
                f"{what} not a tool definition: it needs `name` and `parameters` (BFCL, OpenAI) or `inputSchema` (MCP)",
                entry,
                hint='e.g. {"name": "cat", "description": "...", "parameters": {"type": "object", "properties": {}}}',
            )
            return None
        assert isinstance(data, Mapping)
        params_key, output_key, bfcl = shape
        try:
            converter = _Converter(name, bfcl)
            parameters = converter.parameters(data.get(params_key), params_key)
            output = converter.output(data.get(output_key), output_key) if data.get(output_key) else None
            annotations = data.get("annotations")
            tags = data.get("x-policy-tags", data.get("tags", ()))
            return define_tool(
                name=name,
                description=data.get("description", ""),
                parameters=parameters,
                output={"schema": output} if output else None,
                execute=_refuse_to_run(name, self.display),
                run_in_thread=False,  # the body only raises; no thread is worth starting for it
                tags=tags if isinstance(tags, list) else (),
                annotations=annotations if isinstance(annotations, Mapping) else None,
            )
        except DefinitionError as error:
            self.problem(REFUSED_TOOL, error.message, entry, hint=error.hint)
            return None


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def _shape(data: Mapping[str, Any], function: bool) -> tuple[str, str, bool] | None:
    """(parameters key, output key, BFCL?) for a recognised definition, else None."""
    if "inputSchema" in data:
        return "inputSchema", "outputSchema", False
    if "input_schema" in data:
        return "input_schema", "output_schema", False
    if "parameters" in data:
        params = data["parameters"]
        # BFCL writes `type: dict` where JSON Schema says object; nobody else does.
        bfcl = isinstance(params, Mapping) and params.get("type") == "dict"
        return "parameters", "response", bfcl
    if function:
        return "parameters", "response", False  # OpenAI: a function without parameters takes none
    return None


def _refuse_to_run(name: str, catalog: str) -> Callable[[Mapping[str, Any]], Any]:
    def execute(_arguments: Mapping[str, Any]) -> Any:
        raise UsageError(
            f"tool {name!r} comes from the catalog {catalog}, which describes tools but cannot run them",
            hint="register a definition with its own execute body to run this tool",
        )

    return execute


class _Converter:
    """JSON-Schema-ish schemas of one tool -> the Cerberus dialect of define_tool."""

    def __init__(self, tool: str, bfcl: bool) -> None:
        self.tool, self.bfcl = tool, bfcl
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
        if missing:
            raise self.fail(where, f"`required` names undeclared properties {missing}")
        return fields

    def field(self, node: Any, where: str, *, output: bool) -> dict[str, Any]:
        """One JSON-Schema-ish node -> Cerberus rules."""
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
        role = _role_of(node)
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
    if isinstance(role, str):
        return role
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
