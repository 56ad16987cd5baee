"""The command line, run in-process through `main(argv, out=..., err=...)` (and once for real).

Exit codes under test: 0 clean, 1 findings or failing tests, 2 usage error or invalid pack.
Packs that must be broken, or carry only warnings, are copies of policies/baseline written to
tmp_path; line and column numbers are found in those copies, never hard-coded.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import jsonschema  # type: ignore[import-untyped]  # no stubs installed (types-jsonschema is not a dev dependency)
import pytest
import yaml

from policyengine import __version__
from policyengine.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "policies" / "baseline"
BFCL = ROOT / "policies" / "bfcl"
SHIPPED = {"baseline": BASELINE, "bfcl": BFCL}
CALLS = ROOT / "examples" / "bfcl-calls.jsonl"
TOOLS = ROOT / "examples" / "bfcl-tools.jsonl"
ANSI = "\x1b["

SHIPPED_RULE_FILES = sorted(
    path for pack in SHIPPED.values() for path in pack.glob("*.yaml") if path.name != "pack.yaml"
)


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def cli(*argv: str | Path) -> Run:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return Run(code, out.getvalue(), err.getvalue())


class TTY(io.StringIO):
    """A StringIO that claims to be a terminal."""

    def isatty(self) -> bool:
        return True


# -- pack builders ------------------------------------------------------------------------------


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert text.count(old) == 1, f"{old!r} must occur once in {path}"
    path.write_text(text.replace(old, new), "utf-8")


def _find(path: Path, token: str, occurrence: int = 0) -> tuple[int, int]:
    """1-based (line, column) of `token` in the file (the n-th occurrence)."""
    hits = [
        (number, match.start() + 1)
        for number, line in enumerate(path.read_text("utf-8").split("\n"), start=1)
        for match in re.finditer(re.escape(token), line)
    ]
    return hits[occurrence]


@dataclass
class BrokenPack:
    path: Path
    misspelt: tuple[int, int]  # `decison:` in gate.yaml
    unknown_function: tuple[int, int]  # `path_matchez(` in gate.yaml
    bad_jmespath: tuple[int, int]  # the second `>` of `> >` in red-lines.yaml


@pytest.fixture
def broken_pack(tmp_path: Path) -> BrokenPack:
    pack = tmp_path / "broken"
    shutil.copytree(BASELINE, pack)
    gate, red = pack / "gate.yaml", pack / "red-lines.yaml"
    _edit(
        gate,
        '    decision: deny\n    reason: "Denied by policy: {name} may not write',
        '    decison: deny\n    reason: "Denied by policy: {name} may not write',
    )
    _edit(
        gate,
        '[?path_matches(@, lists.env_files) && !regex_match(@, lists.env_file_templates)] | length(@) > `0`"',
        '[?path_matchez(@, lists.env_files) && !regex_match(@, lists.env_file_templates)] | length(@) > `0`"',
    )
    _edit(
        red,
        "lists.windows_system_dirs))) && !contains(lists.harmless_devices, @)]) > `0`",
        "lists.windows_system_dirs))) && !contains(lists.harmless_devices, @)]) > > `0`",
    )
    line, column = _find(red, "> >")
    return BrokenPack(pack, _find(gate, "decison"), _find(gate, "path_matchez"), (line, column + 2))


@dataclass
class WarningsPack:
    path: Path
    unused_list: tuple[int, int]
    unreachable: tuple[int, int]


@pytest.fixture
def warnings_pack(tmp_path: Path) -> WarningsPack:
    """Loads fine, but has an unused list (PE404) and a rule hidden behind an unconditional deny (PE501)."""
    pack = tmp_path / "warned"
    shutil.copytree(BASELINE, pack)
    _edit(pack / "lists.yaml", "lists:\n", "lists:\n  never_used: [a, b]\n")
    with (pack / "gate.yaml").open("a", encoding="utf-8") as handle:
        handle.write(
            "\n  - id: ask-before-fs-write\n"
            "    description: Hidden behind deny-direct-writes, which denies fs_write unconditionally.\n"
            "    stage: pre-execute\n"
            "    tools: [fs_write]\n"
            "    decision: ask\n"
            '    reason: "Write?"\n'
        )
    return WarningsPack(
        pack, _find(pack / "lists.yaml", "never_used"), _find(pack / "gate.yaml", "ask-before-fs-write")
    )


MINI_RULES = """\
rules:
  - id: deny-shell
    stage: pre-execute
    tools: [shell]
    decision: deny
    reason: "no shell"
  - id: ask-mail
    stage: pre-execute
    tools: [send_mail]
    decision: ask
    reason: "mail?"
"""


def mini_pack(root: Path, name: str, tests: str | None) -> Path:
    """A two-rule pack; `tests` (YAML) becomes tests/t.yaml, None means the manifest lists no tests."""
    folder = root / name
    folder.mkdir()
    manifest = f"name: {name}\nversion: 1.0.0\ndefault: allow\nfiles: [rules.yaml]\n"
    if tests is not None:
        manifest += "tests: [tests/*.yaml]\n"
        (folder / "tests").mkdir()
        (folder / "tests" / "t.yaml").write_text(tests, "utf-8")
    (folder / "pack.yaml").write_text(manifest, "utf-8")
    (folder / "rules.yaml").write_text(MINI_RULES, "utf-8")
    return folder


WRONG_DECISION_TESTS = """\
tests:
  - name: shell is allowed (wrong on purpose)
    call: {name: shell, arguments: {command: ls}}
    expect: {decision: allow}
  - name: mail asks
    call: {name: send_mail, arguments: {to: ada}}
    expect: {decision: ask, rule: ask-mail}
"""

UNKNOWN_RULE_TESTS = """\
tests:
  - name: shell is allowed (wrong, but must never run)
    call: {name: shell, arguments: {command: ls}}
    expect: {decision: allow}
  - name: mail asks
    call: {name: send_mail, arguments: {to: ada}}
    expect: {decision: ask, rule: ask-mial}
"""

HALF_COVERED_TESTS = """\
tests:
  - name: shell is denied
    call: {name: shell, arguments: {command: ls}}
    expect: {decision: deny, rule: deny-shell}
"""


# -- rendering checks ---------------------------------------------------------------------------


def assert_rendered(text: str, problem: dict[str, Any]) -> None:
    """The problem appears as `file:line:col: severity CODE`, the source line, and a caret under the column."""
    header = f"{problem['file']}:{problem['line']}:{problem['column']}: {problem['severity']} {problem['code']}"
    blocks = [b for b in text.split("\n\n") if b.startswith(header)]
    assert blocks, f"no block starting with {header!r} in:\n{text}"
    lines = blocks[0].split("\n")
    snippet = re.fullmatch(r"  (\d+) \| (.*)", lines[1])
    caret = re.fullmatch(r"  ( +)\| ( *)(\^+)", lines[2])
    assert snippet and caret, f"no snippet and caret under {header!r}:\n{blocks[0]}"
    assert int(snippet.group(1)) == problem["line"]
    shown, pad = snippet.group(2), len(caret.group(2))
    source = Path(problem["file"]).read_text("utf-8").split("\n")[problem["line"] - 1]
    assert shown.strip("…") in source, "the snippet is the source line (or a window of it)"
    assert shown[pad] == source[problem["column"] - 1], f"caret is not under column {problem['column']}:\n{blocks[0]}"


def assert_sarif(log: dict[str, Any], level: str) -> list[dict[str, Any]]:
    """SARIF 2.1.0 shape; every result has ruleId, `level`, a message and a located region."""
    assert log["version"] == "2.1.0"
    assert "sarif" in log["$schema"] and "2.1.0" in log["$schema"]
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "policyengine"
    declared = {r["id"] for r in driver["rules"]}
    results: list[dict[str, Any]] = run["results"]
    assert results, "a pack with problems must produce SARIF results"
    for result in results:
        assert re.fullmatch(r"PE\d{3}", result["ruleId"])
        assert result["ruleId"] in declared, "every ruleId is described in tool.driver.rules"
        assert result["level"] == level
        assert result["message"]["text"]
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"]
        assert isinstance(physical["region"]["startLine"], int) and physical["region"]["startLine"] >= 1
        assert physical["region"]["startColumn"] >= 1
    return results


# -- check --------------------------------------------------------------------------------------


@pytest.mark.parametrize("pack", sorted(SHIPPED))
def test_check_accepts_each_shipped_pack_and_says_ok(pack: str) -> None:
    run = cli("check", SHIPPED[pack])
    assert run.code == 0, run.err
    assert run.out.strip().splitlines()[-1].startswith("ok: 1 pack(s)")
    assert "0 warning(s)" in run.out
    assert run.err == ""


def test_check_bfcl_against_its_tool_catalog_is_clean() -> None:
    run = cli("check", BFCL, "--tools", TOOLS)
    assert run.code == 0, run.err
    assert run.out.startswith("ok:") and "0 warning(s)" in run.out


def test_check_with_tools_warns_about_a_rule_naming_a_tool_missing_from_the_catalog(tmp_path: Path) -> None:
    pack = tmp_path / "bfcl"
    shutil.copytree(BFCL, pack)
    _edit(
        pack / "gate.yaml",
        'tools: [place_order]\n    when: "product([arguments.price, arguments.amount]) > `100000`"',
        'tools: [place_ordr]\n    when: "product([arguments.price, arguments.amount]) > `100000`"',
    )
    # The pack's own `catalog:` finds the typo without --tools ...
    run = cli("check", pack, "--format", "json")
    assert run.code == 0
    codes = {(p["code"], p["rule"]) for p in run.json()["problems"]}
    assert ("PE606", "deny-orders-over-limit") in codes  # the entry, located, with a did-you-mean
    assert cli("check", pack, "--strict").code == 1
    # ... and --tools overrides it: the same catalog plus the misspelt name finds nothing.
    other = tmp_path / "other.jsonl"
    # (with place_order's parameters: the rule's arguments are checked against the tool it names)
    spec = next(json.loads(line) for line in TOOLS.read_text("utf-8").splitlines() if '"place_order"' in line)
    extra = json.dumps({**spec, "name": "place_ordr"})
    other.write_text(TOOLS.read_text("utf-8") + extra + "\n", "utf-8")
    overridden = cli("check", pack, "--tools", other, "--format", "json")
    assert overridden.code == 0 and overridden.json()["problems"] == []


def test_check_broken_pack_exits_2_and_renders_every_problem_with_location_snippet_and_caret(
    broken_pack: BrokenPack,
) -> None:
    run = cli("check", broken_pack.path)
    assert run.code == 2
    assert "nothing was installed" in run.err
    problems = cli("check", broken_pack.path, "--format", "json").json()["problems"]
    assert len(problems) >= 3
    for problem in problems:
        assert_rendered(run.err, problem)
    gate, red = str(broken_pack.path / "gate.yaml"), str(broken_pack.path / "red-lines.yaml")
    where = {(p["code"], p["file"], p["line"], p["column"]) for p in problems}
    assert ("PE202", gate, *broken_pack.misspelt) in where
    assert ("PE302", gate, *broken_pack.unknown_function) in where
    assert ("PE301", red, *broken_pack.bad_jmespath) in where
    # The carets span the misspelt field and the unknown function name.
    for token in ("decison", "path_matchez"):
        assert re.search(rf"(?<![\^])\^{{{len(token)}}}\n", run.err), token
    assert "did you mean 'decision'?" in run.err and "did you mean path_matches()?" in run.err


def test_check_warnings_only_pass_without_strict_and_fail_with_strict(warnings_pack: WarningsPack) -> None:
    relaxed = cli("check", warnings_pack.path)
    assert relaxed.code == 0, relaxed.err
    assert "PE404" in relaxed.out and "PE501" in relaxed.out
    assert relaxed.out.strip().splitlines()[-1].startswith("ok:")
    assert "2 warning(s)" in relaxed.out
    strict = cli("check", warnings_pack.path, "--strict")
    assert strict.code == 1
    assert strict.out.strip().splitlines()[-1].startswith("FAIL:")


def test_check_renders_warnings_with_location_snippet_and_caret(warnings_pack: WarningsPack) -> None:
    run = cli("check", warnings_pack.path)
    problems = cli("check", warnings_pack.path, "--format", "json").json()["problems"]
    assert {p["code"] for p in problems} == {"PE404", "PE501"}
    for problem in problems:
        assert problem["severity"] == "warning"
        assert_rendered(run.out, problem)


def test_check_json_lists_each_problem_with_code_file_line_column_and_rule(
    broken_pack: BrokenPack, warnings_pack: WarningsPack
) -> None:
    broken = cli("check", broken_pack.path, "--format", "json")
    assert broken.code == 2
    data = broken.json()
    assert data["ok"] is False
    for problem in data["problems"]:
        assert {"code", "file", "line", "column", "rule", "severity", "message"} <= problem.keys()
    by_code = {p["code"]: p for p in data["problems"]}
    assert by_code["PE202"]["rule"] == "deny-direct-writes"
    assert by_code["PE302"]["rule"] == "deny-env-files"
    assert by_code["PE301"]["rule"] == "no-system-dirs"

    warned = cli("check", warnings_pack.path, "--format", "json")
    assert warned.code == 0
    data = warned.json()
    assert data["ok"] is True
    assert [p["name"] for p in data["packs"]] == ["baseline"]
    by_code = {p["code"]: p for p in data["problems"]}
    assert by_code["PE501"]["rule"] == "ask-before-fs-write"
    assert (by_code["PE501"]["line"], by_code["PE501"]["column"]) == warnings_pack.unreachable
    assert (by_code["PE404"]["line"], by_code["PE404"]["column"]) == warnings_pack.unused_list
    assert by_code["PE404"]["file"] == str(warnings_pack.path / "lists.yaml")
    strict = cli("check", warnings_pack.path, "--format", "json", "--strict")
    assert strict.code == 1 and strict.json()["ok"] is False


def test_check_json_of_a_clean_pack_has_no_problems_and_names_its_rules() -> None:
    run = cli("check", BASELINE, "--format", "json")
    assert run.code == 0
    data = run.json()
    assert data == {**data, "ok": True, "problems": []}
    assert "deny-direct-writes" in data["packs"][0]["rules"]
    assert data["packs"][0]["digest"].startswith("sha256:")


def test_check_sarif_of_a_broken_pack_lists_errors(broken_pack: BrokenPack) -> None:
    run = cli("check", broken_pack.path, "--format", "sarif")
    assert run.code == 2
    results = assert_sarif(run.json(), "error")
    located = {
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
        )
        for r in results
    }
    assert ("PE202", *broken_pack.misspelt) in located
    assert ("PE302", *broken_pack.unknown_function) in located
    assert ("PE301", *broken_pack.bad_jmespath) in located


def test_check_sarif_of_a_warnings_only_pack_lists_warnings(warnings_pack: WarningsPack) -> None:
    run = cli("check", warnings_pack.path, "--format", "sarif")
    assert run.code == 0
    results = assert_sarif(run.json(), "warning")
    assert sorted(r["ruleId"] for r in results) == ["PE404", "PE501"]
    unreachable = next(r for r in results if r["ruleId"] == "PE501")
    assert unreachable["properties"]["policyRule"] == "ask-before-fs-write"
    assert unreachable["locations"][0]["physicalLocation"]["region"]["startLine"] == warnings_pack.unreachable[0]
    assert cli("check", warnings_pack.path, "--format", "sarif", "--strict").code == 1


def test_check_sarif_of_a_clean_pack_has_no_results() -> None:
    run = cli("check", BASELINE, "--format", "sarif")
    assert run.code == 0
    log = run.json()
    assert log["version"] == "2.1.0" and log["runs"][0]["results"] == []


def test_check_missing_pack_folder_is_exit_2() -> None:
    run = cli("check", ROOT / "policies" / "no-such-pack")
    assert run.code == 2
    assert "PE108" in run.err


# -- test ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("pack", sorted(SHIPPED))
def test_test_passes_each_shipped_pack_alone(pack: str) -> None:
    run = cli("test", SHIPPED[pack])
    assert run.code == 0, run.out
    last = run.out.strip().splitlines()[-1]
    assert last.startswith("ok: ") and " 0 failed, 0 not run" in last
    assert int(cast(re.Match[str], re.match(r"ok: (\d+) passed", last)).group(1)) > 0


@pytest.mark.parametrize("pack", sorted(SHIPPED))
def test_test_shipped_packs_meet_full_coverage_threshold(pack: str) -> None:
    run = cli("test", SHIPPED[pack], "--coverage", "--threshold", "100")
    assert run.code == 0, run.out
    assert "coverage 100.0%" in run.out and "threshold 100%" in run.out
    assert "not exercised" not in run.out


def test_test_wrong_expected_decision_exits_1_and_says_expected_vs_got(tmp_path: Path) -> None:
    pack = mini_pack(tmp_path, "mini", WRONG_DECISION_TESTS)
    run = cli("test", pack)
    assert run.code == 1
    assert 'decision: expected "allow", got "deny"' in run.out
    assert "PT003" in run.out and "shell is allowed (wrong on purpose)" in run.out
    assert f"{pack / 'tests' / 't.yaml'}:4:" in run.out, "the mismatch points at the expectation's line"
    assert run.out.strip().splitlines()[-1].startswith("FAILED: 1 passed, 1 failed")


def test_test_unknown_rule_in_an_expectation_exits_1_and_runs_nothing(tmp_path: Path) -> None:
    pack = mini_pack(tmp_path, "mini", UNKNOWN_RULE_TESTS)
    run = cli("test", pack)
    assert run.code == 1
    assert "PT001" in run.out and "'ask-mial'" in run.out and "did you mean 'ask-mail'?" in run.out
    # The other test (which would fail if it ran) is reported as not run, not as a mismatch.
    assert "PT003" not in run.out
    assert run.out.strip().splitlines()[-1].startswith("FAILED: 0 passed, 1 failed, 1 not run")
    data = cli("test", pack, "--format", "json").json()
    assert data["ran"] is False and data["ok"] is False
    assert [r["status"] for r in data["results"]] == ["skipped", "failed"]
    assert all(r["actual"] is None for r in data["results"]), "no call was evaluated"


def test_test_require_tests_fails_a_pack_without_tests(tmp_path: Path) -> None:
    pack = mini_pack(tmp_path, "untested", None)
    assert cli("test", pack).code == 0
    run = cli("test", pack, "--require-tests")
    assert run.code == 1
    assert "PT002" in run.out and "untested" in run.out


def test_test_coverage_below_threshold_exits_1(tmp_path: Path) -> None:
    pack = mini_pack(tmp_path, "half", HALF_COVERED_TESTS)
    assert cli("test", pack).code == 0, "the only test passes"
    below = cli("test", pack, "--coverage", "--threshold", "100")
    assert below.code == 1
    assert "coverage 50.0%" in below.out and "not exercised: ask-mail" in below.out
    assert below.out.strip().splitlines()[-1].startswith("FAILED")
    assert cli("test", pack, "--coverage", "--threshold", "50").code == 0


def test_test_json_report_parses_and_counts(tmp_path: Path) -> None:
    shipped = cli("test", BASELINE, "--format", "json")
    assert shipped.code == 0
    data = shipped.json()
    assert data["ok"] is True and data["summary"]["failed"] == 0
    assert data["summary"]["tests"] == data["summary"]["passed"] == len(data["results"]) > 0

    failing = cli("test", mini_pack(tmp_path, "mini", WRONG_DECISION_TESTS), "--format", "json")
    assert failing.code == 1
    data = failing.json()
    assert data["ok"] is False
    assert data["summary"] | {"duration": 0} == {
        "tests": 2,
        "passed": 1,
        "failed": 1,
        "skipped": 0,
        "coverage": 100.0,
        "duration": 0,
    }
    failure = data["results"][0]["failures"][0]
    assert failure["code"] == "PT003" and failure["field"] == "decision"
    assert data["results"][0]["actual"]["decision"] == "deny"


def test_test_junit_parses_and_its_failure_count_matches(tmp_path: Path) -> None:
    run = cli("test", mini_pack(tmp_path, "mini", WRONG_DECISION_TESTS), "--format", "junit")
    assert run.code == 1
    root = ET.fromstring(run.out.strip().split("\n", 1)[1] if run.out.startswith("<?xml") else run.out)
    assert root.tag == "testsuites"
    failures = root.findall(".//testcase/failure")
    assert int(cast(str, root.get("failures"))) == len(failures) == 1
    assert int(cast(str, root.get("tests"))) == len(root.findall(".//testcase")) == 2
    assert failures[0].get("type") == "PT003"
    assert failures[0].text is not None
    assert 'expected "allow", got "deny"' in failures[0].text

    clean = cli("test", BASELINE, "--format", "junit")
    assert clean.code == 0
    root = ET.fromstring(clean.out.encode("utf-8"))
    assert int(cast(str, root.get("failures"))) == len(root.findall(".//failure")) == 0
    assert int(cast(str, root.get("tests"))) == len(root.findall(".//testcase")) > 0


def test_test_junit_counts_run_level_failures(tmp_path: Path) -> None:
    run = cli("test", mini_pack(tmp_path, "untested", None), "--require-tests", "--format", "junit")
    assert run.code == 1
    root = ET.fromstring(run.out.encode("utf-8"))
    assert int(cast(str, root.get("failures"))) == len(root.findall(".//failure")) == 1
    assert cast(ET.Element, root.find(".//failure")).get("type") == "PT002"


def test_test_broken_pack_exits_2(broken_pack: BrokenPack) -> None:
    run = cli("test", broken_pack.path)
    assert run.code == 2
    assert "PE202" in run.err and "nothing was installed" in run.err


def test_test_invalid_test_file_exits_2(tmp_path: Path) -> None:
    pack = mini_pack(tmp_path, "mini", HALF_COVERED_TESTS.replace("expect:", "expcet:"))
    run = cli("test", pack)
    assert run.code == 2
    assert str(pack / "tests" / "t.yaml") in run.err


# -- explain ------------------------------------------------------------------------------------

FS_WRITE = {"name": "fs_write", "arguments": {"path": "notes.txt", "content": "hello"}}
RECORDED = {
    "name": "http_get",
    "arguments": {"url": "https://api.example.com/me"},
    "result": {"value": {"user": "ada", "password": "hunter2"}},
}


def test_explain_inline_call_shows_decision_and_deciding_rule() -> None:
    run = cli("explain", "--pack", BASELINE, json.dumps(FS_WRITE))
    assert run.code == 0, run.err
    assert "decision: deny by rule 'deny-direct-writes' in pack baseline at pre-execute" in run.out
    assert "reason: Denied by policy: fs_write may not write files in this workspace." in run.out
    assert re.search(r"^pre-execute\s+deny-direct-writes\s+baseline\s+matched\s", run.out, re.M)


def test_explain_call_from_a_json_file(tmp_path: Path) -> None:
    call = tmp_path / "call.json"
    call.write_text(json.dumps({"name": "read_file", "arguments": {"path": "a/../.env"}}), "utf-8")
    run = cli("explain", "--pack", BASELINE, call)
    assert run.code == 0, run.err
    assert "decision: deny by rule 'deny-env-files'" in run.out
    data = cli("explain", "--pack", BASELINE, "--format", "json", call).json()
    assert (data["decision"], data["rule"], data["stage"], data["pack"]) == (
        "deny",
        "deny-env-files",
        "pre-execute",
        "baseline",
    )


def test_explain_json_has_decision_rule_and_considered_rules() -> None:
    run = cli("explain", "--pack", BASELINE, "--format", "json", json.dumps(FS_WRITE))
    assert run.code == 0
    data = run.json()
    assert data["call"] == FS_WRITE
    assert (data["decision"], data["rule"], data["stage"]) == ("deny", "deny-direct-writes", "pre-execute")
    assert data["digest"].startswith("sha256:")
    assert data["post"] is None and data["rewrites"] == []
    matched = [c["rule"] for c in data["considered"] if c["matched"]]
    assert matched == ["deny-direct-writes"]


def test_explain_allowed_call_is_allowed() -> None:
    data = cli(
        "explain", "--pack", BASELINE, "--format", "json", '{"name": "read_file", "arguments": {"path": "a.txt"}}'
    ).json()
    assert data["decision"] == "allow" and data["stage"] == "pre-execute"


def test_explain_recorded_result_shows_post_execute_rewrites() -> None:
    run = cli("explain", "--pack", BASELINE, json.dumps(RECORDED))
    assert run.code == 0, run.err
    assert "post-execute: rewritten by redact-credential-fields" in run.out
    assert '"password": "[REDACTED]"' in run.out and "hunter2" not in run.out
    data = cli("explain", "--pack", BASELINE, "--format", "json", json.dumps(RECORDED)).json()
    assert data["decision"] == "allow"
    assert data["post"] == "rewritten"
    assert data["rewrites"] == ["redact-credential-fields"]
    assert data["value"] == {"user": "ada", "password": "[REDACTED]"}


def test_explain_without_a_result_shows_no_post_execute() -> None:
    run = cli("explain", "--pack", BASELINE, json.dumps({k: v for k, v in RECORDED.items() if k != "result"}))
    assert run.code == 0
    assert "post-execute:" not in run.out


@pytest.mark.parametrize(
    "call",
    ['{"name": "fs_write", "arguments": ', '{"arguments": {}}', '{"name": "x", "arguments": [1]}'],
    ids=["truncated-json", "no-name", "arguments-not-object"],
)
def test_explain_malformed_call_is_exit_2(call: str) -> None:
    run = cli("explain", "--pack", BASELINE, call)
    assert run.code == 2
    assert run.out == "" and run.err.startswith("error: ")


def test_explain_malformed_json_file_is_exit_2(tmp_path: Path) -> None:
    call = tmp_path / "call.json"
    call.write_text('{"name": "fs_write",,}', "utf-8")
    run = cli("explain", "--pack", BASELINE, call)
    assert run.code == 2
    assert "not valid JSON" in run.err


def test_explain_missing_call_file_is_exit_2(tmp_path: Path) -> None:
    run = cli("explain", "--pack", BASELINE, tmp_path / "nope.json")
    assert run.code == 2
    assert "cannot read call file" in run.err and "nope.json" in run.err


def test_explain_non_utf8_call_file_is_exit_2_not_a_crash(tmp_path: Path) -> None:
    call = tmp_path / "call.json"
    call.write_bytes(b'\xff\xfe{"name": "x"}')
    run = cli("explain", "--pack", BASELINE, call)
    assert run.code == 2
    assert run.err.startswith("error: ")


def test_explain_broken_pack_is_exit_2(broken_pack: BrokenPack) -> None:
    run = cli("explain", "--pack", broken_pack.path, json.dumps(FS_WRITE))
    assert run.code == 2
    assert "PE302" in run.err


# -- schema -------------------------------------------------------------------------------------


def test_schema_prints_every_schema_as_one_json_object() -> None:
    run = cli("schema")
    assert run.code == 0
    schemas = run.json()
    assert isinstance(schemas, dict)
    assert {"pack", "rule-file", "tests", "calls"} <= schemas.keys()
    for name, schema in schemas.items():
        assert schema["type"] == "object", name
        jsonschema.Draft202012Validator.check_schema(schema)


def test_schema_rule_file_alone_is_that_schema() -> None:
    run = cli("schema", "rule-file")
    assert run.code == 0
    schema = run.json()
    assert schema == cli("schema").json()["rule-file"]
    assert "rules" in schema["properties"] and "lists" in schema["properties"]


def test_schema_unknown_name_is_exit_2() -> None:
    run = cli("schema", "rules-file")
    assert run.code == 2
    assert run.out == ""
    assert "unknown schema 'rules-file'" in run.err and "rule-file" in run.err


@pytest.fixture(scope="module")
def schemas() -> dict[str, Any]:
    return cast(dict[str, Any], cli("schema").json())


@pytest.mark.parametrize("path", SHIPPED_RULE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_schema_every_shipped_rule_file_validates_against_the_printed_rule_file_schema(
    path: Path, schemas: dict[str, Any]
) -> None:
    validator = jsonschema.Draft202012Validator(schemas["rule-file"])
    errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text("utf-8")))]
    assert errors == []


def test_schema_rule_file_schema_refuses_a_misspelt_field(schemas: dict[str, Any]) -> None:
    document = yaml.safe_load((BASELINE / "gate.yaml").read_text("utf-8"))
    document["rules"][0]["decison"] = document["rules"][0].pop("decision")
    validator = jsonschema.Draft202012Validator(schemas["rule-file"])
    assert not validator.is_valid(document)


@pytest.mark.parametrize("pack", sorted(SHIPPED))
def test_schema_shipped_manifests_and_tests_validate(pack: str, schemas: dict[str, Any]) -> None:
    folder = SHIPPED[pack]
    jsonschema.validate(yaml.safe_load((folder / "pack.yaml").read_text("utf-8")), schemas["pack"])
    for test_file in sorted((folder / "tests").glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(test_file.read_text("utf-8")), schemas["tests"])


def test_schema_calls_schema_accepts_every_example_call(schemas: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(schemas["calls"])
    lines = CALLS.read_text("utf-8").splitlines()
    assert [n for n, line in enumerate(lines, 1) if not validator.is_valid(json.loads(line))] == []


# -- dry-run ------------------------------------------------------------------------------------


def _input_calls() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CALLS.read_text("utf-8").splitlines()]


def test_dry_run_writes_one_record_per_input_line_in_order(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    run = cli("dry-run", "--pack", BFCL, CALLS, "--output", out)
    assert run.code == 0, run.err
    calls = _input_calls()
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(records) == len(calls) > 0
    assert [r["line"] for r in records] == list(range(1, len(calls) + 1))
    assert [(r["call_id"], r["name"]) for r in records] == [(c["call_id"], c["name"]) for c in calls]
    # The pack's catalog refuses two calls (an undocumented tool, a string ticket id).
    assert {r["decision"] for r in records} == {"allow", "ask", "deny", "invalid"}
    assert sum(r["decision"] == "invalid" for r in records) == 2
    assert f"{len(calls):,} calls" in run.out


def test_dry_run_keeps_a_malformed_line_as_an_error_record(tmp_path: Path) -> None:
    lines = CALLS.read_text("utf-8").splitlines()[:5]
    lines[2] = '{"name": "cd", "arguments": '
    calls, out = tmp_path / "calls.jsonl", tmp_path / "out.jsonl"
    calls.write_text("\n".join(lines) + "\n", "utf-8")
    assert cli("dry-run", "--pack", BFCL, calls, "--output", out).code == 0
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [r["line"] for r in records] == [1, 2, 3, 4, 5]
    assert records[2]["decision"] == "error" and records[2]["stage"] == "input"
    assert cli("dry-run", "--pack", BFCL, calls, "--fail-on", "error").code == 1


def test_dry_run_fail_on_deny_exits_1() -> None:
    assert cli("dry-run", "--pack", BFCL, CALLS, "--fail-on", "deny").code == 1


def test_dry_run_fail_on_a_decision_that_never_occurs_exits_0() -> None:
    assert cli("dry-run", "--pack", BFCL, CALLS, "--fail-on", "error").code == 0
    assert cli("dry-run", "--pack", BFCL, CALLS, "--fail-on", "invalid,error").code == 1  # the catalog's two


def test_dry_run_fail_on_reports_on_the_err_stream() -> None:
    run = cli("dry-run", "--pack", BFCL, CALLS, "--fail-on", "deny")
    assert run.code == 1
    assert "deny" in run.err and "--fail-on" in run.err


def test_dry_run_json_summary_counts_decisions() -> None:
    run = cli("dry-run", "--pack", BFCL, CALLS, "--format", "json")
    assert run.code == 0, run.err
    summary = run.json()
    decisions = summary["decisions"]
    assert decisions["deny"] > 0 and decisions["ask"] > 0
    assert summary["calls"] == sum(decisions.values()) == len(_input_calls())
    assert summary["hits"]["deny-orders-over-limit"] > 0


def test_dry_run_missing_calls_file_is_exit_2(tmp_path: Path) -> None:
    run = cli("dry-run", "--pack", BFCL, tmp_path / "none.jsonl")
    assert run.code == 2
    assert "cannot read" in run.err


def test_dry_run_unwritable_output_is_exit_2_not_a_crash(tmp_path: Path) -> None:
    run = cli("dry-run", "--pack", BFCL, CALLS, "--output", tmp_path / "no-such-dir" / "out.jsonl")
    assert run.code == 2
    assert run.err.startswith("error: ")


# -- usage errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["frobnicate"],
        ["check"],
        ["test"],
        ["explain", '{"name": "x"}'],
        ["explain", "--pack", str(BASELINE)],
        ["dry-run", str(CALLS)],
        ["schema", "--format", "yaml"],
        ["check", str(BASELINE), "--format", "xml"],
        ["test", str(BASELINE), "--threshold", "lots"],
        ["--color", "sometimes", "check", str(BASELINE)],
    ],
    ids=[
        "no-such-verb",
        "check-without-pack",
        "test-without-pack",
        "explain-without-pack",
        "explain-without-call",
        "dry-run-without-pack",
        "schema-bad-format",
        "check-bad-format",
        "test-bad-threshold",
        "bad-color",
    ],
)
def test_usage_error_exits_2_with_a_hint(argv: list[str]) -> None:
    run = cli(*argv)
    assert run.code == 2
    assert run.out == ""
    assert run.err.startswith("error: policyengine") and "hint: run `policyengine" in run.err


def test_dry_run_unknown_fail_on_is_exit_2() -> None:
    run = cli("dry-run", "--pack", BFCL, CALLS, "--fail-on", "deny,bogus")
    assert run.code == 2
    assert "bogus" in run.err and "deny, ask, changed, invalid, error" in run.err


def test_dry_run_fail_on_changed_without_against_is_exit_2() -> None:
    assert cli("dry-run", "--pack", BFCL, CALLS, "--fail-on", "changed").code == 2


@pytest.mark.parametrize("threshold", ["150", "-1"])
def test_test_threshold_outside_0_to_100_is_a_usage_error(threshold: str) -> None:
    run = cli("test", BASELINE, "--coverage", "--threshold", threshold)
    assert run.code == 2
    assert run.err.startswith("error: ")


def test_version_exits_0_and_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    run = cli("--version")
    assert run.code == 0
    assert f"policyengine {__version__}" in run.out + capsys.readouterr().out


def test_version_is_written_to_the_out_stream() -> None:
    run = cli("--version")
    assert run.code == 0
    assert run.out.strip() == f"policyengine {__version__}"


def test_no_verb_prints_the_verbs_and_exits_0() -> None:
    run = cli()
    assert run.code == 0
    assert all(verb in run.out for verb in ("check", "test", "explain", "schema", "dry-run"))


# -- colour -------------------------------------------------------------------------------------


@pytest.fixture
def colour_cases(broken_pack: BrokenPack, warnings_pack: WarningsPack, tmp_path: Path) -> list[list[str | Path]]:
    return [
        ["check", BASELINE],
        ["check", warnings_pack.path, "--strict"],
        ["check", broken_pack.path],
        ["test", BASELINE],
        ["test", mini_pack(tmp_path, "mini", WRONG_DECISION_TESTS)],
        ["test", broken_pack.path],
        ["explain", "--pack", BASELINE, json.dumps(RECORDED)],
        ["explain", "--pack", BASELINE, "{bad"],
        ["schema", "rule-file"],
        ["dry-run", "--pack", BFCL, CALLS],
    ]


def test_no_ansi_escapes_when_out_is_not_a_terminal(colour_cases: list[list[str | Path]]) -> None:
    for argv in colour_cases:
        run = cli(*argv)
        assert ANSI not in run.out and ANSI not in run.err, argv


def test_color_always_adds_ansi_escapes(broken_pack: BrokenPack, warnings_pack: WarningsPack) -> None:
    assert ANSI in cli("--color", "always", "check", BASELINE).out
    assert ANSI in cli("--color", "always", "check", warnings_pack.path).out
    assert ANSI in cli("--color", "always", "check", broken_pack.path).err
    assert ANSI in cli("--color", "always", "explain", "--pack", BASELINE, json.dumps(FS_WRITE)).out
    assert ANSI in cli("--color", "always", "dry-run", "--pack", BFCL, CALLS).out


def test_color_always_never_touches_machine_formats(warnings_pack: WarningsPack) -> None:
    for argv in (
        ["check", warnings_pack.path, "--format", "json"],
        ["check", warnings_pack.path, "--format", "sarif"],
        ["test", BASELINE, "--format", "junit"],
        ["explain", "--pack", BASELINE, "--format", "json", json.dumps(FS_WRITE)],
    ):
        assert ANSI not in cli("--color", "always", *cast(list[str | Path], argv)).out, argv


def test_color_auto_follows_the_terminal_and_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)

    def run(*argv: str | Path) -> str:
        out = TTY()
        assert main([str(a) for a in argv], out=out, err=io.StringIO()) == 0
        return out.getvalue()

    assert ANSI in run("check", BASELINE)
    assert ANSI not in run("--color", "never", "check", BASELINE)
    monkeypatch.setenv("NO_COLOR", "1")
    assert ANSI not in run("check", BASELINE)
    assert ANSI in run("--color", "always", "check", BASELINE)


# -- the installed script, for real -------------------------------------------------------------


def test_installed_script_checks_the_baseline_pack() -> None:
    script = shutil.which("policyengine")
    if script is None:
        pytest.skip("the policyengine console script is not on PATH")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    done = subprocess.run(
        [script, "check", "policies/baseline"], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: 1 pack(s)")
    assert ANSI not in done.stdout, "a pipe is not a terminal"


def test_python_dash_m_policyengine_prints_the_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "policyengine", "--version"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"policyengine {__version__}"


# -- a reader that goes away -----------------------------------------------------------------------


class _ClosedPipe(io.StringIO):
    """An output whose reader went away: every write fails as a closed pipe does."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_goes_away_ends_the_cli_quietly_with_141() -> None:
    err = io.StringIO()
    code = main(["check", str(BFCL)], out=_ClosedPipe(), err=err)
    assert (code, err.getvalue()) == (141, "")


def test_piping_the_cli_into_head_prints_no_traceback() -> None:
    # The real pipe: the process's own stdout, closed by its reader after one line.
    command = ["dry-run", "--pack", str(BFCL), "--workers", "1", "--output", "/dev/stdout", str(CALLS)]
    process = subprocess.Popen(
        [sys.executable, "-m", "policyengine", *command],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert json.loads(first)["line"] == 1
    assert "Traceback" not in err and "BrokenPipe" not in err
