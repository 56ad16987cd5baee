"""The README's "Put it in front of your agent" recipes, run as written.

Each recipe is the fenced block after its `<!-- recipe: NAME -->` marker. The only things put in
are what a reader brings: an MCP server (`my_server.py`, here tests/mcp_upstream_server.py), an
interpreter for `python` and `policyengine`, a model (scripted, no network) and tools whose
bodies record that they ran. Each runs in a folder of its own: packs are named by their shipped
names (`--pack baseline`), and the Python recipes' `policies/baseline` is the repository's (linked in).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = Path(__file__).resolve().parent / "mcp_upstream_server.py"
PROMPT = "clean up the build folder"


def recipe(name: str) -> str:
    """The fenced block after `<!-- recipe: name -->` in the README (missing: the test fails)."""
    readme = (ROOT / "README.md").read_text("utf-8")
    found = re.search(rf"<!-- recipe: {re.escape(name)} -->\n```\w+\n(.*?)\n```", readme, re.S)
    assert found is not None, f"README.md has no recipe {name!r}"
    return found.group(1)


def command_line(words: Sequence[str]) -> list[str]:
    """A recipe's command: this interpreter for `policyengine` and `python`, the test server for my_server.py."""
    out: list[str] = []
    for word in words:
        if word == "policyengine":
            out += [sys.executable, "-m", "policyengine"]
        elif word == "python":
            out.append(sys.executable)
        else:
            out.append(str(UPSTREAM) if word == "my_server.py" else word)
    return out


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the repository's policies/ (for the Python recipes), the working directory of the recipe."""
    (tmp_path / "policies").symlink_to(ROOT / "policies", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_mcp_recipe_denies_before_the_upstream_and_writes_a_replayable_audit(project: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    server = json.loads(recipe("mcp"))["mcpServers"]["files"]
    command = command_line([server["command"], *server["args"]])
    ran = project / "upstream.log"
    params = StdioServerParameters(
        command=command[0], args=command[1:], cwd=str(project), env={**os.environ, "MCP_UPSTREAM_LOG": str(ran)}
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
    records = [json.loads(line) for line in (project / "calls.jsonl").read_text("utf-8").splitlines()]
    assert [r["name"] for r in records] == ["read_file", "echo"]


@pytest.mark.parametrize(
    ("tool", "tool_input", "decision"),
    [("Bash", {"command": "rm -rf /"}, "deny"), ("Bash", {"command": "git status"}, "allow")],
)
def test_the_claude_code_recipe_decides_a_pre_tool_use_event(
    project: Path, tool: str, tool_input: dict[str, Any], decision: str
) -> None:
    settings = json.loads(recipe("claude-code"))["hooks"]
    (hook,) = settings["PreToolUse"][0]["hooks"]
    assert settings["PostToolUse"][0]["hooks"] == [hook]
    event = {
        "session_id": "s1",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_1",
    }
    done = subprocess.run(
        command_line(shlex.split(hook["command"])), input=json.dumps(event), capture_output=True, text=True, cwd=project
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == decision


def _run_recipe(name: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run a Python recipe in `namespace`; return the namespace after it."""
    exec(compile(recipe(name), f"README.md recipe {name}", "exec"), namespace)
    return namespace


def test_the_openai_agents_recipe_pauses_for_approval_then_runs_the_body(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agents import function_tool
    from agents.testing import ScriptedModel, assistant_message, function_call

    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    ran: list[str] = []

    @function_tool
    def run_shell(command: str) -> str:
        """Run a shell command."""
        ran.append(command)
        return "cleaned"

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        ran.append(path)
        return ""

    model = ScriptedModel(
        [[function_call("run_shell", {"command": "make clean"}, call_id="c1")], [assistant_message("done")]]
    )
    after = _run_recipe("openai-agents", {"model": model, "run_shell": run_shell, "read_file": read_file})
    assert "make clean" in capsys.readouterr().out  # the approval question was put
    assert ran == ["make clean"] and after["result"].final_output == "done"


def test_the_langchain_recipe_pauses_for_approval_then_runs_the_body(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    ran: list[str] = []

    @tool
    def run_shell(command: str) -> str:
        """Run a shell command."""
        ran.append(command)
        return "cleaned"

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    call = AIMessage("", tool_calls=[{"name": "run_shell", "args": {"command": "make clean"}, "id": "c1"}])
    model = Scripted(messages=iter([call, AIMessage("done")]))
    after = _run_recipe("langchain", {"model": model, "tools": [run_shell]})
    assert "make clean" in capsys.readouterr().out
    assert ran == ["make clean"] and after["state"]["messages"][-1].content == "done"


@pytest.fixture
def server(project: Path) -> Iterator[str]:
    """`policyengine serve --pack baseline --token-file token`, as the README starts it; its URL."""
    (project / "token").write_text("readme-recipe-token\n", "utf-8")
    readme = (ROOT / "README.md").read_text("utf-8")
    started = re.search(r"With the server started as `(policyengine serve [^`]*)`", readme)
    assert started is not None, "the README says how the server is started"
    assert started.group(1) == "policyengine serve --pack baseline --token-file token"
    command = command_line(shlex.split(started.group(1)))
    process = subprocess.Popen([*command, "--port", "0"], cwd=project, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        url = None
        for line in process.stderr:  # the server says where it listens once it does
            found = re.search(r"(http://127\.0\.0\.1:\d+)", line)
            if found:
                url = found.group(1)
                break
        assert url is not None, "policyengine serve did not say where it listens"
        yield url
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("curl-decide", {"decision": "ask", "rule": "ask-before-shell"}),
        ("curl-review", {"post": "rewritten", "value": {"user": "ada", "api_token": "[REDACTED]"}}),
    ],
)
def test_the_curl_recipes_answer_as_the_readme_says(
    server: str, project: Path, name: str, expected: dict[str, Any]
) -> None:
    script = recipe(name).replace("http://127.0.0.1:8484", server)  # a free port, not the default one
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=project, timeout=30)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert {key: answer[key] for key in expected} == expected
    assert answer["pack_digest"].startswith("sha256:")


def test_every_recipe_of_the_readme_is_run_here() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    names = re.findall(r"<!-- recipe: ([\w-]+) -->", readme)
    tested = {"mcp", "claude-code", "openai-agents", "langchain", "curl-decide", "curl-review"}
    assert sorted(names) == sorted(tested)
    assert textwrap.dedent(recipe("openai-agents")) == recipe("openai-agents")  # runnable as it stands
