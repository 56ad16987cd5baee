"""Type checking rules against a tool catalog: each slip at its column, look-alikes silent, shipped packs clean."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from policyengine.packs import type_check
from policyengine.packs.loader import Pack, load_pack, load_packs
from policyengine.packs.type_check import (
    ANY,
    ARRAY,
    NULL,
    NUMBER,
    OBJECT,
    PE601,
    PE602,
    PE603,
    PE604,
    PE605,
    PE606,
    PE607,
    STRING,
    check_types,
    document_type,
    schema_type,
    union,
)
from policyengine.tools.catalog import load_catalog
from policyengine.tools.definition import ToolDefinition, define_tool
from policyengine.values.problems import CODES, PackLoadError, Problem, Severity
from support import read_yaml

ROOT = Path(__file__).resolve().parent.parent
CASES = Path(__file__).parent / "type_check" / "cases.yaml"
BFCL_TOOLS = ROOT / "examples" / "bfcl-tools.jsonl"

CASE_KEYS = {"description", "rule", "rules", "lists", "expect", "style"}
EXPECT_KEYS = {"code", "field", "at", "nth", "rule", "says", "hint"}
TEMPLATE_KEYS = ("when", "reason", "content", "block")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


@cache
def _suite() -> dict[str, Any]:
    data: dict[str, Any] = read_yaml(CASES)
    return data


def _cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = _suite()["cases"]
    return cases


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ToolDefinition]:
    path = tmp_path_factory.mktemp("catalog") / "tools.json"
    path.write_text(json.dumps(_suite()["catalog"]), encoding="utf-8")
    return load_catalog(path)


def _scalar(key: str, text: str, style: str) -> list[str]:
    """The lines of `key: text` in a rule, in the case's scalar style."""
    if style == "double":
        return [f"    {key}: {json.dumps(text, ensure_ascii=False)}"]
    if style == "single":
        return [f"    {key}: '{text.replace(chr(39), chr(39) * 2)}'"]
    return [f"    {key}: >-", f"      {text}"]


def _rule_lines(rule: Mapping[str, Any], style: str) -> list[str]:
    lines = [f"  - id: {rule['id']}"]
    for key, value in rule.items():
        if key == "id":
            continue
        if key == "tools":
            entries = [t if _PLAIN.fullmatch(t) else json.dumps(t) for t in value]
            lines.append(f"    tools: [{', '.join(entries)}]")
        elif key in TEMPLATE_KEYS:
            lines.extend(_scalar(key, value, style))
        else:
            lines.append(f"    {key}: {json.dumps(value)}")
    return lines


def _write_case(folder: Path, case: Mapping[str, Any]) -> Path:
    rules = case.get("rules") or [case["rule"]]
    lines: list[str] = []
    if case.get("lists"):
        lines.append("lists:")
        lines.extend(f"  {name}: {json.dumps(values)}" for name, values in case["lists"].items())
    lines.append("rules:")
    for rule in rules:
        lines.extend(_rule_lines(rule, case.get("style", "block")))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pack.yaml").write_text("name: cases\nversion: 1.0.0\nfiles: [rules.yaml]\n", encoding="utf-8")
    (folder / "rules.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "rules.yaml"


def _expected_place(path: Path, rule_id: str, field: str, at: str, nth: int = 1) -> tuple[int, int]:
    """(line, column) of the nth `at` after `field:` inside the rule (a quoted tools entry: at its quote)."""
    lines = path.read_text("utf-8").split("\n")
    start = lines.index(f"  - id: {rule_id}")
    key = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(f"    {field}:"))
    seen = 0
    for number in range(key, len(lines)):
        line = lines[number]
        if number > key and (line.startswith("  - ") or re.match(r"    \w+:", line)):
            break
        # On the key line, search after the key (and a block scalar's `>-`).
        column = line.find(
            at, len(line) if number == key and line.endswith(">-") else len(f"    {field}:") * (number == key)
        )
        while column >= 0:
            seen += 1
            if seen == nth:
                if field == "tools" and column > 0 and line[column - 1] == '"':
                    column -= 1  # a quoted entry starts at its quote, as YAML places the node
                return number + 1, column + 1
            column = line.find(at, column + 1)
    raise AssertionError(f"{at!r} not found after {field}: of rule {rule_id} in {path}")


def _show(problems: Sequence[Problem]) -> str:
    return "\n\n".join(p.render() for p in problems) or "(no problems)"


@pytest.mark.parametrize("case", _cases(), ids=[c["description"] for c in _cases()])
def test_case(case: dict[str, Any], catalog: dict[str, ToolDefinition], tmp_path: Path) -> None:
    assert set(case) <= CASE_KEYS, set(case) - CASE_KEYS
    path = _write_case(tmp_path / "pack", case)
    pack = load_pack(tmp_path / "pack")
    problems = check_types([pack], catalog)
    rules = case.get("rules") or [case["rule"]]
    expected = []
    for want in case["expect"]:
        assert set(want) <= EXPECT_KEYS, set(want) - EXPECT_KEYS
        rule_id = want.get("rule", rules[0]["id"])
        line, column = _expected_place(path, rule_id, want["field"], str(want["at"]), want.get("nth", 1))
        expected.append((want["code"], rule_id, line, column))
    found = [(p.code, p.rule_id, p.location.line, p.location.column) for p in problems if p.location is not None]
    assert sorted(found) == sorted(expected), _show(problems)
    for want in case["expect"]:
        rule_id = want.get("rule", rules[0]["id"])
        problem = next(p for p in problems if p.code == want["code"] and p.rule_id == rule_id)
        assert want.get("says", "") in problem.message, _show([problem])
        assert want.get("hint", "") in (problem.hint or ""), _show([problem])


def test_the_case_file_covers_every_code_both_ways() -> None:
    cases = _cases()
    silent = [c for c in cases if not c["expect"]]
    loud = [c for c in cases if c["expect"]]
    assert len(cases) >= 40 and len(silent) >= 15 and len(loud) >= 25
    assert {w["code"] for c in loud for w in c["expect"]} == {PE601, PE602, PE603, PE604, PE605, PE606}


# -- the problems themselves --------------------------------------------------------------------


def _pack(root: Path, text: str) -> Pack:
    folder = root / "p"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pack.yaml").write_text("name: p\nversion: 1.0.0\nfiles: [rules.yaml]\n", encoding="utf-8")
    (folder / "rules.yaml").write_text(text, encoding="utf-8")
    return load_pack(folder)


def test_codes_are_registered_warnings_with_source_line_and_caret(
    catalog: dict[str, ToolDefinition], tmp_path: Path
) -> None:
    pack = _pack(
        tmp_path,
        "rules:\n"
        "  - id: positive\n"
        "    stage: pre-execute\n"
        "    tools: [transfer]\n"
        "    when: \"arguments.amount > '0'\"\n"
        "    decision: deny\n"
        "    reason: x\n",
    )
    (problem,) = check_types([pack], catalog)
    assert problem.severity is Severity.WARNING and not problem.is_error
    assert problem.rule_id == "positive"
    assert str(problem.location).endswith("rules.yaml:5:31")
    assert problem.source_line == "    when: \"arguments.amount > '0'\""
    assert problem.caret_width == 3
    rendered = problem.render()
    assert "warning PE602 [rule positive]" in rendered and "^^^" in rendered
    for code in (PE601, PE602, PE603, PE604, PE605, PE606):
        assert code in CODES


def test_a_condition_folded_over_several_lines_is_located_on_its_line(
    catalog: dict[str, ToolDefinition], tmp_path: Path
) -> None:
    pack = _pack(
        tmp_path,
        "rules:\n"
        "  - id: multi\n"
        "    stage: pre-execute\n"
        "    tools: [send_email]\n"
        "    when: >-\n"
        "      is_string(arguments.to)\n"
        "      && ends_with(arguments.recipient, '.ru')\n"
        "    decision: deny\n"
        "    reason: x\n",
    )
    (problem,) = check_types([pack], catalog)
    assert problem.code == PE601
    assert (problem.location.line, problem.location.column) == (7, 30)  # type: ignore[union-attr]
    assert problem.caret_width == len("recipient")


def test_a_problem_falls_back_to_the_rule_id_when_the_file_is_gone(
    catalog: dict[str, ToolDefinition], tmp_path: Path
) -> None:
    pack = _pack(
        tmp_path,
        "rules:\n  - id: gone\n    stage: guard\n    tools: [transfer]\n"
        "    when: \"arguments.amount > '0'\"\n    reason: x\n",
    )
    shutil.rmtree(tmp_path / "p")
    (problem,) = check_types([pack], catalog)
    assert problem.code == PE602 and problem.location == pack.rules[0].location


def test_a_fault_of_the_checker_is_a_located_warning_not_a_crash(
    catalog: dict[str, ToolDefinition], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = _pack(
        tmp_path,
        "rules:\n  - id: fine\n    stage: guard\n    tools: [transfer]\n    when: arguments.amount > `5`\n"
        "    reason: x\n",
    )

    def broken(*_args: Any) -> None:
        raise KeyError("oops")

    monkeypatch.setattr(type_check.Analysis, "run", broken)
    (problem,) = check_types([pack], catalog)
    assert problem.code == PE607 and problem.severity is Severity.WARNING
    assert problem.location == pack.rules[0].location and "KeyError" in problem.message


def test_without_a_catalog_only_what_no_tool_can_change_is_reported(tmp_path: Path) -> None:
    pack = _pack(
        tmp_path,
        "rules:\n"
        "  - id: generic\n"
        "    stage: guard\n"
        "    tools: [anything]\n"
        "    when: \"length(`5`) > `0` || starts_with(argumets.path, '/etc') || arguments.x > '1'\"\n"
        "    reason: x\n",
    )
    problems = check_types([pack], {})
    assert sorted(p.code for p in problems) == [PE601, PE603], _show(problems)


def test_rules_of_every_layer_are_checked(catalog: dict[str, ToolDefinition], tmp_path: Path) -> None:
    folders = []
    for name, text in (("org", "arguments.amount > '0'"), ("team", "arguments.to == null")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "pack.yaml").write_text(f"name: {name}\nversion: 1.0.0\nfiles: [r.yaml]\n", encoding="utf-8")
        tool = "transfer" if name == "org" else "send_email"
        (folder / "r.yaml").write_text(
            f'rules:\n  - id: {name}-rule\n    stage: guard\n    tools: [{tool}]\n    when: "{text}"\n    reason: x\n',
            encoding="utf-8",
        )
        folders.append(folder)
    problems = check_types(load_packs(folders), catalog)
    assert [(p.rule_id, p.code) for p in problems] == [("org-rule", PE602), ("team-rule", PE604)]


# -- types from the parameters --------------------------------------------------------------------


def test_cerberus_parameters_become_types() -> None:
    tool = define_tool(
        name="t",
        description="A tool.",
        parameters={
            "path": {"type": "string", "required": True},
            "count": {"type": "integer"},
            "tags": {"type": "list", "schema": {"type": "string"}, "required": True},
            "opts": {
                "type": "dict",
                "required": True,
                "schema": {"deep": {"type": "boolean", "required": True}},
            },
            "free": {"type": "dict", "allow_unknown": True, "required": True},
            "either": {"type": ["string", "integer"], "nullable": True, "required": True},
        },
        execute=lambda args: None,
    )
    arguments = document_type(tool, post=False, exact=True).member("arguments")
    assert arguments is not None and arguments.rest is None
    fields = dict(arguments.fields)
    assert fields["path"].kinds == {STRING}
    assert fields["count"].kinds == {NUMBER, NULL}  # optional: may be absent
    assert fields["tags"].kinds == {ARRAY} and fields["tags"].item is not None
    assert fields["tags"].item.kinds == {STRING}
    assert fields["opts"].rest is None and dict(fields["opts"].fields)["deep"].kinds == {"boolean"}
    assert fields["free"].rest is not None and ANY in fields["free"].rest.kinds
    assert fields["either"].kinds == {STRING, NUMBER, NULL}
    # A rule that selects by glob or tag cannot know which keys other tools have: every object is open.
    open_arguments = document_type(tool, post=False, exact=False).member("arguments")
    assert open_arguments is not None and open_arguments.rest is not None


def test_unknown_cerberus_rules_are_any() -> None:
    rules: object  # rule sets of every shape, and None
    for rules in ({"type": "datetime"}, {"type": "string", "coerce": int}, {"anyof_schema": []}, None, {}):
        assert ANY in schema_type(rules).kinds
    assert schema_type({"anyof": [{"type": "string"}, {"type": "list"}]}).kinds == {STRING, ARRAY}


def test_union_merges_objects_field_by_field() -> None:
    a = schema_type({"type": "dict", "schema": {"x": {"type": "string", "required": True}}})
    b = schema_type({"type": "dict", "schema": {"y": {"type": "integer", "required": True}}})
    both = union(a, b)
    assert both.kinds == {OBJECT}
    assert dict(both.fields)["x"].kinds == {STRING, NULL} and dict(both.fields)["y"].kinds == {NUMBER, NULL}


def test_post_execute_documents_have_a_result(catalog: dict[str, ToolDefinition]) -> None:
    assert document_type(catalog["http_get"], post=True, exact=True).member("result") is not None
    assert document_type(catalog["http_get"], post=False, exact=True).member("result") is None


# -- the shipped packs and the rule-language corpus ------------------------------------------------


@pytest.fixture(scope="module")
def bfcl_tools() -> dict[str, ToolDefinition]:
    return load_catalog(BFCL_TOOLS)


def test_the_bfcl_pack_is_clean_against_its_catalog(bfcl_tools: dict[str, ToolDefinition]) -> None:
    problems = check_types(load_packs([ROOT / "policies" / "bfcl"]), bfcl_tools)
    assert problems == [], _show(problems)


def test_the_generic_baseline_pack_stays_silent_on_the_bfcl_catalog(bfcl_tools: dict[str, ToolDefinition]) -> None:
    # It selects by globs and tags and reads values by role: nothing in it is certain for a catalog it was not
    # written for (its rules that meet no BFCL tool are lint's PE502).
    problems = check_types(load_packs([ROOT / "policies" / "baseline"]), bfcl_tools)
    assert problems == [], _show(problems)


def _corpus_groups() -> list[tuple[str, int, dict[str, Any]]]:
    out = []
    for path in sorted((ROOT / "tests" / "cases").glob("*.yaml")):
        for i, group in enumerate(yaml.safe_load(path.read_text("utf-8"))):
            out.append((path.stem, i, group))
    return out


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return cast(dict[type, str], {str: "string", list: "list", dict: "dict"}).get(type(value))


def _catalog_from_calls(group: Mapping[str, Any]) -> dict[str, ToolDefinition]:
    """A catalog typed by what the group's calls send (optional parameters of the types seen)."""
    seen: dict[str, dict[str, set[str]]] = {}
    for case in group.get("cases") or []:
        call = case.get("call") or {}
        arguments = call.get("arguments")
        name = call.get("name")
        if not isinstance(name, str) or not _PLAIN.fullmatch(name):
            continue
        by_key = seen.setdefault(name, {})
        for key, value in (arguments if isinstance(arguments, dict) else {}).items():
            by_key.setdefault(str(key), set()).add(_json_type(value) or "string")
    tools = {}
    for name, parameters in seen.items():
        rules: dict[str, Any] = {}
        for key, kinds in parameters.items():
            rule: dict[str, Any] = {"type": sorted(kinds), "nullable": True}
            if "list" in kinds:
                rule["schema"] = {"type": ["string", "number", "boolean", "dict", "list"], "allow_unknown": True}
            if "dict" in kinds:
                rule["allow_unknown"] = True
            rules[key] = rule
        tools[name] = define_tool(name=name, description="From recorded calls.", parameters=rules, execute=print)
    return tools


def test_the_rule_language_corpus_does_not_crash_the_checker(tmp_path: Path) -> None:
    checked = 0
    for stem, index, group in _corpus_groups():
        folders = []
        for layer, spec in enumerate(group.get("layers") or [group.get("pack") or {}]):
            folder = tmp_path / f"{stem}-{index}-{layer}"
            folder.mkdir()
            files = spec.get("files") or {}
            manifest = {"name": f"p{index}-{layer}", "version": "1.0.0", **spec, "files": list(files)}
            (folder / "pack.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
            for name, content in files.items():
                text = content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False)
                (folder / name).write_text(text, encoding="utf-8")
            folders.append(folder)
        try:
            packs = load_packs(folders)
        except PackLoadError:
            continue  # groups that show load errors
        for tools in ({}, _catalog_from_calls(group)):
            for problem in check_types(packs, tools):
                assert problem.code in (PE601, PE602, PE603, PE604, PE605, PE606)
                assert problem.location is not None and problem.severity is Severity.WARNING
            checked += 1
    assert checked > 100
