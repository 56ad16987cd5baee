"""Card verification values' names read structurally, as keys and as labels in prose (round fifteen, set N).

The CVV readers know the networks' names (cvv, cvc, cid...) and "security"/"verification" with a
code word. Writers also abbreviate, spell the letters apart and describe the value:

- **letters apart**: `c_v_v`, `C.V.V.`, `c-v-c`, `c v v` are read with single letters joined (cvv);
- **abbreviated words**, one table (ABBREVIATIONS): `sec`, `secur` for security, `verif`, `vrfy` for
  verification, `valid` for validation, `cd` for code, `val` for value, `vc` for a verification code;
- **descriptions**: the code on the back of the card (`code_on_back`, `back_of_card_digits`,
  `digits_on_back`).

A key is True when its normalised words name a CVV (the caller still asks for a card context for
the weaker names: a validation code beside `last4` and `expiration_date` is a card's). A label in
prose (PROSE_LABEL) is spliced into the scanner's CVV label pattern: the value after it is masked as
any CVV's. Text about CVVs without a code ("never store the CVV") has no digits after a label.
"""

from __future__ import annotations

import itertools
from typing import Final

# Abbreviated words and what they stand for.
ABBREVIATIONS: Final = {
    "sec": "security",
    "secur": "security",
    "verif": "verification",
    "vrfy": "verification",
    "verifn": "verification",
    "valid": "validation",
    "validn": "validation",
    "cd": "code",
    "cde": "code",
    "val": "value",
    "digs": "digits",
}
# A checking word, then what it is: a name of a CVV when a card's fields stand beside it.
_HEADS: Final = frozenset({"security", "verification", "validation"})
_TAILS: Final = frozenset({"code", "value", "digits", "number", "no", "num", "nr", "data"})
# Networks' abbreviations as letters: joined when written apart.
_LETTERED: Final = frozenset({"cvv", "cvc", "cvn", "ccv", "csc", "cvd", "cid", "cv2", "csv"})
# "card" and a verification code's short name (card_vc, card_vcode).
_CARD_SHORT: Final = frozenset({"vc", "vcode", "vcd", "cv", "sc", "scode"})
# The code on the back of the card: "back" with a code word.
_BACK_TAILS: Final = frozenset({"code", "digits", "number", "no", "num", "cvv"})


def _joined_letters(words: list[str]) -> list[str]:
    """The words with runs of single letters or digits joined (c, v, v -> cvv; c, v, 2 -> cv2)."""
    out: list[str] = []
    run = ""
    for word in words:
        if len(word) == 1:
            run += word
            continue
        if run:
            out.append(run)
            run = ""
        out.append(word)
    if run:
        out.append(run)
    return out


def normalised(words: list[str]) -> list[str]:
    """Lowercase words of a name with letters apart joined and abbreviations written out."""
    return [ABBREVIATIONS.get(w, w) for w in _joined_letters(words)]


def explicit_name(words: list[str]) -> bool:
    """True when the words (already split) spell a network's abbreviation letter by letter (c_v_v, C.V.V.)."""
    return any(w in _LETTERED for w in _joined_letters(words) if w not in words)


def cvv_name(words: list[str]) -> bool:
    """True when a name's words, read structurally, name a card verification value (see the module)."""
    if not words or len(words) > 12:
        return False
    full = normalised(words)
    if explicit_name(words):
        return True
    if any(a in _HEADS and b in _TAILS for a, b in itertools.pairwise(full)):
        return True
    if any(a == "card" and b in _CARD_SHORT for a, b in itertools.pairwise(full)):
        return True
    return "back" in full and bool(_BACK_TAILS.intersection(full))


# Labels in prose, spliced into the scanner's CVV label (an alternative of its `\b(?:...)` group):
# the networks' letters apart (C.V.V., c v c), "CSV" with a code word (the transposed letters;
# alone it is comma-separated values), a three- or four-digit code, the abbreviated security and
# verification codes (sec code, verif. code, secur. code, vrfy cd).
PROSE_LABEL: Final = (
    r"c[ ._\-]v[ ._\-][vcn2]\.?|c[ ._\-]s[ ._\-]c\.?|c[ ._\-]c[ ._\-]v\.?"
    r"|csv[ \t]*(?:code|number|no\.?|num|#)"
    r"|(?:3|4|three|four)[ \-]digit[ \-](?:security[ \-])?(?:code|number|cvv|value)"
    r"|(?:sec|secur|verif|vrfy)\.?[ _\-]?(?:code|cd|value|val|digits)"
)
