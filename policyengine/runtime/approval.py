"""The approval service behind `ask`: one-shot, and only `allowed-once` continues."""

from __future__ import annotations

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
    try:
        async with strict_timeout(timeout):
            answer = await service.request(request)
    except TimeoutError:
        return ApprovalOutcome(False, f"approval required{asked}; no answer within {timeout:g}s")
    except Exception as exc:
        return ApprovalOutcome(
            False, f"approval required{asked}; the approval service failed: {type(exc).__name__}: {exc}"
        )
    if answer is ApprovalAnswer.ALLOWED_ONCE:
        return ApprovalOutcome(True, "allowed once by a person")
    return ApprovalOutcome(False, f"approval required{asked}; a person answered {answer!r}")
