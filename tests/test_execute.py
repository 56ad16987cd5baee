"""Stage 3, tools/execute: the body and the wrappers around it (SPEC.md sections 2 and 4.3)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, cast

import pytest

from policyengine import (
    AbortKind,
    Dispatch,
    FrozenDict,
    FrozenError,
    FrozenList,
    Outcome,
    Registry,
    Signal,
    Source,
    SourceKind,
    Stage,
    ToolCall,
    ToolResult,
    block,
)
from support import Probe, make_registry, make_tool, wait_until

HANG = 3.0  # how long a "hanging" body sleeps if nothing stops it

Next = Callable[..., Awaitable[Any]]

LIST_PARAMS = {
    "path": {"type": "string", "required": True},
    "tags": {"type": "list", "schema": {"type": "string"}},
}


def add_deadline(registry: Registry, seconds: float, name: str = "deadline") -> Callable[..., Any]:
    """Install an execute wrapper that replaces the signal with Signal.timeout(seconds)."""

    @registry.on_execute(name=name)
    async def wrapper(dispatch: Dispatch, next: Next) -> Any:
        return await next(dispatch.with_signal(Signal.timeout(seconds)))

    return wrapper


# -- arguments ------------------------------------------------------------------


def test_body_receives_deep_frozen_arguments_that_the_caller_can_no_longer_change() -> None:
    probe = Probe()
    release = asyncio.Event()

    async def body(args: Any) -> str:
        probe.seen(args)
        await release.wait()
        return f"{args['path']}:{','.join(args['tags'])}"

    registry, recorder = make_registry(make_tool("echo", body, parameters=LIST_PARAMS))

    async def scenario() -> ToolResult:
        original: dict[str, Any] = {"path": "a.txt", "tags": ["x", "y"]}
        task = asyncio.create_task(registry.call("echo", original))
        await wait_until(lambda: probe.runs == 1)
        original["path"] = "/etc/shadow"  # the caller changes its own dict mid-call
        original["tags"].append("z")
        release.set()
        return await task

    result = asyncio.run(scenario())
    assert result.outcome is Outcome.OK
    assert result.value == "a.txt:x,y"
    args = probe.arguments[0]
    assert isinstance(args, FrozenDict)
    assert isinstance(args["tags"], FrozenList)
    assert args == {"path": "a.txt", "tags": ["x", "y"]}
    assert recorder.results[0].arguments == {"path": "a.txt", "tags": ["x", "y"]}


MUTATIONS = {
    "set item": lambda args: args.__setitem__("path", "/etc/passwd"),
    "delete item": lambda args: args.__delitem__("path"),
    "update": lambda args: args.update(path="/etc/passwd"),
    "pop": lambda args: args.pop("path"),
    "nested append": lambda args: args["tags"].append("root"),
    "nested set": lambda args: args["tags"].__setitem__(0, "root"),
}


@pytest.mark.parametrize("mutation", MUTATIONS.values(), ids=MUTATIONS.keys())
@pytest.mark.parametrize("kind", ["async", "thread", "inline"])
def test_body_that_mutates_its_arguments_gets_an_error_result_not_a_crash(
    kind: str, mutation: Callable[[Any], Any]
) -> None:
    def sync_body(args: Any) -> str:
        mutation(args)
        return "mutated"

    async def async_body(args: Any) -> str:
        mutation(args)
        return "mutated"

    body = async_body if kind == "async" else sync_body
    tool = make_tool("echo", body, parameters=LIST_PARAMS, run_in_thread=kind == "thread")
    registry, recorder = make_registry(tool)

    result = registry.call_sync("echo", {"path": "a.txt", "tags": ["x"]})

    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.EXECUTE
    assert result.source == Source(SourceKind.TOOL, "echo")
    assert result.reason is not None
    assert FrozenError.__name__ in result.reason
    assert result.value is None
    assert result.arguments == {"path": "a.txt", "tags": ["x"]}
    assert recorder.outcomes == [Outcome.ERROR]


# -- async, threaded and inline bodies -------------------------------------------


def test_async_body_with_two_parameters_gets_a_dispatch_whose_arguments_are_the_call_arguments() -> None:
    probe = Probe()

    async def body(args: Any, ctx: Dispatch) -> str:
        probe.seen(args, ctx)
        return "ok"

    registry, _ = make_registry(make_tool("echo", body, parameters={"path": {"type": "string"}}))
    result = registry.call_sync("echo", {"path": "a"})

    assert result.outcome is Outcome.OK
    ctx = probe.contexts[0]
    assert isinstance(ctx, Dispatch)
    assert isinstance(ctx.signal, Signal)
    assert not ctx.signal.aborted
    assert ctx.arguments is probe.arguments[0]
    assert result.arguments == probe.arguments[0]


def test_async_body_value_is_validated_rendered_and_returned() -> None:
    async def body(args: Any) -> str:
        return "hi"

    registry, _ = make_registry(make_tool("echo", body))
    result = registry.call_sync("echo")
    assert result.outcome is Outcome.OK
    assert result.value == "hi"
    assert result.text == "rendered:hi"


def test_sync_body_runs_in_a_worker_thread_by_default() -> None:
    probe = Probe()

    def body(args: Any, ctx: Dispatch) -> str:
        probe.seen(args, ctx)
        return "threaded"

    registry, recorder = make_registry(make_tool("echo", body))
    result = registry.call_sync("echo")

    assert result.outcome is Outcome.OK
    assert result.value == "threaded"
    assert probe.runs == 1
    assert probe.threads[0] != recorder.threads[0], "the body ran on the event-loop thread"


def test_sync_body_with_run_in_thread_false_runs_inline_on_the_loop_thread() -> None:
    probe = Probe()

    def body(args: Any) -> str:
        probe.seen(args)
        return "inline"

    registry, recorder = make_registry(make_tool("echo", body, run_in_thread=False))
    result = registry.call_sync("echo")

    assert result.outcome is Outcome.OK
    assert result.value == "inline"
    assert probe.threads == [recorder.threads[0]]


# -- errors from the body -----------------------------------------------------------


@pytest.mark.parametrize("kind", ["async", "thread", "inline"])
def test_raising_body_is_an_error_at_execute_naming_the_tool_and_the_exception(kind: str) -> None:
    def sync_body(args: Any) -> NoReturn:
        raise ValueError("disk on fire")

    async def async_body(args: Any) -> NoReturn:
        raise ValueError("disk on fire")

    body = async_body if kind == "async" else sync_body
    registry, recorder = make_registry(make_tool("echo", body, run_in_thread=kind == "thread"))

    result = registry.call_sync("echo")

    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.EXECUTE
    assert result.source == Source(SourceKind.TOOL, "echo")
    assert result.reason is not None
    assert "'echo'" in result.reason
    assert "ValueError" in result.reason
    assert "disk on fire" in result.reason
    assert result.text == result.reason  # the model reads why
    assert result.value is None
    assert recorder.results == [result]


@pytest.mark.parametrize(
    "returned",
    [42, None, ["hello"], {"text": "hello"}],
    ids=["int", "none", "list", "dict"],
)
def test_body_value_that_fails_the_output_schema_is_an_error(returned: Any) -> None:
    async def body(args: Any) -> Any:
        return returned

    registry, recorder = make_registry(make_tool("echo", body))
    result = registry.call_sync("echo")

    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.EXECUTE
    assert result.source == Source(SourceKind.TOOL, "echo")
    assert result.reason is not None
    assert "output schema" in result.reason
    assert result.value is None
    assert recorder.outcomes == [Outcome.ERROR]


def test_body_value_that_is_not_json_data_is_an_error() -> None:
    async def body(args: Any) -> object:
        return object()

    registry, _ = make_registry(make_tool("echo", body, schema={}))
    result = registry.call_sync("echo")
    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.EXECUTE
    assert result.value is None


# -- deadlines and cancellation -------------------------------------------------------


def test_hanging_async_body_is_stopped_by_a_wrapper_deadline_and_times_out() -> None:
    seen: dict[str, Any] = {}

    async def body(args: Any, ctx: Dispatch) -> str:
        try:
            await asyncio.sleep(HANG)
        except asyncio.CancelledError:
            seen["cancelled"] = True
            seen["reason"] = ctx.signal.reason
            raise
        return "never"

    registry, recorder = make_registry(make_tool("echo", body))
    add_deadline(registry, 0.05)

    started = time.monotonic()
    result = registry.call_sync("echo")
    elapsed = time.monotonic() - started

    assert result.outcome is Outcome.TIMED_OUT
    assert result.stage is Stage.EXECUTE
    assert result.value is None
    assert elapsed < 2.0
    assert seen["cancelled"] is True
    assert seen["reason"].kind is AbortKind.TIMEOUT
    assert recorder.outcomes == [Outcome.TIMED_OUT]


def test_hanging_thread_body_sees_the_wrapper_deadline_on_its_signal_and_the_call_times_out() -> None:
    noticed = threading.Event()

    def body(args: Any, ctx: Dispatch) -> str:
        stop = time.monotonic() + HANG
        while time.monotonic() < stop:
            if ctx.signal.aborted:
                noticed.set()
                break
            time.sleep(0.002)
        return "late"

    registry, _ = make_registry(make_tool("echo", body))
    add_deadline(registry, 0.03)

    result = registry.call_sync("echo")
    assert result.outcome is Outcome.TIMED_OUT
    assert result.stage is Stage.EXECUTE
    assert noticed.wait(2.0), "the body never saw its signal fire"


@pytest.mark.parametrize(
    "replacement",
    [Signal, lambda: Signal.timeout(30.0)],
    ids=["plain-signal", "long-deadline"],
)
def test_caller_cancel_reaches_the_body_after_a_wrapper_replaced_the_signal(replacement: Callable[[], Signal]) -> None:
    caller = Signal()
    seen: dict[str, Any] = {}

    async def body(args: Any, ctx: Dispatch) -> str:
        seen["signal"] = ctx.signal
        try:
            await ctx.signal.wait()
            seen["woke"] = True
            await asyncio.sleep(HANG)
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise
        return "never"

    registry, recorder = make_registry(make_tool("echo", body))
    wrapper_signals: list[Signal] = []

    @registry.on_execute(name="replace-signal")
    async def replace(dispatch: Dispatch, next: Next) -> Any:
        mine = replacement()
        wrapper_signals.append(mine)
        return await next(dispatch.with_signal(mine))

    async def scenario() -> ToolResult:
        task = asyncio.create_task(registry.call("echo", signal=caller))
        await wait_until(lambda: "signal" in seen)
        caller.abort("user pressed stop")
        return await asyncio.wait_for(task, 2.0)

    result = asyncio.run(scenario())

    assert result.outcome is Outcome.CANCELLED
    assert result.stage is Stage.EXECUTE
    assert result.reason is not None
    assert "user pressed stop" in result.reason
    body_signal = seen["signal"]
    assert body_signal.aborted
    assert body_signal.reason.kind is AbortKind.CANCELLED
    assert seen.get("cancelled") or seen.get("woke")
    assert not wrapper_signals[0].aborted  # the wrapper's own signal did not fire
    assert recorder.outcomes == [Outcome.CANCELLED]


def test_caller_cancel_reaches_a_thread_body_after_a_wrapper_replaced_the_signal() -> None:
    caller = Signal()
    started = threading.Event()
    noticed = threading.Event()

    def body(args: Any, ctx: Dispatch) -> str:
        started.set()
        stop = time.monotonic() + HANG
        while time.monotonic() < stop:
            if ctx.signal.aborted:
                noticed.set()
                break
            time.sleep(0.002)
        return "late"

    registry, _ = make_registry(make_tool("echo", body))
    add_deadline(registry, 30.0)

    async def scenario() -> ToolResult:
        task = asyncio.create_task(registry.call("echo", signal=caller))
        await wait_until(started.is_set)
        caller.abort()
        return await asyncio.wait_for(task, 2.0)

    result = asyncio.run(scenario())
    assert result.outcome is Outcome.CANCELLED
    assert noticed.wait(2.0), "the caller's cancel never reached the thread body"


@pytest.mark.parametrize(
    ("deadline", "abort_after", "expected"),
    [(5.0, 0.01, Outcome.CANCELLED), (0.03, 5.0, Outcome.TIMED_OUT)],
    ids=["cancel-first", "deadline-first"],
)
def test_whichever_of_caller_cancel_and_wrapper_deadline_fires_first_wins(
    deadline: float, abort_after: float, expected: Outcome
) -> None:
    caller = Signal()

    async def body(args: Any) -> str:
        await asyncio.sleep(HANG)
        return "never"

    registry, recorder = make_registry(make_tool("echo", body))
    add_deadline(registry, deadline)

    async def scenario() -> ToolResult:
        loop = asyncio.get_running_loop()
        timer = loop.call_later(abort_after, caller.abort)
        try:
            return await registry.call("echo", signal=caller)
        finally:
            timer.cancel()

    started = time.monotonic()
    result = asyncio.run(scenario())
    assert time.monotonic() - started < 2.0
    assert result.outcome is expected
    assert result.stage is Stage.EXECUTE
    assert recorder.outcomes == [expected]


def test_caller_signal_aborted_before_the_call_cancels_it_and_the_body_never_runs() -> None:
    probe = Probe()
    wrapper_runs: list[str] = []

    async def body(args: Any) -> str:
        probe.seen(args)
        return "ran"

    registry, recorder = make_registry(make_tool("echo", body))

    @registry.on_execute(name="replace-signal")
    async def replace(dispatch: Dispatch, next: Next) -> Any:
        wrapper_runs.append("ran")
        return await next(dispatch.with_signal(Signal()))

    caller = Signal()
    caller.abort("stopped before it began")
    result = registry.call_sync("echo", signal=caller)

    assert result.outcome is Outcome.CANCELLED
    assert probe.runs == 0
    assert result.value is None
    assert recorder.outcomes == [Outcome.CANCELLED]


def test_caller_signal_aborted_during_pre_execute_stops_the_call_before_the_body() -> None:
    probe = Probe()

    async def body(args: Any) -> str:
        probe.seen(args)
        return "ran"

    registry, recorder = make_registry(make_tool("echo", body))

    @registry.on_pre_execute(name="slow-policy")
    async def slow_policy(call: ToolCall, next: Next) -> Any:
        call.signal.abort("gave up while policy ran")
        return await next()

    result = registry.call_sync("echo", signal=Signal())
    assert result.outcome is Outcome.CANCELLED
    assert probe.runs == 0
    assert recorder.outcomes == [Outcome.CANCELLED]


def test_wrapper_signal_already_expired_stops_the_body_before_it_starts() -> None:
    probe = Probe()

    async def body(args: Any) -> str:
        probe.seen(args)
        return "ran"

    registry, _ = make_registry(make_tool("echo", body))
    add_deadline(registry, 0.0)

    result = registry.call_sync("echo")
    assert result.outcome is Outcome.TIMED_OUT
    assert probe.runs == 0


def test_cancelling_the_calling_task_mid_body_notifies_observers_once_and_reraises() -> None:
    seen: dict[str, bool] = {}
    started = asyncio.Event()

    async def body(args: Any) -> str:
        started.set()
        try:
            await asyncio.sleep(HANG)
        except asyncio.CancelledError:
            seen["body cancelled"] = True
            raise
        return "never"

    registry, recorder = make_registry(make_tool("echo", body))
    add_deadline(registry, 30.0)

    async def scenario() -> None:
        task = asyncio.create_task(registry.call("echo"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.01)  # any late, second notification would land here

    asyncio.run(scenario())
    assert recorder.outcomes == [Outcome.CANCELLED]
    assert seen == {"body cancelled": True}


def test_cancelling_the_calling_task_fires_the_signal_a_thread_body_sees() -> None:
    started = threading.Event()
    noticed = threading.Event()

    def body(args: Any, ctx: Dispatch) -> str:
        started.set()
        stop = time.monotonic() + 0.5
        while time.monotonic() < stop:
            if ctx.signal.aborted:
                noticed.set()
                break
            time.sleep(0.002)
        return "late"

    registry, recorder = make_registry(make_tool("echo", body))

    async def scenario() -> None:
        task = asyncio.create_task(registry.call("echo"))
        await wait_until(started.is_set)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert recorder.outcomes == [Outcome.CANCELLED]
    assert noticed.wait(0.5), "the call was reported cancelled but the thread body's signal never fired"


# -- wrappers: retries, their own errors, misuse of next() --------------------------------


def test_retry_wrapper_that_calls_next_again_after_a_body_error_gets_the_second_value() -> None:
    probe = Probe()

    async def body(args: Any) -> str:
        probe.seen(args)
        if probe.runs == 1:
            raise ConnectionError("flaky backend")
        return "second try"

    registry, recorder = make_registry(make_tool("echo", body))

    @registry.on_execute(name="retry-once")
    async def retry(dispatch: Dispatch, next: Next) -> Any:
        try:
            return await next()
        except ConnectionError:
            return await next()

    result = registry.call_sync("echo")

    assert probe.runs == 2
    assert result.outcome is Outcome.OK
    assert result.value == "second try"
    assert result.text == "rendered:second try"
    assert recorder.outcomes == [Outcome.OK]


def test_retry_wrapper_that_gives_up_reports_the_body_error() -> None:
    probe = Probe()

    async def body(args: Any) -> NoReturn:
        probe.seen(args)
        raise ConnectionError(f"attempt {probe.runs} failed")

    registry, _ = make_registry(make_tool("echo", body))

    @registry.on_execute(name="retry-twice")
    async def retry(dispatch: Dispatch, next: Next) -> Any:
        for _ in range(2):
            try:
                return await next()
            except ConnectionError:
                pass
        return await next()

    result = registry.call_sync("echo")
    assert probe.runs == 3
    assert result.outcome is Outcome.ERROR
    assert result.reason is not None
    assert "attempt 3 failed" in result.reason


def test_execute_wrapper_that_raises_its_own_error_is_an_error_naming_the_wrapper() -> None:
    probe = Probe()

    async def body(args: Any) -> str:
        probe.seen(args)
        return "fine"

    registry, recorder = make_registry(make_tool("echo", body))

    @registry.on_execute(name="metrics")
    async def metrics(dispatch: Dispatch, next: Next) -> Any:
        value = await next()
        raise RuntimeError("metrics backend down")
        return value  # pragma: no cover

    result = registry.call_sync("echo")

    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.EXECUTE
    assert result.source == Source(SourceKind.LISTENER, "metrics")
    assert result.reason is not None
    assert "metrics" in result.reason
    assert "metrics backend down" in result.reason
    assert result.value is None
    assert recorder.outcomes == [Outcome.ERROR]


def _other_dispatch(dispatch: Dispatch) -> Dispatch:
    other = ToolCall(call_id="someone-else", name="echo", arguments=FrozenDict(), agent="mallory")
    return Dispatch(other, Signal(), dispatch.definition)


BAD_NEXT = {
    "string": lambda d: ("a string",),
    "signal": lambda d: (Signal(),),
    "two dispatches": lambda d: (d, d),
    "a decision": lambda d: (block("no"),),
}
# A dispatch carrying another call or tool is not a mistake but a swap: it is denied, naming the
# wrapper (tests/test_integrity.py).


def test_execute_next_with_another_call_is_denied_naming_the_wrapper_and_the_body_never_runs() -> None:
    probe = Probe()

    async def body(args: Any) -> str:
        probe.seen(args)
        return "ran"

    registry, _recorder = make_registry(make_tool("echo", body))

    @registry.on_execute(name="swapper")
    async def swapper(dispatch: Dispatch, next: Next) -> Any:
        return await next(_other_dispatch(dispatch))

    result = registry.call_sync("echo")

    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.EXECUTE
    assert result.reason is not None
    assert "swapper" in result.reason
    assert probe.runs == 0


@pytest.mark.parametrize("make_args", BAD_NEXT.values(), ids=BAD_NEXT.keys())
def test_execute_next_with_a_bad_argument_is_an_error_and_the_body_never_runs(
    make_args: Callable[[Dispatch], tuple[Any, ...]],
) -> None:
    probe = Probe()

    async def body(args: Any) -> str:
        probe.seen(args)
        return "ran"

    registry, recorder = make_registry(make_tool("echo", body))

    @registry.on_execute(name="confused")
    async def confused(dispatch: Dispatch, next: Next) -> Any:
        return await next(*make_args(dispatch))

    result = registry.call_sync("echo")

    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.EXECUTE
    assert result.source == Source(SourceKind.LISTENER, "confused")
    assert probe.runs == 0
    assert recorder.outcomes == [Outcome.ERROR]


def test_with_signal_given_something_that_is_not_a_signal_is_an_error() -> None:
    probe = Probe()

    async def body(args: Any) -> str:
        probe.seen(args)
        return "ran"

    registry, _ = make_registry(make_tool("echo", body))

    @registry.on_execute(name="no-signal")
    async def no_signal(dispatch: Dispatch, next: Next) -> Any:
        return await next(dispatch.with_signal(cast(Any, None)))  # deliberately not a Signal

    result = registry.call_sync("echo")
    assert result.outcome is Outcome.ERROR
    assert result.source == Source(SourceKind.LISTENER, "no-signal")
    assert probe.runs == 0


# -- timings ----------------------------------------------------------------------------


def test_timings_cover_every_stage_an_accepted_call_went_through() -> None:
    registry, _ = make_registry(make_tool("echo", finalize_content=lambda a, v, c: c))
    result = registry.call_sync("echo")

    assert result.outcome is Outcome.OK
    expected = {
        Stage.VALIDATION,
        Stage.PRE_EXECUTE,
        Stage.GUARD,
        Stage.EXECUTE,
        Stage.POST_EXECUTE,
        Stage.FINALIZE,
        Stage.RESULT,
    }
    assert {s.value for s in expected} <= set(result.timings)
    assert all(isinstance(t, float) and t >= 0 for t in result.timings.values())


def test_timings_stop_at_the_stage_where_a_body_error_ended_the_call() -> None:
    async def body(args: Any) -> NoReturn:
        raise ValueError("boom")

    registry, _ = make_registry(make_tool("echo", body, finalize_content=lambda a, v, c: c))
    result = registry.call_sync("echo")

    assert result.outcome is Outcome.ERROR
    assert {Stage.VALIDATION.value, Stage.PRE_EXECUTE.value, Stage.EXECUTE.value} <= set(result.timings)
    assert not {Stage.POST_EXECUTE.value, Stage.FINALIZE.value, Stage.RESULT.value} & set(result.timings)


def test_timings_of_a_timed_out_body_charge_the_execute_stage() -> None:
    async def body(args: Any) -> None:
        await asyncio.sleep(HANG)

    registry, _ = make_registry(make_tool("echo", body))
    add_deadline(registry, 0.03)
    result = registry.call_sync("echo")

    assert result.outcome is Outcome.TIMED_OUT
    assert result.timings[Stage.EXECUTE.value] >= 0.02


def test_timings_of_invalid_arguments_record_validation_and_no_later_stage() -> None:
    registry, _ = make_registry(make_tool("echo", parameters={"n": {"type": "integer", "required": True}}))
    result = registry.call_sync("echo", {"n": "three"})

    assert result.outcome is Outcome.INVALID
    assert set(result.timings) == {Stage.VALIDATION.value}


@pytest.mark.parametrize("stage", [Stage.PRE_EXECUTE, Stage.POST_EXECUTE])
def test_timings_record_a_policy_stage_that_ran_and_failed_closed(stage: Stage) -> None:
    registry, _ = make_registry(make_tool("echo"))

    async def broken(*args: Any) -> NoReturn:
        raise RuntimeError("policy bug")

    if stage is Stage.PRE_EXECUTE:
        registry.on_pre_execute(broken, name="broken")
    else:
        registry.on_post_execute(broken, name="broken")

    result = registry.call_sync("echo")
    assert result.stage is stage
    assert result.outcome in (Outcome.DENIED, Outcome.BLOCKED)
    assert stage.value in result.timings, f"{stage.value} ran but has no timing: {dict(result.timings)}"
