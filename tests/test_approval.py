"""The ask branch: one one-shot approval request; only allowed-once continues (SPEC.md section 4.1)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from policyengine import ApprovalAnswer, ApprovalRequest, ApprovalService, Outcome, SourceKind, Stage, ToolCall, ask
from support import HANG, Kit, RecordingApproval, make_bench

Next = Callable[..., Awaitable[Any]]


def asking_bench(approval: ApprovalService | None, reason: str | None = "writes need a person", **kwargs: Any) -> Kit:
    """A bench whose only listener asks about fs_write and passes everything else."""
    bench = make_bench(approval=approval, **kwargs)

    @bench.registry.on_pre_execute(name="ask-on-write")
    async def ask_on_write(call: ToolCall, next: Next) -> Any:
        if call.name == "fs_write":
            return ask(reason)
        return await next()

    return bench


def test_allowed_once_continues_and_runs_the_body() -> None:
    approval = RecordingApproval(ApprovalAnswer.ALLOWED_ONCE)
    bench = asking_bench(approval)
    result = bench.call("fs_write", {"path": "notes.txt", "content": "hi"})
    assert result.outcome is Outcome.OK
    assert result.value == "wrote notes.txt"
    assert bench.runs["fs_write"] == 1
    assert len(approval.requests) == 1


def test_denied_answer_denies_at_approval_stage() -> None:
    approval = RecordingApproval(ApprovalAnswer.DENIED)
    bench = asking_bench(approval)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.APPROVAL
    assert result.reason == "approval required (writes need a person); a person denied the call"
    assert result.reason in result.text
    assert bench.runs["fs_write"] == 0
    assert len(approval.requests) == 1


@pytest.mark.parametrize("answer", ["allowed-once", True, 1, None, "ALLOWED_ONCE", "yes"], ids=repr)
def test_anything_but_the_allowed_once_answer_denies(answer: object) -> None:
    approval = RecordingApproval(answer)
    bench = asking_bench(approval)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.APPROVAL
    assert result.reason is not None
    assert repr(answer) in result.reason
    assert bench.runs["fs_write"] == 0
    assert len(approval.requests) == 1


@pytest.mark.parametrize(
    ("approval", "timeout", "reason"),
    [
        (ApprovalAnswer.DENIED, 1.0, "approval required (writes need a person); a person denied the call"),
        (HANG, 0.05, "approval required (writes need a person); no answer within 0.05s"),
        (None, 1.0, "approval required (writes need a person) but no approval service is configured"),
        (
            RuntimeError("backend down"),
            1.0,
            "approval required (writes need a person); the approval service failed: RuntimeError: backend down",
        ),
        (RuntimeError(), 1.0, "approval required (writes need a person); the approval service failed: RuntimeError"),
        (
            "yes",
            1.0,
            "approval required (writes need a person); the approval service gave no valid answer "
            "(it returned 'yes'), so the call was not allowed",
        ),
    ],
    ids=["denied", "timeout", "no-service", "failed", "failed-without-message", "not-an-answer"],
)
def test_every_refusal_reads_as_plain_text(approval: object, timeout: float, reason: str) -> None:
    bench = asking_bench(None if approval is None else RecordingApproval(approval), approval_timeout=timeout)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert result.outcome is Outcome.DENIED
    assert result.reason == reason
    assert "ApprovalAnswer" not in result.text and "<" not in result.reason


def test_approval_service_that_raises_denies_saying_it_failed() -> None:
    approval = RecordingApproval(RuntimeError("approval backend is down"))
    bench = asking_bench(approval)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.APPROVAL
    assert result.reason is not None
    assert "failed" in result.reason
    assert "approval backend is down" in result.reason
    assert bench.runs["fs_write"] == 0


def test_approval_timeout_denies_saying_no_answer_came() -> None:
    approval = RecordingApproval(HANG)
    bench = asking_bench(approval, approval_timeout=0.05)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.APPROVAL
    assert result.reason is not None
    assert "0.05" in result.reason
    assert "no answer" in result.reason
    assert bench.runs["fs_write"] == 0
    assert len(approval.requests) == 1


def test_no_approval_service_configured_denies_saying_so() -> None:
    bench = asking_bench(None)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.APPROVAL
    assert result.reason is not None
    assert "no approval service" in result.reason
    assert "writes need a person" in result.reason
    assert bench.runs["fs_write"] == 0


def test_ask_without_reason_is_still_put_to_the_service() -> None:
    approval = RecordingApproval(ApprovalAnswer.DENIED)
    bench = asking_bench(approval, reason=None)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.APPROVAL
    assert result.reason
    assert len(approval.requests) == 1
    assert approval.requests[0].reason is None


def test_denied_approval_names_the_listener_that_asked() -> None:
    approval = RecordingApproval(ApprovalAnswer.DENIED)
    bench = asking_bench(approval)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert result.source is not None
    assert result.source.kind is SourceKind.LISTENER
    assert result.source.name == "ask-on-write"


def test_calls_that_are_not_asked_never_reach_the_service() -> None:
    approval = RecordingApproval(ApprovalAnswer.DENIED)
    bench = asking_bench(approval)
    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.OK
    assert approval.requests == []


def test_one_request_per_asked_call() -> None:
    approval = RecordingApproval(ApprovalAnswer.ALLOWED_ONCE)
    bench = asking_bench(approval)
    first = bench.call("fs_write", {"path": "a.txt"})
    second = bench.call("fs_write", {"path": "b.txt"})
    assert first.outcome is Outcome.OK
    assert second.outcome is Outcome.OK
    assert len(approval.requests) == 2
    assert [r.call.call_id for r in approval.requests] == [first.call_id, second.call_id]
    assert first.call_id != second.call_id
    assert bench.runs["fs_write"] == 2


def test_grant_never_carries_to_the_next_call() -> None:
    approval = RecordingApproval(ApprovalAnswer.ALLOWED_ONCE)
    bench = asking_bench(approval)
    granted = bench.call("fs_write", {"path": "a.txt"})
    approval.answer = ApprovalAnswer.DENIED
    refused = bench.call("fs_write", {"path": "a.txt"})
    assert granted.outcome is Outcome.OK
    assert refused.outcome is Outcome.DENIED
    assert refused.stage is Stage.APPROVAL
    assert len(approval.requests) == 2
    assert bench.runs["fs_write"] == 1


def test_grant_for_one_call_does_not_cover_an_identical_call_with_the_same_call_id() -> None:
    approval = RecordingApproval(ApprovalAnswer.ALLOWED_ONCE)
    bench = asking_bench(approval)
    bench.call("fs_write", {"path": "a.txt"}, call_id="same")
    approval.answer = ApprovalAnswer.DENIED
    again = bench.call("fs_write", {"path": "a.txt"}, call_id="same")
    assert again.outcome is Outcome.DENIED
    assert len(approval.requests) == 2


def test_request_carries_the_call_and_the_ask_reason() -> None:
    approval = RecordingApproval(ApprovalAnswer.ALLOWED_ONCE)
    bench = asking_bench(approval, reason="writing notes.txt needs a person")
    result = bench.call("fs_write", {"path": "notes.txt", "content": "hi"}, agent="agent-42", call_id="call-9")
    assert len(approval.requests) == 1
    request = approval.requests[0]
    assert request.reason == "writing notes.txt needs a person"
    assert request.call.name == "fs_write"
    assert request.call.arguments == {"path": "notes.txt", "content": "hi"}
    assert request.call.agent == "agent-42"
    assert request.call.call_id == "call-9" == result.call_id
    assert request.source is not None
    assert request.source.name == "ask-on-write"


def test_approval_service_cannot_mutate_the_call_arguments() -> None:
    class Tamperer:
        def __init__(self) -> None:
            self.errors: list[Exception] = []

        async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
            try:
                request.call.arguments["path"] = "/etc/passwd"
            except Exception as error:
                self.errors.append(error)
            return ApprovalAnswer.ALLOWED_ONCE

    tamperer = Tamperer()
    bench = asking_bench(tamperer)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert len(tamperer.errors) == 1
    assert result.arguments == {"path": "notes.txt"}
    assert result.value == "wrote notes.txt"


def test_one_request_per_call_even_with_several_asking_listeners() -> None:
    approval = RecordingApproval(ApprovalAnswer.ALLOWED_ONCE)
    bench = make_bench(approval=approval)

    @bench.registry.on_pre_execute(name="outer")
    async def outer(call: ToolCall, next: Next) -> Any:
        await next()
        return ask("outer asks")

    @bench.registry.on_pre_execute(name="inner")
    async def inner(call: ToolCall, next: Next) -> Any:
        return ask("inner asks")

    result = bench.call("greet", {"name": "Ada"})
    assert result.outcome is Outcome.OK
    assert [r.reason for r in approval.requests] == ["outer asks"]


def test_answer_given_after_the_approval_timeout_denies() -> None:
    class LateAnswer:
        def __init__(self) -> None:
            self.requests: list[ApprovalRequest] = []

        async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
            self.requests.append(request)
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                return ApprovalAnswer.ALLOWED_ONCE  # answers only once the deadline has passed
            return ApprovalAnswer.DENIED

    approval = LateAnswer()
    bench = asking_bench(approval, approval_timeout=0.05)
    result = bench.call("fs_write", {"path": "notes.txt"})
    assert len(approval.requests) == 1
    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.APPROVAL
    assert result.reason is not None
    assert "0.05" in result.reason
    assert bench.runs["fs_write"] == 0
