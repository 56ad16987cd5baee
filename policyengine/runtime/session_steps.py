"""A call's session: loaded before pre-execute, written at the end of the guards and of post-execute.

The runtime does not know what a label rule is: the installed layers give it `SessionRules`
(packs compile theirs in enforce/), and the registry gives it the store. Three steps, each
called by every path that runs the stages (`run_call`, `evaluate`, `evaluate_sync`):

- `opened`: the session document goes into the call's document before any rule reads it;
- `decided`: once pre-execute and the guards answered, one entry (the decision, the labels
  pre-execute set, the amounts spent), so a label is visible to calls that start after this
  stage ends;
- `reviewed`: once post-execute answered, the labels it set and the fingerprints of the
  secrets in the result.

A store that fails makes the call fail closed: denied before it runs, its result blocked after.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from policyengine.errors import SessionStoreError
from policyengine.values.call import ToolCall
from policyengine.values.decisions import Ask, Deny, PreDecision, Source, SourceKind
from policyengine.values.frozen import FrozenDict
from policyengine.values.session import Entry, SessionState, SessionStore, Step

SESSION_STORE = Source(SourceKind.REGISTRY, "session store")

Labels = tuple[tuple[str, str], ...]

# What a call without a session id reads: no labels, no calls, no secrets (built once).
_EMPTY = FrozenDict._of({**SessionState("").document(0.0), "key": ""})


class HasSessions(Protocol):
    """What the steps read of an installation: its sessions (the hook, deciding without a registry, has its own)."""

    @property
    def sessions(self) -> Sessions | None:
        """The sessions, or None when no layer has session rules."""


class SessionRules(Protocol):
    """What one installed layer does with sessions (packs: enforce/session_rules.py)."""

    reads: bool  # some rule reads `session` (the document then carries it)
    lists_calls: bool  # some rule reads the log whole (session.calls, session.earlier): every call is written

    def pre_labels(self, call: ToolCall) -> Labels:
        """(label, rule id) for each label rule of pre-execute that matches the call."""

    def post_labels(self, call: ToolCall, value: Any, content: Any) -> Labels:
        """(label, rule id) for each label rule of post-execute that matches the result."""

    def prints(self, call: ToolCall, value: Any, key: bytes) -> tuple[str, ...]:
        """Keyed fingerprints of the secrets in a result (none unless some rule reads them)."""

    def counts(self, call: ToolCall) -> bool:
        """Whether a later rule may count or list this call (else an unlabelled call need not be written)."""

    def amount(self, call: ToolCall) -> float:
        """What the call spends (its amounts), for session_sum."""

    def key_id(self, key: bytes) -> str:
        """The name the document gives the store's fingerprint key."""


@dataclass(frozen=True, slots=True)
class Sessions:
    """An installation's session rules (every layer's, in order) and the store they write to."""

    rules: tuple[SessionRules, ...]
    store: SessionStore
    reads: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "reads", any(r.reads for r in self.rules))

    def records(self, call: ToolCall, denied: bool) -> bool:
        """Whether the call's decision must be written: some layer lists calls, or counts this one (if let on)."""
        return any(r.counts(call) and (not denied or r.lists_calls) for r in self.rules)


def _labels(found: Iterable[Labels]) -> Labels:
    out: dict[str, str] = {}
    for pairs in found:
        for label, rule in pairs:
            out.setdefault(label, rule)
    return tuple(out.items())


def opened(inst: HasSessions, call: ToolCall, now: float | None = None) -> ToolCall | str:
    """The call with its session document (when some rule reads it); a reason to deny when the store fails."""
    sessions = inst.sessions
    if sessions is None or not sessions.reads:
        return call
    if not call.session_id:
        return call.with_session(_EMPTY)  # a session of one call: nothing earlier, nothing to load
    now = time.time() if now is None else now
    try:
        document = sessions.store.load(call.session_id).document(now)
        key = sessions.rules[0].key_id(sessions.store.key)
    except SessionStoreError as error:
        return f"Denied: the session store failed ({error.message}); rules that read the session fail closed."
    except Exception as error:  # a store's own bug: fail closed all the same
        return f"Denied: the session store failed ({type(error).__name__}: {error}); the call is refused."
    session = FrozenDict._of({**document, "key": key})
    return call.with_session(session)


def decided(
    inst: HasSessions, call: ToolCall, decision: PreDecision, red_line: Deny | None, now: float | None = None
) -> str | None:
    """Write the call's decision and pre-execute's labels; a reason to deny when they cannot be written."""
    sessions = inst.sessions
    if sessions is None or not call.session_id:
        return None
    denied = isinstance(decision, Deny) or red_line is not None

    def entry() -> Entry | None:
        step = Step.DENY if denied else Step.ASK if isinstance(decision, Ask) else Step.ALLOW
        labels = () if denied else _labels(r.pre_labels(call) for r in sessions.rules)
        if not labels and not sessions.records(call, denied):
            return None  # nothing a rule can read later: no label, no counter selects it, nobody lists calls
        # Each layer reads the same amounts(@), or none when it sums nothing.
        amount = 0.0 if denied else max(r.amount(call) for r in sessions.rules)
        return Entry(call.call_id, call.name, step, _clock(now), tuple(sorted(call.tags)), labels, (), amount)

    failed = _written(sessions, call.session_id, entry)
    return None if failed is None else f"Denied: {failed}; the call cannot be counted, so it is refused."


def reviewed(inst: HasSessions, call: ToolCall, value: Any, content: Any, now: float | None = None) -> str | None:
    """Write post-execute's labels and the result's fingerprints; a reason to block when they cannot be written."""
    sessions = inst.sessions
    if sessions is None or not call.session_id:
        return None

    def entry() -> Entry | None:
        labels = _labels(r.post_labels(call, value, content) for r in sessions.rules)
        prints = tuple(dict.fromkeys(p for r in sessions.rules for p in r.prints(call, value, sessions.store.key)))
        if not labels and not prints:
            return None
        return Entry(call.call_id, call.name, Step.RESULT, _clock(now), tuple(sorted(call.tags)), labels, prints)

    failed = _written(sessions, call.session_id, entry)
    return None if failed is None else f"Blocked: {failed}; the result cannot be recorded, so it is withheld."


def _clock(now: float | None) -> float:
    return time.time() if now is None else now


def _written(sessions: Sessions, session_id: str, entry: Callable[[], Entry | None]) -> str | None:
    """Make the entry (None: nothing to write) and append it; what failed, when something did."""
    try:
        made = entry()
        if made is not None:
            sessions.store.append(session_id, made)
    except SessionStoreError as error:
        return f"the session store failed ({error.message})"
    except Exception as error:  # a label rule's or a store's own bug: fail closed all the same
        return f"recording the session failed ({type(error).__name__}: {error})"
    return None
