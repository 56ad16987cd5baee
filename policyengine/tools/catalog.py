"""Tool catalogs: tool definitions in BFCL, OpenAI or MCP shape, from a file, a file object or memory.

A catalog describes tools that run elsewhere, so that arguments can be validated and rules
checked against real tool names; its definitions have bodies that refuse to run until
`ToolDefinition.with_execute` gives one (an MCP proxy, an agent framework's own tool).

Shapes of one definition (extra keys such as BFCL's `suite` are ignored):
- MCP: `{name, description?, inputSchema, outputSchema?, annotations?}` (and Anthropic's `input_schema`);
- OpenAI: `{type: function, function: {name, description?, parameters}}` (or the flat Responses form);
- BFCL: `{name, description, parameters: {type: dict, properties, required}, response}`.

MCP and OpenAI specs are JSON Schema and are taken as they are (`define_tool(input_schema=...)`):
arguments are validated against the schema itself, free-form objects included, and the schema
is handed back unchanged by `to_mcp`/`to_openai`. BFCL specs, and specs whose schema is not JSON
Schema (types such as `float` or `any`), are read through the Cerberus view
(tools/json_schema.py: `parameters_view`), as the YAML and Python definitions are.

Sources: a path or file object holding JSON Lines (one definition a line) or JSON (an array of
definitions, an object with a `tools` array, MCP's tools/list result bare or inside a JSON-RPC
`result`, or one definition); or definitions in memory (an iterable of mappings or of objects
with `model_dump`, such as the MCP SDK's `Tool`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from policyengine.errors import DefinitionError, UsageError
from policyengine.tools.definition import ToolDefinition, define_tool
from policyengine.tools.json_schema import output_view, parameters_view
from policyengine.values.frozen import freeze
from policyengine.values.problems import Location, PackLoadError, Problem, ProblemSink, register_code

__all__ = ["CatalogError", "load_catalog", "tool_from_spec"]

CatalogSource = str | os.PathLike[str] | IO[str] | IO[bytes] | Mapping[str, Any] | Iterable[Any]

NOT_A_TOOL = register_code("PE701", "catalog entry is not a tool definition")
BAD_JSON = register_code("PE702", "invalid JSON in a tool catalog")
DUPLICATE_TOOL = register_code("PE703", "tool defined twice in a catalog")
REFUSED_TOOL = register_code("PE704", "tool definition refused")
UNREADABLE = "PE108"  # the codes a pack file uses for the same trouble
NOT_UTF8 = "PE109"

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


def load_catalog(source: CatalogSource) -> dict[str, ToolDefinition]:
    """Every tool of a catalog by name; raise CatalogError listing all problems.

    `source`: a path; a file object (text or bytes; JSON Lines when its name ends in .jsonl or
    .ndjson); a JSON document already parsed (a tools/list result); or definitions in memory.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            raw = path.read_bytes()
        except OSError as error:
            problem = Problem(
                UNREADABLE,
                f"cannot read tool catalog {path}: {error.strerror or error}",
                Location.start_of(str(path)),
                hint="pass a JSON Lines or JSON file of tool definitions",
            )
            raise CatalogError([problem]) from None
        return _from_text(str(path), raw, path.suffix.lower() in _LINES_SUFFIXES)
    if hasattr(source, "read"):
        display = getattr(source, "name", None)
        display = display if isinstance(display, str) else "<catalog>"
        return _from_text(display, source.read(), Path(display).suffix.lower() in _LINES_SUFFIXES)
    if isinstance(source, Mapping) and not _looks_like_a_definition(source):
        result = source.get("result")
        tools = source.get("tools", result.get("tools") if isinstance(result, Mapping) else None)
        if not isinstance(tools, (list, tuple)):
            problem = Problem(
                NOT_A_TOOL,
                "a catalog object needs a `tools` array (an MCP tools/list result) or to be one definition",
                Location.start_of("<specs>"),
            )
            raise CatalogError([problem])
        source = tools
    specs = [source] if isinstance(source, Mapping) else list(source)
    sink = ProblemSink()
    memory = _Source("<specs>", "", sink)
    return _collect(memory, [_Entry(spec, number, 1) for number, spec in enumerate(specs, 1)])


def _looks_like_a_definition(data: Mapping[str, Any]) -> bool:
    return "name" in data or data.get("type") == "function"


def _from_text(display: str, raw: str | bytes, json_lines: bool) -> dict[str, ToolDefinition]:
    """The tools of one catalog text (bytes are decoded as UTF-8, a BOM allowed)."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            line = raw.count(b"\n", 0, error.start) + 1
            problem = Problem(NOT_UTF8, f"{display} is not UTF-8 text: {error.reason}", Location(display, line, 1))
            raise CatalogError([problem]) from None
    else:
        text = raw.removeprefix("\ufeff")
    source = _Source(display, text, ProblemSink())
    return _collect(source, source.entries(json_lines))


def _collect(source: _Source, entries: Sequence[_Entry]) -> dict[str, ToolDefinition]:
    """The definitions of `entries` by name; raise CatalogError with every problem found."""
    tools: dict[str, ToolDefinition] = {}
    first: dict[str, _Entry] = {}
    for entry in entries:
        definition = source.definition(entry)
        if definition is None:
            continue
        earlier = first.setdefault(definition.name, entry)
        if earlier is not entry:
            source.problem(
                DUPLICATE_TOOL,
                f"tool {definition.name!r} is defined twice (first at {source.display}:{earlier.line})",
                entry,
                hint="tool names are the only identity a model sends back; keep one definition",
            )
            continue
        tools[definition.name] = definition
    if source.sink.has_errors:
        raise CatalogError(source.sink.sorted())
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
        try:
            return tool_from_spec(entry.data, source=self.display)
        except _NotATool as error:
            self.problem(NOT_A_TOOL, error.message, entry, hint=error.hint)
        except DefinitionError as error:
            self.problem(REFUSED_TOOL, error.message, entry, hint=error.hint)
        return None


class _NotATool(DefinitionError):
    """The data has no shape of a tool definition."""


def tool_from_spec(
    spec: Mapping[str, Any] | Any,
    *,
    execute: Callable[..., Any] | None = None,
    source: str = "a tool spec",
    trusted: bool = True,
) -> ToolDefinition:
    """The definition of one MCP, OpenAI or BFCL tool spec, taken as it is; raise DefinitionError.

    An object with `model_dump` (the MCP SDK's `Tool`) is read through it. Without `execute`
    the body refuses to run (give one later with `ToolDefinition.with_execute`). A spec that is
    not `trusted` (an upstream server's own tools/list) cannot declare a key plain content
    (`x-policy-role: text`): roles it declares may widen what red lines see, never narrow it.
    """
    definition = _from_spec(spec, execute, source)
    if not trusted and definition.roles is not None and "text" in definition.roles.values():
        kept = {key: role for key, role in definition.roles.items() if role != "text"}
        definition = dataclasses.replace(definition, roles=freeze(kept) if kept else None)
    return definition


def _from_spec(spec: Mapping[str, Any] | Any, execute: Callable[..., Any] | None, source: str) -> ToolDefinition:
    """tool_from_spec, before the trust of its declared roles is weighed."""
    data = spec
    if not isinstance(data, Mapping) and callable(getattr(data, "model_dump", None)):
        data = data.model_dump(by_alias=True, exclude_none=True, mode="json")
    function = isinstance(data, Mapping) and data.get("type") == "function"
    if function and isinstance(data.get("function"), Mapping):
        data = data["function"]  # OpenAI chat-completions wrapper
    name = data.get("name") if isinstance(data, Mapping) else None
    shape = _shape(data, function) if isinstance(data, Mapping) else None
    if not isinstance(name, str) or shape is None:
        what = f"tool {name!r} is" if isinstance(name, str) else "this is"
        raise _NotATool(
            f"{what} not a tool definition: it needs `name` and `parameters` (BFCL, OpenAI) or `inputSchema` (MCP)",
            hint='e.g. {"name": "cat", "description": "...", "inputSchema": {"type": "object", "properties": {}}}',
        )
    assert isinstance(data, Mapping)
    params_key, output_key, bfcl = shape
    params, output = data.get(params_key), data.get(output_key)
    annotations = data.get("annotations")
    tags = data.get("x-policy-tags", data.get("tags", ()))
    common: dict[str, Any] = {
        "name": name,
        "description": data.get("description") or "",
        "execute": execute or _refuse_to_run(name, source),
        # A body that only raises is not worth a thread; a real one runs in a thread when synchronous.
        "run_in_thread": execute is not None,
        "tags": tags if isinstance(tags, list) else (),
        "annotations": annotations if isinstance(annotations, Mapping) else None,
    }
    if not bfcl:
        try:
            return define_tool(
                **common,
                input_schema=params if params is not None else {"type": "object", "properties": {}},
                output_schema=output if output else None,
            )
        except DefinitionError as error:
            as_json_schema = error  # not JSON Schema proper: try the Cerberus view, report this if that fails too
    try:
        return define_tool(
            **common,
            parameters=parameters_view(params, name, where=params_key, bfcl=bfcl),
            output={"schema": output_view(output, name, where=output_key, bfcl=bfcl)} if output else None,
        )
    except DefinitionError:
        if not bfcl:
            raise as_json_schema from None
        raise


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
