"""Stage 2, monotonic guards, and the seed's four release checks (SPEC.md section 4.2)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

import pytest

from policyengine import ApprovalAnswer, Deny, Outcome, SourceKind, Stage, ToolCall, allow, ask, deny
from support import Kit, RecordingApproval, make_bench

DENY_TOOLS = {"fs_write", "fs_edit"}

Next = Callable[..., Awaitable[Any]]


async def permission_gate(call: ToolCall, next: Next) -> Any:
    """The seed's permission gate: blacklisted tools and .env arguments are denied."""
    if call.name in DENY_TOOLS:
        return deny(f"Denied by policy: {call.name} may not write files in this workspace.")
    path = call.arguments.get("path")
    if isinstance(path, str) and ".env" in path:
        return deny(f"Denied by policy: {path} may hold secrets.")
    return await next()


def seed_gate_bench(**kwargs: Any) -> Kit:
    """A bench with the seed's permission gate installed."""
    bench = make_bench(**kwargs)
    bench.registry.on_pre_execute(permission_gate, name="permission-gate")
    return bench


# -- the seed's four release checks ------------------------------------------------


def test_release_check_blacklisted_tool_returns_deny_error_result_and_body_never_runs() -> None:
    bench = seed_gate_bench()
    result = bench.call("fs_write", {"path": "notes.txt", "content": "hi"})
    assert result.outcome is Outcome.DENIED
    assert result.is_error
    assert result.stage is Stage.PRE_EXECUTE
    assert result.source is not None
    assert result.source.name == "permission-gate"
    assert result.reason is not None
    assert "fs_write may not write files" in result.reason
    assert "fs_write may not write files" in result.text
    assert result.value is None
    assert "wrote" not in result.text
    assert bench.runs["fs_write"] == 0


def test_release_check_sensitive_env_argument_is_refused() -> None:
    bench = seed_gate_bench()
    result = bench.call("fs_read", {"path": "config/.env"})
    assert result.outcome is Outcome.DENIED
    assert result.reason is not None
    assert "config/.env" in result.reason
    assert result.source is not None
    assert result.source.name == "permission-gate"
    assert bench.runs["fs_read"] == 0


def test_release_check_normal_tool_still_returns_its_real_result() -> None:
    bench = seed_gate_bench()
    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.OK
    assert result.value == "Hello, Ada!"
    assert result.text == "Hello, Ada!"
    assert result.reason is None
    assert bench.runs["greet"] == 1


def test_release_check_no_pre_execute_allow_passes_a_guard_red_line() -> None:
    bench = make_bench()
    reg = bench.registry

    # First in the chain: calls next() and returns allow() whatever the rest decided.
    @reg.on_pre_execute(name="override-after-next")
    async def override_after_next(call: ToolCall, next: Next) -> Any:
        await next()
        return allow()

    reg.on_pre_execute(permission_gate, name="permission-gate")

    # After the gate: allows outright whatever the gate let through.
    @reg.on_pre_execute(name="allow-everything")
    async def allow_everything(call: ToolCall, next: Next) -> Any:
        return allow()

    @reg.guard(name="no-system-dirs")
    def no_system_dirs(call: ToolCall) -> str | None:
        path = call.arguments.get("path", "")
        return f"Red line: {path} is a system directory." if path.startswith("/etc") else None

    for path in ("/etc/passwd", "/etc/.env"):
        result = bench.call("fs_read", {"path": path})
        assert result.outcome is Outcome.DENIED
        assert result.stage is Stage.GUARD
        assert result.source is not None
        assert result.source.kind is SourceKind.GUARD
        assert result.source.name == "no-system-dirs"
        assert result.reason == f"Red line: {path} is a system directory."
    assert bench.runs["fs_read"] == 0
    # The override really does overturn pre-execute's own deny; only the guard held above.
    assert bench.call("fs_read", {"path": "config/.env"}).outcome is Outcome.OK
    assert bench.runs["fs_read"] == 1


def test_guard_denial_survives_allow_from_overriding_listener_around_a_deny() -> None:
    bench = make_bench()
    reg = bench.registry

    @reg.on_pre_execute(name="overrider")
    async def overrider(call: ToolCall, next: Next) -> Any:
        await next()  # whatever the rest decides (a deny below) ...
        return allow()  # ... is overridden

    @reg.on_pre_execute(name="denier")
    async def denier(call: ToolCall, next: Next) -> Any:
        return deny("pre-execute says no")

    @reg.guard(name="red-line")
    def red_line(call: ToolCall) -> str | None:
        return "never on /etc" if call.arguments["path"].startswith("/etc") else None

    result = bench.call("fs_read", {"path": "/etc/passwd"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.source is not None
    assert result.source.name == "red-line"
    assert bench.runs["fs_read"] == 0
    # the override itself works when no guard objects: the guard is the only thing that held
    ok = bench.call("fs_read", {"path": "README.md"})
    assert ok.outcome is Outcome.OK


def test_guard_denial_survives_allow_from_later_listener() -> None:
    bench = make_bench()
    reg = bench.registry

    @reg.guard(name="no-rm")
    def no_rm(call: ToolCall) -> str | None:
        return "rm -rf is a red line" if "rm -rf" in call.arguments["command"] else None

    @reg.on_pre_execute(name="later-allow")
    async def later_allow(call: ToolCall, next: Next) -> Any:
        return allow()

    result = bench.call("shell", {"command": "rm -rf /"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.reason == "rm -rf is a red line"
    assert bench.runs["shell"] == 0


# -- guard semantics ---------------------------------------------------------------


def test_guard_string_denies_at_guard_stage_naming_the_guard() -> None:
    bench = make_bench()

    @bench.registry.guard(name="no-shell")
    def no_shell(call: ToolCall) -> str | None:
        return "shell is off" if call.name == "shell" else None

    result = bench.call("shell", {"command": "ls"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.source is not None
    assert result.source.kind is SourceKind.GUARD
    assert result.source.name == "no-shell"
    assert result.reason == "shell is off"
    assert "shell is off" in result.text
    assert bench.runs["shell"] == 0


def test_guard_returning_none_abstains() -> None:
    bench = make_bench()
    seen = []

    @bench.registry.guard(name="abstains")
    def abstains(call: ToolCall) -> None:
        seen.append(call.name)
        return None

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.OK
    assert seen == ["greet"]
    assert bench.runs["greet"] == 1


def test_guard_returning_empty_string_still_denies() -> None:
    bench = make_bench()

    @bench.registry.guard(name="terse")
    def terse(call: ToolCall) -> str:
        return ""

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.reason is not None
    assert "terse" in result.reason
    assert bench.runs["greet"] == 0


def test_every_guard_applies_and_the_first_denial_decides() -> None:
    bench = make_bench()
    ran = []

    @bench.registry.guard(name="abstain-1")
    def g1(call: ToolCall) -> None:
        ran.append("abstain-1")

    @bench.registry.guard(name="deny-2")
    def g2(call: ToolCall) -> str:
        ran.append("deny-2")
        return "second guard says no"

    @bench.registry.guard(name="deny-3")
    def g3(call: ToolCall) -> str:
        ran.append("deny-3")
        return "third guard says no"

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.source is not None
    assert result.source.name == "deny-2"
    assert ran[:2] == ["abstain-1", "deny-2"]
    assert bench.runs["greet"] == 0


def test_guard_that_raises_denies_naming_the_guard() -> None:
    bench = make_bench()

    @bench.registry.guard(name="explodes")
    def explodes(call: ToolCall) -> NoReturn:
        raise KeyError("missing")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.source is not None
    assert result.source.name == "explodes"
    assert result.reason is not None
    assert "explodes" in result.reason
    assert bench.runs["greet"] == 0


@pytest.mark.parametrize("returned", [True, False, 0, ["reason"], allow()], ids=repr)
def test_guard_returning_a_non_string_denies(returned: Any) -> None:
    bench = make_bench()

    @bench.registry.guard(name="odd-guard")
    def odd_guard(call: ToolCall) -> Any:
        return returned

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.source is not None
    assert result.source.name == "odd-guard"
    assert result.reason is not None
    assert "odd-guard" in result.reason
    assert bench.runs["greet"] == 0


def test_guard_returning_a_deny_decision_still_denies() -> None:
    bench = make_bench()

    @bench.registry.guard(name="deny-object")
    def deny_object(call: ToolCall) -> Deny:
        return deny("typed red line")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.reason == "typed red line"
    assert bench.runs["greet"] == 0


def test_async_guard_denies() -> None:
    bench = make_bench()

    @bench.registry.guard(name="async-red-line")
    async def async_guard(call: ToolCall) -> str | None:
        await asyncio.sleep(0)
        return "async says no" if call.name == "shell" else None

    denied = bench.call("shell", {"command": "ls"})
    allowed = bench.call("greet", {"name": "Ada"})
    assert denied.outcome is Outcome.DENIED
    assert denied.stage is Stage.GUARD
    assert denied.reason == "async says no"
    assert denied.source is not None
    assert denied.source.name == "async-red-line"
    assert allowed.outcome is Outcome.OK
    assert bench.runs == {"greet": 1}


def test_async_guard_that_raises_denies() -> None:
    bench = make_bench()

    @bench.registry.guard(name="async-explodes")
    async def async_explodes(call: ToolCall) -> NoReturn:
        raise RuntimeError("nope")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.reason is not None
    assert "async-explodes" in result.reason
    assert bench.runs["greet"] == 0


def test_hanging_guard_denies_within_the_policy_timeout() -> None:
    bench = make_bench(policy_timeout=0.05)

    @bench.registry.guard(name="slow-guard")
    async def slow_guard(call: ToolCall) -> None:
        await asyncio.Event().wait()

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.reason is not None
    assert "slow-guard" in result.reason
    assert bench.runs["greet"] == 0


def test_guard_cannot_mutate_arguments() -> None:
    bench = make_bench()

    @bench.registry.guard(name="tamperer")
    def tamperer(call: ToolCall) -> None:
        call.arguments["paths"].append("/etc/passwd")

    result = bench.call("fs_delete", {"paths": ["a.txt"]})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.arguments == {"paths": ["a.txt"]}
    assert bench.runs["fs_delete"] == 0


def test_guards_do_not_run_when_pre_execute_denied() -> None:
    bench = make_bench()
    guard_calls = []

    @bench.registry.on_pre_execute(name="gate")
    async def gate(call: ToolCall, next: Next) -> Any:
        return deny("gate says no")

    @bench.registry.guard(name="watcher")
    def watcher(call: ToolCall) -> str:
        guard_calls.append(call.call_id)
        return "guard says no"

    result = bench.call("greet", {"name": "Ada"})
    assert guard_calls == []
    assert result.stage is Stage.PRE_EXECUTE
    assert result.reason == "gate says no"


def test_guards_run_on_every_call_pre_execute_did_not_deny() -> None:
    bench = make_bench()
    guard_calls = []

    @bench.registry.on_pre_execute(name="allower")
    async def allower(call: ToolCall, next: Next) -> Any:
        return allow()

    @bench.registry.guard(name="watcher")
    def watcher(call: ToolCall) -> None:
        guard_calls.append(call.name)

    for name, args in (("greet", {"name": "A"}), ("shell", {"command": "ls"}), ("fs_read", {"path": "x"})):
        assert bench.call(name, args).outcome is Outcome.OK
    assert guard_calls == ["greet", "shell", "fs_read"]


def test_guard_refusal_is_never_put_to_a_person() -> None:
    approval = RecordingApproval(ApprovalAnswer.ALLOWED_ONCE)
    bench = make_bench(approval=approval)

    @bench.registry.on_pre_execute(name="asker")
    async def asker(call: ToolCall, next: Next) -> Any:
        return ask("please confirm")

    @bench.registry.guard(name="red-line")
    def red_line(call: ToolCall) -> str | None:
        return "red line" if call.arguments["command"].startswith("sudo") else None

    refused = bench.call("shell", {"command": "sudo reboot"})
    assert refused.outcome is Outcome.DENIED
    assert refused.stage is Stage.GUARD
    assert refused.source is not None
    assert refused.source.name == "red-line"
    assert approval.requests == []
    assert bench.runs["shell"] == 0

    granted = bench.call("shell", {"command": "ls"})
    assert granted.outcome is Outcome.OK
    assert len(approval.requests) == 1


def test_raising_guard_is_never_put_to_a_person() -> None:
    approval = RecordingApproval(ApprovalAnswer.ALLOWED_ONCE)
    bench = make_bench(approval=approval, default=ask("default ask"))

    @bench.registry.guard(name="explodes")
    def explodes(call: ToolCall) -> NoReturn:
        raise RuntimeError("guard bug")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert approval.requests == []
    assert bench.runs["greet"] == 0


def test_guard_sees_the_call_identity() -> None:
    bench = make_bench()
    seen = []

    @bench.registry.guard(name="reader")
    def reader(call: ToolCall) -> None:
        seen.append((call.name, dict(call.arguments), call.agent, call.call_id))

    result = bench.call("fs_read", {"path": "a.txt"}, agent="bot", call_id="call-1")
    assert seen == [("fs_read", {"path": "a.txt"}, "bot", "call-1")]
    assert result.call_id == "call-1"


def test_guard_that_overruns_the_policy_timeout_denies_even_if_it_swallows_the_cancel() -> None:
    bench = make_bench(policy_timeout=0.05)

    @bench.registry.guard(name="late-guard")
    async def late_guard(call: ToolCall) -> str | None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return None  # "abstains" only after the deadline has passed
        return "unreachable"

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.reason is not None
    assert "late-guard" in result.reason
    assert bench.runs["greet"] == 0
