"""Evaluate a call against a registry's policy without running the tool or asking anyone."""

from __future__ import annotations

import contextlib
import enum
import functools
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, ParamSpec

from policyengine.errors import FreezeError
from policyengine.runtime import session_steps
from policyengine.runtime.installation import Installation
from policyengine.runtime.registry import Registry
from policyengine.runtime.run import REGISTRY, Run
from policyengine.tools.definition import ToolDefinition, content_problems, unknown_tool
from policyengine.values.call import PendingResult, ToolCall, new_call_id
from policyengine.values.decisions import Allow, Ask, Block, Deny, PreDecision, Source
from policyengine.values.frozen import FrozenDict, freeze
from policyengine.values.results import MONITORED, MonitorHit, Outcome, Stage


class Verdict(enum.Enum):
    """What the policy would do with a call."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"
    INVALID = "invalid"
    ERROR = "error"


class PostOutcome(enum.Enum):
    """What post-execute would do with a recorded result."""

    ACCEPTED = "accepted"
    REWRITTEN = "rewritten"
    BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The policy's answer for one call (and its recorded result, if any)."""

    decision: Verdict
    stage: Stage | None
    source: Source | None
    reason: str | None
    post: PostOutcome | None = None
    value: Any = None
    content: Any = None
    rewrites: tuple[Source, ...] = ()
    feedback: str | None = None
    # Rules in monitor mode that matched, and what each would have done; none of it was enforced.
    monitored: tuple[MonitorHit, ...] = ()

    @property
    def rule(self) -> str | None:
        """The id of the rule (or name of the listener or guard) that decided."""
        return self.source.name if self.source else None

    def blocked(self) -> Evaluation:
        """This evaluation with its result withheld: the feedback (else the reason) is all the model reads."""
        feedback = self.feedback or self.reason or "the result was withheld by policy"
        return replace(
            self, post=PostOutcome.BLOCKED, value=None, content=[{"type": "text", "text": feedback}], feedback=feedback
        )


def fault_denial(source: Source, name: str, doing: str, error: BaseException) -> Evaluation:
    """A denial for an enforcement point's own fault while `doing` tool `name`, saying what failed."""
    what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    reason = f"Denied: the {source.name} failed while {doing} tool {name!r} ({what}); the call is refused."
    return Evaluation(Verdict.DENY, None, source, reason)


def _prepare(
    inst: Installation, name: str, arguments: Mapping[str, Any] | None, require_tool: bool
) -> tuple[ToolDefinition | None, FrozenDict] | Evaluation:
    """Validate (a known tool) or freeze (an unknown one) the arguments, as a call would."""
    definition = inst.tools.get(name)
    try:
        if definition is not None:
            frozen, problems = definition.validate_arguments({} if arguments is None else arguments)
            if frozen is None:
                reason = f"invalid arguments for tool {name!r}: {'; '.join(problems)}"
                return Evaluation(Verdict.INVALID, Stage.VALIDATION, REGISTRY, reason)
            return definition, frozen
        if require_tool:
            return Evaluation(Verdict.INVALID, Stage.LOOKUP, REGISTRY, f"unknown tool {name!r}")
        unknown = freeze({} if arguments is None else arguments)
        if not isinstance(unknown, FrozenDict):
            raise FreezeError(f"arguments must be an object, got {type(arguments).__name__}")
        return None, unknown
    except FreezeError as error:
        return Evaluation(Verdict.INVALID, Stage.VALIDATION, REGISTRY, str(error))


Deferred = Callable[[], Awaitable[Evaluation]]
Answer = Evaluation | Deferred  # an evaluation now, or the coroutine that evaluates (Python listeners)

P = ParamSpec("P")


@contextlib.contextmanager
def _monitor_hits() -> Iterator[list[MonitorHit]]:
    """The list the monitor hits of the calls decided inside the block are appended to."""
    hits: list[MonitorHit] = []
    token = MONITORED.set(hits)
    try:
        yield hits
    finally:
        MONITORED.reset(token)


def _awaited(answer: Callable[P, Answer], name: str) -> Callable[P, Coroutine[Any, Any, Evaluation]]:
    """`answer` from a coroutine, awaited when deferred; its monitor hits recorded and carried (`monitored`)."""

    @functools.wraps(answer)
    async def awaited(*args: P.args, **kwargs: P.kwargs) -> Evaluation:
        with _monitor_hits() as hits:
            found = answer(*args, **kwargs)
            if not isinstance(found, Evaluation):
                found = await found()
        return replace(found, monitored=tuple(hits)) if hits else found

    awaited.__name__ = awaited.__qualname__ = name
    return awaited


def _at_once(answer: Callable[P, Answer], name: str, doc: str) -> Callable[P, Evaluation | None]:
    """`answer` without an event loop: None when it would have to be awaited; monitor hits as in `_awaited`."""

    @functools.wraps(answer)
    def at_once(*args: P.args, **kwargs: P.kwargs) -> Evaluation | None:
        with _monitor_hits() as hits:
            found = answer(*args, **kwargs)
        if not isinstance(found, Evaluation):
            return None
        return replace(found, monitored=tuple(hits)) if hits else found

    at_once.__name__ = at_once.__qualname__ = name
    at_once.__doc__ = doc
    return at_once


def _evaluation(
    registry: Registry,
    name: str,
    arguments: Mapping[str, Any] | None,
    *,
    agent: str = "agent",
    call_id: str | None = None,
    result: Mapping[str, Any] | None = None,
    require_tool: bool = False,
    cwd: str | None = None,
    session_id: str | None = None,
    now: float | None = None,
) -> Answer:
    """Run pre-execute and guards (and post-execute over `result`) as a real call would.

    The stage objects are the registry's own, the ones `Registry.call` runs. `result` holds the
    recorded `value` and optionally `content`. An `ask` is reported, never put to a person.
    Unknown tools are evaluated without argument validation unless `require_tool` is set.
    With a `session_id`, the call reads and writes that session as a real call would (`now`:
    the time it is decided at, for a replay; default the clock).
    """

    def start() -> tuple[Run, ToolDefinition | None] | Evaluation:
        return _start(registry, name, arguments, require_tool, agent, call_id, cwd, session_id, now)

    if not registry.installation.synchronous:  # nothing starts (no session is opened) until it is awaited
        return lambda: _evaluation_awaited(start(), result, now)
    started = start()
    return started if isinstance(started, Evaluation) else _evaluate_sync(*started, result, now)


async def _evaluation_awaited(
    started: tuple[Run, ToolDefinition | None] | Evaluation, result: Mapping[str, Any] | None, now: float | None
) -> Evaluation:
    if isinstance(started, Evaluation):
        return started
    run, definition = started
    inst = run.inst
    if inst.synchronous:
        return _evaluate_sync(run, definition, result, now)
    decision = await inst.pre.decide(run)
    red_line = None if isinstance(decision, Deny) else await inst.guards.check(run)
    red_line = _decided(run, decision, red_line, now)
    admitted = _admission(run, definition, decision, red_line, result)
    if not isinstance(admitted, PendingResult):
        return admitted
    return _reviewed(run, decision, _recorded_review(run, admitted, await inst.post.review(run, admitted), now))


# One signature, two conventions: `evaluate` awaits, `evaluate_sync` answers None where it would have to.
evaluate = _awaited(_evaluation, "evaluate")
evaluate_sync = _at_once(
    _evaluation, "evaluate_sync", "`evaluate` without an event loop, when every policy stage is synchronous; else None."
)


def _review(
    registry: Registry,
    name: str,
    arguments: Mapping[str, Any] | None,
    result: Mapping[str, Any],
    *,
    agent: str = "agent",
    call_id: str | None = None,
    cwd: str | None = None,
    session_id: str | None = None,
    now: float | None = None,
    require_tool: bool = False,
) -> Answer:
    """Post-execute over the real result of a call already decided: no second decision, no second entry.

    The call's decision entry was written when it was decided; this writes only its RESULT entry
    (post-execute's labels, the result's fingerprints), as `Registry.call` would. The answer's
    decision is ALLOW (the call ran); `post` says what post-execute made of the result.
    """

    def start() -> tuple[Run, PendingResult] | Evaluation:
        return _review_started(registry, name, arguments, result, require_tool, agent, call_id, cwd, session_id, now)

    if not registry.installation.post.synchronous:
        return lambda: _review_awaited(start(), now)
    started = start()
    if isinstance(started, Evaluation):
        return started
    run, pending = started
    return _reviewed(run, Allow(), _recorded_review(run, pending, run.inst.post.review_sync(run, pending), now))


async def _review_awaited(started: tuple[Run, PendingResult] | Evaluation, now: float | None) -> Evaluation:
    if isinstance(started, Evaluation):
        return started
    run, pending = started
    post = run.inst.post
    answer = post.review_sync(run, pending) if post.synchronous else await post.review(run, pending)
    return _reviewed(run, Allow(), _recorded_review(run, pending, answer, now))


review_recorded = _awaited(_review, "review_recorded")
review_recorded_sync = _at_once(
    _review,
    "review_recorded_sync",
    "`review_recorded` without an event loop, when post-execute is synchronous; else None.",
)


def _review_started(
    registry: Registry,
    name: str,
    arguments: Mapping[str, Any] | None,
    result: Mapping[str, Any],
    require_tool: bool,
    agent: str,
    call_id: str | None,
    cwd: str | None,
    session_id: str | None,
    now: float | None,
) -> tuple[Run, PendingResult] | Evaluation:
    """The run of a decided call and its recorded result as a pending result, or why it cannot be reviewed."""
    started = _start(registry, name, arguments, require_tool, agent, call_id, cwd, session_id, now)
    if isinstance(started, Evaluation):
        return started
    run, definition = started
    pending = _recorded(run, definition or unknown_tool(name), result)
    return pending if isinstance(pending, Evaluation) else (run, pending)


def _start(
    registry: Registry,
    name: str,
    arguments: Mapping[str, Any] | None,
    require_tool: bool,
    agent: str,
    call_id: str | None,
    cwd: str | None,
    session_id: str | None = None,
    now: float | None = None,
) -> tuple[Run, ToolDefinition | None] | Evaluation:
    """The run of the call as the registry would build it, or the evaluation of a call that never gets that far."""
    inst = registry.installation
    prepared = _prepare(inst, name, arguments, require_tool)
    if isinstance(prepared, Evaluation):
        return prepared
    definition, frozen = prepared
    call = call_for(registry, name, frozen, agent, call_id, cwd, session_id)
    if inst.sessions is not None:
        opened = session_steps.opened(inst, call, now)
        if isinstance(opened, str):
            return Evaluation(Verdict.DENY, Stage.PRE_EXECUTE, session_steps.SESSION_STORE, opened)
        call = opened
    return Run(inst, call), definition


def _decided(run: Run, decision: PreDecision, red_line: Deny | None, now: float | None) -> Deny | None:
    """The red line, after the call's decision was written to its session (a failed write is one)."""
    inst = run.inst
    if inst.sessions is None:
        return red_line
    failed = session_steps.decided(inst, run.call, decision, red_line, now)
    return red_line if failed is None or red_line is not None else Deny(failed, session_steps.SESSION_STORE)


def _recorded_review(
    run: Run, pending: PendingResult, answer: PendingResult | Block, now: float | None
) -> PendingResult | Block:
    """Post-execute's answer, once the labels and prints of the recorded result were written (a failure blocks)."""
    inst = run.inst
    if inst.sessions is None or isinstance(answer, Block):
        return answer
    failed = session_steps.reviewed(inst, run.call, pending.value, pending.content, now)
    return answer if failed is None else Block(failed, session_steps.SESSION_STORE)


def _evaluate_sync(
    run: Run, definition: ToolDefinition | None, result: Mapping[str, Any] | None, now: float | None = None
) -> Evaluation:
    """The stages called directly: a dry-run needs no coroutine per call."""
    inst = run.inst
    decision = inst.pre.decide_sync(run)
    red_line = None if isinstance(decision, Deny) else inst.guards.check_sync(run)
    red_line = _decided(run, decision, red_line, now)
    admitted = _admission(run, definition, decision, red_line, result)
    if not isinstance(admitted, PendingResult):
        return admitted
    return _reviewed(run, decision, _recorded_review(run, admitted, inst.post.review_sync(run, admitted), now))


def _admission(
    run: Run,
    definition: ToolDefinition | None,
    decision: PreDecision,
    red_line: Deny | None,
    result: Mapping[str, Any] | None,
) -> Evaluation | PendingResult:
    """The evaluation when pre-execute or the guards decide it, else the recorded result for post-execute."""
    if isinstance(decision, Deny):
        return Evaluation(Verdict.DENY, Stage.PRE_EXECUTE, decision.source, decision.reason)
    if red_line is not None:
        return Evaluation(Verdict.DENY, Stage.GUARD, red_line.source, red_line.reason)
    if result is None:
        return _admitted(decision)
    return _recorded(run, definition or unknown_tool(run.call.name), result)


def call_for(
    registry: Registry,
    name: str,
    frozen: FrozenDict,
    agent: str,
    call_id: str | None,
    cwd: str | None,
    session_id: str | None = None,
) -> ToolCall:
    """The call as the registry would build it: its cwd (or the registry's), the tool's roles and tags."""
    definition = registry.tools.get(name)
    return ToolCall(
        call_id or new_call_id(),
        name,
        frozen,
        agent,
        cwd=cwd if cwd is not None else registry.cwd,
        roles=definition.roles if definition is not None else None,
        tags=definition.tags if definition is not None else frozenset(),
        session_id=session_id or None,
    )


def _admitted(decision: PreDecision) -> Evaluation:
    """A call pre-execute and the guards let on: allowed, or asked about."""
    if isinstance(decision, Ask):
        return Evaluation(Verdict.ASK, Stage.PRE_EXECUTE, decision.source, decision.reason)
    return Evaluation(Verdict.ALLOW, Stage.PRE_EXECUTE, decision.source, None)


def _recorded(run: Run, definition: ToolDefinition, result: Mapping[str, Any]) -> PendingResult | Evaluation:
    """The recorded value and content (rendered when not recorded), frozen, as the tool's pending result."""
    try:
        value = freeze(result.get("value"))
        content = result.get("content")
        if content is None:
            content = freeze(definition.render(run.call.arguments, value))
        elif content_problems(content):
            raise ValueError("; ".join(content_problems(content)))
        return PendingResult(value, freeze(content), definition)
    except Exception as error:
        return Evaluation(Verdict.ERROR, Stage.POST_EXECUTE, REGISTRY, f"recorded result is malformed: {error}")


def _reviewed(run: Run, decision: PreDecision, answer: PendingResult | Block) -> Evaluation:
    """The evaluation of an admitted call whose recorded result post-execute reviewed."""
    admitted = _admitted(decision)
    if isinstance(answer, Block):
        # The result the call would have ended with: its content is the feedback, as the model would see it.
        r = run.result(Outcome.BLOCKED, Stage.POST_EXECUTE, answer.source, answer.feedback)
        return replace(
            admitted,
            post=PostOutcome.BLOCKED,
            content=r.content,
            rewrites=(r.source,) if r.source else (),
            feedback=r.reason,
        )
    post = PostOutcome.REWRITTEN if answer.rewrites else PostOutcome.ACCEPTED
    return replace(admitted, post=post, value=answer.value, content=answer.content, rewrites=answer.rewrites)
