"""Keep the last good pack, loudly (packs/last_good.py): a pack edit that breaks loading (a YAML syntax error, a schema
error, a condition that does not compile) leaves every long-running front end deciding with the packs that last
loaded, saying which pack failed where and which version decides instead; with no last good packs, calls are refused.

Front ends: the Claude Code hook (a process per event: its last good packs are the compiled-pack cache's entry; its
warm helper keeps its own), the decision service's reload, and `PolicyLayers.reload` (what an application using the
framework adapters calls to reload). The MCP proxy loads its packs once and never reloads.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from policyengine.adapters.gate import PolicyGate
from policyengine.cli import hook as hook_verb
from policyengine.cli.main import main
from policyengine.enforce.evaluate import Verdict
from policyengine.packs import cache
from policyengine.service.app import create_app
from policyengine.service.packs_state import PacksState
from served import Served
from support import rules_pack

RULES = [
    {"id": "no-rm", "stage": "pre-execute", "tools": ["Bash"], "when": "contains(arguments.command, 'rm')",
     "decision": "deny", "reason": "no rm"},
    {"id": "ask-push", "stage": "pre-execute", "tools": ["Bash"], "when": "contains(arguments.command, 'push')",
     "decision": "ask", "reason": "push?"},
]  # fmt: skip
RM = {
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build"},
    "cwd": "/home/dev/project",
    "session_id": "s",
    "tool_use_id": "toolu_1",
}
DENIED = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "no rm [policyengine: rule no-rm of pack layer]",
    }
}

# Three ways an edit breaks a pack: (what is written into rules.yaml, the problem's code, its line).
BREAKS = {
    "yaml syntax": ("rules:\n  - id: no-rm\n    stage: [pre-execute\n", "PE101", None),
    "schema": ("rules:\n  - id: no-rm\n    stage: pre-execute\n    tools: [Bash]\n    decision: block\n", "PE205", 5),
    "condition": (
        "rules:\n  - id: no-rm\n    stage: pre-execute\n    tools: [Bash]\n    when: 'contains(arguments.command'\n"
        "    decision: deny\n",
        "PE301",
        5,
    ),
}


def _break(folder: Path, how: str) -> None:
    (folder / "rules.yaml").write_text(BREAKS[how][0], "utf-8")


def _said_where(text: str, folder: Path, how: str) -> bool:
    """Whether `text` names the pack, the broken file (with its line and column) and the problem's code."""
    _body, code, line = BREAKS[how]
    at = f"{folder / 'rules.yaml'}:{line}:" if line is not None else f"{folder / 'rules.yaml'}:"
    return f"pack {folder} failed to load at {at}" in text and code in text


def _hook(monkeypatch: pytest.MonkeyPatch, folder: Path, event: dict[str, Any], *extra: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(event).encode()), encoding="utf-8"))
    out, err = io.StringIO(), io.StringIO()
    code = main(["hook", "claude-code", "--pack", str(folder), *extra], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("POLICYENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLICYENGINE_HOOK_HELPER", "off")
    return rules_pack(tmp_path, "layer", RULES)


# -- the hook -------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", list(BREAKS))
def test_the_hook_keeps_deciding_with_the_cached_last_good_pack_and_says_so(
    monkeypatch: pytest.MonkeyPatch, layer: Path, tmp_path: Path, how: str
) -> None:
    code, out, err = _hook(monkeypatch, layer, RM)
    assert (code, json.loads(out), err) == (0, DENIED, "")
    digest = cache.load_packs_cached([layer], tmp_path / "cache").packs[0].digest
    _break(layer, how)
    audit = tmp_path / "audit.jsonl"
    code, out, err = _hook(monkeypatch, layer, RM, "--audit", str(audit))
    answer = json.loads(out)
    assert code == 0 and answer["hookSpecificOutput"] == DENIED["hookSpecificOutput"]  # the last good pack decided
    for said in (answer["systemMessage"], err, json.loads(audit.read_text("utf-8"))["pack_error"]):
        assert _said_where(said, layer, how), said
        assert "still deciding with the version loaded at " in said and f"layer@1.0.0 (digest {digest})" in said
    # Fixed: the edit's packs decide, and nothing is said any more.
    (layer / "rules.yaml").write_text(json.dumps({"rules": RULES[1:]}), "utf-8")
    code, out, err = _hook(monkeypatch, layer, RM)
    assert (code, json.loads(out), err) == (0, {}, "")


def test_the_hook_refuses_every_call_when_a_pack_never_loaded(monkeypatch: pytest.MonkeyPatch, layer: Path) -> None:
    _break(layer, "schema")
    code, out, err = _hook(monkeypatch, layer, RM)
    assert (code, out) == (2, "") and "every call is refused until they do" in err and "PE205" in err


def test_the_hook_without_its_cache_has_no_last_good_pack_and_refuses(
    monkeypatch: pytest.MonkeyPatch, layer: Path
) -> None:
    monkeypatch.setenv("POLICYENGINE_CACHE", "off")
    assert _hook(monkeypatch, layer, RM)[0] == 0
    _break(layer, "yaml syntax")
    code, out, err = _hook(monkeypatch, layer, RM)
    assert (code, out) == (2, "") and "PE101" in err


def test_a_cache_entry_of_another_engine_is_no_last_good_pack(
    monkeypatch: pytest.MonkeyPatch, layer: Path, tmp_path: Path
) -> None:
    assert _hook(monkeypatch, layer, RM)[0] == 0
    _break(layer, "schema")
    monkeypatch.setattr(cache, "fingerprint", lambda _layers: "an upgraded engine")
    code, out, err = _hook(monkeypatch, layer, RM)
    assert (code, out) == (2, "") and "PE205" in err


def test_a_fresh_hook_process_decides_with_the_last_good_pack(layer: Path, tmp_path: Path) -> None:
    env = {**os.environ, "POLICYENGINE_CACHE": str(tmp_path / "cache"), "POLICYENGINE_HOOK_HELPER": "off"}
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "policyengine-test-pycache")
    argv = [sys.executable, "-m", "policyengine", "hook", "claude-code", "--pack", str(layer)]

    def run() -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            argv, input=json.dumps(RM).encode(), capture_output=True, env=env, timeout=60, check=False
        )

    assert json.loads(run().stdout) == DENIED
    _break(layer, "condition")
    done = run()
    assert done.returncode == 0 and json.loads(done.stdout)["hookSpecificOutput"] == DENIED["hookSpecificOutput"]
    assert done.stderr.startswith(b"policyengine hook: pack ") and _said_where(done.stderr.decode(), layer, "condition")


def test_the_warm_helper_keeps_its_packs_through_a_broken_edit(
    monkeypatch: pytest.MonkeyPatch, layer: Path, tmp_path: Path
) -> None:
    place = tmp_path / "cache"
    monkeypatch.setenv("POLICYENGINE_HOOK_HELPER", "on")
    monkeypatch.setattr(hook_verb, "_start_helper", lambda *_: None)  # this test serves from a thread
    served: list[int] = []
    real = hook_verb._serve_one

    def counting(*args: Any) -> bool:
        served.append(1)
        return real(*args)

    monkeypatch.setattr(hook_verb, "_serve_one", counting)
    server = threading.Thread(target=hook_verb._serve, args=([str(layer)], 5.0), daemon=True)
    server.start()
    deadline = time.monotonic() + 30
    while not list(place.glob("hook-*.sock")):
        assert time.monotonic() < deadline, "no helper started"
        time.sleep(0.02)
    assert json.loads(_hook(monkeypatch, layer, RM)[1]) == DENIED and served == [1]
    # The cache's entry goes: only the helper's own packs can answer now.
    for entry in place.glob("packs-*.json"):
        entry.unlink()
    # The edit names a new rule file, and that file is broken: the kept packs were never read from it.
    manifest = layer / "pack.yaml"
    manifest.write_text(manifest.read_text("utf-8").replace("- rules.yaml", "- rules.yaml\n- more.yaml"), "utf-8")
    (layer / "more.yaml").write_text("rules:\n  - id: more\n    stage: nowhere\n", "utf-8")
    code, out, err = _hook(monkeypatch, layer, RM)
    assert code == 0 and served == [1, 1] and json.loads(out)["hookSpecificOutput"] == DENIED["hookSpecificOutput"]
    said = f"pack {layer} failed to load at {layer / 'more.yaml'}:3:12: PE205"
    assert said in err and said in json.loads(out)["systemMessage"]
    code, out, err = _hook(monkeypatch, layer, RM)  # and again, from the packs it keeps
    assert code == 0 and served == [1, 1, 1] and said in err and said in json.loads(out)["systemMessage"]
    # Fixing that file alone is seen: the edit's packs decide, and nothing is said any more.
    (layer / "more.yaml").write_text("rules:\n  - {id: more, stage: guard, tools: [Bash], reason: no bash}\n", "utf-8")
    code, out, err = _hook(monkeypatch, layer, RM)
    assert (code, err, served) == (0, "", [1, 1, 1, 1]) and "systemMessage" not in json.loads(out)
    assert (
        json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
        == "no rm [policyengine: rule no-rm of pack layer]"
    )
    server.join(timeout=10)  # idle for 5 s: it exits


# -- the decision service -------------------------------------------------------------------------------


@pytest.mark.parametrize("how", list(BREAKS))
def test_serve_keeps_deciding_with_the_last_good_pack_and_says_which_failed_where(
    layer: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    state = PacksState([layer])
    digest = state.current.digest
    served = Served(create_app(state, reload_interval=None))
    try:
        with httpx.Client(base_url=served.url, timeout=10) as client:
            _break(layer, how)
            with caplog.at_level(logging.ERROR, logger="policyengine.service"):
                result = state.reload()
            assert not result.swapped and result.digest == digest
            reply = client.post("/v1/decide", json={"name": "Bash", "arguments": {"command": "rm x"}})
            assert (reply.json()["decision"], reply.json()["rule"], reply.json()["pack_digest"]) == (
                "deny",
                "no-rm",
                digest,
            )
            health = client.get("/healthz").json()
    finally:
        served.stop()
    for said in (health["reload_error"], caplog.text):
        assert _said_where(said, layer, how) and f"(digest {digest})" in said


# -- PolicyLayers.reload: the adapters' packs ----------------------------------------------------------


def test_a_failed_reload_of_the_adapters_packs_keeps_them_and_warns(
    layer: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gate = PolicyGate([layer])
    assert gate.decide("Bash", {"command": "rm x"}).decision is Verdict.DENY
    _break(layer, "condition")
    with caplog.at_level(logging.WARNING, logger="policyengine"):
        report = gate.layers.reload()
    assert not report.swapped and report.notice is not None and _said_where(report.notice, layer, "condition")
    assert _said_where(caplog.text, layer, "condition")
    assert gate.decide("Bash", {"command": "rm x"}).decision is Verdict.DENY  # the last good pack still decides
    report = asyncio.run(gate.layers.reload_async())
    assert not report.swapped and report.notice is not None
