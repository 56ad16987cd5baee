"""Layouts tools print credentials in, read for redaction: where the name and the value are not `key=value`.

The detector (secret_scanner) finds a credential by its shape or by a name written right before
it (`password: x`, `"token": "x"`). Tools also print the name and the value apart, and each of
these layouts is read here as a whole, so the next tool printing the same layout is covered:

- **Records**: the name and the value in sibling fields of one object, in any provider's spelling
  (`{"OptionName": "RDS_PASSWORD", "Value": x}`, `{"ParameterKey": .., "ParameterValue": ..}`,
  `{"k": .., "v": ..}`, `{"key": .., "val": ..}`, `{"Name": .., "SecretString": ..}`), and arrays
  of them.
- **Column tables as values**: `{"columns": [..], "rows": [[..]]}` (SQL drivers, BigQuery,
  Databricks), and a list of rows whose first row is the header (CSV parsed to JSON).
- **Text tables**: a name/value table (`vault kv get`'s `Key  Value`, `| Name | Value |`,
  `name,value` CSV, `aws configure list`) whose row names a credential, and a column aligned by
  spaces whose header names one (`NAME   PASSWORD`).
- **Labelled lines** with a label of several words (`Key Content : x`, netsh's Wi-Fi key).
- **XML attributes**: `<add key="SmtpPassword" value="x"/>`, `<property name=.. value=..>`,
  `<string name="api_key">x</string>`, and an attribute named like a credential.
- **A DER private key as a hex dump** (`xxd -p`, `xxd`, `hexdump`, `xxd -i`'s `0x30, 0x82`):
  a SEQUENCE, then version 0 or 1, then what a private key holds next (PKCS#8, PKCS#1, SEC1).
- **A raw Ethereum private key**: 0x and 64 hex digits standing alone (a whole value or a whole
  line), or after a wallet word; a hash is labelled as one (`tx 0x..`, `"hash": "0x.."`).
- **Cards** the digit reader misses: written reversed, in labelled halves (`first8=.. last8=..`),
  or with leading digits spelled out in English, French, Spanish, German, Italian, Portuguese
  or Dutch.

Every reader sits behind one RE2 gate compiled at import: a text none of them can match costs one
linear pass. Spans are (start, end) of the secret only, so the text around stays as it was.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any, Final

import re2

from policyengine.arguments import secret_documents as _documents
from policyengine.arguments import secret_dumps as _dumps
from policyengine.arguments.secret_encodings import raw_search

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.never_capture = True


def _raw_search(pattern: Any) -> Callable[[str], bool]:
    """'Has a match' on a text: secret_encodings' search on its UTF-8 bytes."""
    search = raw_search(pattern)
    return lambda text: search(text.encode("utf-8", "surrogatepass"))


NameTest = Callable[[str], bool]
Span = tuple[int, int]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def _last_word(key: str) -> str:
    """The last lowercase word of a field name: "ParameterKey" is "key", "option_name" is "name"."""
    words = [w for w in _NOT_ALNUM.split(_CAMEL.sub("_", key).lower()) if w]
    return words[-1] if words else ""


# ---------------------------------------------------------------------------------------------
# Records: a name and a value in sibling fields
# ---------------------------------------------------------------------------------------------

# A field that names the record: its last word (ParameterKey, OptionName, SettingName, k, n).
_NAME_WORDS: Final = frozenset(
    {
        "name", "key", "k", "n", "label", "field", "title", "variable", "var", "header", "option",
        "param", "parameter", "setting", "attribute", "attr", "property", "prop", "env", "id",
    }
)  # fmt: skip
# A field that holds the record's value: its last word (ParameterValue, SecretString, v, val).
# Round eight: "data" and "content" ({"label": "CVV", "data": "537"}, {"attribute": .., "content": ..}).
_VALUE_WORDS: Final = frozenset(
    {"value", "val", "v", "values", "string", "secret", "plaintext", "binary", "data", "content", "contents"}
)
_MAX_RECORD = 12  # fields in a record: a bigger object is a document, not a name/value entry


def record_value(value: dict[Any, Any], is_name: NameTest) -> Any:
    """The key of a record's value field when a sibling field names a credential, else None.

    `{"OptionName": "RDS_PASSWORD", "Value": x}` gives "Value"; the name field is any field whose
    last word names (name, key, k, label, option, parameter...), the value field the one whose last
    word is a value (value, val, v, string...). A record with two value fields is ambiguous: none.
    """
    if not 2 <= len(value) <= _MAX_RECORD:
        return None
    named = False
    value_key = None
    for k, v in value.items():
        if not isinstance(k, str):
            continue
        word = _last_word(k)
        if _marked_secret(word, v):
            named = True  # the owner's word: SSM's SecureString, 1Password's CONCEALED, GitLab's masked
        if word in _VALUE_WORDS and not (word == "string" and k.lower() not in ("secretstring", "secret_string")):
            if value_key is not None:
                return None
            value_key = k
        elif word in _NAME_WORDS and isinstance(v, str) and len(v) <= 128 and is_name(v):
            named = True
    return value_key if named else None


# Fields by which a record's owner marks its value secret, whatever its name: a type or kind
# (SSM's SecureString, 1Password's CONCEALED, Vercel's encrypted/sensitive), or a flag (GitLab's
# masked, Terraform's sensitive, is_secret) set to true.
_SECRET_TYPES: Final = frozenset({"securestring", "concealed", "secret", "sensitive", "encrypted", "password"})
_SECRET_FLAGS: Final = frozenset({"masked", "sensitive", "secret", "hidden", "concealed"})


def _marked_secret(word: str, value: Any) -> bool:
    """True when a field (by its last word) marks its record's value secret."""
    if word in ("type", "kind") and isinstance(value, str):
        return value.lower() in _SECRET_TYPES
    return word in _SECRET_FLAGS and value is True


# Header and row fields of a column table given as a value.
_HEADER_FIELDS: Final = frozenset({"columns", "cols", "fields", "header", "headers", "schema", "names", "keys"})
_ROW_FIELDS: Final = frozenset({"rows", "data", "values", "records", "results", "items", "tuples"})
_COLUMN_NAME_FIELDS: Final = ("name", "label", "field", "title", "column", "key")


def _column_name(cell: Any) -> str | None:
    """A header cell's name: a string, or an object's name/label/field."""
    if isinstance(cell, str):
        return cell
    if isinstance(cell, dict):
        for k, v in cell.items():
            if isinstance(k, str) and k.lower() in _COLUMN_NAME_FIELDS and isinstance(v, str):
                return v
    return None


def credential_columns(header: Any, is_name: NameTest) -> list[int]:
    """The indexes of a header list's cells that name a credential (strings or {"name": ..} cells)."""
    if not isinstance(header, list) or not 2 <= len(header) <= 256:
        return []
    out: list[int] = []
    for i, cell in enumerate(header):
        name = _column_name(cell)
        if name is not None and len(name) <= 128 and is_name(name):
            out.append(i)
    return out


def column_table(value: dict[Any, Any], is_name: NameTest) -> tuple[Any, list[int]] | None:
    """(rows field, credential column indexes) of `{"columns": [..], "rows": [[..]]}`, else None."""
    header_key = rows_key = None
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, list):
            continue
        word = _last_word(k)
        if word in _HEADER_FIELDS and header_key is None:
            header_key = k
        elif word in _ROW_FIELDS and rows_key is None:
            rows_key = k
    if header_key is None or rows_key is None:
        return None
    columns = credential_columns(value[header_key], is_name)
    return (rows_key, columns) if columns else None


_COLUMN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\- ]{0,39}")


def header_rows(value: list[Any], is_name: NameTest) -> list[int]:
    """Credential columns of a list of rows whose first row is a header of names, else []."""
    if len(value) < 2 or not isinstance(value[0], list) or not all(isinstance(c, str) for c in value[0]):
        return []
    width = len(value[0])
    if not all(isinstance(row, list) and len(row) == width for row in value[1:]):
        return []
    if not all(_COLUMN_NAME.fullmatch(cell) for cell in value[0]):
        return []
    columns = credential_columns(value[0], is_name)
    if width == 2 and columns and columns[0] == 0:
        return []  # [["Authorization", "Bearer x"], ["Accept", "*/*"]]: name/value pairs, not a header
    return columns


_FLAT_NAME = re.compile(r"[A-Za-z_][\w.:\-]{0,63}")
_MAX_FLAT = 512  # items of a flat name/value list read; a longer list is data


def alternating_values(value: list[Any], is_name: NameTest) -> list[int]:
    """The indexes of credential values in a flat name/value list (round thirteen, set K), else [].

    Redis' HGETALL and CONFIG GET through a JSON client return `["host", "db", "password", "x"]`:
    names and values alternate from the first item. Only a list of 4+ strings, an even number,
    whose every even item is a name (an identifier) is read so; the item after a credential's name
    is its value. (Two items are a [name, value] pair, read as one already.)
    """
    n = len(value)
    if n < 4 or n % 2 or n > _MAX_FLAT or not all(isinstance(item, str) for item in value):
        return []
    names = value[0::2]
    if not all(_FLAT_NAME.fullmatch(name) for name in names):
        return []
    return [
        2 * i + 1
        for i, name in enumerate(names)
        if is_name(name) and value[2 * i + 1] and not is_name(value[2 * i + 1])
    ]


# ---------------------------------------------------------------------------------------------
# Text layouts
# ---------------------------------------------------------------------------------------------

_STEM = r"(?i:pass|pwd|secret|token|tok|tkn|key|auth|cred|psk|cookie|session|mnemonic|seed|phrase|otp|pin)"
_NV_NAME = r"(?i:key|name|field|parameter|param|variable|var|setting|property|option|attribute|label)"
_NV_VALUE = r"(?i:value|val|data|secret)"
_CELL_GAP = r"(?:\t|[ \t]{2,}|[ \t]*[|,;][ \t]*)"
# A name/value header ("Key   Value", "| Name | Value |", "name,value").
_NV_HEADER = rf"(?m:^[ \t|]*[\"']?{_NV_NAME}[\"']?{_CELL_GAP}[\"']?{_NV_VALUE}\b)"
# A header aligned by spaces with a cell named like a credential ("NAME    PASSWORD").
_ALIGNED_HEADER = rf"(?m:^[ \t]*[A-Za-z_][\w.\-#/]*(?: [\w.\-#/]+)?(?:[ \t]{{2,}}|\t)[^\n]*{_STEM})"
_ALIGNED_HEADER_B = rf"(?m:^[ \t]*[^\n]*{_STEM}[\w.\-#/]*(?:[ \t]{{2,}}|\t)[A-Za-z_])"
# A label of two to four words, a colon or "=", a value ("Key Content     : x").
_LABEL_LINE = rf"(?m:^[ \t]*(?:[A-Za-z][\w.\-]* ){{0,3}}[\w.\-]*{_STEM}[\w.\-]*(?: [\w.\-]+){{0,3}}[ \t]*[:=][ \t]*\S)"
_XML_TAG = rf"<[A-Za-z_][^<>\n]{{0,400}}{_STEM}"
_XML = rf"{_XML_TAG}|(?i:<(?:name|key)>)[^<\n]{{0,128}}{_STEM}"
# psql's expanded display ("-[ RECORD 1 ]--", then "name | value" lines) and redis-cli's numbered
# replies ('1) "requirepass"' then '2) "value"').
# A name that starts with the stem ("password | x") is one too: the stem need not follow a letter.
_RECORD_LINE = rf"(?m:^[ \t]*(?:[A-Za-z_][\w.\-]*)?{_STEM}[\w.\-]*[ \t]*\|[ \t]*\S)"
_NUMBERED = (
    rf"(?m:^[ \t]*[0-9]{{1,4}}\)[ \t]+\"[^\"\n]{{0,64}}{_STEM}[^\"\n]{{0,64}}\"[ \t]*\r?\n[ \t]*[0-9]{{1,4}}\)[ \t]+\")"
)
# A DER private key in hex: SEQUENCE, length, INTEGER version 0 or 1, then a SEQUENCE (PKCS#8's
# algorithm), an INTEGER (PKCS#1's modulus) or an OCTET STRING (SEC1's key). Bytes may be split by
# spaces, colons, commas, line breaks or written 0x30 / \x30.
_B = r"[0-9A-Fa-f]{2}"
_S = r"(?:[ \t,:\r\n]{0,4}(?:0[xX]|\\x)?)"
_DER = rf"30{_S}(?:81{_S}{_B}|82{_S}{_B}{_S}{_B}|[0-7][0-9A-Fa-f]){_S}02{_S}01{_S}0[01]{_S}(?:30|02|04)"
_ETH = r"(?:0[xX])?[0-9A-Fa-f]{64}"
_GATES = (_NV_HEADER, _ALIGNED_HEADER, _ALIGNED_HEADER_B, _LABEL_LINE, _XML, _DER, _ETH, _RECORD_LINE, _NUMBERED)
_GATE = _raw_search(re2.compile("|".join(f"(?:{g})" for g in _GATES), _OPTIONS))
# secret_documents' readers have a gate of their own: one RE2 of both loses its DFA (15 us a string
# instead of 2 on BFCL's arguments, round nine).
_DOCUMENTS_GATE = _raw_search(re2.compile(_documents.GATE, _OPTIONS))
# Round thirteen: credential files and dumps that name no credential (secret_dumps), a gate of their own too.
_DUMPS_GATE = _raw_search(re2.compile(_dumps.GATE, _OPTIONS))
_DER_RE = re.compile(_DER)
# Places read per text and reader (each a line or a tag the gate picked: it holds a credential word);
# past it, the first ones are hidden.
_MAX_READS = 256
_MAX_ROWS = 1000
_MAX_TEXT = 1 << 20  # longer texts are not read for layouts (the detector still scans them)
MAX_TEXT: Final = _MAX_TEXT


_RECORD_GATE = _raw_search(
    re2.compile(rf"{_STEM}|(?i:securestring|concealed|masked|sensitive|encrypted|hidden)", _OPTIONS)
)


def maybe_record(text: str) -> bool:
    """True when a JSON text may hold a record or column table that names a credential (one RE2 pass)."""
    return _RECORD_GATE(text)


def maybe_layout(text: str) -> bool:
    """True when a text may hold a layout read here (one RE2 pass)."""
    return len(text) <= _MAX_TEXT and (
        _GATE(text) or _DOCUMENTS_GATE(text) or (_dumps.maybe_dump(text) and _DUMPS_GATE(text))
    )


def layout_spans(text: str, is_name: NameTest, is_placeholder: NameTest, label: str = "") -> list[Span]:
    """(start, end) of each credential value a layout of `text` holds; `label` is the field it came in."""
    if len(text) > _MAX_TEXT:
        return []
    documents = _DOCUMENTS_GATE(text)
    dumps = _dumps.maybe_dump(text) and _DUMPS_GATE(text)
    spans: list[Span] = _dumps.dump_spans(text, is_name, is_placeholder) if dumps else []
    if not _GATE(text):
        return [*spans, *_documents.document_spans(text, is_name, is_placeholder)] if documents else spans
    spans.extend(_table_spans(text, is_name, is_placeholder))
    spans.extend(_label_spans(text, is_name, is_placeholder))
    spans.extend(_xml_spans(text, is_name, is_placeholder))
    spans.extend(_der_spans(text))
    spans.extend(_pair_line_spans(text, is_name, is_placeholder))
    spans.extend(_eth_spans(text, label))
    # Round nine: documents that say a value is a credential by their structure (secret_documents).
    if documents:
        spans.extend(_documents.document_spans(text, is_name, is_placeholder))
    return spans


_RULE = re.compile(r"[ \t|+:\-=]*")
_ALIGNED_CELL = re.compile(r"\S+(?: \S+)*")  # cells of a space-aligned line: words joined by single spaces
_NV_NAME_RE = re.compile(rf"{_NV_NAME}$")
_NV_VALUE_RE = re.compile(rf"{_NV_VALUE}$")
_HEADER_NAME = re.compile(r"[A-Za-z_][\w .\-/#]{0,39}")
_FOOTER = re.compile(r"\(\d+ rows?\)|\d+ rows? in set")


def _split(line: str, delimiter: str | None) -> list[tuple[int, int]]:
    """(start, end) of each stripped cell of a line: by a delimiter, or by runs of 2+ spaces / tabs."""
    if delimiter is None:
        cells: list[tuple[int, int]] = []
        for m in _ALIGNED_CELL.finditer(line):
            if cells and "\t" not in line[cells[-1][1] : m.start()] and m.start() - cells[-1][1] < 2:
                cells[-1] = (cells[-1][0], m.end())
            else:
                cells.append((m.start(), m.end()))
        return cells
    out: list[tuple[int, int]] = []
    pos = 0
    for part in line.split(delimiter):
        stripped = part.strip().strip("\"'`")
        at = pos + part.find(stripped) if stripped else pos
        out.append((at, at + len(stripped)))
        pos += len(part) + 1
    if delimiter == "|" and len(out) > 1:
        if out[0][0] == out[0][1]:
            out = out[1:]
        if out and out[-1][0] == out[-1][1]:
            out = out[:-1]
    return out


def _table_spans(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """Values of name/value tables whose row names a credential, and credential columns aligned by spaces."""
    spans: list[Span] = []
    done = 0
    starts = sorted({text.rfind("\n", 0, m.start()) + 1 for m in _finditer(_NV_HEADER_RE, text)})
    starts += sorted({text.rfind("\n", 0, m.start()) + 1 for m in _finditer(_ALIGNED_RE, text)} - set(starts))
    for line_start in sorted(starts)[:_MAX_READS]:
        if line_start < done:
            continue
        done = _table_at(text, line_start, is_name, is_placeholder, spans)
    return spans


def _finditer(pattern: Any, text: str) -> Iterator[Any]:
    """At most _MAX_READS matches of a pattern."""
    for n, match in enumerate(pattern.finditer(text)):
        if n >= _MAX_READS:
            return
        yield match


# RE2 (linear) finds the header lines: a backtracking "[^\n]*key" reads a long line once per "key".
_NV_HEADER_RE = re2.compile(_NV_HEADER, _OPTIONS)
_ALIGNED_RE = re2.compile(f"{_ALIGNED_HEADER}|{_ALIGNED_HEADER_B}", _OPTIONS)


def _table_at(text: str, line_start: int, is_name: NameTest, is_placeholder: NameTest, spans: list[Span]) -> int:
    """Read the table whose header starts at line_start into spans; return where it ends."""
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end < 0 else line_end
    header_line = text[line_start:line_end]
    delimiter = next((d for d in ("|", "\t", ",", ";") if header_line.count(d)), None)
    if delimiter == "\t" and "  " in header_line.replace("\t", "  ").strip():
        delimiter = None  # tabs with spaces: aligned by a tabwriter
    header = _split(header_line, delimiter)
    names = [header_line[a:b] for a, b in header]
    if len(names) < 2 or not all(_HEADER_NAME.fullmatch(n) for n in names if n):
        return line_end
    name_col = next((i for i, n in enumerate(names) if _NV_NAME_RE.fullmatch(n)), None)
    value_col = next((i for i, n in enumerate(names) if _NV_VALUE_RE.fullmatch(n)), None)
    pair = name_col is not None and value_col is not None and name_col < value_col
    columns = [] if pair else [i for i, n in enumerate(names) if n and is_name(n)]
    if not pair and not columns:
        return line_end
    aligned = delimiter is None
    rows = 0
    pos = line_end
    for row_start, row_end in _documents.line_spans(text, line_end + 1):
        pos = row_end
        row = text[row_start:row_end]
        if not row.strip():
            if rows:
                break
            continue
        if _RULE.fullmatch(row):
            continue
        if _FOOTER.search(row) or rows >= _MAX_ROWS:
            break
        rows += 1
        cells = _split(row, delimiter)
        if aligned and len(cells) != len(header):
            # Values with runs of spaces: cut at the header's column starts instead.
            bounds = [a for a, _ in header] + [len(row)]
            cells = []
            for a, b in itertools.pairwise(bounds):
                piece = row[a:b] if a < len(row) else ""
                stripped = piece.strip()
                at = a + piece.find(stripped) if stripped else a
                cells.append((at, at + len(stripped)))
        if len(cells) != len(header):
            break
        if pair:
            assert name_col is not None and value_col is not None
            a, b = cells[name_col]
            if not is_name(row[a:b]):
                continue
            targets = [value_col if value_col < len(cells) - 1 or not aligned else -1]
        else:
            targets = columns
        for col in targets:
            if col == -1:  # the last column of an aligned table: the rest of the line
                a = cells[-1][0]
                b = len(row.rstrip())
            else:
                a, b = cells[col]
            value = row[a:b]
            if len(value) >= 3 and not is_placeholder(value):
                spans.append((row_start + a, row_start + b))
    return pos


_LABEL_RE = re.compile(r"[ \t]*([A-Za-z][\w.\-]*(?: [\w.\-]+){1,3})[ \t]*[:=][ \t]*(\S(?:[^\n]*\S)?)[ \t\r]*")
_LABEL_LINE_RE = re2.compile(_LABEL_LINE, _OPTIONS)
_MAX_LINE = 4096  # a longer line is data, not a labelled value


_STEM_RE = re.compile(_STEM)
# Words that make a label a sentence about a credential ("Reset your password", "Enter the new token").
_PROSE_WORDS: Final = frozenset(
    {
        "your", "my", "our", "their", "his", "her", "the", "a", "an", "to", "for", "of", "is", "reset",
        "forgot", "forgotten", "change", "changed", "enter", "update", "updated", "set", "new", "confirm",
        "please", "no", "invalid", "wrong", "expired", "missing", "required", "how", "what", "where",
    }
)  # fmt: skip


def _label_spans(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """Values after a label of several words that names a credential ("Key Content : x")."""
    spans: list[Span] = []
    for candidate in _finditer(_LABEL_LINE_RE, text):
        line_start = text.rfind("\n", 0, candidate.start()) + 1
        line_end = text.find("\n", candidate.start())
        line_end = len(text) if line_end < 0 else line_end
        match = _LABEL_RE.fullmatch(text, line_start, line_end) if line_end - line_start <= _MAX_LINE else None
        if match is None:
            continue
        label = match.group(1)
        if not _STEM_RE.search(label) or _PROSE_WORDS.intersection(label.lower().split()) or not is_name(label):
            continue
        value = match.group(2)
        # One word, no link: "Reset your password: https://..." is a sentence, not a labelled value.
        if len(value) >= 3 and " " not in value and "://" not in value and not is_placeholder(value):
            spans.append(match.span(2))
    return spans


_XML_TAG_RE = re2.compile(_XML_TAG, _OPTIONS)
_TAG = re.compile(r"<([A-Za-z_][\w:.\-]*)((?:\s+[\w:.\-]+\s*=\s*(?:\"[^\"<]*\"|'[^'<]*'))+)\s*(/?)>")
_ATTRIBUTE = re.compile(r"([\w:.\-]+)\s*=\s*(?:\"([^\"<]*)\"|'([^'<]*)')")
_NAME_ATTRIBUTES: Final = frozenset(
    {"key", "name", "field", "property", "setting", "param", "variable", "option", "id"}
)
_VALUE_ATTRIBUTES: Final = frozenset({"value", "val", "defaultvalue", "default"})
_TEXT_AFTER = re.compile(r"[ \t\r\n]*(?:<(?:value|string)>)?([^<]*)<")
# Attributes that name something else though their names end like a credential word.
_NOT_SECRET_ATTRIBUTES: Final = frozenset({"type", "autocomplete", "for", "class", "id"})


def _xml_spans(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """Values of XML elements named like a credential by an attribute, and credential attributes."""
    spans = _element_pairs(text, is_name, is_placeholder)
    for candidate in _finditer(_XML_TAG_RE, text):
        match = _TAG.match(text, candidate.start())
        if match is None:
            continue
        attributes: dict[str, tuple[str, int, int]] = {}
        base = match.start(2)
        for attribute in _ATTRIBUTE.finditer(match.group(2)):
            group = 2 if attribute.group(2) is not None else 3
            attributes[attribute.group(1).lower()] = (
                attribute.group(group),
                base + attribute.start(group),
                base + attribute.end(group),
            )
        names = [v for k, (v, _, _) in attributes.items() if k in _NAME_ATTRIBUTES]
        named = any(len(v) <= 128 and is_name(v) for v in names)
        found = False
        for key, (value, start, end) in attributes.items():
            if key in _NOT_SECRET_ATTRIBUTES or key in _NAME_ATTRIBUTES:
                continue
            if ((named and key in _VALUE_ATTRIBUTES) or is_name(key)) and value and not is_placeholder(value):
                spans.append((start, end))
                found = True
        if named and not found and not match.group(3) and not any(k in _VALUE_ATTRIBUTES for k in attributes):
            after = _TEXT_AFTER.match(text, match.end())
            if after and after.group(1).strip() and not is_placeholder(after.group(1)):
                inner = after.group(1)
                start = after.start(1) + len(inner) - len(inner.lstrip())
                spans.append((start, start + len(inner.strip())))
    return spans


_ELEMENT_PAIR = re.compile(
    r"(?i)<(name|key)>[ \t\r\n]*([^<]{1,128}?)[ \t\r\n]*</\1>[ \t\r\n]*"
    r"(?:<description>[^<]{0,512}</description>[ \t\r\n]*)?<(value|val)>([^<]*)</\3>"
)


def _element_pairs(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """Hadoop-style <property><name>fs.s3a.secret.key</name><value>x</value></property>: the value."""
    spans: list[Span] = []
    for match in _finditer(_ELEMENT_PAIR, text):
        value = match.group(4)
        if is_name(match.group(2)) and value.strip() and not is_placeholder(value):
            start = match.start(4) + len(value) - len(value.lstrip())
            spans.append((start, start + len(value.strip())))
    return spans


_RECORD_LINE_RE = re2.compile(_RECORD_LINE, _OPTIONS)
_RECORD_PAIR = re.compile(r"[ \t]*([A-Za-z_][\w.\-]*)[ \t]*\|[ \t]*(\S(?:[^\n|]*\S)?)[ \t\r]*")
_NUMBERED_RE = re2.compile(_NUMBERED, _OPTIONS)
_NUMBERED_PAIR = re.compile(
    r"[ \t]*[0-9]{1,4}\)[ \t]+\"([^\"\n]{1,128})\"[ \t]*\r?\n[ \t]*[0-9]{1,4}\)[ \t]+\"([^\"\n]*)\""
)


def _pair_line_spans(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """Values in psql's expanded records ("api_key | x") and redis-cli's numbered name/value replies."""
    spans: list[Span] = []
    if "-[ RECORD" in text or "-[ record" in text.lower():
        for candidate in _finditer(_RECORD_LINE_RE, text):
            line_start = text.rfind("\n", 0, candidate.start()) + 1
            line_end = text.find("\n", candidate.start())
            line_end = len(text) if line_end < 0 else line_end
            match = _RECORD_PAIR.fullmatch(text, line_start, line_end) if line_end - line_start <= _MAX_LINE else None
            # psql prints a NULL as "(null)" (\pset null): a bracketed placeholder is no value.
            if match and is_name(match.group(1)) and not is_placeholder(match.group(2).strip("()[]<>")):
                spans.append(match.span(2))
    for candidate in _finditer(_NUMBERED_RE, text):
        line_start = text.rfind("\n", 0, candidate.start()) + 1
        match = _NUMBERED_PAIR.match(text, line_start)
        if match and is_name(match.group(1)) and match.group(2) and not is_placeholder(match.group(2)):
            spans.append(match.span(2))
    return spans


# A line of a hex dump: an offset, then bytes in hex (grouped or not), then xxd's or hexdump's text.
_DUMP_LINE = re.compile(
    r"[ \t]*(?:[0-9A-Fa-f]{4,8}:?[ \t]+)?(?:(?:0[xX]|\\x)?[0-9A-Fa-f]{2,}[ \t,:]*){2,}[^\n]*"
    r"|[ \t]*[0-9A-Fa-f]{16,}[ \t]*"
)


def _der_spans(text: str) -> list[Span]:
    """A DER private key written in hex: from its header to the end of the dump's lines."""
    spans: list[Span] = []
    done = 0
    for match in _finditer(_DER_RE, text):
        if match.start() < done:
            continue
        if match.start() > 0 and text[match.start() - 1].isalnum() and text[match.start() - 1] not in "xX":
            continue  # inside a longer hex run: not where a value starts
        end = text.find("\n", match.end())
        end = len(text) if end < 0 else end
        for line_start, line_end in _documents.line_spans(text, end + 1):
            if line_start >= len(text) or not _DUMP_LINE.fullmatch(text, line_start, line_end):
                break
            end = line_end
        spans.append((match.start(), end))
        done = end
    return spans


_ETH_RE = re.compile(r"(?<![0-9A-Za-z])(0[xX])?[0-9A-Fa-f]{64}(?![0-9A-Za-z])")
# Words before a 32-byte hex value that make it a wallet's key.
_WALLET_WORDS = re.compile(
    r"(?i)\b(?:wallet|signer|private|priv|pk|privkey|secret|signing|deployer|keystore|eth|ethereum|hot|cold|"
    r"account|mnemonic|seed|metamask|key)\b[^\n]{0,24}$"
)
# Words that make it a hash, an id or a public value.
_HASH_WORDS = re.compile(
    r"(?i)\b(?:tx|txn|txid|transaction|hash|block|blockhash|root|digest|commit|sha|sha256|sha3|keccak|topic|"
    r"topics|slot|checksum|id|nonce|salt|address|pubkey|public|signature|sig|merkle|receipt|log|event|data|"
    r"input|calldata|selector|codehash|storage)\w*\b[^\n]{0,24}$"
)
_HASH_LABEL = re.compile(
    r"(?i)(?:^|_|(?<=[a-z])(?=[A-Z])|\b)(?:hash|tx|txid|digest|root|commit|sha|checksum|id|topic|slot|nonce|salt|sig)"
)


def _eth_spans(text: str, label: str) -> list[Span]:
    """32-byte hex values that are a wallet's private key: after a wallet word, or alone."""
    spans: list[Span] = []
    for match in _finditer(_ETH_RE, text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        before = text[max(line_start, match.start() - 64) : match.start()]
        line_end = text.find("\n", match.end())
        after = text[match.end() : min(match.end() + 64, len(text) if line_end < 0 else line_end)]
        if _HASH_WORDS.search(before):
            continue
        alone = line_start >= match.start() - 64 and not before.strip(" \t\"'") and not after.strip(" \t\r\"',")
        prefixed = match.group(1) is not None
        if _WALLET_WORDS.search(before) or (
            alone and prefixed and not (label and _HASH_LABEL.search(label)) and not _hash_line_before(text, line_start)
        ):
            spans.append(match.span())
    return spans


def _hash_line_before(text: str, line_start: int) -> bool:
    """True when the line before names a hash ("Transaction hash:" with the value on the next line)."""
    if line_start == 0:
        return False
    previous = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1]
    return bool(previous.strip()) and _HASH_WORDS.search(previous.rstrip(" \t:=")) is not None


# ---------------------------------------------------------------------------------------------
# Cards the digit reader misses
# ---------------------------------------------------------------------------------------------

_NUMBER_WORDS: Final = {
    # English, French, Spanish, German, Italian, Portuguese, Dutch: no word means two digits.
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "oh": 0, "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8, "neuf": 9,
    "cero": 0, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
    "nueve": 9, "null": 0, "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fuenf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sei": 6, "sette": 7,
    "otto": 8, "nove": 9, "um": 1, "dois": 2, "sete": 7, "oito": 8, "nul": 0, "een": 1, "twee": 2,
    "drie": 3, "vijf": 5, "zes": 6, "zeven": 7, "negen": 9,
    "fünf": 5, "três": 3,
}  # fmt: skip
_NUMBER_WORD = "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
_SPELLED_RUN = rf"(?i:\b(?:{_NUMBER_WORD})\b)(?:[ \t,.\-]{{1,3}}(?:(?i:(?:{_NUMBER_WORD})\b)|[0-9]+))+"
_SPELLED_RE = re.compile(_SPELLED_RUN)
_SPELLED_PART = re.compile(rf"(?i)\b({_NUMBER_WORD})\b|([0-9]+)")
# Pieces with labels: "first8=60118507 last8=45358681", "part 1: 4539 1488 / part 2: 0343 6467". Pieces
# of 4-10 digits in a row on one line, at most 24 characters apart, each after a label; the label
# (what stands before a piece) must say it is a part (first, last, part, half, a digit: "last8").
_LABELLED_PIECE = r"[A-Za-z][\w\-]{0,15}[ \t]*[:=#][ \t]*[0-9]{4,10}"
_PIECE = re.compile(r"(?<![0-9A-Za-z])[0-9]{4,10}(?![0-9])")
# A piece's label says it is a part: a word for one, or letters with a digit ("last8", "part2", "p1").
# Not start/end/from/to: a date range ("start=20261204 end=20261205") would join into a card one time in ten.
_PIECE_LABEL = re.compile(
    r"(?i)[a-z][0-9]|\b(?:first|last|part|half|chunk|seg|segment|piece|head|tail|prefix|suffix|front|back|"
    r"card|pan|cc)"
)
# A card word before a reversed number, or in the key it came under: reversed, one 16-digit id in
# twenty would read as a card.
_CARD_WORD = re.compile(
    r"(?i)(?:card|\bcc|\bpan\b|visa|master ?card|amex|discover|tarjeta|carte|karte|cart[aã]o|kaart|payment"
    r"|revers|backward)"  # a number said to be written backwards is one to read the other way
)
_MAX_PIECES = 4096  # digit groups read per text
_LABEL_END = re.compile(r"[A-Za-z0-9][\w\-]{0,15}[ \t]*[:=#][ \t]*$")  # "last8=", "last 8: " (a letter is in the label)
_REVERSED = r"(?<![0-9])[0-9]{13,19}(?![0-9])"
_REVERSED_RE = re.compile(_REVERSED)
# What may start a card read here; the card redaction's own one-pass gate holds it too (CARD_GATE).
CARD_GATE: Final = f"(?:{_SPELLED_RUN})|(?:{_LABELLED_PIECE}[^\\n]{{1,24}}[0-9]{{4,10}})|(?:[0-9]{{13,19}})"
_CARD_GATE = _raw_search(re2.compile(CARD_GATE, _OPTIONS))


CardLayout = tuple[str, list[Span]]  # how it is written ("reversed", "pieces", "spelled"), where


def card_layout_spans(text: str, is_card: NameTest, label: str = "") -> list[CardLayout]:
    """Cards written reversed, in labelled pieces, or with digits spelled as words: how, and where.

    `label` is the key the text came under: a card word there lets a reversed number be read.
    """
    if len(text) < 13 or len(text) > _MAX_TEXT or not _CARD_GATE(text):
        return []
    found: list[CardLayout] = []
    named = bool(label) and _CARD_WORD.search(label) is not None
    for match in _finditer(_REVERSED_RE, text):
        digits = match.group()
        line_start = text.rfind("\n", 0, match.start()) + 1
        before = text[max(line_start, match.start() - 40) : match.start()]
        if (named or _CARD_WORD.search(before)) and not is_card(digits) and is_card(digits[::-1]):
            found.append(("reversed", [match.span()]))
    chain: list[re.Match[str]] = []
    for n, piece in enumerate(_PIECE.finditer(text)):
        if n >= _MAX_PIECES:
            break
        previous = chain[-1].end() if chain else text.rfind("\n", 0, piece.start()) + 1
        label = text[max(previous, piece.start() - 24) : piece.start()]
        labelled = "\n" not in label and _LABEL_END.search(label) is not None and _PIECE_LABEL.search(label) is not None
        if chain and (not labelled or piece.start() - previous > 24):
            if len(chain) > 1:
                found.extend(_pieces_cards(chain, is_card))
            chain = []
        if labelled:
            chain.append(piece)
    if len(chain) > 1:
        found.extend(_pieces_cards(chain, is_card))
    for match in _finditer(_SPELLED_RE, text):
        digits = "".join(
            str(_NUMBER_WORDS[m.group(1).lower()]) if m.group(1) else m.group(2)
            for m in _SPELLED_PART.finditer(match.group())
        )
        if any(
            is_card(digits[start:end])
            for start in range(len(digits))
            for end in range(start + 13, min(len(digits), start + 19) + 1)
        ):
            found.append(("spelled", [match.span()]))
    return found


def _pieces_cards(pieces: list[re.Match[str]], is_card: NameTest) -> list[CardLayout]:
    """The runs of consecutive pieces whose digits make a card."""
    found: list[CardLayout] = []
    a = 0
    while a < len(pieces):
        for b in range(a + 1, len(pieces)):
            digits = "".join(p.group() for p in pieces[a : b + 1])
            if len(digits) > 19:
                break
            if len(digits) >= 13 and is_card(digits):
                found.append(("pieces", [p.span() for p in pieces[a : b + 1]]))
                a = b
                break
        a += 1
    return found
