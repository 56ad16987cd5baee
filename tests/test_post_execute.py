"""Stage 4, tools/post-execute: a waterfall of rewrites over the result (SPEC.md section 4.4)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

import pytest

from policyengine import (
    Outcome,
    PendingResult,
    Registry,
    Source,
    SourceKind,
    Stage,
    ToolCall,
    accept,
    accept_value,
    block,
    deny,
)
from support import SECRET_RECORD, Probe, Recorder, make_registry, make_tool, text

Next = Callable[..., Awaitable[Any]]


def listener(name: str) -> Source:
    return Source(SourceKind.LISTENER, name)


async def fetch_record(_args: Any) -> dict[str, str]:
    return {"user": "ada", "token": "s3cr3t-t0ken"}


def render_record(_args: Any, value: Any) -> list[dict[str, Any]]:
    return text(f"user={value['user']} token={value['token']}")


def record_registry(**kwargs: Any) -> tuple[Registry, Recorder]:
    """A registry whose `fetch` tool returns a record holding a secret token."""
    tool = make_tool("fetch", fetch_record, schema=SECRET_RECORD, render=render_record)
    return make_registry(tool, **kwargs)


# -- accept(content): display only ---------------------------------------------------


def test_accept_content_replaces_only_the_display_content_and_the_canonical_value_stays() -> None:
    registry, recorder = record_registry()

    @registry.on_post_execute(name="hide-token-in-display")
    async def hide(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return accept(text("user=ada token=[hidden]"))

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.OK
    assert result.text == "user=ada token=[hidden]"
    assert result.value == {"user": "ada", "token": "s3cr3t-t0ken"}
    assert result.rewrites == (listener("hide-token-in-display"),)
    assert recorder.results == [result]


def test_replacing_content_is_not_confidentiality_observers_still_see_the_canonical_value() -> None:
    registry, recorder = record_registry()

    @registry.on_post_execute(name="hide-token-in-display")
    async def hide(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return accept(text("[hidden]"))

    registry.call_sync("fetch")

    (seen,) = recorder.results
    assert seen.text == "[hidden]"
    assert seen.value["token"] == "s3cr3t-t0ken"


@pytest.mark.parametrize(
    "content",
    ["just a string", [{"type": "text"}], [{"text": "no type"}], [{"type": "text", "text": 7}], [42]],
    ids=["string", "text-without-text", "no-type", "non-string-text", "not-a-block"],
)
def test_accept_with_malformed_content_is_blocked_naming_the_listener(content: Any) -> None:
    registry, recorder = record_registry()

    @registry.on_post_execute(name="sloppy")
    async def sloppy(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return accept(content)

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.BLOCKED
    assert result.stage is Stage.POST_EXECUTE
    assert result.source == listener("sloppy")
    assert result.reason is not None
    assert "sloppy" in result.reason
    assert result.value is None
    assert recorder.outcomes == [Outcome.BLOCKED]


# -- accept_value(v): validated again, rendered again -----------------------------------


def test_accept_value_replaces_the_canonical_value_and_content_is_rendered_again_from_it() -> None:
    registry, recorder = record_registry()

    @registry.on_post_execute(name="redact-token")
    async def redact(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return accept_value({**pending.value, "token": "[redacted]"})

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.OK
    assert result.value == {"user": "ada", "token": "[redacted]"}
    assert result.text == "user=ada token=[redacted]"  # produced by render, not by the listener
    assert result.rewrites == (listener("redact-token"),)
    assert "s3cr3t" not in repr(recorder.results[0])


@pytest.mark.parametrize(
    "bad_value",
    [
        {"user": "ada", "token": 123},
        {"user": "ada", "token": "x", "extra": "field"},
        "not a record",
        None,
        {"user": object()},
    ],
    ids=["wrong-field-type", "unknown-field", "wrong-type", "none", "not-json"],
)
@pytest.mark.parametrize("via_next", [False, True], ids=["returned", "via-next"])
def test_accept_value_that_fails_the_output_schema_is_blocked_naming_the_listener(
    bad_value: Any, via_next: bool
) -> None:
    registry, recorder = record_registry()
    later = Probe()

    @registry.on_post_execute(name="bad-rewrite")
    async def bad_rewrite(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        if via_next:
            return await next(accept_value(bad_value))
        return accept_value(bad_value)

    @registry.on_post_execute(name="later")
    async def later_listener(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        later.seen(pending)
        return await next()

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.BLOCKED
    assert result.stage is Stage.POST_EXECUTE
    assert result.source == listener("bad-rewrite")
    assert result.reason is not None
    assert "bad-rewrite" in result.reason
    assert result.value is None
    assert "s3cr3t" not in result.text
    assert later.runs == 0  # an invalid value is never handed on
    assert recorder.outcomes == [Outcome.BLOCKED]


def test_accept_value_whose_render_fails_is_blocked() -> None:
    def picky_render(_args: Any, value: Any) -> list[dict[str, Any]]:
        if value == "poison":
            raise ValueError("cannot render poison")
        return text(value)

    registry, _ = make_registry(make_tool("echo", render=picky_render))

    @registry.on_post_execute(name="poisoner")
    async def poisoner(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return accept_value("poison")

    result = registry.call_sync("echo")
    assert result.outcome is Outcome.BLOCKED
    assert result.source == listener("poisoner")


# -- block(feedback) ---------------------------------------------------------------------


def test_block_turns_the_result_into_an_error_whose_content_is_the_feedback() -> None:
    registry, recorder = record_registry()
    feedback = "The record holds a credential; ask for the user name only."

    @registry.on_post_execute(name="no-credentials")
    async def no_credentials(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return block(feedback)

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.BLOCKED
    assert result.stage is Stage.POST_EXECUTE
    assert result.source == listener("no-credentials")
    assert result.text == feedback
    assert result.reason == feedback
    assert result.value is None
    assert recorder.results[0].value is None  # the blocked value does not reach observers


def test_block_ends_the_chain_and_later_listeners_never_run() -> None:
    registry, _ = record_registry()
    later = Probe()

    @registry.on_post_execute(name="blocker")
    async def blocker(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return block("no")

    @registry.on_post_execute(name="later")
    async def later_listener(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        later.seen(pending)
        return await next()

    result = registry.call_sync("fetch")
    assert result.outcome is Outcome.BLOCKED
    assert later.runs == 0


def test_block_after_a_value_rewrite_discards_the_rewritten_value_too() -> None:
    registry, recorder = record_registry()

    @registry.on_post_execute(name="redact")
    async def redact(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return await next(accept_value({**pending.value, "token": "[redacted]"}))

    @registry.on_post_execute(name="blocker")
    async def blocker(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return block("not today")

    result = registry.call_sync("fetch")
    assert result.outcome is Outcome.BLOCKED
    assert result.source == listener("blocker")
    assert result.value is None
    assert result.text == "not today"
    assert recorder.results[0].value is None


# -- composition ---------------------------------------------------------------------------


def test_value_rewrites_passed_through_next_compose_in_registration_order() -> None:
    registry, recorder = make_registry(make_tool("echo"))
    seen: list[tuple[str, object, str]] = []

    for label, suffix in (("first", "-a"), ("second", "-b")):

        @registry.on_post_execute(name=label)
        async def rewrite(
            call: ToolCall, pending: PendingResult, next: Next, _label: str = label, _suffix: str = suffix
        ) -> Any:
            seen.append((_label, pending.value, pending.content[0]["text"]))
            return await next(accept_value(pending.value + _suffix))

    @registry.on_post_execute(name="last")
    async def last(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        seen.append(("last", pending.value, pending.content[0]["text"]))
        return await next()

    result = registry.call_sync("echo")

    assert seen == [
        ("first", "hello", "rendered:hello"),
        ("second", "hello-a", "rendered:hello-a"),
        ("last", "hello-a-b", "rendered:hello-a-b"),
    ]
    assert result.outcome is Outcome.OK
    assert result.value == "hello-a-b"
    assert result.text == "rendered:hello-a-b"
    assert result.rewrites == (listener("first"), listener("second"))
    assert recorder.results[0].value == "hello-a-b"


def test_a_later_content_rewrite_applies_on_top_of_an_earlier_value_rewrite() -> None:
    registry, recorder = record_registry()

    @registry.on_post_execute(name="redact")
    async def redact(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return await next(accept_value({**pending.value, "token": "[redacted]"}))

    @registry.on_post_execute(name="summarise")
    async def summarise(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        assert pending.value["token"] == "[redacted]"
        return accept(text("one user record"))

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.OK
    assert result.value == {"user": "ada", "token": "[redacted]"}
    assert result.text == "one user record"
    assert result.rewrites == (listener("redact"), listener("summarise"))
    assert recorder.results[0].value["token"] == "[redacted]"


def test_a_listeners_own_value_rewrite_passed_to_next_survives_its_final_content_rewrite() -> None:
    registry, recorder = record_registry()

    @registry.on_post_execute(name="redact-then-summarise")
    async def redact_then_summarise(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        await next(accept_value({**pending.value, "token": "[redacted]"}))
        return accept(text("one user record"))

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.OK
    assert result.text == "one user record"
    # The redaction was applied and handed on; returning a display rewrite must not undo it.
    assert result.value == {"user": "ada", "token": "[redacted]"}
    assert recorder.results[0].value["token"] == "[redacted]"
    assert result.rewrites == (listener("redact-then-summarise"), listener("redact-then-summarise"))


def test_a_value_returned_at_the_end_of_the_chain_applies_on_top_of_earlier_rewrites() -> None:
    registry, _ = make_registry(make_tool("echo"))

    @registry.on_post_execute(name="first")
    async def first(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return await next(accept_value(pending.value + "-a"))

    @registry.on_post_execute(name="final")
    async def final(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return accept_value(pending.value + "-z")

    result = registry.call_sync("echo")
    assert result.value == "hello-a-z"
    assert result.text == "rendered:hello-a-z"
    assert result.rewrites == (listener("first"), listener("final"))


def test_rewrites_is_empty_when_every_listener_passes_through_or_accepts_without_content() -> None:
    registry, _ = make_registry(make_tool("echo"))

    @registry.on_post_execute(name="pass")
    async def pass_through(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return await next()

    @registry.on_post_execute(name="plain-accept")
    async def plain_accept(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return accept()

    result = registry.call_sync("echo")
    assert result.outcome is Outcome.OK
    assert result.value == "hello"
    assert result.text == "rendered:hello"
    assert result.rewrites == ()


def test_listeners_see_the_tool_result_as_a_pending_result_with_the_rendered_content() -> None:
    registry, _ = make_registry(make_tool("echo"))
    seen: list[PendingResult] = []

    @registry.on_post_execute(name="look")
    async def look(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        seen.append(pending)
        assert call.name == "echo"
        assert pending.definition.name == "echo"
        return await next()

    registry.call_sync("echo")
    (pending,) = seen
    assert isinstance(pending, PendingResult)
    assert pending.value == "hello"
    assert pending.content == text("rendered:hello")
    assert pending.rewrites == ()


def test_post_execute_does_not_run_when_the_body_failed() -> None:
    async def body(args: Any) -> NoReturn:
        raise ValueError("boom")

    registry, _ = make_registry(make_tool("echo", body))
    probe = Probe()

    @registry.on_post_execute(name="look")
    async def look(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        probe.seen(pending)
        return await next()

    result = registry.call_sync("echo")
    assert result.outcome is Outcome.ERROR
    assert probe.runs == 0


# -- faults fail closed ----------------------------------------------------------------------


def test_raising_listener_blocks_naming_it() -> None:
    registry, recorder = record_registry()

    @registry.on_post_execute(name="buggy")
    async def buggy(call: ToolCall, pending: PendingResult, next: Next) -> NoReturn:
        raise KeyError("missing")

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.BLOCKED
    assert result.stage is Stage.POST_EXECUTE
    assert result.source == listener("buggy")
    assert result.reason is not None
    assert "buggy" in result.reason
    assert "KeyError" in result.reason
    assert result.value is None
    assert "s3cr3t" not in result.text
    assert recorder.outcomes == [Outcome.BLOCKED]


@pytest.mark.parametrize(
    "returned",
    [None, "ok", True, text("raw content"), deny("pre-execute decision")],
    ids=["none", "string", "bool", "content-list", "pre-execute-deny"],
)
def test_listener_returning_something_that_is_not_a_decision_blocks_naming_it(returned: Any) -> None:
    registry, recorder = record_registry()

    @registry.on_post_execute(name="confused")
    async def confused(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return returned

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.BLOCKED
    assert result.stage is Stage.POST_EXECUTE
    assert result.source == listener("confused")
    assert result.value is None
    assert recorder.outcomes == [Outcome.BLOCKED]


@pytest.mark.parametrize(
    "extra",
    [("a string",), (block("no"),), (accept(), block("no")), (deny("x"),)],
    ids=["string", "block", "rewrite-then-block", "pre-execute-deny"],
)
def test_next_with_something_other_than_rewrites_blocks_naming_the_caller(extra: tuple[Any, ...]) -> None:
    registry, _ = record_registry()

    @registry.on_post_execute(name="misuse")
    async def misuse(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return await next(*extra)

    result = registry.call_sync("fetch")
    assert result.outcome is Outcome.BLOCKED
    assert result.source == listener("misuse")
    assert result.value is None


def test_a_listener_that_swallows_a_later_listeners_failure_still_blocks() -> None:
    registry, _ = record_registry()

    @registry.on_post_execute(name="swallower")
    async def swallower(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        try:
            return await next()
        except Exception:
            return accept()

    @registry.on_post_execute(name="buggy")
    async def buggy(call: ToolCall, pending: PendingResult, next: Next) -> NoReturn:
        raise RuntimeError("bug")

    result = registry.call_sync("fetch")
    assert result.outcome is Outcome.BLOCKED
    assert result.source == listener("buggy")
    assert result.value is None


def test_hanging_listener_blocks_at_the_policy_timeout_naming_it() -> None:
    registry, recorder = record_registry(policy_timeout=0.05)

    @registry.on_post_execute(name="sleepy")
    async def sleepy(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        await asyncio.sleep(3)
        return accept()

    started = time.monotonic()
    result = registry.call_sync("fetch")

    assert time.monotonic() - started < 1.5
    assert result.outcome is Outcome.BLOCKED
    assert result.stage is Stage.POST_EXECUTE
    assert result.source == listener("sleepy")
    assert result.reason is not None
    assert "sleepy" in result.reason
    assert result.value is None
    assert recorder.outcomes == [Outcome.BLOCKED]


def test_listener_that_forgets_to_return_next_blocks_instead_of_accepting() -> None:
    registry, _ = record_registry()

    @registry.on_post_execute(name="forgetful")
    async def forgetful(call: ToolCall, pending: PendingResult, next: Next) -> None:
        await next()

    result = registry.call_sync("fetch")
    assert result.outcome is Outcome.BLOCKED
    assert result.source == listener("forgetful")


def test_next_with_several_rewrites_applies_each_in_order_and_records_each() -> None:
    registry, _ = record_registry()

    @registry.on_post_execute(name="pack")
    async def pack(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        first = accept_value({**pending.value, "token": "[redacted]"})
        second = accept_value({**first.value, "user": "someone"})
        return await next(first, second)

    result = registry.call_sync("fetch")
    assert result.outcome is Outcome.OK
    assert result.value["token"] == "[redacted]"
    assert result.value["user"] == "someone"
    assert [s.name for s in result.rewrites] == ["pack", "pack"]
