"""The approval service behind `ask`: one-shot, and only `allowed-once` continues."""

from __future__ import annotations

import asyncio
import enum
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from policyengine.values.cancellation import strict_timeout
from policyengine.values.decisions import Source
from policyengine.values.results import Approval

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
    """Whether the call may continue, why not when it may not, and the answer as the audit records it."""

    granted: bool
    reason: str
    approval: Approval | None = None


def approver(service: object) -> str:
    """Who answers for a service: its `identity()` (the person's client, say), else its `name`, else its class."""
    identity = getattr(service, "identity", None)
    if callable(identity):
        try:
            said = identity()
        except Exception:  # an identity that fails must not decide the call: the class names it
            said = None
        if isinstance(said, str) and said:
            return said
    name = getattr(service, "name", None)
    return name if isinstance(name, str) and name else type(service).__name__


async def seek_approval(service: ApprovalService | None, request: ApprovalRequest, timeout: float) -> ApprovalOutcome:
    """Ask the service once; refusal, timeout, error and no service all deny (the answer is kept for the audit)."""
    asked = f" ({request.reason})" if request.reason else ""
    if service is None:
        reason = f"approval required{asked} but no approval service is configured"
        return ApprovalOutcome(False, reason, Approval("unavailable", None, time.time(), reason))
    by = approver(service)
    task = asyncio.current_task()
    cancels = task.cancelling() if task is not None else 0
    try:
        async with strict_timeout(timeout):
            answer = await service.request(request)
    except TimeoutError:
        reason = f"approval required{asked}; no answer within {timeout:g}s"
        return ApprovalOutcome(False, reason, Approval("timed-out", by, time.time(), reason))
    except GeneratorExit:
        raise  # the call's coroutine is being closed
    except BaseException as exc:  # whatever the service raises denies, KeyboardInterrupt included
        if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling() > cancels:
            raise  # the caller's own cancel (or its signal's, which until_aborted turns into an abort)
        failure = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        reason = f"approval required{asked}; the approval service failed: {failure}"
        return ApprovalOutcome(False, reason, Approval("failed", by, time.time(), reason))
    if answer is ApprovalAnswer.ALLOWED_ONCE:
        return ApprovalOutcome(True, "allowed once by a person", Approval(answer.value, by, time.time(), None))
    reason = f"approval required{asked}; {_refusal(answer)}"
    said = answer.value if isinstance(answer, ApprovalAnswer) else "invalid"
    return ApprovalOutcome(False, reason, Approval(said, by, time.time(), reason))


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
