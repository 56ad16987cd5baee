"""Deciding one request: the evaluation on the request's snapshot, fail-closed folding, and the answer's fields.

Anything that goes wrong while deciding denies (and blocks a result); a large call is decided in
a worker thread and denied at its deadline.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from policyengine.enforce.decision_point import Answer, DecisionPoint, Question
from policyengine.enforce.evaluate import Evaluation, Verdict
from policyengine.service.packs_state import ServedPacks
from policyengine.values.decisions import Source, SourceKind
from policyengine.values.frozen import thaw

log = logging.getLogger("policyengine.service")

__all__ = ["SERVICE", "answer_fields", "answer_for", "closed", "evaluate_request", "labels_held"]

SERVICE = Source(SourceKind.REGISTRY, "policy service")


def _logged(name: str, error: BaseException) -> None:
    log.error("policyengine serve: evaluating %r failed", name, exc_info=error)


def answer_for(
    snapshot: ServedPacks, body: Mapping[str, Any], call_id: str, result: Mapping[str, Any] | None
) -> Answer:
    """The decision point's answer on this snapshot (at once for packs alone, else deferred); never raises."""
    # Nothing can swap the registry under a decision in progress: the snapshot is immutable.
    point = DecisionPoint(snapshot.registry, SERVICE, _logged)
    question = Question(
        body["name"],
        body["arguments"],
        agent=body.get("agent") or "agent",
        call_id=call_id,
        cwd=body.get("cwd"),
        session_id=body.get("session_id") or None,
        require_tool=snapshot.require_tool,
    )
    if result is None or not question.session_id:
        return point.ask(question, result)
    if not point.synchronous:
        # Python listeners cannot review a result without deciding the call again, which would count it twice.
        reason = "Blocked: the policy service reviews results in a session only for packs (synchronous stages)."
        return Evaluation(Verdict.DENY, None, SERVICE, reason)
    # The call was decided (and counted) by /v1/decide: a review records its result, never a second decision.
    return point.ask_review(question, result)


async def evaluate_request(
    snapshot: ServedPacks,
    body: Mapping[str, Any],
    call_id: str,
    result: Mapping[str, Any] | None,
    aside: tuple[concurrent.futures.Executor, float] | None = None,
) -> Evaluation:
    """The evaluation on this snapshot's registry; any fault denies (and blocks a result).

    With `aside` (an executor and a deadline in seconds), the synchronous evaluation runs on the
    executor and a call it has not decided by the deadline is denied; the thread runs on to its
    end (a thread cannot be stopped), the executor's size bounding how many do.
    """
    answer: Answer
    if aside is None:
        answer = answer_for(snapshot, body, call_id, result)
    else:
        executor, timeout = aside
        work = asyncio.get_running_loop().run_in_executor(executor, answer_for, snapshot, body, call_id, result)
        try:
            answer = await asyncio.wait_for(work, timeout)
        except TimeoutError:
            log.warning("policyengine serve: tool %r not decided within %gs; denied", body["name"], timeout)
            reason = (
                f"Denied: the policy service could not decide tool {body['name']!r} within {timeout:g}s "
                "(its arguments are too large or too costly to check); the call is refused."
            )
            answer = Evaluation(Verdict.DENY, None, SERVICE, reason)
    # Deferred: Python listeners, awaited on the service's loop (the executor only did the synchronous part).
    return closed(answer if isinstance(answer, Evaluation) else await answer(), result)


def labels_held(snapshot: ServedPacks, session_id: str | None) -> list[str] | None:
    """The labels the session holds now (right after the call was decided or reviewed), for the decision log."""
    if not session_id:
        return None
    if snapshot.registry.installation.sessions is None:
        return []  # packs without session rules: no label is ever set
    try:
        return sorted(snapshot.registry.installation.sessions.store.load(session_id).labels)
    except Exception:  # the store failed: the call was denied for it, and the record says the labels are unknown
        return None


def closed(answer: Evaluation, result: Mapping[str, Any] | None) -> Evaluation:
    """ERROR denies; a result of a call the policy would not admit (or could not review) is blocked."""
    if answer.decision is Verdict.ERROR:
        answer = replace(answer, decision=Verdict.DENY, reason=answer.reason or "the policy answered error")
    if result is not None and (answer.post is None or answer.decision in (Verdict.DENY, Verdict.INVALID)):
        answer = answer.blocked()  # never reaches the model, whatever it holds
    return answer


def answer_fields(answer: Evaluation, snapshot: ServedPacks, call_id: str, reviewed: bool) -> dict[str, Any]:
    """The answer's JSON fields: the decision, and for a review what post-execute made of the result."""
    fields = _decision_fields(answer, snapshot, call_id)
    return fields | _review_fields(answer) if reviewed else fields


def _decision_fields(answer: Evaluation, snapshot: ServedPacks, call_id: str) -> dict[str, Any]:
    source = answer.source
    return {
        "decision": answer.decision.value,
        "stage": answer.stage.value if answer.stage else None,
        "rule": source.rule_id if source else None,
        "pack": source.pack if source else None,
        "reason": answer.reason,
        "call_id": call_id,
        "pack_digest": snapshot.digest,
    }


def _review_fields(answer: Evaluation) -> dict[str, Any]:
    assert answer.post is not None
    return {
        "post": answer.post.value,
        "value": thaw(answer.value),
        "content": thaw(answer.content),
        "rewrites": [s.name for s in answer.rewrites],
        "feedback": answer.feedback,
    }
