"""`mode: monitor` on the long-running front ends, each really started: the MCP proxy (the SDK's client and an
upstream written with the SDK), the LangChain adapter (`create_agent`), the OpenAI Agents SDK adapter, and the
decision service (Uvicorn on a free port). In each, a monitored deny does not block the call, and its hit is
recorded where that front end records or returns what it decided.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from mcp import ClientSession, StdioServerParameters, stdio_client

from langchain_chat import ScriptedChat
from policyengine.adapters.langchain import PolicyMiddleware
from policyengine.adapters.openai_agents import PolicyGuard
from policyengine.service.app import create_app
from policyengine.service.decision_log import open_decision_log
from policyengine.service.packs_state import PacksState
from served import Served
from support import ROOT, rules_pack

# One rule being staged: enforced, it would deny every write; in monitor mode it only says so.
STAGED = {
    "id": "no-writes",
    "stage": "pre-execute",
    "tools": ["write_file"],
    "decision": "deny",
    "reason": "writes are being staged off",
    "mode": "monitor",
}
HIT = {
    "rule": "no-writes",
    "pack": "staged",
    "stage": "pre-execute",
    "would": "deny",
    "reason": "writes are being staged off",
}
WRITES: list[str] = []


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    WRITES.clear()
    return rules_pack(tmp_path, "staged", [STAGED])


# -- the MCP proxy ------------------------------------------------------------------------------


def test_the_mcp_proxy_passes_a_monitored_deny_upstream_and_audits_its_hit(pack: Path, tmp_path: Path) -> None:
    audit, log = tmp_path / "audit.jsonl", tmp_path / "upstream.log"
    upstream = [sys.executable, str(ROOT / "tests" / "mcp_upstream_server.py")]
    args = ["-m", "policyengine", "mcp-proxy", "--pack", str(pack), "--audit", str(audit), "--", *upstream]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env={"MCP_UPSTREAM_LOG": str(log)})

    async def call() -> Any:
        with open(tmp_path / "proxy.stderr", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool("write_file", {"path": "notes.txt", "content": "x"})

    result = asyncio.run(asyncio.wait_for(call(), 60))
    assert not result.is_error and result.content[0].text == "write_file done"
    assert log.read_text("utf-8").split() == ["write_file"]  # the call reached the upstream tool
    [record] = [json.loads(line) for line in audit.read_text("utf-8").splitlines()]
    assert (record["name"], record["decision"]) == ("write_file", "allow")
    assert record["monitored"] == [HIT]


# -- LangChain ---------------------------------------------------------------------------------


@tool
def write_file(path: str) -> str:
    """Write a file."""
    WRITES.append(path)
    return "written"


def test_langchain_runs_a_monitored_deny_and_its_tool_message_carries_the_hit(
    pack: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agent = create_agent(ScriptedChat(), [write_file], middleware=[PolicyMiddleware(packs=[pack])])
    with caplog.at_level(logging.INFO, logger="policyengine.monitor"):
        state = agent.invoke({"messages": [HumanMessage(json.dumps([["write_file", {"path": "a.txt"}]]))]})
    assert WRITES == ["a.txt"]
    [message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert (message.content, message.status) == ("written", "success")
    assert message.response_metadata["policyengine"] == {"monitored": [HIT]}
    assert "rule no-writes (pre-execute) would deny: writes are being staged off" in caplog.text


# -- the OpenAI Agents SDK -----------------------------------------------------------------------


@function_tool
def write_file_tool(path: str) -> str:
    """Write a file."""
    WRITES.append(path)
    return "written"


def test_the_agents_sdk_runs_a_monitored_deny_and_its_guardrail_result_carries_the_hit(pack: Path) -> None:
    write_file_tool.name = "write_file"
    [protected] = PolicyGuard(packs=[pack]).protect([write_file_tool])
    model = ScriptedModel(
        [[function_call("write_file", {"path": "b.txt"}, call_id="w1")], [assistant_message("wrote it")]]
    )
    agent = Agent(name="ops", model=model, tools=[protected])
    result = Runner.run_sync(agent, "write b.txt", run_config=RunConfig(tracing_disabled=True))
    assert WRITES == ["b.txt"] and result.final_output == "wrote it"
    [checked] = result.tool_input_guardrail_results
    assert checked.output.output_info["decision"] == "allow"
    assert checked.output.output_info["monitored"] == [HIT]


# -- the decision service --------------------------------------------------------------------------


def test_serve_allows_a_monitored_deny_and_its_decision_log_record_holds_the_hit(pack: Path, tmp_path: Path) -> None:
    log_path = tmp_path / "decisions.jsonl"
    decision_log = open_decision_log(str(log_path))
    served = Served(create_app(PacksState([pack]), decision_log=decision_log, reload_interval=None))
    try:
        with httpx.Client(base_url=served.url, timeout=10) as client:
            reply = client.post("/v1/decide", json={"name": "write_file", "arguments": {"path": "c.txt"}})
            assert reply.status_code == 200 and reply.json()["decision"] == "allow"
            deadline = time.monotonic() + 10
            while not log_path.exists() or not log_path.read_text("utf-8").strip():
                assert time.monotonic() < deadline, "nothing was logged"
                time.sleep(0.02)
    finally:
        served.stop()
    [record] = [json.loads(line) for line in log_path.read_text("utf-8").splitlines()]
    assert (record["name"], record["decision"]) == ("write_file", "allow")
    assert record["monitored"] == [HIT]
