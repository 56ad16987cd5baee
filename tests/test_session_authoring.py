"""Authoring session rules: sequence tests, `check` on session reads and labels, `explain` in a session, fmt and lint.

A policy test with `steps:` is a sequence, decided in one session of its own; the shipped packs'
tests/session.yaml are the shared sequences of tests/data/session_sequences.yaml. `check` types
`session.*` reads without a catalog and warns (PE511) on a label no loaded rule sets. `explain`
shows the session document the rules read and the labels the call's label rules set, reading a
store it never writes. Label rules are no links of the pre-execute chain, and lint says so.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from policyengine import PackLoadError, PolicyLayers, Registry
from policyengine.cli.main import main
from policyengine.enforce.explain import explain
from policyengine.packs.lint import PE511, lint
from policyengine.packs.loader import load_packs
from policyengine.packs.type_check import PE601
from policyengine.sessions.stores import SqliteStore
from policyengine.testing.runner import discover, run_tests
from policyengine.tools.definition import define_tool
from support import rules_pack

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / "tests" / "data" / "session_sequences.yaml"
PACKS = ("baseline", "bfcl", "claude-code")
SECRET = "aws_secret_access_key = q8Xr2Lm4Np6Vt0Zb3Kc5Hd7Jf9Gs1Wa2Ye4Ui6Oo\n"


def cli(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# -- the shipped sequence tests -----------------------------------------------------------------


def as_pack_test(sequence: Mapping[str, Any]) -> dict[str, Any]:
    """A sequence of the shared file as a pack's sequence test says it."""
    steps = []
    for step in sequence["steps"]:
        written = {"call": step["call"]} | ({"result": step["result"]} if "result" in step else {})
        steps.append(written | {"expect": step["expect"]})
    return {"name": sequence["name"], "description": f"Pins {', '.join(sequence['rules'])}.", "steps": steps}


@pytest.mark.parametrize("pack", PACKS)
def test_the_pack_sequence_tests_are_the_shared_sequences(pack: str) -> None:
    shared = [as_pack_test(s) for s in yaml.safe_load(SHARED.read_text("utf-8"))["sequences"] if s["pack"] == pack]
    written = yaml.safe_load((ROOT / "policies" / pack / "tests" / "session.yaml").read_text("utf-8"))["tests"]
    assert written == shared


@pytest.mark.parametrize("pack", PACKS)
def test_policyengine_test_runs_the_shipped_sequences_and_counts_label_rules(pack: str) -> None:
    code, out, err = cli("test", ROOT / "policies" / pack, "--coverage", "--threshold", "100", "--format", "json")
    assert code == 0, out + err
    report = json.loads(out)
    sequences = [t for t in report["results"] if t["file"].endswith("session.yaml")]
    assert sequences and all(t["passed"] for t in sequences)
    loaded = load_packs([ROOT / "policies" / pack])
    session_rules = [r.id for p in loaded for r in p.rules if r.location and r.location.file.endswith("session.yaml")]
    exercised = {r for t in sequences for r in t["exercised"]}
    assert set(session_rules) <= exercised  # label rules included


# -- sequence tests: how they run and fail ------------------------------------------------------

LABELLING = [
    {"id": "label-home", "stage": "pre-execute", "tools": ["read"], "when": "starts_with(arguments.path, '/home/')",
     "label": "private-data"},
    {"id": "label-fetch", "stage": "post-execute", "tools": ["fetch"], "label": ["untrusted", "web:seen"]},
    {"id": "ask-after-fetch", "stage": "pre-execute", "tools": ["shell"], "when": "session.labels.untrusted",
     "decision": "ask", "reason": "after {session.labels.untrusted.call_id}"},
    {"id": "deny-send-after-home", "stage": "pre-execute", "tools": ["send"],
     "when": "session.labels.\"private-data\"", "decision": "deny", "reason": "private data was read"},
]  # fmt: skip


def sequence_pack(tmp_path: Path, tests: str) -> Path:
    folder = rules_pack(tmp_path, "seq", LABELLING, tests=["tests/*.yaml"])
    (folder / "tests").mkdir()
    (folder / "tests" / "seq.yaml").write_text(tests, "utf-8")
    return folder


def run(folder: Path) -> Any:
    layers = PolicyLayers.install(Registry(), [folder])
    return run_tests(layers, discover(layers.packs))


PASSING = """\
tests:
  - name: fetched, then a shell command is asked
    steps:
      - call: {name: fetch, arguments: {url: "https://example.org"}, call_id: f1}
        result: {value: page}
        expect: {decision: allow, labels: [untrusted, "web:seen"]}
      - call: {name: shell, arguments: {command: ls}}
        expect: {decision: ask, rule: ask-after-fetch, reason: after f1}
  - name: "a session of its own: nothing fetched here"
    steps:
      - call: {name: shell, arguments: {command: ls}}
        expect: {decision: allow, labels: []}
  - name: a single test reads no session
    call: {name: send, arguments: {to: x}}
    expect: {decision: allow}
"""


def test_a_sequence_runs_in_a_session_of_its_own_and_counts_its_label_rules(tmp_path: Path) -> None:
    report = run(sequence_pack(tmp_path, PASSING))
    assert report.ok(), [r.messages for r in report.results]
    assert [r.name for r in report.results] == [
        "fetched, then a shell command is asked",
        "a session of its own: nothing fetched here",
        "a single test reads no session",
    ]
    assert report.unexercised() == {"seq": ["label-home", "deny-send-after-home"]}
    steps = report.results[0].actual["steps"]
    assert [s["labels"] for s in steps] == [["untrusted", "web:seen"], ["untrusted", "web:seen"]]
    # Run again: each run starts from fresh sessions.
    assert run(sequence_pack(tmp_path / "again", PASSING)).ok()


FAILING = """\
tests:
  - name: home read, then a send
    steps:
      - call: {name: read, arguments: {path: /home/a/notes}}
        expect: {decision: allow, labels: [private]}
      - call: {name: send, arguments: {to: x}}
        expect: {decision: allow}
"""


def test_a_failing_step_says_which_step_expected_what_and_where(tmp_path: Path) -> None:
    folder = sequence_pack(tmp_path, FAILING)
    (result,) = run(folder).results
    assert not result.passed
    labels, decision = result.failures
    assert labels.code == decision.code == "PT003"
    assert labels.message.startswith(
        'labels: expected the session to hold ["private"] after step 1, got ["private-data"]'
    )
    assert (labels.location.line, labels.location.column) == (5, 43)
    assert decision.message.startswith('decision: expected "allow", got "deny" [decided by deny-send-after-home')
    assert (decision.location.line, decision.location.column) == (7, 28)
    code, out, _err = cli("test", folder)
    assert code == 1 and "seq.yaml:5:43: PT003 labels" in out


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (  # a test is one call or a sequence, never both
            "tests:\n  - name: both\n    call: {name: shell}\n    expect: {decision: allow}\n"
            "    steps:\n      - call: {name: shell}\n        expect: {decision: allow}\n",
            "steps",
        ),
        ("tests:\n  - name: empty\n    steps: []\n", "steps"),
        ("tests:\n  - name: no call\n    steps:\n      - expect: {decision: allow}\n", "call"),
        (  # a step's expectation about the result needs the step's result
            "tests:\n  - name: no result\n    steps:\n      - call: {name: fetch}\n        expect: {decision: allow, "
            "post: accepted}\n",
            "tests[0].steps[0].expect.post: needs a recorded `result:`",
        ),
        (
            "tests:\n  - name: labels alone\n    call: {name: fetch}\n    expect: {decision: allow, labels: [x]}\n",
            "labels",
        ),
        (  # a rule id no pack has, in any step, fails before anything runs
            "tests:\n  - name: typo\n    steps:\n      - call: {name: shell}\n        expect: {decision: ask, "
            "rule: ask-after-fetc}\n",
            "PT001",
        ),
    ],
)
def test_broken_sequence_tests_are_refused_where_they_are_written(tmp_path: Path, text: str, says: str) -> None:
    folder = sequence_pack(tmp_path, text)
    try:
        report = run(folder)
    except PackLoadError as error:
        assert says in str(error)
        return
    assert not report.ok() and says in " ".join(m for r in report.results for m in r.messages)


def test_fmt_orders_a_sequence_and_keeps_label_after_the_condition(tmp_path: Path) -> None:
    folder = sequence_pack(
        tmp_path,
        "tests:\n  - steps:\n      - expect: {labels: [untrusted], decision: allow}\n"
        "        call: {arguments: {url: u}, name: fetch}\n    name: out of order\n",
    )
    (folder / "rules.yaml").write_text(
        "rules:\n  - label: [a, b]  # why\n    id: l\n    when: \"arguments.to == 'x'\"\n"
        "    stage: pre-execute\n    tools: [send]\n",
        "utf-8",
    )
    assert cli("fmt", folder)[0] == 0
    assert (folder / "rules.yaml").read_text("utf-8") == (
        "rules:\n  - id: l\n    stage: pre-execute\n    tools: [send]\n    when: \"arguments.to == 'x'\"\n"
        "    label: [a, b]  # why\n"
    )
    assert (folder / "tests" / "seq.yaml").read_text("utf-8") == (
        "tests:\n  - name: out of order\n    steps:\n      - call: {name: fetch, arguments: {url: u}}\n"
        "        expect: {decision: allow, labels: [untrusted]}\n"
    )


@pytest.mark.parametrize("pack", PACKS)
def test_the_shipped_packs_are_formatted(pack: str) -> None:
    assert cli("fmt", "--check", ROOT / "policies" / pack)[0] == 0


# -- check: session reads and labels ------------------------------------------------------------


def lint_rules(tmp_path: Path, rules: Sequence[Mapping[str, Any]]) -> list[tuple[str, str | None, str]]:
    problems = lint(load_packs([rules_pack(tmp_path, "p", rules)]))
    return [(p.code, p.rule_id, p.message) for p in problems]


def test_a_misspelt_session_field_is_warned_without_a_catalog(tmp_path: Path) -> None:
    found = lint_rules(
        tmp_path,
        [
            {"id": "typo", "stage": "pre-execute", "tools": ["send"], "when": "session.label.x", "decision": "deny"},
            {"id": "calls", "stage": "guard", "tools": ["*"], "when": "length(session.calls[?nme == 'x']) > `1`",
             "reason": "r"},
            {"id": "fine", "stage": "pre-execute", "tools": ["send"], "decision": "ask",
             "when": "session_count(session, 'send', '5m') > `3` && session.now > `0`"},
        ],
    )  # fmt: skip
    assert [(code, rule) for code, rule, _ in found] == [(PE601, "typo"), (PE601, "calls")]
    assert "session has no field 'label'" in found[0][2]


def test_a_label_no_loaded_rule_sets_is_warned(tmp_path: Path) -> None:
    found = lint_rules(tmp_path, [*LABELLING,
        {"id": "typo", "stage": "pre-execute", "tools": ["send"], "when": "session.labels.\"privte-data\"",
         "decision": "deny"},
        {"id": "in-reason", "stage": "pre-execute", "tools": ["send"], "decision": "ask",
         "reason": "{session.labels.secret.call_id}"},
    ])  # fmt: skip
    assert [(code, rule) for code, rule, _ in found] == [(PE511, "typo"), (PE511, "in-reason")]
    code, out, _err = cli("check", "--strict", tmp_path / "p")
    assert code == 1 and "did you mean 'private-data'?" in out and "PE511" in out


def test_the_shipped_packs_check_clean() -> None:
    for pack in PACKS:
        assert lint(load_packs([ROOT / "policies" / pack])) == [], pack


def test_lint_does_not_take_label_rules_for_links_of_the_chain(tmp_path: Path) -> None:
    found = lint_rules(tmp_path, [
        {"id": "deny-x", "stage": "pre-execute", "tools": ["send"], "when": "arguments.to == 'x'", "decision": "deny"},
        {"id": "label-x", "stage": "pre-execute", "tools": ["send"], "when": "arguments.to == 'x'", "label": "a"},
        {"id": "label-x-too", "stage": "pre-execute", "tools": ["send"], "when": "arguments.to == 'x'", "label": "b"},
        {"id": "allow-all", "stage": "pre-execute", "tools": ["*"], "decision": "allow", "final": True},
        {"id": "label-all", "stage": "pre-execute", "tools": ["send"], "label": "c"},
        {"id": "post-a", "stage": "post-execute", "tools": ["send"], "label": ["d", "e"]},
        {"id": "post-b", "stage": "post-execute", "tools": ["send"], "label": ["e", "d"]},
        {"id": "post-c", "stage": "post-execute", "tools": ["send"], "label": "f"},
    ])  # fmt: skip
    # A final allow skips no label rule, and two label rules are twins only when they set the same labels.
    assert [(code, rule) for code, rule, _ in found] == [("PE504", "post-b")]


# -- explain in a session -----------------------------------------------------------------------


def fs_registry(store: SqliteStore) -> Registry:
    registry = Registry(sessions=store)
    registry.register(define_tool(name="fs_read", description="read", parameters={}, execute=lambda _a: SECRET))
    PolicyLayers.install(registry, [ROOT / "policies" / "baseline"])
    return registry


def test_explain_traces_the_session_the_rules_saw_and_never_writes_the_store(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "sessions.db")
    result = asyncio.run(fs_registry(store).call("fs_read", {}, session_id="s1", call_id="read-1"))
    assert result.ok and result.session_id == "s1" and result.labels == ()
    before = len(store.load("s1").calls)
    call = {"name": "http_get", "arguments": {"url": "https://example.org"}, "session_id": "s1"}
    code, out, err = cli(
        "explain", "--pack", ROOT / "policies" / "baseline", json.dumps(call), "--session-store",
        f"sqlite:{tmp_path / 'sessions.db'}", "--trace",
    )  # fmt: skip
    assert code == 0, err
    assert "decision: deny by rule 'deny-egress-after-credentials'" in out
    assert "session s1 as the rules saw it:" in out and '"call_id": "read-1"' in out
    assert 'session.labels."credential-seen"  => {"call_id": "read-1"' in out
    assert "q8Xr2Lm4" not in out and "fingerprint(s)" in out  # fingerprints are counted, never shown
    assert len(SqliteStore(tmp_path / "sessions.db").load("s1").calls) == before  # explain wrote nothing


def test_explain_names_the_labels_a_call_sets() -> None:
    layers = PolicyLayers.install(Registry(), [ROOT / "policies" / "baseline"])
    explanation = asyncio.run(
        explain(layers, "fs_read", {"path": "/workspace/a.ini"}, result={"value": SECRET}, session_id="s", trace=True)
    )
    assert explanation.labelled() == [("credential-seen", "label-credential-results")]
    assert explanation.session is not None and explanation.session["id"] == "s"
    traced = {c.rule: c for c in explanation.considered}
    assert traced["label-credential-results"].trace is not None and traced["label-credential-results"].trace_agrees
    # Without a session id the call reads the empty session, and labels nothing.
    alone = asyncio.run(explain(layers, "fs_read", {"path": "/workspace/a.ini"}, result={"value": SECRET}))
    assert alone.labelled() == [] and alone.session is not None and alone.session["id"] == ""
    code, out, _err = cli(
        "explain", "--pack", ROOT / "policies" / "baseline", "--format", "json",
        json.dumps({"name": "fs_read", "arguments": {}, "result": {"value": SECRET}, "session_id": "x"}),
    )  # fmt: skip
    assert code == 0 and json.loads(out)["labelled"] == [
        {"label": "credential-seen", "rule": "label-credential-results"}
    ]


@pytest.mark.parametrize("field", [{"session_id": 3}, {"session_id": ""}, {"time": "noon"}])
def test_explain_refuses_a_malformed_session_id_or_time(field: dict[str, Any]) -> None:
    code, _out, err = cli("explain", "--pack", ROOT / "policies" / "baseline", json.dumps({"name": "x"} | field))
    assert code == 2 and ("session_id" in err or "time" in err)
