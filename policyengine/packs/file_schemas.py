"""The shipped schemas/*.yaml (manifests, rules, recorded calls, tests, properties) as JSON Schemas, for editors."""

from __future__ import annotations

from typing import Any

from policyengine.packs.rule_schemas import schema, schema_file
from policyengine.tools.json_schema import object_schema, to_json_schema

__all__ = ["NOT_STAGES", "export_schemas", "rule_schema"]

# Top-level keys of rules.yaml that are not stages: `common` holds the fields every stage shares,
# anchored once (&common) and merged into each stage by `<<: *common`.
NOT_STAGES = frozenset({"common"})

_TITLES = {
    "pack": "policyengine pack manifest (pack.yaml)",
    "rule-file": "policyengine rule file",
    "calls": "policyengine recorded call (one line of a JSON Lines file)",
    "tests": "policyengine policy test file",
    "properties": "policyengine property file (PACK/properties/*.yaml)",
}


def export_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schemas of pack manifests, rule files, recorded calls and (when shipped) test and property files."""
    rule_file = to_json_schema(schema("rule-file"), title=_TITLES["rule-file"], description=_comment("rule-file"))
    # rule-file.yaml only says each rule is a dict; the loader then checks it against its stage.
    rule_file["properties"]["rules"]["items"] = rule_schema()
    out = {
        "pack": to_json_schema(schema("pack"), title=_TITLES["pack"], description=_comment("pack")),
        "rule-file": rule_file,
        "calls": to_json_schema(schema("calls"), title=_TITLES["calls"], description=_comment("calls")),
    }
    for name in ("tests", "properties"):
        if _shipped(name):
            out[name] = to_json_schema(schema(name), title=_TITLES[name], description=_comment(name))
    return out


def rule_schema() -> dict[str, Any]:
    """One rule: `stage` picks the schema of that stage in rules.yaml (if/then per stage)."""
    stages = {name: fields for name, fields in schema("rules").items() if name not in NOT_STAGES}
    return {
        "type": "object",
        "description": "One rule; its `stage` decides which fields it may have.",
        "required": ["stage"],
        "properties": {"stage": {"enum": list(stages), "description": "The stage the rule runs in."}},
        "allOf": [
            {
                "if": {"properties": {"stage": {"const": name}}, "required": ["stage"]},
                "then": {"title": f"{name} rule", **object_schema(fields)},
            }
            for name, fields in stages.items()
        ],
    }


def _shipped(name: str) -> bool:
    return bool(schema_file(name).is_file())


def _comment(name: str) -> str:
    """The comment block that opens schemas/NAME.yaml, as one paragraph."""
    text = schema_file(name).read_text("utf-8")
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    paragraph = " ".join(lines)
    # The files open with "Cerberus schema of a ...": in a JSON Schema that says "A ...".
    prefix = "Cerberus schema of "
    return paragraph[len(prefix)].upper() + paragraph[len(prefix) + 1 :] if paragraph.startswith(prefix) else paragraph
