"""`mode: monitor` (docs/rules.md): a rule, or a whole pack, decides as usual, enforces nothing, and records what it
would have done. The table is tests/data/monitor/cases.yaml; every case runs through a real Registry, evaluate(),
the dry-run engine and the Claude Code hook's decision, and enforcing its rules decides what the hits said.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from policyengine import PackLoadError, Registry, define_tool, load_pack
from policyengine.adapters import claude_code
from policyengine.audit import result_record
from policyengine.cli.main import main
from policyengine.dryrun.engine import Engine, Setup
from policyengine.enforce.evaluate import evaluate, evaluate_sync
from policyengine.enforce.install import PolicyLayers
from policyengine.packs import cache
from policyengine.packs.lint import lint
from policyengine.packs.rules import Mode
from policyengine.runtime.audit import policy_decision
from policyengine.sessions.stores import MemoryStore
from policyengine.values.results import Outcome, ToolResult
from support import load_yaml, rules_pack

CASES: list[dict[str, Any]] = load_yaml(Path(__file__).parent / "data" / "monitor" / "cases.yaml")

Hit = tuple[str, str, str, str | None]


def _pack(root: Path, case: dict[str, Any], *, enforced: bool = False) -> Path:
    """The case's pack; `enforced`: the same rules and manifest with every `mode:` taken out."""
    manifest = dict(case.get("manifest") or {})
    rules = [dict(rule) for rule in case["rules"]]
    if enforced:
        manifest.pop("mode", None)
        for rule in rules:
            rule.pop("mode", None)
    return rules_pack(root, "enforced" if enforced else "staged", rules, **manifest)


def _shell(value: Any = "ok") -> Any:
    return define_tool(
        name="shell", description="run", parameters={"cmd": {"type": "string"}}, execute=lambda _a: value
    )


def _hits(found: Any) -> list[Hit]:
    return [(h.rule, h.stage.value, h.would.value, h.reason) for h in found]


def _expected(case: dict[str, Any]) -> list[Hit]:
    return [(rule, stage, would, reason) for rule, stage, would, reason in case["monitored"]]


def _registry(pack: Path, value: Any = "ok") -> PolicyLayers:
    registry = Registry()
    registry.register(_shell(value))
    return PolicyLayers.install(registry, [pack])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_a_registry_call_enforces_nothing_a_monitored_rule_decides_and_records_it(
    tmp_path: Path, case: dict[str, Any]
) -> None:
    call = case["call"]
    recorded = (call.get("result") or {}).get("value", "ok")
    layers = _registry(_pack(tmp_path, case), recorded)
    result: ToolResult = asyncio.run(layers.registry.call(call["name"], call["arguments"]))
    decision, rule = policy_decision(result)
    # No approval service: an ask ends denied at the approval stage, but the policy's decision was ask.
    assert decision == case["decision"]
    assert rule == case.get("rule")
    if case["decision"] == "allow":
        assert result.outcome is Outcome.OK and result.value == recorded  # the tool ran, its result untouched
    post_hits = [h for h in _expected(case) if h[1] == "post-execute"]
    expected = _expected(case) if "result" in call else [h for h in _expected(case) if h not in post_hits]
    assert _hits(result.monitored) == expected
    assert result_record(result).get("monitored", []) == [h.to_json() for h in result.monitored]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_evaluate_reports_the_hits_and_enforcing_the_rules_decides_what_they_said(
    tmp_path: Path, case: dict[str, Any]
) -> None:
    call = case["call"]
    layers = _registry(_pack(tmp_path, case))
    found = evaluate_sync(layers.registry, call["name"], call["arguments"], result=call.get("result"))
    awaited = asyncio.run(evaluate(layers.registry, call["name"], call["arguments"], result=call.get("result")))
    assert found == awaited
    assert found is not None and found.decision.value == case["decision"]
    assert (found.source.rule_id if found.source else None) == case.get("rule")
    assert _hits(found.monitored) == _expected(case)
    if "post" in case:
        assert found.post is not None and found.post.value == case["post"]
    enforced = evaluate_sync(
        _registry(_pack(tmp_path, case, enforced=True)).registry,
        call["name"],
        call["arguments"],
        result=call.get("result"),
    )
    assert enforced is not None and enforced.monitored == ()
    if "enforced" in case:
        assert enforced.decision.value == case["enforced"]
    if "enforced_post" in case:
        assert enforced.post is not None and enforced.post.value == case["enforced_post"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_dry_run_and_the_hook_record_the_same_hits(tmp_path: Path, case: dict[str, Any]) -> None:
    call = case["call"]
    pack = _pack(tmp_path, case)
    record = Engine(Setup((str(pack),), (), None)).record(1, json.dumps(call).encode())
    assert record["decision"] == case["decision"]
    assert record.get("monitored", []) == [
        {"rule": r, "pack": "staged", "stage": s, "would": w, "reason": why} for r, s, w, why in _expected(case)
    ]
    response = call.get("result", {}).get("value", claude_code._MISSING)
    event = claude_code.Event(
        "PostToolUse" if "result" in call else "PreToolUse", "shell", call["arguments"], "/work", None, "t1", response
    )
    decision = claude_code.Policy([load_pack(pack)], []).decide(event)
    assert decision.verdict == case["decision"]
    assert _hits(decision.monitored) == _expected(case)


def test_a_monitored_label_rule_records_that_it_would_have_labelled_and_labels_nothing(tmp_path: Path) -> None:
    rules = [
        {"id": "mark", "stage": "pre-execute", "tools": ["shell"], "label": "touched-shell", "mode": "monitor"},
        {"id": "after", "stage": "pre-execute", "tools": ["shell"], "when": "session.labels.\"touched-shell\"",
         "decision": "deny", "reason": "labelled"},
    ]  # fmt: skip
    store = MemoryStore()
    registry = Registry(sessions=store)
    registry.register(_shell())
    PolicyLayers.install(registry, [rules_pack(tmp_path, "labels", rules)])
    for _ in range(2):  # enforced, the first call's label would deny the second
        result = asyncio.run(registry.call("shell", {"cmd": "ls"}, session_id="s1"))
        assert result.outcome is Outcome.OK
        assert _hits(result.monitored) == [("mark", "pre-execute", "label", "would label the session touched-shell")]
    assert not store.load("s1").labels


def test_a_monitored_execute_rule_wraps_nothing_and_says_what_it_would_have_done(tmp_path: Path) -> None:
    rules = [{"id": "deadline", "stage": "execute", "tools": ["shell"], "timeout": 0.001, "mode": "monitor"}]
    registry = Registry()

    async def slow(_arguments: Any) -> str:
        await asyncio.sleep(0.05)  # past the rule's deadline: enforced, the call would time out
        return "done"

    registry.register(
        define_tool(name="shell", description="run", parameters={"cmd": {"type": "string"}}, execute=slow)
    )
    PolicyLayers.install(registry, [rules_pack(tmp_path, "wrap", rules)])
    result = asyncio.run(registry.call("shell", {"cmd": "ls"}))
    assert (result.outcome, result.value) == (Outcome.OK, "done")
    assert _hits(result.monitored) == [("deadline", "execute", "wrap", "would wrap the body with a deadline of 0.001s")]


# -- the pack's own problems ---------------------------------------------------------------------


@pytest.mark.parametrize("where", ["rule", "manifest"])
def test_a_mode_other_than_enforce_or_monitor_is_refused_where_it_is_written(tmp_path: Path, where: str) -> None:
    rule = {"id": "r", "stage": "pre-execute", "tools": ["*"], "decision": "deny"}
    if where == "rule":
        pack, file, value = rules_pack(tmp_path, "typo", [{**rule, "mode": "monitr"}]), "rules.yaml", "monitr"
    else:
        pack, file, value = rules_pack(tmp_path, "typo", [rule], mode="log-only"), "pack.yaml", "log-only"
    with pytest.raises(PackLoadError) as caught:
        load_pack(pack)
    [problem] = caught.value.errors
    assert problem.code == "PE205" and problem.hint == "allowed: enforce, monitor"
    assert problem.location is not None and problem.location.file.endswith(file)
    assert problem.location.line == _line_of(pack / file, f"mode: {value}")
    assert f"mode: unallowed value {value}" in problem.message


def test_check_warns_on_a_red_line_in_monitor_mode_and_on_a_monitored_packs_default(tmp_path: Path) -> None:
    rules = [
        {"id": "no-etc", "stage": "guard", "tools": ["*"], "reason": "red line", "mode": "monitor"},
        {"id": "enforced-red-line", "stage": "guard", "tools": ["*"], "when": "arguments.x", "reason": "red line"},
    ]
    staged = load_pack(rules_pack(tmp_path, "staged", rules))
    warnings = {p.code: p for p in lint([staged])}
    red = warnings["PE512"]
    line = _line_of(tmp_path / "staged" / "rules.yaml", "id: no-etc")
    assert red.rule_id == "no-etc" and red.location is not None and red.location.line == line
    assert red.hint is not None and "remove `mode: monitor`" in red.hint
    # A monitored unconditional guard ends no chain: the guard after it is not unreachable.
    assert "PE501" not in warnings
    whole = load_pack(rules_pack(tmp_path, "whole", rules[1:], mode="monitor", default="deny"))
    [default] = [p for p in lint([whole]) if p.code == "PE513"]
    assert default.location is not None and default.location.file.endswith("pack.yaml")
    assert "not applied" in default.message and default.hint is not None
    assert [p.code for p in lint([whole])].count("PE512") == 1  # its guard is monitored too
    code, out, _ = _cli("check", str(tmp_path / "staged"))
    assert code == 0 and "PE512" in out and f"rules.yaml:{line}:" in out


def _line_of(file: Path, text: str) -> int:
    """The 1-based number of the first line of `file` holding `text`."""
    return next(i for i, line in enumerate(file.read_text("utf-8").splitlines(), 1) if text in line)


def test_the_hooks_pack_cache_keeps_each_rules_mode(tmp_path: Path) -> None:
    folder = rules_pack(
        tmp_path, "staged", CASES[0]["rules"] + [{"id": "on", "stage": "guard", "tools": ["x"], "reason": "r"}]
    )
    first = cache.load_packs_cached([folder], tmp_path / "cache")
    again = cache.load_packs_cached([folder], tmp_path / "cache")
    assert (first.hit, again.hit) == (False, True)
    assert [r.mode for r in again.packs[0].rules] == [Mode.MONITOR, Mode.ENFORCE]
    whole = rules_pack(tmp_path, "whole", CASES[0]["rules"], mode="monitor")
    cache.load_packs_cached([whole], tmp_path / "cache")
    assert cache.load_packs_cached([whole], tmp_path / "cache").packs[0].mode is Mode.MONITOR


# -- what people read: dry-run, logs, explain, the hook --------------------------------------------

STAGED = [
    {"id": "no-rm", "stage": "pre-execute", "tools": ["shell"], "when": "contains(arguments.cmd, 'rm')",
     "decision": "deny", "reason": "no rm", "mode": "monitor"},
    {"id": "ask-push", "stage": "pre-execute", "tools": ["shell"], "when": "contains(arguments.cmd, 'push')",
     "decision": "ask", "reason": "push?"},
]  # fmt: skip
CALLS = [{"name": "shell", "arguments": {"cmd": c}} for c in ("rm a", "rm -rf b", "ls", "git push")]


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


def test_the_dry_run_summary_counts_the_calls_each_monitored_rule_would_have_decided(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "staged", STAGED)
    enforced = rules_pack(tmp_path, "enforced", [{k: v for k, v in r.items() if k != "mode"} for r in STAGED])
    calls = tmp_path / "calls.jsonl"
    calls.write_text("".join(json.dumps(c) + "\n" for c in CALLS), "utf-8")
    code, out, _ = _cli("dry-run", "--workers", "1", "--color", "never", "--pack", str(pack), str(calls))
    assert code == 0
    [row] = [line for line in out.splitlines() if line.startswith("no-rm ")]
    assert row.split() == ["no-rm", "pre-execute", "would", "have", "denied", "2", "calls"]
    assert "never hit" not in out  # a rule with monitor hits was hit, in monitor mode
    code, out, _ = _cli(
        "dry-run", "--workers", "1", "--format", "json", "--pack", str(pack), "--against", str(enforced), str(calls)
    )
    summary = json.loads(out)
    assert summary["monitored"] == [{"rule": "no-rm", "stage": "pre-execute", "would": "deny", "calls": 2}]
    assert "against_monitored" not in summary
    # The impact diff: enforcing no-rm changes exactly the two calls it would have denied.
    assert summary["changed"] == {"no-rm": [1, 2]}


def test_logs_show_what_each_monitored_rule_would_have_done(tmp_path: Path) -> None:
    hit = {"rule": "no-rm", "pack": "staged", "stage": "pre-execute", "would": "deny", "reason": "no rm"}
    post = {"rule": "hide", "pack": "staged", "stage": "post-execute", "would": "rewrite", "reason": "would redact"}
    records = [
        {"name": "shell", "decision": "allow", "timestamp": 1.0, "monitored": [hit]},
        {"name": "shell", "decision": "allow", "timestamp": 2.0, "monitored": [hit]},
        {"name": "shell", "decision": "allow", "timestamp": 3.0},
        # A review of the second call: its decision was logged on its own, only post-execute's hit counts.
        {"name": "shell", "decision": "allow", "timestamp": 4.0, "post": "accepted", "monitored": [hit, post]},
    ]
    log = tmp_path / "decisions.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    code, out, _ = _cli("logs", str(log), "--color", "never")
    assert code == 0
    rows = {
        line.split()[0]: " ".join(line.split()[1:]) for line in out.splitlines() if line.startswith(("no-rm", "hide"))
    }
    assert rows == {
        "no-rm": "pre-execute would have denied 2 calls",
        "hide": "post-execute would have rewritten the result of 1 call",
    }
    code, out, _ = _cli("logs", str(log), "--format", "jsonl")
    assert [json.loads(line).get("monitored") for line in out.splitlines()] == [r.get("monitored") for r in records]


def test_explain_marks_monitored_rules_and_says_what_they_would_have_done(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "staged", STAGED)
    code, out, _ = _cli("explain", "--pack", str(pack), json.dumps(CALLS[0]), "--trace", "--color", "never")
    assert code == 0
    assert "matched (monitor)" in out and "decision: allow" in out
    assert "no-rm (pre-execute) would deny: no rm" in out
    code, out, _ = _cli("explain", "--pack", str(pack), json.dumps(CALLS[0]), "--format", "json")
    found = json.loads(out)
    assert found["decision"] == "allow"
    assert found["monitored"] == [
        {"rule": "no-rm", "pack": "staged", "stage": "pre-execute", "would": "deny", "reason": "no rm"}
    ]
    assert [c.get("mode") for c in found["considered"]] == ["monitor", None]


def test_the_hook_lets_a_monitored_deny_through_and_its_audit_record_says_what_it_would_have_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POLICYENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLICYENGINE_HOOK_HELPER", "off")
    pack = rules_pack(
        tmp_path, "staged", [{**STAGED[0], "tools": ["Bash"], "when": "contains(arguments.command, 'rm')"}]
    )
    audit = tmp_path / "audit.jsonl"
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf build"},
        "cwd": "/home/dev/project",
        "session_id": "s",
        "tool_use_id": "toolu_1",
    }
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(event).encode()), encoding="utf-8"))
    code, out, err = _cli("hook", "claude-code", "--pack", str(pack), "--audit", str(audit))
    assert (code, err) == (0, "")
    assert json.loads(out) == {}  # no rule decided: Claude Code's own permission rules do, as without the rule
    [record] = [json.loads(line) for line in audit.read_text("utf-8").splitlines()]
    assert record["decision"] == "allow"
    assert record["monitored"] == [
        {"rule": "no-rm", "pack": "staged", "stage": "pre-execute", "would": "deny", "reason": "no rm"}
    ]
