"""Card numbers written as one integer in another base, or as a sum (round fourteen, set M).

The card reader Luhn-checks decimal digit runs. A card number is the same number to whoever converts
or computes it: `0x13dd0cf649d7e5`, `0o226352747457314770`, `0b1001...`, a base-36 word after a card's
name (`card, base36: 1i2d3hnsbjs`), or a sum of integer literals (`5368177590000000 + 4379654`,
`2 x 2466157451751448`, bash's `$((a - b))`). Each is read by a bounded decoder and reported when its
value is a card (13-19 digits from an issuer's first digit 2-6, Luhn-valid):

- a literal with its base's prefix (0x, 0o, 0b) anywhere, unless padded with leading zeros to a
  width (an address, a register: `0x00007ff6a3b2c1d0` is no number written for a reader);
- a bare word of letters and digits (hex or base 36) only within a few words after a card's name:
  alone, a short id or a commit hash is as likely to pass Luhn (one in ten) as a card;
- two to four integer literals joined by + and - (or two by x, *, the multiplication sign), one of them long enough that
  the sum can have a card's length; each part no card itself (that part is the card reader's).

Out of scope: other bases without a prefix or a card's name, floats, expressions with brackets or
variables, products of more than two numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

_LABEL: Final = r"(?i:card|visa|amex|mastercard|maestro|discover|diners|jcb|unionpay|\bpan\b|\bcc\b)"
# The gate, for the prefilter (RE2, ASCII).
GATE: Final = (
    r"\b0[xX][0-9a-fA-F]{10}|\b0[oO][0-7]{16}|\b0[bB][01]{40}"
    r"|[0-9]{6}[ \t]*[-+*x\xd7][ \t]*\(?[0-9]|[0-9][ \t]*[-+*x\xd7][ \t]*[0-9]{10}"
    rf"|{_LABEL}[^\n]{{0,48}}[^0-9A-Za-z](?:[0-9][0-9A-Za-z]{{8}}|[A-Za-z][0-9A-Za-z]{{0,7}}[0-9][0-9A-Za-z]{{0,7}})"
)
_PREFIXED: Final = re.compile(r"(?<![0-9A-Za-z])0(?:[xX]([0-9a-fA-F]{10,17})|[oO]([0-7]{16,22})|[bB]([01]{40,64}))\b")
_BARE: Final = re.compile(r"(?<![0-9A-Za-z_\-./])([0-9A-Za-z]{9,16})(?![0-9A-Za-z_\-]|\.[0-9A-Za-z])")
_LABEL_RE: Final = re.compile(_LABEL)
_LABEL_REACH: Final = 48  # characters from a card's name to a bare word it names
_NUMBER: Final = r"[0-9]{1,19}"
_SUM: Final = re.compile(
    rf"(?<![0-9.,])({_NUMBER}(?:[ \t]*[-+][ \t]*{_NUMBER}){{1,3}}|{_NUMBER}[ \t]*[*x\xd7][ \t]*{_NUMBER})(?![0-9.,])"
)
_TERM: Final = re.compile(rf"([-+*x\xd7]?)[ \t]*({_NUMBER})")
_MIN_PART: Final = 10  # digits of the longest part: a sum of short numbers has no card's length
_MAX_MATCHES: Final = 32  # candidates read per string (bounded work)

_Hit = tuple[str, int, int, str]


def _digits_value(word: str, base: int) -> str | None:
    """The word read as an integer in a base, in decimal; None when it is no such integer."""
    try:
        return str(int(word, base))
    except ValueError:
        return None


def _prefixed_hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """Cards written as 0x, 0o or 0b literals."""
    hits: list[_Hit] = []
    for n, match in enumerate(_PREFIXED.finditer(text)):
        if n >= _MAX_MATCHES:
            break
        body, base = next((g, b) for g, b in zip(match.groups(), (16, 8, 2), strict=True) if g is not None)
        if body.startswith("0"):
            continue  # zero-padded to a width: an address or a register, not a number written out
        value = _digits_value(body, base)
        if value is not None and value[0] in "23456" and is_card(value):
            hits.append((f"card-number (base {base})", match.start(), match.end(), value))
    return hits


def _bare_hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """Cards written as a hex or base-36 word a few words after a card's name."""
    hits: list[_Hit] = []
    seen = 0
    for label in _LABEL_RE.finditer(text):
        for match in _BARE.finditer(text, label.end(), min(len(text), label.end() + _LABEL_REACH)):
            word = match.group(1)
            if word.isdigit() or not any(c.isdigit() for c in word):
                continue  # decimal is the card reader's; a word of letters is a word
            seen += 1
            if seen > _MAX_MATCHES:
                return hits
            for base in (16, 36):
                value = _digits_value(word, base)
                if value is not None and value[0] in "23456" and is_card(value):
                    hits.append((f"card-number (base {base})", match.start(), match.end(), value))
                    break
    return hits


def _sum_hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """Cards written as a sum, a difference or a small product of integer literals."""
    hits: list[_Hit] = []
    for n, match in enumerate(_SUM.finditer(text)):
        if n >= _MAX_MATCHES:
            break
        terms = _TERM.findall(match.group(1))
        if max(len(number) for _, number in terms) < _MIN_PART or any(is_card(number) for _, number in terms):
            continue
        total = int(terms[0][1])
        for op, number in terms[1:]:
            if op == "+":
                total += int(number)
            elif op == "-":
                total -= int(number)
            else:
                total *= int(number)
        value = str(total)
        if total > 0 and value[0] in "23456" and is_card(value):
            hits.append(("card-number (sum)", match.start(), match.end(), value))
    return hits


def hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """(kind, start, end, card digits) of each card written in another base or as a sum."""
    return [*_prefixed_hits(text, is_card), *_bare_hits(text, is_card), *_sum_hits(text, is_card)]
