"""Documents that carry a credential by their structure, read by shape (round nine, set H).

Each reader finds where a document says "this value is a credential" by its own structure, not by
a name written right before the value, and returns the value's span. secret_layouts calls them
(behind one RE2 gate), and secret_reader makes what they find a secret for the guards too.

- **Delimited tables** (CSV, TSV, `;`, Markdown and psql `|` grids): a header line with a cell
  named like a credential (any other header cells: `created (UTC)`, `#`, `2fa`, `active?`,
  `balance ($)`, non-ASCII), then rows until the text ends. Blank lines, comments, rule lines and
  footers between rows are skipped, not an end; short rows, trailing delimiters, quoted cells with
  delimiters or line breaks are rows. The reader is linear (one pass over the lines), so it has no
  cap on tables or rows that a long output could exhaust.
- **Sections named like a credential** in YAML, TOML and INI (`passwords:`, `credentials:`,
  `auth:` / `users:`, `[pins]`): every `name: value` below them (more indented, or until the next
  section) is the credential of that name, unless the name says it is about it (secret_key_words).
- **SQL dumps**: INSERT / REPLACE rows and COPY ... FROM stdin data whose column list names a
  credential column, a `(option_name, option_value)` row whose name is a credential, and an INSERT
  without a column list whose table's CREATE TABLE in the same text names one.
- **Key stores' dumps**: a key path whose last part names a credential on one line and its value
  on the next (etcdctl get, zkCli get), and a registry value row (`DefaultPassword  REG_SZ  x`).
- **Forms and accessibility snapshots**: an `<input>` whose type, name, id or label says password
  (its value), a snapshot's textbox labelled like a credential (`textbox "Password" [ref=e1]: x`,
  `textbox "Password" value="x"`), and browser automation filling such a field
  (`getByLabel('Password').fill('x')`, `page.fill("#password", "x")`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Final

from policyengine.arguments import secret_key_words as _key_words
from policyengine.arguments import secret_spoken as _spoken

NameTest = Callable[[str], Any]
Span = tuple[int, int]

_STEM = (
    r"(?i:pass|pwd|pw|secret|token|tok|tkn|key|auth|cred|psk|cookie|session|mnemonic|seed|phrase|otp|pin"
    r"|wort|senha|contras)"
)
_CELL_DELIMITER = r"[,;\t|\x{2502}\x{2503}]"  # box-drawing grids (rich, tabulate) too
_DELIMITED_HEADER = (
    rf"(?m:^[^\n]{{0,400}}(?:{_STEM}[^\n]{{0,400}}{_CELL_DELIMITER}|{_CELL_DELIMITER}[^\n]{{0,400}}{_STEM})[^\n]*\n)"
)
_SECTION = rf"(?m:^[ \t]*(?:[\"']?[\w.\-]*{_STEM}[\w.\-]*[\"']?[ \t]*:[ \t]*$|\[[^\]\n]*{_STEM}[^\]\n]*\][ \t]*$))"
_SQL = r"(?i:\b(?:insert|replace)[ \t]+(?:ignore[ \t]+)?into\b|\bcopy[ \t]+[\w.\"`]+[ \t]*\()"
_KEY_PATH = rf"(?m:^[^\n]{{0,200}}/[\w.\-]*{_STEM}[\w.\-]*[ \t]*\r?\n)"
_REGISTRY = r"(?i:[ \t]REG_(?:SZ|EXPAND_SZ|MULTI_SZ)[ \t])"
_FORM = r"(?i:<[\w\-]*input\b|textbox|\.fill\(|getbylabel|type[ \t]*\(|send_?keys|setvalue|set_value)"
# The gate of every reader here (secret_layouts adds it to its own).
GATE: Final = "|".join(f"(?:{g})" for g in (_DELIMITED_HEADER, _SECTION, _SQL, _KEY_PATH, _REGISTRY, _FORM))

_STEM_RE = re.compile(_STEM)
_MAX_CELL = 64
_MAX_HEADER_CELLS = 64
_CELL_DECORATION = re.compile(r"[\s\"'`*?!#]+|\([^)]*\)|\[[^\]]*\]")
_RULE = re.compile(r"[ \t|+:\-=]*")
_FOOTER = re.compile(r"\(\d+ rows?\)|\d+ rows? in set|-+ *\d+ rows? *-+")
_FLAGS = frozenset(
    {"true", "false", "yes", "no", "on", "off", "null", "none", "nil", "enabled", "disabled", "required", "optional",
     "string", "text", "hidden", "masked", "redacted", "unknown", "empty", "default", "encrypted", "hashed", "unset"}
)  # fmt: skip
_PROSE = frozenset(
    {"the", "your", "my", "a", "an", "to", "for", "of", "is", "then", "and", "or", "if", "please", "set"}
)


def line_spans(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of the text from `start` on (secret_layouts reads lines by it too)."""
    pos = start
    while pos <= len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        yield pos, end
        pos = end + 1


# What a header cell never holds once its bracketed note is taken off ("created (UTC)" is a name,
# "def login(username" and "password):" are code).
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_CODE_PUNCTUATION = re.compile(r"[(){}<>=:;\[\]]")


def _code_cell(cell: str) -> bool:
    """True for a cell with code's punctuation outside a balanced bracketed note."""
    return _CODE_PUNCTUATION.search(_BRACKETED.sub("", cell)) is not None


def _name_cell(cell: str, is_name: NameTest, *, stem: bool = True) -> bool:
    """True for a header cell that names a credential ("password*", "Password (hashed?)" is not plain: see is_name)."""
    name = _CELL_DECORATION.sub(" ", cell).strip()
    if not name or len(name) > _MAX_CELL or (stem and not _STEM_RE.search(name)):
        return False
    words = name.lower().split()
    return len(words) <= 3 and not _PROSE.intersection(words) and bool(is_name(name))


def _split(line: str, delimiter: str) -> list[tuple[int, int]]:
    """(start, end) of each cell of a line, quotes honoured (a quoted delimiter is inside its cell)."""
    cells: list[tuple[int, int]] = []
    pos = 0
    n = len(line)
    while pos <= n:
        start = pos
        if pos < n and line[pos] in "\"'" and delimiter != "|":
            quote = line[pos]
            close = line.find(quote, pos + 1)
            while close >= 0 and close + 1 < n and line[close + 1] == quote:
                close = line.find(quote, close + 2)
            end = line.find(delimiter, close + 1 if close >= 0 else n)
        else:
            end = line.find(delimiter, pos)
            while delimiter == "|" and end > 0 and line[end - 1] == "\\":  # Markdown's escaped \|
                end = line.find(delimiter, end + 1)
        end = n if end < 0 else end
        cells.append((start, end))
        pos = end + 1
    out = []
    for start, end in cells:
        cell = line[start:end]
        stripped = cell.strip().strip("\"'`").strip()
        at = start + cell.find(stripped) if stripped else start
        out.append((at, at + len(stripped)))
    if delimiter in "|\u2502\u2503" and len(out) > 1:
        if out[0][0] == out[0][1]:
            out = out[1:]
        if out and out[-1][0] == out[-1][1]:
            out = out[:-1]
    return out


def _header(line: str, is_name: NameTest, *, stem: bool = True) -> tuple[str, list[int], int] | None:
    """The delimiter, credential columns and cell count of a header line, or None."""
    for delimiter in ("\t", "|", "\u2502", "\u2503", ";", ","):
        if delimiter not in line:
            continue
        cells = _split(line, delimiter)
        if not 2 <= len(cells) <= _MAX_HEADER_CELLS:
            continue
        if any(end - start > _MAX_CELL or _code_cell(line[start:end]) for start, end in cells):
            continue  # a cell over 64 characters or with code's punctuation: a line of code or prose, no header
        columns = [i for i, (start, end) in enumerate(cells) if _name_cell(line[start:end], is_name, stem=stem)]
        # Tokenizer and pagination columns ("token") hold words: there a value must look generated.
        columns = [-1 - i if _TOKEN_HEADER.search(line[cells[i][0] : cells[i][1]]) else i for i in columns]
        if columns:
            return delimiter, columns, len(cells)
    return None


def table_spans(text: str, is_name: NameTest, is_placeholder: NameTest, is_value: NameTest | None = None) -> list[Span]:
    """The credential column's cells of every delimited table in the text (one linear pass).

    `is_value` replaces the test of a cell (a card verification column holds three or four digits).
    """
    spans: list[Span] = []
    table: tuple[str, list[int], int] | None = None
    contiguous = False
    quoted_until = -1
    for start, end in line_spans(text):
        if start < quoted_until:
            continue
        line = text[start:end].rstrip("\r")
        stripped = line.strip()
        if table is not None:
            delimiter, columns, width = table
            if (
                not stripped
                or stripped.startswith(("#", "--", "//"))
                or _RULE.fullmatch(stripped)
                or _FOOTER.search(stripped)
            ):
                contiguous = False
                continue
            if not contiguous:
                row = _header(line, is_name, stem=is_value is None)
                if row is not None:
                    table, contiguous = row, True  # the next table's header, after a break
                    continue
            cells = _split(line, delimiter) if delimiter in line else []
            if len(cells) >= 2 and (contiguous or abs(len(cells) - width) <= 1):
                for column in columns:
                    strict = column < 0
                    column = -1 - column if strict else column
                    if column < len(cells):
                        a, b = cells[column]
                        cell = line[a:b]
                        if (
                            is_value(cell)
                            if is_value is not None
                            else _value(cell, is_placeholder) and (not strict or _generated(cell))
                        ):
                            spans.append((start + a, start + b))
                quoted_until = _quoted_end(text, start, end)
                contiguous = True
                continue
            table = None
        if (is_value is not None or _STEM_RE.search(line)) and len(line) <= 4096:
            table = _header(line, is_name, stem=is_value is None)
            contiguous = True
    return spans


def _quoted_end(text: str, start: int, end: int) -> int:
    """Where a row whose quoted cell runs past its line ends (-1 when it ends on its line)."""
    if text.count('"', start, end) % 2 == 0:
        return -1
    close = text.find('"', end)
    if close < 0:
        return -1
    after = text.find("\n", close)
    return len(text) if after < 0 else after


_TOKEN_HEADER = re.compile(r"(?i)(?:^|[^a-z])tokens?[\s\"'`*]*$")


def _generated(cell: str) -> bool:
    """A word prose would not write: 6+ characters with a digit, a symbol or an inner capital."""
    cell = cell.strip().strip("\"'`")
    return len(cell) >= 6 and (any(c.isdigit() or not c.isalnum() for c in cell) or any(c.isupper() for c in cell[1:]))


def _value(cell: str, is_placeholder: NameTest) -> bool:
    """True for a cell that may be a credential: one word, no placeholder, not a boolean or a number alone."""
    cell = cell.strip().strip("\"'`")
    return len(cell) >= 4 and " " not in cell and cell.lower() not in _FLAGS and not is_placeholder(cell)


# Card verification values ------------------------------------------------------------------

_CVV_LABEL = re.compile(
    r"(?i)\b(?:cvv2?|cvc2?|cvn2?|cav2|ccv|csc|cvd|cid|security[ _\-]?(?:code|digits|number)"
    r"|card[ _\-]?verification(?:[ _\-]?(?:value|code|number))?|verification[ _\-]?(?:code|value)"
    # The networks' long names (round eleven): Card Validation Code, Card Authentication Value...
    r"|card[ _\-]?(?:validation|authentication|identification|verification|security|check)"
    r"[ _\-]?(?:code|value|number|data|digits)"
    r"|(?:code|digits|number)[ \t]+on[ \t]+the[ \t]+(?:back|reverse))\b"
)
_CVV_DIGITS = re.compile(r"(?<![0-9/.,$\-])[0-9]{3,4}(?![0-9]|[/.,\-][0-9])")
_CVV_CELL = re.compile(r"[ \t\"']*[0-9]{3,4}[ \t\"']*")
_SENTENCE_END = re.compile(r"[.;!?](?:[ \t]|$)")
# What may stand between a value and its label after it: "739 (CVV)", "739 is the cvv", "739 - CVV".
_VALUE_THEN_LABEL = re.compile(r"[ \t(\[:=\-]*(?:(?:is|was|=)[ \t]+(?:(?:the|my|your|its)[ \t]+)?)?")
_CVV_AFTER = 48  # characters read after a label for its value (words, brackets, an arrow between)
_CVV_BEFORE = 24  # characters read before a label for a value written first ("739 (CVV)")


_LABEL_TAIL = " \t:=#-\r?.!)]\"'"  # what may end a label's line before its value on the next one
_MAX_BLANK_LINES = 2  # blank lines skipped between a label's line and its value's


def _reply_spans(text: str, begin: int) -> list[Span]:
    """A verification value in the first sentence from begin (the rest of its line, else the next line with words)."""
    for _ in range(_MAX_BLANK_LINES + 1):
        line_end = text.find("\n", begin)
        line_end = len(text) if line_end < 0 else line_end
        if text[begin:line_end].strip() or line_end >= len(text):
            break
        begin = line_end + 1
    stop = _SENTENCE_END.search(text, begin, line_end)
    end = min(stop.start() if stop else line_end, begin + _CVV_AFTER)
    return [m.span() for m in _CVV_DIGITS.finditer(text, begin, end)] or _spoken.cvv_spans(text, begin, end)


def cvv_spans(text: str, is_cvv_name: NameTest) -> list[Span]:
    """Card verification values by a label near them (after it, before it, on the next line) or in a CVV column."""
    spans = table_spans(text, is_cvv_name, lambda _: False, lambda cell: bool(_CVV_CELL.fullmatch(cell)))
    for n, label in enumerate(_CVV_LABEL.finditer(text)):
        if n >= 256:
            break
        line_end = text.find("\n", label.end())
        line_end = len(text) if line_end < 0 else line_end
        stop = _SENTENCE_END.search(text, label.end(), line_end)
        end = min(stop.start() if stop else line_end, label.end() + _CVV_AFTER)
        found = [m.span() for m in _CVV_DIGITS.finditer(text, label.end(), end)]
        # Round fourteen: a code read out, its digits apart ("7 3 9", "6.1.4") or spelled ("seven three nine").
        found = found or _spoken.cvv_spans(text, label.end(), end)
        if not found and not text[label.end() : line_end].strip(" \t:=#-\r"):
            # The label alone on its line: its value on the next one ("CVV\n739").
            next_end = text.find("\n", line_end + 1)
            next_end = len(text) if next_end < 0 else next_end
            nxt = _CVV_CELL.fullmatch(text, line_end + 1, next_end) if line_end < len(text) else None
            if nxt:
                found = [m.span() for m in _CVV_DIGITS.finditer(text, line_end + 1, next_end)]
        if not found and stop is not None and text[stop.start()] == "?":
            # Round fifteen: the label asked for ("can you confirm the CVV? sure, 503"): read the answer.
            found = _reply_spans(text, stop.end())
        elif not found and not text[label.end() : line_end].strip(_LABEL_TAIL):
            # Round fifteen: the label ends its line ("confirm the CVV?", "CVV:") and the value is in
            # the line after it, among other words ("caller: sure, it's 5 0 3").
            found = _reply_spans(text, line_end + 1)
        if not found:
            line_start = text.rfind("\n", 0, label.start()) + 1
            before = [
                m.span()
                for m in _CVV_DIGITS.finditer(text, max(line_start, label.start() - _CVV_BEFORE), label.start())
            ]
            found = [span for span in before[-1:] if _VALUE_THEN_LABEL.fullmatch(text, span[1], label.start())]
        spans.extend(found)
    return spans


# Sections ------------------------------------------------------------------------------------

_SECTION_RE = re.compile(r"(?m)^([ \t]*)(?:[\"']?([\w.\-]+)[\"']?[ \t]*:[ \t]*$|\[([^\]\n]+)\][ \t]*$)")
_ITEM = re.compile(r"[ \t]*-[ \t]+[\"']?([^\s\"'#:]+)[\"']?[ \t\r]*")
_CHILD = re.compile(r"([ \t]*)(?:-[ \t]+)?[\"']?([\w.\-@]+)[\"']?[ \t]*[:=][ \t]*(.*?)[ \t\r]*$")


_NAME_PARTS = re.compile(r"[.\-_ ]")  # a section name's words (`db.passwords`, `api-keys`)


def section_spans(text: str, is_name: NameTest, is_placeholder: NameTest, about: NameTest) -> list[Span]:
    """Values below a YAML key or an INI/TOML section named like a credential (or its plural)."""
    spans: list[Span] = []
    done = 0
    for n, match in enumerate(_SECTION_RE.finditer(text)):
        if n >= 256 or match.start() < done:
            continue
        name = match.group(2) or match.group(3) or ""
        last = _NAME_PARTS.split(name.strip())[-1] if name else ""
        if not _STEM_RE.search(name) or not (
            is_name(name) or (last.endswith("s") and is_name(name[:-1])) or last.lower() in ("auth", "users")
        ):
            continue
        indent = len(match.group(1).expandtabs())
        ini = match.group(3) is not None
        pos = match.end() + 1
        for start, end in _lines_from(text, pos):
            line = text[start:end]
            if not line.strip():
                continue
            child = _CHILD.fullmatch(line)
            depth = len(line) - len(line.lstrip())
            if ini and line.lstrip().startswith("["):
                break
            item = _ITEM.fullmatch(line) if child is None else None
            if not ini and (depth < indent or (depth == indent and not line.lstrip().startswith("- "))):
                break  # a YAML list may sit at its key's own indent ("passwords:\n- x")
            done = end
            if item is not None:
                raw = item.group(1)
                if len(raw) >= 4 and raw.lower() not in _FLAGS and not is_placeholder(raw):
                    spans.append((start + item.start(1), start + item.end(1)))
                continue
            if child is None or about(child.group(2)):
                continue
            value = child.group(3)
            if value.startswith(("#", "|", ">")):
                continue
            raw = value.strip("\"'")
            if raw and " " not in raw and raw.lower() not in _FLAGS and not is_placeholder(raw) and len(raw) >= 4:
                a = start + child.start(3) + value.find(raw)
                spans.append((a, a + len(raw)))
    return spans


def _lines_from(text: str, pos: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each line from pos on."""
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        yield pos, end
        pos = end + 1


# SQL dumps -----------------------------------------------------------------------------------

_QUOTED_NAME = re.compile(r"[`\"\[\]]")
_INSERT = re.compile(
    r"(?i)\b(?:insert|replace)[ \t]+(?:ignore[ \t]+)?into[ \t]+([\w.`\"\[\]]+)[ \t]*"
    r"(\(([^()]{1,2000})\))?[ \t\r\n]*values[ \t\r\n]*"
)
_COPY = re.compile(r"(?i)\bcopy[ \t]+([\w.`\"]+)[ \t]*\(([^()]{1,2000})\)[ \t]+from[ \t]+stdin([^\n]*)\n")
_CREATE = re.compile(
    r"(?i)\bcreate[ \t]+table[ \t]+(?:if[ \t]+not[ \t]+exists[ \t]+)?([\w.`\"\[\]]+)[ \t]*\(([^;]{1,4000}?)\)[ \t]*;"
)
_SQL_VALUE = re.compile(r"'((?:[^'\\]|''|\\.)*)'|(-?[0-9][\w.]*)|(NULL|null|true|false)")
_TUPLE_END = re.compile(r"[ \t\r\n]*\)[ \t\r\n]*([,;]?)[ \t\r\n]*")


def _columns(names: str) -> list[str]:
    """The column names of a list ("`id`,`email`,`password`")."""
    return [_QUOTED_NAME.sub("", c).strip().split()[0] if c.strip() else "" for c in names.split(",")]


def sql_spans(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """Credential columns' values of INSERT/REPLACE rows and COPY data; option rows named like a credential."""
    spans: list[Span] = []
    tables: dict[str, list[str]] = {}
    for match in _CREATE.finditer(text):
        tables[_QUOTED_NAME.sub("", match.group(1)).lower()] = [
            c.strip().split()[0].strip('`"[]') if c.strip() else "" for c in match.group(2).split(",")
        ]
    for n, match in enumerate(_INSERT.finditer(text)):
        if n >= 256:
            break
        names = (
            _columns(match.group(3)) if match.group(3) else tables.get(_QUOTED_NAME.sub("", match.group(1)).lower(), [])
        )
        credential = {i for i, c in enumerate(names) if c and is_name(c)}
        option = next((i for i, c in enumerate(names) if c.lower().endswith(("_value", "value"))), None)
        pos = match.end()
        for _ in range(10000):  # tuples of one statement
            if pos >= len(text) or text[pos] != "(":
                break
            values, pos, more = _tuple(text, pos + 1)
            for i, (a, b) in enumerate(values):
                cell = text[a:b]
                if i in credential and _value(cell, is_placeholder):
                    spans.append((a, b))
            if (
                option is not None
                and option < len(values)
                and any(is_name(text[a:b]) for i, (a, b) in enumerate(values) if i != option)
            ):
                a, b = values[option]
                if _value(text[a:b], is_placeholder):
                    spans.append((a, b))
            if not more:
                break
    for match in _COPY.finditer(text):
        names = _columns(match.group(2))
        credential = {i for i, c in enumerate(names) if c and is_name(c)}
        if not credential:
            continue
        delimiter = "," if "csv" in match.group(3).lower() else "\t"
        for start, end in _lines_from(text, match.end()):
            line = text[start:end].rstrip("\r")
            if line == "\\.":
                break
            cells = _split(line, delimiter)
            for i in credential:
                if i < len(cells) and _value(line[cells[i][0] : cells[i][1]], is_placeholder):
                    spans.append((start + cells[i][0], start + cells[i][1]))
    return spans


def _tuple(text: str, pos: int) -> tuple[list[Span], int, bool]:
    """The value spans of one VALUES tuple from after its "(", where the next tuple starts, and whether one follows."""
    values: list[Span] = []
    while pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        match = _SQL_VALUE.match(text, pos)
        if match is None:
            break
        if match.group(1) is not None:
            values.append((match.start(1), match.end(1)))
        else:
            values.append(match.span())
        pos = match.end()
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos < len(text) and text[pos] == ")":
            end = _TUPLE_END.match(text, pos)
            assert end is not None
            return values, end.end(), end.group(1) == ","
    return values, pos, False


# Key stores' dumps ---------------------------------------------------------------------------

# A line that ends with a key path: the path alone, or after the command that printed it ("zkCli get /app/db/password").
_PATH_LINE = re.compile(r"[ \t]*(?:[\w.\-:]+[ \t]+){0,6}(/?[\w.\-]+(?:/[\w.\-]+)+)[ \t\r]*")
_REGISTRY_ROW = re.compile(
    r"(?im)^[ \t]+([\w.\- ]{1,64}?)[ \t]+REG_(?:SZ|EXPAND_SZ|MULTI_SZ)[ \t]+(\S[^\n]*?)[ \t\r]*$"
)


def key_dump_spans(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """A key path naming a credential then its value on the next line (etcd, ZooKeeper); registry value rows."""
    spans: list[Span] = []
    lines = list(line_spans(text))
    for i, (start, end) in enumerate(lines[:-1]):
        match = _PATH_LINE.fullmatch(text, start, end)
        if match is None:
            continue
        last = match.group(1).rstrip("/").rsplit("/", 1)[-1]
        if not _STEM_RE.search(last) or not is_name(last):
            continue
        value_start, value_end = lines[i + 1]
        value = text[value_start:value_end].strip()
        if value and " " not in value and "=" not in value and not value.startswith("/") and not is_placeholder(value):
            a = text.find(value, value_start)
            spans.append((a, a + len(value)))
    for match in _REGISTRY_ROW.finditer(text):
        if is_name(match.group(1).strip()) and _value(match.group(2), is_placeholder):
            spans.append(match.span(2))
    return spans


# Forms and snapshots -------------------------------------------------------------------------

_INPUT = re.compile(r"(?is)<[\w\-]*input\b([^<>]{0,2000})>")
_ATTRIBUTE = re.compile(r"([\w:.\-$]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'<>=`]+))")
_SNAPSHOT = re.compile(
    r"(?im)\b(?:textbox|searchbox|combobox|text ?field|input|edit)[ \t]+([\"'])(.{1,80}?)\1"
    r"(?:[ \t]*\[[^\]\n]*\]|[ \t]*\([^)\n]*\))*"
    r"(?:[ \t]*:[ \t]*(\S[^\n]*?)|[ \t]+value=([\"'])(.*?)\4)[ \t\r]*$"
)
# Browser automation filling a field named by its selector or label: Playwright's
# getByLabel('Password').fill(x) and locator('#pwd').fill(x), Cypress' get('[name=password]').type(x),
# Selenium's find_element(By.ID, "password").send_keys(x), WebdriverIO's $('#pw').setValue(x);
# and the two-argument forms page.fill("#password", x), page.type(...).
_FILL = re.compile(
    r"(?is)\([ \t]*(?:By\.\w+[ \t]*,[ \t]*)?([\"'`])(.{1,120}?)\1[ \t]*(?:,[ \t]*\{[^{}]{0,200}\}[ \t]*)?\)"
    r"[ \t]*\.[ \t]*(?:fill|type|send_?keys|sendKeys|setValue|set_value|press_?sequentially|pressSequentially)"
    r"[ \t]*\([ \t]*([\"'`])(.{1,200}?)\3"
    r"|\.[ \t]*(?:fill|type|setValue|set_value)[ \t]*\([ \t]*([\"'`])(.{1,120}?)\5[ \t]*,[ \t]*([\"'`])(.{1,200}?)\7"
)
_ROLE_FILL = re.compile(
    r"(?is)getbyrole\([^()]{0,40}name[ \t]*:[ \t]*([\"'`])(.{1,80}?)\1[^()]{0,80}\)"
    r"[ \t]*\.[ \t]*(?:fill|type)[ \t]*\([ \t]*([\"'`])(.{1,200}?)\3"
)
_WIDGET_WORDS = frozenset(
    {"txt", "text", "field", "input", "box", "entry", "ctl", "ctl00", "main", "form", "tb", "edit", "fld", "inp"}
)
_NAMING_ATTRIBUTES = frozenset(
    {"name", "id", "autocomplete", "aria-label", "placeholder", "data-field", "formcontrolname", "label"}
)


_SELECTOR_PARTS = re.compile(r"[#.\[\]=\"' ()>:]+")  # a CSS selector's or label's words


def _selector_names(selector: str, is_name: NameTest) -> bool:
    """True when a selector or label names a credential ("#password", "input[name=pwd]", "Admin password")."""
    if is_name(selector):
        return True
    if any(is_name(w) for w in _SELECTOR_PARTS.split(selector) if w):
        return True
    # A form's own words around the name (txtPwdBox, pwdField, password_input): the widget, not the value.
    words = [w for w in _KEY_WORD.findall(_CAMEL.sub("_", selector).lower()) if w not in _WIDGET_WORDS]
    return bool(words) and len(words) <= 4 and bool(is_name("_".join(words)))


def form_spans(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """Values of password inputs, snapshot textboxes labelled like a credential and automation filling one."""
    spans: list[Span] = []
    for n, match in enumerate(_INPUT.finditer(text)):
        if n >= 256:
            break
        attributes = {}
        for attribute in _ATTRIBUTE.finditer(match.group(1)):
            group = next(g for g in (2, 3, 4) if attribute.group(g) is not None)
            attributes[attribute.group(1).lower()] = (attribute.group(group), match.start(1) + attribute.start(group))
        if "value" not in attributes:
            continue
        kind = attributes.get("type", ("", 0))[0].lower()
        named = any(
            _STEM_RE.search(v) and _selector_names(v, is_name)
            for k, (v, _) in attributes.items()
            if k
            in ("name", "id", "autocomplete", "aria-label", "placeholder", "data-field", "formcontrolname", "label")
        )
        value, at = attributes["value"]
        if (
            (kind == "password" or named)
            and kind not in ("hidden", "submit", "button")
            and _value(value, is_placeholder)
        ):
            spans.append((at, at + len(value)))
    for match in _SNAPSHOT.finditer(text):
        label = match.group(2)
        if not _selector_names(label, is_name):
            continue
        group = 3 if match.group(3) is not None else 5
        value = match.group(group)
        if value and _value(value, is_placeholder):
            spans.append(match.span(group))
    for pattern in (_FILL, _ROLE_FILL):
        for n, match in enumerate(pattern.finditer(text)):
            if n >= 256:
                break
            label, value = (2, 4) if match.group(2) is not None else (6, 8)
            if _selector_names(match.group(label), is_name) and _value(match.group(value), is_placeholder):
                spans.append(match.span(value))
    return spans


_KEY_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _about(name: str) -> bool:
    """True for a child name about a credential or its owner (secret_key_words.about_child)."""
    return _key_words.about_child(_KEY_WORD.findall(_CAMEL.sub("_", name).lower()))


def document_spans(text: str, is_name: NameTest, is_placeholder: NameTest, about: NameTest = _about) -> list[Span]:
    """Every reader above, on one text (the caller's gate matched GATE)."""
    return [
        *table_spans(text, is_name, is_placeholder),
        *section_spans(text, is_name, is_placeholder, about),
        *sql_spans(text, is_name, is_placeholder),
        *key_dump_spans(text, is_name, is_placeholder),
        *form_spans(text, is_name, is_placeholder),
    ]


_CVV_GATE = re.compile(r"(?i)cv|cc|cs|cid|secur|verif|back|reverse")


def cvv_gate(text: str) -> bool:
    """True when a text may hold a card verification label (one pass: most texts have none)."""
    return _CVV_GATE.search(text) is not None
