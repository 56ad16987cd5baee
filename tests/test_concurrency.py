"""Concurrency: thousands of calls with cancels, deadlines and failures; reloads under load.

The workloads live in scripts/soak.py (its long runs are the soak); here they run short:
a 2,000-call storm (and a 1,000-call one on the pack-only fast paths), and reload-under-load
with 1,000 calls and at least 50 reloads.  Deterministic tests pin the edge cases the storms
hit at random, and keep the bugs they found as strict xfails.
"""

from __future__ import annotations

import asyncio
import importlib.util
import random
import subprocess
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from policyengine import (
    Dispatch,
    Outcome,
    PolicyLayers,
    Registry,
    Signal,
    Stage,
    ToolResult,
    define_tool,
)
from policyengine.runtime import pipeline
from policyengine.runtime.run import Run
from policyengine.values.decisions import Deny, PreDecision

REPO = Path(__file__).resolve().parents[1]
Next = Callable[..., Awaitable[Any]]


def _load_soak() -> ModuleType:
    spec = importlib.util.spec_from_file_location("policyengine_soak", REPO / "scripts" / "soak.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


soak = _load_soak()


# -- the storm ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("calls", "mixed"), [(2000, True), (1000, False)], ids=["python+pack", "pack-only"])
def test_storm_every_call_gets_exactly_one_result_and_no_guard_is_bypassed(calls: int, mixed: bool) -> None:
    report = asyncio.run(soak.run_storm(calls, seed=7, mixed=mixed))
    print(report.summary())
    assert report.violations == []
    # Not vacuous: every kind of ending happened, and the marked calls were there.
    assert {"ok", "denied", "error", "cancelled", "timed_out"} <= set(report.outcomes)
    assert report.raised > 0, "no calling task was cancelled while running"
    assert report.never_started > 0, "no calling task was cancelled before it started"
    assert report.marked > calls // 10
    assert report.sync_bodies > 0
    assert report.observer_failures > calls
    assert report.leaked_tasks == []
    assert report.tasks_after == report.tasks_before


def test_storm_detector_catches_a_guard_that_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Self-check of the storm's invariants: a registry whose guards never run must be caught."""

    def no_red_line(run: Run, red_line: Deny | None) -> None:
        return None  # whatever the guards found, in every mode: the stage's answer is dropped

    monkeypatch.setattr(pipeline, "hold", no_red_line)
    report = asyncio.run(soak.run_storm(300, seed=3, mixed=False))
    assert any("GUARD BYPASSED" in v for v in report.violations)


# -- reload under load ------------------------------------------------------------------------------


@pytest.mark.parametrize("mixed", [True, False], ids=["python+pack", "pack-only"])
def test_reload_under_load_never_mixes_two_packs_in_one_call(mixed: bool) -> None:
    report = asyncio.run(soak.run_reload(1000, reloads=50, reload_every=0.002, seed=11, mixed=mixed))
    print(report.summary())
    assert report.violations == []
    assert report.reloads >= 50
    assert report.failed_reloads == 0
    assert report.by_version["v1"] > 100 and report.by_version["v2"] > 100
    assert sum(report.by_version.values()) == 1000
    # Calls really were in flight across reloads, including calls that got as far as the body.
    assert report.straddled > 50
    assert report.straddled_and_ran > 20
    assert set(report.decided_at) == {"pre-execute", "guard", "ok"}


def test_reload_detector_catches_a_stage_that_reads_the_live_installation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Self-check: if guards read the registry's current installation, the stamps must disagree."""
    registries: list[Registry] = []
    build = soak.build_reload_registry

    def capture(budgets: dict[str, float], mixed: bool, rng: random.Random | None = None) -> Registry:
        registry: Registry = build(budgets, mixed, rng)
        registries.append(registry)
        return registry

    original = pipeline.admit

    def live_guards(run: Run, decision: PreDecision) -> PreDecision:
        run.inst = registries[-1].installation  # the guards that follow read the live installation
        return original(run, decision)

    monkeypatch.setattr(soak, "build_reload_registry", capture)
    monkeypatch.setattr(pipeline, "admit", live_guards)
    report = asyncio.run(soak.run_reload(400, reloads=20, seed=5, mixed=True))
    assert any("MIXED PACKS" in v for v in report.violations)


# -- deterministic edges --------------------------------------------------------------------------------


def _hanging_registry() -> tuple[Registry, list[ToolResult]]:
    registry = Registry()
    seen: list[ToolResult] = []
    registry.on_result(seen.append, name="recorder")

    async def hang(args: Any, ctx: Dispatch) -> str:
        await asyncio.sleep(3600)
        return "never"

    registry.register(define_tool(name="hang", description="waits forever", parameters={}, execute=hang))
    return registry, seen


def test_a_cancelled_calling_task_notifies_once_then_raises() -> None:
    async def main() -> None:
        registry, seen = _hanging_registry()
        task = asyncio.create_task(registry.call("hang", {}))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [r.outcome for r in seen] == [Outcome.CANCELLED]

    asyncio.run(main())


def test_a_task_cancelled_before_it_starts_makes_no_call() -> None:
    async def main() -> None:
        registry, seen = _hanging_registry()
        task = asyncio.create_task(registry.call("hang", {}))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert seen == []

    asyncio.run(main())


def test_task_cancel_and_caller_abort_together_still_raise_cancelled_error() -> None:
    async def main() -> None:
        registry, _seen = _hanging_registry()
        signal = Signal()
        task = asyncio.create_task(registry.call("hang", {}, signal=signal))
        await asyncio.sleep(0.01)
        signal.abort("the caller gives up")
        task.cancel()
        try:
            result = await task
        except asyncio.CancelledError:
            return
        pytest.fail(f"registry.call returned {result.outcome.value} although its task was cancelled")

    asyncio.run(main())


def test_task_cancel_after_an_overdue_deadline_still_raises_cancelled_error() -> None:
    async def main() -> None:
        registry, _seen = _hanging_registry()
        task = asyncio.create_task(registry.call("hang", {}, signal=Signal.timeout(0.02)))
        await asyncio.sleep(0.005)
        time.sleep(0.03)  # the loop is busy (another call's CPU-heavy policy, say) past the deadline
        task.cancel()
        try:
            result = await task
        except asyncio.CancelledError:
            return
        pytest.fail(f"registry.call returned {result.outcome.value} although its task was cancelled")

    asyncio.run(main())


def test_caller_abort_reaches_a_sync_body_in_its_thread() -> None:
    stopped: list[bool] = []

    def body(args: Any, ctx: Dispatch) -> str:
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            if ctx.signal.aborted:
                stopped.append(True)
                return "stopped"
            time.sleep(0.001)
        stopped.append(False)
        return "ran to the end"

    async def main() -> ToolResult:
        registry = Registry()
        registry.register(define_tool(name="poll", description="polls its signal", parameters={}, execute=body))
        signal = Signal()
        asyncio.get_running_loop().call_later(0.02, signal.abort, "stop")
        started = time.monotonic()
        result = await registry.call("poll", {}, signal=signal)
        assert time.monotonic() - started < 1.0
        await asyncio.sleep(0.05)
        return result

    result = asyncio.run(main())
    assert result.outcome is Outcome.CANCELLED and result.stage is Stage.EXECUTE
    assert stopped == [True]


def _slow_registry(seconds: float) -> Registry:
    registry = Registry()

    async def slow(args: Any) -> str:
        await asyncio.sleep(seconds)
        return "late"

    registry.register(define_tool(name="slow", description="takes its time", parameters={}, execute=slow))
    return registry


def _timing_out(seconds: float) -> Callable[[Dispatch], Dispatch]:
    return lambda dispatch: dispatch.with_signal(Signal.timeout(seconds))


def _rebuilt_timing_out(seconds: float) -> Callable[[Dispatch], Dispatch]:
    # A wrapper that builds its Dispatch itself instead of with_signal(): it hands on no lineage.
    return lambda dispatch: Dispatch(dispatch.call, Signal.timeout(seconds), dispatch.definition)


def _nested_deadlines(
    body: float, outer_s: float, inner_s: float, inner_hands: Callable[[float], Callable[[Dispatch], Dispatch]]
) -> tuple[ToolResult, float]:
    """A call to a body taking `body` seconds under two execute wrappers' deadlines; its result and wall time."""
    registry = _slow_registry(body)

    async def outer(dispatch: Dispatch, next: Next) -> Any:
        return await next(dispatch.with_signal(Signal.timeout(outer_s)))

    async def inner(dispatch: Dispatch, next: Next) -> Any:
        return await next(inner_hands(inner_s)(dispatch))

    registry.on_execute(outer, name=f"outer-{outer_s}s")
    registry.on_execute(inner, name=f"inner-{inner_s}s")
    started = time.monotonic()
    result = registry.call_sync("slow", {})
    return result, time.monotonic() - started


@pytest.mark.parametrize("inner_hands", [_timing_out, _rebuilt_timing_out], ids=["with_signal", "rebuilt"])
def test_an_inner_execute_wrapper_cannot_lift_an_outer_deadline(
    inner_hands: Callable[[float], Callable[[Dispatch], Dispatch]],
) -> None:
    result, seconds = _nested_deadlines(0.5, 0.05, 10, inner_hands)
    assert result.outcome is Outcome.TIMED_OUT, f"{result.outcome.value} after the outer 50 ms deadline"
    assert seconds < 0.4


def test_an_inner_execute_wrapper_can_shorten_an_outer_deadline() -> None:
    result, _ = _nested_deadlines(0.5, 10, 0.05, _timing_out)
    assert result.outcome is Outcome.TIMED_OUT, f"{result.outcome.value} after the inner 50 ms deadline"


def test_nested_execute_deadlines_let_a_call_in_time_finish() -> None:
    result, _ = _nested_deadlines(0.01, 5, 10, _timing_out)
    assert result.outcome is Outcome.OK and result.value == "late"


def test_an_outer_deadline_holds_through_an_inner_wrappers_retries() -> None:
    registry = _slow_registry(0.5)
    attempts: list[int] = []

    async def outer(dispatch: Dispatch, next: Next) -> Any:
        return await next(dispatch.with_signal(Signal.timeout(0.15)))

    async def inner(dispatch: Dispatch, next: Next) -> Any:
        for attempt in range(20):  # each attempt under a fresh, longer deadline of its own
            attempts.append(attempt)
            try:
                return await next(dispatch.with_signal(Signal.timeout(10)))
            except Exception:
                if dispatch.signal.aborted:
                    raise
        raise AssertionError("unreachable")

    registry.on_execute(outer, name="outer-150ms")
    registry.on_execute(inner, name="inner-retries")

    started = time.monotonic()
    result = registry.call_sync("slow", {})
    assert result.outcome is Outcome.TIMED_OUT and time.monotonic() - started < 0.45
    assert attempts == [0]


def test_two_execute_rules_the_shorter_timeout_still_applies(tmp_path: Path) -> None:
    folder = tmp_path / "deadlines"
    folder.mkdir()
    (folder / "pack.yaml").write_text(
        "name: deadlines\nversion: 1.0.0\ndescription: two deadlines\nfiles: [rules.yaml]\n", encoding="utf-8"
    )
    (folder / "rules.yaml").write_text(
        textwrap.dedent(
            """\
            rules:
              - {id: short-deadline, description: short, stage: execute, tools: ["*"], timeout: 0.05}
              - {id: long-deadline, description: long, stage: execute, tools: ["*"], timeout: 10}
            """
        ),
        encoding="utf-8",
    )
    registry = _slow_registry(0.5)
    PolicyLayers.install(registry, [folder])
    result = registry.call_sync("slow", {})
    assert result.outcome is Outcome.TIMED_OUT, f"{result.outcome.value}: the 50 ms rule did not hold"


# A sync body polls ctx.signal.aborted (the documented way) while the event loop is busy past the
# deadline: the worker thread fires the signal, and with it asyncio's Task.cancel(), off the loop.
_OFF_LOOP_CHILD = textwrap.dedent(
    """
    import asyncio, time
    from policyengine import Registry, Signal, define_tool

    def body(args, ctx):
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            if ctx.signal.aborted:
                return "stopped"
        return "ran to the end"

    async def main():
        registry = Registry()
        registry.register(define_tool(name="poll", description="polls", parameters={}, execute=body))

        @registry.on_execute(name="deadline")
        async def deadline(dispatch, next):
            return await next(dispatch.with_signal(Signal.timeout(0.05)))

        loop = asyncio.get_running_loop()
        loop.call_later(0.02, time.sleep, 0.1)  # the loop is busy across the deadline
        result = await registry.call("poll", {})
        print(result.outcome.value, flush=True)

    asyncio.run(main(), debug=True)
    """
)


def test_a_sync_body_polling_its_signal_never_drives_the_event_loop_from_its_thread() -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", _OFF_LOOP_CHILD], capture_output=True, text=True, timeout=3, cwd=REPO
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the call never ended: the signal fired on the worker thread")
    assert done.stdout.strip() == "timed_out", done.stderr[-2000:]
    assert "Non-thread-safe operation" not in done.stderr
