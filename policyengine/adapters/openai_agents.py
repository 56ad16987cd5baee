"""Packs in front of OpenAI Agents SDK function tools, through the SDK's own guardrails and approvals.

    tools = protect([run_shell, read_file], packs=["policies/baseline"])
    agent = Agent(name="ops", tools=tools)

Each protected tool gets, first among its input guardrails, one that asks the packs: `deny` (and
every red line) rejects the call, so the body never runs and the model reads the reason. `ask`
sets `needs_approval`: the run stops with an interruption, and the call runs only once the
person approves it through `RunState.approve`; `RunState.reject` sends the SDK's rejection. Last
among the output guardrails, one applies post-execute: a redacted result, or a block's feedback,
replaces what the model reads.

Audit (`audit=FILE`, or a shared AuditRecorder; `otel=True`): one record per call, the same record
every front end writes (docs/audit.md): a refused call when its input guardrail refuses it, a call
that ran once its output guardrail reviewed it (with the approval, when a person approved it
through `RunState.approve`). A call policy asks about is also recorded when it is asked (approval
"asked"): a person's `RunState.reject` runs no guardrail, so that record is all a rejected call leaves.

Sessions: a call's session is what `session_id=` names (a string, or a function of the run's
context wrapper), else the run's trace: its `group_id` (RunConfig(group_id=...), the SDK's
conversation thread) or its trace id (one run, kept across an approval's resume). When none is
found (tracing disabled, no session_id), every such call shares the gate's one session
(docs/adapters.md).
"""

from __future__ import annotations

import copy
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from policyengine.adapters.gate import AuditOption, PolicyGate, text_of
from policyengine.enforce.evaluate import Evaluation, PostOutcome, Verdict
from policyengine.enforce.evaluation_json import evaluation_json
from policyengine.errors import UsageError, install_hint
from policyengine.values.results import Approval

try:
    from agents import (
        FunctionTool,
        RunContextWrapper,
        Tool,
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
        ToolInputGuardrailData,
        ToolOutputGuardrail,
        ToolOutputGuardrailData,
    )
    from agents.items import ToolApprovalItem
    from agents.tool_context import ToolContext
    from agents.tracing import get_current_trace
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"policyengine.adapters.openai_agents needs the OpenAI Agents SDK ({error}): {install_hint('openai-agents')}"
    ) from error

__all__ = ["PolicyGuard", "protect"]

NeedsApproval = bool | Callable[[RunContextWrapper[Any], dict[str, Any], str], Awaitable[bool]]
SessionId = str | Callable[[RunContextWrapper[Any]], str | None]
# Who answers `ask` here: the application, through the run's RunState.approve / RunState.reject.
APPROVER = "openai-agents RunState.approve/reject"


class PolicyGuard:
    """Packs loaded once, for the function tools of one or more agents."""

    def __init__(
        self,
        packs: Sequence[str | Path] = (),
        *,
        cwd: str | None = None,
        gate: PolicyGate | None = None,
        session_id: SessionId | None = None,
        audit: AuditOption = None,
        otel: bool | Callable[[Mapping[str, Any]], None] = False,
    ) -> None:
        if gate is None and not packs:
            raise UsageError("PolicyGuard needs packs", hint="e.g. PolicyGuard(packs=['policies/baseline'])")
        self.gate = gate if gate is not None else PolicyGate(packs, cwd=cwd)
        if audit is not None or otel:
            self.gate.attach_audit(audit, otel, "openai-agents")
        self.session_id = session_id
        self._asked: OrderedDict[str, str | None] = OrderedDict()  # call id -> why policy asked (for `reason`)
        self._approved: OrderedDict[str, Approval] = OrderedDict()  # call id -> the approval its record carries
        self._input: ToolInputGuardrail[Any] = ToolInputGuardrail(
            guardrail_function=self._check_input, name="policyengine"
        )
        self._output: ToolOutputGuardrail[Any] = ToolOutputGuardrail(
            guardrail_function=self._check_output, name="policyengine"
        )

    def protect(self, tools: Iterable[Any]) -> list[Tool]:
        """Copies of `tools` with the policy's guardrails and approval; the originals stay as they were."""
        # list[Tool], not list[FunctionTool]: Agent(tools=...) takes a list[Tool], and lists are invariant.
        return [self.protect_one(tool) for tool in tools]

    def protect_one(self, tool: Any) -> FunctionTool:
        """A copy of one function tool with the policy's guardrails and approval."""
        if not isinstance(tool, FunctionTool):
            # Hosted and local shell/computer tools have no tool guardrails: policy could not stop them.
            raise UsageError(
                f"protect() takes function tools; {type(tool).__name__} {getattr(tool, 'name', '')!r} is not one",
                hint="wrap the work in a @function_tool, or leave this tool out of the agent",
            )
        self.gate.register(_spec(tool))
        guarded = copy.copy(tool)
        guarded.tool_input_guardrails = [self._input, *(tool.tool_input_guardrails or [])]
        guarded.tool_output_guardrails = [*(tool.tool_output_guardrails or []), self._output]
        guarded.needs_approval = self._needs_approval(tool.name, tool.needs_approval)
        return guarded

    def reason(self, item: ToolApprovalItem) -> str | None:
        """Why policy asks about an interruption (to show the person who approves), or None.

        The reason of the decision made when the run stopped (this guard asked); for another
        call, the call decided again outside any session (nothing is written).
        """
        name = item.tool_name or item.name
        if name is None:
            return None
        if item.call_id is not None and item.call_id in self._asked:
            return self._asked[item.call_id]
        return self.gate.decide(name, item.arguments, call_id=item.call_id).reason

    def session(self, context: RunContextWrapper[Any] | None) -> str:
        """The session of a call of this run: `session_id` as given, else the trace's group id, else its id.

        None of them (tracing disabled, no session_id): the gate's shared session, one for every such call.
        """
        given = self.session_id
        if callable(given):
            given = given(context) if context is not None else None
        if not given:
            trace = get_current_trace()
            if trace is not None and trace.trace_id != "no-op":  # tracing disabled: the SDK gives the run no id
                group = getattr(trace, "group_id", None)
                given = str(group) if group else trace.trace_id
        return given or self.gate.shared_session

    def _needs_approval(self, name: str, declared: NeedsApproval) -> NeedsApproval:
        gate = self.gate

        async def needs_approval(context: RunContextWrapper[Any], arguments: dict[str, Any], call_id: str) -> bool:
            session = self.session(context)
            answer = await gate.adecide(name, arguments, call_id=call_id, session_id=session)
            if answer.decision is Verdict.ASK:
                if call_id not in self._asked:  # the question's record: a rejection leaves no other
                    asked = Approval("asked", APPROVER, time.time(), answer.reason)
                    gate.record(answer, name, arguments, call_id=call_id, session_id=session, approval=asked)
                self._asked[call_id] = answer.reason
                while len(self._asked) > 1024:
                    self._asked.popitem(last=False)
                return True
            if answer.decision is Verdict.DENY:
                return False  # the input guardrail rejects it: a red line is never put to a person
            if callable(declared):
                return await declared(context, arguments, call_id)
            return bool(declared)

        return needs_approval

    async def _check_input(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        session = self.session(context)
        # No agent name here or in review: needs_approval is not told the agent, and each stage must see one call.
        answer = await self.gate.adecide(
            context.tool_name, context.tool_arguments, call_id=context.tool_call_id, session_id=session
        )
        info = _info(answer)
        if answer.decision is Verdict.ALLOW:
            return ToolGuardrailFunctionOutput.allow(info)
        if answer.decision is Verdict.ASK:
            approved = context.is_tool_approved(context.tool_name, context.tool_call_id)
            if approved is True:
                self._approve(context.tool_call_id, Approval("allowed-once", APPROVER, time.time(), None))
                return ToolGuardrailFunctionOutput.allow(info)
            if approved is None and _before_approval(context):
                return ToolGuardrailFunctionOutput.allow(info)
            # needs_approval asked for this call; a body about to run without a yes is refused.
            reason = f"{answer.reason or 'Policy asks a person first'} (no approval was given, so the call was refused)"
            self._forget(context, session)
            self._record(context, answer, session, Approval("denied", APPROVER, time.time(), reason))
            return ToolGuardrailFunctionOutput.reject_content(reason, info)
        self._forget(context, session)
        self._record(context, answer, session, None)
        return ToolGuardrailFunctionOutput.reject_content(answer.reason or "Denied by policy.", info)

    def _approve(self, call_id: str, approval: Approval) -> None:
        self._approved[call_id] = approval
        while len(self._approved) > 1024:
            self._approved.popitem(last=False)

    def _record(self, context: ToolContext[Any], answer: Evaluation, session: str, approval: Approval | None) -> None:
        """The call's audit record (when an audit is attached)."""
        self.gate.record(
            answer,
            context.tool_name,
            context.tool_arguments,
            call_id=context.tool_call_id,
            session_id=session,
            approval=approval,
        )

    def _forget(self, context: ToolContext[Any], session: str) -> None:
        """A refused call will not run: its remembered decision goes (a later call reusing its id is decided)."""
        self.gate.forget(context.tool_name, context.tool_arguments, call_id=context.tool_call_id, session_id=session)

    async def _check_output(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        session = self.session(context)
        answer = await self.gate.areview(
            context.tool_name,
            context.tool_arguments,
            data.output,
            call_id=context.tool_call_id,
            session_id=session,
        )
        self._record(context, answer, session, self._approved.pop(context.tool_call_id, None))
        info = _info(answer)
        if answer.post is PostOutcome.ACCEPTED:
            return ToolGuardrailFunctionOutput.allow(info)
        # Rewritten or blocked: the model reads policy's version instead of the tool's output.
        return ToolGuardrailFunctionOutput.reject_content(text_of(answer.content), info)


def protect(
    tools: Iterable[Any],
    *,
    packs: Sequence[str | Path] = (),
    cwd: str | None = None,
    gate: PolicyGate | None = None,
    session_id: SessionId | None = None,
    audit: AuditOption = None,
    otel: bool | Callable[[Mapping[str, Any]], None] = False,
) -> list[Tool]:
    """Copies of function tools with the packs in front of them (see the module docstring)."""
    return PolicyGuard(packs, cwd=cwd, gate=gate, session_id=session_id, audit=audit, otel=otel).protect(tools)


def _spec(tool: FunctionTool) -> dict[str, Any]:
    """The tool as an MCP spec: its JSON Schema as the SDK sends it, and MCP annotations for tags."""
    spec: dict[str, Any] = {"name": tool.name, "description": tool.description, "inputSchema": tool.params_json_schema}
    annotations = tool.mcp_annotations
    if annotations is not None:
        spec["annotations"] = annotations.model_dump(exclude_none=True)
    return spec


def _before_approval(context: ToolContext[Any]) -> bool:
    """True when the SDK runs input guardrails before it asks for approval (`pre_approval_tool_input_guardrails`)."""
    execution = getattr(context.run_config, "tool_execution", None)
    return bool(getattr(execution, "pre_approval_tool_input_guardrails", False))


def _info(answer: Evaluation) -> dict[str, Any]:
    """What the guardrail result records: the evaluation's JSON form without the tool's output."""
    info = evaluation_json(answer)
    for field in ("value", "content", "feedback"):
        info.pop(field, None)
    info.setdefault("post", None)
    if answer.monitored:  # what rules in monitor mode would have done to this call (nothing was enforced)
        info["monitored"] = [hit.to_json() for hit in answer.monitored]
    return info
