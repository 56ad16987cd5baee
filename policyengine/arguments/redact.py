"""Value rewrites for post-execute rules: redact or mask by path, key name, pattern, secrets or cards.

Structured text keeps its format: a string that is a JSON document, or YAML, INI/TOML or .env
lines, has a secret replaced inside the value that carries it, so the text still parses and every
other key stays as it was (`_kept_documents`; cases in tests/data/redact_structured.yaml).
"""

from __future__ import annotations

import json
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
            return _kept_documents(plain, secrets.hide_secrets(plain, self.hide), self.hide, 0)
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


# -- structured text ---------------------------------------------------------------------------------

# A line holding `key: value` or `key = value` (YAML, INI/TOML, .env), and a JSON document's start.
_KEYED = re.compile(
    r"""(?m)^[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?["']?[A-Za-z_][\w.\-]*["']?[ \t]*(?::[ \t]|:$|=)|\A\s*[{\[]"""
)
_LINE = re.compile(
    r"""^(?P<lead>[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?)(?P<key>"[^"\n]*"|'[^'\n]*'|[A-Za-z_][\w.\-]*)"""
    r"""(?P<sep>[ \t]*(?::(?=[ \t]|$)|=)[ \t]*)(?P<value>.*?)(?P<trail>[ \t]+#.*)?$"""
)
_BLOCK = re.compile(r"^[|>][+-]?\d*$")  # a YAML block scalar's indicator: its text is on the lines below
_LITERAL = re.compile(r"^(?:-?\d[\d_.eE+-]*|true|false|yes|no|on|off|null|~|\[.*\]|\{.*\})$", re.IGNORECASE)


def _json_document(text: str, pick: Callable[[str, Any], bool], hide: Callable[[Any], Any]) -> str | None:
    """A JSON text with the values `pick` chooses (by key, value) replaced in place; None when it is not JSON."""
    from policyengine.arguments.secret_scanner import _json_rewritten, _JsonSpans  # the scanner's own JSON span reader

    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    spans = _JsonSpans(text)
    if not isinstance(parsed, dict | list) or not spans.parse():
        return None
    try:
        after = _picked(parsed, pick, hide, 0)
    except ValueError:
        return None
    return _json_rewritten(text, parsed, after, spans)


def _picked(value: Any, pick: Callable[[str, Any], bool], hide: Callable[[Any], Any], depth: int) -> Any:
    """A copy with the values `pick` chooses hidden (a chosen object or list is hidden leaf by leaf: same shape)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        return {
            k: _leaves(v, hide, depth + 1) if pick(str(k), v) else _picked(v, pick, hide, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_picked(v, pick, hide, depth + 1) for v in value]
    if isinstance(value, str) and pick("", value):
        return hide(value)
    return value


def _leaves(value: Any, hide: Callable[[Any], Any], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        return {k: _leaves(v, hide, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_leaves(v, hide, depth + 1) for v in value]
    return value if value is None or isinstance(value, bool) else hide(value)


def _lines(text: str, pick: Callable[[str, str], bool], hide: Callable[[Any], Any]) -> str:
    """YAML, INI/TOML or .env lines with each chosen `key: value` / `key = value` value replaced, quoted as it was."""
    lines = text.split("\n")
    out: list[str] = []
    skip_under: int | None = None  # the indent of a hidden key whose value is the more-indented lines below
    for line in lines:
        indent = len(line) - len(line.lstrip(" \t"))
        if skip_under is not None:
            if not line.strip() or indent > skip_under:
                continue  # the hidden key's nested value or block text
            skip_under = None
        match = _LINE.match(line)
        if match is None:
            out.append(line)
            continue
        key, value = match["key"].strip("\"'"), match["value"]
        if not pick(key, value):
            out.append(line)
            continue
        yaml_like = match["sep"].strip() == ":"
        if not value.strip() or _BLOCK.match(value.strip()):
            if not yaml_like:
                out.append(line)
                continue
            skip_under = indent  # `key:` over a nested value, `key: |` over a block: all of it goes
        out.append(
            match["lead"] + match["key"] + match["sep"] + _replacement(value, hide, yaml_like) + (match["trail"] or "")
        )
    return "\n".join(out)


def _replacement(value: str, hide: Callable[[Any], Any], yaml_like: bool) -> str:
    """The hidden value written as the original was: in its quotes, or quoted where a bare word would change type."""
    hidden = str(hide(value.strip("\"'") if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value))
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return json.dumps(hidden, ensure_ascii=False)
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return "'" + hidden.replace("'", "''") + "'"
    if yaml_like or not value.strip() or _BLOCK.match(value.strip()) or _LITERAL.match(value.strip()):
        return json.dumps(hidden, ensure_ascii=False)  # `[REDACTED]` bare is a YAML list, a TOML array
    return hidden


def _kept_documents(before: Any, after: Any, hide: Callable[[Any], Any], depth: int) -> Any:
    """`after` (secrets hidden), with each document string the scanner hid whole hidden inside instead, if it can be.

    The scanner rewrites a document in place when it can; when what it left still reads as a
    secret (a token split across two values, a netrc line in a JSON string) it hides the whole
    string. Here such a JSON document has each value that carries a secret hidden (every string
    value, when the secret spans values), so it stays JSON; if a secret still reads, whole it
    stays. Lines (YAML, INI, .env) hidden whole stay whole: a value continued over lines would
    leave pieces behind.
    """
    if depth > MAX_DEPTH:
        return after
    if isinstance(before, str):
        if isinstance(after, str) and after != before and after == hide(before) and _KEYED.search(before):
            kept = _document_secrets(before, hide)
            return kept if kept is not None else after
        return after
    if isinstance(before, dict) and isinstance(after, dict) and list(before) == list(after):
        return {k: _kept_documents(before[k], v, hide, depth + 1) for k, v in after.items()}
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [_kept_documents(b, a, hide, depth + 1) for b, a in zip(before, after, strict=True)]
    return after


def _document_secrets(text: str, hide: Callable[[Any], Any]) -> str | None:
    """The document with the values that carry a secret hidden; None when it is no document or a secret remains."""
    from policyengine.arguments.secret_scanner import is_credential_key, text_has_secret

    def carries(key: str, value: Any) -> bool:
        return is_credential_key(key) or (isinstance(value, str) and text_has_secret(value))

    def every(_key: str, value: Any) -> bool:
        return isinstance(value, str)

    if text.lstrip()[:1] not in ("{", "["):
        # Lines (YAML, INI, .env) the scanner hid whole: a value may go on over the next lines (a folded
        # scalar, a continued property) where a partial edit would leave pieces no detector reads.
        return None
    for pick in (carries, every):  # the values that carry one; then every string value (a token split across them)
        edited = _json_document(text, pick, hide)
        if edited is None:
            return None
        if edited != text and not text_has_secret(edited):
            return edited
    return None


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
