"""Sessions through `policyengine mcp-proxy`: one client connection is one session.

Every sequence of tests/data/session_sequences.yaml is replayed through a real proxy (the CLI
entry as a subprocess) in front of a real upstream (tests/mcp_session_upstream.py, which answers
each step's scripted result), one client connection per sequence; all of them at once, every
connection's session in one shared SQLite store (`--sessions`), so a session that leaked into
another connection's would change its decisions. An `ask` is put to the client by elicitation;
the client accepts, and the call runs. The proxies live on one event loop in a background thread.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import ClientRequestContext

from mcp_session_upstream import load_sequences, script
from policyengine.sessions import SqliteStore
from support import reference_entries

ROOT = Path(__file__).resolve().parents[1]
SEQUENCES = load_sequences()
T = TypeVar("T")
SESSION_LINE = re.compile(r"this client connection is session (\S+)")


@dataclass
class Connection:
    """One client connection to its own proxy: the questions it was asked, its session as the proxy named it."""

    name: str
    stderr: Path
    asked: list[str] = field(default_factory=list)
    session: ClientSession | None = None

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    @property
    def session_id(self) -> str:
        found = SESSION_LINE.search(self.stderr.read_text(encoding="utf-8"))
        assert found is not None, self.stderr.read_text(encoding="utf-8")
        return found.group(1)


class Proxies:
    """Client connections to proxies, held open on an event loop in a background thread."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.stop = asyncio.Event()
        self.holders: list[asyncio.Future[None]] = []

    def params(self, name: str, pack: str, plan: dict[str, Any], store: str | None) -> StdioServerParameters:
        plan_file = self.tmp / f"{name}.json"
        plan_file.write_text(json.dumps(plan), encoding="utf-8")
        sessions = ["--sessions", store] if store else []
        args = ["-m", "policyengine", "mcp-proxy", "--pack", str(ROOT / "policies" / pack), *sessions, "--cwd"]
        args += [str(self.tmp), "--", sys.executable, str(ROOT / "tests" / "mcp_session_upstream.py")]
        return StdioServerParameters(
            command=sys.executable, args=args, cwd=str(ROOT), env={"MCP_SESSION_SCRIPT": str(plan_file)}
        )

    async def hold(self, connection: Connection, params: StdioServerParameters, ready: asyncio.Future[None]) -> None:
        with open(connection.stderr, "w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, elicitation_callback=connection.elicit) as session,
            ):
                await session.initialize()
                connection.session = session
                ready.set_result(None)
                await self.stop.wait()

    def open(self, wanted: Sequence[tuple[str, str, dict[str, Any], str | None]]) -> list[Connection]:
        """Start a proxy per (name, pack, upstream script, store) and connect to each, all at once."""
        connections = [Connection(name, self.tmp / f"{name}.stderr") for name, *_ in wanted]

        async def start() -> None:
            readies: list[asyncio.Future[None]] = []
            for connection, (name, pack, plan, store) in zip(connections, wanted, strict=True):
                ready = self.loop.create_future()
                readies.append(ready)
                held = asyncio.ensure_future(self.hold(connection, self.params(name, pack, plan, store), ready))
                self.holders.append(held)
            every: asyncio.Future[Any] = asyncio.gather(*readies)
            waited: list[asyncio.Future[Any]] = [every, *self.holders]
            await asyncio.wait(waited, timeout=90, return_when=asyncio.FIRST_COMPLETED)
            for holder in self.holders:
                if holder.done():
                    holder.result()  # a proxy that failed to start raises here
            if not every.done():
                raise TimeoutError("the proxies did not start within 90s")

        self.run(start(), timeout=120)
        return connections

    def run(self, coro: Awaitable[T], timeout: float = 60) -> T:
        async def wrap() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(timeout)

    def call(self, connection: Connection, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        assert connection.session is not None
        return self.run(connection.session.call_tool(tool, arguments))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        try:
            self.run(asyncio.wait(self.holders, timeout=15), timeout=20)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)


def _store(tmp: Path) -> str:
    return f"sqlite:{tmp / 'sessions.sqlite3'}"


@pytest.fixture(scope="module")
def proxies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxies]:
    tmp = tmp_path_factory.mktemp("session-proxies")
    held = Proxies(tmp)
    try:
        yield held
    finally:
        held.close()


def _decision(result: types.CallToolResult) -> tuple[str, str | None]:
    """What policy answered, as the client sees it: allow (the tool's result), or denied and by which rule."""
    meta = result.meta or {}
    if not result.is_error:
        return "allow", None
    return str(meta.get("policyengine/outcome")), meta.get("policyengine/rule")


async def _replay(sequence: dict[str, Any], connection: Connection, store: SqliteStore) -> list[str]:
    """Each step's call on the connection, and what differs from what the step expects."""
    assert connection.session is not None
    problems: list[str] = []
    for number, step in enumerate(sequence["steps"], 1):
        call, expect = step["call"], step["expect"]
        asked = len(connection.asked)
        result = await connection.session.call_tool(call["name"], call["arguments"])
        got = _decision(result)
        if expect["decision"] == "ask":
            # Put to the person by elicitation, naming the rule; accepted, so the call ran.
            questions = connection.asked[asked:]
            ok = len(questions) == 1 and f"(rule {expect['rule']})" in questions[0] and got == ("allow", None)
        elif expect["decision"] == "allow":
            ok = len(connection.asked) == asked and got == ("allow", None)
        else:
            ok = got == ("denied", expect["rule"])
        if "labels" in expect and not set(expect["labels"]) <= set(store.load(connection.session_id).labels):
            ok = False
        if not ok:
            problems.append(f"{sequence['name']}, step {number} ({call['name']}): expected {expect}, got {got}")
    return problems


# One replay keeps its session in the proxy's own memory (no --sessions: the default); its entries are not
# in the shared store, so only its decisions are checked.
IN_MEMORY = next(i for i, s in enumerate(SEQUENCES) if s["name"] == "bfcl: the 21st payment within an hour is denied")


def test_every_sequence_replays_through_its_own_client_connection(proxies: Proxies) -> None:
    """All sequences at once, one connection each, every connection's session in one shared store (but one)."""
    shared = _store(proxies.tmp)
    wanted = [(f"seq{i}", s["pack"], script(s), None if i == IN_MEMORY else shared) for i, s in enumerate(SEQUENCES)]
    connections = proxies.open(wanted)
    store = SqliteStore(shared.removeprefix("sqlite:"))
    try:

        async def every() -> list[list[str]]:
            replays = (_replay(s, c, store) for s, c in zip(SEQUENCES, connections, strict=True))
            return list(await asyncio.gather(*replays))

        problems = [p for found in proxies.run(every(), timeout=120) for p in found]
        assert problems == []
        # One session per connection, and in it the decision entries the reference path writes (a call a rule
        # can read later, once: a review writes no second one).
        assert len({c.session_id for c in connections}) == len(connections)
        for i, (sequence, connection) in enumerate(zip(SEQUENCES, connections, strict=True)):
            decided = [e.step.value for e in store.entries(connection.session_id) if e.step.value != "result"]
            expected = [] if i == IN_MEMORY else reference_entries(sequence, with_cwd=False)  # MCP calls carry no cwd
            assert decided == expected, sequence["name"]
    finally:
        store.close()


CREDENTIAL = next(s for s in SEQUENCES if s["name"] == "baseline: a credential read, then a network tool, is denied")


def test_two_client_connections_are_two_sessions(proxies: Proxies) -> None:
    plan = script(CREDENTIAL)
    plan["results"]["fs_read"] = plan["results"]["fs_read"] * 2
    store = f"sqlite:{proxies.tmp / 'two.sqlite3'}"
    first, second = proxies.open([("first", "baseline", plan, store), ("second", "baseline", plan, store)])
    read, fetch = (step["call"] for step in CREDENTIAL["steps"])
    assert _decision(proxies.call(first, read["name"], read["arguments"])) == ("allow", None)
    # The credential is the first connection's: the second connection fetches.
    assert _decision(proxies.call(second, fetch["name"], fetch["arguments"])) == ("allow", None)
    assert _decision(proxies.call(first, fetch["name"], fetch["arguments"])) == (
        "denied",
        "deny-egress-after-credentials",
    )
    assert first.session_id != second.session_id


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_session_store_that_fails_denies_the_call(proxies: Proxies, tmp_path: Path) -> None:
    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = _free_port()
    try:
        redis = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError as error:
        pytest.skip(f"SKIPPED LOUDLY: redis-server could not start ({error}); the store-failure test did not run")
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if redis.poll() is not None or time.monotonic() > deadline:
                    pytest.skip(f"SKIPPED LOUDLY: redis-server did not listen on port {port}; the test did not run")
                time.sleep(0.05)
        payments = SEQUENCES[IN_MEMORY]  # bfcl: its rules count the session's payments
        [connection] = proxies.open([("redis", "bfcl", script(payments), f"redis://127.0.0.1:{port}/0")])
        read = payments["steps"][0]["call"]
        assert _decision(proxies.call(connection, read["name"], read["arguments"])) == ("allow", None)
    finally:
        redis.terminate()
        redis.wait(10)
    # The store is gone: a call whose rules read the session is refused, saying why.
    result = proxies.call(connection, read["name"], read["arguments"])
    assert result.is_error
    assert (result.meta or {}).get("policyengine/outcome") == "denied"
    text = " ".join(block.text for block in result.content if isinstance(block, types.TextContent))
    assert "the session store failed" in text
