"""Tool definitions: parameters in one of two dialects, output schema and render, execute.

Two dialects describe arguments: the Cerberus dialect (`parameters=`: YAML and Python definitions,
BFCL catalogs; defaults fill in, undeclared keys are refused) and JSON Schema (`input_schema=`: MCP
and OpenAI specs as they are, free-form objects included; arguments are validated, never changed).
Either way policy sees the arguments frozen, and `parameters` holds the Cerberus view that lint,
the type checker and argument roles read.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from policyengine.errors import DefinitionError, FreezeError
from policyengine.tools.json_schema import field_schema, object_schema, output_view, parameters_view
from policyengine.values.frozen import FrozenDict, FrozenList, freeze, thaw

# MCP allows 1-128 of these characters; a leading digit is fine there too.
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


class ArgumentCheck(Protocol):
    """A compiled schema: the document to hand on when `frozen` passes, else the problems."""

    def document(self, frozen: FrozenDict) -> tuple[FrozenDict | None, list[str]]:
        """(document, []) when `frozen` passes, else (None, problems naming each place)."""
        ...


# Keywords that let an object's keys come from elsewhere: with one of them the schema stays as written.
_OPEN_KEYWORDS = frozenset(
    {"additionalProperties", "patternProperties", "unevaluatedProperties", "allOf", "anyOf", "oneOf", "not", "$ref"}
    | {"if", "then", "else", "dependentSchemas", "dependencies", "propertyNames"}
)


def closed_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments schema with undeclared top-level keys refused unless it says otherwise.

    A key the schema does not declare is a value the engine cannot place; JSON Schema lets it
    through, so the top-level object is closed unless `additionalProperties` (or a keyword that
    composes keys) is written. Nested objects keep JSON Schema's meaning: free-form stays free-form.
    """
    out = dict(schema)
    if not (_OPEN_KEYWORDS & out.keys()):
        out["additionalProperties"] = False
    return out


class _JsonSchemaCheck:
    """A JSON Schema compiled to closures: it validates and never changes the arguments."""

    __slots__ = ("_problems",)

    def __init__(self, schema: Mapping[str, Any], where: str) -> None:
        from policyengine.tools.json_schema_validator import compile_json_schema

        self._problems = compile_json_schema(closed_arguments(thaw(schema)), where=where)

    def document(self, frozen: FrozenDict) -> tuple[FrozenDict | None, list[str]]:
        """(frozen, []) when it fits the schema, else (None, problems)."""
        problems = self._problems(frozen)
        return (None, problems) if problems else (frozen, [])


def _arity(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 2
    return len(positional)


def render_text(_args: Mapping[str, Any], value: Any) -> list[dict[str, Any]]:
    """The default render: one text block holding the value (JSON for non-strings)."""
    import json

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return [{"type": "text", "text": text}]


@dataclass(frozen=True, eq=False)
class ToolDefinition:
    """One tool: what the model reads (name, description, parameters) and what runs."""

    name: str
    description: str
    parameters: FrozenDict
    output_schema: FrozenDict
    execute: Callable[..., Any]
    render: Callable[[Mapping[str, Any], Any], Any]
    finalize_content: Callable[..., Any] | None
    run_in_thread: bool
    _arguments: ArgumentCheck
    _output: ArgumentCheck | None  # over {"value": ...}; None when no output schema is declared
    _execute_takes_ctx: bool
    # Declared argument roles, {lower-cased key at any depth: role}, for `paths(@)` and friends;
    # None when the parameters declare none (roles are then inferred from names and values).
    roles: FrozenDict | None = None
    # Capabilities rules can select by (`tools: ["tag:destructive"]`): the tool's own tags and
    # its MCP annotations' hints that are set (readOnlyHint -> read-only, ...).
    tags: frozenset[str] = frozenset()
    # The JSON Schemas of a tool described in that dialect, as given (to_mcp, to_openai hand them back).
    input_schema: FrozenDict | None = None
    output_json_schema: FrozenDict | None = None
    annotations: FrozenDict | None = None
    _is_async: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Asked on every call; inspect is slow enough to matter there.
        object.__setattr__(self, "_is_async", inspect.iscoroutinefunction(self.execute))

    @property
    def takes_dispatch(self) -> bool:
        """True when execute takes (arguments, dispatch): it can read its signal."""
        return self._execute_takes_ctx

    @property
    def is_async(self) -> bool:
        """True when execute is a coroutine function."""
        return self._is_async

    def validate_arguments(self, arguments: Any) -> tuple[FrozenDict | None, list[str]]:
        """Validate untrusted arguments; return (frozen normalised arguments, problems)."""
        if not isinstance(arguments, Mapping):
            return None, [f"arguments must be an object, got {type(arguments).__name__}"]
        try:
            frozen = freeze(arguments)
        except FreezeError as exc:
            return None, [str(exc)]
        return self._arguments.document(frozen)

    def validate_value(self, value: Any) -> tuple[Any, list[str]]:
        """Validate a canonical value against the output schema; return (frozen value, problems)."""
        try:
            frozen = freeze(value)
        except FreezeError as exc:
            return None, [str(exc)]
        if self._output is None:
            return frozen, []
        document, problems = self._output.document(FrozenDict({"value": frozen}))
        return (None, problems) if document is None else (document["value"], [])

    def with_execute(
        self,
        execute: Callable[..., Any],
        *,
        run_in_thread: bool = True,
        render: Callable[[Mapping[str, Any], Any], Any] | None = None,
    ) -> ToolDefinition:
        """This definition with another body (and render); a catalog tool gets one this way. The schemas stay."""
        for label, fn in (("execute", execute), ("render", render or self.render)):
            if not callable(fn):
                raise DefinitionError(f"tool {self.name!r}: {label} must be callable, got {fn!r}")
        return dataclasses.replace(
            self,
            execute=execute,
            render=render or self.render,
            run_in_thread=run_in_thread,
            _execute_takes_ctx=_arity(execute) >= 2,
        )

    def call_execute(self, args: FrozenDict, ctx: Any) -> Any:
        """Invoke the body with (args) or (args, ctx), as it was declared."""
        if self._execute_takes_ctx:
            return self.execute(args, ctx)
        return self.execute(args)

    def to_json_schema(self) -> dict[str, Any]:
        """The parameters as a JSON Schema object (a JSON-Schema tool's own, as given)."""
        if self.input_schema is not None:
            return dict(thaw(self.input_schema))
        schema = object_schema(self.parameters)
        schema.setdefault("required", [])  # tool specs list it even when empty
        return schema

    def to_openai(self) -> dict[str, Any]:
        """The tool spec that OpenAI-style chat APIs expect."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.to_json_schema(),
            },
        }

    def to_mcp(self) -> dict[str, Any]:
        """The tool spec that MCP's tools/list returns (a JSON-Schema tool's own schemas and annotations)."""
        spec: dict[str, Any] = {"name": self.name}
        if self.description:
            spec["description"] = self.description
        spec["inputSchema"] = self.to_json_schema()
        if self.output_json_schema is not None:
            spec["outputSchema"] = thaw(self.output_json_schema)
        elif self.output_schema.get("type") == "dict":
            # MCP's outputSchema must describe an object; scalar values travel as content only.
            spec["outputSchema"] = field_schema(self.output_schema)
        if self.annotations is not None:
            spec["annotations"] = thaw(self.annotations)
        return spec


def define_tool(
    *,
    name: str,
    description: str = "",
    parameters: Mapping[str, Any] | None = None,
    execute: Callable[..., Any] | Callable[..., Awaitable[Any]],
    output: Mapping[str, Any] | None = None,
    finalize_content: Callable[..., Any] | None = None,
    run_in_thread: bool = True,
    tags: Iterable[str] = (),
    annotations: Mapping[str, Any] | None = None,
    input_schema: Mapping[str, Any] | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> ToolDefinition:
    """Build a validated tool definition; raise DefinitionError naming what is wrong.

    Arguments are described by `parameters` (Cerberus rules, `{city: {type: string, required:
    true}}`; a description is required) or by `input_schema` (a JSON Schema object, as MCP's
    inputSchema and OpenAI's parameters; `output_schema` is then the JSON Schema of the value,
    as MCP's outputSchema). `output` holds `schema` (Cerberus rules for the canonical value,
    e.g. `{type: string}`) and `render(args, value) -> [content blocks]`. `execute(args)` or
    `execute(args, ctx)` (two required parameters) returns the canonical value; `ctx.signal`
    fires on cancel or deadline. A synchronous `execute` runs in a worker thread unless
    `run_in_thread=False`. `tags` and MCP `annotations` (readOnlyHint, destructiveHint,
    idempotentHint, openWorldHint) give the capabilities rules select by; a parameter's `role`
    (`x-policy-role` in JSON Schema) tells rules what its value is.
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise DefinitionError(
            f"tool name {name!r} is not valid",
            hint="use 1-128 characters: letters, digits, _ . or -, not starting with . or -",
        )
    if not isinstance(description, str):
        raise DefinitionError(f"tool {name!r}: description must be a string")
    if (parameters is None) == (input_schema is None):
        raise DefinitionError(
            f"tool {name!r}: give exactly one of `parameters` (Cerberus rules) and `input_schema` (JSON Schema)",
            hint="e.g. input_schema={'type': 'object', 'properties': {'path': {'type': 'string'}}}",
        )
    if parameters is not None and not isinstance(parameters, Mapping):
        raise DefinitionError(f"tool {name!r}: parameters must be a mapping of name to rules")
    if input_schema is None and not description.strip():
        raise DefinitionError(
            f"tool {name!r}: description is empty",
            hint="say what the tool does and when not to use it; the model chooses by it",
        )
    output = dict(output or {})
    unknown = set(output) - {"schema", "render"}
    if unknown:
        raise DefinitionError(f"tool {name!r}: unknown output key(s) {sorted(unknown)}", hint="use schema and render")
    out_rules = output.get("schema") or {}
    if not isinstance(out_rules, Mapping):
        raise DefinitionError(f"tool {name!r}: output.schema must be a mapping of Cerberus rules")
    if output_schema is not None and out_rules:
        raise DefinitionError(
            f"tool {name!r}: give the value's schema once: output_schema (JSON Schema) or output.schema (Cerberus)"
        )
    render = output.get("render") or render_text
    for label, fn in (("execute", execute), ("output.render", render)):
        if not callable(fn):
            raise DefinitionError(f"tool {name!r}: {label} must be callable, got {fn!r}")
    if finalize_content is not None:
        if not callable(finalize_content):
            raise DefinitionError(f"tool {name!r}: finalize_content must be callable")
        if inspect.iscoroutinefunction(finalize_content):
            raise DefinitionError(
                f"tool {name!r}: finalize_content must be synchronous",
                hint="it is the last content fix-up and may not introduce a scheduling point",
            )
    if annotations is not None and not isinstance(annotations, Mapping):
        raise DefinitionError(f"tool {name!r}: annotations must be an object (MCP ToolAnnotations)")
    try:
        frozen_in = None if input_schema is None else freeze(input_schema)
        frozen_out_json = None if output_schema is None else freeze(output_schema)
        frozen_annotations = None if annotations is None else freeze(annotations)
        if input_schema is None:
            frozen_params = freeze(parameters)
            frozen_out = freeze(out_rules)
        else:
            if not isinstance(input_schema, Mapping) or input_schema.get("type", "object") != "object":
                raise DefinitionError(
                    f"tool {name!r}: input_schema must be a JSON Schema of an object",
                    hint='use {"type": "object", "properties": {...}}',
                )
            # The view only informs lint, the type checker and roles: a part it cannot express reads as "any".
            frozen_params = freeze(parameters_view(input_schema, name, where="input_schema", lenient=True))
            frozen_out = freeze(
                {} if output_schema is None else output_view(output_schema, name, where="output_schema", lenient=True)
            )
    except FreezeError as exc:
        raise DefinitionError(f"tool {name!r}: schema is not plain data: {exc}") from None
    arguments: ArgumentCheck
    if frozen_in is not None:
        arguments = _JsonSchemaCheck(frozen_in, f"tool {name!r}: input_schema")
    else:
        from policyengine.tools.cerberus_dialect import CerberusCheck

        arguments = CerberusCheck(frozen_params, "parameters", name)
    out_check: ArgumentCheck | None = None
    if frozen_out:
        from policyengine.tools.cerberus_dialect import CerberusCheck

        out_check = CerberusCheck({"value": frozen_out}, "output_schema" if frozen_out_json else "output.schema", name)
    return ToolDefinition(
        name=name,
        description=description,
        parameters=frozen_params,
        output_schema=frozen_out,
        execute=execute,
        render=render,
        finalize_content=finalize_content,
        run_in_thread=run_in_thread,
        _arguments=arguments,
        _output=out_check,
        _execute_takes_ctx=_arity(execute) >= 2,
        roles=_declared_roles(frozen_params),
        tags=_capabilities(name, tags, annotations),
        input_schema=frozen_in,
        output_json_schema=frozen_out_json,
        annotations=frozen_annotations,
    )


# MCP's behaviour hints, as the tags rules select by; only a hint that is set to true counts.
HINT_TAGS = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open-world",
}


def _capabilities(name: str, tags: Iterable[str], annotations: Mapping[str, Any] | None) -> frozenset[str]:
    """The tool's tags plus the tags of its MCP hints that are true."""
    if isinstance(tags, str) or not all(isinstance(t, str) and t for t in tags):
        raise DefinitionError(f"tool {name!r}: tags must be a list of non-empty strings", hint='e.g. ["writes"]')
    found = {t.lower() for t in tags}
    for hint, tag in HINT_TAGS.items():
        if annotations is not None and annotations.get(hint) is True:
            found.add(tag)
    return frozenset(found)


def _declared_roles(schema: Mapping[str, Any]) -> FrozenDict | None:
    """{lower-cased key: role} for every parameter, at any depth, that declares a role.

    A list's items take its key: a role declared on the items (`{type: list, schema: {type:
    string, role: path}}`) is the list's role, as a role on the list itself is.
    """
    found: dict[str, str] = {}

    def visit(key: str, rules: Mapping[str, Any]) -> None:
        if isinstance(rules.get("role"), str):
            found.setdefault(key.lower(), rules["role"])
        nested = rules.get("schema")
        if not isinstance(nested, Mapping):
            return
        types = rules.get("type")
        if "list" in ([types] if isinstance(types, str) else list(types or [])):
            visit(key, nested)  # the items' rules
        else:
            walk(nested)

    def walk(fields: Mapping[str, Any]) -> None:
        for key, rules in fields.items():
            if isinstance(rules, Mapping):
                visit(str(key), rules)

    walk(schema)
    return freeze(found) if found else None


def content_problems(content: Any) -> list[str]:
    """Problems with a list of content blocks ([] when it is well formed)."""
    if not isinstance(content, (list, tuple, FrozenList)):
        return [f"content must be a list of blocks, got {type(content).__name__}"]
    problems = []
    for i, item in enumerate(content):
        if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
            problems.append(f"content[{i}] must be an object with a string `type`")
        elif item["type"] == "text" and not isinstance(item.get("text"), str):
            problems.append(f"content[{i}] is a text block without a string `text`")
    return problems


@lru_cache(maxsize=1024)
def unknown_tool(name: str) -> ToolDefinition:
    """A tool no catalog declares: no parameters, no output schema, default render (built once per name)."""
    return define_tool(name=name, description=f"unknown tool {name}", parameters={}, execute=lambda _a: None)
