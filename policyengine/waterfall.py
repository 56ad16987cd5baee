"""The one executor for every waterfall: listeners chained by next(), built at install time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .decisions import Source

T = TypeVar("T")

Terminal = Callable[[tuple[Any, ...], "Trace"], Awaitable["Verdict[Any]"]]
Step = Callable[[tuple[Any, ...], "Trace"], Awaitable["Verdict[Any]"]]
Rebind = Callable[[tuple[Any, ...], tuple[Any, ...], Source], tuple[Any, ...]]


class NotADecision(Exception):
    """A listener returned something that is not a decision of its stage."""


@dataclass(frozen=True, slots=True)
class Listener:
    """A registered listener: the function and who it is, for explanations."""

    fn: Callable[..., Awaitable[Any]]
    source: Source


@dataclass(frozen=True, slots=True)
class Verdict(Generic[T]):
    """What a chain returned, the listener (or rule) it came from, and the arguments it saw."""

    value: T
    source: Source | None
    seen: tuple[Any, ...] = ()


@dataclass(slots=True)
class Fault:
    """An exception or bad return value, pinned on the listener it came from."""

    source: Source
    error: BaseException


@dataclass(slots=True)
class Trace:
    """Per-run bookkeeping: which listener is running, and every fault seen."""

    running: list[Source] = field(default_factory=list)
    stuck: Source | None = None
    faults: list[Fault] = field(default_factory=list)
    origin: dict[int, Source] = field(default_factory=dict)

    def blame(self, error: BaseException, source: Source) -> None:
        """Record that `error` surfaced first in `source` (innermost frame wins)."""
        if id(error) not in self.origin:
            self.origin[id(error)] = source
            self.faults.append(Fault(source, error))

    def culprit(self, error: BaseException) -> Source | None:
        """The listener an exception came from, if it came from one."""
        return self.origin.get(id(error))


def _no_rebind(args: tuple[Any, ...], extra: tuple[Any, ...], source: Source) -> tuple[Any, ...]:
    raise TypeError(f"next() takes no arguments in this stage (got {len(extra)})")


class Waterfall(Generic[T]):
    """A chain of `listener(*args, next) -> value`, composed once and run many times.

    `check` says whether a listener's return value is a decision of this stage;
    `rebind(args, extra, source)` turns `next(*extra)`, called by the listener
    `source`, into the arguments the rest of the chain sees (a replaced signal,
    a rewritten result).
    """

    __slots__ = ("_entry", "listeners")

    def __init__(
        self,
        listeners: Sequence[Listener],
        terminal: Terminal,
        check: Callable[[Any], bool],
        rebind: Rebind = _no_rebind,
    ) -> None:
        self.listeners = tuple(listeners)
        step: Step = terminal
        for listener in reversed(self.listeners):
            step = _link(listener, step, check, rebind)
        self._entry = step

    async def run(self, args: tuple[Any, ...], trace: Trace) -> Verdict[T]:
        """Run the chain from its first listener."""
        return await self._entry(args, trace)


def _link(listener: Listener, downstream: Step, check: Callable[[Any], bool], rebind: Rebind) -> Step:
    fn, source = listener.fn, listener.source

    async def step(args: tuple[Any, ...], trace: Trace) -> Verdict[Any]:
        passed: list[Verdict[Any]] = []
        handed = [args]

        async def next_(*extra: Any) -> Any:
            if extra:
                handed.append(rebind(args, extra, source))
            verdict = await downstream(handed[-1], trace)
            passed.append(verdict)
            return verdict.value

        trace.running.append(source)
        try:
            value = await fn(*args, next_)
            if not check(value):
                raise NotADecision(
                    f"{source} returned {type(value).__name__} {value!r:.80}, not a decision"
                    + (" (did it forget `return await next()`?)" if value is None else "")
                )
        except Exception as error:
            trace.blame(error, source)
            raise
        except asyncio.CancelledError:
            # The innermost listener sees a stage deadline first: that is the one that hung,
            # even if an outer listener swallows the cancel.
            trace.stuck = trace.stuck or source
            raise
        finally:
            trace.running.pop()
        if passed and value is passed[-1].value:
            return passed[-1]
        # A listener that rewrote through next() and then decided itself decided on top of
        # its own rewrite, never on what it was first handed.
        return Verdict(value, getattr(value, "source", None) or source, handed[-1])

    return step
