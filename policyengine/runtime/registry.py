"""The tool registry: tools, listeners, guards and observers, and the call API."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from policyengine.enforce.decider import strictness
from policyengine.errors import FreezeError, RegistrationError, UsageError
from policyengine.runtime.approval import ApprovalService
from policyengine.runtime.pipeline import (
    REGISTRY,
    GuardEntry,
    Installation,
    ObserverEntry,
    Run,
    _Stopped,
    build_installation,
)
from policyengine.runtime.tool_body import Aborted
from policyengine.runtime.waterfall import Listener
from policyengine.tools.definition import ToolDefinition
from policyengine.values.call import PendingResult, ToolCall, new_call_id
from policyengine.values.cancellation import AbortKind, Signal
from policyengine.values.decisions import ALLOW, Ask, PreDecision, Source, SourceKind
from policyengine.values.frozen import FrozenDict, freeze
from policyengine.values.results import Outcome, Stage, ToolResult

log = logging.getLogger("policyengine")

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(eq=False)
class Handle:
    """What an install returned: remove it, or swap its contents atomically."""

    registry: Registry

    def remove(self) -> None:
        """Uninstall everything this handle installed."""
        self.registry._remove(self)


@dataclass
class Bundle:
    """Listeners, guards and observers installed together (one pack layer, say)."""

    pre: list[Listener] = field(default_factory=list)
    guards: list[GuardEntry] = field(default_factory=list)
    execute: list[Listener] = field(default_factory=list)
    post: list[Listener] = field(default_factory=list)
    observers: list[ObserverEntry] = field(default_factory=list)
    default: PreDecision | None = None
    rule_ids: frozenset[str] = frozenset()  # ids must stay unique across every installed layer
    pack: Any = None  # the Pack this bundle was compiled from, for the registry's fast paths


class Registry:
    """Holds tool definitions and the pipeline; `call()` runs one tool call through it.

    Listeners run in installation order. Each change builds a new immutable
    installation, so a call in flight always finishes against the one it started with.
    """

    def __init__(
        self,
        *,
        approval: ApprovalService | None = None,
        default: PreDecision = ALLOW,
        policy_timeout: float = 10.0,
        approval_timeout: float = 300.0,
        cwd: str | None = None,
    ) -> None:
        self._tools: dict[str, ToolDefinition] = {}
        self._cwd = cwd
        # The working directory of calls that carry none: the registry's, else the first pack's that declares one.
        self.cwd: str | None = cwd
        self._bundles: list[tuple[Handle, Bundle]] = []
        self._approval = approval
        self._default = default
        self._policy_timeout = policy_timeout
        self._approval_timeout = approval_timeout
        self.stats: dict[str, int] = {"observer_failures": 0}
        self._installation = self._build()

    # -- tools ---------------------------------------------------------------

    def register(self, definition: ToolDefinition) -> ToolDefinition:
        """Add a tool; a second tool with the same name is refused."""
        if not isinstance(definition, ToolDefinition):
            raise RegistrationError(
                f"register() takes a ToolDefinition, got {type(definition).__name__}",
                hint="build one with policyengine.define_tool(...)",
            )
        if definition.name in self._tools:
            raise RegistrationError(
                f"a tool named {definition.name!r} is already registered",
                hint="tool names are the only identity a model sends back; pick a unique name",
            )
        self._tools[definition.name] = definition
        self._rebuild()
        return definition

    def unregister(self, name: str) -> None:
        """Remove a tool by name."""
        if self._tools.pop(name, None) is None:
            raise RegistrationError(f"no tool named {name!r} is registered")
        self._rebuild()

    @property
    def tools(self) -> Mapping[str, ToolDefinition]:
        """The registered tools by name (read-only view)."""
        return MappingProxyType(dict(self._tools))

    # -- listeners -----------------------------------------------------------

    def on_pre_execute(self, fn: F | None = None, *, name: str | None = None) -> Any:
        """Install `async fn(call, next) -> Allow | Deny | Ask` at the end of pre-execute."""
        return self._decorate(fn, name, "pre-execute")

    def guard(self, fn: F | None = None, *, name: str | None = None) -> Any:
        """Install a monotonic guard `fn(call) -> reason | None` (sync or async)."""
        return self._decorate(fn, name, "guard")

    def on_execute(self, fn: F | None = None, *, name: str | None = None) -> Any:
        """Install an execute wrapper `async fn(dispatch, next) -> value`."""
        return self._decorate(fn, name, "execute")

    def on_post_execute(self, fn: F | None = None, *, name: str | None = None) -> Any:
        """Install `async fn(call, result, next) -> Accept | AcceptValue | Block`."""
        return self._decorate(fn, name, "post-execute")

    def on_result(self, fn: F | None = None, *, name: str | None = None) -> Any:
        """Install a synchronous, read-only observer `fn(result)`, notified once per call."""
        return self._decorate(fn, name, "result")

    def install(self, bundle: Bundle, *, replace: Handle | None = None) -> Handle:
        """Install a bundle as one unit, or swap `replace`'s contents in place, atomically."""
        if replace is not None:
            self.swap([(replace, bundle)])
            return replace
        self._check_ids([bundle], set())
        handle = Handle(self)
        self._bundles.append((handle, bundle))
        self._rebuild()
        return handle

    def swap(self, pairs: list[tuple[Handle, Bundle]]) -> None:
        """Replace several installed bundles in one step: no call ever sees half of a swap."""
        index = {id(h): i for i, (h, _b) in enumerate(self._bundles)}
        if any(id(h) not in index for h, _b in pairs):
            raise RegistrationError("a handle to swap is not installed on this registry")
        self._check_ids([b for _h, b in pairs], {id(h) for h, _b in pairs})
        bundles = list(self._bundles)
        for handle, bundle in pairs:
            bundles[index[id(handle)]] = (handle, bundle)
        self._bundles = bundles
        self._rebuild()

    def _check_ids(self, incoming: list[Bundle], replaced: set[int]) -> None:
        seen = {i for h, b in self._bundles if id(h) not in replaced for i in b.rule_ids}
        clash: set[str] = set()
        for bundle in incoming:
            clash |= bundle.rule_ids & seen
            seen |= bundle.rule_ids
        if clash:
            raise RegistrationError(
                f"rule id(s) {', '.join(map(repr, sorted(clash)))} are already installed on this registry",
                hint="rule ids must be unique across every loaded layer; rename one of them",
            )

    def _decorate(self, fn: F | None, name: str | None, stage: str) -> Any:
        if fn is None:
            return lambda f: self._decorate(f, name, stage)
        self._add(fn, name, stage)
        return fn

    def _add(self, fn: Callable[..., Any], name: str | None, stage: str) -> Handle:
        if not callable(fn):
            raise RegistrationError(f"{stage} listener must be callable, got {fn!r}")
        label = name or getattr(fn, "__qualname__", None) or repr(fn)
        is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        bundle = Bundle()
        if stage == "guard":
            bundle.guards.append(GuardEntry(fn, Source(SourceKind.GUARD, label)))
        elif stage == "result":
            if is_async:
                raise RegistrationError(
                    f"result observer {label!r} is async", hint="observers are synchronous and read-only"
                )
            bundle.observers.append(ObserverEntry(fn, Source(SourceKind.LISTENER, label)))
        else:
            if not is_async:
                raise RegistrationError(
                    f"{stage} listener {label!r} must be an async function",
                    hint=f"write `async def {label.split('.')[-1]}(..., next): return await next()`",
                )
            listener = Listener(fn, Source(SourceKind.LISTENER, label))
            {"pre-execute": bundle.pre, "execute": bundle.execute, "post-execute": bundle.post}[stage].append(listener)
        return self.install(bundle)

    def _remove(self, handle: Handle) -> None:
        before = len(self._bundles)
        self._bundles = [(h, b) for h, b in self._bundles if h is not handle]
        if len(self._bundles) == before:
            raise RegistrationError("that handle is not installed on this registry")
        self._rebuild()

    def set_approval(self, service: ApprovalService | None) -> None:
        """Configure (or remove) the approval service that answers `ask`."""
        self._approval = service
        self._rebuild()

    # -- installation ----------------------------------------------------------

    def _build(self) -> Installation:
        bundles = [b for _h, b in self._bundles]
        defaults = [b.default for b in bundles if b.default is not None]
        return build_installation(
            tools=self._tools,
            pre=[x for b in bundles for x in b.pre],
            guards=[x for b in bundles for x in b.guards],
            execute=[x for b in bundles for x in b.execute],
            post=[x for b in bundles for x in b.post],
            observers=[x for b in bundles for x in b.observers],
            # The strictest default of any layer closes the chain: a later layer never loosens it.
            default=max(defaults, key=strictness) if defaults else self._default,
            approval=self._approval,
            policy_timeout=self._policy_timeout,
            approval_timeout=self._approval_timeout,
            stats=self.stats,
            pre_packs=_only_packs(bundles, "pre"),
            guard_packs=_only_packs(bundles, "guards"),
            execute_packs=_only_packs(bundles, "execute"),
            post_packs=_only_packs(bundles, "post"),
        )

    def _rebuild(self) -> None:
        self._installation = self._build()
        # Resolved once per installation, not per call.
        self.cwd = self._cwd or next((b.pack.cwd for _h, b in self._bundles if b.pack is not None and b.pack.cwd), None)

    # -- calling ---------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        agent: str = "agent",
        token: Any = None,
        signal: Signal | None = None,
        call_id: str | None = None,
        cwd: str | None = None,
    ) -> ToolResult:
        """Run one call through every stage; always returns a frozen result, never raises.

        `cwd` is where the call's relative paths start (default: the registry's `cwd`).
        """
        inst = self._installation
        sent: FrozenDict | None
        try:  # the identity keeps the arguments as sent, so an invalid call is audited as it was
            sent = freeze({} if arguments is None else arguments)
        except FreezeError:
            sent = None
        call = ToolCall(
            call_id=call_id or new_call_id(),
            name=name,
            arguments=sent if isinstance(sent, FrozenDict) else FrozenDict(),
            agent=agent,
            token=token,
            signal=signal or Signal(),
            cwd=cwd if cwd is not None else self.cwd,
        )
        run = Run(inst, call)
        result: ToolResult | None = None
        try:
            result = await self._pipeline(run, name, arguments if sent is None else sent)
        except asyncio.CancelledError:
            result = run.result(Outcome.CANCELLED, None, REGISTRY, "the calling task was cancelled")
            raise
        except BaseException as error:  # an engine bug must still produce a closed result
            log.exception("policyengine: internal error in call %s", call.call_id)
            result = run.result(Outcome.ERROR, None, REGISTRY, f"internal error: {error!r}")
        finally:
            if result is not None:
                _notify(inst, result)
        return result

    async def _pipeline(self, run: Run, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        definition = run.inst.tools.get(name)
        if definition is None:
            known = ", ".join(sorted(run.inst.tools)) or "none"
            return run.result(
                Outcome.INVALID,
                Stage.LOOKUP,
                REGISTRY,
                f"unknown tool {name!r}; registered tools: {known}",
            )
        frozen, problems = definition.validate_arguments({} if arguments is None else arguments)
        run.lap(Stage.VALIDATION)
        if frozen is None:
            return run.result(
                Outcome.INVALID,
                Stage.VALIDATION,
                REGISTRY,
                f"invalid arguments for tool {name!r}: {'; '.join(problems)}",
            )
        # Normalisation filled defaults in, or the tool declares argument roles its rules read.
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
            )
        call = run.call
        try:
            # Packs alone decide synchronously: the stages are then plain calls, not coroutines.
            decision = run.pre_from_packs() if run.inst.pre_decider is not None else await run.pre_execute()
            if run.staged:
                run.guards_found()
            else:
                await run.guards()  # guards come before any person is asked
            if isinstance(decision, Ask):
                await run.approve(decision)
            if call.signal.aborted:
                raise Aborted(call.signal.reason)  # type: ignore[arg-type]
            value, content = await run.execute(definition)
            if run.inst.post_packs is not None:
                pending = run.post_from_packs(PendingResult(value, content, definition))
            else:
                pending = await run.post_execute(definition, value, content)
            content = run.finalize(definition, pending)
        except _Stopped as stopped:
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

    def call_sync(self, name: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any) -> ToolResult:
        """`call()` for code that is not async; refused inside a running event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.call(name, arguments, **kwargs))
        raise UsageError(
            "call_sync() was called from inside a running event loop",
            hint="use `await registry.call(...)` in async code",
        )


def _only_packs(bundles: list[Bundle], stage: str) -> tuple[Any, ...] | None:
    """The packs behind a stage's listeners, in order, if packs are all there is; else None."""
    listening = [b for b in bundles if getattr(b, stage)]
    if not listening or any(b.pack is None for b in listening):
        return None
    return tuple(b.pack for b in listening)


def _notify(inst: Installation, result: ToolResult) -> None:
    """Tell every observer, once; an observer's failure touches nothing else."""
    for entry in inst.observers:
        try:
            returned: object = entry.fn(result)  # type: ignore[func-returns-value]
            if inspect.isawaitable(returned):
                if inspect.iscoroutine(returned):
                    returned.close()
                raise TypeError("returned an awaitable; observers are synchronous")
        except Exception:
            inst.stats["observer_failures"] = inst.stats.get("observer_failures", 0) + 1
            log.exception("policyengine: result observer %s failed on call %s", entry.source, result.call_id)
