"""The tool body under its signal: the execute stage's terminal, and awaiting until a signal fires."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable
from typing import Any

from policyengine.runtime.waterfall import ChainResult, Trace
from policyengine.values.call import Dispatch
from policyengine.values.cancellation import AbortReason, Signal
from policyengine.values.decisions import Source, SourceKind


class Aborted(BaseException):
    """The call's signal fired; a BaseException so retry wrappers do not swallow it."""

    def __init__(self, reason: AbortReason) -> None:
        super().__init__(reason.message)
        self.reason = reason


def tool_source(name: str) -> Source:
    """The Source that names a tool's own code (body, render, finalize_content)."""
    return Source(SourceKind.TOOL, name)


async def until_aborted(awaitable: Awaitable[Any], signal: Signal) -> Any:
    """Await `awaitable`, cancelling it and raising Aborted as soon as `signal` fires.

    The awaitable runs inside the calling task, as asyncio.timeout runs its body: when the
    signal fires, the task is cancelled and the cancel withdrawn here, so the caller sees
    Aborted and a cancel of its own still propagates. No task and no event-loop round trip
    per call (a separate task cost one loop iteration, ~15 us, on every tool call).
    """
    if signal.aborted:
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise Aborted(signal.reason)  # type: ignore[arg-type]
    task = asyncio.current_task()
    if task is None:  # driven outside any task (a foreign event-loop driver): give the wait one
        return await asyncio.ensure_future(until_aborted(awaitable, signal))
    loop = asyncio.get_running_loop()
    watch = _CancelOnAbort(task, loop)
    signal.listen(watch)
    timer = None
    if signal.deadline is not None:
        timer = loop.call_later(max(0.0, signal.deadline - time.monotonic()), signal.expire)
    cancels = task.cancelling()  # those the task carried before: a cleanup call made after a handled cancel
    try:
        value = await awaitable
    except asyncio.CancelledError:
        watch.active = False
        # Ours alone: withdraw it and report the abort; the caller's own cancel propagates.
        if watch.fired and task.uncancel() == cancels:
            raise Aborted(signal.reason) from None  # type: ignore[arg-type]
        raise
    finally:
        watch.active = False
        signal.unlisten(watch)
        if timer is not None:
            timer.cancel()
    if watch.fired:
        task.uncancel()  # the awaitable swallowed our cancel
    if task.cancelling() > cancels:
        # The awaitable swallowed the caller's cancel of this task and returned: the caller still gave up.
        raise asyncio.CancelledError("the calling task was cancelled; the awaited code swallowed it")
    reason = signal.reason  # fired while we waited (or by a deadline just now)
    if reason is not None:  # the value no longer counts
        raise Aborted(reason)
    return value


class _CancelOnAbort:
    """Cancels a task once, only while it is still awaiting what until_aborted awaits."""

    __slots__ = ("active", "fired", "loop", "task")

    def __init__(self, task: asyncio.Task[Any], loop: asyncio.AbstractEventLoop) -> None:
        self.task, self.loop, self.active, self.fired = task, loop, True, False

    def __call__(self, _reason: AbortReason) -> None:
        # A sync body polling its signal in a worker thread can fire it there: hop to the loop.
        self.loop.call_soon_threadsafe(self.cancel)

    def cancel(self) -> None:
        # Scheduled callbacks can run after the awaitable is done: never cancel a later stage.
        if self.active and not self.fired:
            self.fired = True
            self.task.cancel()


async def run_body(args: tuple[Any, ...], trace: Trace) -> ChainResult[Any]:
    (dispatch,) = args
    call, definition = dispatch.call, dispatch.definition
    if definition.is_async and not definition.takes_dispatch and dispatch.signal is call.signal:
        # No wrapper replaced the signal and the body never sees one: the caller's signal is
        # all there is to watch, and the calling task's cancel reaches the body directly.
        try:
            return ChainResult(await until_aborted(definition.execute(call.arguments), call.signal), None)
        except (Aborted, asyncio.CancelledError):
            raise
        except BaseException as error:
            trace.blame(error, tool_source(call.name))
            raise
    # The body gets its own signal with the caller's and every outer wrapper's fused back in: a
    # wrapper can add a deadline, never lift one or remove a cancel; a cancelled calling task can
    # fire it too.
    # dict.fromkeys: each signal once, in order (a Signal compares by identity).
    signal = Signal.any(*dict.fromkeys((call.signal, *dispatch.outer, dispatch.signal)))
    body = Dispatch(call, signal, definition)
    try:
        if definition.is_async:
            pending = definition.call_execute(call.arguments, body)
        elif definition.run_in_thread:
            pending = asyncio.to_thread(definition.call_execute, call.arguments, body)
        else:
            if signal.aborted:
                raise Aborted(signal.reason)  # type: ignore[arg-type]
            return ChainResult(definition.call_execute(call.arguments, body), None)
        return ChainResult(await until_aborted(pending, signal), None)
    except asyncio.CancelledError:
        signal.abort("the calling task was cancelled")  # reaches a body running in a thread
        raise
    except Aborted:
        raise
    except BaseException as error:
        trace.blame(error, tool_source(call.name))
        raise
    finally:
        signal.detach()
