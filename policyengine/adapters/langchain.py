"""Packs in front of a LangChain agent's tools, as a tool-call middleware for `create_agent`.

    agent = create_agent(model, tools, middleware=[PolicyMiddleware(packs=["policies/baseline"])],
                         checkpointer=InMemorySaver())

`deny` (and every red line) answers with an error ToolMessage holding the reason: the tool never
runs. `ask` pauses the graph with langgraph's `interrupt()`, one per call, its value shaped as
HumanInTheLoopMiddleware's per-call `ToolApprovalRequest`; resume with
`Command(resume={interrupt_id: {"type": "approve"}})` or `{"type": "reject", "message": ...}`.
Post-execute rewrites (redaction) and blocks replace the ToolMessage's content, and its artifact
(`response_format="content_and_artifact"`), reviewed as a result of its own. Put the
middleware last in the list: the innermost middleware sees the call exactly as the tool gets it.

Audit (`audit=FILE`, or a shared AuditRecorder; `otel=True`): one record per call, the same record
every front end writes (docs/audit.md): a refused call when it is refused, a call that ran once
its result was reviewed, a person's answer to `ask` as its approval.

Sessions: a call's session is the graph's thread (`configurable.thread_id`), or what
`session_id=` names (a string, or a function of the ToolCallRequest); when neither names one,
every such call shares the gate's one session (docs/adapters.md).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

from policyengine.adapters.gate import GATE, AuditOption, PolicyGate
from policyengine.enforce.evaluate import Evaluation, PostOutcome, Verdict, fault_denial
from policyengine.errors import UsageError, install_hint
from policyengine.values.frozen import thaw
from policyengine.values.results import Approval, MonitorHit

try:
    from langchain.agents.middleware import AgentMiddleware, ToolCallRequest
    from langchain.agents.middleware.human_in_the_loop import ApproveDecision, RejectDecision
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.types import Command, interrupt
    from pydantic import Discriminator
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"policyengine.adapters.langchain needs LangChain ({error}): {install_hint('langchain')}"
    ) from error

__all__ = ["PolicyMiddleware"]

Result = ToolMessage | Command[Any]
SessionId = str | Callable[[ToolCallRequest], str | None]
# Who answers `ask` here: the application resuming the graph with the person's decision.
APPROVER = "langgraph interrupt (Command(resume=...))"

# What a person may answer: LangGraph checks the resume value against it, and an answer that
# does not fit (an edit, a typo) is refused without being saved, so the call can be answered again.
# Typed Any: a discriminated union is a type to LangGraph (it validates against it), not to mypy.
APPROVAL_ANSWER: Any = Annotated[ApproveDecision | RejectDecision, Discriminator("type")]


class PolicyMiddleware(AgentMiddleware):
    """Packs in front of every tool call of a `create_agent` agent (see the module docstring)."""

    def __init__(
        self,
        packs: Sequence[str | Path] = (),
        *,
        cwd: str | None = None,
        gate: PolicyGate | None = None,
        tools: Iterable[BaseTool] = (),
        session_id: SessionId | None = None,
        audit: AuditOption = None,
        otel: bool | Callable[[Mapping[str, Any]], None] = False,
    ) -> None:
        super().__init__()
        self.session_id = session_id
        if gate is None and not packs:
            raise UsageError("PolicyMiddleware needs packs", hint="e.g. PolicyMiddleware(packs=['policies/baseline'])")
        self.gate = gate if gate is not None else PolicyGate(packs, cwd=cwd)
        if audit is not None or otel:
            self.gate.attach_audit(audit, otel, "langchain")
        for tool in tools:  # registered now, so a schema the gate cannot read fails at start-up
            self.gate.register(convert_to_openai_tool(tool))

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Result]) -> Result:
        """Decide the call; deny, ask a person, or run it and review its result."""
        refused = self._register(request)
        if refused is not None:
            return refused
        call, session = request.tool_call, self._session(request)
        answer = self.gate.decide(call["name"], call["args"], call_id=call.get("id"), session_id=session)
        refused, approval = self._admit(request, answer)
        if refused is not None:
            self.gate.forget(call["name"], call["args"], call_id=call.get("id"), session_id=session)
            self._record(request, answer, session, approval)
            return refused
        return self._reviewed(request, handler(request), session, answer, approval)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Result]]
    ) -> Result:
        """`wrap_tool_call` for an agent run with `ainvoke` / `astream`."""
        refused = self._register(request)
        if refused is not None:
            return refused
        call, session = request.tool_call, self._session(request)
        answer = await self.gate.adecide(call["name"], call["args"], call_id=call.get("id"), session_id=session)
        refused, approval = self._admit(request, answer)
        if refused is not None:
            self.gate.forget(call["name"], call["args"], call_id=call.get("id"), session_id=session)
            self._record(request, answer, session, approval)
            return refused
        return self._reviewed(request, await handler(request), session, answer, approval)

    def _session(self, request: ToolCallRequest) -> str:
        """The call's session: `session_id` as given (or computed from the request), else the graph's thread.

        Neither (no checkpointer, no thread): the gate's shared session, one for every such call.
        """
        given = self.session_id
        if callable(given):
            given = given(request)
        if not given:
            config = getattr(request.runtime, "config", None) or {}
            thread = (config.get("configurable") or {}).get("thread_id")
            given = str(thread) if thread is not None else None
        return given or self.gate.shared_session

    def _register(self, request: ToolCallRequest) -> ToolMessage | None:
        """Register the call's tool from its JSON Schema on first sight; a schema the gate cannot read denies."""
        tool = request.tool
        if tool is None or self.gate.knows(tool.name):
            return None  # a tool the agent does not have is decided by name; the tool node refuses it anyway
        try:
            self.gate.register(convert_to_openai_tool(tool))
        except Exception as error:
            reason = (
                f"Denied: the policy gate cannot read the schema of tool {tool.name!r} ({error}); the call is refused."
            )
            self._record(request, fault_denial(GATE, tool.name, "registering", error), None, None)
            return _message(request, reason, error=True)
        return None

    def _record(
        self, request: ToolCallRequest, answer: Evaluation, session: str | None, approval: Approval | None
    ) -> None:
        """The call's audit record (when an audit is attached)."""
        call = request.tool_call
        self.gate.record(
            answer, call["name"], call["args"], call_id=call.get("id"), session_id=session, approval=approval
        )

    def _admit(self, request: ToolCallRequest, answer: Evaluation) -> tuple[ToolMessage | None, Approval | None]:
        """(None to run the call, else the message the model gets instead of the result; the person's answer)."""
        if answer.decision is Verdict.ALLOW:
            return None, None
        if answer.decision is not Verdict.ASK:
            return _message(request, answer.reason or "Denied by policy.", error=True), None
        call = request.tool_call
        source = answer.source
        question = {
            "type": "tool_approval",
            "tool_call_id": call.get("id"),
            "name": call["name"],
            "args": call["args"],
            "description": answer.reason or f"Policy asks a person before {call['name']} runs.",
            "rule": source.name if source is not None else None,
            "pack": source.pack if source is not None else None,
        }
        # The node runs again from the start on resume; interrupt() then returns the answer.
        decision = interrupt(question, response_schema=APPROVAL_ANSWER)
        said = decision.get("message") if isinstance(decision, dict) else None
        if isinstance(decision, dict) and decision.get("type") == "approve":
            return None, Approval("allowed-once", APPROVER, time.time(), said if isinstance(said, str) else None)
        why = f" with reason: {said}" if said else ""
        text = f"A person rejected the call to `{call['name']}`{why}. The tool did not run; do not retry it unasked."
        return _message(request, text, error=True), Approval("denied", APPROVER, time.time(), text)

    def _reviewed(
        self, request: ToolCallRequest, result: Result, session: str, decided: Evaluation, approval: Approval | None
    ) -> Result:
        """The result with post-execute applied to the call's ToolMessage (also inside a Command); then its record.

        The decision's monitor hits travel with the review's in the message's metadata.
        """
        reviews: list[Evaluation] = []
        if isinstance(result, ToolMessage):
            result = self._review(request, result, session, reviews, decided.monitored)
        elif isinstance(result, Command) and isinstance(result.update, dict):
            messages = result.update.get("messages")
            if isinstance(messages, list):
                reviewed = [
                    self._review(request, m, session, reviews, decided.monitored) if isinstance(m, ToolMessage) else m
                    for m in messages
                ]
                result = replace(result, update={**result.update, "messages": reviewed})
        # The record of the review that shaped what the model read: a block, else the last rewrite, else the first.
        shaping = [r for r in reviews if r.post is PostOutcome.BLOCKED] or [
            r for r in reviews if r.post is PostOutcome.REWRITTEN
        ]
        shown = shaping[-1] if shaping else reviews[0] if reviews else decided
        self._record(request, shown, session, approval)
        return result

    def _review(
        self,
        request: ToolCallRequest,
        message: ToolMessage,
        session: str,
        reviews: list[Evaluation],
        decided: tuple[MonitorHit, ...] = (),
    ) -> ToolMessage:
        """The message with post-execute applied to its content and to its artifact, each a result of the call.

        A tool with `response_format="content_and_artifact"` hands the application an artifact
        beside what the model reads: it is reviewed as a result of its own, and a block of
        either withholds both.
        """
        call = request.tool_call
        update: dict[str, Any] = {}
        hits = list(decided)
        for field, value in (("content", message.content), ("artifact", message.artifact)):
            if field == "artifact" and value is None:
                continue
            answer = self.gate.review(call["name"], call["args"], value, call_id=call.get("id"), session_id=session)
            reviews.append(answer)
            hits += answer.monitored
            if answer.post is PostOutcome.REWRITTEN:
                update[field] = thaw(answer.value)
            elif answer.post is not PostOutcome.ACCEPTED:  # blocked, or anything else: withheld
                feedback = answer.feedback or "Blocked by policy."
                update = {"content": feedback, "artifact": None, "status": "error"}
                break
        if hits:  # what rules in monitor mode would have done: metadata the application reads, never the model
            metadata = dict(message.response_metadata)
            metadata["policyengine"] = {"monitored": [hit.to_json() for hit in hits]}
            update["response_metadata"] = metadata
        return message.model_copy(update=update) if update else message


def _message(request: ToolCallRequest, text: str, *, error: bool) -> ToolMessage:
    """A ToolMessage answering the request's call in place of the tool."""
    call = request.tool_call
    return ToolMessage(
        content=text, name=call["name"], tool_call_id=call.get("id") or "", status="error" if error else "success"
    )
