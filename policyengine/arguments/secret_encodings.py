"""Encodings and shapes the detector reads after round eight: bytes written apart, wrapped encodings, setup keys.

Each reader finds bounded candidates and hands back either text to scan again (the caller runs the
detector on it, one decoding level deeper) or a secret found by its shape:

- **Byte lists**: a run of 16 or more byte values written apart, in any separator and with any
  per-byte prefix (`67,68,70`, `0x67 0x68`, `\\x67\\x68`, `%67%68`, `&#x67&#x68`, `U+0067`,
  one per line, `41_4b_49`), read as hex and, when the values are all decimal, as decimal codes;
  and hex dump lines (`xxd`, `hexdump`, `od -x`: an offset, then hex groups) glued line by line.
- **Wrapped or grouped encodings**: a base64, base32 or hex payload cut into pieces of one width
  (wrapped at N columns, grouped by 4 or 8 with spaces, split by bars, quotes or a literal `\\n`),
  glued back and decoded; and a run of random-looking pieces (each mixing upper case, lower case
  and digits) that glue into a generated key with no prefix ("split-token").
- **Base58 and base36** words, decoded whole.
- **TOTP and 2FA setup keys**: base32 in groups of four (`z6ai kgzi pdxd py5s ...`), or a base32
  run after a setup, authenticator, TOTP, MFA, 2FA, recovery or activation key's label, and
  `otpauth://` URIs' `secret=`.
- **OpenSSL text dumps** (`openssl rsa|ec|pkey -text`): the hex lines under `priv:`,
  `privateExponent:`, `prime1:`, `prime2:`, `exponent1:`, `exponent2:`, `coefficient:`.

Every reader sits behind GATE (one RE2 alternative in the detector's prefilter and category set):
a text none of them can match costs nothing more. All readers are linear and bounded (MAX_RUNS
candidates per text and reader).
"""

from __future__ import annotations

import base64
import binascii
import bz2
import contextlib
import functools
import itertools
import lzma
import re
from collections.abc import Callable, Iterator
from typing import Any, Final, NamedTuple

import re2

from policyengine.arguments import secret_byte_codes as _byte_codes
from policyengine.arguments import secret_protocols as _protocols
from policyengine.arguments import secret_tokens as _tokens

MAX_RUNS: Final = 16  # candidates read per text and reader

# --- runs found in C ----------------------------------------------------------------------------
# A reader's `re` pattern (lookbehinds, possessive pieces) walks a megabyte of prose position by
# position in Python's engine. Its locator, an RE2 program, finds where a match can start instead:
# every match at t > 0 has a locator match at t - 1 (the locator begins with the character the
# pattern's lookbehind allows before a run, then a superset of the run's first pieces), so the
# pattern is tried only there. Same matches, same order (tests/test_secret_scanner_fastpaths.py).
_LOCATOR_OPTIONS = re2.Options()
_LOCATOR_OPTIONS.log_errors = False
_LOCATOR_OPTIONS.never_capture = True
_LOCATOR_OPTIONS.max_mem = 64 << 20
_LOCATOR_ANCHOR = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
_LOCATE_FROM = 256  # shorter texts: the pattern's own finditer costs less than a locator's calls


def _locator(pattern: str) -> Callable[[bytes, int], int] | None:
    """Where the RE2 pattern first matches in data[pos:] (its start, -1 for none), or None without the extension."""
    raw = getattr(re2.compile(pattern, _LOCATOR_OPTIONS), "_regexp", None)
    if raw is None or _LOCATOR_ANCHOR is None or not callable(getattr(raw, "Match", None)):
        return None
    match = raw.Match
    anchor = _LOCATOR_ANCHOR
    return lambda data, pos: int(match(anchor, data, pos, len(data))[0][0])


def _finditer(
    pattern: re.Pattern[str], locate: Callable[[bytes, int], int] | None, text: str
) -> Iterator[re.Match[str]]:
    """pattern.finditer(text) (a pattern that never matches empty), tried only where `locate` puts a start."""
    if locate is None or len(text) < _LOCATE_FROM or not text.isascii():
        yield from pattern.finditer(text)
        return
    data = text.encode("ascii")  # byte offsets are character offsets
    at = 0
    while at < len(text):
        match = pattern.match(text, at)  # a lookbehind still sees the text before `at`
        if match is not None:
            yield match
            at = match.end() if match.end() > at else at + 1  # (never, for the patterns given)
            continue
        before = locate(data, at)  # the character before the next possible start
        if before < 0:
            return
        at = before + 1


_MAX_WORD = 200  # base58/base36 words longer than this are data (the decode is quadratic)

# --- byte lists ---------------------------------------------------------------------------------
# One byte: an optional per-byte prefix, then two or three hex or decimal digits.
_BYTE_PREFIX = r"(?:0[xX]|\\[xX]|%|&#[xX]?|[Uu]\+0{0,2}|\\u0{0,2})"
_BYTE_SEP = r"(?:[^0-9A-Za-z\n]{1,3}|[^0-9A-Za-z\n]{0,3}\r?\n[ \t]{0,8})"
_BYTE_GATE = rf"(?:{_BYTE_PREFIX}[0-9A-Fa-f]{{2,3}}[^0-9A-Za-z]*|[0-9A-Fa-f]{{2,3}}[^0-9A-Za-z]+){{15}}"
_BYTE_RUN = re.compile(
    rf"(?<![0-9A-Za-z]){_BYTE_PREFIX}?[0-9A-Fa-f]{{2,3}}(?:(?:{_BYTE_SEP}|(?={_BYTE_PREFIX}[0-9A-Fa-f]))"
    rf"{_BYTE_PREFIX}?[0-9A-Fa-f]{{2,3}}){{15,}}(?![0-9A-Za-z])"
)
_BYTE = re.compile(rf"({_BYTE_PREFIX})?([0-9A-Fa-f]{{2,3}})")
_HEX_PREFIXES = ("0x", "0X", "\\x", "\\X", "%", "&#x", "&#X", "u+", "U+", "\\u")
# Hex dump lines: an offset (4 to 8 hex digits, ':' after it in xxd), then groups of 2 or 4 hex digits.
_DUMP_GATE = r"(?m:^[0-9A-Fa-f]{4,8}:?[ \t]+[0-9A-Fa-f]{2,4}[ \t]+[0-9A-Fa-f]{2,4}[ \t]+[0-9A-Fa-f]{2,4})"
_DUMP_LINE = re.compile(r"(?m)^[0-9A-Fa-f]{4,8}:?[ \t]+((?:[0-9A-Fa-f]{2,4}[ \t]{1,2}){1,16})")
_DUMP_GROUP = re.compile(r"[0-9A-Fa-f]{2,4}")


def byte_values(found: list[tuple[str, str]]) -> Iterator[tuple[str, bytes]]:
    """(encoding, bytes) for each way byte values (prefix, digits) read: hex, and decimal when every value is."""
    prefixed = any(prefix.startswith(_HEX_PREFIXES) for prefix, _ in found)
    values = [value for _, value in found]
    if all(len(v) == 2 for v in values):
        yield "hex bytes", bytes(int(v, 16) for v in values)
    if not prefixed and all(v.isdigit() for v in values):
        numbers = [int(v) for v in values]
        if max(numbers) < 256:
            yield "char codes", bytes(numbers)


_WINDOW = 1024  # byte values read at once; a longer run is read in windows this long, overlapping
_OVERLAP = 128


def byte_runs(text: str) -> Iterator[tuple[str, int, int, bytes]]:
    """(encoding, start, end, bytes) for the byte lists and hex dumps of a text (at most MAX_RUNS each)."""
    windows = 0
    for match in _BYTE_RUN.finditer(text):
        if windows >= MAX_RUNS:
            break
        window: list[re.Match[str]] = []
        for value in _BYTE.finditer(text, match.start(), match.end()):
            window.append(value)
            if len(window) < _WINDOW:
                continue
            windows += 1
            for how, data in byte_values([(m.group(1) or "", m.group(2)) for m in window]):
                yield how, window[0].start(), window[-1].end(), data
            if windows >= MAX_RUNS:
                break
            window = window[-_OVERLAP:]
        else:
            if len(window) >= 16:
                windows += 1
                for how, data in byte_values([(m.group(1) or "", m.group(2)) for m in window]):
                    yield how, window[0].start(), window[-1].end(), data
    lines = list(_DUMP_LINE.finditer(text))[: MAX_RUNS * 16]
    run: list[re.Match[str]] = []
    for line in [*lines, None]:
        if line is not None and (not run or text.count("\n", run[-1].end(), line.start()) <= 1):
            run.append(line)
            continue
        if len(run) >= 1:
            digits = "".join("".join(_DUMP_GROUP.findall(m.group(1))) for m in run)
            if len(digits) >= 32 and not len(digits) % 2:
                yield "hex dump", run[0].start(), run[-1].end(), bytes.fromhex(digits)
        run = [line] if line is not None else []


# --- pieces -------------------------------------------------------------------------------------
# A piece of an encoded payload or a key, in optional quotes; pieces are apart by blanks, a line
# break, a literal "\n", a bar, or quotes joined by '+', ',' or '.'.
_PIECE_BODY = r"[A-Za-z0-9+/_\-]{2,}+={0,2}"
_PIECE_SEP = r"(?:[ \t]*(?:\r?\n|\\n|\||\x1f)[ \t]*|[ \t]+|[\"'][ \t]*[+,.]?[ \t]*[\"'])"
# Candidate runs are found in C, so prose costs one regexp pass: pieces that look encoded (a digit,
# '+' or '/', or a capital after the first letter: "Z2hw", "MXFM", not "the" or "World"), or random
# (a digit and a letter, or two changes from lower to upper case), two or more apart by separators.
# Anchored at a word's start and possessive inside one: a megabyte token is read once.
_START = r"(?<![A-Za-z0-9+/_\-=])[\"']?"
_ENCODED_PIECE = r"(?>(?:[0-9+/]|[A-Za-z_\-][A-Za-z0-9_\-]*?[0-9+/A-Z])[A-Za-z0-9+/_\-]*+={0,2}+)"
_WRAPPED_RUN = re.compile(
    rf"{_START}{_ENCODED_PIECE}[\"']?(?:{_PIECE_SEP}[\"']?{_ENCODED_PIECE}[\"']?)++(?:{_PIECE_SEP}[\"']?{_PIECE_BODY}+)?"
)
_KEY_CHARS = r"[A-Za-z0-9+/_\-]"
_RANDOM_PIECE = (
    rf"(?>(?={_KEY_CHARS}*?[0-9])(?={_KEY_CHARS}*?[A-Za-z]){_KEY_CHARS}{{8,31}}+={{0,2}}+"
    rf"|(?={_KEY_CHARS}*?[a-z][A-Z]{_KEY_CHARS}*?[a-z][A-Z]){_KEY_CHARS}{{8,31}}+={{0,2}}+)"
)
_RANDOM_RUN = re.compile(
    rf"{_START}(?:{_RANDOM_PIECE})[\"']?(?:{_PIECE_SEP}[\"']?(?:{_RANDOM_PIECE})[\"']?)++(?![A-Za-z0-9+/_\-])"
)
# Their locators (see _finditer): the character before a run, then its first two pieces, widened to
# what RE2 reads (no lookaround, no possessive or lazy parts; a run's second piece cut to its start).
_ENCODED_START = r"(?:[0-9+/]|[A-Za-z_\-][A-Za-z0-9_\-]*[0-9+/A-Z])"
_RANDOM_START = (
    rf"(?:{_KEY_CHARS}*[0-9]{_KEY_CHARS}*[A-Za-z]|{_KEY_CHARS}*[A-Za-z]{_KEY_CHARS}*[0-9]"
    rf"|{_KEY_CHARS}*[a-z][A-Z]{_KEY_CHARS}*[a-z][A-Z])"
)
_BEFORE_RUN = r"[^A-Za-z0-9+/_\-=]"
_WRAPPED_LOCATE = _locator(
    rf"{_BEFORE_RUN}[\"']?{_ENCODED_START}{_KEY_CHARS}*={{0,2}}[\"']?{_PIECE_SEP}[\"']?{_ENCODED_START}"
)
_RANDOM_LOCATE = _locator(
    rf"{_BEFORE_RUN}[\"']?{_RANDOM_START}{_KEY_CHARS}*={{0,2}}[\"']?{_PIECE_SEP}[\"']?{_RANDOM_START}"
)
_PIECE = re.compile(rf"(?:{_PIECE_SEP})?[\"']?({_PIECE_BODY})")
_MAX_PIECES = 256  # pieces read per candidate run: a longer run is data, read in slices of this many
# The gates (RE2, in the detector's prefilter) ask more than the readers: values joined by line
# breaks ("file_name1\nfile_name2", "cityA\ncityB") must not send every document to the readers.
# Wrapped: three pieces in a row (or two, the last padded), each with a digit, '+' or '/', or a
# capital after a lower-case letter inside it. Random: a piece with a digit and a capital after a
# lower-case letter both, beside another piece of four characters or more.
_G = r"[A-Za-z0-9+/]"
_MARK = r"(?:[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[+/])"  # what a word or a number alone lacks
_LINE_PIECE = rf"{_G}{{2,}}{_MARK}{_G}{{2,}}"  # a wrapped line: six characters or more
_GROUP = rf"{_G}*{_MARK}{_G}*"
_LINE_SEP = r"(?:[ \t]*(?:\r?\n|\\n|\|)[ \t]*|[\"'][ \t]*[+,.]?[ \t]*[\"'])"
_WRAPPED_GATE = (
    rf"{_LINE_PIECE}[\"']?{_LINE_SEP}[\"']?{_LINE_PIECE}[\"']?{_LINE_SEP}[\"']?{_G}{{2}}"
    rf"|{_LINE_PIECE}[\"']?{_LINE_SEP}[\"']?{_G}{{2,}}="
    rf"|{_GROUP}[ \t]{{1,2}}{_GROUP}[ \t]{{1,2}}{_GROUP}[ \t]{{1,2}}{_G}{{2}}"
)
_W = r"[A-Za-z0-9+/_\-]"
_STRONG = rf"{_W}{{2,}}(?:[a-z][A-Z]{_W}*[0-9]|[0-9]{_W}*[a-z][A-Z]){_W}{{2,}}"
_RANDOM_GATE = rf"{_STRONG}={{0,2}}[\"']?{_PIECE_SEP}[\"']?{_W}{{4}}|{_W}{{8}}[\"']?{_PIECE_SEP}[\"']?{_STRONG}"
_MIN_GLUED = 16
_MIN_RANDOM_PIECE = 8
_MAX_RANDOM_PIECE = 32
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_DIGITS = re.compile(r"[0-9]")


_CASE_CHANGE = re.compile(r"[a-z][A-Z]")


def _random_piece(piece: str) -> bool:
    """True for a piece of a generated key: 8 to 31 characters, a digit and a letter, or two case changes."""
    # A piece of 32 or more is a token alone (the detector judges it whole): an SSH key's body
    # beside its type ("ssh-ed25519 AAAAC3...") is no key cut in pieces.
    if not _MIN_RANDOM_PIECE <= len(piece) < _MAX_RANDOM_PIECE:
        return False
    if _DIGITS.search(piece) and (_UPPER.search(piece) or _LOWER.search(piece)):
        return True
    return len(_CASE_CHANGE.findall(piece)) >= 2


def piece_runs(
    text: str, which: frozenset[str] = frozenset({"wrapped", "random"})
) -> Iterator[tuple[str, int, int, str]]:
    """(how, start, end, glued) for pieces of one width (wrapped) and runs of random pieces (split keys)."""
    if "grouped" in which:
        yield from grouped_runs(text)
    pairs = (
        ("wrapped", _same_width, _WRAPPED_RUN, _WRAPPED_LOCATE),
        ("random", _random_run, _RANDOM_RUN, _RANDOM_LOCATE),
    )
    for reader, run_pattern, locate in ((r, p, at) for name, r, p, at in pairs if name in which):
        for n, match in enumerate(_finditer(run_pattern, locate, text)):
            if n >= MAX_RUNS:
                break
            found = itertools.islice(_PIECE.finditer(match.group()), _MAX_PIECES * MAX_RUNS)
            pieces = [_Piece(m.start(1), m.end(1), m.group(1)) for m in found]
            for at in range(0, len(pieces), _MAX_PIECES):
                yield from reader(pieces[at : at + _MAX_PIECES], match.start())


class _Piece(NamedTuple):
    """A piece of a run: where it starts and ends in the run, and its text."""

    begin: int
    finish: int
    body: str

    def group(self) -> str:
        """The piece's text (as a match's group())."""
        return self.body

    def start(self) -> int:
        """Where the piece starts in its run."""
        return self.begin

    def end(self) -> int:
        """Where the piece ends in its run."""
        return self.finish


def _same_width(pieces: list[_Piece], base: int) -> Iterator[tuple[str, int, int, str]]:
    """Runs of three or more pieces of one width (the last may be shorter): a wrapped or grouped encoding."""
    i = 0
    while i < len(pieces):
        width = len(pieces[i].group())
        if width < 4:
            i += 1
            continue
        j = i + 1
        while j < len(pieces) and len(pieces[j].group()) == width and "=" not in pieces[j - 1].group():
            j += 1
        if j < len(pieces) and len(pieces[j].group()) < width and "=" not in pieces[j - 1].group():
            j += 1  # the last line of a wrapped payload is shorter
        run = pieces[i:j]
        glued = "".join(p.group() for p in run)
        if len(run) >= 2 and len(glued) >= _MIN_GLUED and any(_DIGITS.search(p.group()) for p in run):
            yield "wrapped", base + run[0].start(), base + run[-1].end(), glued
        i = max(j, i + 1) if len(run) >= 2 else i + 1


def _random_run(pieces: list[_Piece], base: int) -> Iterator[tuple[str, int, int, str]]:
    """Runs of two or more random-looking pieces: a key cut apart, glued back."""
    run: list[_Piece] = []
    for piece in [*pieces, None]:
        if piece is not None and _random_piece(piece.group().rstrip("=")):
            run.append(piece)
            continue
        for at in range(0, len(run) - 1, 4):
            window = run[at : at + 8]  # a key is cut in a few pieces: read eight at a time, four apart
            if len(window) >= 2:
                glued = "".join(p.group() for p in window)
                yield "split-token", base + window[0].start(), base + window[-1].end(), glued
        run = []


# --- keys cut into groups by punctuation --------------------------------------------------------
# Round thirteen (set K): a generated key cut into groups by '.', ':', ';' or ',' ("ZBcsP.qnrrj.
# 5vgz6..."), or salted with a '/' every four to six characters ("EkR01/2tHBI/Z7D26/..."), is no
# run of 32 for high entropy and no piece run (those are cut by blanks, bars and quotes): the
# receiver drops the marks. A word of groups joined by one mark is glued back and judged whole by
# the caller (high entropy, as a split key). What is made of words (a Java name, a path), of digits
# (an OID, an ISBN, a date) or of one-case hex (IPv6, MAC, a dotted serial) is no generated key once
# glued, so those identifiers stay what they are. Slashes: only a word's path whose every segment
# is short (a salted key), never a segment run inside a longer one (a base64 blob has '/' in it).
_GROUP_CHARS = r"[A-Za-z0-9+_\-]"
_GROUP_MARK = r"(?:[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z])"
_GROUP_ONE = rf"{_GROUP_CHARS}*{_GROUP_MARK}{_GROUP_CHARS}*"
_GROUPED_GATE = rf"{_GROUP_ONE}[.:;,/]{_GROUP_ONE}[.:;,/]{_GROUP_CHARS}{{2}}"
# Possessive, and never from inside a group: one pass over a megabyte without a mark.
_GROUPED_WORD = re.compile(rf"(?<!{_GROUP_CHARS}){_GROUP_CHARS}++(?:[.:;,/]{_GROUP_CHARS}++)++={{0,2}}")
_GROUP_SPLIT = re.compile(r"([.:;,/])")
_MIN_GROUPS = {"/": 4}  # other marks: 3 (a key cut in two is a host name or a pair as often)
_MAX_GROUP = {"/": 12}  # other marks: 31 (a group of 32 is a run of its own)
_GROUPED_WINDOW = 64  # characters of a long run glued and judged at a time
_MAX_GROUPED_WORD = 4096  # longer words are data


def grouped_runs(text: str) -> Iterator[tuple[str, int, int, str]]:
    """("grouped", start, end, glued) for runs of three or more groups joined by one punctuation mark."""
    found = 0
    for word in _GROUPED_WORD.finditer(text):
        if len(word.group()) > _MAX_GROUPED_WORD:
            continue
        parts = _GROUP_SPLIT.split(word.group())
        groups = parts[0::2]  # groups and marks alternate: g0 m0 g1 m1 g2 ...
        marks = parts[1::2]
        starts = list(itertools.accumulate((len(p) for p in parts[:-1]), initial=word.start()))[0::2]
        i = 0
        while i < len(marks):
            j = i
            while j + 1 < len(marks) and marks[j + 1] == marks[i]:
                j += 1
            run = range(i, j + 2)  # the groups on either side of marks i..j
            for first, last in _grouped_windows([groups[k] for k in run], marks[i]):
                if found >= MAX_RUNS * 4:
                    return
                found += 1
                a, b = run[first], run[last]
                yield "grouped", starts[a], starts[b] + len(groups[b]), "".join(groups[a : b + 1])
            i = j + 1


def _grouped_windows(groups: list[str], mark: str) -> Iterator[tuple[int, int]]:
    """(first, last) indexes of the groups of one mark's run to glue: the whole run or windows of a long one."""
    longest = _MAX_GROUP.get(mark, 31)
    while mark == "." and groups and groups[-1].isalpha() and groups[-1].islower():
        groups = groups[:-1]  # a domain's labels after a key cut into DNS labels ("<k1>.<k2>.exfil.example.net")
    if len(groups) < _MIN_GROUPS.get(mark, 3) or any(len(g.rstrip("=")) > longest for g in groups):
        return
    total = sum(len(g) for g in groups)
    if total < 32:
        return
    if total <= 2 * _GROUPED_WINDOW:
        yield 0, len(groups) - 1
        return
    first = 0
    while first < len(groups):
        last, size = first, len(groups[first])
        while size < _GROUPED_WINDOW and last + 1 < len(groups):
            last += 1
            size += len(groups[last])
        if size >= 32:
            yield first, last
        if last == len(groups) - 1:
            return
        first = max(first + 1, (first + last + 1) // 2)


# --- base58, base36 -----------------------------------------------------------------------------
_BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BASE58_INDEX = {c: i for i, c in enumerate(_BASE58_ALPHABET)}
_RADIX_GATE = r"\b[1-9A-HJ-NP-Za-km-z]{30,}\b|\b[0-9a-z]{30,}\b"
_RADIX_WORD = re.compile(r"(?<![A-Za-z0-9+/_\-])(?:[1-9A-HJ-NP-Za-km-z]{30,}|[0-9a-z]{30,})(?![A-Za-z0-9+/_\-])")
_RADIX_LOCATE = _locator(r"[^A-Za-z0-9+/_\-](?:[1-9A-HJ-NP-Za-km-z]{30}|[0-9a-z]{30})")


def _number_bytes(number: int, leading: int) -> bytes:
    """The big-endian bytes of a number, with `leading` zero bytes before them."""
    return b"\0" * leading + number.to_bytes((number.bit_length() + 7) // 8, "big")


def radix_words(text: str) -> Iterator[tuple[str, int, int, bytes]]:
    """(encoding, start, end, bytes) for base58 and base36 words (30 to _MAX_WORD characters)."""
    for n, match in enumerate(_finditer(_RADIX_WORD, _RADIX_LOCATE, text)):
        if n >= MAX_RUNS:
            break
        word = match.group()
        if len(word) > _MAX_WORD:
            continue
        if all(c in _BASE58_INDEX for c in word):
            number = 0
            for c in word:
                number = number * 58 + _BASE58_INDEX[c]
            yield "base58", match.start(), match.end(), _number_bytes(number, len(word) - len(word.lstrip("1")))
        if word.islower() or word.isdigit():
            yield "base36", match.start(), match.end(), _number_bytes(int(word, 36), 0)


# --- TOTP / 2FA setup keys, recovery codes -------------------------------------------------------
# Base32 (RFC 4648: a-z, 2-7) in groups of four, as authenticator apps show a setup key: four
# groups or more after a key's label, six or more alone; digits 2-7 in it (words have none).
_B32_GROUPS = r"[A-Za-z2-7]{4}(?:[ \t\-][A-Za-z2-7]{4}){3,31}(?:[ \t\-][A-Za-z2-7]{1,4})?"
# After a label, a recovery code's groups may hold any digit (Bitwarden: "y9tl b6up imxt ...").
_CODE_GROUPS = r"[A-Za-z0-9]{4}(?:[ \t\-][A-Za-z0-9]{4}){3,31}"
_B32_GATE = r"\b[A-Za-z2-7]{4}[ \t\-][A-Za-z2-7]{4}[ \t\-][A-Za-z2-7]{4}[ \t\-][A-Za-z2-7]{4}\b"
_B32_GROUPED = re.compile(rf"(?<![A-Za-z0-9\-]){_B32_GROUPS}(?![A-Za-z0-9\-])")
# A setup key's label: an authenticator's words, then "key", "secret", "seed" or "code" on the line.
_OTP_WORDS = (
    r"totp|hotp|otp|2fa|mfa|two[- ]factor|2-step|authenticator|authy|duo|okta|setup|set-up|activation"
    r"|enrol(?:l?ment)?|manual(?:ly)?(?:[ -]entry)?|recovery|rescue|backup|seed|shared"
)
_OTP_LABEL = (
    rf"(?i:\b(?:{_OTP_WORDS})\b[^\n]{{0,40}}?\b(?:keys?|secrets?|seeds?|codes?)\b"
    r"|\bkeys?\b[^\n]{0,12}?\bmanual(?:ly)?\b)"
)
_OTP_GATE = rf"{_OTP_LABEL}[^\n]{{0,48}}[A-Za-z0-9]{{4}}|(?i:otpauth://[^\s]{{0,200}}secret=)"
_OTP_VALUE = re.compile(
    rf"{_OTP_LABEL}(?:[ \t]*(?:is|was|for[ \t]+[^\n:]{{1,40}}))?[ \t]*[:=\-\u2013]?[ \t]*[\"'`]?"
    rf"({_B32_GROUPS}|{_CODE_GROUPS}|[A-Z2-7]{{16,128}}|[a-z2-7]{{16,128}})(?![A-Za-z0-9])"
)
_OTPAUTH = re.compile(r"(?i)otpauth://[^\s?]{1,200}\?(?:[^\s#]{0,400}?[?&])?secret=([A-Za-z2-7]{16,128})")
_B32_DIGIT = re.compile(r"[2-7]")
_GROUP_SEPARATOR = re.compile(r"[ \t\-]")


def _base32_key(value: str, *, labelled: bool) -> bool:
    """True for a base32 value shaped like a setup key: digits 2-7 in it (3 alone), no 0, 1, 8, 9."""
    body = value.replace(" ", "").replace("\t", "").replace("-", "")
    if not 16 <= len(body) <= 128 or not (body.isupper() or body.islower() or body.isdigit()):
        return False
    if labelled:
        return len(_DIGITS.findall(body)) >= 2 and not body.isdigit()
    return len(_B32_DIGIT.findall(body)) >= 3 and _BASE32_BODY.fullmatch(body) is not None


def setup_keys(text: str) -> Iterator[tuple[str, int, int, str]]:
    """(kind, start, end, key) for TOTP / 2FA setup keys and recovery codes in base32."""
    seen: set[tuple[int, int]] = set()
    for n, match in enumerate(_OTP_VALUE.finditer(text)):
        if n >= MAX_RUNS:
            break
        if _base32_key(match.group(1), labelled=True):
            seen.add(match.span(1))
            yield "totp-secret", *match.span(1), match.group(1)
    for n, match in enumerate(_OTPAUTH.finditer(text)):
        if n >= MAX_RUNS:
            break
        seen.add(match.span(1))
        yield "totp-secret", *match.span(1), match.group(1)
    for n, match in enumerate(_B32_GROUPED.finditer(text)):
        if n >= MAX_RUNS:
            break
        groups = _GROUP_SEPARATOR.split(match.group())
        if match.span() in seen or len(groups) < 6:
            continue
        with_digits = sum(1 for g in groups if _B32_DIGIT.search(g))
        if _base32_key(match.group(), labelled=False) and with_digits >= 3:
            yield "totp-secret", *match.span(), match.group()


# --- Wi-Fi keys ------------------------------------------------------------------------------
# A network's key after a Wi-Fi word ("WPA2 key for the office AP: x", "WPA2-PSK key: x", "the WPA3
# key on the lab router is x", "802.1X shared key: x", "wpa2_key=x", "WPS PIN 12345670"), and a
# Wi-Fi QR string's P: field ("WIFI:T:WPA;S:net;P:x;;"). A passphrase is 8 to 63 characters; it
# must hold a digit or a mark (words alone are the sentence going on: "WPA2 key exchange").
_WIFI_WORDS = (
    r"wpa[23]?(?:[ _\-]?(?:psk|personal|enterprise))?|psk|802\.1x|wps|wi-?fi|wlan|ssid|wireless|router"
    r"|access[ _\-]point"
)
_WIFI_SECRET = r"keys?|passphrase|password|pass|pin|psk|secret|passcode"
# Words joined by '_' count ("wpa2_key"): RE2 has no look-around, so the gate takes no boundary.
_WIFI_GATE_LABEL = rf"(?i:(?:{_WIFI_WORDS})[^\n]{{0,40}}?(?:{_WIFI_SECRET}))"
_WIFI_LABEL = (
    rf"(?i:(?<![A-Za-z0-9])(?:{_WIFI_WORDS})(?![A-Za-z0-9])[^\n]{{0,40}}?"
    rf"(?<![A-Za-z0-9])(?:{_WIFI_SECRET})(?![A-Za-z0-9]))"
)
_WIFI_GATE = rf"{_WIFI_GATE_LABEL}|WIFI:[^\n]{{0,200}}P:"
_WIFI_VALUE = re.compile(
    rf"{_WIFI_LABEL}(?:[^\n:=]{{0,40}}?(?:\bis\b|\bwas\b|:|=)|[ \t]*[:=]?)[ \t]*[\"'`]?([^\s\"'`;,]{{8,63}})"
)
_WIFI_QR = re.compile(r"WIFI:(?:[^;\n]{0,200};){0,8}?P:((?:[^;\\\n]|\\.){1,63});")
_WIFI_MARK = re.compile(r"[0-9!@#$%^&*+=?~_\-.]")


def wifi_keys(text: str) -> Iterator[tuple[str, int, int, str]]:
    """(kind, start, end, key) for Wi-Fi passphrases and WPS PINs after their label, and QR strings' P: fields."""
    for n, match in enumerate(_WIFI_VALUE.finditer(text)):
        if n >= MAX_RUNS:
            break
        value = match.group(1).rstrip(".)")
        if len(value) >= 8 and _WIFI_MARK.search(value) and not value.lower().startswith(("http", "www.")):
            yield "wifi-key", match.start(1), match.start(1) + len(value), value
    for n, match in enumerate(_WIFI_QR.finditer(text)):
        if n >= MAX_RUNS:
            break
        yield "wifi-key", *match.span(1), match.group(1)


# --- openssl -text dumps -------------------------------------------------------------------------
_OPENSSL_NAMES = r"priv|privateExponent|prime1|prime2|exponent1|exponent2|coefficient|private[ _-]?key"
_OPENSSL_GATE = rf"(?m:^[ \t]*(?i:{_OPENSSL_NAMES})[ \t]*:[ \t]*\r?\n[ \t]+[0-9A-Fa-f]{{2}}:)"
_OPENSSL_BLOCK = re.compile(
    rf"(?mi)^[ \t]*(?:{_OPENSSL_NAMES})[ \t]*:[ \t]*\r?\n"
    r"((?:[ \t]+[0-9a-f]{2}(?::[0-9a-f]{2})*:?[ \t]*(?:\r?\n|$)){1,64})"
)


_NOT_HEX = re.compile(r"[^0-9a-fA-F]")


def openssl_private_values(text: str) -> Iterator[tuple[str, int, int, str]]:
    """(kind, start, end, hex) for the private numbers of an `openssl ... -text` dump (16 bytes or more)."""
    for n, match in enumerate(_OPENSSL_BLOCK.finditer(text)):
        if n >= MAX_RUNS:
            break
        digits = _NOT_HEX.sub("", match.group(1))
        if len(digits) >= 32:
            yield "private-key (openssl text)", match.start(1), match.end(1), digits


# --- decoding helpers ---------------------------------------------------------------------------
_BASE32_BODY = re.compile(r"[A-Z2-7]+|[a-z2-7]+")
_HEX_BODY = re.compile(r"(?:[0-9a-fA-F]{2})+")


def glued_decodings(glued: str) -> Iterator[tuple[str, bytes]]:
    """(encoding, bytes) for each way glued pieces decode: hex, base32, base64 (standard or URL-safe)."""
    body = glued.rstrip("=")
    if _HEX_BODY.fullmatch(body):
        yield "hex", bytes.fromhex(body)
        return
    if _BASE32_BODY.fullmatch(body) and len(body) % 8 in (0, 2, 4, 5, 7):
        with contextlib.suppress(binascii.Error, ValueError):
            yield "base32", base64.b32decode(body.upper() + "=" * (-len(body) % 8))
    b64 = body.replace("-", "+").replace("_", "/")
    if len(b64) % 4 != 1:
        with contextlib.suppress(binascii.Error, ValueError):
            yield "base64", binascii.a2b_base64(b64 + "=" * (-len(b64) % 4), strict_mode=True)


# --- compressed streams -------------------------------------------------------------------------
# Round thirteen (set K): a .env file compressed with xz, LZMA or bzip2 and base64-encoded on one
# line carried every key it holds, since only gzip and zlib were inflated. These streams are
# decompressed as gzip and zlib are (at most `limit` bytes: a bomb costs nothing), a truncated
# stream gives what it has; a stream that does not decompress is no evidence either way.
COMPRESSED_HEADS: Final = (b"\xfd", b"B", b"]")  # xz, bzip2, LZMA-alone (0x5d: the default lc=3 lp=0 pb=2)


def decompressed(data: bytes, limit: int) -> bytes | None:
    """The bytes an xz, LZMA-alone or bzip2 stream decompresses to (at most `limit`), or None for none of them."""
    if data[:6] == b"\xfd7zXZ\x00":
        decompressor: lzma.LZMADecompressor | bz2.BZ2Decompressor = lzma.LZMADecompressor(lzma.FORMAT_XZ)
    elif data[:3] == b"BZh" and data[3:4].isdigit() and data[4:10] == b"1AY&SY":
        decompressor = bz2.BZ2Decompressor()
    elif len(data) > 13 and data[0] == 0x5D and data[1:5] in _LZMA_DICTS:
        decompressor = lzma.LZMADecompressor(lzma.FORMAT_ALONE)
    else:
        return None
    try:
        return decompressor.decompress(data, limit)
    except (lzma.LZMAError, OSError, EOFError, ValueError):
        return None


# LZMA-alone dictionary sizes (little-endian): 2^n or 2^n + 2^(n-1), as xz and 7-Zip write them.
_LZMA_DICTS: Final = frozenset(
    size.to_bytes(4, "little") for n in range(12, 31) for size in (1 << n, (1 << n) + (1 << (n - 1)))
)


_READER_GATES: Final = {
    "bytes": f"(?:{_BYTE_GATE})|(?:{_DUMP_GATE})",
    "wrapped": _WRAPPED_GATE,
    "random": _RANDOM_GATE,
    "grouped": _GROUPED_GATE,  # round thirteen: keys cut into groups by punctuation (grouped_runs)
    "radix": _RADIX_GATE,
    "setup": f"(?:{_B32_GATE})|(?:{_OTP_GATE})",
    "wifi": _WIFI_GATE,
    "openssl": _OPENSSL_GATE,
    "protocol": _protocols.GATE,
    "tokens": _tokens.GATE,  # round eleven: prefixed tokens and capability URLs by shape (secret_tokens)
    "codes": _byte_codes.GATE,  # round fourteen: eight character codes or more in one base (secret_byte_codes)
}
GATE: Final = "|".join(f"(?:{gate})" for gate in _READER_GATES.values())
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.never_capture = True
_OPTIONS.max_mem = 64 << 20
_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)


def raw_search(pattern: Any) -> Callable[[bytes], bool]:
    """'Has a match' on UTF-8 bytes: the extension's Match when the wrapper exposes it."""
    raw = getattr(pattern, "_regexp", None)
    if raw is not None and _UNANCHORED is not None and callable(getattr(raw, "Match", None)):
        match = raw.Match
        unanchored = _UNANCHORED
        return lambda data: bool(match(unanchored, data, 0, len(data))[0][0] >= 0)
    return lambda data: pattern.search(data.decode("utf-8", "surrogatepass")) is not None


_READER_SEARCH: Final = {name: raw_search(re2.compile(gate, _OPTIONS)) for name, gate in _READER_GATES.items()}


_RANDOM_SEEN: dict[str, bool] = {}  # short texts already gated: a container's values are gated twice per call
_RANDOM_SEEN_SIZE = 2048
_RANDOM_SEEN_LENGTH = 512


def random_pieces_gate(text: str) -> bool:
    """True when a text (sibling values joined by line breaks) may hold a key cut in random pieces."""
    if len(text) > _RANDOM_SEEN_LENGTH:
        return _READER_SEARCH["random"](text.encode("utf-8", "surrogatepass"))
    found = _RANDOM_SEEN.get(text)
    if found is None:
        if len(_RANDOM_SEEN) >= _RANDOM_SEEN_SIZE:
            _RANDOM_SEEN.clear()  # (a pure function's answers: dropping them costs a search each)
        found = _RANDOM_SEEN[text] = _READER_SEARCH["random"](text.encode("utf-8", "surrogatepass"))
    return found


_SET_OPTIONS = re2.Options()
_SET_OPTIONS.log_errors = False
_SET_OPTIONS.never_capture = True
_SET_OPTIONS.max_mem = 64 << 20
_READER_NAMES: Final = tuple(_READER_GATES)
_READER_SET = re2.Set.SearchSet(_SET_OPTIONS)
for _gate in _READER_GATES.values():
    _READER_SET.Add(_gate)
_READER_SET.Compile()
_SET_LIMIT = 2048  # a Set answers from its DFA alone: past this length, one search per gate (see the scanner)


def readers(text: str) -> frozenset[str]:
    """The readers whose RE2 gate matches the text: the others cannot find anything."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= _SET_LIMIT:
        return frozenset(_READER_NAMES[i] for i in _READER_SET.Match(data) or ())
    return frozenset(name for name, search in _READER_SEARCH.items() if search(data))


# --- sibling values -----------------------------------------------------------------------------
# A card or a key cut across sibling values (the items of one list, the fields of one object, one
# field of each object in a list): ["Alice", "4539", "1488", ...], [4961, 1516, 7921, 3306],
# {"title": "Co4IOqMWlPlXtDd7", "body": "DHznKFPSuDaxlbvc O0MrLwY4"}. Each value is read as its
# words when it is only words of a key's alphabet (prose breaks a run); a run must cross values.
_SIBLING_WORD = r"[A-Za-z0-9+/_\-]{1,64}+={0,2}+"
_ALL_WORDS = re.compile(rf"[ \t\r\n]*{_SIBLING_WORD}(?:[ \t\r\n]+{_SIBLING_WORD})*+[ \t\r\n]*")
_MAX_SIBLINGS = 256  # values read per container
_DIGIT_WORD = re.compile(r"[0-9]{1,8}")


def _words(value: object) -> list[str] | None:
    """The words of a sibling value read as pieces (an integer as its digits), or None when it is not pieces."""
    if type(value) is int:
        return [str(value)] if 0 < value < 10**8 else None
    if not isinstance(value, str) or not 0 < len(value) <= 256 or _ALL_WORDS.fullmatch(value) is None:
        return None
    return value.split()


def _card_window(lengths: list[int]) -> bool:
    """True for groups in a card's own layout: fours (the last 1-4), Amex's 4-6-5, or halves of 8."""
    *head, last = lengths
    return (
        (bool(head) and all(n == 4 for n in head) and 1 <= last <= 4)
        or lengths in ([4, 6, 5], [4, 6, 4])
        or (len(lengths) == 2 and lengths[0] == 8 and 5 <= lengths[1] <= 8)
    )


def _strict_issuer(digits: str) -> bool:
    """A card network's first digits: 3 to 6, or Mastercard's 2221-2720 (a year such as 2019 is not one)."""
    return "3" <= digits[0] <= "6" or 2221 <= int(digits[:4]) <= 2720


def sibling_secrets(
    values: list[object], is_card: Callable[[str], bool], is_token: Callable[[str], bool]
) -> list[tuple[set[int], str, str]]:
    """(indexes of the values, kind, secret) for each card number or key cut across sibling values."""
    words: list[tuple[int, str] | None] = []
    for i, value in enumerate(values[:_MAX_SIBLINGS]):
        found = _words(value)
        if found is None:
            words.append(None)
        else:
            words.extend((i, w) for w in found)
    out: list[tuple[set[int], str, str]] = []
    digit_run: list[tuple[int, str]] = []
    random_run: list[tuple[int, str]] = []
    for item in [*words, None]:
        if item is not None and _DIGIT_WORD.fullmatch(item[1]):
            digit_run.append(item)
        else:
            out.extend(_run_cards(digit_run, is_card))
            digit_run = []
        if item is not None and _random_piece(item[1].rstrip("=")):
            random_run.append(item)
        else:
            # The last piece of a key may be short or plain ("zmvFOwmpkhig"): read with the run.
            tail = [item] if item is not None and random_run and len(item[1]) >= 4 else []
            out.extend(_run_tokens(random_run + tail, is_token))
            random_run = []
    return out


def _run_cards(run: list[tuple[int, str]], is_card: Callable[[str], bool]) -> Iterator[tuple[set[int], str, str]]:
    """Card numbers in a run of digit words from sibling values (windows of 2 to 6 words)."""
    a = 0
    while a < len(run) - 1:
        for b in range(min(len(run), a + 6), a + 1, -1):
            window = run[a:b]
            digits = "".join(w for _, w in window)
            indexes = {i for i, _ in window}
            if (
                len(indexes) >= 2
                and 13 <= len(digits) <= 19
                and _card_window([len(w) for _, w in window])
                and _strict_issuer(digits)
                and is_card(digits)
            ):
                yield indexes, "card-number (split)", digits
                a = b - 1
                break
        a += 1


def _run_tokens(run: list[tuple[int, str]], is_token: Callable[[str], bool]) -> Iterator[tuple[set[int], str, str]]:
    """Keys in a run of random pieces from sibling values (eight pieces at a time, four apart)."""
    for at in range(0, max(len(run) - 1, 0), 4):
        window = run[at : at + 8]
        indexes = {i for i, _ in window}
        glued = "".join(w for _, w in window)
        if len(indexes) >= 2 and len(glued) >= 32 and is_token(glued):
            yield indexes, "high-entropy (split)", glued


# --- raw key material under a key's name, JSON Web Keys ---------------------------------------
# A symmetric key has no prefix: it is 16, 24, 32, 48 or 64 random bytes in hex or base64, under a
# name whose last word is "key" (aes_key, enc_key, cipher_key, xor_key, sym_key, content_key) or
# "key" then its encoding (keyHex, key_b64, key_bytes). Names that make the value an id, a hash or
# a public half void it (cache_key, key_id, public_key, idempotency_key, object_key).
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_KEY_ENDINGS = frozenset({"hex", "b64", "base64", "base64url", "bytes", "material", "raw", "data", "value"})
_NOT_KEY_WORDS = frozenset(
    {
        "id", "ids", "cache", "hash", "hashed", "idempotency", "dedup", "dedupe", "public", "pub", "object",
        "primary", "foreign", "partition", "sort", "row", "lookup", "routing", "shard", "bucket", "file",
        "path", "name", "type", "map", "host", "fingerprint", "checksum", "digest", "etag", "version",
        "s3", "storage", "index", "cursor", "page", "event", "message", "correlation", "trace", "request",
        "session", "query", "sha", "sha1", "sha256", "md5", "hmac", "commit", "entry", "item", "record",
    }
)  # fmt: skip
_KEY_BYTES = frozenset({16, 24, 32, 48, 64})
_HEX_KEY = re.compile(r"(?:0[xX])?([0-9a-fA-F]{32,128})")
_B64_KEY = re.compile(r"[A-Za-z0-9+/_\-]{22,88}={0,2}")


def _name_words(name: str) -> list[str]:
    """The words of a field name, lower case ("keyHex" -> key, hex; "AES_256_KEY" -> aes, 256, key)."""
    return [w.lower() for w in _NAME_WORDS.findall(name)]


@functools.lru_cache(maxsize=8192)
def key_name(name: str) -> bool:
    """True for a field name that names a raw key: its last word "key", or "key" then an encoding."""
    words = _name_words(name[:64])
    if not words or _NOT_KEY_WORDS.intersection(words):
        return False
    return words[-1] in ("key", "keys") or (len(words) >= 2 and words[-2] == "key" and words[-1] in _KEY_ENDINGS)


def key_material(name: str, value: str) -> bool:
    """True for raw key bytes (16-64, random) in hex or base64 under a key's name, or a token under a header's."""
    if not 20 <= len(value) <= 130:
        return False
    if not key_name(name):
        return _tokens.named_token(name, value)  # round eleven: x-vendor headers, glued "userkey"
    hex_match = _HEX_KEY.fullmatch(value)
    if hex_match is not None:
        digits = hex_match.group(1)
        return len(digits) // 2 in _KEY_BYTES and not len(digits) % 2 and _mixed_hex(digits)
    if _B64_KEY.fullmatch(value) is None:
        return False
    body = value.rstrip("=").replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:
        return False
    try:
        data = binascii.a2b_base64(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return False
    # Random bytes: a text encoded (a name, a sentence) has few distinct byte values outside ASCII.
    return len(data) in _KEY_BYTES and sum(1 for b in data if b >= 128 or b < 32) >= len(data) // 8


def _mixed_hex(digits: str) -> bool:
    """True for hex as random bytes print: digits and letters both, not one repeated character."""
    return bool(_DIGITS.search(digits)) and any(c.isalpha() for c in digits) and len(set(digits)) >= 8


# A JSON Web Key (an object with "kty"): "d", "p", "q", "dp", "dq", "qi" (RSA, EC, OKP private parts)
# and "k" (a symmetric key, kty "oct") are secrets; a public key's "n", "e", "x", "y" are not.
JWK_PRIVATE: Final = ("d", "p", "q", "dp", "dq", "qi", "k", "oth")
JWK_PUBLIC: Final = frozenset({"n", "e", "x", "y", "crv", "x5c", "x5t", "x5t#S256", "x5u"})


def jwk_private(value: dict[Any, Any]) -> list[str] | None:
    """The private members a JSON Web Key holds ([] for a public key), or None when the object is no JWK."""
    if not isinstance(value.get("kty"), str):
        return None
    return [k for k in JWK_PRIVATE if value.get(k) not in (None, "", [])]
