"""Soak test of the registry under concurrency, and of PolicyLayers.reload under load.

Two workloads, each checking its invariants and returning a report; `tests/test_concurrency.py`
runs short versions of the same code, this script runs the long ones:

storm
    N concurrent calls with random cancels (the caller's signal aborted before or during the
    call, the calling task cancelled before it starts or while it runs), deadlines (an execute
    wrapper replacing the signal with Signal.timeout, a pack execute rule with a timeout),
    bodies that raise or hang, async bodies and sync bodies run in worker threads, observers
    that raise, and a pack guard denying a marked subset of the calls.  Invariants: every call
    that started gets exactly one observer notification, and the caller gets exactly that
    result (or CancelledError, when its task was cancelled); no marked call ever runs its body
    or returns ok; no task is left behind (asyncio.all_tasks() before/after) and no sync body
    is still running once its own runtime is over; a cancel or deadline that ended a running
    body reached the body's signal; the shared caller signal keeps no listener.

reload
    N concurrent calls while PolicyLayers.reload swaps between two packs (written into a temp
    folder) every few milliseconds.  Each pack stamps its version in every stage: pre-execute
    (v1 denies odd x, v2 even x; an allow rule names the pack that admitted the call), guard
    (v1 refuses odd y, v2 even y), execute (v1 gives the body a 30 s deadline, v2 60 s; the
    body reports the budget it saw) and post-execute (the value's field f is redacted to
    "v1" / "v2").  Invariant: every call is evaluated against exactly one pack, the one
    installed when it started, even when a reload lands while it is in flight.

Usage::

    python scripts/soak.py                       # 10,000-call storm and 10,000-call reload
    python scripts/soak.py --rounds 5 --calls 20000 --reload-calls 10000 --reload-every 0.002
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from policyengine import (
    Dispatch,
    Outcome,
    PendingResult,
    PolicyLayers,
    Registry,
    Signal,
    Source,
    Stage,
    ToolCall,
    ToolResult,
    define_tool,
    deny,
    load_pack,
)
from policyengine.values.decisions import PostDecision, PreDecision

Next = Callable[..., Awaitable[Any]]

MODES = ("ok", "slow", "hang", "raise")
HANG_TIMEOUT = 0.05  # the pack's execute rule ends a hanging body after this many seconds
SYNC_MAX_RUNTIME = 0.2  # a sync body never runs longer than this, whatever happens

# -- the storm ------------------------------------------------------------------------------------

STORM_PACK = {
    "rules": [
        {
            "id": "deny-marked",
            "description": "Red line: a marked call never runs.",
            "stage": "guard",
            "tools": ["*"],
            "when": "arguments.marked",
            "reason": "Red line: call {call_id} is marked.",
        },
        {
            "id": "hang-deadline",
            "description": "Hanging bodies get a short deadline.",
            "stage": "execute",
            "tools": ["*"],
            "when": "arguments.mode == 'hang'",
            "timeout": HANG_TIMEOUT,
        },
    ]
}


@dataclass(frozen=True)
class Plan:
    """What one storm call does, and what is done to it."""

    index: int
    call_id: str
    tool: str  # "work" (async body) or "crunch" (sync body, in a worker thread)
    mode: str
    ms: int  # how long a "slow" body works
    marked: bool
    deadline_ms: int  # > 0: an execute wrapper replaces the signal with Signal.timeout
    abort_before: bool  # the caller's signal is aborted before the call
    abort_after: float | None  # seconds after the start at which the caller's signal is aborted
    cancel_now: bool  # the calling task is cancelled before it ever runs
    cancel_after: float | None  # seconds after the start at which the calling task is cancelled
    shared_signal: bool  # the call uses the long-lived shared caller signal

    @property
    def arguments(self) -> dict[str, Any]:
        return {
            "x": self.index,
            "mode": self.mode,
            "ms": self.ms,
            "marked": self.marked,
            "deadline_ms": self.deadline_ms,
        }

    def pre_denied(self, mixed: bool) -> bool:
        """The Python pre-execute listener of the mixed setup denies (or raises on) this call."""
        return mixed and (self.index % 13 == 0 or self.index % 17 == 0)


def make_plans(n: int, seed: int) -> list[Plan]:
    """N call plans, reproducible from the seed."""
    rng = random.Random(seed)
    plans = []
    for i in range(n):
        cancel = rng.random()
        abort_after = cancel_after = None
        abort_before = cancel_now = False
        if cancel < 0.20:
            abort_after = rng.uniform(0, 0.010)
        elif cancel < 0.40:
            cancel_after = rng.uniform(0, 0.010)
        elif cancel < 0.45:
            abort_after = cancel_after = rng.uniform(0, 0.010)  # both at once
        elif cancel < 0.50:
            abort_before = True
        elif cancel < 0.51:
            cancel_now = True
        plans.append(
            Plan(
                index=i,
                call_id=f"storm-{seed}-{i}",
                tool="crunch" if rng.random() < 0.2 else "work",
                mode=rng.choices(MODES, weights=(40, 25, 15, 20))[0],
                ms=rng.randint(0, 5),
                marked=rng.random() < 0.15,
                deadline_ms=rng.randint(1, 10) if rng.random() < 0.2 else 0,
                abort_before=abort_before,
                abort_after=abort_after,
                cancel_now=cancel_now,
                cancel_after=cancel_after,
                shared_signal=abort_after is None and not abort_before,
            )
        )
    return plans


@dataclass
class StormState:
    """What bodies, listeners and observers saw during a storm."""

    started_calls: set[str] = field(default_factory=set)
    bodies: set[str] = field(default_factory=set)
    body_signals: dict[str, Signal] = field(default_factory=dict)
    notifications: Counter[str] = field(default_factory=Counter)
    observed: dict[str, ToolResult] = field(default_factory=dict)
    expected_observer_failures: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    active_sync: int = 0
    sync_started: int = 0
    sync_finished: int = 0


@dataclass
class StormReport:
    """Counts, timings and every violated invariant of one storm."""

    calls: int
    mixed: bool
    seconds: float = 0.0
    max_latency: float = 0.0
    max_latency_call: str = ""
    p50_latency: float = 0.0
    p99_latency: float = 0.0
    tasks_before: int = 0
    tasks_after: int = 0
    leaked_tasks: list[str] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    raised: int = 0  # calls whose caller got CancelledError
    never_started: int = 0  # task cancelled before the call began: no result, no notification
    swallowed_cancels: int = 0  # task cancelled while running, yet the call returned a result
    bodies_run: int = 0
    sync_bodies: int = 0
    marked: int = 0
    observer_failures: int = 0
    violations: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"storm ({'python listeners + pack' if self.mixed else 'pack only'}): {self.calls} calls "
            f"in {self.seconds:.2f}s, per-call latency p50 {self.p50_latency * 1000:.1f} ms, "
            f"p99 {self.p99_latency * 1000:.1f} ms, max {self.max_latency * 1000:.1f} ms ({self.max_latency_call})",
            f"  outcomes: {dict(sorted(self.outcomes.items()))}; CancelledError raised to the caller: {self.raised}; "
            f"cancelled before starting: {self.never_started}",
            f"  bodies run: {self.bodies_run} (sync, in threads: {self.sync_bodies}); marked calls: {self.marked}, "
            f"none ran; observer failures isolated: {self.observer_failures}",
            f"  task cancels swallowed (call returned a result although its task was cancelled): "
            f"{self.swallowed_cancels}",
            f"  tasks before/after: {self.tasks_before}/{self.tasks_after}; leaked: {len(self.leaked_tasks)}",
            f"  violations: {len(self.violations)}",
        ]
        lines += [f"    - {v}" for v in self.violations[:20]]
        return "\n".join(lines)


def build_storm_registry(state: StormState, pack_root: Path, mixed: bool) -> Registry:
    """Tools, the storm pack, a deadline wrapper, observers; in mixed mode, Python listeners too."""
    registry = Registry()
    parameters = {
        "x": {"type": "integer", "required": True, "description": "call index"},
        "mode": {"type": "string", "required": True, "allowed": list(MODES), "description": "what the body does"},
        "ms": {"type": "integer", "required": True, "description": "how long a slow body works"},
        "marked": {"type": "boolean", "required": True, "description": "the guard denies marked calls"},
        "deadline_ms": {"type": "integer", "required": True, "description": "execute-wrapper deadline"},
    }

    async def work(args: Mapping[str, Any], ctx: Dispatch) -> str:
        state.bodies.add(ctx.call.call_id)
        state.body_signals[ctx.call.call_id] = ctx.signal
        mode = args["mode"]
        if mode == "raise":
            await asyncio.sleep(0)
            raise RuntimeError(f"body of call {args['x']} failed")
        if mode == "hang":
            await asyncio.sleep(3600)
        await asyncio.sleep(args["ms"] / 1000 if mode == "slow" else 0)
        return f"done {args['x']}"

    def crunch(args: Mapping[str, Any], ctx: Dispatch) -> str:
        start = time.monotonic()
        with state.lock:
            state.active_sync += 1
            state.sync_started += 1
        state.bodies.add(ctx.call.call_id)
        state.body_signals[ctx.call.call_id] = ctx.signal
        try:
            mode = args["mode"]
            runtime = SYNC_MAX_RUNTIME if mode == "hang" else args["ms"] / 1000 if mode == "slow" else 0.0
            while time.monotonic() - start < runtime:
                if ctx.signal.aborted:  # a cooperative body stops as soon as its signal fires
                    break
                time.sleep(0.0005)
            if mode == "raise":
                raise RuntimeError(f"sync body of call {args['x']} failed")
            return f"crunched {args['x']}"
        finally:
            with state.lock:
                state.active_sync -= 1
                state.sync_finished += 1

    registry.register(define_tool(name="work", description="async storm body", parameters=parameters, execute=work))
    registry.register(define_tool(name="crunch", description="sync storm body", parameters=parameters, execute=crunch))

    if mixed:

        async def python_guard(call: ToolCall) -> str | None:
            await asyncio.sleep(0)  # a scheduling point between pre-execute and the pack's guard
            return None

        registry.guard(python_guard, name="python-guard")

    async def deadline_wrapper(dispatch: Dispatch, next: Next) -> Any:
        ms = dispatch.arguments["deadline_ms"]
        if ms:
            return await next(dispatch.with_signal(Signal.timeout(ms / 1000, f"wrapper deadline of {ms} ms")))
        return await next()

    registry.on_execute(deadline_wrapper, name="deadline-wrapper")

    folder = pack_root / "storm"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pack.yaml").write_text(
        yaml.safe_dump({"name": "storm", "version": "1.0.0", "description": "storm", "files": ["rules.yaml"]}),
        encoding="utf-8",
    )
    (folder / "rules.yaml").write_text(yaml.safe_dump(STORM_PACK, sort_keys=False), encoding="utf-8")
    PolicyLayers.install(registry, [folder])

    if mixed:

        async def python_pre(call: ToolCall, next: Next) -> PreDecision:
            await asyncio.sleep(0)
            x = call.arguments["x"]
            if x % 13 == 0:
                return deny(f"python listener denies call {x}")
            if x % 17 == 0:
                raise RuntimeError(f"python listener fails on call {x}")  # fails closed: denied
            result: PreDecision = await next()
            return result

        registry.on_pre_execute(python_pre, name="python-pre")

        async def python_post(call: ToolCall, result: PendingResult, next: Next) -> PostDecision:
            await asyncio.sleep(0)
            decision: PostDecision = await next()
            return decision

        registry.on_post_execute(python_post, name="python-post")

    def flaky_observer(result: ToolResult) -> None:
        if result.arguments.get("x", 0) % 4 == 0:
            raise RuntimeError("observer failure (x % 4 == 0)")

    def counting_observer(result: ToolResult) -> None:
        state.notifications[result.call_id] += 1
        state.observed[result.call_id] = result
        state.expected_observer_failures += 2 if result.arguments.get("x", 0) % 4 == 0 else 1

    def broken_observer(result: ToolResult) -> None:
        raise ValueError("this observer always fails")

    registry.on_result(flaky_observer, name="flaky-observer")
    registry.on_result(counting_observer, name="counting-observer")
    registry.on_result(broken_observer, name="broken-observer")
    return registry


async def run_storm(n: int, *, seed: int = 0, mixed: bool = True, pack_root: Path | None = None) -> StormReport:
    """Run N concurrent calls with random cancels, deadlines and failures; check every invariant."""
    with tempfile.TemporaryDirectory() as tmp, quiet_engine_log():
        return await _storm(n, seed, mixed, Path(pack_root or tmp))


@contextlib.contextmanager
def quiet_engine_log() -> Iterator[None]:
    """Thousands of deliberately failing observers would each log a traceback; counted, not printed."""
    logger = logging.getLogger("policyengine")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


async def _storm(n: int, seed: int, mixed: bool, pack_root: Path) -> StormReport:
    loop = asyncio.get_running_loop()
    state = StormState()
    registry = build_storm_registry(state, pack_root, mixed)
    plans = make_plans(n, seed)
    report = StormReport(calls=n, mixed=mixed)
    shared = Signal()  # a long-lived caller signal shared by many calls (a session's, say)
    cancel_accepted: dict[str, bool] = {}
    latency: dict[str, float] = {}
    current = asyncio.current_task()
    before = asyncio.all_tasks() - {current}
    report.tasks_before = len(before)

    async def one(plan: Plan, signal: Signal) -> ToolResult:
        state.started_calls.add(plan.call_id)
        start = time.perf_counter()
        try:
            return await registry.call(plan.tool, plan.arguments, signal=signal, call_id=plan.call_id)
        finally:
            latency[plan.call_id] = time.perf_counter() - start

    def cancel(task: asyncio.Task[ToolResult], plan: Plan) -> None:
        cancel_accepted[plan.call_id] = task.cancel()

    started = time.perf_counter()
    tasks: list[asyncio.Task[ToolResult]] = []
    for plan in plans:
        signal = shared if plan.shared_signal else Signal()
        if plan.abort_before:
            signal.abort("aborted by the caller before the call")
        task = asyncio.create_task(one(plan, signal))
        tasks.append(task)
        if plan.cancel_now:
            cancel(task, plan)
        if plan.abort_after is not None:
            loop.call_later(plan.abort_after, signal.abort, "aborted by the caller")
        if plan.cancel_after is not None:
            loop.call_later(plan.cancel_after, cancel, task, plan)
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    report.seconds = time.perf_counter() - started

    # Sync bodies whose call ended early may still be finishing their own (bounded) runtime.
    deadline = time.monotonic() + SYNC_MAX_RUNTIME + 2.0
    while state.active_sync and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    for _ in range(5):
        await asyncio.sleep(0.005)  # let cancelled inner tasks unwind
    leaked = asyncio.all_tasks() - before - {current}
    report.tasks_after = len(asyncio.all_tasks() - {current})
    report.leaked_tasks = [repr(t)[:200] for t in leaked]

    v = report.violations
    for plan, outcome in zip(plans, outcomes, strict=True):
        cid = plan.call_id
        began = cid in state.started_calls
        seen = state.notifications[cid]
        observed = state.observed.get(cid)
        report.marked += plan.marked
        if not began:
            report.never_started += 1
            if not isinstance(outcome, asyncio.CancelledError):
                v.append(f"{cid}: never started yet returned {outcome!r:.100}")
            if seen:
                v.append(f"{cid}: never started yet observers saw it {seen} times")
            continue
        if seen != 1 or observed is None:
            v.append(f"{cid}: observers notified {seen} times, expected exactly once")
            continue
        if isinstance(outcome, asyncio.CancelledError):
            report.raised += 1
            if observed.outcome is not Outcome.CANCELLED:
                v.append(f"{cid}: CancelledError raised but observers saw {observed.outcome.value}")
            if not cancel_accepted.get(cid):
                v.append(f"{cid}: CancelledError raised although its task was never cancelled")
        elif isinstance(outcome, BaseException):
            v.append(f"{cid}: registry.call raised {outcome!r:.150}")
            continue
        else:
            if outcome is not observed:
                v.append(f"{cid}: the caller's result is not the one the observers saw")
            if cancel_accepted.get(cid):
                report.swallowed_cancels += 1
        result = observed
        report.outcomes[result.outcome.value] += 1
        ran = cid in state.bodies
        report.bodies_run += ran
        report.sync_bodies += ran and plan.tool == "crunch"
        if result.reason and "internal error" in result.reason:
            v.append(f"{cid}: internal error: {result.reason}")
        if result.outcome in (Outcome.INVALID, Outcome.BLOCKED):
            v.append(f"{cid}: unexpected outcome {result.outcome.value}: {result.reason}")
        if plan.marked and (ran or result.outcome is Outcome.OK):
            v.append(f"{cid}: GUARD BYPASSED: marked call ran={ran}, outcome={result.outcome.value}")
        if plan.marked and result.outcome not in (Outcome.DENIED, Outcome.CANCELLED):
            v.append(f"{cid}: marked call ended {result.outcome.value}, expected denied or cancelled")
        if plan.pre_denied(mixed) and (ran or result.outcome not in (Outcome.DENIED, Outcome.CANCELLED)):
            v.append(f"{cid}: pre-execute denial ignored: ran={ran}, outcome={result.outcome.value}")
        if plan.abort_before and ran:
            v.append(f"{cid}: body ran although the caller's signal was aborted before the call")
        if result.outcome is Outcome.DENIED and ran:
            v.append(f"{cid}: denied at {result.stage} but the body ran")
        if result.outcome is Outcome.OK and (plan.mode in ("hang", "raise") or not ran):
            v.append(f"{cid}: ok although mode={plan.mode}, ran={ran}")
        if result.outcome is Outcome.ERROR and not (ran and plan.mode == "raise"):
            v.append(f"{cid}: error although mode={plan.mode}, ran={ran}: {result.reason}")
        if result.outcome in (Outcome.CANCELLED, Outcome.TIMED_OUT) and result.stage is Stage.EXECUTE and ran:
            body_signal = state.body_signals.get(cid)
            if body_signal is None or not body_signal.aborted:
                v.append(f"{cid}: ended {result.outcome.value} in execute but the body's signal never fired")
    if report.leaked_tasks:
        v.append(f"{len(report.leaked_tasks)} task(s) leaked, e.g. {report.leaked_tasks[0]}")
    if state.active_sync:
        v.append(f"{state.active_sync} sync bodies still running after their own runtime")
    # No wall-clock check of a body's own loop: how long a thread waits for a core measures the
    # machine's load, not the engine (it failed CI on a shared 2-core machine). That every body ended
    # is checked above (active_sync).
    if shared._callbacks:  # private, but the only way to see a leaked listener on a long-lived signal
        v.append(f"the shared caller signal still holds {len(shared._callbacks)} listener(s)")
    report.observer_failures = registry.stats["observer_failures"]
    if report.observer_failures != state.expected_observer_failures:
        v.append(f"observer failures counted {report.observer_failures}, expected {state.expected_observer_failures}")
    if latency:
        report.max_latency_call, report.max_latency = max(latency.items(), key=lambda kv: kv[1])
        report.p50_latency, report.p99_latency = percentiles(list(latency.values()))
    return report


def percentiles(values: list[float]) -> tuple[float, float]:
    """(median, 99th percentile) of a non-empty list."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, len(ordered) * 99 // 100)]


# -- reload under load ------------------------------------------------------------------------------

RELOAD_BUDGET = {"v1": 30, "v2": 60}  # execute-rule timeout of each version; the body reads its budget


def stamp_pack(version: str) -> dict[str, Any]:
    """The rules of one version: every stage stamps the version into what it decides or rewrites."""
    odd, even = "'[13579]$'", "'[02468]$'"
    deny_x, deny_y = (odd, odd) if version == "v1" else (even, even)
    return {
        "rules": [
            {
                "id": "stamp-pre-deny",
                "description": f"{version} denies some x",
                "stage": "pre-execute",
                "tools": ["probe"],
                "when": f"regex_match(to_string(arguments.x), {deny_x})",
                "decision": "deny",
                "reason": f"{version} denies x={{arguments.x}}",
            },
            {
                "id": "stamp-pre-allow",
                "description": f"{version} admits the rest, naming itself",
                "stage": "pre-execute",
                "tools": ["probe"],
                "decision": "allow",
            },
            {
                "id": "stamp-guard",
                "description": f"{version} refuses some y",
                "stage": "guard",
                "tools": ["probe"],
                "when": f"regex_match(to_string(arguments.y), {deny_y})",
                "reason": f"{version} guard refuses y={{arguments.y}}",
            },
            {
                "id": "stamp-deadline",
                "description": f"{version} gives the body its own deadline",
                "stage": "execute",
                "tools": ["probe"],
                "timeout": RELOAD_BUDGET[version],
            },
            {
                "id": "stamp-redact",
                "description": f"{version} redacts f to its own name",
                "stage": "post-execute",
                "tools": ["probe"],
                "redact": [{"path": "f", "replace_with": version}],
            },
        ]
    }


def write_stamp_packs(root: Path) -> dict[str, Path]:
    """Write packs v1 and v2 (same name and rule ids, different versions) under root."""
    folders = {}
    for number, version in enumerate(("v1", "v2"), start=1):
        folder = root / version
        folder.mkdir(parents=True, exist_ok=True)
        manifest = {"name": "stamp", "version": f"{number}.0.0", "description": version, "files": ["rules.yaml"]}
        (folder / "pack.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
        (folder / "rules.yaml").write_text(yaml.safe_dump(stamp_pack(version), sort_keys=False), encoding="utf-8")
        folders[version] = folder
    return folders


@dataclass
class Installed:
    """Which version the reloader installed last, and how many swaps it made."""

    version: str = "v1"
    swaps: int = 0


@dataclass
class ReloadReport:
    """Counts, timings and every call that saw a mix of packs (or the wrong one)."""

    calls: int
    mixed: bool
    seconds: float = 0.0
    reloads: int = 0
    failed_reloads: int = 0
    max_reload: float = 0.0
    max_latency: float = 0.0
    p50_latency: float = 0.0
    p99_latency: float = 0.0
    tasks_before: int = 0
    tasks_after: int = 0
    by_version: Counter[str] = field(default_factory=Counter)
    decided_at: Counter[str] = field(default_factory=Counter)
    straddled: int = 0  # calls in flight while at least one reload happened
    straddled_and_ran: int = 0
    violations: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"reload under load ({'python listeners + pack' if self.mixed else 'pack only'}): {self.calls} calls, "
            f"{self.reloads} reloads ({self.failed_reloads} failed, slowest {self.max_reload * 1000:.1f} ms) "
            f"in {self.seconds:.2f}s, per-call latency p50 {self.p50_latency * 1000:.1f} ms, "
            f"p99 {self.p99_latency * 1000:.1f} ms, max {self.max_latency * 1000:.1f} ms",
            f"  evaluated by: {dict(sorted(self.by_version.items()))}; "
            f"decided at: {dict(sorted(self.decided_at.items()))}",
            f"  calls in flight across a reload: {self.straddled} "
            f"(of which reached the body: {self.straddled_and_ran})",
            f"  tasks before/after: {self.tasks_before}/{self.tasks_after}",
            f"  violations: {len(self.violations)}",
        ]
        lines += [f"    - {v}" for v in self.violations[:20]]
        return "\n".join(lines)


def build_reload_registry(budgets: dict[str, float], mixed: bool, rng: random.Random | None = None) -> Registry:
    """The probe tool; in mixed mode, Python listeners that put scheduling points between stages."""
    jitter = rng or random.Random(0)
    registry = Registry()
    integer = {"type": "integer", "required": True, "description": "a number"}

    async def probe(args: Mapping[str, Any], ctx: Dispatch) -> dict[str, Any]:
        deadline = ctx.signal.deadline
        budgets[ctx.call.call_id] = (deadline - time.monotonic()) if deadline is not None else -1.0
        await asyncio.sleep(jitter.uniform(0, 0.004))
        return {"x": args["x"], "f": "secret"}

    registry.register(
        define_tool(
            name="probe",
            description="records the deadline it was given",
            parameters={"x": integer, "y": integer},
            execute=probe,
            output={"schema": {"type": "dict", "schema": {"x": {"type": "integer"}, "f": {"type": "string"}}}},
        )
    )
    if mixed:

        async def python_guard(call: ToolCall) -> str | None:
            await asyncio.sleep(jitter.uniform(0, 0.002))  # between the pack's pre-execute and its guard
            return None

        async def python_post(call: ToolCall, result: PendingResult, next: Next) -> PostDecision:
            await asyncio.sleep(jitter.uniform(0, 0.002))  # between the body and the pack's post-execute
            decision: PostDecision = await next()
            return decision

        async def python_execute(dispatch: Dispatch, next: Next) -> Any:
            await asyncio.sleep(jitter.uniform(0, 0.002))  # between the guards and the pack's wrapper
            return await next()

        registry.guard(python_guard, name="python-guard")
        registry.on_post_execute(python_post, name="python-post")
        registry.on_execute(python_execute, name="python-execute")

    return registry


def stamps_of(result: ToolResult, budget: float | None, digests: dict[str, str]) -> dict[str, str]:
    """Which version each stage of the call was evaluated by, as far as the result shows it."""
    version_of = {digest: version for version, digest in digests.items()}

    def version(source: Source | None) -> str:
        return version_of.get(source.digest or "", "?") if source is not None else "?"

    stamps: dict[str, str] = {}
    x, y = result.arguments["x"], result.arguments["y"]
    if result.stage is Stage.PRE_EXECUTE:
        stamps["pre (deciding rule)"] = version(result.source)
        stamps["pre (reason)"] = (result.reason or "?")[:2]
        stamps["pre (parity)"] = "v1" if x % 2 else "v2"
        return stamps
    admitted = result.admitted_by
    stamps["pre (admitting rule)"] = version(admitted)
    stamps["pre (parity)"] = "v1" if x % 2 == 0 else "v2"
    if result.stage is Stage.GUARD:
        stamps["guard (deciding rule)"] = version(result.source)
        stamps["guard (reason)"] = (result.reason or "?")[:2]
        stamps["guard (parity)"] = "v1" if y % 2 else "v2"
        return stamps
    stamps["guard (passed, parity)"] = "v1" if y % 2 == 0 else "v2"
    if budget is not None:
        stamps["execute (deadline)"] = "v1" if budget <= (RELOAD_BUDGET["v1"] + RELOAD_BUDGET["v2"]) / 2 else "v2"
    if result.outcome is Outcome.OK:
        stamps["post (value)"] = str(result.value.get("f"))
        stamps["post (rewrite)"] = version(result.rewrites[-1] if result.rewrites else None)
    return stamps


async def run_reload(
    n: int,
    *,
    reloads: int = 50,
    reload_every: float = 0.002,
    seed: int = 0,
    mixed: bool = True,
    root: Path | None = None,
) -> ReloadReport:
    """N concurrent calls while the pack is swapped between v1 and v2 every `reload_every` seconds.

    The calls are started in `reloads` waves, each after one more reload, so the run sees at
    least that many reloads whatever the speed of the machine.
    """
    with tempfile.TemporaryDirectory() as tmp:
        return await _reload(n, reloads, reload_every, seed, mixed, Path(root or tmp))


async def _reload(n: int, reloads: int, reload_every: float, seed: int, mixed: bool, root: Path) -> ReloadReport:
    rng = random.Random(seed)
    folders = write_stamp_packs(root)
    digests = {version: load_pack(folder).digest for version, folder in folders.items()}
    budgets: dict[str, float] = {}
    registry = build_reload_registry(budgets, mixed, rng)
    layers = PolicyLayers.install(registry, [folders["v1"]])
    if mixed:

        async def python_pre(call: ToolCall, next: Next) -> PreDecision:
            await asyncio.sleep(rng.uniform(0, 0.002))  # inside pre-execute, after the pack's rules ran
            decision: PreDecision = await next()
            return decision

        registry.on_pre_execute(python_pre, name="python-pre")

    report = ReloadReport(calls=n, mixed=mixed)
    installed = Installed()
    current = asyncio.current_task()
    before = asyncio.all_tasks() - {current}
    report.tasks_before = len(before)
    start_version: dict[str, str] = {}
    start_swaps: dict[str, int] = {}
    end_swaps: dict[str, int] = {}
    latency: dict[str, float] = {}
    done = asyncio.Event()

    async def reloader() -> None:
        while not done.is_set():
            await asyncio.sleep(reload_every)
            target = "v2" if installed.version == "v1" else "v1"
            t0 = time.perf_counter()
            swap = layers.reload([folders[target]])
            report.max_reload = max(report.max_reload, time.perf_counter() - t0)
            if swap.swapped:
                installed.version = target
                installed.swaps += 1
                report.reloads += 1
            else:
                report.failed_reloads += 1

    async def one(i: int) -> ToolResult:
        cid = f"reload-{seed}-{i}"
        # registry.call takes its installation snapshot before its first await: this is the
        # pack the whole call must be evaluated against.
        start_version[cid], start_swaps[cid] = installed.version, installed.swaps
        t0 = time.perf_counter()
        try:
            return await registry.call("probe", {"x": rng.randrange(1000), "y": rng.randrange(1000)}, call_id=cid)
        finally:
            end_swaps[cid] = installed.swaps
            latency[cid] = time.perf_counter() - t0

    reloading = asyncio.create_task(reloader())
    t_start = time.perf_counter()
    tasks = []
    wave = max(1, -(-n // max(1, reloads)))
    for i in range(n):
        tasks.append(asyncio.create_task(one(i)))
        if i % wave == wave - 1:
            # The next wave starts after one more reload, while this one is still in flight.
            wanted = i // wave + 1
            while report.reloads < wanted:
                await asyncio.sleep(reload_every / 4)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    done.set()
    await reloading
    report.seconds = time.perf_counter() - t_start
    for _ in range(3):
        await asyncio.sleep(0.005)
    report.tasks_after = len(asyncio.all_tasks() - {current})
    leaked = asyncio.all_tasks() - before - {current}
    v = report.violations
    if leaked:
        v.append(f"{len(leaked)} task(s) leaked")
    for i, result in enumerate(results):
        cid = f"reload-{seed}-{i}"
        if not isinstance(result, ToolResult):
            v.append(f"{cid}: registry.call raised {result!r:.150}")
            continue
        if result.outcome not in (Outcome.OK, Outcome.DENIED):
            v.append(f"{cid}: unexpected outcome {result.outcome.value}: {result.reason}")
            continue
        stamps = stamps_of(result, budgets.get(cid), digests)
        versions = set(stamps.values())
        report.decided_at[result.stage.value if result.stage else "ok"] += 1
        if len(versions) != 1:
            v.append(f"{cid}: MIXED PACKS {stamps}")
            continue
        (version,) = versions
        report.by_version[version] += 1
        if version != start_version[cid]:
            v.append(f"{cid}: evaluated by {version}, but {start_version[cid]} was installed when it started")
        if end_swaps[cid] != start_swaps[cid]:
            report.straddled += 1
            report.straddled_and_ran += cid in budgets
    if report.failed_reloads:
        v.append(f"{report.failed_reloads} reload(s) failed")
    if latency:
        report.max_latency = max(latency.values())
        report.p50_latency, report.p99_latency = percentiles(list(latency.values()))
    return report


# -- command line -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=10_000, help="concurrent calls per storm round")
    parser.add_argument("--rounds", type=int, default=1, help="storm rounds (different seeds)")
    parser.add_argument("--reload-calls", type=int, default=10_000, help="calls in the reload-under-load run")
    parser.add_argument("--reloads", type=int, default=200, help="reload waves in the reload-under-load run")
    parser.add_argument("--reload-every", type=float, default=0.002, help="seconds between reloads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pack-only", action="store_true", help="no Python listeners (the registry's fast paths)")
    args = parser.parse_args(argv)
    mixed_modes = [False] if args.pack_only else [True, False]
    failures = 0

    async def go() -> None:
        nonlocal failures
        for round_ in range(args.rounds):
            for mixed in mixed_modes:
                report = await run_storm(args.calls, seed=args.seed + round_, mixed=mixed)
                print(f"[round {round_ + 1}/{args.rounds}] " + report.summary(), flush=True)
                failures += len(report.violations)
        if args.reload_calls:
            for mixed in mixed_modes:
                reload_report = await run_reload(
                    args.reload_calls,
                    reloads=args.reloads,
                    reload_every=args.reload_every,
                    seed=args.seed,
                    mixed=mixed,
                )
                print(reload_report.summary(), flush=True)
                failures += len(reload_report.violations)

    t0 = time.perf_counter()
    asyncio.run(go())
    print(f"total {time.perf_counter() - t0:.1f}s; violations: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
