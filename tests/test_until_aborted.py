"""body.until_aborted runs the awaitable in the calling task and leaves that task as it found it."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import pytest

from policyengine.runtime.tool_body import Aborted, until_aborted
from policyengine.values.cancellation import AbortKind, Signal


def test_the_awaitable_runs_in_the_calling_task() -> None:
    async def main() -> None:
        outer = asyncio.current_task()

        async def body() -> object:
            return asyncio.current_task()

        assert await until_aborted(body(), Signal()) is outer

    asyncio.run(main())


def test_a_fired_signal_aborts_and_leaves_no_cancel_behind() -> None:
    async def main() -> None:
        signal = Signal()

        async def body() -> None:
            asyncio.get_running_loop().call_soon(signal.abort, "stop")
            await asyncio.sleep(10)

        with pytest.raises(Aborted) as aborted:
            await until_aborted(body(), signal)
        assert aborted.value.reason.message == "stop"
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0
        await asyncio.sleep(0)  # the task goes on: later stages are not cancelled

    asyncio.run(main())


def test_a_deadline_aborts_with_a_timeout_reason() -> None:
    async def main() -> None:
        with pytest.raises(Aborted) as aborted:
            await until_aborted(asyncio.sleep(10), Signal.timeout(0.01))
        assert aborted.value.reason.kind is AbortKind.TIMEOUT
        await asyncio.sleep(0)

    asyncio.run(main())


def test_a_body_that_swallows_the_cancel_still_aborts_and_the_cancel_is_withdrawn() -> None:
    async def main() -> None:
        signal = Signal()

        async def stubborn() -> str:
            asyncio.get_running_loop().call_soon(signal.abort)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(10)
            return "late value"

        with pytest.raises(Aborted):
            await until_aborted(stubborn(), signal)
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0
        await asyncio.sleep(0)

    asyncio.run(main())


def test_a_signal_fired_as_the_body_returns_never_cancels_what_comes_after() -> None:
    async def main() -> None:
        signal = Signal()

        async def body() -> str:
            signal.abort("right at the end")  # the cancel is scheduled, the body is already done
            return "value"

        with pytest.raises(Aborted):
            await until_aborted(body(), signal)
        for _ in range(3):
            await asyncio.sleep(0)  # would raise CancelledError if the scheduled cancel landed here

    asyncio.run(main())


def test_a_signal_fired_from_a_worker_thread_cancels_the_wait() -> None:
    async def main() -> None:
        signal = Signal()
        threading.Timer(0.01, signal.abort, args=("from a thread",)).start()
        with pytest.raises(Aborted) as aborted:
            await until_aborted(asyncio.sleep(10), signal)
        assert aborted.value.reason.message == "from a thread"

    asyncio.run(main())


def test_the_callers_own_cancel_propagates_even_when_the_signal_also_fired() -> None:
    async def main() -> None:
        signal = Signal()
        started = asyncio.Event()

        async def body() -> None:
            started.set()
            await asyncio.sleep(10)

        task = asyncio.create_task(until_aborted(body(), signal))
        await started.wait()
        signal.abort()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_an_already_fired_signal_never_starts_the_awaitable() -> None:
    async def main() -> None:
        signal = Signal()
        signal.abort()
        ran = []

        async def body() -> None:
            ran.append(1)

        with pytest.raises(Aborted):
            await until_aborted(body(), signal)
        assert ran == []

    asyncio.run(main())


def test_driven_outside_any_task_the_wait_gets_a_task_of_its_own() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str] = loop.create_future()
        seen: list[object] = []

        async def body() -> str:
            seen.append(asyncio.current_task())
            return "value"

        coro = until_aborted(body(), Signal())

        def step() -> None:  # a bare driver: a loop callback, not a task
            try:
                waiting = coro.send(None)
            except StopIteration as stop:
                done.set_result(stop.value)
                return
            waiting.add_done_callback(lambda _future: step())

        loop.call_soon(step)
        assert await done == "value"
        assert seen[0] is not None  # the body ran inside the task the wait made for itself

    asyncio.run(main())
