"""Frozen results: outcome, value, content, reason, deciding stage and source, timings."""

from __future__ import annotations

import enum
import inspect
from dataclasses import dataclass, field, fields
from operator import attrgetter, is_
from typing import Any

from policyengine.values.decisions import Source
from policyengine.values.frozen import FrozenDict, FrozenList, Snapshot


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

    # Stages key the per-pack rule indexes looked up on every call; Enum's own __hash__ is a
    # Python function hashing the name. Members are singletons, so identity hashing is exact.
    __hash__ = object.__hash__


@dataclass(frozen=True, slots=True)
class Approval:
    """How a call that policy asked about was answered: who answered, when, and what (docs/audit.md)."""

    answer: str  # allowed-once, denied, timed-out, failed, unavailable (nobody to ask)
    by: str | None  # the approval handler's name or identity (the person's client, a callback), when known
    at: float  # seconds since the epoch, when the answer came
    reason: str | None = None  # what the handler said, or why no answer came

    def to_json(self) -> dict[str, Any]:
        """The audit record's `approval` field."""
        return {"answer": self.answer, "by": self.by, "at": self.at, "reason": self.reason}


# The stages a rule can compile into (a rule file's `stage:`), in pipeline order.
RULE_STAGES = (Stage.PRE_EXECUTE, Stage.GUARD, Stage.EXECUTE, Stage.POST_EXECUTE)


@dataclass(frozen=True, slots=True, init=False)
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
    cwd: str | None = None  # where the call's relative paths started, when known (audit records replay it)
    session_id: str | None = None  # the session the call belonged to (docs/sessions.md)
    labels: tuple[str, ...] = ()  # the labels that session held when the call was decided (what its rules read)
    approval: Approval | None = None  # who answered the approval question, when and what (asked calls only)

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: FrozenDict,
        agent: str,
        outcome: Outcome,
        value: Any = None,
        content: FrozenList | None = None,
        reason: str | None = None,
        stage: Stage | None = None,
        source: Source | None = None,
        rewrites: tuple[Source, ...] = (),
        timings: FrozenDict | None = None,
        admitted_by: Source | None = None,
        asked: bool = False,
        cwd: str | None = None,
        session_id: str | None = None,
        labels: tuple[str, ...] = (),
        approval: Approval | None = None,
    ) -> None:
        # The slots are set through their descriptors: the frozen dataclass's own __init__ goes
        # through object.__setattr__ field by field, ~40% slower, and one result is built per call.
        _set_call_id(self, call_id)
        _set_name(self, name)
        _set_arguments(self, arguments)
        _set_agent(self, agent)
        _set_outcome(self, outcome)
        _set_value(self, value)
        _set_content(self, FrozenList() if content is None else content)
        _set_reason(self, reason)
        _set_stage(self, stage)
        _set_source(self, source)
        _set_rewrites(self, rewrites)
        _set_timings(self, FrozenDict() if timings is None else timings)
        _set_admitted_by(self, admitted_by)
        _set_asked(self, asked)
        _set_cwd(self, cwd)
        _set_session_id(self, session_id)
        _set_labels(self, labels)
        _set_approval(self, approval)

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


_RESULT_FIELDS = tuple(f.name for f in fields(ToolResult))
_SOURCE_FIELDS = tuple(f.name for f in fields(Source))
(
    _set_call_id,
    _set_name,
    _set_arguments,
    _set_agent,
    _set_outcome,
    _set_value,
    _set_content,
    _set_reason,
    _set_stage,
    _set_source,
    _set_rewrites,
    _set_timings,
    _set_admitted_by,
    _set_asked,
    _set_cwd,
    _set_session_id,
    _set_labels,
    _set_approval,
) = (ToolResult.__dict__[name].__set__ for name in _RESULT_FIELDS)
if tuple(inspect.signature(ToolResult.__init__).parameters)[1:] != _RESULT_FIELDS:  # pragma: no cover
    raise TypeError("ToolResult.__init__ must take every field, in field order")
_result_fields = attrgetter(*_RESULT_FIELDS)
_source_fields = attrgetter(*_SOURCE_FIELDS)


class ResultSeal:
    """A result exactly as it was built, to put back whatever an observer writes to it."""

    __slots__ = ("_fields", "_frozen", "_result", "_sources")

    def __init__(self, result: ToolResult) -> None:
        self._result = result
        self._fields: tuple[Any, ...] = _result_fields(result)
        # Sources are frozen dataclasses, which object.__setattr__ still writes to, and shared:
        # a listener's or a rule's own Source names it in every result it decides.
        self._sources = tuple(
            (source, _source_fields(source))
            for source in (result.source, result.admitted_by, *result.rewrites)
            if source is not None
        )
        self._frozen = Snapshot(result.arguments, result.value, result.content, result.timings)

    def restore(self) -> bool:
        """Put the result back as it was built; True when anything had changed."""
        result = self._result
        changed = type(result) is not ToolResult
        if changed:
            object.__setattr__(result, "__class__", ToolResult)
        if not all(map(is_, _result_fields(result), self._fields)):
            changed = True
            for name, value in zip(_RESULT_FIELDS, self._fields, strict=True):
                object.__setattr__(result, name, value)
        for source, before in self._sources:
            if not all(map(is_, _source_fields(source), before)):
                changed = True
                for name, value in zip(_SOURCE_FIELDS, before, strict=True):
                    object.__setattr__(source, name, value)
        # The fields are the built ones again, so the containers are too: put their contents back.
        return self._frozen.restore() or changed
