"""The call identity: immutable, with deep-frozen arguments and a cancellation signal."""

from __future__ import annotations

import itertools
import os
import uuid
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from policyengine.values.cancellation import Signal
from policyengine.values.frozen import FrozenDict, duplicate, freeze

if TYPE_CHECKING:
    from policyengine.tools.definition import ToolDefinition


@dataclass(frozen=True, slots=True)
class ToolCall:
    """Who called which tool with what: the identity every stage reads and none can change."""

    call_id: str
    name: str
    arguments: FrozenDict
    agent: str
    token: Any = None
    signal: Signal = field(default_factory=Signal, compare=False)
    # Where relative paths start (None: unknown), and the tool's declared argument roles.
    cwd: str | None = None
    roles: FrozenDict | None = field(default=None, compare=False, repr=False)
    # The tool's capability tags, for rules that select `tag:NAME`.
    tags: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    # The agent's session (docs/sessions.md), and what rules read of it when some rule reads it.
    session_id: str | None = None
    session: FrozenDict | None = field(default=None, compare=False, repr=False)
    document: FrozenDict = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if type(self.name) is not str or type(self.agent) is not str or type(self.call_id) is not str:
            # A `(str, Enum)` name must be the tool that runs and the name conditions read alike.
            for label in ("name", "agent", "call_id"):
                object.__setattr__(self, label, plain_text(getattr(self, label), label))
        if self.cwd is not None and type(self.cwd) is not str:
            object.__setattr__(self, "cwd", plain_text(self.cwd, "cwd"))
        if self.session_id is not None and type(self.session_id) is not str:
            object.__setattr__(self, "session_id", plain_text(self.session_id, "session_id"))
        if self.session is not None and type(self.session) is not FrozenDict:
            object.__setattr__(self, "session", freeze(self.session, path="session"))
        object.__setattr__(self, "arguments", freeze(self.arguments))
        if self.token is not None:
            object.__setattr__(self, "token", freeze(self.token, path="token"))
        roles = self.roles
        if roles is not None:
            # Each call gets its own roles: a write to one call's never reaches the tool's, nor any later call.
            object.__setattr__(self, "roles", duplicate(roles) if type(roles) is FrozenDict else freeze(roles))
        # The JMESPath view is built once per call, never per rule.
        document = call_document(self.name, self.arguments, self.agent, self.call_id, self.cwd, self.roles)
        if self.session is not None:
            document = FrozenDict._of({**document, "session": self.session})
        object.__setattr__(self, "document", document)

    def with_session(self, session: FrozenDict) -> ToolCall:
        """This call, its document carrying `session` (the same signal and roles: it is the same call)."""
        if type(session) is not FrozenDict:
            session = freeze(session, path="session")
        # Copied, not built again: every field was checked and frozen when this call was made, and
        # __post_init__ would freeze the arguments, copy the roles and build the document anew
        # (6.5 us of a ~60 us BFCL decision: every call of a pack with session rules gets a session).
        copy = object.__new__(ToolCall)
        for name in _KEPT:
            object.__setattr__(copy, name, getattr(self, name))
        object.__setattr__(copy, "session", session)
        object.__setattr__(copy, "document", FrozenDict._of({**self.document, "session": session}))
        return copy


_KEPT = tuple(f.name for f in fields(ToolCall) if f.name not in ("session", "document"))


def plain_text(value: object, label: str) -> str:
    """A name, agent, call id or cwd as the exact str it holds (never a subclass's __str__); else TypeError."""
    if not isinstance(value, str):
        raise TypeError(f"a call's {label} must be a string, got {type(value).__name__}")
    return str.__str__(value)


def call_document(
    name: str,
    arguments: FrozenDict,
    agent: str,
    call_id: str,
    cwd: str | None = None,
    roles: FrozenDict | None = None,
) -> FrozenDict:
    """The document rules read: name, frozen arguments, agent, call_id, and cwd and roles when known."""
    if type(name) is str and type(agent) is str and type(call_id) is str:
        fields: dict[str, Any] = {"name": name, "arguments": arguments, "agent": agent, "call_id": call_id}
        if cwd is not None or roles:
            if cwd is not None:
                fields["cwd"] = freeze(cwd)
            if roles:
                fields["roles"] = roles
        return FrozenDict._of(fields)
    extra: dict[str, Any] = {"cwd": cwd} if cwd is not None else {}
    if roles:
        extra["roles"] = roles
    return FrozenDict(name=name, arguments=arguments, agent=agent, call_id=call_id, **extra)  # freezes odd types


_PREFIX = uuid.uuid4().hex[:12]
_COUNTER = itertools.count(1)


def _reseed() -> None:
    global _PREFIX, _COUNTER
    _PREFIX, _COUNTER = uuid.uuid4().hex[:12], itertools.count(1)


os.register_at_fork(after_in_child=_reseed)  # a forked worker must not repeat its parent's ids


def new_call_id() -> str:
    """A fresh unique call id: a random per-process prefix and a counter (uuid4 per call is slow)."""
    return f"{_PREFIX}-{next(_COUNTER):x}"


@dataclass(frozen=True, slots=True)
class Dispatch:
    """The execute stage's view: the call plus a signal, the one thing wrappers may replace."""

    call: ToolCall
    signal: Signal
    definition: ToolDefinition = field(repr=False)
    # The signals outer wrappers handed on, kept by the engine (a wrapper cannot drop them): the
    # body runs under all of them, so an inner wrapper's longer deadline never lifts an outer one.
    outer: tuple[Signal, ...] = field(default=(), repr=False)

    @property
    def arguments(self) -> FrozenDict:
        """The frozen arguments (same object as call.arguments)."""
        return self.call.arguments

    def with_signal(self, signal: Signal) -> Dispatch:
        """A dispatch whose body sees `signal`; the caller's and every outer wrapper's signals are fused back in."""
        if not isinstance(signal, Signal):
            raise TypeError(f"with_signal() needs a Signal, got {type(signal).__name__}")
        return Dispatch(self.call, signal, self.definition, self.outer)


@dataclass(frozen=True, slots=True)
class PendingResult:
    """The post-execute view of a result: canonical value, display content, rewrites so far."""

    value: Any
    content: Any
    definition: ToolDefinition = field(repr=False)
    rewrites: tuple[Any, ...] = ()
