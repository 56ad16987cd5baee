"""The Cerberus dialect of tool schemas: checked at definition, validated by compiled closures, explained by Cerberus.

Loaded only by tools defined in this dialect (YAML and Python definitions, BFCL catalogs):
importing Cerberus costs ~30 ms, which a tool described in JSON Schema never pays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import cerberus
import re2

from policyengine.errors import DefinitionError
from policyengine.tools.validator import FastValidator, compile_schema
from policyengine.values.frozen import FrozenDict, freeze, thaw

__all__ = ["CerberusCheck", "ParameterValidator", "describe_errors"]

_ABSENT = object()


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
        """What the value is for policy (path, url, command, secret, email, amount, glob, text); never constrains it.

        The rule's arguments are validated against this schema:
        {'type': 'string', 'allowed': ['path', 'url', 'command', 'secret', 'email', 'amount', 'glob', 'text']}
        """


class CerberusCheck:
    """A document schema compiled twice: closures decide, Cerberus explains a refusal."""

    __slots__ = ("_fast", "_slow")

    def __init__(self, schema: Mapping[str, Any], what: str, tool: str) -> None:
        try:
            self._slow = ParameterValidator(thaw(schema))
        except cerberus.SchemaError as exc:
            raise DefinitionError(
                f"tool {tool!r}: {what} is not a valid Cerberus schema: {exc}",
                hint="each entry looks like {name: {type: string, required: true, description: ...}}",
            ) from None
        _refuse_free_objects(self._slow.schema, what, tool)
        # None where the closures cannot express a rule; differential tests pin both to the same verdicts.
        self._fast: FastValidator | None = compile_schema(self._slow.schema)

    def document(self, frozen: FrozenDict) -> tuple[FrozenDict | None, list[str]]:
        """(the normalised document, []) when `frozen` passes, else (None, problems)."""
        if self._fast is not None:
            ok, document = self._fast(frozen)
            if ok and document is not None:
                if len(document) == len(frozen) and all(document.get(k, _ABSENT) is v for k, v in frozen.items()):
                    return frozen, []  # normalisation changed nothing: keep the frozen arguments as they are
                return freeze(document), []
        validator = self._slow
        if not validator.validate(thaw(frozen)):
            return None, describe_errors(validator.errors)
        return freeze(validator.document), []


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
                hint="give it a `schema` (typed fields, or the type of its items), `allow_unknown: true`, "
                "or describe the tool in JSON Schema (input_schema=), where free-form objects are allowed",
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
