"""Evaluate a call against a registry's policy without running the tool or asking anyone."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from policyengine.errors import FreezeError
from policyengine.packs.rules import EXPLAIN, check_guards
from policyengine.runtime.pipeline import REGISTRY, Installation, Run, _Stopped
from policyengine.runtime.registry import Registry
from policyengine.tools.definition import ToolDefinition, content_problems, define_tool
from policyengine.values.call import PendingResult, ToolCall, new_call_id
from policyengine.values.decisions import Ask, Deny, Source
from policyengine.values.frozen import FrozenDict, FrozenList, freeze
from policyengine.values.results import Outcome, Stage


class Decision(enum.Enum):
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

    decision: Decision
    stage: Stage | None
    source: Source | None
    reason: str | None
    post: PostOutcome | None = None
    value: Any = None
    content: Any = None
    rewrites: tuple[Source, ...] = ()
    feedback: str | None = None

    @property
    def rule(self) -> str | None:
        """The id of the rule (or name of the listener or guard) that decided."""
        return self.source.name if self.source else None


@lru_cache(maxsize=1024)
def _stub(name: str) -> ToolDefinition:
    """A tool the registry does not know: no output schema, default render (built once per name)."""
    return define_tool(name=name, description=f"unknown tool {name}", parameters={}, execute=lambda _a: None)


def _prepare(
    registry: Registry, name: str, arguments: Mapping[str, Any] | None, require_tool: bool
) -> tuple[ToolDefinition | None, FrozenDict] | Evaluation:
    """Validate (a known tool) or freeze (an unknown one) the arguments, as a call would."""
    definition = registry._installation.tools.get(name)
    try:
        if definition is not None:
            frozen, problems = definition.validate_arguments({} if arguments is None else arguments)
            if frozen is None:
                reason = f"invalid arguments for tool {name!r}: {'; '.join(problems)}"
                return Evaluation(Decision.INVALID, Stage.VALIDATION, REGISTRY, reason)
            return definition, frozen
        if require_tool:
            return Evaluation(Decision.INVALID, Stage.LOOKUP, REGISTRY, f"unknown tool {name!r}")
        unknown = freeze({} if arguments is None else arguments)
        if not isinstance(unknown, FrozenDict):
            raise FreezeError(f"arguments must be an object, got {type(arguments).__name__}")
        return None, unknown
    except FreezeError as error:
        return Evaluation(Decision.INVALID, Stage.VALIDATION, REGISTRY, str(error))


async def evaluate(
    registry: Registry,
    name: str,
    arguments: Mapping[str, Any] | None,
    *,
    agent: str = "agent",
    call_id: str | None = None,
    result: Mapping[str, Any] | None = None,
    require_tool: bool = False,
    cwd: str | None = None,
) -> Evaluation:
    """Run pre-execute and guards (and post-execute over `result`) as a real call would.

    `result` holds the recorded `value` and optionally `content`. An `ask` is reported,
    never put to a person. Unknown tools are evaluated without argument validation unless
    `require_tool` is set.
    """
    prepared = _prepare(registry, name, arguments, require_tool)
    if isinstance(prepared, Evaluation):
        return prepared
    definition, frozen = prepared
    run = Run(registry._installation, call_for(registry, name, frozen, agent, call_id, cwd))
    if pack_only(run.inst):
        return _evaluate_packs(run, definition, result)
    try:
        decision = await run.pre_execute()
        await run.guards()
    except _Stopped as stopped:
        r = stopped.result
        return Evaluation(Decision.DENY, r.stage, r.source, r.reason)
    verdict = Decision.ASK if isinstance(decision, Ask) else Decision.ALLOW
    why: str | None = decision.reason if isinstance(decision, Ask) else None
    if result is None:
        return Evaluation(verdict, Stage.PRE_EXECUTE, decision.source, why)
    recorded = _recorded(run, definition or _stub(name), result)
    if isinstance(recorded, Evaluation):
        return recorded
    try:
        pending = await run.post_execute(definition or _stub(name), *recorded)
    except _Stopped as stopped:
        return _blocked(stopped, verdict, decision.source, why)
    return _accepted(pending, verdict, decision.source, why)


def evaluate_now(
    registry: Registry,
    name: str,
    arguments: Mapping[str, Any] | None,
    *,
    agent: str = "agent",
    call_id: str | None = None,
    result: Mapping[str, Any] | None = None,
    require_tool: bool = False,
    cwd: str | None = None,
) -> Evaluation | None:
    """`evaluate` without an event loop, when only packs hold policy; None when it cannot."""
    if not pack_only(registry._installation):
        return None
    prepared = _prepare(registry, name, arguments, require_tool)
    if isinstance(prepared, Evaluation):
        return prepared
    definition, frozen = prepared
    run = Run(registry._installation, call_for(registry, name, frozen, agent, call_id, cwd))
    return _evaluate_packs(run, definition, result)


def call_for(
    registry: Registry, name: str, frozen: FrozenDict, agent: str, call_id: str | None, cwd: str | None
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
    )


def pack_only(inst: Installation) -> bool:
    """Whether every policy listener and guard comes from a pack (decided without the event loop)."""
    return (
        inst.pre_decider is not None
        and (inst.guard_packs is not None or not inst.guards)
        and (inst.post_packs is not None or not inst.post.listeners)
    )


def _evaluate_packs(run: Run, definition: ToolDefinition | None, result: Mapping[str, Any] | None) -> Evaluation:
    """The same evaluation, synchronously, when only packs hold policy (dry-runs, tests)."""
    inst, call = run.inst, run.call
    assert inst.pre_decider is not None
    # The Decider directly, not Run's pack stages: a dry-run needs no timings, and a denial here
    # is a value, not a result built and raised (about 10% of a recorded call's cost).
    if run.staged:
        decision, red_line = inst.pre_decider.stages(call.name, call.document)
    else:
        decision, red_line = inst.pre_decider.pre(call.name, call.document), None
        if not isinstance(decision, Deny):
            explain = EXPLAIN.get()
            red_line = next(
                (r for rules in run.packs.guards if (r := check_guards(rules, call.document, explain))), None
            )
    if isinstance(decision, Deny):
        return Evaluation(Decision.DENY, Stage.PRE_EXECUTE, decision.source, decision.reason)
    if red_line is not None:
        return Evaluation(Decision.DENY, Stage.GUARD, red_line.source, red_line.reason)
    verdict = Decision.ASK if isinstance(decision, Ask) else Decision.ALLOW
    why: str | None = decision.reason if isinstance(decision, Ask) else None
    if result is None:
        return Evaluation(verdict, Stage.PRE_EXECUTE, decision.source, why)
    definition = definition or _stub(call.name)
    recorded = _recorded(run, definition, result)
    if isinstance(recorded, Evaluation):
        return recorded
    pending = PendingResult(recorded[0], recorded[1], definition)
    try:
        if inst.post_packs is not None:
            pending = run.post_from_packs(pending)
    except _Stopped as stopped:
        return _blocked(stopped, verdict, decision.source, why)
    return _accepted(pending, verdict, decision.source, why)


def _recorded(run: Run, definition: ToolDefinition, result: Mapping[str, Any]) -> tuple[Any, Any] | Evaluation:
    """The recorded value and content (rendered when not recorded), frozen."""
    try:
        value = freeze(result.get("value"))
        content = result.get("content")
        if content is None:
            content = freeze(definition.render(run.call.arguments, value))
        elif content_problems(content):
            raise ValueError("; ".join(content_problems(content)))
        return value, freeze(content)
    except Exception as error:
        return Evaluation(Decision.ERROR, Stage.POST_EXECUTE, REGISTRY, f"recorded result is malformed: {error}")


def _blocked(stopped: _Stopped, verdict: Decision, source: Source | None, reason: str | None) -> Evaluation:
    r = stopped.result
    return Evaluation(
        verdict,
        Stage.PRE_EXECUTE,
        source,
        reason,
        PostOutcome.BLOCKED if r.outcome is Outcome.BLOCKED else None,
        None,
        r.content if isinstance(r.content, FrozenList) else None,
        (r.source,) if r.source else (),
        r.reason,
    )


def _accepted(pending: PendingResult, verdict: Decision, source: Source | None, reason: str | None) -> Evaluation:
    post = PostOutcome.REWRITTEN if pending.rewrites else PostOutcome.ACCEPTED
    return Evaluation(
        verdict, Stage.PRE_EXECUTE, source, reason, post, pending.value, pending.content, pending.rewrites
    )
