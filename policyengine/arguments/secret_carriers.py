"""Text carried in Unicode (round thirteen): characters that render as nothing, or as pictures, read back.

_normalise drops TAG characters, variation selectors and zero-width characters as invisibles and
keeps Braille cells, emoji and enclosed letters as symbols, so a token carried in them reads as
nothing or as pictures. Here each carrier run is decoded to the text it carries, and the string
with its runs decoded in place is handed back to the detector as another view of it:

- TAG characters (U+E0000-E007F, 'ASCII smuggling'): each one an ASCII character;
- variation selectors (U+FE00-FE0F, U+E0100-E01EF, 'emoji smuggling'): each one a byte;
- bits written with two invisible characters (U+200B/U+200C, U+2062/U+2063...) or two blanks (tab
  and space, no-break and en space...): eight a byte, in both bit orders and both assignments;
- Braille cells (U+2800 + the byte) and base100 emoji (U+1F3F7 + the byte): each one a byte, and
  six-dot Braille is also read as Grade 1 letters;
- enclosed letters and digits that NFKD leaves or wraps in punctuation (negative squared and
  circled letters, regional indicators, parenthesized letters, dingbat digits): the letter.

A run that carries more than a few bytes and decodes to no readable text is reported unreadable:
the engine cannot tell it from a secret. The legitimate shapes carry nothing and are left alone:
one variation selector after a character, a zero-width joiner between emoji, a flag's tag sequence
(U+1F3F4, two to six tag letters or digits, U+E007F), Braille that reads as words, emoji that are
no random bytes. All of it is behind `gate`: `isascii()` and a tab test for ASCII text, else one
RE2 search for a carrier.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from typing import Final, NamedTuple

import re2

from policyengine.arguments import _ignorables
from policyengine.arguments.secret_encodings import raw_search

MAX_RUN: Final = 1 << 16  # characters of one run decoded; the rest of a longer run is not read
MAX_VIEWS: Final = 8  # views handed back per string
_MIN_UNREADABLE = 8  # bytes an undecodable run must carry to count as a payload
_MIN_INVISIBLE_BYTES = 3  # bytes of bits in invisibles that count as a payload (24 in a row)
_MIN_RANDOM = 12  # bytes of a symbol alphabet (Braille, emoji, blanks) before its randomness is judged

# --- character classes --------------------------------------------------------------------------
_TAGS = "\U000e0000-\U000e007f"
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_FLAG = "\U0001f3f4"  # WAVING BLACK FLAG: the base of the subdivision flags' tag sequences
_CANCEL_TAG = 0xE007F
_BRAILLE = "\u2800-\u28ff"
_BASE100 = "\U0001f3f7-\U0001f4f6"
_BASE100_FIRST = 0x1F3F7
_ASCII_BLANKS = " \t"
_WIDE_BLANKS = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"


def _class_of(ranges: Iterable[tuple[int, int]]) -> str:
    """A character class body (no brackets) for inclusive code point ranges."""
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in ranges)


# Invisible characters that can write bits: the default-ignorable code points (Unicode's own list,
# _ignorables) less the variation selectors and TAG characters, which carry bytes of their own.
_INVISIBLE_RANGES: Final = tuple(
    (a, b) for a, b in _ignorables.RANGES if not (a >= 0xE0000 or (a, b) == (0xFE00, 0xFE0F))
)
_INVISIBLE = _class_of(_INVISIBLE_RANGES)
_BITS = _INVISIBLE + _ASCII_BLANKS + _WIDE_BLANKS
_INVISIBLE_SET: Final = frozenset(chr(code) for a, b in _INVISIBLE_RANGES for code in range(a, b + 1) if a < 0xE0000)

_NUMBER_WORDS: Final = {
    word: str(n)
    for n, word in enumerate(
        [
            "ZERO",
            "ONE",
            "TWO",
            "THREE",
            "FOUR",
            "FIVE",
            "SIX",
            "SEVEN",
            "EIGHT",
            "NINE",
            "TEN",
            "ELEVEN",
            "TWELVE",
            "THIRTEEN",
            "FOURTEEN",
            "FIFTEEN",
            "SIXTEEN",
            "SEVENTEEN",
            "EIGHTEEN",
            "NINETEEN",
            "TWENTY",
        ]
    )
}
_LETTER_NAME = re.compile(r"(?:LATIN |INDICATOR SYMBOL )?(CAPITAL |SMALL )?LETTER ([A-Z])$")
_NUMBER_NAME = re.compile(r"(?:DIGIT|NUMBER) ([A-Z]+)$")
# Where the enclosed letters and digits are: Enclosed Alphanumerics, the Dingbats' circled
# digits, the circled numbers of Enclosed CJK, Enclosed Alphanumeric Supplement.
_ENCLOSED_BLOCKS = ((0x2460, 0x24FF), (0x2776, 0x2793), (0x3251, 0x325F), (0x32B1, 0x32BF), (0x1F100, 0x1F1FF))


def _enclosed_text(char: str) -> str | None:
    """The letters or digits an enclosed symbol stands for, when NFKD does not give them alone."""
    folded = unicodedata.normalize("NFKD", char)
    core = "".join(c for c in folded if c.isascii() and c.isalnum())
    if core:
        return core if core != folded else None  # "(a)", "1." read as "a", "1"; "a" NFKD gives already
    name = unicodedata.name(char, "")
    letter = _LETTER_NAME.search(name)
    if letter is not None:
        return letter.group(2).lower() if letter.group(1) == "SMALL " else letter.group(2)
    number = _NUMBER_NAME.search(name)
    if number is not None and number.group(1) in _NUMBER_WORDS:
        return _NUMBER_WORDS[number.group(1)]
    return None


@functools.cache
def _enclosed_table() -> dict[int, str]:
    """The str.translate table of enclosed letters and digits (built from unicodedata names, once)."""
    table: dict[int, str] = {}
    for first, last in _ENCLOSED_BLOCKS:
        for code in range(first, last + 1):
            text = _enclosed_text(chr(code))
            if text is not None:
                table[code] = text
    return table


def _ranges(codes: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted code points merged into inclusive ranges."""
    out: list[tuple[int, int]] = []
    for code in sorted(codes):
        if out and code == out[-1][1] + 1:
            out[-1] = (out[-1][0], code)
        else:
            out.append((code, code))
    return out


_ENCLOSED = _class_of(_ranges(_enclosed_table()))

# --- the gate -----------------------------------------------------------------------------------
# Bits in ASCII blanks alternate tabs and spaces many times in a row (a byte of text has about four
# changes); indentation and aligned columns change once or twice.
ASCII_GATE: Final = r"(?:\t+ +){7}"
_GATE = "|".join(
    f"(?:{part})"
    for part in (
        f"[{_TAGS}]",
        f"[{_SELECTORS}][{_INVISIBLE}]*[{_SELECTORS}]",  # (invisibles between them are dropped: read())
        f"(?:[{_SELECTORS}][^{_SELECTORS}]*){{8}}",  # selectors one per character
        f"[{_INVISIBLE}][{_BITS}]{{7}}|[{_BITS}]{{7}}[{_INVISIBLE}]",
        f"(?:[{_INVISIBLE}][^{_INVISIBLE}]*){{16}}",  # invisibles one per character
        f"[{_WIDE_BLANKS}][{_BITS}]{{7}}|[{_BITS}]{{7}}[{_WIDE_BLANKS}]",
        f"[{_BRAILLE}](?:[{_INVISIBLE}]*[{_BRAILLE}]){{2}}|[{_BRAILLE}](?: [{_BRAILLE}]){{5}}",
        f"[{_BASE100}](?:[{_INVISIBLE}]*[{_BASE100}]){{5}}|[{_BASE100}](?: [{_BASE100}]){{5}}",
        f"[{_ENCLOSED}]",
        ASCII_GATE,
    )
)
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.never_capture = True
_OPTIONS.max_mem = 16 << 20
_gate_search = raw_search(re2.compile(_GATE, _OPTIONS))
_ascii_gate_search = raw_search(re2.compile(ASCII_GATE, _OPTIONS))


def gate(text: str) -> bool:
    """True when a string may carry text in Unicode carriers (or bits in tabs and spaces)."""
    if text.isascii():
        return "\t" in text and _ascii_gate_search(text.encode("ascii"))
    return _gate_search(text.encode("utf-8", "surrogatepass"))


# --- decoding -----------------------------------------------------------------------------------
_RUN = re.compile(
    f"(?P<tags>[{_TAGS}]+)|(?P<selectors>[{_SELECTORS}]{{2,}})|(?P<bits>[{_BITS}]{{8,}})"
    # A byte alphabet's symbols may stand apart by single spaces ("\u2867 \u2868 \u2870"): a reader drops them.
    f"|(?P<braille>[{_BRAILLE}]{{3,}}|[{_BRAILLE}](?: [{_BRAILLE}]){{5,}})"
    f"|(?P<base100>[{_BASE100}]{{6,}}|[{_BASE100}](?: [{_BASE100}]){{5,}})"
)
_FLAG_TAGS = re.compile("[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6}\U000e007f")
_ASCII_BITS = re.compile(ASCII_GATE)
_LAYOUT = str.maketrans("", "", "\t\n\r")
_FAMILY_NAMES: Final = {
    "tags": "tag characters",
    "selectors": "variation selectors",
    "bits": "invisible bits",
    "braille": "Braille bytes",
    "base100": "base100 emoji",
}


def readable(data: bytes) -> str | None:
    """The text some bytes are, when they are UTF-8 with no control character but tab and line breaks."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text and (text.isprintable() or text.translate(_LAYOUT).isprintable()) else None


def random_bytes(data: bytes) -> bool:
    """True for bytes spread as random ones are: as many distinct values and high nibbles as chance gives.

    Symbol art and runs of related emoji (Braille graphs, a row of hearts) repeat a few values or
    stay in one block; an encrypted or compressed payload does neither.
    """
    n = len(data)
    if n < _MIN_RANDOM:
        return False
    distinct = len(set(data))
    nibbles = len({b >> 4 for b in data})
    expected = 256 * (1 - (255 / 256) ** n)
    expected_nibbles = 16 * (1 - (15 / 16) ** n)
    return distinct >= 0.6 * expected and nibbles >= 0.6 * expected_nibbles


def _bytes_of(bits: str) -> bytes:
    """Bytes of a string of '0' and '1' (most significant bit first; a tail short of a byte dropped)."""
    whole = len(bits) - len(bits) % 8
    if not whole:
        return b""
    return int(bits[:whole], 2).to_bytes(whole // 8, "big")


def _binary(run: str, zero: str, one: str) -> Iterator[bytes]:
    """The bytes a run of two symbols spells: each offset up to its excess, both bit orders."""
    bits = run.translate({ord(zero): "0", ord(one): "1"})
    for offset in range(len(bits) % 8 + 1 if len(bits) % 8 else 1):
        aligned = bits[offset : offset + (len(bits) - offset) // 8 * 8]
        yield _bytes_of(aligned)
        yield _bytes_of(aligned[::-1])[::-1]  # least significant bit first


def _bit_decodings(run: str) -> Iterator[bytes]:
    """Candidate payloads of a run of invisible characters or blanks (two symbols, or three, or four)."""
    symbols = list(dict.fromkeys(run))
    if len(symbols) == 2:
        for zero, one in itertools.permutations(symbols):
            yield from _binary(run, zero, one)
    elif len(symbols) == 3:
        for other in symbols:
            # A third symbol is a separator between characters' codes (any length), or framing dropped.
            pair = [s for s in symbols if s != other]
            for zero, one in itertools.permutations(pair):
                codes = [g.translate({ord(zero): "0", ord(one): "1"}) for g in run.split(other) if g]
                if codes and all(len(code) <= 21 for code in codes):
                    values = [int(code, 2) for code in codes]
                    if max(values) < 0x110000 and not any(0xD800 <= v < 0xE000 for v in values):
                        yield "".join(map(chr, values)).encode("utf-8")
            yield from _bit_decodings(run.replace(other, ""))
    elif len(symbols) == 4:
        for order in itertools.permutations("0123"):
            digits = run.translate({ord(s): d for s, d in zip(symbols, order, strict=True)})
            whole = len(digits) - len(digits) % 4
            if whole:
                yield int(digits[:whole], 4).to_bytes(whole // 4, "big")


class _Run(NamedTuple):
    """One carrier run: where it is, its family, what it reads as (None: nothing readable), how much it carries."""

    start: int
    end: int
    family: str
    texts: tuple[str, ...]  # readable decodings, best first
    unreadable: int  # bytes of a payload no decoding reads (0: none, or no payload)


def _tag_run(run: str) -> tuple[tuple[str, ...], int]:
    """A TAG run read as ASCII (CANCEL TAG ends a sequence: dropped)."""
    text = "".join(chr(ord(c) - 0xE0000) for c in run if ord(c) != _CANCEL_TAG)
    controls = sum(1 for c in text if c < " " and c not in "\t\n\r")
    if controls * 4 >= len(text):
        return (), len(text) if len(text) >= _MIN_UNREADABLE else 0  # a code of its own in the control range
    return (text,), 0


def _selector_run(run: str) -> tuple[tuple[str, ...], int]:
    """A run of variation selectors read as bytes (VS1-16: 0-15, VS17-256: 16-255)."""
    data = bytes(ord(c) - 0xFE00 if ord(c) < 0x10000 else ord(c) - 0xE0100 + 16 for c in run)
    text = readable(data)
    if text is not None:
        return (text,), 0
    return (), len(data) if len(data) >= _MIN_UNREADABLE else 0  # no text ever puts two in a row


def _bits_run(run: str) -> tuple[tuple[str, ...], int]:
    """A run of invisible characters or blanks read as bits."""
    if run.strip(" ") != run and " " not in run.strip(" "):
        run = run.strip(" ")  # the blanks around invisibles are the sentence's, not bits
    invisible = any(c in _INVISIBLE_SET for c in run)
    if not invisible and run.isascii() and not _ASCII_BITS.search(run):
        return (), 0  # indentation, aligned columns
    if len(set(run)) < 2:
        return (), 0
    texts: dict[str, None] = {}
    for data in _bit_decodings(run[:MAX_RUN]):
        text = readable(data)
        if text is not None:
            texts[text] = None
            if len(texts) >= 4:
                break
    if texts:
        return tuple(texts), 0
    carried = len(run) // 8
    if invisible:
        return (), carried if carried >= _MIN_INVISIBLE_BYTES else 0  # no text writes 24 invisibles in a row
    symbols = list(dict.fromkeys(run))
    if len(symbols) == 2 and random_bytes(next(_binary(run[:MAX_RUN], symbols[0], symbols[1]))):
        return (), carried
    return (), 0


def _byte_alphabet(run: str, first: int) -> tuple[tuple[str, ...], int]:
    """A run of one symbol per byte (Braille cells, base100 emoji) read as bytes."""
    data = bytes(ord(c) - first for c in run[:MAX_RUN])
    text = readable(data)
    if text is not None:
        return (text,), 0
    return (), len(data) if random_bytes(data) else 0


def _flag(text: str, start: int, end: int) -> bool:
    """True for TAG characters that spell a subdivision flag after U+1F3F4 (an emoji presentation selector allowed)."""
    before = text[max(0, start - 2) : start]
    return before.endswith((_FLAG, _FLAG + "\ufe0f")) and _FLAG_TAGS.fullmatch(text, start, end) is not None


def _runs(text: str) -> Iterator[_Run]:
    """The carrier runs of a string, decoded."""
    for match in _RUN.finditer(text):
        family = match.lastgroup or ""
        run = match.group()
        if family in ("braille", "base100") and run[1:2] == " ":
            run = run[::2]  # symbols apart by single spaces
        start, end = match.span()
        if family == "tags":
            if _flag(text, start, end):
                continue  # a subdivision flag (Scotland, Wales, England...)
            texts, unreadable = _tag_run(run)
        elif family == "selectors":
            texts, unreadable = _selector_run(run)
        elif family == "bits":
            texts, unreadable = _bits_run(run)
        elif family == "braille":
            if all(c < "\u2840" for c in run):
                # Six-dot cells are literary Braille (read by _braille_letters): only what reads as bytes counts.
                data = bytes(ord(c) - 0x2800 for c in run)
                decoded = readable(data)
                texts, unreadable = ((decoded,) if decoded is not None and data.isascii() else ()), 0
            else:
                texts, unreadable = _byte_alphabet(run, 0x2800)
        else:
            texts, unreadable = _byte_alphabet(run, _BASE100_FIRST)
        if texts or unreadable:
            yield _Run(start, end, family, texts, unreadable)


# Grade 1 English Braille: the letters, a number sign before a-j for the digits, a capital sign.
_BRAILLE_LETTERS: Final = dict(
    zip(
        "\u2801\u2803\u2809\u2819\u2811\u280b\u281b\u2813\u280a\u281a\u2805\u2807\u280d\u281d\u2815\u280f"
        "\u281f\u2817\u280e\u281e\u2825\u2827\u283a\u282d\u283d\u2835",
        "abcdefghijklmnopqrstuvwxyz",
        strict=True,
    )
)
_BRAILLE_MARKS: Final = {
    "\u2800": " ",
    "\u2802": ",",
    "\u2832": ".",
    "\u2826": "?",
    "\u2816": "!",
    "\u2824": "-",
    "\u2804": "'",
    "\u2812": ":",
    "\u2806": ";",
}
_NUMBER_SIGN = "\u283c"
_CAPITAL_SIGN = "\u2820"
_DIGIT_OF_LETTER: Final = {letter: str((i + 1) % 10) for i, letter in enumerate("abcdefghij")}


_SIX_DOT_RUN = re.compile("(?<![\u2800-\u28ff])[\u2800-\u283f]{3,}(?![\u2800-\u28ff])")  # a whole run


def _braille_letters(text: str) -> str:
    """The string with its six-dot Braille read as Grade 1 letters, digits and marks (contractions dropped)."""
    return _SIX_DOT_RUN.sub(lambda match: _grade1(match.group()), text)


def _grade1(cells: str) -> str:
    """Six-dot Braille cells read as Grade 1 letters, digits and marks."""
    out: list[str] = []
    number = capital = False
    for char in cells:
        if char == _NUMBER_SIGN:
            number = True
            continue
        if char == _CAPITAL_SIGN:
            capital = True
            continue
        letter = _BRAILLE_LETTERS.get(char)
        if letter is None:
            number = capital = False
            out.append(_BRAILLE_MARKS.get(char, ""))
            continue
        if number and letter in _DIGIT_OF_LETTER:
            out.append(_DIGIT_OF_LETTER[letter])
            continue
        number = False
        out.append(letter.upper() if capital else letter)
        capital = False
    return "".join(out)


class Reading(NamedTuple):
    """What a string carries: views to scan (how, text) and unreadable payloads (how, bytes)."""

    views: list[tuple[str, str]]
    unreadable: list[tuple[str, int]]


def _scattered(text: str, runs: list[_Run]) -> Iterator[tuple[str, str]]:
    """Views of carriers written one per character: every TAG, selector or invisible of the string in a row."""
    tags = [r.texts[0] for r in runs if r.family == "tags" and r.texts]
    if len(tags) > 1 and sum(map(len, tags)) >= _MIN_UNREADABLE:
        yield _FAMILY_NAMES["tags"], "".join(tags)
    selectors = [c for c in text if "\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef"]
    if len(selectors) >= _MIN_UNREADABLE and sum(r.family == "selectors" for r in runs) != 1:
        texts, _ = _selector_run("".join(selectors))
        if texts:
            yield _FAMILY_NAMES["selectors"], texts[0]
    invisibles = "".join(c for c in text if c in _INVISIBLE_SET)
    if len(invisibles) >= 16 and sum(r.family == "bits" for r in runs) != 1:
        texts, _ = _bits_run(invisibles)
        for decoded in texts[:2]:
            yield _FAMILY_NAMES["bits"], decoded


_DROP_INVISIBLE: Final = dict.fromkeys(map(ord, _INVISIBLE_SET))


def read(text: str) -> Reading:
    """The views of a string with its carriers decoded, and the payloads that decode to nothing readable."""
    reading = _read(text)
    stripped = text.translate(_DROP_INVISIBLE)
    if stripped != text and len(stripped) > 1:
        # Invisibles between the symbols of a run (a zero-width space after each Braille cell) are dropped.
        more = _read(stripped)
        seen = {view for _, view in reading.views}
        reading.views.extend(view for view in more.views if view[1] not in seen and view[1] != stripped)
        reading.unreadable.extend(more.unreadable)
        del reading.views[MAX_VIEWS:]
    return reading


def _read(text: str) -> Reading:
    """read() of one string as written."""
    runs = list(_runs(text))
    enclosed = _enclosed_table()
    views: dict[str, str] = {}
    unreadable = [(_FAMILY_NAMES[r.family], r.unreadable) for r in runs if r.unreadable]
    decoded = [r for r in runs if r.texts]
    if decoded:
        how = ", ".join(dict.fromkeys(_FAMILY_NAMES[r.family] for r in decoded))
        for pad in ("", " "):
            # Glued (a token begun in sight and ended in tags), then apart (a word boundary before a prefix).
            parts: list[str] = []
            at = 0
            for r in decoded:
                parts.extend((text[at : r.start], pad, r.texts[0], pad))
                at = r.end
            parts.append(text[at:])
            views.setdefault("".join(parts).translate(enclosed), how)
        for r in decoded:
            for other in r.texts[1:]:
                views.setdefault(other, _FAMILY_NAMES[r.family])  # other bit orders or assignments alone
    folded = text.translate(enclosed)
    if folded != text:
        views.setdefault(folded, "enclosed letters")
    if any("\u2800" <= c < "\u2840" for c in text):
        letters = _braille_letters(text)
        if letters != text:
            views.setdefault(letters.translate(enclosed), "Braille letters")
    for how, view in _scattered(text, runs):
        if view:
            views.setdefault(view, how)
    views.pop(text, None)
    return Reading([(how, view) for view, how in itertools.islice(views.items(), MAX_VIEWS)], unreadable)


def hits(text: str, scan: Callable[[str], list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """(kind, excerpt) of what the detector (`scan`) finds in the views of a string, and its unreadable payloads."""
    reading = read(text)
    found: list[tuple[str, str]] = [
        (f"possibly secret (unreadable {how})", f"…({size} bytes)") for how, size in reading.unreadable
    ]
    for how, view in reading.views:
        found.extend((f"{kind.partition(' (')[0]} ({how})", excerpt) for kind, excerpt in scan(view))
    return found


def decoded(text: str) -> str:
    """The string with every readable carrier run decoded in place and enclosed letters folded (for masking)."""
    view = _in_place(text)
    stripped = view.translate(_DROP_INVISIBLE)
    if stripped != view:
        again = _in_place(stripped)  # runs cut by invisibles
        if again != stripped:
            return again
    return view


def flat(text: str) -> str:
    """The string decoded in place, then each other view of it on a line of its own (for a decoded payload)."""
    return "\n".join(dict.fromkeys([_in_place(text), *(view for _, view in read(text).views)]))


def _in_place(text: str) -> str:
    """The string with its readable carrier runs decoded in place and enclosed letters folded."""
    parts: list[str] = []
    at = 0
    for r in _runs(text):
        if r.texts:
            parts.extend((text[at : r.start], r.texts[0]))
            at = r.end
    parts.append(text[at:])
    return "".join(parts).translate(_enclosed_table())
