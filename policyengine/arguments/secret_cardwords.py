"""Card numbers dictated in other languages' digit words, cut in halves or written as arithmetic (round fifteen).

The detector reads card digits spelled in English words (secret_scanner's spelled view). A card is
also dictated digit by digit in other languages, and written so that the reader puts it together:

- **digit words** of French, Spanish, German, Italian, Portuguese, Dutch, Japanese (romaji) and
  Mandarin (pinyin), one table a language (DIGIT_WORDS): a run of at least 13 words of one
  language (spaces, commas, dots, hyphens between) is read as its digits, and a window of 13-19 of
  them that is a card is reported. A language's own words only: "go" or "si" alone is English.
- **halves**: two numbers of 5 digits or more on one line, at most MAX_GAP characters apart with
  no other number between, whose digits together are a card (and neither alone), when a word
  between them joins them (half, rest, append, followed, continued...), or a card's name stands
  before them (then any filler joins them: a bar, a slash, "and").
- **a digit too many**: a number of 14-20 digits, or the digits of a decimal fraction (`0.<card>`),
  that is a card without its first (or last) digit or its `0.`, when a phrase near it says to drop,
  ignore or skip that digit ("drop the 0.", "ignore the leading 9").
- **powers of ten**: a sum whose terms carry a power of ten (`4024 * 10^12 + 205897811260`,
  `4485e12 + 160494036609`, `10**12`), evaluated; a card's value is reported (secret_cardforms
  reads sums of plain integers).

Every reader is bounded (MAX_READS candidates a text) and sits behind GATE. Numbers without these
cues stay numbers: two ids in a post pass Luhn one time in ten.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Final

_Hit = tuple[str, int, int, str]

# Digit words by language (lowercase; accented and plain spellings).
DIGIT_WORDS: Final[dict[str, dict[str, int]]] = {
    "french": {
        "zéro": 0, "zero": 0, "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6,
        "sept": 7, "huit": 8, "neuf": 9,
    },
    "spanish": {
        "cero": 0, "uno": 1, "un": 1, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6,
        "siete": 7, "ocho": 8, "nueve": 9,
    },
    "german": {
        "null": 0, "eins": 1, "ein": 1, "zwei": 2, "zwo": 2, "drei": 3, "vier": 4, "fünf": 5, "fuenf": 5, "funf": 5,
        "sechs": 6, "sieben": 7, "acht": 8, "neun": 9,
    },
    "italian": {
        "zero": 0, "uno": 1, "due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sei": 6, "sette": 7, "otto": 8,
        "nove": 9,
    },
    "portuguese": {
        "zero": 0, "um": 1, "uma": 1, "dois": 2, "duas": 2, "três": 3, "tres": 3, "quatro": 4, "cinco": 5,
        "seis": 6, "sete": 7, "oito": 8, "nove": 9,
    },
    "dutch": {
        "nul": 0, "een": 1, "één": 1, "twee": 2, "drie": 3, "vier": 4, "vijf": 5, "zes": 6, "zeven": 7,
        "acht": 8, "negen": 9,
    },
    "japanese": {
        "zero": 0, "rei": 0, "maru": 0, "ichi": 1, "ni": 2, "san": 3, "yon": 4, "shi": 4, "go": 5,
        "roku": 6, "nana": 7, "shichi": 7, "hachi": 8, "kyuu": 9, "kyū": 9, "kyu": 9, "ku": 9,
    },
    "mandarin": {
        "ling": 0, "líng": 0, "yi": 1, "yī": 1, "yao": 1, "yāo": 1, "er": 2, "èr": 2, "liang": 2,
        "liǎng": 2, "san": 3, "sān": 3, "si": 4, "sì": 4, "wu": 5, "wǔ": 5, "liu": 6, "liù": 6, "qi": 7,
        "qī": 7, "ba": 8, "bā": 8, "jiu": 9, "jiǔ": 9,
    },
}  # fmt: skip

MIN_WORDS: Final = 13  # a card's shortest length
MAX_GAP: Final = 40  # characters between two halves
MAX_READS: Final = 64  # candidates read per text and reader
_MAX_TEXT: Final = 1 << 16
_SEP: Final = r"[ \t,.\-/]{1,3}"


def _alternation(words: object) -> str:
    """The words as one alternation, longest first."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))  # type: ignore[call-overload]


_ALL_WORDS: Final = _alternation({w for table in DIGIT_WORDS.values() for w in table})
# Words and what stands between them, read once (linear: no backtracking over long runs of words).
_WORD: Final = re.compile(r"[^\W\d_]+")
_SEP_RE: Final = re.compile(_SEP)
_MAX_WORDS: Final = 20000  # words read per text

_CARD_WORD: Final = (
    r"(?i:card|visa|master ?card|amex|discover|maestro|\bpan\b|\bcc\b|carte|tarjeta|karte|cart[aã]o|kaart|carta)"
)
_CARD_WORD_RE: Final = re.compile(_CARD_WORD)
# Words that join two halves. Not "then", "next", "end", "last": a date range or two timestamps
# ("start=20261204 end=20261205") would join into a card one time in ten.
_JOIN: Final = re.compile(
    r"(?i)\b(?:half|halves|rest|remaining|remainder|append|appended|followed|continued|cont|concat|concatenated)\b"
)
# A phrase that tells the reader to take a digit away ("drop the 0.", "ignore the leading 9"), near the number.
_DROP: Final = re.compile(
    r"(?i)\b(?:ignore|drop|remove|skip|strip|discard|omit|delete|cut|minus)\b[^.\n]{0,16}?"
    r"(?:\b(?:leading|trailing|first|last|extra|initial|final)\b|\b0\.|\bdigit|\b[0-9]\b)"
)
_DROP_REACH: Final = 60  # characters from the number to the phrase

_NUMBER: Final = re.compile(r"[0-9]+")
_FRACTION: Final = re.compile(r"(?<![0-9.])0\.([0-9]{13,19})(?![0-9])")
# A power of ten after a term: "* 10^12", "x 10**12", "e12" (the exponent captured in _POWER_TERM).
_POWER: Final = r"[ \t]*(?:[*x\xd7\xb7][ \t]*10[ \t]*(?:\^|\*\*)[ \t]*([0-9]{1,2})|[eE]\+?([0-9]{1,2}))"
_TERM: Final = rf"\(?[ \t]*[0-9]{{1,19}}(?:{_POWER.replace('([0-9]', '(?:[0-9]')})?[ \t]*\)?"
_POWER_SUM: Final = re.compile(rf"(?<![0-9.])({_TERM}(?:[ \t]*[-+][ \t]*{_TERM}){{1,3}})(?![0-9.])")
_POWER_TERM: Final = re.compile(rf"([-+]?)[ \t]*\(?[ \t]*([0-9]{{1,19}})(?:{_POWER})?")

# The gate (RE2, also the prefilter's): four digit words in a row, two long numbers near, a long
# number, a decimal fraction of a card's length, a power of ten.
GATE: Final = (
    rf"(?i:(?:\b(?:{_ALL_WORDS})\b{_SEP}){{3}}\b(?:{_ALL_WORDS})\b)"
    r"|[0-9]{5}[^0-9\n]{1,40}[0-9]{5}|[0-9]{14}|0\.[0-9]{13}"
    r"|[0-9][ \t]*[*x\xd7\xb7][ \t]*10[ \t]*(?:\^|\*\*)[ \t]*[0-9]|[0-9][eE]\+?[0-9]{1,2}[ \t]*[-+][ \t]*\(?[0-9]"
)


def _windows(digits: str, is_card: Callable[[str], bool]) -> str | None:
    """The first window of 13-19 digits that is a card, or None."""
    for start in range(len(digits) - MIN_WORDS + 1):
        for end in range(start + MIN_WORDS, min(len(digits), start + 19) + 1):
            if is_card(digits[start:end]):
                return digits[start:end]
    return None


def _word_runs(text: str) -> list[list[re.Match[str]]]:
    """Runs of two words or more with a separator between each two (candidates for digit words)."""
    runs: list[list[re.Match[str]]] = []
    run: list[re.Match[str]] = []
    for n, match in enumerate(_WORD.finditer(text)):
        if n >= _MAX_WORDS:
            break
        if run and not _SEP_RE.fullmatch(text, run[-1].end(), match.start()):
            if len(run) >= MIN_WORDS:
                runs.append(run)
            run = []
        run.append(match)
    if len(run) >= MIN_WORDS:
        runs.append(run)
    return runs


def word_hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """Cards dictated in one language's digit words: a run of MIN_WORDS or more of one table's words."""
    hits: list[_Hit] = []
    for run in _word_runs(text):
        lowered = [m.group().lower() for m in run]
        for language, table in DIGIT_WORDS.items():
            start = 0
            while start < len(run):
                end = start
                while end < len(run) and lowered[end] in table:
                    end += 1
                if end - start >= MIN_WORDS:
                    card = _windows("".join(str(table[w]) for w in lowered[start : start + 64]), is_card)
                    span = (run[start].start(), run[end - 1].end())
                    if card is not None and not any(h[1] < span[1] and span[0] < h[2] for h in hits):
                        hits.append((f"card-number (spelled in {language})", span[0], span[1], card))
                start = end + 1
            if len(hits) >= MAX_READS:
                return hits
    return hits


def _standalone(text: str) -> list[re.Match[str]]:
    """Numbers that are numbers of their own: no letter glued to them, no decimal point or date mark inside."""
    out: list[re.Match[str]] = []
    for n, match in enumerate(_NUMBER.finditer(text)):
        if n >= 4 * MAX_READS:
            break
        start, end = match.span()
        before, after = text[start - 1 : start], text[end : end + 1]
        if (before.isascii() and before.isalpha()) or (after.isascii() and after.isalpha()):
            continue
        out.append(match)
    return out


def _decimal_part(text: str, number: re.Match[str]) -> bool:
    """True when the number is a part of a decimal (1.5, 3.14159): a point and a digit touch it."""
    start, end = number.span()
    return (text[start - 1 : start] == "." and text[start - 2 : start - 1].isdigit()) or (
        text[end : end + 1] == "." and text[end + 1 : end + 2].isdigit()
    )


def half_hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """Cards cut in two halves joined by words, a bar or a slash (see the module)."""
    hits: list[_Hit] = []
    numbers = _standalone(text)
    for a, b in itertools.pairwise(numbers):
        first, second = a.group(), b.group()
        between = text[a.end() : b.start()]
        if len(first) < 5 or len(second) < 5 or not 13 <= len(first) + len(second) <= 19:
            continue
        if len(between) > MAX_GAP or "\n" in between or between.strip() in ("", ".", ",", "-"):
            continue  # a plain separator is the card reader's; a decimal point or a range is no join
        if _decimal_part(text, a) or _decimal_part(text, b):
            continue
        if is_card(first) or is_card(second) or not is_card(first + second):
            continue
        # A card's name before them joins any filler (a bar, a slash); else a joining word must.
        named = _CARD_WORD_RE.search(text, max(0, a.start() - 80), a.start()) is not None
        if named or _JOIN.search(between) or _JOIN.search(text, max(0, a.start() - 24), a.start()):
            hits.append(("card-number (halves)", a.start(), b.end(), first + second))
        if len(hits) >= MAX_READS:
            break
    return hits


def _told_to_drop(text: str, start: int, end: int) -> bool:
    """True when a phrase near text[start:end] says to take a digit away."""
    return _DROP.search(text[max(0, start - _DROP_REACH) : end + _DROP_REACH]) is not None


def extra_digit_hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """Cards with a digit too many, or as a fraction's digits, when a phrase near says to drop it."""
    if _DROP.search(text) is None:
        return []
    hits: list[_Hit] = []
    for match in _standalone(text):
        digits = match.group()
        if not 14 <= len(digits) <= 20 or is_card(digits) or not _told_to_drop(text, match.start(), match.end()):
            continue
        card = next((d for d in (digits[1:], digits[:-1]) if is_card(d)), None)
        if card is not None:
            hits.append(("card-number (a digit too many)", match.start(), match.end(), card))
        if len(hits) >= MAX_READS:
            return hits
    for n, match in enumerate(_FRACTION.finditer(text)):
        if n >= MAX_READS:
            break
        if is_card(match.group(1)) and _told_to_drop(text, match.start(), match.end()):
            hits.append(("card-number (fraction)", match.start(), match.end(), match.group(1)))
    return hits


def power_hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """Cards written as sums with powers of ten."""
    hits: list[_Hit] = []
    for n, match in enumerate(_POWER_SUM.finditer(text)):
        if n >= MAX_READS:
            break
        total = 0
        powered = False
        for sign, number, caret, exponent in _POWER_TERM.findall(match.group(1)):
            power = caret or exponent
            powered = powered or bool(power)
            term = int(number) * 10 ** int(power or 0)
            total += -term if sign == "-" else term
        value = str(total)
        if powered and total > 0 and is_card(value):
            hits.append(("card-number (power sum)", match.start(), match.end(), value))
    return hits


def hits(text: str, is_card: Callable[[str], bool]) -> list[_Hit]:
    """(kind, start, end, card digits) of each card this module reads (see the module)."""
    if len(text) > _MAX_TEXT:
        text = text[:_MAX_TEXT]
    return [
        *word_hits(text, is_card),
        *half_hits(text, is_card),
        *extra_digit_hits(text, is_card),
        *power_hits(text, is_card),
    ]
