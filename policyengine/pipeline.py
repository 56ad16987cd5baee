"""The six stages in fixed order, run over one installation snapshot of a registry."""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from .approval import ApprovalRequest, ApprovalService, seek_approval
from .body import Aborted, run_body, tool_source, until_aborted
from .call import Dispatch, PendingResult, ToolCall
from .decider import Decider
from .decisions import (
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
from .frozen import FrozenDict, FrozenList, freeze
from .packs import Pack
from .results import Outcome, Stage, ToolResult
from .rules import EXPLAIN, Chain, RuleStage, check_guards, rewrite_post
from .signal import AbortKind, strict_timeout
from .tools import ToolDefinition, content_problems, render_text
from .waterfall import Listener, Trace, Verdict, Waterfall

log = logging.getLogger("policyengine")

Guard = Callable[[ToolCall], "str | Deny | Awaitable[str | Deny | None] | None"]
Observer = Callable[[ToolResult], None]

REGISTRY = Source(SourceKind.REGISTRY, "registry")


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
            found = self._chains[name] = PackChains(
                guards=tuple(c for p in self.guard_packs or () if (c := p.rules_for(RuleStage.GUARD, name))),
                wraps=any(p.rules_for(RuleStage.EXECUTE, name) for p in self.execute_packs or ()),
                post=tuple(c for p in self.post_packs or () if (c := p.rules_for(RuleStage.POST_EXECUTE, name))),
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
        observers=tuple(observers),
        approval=approval,
        policy_timeout=policy_timeout,
        approval_timeout=approval_timeout,
        stats=stats,
        pre_decider=Decider(pre_packs, default=closing) if pre_packs is not None else None,
        closing=closing,
        guard_packs=guard_packs,
        execute_packs=execute_packs,
        post_packs=post_packs,
    )


def _rebind_dispatch(args: tuple[Any, ...], extra: tuple[Any, ...], _source: Source) -> tuple[Any, ...]:
    (dispatch,) = args
    if len(extra) != 1 or not isinstance(extra[0], Dispatch) or extra[0].call is not dispatch.call:
        raise TypeError("execute next() takes one Dispatch of the same call (dispatch.with_signal(...))")
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
        if content is None:
            content = _text(reason) if reason else FrozenList()
        call, admitted = self.call, self.admitted
        # Positional (in field order): once per call, and a third faster than keywords.
        return ToolResult(
            call.call_id,
            call.name,
            call.arguments,
            call.agent,
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
        )

    def stop(self, *args: Any, **kwargs: Any) -> _Stopped:
        """A _Stopped carrying the result built from these arguments."""
        return _Stopped(self.result(*args, **kwargs))

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
            raise self.stop(fail, stage, who, f"{who} failed ({_describe(error)}); failing closed") from None
        self.lap(stage)
        if trace.faults:
            # A listener that swallowed a downstream failure still cannot open the gate.
            fault = trace.faults[0]
            raise self.stop(
                fail,
                stage,
                fault.source,
                f"{fault.source} failed ({_describe(fault.error)}); failing closed",
            )
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
        trace = Trace()
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
        # Sync guards run straight through (a timer cannot interrupt them anyway); only an
        # awaitable answer is put under the stage's deadline.
        deadline = time.monotonic() + self.inst.policy_timeout
        try:
            for entry in self.inst.guards:
                reason = entry.fn(self.call)
                if inspect.isawaitable(reason):
                    async with strict_timeout(max(0.0, deadline - time.monotonic())):
                        reason = await reason
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
        request = ApprovalRequest(self.call, decision.reason, decision.source)
        outcome = await until_aborted(
            seek_approval(self.inst.approval, request, self.inst.approval_timeout), self.call.signal
        )
        self.lap(Stage.APPROVAL)
        if not outcome.granted:
            raise self.stop(Outcome.DENIED, Stage.APPROVAL, decision.source, outcome.reason)

    async def execute(self, definition: ToolDefinition) -> tuple[Any, FrozenList]:
        """Stage 3: wrappers around the body; errors, timeouts and cancels become results."""
        trace = Trace()
        dispatch = Dispatch(self.call, self.call.signal, definition)
        # Pack wrappers with no execute rule for this tool only pass the call on: skip them.
        direct = self.inst.execute_packs is not None and not self.packs.wraps
        try:
            if direct:
                verdict = await run_body((dispatch,), trace)
            else:
                verdict = await self.inst.execute.run((dispatch,), trace)
        except Aborted as aborted:
            self.lap(Stage.EXECUTE)
            timed_out = aborted.reason.kind is AbortKind.TIMEOUT
            raise self.stop(
                Outcome.TIMED_OUT if timed_out else Outcome.CANCELLED,
                Stage.EXECUTE,
                tool_source(self.call.name),
                f"tool {self.call.name!r} stopped: {aborted.reason.message}",
            ) from None
        except Exception as error:
            self.lap(Stage.EXECUTE)
            who = trace.culprit(error) or tool_source(self.call.name)
            outcome = Outcome.TIMED_OUT if isinstance(error, TimeoutError) else Outcome.ERROR
            raise self.stop(outcome, Stage.EXECUTE, who, f"{who} failed: {_describe(error)}") from None
        self.lap(Stage.EXECUTE)
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
