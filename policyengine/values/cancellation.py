"""Cancellation signals for asyncio: abort with a reason, deadlines, combining."""

from __future__ import annotations

import contextlib
import enum
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass


class AbortKind(enum.Enum):
    """Why a signal fired: someone cancelled, or a deadline passed."""

    CANCELLED = "cancelled"
    TIMEOUT = "timeout"


@dataclass(frozen=True, slots=True)
class AbortReason:
    """The typed reason a signal carries once it has fired."""

    kind: AbortKind
    message: str


Callback = Callable[[AbortReason], None]

log = logging.getLogger("policyengine")


class Signal:
    """A one-shot cancellation signal; fires once, by abort() or by its deadline."""

    __slots__ = ("_callbacks", "_deadline", "_deadline_message", "_parents", "_reason")

    def __init__(self) -> None:
        self._reason: AbortReason | None = None
        self._callbacks: list[Callback] = []
        self._deadline: float | None = None
        self._deadline_message = ""
        self._parents: list[tuple[Signal, Callback]] = []

    @classmethod
    def timeout(cls, seconds: float, message: str | None = None) -> Signal:
        """A signal that fires with a TIMEOUT reason after `seconds`."""
        signal = cls()
        signal._deadline = time.monotonic() + seconds
        signal._deadline_message = message or f"deadline of {seconds:g}s exceeded"
        return signal

    @classmethod
    def any(cls, *signals: Signal) -> Signal:
        """A signal that fires as soon as any of `signals` fires, with its reason."""
        child = cls()
        for parent in signals:
            if parent.aborted:
                child._fire(parent.reason)  # type: ignore[arg-type]
                break
            if parent._deadline is not None and (child._deadline is None or parent._deadline < child._deadline):
                child._deadline = parent._deadline
                child._deadline_message = parent._deadline_message
            callback = child._fire
            parent._callbacks.append(callback)
            child._parents.append((parent, callback))
        return child

    @property
    def deadline(self) -> float | None:
        """The time.monotonic() at which this signal times out, if any."""
        return self._deadline

    @property
    def aborted(self) -> bool:
        """True once the signal fired (checks the deadline lazily)."""
        if self._reason is None and self._deadline is not None and time.monotonic() >= self._deadline:
            self._fire(AbortReason(AbortKind.TIMEOUT, self._deadline_message))
        return self._reason is not None

    @property
    def reason(self) -> AbortReason | None:
        """The reason it fired, or None while it has not."""
        return self._reason if self.aborted else None

    def abort(self, message: str = "cancelled by the caller") -> None:
        """Fire the signal with a CANCELLED reason (no-op once fired)."""
        self._fire(AbortReason(AbortKind.CANCELLED, message))

    def add_callback(self, callback: Callback) -> Callable[[], None]:
        """Call `callback(reason)` when the signal fires; returns a remover."""
        if self.aborted:
            callback(self._reason)  # type: ignore[arg-type]
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def listen(self, callback: Callback) -> None:
        """add_callback without a remover to keep: pair it with unlisten (the per-call hot path)."""
        if self.aborted:
            callback(self._reason)  # type: ignore[arg-type]
        else:
            self._callbacks.append(callback)

    def unlisten(self, callback: Callback) -> None:
        """Stop calling `callback` (no-op once it was called or removed)."""
        callbacks = self._callbacks
        if callbacks and callbacks[-1] is callback:  # the usual case: the last one added
            callbacks.pop()
        elif callback in callbacks:
            callbacks.remove(callback)

    def detach(self) -> None:
        """Stop listening to parent signals (a combined signal that is no longer used)."""
        for parent, callback in self._parents:
            if callback in parent._callbacks:
                parent._callbacks.remove(callback)
        self._parents.clear()

    async def wait(self) -> AbortReason:
        """Wait until the signal fires and return its reason."""
        if self.aborted:
            return self._reason  # type: ignore[return-value]
        import asyncio  # here, not at the top: a hook that never awaits must not pay ~20 ms for asyncio

        loop = asyncio.get_running_loop()
        future: asyncio.Future[AbortReason] = loop.create_future()

        def wake(reason: AbortReason) -> None:
            if not future.done():
                future.set_result(reason)

        remove = self.add_callback(wake)
        timer = None
        if self._deadline is not None:
            timer = loop.call_later(max(0.0, self._deadline - time.monotonic()), self.expire)
        try:
            return await future
        finally:
            remove()
            if timer is not None:
                timer.cancel()

    def expire(self) -> None:
        """Fire now if the deadline has passed (called by event-loop timers)."""
        _ = self.aborted

    def _fire(self, reason: AbortReason) -> None:
        if self._reason is not None:
            return
        self._reason = reason
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback(reason)
            except BaseException:  # one broken listener, whatever it raises, must not keep a cancel from the others
                log.exception("policyengine: signal callback %r failed", callback)
        self.detach()

    def __repr__(self) -> str:
        state = f"aborted={self._reason!r}" if self._reason else "pending"
        return f"<Signal {state}>"


@contextlib.asynccontextmanager
async def strict_timeout(seconds: float) -> AsyncIterator[None]:
    """asyncio.timeout that also fails when the code inside swallowed the cancellation.

    A listener or approval service that catches CancelledError and returns a value after
    its deadline must not have that late answer count; nor one that blocked the event loop
    past it (the timer never got to fire, so nothing was cancelled).
    """
    import asyncio

    async with asyncio.timeout(seconds) as scope:
        yield
    when = scope.when()
    if scope.expired() or (when is not None and asyncio.get_running_loop().time() >= when):
        raise TimeoutError
