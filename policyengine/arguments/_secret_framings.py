"""Credentials in a format's own framing, read once the framing is undone (round fourteen, set L).

The detector reads `name=value`, `name: value` and the layouts of secret_layouts. Many formats
frame a value so that no such pair is left in the text: the value is continued on the next line,
base64-encoded, preceded by its length, printed as hex bytes or as a traced write. Each reader
here recognises one framing, rebuilds the text the framing stands for (a *view*, every piece of
it remembering the span of the original it came from) and hands the view to the detector; what
the detector finds in the view is hidden in the original:

- **Continued values**: a `.properties` backslash continuation, a YAML block scalar (`|`, `>-`),
  a TOML or Python triple-quoted string, Python's implicit concatenation (`X = (\n 'a'\n 'b'\n)`,
  `X = 'a' 'b'`), an INI or YAML value on the indented lines under an empty `key =` / `key:`.
  The view is `key=joined value`; a finding anywhere in the value hides all of its lines.
- **LDIF**: `attr:: base64` is decoded (`userPassword:: SGFy...`, `olcRootPW::`, a description
  that decodes to prose naming a password), folded lines (a leading space) are joined; a
  credential attribute whose value is no text (a binary hash) is hidden whole.
- **Length-prefixed records**: Subversion's auth cache (`K 8`/name/`V 15`/value), Redis' RESP
  (`$11`/requirepass/`$16`/value, replies in name/value pairs) and netstrings (`8:password,..`):
  the view is one `name: value` line per pair.
- **Name and value apart by a blank**: `git config --get-regexp` (`sendemail.smtppass x`): the view
  is `last part of the name=value`.
- **Hex dumps**: `xxd`, `hexdump -C`, `hexdump`/`od -x` (16-bit words), `od -c`, `od -tx1`,
  `tcpdump -X` and plain hex lines (`xxd -p`): the bytes are rebuilt from the dump (at most
  _MAX_DUMP of them per text) and read as text; a finding hides the dump lines its bytes are on.
- **Traces**: strace's `write(fd, "..", n)` fragments of one descriptor joined (C escapes undone),
  and `tcpdump -A` payload lines joined.

Every reader is behind one RE2 gate compiled at import (a text no framing can match costs one
linear pass), and each reads a bounded number of lines, records or bytes.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import codecs
import re
from collections.abc import Callable, Iterator
from typing import Any, Final

import re2

from policyengine.arguments.secret_encodings import raw_search as _raw_search

NameTest = Callable[[str], Any]
Span = tuple[int, int]
Find = Callable[[str], list[Span]]  # the detector on a view: the spans of what it finds there

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.never_capture = True

# A credential word inside a name (olcRootPW, smtppass, requirepass, DB_PASSWORD).
_STEM = r"(?i:pass|pw|secret|token|tok|tkn|key|auth|cred|psk|cookie|session|mnemonic|seed|phrase|otp|pin)"
_OPENER = r"(?:[|>][+\-0-9]{0,3}|\"\"\"|'''|\(|)"
_CONTINUED = (
    rf"(?m:{_STEM}[^\n]{{0,200}}(?:[=:][ \t]*{_OPENER}[ \t]*\r?\n|\\\r?\n))"
    rf"|{_STEM}[^\n]{{0,64}}[=:][ \t]*[rRbBuUfF]{{0,2}}(?:'[^'\n]*'|\"[^\"\n]*\")[ \t]*\+?[ \t]*[rRbBuUfF]{{0,2}}['\"]"
)
_LDIF = rf"(?m:^[A-Za-z][\w\-;.]*::[ \t]*[A-Za-z0-9+/])|(?m:^[A-Za-z][\w\-;.]*{_STEM}[\w\-;.]*:[^\n]*\r?\n [^ \n])"
_SVN = r"(?m:^K [0-9]{1,7}\r?\n[^\n]*\n(?:V|D) [0-9]{1,7}\r?\n)"
_RESP = r"(?m:^\$[0-9]{1,7}\r?\n[^\n]*\n\$-?[0-9]{1,7}\r?\n)"
_NETSTRING = rf"[0-9]{{1,5}}:[^,\n]{{0,64}}{_STEM}[^,\n]{{0,64}},[0-9]{{1,5}}:"
_GIT_CONFIG = rf"(?m:^[A-Za-z][\w\-]*\.[^\s]*{_STEM}[\w\-]*[ \t]+\S)"
_HEX_DUMP = (
    r"(?m:^[ \t]*(?:0x)?[0-9A-Fa-f]{4,16}:?[ \t]+[0-9A-Fa-f]{2,8}[ \t]+[0-9A-Fa-f]{2,8}[ \t])"
    r"|(?m:^[0-7]{7}(?:[ \t]+(?:\S|\\\S|[0-7]{3})){4})"
    r"|(?m:^(?:[ \t][0-9A-Fa-f]{2}){8})"
    r"|(?m:^[0-9A-Fa-f]{32,}\r?\n[0-9A-Fa-f]{2,})"
)
_SYSCALLS = r"(?:write|writev|pwrite64|pwritev|send|sendto|sendmsg|read|readv|pread64|recv|recvfrom|recvmsg)"
_STRACE = rf"\b{_SYSCALLS}\([0-9]{{1,6}}, "
_TCPDUMP = r"(?m:^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+ [^\n]* > [^\n]*\r?\n)"
_GATES: Final = (_CONTINUED, _LDIF, _SVN, _RESP, _NETSTRING, _GIT_CONFIG, _HEX_DUMP, _STRACE, _TCPDUMP)
GATE: Final = "|".join(f"(?:{g})" for g in _GATES)
_GATE_SEARCH = _raw_search(re2.compile(GATE, _OPTIONS))
# One program per reader: which readers a text needs (the gate above said one may).
_READER_GATES = tuple(_raw_search(re2.compile(g, _OPTIONS)) for g in _GATES)

_MAX_TEXT = 1 << 20  # longer texts are not read here (the detector still scans them)
_MAX_LINES = 4096  # lines read per reader and text
_MAX_VALUE_LINES = 64  # lines of one continued value
_MAX_DUMP = 1 << 16  # bytes rebuilt per hex dump
_MAX_RECORD = 1 << 12  # characters of one length-prefixed item


def maybe_framed(text: str) -> bool:
    """True when a text may hold a framing read here (substring tests, then one RE2 pass)."""
    if len(text) < 8 or len(text) > _MAX_TEXT:
        return False
    if "\n" not in text and "::" not in text and "(" not in text and "." not in text and ":" not in text:
        return False
    return _GATE_SEARCH(text.encode("utf-8", "surrogatepass"))


class _View:
    """A text rebuilt from pieces; each piece remembers the span of the original it stands for.

    A piece of a group (a continued value, a decoded value) is hidden whole when any of the
    group is found; a piece of no group is hidden where it is found when it is the original's
    own characters (exact), and whole otherwise.
    """

    __slots__ = ("_ends", "_exact", "_groups", "_length", "_members", "_next_group", "_origins", "_parts", "_starts")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._origins: list[Span | None] = []
        self._exact: list[bool] = []
        self._groups: list[int] = []
        self._length = 0
        self._next_group = 0
        self._members: dict[int, list[Span]] = {}

    def group(self) -> int:
        """A new group number."""
        self._next_group += 1
        return self._next_group

    def join(self, group: int, origin: Span) -> None:
        """A span hidden with a group that adds no text to the view (a folded line of a decoded value)."""
        self._members.setdefault(group, []).append(origin)

    def add(self, piece: str, origin: Span | None = None, *, exact: bool = False, group: int = 0) -> None:
        """Append a piece; `origin` is the span it stands for (None: a piece the view adds)."""
        if not piece:
            return
        if group and origin is not None:
            self.join(group, origin)
        self._parts.append(piece)
        self._starts.append(self._length)
        self._length += len(piece)
        self._ends.append(self._length)
        self._origins.append(origin)
        self._exact.append(exact and origin is not None and origin[1] - origin[0] == len(piece))
        self._groups.append(group)

    def clear(self) -> None:
        """Drop every piece (a value that turned out to be none)."""
        self.__init__()  # type: ignore[misc]  # the same empty state as a new view

    def extend(self, other: _View) -> None:
        """Append another view's pieces, its groups renumbered as groups of this one."""
        renumbered: dict[int, int] = {}
        for i, piece in enumerate(other._parts):
            group = other._groups[i]
            if group and group not in renumbered:
                renumbered[group] = self.group()
            self._parts.append(piece)
            self._starts.append(self._length)
            self._length += len(piece)
            self._ends.append(self._length)
            self._origins.append(other._origins[i])
            self._exact.append(other._exact[i])
            self._groups.append(renumbered.get(group, 0))
        for group, members in other._members.items():
            self._members.setdefault(renumbered.setdefault(group, self.group()), []).extend(members)

    def __len__(self) -> int:
        return self._length

    def text(self) -> str:
        """The rebuilt text."""
        return "".join(self._parts)

    def spans(self, hits: list[Span]) -> list[Span]:
        """The spans of the original that the hits of the view stand for."""
        out: list[Span] = []
        groups: set[int] = set()
        for start, end in hits:
            first = max(bisect.bisect_right(self._ends, start), 0)
            for i in range(first, len(self._parts)):
                if self._starts[i] >= end:
                    break
                origin = self._origins[i]
                if origin is None:
                    continue
                if self._groups[i]:
                    groups.add(self._groups[i])
                elif self._exact[i]:
                    a = max(start, self._starts[i]) - self._starts[i]
                    b = min(end, self._ends[i]) - self._starts[i]
                    out.append((origin[0] + a, origin[0] + b))
                else:
                    out.append(origin)
        for group in groups:
            out.extend(self._members.get(group, ()))
        return out


def framed_spans(text: str, find: Find, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """(start, end) of every credential a framing of the text holds (the caller checked maybe_framed)."""
    spans: list[Span] = []
    data = text.encode("utf-8", "surrogatepass")
    for gate, reader in zip(_READER_GATES, _READERS, strict=True):
        if not gate(data):
            continue
        for view in reader(text, is_name, is_placeholder, spans):
            view_text = view.text()
            if view_text:
                spans.extend(view.spans(find(view_text)))
    return spans


# ---------------------------------------------------------------------------------------------
# Lines
# ---------------------------------------------------------------------------------------------


def _lines(text: str) -> list[Span]:
    """(start, end) of the text's lines (a CR before the break not included), at most _MAX_LINES."""
    out: list[Span] = []
    pos = 0
    n = len(text)
    while pos < n and len(out) < _MAX_LINES:
        end = text.find("\n", pos)
        end = n if end < 0 else end
        out.append((pos, end - 1 if end > pos and text[end - 1] == "\r" else end))
        pos = end + 1
    return out


def _indent(text: str, start: int, end: int) -> int:
    """The width of a line's leading blanks."""
    i = start
    while i < end and text[i] in " \t":
        i += 1
    return i - start


# ---------------------------------------------------------------------------------------------
# Continued values
# ---------------------------------------------------------------------------------------------

_KEY_LINE = re.compile(r"[ \t]*(?:export[ \t]+)?([\"']?[A-Za-z_][\w.\-/\[\]]{0,127}[\"']?)[ \t]*(=|:)[ \t]*")
_LITERAL = re.compile(r"[rRbBuUfF]{0,2}(?:'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\")")
_CONCAT_GAP = re.compile(r"[ \t]*\+?[ \t]*")
_BLOCK = re.compile(r"[|>][+\-0-9]{0,3}")
_MAPPING_LINE = re.compile(r"[ \t]*(?:-[ \t]|#|;|[\"']?[\w.\-]+[\"']?[ \t]*:(?:[ \t]|$))")


def _continued(text: str, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> Iterator[_View]:
    """One view of `key=value` lines, a line for each value continued past its key's line."""
    lines = _lines(text)
    whole = _View()
    index = 0
    while index < len(lines):
        start, end = lines[index]
        index += 1
        match = _KEY_LINE.match(text, start, end)
        if match is None or not is_name(match.group(1).strip("\"'[]")):
            continue
        rest_start = match.end()
        rest = text[rest_start:end].rstrip(" \t")
        view = _View()
        group = view.group()
        following = lines[index : index + _MAX_VALUE_LINES]
        used = 0
        if rest.endswith("\\") and not rest.endswith("\\\\"):
            used = ok = _backslash(text, rest_start, rest_start + len(rest), following, view, group)
        elif (_BLOCK.fullmatch(rest) and match.group(2) == ":") or rest == "":
            used = ok = _indented(text, _indent(text, start, end), following, view, group, strict=rest == "")
        elif rest in ('"""', "'''"):
            used = ok = _triple(text, rest, following, view, group)
        elif rest == "(":
            used = ok = _parenthesised(text, following, view, group)
        else:
            ok = _LITERAL.match(rest) is not None and _literals(text, rest_start, end, view, group, needed=2)
        if ok and len(view):
            whole.add(match.group(1).strip("\"'"))
            whole.add("=")
            whole.extend(view)
            whole.add("\n")
            index += used  # the value's lines are no keys of their own
    if len(whole):
        yield whole


def _backslash(text: str, start: int, end: int, following: list[Span], view: _View, group: int) -> int:
    """A value whose lines end in a backslash: the lines are joined, their leading blanks dropped; lines used."""
    view.add(text[start : end - 1].strip(" \t"), (start, end - 1), exact=True, group=group)
    for used, (line_start, line_end) in enumerate(following, 1):
        line = text[line_start:line_end]
        stripped = line.lstrip(" \t")
        at = line_start + len(line) - len(stripped)
        more = stripped.rstrip(" \t").endswith("\\")
        piece = stripped.rstrip(" \t")[:-1] if more else stripped.rstrip(" \t")
        view.add(piece, (at, at + len(piece)), exact=True, group=group)
        if not more:
            return used
    return len(following)


def _indented(text: str, key_indent: int, following: list[Span], view: _View, group: int, *, strict: bool) -> int:
    """The lines more indented than the key (a block scalar's, or an INI/YAML continuation); lines used (0: none).

    Under an empty `key:` (strict), lines that are themselves mappings, list items or comments
    make it a section (secret_documents reads those), not a value.
    """
    found = False
    used = 0
    for n, (line_start, line_end) in enumerate(following, 1):
        if line_start == line_end or not text[line_start:line_end].strip():
            continue
        if _indent(text, line_start, line_end) <= key_indent:
            break
        if strict and _MAPPING_LINE.match(text, line_start, line_end):
            view.clear()
            return 0
        at = line_start + _indent(text, line_start, line_end)
        piece = text[at:line_end].rstrip(" \t")
        if found:
            view.add(" ")
        view.add(piece, (at, at + len(piece)), exact=True, group=group)
        found = True
        used = n
    return used


def _triple(text: str, quote: str, following: list[Span], view: _View, group: int) -> int:
    """A triple-quoted string's lines up to the closing quotes; lines used."""
    for n, (line_start, line_end) in enumerate(following):
        close = text.find(quote, line_start, line_end)
        piece_end = close if close >= 0 else line_end
        if n:
            view.add(" ")
        view.add(text[line_start:piece_end], (line_start, piece_end), exact=True, group=group)
        if close >= 0:
            return n + 1
    return len(following)


def _parenthesised(text: str, following: list[Span], view: _View, group: int) -> int:
    """Python's implicit concatenation in parentheses: the string literals up to the closing one; lines used."""
    for n, (line_start, line_end) in enumerate(following):
        stripped = text[line_start:line_end].strip()
        if stripped.startswith(")"):
            return n + 1
        at = line_start + _indent(text, line_start, line_end)
        if not _literals(text, at, line_end, view, group, needed=1):
            return n
    return len(following)


def _literals(text: str, start: int, end: int, view: _View, group: int, *, needed: int) -> bool:
    """The string literals in a row from start (`'a' 'b'`, `"a" + "b"`): their contents; False if fewer than needed."""
    pos = start
    count = 0
    while pos < end:
        literal = _LITERAL.match(text, pos, end)
        if literal is None:
            break
        body = 1 if literal.group(1) is not None else 2
        view.add(literal.group(body), literal.span(body), exact=True, group=group)
        count += 1
        pos = _CONCAT_GAP.match(text, literal.end(), end).end()  # type: ignore[union-attr]  # matches empty
    return count >= needed


# ---------------------------------------------------------------------------------------------
# LDIF
# ---------------------------------------------------------------------------------------------

_LDIF_LINE = re.compile(r"([A-Za-z][\w\-;.]*)(::?)[ \t]*")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_PRINTABLE = re.compile(r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*")


def _ldif(text: str, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> Iterator[_View]:
    """One view of the LDIF attributes: `attr: value`, base64 values decoded, folded lines joined."""
    lines = _lines(text)
    view = _View()
    index = 0
    while index < len(lines):
        start, end = lines[index]
        index += 1
        match = _LDIF_LINE.match(text, start, end)
        if match is None:
            continue
        pieces = [(match.end(), end)]
        while index < len(lines) and text.startswith(" ", lines[index][0]) and lines[index][1] > lines[index][0]:
            pieces.append((lines[index][0] + 1, lines[index][1]))  # a folded line: one leading space
            index += 1
        name = match.group(1)
        if match.group(2) == ":" and len(pieces) == 1:
            continue  # a plain one-line value: the detector reads it as written
        group = view.group()
        view.add(name)
        view.add(": ")
        if match.group(2) == ":":
            for a, b in pieces:
                view.add(text[a:b], (a, b), exact=True, group=group)
            view.add("\n")
            continue
        encoded = "".join(text[a:b] for a, b in pieces).strip()
        decoded = _decode_base64(encoded)
        if decoded is None:
            if is_name(name) and encoded:
                spans.extend(pieces)  # a credential attribute whose value is no text: hidden whole
            view.add("\n")
            continue
        view.add(decoded, pieces[0], group=group)
        for piece in pieces[1:]:
            view.join(group, piece)  # the folded lines of a decoded value are hidden with it
        view.add("\n")
    if len(view):
        yield view


def _decode_base64(encoded: str) -> str | None:
    """The text a base64 value stands for, or None when it is no base64 of text."""
    if not encoded or _BASE64.fullmatch(encoded) is None:
        return None
    try:
        data = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return decoded if _PRINTABLE.fullmatch(decoded) else None


# ---------------------------------------------------------------------------------------------
# Length-prefixed records
# ---------------------------------------------------------------------------------------------

_SVN_HEADER = re.compile(r"([KVD]) ([0-9]{1,7})\r?\n")
_RESP_HEADER = re.compile(r"\$(-?[0-9]{1,7})\r?\n")
_RESP_OTHER = re.compile(r"[*%>~][0-9]{1,7}\r?\n|[+:\-][^\r\n]*\r?\n|_\r?\n")
_NETSTRING_RE = re.compile(r"([0-9]{1,5}):")


def _item(text: str, at: int, length: int) -> Span:
    """The span of an item of `length` characters at `at` (its line when the length does not fit)."""
    line_end = text.find("\n", at)
    line_end = len(text) if line_end < 0 else line_end
    end = at + length
    if length <= _MAX_RECORD and end <= len(text) and (end == len(text) or text[end] in "\r\n"):
        return at, end
    return at, line_end - 1 if line_end > at and text[line_end - 1] == "\r" else line_end


def _pairs_view(items: list[Span], text: str) -> _View | None:
    """A view `name: value` per pair of items (names exact, each value a group)."""
    if len(items) < 2:
        return None
    view = _View()
    for i in range(0, len(items) - 1, 2):
        (a, b), (c, d) = items[i], items[i + 1]
        view.add(text[a:b].replace("\n", " "), (a, b), exact=True)
        view.add(": ")
        view.add(text[c:d].replace("\n", " "), (c, d), exact=True, group=view.group())
        view.add("\n")
    return view


def _svn(text: str, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> Iterator[_View]:
    """A view of Subversion's hash files (auth cache, props) as `name: value` lines."""
    yield from _views(_svn_items(text), text)


def _resp(text: str, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> Iterator[_View]:
    """A view of RESP bulk strings as `name: value` lines."""
    yield from _views(_resp_items(text), text)


def _netstring(text: str, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> Iterator[_View]:
    """Views of runs of netstrings as `name: value` lines."""
    yield from _views(_netstring_items(text), text)


def _views(runs: Iterator[list[Span]], text: str) -> Iterator[_View]:
    """A view of each run of items."""
    for items in runs:
        view = _pairs_view(items, text)
        if view is not None:
            yield view


def _svn_items(text: str) -> Iterator[list[Span]]:
    """The K/V items of a Subversion hash dump (`K 8\\npassword\\nV 15\\nvalue\\n`), in order."""
    items: list[Span] = []
    pos = 0
    reads = 0
    while reads < _MAX_LINES:
        match = _SVN_HEADER.search(text, pos)
        if match is None:
            break
        reads += 1
        if match.start() and text[match.start() - 1] != "\n":
            pos = match.end()
            continue
        a, b = _item(text, match.end(), int(match.group(2)))
        if match.group(1) == "D":
            items.append((a, b))
            items.append((b, b))  # a deleted key: no value
        else:
            items.append((a, b))
        pos = b
    if items:
        yield items


def _resp_items(text: str) -> Iterator[list[Span]]:
    """The bulk strings of RESP replies, in runs (a run pairs names and values: HGETALL, CONFIG GET)."""
    items: list[Span] = []
    pos = 0
    reads = 0
    while pos < len(text) and reads < _MAX_LINES:
        reads += 1
        match = _RESP_HEADER.match(text, pos)
        if match is None:
            other = _RESP_OTHER.match(text, pos)
            if other is not None:
                if text[pos] in "*%" and len(items) % 2:
                    items.append((pos, pos))  # a new array: a name left alone has no value
                pos = other.end()
                continue
            next_line = text.find("\n", pos)
            if next_line < 0:
                break
            pos = next_line + 1
            continue
        length = int(match.group(1))
        if length < 0:
            items.append((match.start(), match.start()))  # a null bulk string
            pos = match.end()
            continue
        a, b = _item(text, match.end(), length)
        items.append((a, b))
        next_line = text.find("\n", b)
        pos = len(text) if next_line < 0 else next_line + 1
    if items:
        yield items


def _netstring_items(text: str) -> Iterator[list[Span]]:
    """Runs of netstrings (`8:password,15:value,`)."""
    items: list[Span] = []
    pos = 0
    reads = 0
    while reads < _MAX_LINES:
        match = _NETSTRING_RE.search(text, pos)
        if match is None:
            break
        reads += 1
        length = int(match.group(1))
        end = match.end() + length
        if end < len(text) and text[end] == "," and length <= _MAX_RECORD:
            items.append((match.end(), end))
            pos = end + 1
            continue
        if len(items) >= 2:
            yield items
        items = []
        pos = match.end()
    if len(items) >= 2:
        yield items


# ---------------------------------------------------------------------------------------------
# git config --get-regexp: a dotted name, a blank, the value
# ---------------------------------------------------------------------------------------------

_GIT_LINE = re.compile(r"([A-Za-z][\w\-]*(?:\.[^\s]*)?)\.([A-Za-z][\w\-]*)[ \t]+(\S[^\n]*?)[ \t]*\r?$")


def _git_config(text: str, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> Iterator[_View]:
    """One view `last part=value` of the lines whose last name part names a credential."""
    view = _View()
    for start, end in _lines(text):
        match = _GIT_LINE.match(text, start, end)
        if match is None or not is_name(match.group(2)):
            continue
        view.add(match.group(2))
        view.add("=")
        view.add(match.group(3), match.span(3), exact=True, group=view.group())
        view.add("\n")
    if len(view):
        yield view


# ---------------------------------------------------------------------------------------------
# Hex dumps
# ---------------------------------------------------------------------------------------------

# An offset (hex, or od's octal), then the bytes: pairs, or groups of 4 or 8 hex digits.
_XXD = re.compile(r"[ \t]*(?:0x)?[0-9A-Fa-f]{4,16}:[ \t]+((?:[0-9A-Fa-f]{2,8}[ \t]?)+)")
_HEXDUMP_C = re.compile(r"[0-9A-Fa-f]{7,16}((?:[ \t]{1,2}[0-9A-Fa-f]{2}){1,32})(?:[ \t]+\|.*)?")
_OD_WORDS = re.compile(r"(?:[0-7]{7}|[0-9A-Fa-f]{7,8})((?:[ \t]+[0-9A-Fa-f]{4}){1,16})[ \t]*")
_OD_BYTES = re.compile(r"(?:[0-7]{7})?((?:[ \t]+[0-9A-Fa-f]{2}){1,32})[ \t]*")
_PLAIN_HEX = re.compile(r"[ \t]*((?:[0-9A-Fa-f]{2}){8,})[ \t]*")
_OD_C = re.compile(r"[0-7]{7}")
_HEX_GROUP = re.compile(r"[0-9A-Fa-f]+")
_OD_ESCAPES = {"\\0": 0, "\\a": 7, "\\b": 8, "\\t": 9, "\\n": 10, "\\v": 11, "\\f": 12, "\\r": 13}
_NOT_TEXT = bytes(b for b in range(256) if (b < 32 and b not in (9, 10, 13)) or b == 127)
_AS_BREAK = bytes.maketrans(_NOT_TEXT, b"\n" * len(_NOT_TEXT))


def _dump_line(text: str, start: int, end: int) -> tuple[bytes, Span] | None:
    """The bytes of one hex dump line and the span of its data (bytes and text columns)."""
    for pattern, swap in ((_XXD, False), (_HEXDUMP_C, False), (_OD_WORDS, True), (_OD_BYTES, False)):
        match = pattern.fullmatch(text, start, end) if pattern is not _XXD else pattern.match(text, start, end)
        if match is None:
            continue
        groups = _HEX_GROUP.findall(match.group(1))
        if any(len(g) % 2 for g in groups):
            continue
        data = bytes.fromhex("".join(groups))
        if swap:
            data = b"".join(data[i : i + 2][::-1] for i in range(0, len(data), 2))
        return data, (match.start(1), end)
    od_c = _od_c_line(text, start, end)
    if od_c is not None:
        return od_c
    match = _PLAIN_HEX.fullmatch(text, start, end)
    if match is not None and end - start >= 16:
        return bytes.fromhex(match.group(1)), match.span(1)
    return None


def _od_c_line(text: str, start: int, end: int) -> tuple[bytes, Span] | None:
    """A line of `od -c`: an octal offset, then one cell of four characters a byte."""
    if _OD_C.match(text, start, end) is None or end - start < 11:
        return None
    out = bytearray()
    pos = start + 7
    while pos < end:
        cell = text[pos : pos + 4]
        pos += 4
        value = cell.strip(" ")
        if len(cell) < 4 and not value:
            break
        if not value and cell:
            out.append(32)
        elif len(value) == 1:
            out.extend(value.encode("utf-8", "replace"))
        elif value in _OD_ESCAPES:
            out.append(_OD_ESCAPES[value])
        elif len(value) == 3 and all(c in "01234567" for c in value):
            out.append(int(value, 8) & 0xFF)
        elif value == "**":
            continue  # the rest of a multi-byte character
        else:
            return None
    return (bytes(out), (start + 7, end)) if out else None


def _utf8() -> codecs.IncrementalDecoder:
    """A UTF-8 decoder that reads a character split across lines and replaces bytes that are no UTF-8."""
    return codecs.getincrementaldecoder("utf-8")("replace")


def _hex_dump(text: str, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> Iterator[_View]:
    """One view per run of dump lines: the bytes as text (controls as line breaks), each byte standing for its line."""
    view = _View()
    decoder = _utf8()
    total = 0
    for start, end in _lines(text):
        line = _dump_line(text, start, end) if end > start else None
        if line is None:
            if text[start:end].strip() not in ("", "*") and not _OD_C.fullmatch(text, start, end):
                if len(view):
                    yield view
                view = _View()
                decoder = _utf8()
            continue
        data, origin = line
        if total + len(data) > _MAX_DUMP:
            break
        total += len(data)
        # UTF-8 read across lines (a character's bytes may be split by the dump), as the file reads.
        view.add(decoder.decode(data.translate(_AS_BREAK)), origin)
    if len(view):
        yield view


# What a dump's byte columns look like by chance: digit groups (a card) and groups of base32 letters
# and digits 2-7 (a TOTP secret written in groups); a credential in the bytes is read from them decoded.
_COLUMN_KINDS: Final = frozenset({"card-number", "totp-secret"})


def outside_dump_columns(text: str, hits: list[Any]) -> list[Any]:
    """The detector's hits less those of _COLUMN_KINDS that lie in a dump's byte columns ((kind, start, end, ...))."""
    if not any(hit[0] in _COLUMN_KINDS for hit in hits):
        return hits
    return [hit for hit in hits if hit[0] not in _COLUMN_KINDS or not hex_column(text, hit[1], hit[2])]


def hex_column(text: str, start: int, end: int) -> bool:
    """True when text[start:end] lies in the byte columns of a hex dump line (no card number is there)."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if line_end > 0 and text[line_end - 1] == "\r":
        line_end -= 1
    if line_end - line_start > 256:
        return False
    offset = text[line_start:line_end].lstrip(" \t")
    if not offset.startswith("0"):
        return False  # a dump's offsets are zero-padded
    for pattern in (_XXD, _HEXDUMP_C, _OD_WORDS, _OD_BYTES):
        match = pattern.match(text, line_start, line_end)
        if match is not None and match.start(1) <= start and end <= match.end(1):
            return True
    # od -c writes the bytes of a character outside ASCII in octal ("342 200 224").
    return start >= line_start + 7 and _od_c_line(text, line_start, line_end) is not None


# ---------------------------------------------------------------------------------------------
# Traces
# ---------------------------------------------------------------------------------------------

_STRACE_LINE = re.compile(rf"(?:\[pid +[0-9]+\] |[0-9]+ +)?(?:[0-9:.]+ )?({_SYSCALLS})\(([0-9]{{1,6}}), ")
_C_STRING = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"")
_C_ESCAPE = re.compile(r"\\(?:x([0-9A-Fa-f]{1,2})|([0-7]{1,3})|(.))")
_C_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "v": "\n", "f": "\n", "a": "\n", "b": "\n", "e": "\n"}
_TCPDUMP_HEADER = re.compile(r"[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+ .* > .*")


def _c_unescaped(body: str) -> str:
    """A C string literal's body with its escapes undone (controls as line breaks)."""

    def one(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            code = int(match.group(1), 16)
        elif match.group(2) is not None:
            code = int(match.group(2), 8) & 0xFF
        else:
            return _C_SIMPLE.get(match.group(3), match.group(3))
        return chr(code) if 32 <= code < 127 or code in (9, 10, 13) else "\n"

    return _C_ESCAPE.sub(one, body) if "\\" in body else body


def _strace(text: str, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> Iterator[_View]:
    """Views of strace's transfers, one a descriptor and direction: the strings of its calls joined."""
    streams: dict[tuple[str, str], _View] = {}
    for start, end in _lines(text):
        match = _STRACE_LINE.match(text, start, end)
        if match is None:
            continue
        direction = "in" if match.group(1).startswith(("read", "recv", "pread")) else "out"
        view = streams.setdefault((match.group(2), direction), _View())
        for literal in _C_STRING.finditer(text, match.end(), end):
            body = literal.group(1)
            view.add(_c_unescaped(body), literal.span(1), exact="\\" not in body)
    yield from streams.values()


def _tcpdump(text: str, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> Iterator[_View]:
    """Views of tcpdump -A payloads: the lines after each packet's header line joined as they came."""
    payload: _View | None = None
    for start, end in _lines(text):
        if _TCPDUMP_HEADER.fullmatch(text, start, end):
            if payload is not None and len(payload):
                yield payload
            payload = _View()
            continue
        if payload is not None:
            payload.add(text[start:end], (start, end), exact=True)
    if payload is not None and len(payload):
        yield payload


_READERS: Final = (_continued, _ldif, _svn, _resp, _netstring, _git_config, _hex_dump, _strace, _tcpdump)
