"""Frozen results: outcome, value, content, reason, deciding stage and source, timings."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from .decisions import Source
from .frozen import FrozenDict, FrozenList


class Outcome(enum.Enum):
    """How a call ended."""

    OK = "ok"
    DENIED = "denied"
    INVALID = "invalid"
    BLOCKED = "blocked"
    ERROR = "error"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"


class Stage(enum.Enum):
    """Where in the pipeline something happened, in pipeline order."""

    LOOKUP = "lookup"
    VALIDATION = "validation"
    PRE_EXECUTE = "pre-execute"
    GUARD = "guard"
    APPROVAL = "approval"
    EXECUTE = "execute"
    POST_EXECUTE = "post-execute"
    FINALIZE = "finalize_content"
    RESULT = "result"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The frozen, authoritative result of one call, as observers see it."""

    call_id: str
    name: str
    arguments: FrozenDict
    agent: str
    outcome: Outcome
    value: Any = None
    content: FrozenList = field(default_factory=FrozenList)
    reason: str | None = None
    stage: Stage | None = None
    source: Source | None = None
    rewrites: tuple[Source, ...] = ()
    timings: FrozenDict = field(default_factory=FrozenDict)
    admitted_by: Source | None = None  # the rule, listener or default that let the call past pre-execute
    asked: bool = False  # pre-execute asked a person (whatever they answered)

    @property
    def ok(self) -> bool:
        """True when the call ran and its result was accepted."""
        return self.outcome is Outcome.OK

    @property
    def is_error(self) -> bool:
        """True for every outcome the model should read as an error."""
        return self.outcome is not Outcome.OK

    @property
    def text(self) -> str:
        """The text blocks of the content, joined by newlines."""
        return "\n".join(str(block.get("text", "")) for block in self.content if block.get("type") == "text")
