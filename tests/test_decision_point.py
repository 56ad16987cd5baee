"""The decision point: one sync/async convention, one fail-closed rule, one session convention for every front end."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from policyengine import Registry, define_tool
from policyengine.enforce.decision_point import DecisionPoint, Question, closed, settle
from policyengine.enforce.evaluate import Evaluation, PostOutcome, Verdict, evaluate
from policyengine.enforce.install import PolicyLayers
from policyengine.sessions import MemoryStore
from policyengine.values.decisions import Allow, Source, SourceKind
from support import rules_pack

FRONT = Source(SourceKind.REGISTRY, "test front end")
ROOT = Path(__file__).resolve().parents[1]

DENY_ENV = {
    "id": "no-env",
    "stage": "pre-execute",
    "tools": ["*"],
    "when": "contains(to_string(arguments), '.env')",
    "decision": "deny",
    "reason": "Denied: .env",
}
LABEL_READ = {"id": "label-read", "stage": "post-execute", "tools": ["read"], "label": "read-something"}
ASK_AFTER_READ = {
    "id": "ask-after-read",
    "stage": "pre-execute",
    "tools": ["send"],
    "when": 'session.labels."read-something"',
    "decision": "ask",
    "reason": "Send after a read?",
}


class HostileArguments(Mapping[str, Any]):
    """Arguments a framework hands over that fail when read: a fault of the front end's input."""

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("the framework's arguments object broke")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("the framework's arguments object broke")

    def __len__(self) -> int:
        return 1


def _packs_alone(tmp_path: Path, *rules: Mapping[str, Any]) -> Registry:
    registry = Registry(sessions=MemoryStore())
    for name in ("read", "send"):
        registry.register(
            define_tool(name=name, description=name, parameters={"path": {"type": "string"}}, execute=lambda _a: "")
        )
    PolicyLayers.install(registry, [rules_pack(tmp_path, "p", list(rules or (DENY_ENV,)))])
    return registry


def _with_a_python_listener(tmp_path: Path) -> Registry:
    registry = _packs_alone(tmp_path)

    @registry.on_pre_execute
    async def allow_all(call: Any, next: Any) -> Any:
        await asyncio.sleep(0)
        return await next()

    return registry


def test_packs_alone_are_answered_at_once_without_an_event_loop(tmp_path: Path) -> None:
    point = DecisionPoint(_packs_alone(tmp_path), FRONT)
    assert point.synchronous
    answer = point.ask(Question("read", {"path": ".env"}))
    assert isinstance(answer, Evaluation)
    assert (answer.decision, answer.rule) == (Verdict.DENY, "no-env")


def test_a_python_listener_defers_and_every_way_of_settling_gives_the_same_answer(tmp_path: Path) -> None:
    point = DecisionPoint(_with_a_python_listener(tmp_path), FRONT)
    assert not point.synchronous
    question = Question("read", {"path": ".env"})
    assert callable(point.ask(question))
    awaited = asyncio.run(point.decide(question))
    blocking = point.decide_blocking(question)

    async def from_inside_a_running_loop() -> Evaluation:
        return point.decide_blocking(question)  # the stages get a loop of their own on another thread

    inside = asyncio.run(from_inside_a_running_loop())
    reference = asyncio.run(evaluate(point.registry, "read", {"path": ".env"}))
    assert {(a.decision, a.rule, a.reason) for a in (awaited, blocking, inside)} == {
        (reference.decision, reference.rule, reference.reason)
    }


@pytest.mark.parametrize("listener", [False, True], ids=["answered at once", "deferred"])
def test_a_fault_while_deciding_is_a_denial_naming_the_front_end_never_an_exception(
    tmp_path: Path, listener: bool
) -> None:
    registry = _with_a_python_listener(tmp_path) if listener else _packs_alone(tmp_path)
    point = DecisionPoint(registry, FRONT)
    answer = point.decide_blocking(Question("read", HostileArguments()))
    assert (answer.decision, answer.source) == (Verdict.DENY, FRONT)
    assert answer.reason is not None and "RuntimeError" in answer.reason and "'read'" in answer.reason


@pytest.mark.parametrize("replayed", [False, True], ids=["review of a decided call", "a replay with its result"])
@pytest.mark.parametrize("listener", [False, True], ids=["answered at once", "deferred"])
def test_a_fault_while_reviewing_withholds_the_result(tmp_path: Path, listener: bool, replayed: bool) -> None:
    registry = _with_a_python_listener(tmp_path) if listener else _packs_alone(tmp_path)
    point = DecisionPoint(registry, FRONT)
    question, result = Question("read", HostileArguments(), session_id="s"), {"value": "secret text"}
    answer = settle(point.ask(question, result)) if replayed else point.review_blocking(question, result)
    assert (answer.decision, answer.post, answer.source) == (Verdict.DENY, PostOutcome.BLOCKED, FRONT)
    assert answer.value is None and "secret text" not in str(answer.content)
    assert "failed while reviewing the result of tool 'read'" in str(answer.feedback)


def test_a_call_is_decided_once_and_its_review_writes_only_the_results_entry(tmp_path: Path) -> None:
    registry = _packs_alone(tmp_path, LABEL_READ, ASK_AFTER_READ)
    point = DecisionPoint(registry, FRONT)
    store = registry.sessions
    assert store is not None
    read = Question("read", {"path": "notes.txt"}, call_id="c1", session_id="s")
    assert point.decide_blocking(read).decision is Verdict.ALLOW
    decided = len(store.load("s").calls)
    reviewed = point.review_blocking(read, {"value": "the notes"})
    assert (reviewed.decision, reviewed.post) == (Verdict.ALLOW, PostOutcome.ACCEPTED)
    state = store.load("s")
    assert len(state.calls) == decided  # the review added the result's labels, not a second decision
    assert "read-something" in state.labels
    sent = point.decide_blocking(Question("send", {"path": "out"}, call_id="c2", session_id="s"))
    assert (sent.decision, sent.rule) == (Verdict.ASK, "ask-after-read")


def test_invalid_and_error_answers_close_to_a_denial_with_their_reason() -> None:
    invalid = Evaluation(Verdict.INVALID, None, FRONT, "invalid arguments for tool 'x'")
    assert (closed(invalid).decision, closed(invalid).reason) == (Verdict.DENY, "invalid arguments for tool 'x'")
    error = Evaluation(Verdict.ERROR, None, FRONT, None)
    assert (closed(error).decision, closed(error).reason) == (Verdict.DENY, "policy answered error")
    allowed = Evaluation(Verdict.ALLOW, None, Allow().source, None)
    assert closed(allowed) is allowed and settle(allowed) is allowed
