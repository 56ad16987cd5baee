"""Evaluate a call against a registry's policy without running the tool or asking anyone."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .call import ToolCall, new_call_id
from .decisions import Ask, Source
from .errors import FreezeError
from .frozen import FrozenList, freeze
from .pipeline import REGISTRY, Run, _Stopped
from .registry import Registry
from .results import Outcome, Stage
from .tools import ToolDefinition, content_problems, define_tool


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


def _stub(name: str) -> ToolDefinition:
    # A tool the registry does not know: no output schema, default render.
    return define_tool(name=name, description=f"unknown tool {name}", parameters={}, execute=lambda _a: None)


async def evaluate(
    registry: Registry,
    name: str,
    arguments: Mapping[str, Any] | None,
    *,
    agent: str = "agent",
    call_id: str | None = None,
    result: Mapping[str, Any] | None = None,
    require_tool: bool = False,
) -> Evaluation:
    """Run pre-execute and guards (and post-execute over `result`) as a real call would.

    `result` holds the recorded `value` and optionally `content`. An `ask` is reported,
    never put to a person. Unknown tools are evaluated without argument validation unless
    `require_tool` is set.
    """
    inst = registry._installation
    definition = inst.tools.get(name)
    try:
        if definition is not None:
            frozen, problems = definition.validate_arguments({} if arguments is None else arguments)
            if frozen is None:
                reason = f"invalid arguments for tool {name!r}: {'; '.join(problems)}"
                return Evaluation(Decision.INVALID, Stage.VALIDATION, REGISTRY, reason)
        elif require_tool:
            return Evaluation(Decision.INVALID, Stage.LOOKUP, REGISTRY, f"unknown tool {name!r}")
        else:
            frozen = freeze({} if arguments is None else arguments)
            if not isinstance(frozen, dict):
                raise FreezeError(f"arguments must be an object, got {type(arguments).__name__}")
    except FreezeError as error:
        return Evaluation(Decision.INVALID, Stage.VALIDATION, REGISTRY, str(error))
    run = Run(inst, ToolCall(call_id or new_call_id(), name, frozen, agent))
    try:
        decision = await run.pre_execute()
        await run.guards()
    except _Stopped as stopped:
        r = stopped.result
        return Evaluation(Decision.DENY, r.stage, r.source, r.reason)
    verdict = Decision.ASK if isinstance(decision, Ask) else Decision.ALLOW
    source = decision.source
    why: str | None = decision.reason if isinstance(decision, Ask) else None
    if result is None:
        return Evaluation(verdict, Stage.PRE_EXECUTE, source, why)
    return await _post(run, definition or _stub(name), result, verdict, source, why)


async def _post(
    run: Run,
    definition: ToolDefinition,
    result: Mapping[str, Any],
    verdict: Decision,
    source: Source | None,
    reason: str | None,
) -> Evaluation:
    try:
        value = freeze(result.get("value"))
        content = result.get("content")
        if content is None:
            content = freeze(definition.render(run.call.arguments, value))
        elif content_problems(content):
            raise ValueError("; ".join(content_problems(content)))
        content = freeze(content)
    except Exception as error:
        return Evaluation(Decision.ERROR, Stage.POST_EXECUTE, REGISTRY, f"recorded result is malformed: {error}")
    try:
        pending = await run.post_execute(definition, value, content)
    except _Stopped as stopped:
        r = stopped.result
        blocked = r.outcome is Outcome.BLOCKED
        return Evaluation(
            verdict,
            Stage.PRE_EXECUTE,
            source,
            reason,
            PostOutcome.BLOCKED if blocked else None,
            None,
            r.content if isinstance(r.content, FrozenList) else None,
            (r.source,) if r.source else (),
            r.reason,
        )
    post = PostOutcome.REWRITTEN if pending.rewrites else PostOutcome.ACCEPTED
    return Evaluation(
        verdict, Stage.PRE_EXECUTE, source, reason, post, pending.value, pending.content, pending.rewrites
    )
