"""Short runs of character codes (round fourteen): a credential written as 8 or more codes in one base.

The readers of round six and eight (secret_scanner's char codes, Morse and hex bytes, secret_encodings'
byte lists) want 16 codes or more and a few prefixes; a password of 8 to 15 characters, or a token
behind a prefix they do not know, went out as:

- **binary octets**: `01000011 01101111 ...` (or glued: `0100001101101111...`);
- **decimal codes**: `67 111 112`, `67,111,112`, `[67, 111, ...]`, `String.fromCharCode(67, 111, ...)`;
- **hex bytes**: `0x43, 0x6f`, `0x43u8`, `\\x43\\x6f`, `%u0043%u006f`, `=43=6F` (quoted-printable),
  `"43", "6f"` (a list of hex strings), `43 6f 70` (bare pairs apart);
- **octal escapes**: `\\103\\157` (printf, C) and `\\0103\\0157` (echo -e);
- **Morse code**: `-.-. --- .--. ...` with ITU punctuation, `/` or `|` between words.

One reader finds a run of codes in one base with one separator throughout (`runs`), and decodes it;
the detector judges what it spells (a shape, a key, an assignment) and, as a word told in code,
whether the word is shaped like a password (`secret_scanner._encoded_password`). The scanner
decides, not this module: a run that spells "hello" or a sentence is no finding.

GATE is one RE2 alternative of the detector's prefilter: a text with no run of eight codes costs
nothing more. Runs are read at most MAX_RUNS per text and MAX_CODES codes each.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Final

MIN_CODES: Final = 8  # a password of eight characters
MAX_CODES: Final = 512  # codes decoded per run: a longer run is read from its start (a key fits)
MAX_RUNS: Final = 16  # runs read per text

# Separators: blanks, a line break, or a comma, semicolon or bar with blanks around it (a list), one
# kind throughout; hex pairs also by ':' or '-' (as a dump or a fingerprint writes them).
_LIST_SEP = r"[ \t]*[,;|][ \t]*|[ \t]*\r?\n[ \t]*|[ \t]+"
_HEX_SEP = rf"{_LIST_SEP}|[:\-]"
_HEX_PREFIX = r"0[xX]|\\[xX]|%[uU]00|\\[uU]00|[uU]\+00|&#[xX]|=|%"
_HEX_SUFFIX = r"_?[uiUI]8|[hH]"  # Rust's 0x43u8 / 0x43_u8, assembler's 43h

_BINARY = re.compile(
    rf"(?<![0-9A-Za-z])(?P<p>(?:0[bB])?)[01]{{8}}(?P<s>{_LIST_SEP}|)(?P=p)[01]{{8}}(?:(?P=s)(?P=p)[01]{{8}}){{6,}}"
    r"(?![0-9A-Za-z])"
)
# Decimal codes, bare or as HTML's numeric entities (&#67;&#111;: ';' is their separator).
_DECIMAL = re.compile(
    rf"(?<![0-9A-Za-z.])(?P<p>(?:&\#)?)[0-9]{{2,3}}(?P<s>{_LIST_SEP})(?P=p)[0-9]{{2,3}}(?:(?P=s)(?P=p)[0-9]{{2,3}}){{6,}}"
    r"(?![0-9A-Za-z.])"
)
# One hex byte: a quote, a prefix, two hex digits, a suffix and the closing quote, each the same
# throughout the run (backreferences to groups that always take part, empty or not).
_HEX = re.compile(
    rf"(?<![0-9A-Za-z])(?P<q>[\"']?)(?P<p>(?:{_HEX_PREFIX})?)[0-9A-Fa-f]{{2}}(?P<x>(?:{_HEX_SUFFIX})?)(?P=q)"
    rf"(?P<s>{_HEX_SEP}|)"
    rf"(?P=q)(?P=p)[0-9A-Fa-f]{{2}}(?P=x)(?P=q)"
    rf"(?:(?P=s)(?P=q)(?P=p)[0-9A-Fa-f]{{2}}(?P=x)(?P=q)){{6,}}(?![0-9A-Za-z])"
)
_HEX_DIGITS = re.compile(rf"(?:{_HEX_PREFIX})?([0-9A-Fa-f]{{2}})(?:{_HEX_SUFFIX})?")
_OCTAL = re.compile(
    rf"\\(?P<z>0?)[0-3][0-7]{{2}}(?P<s>{_LIST_SEP}|)\\(?P=z)[0-3][0-7]{{2}}(?:(?P=s)\\(?P=z)[0-3][0-7]{{2}}){{6,}}"
)
_DECIMAL_ONLY = re.compile(r"[0-9\s,;\"']+")
_OCTAL_DIGITS = re.compile(r"\\0?([0-3][0-7]{2})")
_OCTAL_CODE = re.compile(r"[0-3][0-7]{2}")
_MORSE = re.compile(r"(?<![.\-\w])[.\-]{1,7}(?:(?:[ \t]+|[ \t]*[/|][ \t]*)[.\-]{1,7}){7,}(?![.\-\w])")
# ITU letters, digits and punctuation: each character, then its code.
_MORSE_PAIRS = (
    "A.- B-... C-.-. D-.. E. F..-. G--. H.... I.. J.--- K-.- L.-.. M-- N-. O--- P.--. Q--.- R.-. S... T- U..- "
    "V...- W.-- X-..- Y-.-- Z--.. 0----- 1.---- 2..--- 3...-- 4....- 5..... 6-.... 7--... 8---.. 9----. "
    "..-.-.- ,--..-- ?..--.. '.----. !-.-.-- /-..-. (-.--. )-.--.- &.-... :---... ;-.-.-. =-...- +.-.-. "
    '--....- _..--.- ".-..-. $...-..- @.--.-.'
)
MORSE_TABLE: Final = {pair[1:]: pair[0] for pair in _MORSE_PAIRS.split(" ")}  # code -> character

# The prefilter's alternative (RE2: no lookaround, no backreference): eight codes of one shape in a row.
GATE: Final = (
    r"(?:(?:0[bB])?[01]{8}[ \t,;|\r\n]{0,3}){7}(?:0[bB])?[01]{8}"
    rf"|(?:(?:&#)?[0-9]{{2,3}}(?:{_LIST_SEP})){{7}}(?:&#)?[0-9]{{2,3}}"
    rf"|(?:[\"']?(?:{_HEX_PREFIX})[0-9A-Fa-f]{{2}}(?:{_HEX_SUFFIX})?[\"']?(?:{_HEX_SEP})?){{7}}"
    rf"[\"']?(?:{_HEX_PREFIX})[0-9A-Fa-f]{{2}}"
    rf"|(?:[\"']?[0-9A-Fa-f]{{2}}[\"']?(?:{_HEX_SEP})){{7}}[\"']?[0-9A-Fa-f]{{2}}"
    r"|(?:\\0?[0-3][0-7]{2}[ \t,;]{0,3}){7}\\0?[0-3][0-7]{2}"
    r"|(?:[.\-]{1,7}(?:[ \t]+|[ \t]*[/|][ \t]*)){7}[.\-]{1,7}"
)


def _text(codes: list[int]) -> str | None:
    """The text the codes spell when every one is printable ASCII (a tab or line break too), else None."""
    if not all(32 <= c < 127 or c in (9, 10, 13) for c in codes):
        return None
    if codes == sorted(codes) or codes == sorted(codes, reverse=True):
        return None  # values in order are data (ages, ids, a table of steps): no word is spelled in order
    return "".join(map(chr, codes))


def _morse(run: str) -> str | None:
    """The text a Morse run spells (words apart by one blank), or None when a code is no letter."""
    out: list[str] = []
    for piece in re.split(r"([ \t]*[/|][ \t]*|[ \t]+)", run)[: 2 * MAX_CODES]:
        if not piece:
            continue
        if piece.isspace():
            continue
        if piece.strip(" \t") in ("/", "|"):
            out.append(" ")
            continue
        letter = MORSE_TABLE.get(piece)
        if letter is None:
            return None
        out.append(letter)
    return "".join(out).strip()


_MAX_RUN_TEXT: Final = 32 * MAX_CODES


def _codes(found: list[str], cut: bool) -> list[str]:
    """The first MAX_CODES codes of a run; of a run cut short, without its last (maybe partial) code."""
    return (found[:-1] if cut else found)[:MAX_CODES]


def runs(text: str) -> Iterator[tuple[str, int, int, str, bool]]:
    """(encoding, start, end, text spelled, whether case was kept) for each run of codes (MAX_RUNS at most)."""
    found = 0
    readers = (
        ("binary octets", _BINARY),
        ("char codes", _DECIMAL),
        ("hex bytes", _HEX),
        ("octal escapes", _OCTAL),
        ("morse", _MORSE),
    )
    for how, pattern in readers:
        for match in pattern.finditer(text):
            if found >= MAX_RUNS:
                return
            run = match.group()
            cut = len(run) > _MAX_RUN_TEXT  # a megabyte run is read from its start: its last code may be cut
            if cut:
                run = run[:_MAX_RUN_TEXT]
            spelled: str | None
            if pattern is _BINARY:
                spelled = _text([int(b, 2) for b in _codes(re.findall("[01]{8}", run), cut)])
            elif pattern is _DECIMAL:
                numbers = _codes(re.findall("[0-9]+", run), cut)
                if all(len(n) == 3 and _OCTAL_CODE.fullmatch(n) for n in numbers):
                    # "103 157 160": octal codes with no backslash (od -b, Python's oct()) as well
                    octal = _text([int(n, 8) for n in numbers])
                    if octal is not None and len(octal.strip()) >= MIN_CODES and found < MAX_RUNS:
                        found += 1
                        yield "octal codes", match.start(), match.end(), octal, True
                spelled = _text([int(n) for n in numbers])
            elif pattern is _HEX:
                if not match.group("p") and (not match.group("s") or _DECIMAL_ONLY.fullmatch(run)):
                    # Bare hex digits in a row are a hex string (the hex decoder's); bare pairs of decimal
                    # digits only are decimal numbers (72, 85, 91), read as such above.
                    continue
                spelled = _text([int(h, 16) for h in _codes(_HEX_DIGITS.findall(run), cut)])
            elif pattern is _OCTAL:
                spelled = _text([int(o, 8) for o in _codes(_OCTAL_DIGITS.findall(run), cut)])
            else:
                spelled = _morse(run[: max(run.rfind(" "), run.rfind("\t"), run.rfind("/")) if cut else len(run)])
            if spelled is None or len(spelled.strip()) < MIN_CODES:
                continue
            found += 1
            yield how, match.start(), match.end(), spelled, pattern is not _MORSE


_ITEM = re.compile(
    rf"(?:{_HEX_PREFIX})?[0-9A-Fa-f]{{2}}(?:{_HEX_SUFFIX})?|[0-9]{{2,3}}|[01]{{8}}|\\0?[0-3][0-7]{{2}}|[.\-]{{1,7}}"
)


def joined_items(items: list[str]) -> str | None:
    """A list of MIN_CODES or more strings that are each one code (["43", "6f", ...]) as one run of them, else None."""
    if not MIN_CODES <= len(items) <= MAX_CODES or not all(len(item) <= 8 for item in items):
        return None
    if not all(_ITEM.fullmatch(item) for item in items):
        return None
    return (" " if items[0][:1] in ".-" else ", ").join(items)


def joined_numbers(items: Sequence[object]) -> str | None:
    """A list of MIN_CODES or more integers that are each a printable code ([67, 111, ...]) as a run of codes."""
    if not MIN_CODES <= len(items) <= MAX_CODES or not all(type(i) is int and 32 <= i < 127 for i in items):
        return None
    return ", ".join(map(str, items))
