"""The tool registry: tools, listeners, guards and observers, and the call API."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar, overload

from policyengine.errors import FreezeError, RegistrationError, UsageError
from policyengine.runtime.approval import ApprovalService
from policyengine.runtime.installation import Installation, Layer, ObserverEntry, StageCompiler, build_installation
from policyengine.runtime.pipeline import notify, run_call
from policyengine.runtime.run import REGISTRY, Run
from policyengine.runtime.session_steps import Sessions
from policyengine.runtime.stages import GuardEntry
from policyengine.runtime.waterfall import Listener
from policyengine.tools.definition import ToolDefinition
from policyengine.values.call import ToolCall, new_call_id
from policyengine.values.cancellation import Signal
from policyengine.values.decisions import ALLOW, PreDecision, Source, SourceKind, strictness
from policyengine.values.frozen import FrozenDict, copy_in
from policyengine.values.results import Outcome, Stage, ToolResult
from policyengine.values.session import SessionStore

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
    # Who compiled this bundle and from what (a pack, say): the compiler may build faster stage
    # objects for the stages only its layers feed. The runtime never looks inside `layer`.
    compiler: StageCompiler | None = None
    layer: Any = None
    cwd: str | None = None  # where relative paths start for calls that carry no cwd
    # What this layer does with sessions (runtime/session_steps.SessionRules); None: nothing.
    session: Any = None


class _StageDecorator:
    """`@registry.on_x` or `@registry.on_x(name=...)`: installs the function in one stage and returns it."""

    __slots__ = ("registry", "stage")

    def __init__(self, registry: Registry, stage: Stage) -> None:
        self.registry = registry
        self.stage = stage

    @overload
    def __call__(self, fn: F, *, name: str | None = None) -> F: ...
    @overload
    def __call__(self, fn: None = None, *, name: str | None = None) -> Callable[[F], F]: ...
    def __call__(self, fn: F | None = None, *, name: str | None = None) -> F | Callable[[F], F]:
        if fn is None:

            def decorator(f: F) -> F:
                self.registry._add(f, name, self.stage)
                return f

            return decorator
        self.registry._add(fn, name, self.stage)
        return fn


class _Installs:
    """A Registry attribute that is the decorator of one stage; five stages, one signature and one body."""

    def __init__(self, stage: Stage, doc: str) -> None:
        self.stage = stage
        self.__doc__ = doc

    @overload
    def __get__(self, registry: None, owner: type[Registry]) -> _Installs: ...
    @overload
    def __get__(self, registry: Registry, owner: type[Registry]) -> _StageDecorator: ...
    def __get__(self, registry: Registry | None, owner: type[Registry]) -> _Installs | _StageDecorator:
        return self if registry is None else _StageDecorator(registry, self.stage)


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
        sessions: SessionStore | None = None,
    ) -> None:
        self._tools: dict[str, ToolDefinition] = {}
        # Where sessions live; a registry whose layers have session rules and no store keeps them in memory.
        self._store = sessions
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

    on_pre_execute = _Installs(
        Stage.PRE_EXECUTE, "Install `async fn(call, next) -> Allow | Deny | Ask` at the end of pre-execute."
    )
    guard = _Installs(Stage.GUARD, "Install a monotonic guard `fn(call) -> reason | None` (sync or async).")
    on_execute = _Installs(Stage.EXECUTE, "Install an execute wrapper `async fn(dispatch, next) -> value`.")
    on_post_execute = _Installs(
        Stage.POST_EXECUTE, "Install `async fn(call, result, next) -> Accept | AcceptValue | Block`."
    )
    on_result = _Installs(
        Stage.RESULT, "Install a synchronous, read-only observer `fn(result)`, notified once per call."
    )

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

    def _add(self, fn: Callable[..., Any], name: str | None, stage: Stage) -> Handle:
        if not callable(fn):
            raise RegistrationError(f"{stage.value} listener must be callable, got {fn!r}")
        label = name or getattr(fn, "__qualname__", None) or repr(fn)
        is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        bundle = Bundle()
        if stage is Stage.GUARD:
            bundle.guards.append(GuardEntry(fn, Source(SourceKind.GUARD, label)))
        elif stage is Stage.RESULT:
            if is_async:
                raise RegistrationError(
                    f"result observer {label!r} is async", hint="observers are synchronous and read-only"
                )
            bundle.observers.append(ObserverEntry(fn, Source(SourceKind.LISTENER, label)))
        else:
            if not is_async:
                raise RegistrationError(
                    f"{stage.value} listener {label!r} must be an async function",
                    hint=f"write `async def {label.split('.')[-1]}(..., next): return await next()`",
                )
            listener = Listener(fn, Source(SourceKind.LISTENER, label))
            {Stage.PRE_EXECUTE: bundle.pre, Stage.EXECUTE: bundle.execute, Stage.POST_EXECUTE: bundle.post}[
                stage
            ].append(listener)
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
            layers=[Layer(b.pre, b.guards, b.execute, b.post, b.compiler, b.layer) for b in bundles],
            observers=[x for b in bundles for x in b.observers],
            # The strictest default of any layer closes the chain: a later layer never loosens it.
            default=max(defaults, key=strictness) if defaults else self._default,
            approval=self._approval,
            policy_timeout=self._policy_timeout,
            approval_timeout=self._approval_timeout,
            stats=self.stats,
            sessions=self._sessions(bundles),
        )

    def _sessions(self, bundles: list[Bundle]) -> Sessions | None:
        rules = tuple(b.session for b in bundles if b.session is not None)
        if not rules:
            return None
        if self._store is None:
            from policyengine.sessions.stores import MemoryStore

            self._store = MemoryStore()
        return Sessions(rules, self._store)

    @property
    def sessions(self) -> SessionStore | None:
        """The session store calls of this registry read and write (None until a layer has session rules)."""
        return self._store

    def _rebuild(self) -> None:
        self._installation = self._build()
        # Resolved once per installation, not per call.
        self.cwd = self._cwd or next((b.cwd for _h, b in self._bundles if b.cwd), None)

    @property
    def installation(self) -> Installation:
        """What is installed now: the snapshot a call started now would run against."""
        return self._installation

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
        session_id: str | None = None,
    ) -> ToolResult:
        """Run one call through every stage; always returns a frozen result, never raises.

        `cwd` is where the call's relative paths start (default: the registry's `cwd`);
        `session_id` names the agent's session, which session rules read and write (docs/sessions.md).
        """
        inst = self._installation
        sent: FrozenDict | None
        try:  # the identity keeps the arguments as sent, so an invalid call is audited as it was
            # A copy even of frozen arguments: the caller keeps what it handed in and could still write to it.
            sent = copy_in({} if arguments is None else arguments)
        except FreezeError:
            sent = None
        refused: str | None = None
        call_id = call_id or new_call_id()
        cwd = cwd if cwd is not None else self.cwd
        if type(name) is not str or type(agent) is not str or type(call_id) is not str or type(cwd) not in _TEXT:
            name, agent, call_id, cwd, refused = _plain_identity(name, agent, call_id, cwd)
        if type(session_id) not in _TEXT:
            if isinstance(session_id, str):
                session_id = str.__str__(session_id)
            else:
                refused = refused or f"the session_id must be a string, got {type(session_id).__name__}"
                session_id = None
        try:
            token = copy_in(token) if token is not None else None  # policy and the body see one snapshot
        except FreezeError as error:
            token, refused = None, refused or f"the call's token is not JSON data ({error})"
        call = ToolCall(
            call_id=call_id,
            name=name,
            arguments=sent if isinstance(sent, FrozenDict) else FrozenDict(),
            agent=agent,
            token=token,
            signal=signal or Signal(),
            cwd=cwd,
            session_id=session_id or None,
        )
        run = Run(inst, call)
        result: ToolResult | None = None
        task = asyncio.current_task()
        cancels = task.cancelling() if task is not None else 0
        try:
            if refused is not None:
                result = run.result(Outcome.INVALID, Stage.VALIDATION, REGISTRY, f"invalid call: {refused}")
            else:
                result = await run_call(run, arguments if sent is None else sent)
        except asyncio.CancelledError as error:
            if task is None or task.cancelling() > cancels:
                result = run.result(Outcome.CANCELLED, None, REGISTRY, "the calling task was cancelled")
                raise
            # Nobody cancelled the caller: a stray cancel from inside is a failure, never the caller's cancel.
            log.error("policyengine: stray cancel in call %s", call.call_id)
            result = run.result(Outcome.ERROR, None, REGISTRY, f"internal error: {error!r}")
        except BaseException as error:  # an engine bug must still produce a closed result
            log.exception("policyengine: internal error in call %s", call.call_id)
            result = run.result(Outcome.ERROR, None, REGISTRY, f"internal error: {error!r}")
        finally:
            if result is not None:
                notify(inst, result)
        return result

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


_TEXT = (str, type(None))


def _plain_identity(
    name: object, agent: object, call_id: object, cwd: object
) -> tuple[str, str, str, str | None, str | None]:
    """The call's name, agent, id and cwd as plain str (a subclass's own __str__ never read), and why not, if not."""
    texts: list[str] = []
    refused: str | None = None
    for label, value in (("tool name", name), ("agent", agent), ("call_id", call_id)):
        if isinstance(value, str):
            texts.append(str.__str__(value))
        else:
            texts.append(f"<{type(value).__name__}>")
            refused = refused or f"the {label} must be a string, got {type(value).__name__}"
    if cwd is not None and not isinstance(cwd, str):
        refused, cwd = refused or f"the cwd must be a string, got {type(cwd).__name__}", None
    return texts[0], texts[1], texts[2], None if cwd is None else str.__str__(cwd), refused
