"""Typed decisions of the policy stages: pre-execute, guards and post-execute."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class SourceKind(enum.Enum):
    """What kind of thing made a decision."""

    LISTENER = "listener"
    GUARD = "guard"
    RULE = "rule"
    APPROVAL = "approval"
    DEFAULT = "default"
    REGISTRY = "registry"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class Source:
    """Who decided: a listener, guard or rule, with the pack and digest it came from."""

    kind: SourceKind
    name: str
    pack: str | None = None
    digest: str | None = None

    def __str__(self) -> str:
        where = f" in pack {self.pack}" if self.pack else ""
        return f"{self.kind.value} {self.name!r}{where}"

    @property
    def rule_id(self) -> str | None:
        """The name for records and hit counts: None for a closing default (no rule decided)."""
        return None if self.kind is SourceKind.DEFAULT else self.name


@dataclass(frozen=True, slots=True)
class Allow:
    """Let the call go on (guards still apply)."""

    source: Source | None = None


def _text(value: object, what: str) -> str:
    """A reason as the exact str it holds (a str subclass could change what it says after the decision)."""
    if isinstance(value, str):
        return str.__str__(value)
    raise TypeError(f"a {what} must be a string, got {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse the call; the reason goes back to the model as an error result."""

    reason: str
    source: Source | None = None

    def __post_init__(self) -> None:
        if type(self.reason) is not str:
            object.__setattr__(self, "reason", _text(self.reason, "deny reason"))


@dataclass(frozen=True, slots=True)
class Ask:
    """Put the call to a person, once; only 'allowed-once' lets it continue."""

    reason: str | None = None
    source: Source | None = None

    def __post_init__(self) -> None:
        if self.reason is not None and type(self.reason) is not str:
            object.__setattr__(self, "reason", _text(self.reason, "ask reason"))


PreDecision = Allow | Deny | Ask


@dataclass(frozen=True, slots=True)
class Accept:
    """Accept the result; with content, replace only the display content."""

    content: Any = None
    source: Source | None = None


@dataclass(frozen=True, slots=True)
class AcceptValue:
    """Replace the canonical value; it is validated again and rendered again."""

    value: Any
    source: Source | None = None


@dataclass(frozen=True, slots=True)
class Block:
    """Turn the result into an error whose content is the feedback for the model."""

    feedback: str
    source: Source | None = None

    def __post_init__(self) -> None:
        if type(self.feedback) is not str:
            object.__setattr__(self, "feedback", _text(self.feedback, "block feedback"))


PostDecision = Accept | AcceptValue | Block

ALLOW = Allow()
ACCEPT = Accept()


def restore_shared() -> bool:
    """Put allow()'s and accept()'s shared decisions back if anything wrote to them; True when it had to."""
    intact = type(ALLOW) is Allow and type(ACCEPT) is Accept
    if intact and ALLOW.source is None and ACCEPT.content is None and ACCEPT.source is None:
        return False
    for decision, kind in ((ALLOW, Allow), (ACCEPT, Accept)):
        object.__setattr__(decision, "__class__", kind)
        for name in ("content", "source") if kind is Accept else ("source",):
            object.__setattr__(decision, name, None)
    return True


def allow() -> Allow:
    """An allow decision."""
    return ALLOW


def deny(reason: str) -> Deny:
    """A deny decision with the reason the model will read."""
    return Deny(reason)


def ask(reason: str | None = None) -> Ask:
    """An ask decision, optionally saying why a person must approve."""
    return Ask(reason)


def accept(content: Any = None) -> Accept:
    """Accept the result, optionally replacing its display content."""
    return Accept(content) if content is not None else ACCEPT


def accept_value(value: Any) -> AcceptValue:
    """Replace the canonical value (re-validated, re-rendered)."""
    return AcceptValue(value)


def block(feedback: str) -> Block:
    """Block the result with feedback written like a review comment."""
    return Block(feedback)


def strictness(decision: PreDecision) -> int:
    """How strict a closing default is: deny over ask over allow (the strictest of several layers closes)."""
    return 2 if isinstance(decision, Deny) else 1 if isinstance(decision, Ask) else 0
