"""The audit record: one JSON object per call, with the same fields whichever front end decided it.

Every front end (the registry's `on_result` path, the MCP proxy, the Claude Code hook, the
LangChain and OpenAI Agents adapters) builds its record here, so a record means the same thing
wherever it was written, and `policyengine dry-run` replays any of them (docs/audit.md lists the
fields). The record is built as the call ended; `_redaction.py` hides credentials before a writer
sees it.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policyengine.enforce.evaluation_json import evaluation_json, source_json
from policyengine.runtime.audit import policy_decision
from policyengine.values.decisions import Source
from policyengine.values.frozen import thaw
from policyengine.values.results import Approval, Outcome, Stage, ToolResult

if TYPE_CHECKING:
    from policyengine.enforce.evaluate import Evaluation
    from policyengine.packs.loader import Pack

__all__ = ["FIELDS", "FRONT_ENDS", "audit_record", "evaluation_record", "pack_set_digest", "result_record"]

# Who wrote a record: the `front_end` field.
FRONT_ENDS = ("registry", "mcp-proxy", "claude-code-hook", "langchain", "openai-agents", "service")

# The fields of a record, in the order they are written (docs/audit.md says what each holds).
FIELDS = (
    "timestamp",
    "front_end",
    "agent",
    "session_id",
    "time",
    "labels",
    "name",
    "call_id",
    "arguments",
    "cwd",
    "event",
    "decision",
    "stage",
    "rule",
    "pack",
    "digest",
    "reason",
    "post",
    "rewrites",
    "result",
    "approval",
    "pack_digest",
    "monitored",
)

# The stages a call goes through after its decision was written to its session.
_AFTER_DECISION = (Stage.APPROVAL, Stage.EXECUTE, Stage.POST_EXECUTE, Stage.FINALIZE, Stage.RESULT)


def audit_record(
    *,
    front_end: str,
    name: str,
    call_id: str,
    arguments: Any,
    agent: str,
    decision: str,
    stage: str | None,
    source: Source | None,
    reason: str | None,
    rewrites: Sequence[str] = (),
    post: str | None = None,
    result: Mapping[str, Any] | None = None,
    approval: Approval | Mapping[str, Any] | None = None,
    session_id: str | None = None,
    labels: Sequence[str] | None = None,
    decided_at: float | None = None,
    cwd: str | None = None,
    event: str | None = None,
    pack_digest: str | None = None,
    monitored: Sequence[Mapping[str, Any]] | None = None,
    timestamp: float | None = None,
) -> dict[str, Any]:
    """The one audit record of a call's outcome (unredacted: the writer redacts), fields in FIELDS order.

    Optional fields are left out when unknown (`session_id`, `time`, `labels`, `cwd`, `event`,
    `post`, `result`, `approval`, `pack_digest`, `monitored`), so a record holds what its front end knew.
    """
    record: dict[str, Any] = {
        "timestamp": time.time() if timestamp is None else timestamp,
        "front_end": front_end,
        "agent": agent,
    }
    if session_id:
        record["session_id"] = session_id
        if decided_at is not None:
            record["time"] = decided_at  # the clock a dry-run replays the session at
        if labels is not None:
            record["labels"] = sorted(labels)  # what the session held when the call was decided
    record["name"] = name
    record["call_id"] = call_id
    record["arguments"] = thaw(arguments)
    if cwd is not None:
        record["cwd"] = cwd  # a dry-run resolves the replayed call's relative paths against it
    if event is not None:
        record["event"] = event
    record["decision"] = decision
    record["stage"] = stage
    record.update(source_json(source))
    record["reason"] = reason
    if post is not None:
        record["post"] = post
    record["rewrites"] = list(rewrites)
    if result is not None:
        record["result"] = thaw(dict(result))
    if approval is not None:
        record["approval"] = approval.to_json() if isinstance(approval, Approval) else dict(approval)
    if pack_digest is not None:
        record["pack_digest"] = pack_digest
    if monitored:  # what rules in monitor mode would have done (only then: other records are as they were)
        record["monitored"] = [dict(hit) for hit in monitored]
    return record


def result_record(result: ToolResult, *, front_end: str = "registry", pack_digest: str | None = None) -> dict[str, Any]:
    """The record of a call a registry ran (`on_result`): the value as post-execute left it."""
    decision, _rule = policy_decision(result)
    source = result.source if decision in ("deny", "invalid", "error") else result.admitted_by
    if decision == "ask" and source is None:
        source = result.source
    decided_at = None
    if result.session_id is not None:
        # When the call was decided: now, less what it spent after that (approval, body, review).
        decided_at = time.time() - sum(float(result.timings.get(stage.value, 0.0)) for stage in _AFTER_DECISION)
    return audit_record(
        front_end=front_end,
        name=result.name,
        call_id=result.call_id,
        arguments=result.arguments,
        agent=result.agent,
        decision=decision,
        stage=result.stage.value if result.stage else None,
        source=source,
        reason=result.reason,
        rewrites=[s.name for s in result.rewrites],
        post=_post(result),
        result={"outcome": result.outcome.value, "value": result.value, "content": result.content},
        approval=result.approval,
        session_id=result.session_id,
        labels=result.labels if result.session_id is not None else None,
        decided_at=decided_at,
        cwd=result.cwd,
        pack_digest=pack_digest,
        monitored=_monitored(result),
    )


def evaluation_record(
    evaluation: Evaluation,
    *,
    front_end: str,
    name: str,
    arguments: Any,
    call_id: str | None,
    agent: str,
    session_id: str | None = None,
    cwd: str | None = None,
    approval: Approval | None = None,
    pack_digest: str | None = None,
) -> dict[str, Any]:
    """The record of a call an adapter's gate decided (and, once `post` is set, reviewed)."""
    fields = evaluation_json(evaluation)
    result = None
    if "post" in fields:
        blocked = fields["post"] == "blocked"
        result = {"outcome": "blocked" if blocked else "ok", "value": fields["value"], "content": fields["content"]}
    return audit_record(
        front_end=front_end,
        name=name,
        call_id=call_id or "",
        arguments=arguments if arguments is not None else {},
        agent=agent,
        decision=fields["decision"],
        stage=fields["stage"],
        source=evaluation.source,
        reason=fields["reason"],
        rewrites=fields["rewrites"],
        post=fields.get("post"),
        result=result,
        approval=approval,
        session_id=session_id,
        cwd=cwd,
        pack_digest=pack_digest,
        monitored=_monitored(evaluation),
    )


def pack_set_digest(packs: Sequence[Pack]) -> str | None:
    """The digest of a set of packs as the decision service names it: one pack's own, else sha256 over all in order."""
    if not packs:
        return None
    if len(packs) == 1:
        return packs[0].digest
    joined = "\n".join(f"{p.name}@{p.digest}" for p in packs)
    return "sha256:" + hashlib.sha256(joined.encode("utf-8")).hexdigest()


def _post(result: ToolResult) -> str | None:
    """What post-execute made of the result, when it ran: accepted, rewritten or blocked."""
    if result.outcome is Outcome.BLOCKED:
        return "blocked"
    if result.outcome is Outcome.OK:
        return "rewritten" if result.rewrites else "accepted"
    return None


def _monitored(outcome: ToolResult | Evaluation) -> list[dict[str, Any]] | None:
    """The monitor hits an outcome carries, as records write them (None when there are none)."""
    return [hit.to_json() for hit in outcome.monitored] or None
