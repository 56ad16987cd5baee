"""Which schema a pack file is checked against: the shipped schemas/*.yaml, loaded once, and their problems located."""

from __future__ import annotations

import difflib
import pathlib
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import cerberus
import yaml

from policyengine.packs.yaml_source import SourceDoc
from policyengine.tools.validator import compile_schema
from policyengine.values.problems import Problem

Path = tuple[str | int, ...]


def schema_file(name: str) -> Any:
    """The shipped schemas/NAME.yaml: installed as policyengine.schemas, or beside a source tree."""
    try:
        return resources.files("policyengine.schemas").joinpath(f"{name}.yaml")
    except ModuleNotFoundError:  # running from a checkout whose package dir shadows the install
        # policyengine/packs/compiler.py -> the checkout, whose schemas/ folder installs as policyengine.schemas
        return pathlib.Path(__file__).resolve().parents[2] / "schemas" / f"{name}.yaml"


@cache
def schema(name: str) -> dict[str, Any]:
    """A Cerberus schema from the shipped schemas/ folder (rule-file, rules, pack, ...)."""
    text = schema_file(name).read_text("utf-8")
    return yaml.safe_load(text)  # type: ignore[no-any-return]


def schema_problems(
    doc: SourceDoc, data: Any, rules: Mapping[str, Any], base: Path, rule_id: str | None
) -> list[Problem]:
    """Validate `data` (found at `base` in `doc`) with Cerberus; one Problem per error, located."""
    fast = _fast_validator(rules)
    if fast is not None and isinstance(data, Mapping) and fast(data)[0] and _cross_fields_ok(rules, data):
        return []  # Cerberus, which is slow, only runs to explain what is wrong
    validator = _validator(rules)
    if validator.validate(data):
        return []
    problems = []
    flat = _flatten(validator.errors, ())
    # `decision` and `label` exclude each other and one is required: when both are missing, say it once.
    if ((("decision",), "required field") in flat) and ((("label",), "required field") in flat):
        flat = [item for item in flat if item != (("label",), "required field")]
    for path, message in flat:
        full = base + path
        code, hint, key = "PE201", None, False
        if message == "unknown field":
            code, key = "PE202", True
            known = _known_fields(rules, path)
            close = difflib.get_close_matches(str(path[-1]), known, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"allowed fields: {', '.join(known)}"
        elif message == "required field":
            code, hint = "PE203", f"add `{path[-1]}:`"
            if path == ("decision",) and "label" in rules:
                hint = "add `decision:` (allow, deny or ask), or `label:` for a rule that labels the session"
        elif message.startswith("must be of"):
            code = "PE204"
        elif message.startswith("unallowed value"):
            code = "PE205"
            allowed = _rule_at(rules, path).get("allowed")
            hint = f"allowed: {', '.join(map(str, allowed))}" if allowed else None
        problems.append(doc.problem(code, f"{_dotted(full)}: {message}", full, rule_id=rule_id, hint=hint, key=key))
    return problems


_VALIDATORS: dict[int, tuple[Mapping[str, Any], cerberus.Validator]] = {}


def _validator(rules: Mapping[str, Any]) -> cerberus.Validator:
    """One Cerberus validator per schema: building one normalises the schema, which is slow."""
    hit = _VALIDATORS.get(id(rules))
    if hit is None or hit[0] is not rules:  # the identity check guards against a reused id
        hit = _VALIDATORS[id(rules)] = (rules, cerberus.Validator(dict(rules)))
    return hit[1]


_FAST: dict[int, tuple[Mapping[str, Any], Any]] = {}
_CROSS = ("excludes", "dependencies", "meta")


def _fast_validator(rules: Mapping[str, Any]) -> Any:
    """The schema without its cross-field rules, compiled to closures (checked separately)."""
    hit = _FAST.get(id(rules))
    if hit is None or hit[0] is not rules:
        hit = _FAST[id(rules)] = (rules, compile_schema(_strip(rules)))
    return hit[1]


def _strip(document: Mapping[str, Any]) -> dict[str, Any]:
    return {field: _strip_rules(rules) for field, rules in document.items()}


def _strip_rules(rules: Any) -> Any:
    if not isinstance(rules, Mapping):
        return rules
    out = {k: v for k, v in rules.items() if k not in _CROSS}
    inner = out.get("schema")
    if isinstance(inner, Mapping):
        out["schema"] = _strip(inner) if "dict" in _type_names(out) else _strip_rules(inner)
    return out


def _type_names(rules: Mapping[str, Any]) -> list[str]:
    types = rules.get("type")
    return [types] if isinstance(types, str) else list(types or [])


def _cross_fields_ok(document: Mapping[str, Any], data: Mapping[str, Any]) -> bool:
    """`excludes` and `dependencies` hold at every level (the part the closures do not check)."""
    return _cross_check(document)(data)


# Compiled once per schema mapping (the shipped schemas are cached, so this stays small).
_CROSS_CHECKS: dict[int, tuple[Mapping[str, Any], Callable[[Mapping[str, Any]], bool]]] = {}


def _cross_check(document: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """_cross_fields_ok for one schema, with its rules read once: only fields that constrain others."""
    hit = _CROSS_CHECKS.get(id(document))
    if hit is not None and hit[0] is document:
        return hit[1]
    specs: dict[str, Callable[[Mapping[str, Any], Any], bool]] = {}
    for field, rules in document.items():
        if isinstance(rules, Mapping):
            spec = _field_check(rules)
            if spec is not None:
                specs[field] = spec

    def check(data: Mapping[str, Any]) -> bool:
        if specs:
            for field, value in data.items():
                spec = specs.get(field)
                if spec is not None and not spec(data, value):
                    return False
        return True

    _CROSS_CHECKS[id(document)] = (document, check)
    return check


def _field_check(rules: Mapping[str, Any]) -> Callable[[Mapping[str, Any], Any], bool] | None:
    """The cross-field conditions of one present field, or None when it has none (at any depth)."""
    excludes = rules.get("excludes")
    excluded = [excludes] if isinstance(excludes, str) else list(excludes or [])
    needs = rules.get("dependencies")
    if isinstance(needs, str):
        needs = [needs]
    inner = rules.get("schema")
    nested: Callable[[Mapping[str, Any]], bool] | None = None
    items: Callable[[Mapping[str, Any]], bool] | None = None
    if isinstance(inner, Mapping):
        if "dict" in _type_names(rules):
            nested = _cross_check(inner)
        if "list" in _type_names(rules):
            item = inner.get("schema") if "dict" in _type_names(inner) else None
            items = _cross_check(item) if isinstance(item, Mapping) else None
    if not excluded and needs is None and nested is None and items is None:
        return None

    def ok(data: Mapping[str, Any], value: Any) -> bool:
        if any(other in data for other in excluded):
            return False
        if isinstance(needs, Mapping):
            if any(data.get(k) not in (v if isinstance(v, list) else [v]) for k, v in needs.items()):
                return False
        elif needs is not None and any(k not in data for k in needs):
            return False
        if nested is not None and isinstance(value, Mapping) and not nested(value):
            return False
        return not (
            items is not None
            and isinstance(value, list)
            and any(isinstance(v, Mapping) and not items(v) for v in value)
        )

    return ok


def _flatten(tree: Mapping[Any, Any], prefix: Path) -> list[tuple[Path, str]]:
    out: list[tuple[Path, str]] = []
    for key, messages in tree.items():
        for message in messages:
            if isinstance(message, Mapping):
                out.extend(_flatten(message, (*prefix, key)))
            else:
                out.append(((*prefix, key), str(message)))
    return out


def _rule_at(rules: Mapping[str, Any], path: Path) -> Mapping[str, Any]:
    current: Mapping[str, Any] = {"schema": rules, "type": "dict"}
    for part in path:
        inner = current.get("schema", {})
        if current.get("type") == "list" or isinstance(part, int):
            current = inner if isinstance(inner, Mapping) else {}
            continue
        current = inner.get(part, {}) if isinstance(inner, Mapping) else {}
    return current


def _known_fields(rules: Mapping[str, Any], path: Path) -> list[str]:
    parent = _rule_at(rules, path[:-1]).get("schema", {})
    return sorted(str(k) for k in parent) if isinstance(parent, Mapping) else []


def _dotted(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
