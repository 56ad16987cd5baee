"""The approval service behind `ask`: one-shot, and only `allowed-once` continues."""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from policyengine.values.cancellation import strict_timeout
from policyengine.values.decisions import Source

if TYPE_CHECKING:
    from policyengine.values.call import ToolCall


class ApprovalAnswer(enum.Enum):
    """What a person answered; anything but ALLOWED_ONCE denies."""

    ALLOWED_ONCE = "allowed-once"
    DENIED = "denied"


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """One question to a person about one call; the grant never outlives the call."""

    call: ToolCall
    reason: str | None
    source: Source | None


@runtime_checkable
class ApprovalService(Protocol):
    """Anything that can put a call to a person and report their answer."""

    async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Ask once; return ALLOWED_ONCE to let exactly this call continue."""
        ...


@dataclass(frozen=True, slots=True)
class ApprovalOutcome:
    """Whether the call may continue, and why not when it may not."""

    granted: bool
    reason: str


async def seek_approval(service: ApprovalService | None, request: ApprovalRequest, timeout: float) -> ApprovalOutcome:
    """Ask the service once; refusal, timeout, error and no service all deny."""
    asked = f" ({request.reason})" if request.reason else ""
    if service is None:
        return ApprovalOutcome(False, f"approval required{asked} but no approval service is configured")
    task = asyncio.current_task()
    cancels = task.cancelling() if task is not None else 0
    try:
        async with strict_timeout(timeout):
            answer = await service.request(request)
    except TimeoutError:
        return ApprovalOutcome(False, f"approval required{asked}; no answer within {timeout:g}s")
    except GeneratorExit:
        raise  # the call's coroutine is being closed
    except BaseException as exc:  # whatever the service raises denies, KeyboardInterrupt included
        if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling() > cancels:
            raise  # the caller's own cancel (or its signal's, which until_aborted turns into an abort)
        failure = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return ApprovalOutcome(False, f"approval required{asked}; the approval service failed: {failure}")
    if answer is ApprovalAnswer.ALLOWED_ONCE:
        return ApprovalOutcome(True, "allowed once by a person")
    return ApprovalOutcome(False, f"approval required{asked}; {_refusal(answer)}")


# What the model reads when a person's answer stops the call (never an enum's repr).
_REFUSALS = {ApprovalAnswer.DENIED: "a person denied the call"}


def _refusal(answer: object) -> str:
    """Plain words for an answer that is not ALLOWED_ONCE."""
    if isinstance(answer, ApprovalAnswer):
        return _REFUSALS.get(answer, f"a person answered {answer.value}")
    # A service bug (a bare string, True, None...): say so, and what came, so it can be found.
    shown = repr(answer)
    shown = shown if len(shown) <= 80 else shown[:79] + "…"
    return f"the approval service gave no valid answer (it returned {shown}), so the call was not allowed"
