"""What rules ask of a session: counters over a window, and secrets seen earlier carried again (docs/sessions.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from policyengine.arguments import fingerprints
from policyengine.language.tool_names import tool_matches

_WINDOW = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}
_KEYS: dict[str, bytes] = {}


def window_seconds(window: str | float) -> float:
    """A window as seconds: a number, or '90s', '5m', '1h', '7d'; ValueError otherwise."""
    if isinstance(window, int | float) and not isinstance(window, bool):
        if window < 0:
            raise ValueError(f"a window cannot be negative ({window})")
        return float(window)
    match = _WINDOW.match(str(window))
    if match is None:
        raise ValueError(f"window {window!r} is not a duration: write e.g. '30s', '5m', '1h' or '7d'")
    return float(match.group(1)) * _UNITS[match.group(2)]


def register_key(key: bytes) -> str:
    """The id a session document names its fingerprint key by (the key itself never enters a document)."""
    key_id = fingerprints.reduced(key.hex())[:16]
    _KEYS[key_id] = key
    return key_id


def selected(selector: str | Sequence[str], name: str, tags: Sequence[str]) -> bool:
    """Whether a call of tool `name` (carrying `tags`) is one a selector names: a name, glob, `tag:NAME` or list."""
    for one in (selector,) if isinstance(selector, str) else selector:
        if one == "*" or (one.startswith("tag:") and one[4:] in tags) or tool_matches(name, (one,)):
            return True
    return False


def _counted(session: Any, selector: str | Sequence[str], window: str | float, field: str) -> float:
    if not isinstance(session, Mapping):
        return 0.0  # no session: a call alone has no history
    since = float(session.get("now", 0.0)) - window_seconds(window)
    total = 0.0
    for call in session.get("calls", ()):
        if call["decision"] != "deny" and call["time"] >= since and selected(selector, call["name"], call["tags"]):
            total += 1.0 if field == "count" else float(call["amount"])
    for bucket in session.get("earlier", ()):
        # A minute partly inside the window counts whole: a counter may overcount, never undercount.
        recent = bucket["decision"] != "deny" and bucket["minute"] + 60.0 > since
        if recent and selected(selector, bucket["name"], bucket["tags"]):
            total += float(bucket["count"] if field == "count" else bucket["amount"])
    return total


def session_count(session: Any, selector: str | Sequence[str], window: str | float) -> int:
    """Earlier calls of the session (allowed or asked) to tools `selector` names, within `window`."""
    return int(_counted(session, selector, window, "count"))


def session_sum(session: Any, selector: str | Sequence[str], window: str | float) -> float:
    """The amounts earlier calls (allowed or asked) to tools `selector` names spent within `window`."""
    return _counted(session, selector, window, "amount")


@lru_cache(maxsize=256)
def _matcher(key_id: str, prints: tuple[str, ...]) -> fingerprints.Matcher:
    return fingerprints.Matcher(prints, _KEYS[key_id])


def session_secrets(document: Any) -> list[str]:
    """Where a call's arguments carry a secret found in an earlier result of its session ("how at where")."""
    session = document.get("session") if isinstance(document, Mapping) else None
    if not isinstance(session, Mapping) or not session.get("secrets"):
        return []
    key_id = session.get("key")
    if key_id not in _KEYS:
        return ["unscanned: the session's fingerprint key is not known to this process"]
    return _matcher(key_id, tuple(session["secrets"])).carried(document.get("arguments"))
