"""One call on its way through the stages: its state, its seal, and the result it ends with."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any

from policyengine.runtime.approval import ApprovalRequest, seek_approval
from policyengine.runtime.tool_body import Aborted, run_body, tool_source, until_aborted
from policyengine.runtime.waterfall import Tampered, Trace
from policyengine.tools.definition import ToolDefinition, content_problems, render_text
from policyengine.values.call import Dispatch, PendingResult, ToolCall
from policyengine.values.cancellation import AbortKind, AbortReason
from policyengine.values.decisions import (
    Accept,
    AcceptValue,
    Ask,
    Deny,
    PostDecision,
    PreDecision,
    Source,
    SourceKind,
)
from policyengine.values.frozen import FrozenDict, FrozenList, Snapshot, copy_in, duplicate, identical, unfrozen
from policyengine.values.results import MonitorHit, Outcome, Stage, ToolResult

if TYPE_CHECKING:  # the installation holds the stages, which run a Run: only its type is needed here
    from policyengine.runtime.installation import Installation

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


_CALL_FIELDS = tuple(f.name for f in dataclasses.fields(ToolCall))
_CONTAINERS = (FrozenDict, FrozenList)
_call_fields = attrgetter(*_CALL_FIELDS)


class Seal:
    """The call exactly as policy saw it, kept where no stage can reach it, to tell any later write.

    Taken before the first listener, guard, approval service or wrapper written in Python gets
    the call (packs are the engine's own code and never write). It records the call's fields,
    and every container of the document rules read (the arguments among them) by identity, and
    copies the arguments for the result: the result and the audit record carry them whatever
    is written to the call.
    """

    __slots__ = ("_call", "_fields", "_frozen", "_token", "agent", "arguments", "call_id", "cwd", "name")

    def __init__(self, call: ToolCall) -> None:
        self._call = call
        self._fields: tuple[Any, ...] = _call_fields(call)
        self.call_id, self.name, self.agent, self.cwd = call.call_id, call.name, call.agent, call.cwd
        self.arguments: FrozenDict = duplicate(call.arguments)
        document = call.document
        inside = type(document) is FrozenDict and dict.get(document, "arguments") is call.arguments
        self._frozen = Snapshot(document) if inside else Snapshot(document, call.arguments)
        # The token too: a guard may read it, so it is held to what policy saw like the arguments.
        self._token = Snapshot(call.token) if type(call.token) in _CONTAINERS else None

    def changed(self) -> str | None:
        """What of the call changed since it was sealed ("the call's arguments", "call.name"...); None if nothing."""
        now = _call_fields(self._call)
        if not all(map(is_, now, self._fields)):
            return ", ".join(f"call.{n}" for n, a, b in zip(_CALL_FIELDS, now, self._fields, strict=True) if a is not b)
        if not self._frozen.intact():
            # Only to say what changed: the arguments, unless they still hold exactly what the copy holds.
            if identical(self._call.arguments, self.arguments):
                return "the call document rules read"
            return "the call's arguments"
        if self._token is not None and not self._token.intact():
            return "the call's token"
        return None

    def changes(self) -> str | None:
        """changed(), said as what the writer did (for a reason naming the writer); None if nothing."""
        what = self.changed()
        return None if what is None else f"changed {what} after policy saw it"


class DefinitionSeal:
    """A tool's definition as a call found it: tells, and undoes, any write to it made through the call.

    Wrappers and post-execute listeners get the definition (`dispatch.definition`,
    `result.definition`); it is shared by every later call of the tool, in every registry that
    holds it, so a write to it (`object.__setattr__(definition, "roles", None)`, a base-class
    write to its roles) would outlive the call. It is put back, and the call fails closed.
    """

    __slots__ = ("_attributes", "_definition", "_frozen", "_kind")

    def __init__(self, definition: ToolDefinition) -> None:
        self._definition, self._kind = definition, type(definition)
        self._attributes = dict(vars(definition))
        self._frozen = Snapshot(*(v for v in self._attributes.values() if type(v) in _CONTAINERS))

    def changes(self) -> str | None:
        """What was written to the definition since it was sealed (and now undone); None if nothing."""
        definition, attributes = self._definition, self._attributes
        now = vars(definition)
        same = type(definition) is self._kind and len(now) == len(attributes)
        if same and all(now.get(k, _MISSING) is v for k, v in attributes.items()) and self._frozen.intact():
            return None
        object.__setattr__(definition, "__class__", self._kind)
        now.clear()
        now.update(attributes)
        self._frozen.restore()
        return f"changed the definition of tool {attributes.get('name')!r} (put back)"


_MISSING = object()


def swapped(dispatch: Any, call: ToolCall, definition: ToolDefinition) -> str | None:
    """What a dispatch handed to next() carries besides a new signal; None if nothing."""
    if type(dispatch) is not Dispatch:
        what = f"a {type(dispatch).__name__}, not the Dispatch it was given"
    elif dispatch.definition is not definition:
        what = f"tool {getattr(dispatch.definition, 'name', dispatch.definition)!r} for a call to {call.name!r}"
    elif dispatch.call is not call:
        what = "another call than the one policy decided on"
    else:
        return None
    return f"handed next() {what}; a wrapper may change only the signal"


def _stopped_by(reason: AbortReason, what: str) -> tuple[Outcome, str]:
    """The outcome of a call its signal stopped, and the reason, `what` saying when."""
    timed_out = reason.kind is AbortKind.TIMEOUT
    return Outcome.TIMED_OUT if timed_out else Outcome.CANCELLED, f"{what}: {reason.message}"


def apply_rewrite(call: ToolCall, pending: PendingResult, rewrite: PostDecision, by: Source) -> PendingResult:
    """Apply accept(content) or accept(value) to a pending result, validating what changes; `by` made it."""
    definition = pending.definition
    if isinstance(rewrite, AcceptValue):
        # Copied in: the listener keeps what it handed over and could write to it after rules checked it.
        value, problems = definition.validate_value(unfrozen(rewrite.value))
        if problems:
            raise ValueError(f"replaced value fails the output schema: {'; '.join(problems)}")
        content = render(call, definition, value)
        return PendingResult(value, content, definition, (*pending.rewrites, by))
    if isinstance(rewrite, Accept) and rewrite.content is not None:
        replaced = copy_in(rewrite.content)
        problems = content_problems(replaced)
        if problems:
            raise ValueError(f"replaced content is malformed: {'; '.join(problems)}")
        return PendingResult(pending.value, replaced, definition, (*pending.rewrites, by))
    return pending


def render(call: ToolCall, definition: ToolDefinition, value: Any) -> FrozenList:
    if definition.render is render_text and type(value) is str:
        # What render_text, the check and freeze() make of a string, built directly (most tools return text).
        return FrozenList._of([FrozenDict._of({"type": "text", "text": value})])
    content = copy_in(definition.render(call.arguments, value))  # the tool's code keeps no handle on it
    problems = content_problems(content)
    if problems:
        raise ValueError(f"render of tool {definition.name!r} returned bad content: {'; '.join(problems)}")
    return content  # type: ignore[no-any-return]


class Run:
    """One call travelling through the stages; collects timings and builds the result."""

    def __init__(self, inst: Installation, call: ToolCall) -> None:
        self.inst = inst
        self.call = call
        self.timings: dict[str, float] = {}
        self.clock = time.perf_counter()
        self.admitted: PreDecision | None = None  # what pre-execute said, once it let the call on
        # A stage that decides pre-execute and the guards together leaves the red line it found here.
        self.red_line: Deny | None = None
        self.seal: Seal | None = None  # the call as policy saw it, once Python code was about to get it
        self.arguments: FrozenDict | None = None  # what the result carries, once the call was sealed or ran
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
            tuple(self.monitored) if self.monitored else (),
        )

    def stop(self, *args: Any, **kwargs: Any) -> Stopped:
        """A Stopped carrying the result built from these arguments."""
        return Stopped(self.result(*args, **kwargs))

    def watch(self) -> Seal:
        """Seal the call, before the first code that could write to it runs (once per call)."""
        seal = self.seal
        if seal is None:
            seal = self.seal = Seal(self.call)
            self.arguments = seal.arguments
        return seal

    def watch_call(self, _args: tuple[Any, ...], _returning: bool) -> str | None:
        """Trace.watch for the policy stages: any change to the call since it was sealed."""
        return self.seal.changes() if self.seal is not None else None

    async def approve(self, decision: Ask) -> None:
        """The ask branch: one request; only allowed-once continues."""
        seal = self.watch()  # the service gets the call: a person is asked about exactly what runs
        request = ApprovalRequest(self.call, decision.reason, decision.source)
        outcome = await until_aborted(
            seek_approval(self.inst.approval, request, self.inst.approval_timeout), self.call.signal
        )
        self.lap(Stage.APPROVAL)
        changes = seal.changes()
        if changes is not None:
            raise self.stop(
                Outcome.DENIED, Stage.APPROVAL, APPROVAL_SERVICE, f"{APPROVAL_SERVICE} {changes}; failing closed"
            )
        if not outcome.granted:
            raise self.stop(Outcome.DENIED, Stage.APPROVAL, decision.source, outcome.reason)

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
                    return tool.changes()
                return swapped(args[0], call, definition) or seal.changes() or tool.changes()

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
            raise self.stop(outcome, Stage.EXECUTE, tool_source(call.name), reason) from None
        except GeneratorExit:
            raise  # the call's coroutine is being closed
        except BaseException as error:
            if isinstance(error, asyncio.CancelledError) and (task is None or task.cancelling() > cancels):
                raise  # the caller's own cancel; a cancel nobody sent is the failure of whoever raised it
            self.lap(Stage.EXECUTE)
            self.refuse_tampering(trace)
            who = trace.culprit(error) or tool_source(call.name)
            outcome = Outcome.TIMED_OUT if isinstance(error, TimeoutError) else Outcome.ERROR
            raise self.stop(outcome, Stage.EXECUTE, who, f"{who} failed: {describe(error)}") from None
        self.lap(Stage.EXECUTE)
        if not direct:
            # A wrapper may catch what next() raised and return a value of its own; a fallback when
            # its own deadline fires is fine, but the caller's cancel or abort still ends the call.
            if task is not None and task.cancelling() > cancels:
                raise asyncio.CancelledError("the calling task was cancelled; a wrapper swallowed it")
            self.refuse_tampering(trace)
            if call.signal.aborted:
                outcome, reason = _stopped_by(call.signal.reason, f"tool {call.name!r} stopped")  # type: ignore[arg-type]
                raise self.stop(outcome, Stage.EXECUTE, tool_source(call.name), reason)
        # Copied in: a body (in a thread, say) keeps what it returned and could write to it while rules read it.
        value, problems = definition.validate_value(unfrozen(verdict.value))
        if problems:
            raise self.stop(
                Outcome.ERROR,
                Stage.EXECUTE,
                tool_source(self.call.name),
                f"tool {self.call.name!r} returned a value that fails its output schema: {'; '.join(problems)}",
            )
        try:
            return value, render(self.call, definition, value)
        except BaseException as error:  # the tool's own code: whatever it raises is an error result
            raise self.stop(
                Outcome.ERROR,
                Stage.EXECUTE,
                tool_source(self.call.name),
                f"render of tool {self.call.name!r} failed: {describe(error)}",
            ) from None

    def refuse_tampering(self, trace: Trace) -> None:
        """Deny the call if a wrapper tried to run what policy did not decide, even if it swallowed the refusal."""
        for fault in trace.faults:
            if isinstance(fault.error, Tampered):
                raise self.stop(Outcome.DENIED, Stage.EXECUTE, fault.source, failed(fault.source, fault.error))

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
            raise self.stop(
                Outcome.ERROR,
                Stage.FINALIZE,
                tool_source(self.call.name),
                f"finalize_content of tool {self.call.name!r} failed: {describe(error)}",
            ) from None
        finally:
            self.lap(Stage.FINALIZE)
