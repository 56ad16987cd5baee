"""Dry-run of recorded calls (SPEC.md section 6, issue 5).

One record per input line, in order, nothing dropped; a summary with counts, hits and rules
never hit; `--against` reports exactly the calls whose decision changed; the process pool and
the Dask path give the same records as one process.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from policyengine import load_packs
from policyengine.cli.main import main
from policyengine.dryrun import engine as dryrun

ROOT = Path(__file__).resolve().parents[1]
BFCL_PACK = ROOT / "policies" / "bfcl"
BFCL_CALLS = ROOT / "examples" / "bfcl-calls.jsonl"
BFCL_TOOLS = ROOT / "examples" / "bfcl-tools.jsonl"
CARD = "4012888888881881"


def run_cli(*argv: str | os.PathLike[str]) -> tuple[int, str, str]:
    """The CLI in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def dry_run(
    calls: Path, output: Path, *extra: str | os.PathLike[str], pack: Path = BFCL_PACK, workers: int = 1
) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    """Dry-run `calls` with --format json: (exit code, summary, records)."""
    code, out, err = run_cli(
        "dry-run", "--pack", pack, calls, "--output", output, "--format", "json", "--workers", str(workers), *extra
    )
    assert code in (0, 1), (code, err)
    return code, json.loads(out), read_records(output)


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def input_calls(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def pack_rule_ids(pack: Path) -> list[str]:
    return [r.id for p in load_packs([str(pack)]) for r in p.rules]


def pack_rule_stages(pack: Path) -> dict[str, str]:
    return {r.id: r.stage.value for p in load_packs([str(pack)]) for r in p.rules}


# The two BFCL calls the pack's catalog (policies/bfcl/tools.jsonl) refuses, and where.
CATALOG_INVALID = [
    ("multi_turn_base_121:3:1", "lookup"),  # make_transaction: no such tool in the catalog
    ("multi_turn_base_173:3:0", "validation"),  # close_ticket: ticket_id is not an integer
]


def untyped_pack(tmp_path: Path) -> Path:
    """A copy of policies/bfcl without its `catalog:`: calls are evaluated without argument validation."""
    pack = tmp_path / "bfcl-untyped"
    shutil.copytree(BFCL_PACK, pack)
    manifest = pack / "pack.yaml"
    text = manifest.read_text("utf-8")
    assert text.count("catalog: tools.jsonl\n") == 1
    manifest.write_text(text.replace("catalog: tools.jsonl\n", ""), "utf-8")
    return pack


BfclRun = tuple[dict[str, Any], list[dict[str, Any]], Path]  # (summary, records, output file)


@pytest.fixture(scope="module")
def bfcl_run(tmp_path_factory: pytest.TempPathFactory) -> BfclRun:
    """The BFCL corpus against policies/bfcl, on one process: (summary, records, output file)."""
    output = tmp_path_factory.mktemp("bfcl") / "records.jsonl"
    code, summary, records = dry_run(BFCL_CALLS, output)
    assert code == 0
    return summary, records, output


# -- the BFCL corpus ----------------------------------------------------------------------


def test_bfcl_writes_one_aligned_record_per_line(bfcl_run: BfclRun) -> None:
    _summary, records, _output = bfcl_run
    calls = input_calls(BFCL_CALLS)
    assert len(calls) == 1161
    assert len(records) == len(calls)
    for number, (call, record) in enumerate(zip(calls, records, strict=True), start=1):
        assert record["line"] == number
        assert record["call_id"] == call["call_id"]
        assert record["name"] == call["name"]
        # The pack's catalog applies without --tools: the calls it refuses are invalid.
        expected = ("invalid",) if (call["call_id"], record["stage"]) in CATALOG_INVALID else ("allow", "deny", "ask")
        assert record["decision"] in expected
        for key in ("stage", "rule", "reason"):
            assert key in record


def test_bfcl_records_match_the_pack_policy_tests(bfcl_run: BfclRun) -> None:
    """A few calls the pack's own policy tests pin, found by call_id in the dry-run output."""
    _summary, records, _output = bfcl_run
    by_id = {r["call_id"]: r for r in records}
    expected = {
        "multi_turn_base_141:2:1": ("deny", "deny-orders-over-limit"),
        "multi_turn_base_116:4:0": ("deny", "deny-transfers-over-limit"),
        "multi_turn_base_102:1:0": ("ask", "ask-large-orders"),
        "multi_turn_base_117:5:0": ("ask", "ask-transfers"),
        "multi_turn_base_38:0:1": ("ask", "ask-before-delete"),
        "multi_turn_base_106:0:1": ("allow", None),
        "multi_turn_base_0:0:0": ("allow", None),
    }
    for call_id, (decision, rule) in expected.items():
        record = by_id[call_id]
        assert (record["decision"], record["rule"]) == (decision, rule), call_id
    assert by_id["multi_turn_base_0:0:0"]["default"] is True
    assert by_id["multi_turn_base_141:2:1"]["pack"] == "bfcl"
    assert "100 GOOG at 2840.34" in by_id["multi_turn_base_141:2:1"]["reason"]


def test_bfcl_summary_counts_denials_asks_hits_and_rules_never_hit(bfcl_run: BfclRun) -> None:
    summary, records, _output = bfcl_run
    decisions = Counter(r["decision"] for r in records)
    assert summary["calls"] == len(records)
    assert summary["decisions"] == dict(decisions)
    assert summary["decisions"]["deny"] > 0
    assert summary["decisions"]["ask"] > 0
    rule_ids = pack_rule_ids(BFCL_PACK)
    # An invalid call names the registry, not a rule: it is no rule's hit.
    assert {r["rule"] for r in records if r["decision"] == "invalid"} == {"registry"}
    hits = Counter(r["rule"] for r in records if r["rule"] in rule_ids)
    for record in records:
        hits.update((record.get("rewrites") or []) + (record.get("execute") or []))
    assert summary["hits"] == dict(hits)
    stages = pack_rule_stages(BFCL_PACK)
    # No recorded call carries a result: post-execute rules were not tried, which is not "never hit".
    assert summary["post"] == {}
    post = [r for r in rule_ids if stages[r] == "post-execute"]
    assert post and summary["not_exercised"] == post
    assert summary["never_hit"] == [r for r in rule_ids if r not in hits and r not in post]
    assert summary["hits_by_stage"] == {
        stage: {r: n for r, n in summary["hits"].items() if stages[r] == stage}
        for stage in ("pre-execute", "guard", "execute", "post-execute")
    }
    assert summary["hits_by_stage"]["execute"] == {"trading-deadline": hits["trading-deadline"]}
    assert "no-credentials-in-posts" in summary["never_hit"]
    assert "fs-no-system-paths" in summary["never_hit"]
    for rule in ("deny-orders-over-limit", "ask-large-orders", "ask-transfers", "ask-before-delete"):
        assert rule not in summary["never_hit"]
    assert summary["changed"] == {} and summary["changed_calls"] == 0
    top = dict((reason, n) for reason, n in summary["top_reasons"])
    assert top["Transfer 5000?"] == sum(1 for r in records if r["reason"] == "Transfer 5000?") == 2


def test_bfcl_table_summary_on_screen(tmp_path: Path) -> None:
    code, out, err = run_cli("--color", "never", "dry-run", "--pack", BFCL_PACK, BFCL_CALLS, "--workers", "1")
    assert code == 0, err
    assert out.startswith("1,161 calls")
    # One hit table per stage: pre-execute with guards, execute; post-execute saw no recorded result.
    blocks = out.split("\n\n")
    pre = next(b for b in blocks if b.startswith("pre-execute and guard rules  stage"))
    assert "ask-before-delete" in pre and "trading-deadline" not in pre
    execute = next(b for b in blocks if b.startswith("execute rules"))
    assert "trading-deadline" in execute and "ask-before-delete" not in execute
    never = out.split("pre-execute and guard rules never hit: ", 1)[1].splitlines()[0].split(", ")
    assert "no-credentials-in-posts" in never and "ask-transfers" not in never
    assert "mask-card-numbers" not in never
    untried = out.split("post-execute rules not exercised: no recorded results", 1)[1].splitlines()[0]
    assert "mask-card-numbers" in untried
    assert "post-execute rules never hit" not in out
    for word in ("deny", "ask", "allow", "invalid", "Transfer 5000?"):
        assert word in out


def test_table_lists_post_execute_rules_never_hit_once_results_were_reviewed(tmp_path: Path) -> None:
    calls = tmp_path / "big.jsonl"
    calls.write_text(json.dumps({"name": "cat", "arguments": {"file_name": "a"}, "result": {"value": "y" * 20_001}}))
    code, out, err = run_cli("--color", "never", "dry-run", "--pack", BFCL_PACK, calls)
    assert code == 0, err
    post = next(b for b in out.split("\n\n") if b.startswith("post-execute rules  "))
    assert "block-oversized-results  1" in post
    never = out.split("post-execute rules never hit: ", 1)[1].splitlines()[0].split(", ")
    assert never == ["mask-card-numbers", "redact-card-verification"]
    assert "not exercised" not in out


# -- a corrupted input loses nothing ------------------------------------------------------


def good(name: str, call_id: str, **arguments: Any) -> bytes:
    return json.dumps({"call_id": call_id, "name": name, "arguments": arguments}).encode()


CORRUPT_LINES: list[tuple[bytes, str | None]] = [
    # (raw line, substring of the error reason; None: a good line)
    (good("rm", "g1", file_name="notes.txt"), None),
    (b'{"call_id": "t1", "name": "cd", "argu', "invalid JSON"),
    (b'{"call_id": "u1", "name": "cd", "arguments": {"folder": "caf\xe9"}}', "invalid UTF-8"),
    (good("place_order", "g2", order_type="Buy", symbol="GOOG", price=2840.34, amount=100), None),
    (b'[{"name": "cd", "arguments": {}}]', "got list"),
    (b'"just a string"', "got str"),
    (b'{"call_id": "m1", "arguments": {"folder": "x"}}', "name"),
    (b'{"call_id": "n1", "name": 42, "arguments": {}}', "name"),
    (b'{"call_id": "a1", "name": "cd", "arguments": ["document"]}', "`arguments` must be an object"),
    (b"", "empty line"),
    (good("fund_account", "g3", amount=5000), None),
    (b'{"call_id": "big", "name": "cd", "arguments": {"folder": "' + b"x" * (10 * 1024 * 1024) + b'"}}', "limit"),
    (b"[" * 100_000, "nested too deeply"),
    (good("cd", "g4", folder="document"), None),
]
GOOD_DECISIONS = {
    "g1": ("ask", "ask-before-delete"),
    "g2": ("deny", "deny-orders-over-limit"),
    "g3": ("ask", "ask-transfers"),
    "g4": ("allow", None),
}


def test_corrupted_input_loses_nothing(tmp_path: Path) -> None:
    calls = tmp_path / "corrupt.jsonl"
    # Windows line ends on one line and no newline after the last: both still count as lines.
    body = b"\n".join(raw for raw, _ in CORRUPT_LINES[:-1]) + b"\r\n" + CORRUPT_LINES[-1][0]
    calls.write_bytes(body)
    output = tmp_path / "out.jsonl"
    code, summary, records = dry_run(calls, output, "--fail-on", "error")
    assert code == 1  # error records are findings for --fail-on error
    assert len(records) == len(CORRUPT_LINES)
    assert [r["line"] for r in records] == list(range(1, len(CORRUPT_LINES) + 1))
    errors = 0
    for record, (_raw, problem) in zip(records, CORRUPT_LINES, strict=True):
        if problem is None:
            decision, rule = GOOD_DECISIONS[record["call_id"]]
            assert (record["decision"], record["rule"]) == (decision, rule), record
        else:
            errors += 1
            assert record["decision"] == "error", record
            assert record["stage"] == "input"
            assert record["call_id"] is None
            assert problem in record["reason"], (problem, record["reason"])
    assert summary["decisions"]["error"] == errors == 10
    assert summary["calls"] == len(CORRUPT_LINES)
    # The output file stays small: a refused line is not copied into its error record.
    assert output.stat().st_size < 10_000


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b'{"call_id": "t1", "name": "cd", "argu', "invalid JSON: Unterminated string starting at"),
        (b'{"name": "cd"}\xff', "invalid UTF-8 at byte 14"),
        (b"  \t ", "empty line"),
        (b'{"name": ""}', "missing or non-string `name`"),
        (b'{"name": "cd", "arguments": null}', "`arguments` must be an object, got NoneType"),
        (b"x" * 2001, "line is 2,001 bytes, over the 2,000-byte limit; not parsed"),
    ],
)
def test_parse_line_names_the_problem(raw: bytes, problem: str) -> None:
    call, reason = dryrun.parse_line(raw, limit=2000)
    assert call is None
    assert reason is not None
    assert reason.startswith(problem)


def test_read_lines_counts_every_line_including_the_last_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_bytes(b"a\r\n\nb\nc")
    assert dryrun.read_lines(str(path)) == [(1, b"a"), (2, b""), (3, b"b"), (4, b"c")]


@pytest.mark.parametrize(
    ("raw", "what"),
    [
        # A JSON integer longer than Python's int-string limit: json.loads raises ValueError.
        (b'{"call_id": "d1", "name": "cd", "arguments": {"n": ' + b"1" * 5000 + b"}}", "digits"),
        # A lone surrogate escape is valid JSON; the record (reason, name) must still be writable.
        (b'{"call_id": "s1", "name": "rm", "arguments": {"file_name": "\\ud800"}}', None),
        (b'{"call_id": "s2", "name": "\\udc80", "arguments": {}}', None),
    ],
    ids=["5000-digit-integer", "lone-surrogate-in-argument", "lone-surrogate-in-name"],
)
def test_odd_but_legal_json_loses_nothing(tmp_path: Path, raw: bytes, what: str | None) -> None:
    calls = tmp_path / "odd.jsonl"
    calls.write_bytes(good("cd", "before", folder="a") + b"\n" + raw + b"\n" + good("cd", "after", folder="b") + b"\n")
    output = tmp_path / "out.jsonl"
    try:
        code, _out, err = run_cli("dry-run", "--pack", BFCL_PACK, calls, "--output", output, "--workers", "1")
    except Exception as error:  # the verb must never crash on input
        pytest.fail(f"dry-run crashed on one odd line: {type(error).__name__}: {error}")
    assert code == 0, err
    records = read_records(output)
    assert [r["line"] for r in records] == [1, 2, 3]
    assert [records[0]["call_id"], records[2]["call_id"]] == ["before", "after"]
    assert records[2]["decision"] == "allow"
    if what is not None:
        assert records[1]["decision"] == "error"
        assert what in records[1]["reason"]


# -- the process pool and the Dask path ---------------------------------------------------

_WORK = dryrun._work
_PID_LOG = "PE_TEST_DRYRUN_PID_LOG"


def _logged_work(chunk: Sequence[tuple[int, bytes]]) -> dryrun.Batch:
    """dryrun._work, noting which process evaluated each chunk (inherited by forked workers)."""
    with open(os.environ[_PID_LOG], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {chunk[0][0]} {len(chunk)}\n")
    return _WORK(chunk)


def test_process_pool_output_is_byte_identical_to_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = tmp_path / "bfcl-x3.jsonl"
    calls.write_bytes(BFCL_CALLS.read_bytes() * 3)
    assert dryrun.CHUNK < 3 * 1161
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    pid_log = tmp_path / "pids.txt"
    monkeypatch.setenv(_PID_LOG, str(pid_log))
    monkeypatch.setattr(dryrun, "_work", _logged_work)
    code1, summary1, _ = dry_run(calls, one, workers=1)
    assert not pid_log.exists()  # one process: no pool work
    code2, summary2, _ = dry_run(calls, two, workers=2)
    assert code1 == code2 == 0
    assert one.read_bytes() == two.read_bytes()
    assert summary1 == summary2
    # The pool really ran: chunks of 2,000 lines, in worker processes.
    chunks = sorted((tuple(map(int, line.split())) for line in pid_log.read_text().splitlines()), key=lambda c: c[1])
    assert [(start, size) for _pid, start, size in chunks] == [(1, 2000), (2001, 1483)]
    assert all(pid != os.getpid() for pid, _start, _size in chunks)
    records = read_records(two)
    calls_in = input_calls(calls)
    assert [r["line"] for r in records] == list(range(1, 3484))
    assert [r["call_id"] for r in records] == [c["call_id"] for c in calls_in]


def test_dask_local_cluster_yields_the_same_records_as_the_local_path(tmp_path: Path) -> None:
    """Slow-ish (starts a two-process LocalCluster, about 2 s)."""
    pytest.importorskip("distributed")
    calls = tmp_path / "bfcl-x2.jsonl"
    calls.write_bytes(BFCL_CALLS.read_bytes() * 2)  # two chunks, gathered in order
    local, dask = tmp_path / "local.jsonl", tmp_path / "dask.jsonl"
    _, local_summary, local_records = dry_run(calls, local, workers=1)
    code, dask_summary, dask_records = dry_run(calls, dask, "--scheduler", "local")
    assert code == 0
    assert len(dask_records) == 2 * 1161
    assert dask_records == local_records
    assert dask.read_bytes() == local.read_bytes()
    assert dask_summary == local_summary


# -- --against ----------------------------------------------------------------------------


ASK_TRANSFERS_WHEN = 'when: "amounts(@)[?@ > `2000`] | length(@) > `0`"'
# One edit of the ask-transfers rule each: (replacement, (decision before, decision after), amount test).
EDITS: dict[str, tuple[str, tuple[str, str], Callable[[Any], bool]]] = {
    # The threshold rises to 5,000: transfers of 2,000 < amount <= 5,000 are no longer asked.
    "threshold": (
        'when: "amounts(@)[?@ > `5000`] | length(@) > `0`"',
        ("ask", "allow"),
        lambda amount: 2000 < amount <= 5000,
    ),
    # Same rule, same condition, a stricter decision: only the decision changes, not the rule.
    "decision": (ASK_TRANSFERS_WHEN + "\n    decision: deny", ("ask", "deny"), lambda amount: 2000 < amount < 10000),
}


def edited_pack(tmp_path: Path, edit: str) -> Path:
    """A copy of policies/bfcl with one edit of its ask-transfers rule."""
    pack = tmp_path / f"bfcl-{edit}"
    shutil.copytree(BFCL_PACK, pack)
    gate = pack / "gate.yaml"
    text = gate.read_text("utf-8")
    old = ASK_TRANSFERS_WHEN + ("\n    decision: ask" if edit == "decision" else "")
    assert text.count(old) == 1
    gate.write_text(text.replace(old, EDITS[edit][0]), "utf-8")
    return pack


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("direction", ["candidate-against-current", "current-against-candidate"])
def test_against_reports_exactly_the_calls_whose_decision_changed(
    tmp_path: Path, bfcl_run: BfclRun, direction: str, edit: str
) -> None:
    _, current, _ = bfcl_run
    candidate_pack = edited_pack(tmp_path, edit)
    _, _, candidate = dry_run(BFCL_CALLS, tmp_path / "edited.jsonl", pack=candidate_pack)
    # Independently: the lines whose (decision, rule) differ between the two separate runs.
    expected = [
        a["line"]
        for a, b in zip(current, candidate, strict=True)
        if (a["decision"], a["rule"]) != (b["decision"], b["rule"])
    ]
    assert expected, "the edit must change something"
    _replacement, transition, in_range = EDITS[edit]
    calls = input_calls(BFCL_CALLS)
    for line in expected:
        assert in_range(calls[line - 1]["arguments"]["amount"])
        assert (current[line - 1]["decision"], candidate[line - 1]["decision"]) == transition
    assert any(calls[line - 1]["arguments"]["amount"] == 5000 for line in expected)

    main_pack, against = (
        (BFCL_PACK, candidate_pack) if direction == "candidate-against-current" else (candidate_pack, BFCL_PACK)
    )
    output = tmp_path / "against.jsonl"
    code, summary, records = dry_run(BFCL_CALLS, output, "--against", against, "--fail-on", "changed", pack=main_pack)
    assert code == 1
    assert summary["changed"] == {"ask-transfers": expected}
    assert summary["changed_calls"] == len(expected)
    assert [r["line"] for r in records if r["changed"]] == expected
    for record in records:
        assert record["against"]["decision"] in ("allow", "ask", "deny", "invalid")
    changed = records[expected[0] - 1]
    assert {changed["decision"], changed["against"]["decision"]} == set(transition)


def test_against_an_identical_pack_changes_nothing(tmp_path: Path) -> None:
    copy = tmp_path / "bfcl-copy"
    shutil.copytree(BFCL_PACK, copy)
    code, summary, records = dry_run(BFCL_CALLS, tmp_path / "out.jsonl", "--against", copy, "--fail-on", "changed")
    assert code == 0
    assert summary["changed"] == {} and summary["changed_calls"] == 0
    assert not any(r["changed"] for r in records)


# -- --fail-on ----------------------------------------------------------------------------


@pytest.fixture
def allowed_calls(tmp_path: Path) -> Path:
    path = tmp_path / "allowed.jsonl"
    path.write_bytes(good("cd", "c1", folder="document") + b"\n" + good("ls", "c2") + b"\n")
    return path


def test_fail_on_deny_exits_1() -> None:
    code, out, _err = run_cli("dry-run", "--pack", BFCL_PACK, BFCL_CALLS, "--fail-on", "deny", "--workers", "1")
    assert code == 1
    assert "deny" in out


def test_fail_on_says_why_on_the_err_stream_given_to_main(capsys: pytest.CaptureFixture[str]) -> None:
    """main(..., err=...) owns the error stream: the failing line goes there, not to sys.stderr."""
    code, _out, err = run_cli("dry-run", "--pack", BFCL_PACK, BFCL_CALLS, "--fail-on", "deny,ask", "--workers", "1")
    assert code == 1
    assert "failing: found ask, deny" in err
    assert "failing" not in capsys.readouterr().err


def test_fail_on_with_no_findings_exits_0(allowed_calls: Path) -> None:
    code, _out, err = run_cli(
        "dry-run", "--pack", BFCL_PACK, allowed_calls, "--fail-on", "deny,ask,invalid,error", "--workers", "1"
    )
    assert code == 0, err


def test_without_fail_on_findings_exit_0() -> None:
    code, _out, _err = run_cli("dry-run", "--pack", BFCL_PACK, BFCL_CALLS, "--workers", "1")
    assert code == 0


def test_fail_on_changed_without_against_is_a_usage_error(allowed_calls: Path) -> None:
    code, _out, err = run_cli("dry-run", "--pack", BFCL_PACK, allowed_calls, "--fail-on", "changed")
    assert code == 2
    assert "--against" in err


def test_fail_on_unknown_finding_is_a_usage_error(allowed_calls: Path) -> None:
    code, _out, err = run_cli("dry-run", "--pack", BFCL_PACK, allowed_calls, "--fail-on", "denied")
    assert code == 2
    assert "denied" in err


# -- --tools and recorded results ---------------------------------------------------------


def test_tools_marks_the_calls_that_disagree_with_the_catalog_invalid(tmp_path: Path, bfcl_run: BfclRun) -> None:
    untyped = untyped_pack(tmp_path)
    _, plain_summary, plain = dry_run(BFCL_CALLS, tmp_path / "plain.jsonl", pack=untyped)
    assert "invalid" not in plain_summary["decisions"]
    code, summary, typed = dry_run(BFCL_CALLS, tmp_path / "typed.jsonl", "--tools", BFCL_TOOLS, pack=untyped)
    assert code == 0
    invalid = [r for r in typed if r["decision"] == "invalid"]
    assert [(r["call_id"], r["stage"]) for r in invalid] == CATALOG_INVALID
    assert "unknown tool 'make_transaction'" in invalid[0]["reason"]
    assert "ticket_id" in invalid[1]["reason"]
    assert summary["decisions"]["invalid"] == 2
    # Every other call keeps its decision.
    others = [(a["decision"], a["rule"]) for a, b in zip(plain, typed, strict=True) if b["decision"] != "invalid"]
    assert others == [(b["decision"], b["rule"]) for b in typed if b["decision"] != "invalid"]
    # The pack's own `catalog:` (a copy of the same file) gives the same records without --tools.
    _, _, by_pack = bfcl_run
    assert read_records(by_pack) == typed


def test_tools_overrides_the_pack_catalog(tmp_path: Path) -> None:
    """--tools replaces the pack's catalog: a tool the pack's catalog has and the given one lacks is unknown."""
    catalog = tmp_path / "two-tools.jsonl"
    lines = [line for line in BFCL_TOOLS.read_text("utf-8").splitlines() if json.loads(line)["name"] in ("cd", "ls")]
    catalog.write_text("\n".join(lines) + "\n", "utf-8")
    calls = tmp_path / "calls.jsonl"
    calls.write_bytes(good("cd", "c1", folder="document") + b"\n" + good("fund_account", "c2", amount=5000) + b"\n")
    _, _, records = dry_run(calls, tmp_path / "out.jsonl", "--tools", catalog)
    assert [(r["decision"], r["stage"]) for r in records] == [("allow", "pre-execute"), ("invalid", "lookup")]


def test_recorded_result_is_evaluated_by_post_execute(tmp_path: Path) -> None:
    value = {
        "credit_card_list": {
            "card_6789": {"card_number": CARD, "expiration_date": "2028-12-01", "card_verification_value": 465}
        }
    }
    lines = [
        {"call_id": "r1", "name": "get_all_credit_cards", "arguments": {}, "result": {"outcome": "ok", "value": value}},
        {"call_id": "r2", "name": "get_all_credit_cards", "arguments": {}},  # no result: pre-execute only
        {"call_id": "r3", "name": "cd", "arguments": {"folder": "a"}, "result": {"outcome": "ok", "value": {"x": 1}}},
        {"call_id": "r4", "name": "cat", "arguments": {"file_name": "a"}, "result": {"value": "y" * 20_001}},
    ]
    calls = tmp_path / "results.jsonl"
    calls.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    output = tmp_path / "out.jsonl"
    code, summary, records = dry_run(calls, output)
    assert code == 0
    masked, plain, accepted, blocked = records
    assert masked["decision"] == "allow"
    assert masked["post"] == "rewritten"
    assert masked["rewrites"] == ["mask-card-numbers", "redact-card-verification"]
    card = masked["value"]["credit_card_list"]["card_6789"]
    assert card["card_number"] == "************1881"
    assert card["card_verification_value"] is None
    assert "post" not in plain and "value" not in plain
    assert accepted["post"] == "accepted" and accepted["rewrites"] == [] and "value" not in accepted
    assert blocked["post"] == "blocked"
    assert blocked["decision"] == "allow"
    assert "too large" in blocked["feedback"]
    assert CARD not in output.read_text("utf-8")
    assert summary["post"] == {"rewritten": 1, "accepted": 1, "blocked": 1}
    assert summary["hits"]["mask-card-numbers"] == 1
    assert "mask-card-numbers" not in summary["never_hit"]


def test_post_execute_only_runs_on_a_recorded_result_the_tool_produced(tmp_path: Path) -> None:
    card = {"credit_card_list": {"card_number": "4111111111111111"}}
    lines = [
        {"call_id": "ran", "name": "get_all_credit_cards", "arguments": {}, "result": {"outcome": "ok", "value": card}},
        {
            "call_id": "denied",
            "name": "get_all_credit_cards",
            "arguments": {},
            "result": {"outcome": "denied", "value": None},
        },
    ]
    calls = tmp_path / "calls.jsonl"
    calls.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out.jsonl"
    code, _out, _err = run_cli("dry-run", "--pack", BFCL_PACK, calls, "--output", out, "--workers", "1")
    assert code == 0
    ran, denied = (json.loads(line) for line in out.read_text().splitlines())
    assert ran["post"] == "rewritten" and ran["value"]["credit_card_list"]["card_number"].endswith("1111")
    assert "post" not in denied


def test_execute_rules_that_would_wrap_the_body_are_reported_and_counted(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"call_id": "t", "name": "get_stock_info", "arguments": {"symbol": "AAPL"}}) + "\n")
    out = tmp_path / "out.jsonl"
    code, stdout, _err = run_cli("dry-run", "--pack", BFCL_PACK, calls, "--output", out, "--format", "json")
    assert code == 0
    (record,) = (json.loads(line) for line in out.read_text().splitlines())
    assert record["execute"] == ["trading-deadline"]
    assert json.loads(stdout)["hits"] == {"trading-deadline": 1}
