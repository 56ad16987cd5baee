"""The one place a front end asks what policy does with a call, and with its result.

Every front end that decides without running the tool (the decision service, the framework
adapters' gate, the dry-run) asks a `DecisionPoint` over its registry; `Registry.call` is the same
stages with the tool run between them. Three rules hold for every one of them:

- **One sync/async convention.** `ask` answers an `Evaluation` at once when every policy stage is
  synchronous (packs alone: no event loop, no coroutine per call), else a `Deferred` to await.
  `decide`/`review` await it; `decide_blocking`/`review_blocking` settle it from synchronous code
  (on a loop of their own, on another thread when the caller's thread already runs one).
- **One fail-closed rule.** Nothing raises out of a question: a fault of the front end or the
  engine is a DENY naming the front end (and a review's fault blocks the result); INVALID and
  ERROR answers are DENY with their reason.
- **One session convention.** A call is decided once (its decision entry written then); its real
  result is reviewed with `review`, which writes only the result's entry.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from policyengine.enforce.evaluate import (
    Answer,
    Deferred,
    Evaluation,
    Verdict,
    evaluate,
    evaluate_sync,
    fault_denial,
    review_recorded,
    review_recorded_sync,
)
from policyengine.runtime.registry import Registry
from policyengine.values.decisions import Source

__all__ = ["Answer", "DecisionPoint", "Deferred", "Question", "closed", "settle"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Question:
    """A call a front end asks about, as the agent made it."""

    name: str
    arguments: Mapping[str, Any] | None
    agent: str = "agent"
    call_id: str | None = None
    cwd: str | None = None
    session_id: str | None = None
    now: float | None = None  # when it is decided (a replay: the recorded time); default the clock
    require_tool: bool = False  # a tool outside the registry is INVALID (else decided without validation)

    def options(self) -> dict[str, Any]:
        """The keyword arguments of evaluate() and review_recorded() for this question."""
        return {
            "agent": self.agent,
            "call_id": self.call_id,
            "cwd": self.cwd,
            "session_id": self.session_id or None,
            "now": self.now,
            "require_tool": self.require_tool,
        }


class DecisionPoint:
    """Where a front end asks: a call decided, a result reviewed, by one registry's stages; never raises."""

    __slots__ = ("front", "on_fault", "registry")

    def __init__(
        self, registry: Registry, front: Source, on_fault: Callable[[str, BaseException], None] | None = None
    ) -> None:
        self.registry = registry
        self.front = front  # who is named when the front end itself fails
        self.on_fault = on_fault  # told (tool name, error) of every fault folded into a denial: a service logs it

    @property
    def synchronous(self) -> bool:
        """True when every policy stage decides without awaiting (packs alone): `ask` then answers at once."""
        return self.registry.installation.synchronous

    # -- answers now, or deferred ------------------------------------------------------------------

    def ask(self, question: Question, result: Mapping[str, Any] | None = None) -> Answer:
        """Pre-execute and the guards (and post-execute over a recorded `result`: a replay, decided afresh).

        With a `result`, a fault withholds it (as `ask_review`'s does), whatever stage failed.
        """
        doing = "deciding" if result is None else "reviewing the result of"
        try:
            answer = evaluate_sync(
                self.registry, question.name, question.arguments, result=result, **question.options()
            )
            if answer is not None:
                return answer
        except Exception as error:  # fails closed: a front end that cannot answer denies
            fault = self._fault(question.name, doing, error)
            return fault if result is None else fault.blocked()
        return self._deferred(
            lambda: evaluate(self.registry, question.name, question.arguments, result=result, **question.options()),
            question.name,
            doing,
            blocked=result is not None,
        )

    def ask_review(self, question: Question, result: Mapping[str, Any]) -> Answer:
        """Post-execute alone over the real result of a call already decided (its session's result entry)."""
        try:
            answer = review_recorded_sync(
                self.registry, question.name, question.arguments, result, **question.options()
            )
            if answer is not None:
                return answer
        except Exception as error:  # fails closed: a result that cannot be reviewed never reaches the model
            return self._fault(question.name, "reviewing the result of", error).blocked()
        return self._deferred(
            lambda: review_recorded(self.registry, question.name, question.arguments, result, **question.options()),
            question.name,
            "reviewing the result of",
            blocked=True,
        )

    # -- settled -----------------------------------------------------------------------------------

    async def decide(self, question: Question, result: Mapping[str, Any] | None = None) -> Evaluation:
        """`ask`, awaited on the caller's loop."""
        answer = self.ask(question, result)
        return answer if isinstance(answer, Evaluation) else await answer()

    async def review(self, question: Question, result: Mapping[str, Any]) -> Evaluation:
        """`ask_review`, awaited on the caller's loop."""
        answer = self.ask_review(question, result)
        return answer if isinstance(answer, Evaluation) else await answer()

    def decide_blocking(self, question: Question, result: Mapping[str, Any] | None = None) -> Evaluation:
        """`ask`, settled from synchronous code."""
        return settle(self.ask(question, result))

    def review_blocking(self, question: Question, result: Mapping[str, Any]) -> Evaluation:
        """`ask_review`, settled from synchronous code."""
        return settle(self.ask_review(question, result))

    # -- faults ------------------------------------------------------------------------------------

    def _fault(self, name: str, doing: str, error: BaseException) -> Evaluation:
        if self.on_fault is not None:
            with contextlib.suppress(Exception):  # a failing logger must not turn a denial into a crash
                self.on_fault(name, error)
        return fault_denial(self.front, name, doing, error)

    def _deferred(self, start: Deferred, name: str, doing: str, *, blocked: bool = False) -> Deferred:
        """`start`, awaited with the fail-closed rule: a fault denies (and, `blocked`, withholds the result)."""

        async def guarded() -> Evaluation:
            try:
                return await start()
            except Exception as error:
                fault = self._fault(name, doing, error)
                return fault.blocked() if blocked else fault

        return guarded


def settle(answer: Answer) -> Evaluation:
    """An answer from synchronous code: as it is, or its coroutine run to the end (on its own loop)."""
    if isinstance(answer, Evaluation):
        return answer
    return run_to_end(answer())


def run_to_end(awaitable: Awaitable[T]) -> T:
    """Run a coroutine to its end from synchronous code, whether or not this thread runs a loop."""

    async def main() -> T:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # This thread's loop is busy running the caller: the stages get a loop of their own on another thread.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="policy-decision") as pool:
        return pool.submit(asyncio.run, main()).result()


def closed(answer: Evaluation) -> Evaluation:
    """ALLOW, ASK and DENY as they are; INVALID and ERROR deny, with their reason."""
    if answer.decision in (Verdict.ALLOW, Verdict.ASK, Verdict.DENY):
        return answer
    return replace(answer, decision=Verdict.DENY, reason=answer.reason or f"policy answered {answer.decision.value}")
