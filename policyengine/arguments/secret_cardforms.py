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

Round fifteen (set M, card-integer-radix): a card's name is one context, a card's expiry another. A
bare word is read too within a few words of an expiry (`exp 04/29`, `valid thru 11/27`, a form's
`exp=0429`, or `e=0828` under a key of one or two letters that says nothing else), and in an object
(keyed_hits) under a key naming a card (`card`, `pan`, `cc_num`) or beside a sibling that is an
expiry (by its key, or a month and year under an opaque key) or a CVV (by its key).

Out of scope: other bases without a prefix, a card's name or an expiry beside them; floats,
expressions with brackets or variables, products of more than two numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

_LABEL: Final = r"(?i:card|visa|amex|mastercard|maestro|discover|diners|jcb|unionpay|\bpan\b|\bcc\b)"
# A card's expiry: a month and a year (04/29, 04-2029, 0429, 042029). Written after an expiry's name,
# or as a form pair under a key of one or two letters (`e=0828`): such a key says nothing of what it holds.
_MONTH_YEAR: Final = r"(?:0[1-9]|1[0-2])(?:[ \t]?[/\-][ \t]?)?(?:20)?[0-9]{2}"
_EXPIRY_NAME: Final = (
    r"(?i:exp(?:iry|ires?|iration|ire)?(?:[ _\-]?date)?|valid[ \t]+(?:thru|through|until|till)"
    r"|good[ \t]+(?:thru|through)|mm[ \t]?/[ \t]?yy(?:yy)?)"
)
_EXPIRY_LINK: Final = r"[ \t:=.#\-\"']{0,4}"
_SHORT_PAIR: Final = r"[A-Za-z_][A-Za-z0-9_]?="
# The gate, for the prefilter (RE2, ASCII).
GATE: Final = (
    r"\b0[xX][0-9a-fA-F]{10}|\b0[oO][0-7]{16}|\b0[bB][01]{40}"
    r"|[0-9]{6}[ \t]*[-+*x\xd7][ \t]*\(?[0-9]|[0-9][ \t]*[-+*x\xd7][ \t]*[0-9]{10}"
    rf"|{_LABEL}[^\n]{{0,48}}[^0-9A-Za-z](?:[0-9][0-9A-Za-z]{{8}}|[A-Za-z][0-9A-Za-z]{{0,7}}[0-9][0-9A-Za-z]{{0,7}})"
    # Round fifteen: an expiry by its name, or a month and year in a form pair under a short key.
    rf"|{_EXPIRY_NAME}{_EXPIRY_LINK}(?:0[1-9]|1[0-2])"
    rf"|(?:^|[?&;\s\"']){_SHORT_PAIR}(?:0[1-9]|1[0-2])[/\-]?[0-9]{{2}}"
)
_PREFIXED: Final = re.compile(r"(?<![0-9A-Za-z])0(?:[xX]([0-9a-fA-F]{10,17})|[oO]([0-7]{16,22})|[bB]([01]{40,64}))\b")
_BARE: Final = re.compile(r"(?<![0-9A-Za-z_\-./])([0-9A-Za-z]{9,16})(?![0-9A-Za-z_\-]|\.[0-9A-Za-z])")
_LABEL_RE: Final = re.compile(_LABEL)
_HEX_WORD: Final = re.compile(r"[0-9A-Fa-f]+")  # (tested before int(): a failed one raises, which costs)
_LABEL_REACH: Final = 48  # characters from a card's name to a bare word it names
# An expiry in a text: after its name (not inside a word: "export 0429" is none), or a form pair.
_EXPIRY_RE: Final = re.compile(
    rf"(?<![A-Za-z]){_EXPIRY_NAME}{_EXPIRY_LINK}{_MONTH_YEAR}(?![0-9])"
    rf"|(?:^|(?<=[?&;\s\"'])){_SHORT_PAIR}{_MONTH_YEAR}(?=$|[&;\s\"'])"
)
_EXPIRY_REACH: Final = 64  # characters either side of an expiry, on its line, read for a bare word
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
            if not any(c.isdigit() for c in word):
                continue  # a word of letters is a word
            seen += 1
            if seen > _MAX_MATCHES:
                return hits
            hit = _word_hit(word, is_card)
            if hit is not None:
                hits.append((hit[0], match.start(), match.end(), hit[1]))
    return hits


def _expiry_hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """Cards written as a hex or base-36 word within a few words of a card's expiry (either side, one line)."""
    hits: list[_Hit] = []
    seen = 0
    for n, expiry in enumerate(_EXPIRY_RE.finditer(text)):
        if n >= _MAX_MATCHES:
            break
        line_start = text.rfind("\n", 0, expiry.start()) + 1
        line_end = text.find("\n", expiry.end())
        line_end = len(text) if line_end < 0 else line_end
        for start, end in (
            (max(line_start, expiry.start() - _EXPIRY_REACH), expiry.start()),
            (expiry.end(), min(line_end, expiry.end() + _EXPIRY_REACH)),
        ):
            for match in _BARE.finditer(text, start, end):
                seen += 1
                if seen > _MAX_MATCHES:
                    return hits
                hit = _word_hit(match.group(1), is_card)
                if hit is not None:
                    hits.append((hit[0], match.start(), match.end(), hit[1]))
    return hits


# The issuers' prefixes by a number's length (ISO/IEC 7812 as the networks use them): 13 digits are
# Visa's; 14 Diners'; 15 Amex's; 16 Mastercard's 2-series, JCB's, Visa's, 5s and 6s; 17-19 JCB's,
# Visa's, Maestro's and UnionPay's. A bare word is an id as often as a number (one in ten passes Luhn).
_ISSUED: Final = {
    13: ("4",),
    14: ("30", "36", "38", "39"),
    15: ("34", "37", "2131"),
    16: ("2", "35", "4", "5", "6"),
    17: ("35", "4", "5", "6"),
    18: ("35", "4", "5", "6"),
    19: ("35", "4", "5", "6"),
}


def _issued(digits: str) -> bool:
    """True when a number has the length a card of its first digits has."""
    prefixes = _ISSUED.get(len(digits))
    return prefixes is not None and digits.startswith(prefixes)


def _word_hit(word: str, is_card: Callable[[str], bool]) -> tuple[str, str] | None:
    """(kind, card digits) when a word of letters and digits is a card in base 16 or 36, of an issuer's length."""
    if word.isalpha():
        return None  # a word of letters is a word
    if word.isdigit():
        # Decimal is the card reader's, but a card's hex form has no letter about once in 700
        # (0x10197244590045 is 4531578191020101): read as hex unless the word is a card itself.
        bases: tuple[int, ...] = () if is_card(word) else (16,)
    else:
        bases = (16, 36) if _HEX_WORD.fullmatch(word) else (36,)
    for base in bases:
        value = _digits_value(word, base)
        if value is not None and _issued(value) and is_card(value):
            return f"card-number (base {base})", value
    return None


# Objects (keyed_hits): a key's words that name a card's number, its expiry, and a bare word's shape.
_CARD_KEY_WORDS: Final = frozenset(
    {"card", "cards", "pan", "cc", "ccn", "ccnum", "cardno", "cardnum", "cardnumber", "creditcard", "debitcard"}
    | {"visa", "amex", "mastercard", "maestro", "discover", "diners", "jcb", "unionpay"}
)
_EXPIRY_KEY_WORDS: Final = frozenset(
    {"exp", "expiry", "expires", "expire", "expiration", "expdate", "expirydate", "expirationdate", "mmyy"}
    | {"validthru", "goodthru"}
)
_KEY_SPLIT: Final = re.compile(r"[^a-z0-9]+")
_KEY_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_VALUE: Final = re.compile(r"[ \t]*([0-9A-Za-z]{9,16})[ \t]*")
_MONTH_YEAR_VALUE: Final = re.compile(rf"[ \t]*{_MONTH_YEAR}[ \t]*")
# Under a key naming an expiry (exp_month, exp_year): a month, or a year of a card's decades (a
# lifetime in seconds, `expires: 3600`, is none).
_EXPIRY_PART: Final = re.compile(r"[ \t]*(?:0?[1-9]|1[0-2]|(?:20)?[2-4][0-9])[ \t]*")
_CVV_DIGITS: Final = re.compile(r"[ \t]*[0-9]{3,4}[ \t]*")
_KEY_WORDS_CACHE: dict[str, frozenset[str]] = {}


def _key_words(key: str) -> frozenset[str]:
    """The lower-cased words of a key ("cardNo" -> card, no; "cc_exp" -> cc, exp), kept (bounded)."""
    found = _KEY_WORDS_CACHE.get(key)
    if found is None:
        words = [w for w in _KEY_SPLIT.split(_KEY_CAMEL.sub("_", key[:64]).lower()) if w]
        found = frozenset(words) | {"".join(words)}
        if len(_KEY_WORDS_CACHE) >= 4096:  # keys come from untrusted calls
            _KEY_WORDS_CACHE.clear()
        _KEY_WORDS_CACHE[key] = found
    return found


def _expiry_value(key: str, value: object) -> bool:
    """True for a sibling that is a card's expiry: named so, or a month and year under a key that says nothing."""
    if type(value) is not str or len(value) > 12:
        return False
    if not _EXPIRY_KEY_WORDS.isdisjoint(_key_words(key)):
        return bool(_MONTH_YEAR_VALUE.fullmatch(value) or _EXPIRY_PART.fullmatch(value))
    return len(key) <= 2 and bool(_MONTH_YEAR_VALUE.fullmatch(value))


def keyed_hits(
    value: dict[str, object] | list[object], is_card: Callable[[str], bool], is_cvv_name: Callable[[str], bool]
) -> list[tuple[str | int, str, str]]:
    """(key or index, kind, card digits) of each bare hex or base-36 word in an object a card's context vouches for.

    In an object: under a key naming a card, or beside an expiry or a CVV. In a list: beside an item
    written as a month and a year with its separator (04/29).
    """
    items: list[tuple[str | int, object]] = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    # The words that are cards in another base first (two conversions each): one in twenty or more
    # is, so the keys are read only then.
    cards = [
        (key, hit)
        for key, item in items[:_MAX_MATCHES]
        if type(item) is str
        and 9 <= len(item) <= 20
        and (match := _WORD_VALUE.fullmatch(item)) is not None
        and (hit := _word_hit(match.group(1), is_card)) is not None
    ]
    if not cards:
        return []
    if isinstance(value, dict):
        context = any(
            isinstance(key, str) and (_expiry_value(key, item) or (_cvv_digits(item) and is_cvv_name(key)))
            for key, item in items[:_MAX_MATCHES]
        )
    else:
        context = any(type(item) is str and "/" in item and _MONTH_YEAR_VALUE.fullmatch(item) for _, item in items)
    return [
        (key, *hit)
        for key, hit in cards
        if context or (isinstance(key, str) and not _CARD_KEY_WORDS.isdisjoint(_key_words(key)))
    ]


def _cvv_digits(item: object) -> bool:
    """True for three or four digits, as a string or a number."""
    if type(item) is int:
        return 0 <= item <= 9999
    return type(item) is str and _CVV_DIGITS.fullmatch(item) is not None


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
    found = [*_prefixed_hits(text, is_card), *_bare_hits(text, is_card)]
    named = {(start, end) for _, start, end, _ in found}
    # A word beside both a card's name and its expiry is one card.
    found.extend(hit for hit in _expiry_hits(text, is_card) if (hit[1], hit[2]) not in named)
    return [*found, *_sum_hits(text, is_card)]
