"""Every sequence of tests/data/session_sequences.yaml, through the Python registry and through `dry-run`.

A sequence is one agent session: its calls decided in order, each with the decision (and the
rule) it must get and the labels the session holds after it. The registry runs real tools whose
bodies return the step's result; the dry-run replays records that carry the session id and the
result. Then the properties a replay must keep: replaying a session twice decides it the same,
interleaving sessions changes none of them, a session is never split across work units (the
process pool, Dask), and a record's `time` is the clock its windows are read at.
"""

from __future__ import annotations

import asyncio
import io
import json
import random
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine import ApprovalAnswer, ApprovalRequest, PolicyLayers, Registry
from policyengine.audit import AuditRecorder
from policyengine.cli.main import main
from policyengine.dryrun import engine as dryrun
from policyengine.runtime.audit import policy_decision
from policyengine.tools.definition import define_tool

ROOT = Path(__file__).resolve().parents[1]
SEQUENCES: list[dict[str, Any]] = yaml.safe_load((ROOT / "tests" / "data" / "session_sequences.yaml").read_text())[
    "sequences"
]
NAMES = [s["name"] for s in SEQUENCES]
PACKS = sorted({s["pack"] for s in SEQUENCES})


def pack_dir(pack: str) -> Path:
    return ROOT / "policies" / pack


# -- the Python registry --------------------------------------------------------------------


class ApproveAll:
    """A person who allows every asked call, so it runs and its result is reviewed as live."""

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer.ALLOWED_ONCE


def registry_for(sequence: Mapping[str, Any], returned: dict[str, Any]) -> Registry:
    """The sequence's pack installed over tools that take any arguments and return `returned["value"]`."""
    registry = Registry(approval=ApproveAll())
    for name in dict.fromkeys(step["call"]["name"] for step in sequence["steps"]):
        registry.register(
            define_tool(
                name=name,
                description=f"{name}, returning what the step recorded",
                input_schema={"type": "object", "additionalProperties": True},
                execute=lambda _arguments: returned["value"],
            )
        )
    PolicyLayers.install(registry, [str(pack_dir(sequence["pack"]))])
    return registry


def check_step(where: str, expect: Mapping[str, Any], decision: str, rule: str | None, labels: Iterable[str]) -> None:
    assert decision == expect["decision"], f"{where}: decided {decision} by {rule}"
    if "rule" in expect:
        assert rule == expect["rule"], where
    if "labels" in expect:
        assert sorted(labels) == sorted(expect["labels"]), where


@pytest.mark.parametrize("sequence", SEQUENCES, ids=NAMES)
def test_every_sequence_decides_as_written_through_the_registry(sequence: dict[str, Any]) -> None:
    returned: dict[str, Any] = {"value": None}
    registry = registry_for(sequence, returned)
    session_id = "registry-session"

    async def replay() -> None:
        for i, step in enumerate(sequence["steps"]):
            returned["value"] = step.get("result", {}).get("value")
            call = step["call"]
            result = await registry.call(
                call["name"], call["arguments"], cwd=call.get("cwd"), call_id=f"c{i}", session_id=session_id
            )
            decision, rule = policy_decision(result)
            store = registry.sessions
            assert store is not None
            check_step(f"step {i + 1}", step["expect"], decision, rule, store.load(session_id).labels)

    asyncio.run(replay())


# -- dry-run --------------------------------------------------------------------------------


def records(sequence: Mapping[str, Any], session_id: str, times: Sequence[float] | None = None) -> list[dict[str, Any]]:
    """The sequence as recorded calls of one session (with their results)."""
    out = []
    for i, step in enumerate(sequence["steps"]):
        call = step["call"]
        record: dict[str, Any] = {"call_id": f"{session_id}:{i}", "session_id": session_id, "name": call["name"]}
        record["arguments"] = call["arguments"]
        if "cwd" in call:
            record["cwd"] = call["cwd"]
        if "result" in step:
            record["result"] = step["result"]
        if times is not None:
            record["time"] = times[i]
        out.append(record)
    return out


def lines_of(calls: Sequence[Mapping[str, Any]]) -> list[tuple[int, bytes]]:
    return [(i + 1, json.dumps(call).encode()) for i, call in enumerate(calls)]


def dry_run_cli(pack: str, calls: Sequence[Mapping[str, Any]], tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    """`policyengine dry-run` over the calls: the records it writes."""
    source, output = tmp_path / "calls.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(call) + "\n" for call in calls), "utf-8")
    out, err = io.StringIO(), io.StringIO()
    argv = ["dry-run", "--pack", str(pack_dir(pack)), str(source), "--output", str(output), "--format", "json"]
    code = main([*argv, *extra], out=out, err=err)
    assert code == 0, err.getvalue()
    return [json.loads(line) for line in output.read_text("utf-8").splitlines()]


_ENGINES: dict[str, dryrun.Engine] = {}


def engine_for(pack: str) -> dryrun.Engine:
    """One dry-run engine per pack (its stores are emptied after every unit)."""
    if pack not in _ENGINES:
        _ENGINES[pack] = dryrun.Engine(dryrun.Setup((str(pack_dir(pack)),), (), None))
    return _ENGINES[pack]


def replay(pack: str, calls: Sequence[Mapping[str, Any]], workers: int = 1) -> list[dict[str, Any]]:
    """The dry-run engine over the calls (in this process): its records, in input order."""
    text = "".join(batch.text for batch in dryrun.evaluate_all(engine_for(pack), lines_of(calls), workers))
    return [json.loads(line) for line in text.splitlines()]


def decisions(found: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, str | None, tuple[str, ...]]]:
    """(decision, rule, labels held) by call id."""
    return {r["call_id"]: (r["decision"], r["rule"], tuple(r["labels"])) for r in found}


def test_every_sequence_decides_as_written_through_dry_run(tmp_path: Path) -> None:
    for pack in PACKS:
        mine = [(n, s) for n, s in enumerate(SEQUENCES) if s["pack"] == pack]
        calls = [call for n, s in mine for call in records(s, f"s{n}")]
        found = iter(dry_run_cli(pack, calls, tmp_path))
        for n, sequence in mine:
            for i, step in enumerate(sequence["steps"]):
                record = next(found)
                assert (record["session_id"], record["call_id"]) == (f"s{n}", f"s{n}:{i}")
                where = f"{sequence['name']}, step {i + 1}"
                check_step(where, step["expect"], record["decision"], record["rule"], record["labels"])
        assert next(found, None) is None


def test_a_session_replayed_twice_decides_the_same(tmp_path: Path) -> None:
    for pack in PACKS:
        mine = [(n, s) for n, s in enumerate(SEQUENCES) if s["pack"] == pack]
        calls = [call for n, s in mine for call in records(s, f"s{n}")]
        first, second = dry_run_cli(pack, calls, tmp_path), dry_run_cli(pack, calls, tmp_path)
        assert first == second  # a run starts from fresh sessions: nothing of the last run is read
        # The same session again under another id, in the same run: decided the same.
        again = replay(pack, calls + [call | {"session_id": "again-" + call["session_id"]} for call in calls])
        assert [(r["decision"], r["rule"], r["labels"]) for r in again[: len(calls)]] == [
            (r["decision"], r["rule"], r["labels"]) for r in again[len(calls) :]
        ]


def interleaved(sessions: Sequence[Sequence[dict[str, Any]]], seed: int) -> list[dict[str, Any]]:
    """The sessions' records merged in a random order that keeps each session's own order."""
    rng = random.Random(seed)
    queues = [list(s) for s in sessions]
    out = []
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        out.append(queue.pop(0))
    return out


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), pack=st.sampled_from(PACKS))
def test_interleaving_sessions_changes_no_decision(seed: int, pack: str) -> None:
    sessions = [records(s, f"s{n}") for n, s in enumerate(SEQUENCES) if s["pack"] == pack]
    alone = decisions(r for session in sessions for r in replay(pack, session))
    assert decisions(replay(pack, interleaved(sessions, seed))) == alone


def test_the_record_time_is_the_clock_windows_are_read_at() -> None:
    rate = next(s for s in SEQUENCES if "deny-payment-rate" in s["rules"])
    steps = len(rate["steps"])
    # 21 payments within a minute: the 21st is denied; spaced over more than an hour, none is.
    quick = replay("bfcl", records(rate, "quick", [1_000_000.0 + i for i in range(steps)]))
    slow = replay("bfcl", records(rate, "slow", [1_000_000.0 + 200.0 * i for i in range(steps)]))
    assert [r["decision"] for r in quick] == [step["expect"]["decision"] for step in rate["steps"]]
    assert [r["decision"] for r in slow] == ["allow"] * steps


def test_records_without_a_session_id_decide_alone() -> None:
    credential = SEQUENCES[NAMES.index("baseline: a credential read, then a network tool, is denied")]
    calls = [{k: v for k, v in call.items() if k != "session_id"} for call in records(credential, "x")]
    found = replay("baseline", calls)
    assert [r["decision"] for r in found] == ["allow", "allow"]  # no session: the read labels nothing
    assert all("session_id" not in r and "labels" not in r for r in found)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("session_id", 7, "`session_id` must be a non-empty string"),
        ("session_id", "", "`session_id` must be a non-empty string"),
        ("time", "yesterday", "`time` must be seconds since the epoch"),
        ("time", True, "`time` must be seconds since the epoch"),
    ],
)
def test_a_malformed_session_id_or_time_is_an_error_record(field: str, value: Any, message: str) -> None:
    found = replay("bfcl", [{"call_id": "c", "name": "fund_account", "arguments": {"amount": 1}, field: value}])
    assert found[0]["decision"] == "error" and message in found[0]["reason"]


def test_label_rules_are_counted_as_hits_in_the_summary(tmp_path: Path) -> None:
    calls = [call for n, s in enumerate(SEQUENCES) if s["pack"] == "claude-code" for call in records(s, f"s{n}")]
    source = tmp_path / "calls.jsonl"
    source.write_text("".join(json.dumps(call) + "\n" for call in calls), "utf-8")
    out = io.StringIO()
    assert main(["dry-run", "--pack", str(pack_dir("claude-code")), str(source), "--format", "json"], out=out) == 0
    summary = json.loads(out.getvalue())
    labelling = {"label-credential-results": 2, "label-private-reads": 1, "label-untrusted-content": 1}
    assert {rule: summary["hits"].get(rule) for rule in labelling} == labelling
    assert not set(labelling) & set(summary["never_hit"])


# -- work units: a session is never split -----------------------------------------------------


def raw_lines(sessions: Sequence[str | None]) -> list[tuple[int, bytes]]:
    """One line per entry, carrying that session id (None: none)."""
    out = []
    for i, session in enumerate(sessions):
        call: dict[str, Any] = {"call_id": f"c{i}", "name": "t", "arguments": {}}
        if session is not None:
            call["session_id"] = session
        out.append((i + 1, json.dumps(call).encode()))
    return out


def test_units_without_sessions_are_the_consecutive_chunks() -> None:
    lines = raw_lines([None] * 23)
    assert dryrun.units(lines, 5) == [list(chunk) for chunk in dryrun.chunks(lines, 5)]


@settings(max_examples=60, deadline=None)
@given(
    sessions=st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d\u00e9", "e"])), max_size=60),
    size=st.integers(min_value=1, max_value=7),
)
def test_units_keep_every_session_whole_and_put_the_output_back_in_order(sessions: list[str | None], size: int) -> None:
    lines = raw_lines(sessions)
    parts = dryrun.units(lines, size)
    assert sorted(line for part in parts for line in part) == lines  # every line once
    for part in parts:
        assert part == sorted(part)  # a unit's lines in input order: its sessions replay in record order
        assert sum(1 for number, raw in part if dryrun.session_of(raw) is None) <= size
    homes: dict[str, int] = {}
    for k, part in enumerate(parts):
        for _number, raw in part:
            session = dryrun.session_of(raw)
            if session is not None:
                assert homes.setdefault(session, k) == k  # one unit per session
    # The units' outputs, gathered in unit order, come back in input order.
    batches = [dryrun.Batch([(n, f"{n}\n") for n, _raw in part], dryrun.Summary([]), len(part)) for part in parts]
    text = "".join(batch.text for batch in dryrun.in_order([part[0][0] for part in parts], batches))
    assert text == "".join(f"{n}\n" for n, _raw in lines)


def test_session_of_reads_escaped_keys_and_ignores_lines_that_do_not_parse() -> None:
    assert dryrun.session_of(b'{"session\\u005fid": "s1", "name": "t"}') == "s1"
    assert dryrun.session_of(b'{"session": "conversation", "name": "t"}') is None  # a label, not a session id
    assert dryrun.session_of(b'{"session_id": ') is None
    assert dryrun.session_of(b'{"session_id": 3}') is None


def spread(pack: str) -> list[dict[str, Any]]:
    """Every sequence of a pack, twice, starting one after another among calls of no session.

    Sessions start every few lines and run on side by side, so with small units each spans
    several units' worth of lines.
    """
    waiting = [records(s, f"s{n}-{copy}") for copy in (1, 2) for n, s in enumerate(SEQUENCES) if s["pack"] == pack]
    plain = [json.loads(line) for line in (ROOT / "examples" / "bfcl-calls.jsonl").read_text("utf-8").splitlines()]
    live: list[list[dict[str, Any]]] = []
    out: list[dict[str, Any]] = []
    for turn in range(10_000):
        if turn % 3 == 0 and waiting:
            live.append(waiting.pop(0))
        if not waiting and not any(live):
            break
        out.extend(session.pop(0) for session in live if session)
        out.append(plain[turn % len(plain)])
    return out


def test_the_process_pool_keeps_sessions_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = spread("bfcl")
    alone = replay("bfcl", calls)
    monkeypatch.setattr(dryrun, "CHUNK", 4)  # many units, each session spanning several chunks' worth of lines
    parts = dryrun.units(lines_of(calls))
    assert len(parts) > 4
    assert max(len(part) for part in parts) > 4 and len(spread("bfcl")) > 50
    assert replay("bfcl", calls, workers=2) == alone
    assert [r["line"] for r in alone] == list(range(1, len(calls) + 1))


def test_dask_keeps_sessions_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slow-ish (starts a two-process LocalCluster, about 2 s)."""
    pytest.importorskip("distributed")
    calls = spread("bfcl")
    local = dry_run_cli("bfcl", calls, tmp_path, "--workers", "1")
    monkeypatch.setattr(dryrun, "CHUNK", 4)
    assert dry_run_cli("bfcl", calls, tmp_path, "--scheduler", "local") == local


def test_the_impact_diff_replays_both_packs_sessions(tmp_path: Path) -> None:
    # The pack as it was before its session rules: the impact of adding them is what they decide.
    before = tmp_path / "bfcl-before"
    shutil.copytree(pack_dir("bfcl"), before, ignore=shutil.ignore_patterns("tests"))
    (before / "session.yaml").unlink()
    manifest = (before / "pack.yaml").read_text("utf-8")
    (before / "pack.yaml").write_text(manifest.replace("session.yaml, ", ""), "utf-8")
    calls = [call for n, s in enumerate(SEQUENCES) if s["pack"] == "bfcl" for call in records(s, f"s{n}")]
    (tmp_path / "run").mkdir()
    found = dry_run_cli("bfcl", calls, tmp_path / "run", "--against", str(before))
    changed = {r["line"]: r["rule"] for r in found if r["changed"]}
    expected = {
        i + 1: step["expect"]["rule"]
        for i, step in enumerate(step for s in SEQUENCES if s["pack"] == "bfcl" for step in s["steps"])
        if "rule" in step["expect"]
    }
    assert changed == expected  # 8 asks and a denial of the sum, the 21st payment denied: 10 calls
    assert len(changed) == 10 and all(found[line - 1]["against"]["decision"] == "allow" for line in changed)


# -- audit: the session in the log, and the log replayed ----------------------------------------


@pytest.mark.parametrize("sequence", SEQUENCES, ids=NAMES)
def test_the_audit_log_carries_the_session_and_replays_to_the_same_decisions(
    sequence: dict[str, Any], tmp_path: Path
) -> None:
    returned: dict[str, Any] = {"value": None}
    registry = registry_for(sequence, returned)
    log = tmp_path / "audit.jsonl"
    recorder = AuditRecorder(log)
    registry.on_result(recorder, name="audit")
    held: list[list[str]] = []

    async def run() -> None:
        for i, step in enumerate(sequence["steps"]):
            store = registry.sessions
            assert store is not None
            held.append(sorted(store.load("live").labels))  # what the step's rules will read
            returned["value"] = step.get("result", {}).get("value")
            call = step["call"]
            await registry.call(
                call["name"], call["arguments"], cwd=call.get("cwd"), call_id=f"c{i}", session_id="live"
            )

    asyncio.run(run())
    recorder.close()
    audited = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert [r["session_id"] for r in audited] == ["live"] * len(sequence["steps"])
    assert [r["labels"] for r in audited] == held
    times = [r["time"] for r in audited]
    assert times == sorted(times) and all(r["time"] <= r["timestamp"] for r in audited)
    # The log is recorded calls: a dry-run of it replays the session and decides every call as live,
    # unless policy redacted a result: the log holds it redacted (runtime/audit.py), so the credential
    # that labelled the session, or that a later call carried, is not in it to be seen again.
    redacted = any(r["rewrites"] for r in audited)
    assert redacted == any("credential" in rule or "secrets" in rule for rule in sequence["rules"])
    if not redacted:
        replayed = dry_run_cli(sequence["pack"], audited, tmp_path)
        assert [(r["decision"], r["rule"]) for r in replayed] == [(r["decision"], r["rule"]) for r in audited]
