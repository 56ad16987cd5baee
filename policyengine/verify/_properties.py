"""Property files: what a pack must never (or always) decide for the calls a condition picks, compiled once.

A property file is YAML beside a pack's tests:

    properties:
      - id: env-files-never-allowed
        never: [allow, ask]            # or  always: [deny]
        tools: ["@file_tools", "tag:filesystem", "read_*"]
        when: "paths(@)[?path_matches(@, '**/.env')] | length(@) > `0`"
        red_line: no-secret-files      # the red line it states: tried first, its gaps reported
    unstated:                          # red lines no property states, each with why
      - {red_line: no-seen-secrets-sent, why: "decides on the session's earlier results"}

`tools` and `when` are the rule language's (docs/rules.md), compiled with the packs' lists; a
property without `when` covers every call of its tools. Problems are collected and reported
together, located at `file:line:column` (PE901).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policyengine.language.expressions import Expression
from policyengine.packs.compiler import FileCompiler
from policyengine.packs.rules import ToolMatcher
from policyengine.packs.yaml_source import SourceDoc, load_yaml_file
from policyengine.values.problems import Location, Problem, ProblemSink, register_code

__all__ = ["DECISIONS", "PE901", "Property", "PropertyFiles", "PropertyKind", "load_properties", "load_property_files"]

PE901 = register_code("PE901", "property problem")
DECISIONS = ("allow", "ask", "deny", "invalid")
_KEYS = frozenset({"id", "description", "never", "always", "tools", "when", "red_line"})


class PropertyKind(enum.Enum):
    """`never`: no call may get one of the decisions; `always`: every call must get one of them."""

    NEVER = "never"
    ALWAYS = "always"


@dataclass(frozen=True)
class Property:
    """One compiled property: its id, kind, decisions, tools, condition (None: every call) and source."""

    id: str
    kind: PropertyKind
    decisions: frozenset[str]
    tools: ToolMatcher
    when: Expression | None
    when_text: str | None
    file: str
    line: int
    lists: Mapping[str, Any]  # what `lists.NAME` in `when` reads
    red_line: str | None = None  # the red line the property states (tried first by the proof)

    def violated_by(self, decision: str) -> bool:
        """Whether a call that got `decision` (and that `when` picks) breaks the property."""
        if self.kind is PropertyKind.NEVER:
            return decision in self.decisions
        return decision not in self.decisions


@dataclass(frozen=True)
class PropertyFiles:
    """The properties of some files, and the red lines they say no property states (id -> why)."""

    properties: list[Property]
    unstated: Mapping[str, str]


def load_properties(paths: Sequence[str | Path], lists: Mapping[str, Any], pack: str = "verify") -> list[Property]:
    """Every property of the files, compiled with `lists`; raises PackLoadError with every problem at once."""
    return load_property_files(paths, lists, pack).properties


def load_property_files(paths: Sequence[str | Path], lists: Mapping[str, Any], pack: str = "verify") -> PropertyFiles:
    """The files' properties and `unstated` red lines; raises PackLoadError with every problem at once."""
    sink = ProblemSink()
    found: list[Property] = []
    unstated: dict[str, str] = {}
    for path in paths:
        doc = load_yaml_file(path, sink)
        if doc is not None:
            found.extend(_file(doc, lists, pack, sink))
            unstated.update(_unstated(doc, sink))
    seen: dict[str, Property] = {}
    for prop in found:
        if prop.id in seen:
            first = seen[prop.id]
            sink.add(_problem_at(prop, f"duplicate property id {prop.id!r} (first at {first.file}:{first.line})"))
        seen.setdefault(prop.id, prop)
    sink.raise_if_errors()
    return PropertyFiles(found, unstated)


def _unstated(doc: SourceDoc, sink: ProblemSink) -> dict[str, str]:
    """The file's `unstated:` entries: a red line's id and why no property states it."""
    raw = doc.data.get("unstated", []) if isinstance(doc.data, Mapping) else []
    entries = raw if isinstance(raw, list) else [raw]
    found: dict[str, str] = {}
    for i, entry in enumerate(entries):
        red_line = entry.get("red_line") if isinstance(entry, Mapping) else None
        why = entry.get("why") if isinstance(entry, Mapping) else None
        if (
            not isinstance(red_line, str)
            or not isinstance(why, str)
            or not why.strip()
            or set(entry) != {"red_line", "why"}
        ):
            sink.add(
                doc.problem(
                    PE901,
                    "an `unstated` entry names a red line and says why no property states it",
                    ("unstated", i),
                    hint="unstated:\n  - red_line: RULE_ID\n    why: REASON",
                )
            )
            continue
        found[red_line] = why
    return found


def _file(doc: SourceDoc, lists: Mapping[str, Any], pack: str, sink: ProblemSink) -> list[Property]:
    raw = doc.data.get("properties") if isinstance(doc.data, Mapping) else None
    if not isinstance(raw, list) or not raw:
        sink.add(
            doc.problem(
                PE901,
                "a property file holds a non-empty `properties:` list",
                ("properties",),
                hint="properties:\n  - id: NAME\n    never: [allow]\n    tools: [TOOL]\n    when: CONDITION",
            )
        )
        return []
    compiler = FileCompiler(doc, {k: list(v) for k, v in lists.items()}, pack, sink)
    out: list[Property] = []
    for i, item in enumerate(raw):
        prop = _one(doc, compiler, item, ("properties", i), sink)
        if prop is not None:
            out.append(prop)
    return out


def _one(
    doc: SourceDoc, compiler: FileCompiler, item: Any, path: tuple[str | int, ...], sink: ProblemSink
) -> Property | None:
    if not isinstance(item, Mapping):
        sink.add(doc.problem(PE901, "a property is a mapping with id, never or always, tools and when", path))
        return None
    before = len(sink.errors)
    prop_id = item.get("id")
    if not isinstance(prop_id, str) or not prop_id.strip():
        sink.add(doc.problem(PE901, "a property needs an `id` (a name for reports)", path))
        prop_id = None
    for key in item:
        if key not in _KEYS:
            sink.add(
                doc.problem(
                    PE901,
                    f"unknown key {key!r} in a property",
                    (*path, key),
                    key=True,
                    rule_id=prop_id,
                    hint="a property has id, description, never or always, tools, when and red_line",
                )
            )
    kinds = [k for k in PropertyKind if k.value in item]
    if len(kinds) != 1:
        sink.add(
            doc.problem(
                PE901,
                "a property has exactly one of `never` and `always`",
                path,
                rule_id=prop_id,
                hint="never: [allow, ask] (no such decision), or always: [deny] (only these)",
            )
        )
        return None
    kind = kinds[0]
    decisions = _decisions(doc, item[kind.value], (*path, kind.value), prop_id, sink)
    tools_raw = item.get("tools")
    if not isinstance(tools_raw, list) or not tools_raw or not all(isinstance(t, str) for t in tools_raw):
        sink.add(
            doc.problem(
                PE901,
                "`tools` is a non-empty list of tool names, globs, @lists or tag:NAME",
                (*path, "tools"),
                rule_id=prop_id,
            )
        )
        return None
    name = prop_id or f"property {path[1]}"
    tools = compiler.tools(tools_raw, (*path, "tools"), name)
    when_text = item.get("when")
    if when_text is not None and not isinstance(when_text, str):
        sink.add(
            doc.problem(
                PE901, "`when` is a condition in the rule language (a string)", (*path, "when"), rule_id=prop_id
            )
        )
        return None
    when = compiler.expression(when_text, (*path, "when"), name) if when_text is not None else None
    if len(sink.errors) > before or tools is None or prop_id is None or decisions is None:
        return None
    location = doc.locate(path)
    lists = compiler.lists
    red_line = item.get("red_line")
    if red_line is not None and not isinstance(red_line, str):
        sink.add(doc.problem(PE901, "`red_line` is the id of the red line the property states", (*path, "red_line")))
        return None
    return Property(prop_id, kind, decisions, tools, when, when_text, location.file, location.line, lists, red_line)


def _decisions(
    doc: SourceDoc, raw: Any, path: tuple[str | int, ...], prop_id: str | None, sink: ProblemSink
) -> frozenset[str] | None:
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not items or not all(isinstance(d, str) and d in DECISIONS for d in items):
        sink.add(
            doc.problem(
                PE901,
                f"decisions are a list of {', '.join(DECISIONS)}",
                path,
                rule_id=prop_id,
                hint="e.g. never: [allow, ask]",
            )
        )
        return None
    return frozenset(items)


def _problem_at(prop: Property, message: str) -> Problem:
    return Problem(PE901, message, Location(prop.file, prop.line, 1), rule_id=prop.id)
