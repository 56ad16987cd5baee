"""Frozen results: outcome, value, content, reason, deciding stage and source, timings."""

from __future__ import annotations

import enum
import inspect
from contextvars import ContextVar
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


class Would(enum.Enum):
    """What a rule in monitor mode would have done, had it been enforced (docs/rules.md, `mode:`)."""

    ALLOW = "allow"
    DENY = "deny"  # at the guard stage: a red line
    ASK = "ask"
    BLOCK = "block"
    REWRITE = "rewrite"
    LABEL = "label"
    WRAP = "wrap"


@dataclass(frozen=True, slots=True)
class MonitorHit:
    """A rule in monitor mode that matched: what it would have done, where, and why; nothing was enforced."""

    source: Source  # the rule (its id, pack and the pack's digest)
    stage: Stage
    would: Would
    reason: str | None = None

    @property
    def rule(self) -> str:
        """The id of the rule that would have acted."""
        return self.source.name

    def to_json(self) -> dict[str, Any]:
        """The hit as the decision log, the audit record and the dry-run write it."""
        return {
            "rule": self.source.name,
            "pack": self.source.pack,
            "stage": self.stage.value,
            "would": self.would.value,
            "reason": self.reason,
        }


# Where the rules of the call being decided record their monitor hits: set by every entry point that
# runs the stages (run_call, evaluate(), the hook), one list per call; None: hits are not kept.
MONITORED: ContextVar[list[MonitorHit] | None] = ContextVar("policyengine_monitored", default=None)


def monitor_hit(hit: MonitorHit) -> None:
    """Record a monitor hit for the call being decided (dropped when no entry point is listening)."""
    sink = MONITORED.get()
    if sink is not None and hit not in sink:  # a rule met twice in one call (a replayed stage) counts once
        sink.append(hit)


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
    monitored: tuple[MonitorHit, ...] = ()  # rules in monitor mode that matched: what they would have done

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
        monitored: tuple[MonitorHit, ...] = (),
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
        _set_monitored(self, monitored)

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
    _set_monitored,
) = (ToolResult.__dict__[name].__set__ for name in _RESULT_FIELDS)
if tuple(inspect.signature(ToolResult.__init__).parameters)[1:] != _RESULT_FIELDS:  # pragma: no cover
    raise TypeError("ToolResult.__init__ must take every field, in field order")
_result_fields = attrgetter(*_RESULT_FIELDS)
_source_fields = attrgetter(*_SOURCE_FIELDS)
_HIT_FIELDS = tuple(f.name for f in fields(MonitorHit))
_hit_fields = attrgetter(*_HIT_FIELDS)


class ResultSeal:
    """A result exactly as it was built, to put back whatever an observer writes to it."""

    __slots__ = ("_fields", "_frozen", "_hits", "_result", "_sources")

    def __init__(self, result: ToolResult) -> None:
        self._result = result
        self._fields: tuple[Any, ...] = _result_fields(result)
        # Sources are frozen dataclasses, which object.__setattr__ still writes to, and shared:
        # a listener's or a rule's own Source names it in every result it decides.
        self._sources = tuple(
            (source, _source_fields(source))
            for source in (result.source, result.admitted_by, *result.rewrites, *(h.source for h in result.monitored))
            if source is not None
        )
        self._hits = tuple((hit, _hit_fields(hit)) for hit in result.monitored)
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
        for hit, was in self._hits:
            if not all(map(is_, _hit_fields(hit), was)):
                changed = True
                for name, value in zip(_HIT_FIELDS, was, strict=True):
                    object.__setattr__(hit, name, value)
        for source, before in self._sources:
            if not all(map(is_, _source_fields(source), before)):
                changed = True
                for name, value in zip(_SOURCE_FIELDS, before, strict=True):
                    object.__setattr__(source, name, value)
        # The fields are the built ones again, so the containers are too: put their contents back.
        return self._frozen.restore() or changed
