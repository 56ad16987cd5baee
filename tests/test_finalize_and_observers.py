"""Stage 5 (finalize_content), stage 6 (frozen results and observers), lookup and validation.

SPEC.md sections 2 and 4.5-4.6.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

import pytest

from policyengine import (
    DefinitionError,
    Dispatch,
    FrozenError,
    Outcome,
    PendingResult,
    RegistrationError,
    Registry,
    Signal,
    Source,
    SourceKind,
    Stage,
    ToolCall,
    ToolResult,
    UsageError,
    accept,
    accept_value,
    block,
    define_tool,
    deny,
)
from support import SECRET_RECORD, Probe, Recorder, make_registry, make_tool, text

COUNT = {"n": {"type": "integer", "required": True, "description": "How many"}}

Next = Callable[..., Awaitable[Any]]


# -- a bench with one tool per way a call can end -----------------------------------------


class Bench:
    """A registry whose tools end in every outcome; counts finalize_content runs per tool."""

    def __init__(self) -> None:
        self.finalized: Counter[str] = Counter()
        self.bodies: Counter[str] = Counter()
        self.recorder = Recorder()
        self.registry = Registry(policy_timeout=1.0)
        reg = self.registry

        def finalize_for(name: str) -> Callable[[Any, Any, Any], list[Any]]:
            def finalize(args: Any, value: Any, content: Any) -> list[Any]:
                self.finalized[name] += 1
                if name == "bad-finalize":
                    raise RuntimeError("finalize bug")
                return [*content, {"type": "text", "text": "(finalized)"}]

            return finalize

        def body_for(name: str) -> Callable[[Any], Awaitable[str]]:
            async def body(args: Any) -> str:
                self.bodies[name] += 1
                if name == "error":
                    raise OSError("no such file")
                if name == "slow":
                    await asyncio.sleep(3)
                return f"{name}:{args.get('n', 0)}"

            return body

        for name in ("ok", "denied", "red-line", "blocked", "error", "slow", "bad-finalize"):
            reg.register(make_tool(name, body_for(name), parameters=COUNT, finalize_content=finalize_for(name)))

        @reg.on_pre_execute(name="deny-denied")
        async def deny_denied(call: ToolCall, next: Next) -> Any:
            return deny("not this one") if call.name == "denied" else await next()

        @reg.guard(name="red-line")
        def red_line(call: ToolCall) -> str | None:
            return "red line" if call.name == "red-line" else None

        @reg.on_execute(name="deadline")
        async def deadline(dispatch: Dispatch, next: Next) -> Any:
            if dispatch.call.name == "slow":
                return await next(dispatch.with_signal(Signal.timeout(0.03)))
            return await next()

        @reg.on_post_execute(name="block-blocked")
        async def block_blocked(call: ToolCall, pending: PendingResult, next: Next) -> Any:
            return block("blocked by review") if call.name == "blocked" else await next()

        reg.on_result(self.recorder, name="recorder")


def _cancelled_signal() -> Signal:
    signal = Signal()
    signal.abort()
    return signal


SCENARIOS: dict[str, tuple[str, dict[str, Any], dict[str, Callable[[], Any]], Outcome, Stage | None]] = {
    "ok": ("ok", {"n": 1}, {}, Outcome.OK, Stage.RESULT),
    "denied": ("denied", {"n": 1}, {}, Outcome.DENIED, Stage.PRE_EXECUTE),
    "guard": ("red-line", {"n": 1}, {}, Outcome.DENIED, Stage.GUARD),
    "invalid-args": ("ok", {"n": "one"}, {}, Outcome.INVALID, Stage.VALIDATION),
    "unknown-tool": ("nope", {"n": 1}, {}, Outcome.INVALID, Stage.LOOKUP),
    "blocked": ("blocked", {"n": 1}, {}, Outcome.BLOCKED, Stage.POST_EXECUTE),
    "error": ("error", {"n": 1}, {}, Outcome.ERROR, Stage.EXECUTE),
    "cancelled": ("ok", {"n": 1}, {"signal": _cancelled_signal}, Outcome.CANCELLED, None),
    "timed-out": ("slow", {"n": 1}, {}, Outcome.TIMED_OUT, Stage.EXECUTE),
    "finalize-error": ("bad-finalize", {"n": 1}, {}, Outcome.ERROR, Stage.FINALIZE),
}


def run_scenario(bench: Bench, key: str) -> ToolResult:
    name, args, kwargs, _outcome, _stage = SCENARIOS[key]
    kwargs = {k: v() for k, v in kwargs.items()}
    return bench.registry.call_sync(name, args, **kwargs)


@pytest.mark.parametrize("key", SCENARIOS)
def test_observers_are_notified_exactly_once_for_every_outcome(key: str) -> None:
    bench = Bench()
    result = run_scenario(bench, key)
    _name, _args, _kwargs, outcome, stage = SCENARIOS[key]

    assert result.outcome is outcome
    if stage is not None and outcome is not Outcome.OK:
        assert result.stage is stage
    assert len(bench.recorder.results) == 1
    assert bench.recorder.results[0] is result


@pytest.mark.parametrize("key", [k for k in SCENARIOS if k not in ("ok", "finalize-error")])
def test_finalize_content_does_not_run_for_calls_that_were_not_accepted(key: str) -> None:
    bench = Bench()
    result = run_scenario(bench, key)
    assert result.outcome is not Outcome.OK
    assert sum(bench.finalized.values()) == 0


def test_finalize_content_runs_exactly_once_per_accepted_result() -> None:
    bench = Bench()
    results = [bench.registry.call_sync("ok", {"n": i}) for i in range(3)]

    assert [r.outcome for r in results] == [Outcome.OK] * 3
    assert bench.finalized == Counter({"ok": 3})
    assert results[2].text == "rendered:ok:2\n(finalized)"
    assert results[2].value == "ok:2"


# -- finalize_content ------------------------------------------------------------------------


def test_finalize_content_sees_post_execute_rewrites_and_changes_content_only() -> None:
    calls: list[tuple[Any, Any, Any]] = []

    def finalize(args: Any, value: Any, content: Any) -> list[dict[str, Any]]:
        calls.append((args, value, content))
        return text(f"final:{content[0]['text']}")

    registry, recorder = make_registry(make_tool("echo", finalize_content=finalize))

    @registry.on_post_execute(name="shout")
    async def shout(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return await next(accept_value(pending.value.upper()))

    result = registry.call_sync("echo")

    assert result.outcome is Outcome.OK
    assert len(calls) == 1
    _args, value, content = calls[0]
    assert value == "HELLO"
    assert content == text("rendered:HELLO")
    assert result.text == "final:rendered:HELLO"
    assert result.value == "HELLO"
    assert recorder.results[0].value == "HELLO"
    assert recorder.results[0].text == "final:rendered:HELLO"


def test_finalize_content_sees_display_content_replaced_by_post_execute() -> None:
    seen: list[Any] = []

    def finalize(args: Any, value: Any, content: Any) -> Any:
        seen.append(content)
        return content

    registry, _ = make_registry(make_tool("echo", finalize_content=finalize))

    @registry.on_post_execute(name="display")
    async def display(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return accept(text("shown"))

    result = registry.call_sync("echo")
    assert seen == [text("shown")]
    assert result.text == "shown"
    assert result.value == "hello"


def test_finalize_content_cannot_change_the_accepted_canonical_value() -> None:
    async def fetch(args: Any) -> dict[str, str]:
        return {"user": "ada", "token": "t0ken"}

    def finalize(args: Any, value: Any, content: Any) -> Any:
        value["token"] = "changed"  # the accepted value is frozen
        return content

    registry, recorder = make_registry(make_tool("fetch", fetch, schema=SECRET_RECORD, finalize_content=finalize))
    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.FINALIZE
    assert result.reason is not None
    assert "FrozenError" in result.reason
    assert recorder.outcomes == [Outcome.ERROR]


def test_finalize_content_that_raises_is_an_error_at_finalize_naming_the_tool() -> None:
    def finalize(args: Any, value: Any, content: Any) -> NoReturn:
        raise ValueError("template missing")

    registry, recorder = make_registry(make_tool("echo", finalize_content=finalize))
    result = registry.call_sync("echo")

    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.FINALIZE
    assert result.source == Source(SourceKind.TOOL, "echo")
    assert result.reason is not None
    assert "'echo'" in result.reason
    assert "template missing" in result.reason
    assert result.value is None
    assert recorder.outcomes == [Outcome.ERROR]


@pytest.mark.parametrize(
    "returned",
    [None, "plain string", {"type": "text", "text": "not in a list"}, [{"type": 1}], [{"type": "text"}], [object()]],
    ids=["none", "string", "bare-block", "non-string-type", "text-without-text", "not-a-block"],
)
def test_finalize_content_returning_malformed_content_is_an_error_at_finalize(returned: Any) -> None:
    registry, recorder = make_registry(make_tool("echo", finalize_content=lambda a, v, c: returned))
    result = registry.call_sync("echo")

    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.FINALIZE
    assert result.value is None
    assert recorder.outcomes == [Outcome.ERROR]


def test_async_finalize_content_is_refused_when_the_tool_is_defined() -> None:
    async def finalize(args: Any, value: Any, content: Any) -> Any:
        return content

    with pytest.raises(DefinitionError):
        make_tool("echo", finalize_content=finalize)


# -- the frozen result -------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["outcome", "value", "content", "reason", "stage", "source", "rewrites"])
def test_result_attributes_cannot_be_set(field: str) -> None:
    registry, _ = make_registry(make_tool("echo"))
    result = registry.call_sync("echo")
    before = getattr(result, field)

    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError)):
        setattr(result, field, None)
    assert getattr(result, field) == before


def test_result_content_value_arguments_and_timings_are_deep_frozen() -> None:
    async def fetch(args: Any) -> dict[str, str]:
        return {"user": "ada", "token": "t0ken"}

    registry, _ = make_registry(make_tool("fetch", fetch, schema=SECRET_RECORD, parameters=COUNT))
    result = registry.call_sync("fetch", {"n": 1})
    assert result.outcome is Outcome.OK

    mutations: list[Callable[[], object]] = [
        lambda: result.content.append({"type": "text", "text": "x"}),
        lambda: result.content[0].__setitem__("text", "x"),
        lambda: result.value.__setitem__("token", "x"),
        lambda: result.value.pop("token"),
        lambda: result.arguments.__setitem__("n", 2),
        lambda: result.timings.__setitem__("execute", 0.0),
    ]
    for mutate in mutations:
        with pytest.raises(FrozenError):
            mutate()
    assert result.value == {"user": "ada", "token": "t0ken"}
    assert result.arguments == {"n": 1}


def test_an_observer_cannot_transform_the_result_others_see() -> None:
    registry, recorder = make_registry(make_tool("echo"))

    @registry.on_result(name="vandal")
    def vandal(result: ToolResult) -> None:
        result.content.append({"type": "text", "text": "injected"})

    after = Recorder()
    registry.on_result(after, name="after")

    result = registry.call_sync("echo")

    assert result.outcome is Outcome.OK
    assert result.text == "rendered:hello"
    assert after.results[0].text == "rendered:hello"
    assert recorder.results == [result]
    assert registry.stats["observer_failures"] == 1


# -- observers ----------------------------------------------------------------------------------


def test_observers_are_notified_synchronously_in_the_calling_task_before_call_returns() -> None:
    registry, _ = make_registry(make_tool("echo"))
    seen: list[tuple[asyncio.Task[Any] | None, ToolResult]] = []

    @registry.on_result(name="where")
    def where(result: ToolResult) -> None:
        seen.append((asyncio.current_task(), result))

    async def scenario() -> tuple[asyncio.Task[Any] | None, ToolResult]:
        result = await registry.call("echo")
        assert len(seen) == 1  # already notified when call() returns, with nothing left to run
        return asyncio.current_task(), result

    task, result = asyncio.run(scenario())
    assert seen == [(task, result)]


def test_observers_are_notified_in_registration_order() -> None:
    registry, _ = make_registry(make_tool("echo"))
    order: list[str] = []
    for label in ("first", "second", "third"):
        registry.on_result(lambda r, _label=label: order.append(_label), name=label)

    registry.call_sync("echo")
    assert order == ["first", "second", "third"]


@pytest.mark.parametrize("key", ["ok", "denied", "error", "blocked"])
def test_a_raising_observer_changes_nothing_and_is_counted(key: str) -> None:
    bench = Bench()
    reg = bench.registry

    @reg.on_result(name="broken-audit")
    def broken(result: ToolResult) -> NoReturn:
        raise RuntimeError("audit sink down")

    later = Recorder()
    reg.on_result(later, name="later")

    baseline = Bench()
    expected = run_scenario(baseline, key)
    result = run_scenario(bench, key)

    assert result.outcome is expected.outcome
    assert result.text == expected.text
    assert result.value == expected.value
    assert bench.recorder.results == [result]  # the observer before it
    assert later.results == [result]  # and the one after it
    assert reg.stats["observer_failures"] == 1

    run_scenario(bench, key)
    assert reg.stats["observer_failures"] == 2


def test_a_raising_observer_does_not_break_an_async_caller() -> None:
    registry, recorder = make_registry(make_tool("echo"))
    registry.on_result(lambda r: 1 / 0, name="divide")

    result = asyncio.run(registry.call("echo"))
    assert result.outcome is Outcome.OK
    assert recorder.outcomes == [Outcome.OK]
    assert registry.stats["observer_failures"] == 1


class AsyncCallable:
    async def __call__(self, result: ToolResult) -> None:
        return None


async def async_observer(result: ToolResult) -> None:
    return None


@pytest.mark.parametrize(
    "observer",
    [async_observer, AsyncCallable(), functools.partial(async_observer)],
    ids=["coroutine-function", "async-callable", "partial"],
)
def test_async_observers_are_refused_at_registration(observer: Callable[..., Any]) -> None:
    registry, recorder = make_registry(make_tool("echo"))

    with pytest.raises(RegistrationError):
        registry.on_result(observer, name="async-audit")

    registry.call_sync("echo")
    assert len(recorder.results) == 1
    assert registry.stats["observer_failures"] == 0


def test_async_observer_is_refused_by_the_decorator_form_too() -> None:
    registry = Registry()
    with pytest.raises(RegistrationError):

        @registry.on_result(name="audit")
        async def audit(result: ToolResult) -> None:
            return None


# -- lookup and validation ------------------------------------------------------------------------


def _spy_everything(registry: Registry) -> list[str]:
    """Install a listener at every stage that records that it ran."""
    ran: list[str] = []

    @registry.on_pre_execute(name="pre")
    async def pre(call: ToolCall, next: Next) -> Any:
        ran.append("pre-execute")
        return await next()

    @registry.guard(name="guard")
    def guard(call: ToolCall) -> None:
        ran.append("guard")

    @registry.on_execute(name="execute")
    async def wrap(dispatch: Dispatch, next: Next) -> Any:
        ran.append("execute")
        return await next()

    @registry.on_post_execute(name="post")
    async def post(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        ran.append("post-execute")
        return await next()

    return ran


def test_unknown_tool_is_invalid_at_lookup_and_lists_the_known_tools() -> None:
    registry, recorder = make_registry(make_tool("alpha"), make_tool("beta"))
    ran = _spy_everything(registry)

    result = registry.call_sync("gamma", {})

    assert result.outcome is Outcome.INVALID
    assert result.stage is Stage.LOOKUP
    assert result.reason is not None
    assert "'gamma'" in result.reason
    assert "alpha" in result.reason
    assert "beta" in result.reason
    assert result.text == result.reason
    assert ran == []
    assert recorder.results == [result]


PARAMS = {
    "path": {"type": "string", "required": True, "description": "Workspace path"},
    "count": {"type": "integer", "description": "How many"},
}

INVALID = {
    "wrong-type": ({"path": "a", "count": "three"}, "count"),
    "bool-for-integer": ({"path": "a", "count": True}, "count"),
    "missing-required": ({"count": 3}, "path"),
    "unknown-parameter": ({"path": "a", "shell": "rm -rf /"}, "shell"),
    "none-for-required": ({"path": None}, "path"),
}


@pytest.mark.parametrize(("arguments", "parameter"), INVALID.values(), ids=INVALID.keys())
def test_invalid_arguments_are_invalid_at_validation_naming_the_parameter_and_nothing_runs(
    arguments: dict[str, Any], parameter: str
) -> None:
    probe = Probe()

    async def body(args: Any) -> str:
        probe.seen(args)
        return "ran"

    registry, recorder = make_registry(make_tool("fs_read", body, parameters=PARAMS))
    ran = _spy_everything(registry)

    result = registry.call_sync("fs_read", arguments)

    assert result.outcome is Outcome.INVALID
    assert result.stage is Stage.VALIDATION
    assert result.reason is not None
    assert parameter in result.reason
    assert "fs_read" in result.reason
    assert result.text == result.reason
    assert ran == []
    assert probe.runs == 0
    assert recorder.results == [result]


@pytest.mark.parametrize(
    "arguments",
    [["path", "a"], "path=a", {"path": object()}, {1: "a"}],
    ids=["list", "string", "non-json-value", "non-string-key"],
)
def test_arguments_that_are_not_a_json_object_are_invalid_and_nothing_runs(arguments: Any) -> None:
    probe = Probe()

    async def body(args: Any) -> str:
        probe.seen(args)
        return "ran"

    registry, _ = make_registry(make_tool("fs_read", body, parameters=PARAMS))
    ran = _spy_everything(registry)

    result = registry.call_sync("fs_read", arguments)
    assert result.outcome is Outcome.INVALID
    assert result.stage is Stage.VALIDATION
    assert ran == []
    assert probe.runs == 0


def test_valid_arguments_reach_every_stage() -> None:
    registry, _ = make_registry(make_tool("fs_read", parameters=PARAMS))
    ran = _spy_everything(registry)

    result = registry.call_sync("fs_read", {"path": "a", "count": 2})
    assert result.outcome is Outcome.OK
    assert ran == ["pre-execute", "guard", "execute", "post-execute"]


# -- call_sync ------------------------------------------------------------------------------------


def test_call_sync_inside_a_running_event_loop_raises_usage_error_and_runs_nothing() -> None:
    probe = Probe()

    def body(args: Any) -> str:
        probe.seen(args)
        return "ran"

    registry, recorder = make_registry(make_tool("echo", body))

    async def scenario() -> None:
        with pytest.raises(UsageError):
            registry.call_sync("echo")

    asyncio.run(scenario())
    assert probe.runs == 0
    assert recorder.results == []


def test_call_sync_outside_a_loop_returns_the_result() -> None:
    registry, _ = make_registry(
        define_tool(name="echo", description="Echo.", parameters={}, execute=lambda a: "plain", output={})
    )
    result = registry.call_sync("echo")
    assert result.outcome is Outcome.OK
    assert result.text == "plain"
