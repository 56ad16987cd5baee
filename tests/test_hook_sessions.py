"""Sessions in `policyengine hook claude-code` (docs/claude-code.md, "Sessions").

Every sequence of tests/data/session_sequences.yaml is replayed through the real hook: each
step's PreToolUse, and its PostToolUse when the step has a result, as separate hook runs with
one session id (in-process through `main(argv)`, and one sequence through separate real
processes, and through the warm helper and a fresh process after it stopped). The session
lives in sessions.sqlite3 in the cache folder; a store that fails denies, a pack without
session rules never touches it.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from policyengine.cli import hook as hook_verb
from policyengine.cli.main import main
from policyengine.sessions.stores import SqliteStore
from policyengine.values.session import Step
from support import reference_entries, stop_helpers

ROOT = Path(__file__).resolve().parents[1]
SEQUENCES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "session_sequences.yaml").read_text("utf-8")
)["sequences"]
PACK = str(ROOT / "policies" / "claude-code")


def pack_of(sequence: dict[str, Any]) -> str:
    return str(ROOT / "policies" / sequence["pack"])


@pytest.fixture(scope="module")
def cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the module (compiled packs, and the default session store: one session id per test)."""
    return tmp_path_factory.mktemp("hook-sessions") / "cache"


@pytest.fixture(autouse=True)
def _private_cache_and_no_helper(monkeypatch: pytest.MonkeyPatch, cache_folder: Path) -> None:
    monkeypatch.setenv("POLICYENGINE_CACHE", str(cache_folder))
    monkeypatch.setenv("POLICYENGINE_HOOK_HELPER", "off")
    monkeypatch.delenv("POLICYENGINE_HOOK_SESSIONS", raising=False)


def events(sequence: dict[str, Any], session_id: str) -> list[tuple[int, dict[str, Any]]]:
    """(step, event) for every hook run of the sequence: each step's PreToolUse, then its PostToolUse if it ran."""
    out = []
    for i, step in enumerate(sequence["steps"]):
        call = step["call"]
        base: dict[str, Any] = {
            "session_id": session_id,
            "transcript_path": f"/home/dev/.claude/projects/p/{session_id}.jsonl",
            "tool_name": call["name"],
            "tool_input": call["arguments"],
            "tool_use_id": f"toolu_{i:03d}",
        }
        if "cwd" in call:
            base["cwd"] = call["cwd"]
        out.append((i, {**base, "hook_event_name": "PreToolUse"}))
        if "result" in step:
            out.append((i, {**base, "hook_event_name": "PostToolUse", "tool_response": step["result"]["value"]}))
    return out


def run_hook(
    monkeypatch: pytest.MonkeyPatch, event: dict[str, Any], *extra: str, pack: str = PACK
) -> tuple[int, str, str]:
    """The CLI in-process, the event on stdin: (exit code, stdout, stderr)."""
    data = json.dumps(event).encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    out, err = io.StringIO(), io.StringIO()
    code = main(["hook", "claude-code", "--pack", pack, *extra], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def pre_decision(answer: dict[str, Any]) -> tuple[str, str]:
    """(decision, reason) of a PreToolUse answer: no decision is an allow left to Claude Code."""
    if answer == {}:
        return "allow", ""
    specific = answer["hookSpecificOutput"]
    return specific["permissionDecision"], specific["permissionDecisionReason"]


def check_step(sequence: dict[str, Any], step: int, answer: dict[str, Any]) -> None:
    expect = sequence["steps"][step]["expect"]
    decision, reason = pre_decision(answer)
    assert decision == expect["decision"], f"step {step}: {reason}"
    if "rule" in expect:
        assert f"rule {expect['rule']} of pack {sequence['pack']}" in reason, f"step {step}: {reason}"


def store_at(cache: Path) -> SqliteStore:
    return SqliteStore(cache / "sessions.sqlite3")


def replay(sequence: dict[str, Any], session_id: str, hook: Any, cache: Path) -> None:
    """Every hook run of the sequence through `hook(event) -> (exit, stdout, stderr)`, checking each step."""
    for step, event in events(sequence, session_id):
        code, out, err = hook(event)
        assert (code, err) == (0, ""), err
        if event["hook_event_name"] == "PreToolUse":
            check_step(sequence, step, json.loads(out))
            continue
        # The call was admitted and ran: its output is reviewed, never withheld as if pre-execute refused it
        # (PostToolUse decides pre-execute again on the session without the call's own entry).
        assert json.loads(out).get("decision") != "block", f"step {step}: {out}"
        labels = sequence["steps"][step]["expect"].get("labels")
        if labels:  # after the result is reviewed: the labels the session holds
            assert set(labels) <= set(store_at(cache).load(session_id).labels), f"step {step}"


@pytest.mark.parametrize("sequence", SEQUENCES, ids=[s["name"] for s in SEQUENCES])
def test_every_session_sequence_through_the_hook(
    monkeypatch: pytest.MonkeyPatch, cache_folder: Path, sequence: dict[str, Any]
) -> None:
    session_id = f"seq-{SEQUENCES.index(sequence)}"

    def hook(event: dict[str, Any]) -> tuple[int, str, str]:
        return run_hook(monkeypatch, event, pack=pack_of(sequence))

    replay(sequence, session_id, hook, cache_folder)
    # The decision entries the reference path writes (at most one per PreToolUse, none from a PostToolUse),
    # a result entry only for what a PostToolUse recorded: counters stay exact.
    entries = store_at(cache_folder).entries(session_id)
    decided = [e for e in entries if e.step is not Step.RESULT]
    assert [e.step.value for e in decided] == reference_entries(sequence)
    assert len({e.call_id for e in decided}) == len(decided)
    results = [e.call_id for e in entries if e.step is Step.RESULT]
    assert len(results) == len(set(results))


def process_env(cache: Path, helper: str = "off") -> dict[str, str]:
    env = {**os.environ, "POLICYENGINE_CACHE": str(cache), "POLICYENGINE_HOOK_HELPER": helper}
    env.pop("POLICYENGINE_HOOK_SESSIONS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode, kept between runs, as an installed package has it
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "policyengine-test-pycache")
    return env


def run_process(event: dict[str, Any], env: dict[str, str], pack: str = PACK) -> tuple[int, str, str]:
    argv = [sys.executable, "-m", "policyengine", "hook", "claude-code", "--pack", pack]
    done = subprocess.run(argv, input=json.dumps(event).encode(), capture_output=True, env=env, timeout=60, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


CREDENTIALS = next(s for s in SEQUENCES if s["name"].startswith("claude-code: a credential read, then any web"))


def test_a_sequence_through_separate_real_processes_shares_one_session(tmp_path: Path) -> None:
    env = process_env(tmp_path / "cache")
    replay(CREDENTIALS, "two-processes", lambda event: run_process(event, env), tmp_path / "cache")
    assert oct(os.stat(tmp_path / "cache" / "sessions.sqlite3").st_mode & 0o777) == "0o600"


def test_the_session_survives_the_warm_helper(tmp_path: Path) -> None:
    """The helper answers the PostToolUse and is stopped; a fresh process then reads the label it wrote."""
    place = tmp_path / "cache"
    env = process_env(place, helper="on")
    (_, read), (_, reviewed), (_, fetch) = events(CREDENTIALS, "helper")
    try:
        assert run_process(read, env)[0] == 0  # decided in-process; starts the helper
        deadline = time.monotonic() + 30
        served = None
        while served is None:  # the helper loads the packs, then listens
            assert time.monotonic() < deadline, "no helper answered"
            served = hook_verb._ask_helper(place, [os.path.realpath(PACK)], json.dumps(reviewed).encode(), None)
            time.sleep(0.05)
        assert served[0] == 0, served
    finally:
        stop_helpers(place)
    assert "credential-seen" in store_at(place).load("helper").labels
    code, out, err = run_process(fetch, {**env, "POLICYENGINE_HOOK_HELPER": "off"})
    assert (code, err) == (0, "")
    check_step(CREDENTIALS, 1, json.loads(out))


# -- failures close, and a pack without session rules never touches the store ---------------------


def broken_store(tmp_path: Path, how: str) -> Path:
    """A store path that cannot be opened or written."""
    if how == "a file where its folder should be":
        (tmp_path / "blocker").write_text("not a folder", "utf-8")
        return tmp_path / "blocker" / "sessions.sqlite3"
    if how == "a file that is not a database":
        path = tmp_path / "sessions.sqlite3"
        path.write_bytes(b"not a database, " * 256)
        return path
    if os.geteuid() == 0:
        pytest.skip("SKIPPED LOUDLY: root writes into a read-only folder; the other broken stores cover root")
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o500)
    return folder / "sessions.sqlite3"


BROKEN = ["a file where its folder should be", "a file that is not a database", "a read-only folder"]


@pytest.mark.parametrize("how", BROKEN)
def test_a_store_that_fails_denies_and_withholds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str) -> None:
    path = broken_store(tmp_path, how)
    (_, pre), (_, post), _ = events(CREDENTIALS, "broken")
    code, out, err = run_hook(monkeypatch, pre, "--sessions", f"sqlite:{path}")
    assert (code, err) == (0, "")
    decision, reason = pre_decision(json.loads(out))
    assert decision == "deny" and "session store failed" in reason and str(path) in reason, reason
    code, out, err = run_hook(monkeypatch, post, "--sessions", f"sqlite:{path}")
    answer = json.loads(out)
    assert answer["decision"] == "block" and "session store failed" in answer["reason"]
    assert "AKIA" not in json.dumps(answer["hookSpecificOutput"])  # the output is withheld


def test_without_a_cache_folder_or_sessions_option_session_rules_deny(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLICYENGINE_CACHE", "off")
    _, out, _ = run_hook(monkeypatch, events(CREDENTIALS, "nowhere")[0][1])
    decision, reason = pre_decision(json.loads(out))
    assert decision == "deny" and "no session store" in reason and "--sessions" in reason


def test_a_memory_store_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run_hook(monkeypatch, events(CREDENTIALS, "memory")[0][1], "--sessions", "memory")
    assert (code, out) == (2, "") and "keeps nothing between hook processes" in err


def write_pack(folder: Path) -> str:
    folder.mkdir(parents=True)
    (folder / "pack.yaml").write_text("name: plain\nversion: 1.0.0\ndefault: allow\nfiles: [rules.yaml]\n", "utf-8")
    rule = "rules:\n  - id: no-curl\n    stage: pre-execute\n    tools: [Bash]\n"
    rule += "    when: \"contains(arguments.command, 'curl')\"\n    decision: deny\n    reason: no curl\n"
    (folder / "rules.yaml").write_text(rule, "utf-8")
    return str(folder)


def test_a_pack_without_session_rules_creates_no_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POLICYENGINE_CACHE", str(tmp_path / "cache"))
    pack = write_pack(tmp_path / "plain")
    elsewhere = tmp_path / "elsewhere" / "sessions.sqlite3"
    for _, event in events(CREDENTIALS, "plain"):
        for extra in ((), ("--sessions", f"sqlite:{elsewhere}")):
            code, _out, err = run_hook(monkeypatch, event, *extra, pack=pack)
            assert (code, err) == (0, "")
    assert not (tmp_path / "cache" / "sessions.sqlite3").exists() and not elsewhere.parent.exists()


def test_a_call_without_a_session_id_reads_and_writes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POLICYENGINE_CACHE", str(tmp_path / "cache"))
    for _, event in events(CREDENTIALS, "unused"):
        del event["session_id"]
        code, out, err = run_hook(monkeypatch, event)
        assert (code, err) == (0, "")
    assert pre_decision(json.loads(out)) == ("allow", "")  # the WebFetch: no session, no label, left to Claude Code
    assert not (tmp_path / "cache" / "sessions.sqlite3").exists()


def test_a_session_busy_past_the_timeout_denies(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Calls of one session are decided one at a time across processes: one that cannot get its turn is refused."""
    from policyengine.adapters import claude_code_sessions

    path = tmp_path / "sessions.sqlite3"
    monkeypatch.setattr(claude_code_sessions, "LOCK_SECONDS", 0.3)
    (_, pre), _, _ = events(CREDENTIALS, "busy")
    holder = claude_code_sessions.LazyStore(f"sqlite:{path}")
    code = (
        "import sys, time\n"
        "from policyengine.adapters.claude_code_sessions import LazyStore\n"
        f"with LazyStore({holder.spec!r}).turn('busy'):\n"
        "    print('held', flush=True)\n"
        "    sys.stdin.read()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env) as held:
        assert held.stdout is not None and held.stdout.readline() == b"held\n"
        _, out, _ = run_hook(monkeypatch, pre, "--sessions", f"sqlite:{path}")
        decision, reason = pre_decision(json.loads(out))
        assert decision == "deny" and "the session is busy" in reason
        held.communicate(b"")
    _, out, _ = run_hook(monkeypatch, pre, "--sessions", f"sqlite:{path}")  # its turn came: decided
    assert pre_decision(json.loads(out))[0] == "allow"
    assert oct(os.stat(str(path) + ".lock").st_mode & 0o777) == "0o600"


@pytest.fixture
def redis_url(tmp_path: Path) -> Any:
    """A real redis-server on a free port in a temp folder; skipped loudly when it cannot start."""
    import shutil
    import socket

    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.path.exists(server):
        pytest.skip("SKIPPED LOUDLY: no redis-server installed; the hook's Redis store is untested here")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [
        server,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(tmp_path),
        "--save",
        "",
        "--appendonly",
        "no",
    ]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.skip(f"SKIPPED LOUDLY: redis-server did not start on port {port}")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_sequence_through_a_redis_store(monkeypatch: pytest.MonkeyPatch, redis_url: str, tmp_path: Path) -> None:
    from policyengine.sessions.stores import RedisStore

    monkeypatch.setenv("POLICYENGINE_CACHE", str(tmp_path / "cache"))
    sequence = next(s for s in SEQUENCES if s["name"].startswith("claude-code: a credential read, then written"))
    for step, event in events(sequence, "redis"):
        code, out, err = run_hook(monkeypatch, event, "--sessions", redis_url)
        assert (code, err) == (0, ""), err
        if event["hook_event_name"] == "PreToolUse":
            check_step(sequence, step, json.loads(out))
    # The read's result labels the session (a RESULT entry); no rule counts or lists calls, so no decision entry.
    assert [e.step for e in RedisStore(redis_url).entries("redis")] == [Step.RESULT]
    assert not (tmp_path / "cache" / "sessions.sqlite3").exists()


def test_a_store_removed_under_a_long_lived_hook_is_opened_again(tmp_path: Path) -> None:
    """The helper keeps its store open: when the file is removed (sessions cleared), it follows the new one."""
    from policyengine.adapters.claude_code import Hook

    hook = Hook([PACK], tmp_path / "cache")
    (_, read), (_, reviewed), (_, fetch) = events(CREDENTIALS, "cleared")
    for event in (read, reviewed):
        assert hook.respond(json.dumps(event).encode(), None)[0] == 0
    for path in (tmp_path / "cache").glob("sessions.sqlite3*"):
        path.unlink()  # the user clears the sessions
    code, out, err = hook.respond(json.dumps(fetch).encode(), None)
    assert (code, err) == (0, "")
    assert pre_decision(json.loads(out)) == ("allow", "")  # a new, empty session: nothing was seen
    # A read outside the project labels the session: written to the new file, which the hook now reads.
    private = {**fetch, "tool_name": "Read", "tool_use_id": "toolu_009"}
    private["tool_input"] = {"file_path": "/home/dev/notes/salaries.txt"}
    assert hook.respond(json.dumps(private).encode(), None)[0] == 0
    assert [e.call_id for e in store_at(tmp_path / "cache").entries("cleared")] == ["toolu_009"]
