"""Keyed fingerprints of secrets a session saw, and where a later call carries one again.

A secret is reduced to its letters and digits, case-folded (so `AKIA-...`, `akia...` and the
secret split by spaces or across arguments are one text), and kept, as is, reversed and ROT13'd
(spellings no decoder undoes), as keyed BLAKE2b prints:
a short print of its first `WINDOW` characters (the anchor), its length and a print of the
whole. Nothing is kept in clear; without the store's key a print says nothing about the secret.

A call carries a secret when the reduced text of any of its strings, of all its strings joined
in document order (a secret split across arguments), or of what they decode to (base64 in
either alphabet, base32, hex, percent-encoding, backslash escapes, HTML character references, up
to `DEPTH` layers) holds a window whose anchor print
is known and whose whole print matches from there. A call whose strings are longer than
`MAX_SCAN` characters is reported as unscanned, never as clean (docs/sessions.md).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import hashlib
import html
import re
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

WINDOW = 8  # characters of the anchor
SHORTEST = 10  # reduced secrets shorter than this are not fingerprinted (too many chance matches)
MAX_SCAN = 256 * 1024  # reduced characters one call is checked over, all candidates together
DEPTH = 2  # layers of encoding undone
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}[:\s-]?){8,}")
_B32_RUN = re.compile(r"[A-Z2-7]{16,}={0,6}|[a-z2-7]{16,}={0,6}")
_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[0-7]{3})")
# What unicode_escape would choke on or misread: a backslash before anything but an escape it undoes.
_ESCAPE_OTHER = re.compile(r"\\(?!x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|[\\'\"abfnrtv])")


def reduced(text: str) -> str:
    """The text's letters and digits (ASCII), case-folded: what prints are made of and compared on."""
    return _NOT_ALNUM.sub("", text.lower())


def _print(key: bytes, text: str, size: int) -> str:
    return hashlib.blake2b(text.encode(), key=key, digest_size=size).hexdigest()


_ROT13 = str.maketrans("abcdefghijklmnopqrstuvwxyz", "nopqrstuvwxyzabcdefghijklm")


def _spellings(text: str) -> tuple[tuple[str, str], ...]:
    """A reduced secret as it may come back without any decoding to undo: as is, reversed, ROT13."""
    return ("", text), ("reversed", text[::-1]), ("rot13", text.translate(_ROT13))


def prints_of(secrets: Iterable[str], key: bytes) -> tuple[str, ...]:
    """The fingerprints of secrets (`anchor.length.whole`), one per spelling of each distinct reduced secret."""
    out: dict[str, None] = {}
    for secret in secrets:
        text = reduced(secret)
        if len(text) >= SHORTEST:
            for kind, spelling in _spellings(text):
                made = f"{_print(key, spelling[:WINDOW], 6)}.{len(spelling)}.{_print(key, spelling, 12)}"
                out[f"{made}.{kind}" if kind else made] = None
    return tuple(out)


def _printable(decode: Callable[[str], bytes], body: str) -> str | None:
    """The body decoded (as Latin-1) when it decodes and reads as text, mostly printable; else None."""
    try:
        decoded = decode(body).decode("latin-1")
    except (binascii.Error, ValueError):
        return None
    return decoded if sum(c.isprintable() for c in decoded) >= 0.8 * len(decoded) > 0 else None


def _decoded(text: str) -> Iterator[tuple[str, str]]:
    """(how, text) for each layer a string may hide a secret under."""
    if "%" in text:
        unquoted = urllib.parse.unquote(text)
        if unquoted != text:
            yield "percent-encoded", unquoted
    for match in _B64_RUN.finditer(text):
        run = match.group().rstrip("=").replace("-", "+").replace("_", "/")
        for start in range(4 if len(run) < 4096 else 1):  # a run cut mid-quantum by a split or a prefix
            body = run[start:]
            body = body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body
            decoded = _printable(base64.b64decode, body + "=" * (-len(body) % 4))
            if decoded is not None:
                yield "base64", decoded
    if "\\" in text and _ESCAPE.search(text):
        try:
            unescaped: str | None = codecs.decode(_ESCAPE_OTHER.sub("", text), "unicode_escape")
        except (UnicodeDecodeError, ValueError):
            unescaped = None
        if unescaped is not None:
            yield "escaped", unescaped
    if "&#" in text:
        unescaped = html.unescape(text)
        if unescaped != text:
            yield "HTML entities", unescaped
    for match in _B32_RUN.finditer(text):
        body = match.group().rstrip("=").upper()
        decoded = _printable(base64.b32decode, body + "=" * (-len(body) % 8))
        if decoded is not None:
            yield "base32", decoded
    for match in _HEX_RUN.finditer(text):
        digits = re.sub(r"[:\s-]", "", match.group())
        try:
            yield "hex", bytes.fromhex(digits[: len(digits) // 2 * 2]).decode("latin-1")
        except ValueError:
            continue


def _strings(value: Any, where: str, out: list[tuple[str, str]], depth: int = 0) -> None:
    if depth > 100:
        return
    if isinstance(value, str):
        out.append((where, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            out.append((f"{where} key", str(key)))
            _strings(item, f"{where}.{key}", out, depth + 1)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _strings(item, f"{where}[{i}]", out, depth + 1)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out.append((where, repr(value)))


class Matcher:
    """The prints of one session, indexed by anchor, to check calls against."""

    __slots__ = ("_anchors", "_base", "key")

    def __init__(self, prints: Sequence[str], key: bytes) -> None:
        self.key = key
        self._base = hashlib.blake2b(key=key, digest_size=6)
        self._anchors: dict[str, list[tuple[int, str, str]]] = {}
        for item in prints:
            anchor, length, whole, *kind = item.split(".")
            if length.isdigit():
                self._anchors.setdefault(anchor, []).append((int(length), whole, kind[0] if kind else ""))

    def _holds(self, text: str) -> str | None:
        anchors, base, key = self._anchors, self._base, self.key
        seen: set[str] = set()
        for i in range(len(text) - WINDOW + 1):
            window = text[i : i + WINDOW]
            if window in seen:
                continue
            seen.add(window)
            h = base.copy()
            h.update(window.encode())
            found = anchors.get(h.hexdigest())
            if found is not None:
                for length, whole, kind in found:
                    if len(text) - i >= length and _print(key, text[i : i + length], 12) == whole:
                        return kind
        return None

    def carried(self, arguments: Any) -> list[str]:
        """Where the arguments carry a secret the session saw, as "how at where" (never the secret)."""
        if not self._anchors:
            return []
        strings: list[tuple[str, str]] = []
        _strings(arguments, "arguments", strings)
        joined = "".join(text for _, text in strings if not _.endswith(" key"))
        candidates = [*strings, ("arguments (joined)", joined)]
        budget = MAX_SCAN
        found: list[str] = []
        todo: list[tuple[str, str, str, int]] = [(where, "as sent", text, 0) for where, text in candidates]
        while todo:
            where, how, text, depth = todo.pop()
            plain = reduced(text)
            budget -= len(plain)
            if budget < 0:
                return [
                    *found,
                    f"unscanned: the arguments are too long to check against the secrets seen ({MAX_SCAN} characters)",
                ]
            spelled = self._holds(plain) if len(plain) >= SHORTEST else None
            if spelled is not None:
                found.append(
                    f"{how if not spelled else spelled if how == 'as sent' else f'{spelled} {how}'} at {where}"
                )
                continue
            if depth < DEPTH:
                todo.extend(
                    (where, kind if how == "as sent" else f"{kind} in {how}", inner, depth + 1)
                    for kind, inner in _decoded(text)
                )
        return sorted(set(found))
