"""Value rewrites for post-execute rules: redact or mask by path, key name, pattern, secrets or cards."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import re2

from policyengine.arguments.paths import glob_to_regex
from policyengine.values.frozen import thaw

REDACTED = "[REDACTED]"
MAX_DEPTH = 100

_SEGMENT = re.compile(r"\[(\*|-?\d+)\]|\.?([A-Za-z_][A-Za-z0-9_-]*|\*)")


def parse_path(text: str) -> tuple[str | int, ...] | None:
    """Parse `a.b[*].c`, `items[0]`, `*.token` into segments ('*' is any key or item); None if bad."""
    segments: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _SEGMENT.match(text, pos)
        if not match or (pos == 0 and text.startswith(".")):
            return None
        index, key = match.groups()
        if index is not None and len(index) > 18:  # no list is that long; int() would refuse 4,300 digits
            return None
        segments.append(key if key is not None else ("*" if index == "*" else int(index)))
        pos = match.end()
    return tuple(segments) if segments else None


@dataclass(frozen=True, slots=True)
class Redaction:
    """One rewrite: where (path, key globs, a pattern, every secret or every card) and how (replacement or mask)."""

    path: tuple[str | int, ...] | None = None
    keys: Any = None  # compiled re2 pattern matching key names, case-insensitively
    pattern: Any = None  # compiled re2 pattern matched inside every string
    replace_with: str = REDACTED
    keep_last: int | None = None
    secrets: bool = False  # every value secrets.find_secrets reports, and every credential key's value
    cards: bool = False  # every Luhn-valid card number: its digits inside strings, and JSON numbers

    def hide(self, value: Any) -> Any:
        """The replacement for one whole value."""
        if self.keep_last is None:
            return self.replace_with
        text = value if isinstance(value, str) else str(value)
        keep = text[-self.keep_last :] if self.keep_last else ""
        if isinstance(value, str) and keep and not any(c.isalnum() for c in text[: -self.keep_last]):
            return value  # masked already ("**** **** **** 9083"): it shows no more than the mask keeps
        return "*" * (len(text) - len(keep)) + keep

    def apply(self, value: Any) -> Any:
        """Return a rewritten plain copy of `value`."""
        plain = thaw(value)
        if self.path is not None:
            return _at_path(plain, self.path, self.hide)
        if self.path is None and self.pattern is not None:
            return _strings(plain, self._in_string, 0)
        # The detector compiles its patterns on import (~10 ms): only packs that redact by key,
        # secrets or cards pay for it, on first use.
        from policyengine.arguments import secret_scanner as secrets

        if self.keys is not None:
            return _by_key(plain, self.keys.search, self.hide, 0, secrets.pair_value)
        if self.secrets:
            return secrets.hide_secrets(plain, self.hide)
        if self.cards:
            return secrets.hide_cards(plain, self.hide)
        return _strings(plain, self._in_string, 0)

    def _in_string(self, text: str) -> str:
        return str(self.pattern.sub(lambda m: self.hide(m.group(0)), text))


def key_matcher(globs: list[str]) -> Any:
    """One re2 pattern matching any of the key globs, whole key, ignoring case."""
    alternatives = "|".join(f"(?:{glob_to_regex(g)})" for g in globs)
    return re2.compile(f"(?i)^(?:{alternatives})$")


def _at_path(value: Any, path: tuple[str | int, ...], hide: Callable[[Any], Any]) -> Any:
    if not path:
        return hide(value)
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        keys = list(value) if head == "*" else [head] if head in value else []
        for key in keys:
            value[key] = _at_path(value[key], rest, hide)
    elif isinstance(value, list):
        if head == "*":
            indexes = range(len(value))
        elif isinstance(head, int) and -len(value) <= head < len(value):
            indexes = range(head % len(value), head % len(value) + 1)
        else:
            indexes = range(0)
        for i in indexes:
            value[i] = _at_path(value[i], rest, hide)
    return value


def _by_key(value: Any, match: Callable[[str], Any], hide: Callable[[Any], Any], depth: int, pair: Any) -> Any:
    """A copy with the value of each matching key, header pair or name/value entry hidden."""
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        # {"name"|"key"|"header": N, "value": V} names its value N: a matching N hides V.
        named = pair(value, match) if "value" in value or "Value" in value or "VALUE" in value else None
        return {
            k: hide(v) if k == named or match(k) else _by_key(v, match, hide, depth + 1, pair) for k, v in value.items()
        }
    if isinstance(value, list):
        if len(value) == 2 and isinstance(value[0], str) and match(value[0]):
            return [value[0], hide(value[1])]  # a header pair: ["Authorization", "Bearer ..."]
        return [_by_key(v, match, hide, depth + 1, pair) for v in value]
    return value


def _strings(value: Any, rewrite: Callable[[str], str], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, dict):
        return {k: _strings(v, rewrite, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, rewrite, depth + 1) for v in value]
    return value
