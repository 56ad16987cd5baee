"""The audit recorder (SPEC.md section 6, issue 5).

It writes every call, as it happens, in the recorded-call format (schemas/calls.yaml), with the
canonical value as post-execute left it; each record is flushed; its own failures are counted,
logged and never block a call; and its file replays through `dry-run` to the same decisions.
"""

from __future__ import annotations

import asyncio
import errno
import io
import json
import logging
import time
from pathlib import Path
from typing import Any

import cerberus
import pytest

from policyengine import ApprovalAnswer, ApprovalRequest, Outcome, PolicyLayers, Registry, Stage, ToolResult
from policyengine.audit import AuditRecorder, result_record
from policyengine.cli.main import main
from policyengine.packs.rule_schemas import schema
from policyengine.runtime.audit import policy_decision
from policyengine.tools.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]
BFCL_PACK = ROOT / "policies" / "bfcl"
BFCL_TOOLS = ROOT / "examples" / "bfcl-tools.jsonl"
CARD = "4012888888881881"
CARDS = {
    "credit_card_list": {
        "card_6789": {
            "card_number": CARD,
            "expiration_date": "2028-12-01",
            "cardholder_name": "Michael Smith",
            "card_verification_value": 465,
            "balance": 1200.5,
        }
    }
}


class Approvals:
    """An approval service: allows once the call ids it was told to, denies the rest."""

    def __init__(self, allow: set[str]) -> None:
        self.allow = allow
        self.asked: list[str] = []

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request.call.call_id)
        return ApprovalAnswer.ALLOWED_ONCE if request.call.call_id in self.allow else ApprovalAnswer.DENIED


def _raise(_args: Any) -> Any:
    raise OSError("disk on fire")


BODIES: dict[str, Any] = {
    "cd": lambda a: {"current_working_directory": a["folder"]},
    "ls": _raise,
    "cat": lambda a: {"file_content": "y" * 25_000},
    "rm": lambda a: {"result": f"removed {a['file_name']}"},
    "place_order": lambda a: {"order_id": 12446, "order_type": a["order_type"], "status": "Pending"},
    "fund_account": lambda a: {"status": "Account funded", "new_balance": 15000.0},
    "get_all_credit_cards": lambda a: CARDS,
    "post_tweet": lambda a: {"id": 1, "username": "dr_smith", "content": a["content"], "tags": a.get("tags", [])},
}


def bfcl_registry(approve: frozenset[str] = frozenset()) -> Registry:
    """The BFCL definitions of a few tools, with bodies, and policies/bfcl installed."""
    catalog = load_catalog(BFCL_TOOLS)
    registry = Registry(approval=Approvals(set(approve)))
    for name, body in BODIES.items():
        registry.register(catalog[name].with_execute(body))
    PolicyLayers.install(registry, [str(BFCL_PACK)])
    return registry


# (call_id, name, arguments, expected (decision, rule)); c02 and c08 are approved by a person.
TRAFFIC: list[tuple[str, str, dict[str, Any], tuple[str, str | None]]] = [
    ("c01", "cd", {"folder": "document"}, ("allow", None)),
    ("c02", "rm", {"file_name": "findings_report"}, ("ask", "ask-before-delete")),
    ("c03", "rm", {"file_name": "draft.txt"}, ("ask", "ask-before-delete")),
    ("c04", "place_order", {"order_type": "Buy", "symbol": "GOOG", "price": 2840.34, "amount": 100},
     ("deny", "deny-orders-over-limit")),
    ("c05", "place_order", {"order_type": "Buy", "symbol": "TSLA", "price": 700.0, "amount": 100},
     ("ask", "ask-large-orders")),
    ("c06", "place_order", {"order_type": "Buy", "symbol": "AAPL", "price": 227.16, "amount": 100}, ("allow", None)),
    ("c07", "fund_account", {"amount": 10000}, ("deny", "deny-transfers-over-limit")),
    ("c08", "fund_account", {"amount": 5000}, ("ask", "ask-transfers")),
    ("c09", "fund_account", {"amount": 500}, ("allow", None)),
    ("c10", "get_all_credit_cards", {}, ("allow", None)),
    ("c11", "post_tweet", {"content": "Note to self: my password is securePass123", "tags": ["#x"]},
     ("deny", "no-credentials-in-posts")),
    ("c12", "post_tweet", {"content": "Managed to archive important data files!", "tags": ["#DataManagement"]},
     ("allow", None)),
    ("c13", "cd", {"folder": "/etc"}, ("deny", "fs-no-system-paths")),
    ("c14", "make_transaction", {"account_id": 12345, "xact_type": "withdrawal", "amount": 500},
     ("invalid", "registry")),
    ("c15", "place_order", {"order_type": "Buy", "symbol": "GOOG", "price": "2840.34", "amount": 100},
     ("invalid", "registry")),
    ("c16", "cat", {"file_name": "huge.log"}, ("allow", None)),  # the result is blocked, the call allowed
    ("c17", "ls", {}, ("allow", None)),  # the body fails; the policy allowed it
]  # fmt: skip
APPROVED = frozenset({"c02", "c08"})
# What the audit writes of the calls that carry a credential: the arguments redacted.
REDACTED_ARGUMENTS = {"c11": {"content": "Note to self: my password is [REDACTED]", "tags": ["#x"]}}


def record_traffic(registry: Registry) -> dict[str, Any]:
    results = {}
    for call_id, name, arguments, _expected in TRAFFIC:
        results[call_id] = registry.call_sync(name, arguments, call_id=call_id, agent="planner")
    return results


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def dry_run(calls: Path, output: Path) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["dry-run", "--pack", str(BFCL_PACK), str(calls), "--tools", str(BFCL_TOOLS)]
    code = main([*argv, "--output", str(output), "--format", "json", "--workers", "1"], out=out, err=err)
    assert code == 0, err.getvalue()
    return code, json.loads(out.getvalue()), read_jsonl(output)


Recorded = tuple[Path, dict[str, Any], AuditRecorder]  # the audit file, the results by call id, the recorder


@pytest.fixture
def recorded(tmp_path: Path) -> Recorded:
    """The TRAFFIC run through a BFCL registry with an audit recorder on a file."""
    registry = bfcl_registry(APPROVED)
    path = tmp_path / "audit.jsonl"
    recorder = AuditRecorder(path)
    registry.on_result(recorder, name="audit")
    results = record_traffic(registry)
    recorder.close()
    assert recorder.failures == 0 and recorder.written == len(TRAFFIC)
    return path, results, recorder


# -- what the recorder writes -------------------------------------------------------------


def test_the_live_calls_end_as_the_policy_says(recorded: Recorded) -> None:
    _path, results, _recorder = recorded
    assert results["c02"].outcome is Outcome.OK and results["c08"].outcome is Outcome.OK
    assert results["c03"].outcome is Outcome.DENIED and results["c03"].stage is Stage.APPROVAL
    assert results["c04"].outcome is Outcome.DENIED and results["c04"].stage is Stage.PRE_EXECUTE
    assert results["c11"].stage is Stage.GUARD
    assert results["c14"].outcome is Outcome.INVALID and results["c15"].outcome is Outcome.INVALID
    assert results["c16"].outcome is Outcome.BLOCKED
    assert results["c17"].outcome is Outcome.ERROR
    for call_id, _name, _arguments, expected in TRAFFIC:
        assert policy_decision(results[call_id]) == expected, call_id


def test_one_record_per_call_with_identity_decision_and_pack(
    recorded: Recorded,
) -> None:
    path, results, _recorder = recorded
    records = read_jsonl(path)
    assert [r["call_id"] for r in records] == [t[0] for t in TRAFFIC]
    digest = next(r["digest"] for r in records if r["pack"] == "bfcl")
    assert digest.startswith("sha256:") and len(digest) == 71
    for record, (call_id, name, arguments, (decision, rule)) in zip(records, TRAFFIC, strict=True):
        assert record["name"] == name
        assert record["agent"] == "planner"
        assert (record["decision"], record["rule"]) == (decision, rule), call_id
        assert record["result"]["outcome"] == results[call_id].outcome.value
        assert abs(record["timestamp"] - time.time()) < 60
        if decision in ("allow", "ask", "deny") and rule != "registry":
            assert record["pack"] == "bfcl" and record["digest"] == digest, call_id
            # As validated: the sent arguments, plus the defaults the tool declares (post_tweet's mentions);
            # c11's password is redacted before it is written (docs/audit.md), refused call or not.
            sent = REDACTED_ARGUMENTS.get(call_id, arguments)
            assert {k: record["arguments"][k] for k in arguments} == sent, call_id
            assert record.get("redacted", False) is (call_id in REDACTED_ARGUMENTS), call_id
    by_id = {r["call_id"]: r for r in records}
    assert by_id["c14"]["pack"] is None and by_id["c14"]["digest"] is None
    assert by_id["c04"]["stage"] == "pre-execute"
    assert by_id["c03"]["stage"] == "approval"
    assert "Delete draft.txt?" in by_id["c03"]["reason"]


def test_recorder_writes_the_value_as_post_execute_left_it(
    recorded: Recorded,
) -> None:
    path, results, _recorder = recorded
    assert BODIES["get_all_credit_cards"]({})["credit_card_list"]["card_6789"]["card_number"] == CARD
    text = path.read_text("utf-8")
    assert CARD not in text
    assert CARD[-8:] not in text  # not even unmasked in the content text
    record = next(r for r in read_jsonl(path) if r["call_id"] == "c10")
    card = record["result"]["value"]["credit_card_list"]["card_6789"]
    assert card["card_number"] == "************1881"
    assert card["card_verification_value"] is None
    assert record["result"]["value"] == results["c10"].value
    assert record["result"]["content"] == list(results["c10"].content)
    assert "************1881" in record["result"]["content"][0]["text"]
    assert record["rewrites"] == ["mask-card-numbers", "redact-card-verification"]


def test_audit_file_replays_through_dry_run_to_the_same_decisions(recorded: Recorded, tmp_path: Path) -> None:
    """Every record replays to its decision, but a redacted one: its credential is gone, so is what refused it."""
    path, _results, _recorder = recorded
    audit = read_jsonl(path)
    _code, summary, replay = dry_run(path, tmp_path / "replay.jsonl")
    assert len(replay) == len(audit) == len(TRAFFIC)
    for line, (was, now) in enumerate(zip(audit, replay, strict=True), start=1):
        assert now["line"] == line
        assert now["call_id"] == was["call_id"]
        if was.get("redacted"):
            assert was["call_id"] in REDACTED_ARGUMENTS
            assert (was["decision"], now["decision"]) == ("deny", "allow")  # the replay reads "[REDACTED]"
            continue
        assert (now["decision"], now["rule"]) == (was["decision"], was["rule"]), was["call_id"]
    assert "error" not in summary["decisions"]
    assert summary["decisions"]["deny"] == 3 and summary["decisions"]["ask"] == 4
    assert summary["decisions"]["invalid"] == 2


def test_an_invalid_call_is_recorded_as_sent_and_replays_as_invalid(tmp_path: Path) -> None:
    """The recorded call keeps the arguments the model sent (calls.yaml: "as sent")."""
    registry = bfcl_registry()
    path = tmp_path / "audit.jsonl"
    recorder = AuditRecorder(path)
    registry.on_result(recorder, name="audit")
    sent = {"bogus": 1}
    result = registry.call_sync("get_all_credit_cards", sent, call_id="bad-1")
    assert result.outcome is Outcome.INVALID
    recorder.close()
    (record,) = read_jsonl(path)
    assert record["decision"] == "invalid"
    assert record["arguments"] == sent
    _code, _summary, (replayed,) = dry_run(path, tmp_path / "replay.jsonl")
    assert replayed["decision"] == "invalid"


def test_audit_file_validates_against_the_recorded_call_schema(
    recorded: Recorded,
) -> None:
    path, _results, _recorder = recorded
    validator = cerberus.Validator(schema("calls"))
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        record = json.loads(line)
        assert validator.validate(record), (number, record["call_id"], validator.errors)


def test_schema_rejects_what_is_not_a_recorded_call() -> None:
    """The schema check above can fail: it refuses a record without a name or with a bad decision."""
    validator = cerberus.Validator(schema("calls"))
    assert validator.validate({"call_id": "x", "name": "cd", "arguments": {}})
    assert not validator.validate({"call_id": "x", "arguments": {}})
    assert not validator.validate({"call_id": "x", "name": "cd", "arguments": {}, "decision": "maybe"})
    assert not validator.validate({"call_id": "x", "name": "cd", "arguments": [], "digest": "md5:1"})


def test_records_are_plain_json_without_the_str_fallback(recorded: Recorded) -> None:
    """Nothing in a record relies on json's default=str (an enum or object would turn into a string)."""
    path, results, recorder = recorded
    for written in read_jsonl(path):
        built = result_record(results[written["call_id"]], pack_digest=recorder.pack_digest)
        fresh = json.loads(json.dumps(recorder.writer.prepare(built)))  # raises on a non-JSON value
        written.pop("timestamp"), fresh.pop("timestamp")
        assert written == fresh


# -- flushing ------------------------------------------------------------------------------


def test_each_record_is_flushed_before_the_call_returns(tmp_path: Path) -> None:
    registry = bfcl_registry(APPROVED)
    path = tmp_path / "audit.jsonl"
    recorder = AuditRecorder(path)
    registry.on_result(recorder, name="audit")
    try:
        for count, (call_id, name, arguments, _expected) in enumerate(TRAFFIC[:6], start=1):
            registry.call_sync(name, arguments, call_id=call_id)
            lines = path.read_text("utf-8").splitlines()  # recorder still open
            assert len(lines) == count
            assert json.loads(lines[-1])["call_id"] == call_id
            assert path.read_bytes().endswith(b"\n")
    finally:
        recorder.close()


def test_concurrent_calls_write_whole_lines(tmp_path: Path) -> None:
    registry = bfcl_registry()
    path = tmp_path / "audit.jsonl"
    recorder = AuditRecorder(path)
    registry.on_result(recorder, name="audit")

    async def burst() -> None:
        await asyncio.gather(
            *(registry.call("cd", {"folder": f"d{i}"}, call_id=f"k{i}") for i in range(60)),
            *(registry.call("fund_account", {"amount": 10 + i}, call_id=f"f{i}") for i in range(20)),
        )

    asyncio.run(burst())
    recorder.close()
    records = read_jsonl(path)
    assert sorted(r["call_id"] for r in records) == sorted([f"k{i}" for i in range(60)] + [f"f{i}" for i in range(20)])
    assert recorder.written == 80 and recorder.failures == 0


# -- failures are visible and never block ---------------------------------------------------


def test_unwritable_path_never_blocks_and_recovers(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    registry = bfcl_registry()
    target = tmp_path / "audit.jsonl"
    target.mkdir()  # a directory where the file should be
    recorder = AuditRecorder(target)
    registry.on_result(recorder, name="audit")
    with caplog.at_level(logging.ERROR, logger="policyengine.audit"):
        result = registry.call_sync("cd", {"folder": "document"}, call_id="lost-1")
    assert result.outcome is Outcome.OK
    assert result.value == {"current_working_directory": "document"}
    assert recorder.failures == 1 and recorder.written == 0
    assert recorder.last_error is not None and "not a regular file" in recorder.last_error
    messages = [r.getMessage() for r in caplog.records if r.name == "policyengine.audit"]
    assert any("lost-1" in m and "AuditFileError" in m for m in messages)
    assert registry.stats["observer_failures"] == 0  # the recorder never raised into the registry

    denied = registry.call_sync("fund_account", {"amount": 50_000}, call_id="lost-2")
    assert denied.outcome is Outcome.DENIED
    assert recorder.failures == 2

    target.rmdir()  # the fault clears
    registry.call_sync("cd", {"folder": "after"}, call_id="kept-1")
    recorder.close()
    assert recorder.written == 1 and recorder.failures == 2
    assert [r["call_id"] for r in read_jsonl(target)] == ["kept-1"]


class DiskFull(io.StringIO):
    """A stream that fails like a full disk while `full` is set (optionally after a partial write)."""

    def __init__(self, partial: bool = False) -> None:
        super().__init__()
        self.full = False
        self.partial = partial

    def write(self, text: str) -> int:
        if self.full:
            if self.partial:
                super().write(text[: len(text) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(text)


def test_disk_full_never_blocks_is_counted_logged_and_recovers(caplog: pytest.LogCaptureFixture) -> None:
    registry = bfcl_registry()
    stream = DiskFull()
    recorder = AuditRecorder(stream)
    registry.on_result(recorder, name="audit")
    registry.call_sync("cd", {"folder": "a"}, call_id="w1")
    stream.full = True
    with caplog.at_level(logging.ERROR, logger="policyengine.audit"):
        result = registry.call_sync("get_all_credit_cards", {}, call_id="w2")
        registry.call_sync("cd", {"folder": "b"}, call_id="w3")
    assert result.outcome is Outcome.OK
    assert result.value["credit_card_list"]["card_6789"]["card_number"] == "************1881"
    assert recorder.failures == 2
    assert recorder.last_error is not None
    assert "No space left on device" in recorder.last_error
    assert "OSError" in recorder.last_error
    logged = [r for r in caplog.records if r.name == "policyengine.audit" and r.levelno == logging.ERROR]
    assert [("w2" in r.getMessage(), "w3" in r.getMessage()) for r in logged] == [(True, False), (False, True)]
    stream.full = False
    registry.call_sync("cd", {"folder": "c"}, call_id="w4")
    assert recorder.written == 2 and recorder.failures == 2
    assert [json.loads(line)["call_id"] for line in stream.getvalue().splitlines()] == ["w1", "w4"]
    recorder.close()
    assert not stream.closed  # a stream passed in stays open


def test_a_partial_write_does_not_corrupt_the_records_written_after_recovery() -> None:
    """A full disk can take half a line; the next record must still be a line of its own."""
    registry = bfcl_registry()
    stream = DiskFull(partial=True)
    recorder = AuditRecorder(stream)
    registry.on_result(recorder, name="audit")
    registry.call_sync("cd", {"folder": "a"}, call_id="p1")
    stream.full = True
    registry.call_sync("cd", {"folder": "b"}, call_id="p2")
    stream.full = False
    registry.call_sync("cd", {"folder": "c"}, call_id="p3")
    assert recorder.failures == 1 and recorder.written == 2
    parsed = []
    for line in stream.getvalue().splitlines():
        try:
            parsed.append(json.loads(line)["call_id"])
        except json.JSONDecodeError:
            parsed.append(None)  # the half-written record: lost, as the recorder reported
    assert "p3" in parsed, stream.getvalue()[-400:]
    assert parsed[0] == "p1"


def test_another_observer_raising_does_not_affect_the_recorder(tmp_path: Path) -> None:
    registry = bfcl_registry()

    def broken_before(_result: ToolResult) -> None:
        raise RuntimeError("observer bug")

    def broken_after(_result: ToolResult) -> None:
        raise ValueError("another observer bug")

    path = tmp_path / "audit.jsonl"
    recorder = AuditRecorder(path)
    registry.on_result(broken_before, name="broken-before")
    registry.on_result(recorder, name="audit")
    registry.on_result(broken_after, name="broken-after")
    results = [registry.call_sync("cd", {"folder": f"d{i}"}, call_id=f"o{i}") for i in range(3)]
    results.append(registry.call_sync("fund_account", {"amount": 20_000}, call_id="o3"))
    recorder.close()
    assert [r.outcome for r in results] == [Outcome.OK] * 3 + [Outcome.DENIED]
    assert recorder.written == 4 and recorder.failures == 0 and recorder.last_error is None
    assert registry.stats["observer_failures"] == 8
    records = read_jsonl(path)
    assert [r["call_id"] for r in records] == ["o0", "o1", "o2", "o3"]
    assert records[3]["decision"] == "deny"


def test_a_value_utf8_cannot_carry_is_written_escaped_and_the_file_stays_whole(tmp_path: Path) -> None:
    """A lone surrogate in a value cannot be written as UTF-8: the record is written ASCII-escaped, never lost."""
    registry = Registry()
    path = tmp_path / "audit.jsonl"
    recorder = AuditRecorder(path)
    catalog = load_catalog(BFCL_TOOLS)
    registry.register(catalog["cd"].with_execute(BODIES["cd"]))
    registry.on_result(recorder, name="audit")
    registry.call_sync("cd", {"folder": "ok"}, call_id="e1")
    result = registry.call_sync("cd", {"folder": "bad\ud800"}, call_id="e2")
    registry.call_sync("cd", {"folder": "ok2"}, call_id="e3")
    recorder.close()
    assert result.outcome is Outcome.OK
    assert recorder.failures == 0 and recorder.written == 3
    records = read_jsonl(path)
    assert [r["call_id"] for r in records] == ["e1", "e2", "e3"]
    assert records[1]["arguments"] == {"folder": "bad\ud800"}


def test_a_calls_working_directory_is_recorded_and_replayed(tmp_path: Path) -> None:
    """`cd ..` is harmless from the workspace and a red line from /etc: the record keeps where it ran."""
    registry = bfcl_registry()
    path = tmp_path / "audit.jsonl"
    recorder = AuditRecorder(path)
    registry.on_result(recorder, name="audit")
    from_etc = registry.call_sync("cd", {"folder": "passwd"}, call_id="w-1", cwd="/etc")
    from_workspace = registry.call_sync("cd", {"folder": "passwd"}, call_id="w-2")
    recorder.close()
    assert from_etc.source is not None
    assert (from_etc.outcome, from_etc.source.name) == (Outcome.DENIED, "fs-no-system-paths")
    assert from_etc.cwd == "/etc" and from_workspace.cwd == "/workspace"  # the pack's cwd: calls start there
    records = read_jsonl(path)
    assert [r.get("cwd") for r in records] == ["/etc", "/workspace"]
    _code, _summary, replay = dry_run(path, tmp_path / "replay.jsonl")
    assert [(r["decision"], r["rule"]) for r in replay] == [("deny", "fs-no-system-paths"), ("allow", None)]
