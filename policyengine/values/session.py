"""A session: what happened earlier in one agent's run, as entries appended to a log and folded into a view.

Every front end that knows a session id appends one `Entry` per decided call (its decision and
the labels pre-execute set) and one per reviewed result (the labels post-execute set and the
fingerprints of the secrets it held). `SessionState` folds a session's entries, in order, into
what rules read (`document()`): labels, the recent calls, counters, fingerprints. Entries are
the truth: a store keeps them whole, so counters can be checked against the log (docs/sessions.md).
"""

from __future__ import annotations

import enum
import json
import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol

from policyengine.errors import SessionStoreError
from policyengine.values.frozen import FrozenDict, FrozenList

__all__ = ["Entry", "SessionState", "SessionStore", "SessionStoreError", "Step", "spent"]

# How many calls `session.calls` shows, newest last; older calls are summarised per minute in
# `session.earlier`, so counters over a window never lose one (docs/sessions.md).
RECENT_CALLS = 64
# Labels and fingerprints a session holds at most: past these the session is marked `overflowed`
# (the shipped session rules treat an overflowed session as holding every label).
MAX_LABELS = 256
MAX_PRINTS = 4096
MINUTE = 60.0


class Step(enum.Enum):
    """What an entry records: a decided call, or a reviewed result of an earlier entry's call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"
    RESULT = "result"

    __hash__ = object.__hash__


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a session's log: a decision or a result, with the labels and fingerprints it adds."""

    call_id: str
    name: str
    step: Step
    time: float
    tags: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()  # (label, id of the rule that set it)
    prints: tuple[str, ...] = ()  # keyed fingerprints of secrets seen (arguments/fingerprints.py)
    amount: float = 0.0  # the sum of the call's numeric amounts(@)

    def to_json(self) -> str:
        """The entry as one compact JSON line (the form every store keeps)."""
        data: dict[str, Any] = {"c": self.call_id, "n": self.name, "s": self.step.value, "t": self.time}
        if self.tags:
            data["g"] = list(self.tags)
        if self.labels:
            data["l"] = [list(pair) for pair in self.labels]
        if self.prints:
            data["p"] = list(self.prints)
        if self.amount:
            data["a"] = self.amount
        return json.dumps(data, separators=(",", ":"), allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> Entry:
        """An entry read back from a store; ValueError when the line is not one."""
        try:
            data = json.loads(text)
            return cls(
                str(data["c"]),
                str(data["n"]),
                Step(data["s"]),
                float(data["t"]),
                tuple(str(t) for t in data.get("g", ())),
                tuple((str(a), str(b)) for a, b in data.get("l", ())),
                tuple(str(p) for p in data.get("p", ())),
                float(data.get("a", 0.0)),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not a session entry: {error}") from error


def spent(amounts: Any) -> float:
    """The sum of the finite numbers among a call's amounts (anything else counts nothing)."""
    total = 0.0
    for value in amounts if isinstance(amounts, list | tuple) else ():
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            total += abs(float(value))
    return total


def _call_view(entry: Entry) -> FrozenDict:
    """One call as `session.calls` shows it (built once per entry)."""
    return FrozenDict._of(
        {
            "call_id": entry.call_id,
            "name": entry.name,
            "tags": FrozenList._of(list(entry.tags)),
            "decision": entry.step.value,
            "labels": FrozenList._of([label for label, _ in entry.labels]),
            "amount": entry.amount,
            "time": entry.time,
        }
    )


class SessionState:
    """A session's entries folded: the labels held, recent calls, per-minute summaries, fingerprints."""

    __slots__ = ("_parts", "calls", "count", "earlier", "labels", "overflowed", "prints", "session_id", "views")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.labels: dict[str, tuple[str, str, float]] = {}  # label -> (call_id, rule, time)
        self.calls: deque[Entry] = deque()
        self.views: deque[FrozenDict] = deque()  # each call of `calls` as the document shows it
        # (minute, name, tags, step) -> [count, amount]: calls older than the recent window.
        self.earlier: dict[tuple[int, str, tuple[str, ...], Step], list[float]] = {}
        self.prints: dict[str, None] = {}
        self.count = 0  # entries folded, so a store can append the rest
        self.overflowed = False
        # The document's parts, each rebuilt only after an entry changed it.
        self._parts: dict[str, Any] = {}

    def add(self, entry: Entry) -> None:
        """Fold one more entry (entries must come in log order)."""
        self.count += 1
        parts = self._parts
        for label, rule in entry.labels:
            if label not in self.labels:
                parts.pop("labels", None)
                if len(self.labels) >= MAX_LABELS:
                    self.overflowed = True
                    continue
                self.labels[label] = (entry.call_id, rule, entry.time)
        for fingerprint in entry.prints:
            parts.pop("secrets", None)
            if len(self.prints) >= MAX_PRINTS:
                self.overflowed = True
                break
            self.prints[fingerprint] = None
        if entry.step is Step.RESULT:
            if not entry.labels:
                return
            for i in range(len(self.calls) - 1, -1, -1):  # the result's labels show on its call
                call = self.calls[i]
                if call.call_id == entry.call_id:
                    merged = call.labels + tuple(p for p in entry.labels if p not in call.labels)
                    self.calls[i] = Entry(
                        call.call_id, call.name, call.step, call.time, call.tags, merged, (), call.amount
                    )
                    self.views[i] = _call_view(self.calls[i])
                    parts.pop("calls", None)
                    break
            return
        call = Entry(entry.call_id, entry.name, entry.step, entry.time, entry.tags, entry.labels, (), entry.amount)
        self.calls.append(call)
        self.views.append(_call_view(call))
        parts.pop("calls", None)
        if len(self.calls) > RECENT_CALLS:
            old = self.calls.popleft()
            self.views.popleft()
            key = (int(old.time // MINUTE), old.name, old.tags, old.step)
            bucket = self.earlier.setdefault(key, [0.0, 0.0])
            bucket[0] += 1
            bucket[1] += old.amount
            parts.pop("earlier", None)

    def document(self, now: float) -> FrozenDict:
        """The frozen `session` document rules read; each part is rebuilt only after an entry changed it."""
        parts = self._parts
        if len(parts) < 4:
            if "calls" not in parts:
                parts["calls"] = FrozenList._of(list(self.views))
            if "labels" not in parts:
                parts["labels"] = FrozenDict._of(
                    {
                        label: FrozenDict._of({"call_id": call_id, "rule": rule, "time": time})
                        for label, (call_id, rule, time) in self.labels.items()
                    }
                )
            if "earlier" not in parts:
                parts["earlier"] = FrozenList._of(
                    [
                        FrozenDict._of(
                            {
                                "minute": minute * MINUTE,
                                "name": name,
                                "tags": FrozenList._of(list(tags)),
                                "decision": step.value,
                                "count": int(bucket[0]),
                                "amount": bucket[1],
                            }
                        )
                        for (minute, name, tags, step), bucket in self.earlier.items()
                    ]
                )
            if "secrets" not in parts:
                parts["secrets"] = FrozenList._of(list(self.prints))
        return FrozenDict._of(
            {
                "id": self.session_id,
                "now": now,
                "labels": parts["labels"],
                "calls": parts["calls"],
                "earlier": parts["earlier"],
                "secrets": parts["secrets"],
                "overflowed": self.overflowed,
            }
        )


class SessionStore(Protocol):
    """Where sessions live: an append-only log per session id, and the key fingerprints are made with."""

    @property
    def key(self) -> bytes:
        """The secret that keys fingerprints (the same for every process that shares the store)."""

    def load(self, session_id: str) -> SessionState:
        """The session folded so far (a new, empty state for an unknown id); SessionStoreError on failure."""

    def append(self, session_id: str, entry: Entry) -> None:
        """Add one entry to the session's log, durably before returning; SessionStoreError on failure."""
