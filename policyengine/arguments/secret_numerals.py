"""Digits the Nd fold misses: numerals with a digit's value that are no decimal digit (round thirteen, set K).

The detector folds every Unicode decimal digit (category Nd) to ASCII, and NFKD folds the
compatibility digits (full-width, circled, superscript, mathematical). What is left writes a
digit all the same: CJK numerals (〇一二三四五六七八九, the financial 零壹贰叁..., Suzhou 〡〢〣),
the dingbat negative circled digits (❶❷❸, ⓿, ➊), double circled digits (⓵), Ethiopic, Brahmi,
counting rods. A card number or a verification code written in them is the number to whoever
reads it, so they are folded by their numeric value too. Roman numerals are not: NFKD makes them
the letters they are written with, and they are no positional digits.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import cache
from typing import Final

import re2

# The planes unicodedata knows numerals in (the fold table reads the same ones).
_SCANNED: Final = ((0x80, 0x30000),)


@cache
def numerals() -> dict[int, str]:
    """Code point -> ASCII digit for every numeral of value 0-9 that Nd and NFKD leave unfolded (built on first use)."""
    table: dict[int, str] = {}
    for first, last in _SCANNED:
        for code in range(first, last):
            char = chr(code)
            value = unicodedata.numeric(char, None)
            if value is None or value != int(value) or not 0 <= value <= 9:
                continue
            if unicodedata.category(char) == "Nd":
                continue
            folded = unicodedata.normalize("NFKD", char)
            # Folded already (circled, superscript, full-width digits), or written with letters
            # (Roman numerals are the letters I, V, X): not ours.
            if any(c.isascii() or unicodedata.category(c) == "Nd" for c in folded):
                continue
            table[code] = str(int(value))
    return table


def digit_value(char: str) -> int | None:
    """The digit a character writes: a Unicode decimal or compatibility digit, or a numeral of numerals()."""
    value = unicodedata.digit(char, None)
    if value is not None:
        return value
    folded = numerals().get(ord(char))
    return int(folded) if folded is not None else None


@cache
def re2_class() -> str:
    """The numerals of numerals() as the body of an RE2 character class (\\x{..} ranges)."""
    codes = sorted(numerals())
    parts: list[str] = []
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        parts.append(f"\\x{{{codes[i]:X}}}" if i == j else f"\\x{{{codes[i]:X}}}-\\x{{{codes[j]:X}}}")
        i = j + 1
    return "".join(parts)


def has_numeral(text: str) -> bool:
    """True when a text holds a numeral of numerals() (ASCII text holds none: no RE2 pass for it)."""
    return not text.isascii() and _search()(text)


@cache
def _search() -> Callable[[str], bool]:
    """One RE2 search for any numeral of numerals() (compiled on first use)."""
    pattern = re2.compile(f"[{re2_class()}]")
    return lambda text: pattern.search(text) is not None


def fold(text: str) -> str:
    """The text with each numeral of numerals() written as its ASCII digit: one character for one, same length."""
    return text.translate(numerals())
