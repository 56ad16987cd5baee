"""One call on its way through the stages (its state and the result it ends with), and the stages' contract."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from policyengine.runtime.approval import ApprovalRequest, ApprovalService, seek_approval
from policyengine.runtime.rewrites import render
from policyengine.runtime.seals import DefinitionSeal, Seal, swapped
from policyengine.runtime.session_steps import Sessions
from policyengine.runtime.tool_body import Aborted, run_body, tool_source, until_aborted
from policyengine.runtime.waterfall import Tampered, Trace, Waterfall
from policyengine.tools.definition import ToolDefinition, content_problems
from policyengine.values.call import Dispatch, PendingResult, ToolCall
from policyengine.values.cancellation import AbortKind, AbortReason
from policyengine.values.decisions import (
    Ask,
    Block,
    Deny,
    PreDecision,
    Source,
    SourceKind,
)
from policyengine.values.frozen import FrozenDict, FrozenList, copy_in, duplicate, unfrozen
from policyengine.values.results import Approval, MonitorHit, Outcome, Stage, ToolResult

REGISTRY = Source(SourceKind.REGISTRY, "registry")
APPROVAL_SERVICE = Source(SourceKind.APPROVAL, "approval service")


class Stopped(Exception):
    """A stage ended the call with this result (raised inside the runtime, caught where the call is driven)."""

    def __init__(self, result: ToolResult) -> None:
        self.result = result


def _text(message: str) -> FrozenList:
    return FrozenList([FrozenDict(type="text", text=message)])


def describe(error: BaseException) -> str:
    """An exception as a reason: its type, and its message when it has one."""
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def failed(who: Source, error: BaseException) -> str:
    """The reason a stage fails closed on `error` from `who`; a change it was refused says what it did."""
    if isinstance(error, Tampered):
        return f"{who} {error}; failing closed"
    return f"{who} failed ({describe(error)}); failing closed"


def _stopped_by(reason: AbortReason, what: str) -> tuple[Outcome, str]:
    """The outcome of a call its signal stopped, and the reason, `what` saying when."""
    timed_out = reason.kind is AbortKind.TIMEOUT
    return Outcome.TIMED_OUT if timed_out else Outcome.CANCELLED, f"{what}: {reason.message}"


# -- the stages' contract (stages.py implements it; installation.py holds one object per stage) ---------


class PreExecuteStage(Protocol):
    """Stage 1: allow, deny or ask."""

    synchronous: ClassVar[bool]

    def decide_sync(self, run: Run) -> PreDecision:
        """The decision, when the stage is synchronous."""

    async def decide(self, run: Run) -> PreDecision:
        """The decision."""


class GuardStage(Protocol):
    """Stage 2: the monotonic guards; the first red line denies and nothing overturns it."""

    synchronous: ClassVar[bool]

    def check_sync(self, run: Run) -> Deny | None:
        """The red line, when the stage is synchronous."""

    async def check(self, run: Run) -> Deny | None:
        """The red line, or None."""


class ExecuteStage(Protocol):
    """Stage 3's wrappers: whether they wrap a call, and whether they may be trusted with it."""

    chain: Waterfall[Any]
    trusted: ClassVar[bool]  # never writes to the call (the engine's own code): no hand-off needs checking

    def wraps(self, call: ToolCall) -> bool:
        """Whether any wrapper applies to this call (else the body runs alone)."""


class PostExecuteStage(Protocol):
    """Stage 4: rewrites compose in order; a block ends the chain; a fault blocks."""

    synchronous: ClassVar[bool]

    def review_sync(self, run: Run, pending: PendingResult) -> PendingResult | Block:
        """The reviewed result, when the stage is synchronous."""

    async def review(self, run: Run, pending: PendingResult) -> PendingResult | Block:
        """The result with every rewrite applied, or the block that ends the call."""


class RunSettings(Protocol):
    """What a run and the code driving it read of the installation it runs in (installation.py's Installation).

    A Protocol, so that this module need not import the installation, which holds the stages, which take a Run.
    """

    tools: Mapping[str, ToolDefinition]
    pre: PreExecuteStage
    guards: GuardStage
    execute: ExecuteStage
    post: PostExecuteStage
    approval: ApprovalService | None
    approval_timeout: float
    sessions: Sessions | None
    synchronous: bool


class Run:
    """One call travelling through the stages; collects timings and builds the result."""

    def __init__(self, inst: RunSettings, call: ToolCall) -> None:
        self.inst = inst
        self.call = call
        self.timings: dict[str, float] = {}
        self.clock = time.perf_counter()
        self.admitted: PreDecision | None = None  # what pre-execute said, once it let the call on
        # A stage that decides pre-execute and the guards together leaves the red line it found here.
        self.red_line: Deny | None = None
        self.seal: Seal | None = None  # the call as policy saw it, once Python code was about to get it
        self.arguments: FrozenDict | None = None  # what the result carries, once the call was sealed or ran
        self.approval: Approval | None = None  # the answer to the approval question, once one came
        self.monitored: list[MonitorHit] = []  # what rules in monitor mode would have done (values/results.MONITORED)

    def lap(self, stage: Stage) -> None:
        """Charge the time since the last lap to `stage`."""
        now = time.perf_counter()
        key = stage._value_  # not .value: the enum property costs more than the rest of lap()
        self.timings[key] = self.timings.get(key, 0.0) + (now - self.clock)
        self.clock = now

    def result(
        self,
        outcome: Outcome,
        stage: Stage | None,
        source: Source | None,
        reason: str | None = None,
        value: Any = None,
        content: FrozenList | None = None,
        rewrites: tuple[Source, ...] = (),
    ) -> ToolResult:
        """Freeze the result; error outcomes show their reason as the content."""
        call, admitted, seal, arguments = self.call, self.admitted, self.seal, self.arguments
        if outcome is Outcome.OK and call.signal.aborted:
            # The caller gave up while the result was being finished: a cancelled call is never ok.
            outcome, reason = _stopped_by(call.signal.reason, "call stopped after the tool ran")  # type: ignore[arg-type]
            stage, source, value, content, rewrites = None, REGISTRY, None, None, ()
        if content is None:
            content = _text(reason) if reason else FrozenList()
        # Once sealed, the call as policy saw it, whatever was written to it since.
        seen: Seal | ToolCall = call if seal is None else seal
        # Positional (in field order): once per call, and a third faster than keywords.
        return ToolResult(
            seen.call_id,
            seen.name,
            seen.arguments if arguments is None else arguments,
            seen.agent,
            outcome,
            value,
            content,
            reason,
            stage,
            source,
            rewrites,
            FrozenDict._of(dict(self.timings)),  # stage names and finite floats: nothing to freeze
            admitted.source if admitted else None,  # admitted_by
            isinstance(admitted, Ask),  # asked
            seen.cwd,
            call.session_id,
            # The labels its rules read: the session as it was when the call was decided.
            () if call.session is None else tuple(call.session["labels"]),
            self.approval,
            tuple(self.monitored) if self.monitored else (),
        )

    def stopped(self, *args: Any, **kwargs: Any) -> Stopped:
        """A Stopped carrying the result built from these arguments."""
        return Stopped(self.result(*args, **kwargs))

    def _tool_failed(self, stage: Stage, reason: str) -> Stopped:
        """A Stopped for an ERROR of the tool's own code (its body, render or finalize) at `stage`."""
        return self.stopped(Outcome.ERROR, stage, tool_source(self.call.name), reason)

    def watch(self) -> Seal:
        """Seal the call, before the first code that could write to it runs (once per call)."""
        seal = self.seal
        if seal is None:
            seal = self.seal = Seal(self.call)
            self.arguments = seal.arguments
        return seal

    def call_changes(self, _args: tuple[Any, ...], _returning: bool) -> str | None:
        """Trace.watch for the policy stages: any change to the call since it was sealed."""
        return self.seal.what_changed() if self.seal is not None else None

    async def approve(self, decision: Ask) -> None:
        """The ask branch: one request; only allowed-once continues."""
        seal = self.watch()  # the service gets the call: a person is asked about exactly what runs
        request = ApprovalRequest(self.call, decision.reason, decision.source)
        outcome = await until_aborted(
            seek_approval(self.inst.approval, request, self.inst.approval_timeout), self.call.signal
        )
        self.lap(Stage.APPROVAL)
        self.approval = outcome.approval
        changes = seal.what_changed()
        if changes is not None:
            raise self.stopped(
                Outcome.DENIED, Stage.APPROVAL, APPROVAL_SERVICE, f"{APPROVAL_SERVICE} {changes}; failing closed"
            )
        if not outcome.granted:
            raise self.stopped(Outcome.DENIED, Stage.APPROVAL, decision.source, outcome.reason)

    async def execute(self, definition: ToolDefinition) -> tuple[Any, FrozenList]:
        """Stage 3: wrappers around the body; errors, timeouts and cancels become results."""
        call = self.call
        trace = Trace()
        dispatch = Dispatch(call, call.signal, definition)
        stage = self.inst.execute
        direct = not stage.wraps(call)  # no wrapper for this tool: the body alone
        if not direct and not stage.trusted:
            # Wrappers written in Python may change the signal and nothing else: every hand-off is checked.
            seal = self.watch()
            tool = DefinitionSeal(definition)

            def watch(args: tuple[Any, ...], returning: bool) -> str | None:
                # Once next() returned, the body ran (or never will): later writes to the call change
                # nothing that ran; the definition outlives the call, so a write to it is told then too.
                if returning:
                    return tool.what_changed()
                return swapped(args[0], call, definition) or seal.what_changed() or tool.what_changed()

            trace.watch = watch
        elif self.seal is None:
            # Only the engine's own code decided (it never writes): the body may write to its own
            # arguments, the result carries a copy made before it runs.
            self.arguments = duplicate(call.arguments)
        # Else the call was checked as the last code that got it returned (a listener, guard or the
        # approval service), and nothing has run since: the body runs on what policy saw.
        task = asyncio.current_task()
        cancels = task.cancelling() if task is not None else 0
        try:
            if direct:
                verdict = await run_body((dispatch,), trace)
            else:
                verdict = await stage.chain.run((dispatch,), trace)
        except Aborted as aborted:
            self.lap(Stage.EXECUTE)
            self.refuse_tampering(trace)
            outcome, reason = _stopped_by(aborted.reason, f"tool {call.name!r} stopped")
            raise self.stopped(outcome, Stage.EXECUTE, tool_source(call.name), reason) from None
        except GeneratorExit:
            raise  # the call's coroutine is being closed
        except BaseException as error:
            if isinstance(error, asyncio.CancelledError) and (task is None or task.cancelling() > cancels):
                raise  # the caller's own cancel; a cancel nobody sent is the failure of whoever raised it
            self.lap(Stage.EXECUTE)
            self.refuse_tampering(trace)
            who = trace.culprit(error) or tool_source(call.name)
            outcome = Outcome.TIMED_OUT if isinstance(error, TimeoutError) else Outcome.ERROR
            raise self.stopped(outcome, Stage.EXECUTE, who, f"{who} failed: {describe(error)}") from None
        self.lap(Stage.EXECUTE)
        if not direct:
            # A wrapper may catch what next() raised and return a value of its own; a fallback when
            # its own deadline fires is fine, but the caller's cancel or abort still ends the call.
            if task is not None and task.cancelling() > cancels:
                raise asyncio.CancelledError("the calling task was cancelled; a wrapper swallowed it")
            self.refuse_tampering(trace)
            if call.signal.aborted:
                outcome, reason = _stopped_by(call.signal.reason, f"tool {call.name!r} stopped")  # type: ignore[arg-type]
                raise self.stopped(outcome, Stage.EXECUTE, tool_source(call.name), reason)
        # Copied in: a body (in a thread, say) keeps what it returned and could write to it while rules read it.
        value, problems = definition.validate_value(unfrozen(verdict.value))
        if problems:
            raise self._tool_failed(
                Stage.EXECUTE,
                f"tool {self.call.name!r} returned a value that fails its output schema: {'; '.join(problems)}",
            )
        try:
            return value, render(self.call.arguments, definition, value)
        except BaseException as error:  # the tool's own code: whatever it raises is an error result
            raise self._tool_failed(
                Stage.EXECUTE, f"render of tool {self.call.name!r} failed: {describe(error)}"
            ) from None

    def refuse_tampering(self, trace: Trace) -> None:
        """Deny the call if a wrapper tried to run what policy did not decide, even if it swallowed the refusal."""
        for fault in trace.faults:
            if isinstance(fault.error, Tampered):
                raise self.stopped(Outcome.DENIED, Stage.EXECUTE, fault.source, failed(fault.source, fault.error))

    def finalize(self, definition: ToolDefinition, pending: PendingResult) -> FrozenList:
        """Stage 5: the definition's own synchronous content fix-up, exactly once."""
        if definition.finalize_content is None:
            return pending.content  # type: ignore[no-any-return]
        try:
            content = copy_in(definition.finalize_content(self.call.arguments, pending.value, pending.content))
            problems = content_problems(content)
            if problems:
                raise ValueError("; ".join(problems))
            return content  # type: ignore[no-any-return]
        except BaseException as error:  # synchronous: even a CancelledError here is a stray one
            raise self._tool_failed(
                Stage.FINALIZE, f"finalize_content of tool {self.call.name!r} failed: {describe(error)}"
            ) from None
        finally:
            self.lap(Stage.FINALIZE)
