"""The stages in their fixed order, for one call: the only place that order is written.

lookup -> validation -> pre-execute -> guards -> (approval) -> execute -> post-execute ->
finalize_content -> result, then the observers. Each policy stage is the object the installation
chose (stages.py); this module acts on what they answer. docs/pipeline.md is the contract.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from typing import Any

from policyengine.runtime import session_steps
from policyengine.runtime.installation import Installation
from policyengine.runtime.run import REGISTRY, Run, Stopped
from policyengine.runtime.tool_body import Aborted
from policyengine.values.call import PendingResult, ToolCall
from policyengine.values.cancellation import AbortKind
from policyengine.values.decisions import Ask, Block, Deny, PreDecision
from policyengine.values.results import MONITORED, Outcome, Stage, ToolResult

log = logging.getLogger("policyengine")


def admit(run: Run, decision: PreDecision) -> PreDecision:
    """Pre-execute's answer acted on: a denial stops the call, anything else lets it on."""
    run.lap(Stage.PRE_EXECUTE)
    if isinstance(decision, Deny):
        raise run.stopped(Outcome.DENIED, Stage.PRE_EXECUTE, decision.source, decision.reason)
    run.admitted = decision
    return decision


def hold(run: Run, red_line: Deny | None) -> None:
    """The guards' answer acted on: a red line stops the call."""
    run.lap(Stage.GUARD)
    if red_line is not None:
        raise run.stopped(Outcome.DENIED, Stage.GUARD, red_line.source, red_line.reason)


def reviewed(run: Run, answer: PendingResult | Block) -> PendingResult:
    """Post-execute's answer acted on: a block stops the call, else the rewritten result goes on."""
    run.lap(Stage.POST_EXECUTE)
    if isinstance(answer, Block):
        raise run.stopped(Outcome.BLOCKED, Stage.POST_EXECUTE, answer.source, answer.feedback)
    return answer


async def run_call(run: Run, arguments: Mapping[str, Any] | None) -> ToolResult:
    """Every stage after the call was built, in order; the result (never raises but for a cancel)."""
    token = MONITORED.set(run.monitored)  # rules in monitor mode record what they would have done here
    try:
        return await _run_call(run, arguments)
    finally:
        MONITORED.reset(token)


async def _run_call(run: Run, arguments: Mapping[str, Any] | None) -> ToolResult:
    """run_call's stages, with the run's monitor hits being recorded."""
    inst, name = run.inst, run.call.name
    definition = inst.tools.get(name)
    if definition is None:
        known = ", ".join(sorted(inst.tools)) or "none"
        return run.result(Outcome.INVALID, Stage.LOOKUP, REGISTRY, f"unknown tool {name!r}; registered tools: {known}")
    frozen, problems = definition.validate_arguments({} if arguments is None else arguments)
    run.lap(Stage.VALIDATION)
    if frozen is None:
        return run.result(
            Outcome.INVALID,
            Stage.VALIDATION,
            REGISTRY,
            f"invalid arguments for tool {name!r}: {'; '.join(problems)}",
        )
    # Normalisation filled defaults in, or the tool declares argument roles or tags its rules read.
    if (
        definition.roles is not None
        or definition.tags
        or (frozen is not run.call.arguments and frozen != run.call.arguments)
    ):
        sent = run.call
        run.call = ToolCall(
            sent.call_id,
            name,
            frozen,
            sent.agent,
            sent.token,
            sent.signal,
            sent.cwd,
            definition.roles,
            definition.tags,
            sent.session_id,
        )
    if inst.sessions is not None:
        opened = session_steps.opened(inst, run.call)
        if isinstance(opened, str):
            return run.result(Outcome.DENIED, Stage.PRE_EXECUTE, session_steps.SESSION_STORE, opened)
        run.call = opened
    call = run.call
    try:
        pre = inst.pre
        # Synchronous stages are plain calls, not coroutines (packs alone decide in microseconds).
        decision = pre.decide_sync(run) if pre.synchronous else await pre.decide(run)
        if inst.sessions is not None and isinstance(decision, Deny):
            session_steps.decided(inst, call, decision, None)  # a denied call is in the log too
        admit(run, decision)
        guards = run.inst.guards  # the run's snapshot, as for every stage
        red_line = guards.check_sync(run) if guards.synchronous else await guards.check(run)  # before anyone is asked
        if inst.sessions is not None:
            failed = session_steps.decided(inst, call, decision, red_line)
            if failed is not None and red_line is None:
                red_line = Deny(failed, session_steps.SESSION_STORE)
        hold(run, red_line)
        if isinstance(decision, Ask):
            await run.approve(decision)
        if call.signal.aborted:
            raise Aborted(call.signal.reason)  # type: ignore[arg-type]
        value, content = await run.execute(definition)
        post, pending = inst.post, PendingResult(value, content, definition)
        answer = post.review_sync(run, pending) if post.synchronous else await post.review(run, pending)
        if inst.sessions is not None and not isinstance(answer, Block):
            failed = session_steps.reviewed(inst, call, pending.value, pending.content)  # before any redaction
            answer = answer if failed is None else Block(failed, session_steps.SESSION_STORE)
        pending = reviewed(run, answer)
        content = run.finalize(definition, pending)
    except Stopped as stopped:
        return stopped.result
    except Aborted as aborted:
        timed_out = aborted.reason.kind is AbortKind.TIMEOUT
        return run.result(
            Outcome.TIMED_OUT if timed_out else Outcome.CANCELLED,
            None,
            REGISTRY,
            f"call {'timed out' if timed_out else 'cancelled'} before the tool ran: {aborted.reason.message}",
        )
    run.lap(Stage.RESULT)
    return run.result(Outcome.OK, None, None, value=pending.value, content=content, rewrites=pending.rewrites)


def notify(inst: Installation, result: ToolResult) -> None:
    """Tell every observer, once; an observer's failure touches nothing else."""
    for entry in inst.observers:
        try:
            returned: object = entry.fn(result)  # type: ignore[func-returns-value]
            if inspect.isawaitable(returned):
                if inspect.iscoroutine(returned):
                    returned.close()
                raise TypeError("returned an awaitable; observers are synchronous")
        except BaseException:  # whatever an observer raises, the later ones (audit among them) still hear
            inst.stats["observer_failures"] = inst.stats.get("observer_failures", 0) + 1
            log.exception("policyengine: result observer %s failed on call %s", entry.source, result.call_id)
