"""What is installed on a registry at one moment, with one stage object per stage chosen once.

Each change to a registry builds a new Installation; a call runs against exactly one. The stage
objects are chosen here, once: for each policy stage, when every layer that contributes to it was
compiled by the same `StageCompiler` (packs, say), that compiler builds the stage; otherwise the
listeners run as a waterfall (stages.py). Tests pin that both give the same decisions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from operator import is_
from typing import Any, NamedTuple, Protocol

from policyengine.runtime.approval import ApprovalService
from policyengine.runtime.rewrites import apply_rewrite
from policyengine.runtime.run import ExecuteStage, GuardStage, PostExecuteStage, PreExecuteStage
from policyengine.runtime.seals import swapped
from policyengine.runtime.session_steps import Sessions
from policyengine.runtime.stages import (
    ClosingDefault,
    GuardEntry,
    GuardFunctions,
    NoGuards,
    NoPostExecute,
    PostExecuteChain,
    PreExecuteChain,
    Wrappers,
)
from policyengine.runtime.tool_body import run_body
from policyengine.runtime.waterfall import ChainResult, Listener, Tampered, Trace, Waterfall, credit
from policyengine.tools.definition import ToolDefinition
from policyengine.values.call import Dispatch
from policyengine.values.decisions import (
    ACCEPT,
    Accept,
    AcceptValue,
    Allow,
    Ask,
    Block,
    Deny,
    PreDecision,
    Source,
    SourceKind,
)
from policyengine.values.results import ResultSeal, ToolResult

Observer = Callable[[ToolResult], None]


@dataclass(frozen=True, slots=True)
class ObserverEntry:
    """A registered result observer and who it is."""

    fn: Observer
    source: Source


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


class StageContext(NamedTuple):
    """What a stage compiler may read: the tools, the closing default, the execute waterfall, the deadline."""

    tools: Mapping[str, ToolDefinition]
    closing: PreDecision
    execute: Waterfall[Any]
    policy_timeout: float


class CompiledStages(NamedTuple):
    """The stages a compiler built; None leaves a stage to the waterfall."""

    pre: PreExecuteStage | None = None
    guards: GuardStage | None = None
    execute: ExecuteStage | None = None
    post: PostExecuteStage | None = None


class StageCompiler(Protocol):
    """Builds stage objects for layers it compiled itself (a bundle names its compiler and its layer)."""

    def compile(self, layers: LayersByStage, context: StageContext) -> CompiledStages:
        """Stage objects for the stages whose every contributing layer is this compiler's."""


class LayersByStage(NamedTuple):
    """Per stage, the layers behind its listeners in order, when one compiler made them all; else None."""

    pre: tuple[Any, ...] | None
    guards: tuple[Any, ...] | None
    execute: tuple[Any, ...] | None
    post: tuple[Any, ...] | None


@dataclass
class Installation:
    """Everything installed on a registry at one moment; a call runs against exactly one."""

    tools: Mapping[str, ToolDefinition]
    pre: PreExecuteStage
    guards: GuardStage
    execute: ExecuteStage
    post: PostExecuteStage
    observers: tuple[ObserverEntry, ...]
    approval: ApprovalService | None
    policy_timeout: float
    approval_timeout: float
    closing: PreDecision
    stats: dict[str, int] = field(default_factory=dict)
    # The layers' session rules and the store they write to; None when no layer has any.
    sessions: Sessions | None = None
    # Every policy stage decides without awaiting: evaluate() then needs no event loop.
    synchronous: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.synchronous = self.pre.synchronous and self.guards.synchronous and self.post.synchronous


class Layer(NamedTuple):
    """What one installed unit contributes: its listeners per stage, and who compiled it (if anyone)."""

    pre: Sequence[Listener]
    guards: Sequence[GuardEntry]
    execute: Sequence[Listener]
    post: Sequence[Listener]
    compiler: StageCompiler | None
    layer: Any


def _compiled_layers(layers: Sequence[Layer], index: int) -> tuple[StageCompiler, tuple[Any, ...]] | None:
    """The compiler and its layers behind one stage's listeners (a Layer field), if one compiler made them all."""
    listening = [x for x in layers if x[index]]
    if not listening:
        return None
    compiler = listening[0].compiler
    if compiler is None or any(x.compiler is not compiler for x in listening):
        return None
    return compiler, tuple(x.layer for x in listening)


def build_installation(
    *,
    tools: Mapping[str, ToolDefinition],
    layers: Sequence[Layer],
    observers: list[ObserverEntry],
    default: PreDecision,
    approval: ApprovalService | None,
    policy_timeout: float,
    approval_timeout: float,
    stats: dict[str, int],
    sessions: Sessions | None = None,
) -> Installation:
    """Compose every chain once and choose each stage's object, so a call only walks prebuilt closures."""
    # The default carries a DEFAULT source so a pack can tell "nobody decided" from a decision.
    closing = default if default.source else replace(default, source=Source(SourceKind.DEFAULT, "end of chain"))
    end_of_chain = ChainResult(closing, closing.source)

    async def pre_terminal(_args: tuple[Any, ...], _trace: Trace) -> ChainResult[Any]:
        return end_of_chain

    async def post_terminal(args: tuple[Any, ...], _trace: Trace) -> ChainResult[Any]:
        return ChainResult(ACCEPT, None, args)

    pre = [x for layer in layers for x in layer.pre]
    guards = tuple(x for layer in layers for x in layer.guards)
    execute_chain: Waterfall[Any] = Waterfall(
        [x for layer in layers for x in layer.execute], run_body, lambda _v: True, _rebind_dispatch
    )
    post = [x for layer in layers for x in layer.post]
    compiled = _compile(layers, StageContext(tools, closing, execute_chain, policy_timeout))
    return Installation(
        tools=dict(tools),
        pre=compiled.pre
        or (
            PreExecuteChain(
                Waterfall(pre, pre_terminal, lambda d: isinstance(d, (Allow, Deny, Ask)), keep=_keep_decision),
                policy_timeout,
            )
            if pre
            else ClosingDefault(closing)
        ),
        guards=compiled.guards or (GuardFunctions(guards, policy_timeout) if guards else NoGuards()),
        execute=compiled.execute or Wrappers(execute_chain),
        post=compiled.post
        or (
            PostExecuteChain(
                Waterfall(
                    post,
                    post_terminal,
                    lambda d: isinstance(d, (Accept, AcceptValue, Block)),
                    _rebind_result,
                    _settle_result,
                    _keep_decision,
                ),
                policy_timeout,
            )
            if post
            else NoPostExecute()
        ),
        observers=_guarded(observers),
        approval=approval,
        policy_timeout=policy_timeout,
        approval_timeout=approval_timeout,
        closing=closing,
        stats=stats,
        sessions=sessions,
    )


def _compile(layers: Sequence[Layer], context: StageContext) -> CompiledStages:
    """Ask each compiler for the stages only its layers feed (one call per compiler)."""
    # Layer and LayersByStage list the four policy stages in the same order.
    by_stage = [_compiled_layers(layers, index) for index in range(len(LayersByStage._fields))]
    compilers = {id(found[0]): found[0] for found in by_stage if found is not None}
    built = CompiledStages()
    for key, compiler in compilers.items():
        mine = LayersByStage(*(f[1] if f is not None and id(f[0]) == key else None for f in by_stage))
        got = compiler.compile(mine, context)
        built = CompiledStages(
            built.pre or got.pre, built.guards or got.guards, built.execute or got.execute, built.post or got.post
        )
    return built


def _rebind_dispatch(args: tuple[Any, ...], extra: tuple[Any, ...], _source: Source) -> tuple[Any, ...]:
    (dispatch,) = args
    if len(extra) != 1 or not isinstance(extra[0], Dispatch):
        raise TypeError("execute next() takes one Dispatch of the same call (dispatch.with_signal(...))")
    handed: Dispatch = extra[0]
    what = swapped(handed, dispatch.call, dispatch.definition)
    if what is not None:
        raise Tampered(what)
    if handed.signal is dispatch.signal:
        return (dispatch,)
    # Rebuilt from what this wrapper was given, not from what it handed on: a replaced signal
    # adds to the ones before it and can never remove one.
    return (Dispatch(dispatch.call, handed.signal, dispatch.definition, (*dispatch.outer, dispatch.signal)),)


def _rebind_result(args: tuple[Any, ...], extra: tuple[Any, ...], source: Source) -> tuple[Any, ...]:
    call, pending = args
    if not all(isinstance(rewrite, (Accept, AcceptValue)) for rewrite in extra):
        raise TypeError("post-execute next() takes only accept(...) and accept_value(...) rewrites")
    for rewrite in extra:  # several rules of one pack hand their rewrites on together, in order
        pending = apply_rewrite(call.arguments, pending, rewrite, credit(rewrite.source, source))
    return (call, pending)


_FIELDS = {kind: tuple(f.name for f in fields(kind)) for kind in (Allow, Deny, Ask, Accept, AcceptValue, Block, Source)}


def _state(value: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(getattr(value, name) for name in names)


def _keep_decision(decision: Any) -> Callable[[], bool] | None:
    """Waterfall keep: a decision next() returned, and its source, may be shared (accept(), a rule's source)."""
    kind = type(decision)
    names = _FIELDS.get(kind)
    if names is None or kind is Source:
        return None
    kept = [(decision, kind, names, _state(decision, names))]
    source = decision.source
    if type(source) is Source:
        kept.append((source, Source, _FIELDS[Source], _state(source, _FIELDS[Source])))

    def intact() -> bool:
        ok = True
        for value, was, fields_of, before in kept:
            if type(value) is not was or not all(map(is_, _state(value, fields_of), before)):
                ok = False
                object.__setattr__(value, "__class__", was)
                for name, item in zip(fields_of, before, strict=True):
                    object.__setattr__(value, name, item)
        return ok

    return intact


def _settle_result(downstream: ChainResult[Any], value: Any, source: Source) -> ChainResult[Any]:
    """A post-execute listener's own decision after next(): on top of what came back, which it cannot undo.

    A block from further down the chain (a pack's, say) is final whatever the listener returns; a
    rewrite from further down is applied first, so the listener's own decision adds to it (an
    accept() after next() keeps a pack's redaction) rather than replacing the result it was handed.
    """
    decision = downstream.value
    if isinstance(decision, Block):
        return downstream
    call, pending = downstream.seen
    if not (isinstance(decision, Accept) and decision.content is None):
        pending = apply_rewrite(call.arguments, pending, decision, downstream.source or source)
    return ChainResult(value, credit(getattr(value, "source", None), source), (call, pending))
