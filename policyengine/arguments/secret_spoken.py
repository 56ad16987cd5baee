"""Secrets read out: the radio alphabet, and card verification digits apart or spelled (round fourteen, set M).

A key, a password or a card number read out in the ICAO/NATO radiotelephony alphabet (`ALFA KILO
INDIA ALFA ...`, capitals for upper case; `wun too tree fower fife six seven ait niner zero` for
digits; `underscore`, `hash`, `ampersand`... for symbols) is the secret to whoever writes it down. A
run of at least MIN_RUN such words (spaces, commas, hyphens or slashes between them) is decoded to
the text it spells and read again by the scanner; shorter runs (a flight "Delta Two Four", a booking
reference "Kilo Lima Mike four four two", a call sign) are left as words. Round fifteen (set N): the
other spelling alphabets in use (ALPHABETS: the 1943 "Able Baker", the LAPD's, German DIN 5009 old and
new, the Italian city names), each with its language's digit words, are read the same way.

A card verification value read out has its digits apart (`7 3 9`, `7-3-9`, `6.1.4`, `0, 5, 4`, one
separator through the code) or spelled (`nine one zero seven`, `four-zero-six`): the CVV reader
takes those after a CVV's label as it takes three or four digits together.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

# Spelling alphabets (round fifteen, set N): the same reader takes every table below. Each alphabet
# is its letter words and the digit words of its language (a German speller says "drei", an Italian
# "tre"). The letters are the published tables: ICAO/NATO (1956), the US Army/Navy "Able Baker"
# alphabet (1943-1955), the LAPD/APCO police alphabet, German DIN 5009 (the names of 1950-2022 and
# the city names of 2022) and the Italian city alphabet. Words are listed as the normalisation leaves
# them (accents folded: "Köln" is read as "koln"; "oe"/"ue" spellings too). Umlauts and eszett have
# words of their own in DIN 5009 ("Ärger", "Übermut"); no key's alphabet has those letters, so they
# are left out. A word that is a letter in two alphabets is read in each; a run is read in one.
_ICAO: Final = {
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


def _alphabet(words: str) -> dict[str, str]:
    """A letter table from its words in alphabetical order ("able baker ..."; "a|b" for two words of one letter)."""
    table: dict[str, str] = {}
    for letter, entry in zip("abcdefghijklmnopqrstuvwxyz", words.split(), strict=True):
        table.update(dict.fromkeys(entry.split("|"), letter))
    return table


_ABLE_BAKER: Final = _alphabet(
    "able baker charlie dog easy fox george how item jig king love mike nan|nab oboe peter queen roger sugar tare"
    " uncle victor william x-ray|xray yoke zebra"
)
_LAPD: Final = _alphabet(
    "adam boy charles david edward frank george henry ida john king lincoln mary nora ocean paul queen robert sam"
    " tom union victor william x-ray|xray young zebra"
)
_DIN_NAMES: Final = _alphabet(
    "anton berta|bertha casar|caesar dora emil friedrich gustav heinrich ida julius kaufmann|konrad ludwig"
    " martha nordpol otto paula quelle richard samuel|siegfried theodor ulrich viktor wilhelm xanthippe ypsilon"
    " zacharias|zeppelin"
)
_DIN_CITIES: Final = _alphabet(
    "aachen berlin chemnitz dusseldorf|duesseldorf essen frankfurt goslar hamburg ingelheim jena koln|koeln"
    " leipzig munchen|muenchen nurnberg|nuernberg offenbach potsdam quickborn rostock salzwedel tubingen|tuebingen"
    " unna volklingen|voelklingen wuppertal xanten ypsilon zwickau"
)
_ITALIAN: Final = _alphabet(
    "ancona bari|bologna como domodossola empoli firenze genova hotel imola jolly|i-lunga kappa|kursaal livorno"
    " milano napoli otranto palermo|padova quarto roma savona torino udine venezia washington|vu-doppia"
    " xeres|ics yacht|york|ipsilon zara"
)
# ICAO's own digit words ("niner", "fower") and the plain ones of each language.
_ENGLISH_DIGITS: Final = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
}
_ICAO_DIGITS: Final = {"wun": "1", "too": "2", "tree": "3", "fower": "4", "fife": "5", "ait": "8", "niner": "9"}
_GERMAN_DIGITS: Final = {
    "null": "0",
    "eins": "1",
    "zwei": "2",
    "zwo": "2",
    "drei": "3",
    "vier": "4",
    "funf": "5",
    "fuenf": "5",
    "sechs": "6",
    "sieben": "7",
    "acht": "8",
    "neun": "9",
}
_ITALIAN_DIGITS: Final = {
    "zero": "0",
    "uno": "1",
    "due": "2",
    "tre": "3",
    "quattro": "4",
    "cinque": "5",
    "sei": "6",
    "sette": "7",
    "otto": "8",
    "nove": "9",
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
# (name, letter words, digit words): the table every run is read with.
ALPHABETS: Final = (
    ("radio alphabet", _ICAO, {**_ENGLISH_DIGITS, **_ICAO_DIGITS}),
    ("able-baker alphabet", _ABLE_BAKER, _ENGLISH_DIGITS),
    ("police alphabet", _LAPD, _ENGLISH_DIGITS),
    ("din 5009 names", _DIN_NAMES, _GERMAN_DIGITS),
    ("din 5009 cities", _DIN_CITIES, _GERMAN_DIGITS),
    ("italian alphabet", _ITALIAN, _ITALIAN_DIGITS),
)
_LETTERS: Final = _ICAO  # (the ICAO table: its words alone start a run of the radio reader's gate)
_DIGITS: Final = {**_ENGLISH_DIGITS, **_ICAO_DIGITS}
MIN_RUN: Final = 8  # words: a secret's length; a call sign or a booking reference is shorter
_MAX_RUNS: Final = 16
_SEP: Final = r"[ \t]*[,/\-][ \t]*|[ \t]+"


def _words(words: Iterable[str]) -> str:
    """An alternation of the words, longest first (a word is never cut at a shorter one)."""
    return "|".join(sorted((w.replace("-", r"\-") for w in set(words)), key=len, reverse=True))


# Only an alphabet's own words start a run: a digit or symbol word alone is prose. A run of one alphabet
# needs two of its letter words (or an ICAO digit word): number words alone are the spelled-digit reader's.
_RADIO: Final = _words(w for _, letters, _ in ALPHABETS for w in letters) + "|" + _words(_ICAO_DIGITS)
_ANY: Final = _words(w for _, letters, digits in ALPHABETS for w in (*letters, *digits, *_SYMBOLS))
# The gate, for the prefilter (RE2): a letter word of some alphabet and three more words of any.
GATE: Final = rf"(?i:\b(?:{_RADIO})(?:(?:{_SEP})(?:{_ANY})){{3}}\b)"


_Reader = tuple[str, dict[str, str], frozenset[str], re.Pattern[str], re.Pattern[str]]


def _reader(name: str, letters: dict[str, str], digits: dict[str, str]) -> _Reader:
    """(name, word table, letter words, run pattern, word pattern) of one alphabet."""
    table = {**letters, **digits, **_SYMBOLS}
    words = _words(table)
    run = re.compile(rf"(?i)\b(?:{words})(?:(?:{_SEP})(?:{words})){{{MIN_RUN - 1},}}\b")
    return name, table, frozenset(letters), run, re.compile(rf"(?i)\b(?:{words})\b")


_READERS: Final = tuple(_reader(*alphabet) for alphabet in ALPHABETS)


def spelled_runs(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, the text it spells, the alphabet's name) of each run of MIN_RUN or more words of one alphabet.

    A capitalised letter word ("ALFA") is a capital; other words spell small letters (a speller says the
    case apart, if at all). Overlapping runs of two alphabets are both kept: the scanner reads each.
    """
    runs: list[tuple[int, int, str, str]] = []
    for name, table, letters, run, word in _READERS:
        for match in run.finditer(text):
            words = [w.group() for w in word.finditer(match.group())]
            count = sum(1 for w in words if w.lower() in letters)
            if count < 2 and not any(w.lower() in _ICAO_DIGITS for w in words):
                continue  # number words alone are the spelled-digit reader's
            spelled = "".join(
                table[w.lower()].upper() if w.isupper() and len(w) > 1 and w.lower() in letters else table[w.lower()]
                for w in words
            )
            runs.append((match.start(), match.end(), spelled, name))
            if len(runs) >= _MAX_RUNS:
                return runs
    return runs


def radio_runs(text: str) -> list[tuple[int, int, str]]:
    """(start, end, the text it spells) of each run of MIN_RUN or more ICAO radio-alphabet words."""
    return [(start, end, spelled) for start, end, spelled, name in spelled_runs(text) if name == "radio alphabet"]


_SPOKEN_DIGIT: Final = "|".join(("zero", "oh", *(w for w in _DIGITS if w != "zero")))
_APART: Final = re.compile(
    r"(?<![0-9.,\-])[0-9]([ \t]+|[ \t]*[.\-,/\u00b7\u2022][ \t]*)[0-9](?:\1[0-9]){1,2}(?![0-9]|[.,\-][0-9])"
)
_SPELLED: Final = re.compile(rf"(?i)\b(?:{_SPOKEN_DIGIT})(?:(?:[ \t]*[,\-][ \t]*|[ \t]+)(?:{_SPOKEN_DIGIT})){{2,3}}\b")


def cvv_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of a verification value read out between start and end: its digits apart, or spelled."""
    found = _APART.search(text, start, end) or _SPELLED.search(text, start, end)
    return [found.span()] if found else []
