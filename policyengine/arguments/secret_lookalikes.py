"""Tokens in letters of other scripts that read as ASCII (round fourteen, set M): Lisu, Cherokee, small capitals.

The normalisation folds NFKD's compatibility letters and the common Cyrillic and Greek look-alikes.
Other scripts write Latin letters just as well: Lisu (U+A4EE U+A4D7 U+A4F2 U+A4EE reads AKIA),
Cherokee (U+13DA U+13E6 reads SK), Warang Citi, Coptic, Canadian syllabics, and the Latin small
capitals (U+0262 U+029C U+1D18 reads ghp). Their fold
(_lookalikes.TABLE) is generated from Unicode's TR39 confusables and the small capitals' names
(scripts/gen_lookalikes.py), not written by hand.

Most of these scripts have one case, and a small capital is both: the case of a folded word is
unknown. A word holding such a letter is read as drawn (a small capital as a small letter, a Lisu
letter as a capital: a key whose small letters were swapped for small capitals and its capitals for
Lisu keeps its mixed case), all upper case (a bar-like letter is an I) and all lower case (an l, or
an i): Lisu AKIA... is read as AKIA..., small-capital xoxb-... as xoxb-... and Cherokee SK_LIVE_... as
sk_live_....
"""

from __future__ import annotations

import re
from typing import Final

from policyengine.arguments._lookalikes import TABLE

# A bar-like letter (TR39's prototype "l") is an I among capitals and an l or an i among small letters.
_BARS: Final = frozenset(code for code, ascii_ in TABLE.items() if ascii_ == "l")
_AS_DRAWN: Final = str.maketrans(TABLE)
_UPPER: Final = str.maketrans({code: "I" if code in _BARS else ascii_.upper() for code, ascii_ in TABLE.items()})
_LOWER: Final = str.maketrans({code: ascii_.lower() for code, ascii_ in TABLE.items()})
_LOWER_I: Final = str.maketrans({code: "i" if code in _BARS else ascii_.lower() for code, ascii_ in TABLE.items()})
# One character class of every folded letter: the gate, searched only in non-ASCII text.
_LETTER: Final = re.compile("[" + "".join(re.escape(chr(code)) for code in TABLE) + "]")
_WORD: Final = re.compile(r"\S+")
MAX_WORDS: Final = 64  # words folded per string: past it the rest is read as it stands


def has_lookalike(text: str) -> bool:
    """True when a text holds a letter of the table (ASCII text holds none)."""
    return not text.isascii() and _LETTER.search(text) is not None


def views(text: str) -> list[str]:
    """The text with each word that holds a look-alike letter folded: as drawn, all upper case, all lower case."""
    if not has_lookalike(text):
        return []
    pieces: tuple[list[str], ...] = ([], [], [], [])
    last = 0
    folded = 0
    for match in _WORD.finditer(text):
        word = match.group()
        if _LETTER.search(word) is None:
            continue
        folded += 1
        if folded > MAX_WORDS:
            break
        before = text[last : match.start()]
        # As drawn: small capitals lower case, one-case scripts as TR39's prototype (mostly capitals).
        pieces[0].extend((before, word.translate(_AS_DRAWN)))
        pieces[1].extend((before, word.translate(_UPPER).upper()))
        pieces[2].extend((before, word.translate(_LOWER).lower()))
        pieces[3].extend((before, word.translate(_LOWER_I).lower()))
        last = match.end()
    return list(dict.fromkeys("".join(view) + text[last:] for view in pieces))
