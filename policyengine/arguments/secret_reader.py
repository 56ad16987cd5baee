"""One reader of secrets for the guards and for redaction: what redaction hides is a secret to secrets(@).

Round nine (set H) found the detector (find_secrets, read by secrets(@) and so by every egress
red line) and the redaction (hide_secrets, read by `secrets: true` result rules) reading
different things: the layouts of secret_layouts (vault tables, XML key/value pairs, psql records,
column tables, {"OptionName", "Value"} records) were read by redaction only, so a password the
redaction hid in a result left unseen when the same text was sent out. `found_secrets` is the
union, by construction: the detector's findings, and where none, every place the redaction
rewrites. Any reader added to hide_secrets is therefore also a reader of the guards.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from policyengine.arguments import secret_scanner as scanner

LAYOUT_KIND = "credential (layout)"


# What the probe's hide() returns: a string (hide_secrets scans its own rewrite again, so the mark
# must be a JSON value) no tool writes. A value that is this string anyway reads as hidden: a
# finding, which fails closed.
_MARK = "\x00policyengine:hidden\x00"


def _mark(_value: Any) -> Any:
    """The hide function of the probe: every hidden value becomes the mark."""
    return _MARK


def _changed(before: Any, after: Any, at: tuple[str | int, ...]) -> Iterator[tuple[str | int, ...]]:
    """The paths where the probe's rewrite differs from the value (a rewritten string or key)."""
    if after == _MARK or (isinstance(after, str) and _MARK in after and after != before):
        yield at
        return
    if isinstance(before, dict) and isinstance(after, dict):
        if list(before) != list(after):
            yield at  # a key was hidden (a secret used as a key)
            return
        for key, item in before.items():
            yield from _changed(item, after[key], (*at, key))
        return
    if isinstance(before, list | tuple) and isinstance(after, list | tuple):
        if len(before) != len(after):
            yield at
            return
        for index, (item, rewritten) in enumerate(zip(before, after, strict=True)):
            yield from _changed(item, rewritten, (*at, index))
        return
    if before != after:
        yield at  # a string with secrets rewritten inside it


def redaction_findings(value: Any, *, path: str = "") -> list[scanner.Finding]:
    """Where hide_secrets would rewrite the value, as findings (empty when it rewrites nothing)."""
    if not scanner.layout_candidate(value):
        return []  # hide_secrets rewrites only what the detector or a layout reader finds
    hidden = scanner.hide_secrets(value, _mark)
    if hidden is value:
        return []
    return [scanner.Finding(LAYOUT_KIND, scanner.format_path(path, at), "") for at in _changed(value, hidden, ())]


def found_secrets(value: Any, *, path: str = "") -> list[scanner.Finding]:
    """The detector's findings; where it finds none, every place redaction would hide (one reader for both)."""
    found = scanner.find_secrets(value, path=path)
    return found if found else redaction_findings(value, path=path)
