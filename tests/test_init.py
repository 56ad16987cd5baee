"""`policyengine init claude-code|mcp|serve`: the configuration it writes works as written.

Each written configuration is run the way its consumer runs it: the hook command through a shell
(as Claude Code runs it) on recorded events, the MCP entry by the official SDK's stdio client from
another folder, the serve script as a process answering HTTP. The calls are decided by the pack
copy init made, found through the absolute paths it wrote.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policyengine.cli.main import main
from support import stop_helpers

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "policies"
UPSTREAM = Path(__file__).resolve().parent / "mcp_upstream_server.py"
RECORDED = json.loads((Path(__file__).parent / "data" / "claude_code" / "pre_tool_use.json").read_text("utf-8"))
RECORDED_HOME = "/home/dev/project"  # the recorded events' project folder


def cli(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def recorded(name: str, project: Path) -> dict[str, Any]:
    """The recorded PreToolUse event `name`, moved into `project`."""
    event = next(case["event"] for case in RECORDED if case["name"] == name)
    moved: dict[str, Any] = json.loads(json.dumps(event).replace(RECORDED_HOME, str(project)))
    return moved


def read_event(project: Path, file: str) -> dict[str, Any]:
    """The recorded `Read .env` event, reading `file` of the project instead."""
    event = recorded("reading .env", project)
    event["tool_input"] = {"file_path": str(project / file)}
    return event


def hook_command(project: Path, event: str = "PreToolUse", settings: str = "settings.json") -> str:
    document = json.loads((project / ".claude" / settings).read_text("utf-8"))
    groups = [g for g in document["hooks"][event] if "policyengine" in json.dumps(g)]
    assert len(groups) == 1, groups
    (hook,) = groups[0]["hooks"]
    assert hook["type"] == "command" and hook["timeout"] == 30
    command: str = hook["command"]
    return command


def run_hook(command: str, event: dict[str, Any], cwd: Path, helper: str = "off") -> dict[str, Any]:
    """The command through a shell, in the project, as Claude Code runs it; its answer on stdout."""
    env = {**os.environ, "POLICYENGINE_HOOK_HELPER": helper}
    env.pop("POLICYENGINE_CACHE", None)  # the command names its own cache folder
    done = subprocess.run(
        ["bash", "-c", command], input=json.dumps(event), capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def decision(answer: dict[str, Any]) -> str | None:
    decided: str | None = answer.get("hookSpecificOutput", {}).get("permissionDecision")
    return decided


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def make_project(parent: Path) -> Path:
    folder = parent / "my project"  # a space: every path in the command must be quoted
    folder.mkdir()
    (folder / "README.md").write_text("# my project\n", "utf-8")
    (folder / ".env").write_text("API_TOKEN=not-for-the-agent\n", "utf-8")
    return folder


@pytest.fixture
def project() -> Iterator[Path]:
    """A project in a short temporary folder: the helper's socket path fits under its .claude."""
    parent = Path(tempfile.mkdtemp(prefix="pe-init-"))
    try:
        yield make_project(parent)
    finally:
        shutil.rmtree(parent)


# -- claude-code ----------------------------------------------------------------------------------


def test_init_claude_code_denies_the_recorded_read_env_and_allows_read_readme_through_the_written_command(
    project: Path, tmp_path: Path
) -> None:
    code, _out, err = cli("init", "claude-code", "--dir", project)
    assert code == 0, err
    command = hook_command(project)
    assert hook_command(project, "PostToolUse") == command
    elsewhere = tmp_path / "elsewhere"  # the command carries its own absolute paths
    elsewhere.mkdir()
    for cwd in (project, elsewhere):
        denied = run_hook(command, recorded("reading .env", project), cwd)
        assert decision(denied) == "deny" and "no-secret-files" in json.dumps(denied)
        assert decision(run_hook(command, read_event(project, "README.md"), cwd)) in (None, "allow")


def test_init_claude_code_copies_the_pack_and_says_each_absolute_path_it_wrote(project: Path) -> None:
    code, out, _ = cli("init", "claude-code", "--dir", project)
    assert code == 0
    home = project / ".claude" / "policyengine"
    copy, cache, settings = home / "packs" / "claude-code", home / "cache", project / ".claude" / "settings.json"
    assert files_under(copy) == files_under(SHIPPED / "claude-code")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700  # the helper serves only from a private folder
    for path in (copy, cache, settings):
        assert f"  {path}\n" in out
    command = hook_command(project)
    assert f"--pack '{copy}'" in command and f"POLICYENGINE_CACHE='{cache}'" in command
    assert shlex.split(command)[1] == os.path.abspath(sys.executable)  # this interpreter, not a PATH lookup
    assert " -P -m policyengine hook claude-code " in command  # -P: the project's folder is not on sys.path
    assert (home / ".gitignore").read_text("utf-8").splitlines()[-1] == "cache/"


def test_a_project_path_too_long_for_the_helpers_socket_keeps_the_cache_in_the_users_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path.joinpath(*["a-long-folder-name"] * 6)
    deep.mkdir(parents=True)
    project = make_project(deep)
    users = tmp_path / "users-cache"
    monkeypatch.setenv("POLICYENGINE_CACHE", str(users))
    code, out, _ = cli("init", "claude-code", "--dir", project)
    assert code == 0 and "too long for the helper's socket" in out
    command = hook_command(project)
    assert f"POLICYENGINE_CACHE={shlex.quote(str(users.resolve()))} " in command
    assert stat.S_IMODE(users.stat().st_mode) == 0o700
    assert decision(run_hook(command, recorded("reading .env", project), project)) == "deny"


def test_init_claude_code_merges_into_existing_settings_and_keeps_every_other_key(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs: dict[str, Any] = {
        "permissions": {"deny": ["Read(./secrets/**)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint-bash.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}],
        },
        "model": "opus",
    }
    settings.write_text(json.dumps(theirs), "utf-8")
    assert cli("init", "claude-code", "--dir", project)[0] == 0
    merged = json.loads(settings.read_text("utf-8"))
    assert merged["permissions"] == theirs["permissions"] and merged["model"] == "opus"
    assert merged["hooks"]["Stop"] == theirs["hooks"]["Stop"]
    assert merged["hooks"]["PreToolUse"][0] == theirs["hooks"]["PreToolUse"][0]
    assert len(merged["hooks"]["PreToolUse"]) == 2 and len(merged["hooks"]["PostToolUse"]) == 1


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"hooks": {', "cannot read"),
        ("[1, 2]", "is not a JSON object"),
        ('{"hooks": []}', '"hooks" is not an object'),
        ('{"hooks": {"PreToolUse": {"matcher": "*"}}}', '"hooks.PreToolUse" is not a list of matcher groups'),
    ],
)
def test_init_claude_code_refuses_settings_it_cannot_merge_and_writes_nothing(
    project: Path, text: str, said: str
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(text, "utf-8")
    code, _out, err = cli("init", "claude-code", "--dir", project)
    assert code == 2 and said in err and str(settings) in err and "nothing was written" in err
    assert settings.read_text("utf-8") == text
    assert not (project / ".claude" / "policyengine").exists()


def test_init_claude_code_refuses_to_overwrite_the_pack_copy_unless_forced(project: Path) -> None:
    assert cli("init", "claude-code", "--dir", project)[0] == 0
    gate = project / ".claude" / "policyengine" / "packs" / "claude-code" / "gate.yaml"
    gate.write_text("# my edit\n", "utf-8")
    code, _, err = cli("init", "claude-code", "--dir", project)
    assert code == 2 and "already exists" in err and "--force" in err
    assert gate.read_text("utf-8") == "# my edit\n"
    assert cli("init", "claude-code", "--dir", project, "--force")[0] == 0
    assert gate.read_bytes() == (SHIPPED / "claude-code" / "gate.yaml").read_bytes()
    hook_command(project)  # still one policyengine hook per event, not two


def test_another_policyengine_hook_is_replaced_only_with_force(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = "policyengine hook claude-code --pack policies/claude-code"
    group = {"matcher": "*", "hooks": [{"type": "command", "command": old}]}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [group], "PostToolUse": [group]}}), "utf-8")
    code, _, err = cli("init", "claude-code", "--dir", project)
    assert code == 2 and old in err and "--force" in err
    assert cli("init", "claude-code", "--dir", project, "--force")[0] == 0
    assert old not in settings.read_text("utf-8")
    assert "hook claude-code --pack" in hook_command(project)


def test_init_claude_code_local_writes_settings_local_json(project: Path) -> None:
    assert cli("init", "claude-code", "--dir", project, "--local")[0] == 0
    assert not (project / ".claude" / "settings.json").exists()
    command = hook_command(project, settings="settings.local.json")
    assert decision(run_hook(command, recorded("reading .env", project), project)) == "deny"


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        (
            "Edit",
            {"file_path": ".claude/policyengine/packs/claude-code/gate.yaml", "old_string": "a", "new_string": "b"},
        ),
        ("Write", {"file_path": ".claude/policyengine/cache/packs-0.json", "content": "{}"}),
        ("Bash", {"command": "echo '{}' > .claude/policyengine/packs/claude-code/pack.yaml"}),
    ],
)
def test_the_agent_may_not_write_the_pack_copy_or_the_cache(
    project: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    assert cli("init", "claude-code", "--dir", project)[0] == 0
    event = recorded("reading .env", project)
    if "file_path" in tool_input:
        tool_input = {**tool_input, "file_path": str(project / tool_input["file_path"])}
    event.update(tool_name=tool, tool_input=tool_input)
    answer = run_hook(hook_command(project), event, project)
    assert decision(answer) == "deny" and "no-policy-tampering" in json.dumps(answer)


def test_the_warm_helper_serves_from_the_cache_folder_init_wrote(project: Path) -> None:
    assert cli("init", "claude-code", "--dir", project)[0] == 0
    cache = project / ".claude" / "policyengine" / "cache"
    command = hook_command(project)
    try:
        assert decision(run_hook(command, recorded("reading .env", project), project, helper="on")) == "deny"
        deadline = time.monotonic() + 60
        while not list(cache.glob("hook-*.sock")):
            assert time.monotonic() < deadline, "no helper started in the cache folder init wrote"
            time.sleep(0.05)
        assert decision(run_hook(command, recorded("reading .env", project), project, helper="on")) == "deny"
    finally:
        stop_helpers(cache)  # and wait: the fixture removes the folder the helper writes in


# -- mcp ------------------------------------------------------------------------------------------


def test_init_mcp_writes_an_entry_that_runs_the_upstream_behind_the_proxy(project: Path, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    (project / "server.py").write_text(UPSTREAM.read_text("utf-8"), "utf-8")
    code, out, err = cli("init", "mcp", "--dir", project, "--name", "files", "--", "python3", "server.py")
    assert code == 0, err
    snippet = project / ".policyengine" / "mcp-files.json"
    audit = project / ".policyengine" / "mcp-files.audit.jsonl"
    assert f"  {snippet}\n" in out
    entry = json.loads(snippet.read_text("utf-8"))["mcpServers"]["files"]
    assert entry["args"][entry["args"].index("--") + 1 :] == ["python3", "server.py"]
    ran = tmp_path / "upstream.log"
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        cwd=str(tmp_path),  # an MCP client starts servers in a folder of its own
        env={**os.environ, "MCP_UPSTREAM_LOG": str(ran)},
    )

    async def drive() -> tuple[Any, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            denied = await session.call_tool("read_file", {"path": ".env"})
            allowed = await session.call_tool("echo", {"text": "hello"})
            return denied, allowed

    denied, allowed = asyncio.run(drive())
    assert denied.is_error and "deny-env-files" in json.dumps(denied.model_dump(mode="json"))
    assert not allowed.is_error and allowed.content[0].text == "hello"
    assert ran.read_text("utf-8").split() == ["echo"]  # the denied call never reached the server
    assert [json.loads(line)["name"] for line in audit.read_text("utf-8").splitlines()] == ["read_file", "echo"]


def test_init_mcp_without_an_upstream_command_is_a_usage_error(project: Path) -> None:
    code, _, err = cli("init", "mcp", "--dir", project)
    assert code == 2 and "needs the command that starts the upstream MCP server" in err
    assert not (project / ".policyengine").exists()


# -- serve ----------------------------------------------------------------------------------------


def test_init_serve_writes_a_script_that_serves_the_pack_copy(project: Path) -> None:
    code, out, err = cli("init", "serve", "--dir", project)
    assert code == 0, err
    home = project / ".policyengine"
    token, script = home / "serve.token", home / "serve.sh"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600 and os.access(script, os.X_OK)
    assert f"  {script}\n" in out and f"  {home / 'packs' / 'baseline'}\n" in out
    process = subprocess.Popen([str(script), "--port", "0"], cwd="/", stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        url = None
        for line in process.stderr:  # the server says where it listens once it does
            found = re.search(r"(http://127\.0\.0\.1:\d+)", line)
            if found:
                url = found.group(1)
                break
        assert url is not None, "the script's server did not say where it listens"
        call = {"name": "run_shell", "arguments": {"command": "make clean"}, "cwd": "/workspace"}
        request = urllib.request.Request(
            f"{url}/v1/decide",
            data=json.dumps(call).encode(),
            headers={"Authorization": f"Bearer {token.read_text('utf-8').strip()}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
        assert (answer["decision"], answer["rule"]) == ("ask", "ask-before-shell")
    finally:
        process.terminate()
        process.wait(30)
    assert (home / "decisions.jsonl").read_text("utf-8").count("ask-before-shell") == 1


def test_init_serve_refuses_to_overwrite_its_token_unless_forced(project: Path) -> None:
    assert cli("init", "serve", "--dir", project)[0] == 0
    token = (project / ".policyengine" / "serve.token").read_text("utf-8")
    code, _, err = cli("init", "serve", "--dir", project)
    assert code == 2 and "serve.token" in err and "--force" in err
    assert cli("init", "serve", "--dir", project, "--force")[0] == 0
    assert (project / ".policyengine" / "serve.token").read_text("utf-8") != token


# -- every target ---------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["claude-code", "serve"])
def test_init_copies_the_pack_it_is_given_by_name(project: Path, target: str) -> None:
    assert cli("init", target, "--dir", project, "--pack", "bfcl")[0] == 0
    (copy,) = project.rglob("packs/bfcl")
    assert files_under(copy) == files_under(SHIPPED / "bfcl")


def test_init_with_an_unknown_pack_lists_the_shipped_names_and_writes_nothing(project: Path) -> None:
    code, _, err = cli("init", "claude-code", "--dir", project, "--pack", "claud-code")
    assert code == 2 and "no shipped pack named 'claud-code'" in err and "baseline, bfcl, claude-code" in err
    assert not (project / ".claude").exists()


def test_init_into_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = cli("init", "claude-code", "--dir", tmp_path / "nope")
    assert code == 2 and "is not a folder" in err
