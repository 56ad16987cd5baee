"""The shipped packs: policies/baseline on a registry of seed-like tools, policies/bfcl over
the real recorded BFCL multi-turn calls (examples/bfcl-calls.jsonl)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from policyengine import (
    ApprovalAnswer,
    Outcome,
    PolicyLayers,
    PostOutcome,
    Registry,
    SourceKind,
    Stage,
    Verdict,
    evaluate,
    load_pack,
    load_packs,
)
from policyengine.values.problems import ProblemSink
from support import SECRET_TOKEN, RecordingApproval, make_kit

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / "policies" / "baseline"
BFCL = REPO / "policies" / "bfcl"


# -- loading -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", [BASELINE, BFCL], ids=["baseline", "bfcl"])
def test_shipped_pack_loads_without_errors_or_warnings(folder: Path) -> None:
    sink = ProblemSink()
    pack = load_pack(folder, sink=sink)
    assert sink.problems == ()
    assert pack.warnings == ()
    assert pack.name == folder.name
    assert pack.rules
    assert pack.digest.startswith("sha256:")


def test_shipped_packs_layer_together_without_duplicate_rule_ids() -> None:
    baseline, bfcl = load_packs([BASELINE, BFCL])
    assert not {r.id for r in baseline.rules} & {r.id for r in bfcl.rules}


# -- baseline on a registry --------------------------------------------------------------------


@pytest.fixture
def baseline_kit() -> Any:
    kit = make_kit()
    layers = PolicyLayers.install(kit.registry, [BASELINE])
    kit.digest = layers.packs[0].digest  # type: ignore[attr-defined]
    return kit


@pytest.mark.parametrize("tool", ["fs_write", "fs_edit"])
def test_baseline_denies_direct_writes(baseline_kit: Any, tool: str) -> None:
    result = baseline_kit.call(tool, {"path": "notes.txt"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert (result.source.name, result.source.pack) == ("deny-direct-writes", "baseline")
    assert result.source.digest == baseline_kit.digest
    assert tool in result.reason
    assert baseline_kit.runs[tool] == 0


@pytest.mark.parametrize(
    "path", ["./.env", "a/../.env", ".ENV", "config/.env.local", "a\\.env", "%2eenv", ".env", "/srv/app/.env/"]
)
def test_baseline_denies_every_spelling_of_a_dotenv_path(baseline_kit: Any, path: str) -> None:
    result = baseline_kit.call("fs_read", {"path": path})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert result.source.name == "deny-env-files"
    assert baseline_kit.runs["fs_read"] == 0


@pytest.mark.parametrize("path", ["notes.txt", "environment.md", "src/env.py", "/tmp/x"])
def test_baseline_lets_ordinary_paths_through(baseline_kit: Any, path: str) -> None:
    result = baseline_kit.call("fs_read", {"path": path})
    assert result.outcome is Outcome.OK
    assert result.value == f"contents of {path}"


@pytest.mark.parametrize("path", ["//etc/passwd", "/ETC/shadow", "/tmp/../etc/x", "/etc", "/usr/bin/../../etc/hosts"])
def test_baseline_guard_refuses_system_directories(baseline_kit: Any, path: str) -> None:
    result = baseline_kit.call("fs_read", {"path": path})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert (result.source.name, result.source.kind) == ("no-system-dirs", SourceKind.RULE)
    assert baseline_kit.runs["fs_read"] == 0


def test_baseline_shell_is_denied_without_an_approval_service(baseline_kit: Any) -> None:
    result = baseline_kit.call("shell", {"command": "ls -la"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.APPROVAL
    assert result.source.name == "ask-before-shell"
    assert "ls -la" in result.reason
    assert baseline_kit.runs["shell"] == 0


def test_baseline_shell_runs_once_a_person_allows_it_once() -> None:
    approval = RecordingApproval(ApprovalAnswer.ALLOWED_ONCE)
    kit = make_kit(approval=approval)
    PolicyLayers.install(kit.registry, [BASELINE])
    result = kit.call("shell", {"command": "ls -la"})
    assert result.outcome is Outcome.OK
    assert result.value == "ran ls -la"
    assert kit.runs["shell"] == 1
    assert len(approval.requests) == 1
    assert approval.requests[0].reason == "Run the shell command `ls -la`?"
    assert approval.requests[0].source is not None
    assert approval.requests[0].source.name == "ask-before-shell"


def test_baseline_shell_is_denied_when_the_person_refuses() -> None:
    approval = RecordingApproval(ApprovalAnswer.DENIED)
    kit = make_kit(approval=approval)
    PolicyLayers.install(kit.registry, [BASELINE])
    assert kit.call("shell", {"command": "ls"}).outcome is Outcome.DENIED
    assert kit.runs["shell"] == 0


@pytest.mark.parametrize(
    "message",
    [
        "deploy key AKIAIOSFODNN7EXAMPLE for you",
        "token: ghp_" + "a1B2" * 9,
        "my password = correct-horse-battery",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE...",
    ],
)
def test_baseline_red_line_stops_secrets_leaving_through_send_message(baseline_kit: Any, message: str) -> None:
    result = baseline_kit.call("send_message", {"message": message})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.source.name == "no-secrets-to-network"
    assert message not in result.reason  # the denial does not echo the secret back
    assert baseline_kit.runs["send_message"] == 0


def test_baseline_lets_an_ordinary_message_out(baseline_kit: Any) -> None:
    assert baseline_kit.call("send_message", {"message": "the build is green"}).outcome is Outcome.OK


def test_baseline_redacts_credentials_by_value_so_observers_never_see_them(baseline_kit: Any) -> None:
    result = baseline_kit.call("login", {"user": "ada"})
    assert result.outcome is Outcome.OK
    assert result.value == {"user": "ada", "api_token": "[REDACTED]"}
    assert SECRET_TOKEN not in result.text
    observed = baseline_kit.observed(result.call_id)
    assert SECRET_TOKEN not in repr(observed)
    assert [(s.name, s.digest) for s in result.rewrites] == [("redact-credential-fields", baseline_kit.digest)]


def test_baseline_redacts_secret_looking_strings_inside_values(baseline_kit: Any) -> None:
    token = "ghp_" + "Z9y8" * 10
    result = baseline_kit.call("fs_read", {"path": f"notes-{token}.txt"})
    assert result.outcome is Outcome.OK
    assert token not in result.value
    assert result.value == "contents of notes-[REDACTED].txt"
    assert token not in repr(baseline_kit.observed(result.call_id).value)
    assert [s.name for s in result.rewrites] == ["redact-secret-strings"]


# -- bfcl over the recorded corpus --------------------------------------------------------------


Verdicts = dict[str, tuple[dict[str, Any], Any]]  # call_id -> (recorded call, Evaluation)


@pytest.fixture(scope="module")
def bfcl_verdicts(bfcl_calls: tuple[dict[str, Any], ...]) -> Verdicts:
    """call_id -> (recorded call, Evaluation) for every recorded call, under the bfcl pack."""
    records = bfcl_calls
    registry = Registry()
    PolicyLayers.install(registry, [BFCL])

    async def run() -> dict[str, tuple[dict[str, Any], Any]]:
        out = {}
        for record in records:
            verdict = await evaluate(registry, record["name"], record["arguments"], call_id=record["call_id"])
            out[record["call_id"]] = (record, verdict)
        return out

    return asyncio.run(run())


def _notional(arguments: dict[str, Any]) -> float:
    return float(arguments["price"]) * float(arguments["amount"])


def test_bfcl_denies_exactly_the_recorded_orders_over_the_notional_limit(bfcl_verdicts: Verdicts) -> None:
    orders = {cid: (rec, v) for cid, (rec, v) in bfcl_verdicts.items() if rec["name"] == "place_order"}
    over = {cid for cid, (rec, _v) in orders.items() if _notional(rec["arguments"]) > 100_000}
    assert "multi_turn_base_141:2:1" in over  # 100 GOOG at 2840.34
    denied = {cid for cid, (_rec, v) in orders.items() if v.decision is Verdict.DENY}
    assert denied == over
    for cid in over:
        verdict = orders[cid][1]
        assert verdict.rule == "deny-orders-over-limit"
        assert orders[cid][0]["arguments"]["symbol"] in verdict.reason


def test_bfcl_asks_before_large_but_allowed_orders(bfcl_verdicts: Verdicts) -> None:
    for rec, verdict in bfcl_verdicts.values():
        if rec["name"] == "place_order" and 25_000 < _notional(rec["arguments"]) <= 100_000:
            assert (verdict.decision, verdict.rule) == (Verdict.ASK, "ask-large-orders"), rec["call_id"]


def test_bfcl_denies_the_recorded_transfer_over_the_limit(bfcl_verdicts: Verdicts) -> None:
    transfers = {
        cid: (rec, v)
        for cid, (rec, v) in bfcl_verdicts.items()
        if rec["name"] in {"fund_account", "withdraw_funds", "make_transaction"}
    }
    over = {cid for cid, (rec, _v) in transfers.items() if rec["arguments"]["amount"] >= 10_000}
    assert over == {"multi_turn_base_116:4:0"}
    denied = {cid for cid, (_rec, v) in transfers.items() if v.decision is Verdict.DENY}
    assert denied == over
    assert transfers["multi_turn_base_116:4:0"][1].rule == "deny-transfers-over-limit"


def test_bfcl_asks_before_every_recorded_rm_and_rmdir(bfcl_verdicts: Verdicts) -> None:
    deletes = [(rec, v) for rec, v in bfcl_verdicts.values() if rec["name"] in {"rm", "rmdir"}]
    assert len(deletes) == 4
    for rec, verdict in deletes:
        assert (verdict.decision, verdict.rule) == (Verdict.ASK, "ask-before-delete")
        name = rec["arguments"].get("file_name") or rec["arguments"]["dir_name"]
        assert verdict.reason == f"Delete {name}?"


def test_bfcl_denies_nothing_else_in_the_recorded_corpus(bfcl_verdicts: Verdicts) -> None:
    denied = {v.rule for _rec, v in bfcl_verdicts.values() if v.decision is Verdict.DENY}
    assert denied == {"deny-orders-over-limit", "deny-transfers-over-limit"}
    assert not any(v.decision in (Verdict.INVALID, Verdict.ERROR) for _rec, v in bfcl_verdicts.values())


def test_bfcl_masks_card_numbers_in_a_credit_card_listing() -> None:
    registry = Registry()
    PolicyLayers.install(registry, [BFCL])
    value = {
        "credit_card_list": {
            "card_3456": {
                "card_number": "4111222233334444",
                "expiration_date": "2030-12-31",
                "cardholder_name": "Ada Lovelace",
                "card_verification_value": 321,
                "balance": 1200.5,
            },
            "card_9999": {
                "card_number": "5500 0000 0000 0004",
                "expiration_date": "2031-01-31",
                "cardholder_name": "Ada Lovelace",
                "card_verification_value": 987,
                "balance": 10.0,
            },
        }
    }
    verdict = asyncio.run(evaluate(registry, "get_all_credit_cards", {}, result={"value": value}))
    assert verdict.decision is Verdict.ALLOW
    assert verdict.post is PostOutcome.REWRITTEN
    cards = verdict.value["credit_card_list"]
    assert cards["card_3456"]["card_number"] == "************4444"
    assert cards["card_9999"]["card_number"].endswith("0004")
    assert set(cards["card_9999"]["card_number"][:-4]) == {"*"}
    assert cards["card_3456"]["card_verification_value"] is None
    assert cards["card_3456"]["balance"] == 1200.5
    shown = json.dumps(verdict.content, default=str)
    assert not re.search(r"\d{12,}", shown)
    assert "4111222233334444" not in shown and "321" not in shown
    assert "mask-card-numbers" in [s.name for s in verdict.rewrites]


def test_bfcl_red_line_denies_a_tweet_with_a_password(bfcl_verdicts: Verdicts) -> None:
    registry = Registry()
    PolicyLayers.install(registry, [BFCL])
    recorded = next(rec for rec, _v in bfcl_verdicts.values() if rec["name"] == "post_tweet")
    assert next(v for rec, v in bfcl_verdicts.values() if rec is recorded).decision is Verdict.ALLOW
    arguments = {**recorded["arguments"], "content": "my password is hunter2"}
    verdict = asyncio.run(evaluate(registry, "post_tweet", arguments))
    assert verdict.decision is Verdict.DENY
    assert verdict.stage is Stage.GUARD
    assert verdict.rule == "no-credentials-in-posts"
    assert verdict.reason is not None
    assert "hunter2" not in verdict.reason
