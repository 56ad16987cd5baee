"""The six stages in fixed order, run over one installation snapshot of a registry."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from operator import attrgetter, is_
from typing import Any, NamedTuple

from policyengine.enforce.decider import Decider
from policyengine.packs.loader import Pack
from policyengine.packs.rules import EXPLAIN, Chain, RuleStage, check_guards, rewrite_post
from policyengine.runtime.approval import ApprovalRequest, ApprovalService, seek_approval
from policyengine.runtime.tool_body import Aborted, run_body, tool_source, until_aborted
from policyengine.runtime.waterfall import Listener, Tampered, Trace, Verdict, Waterfall
from policyengine.tools.definition import ToolDefinition, content_problems, render_text
from policyengine.values.call import Dispatch, PendingResult, ToolCall
from policyengine.values.cancellation import AbortKind, AbortReason, strict_timeout
from policyengine.values.decisions import (
    ACCEPT,
    ALLOW,
    Accept,
    AcceptValue,
    Allow,
    Ask,
    Block,
    Deny,
    PostDecision,
    PreDecision,
    Source,
    SourceKind,
)
from policyengine.values.frozen import FrozenDict, FrozenList, Snapshot, duplicate, freeze, identical
from policyengine.values.results import Outcome, ResultSeal, Stage, ToolResult

log = logging.getLogger("policyengine")

Guard = Callable[[ToolCall], "str | Deny | Awaitable[str | Deny | None] | None"]
Observer = Callable[[ToolResult], None]

REGISTRY = Source(SourceKind.REGISTRY, "registry")
APPROVAL_SERVICE = Source(SourceKind.APPROVAL, "approval service")


@dataclass(frozen=True, slots=True)
class GuardEntry:
    """A registered guard and who it is."""

    fn: Guard
    source: Source


@dataclass(frozen=True, slots=True)
class ObserverEntry:
    """A registered result observer and who it is."""

    fn: Observer
    source: Source


class _Stopped(Exception):
    """Internal: a stage ended the call with this result."""

    def __init__(self, result: ToolResult) -> None:
        self.result = result


def _text(message: str) -> FrozenList:
    return FrozenList([FrozenDict(type="text", text=message)])


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _failed(who: Source, error: BaseException) -> str:
    """The reason a stage fails closed on `error` from `who`; a change it was refused says what it did."""
    if isinstance(error, Tampered):
        return f"{who} {error}; failing closed"
    return f"{who} failed ({_describe(error)}); failing closed"


_CALL_FIELDS = tuple(f.name for f in dataclasses.fields(ToolCall))
_call_fields = attrgetter(*_CALL_FIELDS)


class Seal:
    """The call exactly as policy saw it, kept where no stage can reach it, to tell any later write.

    Taken before the first listener, guard, approval service or wrapper written in Python gets
    the call (packs are the engine's own code and never write). It records the call's fields,
    and every container of the document rules read (the arguments among them) by identity, and
    copies the arguments for the result: the result and the audit record carry them whatever
    is written to the call.
    """

    __slots__ = ("_call", "_fields", "_frozen", "agent", "arguments", "call_id", "cwd", "name")

    def __init__(self, call: ToolCall) -> None:
        self._call = call
        self._fields: tuple[Any, ...] = _call_fields(call)
        self.call_id, self.name, self.agent, self.cwd = call.call_id, call.name, call.agent, call.cwd
        self.arguments: FrozenDict = duplicate(call.arguments)
        document = call.document
        inside = type(document) is FrozenDict and dict.get(document, "arguments") is call.arguments
        self._frozen = Snapshot(document) if inside else Snapshot(document, call.arguments)

    def changed(self) -> str | None:
        """What of the call changed since it was sealed ("the call's arguments", "call.name"...); None if nothing."""
        now = _call_fields(self._call)
        if not all(map(is_, now, self._fields)):
            return ", ".join(f"call.{n}" for n, a, b in zip(_CALL_FIELDS, now, self._fields, strict=True) if a is not b)
        if self._frozen.intact():
            return None
        # Only to say what changed: the arguments, unless they still hold exactly what the copy holds.
        if identical(self._call.arguments, self.arguments):
            return "the call document rules read"
        return "the call's arguments"

    def changes(self) -> str | None:
        """changed(), said as what the writer did (for a reason naming the writer); None if nothing."""
        what = self.changed()
        return None if what is None else f"changed {what} after policy saw it"


def _swapped(dispatch: Any, call: ToolCall, definition: ToolDefinition) -> str | None:
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


class _Notified:
    """The result the observers are being told of, and its seal: one seal serves every observer."""

    __slots__ = ("current",)

    def __init__(self) -> None:
        self.current: tuple[ToolResult, ResultSeal] | None = None


def _guarded(entries: list[ObserverEntry]) -> tuple[ObserverEntry, ...]:
    """The observers, each followed by putting back anything it wrote to the result, before anyone else reads it."""
    notified = _Notified()
    last = len(entries) - 1
    return tuple(_guard(entry, notified, last=i == last) for i, entry in enumerate(entries))


def _guard(entry: ObserverEntry, notified: _Notified, *, last: bool) -> ObserverEntry:
    """One observer, guarded: see _guarded."""
    observe = entry.fn

    def guarded(result: ToolResult) -> Any:
        current = notified.current
        # Every observer before this one left the result as it was built: its seal still holds. (Calls
        # in other threads may interleave: a seal is only ever used for its own result.)
        seal = current[1] if current is not None and current[0] is result else ResultSeal(result)
        notified.current = (result, seal)
        try:
            return observe(result)
        finally:
            changed = seal.restore()
            if last:
                notified.current = None
            if changed:
                # Raised so the registry logs and counts it like any failing observer (chained to
                # whatever the observer raised, if anything, so the log shows both).
                raise Tampered("wrote to the result it observes; it was put back")

    return ObserverEntry(guarded, entry.source)


@dataclass
class Installation:
    """Everything installed on a registry at one moment; a call runs against exactly one."""

    tools: Mapping[str, ToolDefinition]
    pre: Waterfall[PreDecision]
    guards: tuple[GuardEntry, ...]
    execute: Waterfall[Any]
    post: Waterfall[PostDecision]
    observers: tuple[ObserverEntry, ...]
    approval: ApprovalService | None
    policy_timeout: float
    approval_timeout: float
    stats: dict[str, int] = field(default_factory=dict)
    # Fast paths, when every listener of a stage comes from a pack: no waterfall, no event-loop
    # timers, the same decisions (tests pin the equivalence).
    pre_decider: Decider | None = None
    closing: PreDecision = ALLOW
    guard_packs: tuple[Pack, ...] | None = None
    execute_packs: tuple[Pack, ...] | None = None
    post_packs: tuple[Pack, ...] | None = None
    _chains: dict[str, PackChains] = field(default_factory=dict, repr=False)

    # The guards are exactly the pre-execute packs' own: one Decider pass answers both stages.
    staged: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        pre = self.pre_decider.packs if self.pre_decider is not None else None
        guards = self.guard_packs
        self.staged = (
            pre is not None
            and guards is not None
            and len(pre) == len(guards)
            and all(a is b for a, b in zip(pre, guards, strict=True))
        )

    def chains_for_run(self, name: str) -> PackChains:
        """pack_chains, or nothing to look up when no stage has a pack shortcut."""
        if self.guard_packs is None and self.execute_packs is None and self.post_packs is None:
            return NO_CHAINS
        return self.pack_chains(name)

    def pack_chains(self, name: str) -> PackChains:
        """What the pack shortcuts need for a tool name, resolved once per name (bounded)."""
        found = self._chains.get(name)
        if found is None:
            if len(self._chains) >= Decider.LIMIT:  # names can come from untrusted recorded calls
                self._chains.clear()
            tool = self.tools.get(name)
            tags = tool.tags if tool is not None else frozenset()
            found = self._chains[name] = PackChains(
                guards=tuple(c for p in self.guard_packs or () if (c := p.rules_for(RuleStage.GUARD, name, tags))),
                wraps=any(p.rules_for(RuleStage.EXECUTE, name, tags) for p in self.execute_packs or ()),
                post=tuple(c for p in self.post_packs or () if (c := p.rules_for(RuleStage.POST_EXECUTE, name, tags))),
            )
        return found


class PackChains(NamedTuple):
    """A tool's non-empty guard and post-execute chains across layers, and whether any execute rule wraps it."""

    guards: tuple[Chain, ...]
    wraps: bool
    post: tuple[Chain, ...]


NO_CHAINS = PackChains((), False, ())


def build_installation(
    *,
    tools: Mapping[str, ToolDefinition],
    pre: list[Listener],
    guards: list[GuardEntry],
    execute: list[Listener],
    post: list[Listener],
    observers: list[ObserverEntry],
    default: PreDecision,
    approval: ApprovalService | None,
    policy_timeout: float,
    approval_timeout: float,
    stats: dict[str, int],
    pre_packs: tuple[Pack, ...] | None = None,
    guard_packs: tuple[Pack, ...] | None = None,
    execute_packs: tuple[Pack, ...] | None = None,
    post_packs: tuple[Pack, ...] | None = None,
) -> Installation:
    """Compose every chain once, so a call only walks prebuilt closures."""
    # The default carries a DEFAULT source so a pack can tell "nobody decided" from a decision.
    closing = default if default.source else replace(default, source=Source(SourceKind.DEFAULT, "end of chain"))
    end_of_chain = Verdict(closing, closing.source)

    async def pre_terminal(_args: tuple[Any, ...], _trace: Trace) -> Verdict[Any]:
        return end_of_chain

    async def post_terminal(args: tuple[Any, ...], _trace: Trace) -> Verdict[Any]:
        return Verdict(ACCEPT, None, args)

    return Installation(
        tools=dict(tools),
        pre=Waterfall(pre, pre_terminal, lambda d: isinstance(d, (Allow, Deny, Ask))),
        guards=tuple(guards),
        execute=Waterfall(execute, run_body, lambda _v: True, _rebind_dispatch),
        post=Waterfall(post, post_terminal, lambda d: isinstance(d, (Accept, AcceptValue, Block)), _rebind_result),
        observers=_guarded(observers),
        approval=approval,
        policy_timeout=policy_timeout,
        approval_timeout=approval_timeout,
        stats=stats,
        pre_decider=(
            Decider(pre_packs, default=closing, tags={n: d.tags for n, d in tools.items() if d.tags})
            if pre_packs is not None
            else None
        ),
        closing=closing,
        guard_packs=guard_packs,
        execute_packs=execute_packs,
        post_packs=post_packs,
    )


def _rebind_dispatch(args: tuple[Any, ...], extra: tuple[Any, ...], _source: Source) -> tuple[Any, ...]:
    (dispatch,) = args
    if len(extra) != 1 or not isinstance(extra[0], Dispatch):
        raise TypeError("execute next() takes one Dispatch of the same call (dispatch.with_signal(...))")
    swapped = _swapped(extra[0], dispatch.call, dispatch.definition)
    if swapped is not None:
        raise Tampered(swapped)
    return (extra[0],)


def _rebind_result(args: tuple[Any, ...], extra: tuple[Any, ...], source: Source) -> tuple[Any, ...]:
    call, pending = args
    if not all(isinstance(rewrite, (Accept, AcceptValue)) for rewrite in extra):
        raise TypeError("post-execute next() takes only accept(...) and accept_value(...) rewrites")
    for rewrite in extra:  # several rules of one pack hand their rewrites on together, in order
        pending = apply_rewrite(call, pending, rewrite, source)
    return (call, pending)


def apply_rewrite(call: ToolCall, pending: PendingResult, rewrite: PostDecision, source: Source) -> PendingResult:
    """Apply accept(content) or accept(value) to a pending result, validating what changes."""
    by = rewrite.source or source
    definition = pending.definition
    if isinstance(rewrite, AcceptValue):
        value, problems = definition.validate_value(rewrite.value)
        if problems:
            raise ValueError(f"replaced value fails the output schema: {'; '.join(problems)}")
        content = _render(call, definition, value)
        return PendingResult(value, content, definition, (*pending.rewrites, by))
    if isinstance(rewrite, Accept) and rewrite.content is not None:
        problems = content_problems(rewrite.content)
        if problems:
            raise ValueError(f"replaced content is malformed: {'; '.join(problems)}")
        return PendingResult(pending.value, freeze(rewrite.content), definition, (*pending.rewrites, by))
    return pending


def _render(call: ToolCall, definition: ToolDefinition, value: Any) -> FrozenList:
    if definition.render is render_text and type(value) is str:
        # What render_text, the check and freeze() make of a string, built directly (most tools return text).
        return FrozenList._of([FrozenDict._of({"type": "text", "text": value})])
    content = definition.render(call.arguments, value)
    problems = content_problems(content)
    if problems:
        raise ValueError(f"render of tool {definition.name!r} returned bad content: {'; '.join(problems)}")
    return freeze(content)  # type: ignore[no-any-return]


class Run:
    """One call travelling through the stages; collects timings and builds the result."""

    def __init__(self, inst: Installation, call: ToolCall) -> None:
        self.inst = inst
        self.call = call
        self.timings: dict[str, float] = {}
        self.clock = time.perf_counter()
        self.admitted: PreDecision | None = None  # what pre-execute said, once it let the call on
        self.packs = inst.chains_for_run(call.name)  # read by every pack shortcut below
        # When pre-execute and the guards are the same packs, pre-execute finds the red line too
        # (one probe of the call for both stages) and the guard stage reports it.
        self.staged = inst.staged
        self.red_line: Deny | None = None
        self.seal: Seal | None = None  # the call as policy saw it, once Python code was about to get it
        self.arguments: FrozenDict | None = None  # what the result carries, once the call was sealed or ran

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
        )

    def stop(self, *args: Any, **kwargs: Any) -> _Stopped:
        """A _Stopped carrying the result built from these arguments."""
        return _Stopped(self.result(*args, **kwargs))

    def watch(self) -> Seal:
        """Seal the call, before the first code that could write to it runs (once per call)."""
        seal = self.seal
        if seal is None:
            seal = self.seal = Seal(self.call)
            self.arguments = seal.arguments
        return seal

    def _watch_call(self, _args: tuple[Any, ...], _returning: bool) -> str | None:
        """Trace.watch for the policy stages: any change to the call since it was sealed."""
        return self.seal.changes() if self.seal is not None else None

    async def policy_stage(self, stage: Stage, runner: Awaitable[Verdict[Any]], trace: Trace) -> Verdict[Any]:
        """Run a policy chain under the policy deadline; every fault fails closed."""
        fail = Outcome.BLOCKED if stage is Stage.POST_EXECUTE else Outcome.DENIED
        try:
            async with strict_timeout(self.inst.policy_timeout):
                verdict = await runner
        except TimeoutError:
            self.lap(stage)
            who = trace.stuck or REGISTRY
            raise self.stop(
                fail,
                stage,
                who,
                f"{who} did not decide within {self.inst.policy_timeout:g}s; failing closed",
            ) from None
        except Exception as error:
            self.lap(stage)
            who = trace.culprit(error) or REGISTRY
            raise self.stop(fail, stage, who, _failed(who, error)) from None
        self.lap(stage)
        if trace.faults:
            # A listener that swallowed a downstream failure still cannot open the gate.
            fault = trace.faults[0]
            raise self.stop(fail, stage, fault.source, _failed(fault.source, fault.error))
        return verdict

    def pre_from_packs(self) -> PreDecision:
        """Stage 1 when packs hold every pre-execute listener: no waterfall, no await."""
        assert self.inst.pre_decider is not None
        if self.staged:
            decision, self.red_line = self.inst.pre_decider.stages(self.call.name, self.call.document)
        else:
            decision = self.inst.pre_decider.pre(self.call.name, self.call.document)
        self.lap(Stage.PRE_EXECUTE)
        if isinstance(decision, Deny):
            raise self.stop(Outcome.DENIED, Stage.PRE_EXECUTE, decision.source, decision.reason)
        self.admitted = decision
        return decision

    def guards_found(self) -> None:
        """Stage 2 when pre-execute already found the red line (the same packs): report it."""
        self.lap(Stage.GUARD)
        if self.red_line is not None:
            raise self.stop(Outcome.DENIED, Stage.GUARD, self.red_line.source, self.red_line.reason)

    async def pre_execute(self) -> PreDecision:
        """Stage 1: the waterfall decides allow, deny or ask."""
        if self.inst.pre_decider is not None:
            return self.pre_from_packs()
        if not self.inst.pre.listeners:  # nothing installed: the closing default, no timers
            self.lap(Stage.PRE_EXECUTE)
            decision = self.inst.closing
            if isinstance(decision, Deny):
                raise self.stop(Outcome.DENIED, Stage.PRE_EXECUTE, decision.source, decision.reason)
            self.admitted = decision
            return decision
        self.watch()  # listeners written in Python follow: record the call before any of them gets it
        trace = Trace(watch=self._watch_call)
        verdict = await self.policy_stage(Stage.PRE_EXECUTE, self.inst.pre.run((self.call,), trace), trace)
        decision = verdict.value
        if isinstance(decision, Deny):
            raise self.stop(Outcome.DENIED, Stage.PRE_EXECUTE, verdict.source, decision.reason)
        self.admitted = replace(decision, source=verdict.source)
        return self.admitted

    async def guards(self) -> None:
        """Stage 2: monotonic guards; a string denies and nothing can overturn it."""
        if self.staged:
            self.guards_found()
            return
        if self.inst.guard_packs is not None:
            self.guards_from_packs()
            return
        entry = None
        denial: tuple[Source, str] | None = None
        seal = self.watch() if self.inst.guards else None
        # Sync guards run straight through (a timer cannot interrupt them anyway); only an
        # awaitable answer is put under the stage's deadline.
        deadline = time.monotonic() + self.inst.policy_timeout
        try:
            for entry in self.inst.guards:
                reason = entry.fn(self.call)
                if inspect.isawaitable(reason):
                    async with strict_timeout(max(0.0, deadline - time.monotonic())):
                        reason = await reason
                changes = seal.changes() if seal is not None else None
                if changes is not None:  # whatever it answered: it may only read the call
                    denial = (entry.source, f"{entry.source} {changes}; failing closed")
                    break
                if reason is None:
                    continue
                if isinstance(reason, Deny):  # compiled packs name the rule that fired
                    denial = (reason.source or entry.source, reason.reason)
                elif isinstance(reason, str):
                    denial = (entry.source, reason or f"{entry.source} denied")
                else:
                    raise TypeError(f"returned {type(reason).__name__}, not a reason string or None")
                break
        except TimeoutError:
            who = entry.source if entry else REGISTRY
            denial = (who, f"{who} did not decide within {self.inst.policy_timeout:g}s; failing closed")
        except Exception as error:
            who = entry.source if entry else REGISTRY
            denial = (who, f"{who} failed ({_describe(error)}); failing closed")
        self.lap(Stage.GUARD)
        if denial is not None:
            raise self.stop(Outcome.DENIED, Stage.GUARD, *denial)

    def guards_from_packs(self) -> None:
        """Guards when every guard is a pack's: the first red line of any layer denies."""
        explain = EXPLAIN.get()
        for rules in self.packs.guards:
            try:
                # A rule that fails to evaluate is itself a red line (check_guards denies).
                red_line = check_guards(rules, self.call.document, explain)
            except Exception as error:  # an engine fault: fail closed like any other guard's
                self.lap(Stage.GUARD)
                raise self.stop(Outcome.DENIED, Stage.GUARD, REGISTRY, f"guards failed ({_describe(error)})") from None
            if red_line is not None:
                self.lap(Stage.GUARD)
                raise self.stop(Outcome.DENIED, Stage.GUARD, red_line.source, red_line.reason)
        self.lap(Stage.GUARD)

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
        chain = self.inst.execute
        # No wrappers, or pack wrappers with no execute rule for this tool (they only pass the call on): the body alone.
        direct = not chain.listeners or (self.inst.execute_packs is not None and not self.packs.wraps)
        if not direct and self.inst.execute_packs is None:
            # Wrappers written in Python may change the signal and nothing else: every hand-off is checked.
            seal = self.watch()

            def watch(args: tuple[Any, ...], returning: bool) -> str | None:
                # Once next() returned, the body ran (or never will): later writes change nothing that ran.
                return None if returning else _swapped(args[0], call, definition) or seal.changes()

            trace.watch = watch
        elif self.seal is None:
            # Only packs decided (they never write): the body may write to its own arguments, the result
            # carries a copy made before it runs.
            self.arguments = duplicate(call.arguments)
        # Else the call was checked as the last code that got it returned (a listener, guard or the
        # approval service), and nothing has run since: the body runs on what policy saw.
        task = asyncio.current_task() if not direct else None
        cancels = task.cancelling() if task is not None else 0
        try:
            if direct:
                verdict = await run_body((dispatch,), trace)
            else:
                verdict = await chain.run((dispatch,), trace)
        except Aborted as aborted:
            self.lap(Stage.EXECUTE)
            self.refuse_tampering(trace)
            outcome, reason = _stopped_by(aborted.reason, f"tool {call.name!r} stopped")
            raise self.stop(outcome, Stage.EXECUTE, tool_source(call.name), reason) from None
        except Exception as error:
            self.lap(Stage.EXECUTE)
            self.refuse_tampering(trace)
            who = trace.culprit(error) or tool_source(call.name)
            outcome = Outcome.TIMED_OUT if isinstance(error, TimeoutError) else Outcome.ERROR
            raise self.stop(outcome, Stage.EXECUTE, who, f"{who} failed: {_describe(error)}") from None
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
        value, problems = definition.validate_value(verdict.value)
        if problems:
            raise self.stop(
                Outcome.ERROR,
                Stage.EXECUTE,
                tool_source(self.call.name),
                f"tool {self.call.name!r} returned a value that fails its output schema: {'; '.join(problems)}",
            )
        try:
            return value, _render(self.call, definition, value)
        except Exception as error:
            raise self.stop(
                Outcome.ERROR,
                Stage.EXECUTE,
                tool_source(self.call.name),
                f"render of tool {self.call.name!r} failed: {_describe(error)}",
            ) from None

    def refuse_tampering(self, trace: Trace) -> None:
        """Deny the call if a wrapper tried to run what policy did not decide, even if it swallowed the refusal."""
        for fault in trace.faults:
            if isinstance(fault.error, Tampered):
                raise self.stop(Outcome.DENIED, Stage.EXECUTE, fault.source, _failed(fault.source, fault.error))

    async def post_execute(self, definition: ToolDefinition, value: Any, content: FrozenList) -> PendingResult:
        """Stage 4: rewrites compose in order; block ends the chain; faults block."""
        pending = PendingResult(value, content, definition)
        if self.inst.post_packs is not None:
            return self.post_from_packs(pending)
        if not self.inst.post.listeners:
            self.lap(Stage.POST_EXECUTE)
            return pending
        trace = Trace()
        verdict = await self.policy_stage(Stage.POST_EXECUTE, self.inst.post.run((self.call, pending), trace), trace)
        decision = verdict.value
        if isinstance(decision, Block):
            self.lap(Stage.POST_EXECUTE)
            raise self.stop(Outcome.BLOCKED, Stage.POST_EXECUTE, verdict.source, decision.feedback)
        try:
            # The decider saw the result with every rewrite passed through next()
            # before it; the decision it returned applies on top of that.
            seen = verdict.seen[1] if verdict.seen else pending
            final_pending = apply_rewrite(self.call, seen, decision, verdict.source or REGISTRY)
        except Exception as error:
            who = verdict.source or REGISTRY
            raise self.stop(
                Outcome.BLOCKED, Stage.POST_EXECUTE, who, f"{who} failed ({_describe(error)}); failing closed"
            ) from None
        finally:
            self.lap(Stage.POST_EXECUTE)
        return final_pending

    def post_from_packs(self, pending: PendingResult) -> PendingResult:
        """Post-execute when every listener is a pack: each pack's rules, in layer order."""
        chains = self.packs.post
        if not chains:
            self.lap(Stage.POST_EXECUTE)
            return pending
        explain = EXPLAIN.get()
        try:
            for rules in chains:
                for rewrite in rewrite_post(rules, self.call.document, pending.value, pending.content, explain):
                    if isinstance(rewrite, Block):
                        self.lap(Stage.POST_EXECUTE)
                        raise self.stop(Outcome.BLOCKED, Stage.POST_EXECUTE, rewrite.source, rewrite.feedback)
                    try:
                        pending = apply_rewrite(self.call, pending, rewrite, rewrite.source or REGISTRY)
                    except Exception as error:
                        who = rewrite.source or REGISTRY
                        self.lap(Stage.POST_EXECUTE)
                        raise self.stop(
                            Outcome.BLOCKED,
                            Stage.POST_EXECUTE,
                            who,
                            f"{who} failed ({_describe(error)}); failing closed",
                        ) from None
        finally:
            self.lap(Stage.POST_EXECUTE)
        return pending

    def finalize(self, definition: ToolDefinition, pending: PendingResult) -> FrozenList:
        """Stage 5: the definition's own synchronous content fix-up, exactly once."""
        if definition.finalize_content is None:
            return pending.content  # type: ignore[no-any-return]
        try:
            content = definition.finalize_content(self.call.arguments, pending.value, pending.content)
            problems = content_problems(content)
            if problems:
                raise ValueError("; ".join(problems))
            return freeze(content)  # type: ignore[no-any-return]
        except Exception as error:
            raise self.stop(
                Outcome.ERROR,
                Stage.FINALIZE,
                tool_source(self.call.name),
                f"finalize_content of tool {self.call.name!r} failed: {_describe(error)}",
            ) from None
        finally:
            self.lap(Stage.FINALIZE)
