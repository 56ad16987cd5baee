"""Text written upside down (round fifteen, set N): "flip text" of keys, passwords and cards.

An upside-down text generator reverses the string and swaps each character for one that looks like
it turned half a circle (`a` for U+0250 turned a, `k` for U+029E turned k, `b` for `q`): a string
ending in U+029E `s` is `sk...` to whoever turns the phone around. FLIP is the generators' table
(the characters the common ones print, with their alternatives); UNFLIP is derived from it (every
flipped character back to its letter), so one table says both. A word holding a character that only
flipped text uses (TRIGGER: the table's non-ASCII letters and digits) is read turned back: each such
word alone, in place (a label before it stays: "db pass, flipped: <the password upside down>"), and
each run of such words turned as one (a whole flipped sentence reads backwards word by word). ASCII
text holds no trigger and costs nothing.
"""

from __future__ import annotations

import re
from typing import Final

# Character -> its upside-down forms (the first is the usual one). Characters that turn into
# themselves (o s x z H I N O S X Z 0 8) or into another ASCII character (b/q, d/p, n/u, M/W, 6/9)
# are listed too: in a flipped word they are turned back like the rest.
FLIP: Final = {
    "a": "\u0250",  # latin small letter turned a
    "b": "q",
    "c": "\u0254",  # latin small letter open o
    "d": "p",
    "e": "\u01dd",  # latin small letter turned e
    "f": "\u025f",  # latin small letter dotless j with stroke
    "g": "\u0183\u1d77",  # latin small letter b with topbar, latin small letter turned g
    "h": "\u0265",  # latin small letter turned h
    "i": "\u1d09\u0131",  # latin small letter turned i, latin small letter dotless i
    "j": "\u027e",  # latin small letter r with fishhook
    "k": "\u029e",  # latin small letter turned k
    "l": "l\u05df",  # hebrew letter final nun
    "m": "\u026f",  # latin small letter turned m
    "n": "u",
    "o": "o",
    "p": "d",
    "q": "b",
    "r": "\u0279",  # latin small letter turned r
    "s": "s",
    "t": "\u0287",  # latin small letter turned t
    "u": "n",
    "v": "\u028c",  # latin small letter turned v
    "w": "\u028d",  # latin small letter turned w
    "x": "x",
    "y": "\u028e",  # latin small letter turned y
    "z": "z",
    "A": "\u2200\u2c6f",  # for all, latin capital letter turned a
    "B": "\ua4ed\u15fa\U00010412",  # lisu letter gha, canadian syllabics carrier kha, deseret capital letter bee
    "C": "\u0186\u2184",  # latin capital letter open o, latin small letter reversed c
    "D": "\u15e1\ua4f7",  # canadian syllabics carrier tha, lisu letter oe
    "E": "\u018e",  # latin capital letter reversed e
    "F": "\u2132\ua7fb",  # turned capital f, latin epigraphic letter reversed f
    "G": "\u2141\ua4e8\u05e4",  # turned sans-serif capital g, lisu letter hha, hebrew letter pe
    "H": "H",
    "I": "I",
    "J": "\u017f\ua4e9",  # latin small letter long s, lisu letter fa
    "K": "\ua4d8\u22ca",  # lisu letter kha, right normal factor semidirect product
    "L": "\u02e5\ua4f6\u2142",  # modifier letter extra-high tone bar, lisu letter uh, turned sans-serif capital l
    "M": "W",
    "N": "N",
    "O": "O",
    "P": "\u0500\ua4d2",  # cyrillic capital letter komi de, lisu letter pha
    "Q": "\u038c\u10e2",  # greek capital letter omicron with tonos, georgian letter tar
    "R": "\ua4e4\u1d1a",  # lisu letter za, latin letter small capital turned r
    "S": "S",
    "T": "\u22a5\ua4d5\u2534",  # up tack, lisu letter tha, box drawings light up and horizontal
    "U": "\u2229\ua4f5",  # intersection, lisu letter ue
    "V": "\u039b\ua4e5",  # greek capital letter lamda, lisu letter nga
    "W": "M",
    "X": "X",
    "Y": "\u2144\u028e",  # turned sans-serif capital y, latin small letter turned y
    "Z": "Z",
    "0": "0",
    "1": "\u0196\u21c2",  # latin capital letter iota, downwards harpoon with barb rightwards
    "2": "\u1105\u218a",  # hangul choseong rieul, turned digit two
    "3": "\u0190\u218b",  # latin capital letter open e, turned digit three
    "4": "\u3123\u07c8",  # bopomofo letter en, nko digit eight
    "5": "\u03db",  # greek small letter stigma
    "6": "9",
    "7": "\u3125",  # bopomofo letter eng
    "8": "8",
    "9": "6",
    "_": "\u203e",  # overline
    "!": "\u00a1",  # inverted exclamation mark
    "?": "\u00bf",  # inverted question mark
    "&": "\u214b",  # turned ampersand
    ".": "\u02d9",  # dot above
    ",": "'",
    "'": ",",
    "(": ")",
    ")": "(",
    "[": "]",
    "]": "[",
    "{": "}",
    "}": "{",
    "<": ">",
    ">": "<",
    "-": "-",
    "/": "/",
    ":": ":",
    "@": "@",
    "#": "#",
    "$": "$",
    "%": "%",
    "*": "*",
    "+": "+",
    "=": "=",
}


def _unflip_table() -> dict[int, str]:
    """Every flipped form back to its character; a form that two characters share keeps the first (turned y: y)."""
    table: dict[int, str] = {}
    for char, forms in FLIP.items():
        for form in forms:
            table.setdefault(ord(form), char)
    return table


UNFLIP: Final = _unflip_table()
# The characters only flipped text uses: the table's non-ASCII letters and digits (not "¡", "¿" or
# "˙", which Spanish and other prose print the right way up).
TRIGGER: Final = frozenset(
    code
    for code in UNFLIP
    if code > 0x7F and (chr(code).isalnum() or chr(code) in "\u214b\u22a5\u2200\u2229\u203e\u2534")
)
_TRIGGER_RE: Final = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(TRIGGER)) + "]")
_WORD: Final = re.compile(r"\S+")
MAX_WORDS: Final = 64  # flipped words turned per string: past it the rest is read as it stands


def _turned(text: str) -> str:
    """The text turned back the right way up: reversed, each character for the one it was flipped from."""
    return text[::-1].translate(UNFLIP)


def views(text: str) -> list[str]:
    """The text with its flipped words turned back: each alone in place, and each run of them as one."""
    if text.isascii() or _TRIGGER_RE.search(text) is None:
        return []
    words = [m for m in _WORD.finditer(text) if _TRIGGER_RE.search(m.group()) is not None][:MAX_WORDS]
    each: list[str] = []
    runs: list[str] = []
    last = run_last = 0
    run_start = -1
    for i, match in enumerate(words):
        each.extend((text[last : match.start()], _turned(match.group())))
        last = match.end()
        if run_start < 0:
            run_start = match.start()
        following = words[i + 1] if i + 1 < len(words) else None
        if following is None or text[match.end() : following.start()].strip():
            runs.extend((text[run_last:run_start], _turned(text[run_start : match.end()])))
            run_last = match.end()
            run_start = -1
    each.append(text[last:])
    runs.append(text[run_last:])
    first, second = "".join(each), "".join(runs)
    return [first] if first == second else [first, second]
