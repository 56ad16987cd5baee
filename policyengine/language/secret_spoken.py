"""Secrets read out: the radio alphabet, and card verification digits apart or spelled (round fourteen, set M).

A key, a password or a card number read out in the ICAO/NATO radiotelephony alphabet (`ALFA KILO
INDIA ALFA ...`, capitals for upper case; `wun too tree fower fife six seven ait niner zero` for
digits; `underscore`, `hash`, `ampersand`... for symbols) is the secret to whoever writes it down. A
run of at least MIN_RUN such words (spaces, commas, hyphens or slashes between them) is decoded to
the text it spells and read again by the scanner; shorter runs (a flight "Delta Two Four", a booking
reference "Kilo Lima Mike four four two", a call sign) are left as words.

A card verification value read out has its digits apart (`7 3 9`, `7-3-9`, `6.1.4`, `0, 5, 4`, one
separator through the code) or spelled (`nine one zero seven`, `four-zero-six`): the CVV reader
takes those after a CVV's label as it takes three or four digits together.
"""

from __future__ import annotations

import re
from typing import Final

_LETTERS: Final = {
    "alfa": "a",
    "alpha": "a",
    "bravo": "b",
    "charlie": "c",
    "delta": "d",
    "echo": "e",
    "foxtrot": "f",
    "golf": "g",
    "hotel": "h",
    "india": "i",
    "juliett": "j",
    "juliet": "j",
    "kilo": "k",
    "lima": "l",
    "mike": "m",
    "november": "n",
    "oscar": "o",
    "papa": "p",
    "quebec": "q",
    "romeo": "r",
    "sierra": "s",
    "tango": "t",
    "uniform": "u",
    "victor": "v",
    "whiskey": "w",
    "whisky": "w",
    "xray": "x",
    "x-ray": "x",
    "yankee": "y",
    "zulu": "z",
}
_DIGITS: Final = {
    "zero": "0",
    "wun": "1",
    "one": "1",
    "too": "2",
    "two": "2",
    "tree": "3",
    "three": "3",
    "fower": "4",
    "four": "4",
    "fife": "5",
    "five": "5",
    "six": "6",
    "seven": "7",
    "ait": "8",
    "eight": "8",
    "niner": "9",
    "nine": "9",
}
_SYMBOLS: Final = {
    "underscore": "_",
    "hash": "#",
    "hashtag": "#",
    "pound": "#",
    "dash": "-",
    "hyphen": "-",
    "minus": "-",
    "dot": ".",
    "period": ".",
    "ampersand": "&",
    "exclamation": "!",
    "bang": "!",
    "dollar": "$",
    "percent": "%",
    "asterisk": "*",
    "star": "*",
    "plus": "+",
    "equals": "=",
    "slash": "/",
    "at": "@",
    "caret": "^",
    "tilde": "~",
    "question": "?",
}
_WORDS: Final = {**_LETTERS, **_DIGITS, **_SYMBOLS}
MIN_RUN: Final = 8  # words: a secret's length; a call sign or a booking reference is shorter
_MAX_RUNS: Final = 16
_SEP: Final = r"[ \t]*[,/\-][ \t]*|[ \t]+"
# Only the radio words proper start and end a run: a digit or symbol word alone is prose.
_RADIO: Final = "|".join(
    sorted(
        (w.replace("-", r"\-") for w in (*_LETTERS, "wun", "too", "tree", "fower", "fife", "ait", "niner")),
        key=len,
        reverse=True,
    )
)
_ANY: Final = "|".join(sorted((w.replace("-", r"\-") for w in _WORDS), key=len, reverse=True))
# The gate, for the prefilter (RE2): a radio word and three more words of the alphabet.
GATE: Final = rf"(?i:\b(?:{_RADIO})(?:(?:{_SEP})(?:{_ANY})){{3}}\b)"
_RUN: Final = re.compile(rf"(?i)\b(?:{_ANY})(?:(?:{_SEP})(?:{_ANY})){{{MIN_RUN - 1},}}\b")
_WORD: Final = re.compile(rf"(?i)\b(?:{_ANY})\b")


def radio_runs(text: str) -> list[tuple[int, int, str]]:
    """(start, end, the text it spells) of each run of MIN_RUN or more radio-alphabet words with a radio word in it."""
    runs: list[tuple[int, int, str]] = []
    for match in _RUN.finditer(text):
        words = [w.group() for w in _WORD.finditer(match.group())]
        letters = sum(1 for w in words if w.lower() in _LETTERS)
        if letters < 2 and not any(w.lower() in ("wun", "too", "tree", "fower", "fife", "ait", "niner") for w in words):
            continue  # number words alone are the spelled-digit reader's
        spelled = "".join(
            _WORDS[w.lower()].upper() if w.isupper() and w.lower() in _LETTERS else _WORDS[w.lower()] for w in words
        )
        runs.append((match.start(), match.end(), spelled))
        if len(runs) >= _MAX_RUNS:
            break
    return runs


_SPOKEN_DIGIT: Final = "|".join(("zero", "oh", *(w for w in _DIGITS if w != "zero")))
_APART: Final = re.compile(
    r"(?<![0-9.,\-])[0-9]([ \t]+|[ \t]*[.\-,/\u00b7\u2022][ \t]*)[0-9](?:\1[0-9]){1,2}(?![0-9]|[.,\-][0-9])"
)
_SPELLED: Final = re.compile(rf"(?i)\b(?:{_SPOKEN_DIGIT})(?:(?:[ \t]*[,\-][ \t]*|[ \t]+)(?:{_SPOKEN_DIGIT})){{2,3}}\b")


def cvv_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of a verification value read out between start and end: its digits apart, or spelled."""
    found = _APART.search(text, start, end) or _SPELLED.search(text, start, end)
    return [found.span()] if found else []
