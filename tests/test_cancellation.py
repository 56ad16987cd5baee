"""Cancellation signals: abort once, deadlines, combining with Signal.any, detaching."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from policyengine import AbortKind, AbortReason, Signal

TINY = 0.02


# --------------------------------------------------------------------------- abort


def test_new_signal_is_pending_without_reason_or_deadline() -> None:
    signal = Signal()
    assert signal.aborted is False
    assert signal.reason is None
    assert signal.deadline is None


def test_abort_fires_with_cancelled_kind_and_the_message() -> None:
    signal = Signal()
    signal.abort("user pressed stop")
    assert signal.aborted is True
    assert signal.reason == AbortReason(AbortKind.CANCELLED, "user pressed stop")


def test_abort_without_message_still_gives_a_cancelled_reason() -> None:
    signal = Signal()
    signal.abort()
    assert signal.reason is not None
    assert signal.reason.kind is AbortKind.CANCELLED
    assert signal.reason.message


def test_later_aborts_are_ignored_first_reason_wins() -> None:
    signal = Signal()
    signal.abort("first")
    signal.abort("second")
    assert signal.reason == AbortReason(AbortKind.CANCELLED, "first")


def test_abort_reason_is_immutable() -> None:
    signal = Signal()
    signal.abort("first")
    with pytest.raises(AttributeError):
        signal.reason.message = "changed"  # type: ignore[misc,union-attr]


def test_callbacks_are_called_once_with_the_reason() -> None:
    signal = Signal()
    seen: list[AbortReason] = []
    also: list[AbortReason] = []
    signal.add_callback(seen.append)
    signal.add_callback(also.append)
    signal.abort("stop")
    signal.abort("again")
    assert seen == [AbortReason(AbortKind.CANCELLED, "stop")]
    assert also == seen


def test_callback_added_after_abort_is_called_immediately_once() -> None:
    signal = Signal()
    signal.abort("already")
    seen: list[AbortReason] = []
    remove = signal.add_callback(seen.append)
    assert seen == [AbortReason(AbortKind.CANCELLED, "already")]
    remove()  # harmless
    signal.abort("again")
    assert len(seen) == 1


def test_remover_prevents_the_callback_and_is_idempotent() -> None:
    signal = Signal()
    removed: list[AbortReason] = []
    kept: list[AbortReason] = []
    remove = signal.add_callback(removed.append)
    signal.add_callback(kept.append)
    remove()
    remove()
    signal.abort("stop")
    assert removed == []
    assert kept == [AbortReason(AbortKind.CANCELLED, "stop")]


def test_a_callback_that_raises_does_not_keep_the_abort_from_other_callbacks() -> None:
    """A cancel must reach every listener (SPEC 4.3: a caller's cancel always reaches the body)."""
    signal = Signal()
    seen: list[AbortReason] = []

    def broken(_reason: AbortReason) -> None:
        raise RuntimeError("listener bug")

    signal.add_callback(broken)
    signal.add_callback(seen.append)
    with contextlib.suppress(RuntimeError):
        signal.abort("stop")
    assert signal.aborted
    assert seen == [AbortReason(AbortKind.CANCELLED, "stop")]


# --------------------------------------------------------------------------- timeout


def test_timeout_sets_a_deadline_in_the_future() -> None:
    before = time.monotonic()
    signal = Signal.timeout(5)
    assert signal.deadline is not None
    assert before + 5 <= signal.deadline <= time.monotonic() + 5
    assert signal.aborted is False


def test_timeout_fires_lazily_via_aborted_with_timeout_kind() -> None:
    signal = Signal.timeout(TINY)
    assert signal.aborted is False
    time.sleep(TINY * 2)
    assert signal.aborted is True
    assert signal.reason is not None
    assert signal.reason.kind is AbortKind.TIMEOUT
    assert "0.02" in signal.reason.message


def test_timeout_uses_the_custom_message() -> None:
    signal = Signal.timeout(0, "tool took too long")
    assert signal.reason == AbortReason(AbortKind.TIMEOUT, "tool took too long")


def test_timeout_calls_callbacks_once_when_noticed() -> None:
    signal = Signal.timeout(TINY)
    seen: list[AbortReason] = []
    signal.add_callback(seen.append)
    time.sleep(TINY * 2)
    assert signal.aborted
    assert signal.aborted
    assert [r.kind for r in seen] == [AbortKind.TIMEOUT]


def test_abort_before_the_deadline_wins_over_the_timeout() -> None:
    signal = Signal.timeout(TINY)
    signal.abort("cancelled first")
    time.sleep(TINY * 2)
    assert signal.reason == AbortReason(AbortKind.CANCELLED, "cancelled first")


def test_wait_returns_the_timeout_reason_inside_asyncio() -> None:
    async def main() -> tuple[AbortReason, float]:
        signal = Signal.timeout(TINY)
        start = time.monotonic()
        reason = await asyncio.wait_for(signal.wait(), timeout=2)
        return reason, time.monotonic() - start

    reason, elapsed = asyncio.run(main())
    assert reason.kind is AbortKind.TIMEOUT
    assert TINY * 0.5 <= elapsed < 1.0


def test_wait_returns_the_abort_reason_inside_asyncio() -> None:
    async def main() -> AbortReason:
        signal = Signal()
        asyncio.get_running_loop().call_later(TINY, signal.abort, "stop now")
        return await asyncio.wait_for(signal.wait(), timeout=2)

    assert asyncio.run(main()) == AbortReason(AbortKind.CANCELLED, "stop now")


def test_wait_on_an_already_aborted_signal_returns_at_once() -> None:
    signal = Signal()
    signal.abort("done")

    async def main() -> AbortReason:
        return await asyncio.wait_for(signal.wait(), timeout=0.5)

    assert asyncio.run(main()) == AbortReason(AbortKind.CANCELLED, "done")


def test_cancelled_wait_leaves_no_callback_behind() -> None:
    signal = Signal()

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(signal.wait(), timeout=TINY)

    asyncio.run(main())
    assert signal._callbacks == []
    assert signal.aborted is False


# --------------------------------------------------------------------------- Signal.any


def test_any_fires_with_the_first_parent_to_abort() -> None:
    a, b = Signal(), Signal()
    combined = Signal.any(a, b)
    assert combined.aborted is False
    b.abort("b went first")
    a.abort("a later")
    assert combined.reason == AbortReason(AbortKind.CANCELLED, "b went first")


def test_any_fires_for_the_first_parent_too() -> None:
    a, b = Signal(), Signal()
    combined = Signal.any(a, b)
    a.abort("a went first")
    assert combined.reason == AbortReason(AbortKind.CANCELLED, "a went first")
    assert b.aborted is False  # combining never fires the parents


def test_any_calls_its_own_callbacks_once() -> None:
    a, b = Signal(), Signal()
    combined = Signal.any(a, b)
    seen: list[AbortReason] = []
    combined.add_callback(seen.append)
    a.abort("one")
    b.abort("two")
    assert seen == [AbortReason(AbortKind.CANCELLED, "one")]


def test_aborting_the_combined_signal_does_not_abort_the_parents() -> None:
    a, b = Signal(), Signal()
    combined = Signal.any(a, b)
    combined.abort("child only")
    assert combined.aborted
    assert not a.aborted
    assert not b.aborted


def test_any_inherits_the_earliest_deadline() -> None:
    late = Signal.timeout(60, "late")
    early = Signal.timeout(30, "early")
    plain = Signal()
    combined = Signal.any(plain, late, early)
    assert combined.deadline == early.deadline
    assert Signal.any(plain).deadline is None


def test_any_times_out_with_the_earliest_parents_reason() -> None:
    early = Signal.timeout(TINY, "early deadline")
    combined = Signal.any(Signal(), Signal.timeout(60, "late"), early)
    time.sleep(TINY * 2)
    assert combined.reason == AbortReason(AbortKind.TIMEOUT, "early deadline")


def test_any_timeout_wakes_an_asyncio_waiter() -> None:
    async def main() -> AbortReason:
        combined = Signal.any(Signal(), Signal.timeout(TINY, "deadline"))
        return await asyncio.wait_for(combined.wait(), timeout=2)

    assert asyncio.run(main()) == AbortReason(AbortKind.TIMEOUT, "deadline")


def test_any_abort_wakes_an_asyncio_waiter_before_the_deadline() -> None:
    async def main() -> AbortReason:
        caller = Signal()
        combined = Signal.any(caller, Signal.timeout(60, "deadline"))
        asyncio.get_running_loop().call_later(TINY, caller.abort, "caller cancelled")
        return await asyncio.wait_for(combined.wait(), timeout=2)

    assert asyncio.run(main()) == AbortReason(AbortKind.CANCELLED, "caller cancelled")


@pytest.mark.parametrize("position", [0, 1, 2])
def test_any_is_already_aborted_when_a_parent_already_was(position: int) -> None:
    parents = [Signal(), Signal(), Signal()]
    parents[position].abort(f"parent {position}")
    combined = Signal.any(*parents)
    assert combined.aborted is True
    assert combined.reason == AbortReason(AbortKind.CANCELLED, f"parent {position}")
    # nothing stays registered on the live parents
    for parent in parents:
        assert parent._callbacks == []


def test_any_is_already_aborted_when_a_parent_deadline_already_passed() -> None:
    expired = Signal.timeout(0, "expired")
    combined = Signal.any(Signal(), expired)
    assert combined.reason == AbortReason(AbortKind.TIMEOUT, "expired")


def test_any_of_nested_combinations_propagates() -> None:
    a, b, c = Signal(), Signal(), Signal()
    outer = Signal.any(Signal.any(a, b), c)
    b.abort("deep")
    assert outer.reason == AbortReason(AbortKind.CANCELLED, "deep")


def test_detach_removes_the_callbacks_from_the_parents() -> None:
    a, b = Signal(), Signal()
    a.add_callback(lambda _r: None)
    sizes = (len(a._callbacks), len(b._callbacks))
    combined = Signal.any(a, b)
    assert (len(a._callbacks), len(b._callbacks)) == (sizes[0] + 1, sizes[1] + 1)
    combined.detach()
    assert (len(a._callbacks), len(b._callbacks)) == sizes
    a.abort("after detach")
    assert combined.aborted is False


def test_many_detached_combinations_do_not_leak_into_a_long_lived_parent() -> None:
    parent = Signal()
    baseline = len(parent._callbacks)
    for _ in range(200):
        Signal.any(parent, Signal()).detach()
    assert len(parent._callbacks) == baseline


def test_a_fired_combination_detaches_itself_from_the_other_parents() -> None:
    a, b = Signal(), Signal()
    baseline = len(b._callbacks)
    combined = Signal.any(a, b)
    a.abort("done")
    assert combined.aborted
    assert len(b._callbacks) == baseline


def test_detach_is_idempotent_and_keeps_other_children_attached() -> None:
    parent = Signal()
    first = Signal.any(parent)
    second = Signal.any(parent)
    first.detach()
    first.detach()
    assert len(parent._callbacks) == 1
    parent.abort("stop")
    assert not first.aborted
    assert second.reason == AbortReason(AbortKind.CANCELLED, "stop")


def test_listen_and_unlisten_pair_like_add_callback_and_its_remover() -> None:
    signal = Signal()
    heard: list[str] = []

    def first(reason: Any) -> None:
        heard.append("first")

    def second(reason: Any) -> None:
        heard.append("second")

    signal.listen(first)
    signal.listen(second)
    signal.unlisten(first)  # not the last one added
    signal.unlisten(first)  # twice is harmless
    signal.abort()
    assert heard == ["second"]
    signal.unlisten(second)  # after firing: nothing left to remove
    late: list[str] = []
    signal.listen(lambda _reason: late.append("called at once"))  # already fired: called now
    assert late == ["called at once"]


# --------------------------------------------------------------------------- what a callback raises


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, asyncio.CancelledError, GeneratorExit])
def test_a_callback_raising_any_base_exception_does_not_keep_the_abort_from_later_callbacks(
    error: type[BaseException],
) -> None:
    signal = Signal()
    heard: list[str] = []

    def bad(_reason: AbortReason) -> None:
        raise error()

    signal.add_callback(bad)
    signal.add_callback(lambda reason: heard.append(reason.message))

    signal.abort("stop")

    assert heard == ["stop"]
    assert signal.aborted


# --------------------------------------------------------------------------- strict_timeout


def test_strict_timeout_refuses_an_answer_from_code_that_blocked_the_loop_past_the_deadline() -> None:
    from policyengine.values.cancellation import strict_timeout

    async def scenario() -> None:
        with pytest.raises(TimeoutError):
            async with strict_timeout(TINY):
                time.sleep(TINY * 3)  # the deadline's timer never gets to fire

    asyncio.run(scenario())


def test_strict_timeout_lets_an_answer_within_the_deadline_through() -> None:
    from policyengine.values.cancellation import strict_timeout

    async def scenario() -> str:
        async with strict_timeout(5):
            await asyncio.sleep(0)
        return "answered"

    assert asyncio.run(scenario()) == "answered"
