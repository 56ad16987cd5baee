"""`policyengine hook claude-code`: Claude Code's hook protocol in front of the packs (docs/claude-code.md).

The table is tests/data/claude_code/: PreToolUse and PostToolUse events as Claude Code sends
them, each with the answer it must get, in both directions (what is refused, and the benign
look-alikes that stay allowed or are left to Claude Code). They run through the real CLI
in-process (`main(argv)` with stdin replaced); a few real processes pin the stdin/stdout/exit
code contract and the warm helper. The hook's decisions are compared with `evaluate_sync` on a
registry holding the same packs and catalog, and its audit log is replayed by dry-run.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from policyengine.adapters import claude_code
from policyengine.cli import hook as hook_verb
from policyengine.cli.main import main
from policyengine.packs import cache
from support import stop_helpers

ROOT = Path(__file__).resolve().parents[1]
PACK = str(ROOT / "policies" / "claude-code")
DATA = Path(__file__).parent / "data" / "claude_code"
PRE: list[dict[str, Any]] = json.loads((DATA / "pre_tool_use.json").read_text("utf-8"))
POST: list[dict[str, Any]] = json.loads((DATA / "post_tool_use.json").read_text("utf-8"))
BUILTIN_TOOLS = {t["name"] for t in json.loads(claude_code.BUILTIN_CATALOG.read_text("utf-8"))["tools"]}


def event_named(name: str) -> dict[str, Any]:
    """The event of the table's case `name`."""
    found: dict[str, Any] = next(c["event"] for c in PRE + POST if c["name"] == name)
    return found


RM_RF = event_named("rm -rf through a quoted, pathed spelling")
READ = event_named("Read inside the project")
EDIT = event_named("an edit inside the project")
PUSH = event_named("git push")
CURL = event_named("curl")


@pytest.fixture(scope="module")
def cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the module: the table's calls after the first read the packs from it."""
    return tmp_path_factory.mktemp("hook-cache") / "cache"


@pytest.fixture(autouse=True)
def _private_cache_and_no_helper(monkeypatch: pytest.MonkeyPatch, cache_folder: Path) -> None:
    monkeypatch.setenv("POLICYENGINE_CACHE", str(cache_folder))
    monkeypatch.setenv("POLICYENGINE_HOOK_HELPER", "off")  # the helper tests turn it on themselves


RUNS = itertools.count()


def run_hook(
    monkeypatch: pytest.MonkeyPatch, stdin: bytes | dict[str, Any], *extra: str, packs: tuple[str, ...] = (PACK,)
) -> tuple[int, str, str]:
    """The CLI in-process with `stdin` on stdin: (exit code, stdout, stderr).

    The table's cases are independent calls: each run is a session of its own (sessions are
    tests/test_hook_sessions.py's), so no case reads what an earlier one left in its session.
    """
    if isinstance(stdin, dict) and "session_id" in stdin:
        stdin = {**stdin, "session_id": f"{stdin['session_id']}-{next(RUNS)}"}
    data = json.dumps(stdin).encode("utf-8") if isinstance(stdin, dict) else stdin
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    argv = ["hook", "claude-code", *(x for p in packs for x in ("--pack", p)), *extra]
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def answer_of(monkeypatch: pytest.MonkeyPatch, event: dict[str, Any], *extra: str, **kwargs: Any) -> dict[str, Any]:
    code, out, err = run_hook(monkeypatch, event, *extra, **kwargs)
    assert (code, err) == (0, ""), err
    answer: dict[str, Any] = json.loads(out)
    return answer


# -- the table --------------------------------------------------------------------------------


@pytest.mark.parametrize("case", PRE, ids=[c["name"] for c in PRE])
def test_pre_tool_use(monkeypatch: pytest.MonkeyPatch, case: dict[str, Any]) -> None:
    answer = answer_of(monkeypatch, case["event"])
    expect = case["expect"]
    if expect["permissionDecision"] is None:
        assert answer == {}, "no rule decided: the call is left to Claude Code's own permission rules"
        return
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == expect["permissionDecision"]
    reason = specific["permissionDecisionReason"]
    if "rule" in expect:
        assert f"rule {expect['rule']} of pack claude-code" in reason
    assert expect.get("reason_contains", "") in reason


@pytest.mark.parametrize("case", POST, ids=[c["name"] for c in POST])
def test_post_tool_use(monkeypatch: pytest.MonkeyPatch, case: dict[str, Any]) -> None:
    answer = answer_of(monkeypatch, case["event"])
    expect = case["expect"]
    if expect.get("empty"):
        assert answer == {}
        return
    assert answer.get("decision") == expect["decision"]
    assert expect.get("reason_contains", "") in answer.get("reason", "")
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "PostToolUse"
    for key in ("updatedToolOutput", "updatedMCPToolOutput"):
        if key in expect:
            assert specific[key] == expect[key]
    if not case["event"]["tool_name"].startswith("mcp__"):
        assert "updatedMCPToolOutput" not in specific  # only MCP tools had that field


def test_the_hook_decides_as_evaluate_does_on_a_registry_with_the_same_packs_and_catalog(tmp_path: Path) -> None:
    from policyengine import PolicyLayers, Registry
    from policyengine.enforce.evaluate import evaluate_sync
    from policyengine.tools.catalog import load_catalog

    registry = Registry()
    PolicyLayers.install(registry, [PACK])
    for definition in load_catalog(claude_code.BUILTIN_CATALOG).values():
        registry.register(definition)
    policy = claude_code.Hook([PACK], None, f"sqlite:{tmp_path / 'sessions.sqlite3'}").policy()
    for i, case in enumerate(PRE + POST):  # each case a session of its own, on both sides
        event = claude_code.parse_event(json.dumps({**case["event"], "session_id": f"case-{i}"}).encode())
        mine = policy.decide(event)
        result = None
        if event.has_response:
            blocks = isinstance(event.response, list) and all(isinstance(b, dict) for b in event.response)
            result = {"value": event.response, **({"content": event.response} if blocks else {})}
        theirs = evaluate_sync(
            registry,
            event.tool,
            event.arguments,
            agent=claude_code.AGENT,
            call_id=event.tool_use_id,
            cwd=event.cwd,
            result=result,
            session_id=event.session_id,
        )
        assert theirs is not None
        assert (mine.verdict, mine.stage, mine.source, mine.reason) == (
            theirs.decision.value,
            theirs.stage.value if theirs.stage else None,
            theirs.source,
            theirs.reason,
        ), case["name"]
        assert (mine.post, mine.rewrites, mine.feedback) == (
            theirs.post.value if theirs.post else None,
            theirs.rewrites,
            theirs.feedback,
        ), case["name"]
        if mine.post == "rewritten":
            assert mine.value == theirs.value, case["name"]


def test_the_audit_log_replays_to_the_same_decisions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    for case in PRE + POST:
        code, _out, err = run_hook(monkeypatch, case["event"], "--audit", str(audit))
        assert code == 0, err
    records = [json.loads(line) for line in audit.read_text("utf-8").splitlines()]
    assert len(records) == len(PRE) + len(POST)
    assert all(r["agent"] == "claude-code" and r["cwd"] and r["event"] in claude_code.EVENTS for r in records)
    redacted = next(r for r in records if r["name"] == "mcp__vault__get_config")
    assert redacted["result"]["value"]["api_key"] == "[REDACTED]"  # what policy hid never reaches the log

    def replay(path: Path, *tools: str) -> list[str]:
        output = tmp_path / f"{path.stem}.out.jsonl"
        code, _out, err = run_cli("dry-run", "--pack", PACK, str(path), "--output", str(output), *tools)
        assert code == 0, err
        return [json.loads(line)["decision"] for line in output.read_text("utf-8").splitlines()]

    # Without a catalog dry-run decides every tool as the hook decides the ones outside its catalog;
    # arguments that do not fit a built-in tool are `invalid` only against the built-in catalog.
    # A record whose credentials were redacted before it was written (docs/audit.md) replays what is left:
    # the credential that decided it is gone. The others replay to their decisions.
    assert any(r.get("redacted") and r["decision"] == "deny" for r in records)
    kept = [not r.get("redacted") for r in records]
    replayed = replay(audit)
    for record, decision in zip(records, replayed, strict=True):
        if record["decision"] != "invalid" and not record.get("redacted"):
            assert decision == record["decision"], record
    builtin = tmp_path / "builtin.jsonl"
    builtin.write_text("".join(json.dumps(r) + "\n" for r in records if r["name"] in BUILTIN_TOOLS), "utf-8")
    expected = [r["decision"] for r in records if r["name"] in BUILTIN_TOOLS]
    assert "invalid" in expected
    unredacted = [not r.get("redacted") for r in records if r["name"] in BUILTIN_TOOLS]
    again = replay(builtin, "--tools", str(claude_code.BUILTIN_CATALOG))
    assert [d for d, k in zip(again, unredacted, strict=True) if k] == [
        d for d, k in zip(expected, unredacted, strict=True) if k
    ]
    # The whole log in one run: the built-in catalog validates, tools outside it are decided as the hook did.
    everything = replay(audit, "--tools", str(claude_code.BUILTIN_CATALOG), "--unknown-tools", "decide")
    assert [d for d, k in zip(everything, kept, strict=True) if k] == [
        r["decision"] for r in records if not r.get("redacted")
    ]


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# -- what is not an event, and what cannot be answered ------------------------------------------

EVENT = PRE[0]["event"]
GARBAGE = {
    "empty stdin": (b"", "no event on stdin"),
    "whitespace": (b"  \n", "no event on stdin"),
    "not JSON": (b"PreToolUse Bash rm -rf /", "not JSON"),
    "truncated JSON": (json.dumps(EVENT).encode()[:-9], "not JSON"),
    "a JSON array": (b"[1, 2]", "must be a JSON object, got an array"),
    "a JSON string": (b'"PreToolUse"', "got a string"),
    "invalid UTF-8": (b'{"tool_name": "\xff\xfe"}', "not UTF-8"),
    "no hook_event_name": (json.dumps({**EVENT, "hook_event_name": None}).encode(), "hook_event_name is missing"),
    "another hook event": (json.dumps({**EVENT, "hook_event_name": "Stop"}).encode(), "hook_event_name is 'Stop'"),
    "no tool_name": (json.dumps({k: v for k, v in EVENT.items() if k != "tool_name"}).encode(), "no tool_name"),
    "tool_input not an object": (json.dumps({**EVENT, "tool_input": "rm -rf /"}).encode(), "tool_input must be"),
    "a relative cwd": (json.dumps({**EVENT, "cwd": "project"}).encode(), "cwd must be an absolute path"),
    "PostToolUse without tool_response": (
        json.dumps({**EVENT, "hook_event_name": "PostToolUse"}).encode(),
        "needs tool_response",
    ),
    "a number too long to read": (b'{"tool_name": "Bash", "n": ' + b"9" * 5000 + b"}", "not JSON this hook can read"),
    "nested too deeply": (b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
}


@pytest.mark.parametrize("name", list(GARBAGE))
def test_input_that_is_not_an_event_is_a_block(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    data, reason = GARBAGE[name]
    code, out, err = run_hook(monkeypatch, data)
    assert (code, out) == (2, "")
    assert err.startswith("policyengine hook: ") and reason in err, err
    assert "Traceback" not in err


def test_arguments_nested_past_the_freeze_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    nested: Any = "x"
    for _ in range(150):
        nested = {"a": nested}
    answer = answer_of(monkeypatch, {**EVENT, "tool_name": "mcp__x__y", "tool_input": {"deep": nested}})
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_event_over_the_size_limit_is_refused_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    limit = claude_code.MAX_EVENT_BYTES
    monkeypatch.setattr(claude_code, "MAX_EVENT_BYTES", 1000)
    big = {**EVENT, "tool_input": {"command": "echo " + "x" * 2000}}
    code, out, err = run_hook(monkeypatch, big)
    assert (code, out) == (2, "") and "over 1,000 bytes" in err
    # A large event under the limit is answered (Write contents and Read results ride in events).
    monkeypatch.setattr(claude_code, "MAX_EVENT_BYTES", limit)
    large = {**EDIT, "tool_input": {**EDIT["tool_input"], "new_string": "y" * 2_000_000}}
    assert answer_of(monkeypatch, large)["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_a_pack_that_does_not_load_blocks_every_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code, out, err = run_hook(monkeypatch, EVENT, packs=(str(tmp_path / "missing"),))
    assert (code, out) == (2, "") and "the packs do not load" in err and "PE108" in err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pack.yaml").write_text("name: broken\nversion: 1.0.0\nfiles: [rules.yaml]\n", "utf-8")
    (broken / "rules.yaml").write_text("rules:\n  - id: x\n    stage: guard\n    tools: ['*']\n    when: 'paths(@'\n")
    code, out, err = run_hook(monkeypatch, EVENT, packs=(str(broken),))
    assert (code, out) == (2, "") and "PE301" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "reason"),
    [(["hook", "claude-code"], "--pack"), (["hook", "cursor", "--pack", PACK], "invalid choice")],
)
def test_bad_options_are_a_block(argv: list[str], reason: str) -> None:
    code, out, err = run_cli(*argv)
    assert (code, out) == (2, "") and reason in err


def test_an_audit_log_that_cannot_be_written_blocks_the_call(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code, out, err = run_hook(monkeypatch, READ, "--audit", str(tmp_path))  # a folder
    assert (code, out) == (2, "") and "cannot write the audit log" in err


def test_an_internal_fault_is_a_block_without_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Any, event: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr(claude_code.Policy, "decide", broken)
    code, out, err = run_hook(monkeypatch, EVENT)
    assert (code, out) == (2, "") and "internal error (KeyError: 'boom')" in err and "Traceback" not in err


# -- pack defaults and layers -------------------------------------------------------------------


def write_pack(folder: Path, default: str, rules: str = "rules: []\n") -> str:
    folder.mkdir(parents=True)
    manifest = f"name: {folder.name}\nversion: 1.0.0\ndefault: {default}\nfiles: [rules.yaml]\n"
    (folder / "pack.yaml").write_text(manifest, "utf-8")
    (folder / "rules.yaml").write_text(rules, "utf-8")
    return str(folder)


@pytest.mark.parametrize(("default", "expected"), [("deny", "deny"), ("ask", "ask"), ("allow", None)])
def test_a_pack_default_of_deny_or_ask_is_the_answer_and_allow_defers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, default: str, expected: str | None
) -> None:
    pack = write_pack(tmp_path / f"default-{default}", default)
    answer = answer_of(monkeypatch, READ, packs=(pack,))
    if expected is None:
        assert answer == {}
        return
    specific = answer["hookSpecificOutput"]
    assert specific["permissionDecision"] == expected
    assert specific["permissionDecisionReason"].endswith(f"[policyengine: default of pack default-{default}]")


def test_an_allow_everything_layer_cannot_lift_a_red_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rules = (
        "rules:\n  - id: allow-all\n    stage: pre-execute\n    tools: ['*']\n    decision: allow\n    final: true\n"
    )
    lenient = write_pack(tmp_path / "lenient", "allow", rules)
    for packs in ((PACK, lenient), (lenient, PACK)):
        for case in PRE:
            if case["expect"]["permissionDecision"] == "deny" and "rule" in case["expect"]:
                answer = answer_of(monkeypatch, case["event"], packs=packs)
                if case["expect"]["rule"].startswith("no-"):  # a red line: it holds in either order
                    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny", case["name"]
    # The lenient layer does allow what no red line refuses, without a prompt.
    answer = answer_of(monkeypatch, CURL, packs=(lenient,))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_a_display_only_rewrite_replaces_an_mcp_output_and_blocks_a_builtin_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rules = (
        "rules:\n  - id: summarise\n    stage: post-execute\n    tools: ['*']\n"
        "    content: 'output hidden for review'\n"
    )
    pack = write_pack(tmp_path / "display", "allow", rules)
    mcp = event_named("a credential field of an MCP result is redacted, for old and new Claude Code")
    specific = answer_of(monkeypatch, mcp, packs=(pack,))["hookSpecificOutput"]
    hidden = [{"type": "text", "text": "output hidden for review"}]
    assert specific["updatedMCPToolOutput"] == specific["updatedToolOutput"] == hidden
    builtin = answer_of(monkeypatch, event_named("clean output is left alone"), packs=(pack,))
    assert builtin["decision"] == "block" and builtin["reason"] == "output hidden for review"


# -- the compiled-pack cache --------------------------------------------------------------------


def test_the_cache_rebuilds_packs_identical_to_the_loaded_ones(tmp_path: Path) -> None:
    from policyengine.packs.loader import load_packs

    folders = [PACK, str(ROOT / "policies" / "bfcl")]
    first = cache.load_packs_cached(folders, tmp_path)
    second = cache.load_packs_cached(folders, tmp_path)
    assert (first.hit, second.hit) == (False, True)
    loaded = load_packs(folders)
    assert [cache._pack_json(p) for p in second.packs] == [cache._pack_json(p) for p in loaded]
    assert [p.digest for p in second.packs] == [p.digest for p in loaded]
    assert sorted(os.listdir(tmp_path)) == [n for n in sorted(os.listdir(tmp_path)) if n.startswith("packs-")]
    assert oct(os.stat(tmp_path).st_mode & 0o777) == "0o700"


def copy_pack(tmp_path: Path) -> Path:
    import shutil

    folder = tmp_path / "pack"
    shutil.copytree(PACK, folder)
    return folder


def entry_of(folder: Path, place: Path) -> Path:
    (entry,) = place.glob("packs-*.json")
    return entry


def test_a_changed_pack_file_is_never_served_from_the_cache(tmp_path: Path) -> None:
    folder, place = copy_pack(tmp_path), tmp_path / "cache"
    cache.load_packs_cached([str(folder)], place)
    gate = folder / "gate.yaml"
    gate.write_text(gate.read_text("utf-8").replace("git push", "git shove"), "utf-8")
    again = cache.load_packs_cached([str(folder)], place)
    assert not again.hit and "git shove" in " ".join(r.description for p in again.packs for r in p.rules)
    assert cache.load_packs_cached([str(folder)], place).hit


@pytest.mark.parametrize(
    "damage", ["truncated", "not json", "checksum", "forged rule", "foreign code", "group-writable"]
)
def test_a_bad_cache_entry_is_ignored_and_rebuilt(tmp_path: Path, damage: str) -> None:
    folder, place = copy_pack(tmp_path), tmp_path / "cache"
    cache.load_packs_cached([str(folder)], place)
    entry = entry_of(folder, place)
    text = entry.read_text("utf-8")
    data = json.loads(text)
    if damage == "truncated":
        entry.write_text(text[: len(text) // 2], "utf-8")
    elif damage == "not json":
        entry.write_bytes(b"\x80garbage")
    elif damage == "checksum":
        data["payload"]["packs"][0]["rules"][0]["verb"] = "allow"
        entry.write_text(json.dumps(data), "utf-8")
    elif damage == "forged rule":  # with a matching checksum: the sources still decide
        data["payload"]["sources"][0][2] = "0" * 64
        data["checksum"] = cache._checksum(data["payload"])
        entry.write_text(json.dumps(data), "utf-8")
    elif damage == "foreign code":
        data["payload"]["code"] = "another engine"
        data["checksum"] = cache._checksum(data["payload"])
        entry.write_text(json.dumps(data), "utf-8")
    else:
        entry.chmod(0o666)
    loaded = cache.load_packs_cached([str(folder)], place)
    assert not loaded.hit
    assert cache.load_packs_cached([str(folder)], place).hit  # rebuilt, written again
    assert loaded.packs[0].rule("deny-blocked-tools") is not None


def test_a_symlinked_entry_or_a_shared_folder_is_not_used(tmp_path: Path) -> None:
    folder, place = copy_pack(tmp_path), tmp_path / "cache"
    cache.load_packs_cached([str(folder)], place)
    entry = entry_of(folder, place)
    real = tmp_path / "elsewhere.json"
    entry.rename(real)
    entry.symlink_to(real)
    assert not cache.load_packs_cached([str(folder)], place).hit
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    cache.load_packs_cached([str(folder)], shared)
    assert oct(os.stat(shared).st_mode & 0o777) == "0o700"  # our own folder, closed before use


def test_the_cache_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLICYENGINE_CACHE", "off")
    assert cache.cache_dir() is None
    monkeypatch.delenv("POLICYENGINE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/tmp/xdg")
    assert cache.cache_dir() == Path("/var/tmp/xdg/policyengine")


# -- the shipped pack and the built-in catalog --------------------------------------------------


def test_the_shipped_pack_passes_check_strict_and_its_policy_tests() -> None:
    # (`fmt --check` holds too; at ~0.5 s for ruamel it is left to the release checklist in docs.)
    assert run_cli("check", "--strict", PACK)[0] == 0
    code, out, err = run_cli("test", PACK, "--require-tests", "--coverage", "--threshold", "100")
    assert code == 0, out + err
    # Against the built-in catalog too, which the hook validates Claude Code's own tools with.
    assert run_cli("check", "--strict", PACK, "--tools", str(claude_code.BUILTIN_CATALOG))[0] == 0


def test_the_builtin_catalog_declares_roles_and_capabilities() -> None:
    from policyengine.tools.catalog import load_catalog

    tools = load_catalog(claude_code.BUILTIN_CATALOG)
    assert set(tools) == BUILTIN_TOOLS >= {"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "Grep"}
    assert {n for n, t in tools.items() if "open-world" in t.tags} == {"Bash", "WebFetch", "WebSearch"}
    assert {n for n, t in tools.items() if "destructive" in t.tags} == {
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Bash",
    }
    roles = {n: dict(t.roles or {}) for n, t in tools.items()}
    assert roles["Read"]["file_path"] == roles["Grep"]["path"] == roles["NotebookEdit"]["notebook_path"] == "path"
    assert (roles["Bash"]["command"], roles["WebFetch"]["url"], roles["WebSearch"]["query"]) == (
        "command",
        "url",
        "text",
    )
    policy = claude_code.Policy((), [claude_code.BUILTIN_CATALOG])
    for name, whole in tools.items():
        alone = policy.definition(name)
        assert alone is not None and (alone.to_mcp(), alone.tags, alone.roles) == (
            whole.to_mcp(),
            whole.tags,
            whole.roles,
        )
    assert policy.definition("mcp__x__y") is None


# -- real processes: the stdin/stdout/exit contract, and the warm helper ---------------------------


def run_process(event: bytes, env: dict[str, str], *packs: str) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-m", "policyengine", "hook", "claude-code"]
    for pack in packs or (PACK,):
        argv += ["--pack", pack]
    return subprocess.run(argv, input=event, capture_output=True, env=env, timeout=60, check=False)


def process_env(tmp_path: Path, helper: str = "off") -> dict[str, str]:
    env = {**os.environ, "POLICYENGINE_CACHE": str(tmp_path / "cache"), "POLICYENGINE_HOOK_HELPER": helper}
    # Bytecode, as an installed package has it, kept between runs: a process that compiles every
    # module from source takes ~0.5 s, and this file has ~3 s.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "policyengine-test-pycache")
    return env


def test_a_real_process_answers_on_stdout_and_blocks_with_exit_2(tmp_path: Path) -> None:
    env = process_env(tmp_path)
    done = run_process(json.dumps(RM_RF).encode(), env)
    assert (done.returncode, done.stderr) == (0, b"")
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    done = run_process(b"\x00not an event", env)
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.startswith(b"policyengine hook: ") and b"Traceback" not in done.stderr


def test_the_first_call_starts_a_warm_helper_that_answers_the_next(tmp_path: Path) -> None:
    env = process_env(tmp_path, helper="on")
    place = tmp_path / "cache"
    try:
        first = run_process(json.dumps(RM_RF).encode(), env)
        assert first.returncode == 0
        deadline = time.monotonic() + 30
        while not list(place.glob("hook-*.sock")):
            assert time.monotonic() < deadline, "no helper started"
            time.sleep(0.05)
        # The client, asking the helper the first process started. Its socket exists from bind(), a moment
        # before listen(): a client that connects in between is refused and decides in-process, so ask again.
        served = None
        while served is None and time.monotonic() < deadline:
            served = hook_verb._ask_helper(place, [os.path.realpath(PACK)], json.dumps(RM_RF).encode(), None)
        assert served is not None and served[0] == 0 and served[1] == first.stdout.decode()
    finally:
        stop_helpers(place)
    deadline = time.monotonic() + 10
    while list(place.glob("hook-*.sock")):
        assert time.monotonic() < deadline, "the helper left its socket behind"
        time.sleep(0.05)


def test_the_helper_answers_as_the_process_would_and_reloads_changed_packs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = copy_pack(tmp_path)
    place = tmp_path / "cache"
    monkeypatch.setenv("POLICYENGINE_CACHE", str(place))
    monkeypatch.setenv("POLICYENGINE_HOOK_HELPER", "on")
    served: list[int] = []
    real = hook_verb._serve_one

    def counting(*args: Any) -> bool:
        served.append(1)
        return real(*args)

    monkeypatch.setattr(hook_verb, "_serve_one", counting)
    monkeypatch.setattr(hook_verb, "_start_helper", lambda *_: None)  # this test serves from a thread
    upgraded = threading.Event()
    real_fingerprint = cache.fingerprint
    monkeypatch.setattr(cache, "fingerprint", lambda layers: "new" if upgraded.is_set() else real_fingerprint(layers))
    server = threading.Thread(target=hook_verb._serve, args=([str(folder)], 5.0), daemon=True)
    server.start()
    deadline = time.monotonic() + 30
    while not list(place.glob("hook-*.sock")):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    answer = answer_of(monkeypatch, PUSH, packs=(str(folder),))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "ask" and served == [1]
    gate = folder / "gate.yaml"
    gate.write_text(gate.read_text("utf-8").replace("pushes to a remote. Push?", "pushes. Really push?"), "utf-8")
    answer = answer_of(monkeypatch, PUSH, packs=(str(folder),))
    assert "Really push?" in answer["hookSpecificOutput"]["permissionDecisionReason"] and served == [1, 1]
    code, out, err = run_hook(monkeypatch, b"[]", packs=(str(folder),))
    assert (code, out) == (2, "") and "JSON object" in err and len(served) == 3
    # A helper for other packs is never asked: the client checks whose packs answered.
    assert hook_verb._ask_helper(place, ["/somewhere/else"], json.dumps(PUSH).encode(), None) is None
    # The engine's code changes under it: it says so, leaves, and the call is decided in-process.
    upgraded.set()
    answer = answer_of(monkeypatch, PUSH, packs=(str(folder),))
    assert "Really push?" in answer["hookSpecificOutput"]["permissionDecisionReason"] and len(served) == 4
    server.join(timeout=10)
    assert not server.is_alive() and not list(place.glob("hook-*.sock"))
