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
from policyengine.values.frozen import FrozenDict

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
    return _rewritten(value, path)


def _rewritten(value: Any, path: str) -> list[scanner.Finding]:
    """The places the probe's hide_secrets rewrites (the caller found a layout candidate)."""
    hidden = scanner.hide_secrets(value, _mark)
    if hidden is value:
        return []
    return [scanner.Finding(LAYOUT_KIND, scanner.format_path(path, at), "") for at in _changed(value, hidden, ())]


def found_secrets(value: Any, *, path: str = "") -> list[scanner.Finding]:
    """The detector's findings; where it finds none, every place redaction would hide (one reader for both)."""
    found = scanner.find_secrets(value, path=path)
    if found:
        return found
    if scanner.layout_candidate(value):
        return _rewritten(value, path)
    if type(value) is FrozenDict:
        _remember_clean(value)
    return []


# Frozen arguments the reader found nothing in, newest first. A decision-log record is built right
# after its call's decision, in the same thread: when the decision's secrets(@) read these very
# arguments, the record's redaction would scan them again to learn the same (BFCL: ~30 us of a
# ~70 us record in a hot loop, more in the service). Frozen, so what was read cannot change; a few,
# replaced whole as one tuple, so a thread reading it never sees a half-written one.
_CLEAN_SIZE = 8
_clean: tuple[FrozenDict, ...] = ()


def _remember_clean(value: FrozenDict) -> None:
    global _clean
    _clean = (value, *_clean[: _CLEAN_SIZE - 1])


def known_clean(value: Any) -> bool:
    """True when found_secrets found nothing in arguments of the very same content (so hide_secrets hides nothing).

    The same content is the same keys in the same order and leaves of the same types and values: the
    reader is a pure function of that (it reads neighbours and key order, and `1` apart from `true`).
    """
    return any(_same(held, value, 0) for held in _clean)


def _same(held: Any, value: Any, depth: int) -> bool:
    """True when a plain or frozen value has the content of a frozen one (leaf types included)."""
    if isinstance(held, dict):
        if not isinstance(value, dict) or len(held) != len(value) or depth > scanner.MAX_DEPTH:
            return False
        return all(
            type(k) is type(key) and k == key and _same(item, other, depth + 1)
            for (k, item), (key, other) in zip(held.items(), value.items(), strict=True)
        )
    if isinstance(held, list):
        if not isinstance(value, list) or len(held) != len(value) or depth > scanner.MAX_DEPTH:
            return False
        return all(_same(item, other, depth + 1) for item, other in zip(held, value, strict=True))
    # A float NaN is not equal to itself: such arguments are scanned again, which is only slower.
    return type(held) is type(value) and held == value
