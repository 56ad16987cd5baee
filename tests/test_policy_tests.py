"""The policy test runner's contract: discovery, expectations, PT001/PT002, coverage, JUnit, JSON.

The runner must never report a pass it has not earned: every expectation is compared (with
types), a misspelt rule id fails the run before anything runs, a pack without tests fails under
require_tests, and ok() is false whenever anything failed.
"""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from policyengine import PackLoadError, PolicyLayers, Registry, define_tool
from policyengine.cli.common import install_layers
from policyengine.enforce.explain import explain as real_explain
from policyengine.testing import runner as pt
from policyengine.testing.reports import format_report, to_json, to_junit
from policyengine.testing.runner import TestReport as Report
from policyengine.testing.runner import discover, run_tests, run_tests_async

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("baseline", "bfcl")
CORPUS = Path(__file__).resolve().parents[1] / "examples" / "bfcl-calls.jsonl"

RULES = """\
lists:
  shell_tools: [shell]
rules:
  - id: deny-secrets
    stage: pre-execute
    tools: [read]
    when: "contains(arguments.path, 'secret')"
    decision: deny
    reason: "no secrets: {arguments.path}"
  - id: ask-shell
    stage: pre-execute
    tools: ["@shell_tools"]
    decision: ask
    reason: "run {arguments.command}?"
  - id: no-root
    stage: guard
    tools: ["*"]
    when: "arguments.path == '/'"
    reason: "not the root"
  - id: shell-timeout
    stage: execute
    tools: [shell]
    timeout: 5
  - id: mask-token
    stage: post-execute
    tools: ["*"]
    redact: [{keys: [token]}]
  - id: block-big
    stage: post-execute
    tools: ["*"]
    when: "result.value.big == `true`"
    block: "too big for {name}"
"""

PASSING = """\
tests:
  - name: secrets are denied
    call: {name: read, arguments: {path: a/secret.txt}}
    expect:
      decision: deny
      rule: deny-secrets
      stage: pre-execute
      reason: "no secrets: a/secret.txt"
      reason_contains: secret
  - name: shell is asked
    call: {name: shell, arguments: {command: ls}}
    expect: {decision: ask, rule: ask-shell, reason: "run ls?"}
  - name: the root is a red line
    call: {name: read, arguments: {path: /}}
    expect: {decision: deny, rule: no-root, stage: guard, reason: not the root}
  - name: tokens are masked
    call: {name: read, arguments: {path: notes}}
    result: {value: {token: t, n: 1}}
    expect:
      decision: allow
      rule: default
      post: rewritten
      value: {token: "[REDACTED]", n: 1}
      content: [{type: text, text: '{"token": "[REDACTED]", "n": 1}'}]
      rewrites: [mask-token]
  - name: big results are blocked
    call: {name: read, arguments: {path: notes}}
    result: {value: {big: true}}
    expect: {decision: allow, post: blocked, feedback_contains: too big for read, rewrites: [block-big]}
"""


def write_pack(
    root: Path,
    tests: Mapping[str, str] | None = None,
    *,
    name: str = "demo",
    rules: str = RULES,
    globs: list[str] | None = None,
) -> Path:
    """A pack folder with one rule file and test files under tests/."""
    folder = root / name
    (folder / "tests").mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"name": name, "version": "1.0.0", "default": "allow", "files": ["rules.yaml"]}
    if globs is None:
        globs = ["tests/*.yaml"]
    if globs:
        manifest["tests"] = globs
    (folder / "pack.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), "utf-8")
    (folder / "rules.yaml").write_text(rules, "utf-8")
    for file_name, text in (tests or {}).items():
        (folder / "tests" / file_name).write_text(text, "utf-8")
    return folder


def run_folders(*folders: Path, require_tests: bool = False) -> Report:
    """Install the packs as `policyengine test` does (with their `catalog:`, if any), discover their tests, run them."""
    layers, catalog = install_layers(list(folders))
    return run_tests(layers, discover(layers.packs), require_tests=require_tests, require_tool=catalog is not None)


def one_test(call: Mapping[str, Any], expect: Mapping[str, Any], result: Any = None) -> str:
    """A test file holding a single test."""
    test: dict[str, Any] = {"name": "the test", "call": dict(call), "expect": dict(expect)}
    if result is not None:
        test["result"] = result
    return yaml.safe_dump({"tests": [test]}, sort_keys=False)


# -- a passing file -----------------------------------------------------------------------------


def test_a_passing_file(tmp_path: Path) -> None:
    report = run_folders(write_pack(tmp_path, {"demo.yaml": PASSING}))
    assert [r.status for r in report.results] == ["passed"] * 5, [r.messages for r in report.results]
    assert report.ok() and report.ran and not report.failures
    first = report.results[0]
    assert first.name == "secrets are denied"
    assert first.file.endswith("tests/demo.yaml") and (first.line, first.column) == (2, 5)
    assert first.messages == () and first.duration >= 0 and first.pack == "demo"
    (pack,) = report.packs
    assert (pack.tests, pack.passed, pack.failed, pack.skipped) == (5, 5, 0, 0)
    assert report.coverage == 100.0


def test_run_tests_async_inside_an_event_loop(tmp_path: Path) -> None:
    layers = PolicyLayers.install(Registry(), [write_pack(tmp_path, {"demo.yaml": PASSING})])
    report = asyncio.run(run_tests_async(layers, discover(layers.packs)))
    assert report.ok() and report.total == 5


# -- every expectation is compared ---------------------------------------------------------------

SECRET = {"name": "read", "arguments": {"path": "a/secret.txt"}}
NOTES = {"name": "read", "arguments": {"path": "notes"}}
TOKEN = {"value": {"token": "t", "n": 1}}
BIG = {"value": {"big": True}}

MISMATCHES = [
    ("decision", SECRET, {"decision": "allow"}, None, 'decision: expected "allow", got "deny"'),
    ("rule", SECRET, {"decision": "deny", "rule": "ask-shell"}, None, 'rule: expected "ask-shell", got "deny-secrets"'),
    ("rule-default", SECRET, {"decision": "deny", "rule": "default"}, None, 'expected "default", got "deny-secrets"'),
    ("stage", SECRET, {"decision": "deny", "stage": "guard"}, None, 'stage: expected "guard", got "pre-execute"'),
    (
        "reason",
        SECRET,
        {"decision": "deny", "reason": "no secrets"},
        None,
        'reason: expected "no secrets", got "no secrets: a/secret.txt"',
    ),
    (
        "reason_contains",
        SECRET,
        {"decision": "deny", "reason_contains": "passwords"},
        None,
        'reason_contains: expected a reason containing "passwords", got "no secrets: a/secret.txt"',
    ),
    ("post", NOTES, {"decision": "allow", "post": "accepted"}, TOKEN, 'post: expected "accepted", got "rewritten"'),
    (
        "value",
        NOTES,
        {"decision": "allow", "value": {"token": "t", "n": 1}},
        TOKEN,
        'value: expected {"token": "t", "n": 1}, got {"token": "[REDACTED]", "n": 1}',
    ),
    (
        "content",
        NOTES,
        {"decision": "allow", "content": [{"type": "text", "text": "x"}]},
        TOKEN,
        'content: expected [{"type": "text", "text": "x"}], got [{"type": "text", "text": "{\\"token\\"',
    ),
    (
        "feedback_contains",
        NOTES,
        {"decision": "allow", "feedback_contains": "tiny"},
        BIG,
        'feedback_contains: expected a feedback containing "tiny", got "too big for read"',
    ),
    ("rewrites", NOTES, {"decision": "allow", "rewrites": []}, TOKEN, 'rewrites: expected [], got ["mask-token"]'),
]


@pytest.mark.parametrize(("label", "call", "expect", "result", "message"), MISMATCHES, ids=[m[0] for m in MISMATCHES])
def test_each_expectation_mismatch_fails_with_expected_and_got(
    tmp_path: Path, label: str, call: dict[str, Any], expect: dict[str, Any], result: Any, message: str
) -> None:
    report = run_folders(write_pack(tmp_path, {"t.yaml": one_test(call, expect, result)}))
    (outcome,) = report.results
    assert not outcome.passed and not outcome.skipped
    assert not report.ok() and not report.ok(0)
    codes = {f.code for f in outcome.failures}
    assert codes == {pt.MISMATCH}
    assert any(message in m for m in outcome.messages), outcome.messages
    # Only the wrong field fails; the right ones (decision, usually) are not reported.
    field = label.split("-")[0]
    assert [f.field for f in outcome.failures] == [field]


def test_the_failure_points_at_the_expectation(tmp_path: Path) -> None:
    text = (
        "tests:\n  - name: t\n    call: {name: read, arguments: {path: x/secret}}\n    expect:\n      decision: allow\n"
    )
    report = run_folders(write_pack(tmp_path, {"t.yaml": text}))
    (failure,) = report.results[0].failures
    assert failure.location is not None
    assert (failure.location.line, failure.location.column) == (5, 17)
    assert str(failure).startswith(f"{failure.location.file}:5:17: PT003 decision: expected")
    assert "[decided by deny-secrets at pre-execute: no secrets: x/secret]" in failure.message


def test_several_mismatches_are_all_reported(tmp_path: Path) -> None:
    expect = {"decision": "ask", "rule": "ask-shell", "stage": "guard", "reason": "r"}
    report = run_folders(write_pack(tmp_path, {"t.yaml": one_test(SECRET, expect)}))
    assert [f.field for f in report.results[0].failures] == ["decision", "rule", "stage", "reason"]


@pytest.mark.parametrize(
    ("expected", "shown"),
    [
        (True, 'expected {"n": true}, got {"n": 1} (first difference at value.n: expected true (boolean), got 1'),
        ("1", 'first difference at value.n: expected "1" (string), got 1 (integer)'),
        (1.0, "first difference at value.n: expected 1.0 (float), got 1 (integer)"),
        (None, "first difference at value.n: expected null, got 1)"),
    ],
)
def test_values_are_compared_with_their_types(tmp_path: Path, expected: Any, shown: str) -> None:
    test = one_test(NOTES, {"decision": "allow", "value": {"n": expected}}, {"value": {"n": 1}})
    report = run_folders(write_pack(tmp_path, {"t.yaml": test}))
    (outcome,) = report.results
    assert not outcome.passed
    assert shown in outcome.messages[0], outcome.messages


def test_missing_and_extra_keys_are_differences(tmp_path: Path) -> None:
    test = one_test(NOTES, {"decision": "allow", "value": {"n": 1}}, {"value": {"n": 1, "extra": 2}})
    report = run_folders(write_pack(tmp_path, {"t.yaml": test}))
    assert "first difference at value.extra: expected nothing (no such key), got 2" in report.results[0].messages[0]


def test_post_expectations_on_a_denied_call_say_post_did_not_run(tmp_path: Path) -> None:
    test = one_test(SECRET, {"decision": "deny", "post": "accepted"}, TOKEN)
    report = run_folders(write_pack(tmp_path, {"t.yaml": test}))
    (message,) = report.results[0].messages
    assert 'post: expected "accepted", got null' in message
    assert "post-execute did not run: the call's decision was deny" in message


def test_invalid_arguments_and_malformed_results_can_be_expected(tmp_path: Path) -> None:
    registry = Registry()
    registry.register(
        define_tool(
            name="read",
            description="read a file",
            parameters={"path": {"type": "string", "required": True}},
            execute=lambda args: "x",
        )
    )
    text = """\
tests:
  - name: a missing parameter is invalid
    call: {name: read, arguments: {}}
    expect: {decision: invalid, stage: validation, reason_contains: path}
  - name: a text block without text is a malformed recording
    call: {name: shell, arguments: {command: ls}}
    result: {value: x, content: [{type: text}]}
    expect: {decision: error, stage: post-execute, reason_contains: malformed}
  - name: invalid is not deny
    call: {name: read, arguments: {path: 1}}
    expect: {decision: deny}
"""
    layers = PolicyLayers.install(registry, [write_pack(tmp_path, {"t.yaml": text})])
    report = run_tests(layers, discover(layers.packs))
    assert [r.passed for r in report.results] == [True, True, False]
    assert 'decision: expected "deny", got "invalid"' in report.results[2].messages[0]


# -- unknown rule ids fail the run before anything runs (PT001) ---------------------------------

TYPO = """\
tests:
  - name: good
    call: {name: read, arguments: {path: a/secret}}
    expect: {decision: deny, rule: deny-secrets}
  - name: misspelt
    call: {name: read, arguments: {path: a/secret}}
    expect:
      decision: deny
      rule: deny-secret
  - name: misspelt rewrite
    call: {name: read, arguments: {path: notes}}
    result: {value: {token: t}}
    expect: {decision: allow, rewrites: [mask-token, mask-tokens]}
"""


def test_a_test_naming_an_unknown_rule_fails_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    async def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[1])
        return await real_explain(*args, **kwargs)

    monkeypatch.setattr(pt, "explain", counting)
    report = run_folders(write_pack(tmp_path, {"t.yaml": TYPO}))
    assert calls == []  # nothing was evaluated
    assert not report.ran and not report.ok() and not report.ok(0)
    good, misspelt, rewrite = report.results
    assert good.skipped and not good.passed and good.failures[0].code == pt.NOT_RUN
    (failure,) = misspelt.failures
    assert failure.code == pt.UNKNOWN_RULE and failure.field == "rule"
    assert failure.location is not None and (failure.location.line, failure.location.column) == (9, 13)
    assert "'deny-secret'" in failure.message and "did you mean 'deny-secrets'?" in failure.message
    assert str(failure).startswith(f"{failure.location.file}:9:13: PT001")
    (failure,) = rewrite.failures
    assert (
        failure.code == pt.UNKNOWN_RULE
        and "expect.rewrites[1]: no loaded pack has a rule 'mask-tokens'" in failure.message
    )
    assert failure.location is not None and (failure.location.line, failure.location.column) == (13, 54)
    assert (report.passed, report.failed, report.skipped) == (0, 2, 1)
    assert report.packs[0].exercised == ()


def test_default_is_not_an_unknown_rule(tmp_path: Path) -> None:
    test = one_test({"name": "read", "arguments": {"path": "x"}}, {"decision": "allow", "rule": "default"})
    report = run_folders(write_pack(tmp_path, {"t.yaml": test}))
    assert report.ok() and report.ran


def test_rule_ids_of_every_loaded_layer_are_known(tmp_path: Path) -> None:
    other = "rules:\n  - id: other-deny\n    stage: pre-execute\n    tools: [zap]\n    decision: deny\n"
    first = write_pack(tmp_path, {"t.yaml": one_test({"name": "zap"}, {"decision": "deny", "rule": "other-deny"})})
    second = write_pack(tmp_path, name="other", rules=other, globs=[])
    report = run_folders(first, second)
    assert report.ok(), [r.messages for r in report.results]


# -- require_tests (PT002) ----------------------------------------------------------------------


def test_require_tests_fails_a_pack_without_tests(tmp_path: Path) -> None:
    tested = write_pack(tmp_path, {"t.yaml": PASSING})
    untested = write_pack(tmp_path / "b", name="untested", rules=RULES.replace("id: ", "id: u-"), globs=[])
    assert run_folders(tested, untested).ok()
    report = run_folders(tested, untested, require_tests=True)
    assert not report.ok()
    (failure,) = report.failures
    assert failure.code == pt.NO_TESTS and "pack untested has no policy tests" in failure.message
    assert failure.location is not None and failure.location.file.endswith("untested/pack.yaml")
    assert all(r.passed for r in report.results)  # the other pack's tests still ran


def test_require_tests_names_the_globs_that_matched_nothing(tmp_path: Path) -> None:
    folder = write_pack(tmp_path, globs=["test/*.yaml"])
    report = run_folders(folder, require_tests=True)
    (failure,) = report.failures
    assert "['test/*.yaml'] matched no test" in failure.message
    assert failure.location is not None and failure.location.line > 1


def test_a_file_with_an_empty_test_list_does_not_count(tmp_path: Path) -> None:
    report = run_folders(write_pack(tmp_path, {"t.yaml": "tests: []\n"}), require_tests=True)
    assert [f.code for f in report.failures] == [pt.NO_TESTS]


# -- coverage -----------------------------------------------------------------------------------


def test_coverage_lists_unexercised_rules_and_the_threshold_works(tmp_path: Path) -> None:
    tests = """\
tests:
  - name: shell is asked
    call: {name: shell, arguments: {command: ls}}
    expect: {decision: ask}
  - name: secrets
    call: {name: read, arguments: {path: secret}}
    expect: {decision: deny}
"""
    report = run_folders(write_pack(tmp_path, {"t.yaml": tests}))
    (pack,) = report.packs
    assert report.exercised() == {"demo": ["deny-secrets", "ask-shell", "shell-timeout"]}
    assert report.unexercised() == {"demo": ["no-root", "mask-token", "block-big"]}
    assert [(r.id, r.stage) for r in pack.unexercised] == [
        ("no-root", "guard"),
        ("mask-token", "post-execute"),
        ("block-big", "post-execute"),
    ]
    location = pack.unexercised[0].location
    assert location is not None and location.file.endswith("rules.yaml") and location.line == 15
    assert pack.rules == 6 and pack.coverage == pytest.approx(50.0) and report.coverage == pytest.approx(50.0)
    assert report.ok() and report.ok(50) and report.ok(0)
    assert not report.ok(50.1) and not report.ok(100)
    assert [p.name for p in report.below(75)] == ["demo"]
    for bad in (-1, 100.5, float("nan"), True):
        with pytest.raises(ValueError, match="coverage threshold"):
            report.ok(bad)


def test_execute_rules_count_only_for_calls_that_would_run(tmp_path: Path) -> None:
    test = one_test({"name": "shell", "arguments": {"command": "ls", "path": "/"}}, {"decision": "deny"})
    report = run_folders(write_pack(tmp_path, {"t.yaml": test}))
    assert "shell-timeout" in report.unexercised()["demo"]
    assert report.results[0].exercised == {"ask-shell", "no-root"}


def test_post_execute_rules_count_only_with_a_recorded_result(tmp_path: Path) -> None:
    plain = one_test(NOTES, {"decision": "allow"})
    report = run_folders(write_pack(tmp_path, {"t.yaml": plain}))
    assert {"mask-token", "block-big"} <= set(report.unexercised()["demo"])
    report = run_folders(write_pack(tmp_path, {"t.yaml": one_test(NOTES, {"decision": "allow"}, BIG)}))
    assert {"mask-token", "block-big"} <= set(report.exercised()["demo"])


def test_a_pack_without_rules_is_fully_covered(tmp_path: Path) -> None:
    folder = write_pack(tmp_path, {"t.yaml": one_test({"name": "x"}, {"decision": "allow"})}, rules="rules: []\n")
    report = run_folders(folder)
    assert report.packs[0].rules == 0 and report.coverage == 100.0 and report.ok(100)


# -- discovery problems -------------------------------------------------------------------------


def test_schema_problems_raise_with_file_line_column(tmp_path: Path) -> None:
    text = "tests:\n  - name: t\n    call: {name: read}\n    expect: {decison: deny}\n"
    layers = PolicyLayers.install(Registry(), [write_pack(tmp_path, {"t.yaml": text})])
    with pytest.raises(PackLoadError) as caught:
        discover(layers.packs)
    assert caught.value.exit_code == 2
    assert set(caught.value.codes) == {"PE202", "PE203"}  # unknown `decison`, missing `decision`
    unknown = next(p for p in caught.value.problems if p.code == "PE202")
    assert unknown.location is not None and (unknown.location.line, unknown.location.column) == (4, 14)
    assert "did you mean 'decision'?" in (unknown.hint or "")
    assert "no test was run" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("tests:\n  - name: t\n    call: {name: read\n", "PE101"),
        ("tests:\n  - name: t\n    call: {name: read}\n    expect: {decision: maybe}\n", "PE205"),
        ("tests:\n  - name: t\n    call: {name: read}\n    expect: {decision: allow, value: 1}\n", "PE203"),
        ("tests:\n  - name: t\n    call: {name: read, arguments: [1]}\n    expect: {decision: allow}\n", "PE204"),
        (
            "tests:\n  - {name: t, call: {name: a}, expect: {decision: allow}}\n"
            "  - {name: t, call: {name: b}, expect: {decision: allow}}\n",
            "PE201",
        ),
        (
            "tests:\n  - name: t\n    call: {name: read}\n    expect: {decision: allow}\n    !!python/object:x {}: 1\n",
            "PE103",
        ),
    ],
    ids=["yaml", "not-allowed", "value-without-result", "wrong-type", "duplicate-name", "forbidden-tag"],
)
def test_broken_test_files_are_refused(tmp_path: Path, text: str, code: str) -> None:
    layers = PolicyLayers.install(Registry(), [write_pack(tmp_path, {"t.yaml": text})])
    with pytest.raises(PackLoadError) as caught:
        discover(layers.packs)
    assert code in caught.value.codes
    assert all(p.location is not None and p.location.file.endswith("t.yaml") for p in caught.value.errors)


def test_every_broken_file_is_reported_at_once(tmp_path: Path) -> None:
    bad = "tests:\n  - name: t\n    expect: {decision: allow}\n"
    layers = PolicyLayers.install(Registry(), [write_pack(tmp_path, {"a.yaml": bad, "b.yaml": bad, "c.yaml": PASSING})])
    with pytest.raises(PackLoadError) as caught:
        discover(layers.packs)
    assert sorted(Path(p.location.file).name for p in caught.value.errors if p.location) == ["a.yaml", "b.yaml"]


@pytest.mark.parametrize("glob", ["/etc/*.yaml", "../other/*.yaml", "tests/../../x.yaml", ".", ""])
def test_test_globs_stay_inside_the_pack(tmp_path: Path, glob: str) -> None:
    layers = PolicyLayers.install(Registry(), [write_pack(tmp_path, globs=[glob])])
    with pytest.raises(PackLoadError) as caught:
        discover(layers.packs)
    (problem,) = caught.value.problems
    assert problem.code == "PE402" and problem.location is not None
    assert problem.location.file.endswith("pack.yaml")


def test_globs_find_files_in_order_once(tmp_path: Path) -> None:
    tests = {"b.yaml": one_test({"name": "x"}, {"decision": "allow"}), "a.yaml": PASSING, "notes.txt": "not yaml"}
    folder = write_pack(tmp_path, tests, globs=["tests/*.yaml", "tests/a.yaml"])
    layers = PolicyLayers.install(Registry(), [folder])
    files = discover(layers.packs)
    assert [Path(f.path).name for f in files] == ["a.yaml", "b.yaml"]
    assert [f.pack for f in files] == ["demo", "demo"]


def test_call_defaults(tmp_path: Path) -> None:
    rules = (
        "rules:\n  - id: who\n    stage: pre-execute\n    tools: ['*']\n    decision: ask\n"
        "    reason: '{agent} {call_id} {arguments}'\n"
    )
    text = "tests:\n  - name: t\n    call: {name: x}\n    expect: {decision: ask, reason: 'agent policytest:t {}'}\n"
    report = run_folders(write_pack(tmp_path, {"t.yaml": text}, rules=rules))
    assert report.ok(), report.results[0].messages


# -- output -------------------------------------------------------------------------------------

NASTY = """\
tests:
  - name: "quotes \\" & <angle> 'brackets' \\x01 control"
    call: {name: read, arguments: {path: "a/secret<&>\\x02"}}
    expect: {decision: allow}
  - name: passes
    call: {name: shell, arguments: {command: ls}}
    expect: {decision: ask}
  - name: fails too
    call: {name: shell, arguments: {command: ls}}
    expect: {decision: deny, rule: ask-shell}
"""


def test_junit_parses_and_counts_failures(tmp_path: Path) -> None:
    folder = write_pack(tmp_path, {"nasty.yaml": NASTY, "ok.yaml": PASSING})
    report = run_folders(folder)
    xml = to_junit(report)
    root = ET.fromstring(xml)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("8", "2", "0")
    suites = root.findall("testsuite")
    assert [Path(s.get("name") or "").name for s in suites] == ["nasty.yaml", "ok.yaml"]
    nasty = suites[0]
    assert (nasty.get("tests"), nasty.get("failures")) == ("3", "2")
    cases = nasty.findall("testcase")
    assert cases[0].get("name") == "quotes \" & <angle> 'brackets' \\u0001 control"
    assert cases[0].get("line") == "2" and cases[0].get("classname") == "demo.nasty"
    failures = [c.find("failure") for c in cases]
    assert failures[1] is None
    first = failures[0]
    assert first is not None and first.get("type") == "PT003"
    assert 'decision: expected "allow", got "deny"' in (first.get("message") or "")
    assert "secret<&>\\u0002" in (first.text or "")
    assert len(root.findall(".//failure")) == int(root.get("failures") or 0)
    properties = {p.get("name"): p.get("value") for p in nasty.iter("property")}
    assert properties == {"pack": "demo", "pack.coverage": "100.0"}


def test_junit_shows_skipped_and_run_level_failures(tmp_path: Path) -> None:
    report = run_folders(
        write_pack(tmp_path, {"t.yaml": TYPO}),
        write_pack(tmp_path, name="empty", rules="rules: []\n"),
        require_tests=True,
    )
    root = ET.fromstring(to_junit(report))
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("4", "3", "1")
    assert len(root.findall(".//skipped")) == 1
    types = sorted(f.get("type") or "" for f in root.iter("failure"))
    assert types == ["PT001", "PT001", "PT002"]


def test_json_report(tmp_path: Path) -> None:
    report = run_folders(write_pack(tmp_path, {"nasty.yaml": NASTY}))
    data = to_json(report, threshold=10)
    assert json.loads(json.dumps(data)) == data
    assert data["ok"] is False and data["threshold"] == 10
    assert data["summary"] == {
        "tests": 3,
        "passed": 1,
        "failed": 2,
        "skipped": 0,
        "coverage": data["summary"]["coverage"],
        "duration": data["summary"]["duration"],
    }
    first = data["results"][0]
    assert first["status"] == "failed" and first["failures"][0]["code"] == "PT003"
    assert first["failures"][0]["location"].endswith("nasty.yaml:4:24")
    assert first["actual"]["decision"] == "deny" and first["actual"]["rule"] == "deny-secrets"
    assert data["packs"][0]["unexercised"][0] == {
        "id": "no-root",
        "stage": "guard",
        "location": data["packs"][0]["unexercised"][0]["location"],
    }
    assert to_json(run_folders(write_pack(tmp_path / "x", {"t.yaml": PASSING})))["ok"] is True


def test_format_report(tmp_path: Path) -> None:
    text = format_report(run_folders(write_pack(tmp_path, {"t.yaml": TYPO})), threshold=90)
    assert "PT001" in text and "not exercised: no-root (guard)" in text
    assert text.splitlines()[-1].startswith("FAILED: 0 passed, 2 failed, 1 not run")


# -- the shipped packs ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_pack_tests_pass_with_full_coverage(name: str) -> None:
    report = run_folders(ROOT / "policies" / name, require_tests=True)
    failed = {r.name: r.messages for r in report.results if not r.passed}
    assert not failed, failed
    assert report.ran and not report.failures
    (pack,) = report.packs
    assert pack.unexercised == (), [r.id for r in pack.unexercised]
    assert pack.coverage == 100.0 and report.ok(100.0)
    assert report.total >= 50
    assert all(r.location is not None for r in pack.exercised)


def test_bfcl_tests_use_real_calls_verbatim() -> None:
    corpus = {}
    for line in CORPUS.read_text("utf-8").splitlines():
        record = json.loads(line)
        corpus[record["call_id"]] = record
    layers = PolicyLayers.install(Registry(), [ROOT / "policies" / "bfcl"])
    real = [t for f in discover(layers.packs) for t in f.tests if t.call_id.startswith("multi_turn_base_")]
    assert len(real) >= 30
    for test in real:
        record = corpus.get(test.call_id)
        assert record is not None, f"{test.location}: {test.call_id} is not in the corpus"
        assert test.tool == record["name"], test.location
        # json.dumps keeps 250.0 and 250 apart, so a retyped number is caught.
        assert json.dumps(test.arguments, sort_keys=True) == json.dumps(record["arguments"], sort_keys=True), (
            test.location
        )


def test_baseline_tests_cover_path_bypass_spellings() -> None:
    layers = PolicyLayers.install(Registry(), [ROOT / "policies" / "baseline"])
    tests = [t for f in discover(layers.packs) for t in f.tests]
    env = {t.arguments.get("path") for t in tests if t.expect.get("rule") == "deny-env-files"}
    assert {"./.env", "a/../.env", ".ENV", "%2eenv", "%252eenv", "\uff0e\uff45\uff4e\uff56"} <= env
    system = {t.arguments.get("path") for t in tests if t.expect.get("rule") == "no-system-dirs"}
    assert {"//etc//shadow", "/ETC/hosts", "/tmp/../etc/hosts", "file:///etc/passwd", "%2fetc%2fpasswd"} <= system
