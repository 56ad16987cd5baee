"""The one executor for every waterfall: listeners chained by next(), built at install time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from policyengine.values.decisions import Source

T = TypeVar("T")

Terminal = Callable[[tuple[Any, ...], "Trace"], Awaitable["ChainResult[Any]"]]
Step = Callable[[tuple[Any, ...], "Trace"], Awaitable["ChainResult[Any]"]]
Rebind = Callable[[tuple[Any, ...], tuple[Any, ...], Source], tuple[Any, ...]]
Watch = Callable[[tuple[Any, ...], bool], str | None]
# settle(downstream, value, source): what a listener that returned `value` of its own, after next()
# returned `downstream`, decided (a stage where what came back may not be undone, say).
Settle = Callable[["ChainResult[Any]", Any, Source], "ChainResult[Any]"]
# keep(value): for a value next() returned that other calls share (a decision, its source), a check that
# tells whether it is still as it was returned, putting it back if not; None when there is nothing to keep.
Keep = Callable[[Any], "Callable[[], bool] | None"]


class NotADecision(Exception):
    """A listener returned something that is not a decision of its stage."""


class Tampered(Exception):
    """A listener changed what it may only read: the call policy saw, or a dispatch beyond its signal."""


@dataclass(frozen=True, slots=True)
class Listener:
    """A registered listener: the function and who it is, for explanations."""

    fn: Callable[..., Awaitable[Any]]
    source: Source


@dataclass(frozen=True, slots=True)
class ChainResult(Generic[T]):
    """What a chain returned, the listener (or rule) it came from, and the arguments it saw."""

    value: T
    source: Source | None
    seen: tuple[Any, ...] = ()


@dataclass(slots=True)
class Fault:
    """An exception or bad return value, pinned on the listener it came from."""

    source: Source
    error: BaseException


class Trace:
    """Per-run bookkeeping: which listener is running, and every fault seen.

    `watch(args, returning)`, when set, says what a listener changed that it may only read
    (None: nothing); it is asked as each listener hands `args` on through next() and as it
    returns (`returning`), so a change is pinned on the listener that made it.
    """

    __slots__ = ("deadline", "faults", "origin", "running", "stuck", "watch")

    def __init__(self, watch: Watch | None = None) -> None:
        # Written out, not a dataclass: one is built per stage of every call, and this is ~40% cheaper.
        self.running: list[Source] = []
        self.stuck: Source | None = None
        self.faults: list[Fault] = []
        self.origin: dict[int, Source] = {}
        self.watch = watch
        # The event-loop time by which the stage must answer, when it has a deadline: the innermost
        # listener that returns after it is the one that overran (it may have blocked the loop, so
        # no cancel ever reached it to mark it stuck).
        self.deadline: float | None = None

    def blame(self, error: BaseException, source: Source) -> None:
        """Record that `error` surfaced first in `source` (innermost frame wins)."""
        if id(error) not in self.origin:
            self.origin[id(error)] = source
            self.faults.append(Fault(source, error))

    def culprit(self, error: BaseException) -> Source | None:
        """The listener an exception came from, if it came from one."""
        return self.origin.get(id(error))


def credit(claimed: object, listener: Source) -> Source:
    """Who a listener's own decision is credited to: a rule of the listener's own pack, else the listener.

    A decision object can carry any Source; only the engine knows which listener returned it. A pack's
    listener names the rule that fired; a listener written in Python cannot borrow a pack rule's name.
    """
    if claimed is listener or not isinstance(claimed, Source):
        return listener
    if listener.pack is not None and claimed.pack == listener.pack and claimed.digest == listener.digest:
        return claimed
    return listener


def _no_rebind(args: tuple[Any, ...], extra: tuple[Any, ...], source: Source) -> tuple[Any, ...]:
    raise TypeError(f"next() takes no arguments in this stage (got {len(extra)})")


class Waterfall(Generic[T]):
    """A chain of `listener(*args, next) -> value`, composed once and run many times.

    `check` says whether a listener's return value is a decision of this stage;
    `rebind(args, extra, source)` turns `next(*extra)`, called by the listener
    `source`, into the arguments the rest of the chain sees (a replaced signal,
    a rewritten result); `settle`, when given, decides what a listener that returned a
    decision of its own after next() returned another one decided (see Settle).
    """

    __slots__ = ("_entry", "listeners")

    def __init__(
        self,
        listeners: Sequence[Listener],
        terminal: Terminal,
        check: Callable[[Any], bool],
        rebind: Rebind = _no_rebind,
        settle: Settle | None = None,
        keep: Keep | None = None,
    ) -> None:
        self.listeners = tuple(listeners)
        step: Step = terminal
        for listener in reversed(self.listeners):
            step = _link(listener, step, check, rebind, settle, keep)
        self._entry = step

    async def run(self, args: tuple[Any, ...], trace: Trace) -> ChainResult[T]:
        """Run the chain from its first listener."""
        return await self._entry(args, trace)


def _link(
    listener: Listener,
    downstream: Step,
    check: Callable[[Any], bool],
    rebind: Rebind,
    settle: Settle | None,
    keep: Keep | None,
) -> Step:
    fn, source = listener.fn, listener.source

    async def step(args: tuple[Any, ...], trace: Trace) -> ChainResult[Any]:
        passed: list[ChainResult[Any]] = []
        handed = [args]
        kept: list[Callable[[], bool]] = []

        async def next_(*extra: Any) -> Any:
            if extra:
                try:
                    handed.append(rebind(args, extra, source))
                except Exception as error:
                    # Blamed here, not when it leaves the listener: one that swallows the
                    # refusal of its own next() argument must not get away with it.
                    trace.blame(error, source)
                    raise
            if trace.deadline is not None and trace.stuck is None and _now() > trace.deadline:
                trace.stuck = source  # it overran before it handed on: not the listeners after it
            if trace.watch is not None:
                _refuse_change(trace.watch(handed[-1], False), trace, source)
            verdict = await downstream(handed[-1], trace)
            passed.append(verdict)
            if keep is not None:
                intact = keep(verdict.value)
                if intact is not None:
                    kept.append(intact)
            return verdict.value

        trace.running.append(source)
        try:
            value = await fn(*args, next_)
            if trace.deadline is not None and trace.stuck is None and _now() > trace.deadline:
                trace.stuck = source
            if kept and not all([intact() for intact in kept]):  # every one put back, not just the first
                raise Tampered("wrote to a decision next() returned (put back)")
            if trace.watch is not None:
                _refuse_change(trace.watch(args, True), trace, source)
            if not check(value):
                raise NotADecision(
                    f"{source} returned {type(value).__name__} {value!r:.80}, not a decision"
                    + (" (did it forget `return await next()`?)" if value is None else "")
                )
        except asyncio.CancelledError as error:
            # The innermost listener sees a stage deadline first: that is the one that hung,
            # even if an outer listener swallows the cancel. Blamed too: a cancel nobody sent
            # (a stray one) is this listener's failure, and the stage decides which it was.
            trace.stuck = trace.stuck or source
            trace.blame(error, source)
            raise
        except BaseException as error:  # KeyboardInterrupt, SystemExit and the like are faults like any other
            trace.blame(error, source)
            raise
        finally:
            trace.running.pop()
        if passed:
            if value is passed[-1].value:
                return passed[-1]
            if settle is not None:
                try:
                    return settle(passed[-1], value, source)
                except BaseException as error:  # a rewrite from further down failed to apply: its maker's fault
                    trace.blame(error, passed[-1].source or source)
                    raise
        # A listener that rewrote through next() and then decided itself decided on top of
        # its own rewrite, never on what it was first handed.
        return ChainResult(value, credit(getattr(value, "source", None), source), handed[-1])

    return step


def _now() -> float:
    return asyncio.get_running_loop().time()


def _refuse_change(changed: str | None, trace: Trace, source: Source) -> None:
    """Raise Tampered, blamed on `source`, when a watch reported a change."""
    if changed is not None:
        error = Tampered(changed)
        trace.blame(error, source)  # at once: the listener may swallow it
        raise error
