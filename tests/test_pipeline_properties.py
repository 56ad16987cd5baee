"""Property tests over random pre-execute chains, guards and approval answers (SPEC.md sections 2-4).

Each property draws a hundred cases; POLICYENGINE_TEST_SCALE=10 draws ten times as many (tests/support.py, scaled).
"""

from __future__ import annotations

import contextlib
import copy
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine import ApprovalAnswer, Dispatch, Outcome, SourceKind, Stage, ToolCall, ToolResult, allow, ask, deny
from policyengine.values.decisions import PreDecision
from support import Kit, RecordingApproval, make_bench, scaled

Next = Callable[..., Awaitable[Any]]

LISTENER_KINDS = ("pass", "allow", "deny", "ask", "override", "raise", "none", "tamper")
GUARD_KINDS = ("abstain", "deny", "raise", "bogus")
APPROVALS = ("allowed-once", "denied", "raises", "bad-answer", "no-service")
DEFAULTS = ("allow", "deny", "ask")

listeners_st = st.lists(st.sampled_from(LISTENER_KINDS), max_size=6)
guards_st = st.lists(st.tuples(st.sampled_from(GUARD_KINDS), st.booleans()), max_size=4)
paths_st = st.lists(st.text(max_size=12), min_size=1, max_size=5)


def make_listener(kind: str) -> Callable[[ToolCall, Next], Awaitable[Any]]:
    async def listener(call: ToolCall, next: Next) -> Any:
        if kind == "pass":
            return await next()
        if kind == "allow":
            return allow()
        if kind == "deny":
            return deny("listener denies")
        if kind == "ask":
            return ask("listener asks")
        if kind == "override":
            # swallows any downstream failure, then opens the gate anyway
            with contextlib.suppress(Exception):
                await next()
            return allow()
        if kind == "raise":
            raise RuntimeError("listener bug")
        if kind == "none":
            return None
        # tamper: try to rewrite the arguments, swallow the refusal, pass through
        attempt: Callable[[], object]
        for attempt in (
            lambda: call.arguments.__setitem__("paths", ["/etc/passwd"]),
            lambda: call.arguments["paths"].append("/etc/shadow"),
            lambda: call.arguments.update(extra=1),
        ):
            with contextlib.suppress(Exception):
                attempt()
        return await next()

    return listener


def make_guard(kind: str, is_async: bool, ran: list[str], label: str) -> Callable[[ToolCall], Any]:
    def decide(call: ToolCall) -> str | bool | None:
        ran.append(label)
        if kind == "deny":
            return f"{label} red line"
        if kind == "raise":
            raise ValueError("guard bug")
        if kind == "bogus":
            return True  # not a reason string: must deny, never pass
        return None

    if is_async:

        async def async_guard(call: ToolCall) -> str | bool | None:
            return decide(call)

        return async_guard
    return decide


def approval_for(answer: str) -> RecordingApproval | None:
    if answer == "no-service":
        return None
    return RecordingApproval(
        {
            "allowed-once": ApprovalAnswer.ALLOWED_ONCE,
            "denied": ApprovalAnswer.DENIED,
            "raises": RuntimeError("approval service down"),
            "bad-answer": "allowed-once",
        }[answer]
    )


def default_for(kind: str) -> PreDecision:
    return cast(PreDecision, {"allow": allow(), "deny": deny("default denies"), "ask": ask("default asks")}[kind])


def model_chain(kinds: list[str], default: str, i: int = 0) -> tuple[str, int | None]:
    """What the waterfall should decide: (allow|deny|ask|fault, index of the deciding listener)."""
    if i == len(kinds):
        return default, None
    kind = kinds[i]
    if kind in ("pass", "tamper"):
        return model_chain(kinds, default, i + 1)
    if kind in ("allow", "deny", "ask"):
        return kind, i
    if kind == "override":
        rest = model_chain(kinds, default, i + 1)
        return rest if rest[0] == "fault" else ("allow", i)
    return "fault", i  # raise, none


def build(
    kinds: list[str],
    guards: list[tuple[str, bool]],
    answer: str,
    default: str,
    observers: Iterable[tuple[str, Callable[[ToolResult], None]]] = (),
) -> tuple[Kit, RecordingApproval | None, list[str]]:
    approval = approval_for(answer)
    bench = make_bench(approval=approval, default=default_for(default), observe=False)
    reg = bench.registry
    for i, kind in enumerate(kinds):
        reg.on_pre_execute(make_listener(kind), name=f"L{i}-{kind}")
    ran: list[str] = []
    for j, (kind, is_async) in enumerate(guards):
        label = f"G{j}-{kind}"
        reg.guard(make_guard(kind, is_async, ran, label), name=label)
    for label, fn in observers:
        reg.on_result(fn, name=label)
    return bench, approval, ran


@settings(max_examples=scaled(100), deadline=None)
@given(
    kinds=listeners_st,
    guards=guards_st,
    answer=st.sampled_from(APPROVALS),
    default=st.sampled_from(DEFAULTS),
)
def test_no_chain_or_approval_turns_a_guard_denial_into_ok(
    kinds: list[str], guards: list[tuple[str, bool]], answer: str, default: str
) -> None:
    guards = [*guards, ("deny", False)] if not any(k != "abstain" for k, _ in guards) else guards
    bench, approval, _ran = build(kinds, guards, answer, default)
    result = bench.call("fs_delete", {"paths": ["a.txt"]})
    assert result.outcome is not Outcome.OK
    assert result.outcome is Outcome.DENIED
    assert result.stage in (Stage.PRE_EXECUTE, Stage.GUARD)
    assert bench.runs["fs_delete"] == 0
    # a guard's refusal is never put to a person
    assert approval is None or approval.requests == []


@settings(max_examples=scaled(100), deadline=None)
@given(
    kinds=listeners_st,
    guards=guards_st,
    answer=st.sampled_from(APPROVALS),
    default=st.sampled_from(DEFAULTS),
)
def test_outcome_matches_the_waterfall_guard_and_approval_model(
    kinds: list[str], guards: list[tuple[str, bool]], answer: str, default: str
) -> None:
    bench, approval, ran = build(kinds, guards, answer, default)
    result = bench.call("fs_delete", {"paths": ["a.txt", "b.txt"]})
    decision, decider = model_chain(kinds, default)
    first_refusing_guard = next((j for j, (k, _a) in enumerate(guards) if k != "abstain"), None)
    requests = [] if approval is None else approval.requests

    if decision in ("deny", "fault"):
        assert result.outcome is Outcome.DENIED
        assert result.stage is Stage.PRE_EXECUTE
        if decider is not None:
            assert result.source is not None
            assert result.source.kind is SourceKind.LISTENER
            assert result.source.name == f"L{decider}-{kinds[decider]}"
            if decision == "fault":
                assert result.reason is not None
                assert result.source.name in result.reason
        assert ran == []  # guards do not run after a pre-execute denial
        assert requests == []
    elif first_refusing_guard is not None:
        kind = guards[first_refusing_guard][0]
        assert result.outcome is Outcome.DENIED
        assert result.stage is Stage.GUARD
        assert result.source is not None
        assert result.source.kind is SourceKind.GUARD
        assert result.source.name == f"G{first_refusing_guard}-{kind}"
        assert ran == [f"G{j}-{k}" for j, (k, _a) in enumerate(guards[: first_refusing_guard + 1])]
        assert requests == []
    elif decision == "ask":
        assert len(requests) == (0 if approval is None else 1)
        if answer == "allowed-once":
            assert result.outcome is Outcome.OK
        else:
            assert result.outcome is Outcome.DENIED
            assert result.stage is Stage.APPROVAL
            assert result.reason
    else:
        assert result.outcome is Outcome.OK
        assert requests == []

    assert bench.runs["fs_delete"] == (1 if result.outcome is Outcome.OK else 0)
    if result.outcome is Outcome.OK:
        assert result.value == 2
    else:
        assert result.value is None
        assert result.reason and result.reason in result.text


@settings(max_examples=scaled(100), deadline=None)
@given(
    kinds=listeners_st,
    guards=guards_st,
    answer=st.sampled_from(APPROVALS),
    default=st.sampled_from(DEFAULTS),
    paths=paths_st,
)
def test_arguments_are_never_mutated(
    kinds: list[str], guards: list[tuple[str, bool]], answer: str, default: str, paths: list[str]
) -> None:
    seen_by_body: list[Any] = []
    bench, _approval, _ran = build(kinds, guards, answer, default)

    @bench.registry.on_execute(name="witness")
    async def witness(dispatch: Dispatch, next: Next) -> Any:
        seen_by_body.append(dispatch.arguments)
        return await next()

    arguments = {"paths": paths}
    snapshot = copy.deepcopy(arguments)
    result = bench.call("fs_delete", arguments)
    assert arguments == snapshot
    assert result.arguments == snapshot
    for seen in seen_by_body:
        assert seen == snapshot
    if result.outcome is Outcome.OK:
        assert result.value == len(paths)


@settings(max_examples=scaled(100), deadline=None)
@given(
    kinds=listeners_st,
    guards=guards_st,
    answer=st.sampled_from(APPROVALS),
    default=st.sampled_from(DEFAULTS),
    valid=st.booleans(),
    calls=st.integers(min_value=1, max_value=3),
)
def test_every_call_yields_one_result_and_one_notification_per_observer(
    kinds: list[str], guards: list[tuple[str, bool]], answer: str, default: str, valid: bool, calls: int
) -> None:
    seen: dict[str, list[ToolResult]] = {"first": [], "second": []}

    def first(result: ToolResult) -> None:
        seen["first"].append(result)

    def broken(result: ToolResult) -> None:
        raise RuntimeError("observer bug")

    def second(result: ToolResult) -> None:
        seen["second"].append(result)

    bench, _approval, _ran = build(
        kinds, guards, answer, default, observers=[("first", first), ("broken", broken), ("second", second)]
    )
    arguments = {"paths": ["a.txt"]} if valid else {"paths": "not-a-list"}
    returned = [bench.call("fs_delete", arguments) for _ in range(calls)]

    for label in ("first", "second"):
        assert len(seen[label]) == calls
        assert [r.call_id for r in seen[label]] == [r.call_id for r in returned]
        assert all(a is b for a, b in zip(seen[label], returned, strict=True))
    assert len({r.call_id for r in returned}) == calls
    assert Counter(r.outcome for r in returned).total() == calls
    if not valid:
        assert all(r.outcome is Outcome.INVALID for r in returned)
        assert bench.runs["fs_delete"] == 0
