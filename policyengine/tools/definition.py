"""Tool definitions: parameters (Cerberus dialect), output schema and render, execute."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import cerberus
import re2

from policyengine.errors import DefinitionError, FreezeError
from policyengine.tools.json_schema import field_schema, object_schema
from policyengine.tools.validator import FastValidator, compile_schema
from policyengine.values.frozen import FrozenDict, FrozenList, freeze, thaw

NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


class ParameterValidator(cerberus.Validator):  # type: ignore[misc]
    """Cerberus with a `description` rule and booleans kept apart from numbers."""

    # Python's bool is an int; a model sending `true` for a count must not pass.
    types_mapping: ClassVar[dict[str, cerberus.TypeDefinition]] = {
        **cerberus.Validator.types_mapping,
        "integer": cerberus.TypeDefinition("integer", (int,), (bool,)),
        "float": cerberus.TypeDefinition("float", (float, int), (bool,)),
        "number": cerberus.TypeDefinition("number", (int, float), (bool,)),
    }

    def _validate_regex(self, pattern: str, field: Any, value: Any) -> None:
        """Match with RE2 (linear time): argument values are attacker-controlled.

        The rule's arguments are validated against this schema:
        {'type': 'string'}
        """
        if isinstance(value, str) and not re2.fullmatch(pattern, value):
            self._error(field, cerberus.errors.REGEX_MISMATCH)

    def _validate_description(self, description: Any, field: Any, value: Any) -> None:
        """Documentation for the model; never constrains the value.

        The rule's arguments are validated against this schema:
        {'type': 'string'}
        """

    def _validate_role(self, role: Any, field: Any, value: Any) -> None:
        """What the value is for policy (path, url, command, secret, email, amount, text); never constrains it.

        The rule's arguments are validated against this schema:
        {'type': 'string', 'allowed': ['path', 'url', 'command', 'secret', 'email', 'amount', 'text']}
        """


def _compile_schema(schema: Mapping[str, Any], what: str, tool: str) -> ParameterValidator:
    try:
        validator = ParameterValidator(thaw(schema))
    except cerberus.SchemaError as exc:
        raise DefinitionError(
            f"tool {tool!r}: {what} is not a valid Cerberus schema: {exc}",
            hint="each entry looks like {name: {type: string, required: true, description: ...}}",
        ) from None
    _refuse_free_objects(validator.schema, what, tool)
    return validator


def _refuse_free_objects(schema: Mapping[str, Any], what: str, tool: str) -> None:
    for key, rules in schema.items():
        if not isinstance(rules, Mapping):
            continue
        types = rules.get("type")
        types = [types] if isinstance(types, str) else list(types or [])
        if not types:
            raise DefinitionError(
                f"tool {tool!r}: {what} entry {key!r} has no `type`",
                hint="give every parameter a type: string, integer, float, number, boolean, list or dict",
            )
        if {"dict", "list"} & set(types) and "schema" not in rules and not rules.get("allow_unknown"):
            raise DefinitionError(
                f"tool {tool!r}: {what} entry {key!r} is a free-form {'object' if 'dict' in types else 'list'}",
                hint="give it a `schema` (typed fields, or the type of its items); free-form data defeats validation",
            )
        if "regex" in rules:
            try:
                re2.compile(rules["regex"])
            except re2.error as error:
                raise DefinitionError(
                    f"tool {tool!r}: {what} entry {key!r} has an invalid regex: {error}",
                    hint="regexes use RE2 syntax (linear time; no backreferences or lookaround)",
                ) from None
        inner = rules.get("schema")
        if isinstance(inner, Mapping):
            if "dict" in types:
                _refuse_free_objects(inner, what, tool)
            elif "list" in types:
                _refuse_free_objects({f"{key}[]": inner}, what, tool)


def describe_errors(errors: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Flatten Cerberus's nested error tree into 'path: message' lines."""
    lines: list[str] = []
    for key, messages in sorted(errors.items(), key=lambda kv: str(kv[0])):
        path = f"{prefix}.{key}" if prefix else str(key)
        for message in messages:
            if isinstance(message, Mapping):
                lines.extend(describe_errors(message, path))
            else:
                lines.append(f"{path}: {message}")
    return lines


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


_ABSENT = object()


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
    _arguments: ParameterValidator
    _output: ParameterValidator
    # The same schemas compiled to closures (tools/validator.py; None where it cannot): Cerberus only
    # runs to explain a refusal. Differential tests pin both to the same verdicts.
    _fast_arguments: FastValidator | None
    _execute_takes_ctx: bool
    _fast_output: FastValidator | None = None
    # Declared argument roles, {lower-cased key at any depth: role}, for `paths(@)` and friends;
    # None when the parameters declare none (roles are then inferred from names and values).
    roles: FrozenDict | None = None
    # Capabilities rules can select by (`tools: ["tag:destructive"]`): the tool's own tags and
    # its MCP annotations' hints that are set (readOnlyHint -> read-only, ...).
    tags: frozenset[str] = frozenset()
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
        if self._fast_arguments is not None:
            ok, document = self._fast_arguments(frozen)
            if ok and document is not None:
                if len(document) == len(frozen) and all(document.get(k, _ABSENT) is v for k, v in frozen.items()):
                    return frozen, []  # normalisation changed nothing: keep the frozen arguments as they are
                return freeze(document), []
        validator = self._arguments
        if not validator.validate(thaw(frozen)):
            return None, describe_errors(validator.errors)
        return freeze(validator.document), []

    def validate_value(self, value: Any) -> tuple[Any, list[str]]:
        """Validate a canonical value against output.schema; return (frozen value, problems)."""
        try:
            frozen = freeze(value)
        except FreezeError as exc:
            return None, [str(exc)]
        if not self.output_schema:
            return frozen, []
        if self._fast_output is not None:
            ok, document = self._fast_output({"value": frozen})
            if ok and document is not None:
                return freeze(document["value"]), []
        validator = self._output
        if not validator.validate({"value": thaw(frozen)}):
            return None, describe_errors(validator.errors)
        return freeze(validator.document["value"]), []

    def call_execute(self, args: FrozenDict, ctx: Any) -> Any:
        """Invoke the body with (args) or (args, ctx), as it was declared."""
        if self._execute_takes_ctx:
            return self.execute(args, ctx)
        return self.execute(args)

    def to_json_schema(self) -> dict[str, Any]:
        """The parameters as a JSON Schema object."""
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
        """The tool spec that MCP's tools/list returns."""
        spec: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.to_json_schema(),
        }
        # MCP's outputSchema must describe an object; scalar values travel as content only.
        if self.output_schema.get("type") == "dict":
            spec["outputSchema"] = field_schema(self.output_schema)
        return spec


def define_tool(
    *,
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    execute: Callable[..., Any] | Callable[..., Awaitable[Any]],
    output: Mapping[str, Any] | None = None,
    finalize_content: Callable[..., Any] | None = None,
    run_in_thread: bool = True,
    tags: Iterable[str] = (),
    annotations: Mapping[str, Any] | None = None,
) -> ToolDefinition:
    """Build a validated tool definition; raise DefinitionError naming what is wrong.

    `output` holds `schema` (Cerberus rules for the canonical value, e.g.
    `{type: string}`) and `render(args, value) -> [content blocks]`. `execute(args)`
    or `execute(args, ctx)` (two required parameters) returns the canonical value;
    `ctx.signal` fires on cancel or deadline. A synchronous
    `execute` runs in a worker thread unless `run_in_thread=False`. `tags` and MCP
    `annotations` (readOnlyHint, destructiveHint, idempotentHint, openWorldHint) give the
    capabilities rules select by; a parameter's `role` tells rules what its value is.
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise DefinitionError(
            f"tool name {name!r} is not valid",
            hint="use 1-64 characters: a letter or _ first, then letters, digits, _ . or -",
        )
    if not isinstance(description, str) or not description.strip():
        raise DefinitionError(
            f"tool {name!r}: description is empty",
            hint="say what the tool does and when not to use it; the model chooses by it",
        )
    if not isinstance(parameters, Mapping):
        raise DefinitionError(f"tool {name!r}: parameters must be a mapping of name to rules")
    output = dict(output or {})
    unknown = set(output) - {"schema", "render"}
    if unknown:
        raise DefinitionError(f"tool {name!r}: unknown output key(s) {sorted(unknown)}", hint="use schema and render")
    out_schema = output.get("schema") or {}
    if not isinstance(out_schema, Mapping):
        raise DefinitionError(f"tool {name!r}: output.schema must be a mapping of Cerberus rules")
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
    try:
        frozen_params = freeze(parameters)
        frozen_out = freeze(out_schema)
    except FreezeError as exc:
        raise DefinitionError(f"tool {name!r}: schema is not plain data: {exc}") from None
    arguments = _compile_schema(frozen_params, "parameters", name)
    out_validator = _compile_schema({"value": frozen_out} if frozen_out else {}, "output.schema", name)
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
        _output=out_validator,
        _fast_arguments=compile_schema(arguments.schema),
        _fast_output=compile_schema(out_validator.schema) if frozen_out else None,
        _execute_takes_ctx=_arity(execute) >= 2,
        roles=_declared_roles(frozen_params),
        tags=_capabilities(name, tags, annotations),
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
