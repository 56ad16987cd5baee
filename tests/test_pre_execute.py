"""Stage 1, tools/pre-execute: a waterfall of listeners in registration order (SPEC.md section 4.1)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

import pytest

from policyengine import Outcome, SourceKind, Stage, ToolCall, ToolResult, allow, ask, deny
from support import RecordingApproval, make_bench

Next = Callable[..., Awaitable[Any]]


def test_listeners_run_in_registration_order() -> None:
    bench = make_bench()
    order: list[str] = []

    for label in ("first", "second", "third"):

        @bench.registry.on_pre_execute(name=label)
        async def listener(call: ToolCall, next: Next, _label: str = label) -> Any:
            order.append(_label)
            return await next()

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.OK
    assert order == ["first", "second", "third"]


def test_return_await_next_delegates_to_the_rest_of_the_chain() -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute(name="pass-through")
    async def passthrough(call: ToolCall, next: Next) -> Any:
        return await next()

    @bench.registry.on_pre_execute(name="decider")
    async def decider(call: ToolCall, next: Next) -> Any:
        return deny("decided downstream")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.reason == "decided downstream"
    assert result.source is not None
    assert result.source.name == "decider"


def test_next_returns_the_downstream_decision_to_the_caller() -> None:
    bench = make_bench()
    seen = []

    @bench.registry.on_pre_execute(name="inspector")
    async def inspector(call: ToolCall, next: Next) -> Any:
        decision = await next()
        seen.append(decision)
        return decision

    @bench.registry.on_pre_execute(name="asker")
    async def asker(call: ToolCall, next: Next) -> Any:
        return ask("check with a person")

    bench.call("greet", {"name": "Ada"})
    assert len(seen) == 1
    assert seen[0].reason == "check with a person"


def test_chain_without_listeners_allows_and_runs_the_body() -> None:
    bench = make_bench()
    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.OK
    assert result.value == "Hello, Ada!"
    assert bench.runs["greet"] == 1


def test_returned_decision_without_next_ends_the_chain() -> None:
    bench = make_bench()
    later_runs = []

    @bench.registry.on_pre_execute(name="early-allow")
    async def early(call: ToolCall, next: Next) -> Any:
        return allow()

    @bench.registry.on_pre_execute(name="later-deny")
    async def later(call: ToolCall, next: Next) -> Any:
        later_runs.append(call.call_id)
        return deny("later listener")

    result = bench.call("greet", {"name": "Ada"})
    assert later_runs == []
    assert result.outcome is Outcome.OK
    assert bench.runs["greet"] == 1


def test_deny_without_next_ends_the_chain_and_later_listeners_never_run() -> None:
    bench = make_bench()
    later_runs = []

    @bench.registry.on_pre_execute(name="gate")
    async def gate(call: ToolCall, next: Next) -> Any:
        return deny("no")

    @bench.registry.on_pre_execute(name="later")
    async def later(call: ToolCall, next: Next) -> Any:
        later_runs.append(call.call_id)
        return await next()

    result = bench.call("greet", {"name": "Ada"})
    assert later_runs == []
    assert result.outcome is Outcome.DENIED


def test_deny_becomes_error_result_with_reason_stage_and_listener_and_body_is_skipped() -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute(name="no-writes")
    async def no_writes(call: ToolCall, next: Next) -> Any:
        if call.name == "fs_write":
            return deny("fs_write is not allowed in this workspace")
        return await next()

    result = bench.call("fs_write", {"path": "notes.txt", "content": "hi"})
    assert result.outcome is Outcome.DENIED
    assert result.is_error and not result.ok
    assert result.stage is Stage.PRE_EXECUTE
    assert result.reason == "fs_write is not allowed in this workspace"
    assert "fs_write is not allowed in this workspace" in result.text
    assert result.source is not None
    assert result.source.kind is SourceKind.LISTENER
    assert result.source.name == "no-writes"
    assert result.value is None
    assert bench.runs["fs_write"] == 0
    assert bench.results == [result]


def test_default_decision_applies_at_end_of_chain() -> None:
    bench = make_bench(default=deny("closed by default"))

    @bench.registry.on_pre_execute(name="pass-through")
    async def passthrough(call: ToolCall, next: Next) -> Any:
        return await next()

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert result.reason == "closed by default"
    assert bench.runs["greet"] == 0


def test_default_decision_applies_with_no_listeners() -> None:
    bench = make_bench(default=deny("closed by default"))
    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.reason == "closed by default"
    assert bench.runs["greet"] == 0


def test_default_does_not_apply_when_a_listener_decides_without_next() -> None:
    bench = make_bench(default=deny("closed by default"))

    @bench.registry.on_pre_execute(name="opener")
    async def opener(call: ToolCall, next: Next) -> Any:
        return allow()

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.OK
    assert bench.runs["greet"] == 1


def test_default_ask_puts_the_call_to_a_person() -> None:
    approval = RecordingApproval()
    bench = make_bench(default=ask("default ask"), approval=approval)
    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.OK
    assert [r.reason for r in approval.requests] == ["default ask"]


def test_raising_listener_fails_closed_naming_the_listener() -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute(name="broken-policy")
    async def broken(call: ToolCall, next: Next) -> NoReturn:
        raise RuntimeError("database unavailable")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert result.reason is not None
    assert "broken-policy" in result.reason
    assert result.source is not None
    assert result.source.name == "broken-policy"
    assert bench.runs["greet"] == 0


@pytest.mark.parametrize("returned", [None, True, "allow", 1, {"kind": "allow"}], ids=repr)
def test_listener_returning_a_non_decision_fails_closed_naming_the_listener(returned: Any) -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute(name="sloppy-policy")
    async def sloppy(call: ToolCall, next: Next) -> Any:
        return returned

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert result.reason is not None
    assert "sloppy-policy" in result.reason
    assert result.source is not None
    assert result.source.name == "sloppy-policy"
    assert bench.runs["greet"] == 0


def test_listener_that_forgets_to_return_next_fails_closed_instead_of_allowing() -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute(name="forgetful")
    async def forgetful(call: ToolCall, next: Next) -> None:
        await next()  # the decision is dropped: the listener returns None

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.reason is not None
    assert "forgetful" in result.reason
    assert bench.runs["greet"] == 0


def test_hanging_listener_fails_closed_within_the_policy_timeout() -> None:
    bench = make_bench(policy_timeout=0.05)

    @bench.registry.on_pre_execute(name="pass-through")
    async def passthrough(call: ToolCall, next: Next) -> Any:
        return await next()

    @bench.registry.on_pre_execute(name="hangs-forever")
    async def hangs(call: ToolCall, next: Next) -> None:
        await asyncio.Event().wait()

    loop_time = []

    async def run() -> ToolResult:
        start = asyncio.get_running_loop().time()
        result = await bench.registry.call("greet", {"name": "Ada"})
        loop_time.append(asyncio.get_running_loop().time() - start)
        return result

    result = asyncio.run(run())
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert result.reason is not None
    assert "hangs-forever" in result.reason
    assert result.source is not None
    assert result.source.name == "hangs-forever"
    assert bench.runs["greet"] == 0
    assert loop_time[0] < 2.0


def test_listener_swallowing_downstream_exception_and_allowing_still_denies() -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute(name="swallower")
    async def swallower(call: ToolCall, next: Next) -> Any:
        try:
            return await next()
        except Exception:
            return allow()

    @bench.registry.on_pre_execute(name="exploding")
    async def exploding(call: ToolCall, next: Next) -> NoReturn:
        raise ValueError("boom")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert result.reason is not None
    assert "exploding" in result.reason
    assert bench.runs["greet"] == 0


def test_listener_ignoring_downstream_non_decision_and_allowing_still_denies() -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute(name="overrider")
    async def overrider(call: ToolCall, next: Next) -> Any:
        with contextlib.suppress(Exception):
            await next()
        return allow()

    @bench.registry.on_pre_execute(name="returns-none")
    async def returns_none(call: ToolCall, next: Next) -> None:
        return None

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.reason is not None
    assert "returns-none" in result.reason
    assert bench.runs["greet"] == 0


def test_source_names_the_deciding_listener_through_earlier_pass_throughs() -> None:
    bench = make_bench()

    for label in ("outer", "middle"):

        @bench.registry.on_pre_execute(name=label)
        async def passthrough(call: ToolCall, next: Next) -> Any:
            return await next()

    @bench.registry.on_pre_execute(name="inner-denier")
    async def inner(call: ToolCall, next: Next) -> Any:
        return deny("inner says no")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.source is not None
    assert result.source.kind is SourceKind.LISTENER
    assert result.source.name == "inner-denier"


def test_source_names_the_listener_that_overrode_after_next() -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute(name="outer-pass")
    async def outer(call: ToolCall, next: Next) -> Any:
        return await next()

    @bench.registry.on_pre_execute(name="overrider")
    async def overrider(call: ToolCall, next: Next) -> Any:
        await next()
        return deny("overrider says no")

    @bench.registry.on_pre_execute(name="inner-ask")
    async def inner(call: ToolCall, next: Next) -> Any:
        return ask("inner wants a person")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.reason == "overrider says no"
    assert result.source is not None
    assert result.source.name == "overrider"


def test_override_after_next_with_allow_overturns_a_downstream_deny() -> None:
    # The seed's point: a listener may call next() and return something else,
    # which is why red lines belong in guards rather than in pre-execute.
    bench = make_bench()

    @bench.registry.on_pre_execute(name="overrider")
    async def overrider(call: ToolCall, next: Next) -> Any:
        await next()
        return allow()

    @bench.registry.on_pre_execute(name="denier")
    async def denier(call: ToolCall, next: Next) -> Any:
        return deny("no")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.OK
    assert bench.runs["greet"] == 1


def test_ask_source_names_the_asking_listener_through_pass_throughs() -> None:
    approval = RecordingApproval()
    bench = make_bench(approval=approval)

    @bench.registry.on_pre_execute(name="outer-pass")
    async def outer(call: ToolCall, next: Next) -> Any:
        return await next()

    @bench.registry.on_pre_execute(name="asker")
    async def asker(call: ToolCall, next: Next) -> Any:
        return ask("needs a human")

    bench.call("greet", {"name": "Ada"})
    assert len(approval.requests) == 1
    assert approval.requests[0].source is not None
    assert approval.requests[0].source.name == "asker"


def test_listener_sees_frozen_validated_arguments() -> None:
    bench = make_bench()
    seen = []

    @bench.registry.on_pre_execute(name="reader")
    async def reader(call: ToolCall, next: Next) -> Any:
        seen.append((call.name, dict(call.arguments), call.agent))
        return await next()

    bench.call("fs_read", {"path": "README.md"}, agent="agent-7")
    assert seen == [("fs_read", {"path": "README.md"}, "agent-7")]


def test_listener_that_mutates_arguments_fails_closed_and_arguments_are_unchanged() -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute(name="rewriter")
    async def rewriter(call: ToolCall, next: Next) -> Any:
        call.arguments["path"] = "/etc/shadow"
        return await next()

    result = bench.call("fs_read", {"path": "README.md"})
    assert result.outcome is Outcome.DENIED
    assert result.reason is not None
    assert "rewriter" in result.reason
    assert result.arguments == {"path": "README.md"}
    assert bench.runs["fs_read"] == 0


def test_invalid_arguments_never_reach_a_listener() -> None:
    bench = make_bench()
    calls = []

    @bench.registry.on_pre_execute(name="watcher")
    async def watcher(call: ToolCall, next: Next) -> Any:
        calls.append(call)
        return await next()

    result = bench.call("fs_read", {"path": 42})
    assert result.outcome is Outcome.INVALID
    assert calls == []
    assert result.reason is not None
    assert "path" in result.reason
    assert bench.runs["fs_read"] == 0


def test_each_call_runs_the_chain_afresh() -> None:
    bench = make_bench()
    seen = []

    @bench.registry.on_pre_execute(name="counter")
    async def counter(call: ToolCall, next: Next) -> Any:
        seen.append(call.call_id)
        return deny("first only") if len(seen) == 1 else allow()

    first = bench.call("greet", {"name": "Ada"})
    second = bench.call("greet", {"name": "Ada"})
    assert first.outcome is Outcome.DENIED
    assert second.outcome is Outcome.OK
    assert len(set(seen)) == 2
    assert bench.runs["greet"] == 1


def test_listener_swallowing_a_downstream_timeout_and_allowing_still_denies() -> None:
    # The downstream listener did not decide within the policy deadline; an earlier
    # listener that catches the resulting cancellation and allows must not open the gate.
    bench = make_bench(policy_timeout=0.05)

    @bench.registry.on_pre_execute(name="swallower")
    async def swallower(call: ToolCall, next: Next) -> Any:
        try:
            return await next()
        except asyncio.CancelledError:
            return allow()

    @bench.registry.on_pre_execute(name="hangs-forever")
    async def hangs(call: ToolCall, next: Next) -> None:
        await asyncio.Event().wait()

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert result.reason is not None
    assert "hangs-forever" in result.reason
    assert bench.runs["greet"] == 0
