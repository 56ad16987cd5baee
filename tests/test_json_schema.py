"""JSON Schema export: Cerberus rules -> draft 2020-12; shipped files pass, broken ones fail like the loader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cerberus
import jsonschema  # type: ignore[import-untyped]  # no stubs installed (types-jsonschema is not a dev dependency)
import pytest
import yaml

from policyengine import PackLoadError, load_pack
from policyengine.enforce.evaluate import Verdict
from policyengine.packs import file_schemas as export
from policyengine.packs.file_schemas import NOT_STAGES, export_schemas, rule_schema
from policyengine.packs.rule_schemas import schema
from policyengine.packs.yaml_source import load_yaml
from policyengine.tools.json_schema import DIALECT, pattern_from_regex, regex_from_pattern, to_json_schema
from policyengine.values.problems import ProblemSink
from policyengine.values.results import RULE_STAGES, Outcome, Stage

Validator = jsonschema.Draft202012Validator

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted(REPO.glob("policies/*/*.yaml"))
SHIPPED_TESTS = sorted(REPO.glob("policies/*/tests/*.yaml"))
BFCL_CALLS = REPO / "examples" / "bfcl-calls.jsonl"


@pytest.fixture(scope="module")
def schemas() -> dict[str, dict[str, Any]]:
    """Every exported JSON Schema, built once."""
    return export_schemas()


def loaded(path: Path) -> Any:
    """A YAML file read the way the pack loader reads it (YAML 1.2 core schema)."""
    sink = ProblemSink()
    doc = load_yaml(path.read_bytes(), str(path), sink)
    assert doc is not None, sink.render()
    return doc.data


def errors(json_schema: dict[str, Any], data: Any) -> list[str]:
    """Every JSON Schema error message for `data`."""
    return [error.message for error in Validator(json_schema).iter_errors(data)]


def agree(rules: dict[str, Any], document: Any) -> bool:
    """Cerberus and the exported JSON Schema give the same verdict; returns that verdict."""
    cerberus_ok = cerberus.Validator(rules).validate(document)
    json_ok = Validator(to_json_schema(rules, title="t")).is_valid(document)
    assert cerberus_ok == json_ok, (rules, document)
    return bool(json_ok)


# -- the exported set ------------------------------------------------------------------------------


def test_every_exported_schema_is_a_valid_draft_2020_12_schema(schemas: dict[str, dict[str, Any]]) -> None:
    assert {"pack", "rule-file", "calls"} <= set(schemas)
    for name, exported in schemas.items():
        Validator.check_schema(exported)
        assert exported["$schema"] == DIALECT
        assert exported["title"]
        assert exported["description"], f"{name}: the leading comment of the YAML file is its description"
        json.dumps(exported)  # plain JSON, ready for an editor


def test_tests_schema_is_skipped_when_not_shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "_shipped", lambda name: False)
    assert set(export_schemas()) == {"pack", "rule-file", "calls"}


def test_tests_schema_is_exported_when_shipped(schemas: dict[str, dict[str, Any]]) -> None:
    if not export._shipped("tests"):
        pytest.skip("schemas/tests.yaml is not shipped")
    assert schemas["tests"]["properties"]["tests"]["type"] == "array"


def test_common_is_not_a_stage() -> None:
    stages = rule_schema()["properties"]["stage"]["enum"]
    assert "common" in NOT_STAGES and "common" in schema("rules")
    assert stages == [s.value for s in RULE_STAGES]
    assert schema("rules")["common"]["stage"]["allowed"] == stages


# -- shipped files validate ------------------------------------------------------------------------


@pytest.mark.parametrize("path", SHIPPED, ids=[f"{p.parent.name}/{p.name}" for p in SHIPPED])
def test_shipped_pack_files_validate(schemas: dict[str, dict[str, Any]], path: Path) -> None:
    name = "pack" if path.name == "pack.yaml" else "rule-file"
    assert errors(schemas[name], loaded(path)) == []


@pytest.mark.parametrize("path", SHIPPED_TESTS, ids=[f"{p.parent.parent.name}/{p.name}" for p in SHIPPED_TESTS])
def test_shipped_policy_tests_validate(schemas: dict[str, dict[str, Any]], path: Path) -> None:
    if "tests" not in schemas:
        pytest.skip("schemas/tests.yaml is not shipped")
    assert errors(schemas["tests"], loaded(path)) == []


SHIPPED_PROPERTIES = sorted(REPO.glob("policies/*/properties/*.yaml"))


@pytest.mark.parametrize("path", SHIPPED_PROPERTIES, ids=[p.parent.parent.name for p in SHIPPED_PROPERTIES])
def test_shipped_property_files_validate(schemas: dict[str, dict[str, Any]], path: Path) -> None:
    assert errors(schemas["properties"], loaded(path)) == []


@pytest.mark.parametrize(
    "document",
    [
        {"properties": []},
        {"properties": [{"id": "x", "tools": ["a"]}]},  # neither never nor always
        {"properties": [{"id": "x", "never": ["allow"], "always": ["deny"], "tools": ["a"]}]},
        {"properties": [{"id": "x", "never": ["maybe"], "tools": ["a"]}]},
        {"properties": [{"id": "x", "never": ["allow"], "tools": ["a"], "oops": 1}]},
        {"properties": [{"id": "x", "never": ["allow"], "tools": ["a"]}], "unstated": [{"red_line": "r"}]},
    ],
)
def test_a_broken_property_file_fails_the_schema_and_the_loader(
    tmp_path: Path, schemas: dict[str, dict[str, Any]], document: dict[str, Any]
) -> None:
    from policyengine.verify import load_properties

    assert errors(schemas["properties"], document) != []
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    with pytest.raises(PackLoadError):
        load_properties([path], {})


def test_shipped_packs_are_there() -> None:
    assert any(p.name == "pack.yaml" for p in SHIPPED)
    assert len(SHIPPED) > 2


# -- broken rule files: refused by the JSON Schema and by the loader alike -------------------------

GOOD_RULES: dict[str, dict[str, Any]] = {
    "pre-execute allow final": {
        "id": "allow-reads",
        "stage": "pre-execute",
        "tools": ["read"],
        "decision": "allow",
        "final": True,
    },
    "pre-execute deny with reason": {
        "id": "no-env",
        "description": "No .env files.",
        "stage": "pre-execute",
        "tools": ["fs_*", "@writers"],
        "when": "arguments.path == '.env'",
        "decision": "deny",
        "reason": "{name} may not touch .env",
    },
    "guard": {"id": "red-line", "stage": "guard", "tools": ["*"], "decision": "deny", "reason": "no"},
    "guard without decision": {"id": "red-line", "stage": "guard", "tools": ["*"], "reason": "no"},
    "execute": {"id": "deadline", "stage": "execute", "tools": ["*"], "timeout": 5, "retries": 2, "backoff": 0.5},
    "post-execute redact": {
        "id": "hide",
        "stage": "post-execute",
        "tools": ["*"],
        "redact": [{"keys": ["*token*"], "replace_with": None}, {"path": "a.b", "keep_last": 4}],
    },
    "post-execute block": {"id": "stop", "stage": "post-execute", "tools": ["*"], "block": "fix {name}"},
}

BAD_RULES: dict[str, dict[str, Any]] = {
    "guard with decision allow": {"id": "g", "stage": "guard", "tools": ["*"], "decision": "allow", "reason": "x"},
    "unknown field": {"id": "r", "stage": "pre-execute", "tools": ["*"], "decision": "deny", "severity": "high"},
    "missing id": {"stage": "pre-execute", "tools": ["*"], "decision": "deny"},
    "stage typo": {"id": "r", "stage": "pre_execute", "tools": ["*"], "decision": "deny"},
    "missing stage": {"id": "r", "tools": ["*"], "decision": "deny"},
    "final on a deny": {"id": "r", "stage": "pre-execute", "tools": ["*"], "decision": "deny", "final": True},
    "guard without reason": {"id": "g", "stage": "guard", "tools": ["*"]},
    "decision of another stage": {"id": "r", "stage": "execute", "tools": ["*"], "timeout": 1, "decision": "deny"},
    "bad id": {"id": "Bad Id", "stage": "pre-execute", "tools": ["*"], "decision": "deny"},
    "no tools": {"id": "r", "stage": "pre-execute", "tools": [], "decision": "deny"},
    "empty when": {"id": "r", "stage": "pre-execute", "tools": ["*"], "when": "", "decision": "deny"},
    "timeout zero": {"id": "r", "stage": "execute", "tools": ["*"], "timeout": 0},
    "backoff without retries": {"id": "r", "stage": "execute", "tools": ["*"], "timeout": 1, "backoff": 1},
    "redact and content": {
        "id": "r",
        "stage": "post-execute",
        "tools": ["*"],
        "redact": [{"path": "a"}],
        "content": "hidden",
    },
    "redact path and keys": {
        "id": "r",
        "stage": "post-execute",
        "tools": ["*"],
        "redact": [{"path": "a", "keys": ["b"]}],
    },
    "replace_with and keep_last": {
        "id": "r",
        "stage": "post-execute",
        "tools": ["*"],
        "redact": [{"path": "a", "replace_with": "x", "keep_last": 2}],
    },
}

BAD_FILES: dict[str, dict[str, Any]] = {
    "unknown top-level key": {"rule": []},
    "bad list name": {"lists": {"bad-name": ["x"]}},
    "list of lists": {"lists": {"names": [["x"]]}},
    "rules not a list": {"rules": {"id": "r"}},
}


def write_pack(root: Path, rule_file: dict[str, Any]) -> Path:
    """A pack folder with one rule file and the lists the good rules use."""
    folder = root / "pack"
    folder.mkdir()
    manifest = {"name": "t", "version": "1.0.0", "files": ["lists.yaml", "rules.yaml"]}
    (folder / "pack.yaml").write_text(yaml.safe_dump(manifest), "utf-8")
    (folder / "lists.yaml").write_text(yaml.safe_dump({"lists": {"writers": ["fs_write"]}}), "utf-8")
    (folder / "rules.yaml").write_text(yaml.safe_dump(rule_file, sort_keys=False), "utf-8")
    return folder


@pytest.mark.parametrize("case", list(GOOD_RULES))
def test_good_rules_pass_both(tmp_path: Path, schemas: dict[str, dict[str, Any]], case: str) -> None:
    rule_file = {"rules": [GOOD_RULES[case]]}
    assert errors(schemas["rule-file"], rule_file) == []
    load_pack(write_pack(tmp_path, rule_file))


@pytest.mark.parametrize("case", list(BAD_RULES) + list(BAD_FILES))
def test_bad_rules_fail_both(tmp_path: Path, schemas: dict[str, dict[str, Any]], case: str) -> None:
    rule_file = BAD_FILES[case] if case in BAD_FILES else {"rules": [BAD_RULES[case]]}
    assert errors(schemas["rule-file"], rule_file) != []
    with pytest.raises(PackLoadError):
        load_pack(write_pack(tmp_path, rule_file))


def test_stage_specific_error_names_the_field(schemas: dict[str, dict[str, Any]]) -> None:
    found = errors(schemas["rule-file"], {"rules": [BAD_RULES["guard with decision allow"]]})
    assert any("'allow' is not one of ['deny']" in message for message in found)


@pytest.mark.parametrize(
    "manifest",
    [
        {"name": "t", "version": "1.0.0"},
        {"name": "T", "version": "1.0.0", "files": ["a.yaml"]},
        {"name": "t", "version": "1.0", "files": ["a.yaml"]},
        {"name": "t", "version": "1.0.0", "files": []},
        {"name": "t", "version": "1.0.0", "files": ["/abs.yaml"]},
        {"name": "t", "version": "1.0.0", "files": ["a.yaml"], "default": "block"},
        {"name": "t", "version": "1.0.0", "files": ["a.yaml"], "owner": "me"},
    ],
)
def test_bad_manifests_fail_both(tmp_path: Path, schemas: dict[str, dict[str, Any]], manifest: dict[str, Any]) -> None:
    assert errors(schemas["pack"], manifest) != []
    (tmp_path / "pack.yaml").write_text(yaml.safe_dump(manifest), "utf-8")
    (tmp_path / "a.yaml").write_text("rules: []\n", "utf-8")
    with pytest.raises(PackLoadError):
        load_pack(tmp_path)


# -- recorded calls --------------------------------------------------------------------------------


def test_bfcl_recorded_calls_validate(schemas: dict[str, dict[str, Any]]) -> None:
    json_validator = Validator(schemas["calls"])
    cerberus_validator = cerberus.Validator(schema("calls"))
    lines = BFCL_CALLS.read_text("utf-8").splitlines()
    assert len(lines) == 1161
    for line in lines:
        call = json.loads(line)
        assert json_validator.is_valid(call), line
        assert cerberus_validator.validate(call), (line, cerberus_validator.errors)


GOOD_CALL = {
    "call_id": "c1",
    "name": "cat",
    "arguments": {"file_name": "a", "nested": {"x": [1, None]}},
    "agent": "planner",
    "timestamp": "2024-05-01T10:00:00Z",
    "session": "s",
    "turn": 0,
    "result": {"outcome": "ok", "value": None, "content": [{"type": "text", "text": "hi"}, {"type": "image"}]},
    "decision": "deny",
    "stage": "guard",
    "rule": "no-system-dirs",
    "reason": "Red line",
    "pack": "baseline",
    "digest": "sha256:" + "0" * 64,
}


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"timestamp": 1714557600.5},
        {"result": {"value": {"any": ["thing"]}}},
        {"stage": None, "rule": None, "pack": None, "digest": None, "reason": None},
        {"unparsed": "cat('a'"},
    ],
)
def test_good_calls_pass_both(change: dict[str, Any]) -> None:
    assert agree(schema("calls"), {**GOOD_CALL, **change})


@pytest.mark.parametrize(
    "change",
    [
        {"call_id": None},
        {"call_id": ""},
        {"arguments": ["a"]},
        {"turn": -1},
        {"turn": "1"},
        {"timestamp": True},
        {"result": {"outcome": "exploded"}},
        {"result": {"content": [{"text": "no type"}]}},
        {"result": {"content": "text"}},
        {"result": {"outcome": "ok", "extra": 1}},
        {"decision": "maybe"},
        {"stage": "somewhere"},
        {"digest": "md5:abc"},
        {"token": "secret"},
    ],
)
def test_bad_calls_fail_both(change: dict[str, Any]) -> None:
    assert not agree(schema("calls"), {**GOOD_CALL, **change})


def test_bad_call_missing_name_fails_both() -> None:
    call = {k: v for k, v in GOOD_CALL.items() if k != "name"}
    assert not agree(schema("calls"), call)


def test_calls_schema_follows_the_enums() -> None:
    calls = schema("calls")
    assert calls["result"]["schema"]["outcome"]["allowed"] == [o.value for o in Outcome]
    assert calls["stage"]["allowed"] == [s.value for s in Stage]
    assert calls["decision"]["allowed"] == [d.value for d in Verdict]


def test_every_calls_field_is_documented() -> None:
    def walk(fields: dict[str, Any], where: str) -> None:
        for name, rules in fields.items():
            assert rules.get("meta", {}).get("description"), f"{where}{name} has no meta.description"
            if isinstance(rules.get("schema"), dict) and rules.get("type") == "dict":
                walk(rules["schema"], f"{where}{name}.")

    walk(schema("calls"), "")


# -- the conversion, rule by rule ------------------------------------------------------------------


def test_conversion_of_common_rules() -> None:
    rules = {
        "name": {"type": "string", "required": True, "regex": "[a-z]+", "meta": {"description": "A name."}},
        "kind": {"type": "string", "allowed": ["a", "b"], "nullable": True, "default": "a"},
        "tags": {"type": "list", "minlength": 1, "maxlength": 3, "schema": {"type": "string", "empty": False}},
        "count": {"type": ["integer", "float"], "min": 0, "max": 10},
        "any": {"nullable": True},
        "amount": {"type": ["float", "number"]},
        "modes": {"type": "list", "allowed": ["r", "w"], "schema": {"type": "string"}},
    }
    out = to_json_schema(rules, title="T", description="D")
    assert out["$schema"] == DIALECT and out["title"] == "T" and out["description"] == "D"
    assert out["required"] == ["name"]
    assert out["additionalProperties"] is False
    props = out["properties"]
    assert props["name"] == {"description": "A name.", "type": "string", "pattern": "^(?:[a-z]+)$"}
    assert props["kind"] == {"type": ["string", "null"], "enum": ["a", "b", None], "default": "a"}
    assert props["tags"] == {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "minLength": 1}}
    assert props["count"] == {"type": ["integer", "number"], "minimum": 0, "maximum": 10}
    assert props["any"] == {}
    assert props["amount"] == {"type": "number"}
    assert props["modes"] == {"type": "array", "items": {"enum": ["r", "w"], "type": "string"}}


def test_conversion_of_dicts_keys_and_values() -> None:
    rules = {
        "open": {"type": "dict", "allow_unknown": True, "schema": {"a": {"type": "integer"}}},
        "closed": {"type": "dict", "schema": {"a": {"type": "integer", "required": True}}},
        "free": {"type": "dict"},
        "map": {
            "type": "dict",
            "keysrules": {"type": "string", "regex": "^[a-z]+$"},
            "valuesrules": {"type": "integer"},
        },
    }
    props = to_json_schema(rules, title="T")["properties"]
    assert "additionalProperties" not in props["open"]  # JSON Schema objects are open by default
    assert props["closed"]["additionalProperties"] is False and props["closed"]["required"] == ["a"]
    assert props["free"] == {"type": "object"}
    assert props["map"]["propertyNames"] == {"type": "string", "pattern": "^[a-z]+$"}
    assert props["map"]["additionalProperties"] == {"type": "integer"}


def test_conversion_of_dependencies_and_excludes() -> None:
    rules = {
        "mode": {"type": "string"},
        "final": {"type": "boolean", "dependencies": {"mode": ["allow"]}},
        "backoff": {"type": "number", "dependencies": "retries"},
        "retries": {"type": "integer"},
        "a": {"type": "string", "excludes": ["b", "c"]},
        "b": {"type": "string", "excludes": "a"},
        "c": {"type": "string"},
    }
    out = to_json_schema(rules, title="T")
    assert out["dependentRequired"] == {"backoff": ["retries"]}
    assert {
        "if": {"required": ["final"]},
        "then": {"required": ["mode"], "properties": {"mode": {"enum": ["allow"]}}},
    } in out["allOf"]
    assert {"not": {"required": ["a", "b"]}} in out["allOf"]
    assert {"not": {"required": ["a", "c"]}} in out["allOf"]
    assert len(out["allOf"]) == 3  # a-b once, though both sides declare it
    for document in (
        {"final": True, "mode": "allow"},
        {"final": True, "mode": "deny"},
        {"final": True},
        {"mode": "deny"},
        {"backoff": 1},
        {"backoff": 1, "retries": 2},
        {"a": "x"},
        {"a": "x", "b": "y"},
        {"b": "y", "c": "z"},
        {"a": "x", "c": "z"},
    ):
        agree(rules, document)


@pytest.mark.parametrize(
    "document",
    [
        {"s": "abc"},
        {"s": ""},
        {"s": "ABC"},
        {"s": None},
        {"l": []},
        {"l": ["a"]},
        {"l": ["a", "b", "c", "d"]},
        {"l": ["x"]},
        {"n": 5},
        {"n": 11},
        {"n": 2.5},
        {"n": "5"},
        {"d": {"k": 1}},
        {"d": {"k": "1"}},
        {"d": {"K": 1}},
        {"d": {}},
        {"u": {"x": 1, "y": 2}},
        {"u": {"x": "1"}},
        {"e": "yes"},
        {"e": ""},
        {"x": 1},
        {},
    ],
)
def test_exported_schema_agrees_with_cerberus(document: dict[str, Any]) -> None:
    rules = {
        "s": {"type": "string", "regex": "[a-z]*", "nullable": True, "maxlength": 3},
        "l": {"type": "list", "allowed": ["a", "b", "c", "d"], "maxlength": 3},
        "n": {"type": "number", "min": 0, "max": 10},
        "d": {
            "type": "dict",
            "keysrules": {"type": "string", "regex": "[a-z]+"},
            "valuesrules": {"type": "integer"},
            "minlength": 1,
        },
        "u": {"type": "dict", "allow_unknown": True, "schema": {"x": {"type": "integer"}}},
        "e": {"type": "string", "empty": False},
    }
    agree(rules, document)


def test_of_rules_and_fixed_items() -> None:
    rules = {
        "either": {"anyof": [{"type": "string"}, {"type": "integer", "min": 0}]},
        "pair": {"type": "list", "items": [{"type": "string"}, {"type": "integer"}]},
        "no": {"type": "string", "forbidden": ["root"]},
    }
    for document in (
        {"either": "a"},
        {"either": 1},
        {"either": -1},
        {"either": 1.5},
        {"pair": ["a", 1]},
        {"pair": ["a"]},
        {"pair": [1, "a"]},
        {"no": "user"},
        {"no": "root"},
    ):
        agree(rules, document)


@pytest.mark.parametrize(
    ("regex", "pattern"),
    [
        ("^[a-z]+$", "^[a-z]+$"),
        ("[a-z]+", "^(?:[a-z]+)$"),
        ("^a|b$", "^(?:^a|b$)$"),
        ("^(a|b)$", "^(a|b)$"),
        ("^a\\$", "^(?:^a\\$)$"),
    ],
)
def test_patterns_keep_the_whole_string_match(regex: str, pattern: str) -> None:
    assert pattern_from_regex(regex) == pattern


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("^/", ["/a", "/"], ["a/"]),
        ("ab|cd", ["xxcd", "ab\n"], ["ac"]),
        ("x$", ["ax"], ["xa"]),
        ("[|]", ["a|b"], ["ab"]),
    ],
)
def test_json_schema_patterns_become_whole_string_regexes(pattern: str, matches: list[str], misses: list[str]) -> None:
    import re

    regex = regex_from_pattern(pattern)
    for text in matches:
        assert re.search(pattern, text) and re.fullmatch(regex, text), (pattern, regex, text)
    for text in misses:
        assert not re.search(pattern, text) and not re.fullmatch(regex, text), (pattern, regex, text)
