"""Safe, bounded YAML loading that keeps the file:line:column of every value for error messages.

The text is parsed into events by PyYAML's SafeLoader parser (its libyaml twin when available, for
speed); this module composes the events itself instead of calling a constructor, so no tag can ever
build a Python object, and every limit (size, depth, aliases, expanded nodes) is checked while the
events stream in, before any data exists. Scalars are read with the YAML 1.2 core schema, so the
data is JSON-like and free of YAML 1.1 surprises: `yes`/`on`/`no` stay strings, `2024-01-01` stays a
string, `1:30` is not 90 and `012` is twelve.

Positions: `SourceDoc.marks[path]` is where the value at `path` starts (at its anchor or tag when it
has one; at the `*alias` for a value written as an alias), `key_marks[path]` where its key starts.
`SourceDoc.position(path, n)` finds character `n` of a scalar's value in the text: exact for plain,
single- and double-quoted scalars (escapes, `''` and line folding included); for block scalars
(`|`, `>`) the value's lines are matched to the source lines after the header, so columns are
exact except inside leading spaces of more-indented lines, which point at the end of the line
before. For a scalar reached through an alias, `position` points into the anchored original.
"""

from __future__ import annotations

import codecs
import os
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from policyengine.values.problems import Location, Problem, ProblemSink, Severity

__all__ = [
    "MAX_DEPTH_LIMIT",
    "RULES_KEY",
    "DocPath",
    "NodeSite",
    "ScalarSpan",
    "SourceDoc",
    "load_yaml",
    "load_yaml_file",
    "rule_id_at",
]

DocPath = tuple[str | int, ...]

RULES_KEY = "rules"
# The builder recurses once per nesting level; this keeps it far from Python's recursion limit.
MAX_DEPTH_LIMIT = 400
# How many encoding problems one file reports before summarising the rest.
_MAX_CHAR_PROBLEMS = 10

# Use libyaml's parser when PyYAML was built with it (about 20x faster); tests switch it off to
# check that both parsers give the same data and positions.
_USE_LIBYAML: bool = bool(getattr(yaml, "__with_libyaml__", False))

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = frozenset({"str", "int", "float", "bool", "null"})

# The characters PyYAML's reader accepts (yaml.reader.Reader.NON_PRINTABLE), checked up front so
# every offending character is reported with its position, not only the first.
_NON_PRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# The line breaks PyYAML counts when it numbers lines; str.splitlines knows more, which would shift
# the source lines shown under a problem.
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")

# YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT_DEC = re.compile(r"[-+]?[0-9]+")
_INT_OCT = re.compile(r"0o[0-7]+")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")
# Every number, infinity and NaN above starts with one of these; any other plain scalar is a string.
_NUMBER_STARTS = frozenset("0123456789+-.")

_TAG_HINTS = {
    "timestamp": "dates are not a rule-file type; quote the value to keep it as a string",
    "binary": "binary data is not supported; write it as a plain (e.g. base64) string without the tag",
    "set": "use a plain list instead",
    "omap": "use a plain mapping instead",
    "pairs": "use a plain list of mappings instead",
    "merge": "merge keys ('<<') are not supported: write the keys out so every rule reads on its own",
}
_TAG_HINT_DEFAULT = (
    "rule files are plain data: only !!str, !!int, !!float, !!bool, !!null, !!seq and !!map are allowed; remove the tag"
)

# PyYAML's problem texts (and libyaml's, for the rare case only libyaml fails) -> how to fix it.
_SYNTAX_HINTS: tuple[tuple[str, str], ...] = (
    ("'\\t'", "YAML does not allow tabs for indentation; indent with spaces"),
    ("tab", "YAML does not allow tabs for indentation; indent with spaces"),
    (
        "mapping values are not allowed",
        "a plain value cannot contain ': '; quote the value, or check the indentation of this line",
    ),
    ("could not find expected ':'", "a key is missing its ':', or a quote opened on this line is never closed"),
    ("unexpected end of stream", "a quoted string or a flow collection ([...] or {...}) is never closed"),
    ("expected <block end>", "this line is not indented like its siblings; align it with the entries above"),
    ("did not find expected key", "this line is not indented like its siblings; align it with the entries above"),
    ("expected '-' indicator", "this list item is not indented like the items above it"),
    ("',' or ']'", "separate list items with ',' and close the list with ']'"),
    ("',' or '}'", "separate entries with ',' and close the mapping with '}'"),
    (
        "unknown escape character",
        "in double quotes a backslash starts an escape; write '\\\\' for a backslash, or use single quotes "
        "(easier for regular expressions and Windows paths)",
    ),
    ("cannot start any token", "quote the value: characters such as @, ` and % cannot start a plain scalar"),
)
_SYNTAX_HINT_DEFAULT = "check the quoting and indentation at this position"
_UNDEFINED_ALIAS_HINT = "define the anchor (&name) before the alias (*name) that uses it"


# -- the document ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScalarSpan:
    """Where a scalar's text lies in the source (0-based marks), so a column inside its value can be found."""

    value: str
    style: str | None
    line: int
    column: int
    end_line: int
    end_column: int
    has_properties: bool


@dataclass(frozen=True)
class NodeSite:
    """Extra facts about a located node: how wide to underline it (one-line nodes), and its scalar text if any."""

    width: int
    span: ScalarSpan | None


@dataclass
class SourceDoc:
    """One loaded YAML file: plain data plus the source position of every value and key."""

    filename: str
    data: Any
    lines: list[str] = field(repr=False)
    marks: dict[DocPath, Location] = field(default_factory=dict, repr=False)
    key_marks: dict[DocPath, Location] = field(default_factory=dict, repr=False)
    sites: dict[DocPath, NodeSite] = field(default_factory=dict, repr=False, compare=False)
    key_sites: dict[DocPath, NodeSite] = field(default_factory=dict, repr=False, compare=False)

    def locate(self, path: Sequence[str | int], *, key: bool = False) -> Location:
        """The value (or, with key=True, the key) at path, else the value of its longest existing prefix."""
        path = tuple(path)
        if key and path in self.key_marks:
            return self.key_marks[path]
        for end in range(len(path), -1, -1):
            loc = self.marks.get(path[:end])
            if loc is not None:
                return loc
        return Location.start_of(self.filename)

    def position(self, path: Sequence[str | int], offset: int, *, key: bool = False) -> Location:
        """Where character `offset` (0-based) of the scalar at path is; past the end means just after it."""
        path = tuple(path)
        offset = max(0, offset)
        site = (self.key_sites if key else self.sites).get(path)
        if site is None or site.span is None:
            # Not a scalar (or not there): count columns from the node's start, on its line.
            loc = self.locate(path, key=key)
            return Location(loc.file, loc.line, loc.column + offset)
        line, column = _scalar_position(self.lines, site.span, offset)
        return Location(self.filename, line + 1, column + 1)

    def line_text(self, line: int) -> str | None:
        """The text of a 1-based line, or None when the file has no such line."""
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else None

    def problem(
        self,
        code: str,
        message: str,
        path: Sequence[str | int],
        *,
        rule_id: str | None = None,
        hint: str | None = None,
        severity: Severity = Severity.ERROR,
        column_offset: int | None = None,
        width: int | None = None,
        key: bool = False,
    ) -> Problem:
        """A Problem located at path (its key with key=True; character column_offset of its scalar if given).

        The rule id defaults to the id of the rule that contains path; width defaults to the whole
        node when it sits on one line (1 when pointing inside a scalar).
        """
        path = tuple(path)
        if column_offset is None:
            loc = self.locate(path, key=key)
            if width is None:
                site = (self.key_sites if key else self.sites).get(path)
                exact = path in (self.key_marks if key else self.marks)
                width = site.width if site is not None and exact else 1
        else:
            loc = self.position(path, column_offset, key=key)
        return Problem(
            code=code,
            message=message,
            location=loc,
            rule_id=rule_id if rule_id is not None else rule_id_at(self, path),
            hint=hint,
            severity=severity,
            source_line=self.line_text(loc.line),
            caret_width=max(1, width or 1),
        )

    def rule_id_at(self, path: Sequence[str | int]) -> str | None:
        """The id of the rule containing path (see the module-level rule_id_at)."""
        return rule_id_at(self, path)


def rule_id_at(doc: SourceDoc, path: Sequence[str | int]) -> str | None:
    """If path is inside `rules[i]`, that rule's id (a string or number), for messages; else None."""
    if len(path) < 2 or path[0] != RULES_KEY:
        return None
    index = path[1]
    if not isinstance(index, int) or isinstance(index, bool) or not isinstance(doc.data, dict):
        return None
    rules = doc.data.get(RULES_KEY)
    if not isinstance(rules, list) or not 0 <= index < len(rules) or not isinstance(rules[index], dict):
        return None
    rid = rules[index].get("id")
    if isinstance(rid, str) and rid:
        return rid
    # A numeric id is still the best name for the rule in a message about it (the schema refuses it).
    if isinstance(rid, int | float) and not isinstance(rid, bool):
        return str(rid)
    return None


# -- loading -----------------------------------------------------------------------------------


def load_yaml(
    text: str | bytes,
    filename: str,
    sink: ProblemSink,
    *,
    max_bytes: int = 1_000_000,
    max_depth: int = 64,
    max_aliases: int = 100,
    max_nodes: int = 100_000,
    expect_mapping: bool = True,
) -> SourceDoc | None:
    """Load one YAML document safely, reporting every problem found into sink; None if any was an error.

    Bytes must be UTF-8 (a UTF-8 BOM is accepted). Limits: max_bytes of text, max_depth nested
    lists/mappings, max_aliases `*alias` uses, max_nodes nodes counted with aliases expanded.
    With expect_mapping the top level must be a mapping (PE107).
    """
    if not 1 <= max_depth <= MAX_DEPTH_LIMIT:
        raise ValueError(f"max_depth must be between 1 and {MAX_DEPTH_LIMIT}, got {max_depth}")
    problems: list[Problem] = []
    try:
        doc = _load(text, filename, problems, _Limits(max_bytes, max_depth, max_aliases, max_nodes), expect_mapping)
    except (ValueError, RecursionError, OverflowError) as error:  # a parser corner nothing above caught
        problems.append(
            Problem(
                "PE101",
                f"cannot parse {filename}: {type(error).__name__}: {error}",
                Location(filename, 1, 1),
                hint="check the file's syntax and characters",
            )
        )
        doc = None
    sink.extend(problems)
    if any(p.is_error for p in problems):
        return None
    return doc


def load_yaml_file(
    path: str | os.PathLike[str],
    sink: ProblemSink,
    *,
    filename: str | None = None,
    max_bytes: int = 1_000_000,
    max_depth: int = 64,
    max_aliases: int = 100,
    max_nodes: int = 100_000,
    expect_mapping: bool = True,
) -> SourceDoc | None:
    """Read and load a YAML file (PE108 if it cannot be read); never reads more than max_bytes + 1 bytes.

    filename is the name used in locations (default: path as given).
    """
    name = filename if filename is not None else os.fspath(path)
    try:
        with open(path, "rb") as handle:
            # Read one byte past the limit: enough to know the file is too large, without
            # pulling a huge (or endless, like /dev/zero) file into memory.
            data = handle.read(max_bytes + 1)
            size = os.fstat(handle.fileno()).st_size
    except FileNotFoundError:
        sink.add(_file_problem(name, "file not found", "create the file, or fix the path that names it"))
        return None
    except IsADirectoryError:
        sink.add(_file_problem(name, "is a directory, not a YAML file", "name a .yaml file instead"))
        return None
    except PermissionError:
        hint = "make the file readable by the user running policyengine"
        sink.add(_file_problem(name, "cannot be read: permission denied", hint))
        return None
    except OSError as exc:
        sink.add(
            _file_problem(name, f"cannot be read: {exc.strerror or exc}", "check that the file is a readable file")
        )
        return None
    if len(data) > max_bytes:
        sink.add(_too_large(name, max(size, len(data)), max_bytes, exact=size > max_bytes))
        return None
    return load_yaml(
        data,
        name,
        sink,
        max_bytes=max_bytes,
        max_depth=max_depth,
        max_aliases=max_aliases,
        max_nodes=max_nodes,
        expect_mapping=expect_mapping,
    )


@dataclass(frozen=True)
class _Limits:
    max_bytes: int
    max_depth: int
    max_aliases: int
    max_nodes: int


def _load(
    text: str | bytes, filename: str, problems: list[Problem], limits: _Limits, expect_mapping: bool
) -> SourceDoc | None:
    """The steps of load_yaml; appends to problems and returns None at the first step that failed."""
    decoded = _decode(text, filename, problems, limits.max_bytes)
    if decoded is None:
        return None
    lines = _split_lines(decoded)
    if _check_printable(decoded, filename, lines, problems):
        return None
    composer = _Composer(filename, lines, limits, problems)
    try:
        root = composer.compose(_parse(decoded))
    except _Stop as stop:
        problems.append(stop.problem)
        return None
    except yaml.YAMLError as first:
        error: yaml.YAMLError = first
        if _USE_LIBYAML:
            # libyaml scans ahead, so a limit (deep nesting) can hide behind a later syntax error:
            # stream the pure-Python parser through a fresh composer to find whichever comes first.
            try:
                _Composer(filename, lines, limits, []).compose(yaml.parse(decoded, Loader=yaml.SafeLoader))
            except _Stop as stop:
                problems.append(stop.problem)
                return None
            except yaml.YAMLError as pure:
                error = pure
        problems.append(_syntax_problem(error, decoded, filename, lines))
        return None
    if isinstance(root, _Scalar) and root.data is None and root.span.value == "" and not root.span.has_properties:
        root = None  # a lone '---' (or '...') is an empty file too
    if root is None and expect_mapping:
        problems.append(
            Problem(
                "PE107",
                "file is empty; expected a mapping at the top level",
                Location.start_of(filename),
                hint="write the file's top-level keys (an empty file is almost always a mistake)",
                source_line=lines[0] if lines else None,
            )
        )
        return None
    if expect_mapping and not isinstance(root, _Map):
        assert root is not None
        kind = "a list" if isinstance(root, _Seq) else "a single value"
        problems.append(
            _node_problem(
                "PE107",
                f"the top level of this file is {kind}; it must be a mapping of keys to values",
                filename,
                lines,
                root,
                hint="start the file with its top-level keys (for a rule file: `rules:` followed by the list)",
            )
        )
        return None
    # Build even after composer problems (a forbidden tag...): the walk finds duplicate keys and
    # bad keys too, so one run reports them all. Building constructs nothing but plain data.
    builder = _Builder(filename, lines)
    data = builder.value(root, ()) if root is not None else None
    doc = SourceDoc(filename, data, lines, builder.marks, builder.key_marks, builder.sites, builder.key_sites)
    if root is None:
        doc.marks[()] = Location.start_of(filename)
    for problem, path in builder.problems:
        rid = rule_id_at(doc, path)
        problems.append(replace(problem, rule_id=rid) if rid is not None else problem)
    return doc


def _parse(text: str) -> Iterator[Event]:
    """The event stream of text, from libyaml when available."""
    loader = yaml.CSafeLoader if _USE_LIBYAML else yaml.SafeLoader
    return yaml.parse(text, Loader=loader)


# -- bytes and characters ----------------------------------------------------------------------


def _file_problem(filename: str, message: str, hint: str) -> Problem:
    return Problem("PE108", message, Location.start_of(filename), hint=hint)


def _too_large(filename: str, size: int, limit: int, *, exact: bool = True) -> Problem:
    amount = f"{size:,} bytes" if exact else f"more than {limit:,} bytes"
    return Problem(
        "PE104",
        f"file is too large: {amount}; the limit is {limit:,} bytes",
        Location.start_of(filename),
        hint="split the rules into several files listed in the manifest (or raise max_bytes)",
    )


def _decode(text: str | bytes, filename: str, problems: list[Problem], max_bytes: int) -> str | None:
    """Text as str without a BOM, or None after reporting PE104/PE109. The size is checked first."""
    if isinstance(text, str):
        # Every character is at least one byte, so a long string is too large without encoding it.
        size = len(text) if len(text) > max_bytes else len(text.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            problems.append(_too_large(filename, size, max_bytes, exact=len(text) <= max_bytes))
            return None
        return text[1:] if text.startswith("\ufeff") else text
    data = bytes(text)
    if len(data) > max_bytes:
        problems.append(_too_large(filename, len(data), max_bytes))
        return None
    for bom, name in (
        (codecs.BOM_UTF32_LE, "UTF-32"),
        (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"),
        (codecs.BOM_UTF16_BE, "UTF-16"),
    ):
        if data.startswith(bom):
            problems.append(
                Problem(
                    "PE109",
                    f"file is encoded as {name}; rule files must be UTF-8",
                    Location.start_of(filename),
                    hint="save the file as UTF-8 (most editors: 'Save with encoding' -> UTF-8)",
                )
            )
            return None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    # Find every undecodable byte sequence (up to a cap), each at its line and column.
    start = 0
    found = 0
    while start < len(data):
        try:
            data[start:].decode("utf-8")
            break
        except UnicodeDecodeError as exc:
            bad = start + exc.start
            found += 1
            if found > _MAX_CHAR_PROBLEMS:
                problems.append(_byte_problem(data, bad, filename, "more bytes that are not UTF-8 follow from here"))
                break
            problems.append(_byte_problem(data, bad, filename, f"byte 0x{data[bad]:02X} is not valid UTF-8"))
            start = start + exc.end
    return None


def _byte_problem(data: bytes, offset: int, filename: str, message: str) -> Problem:
    """A PE109 at a byte offset: lines broken as PyYAML breaks them (CR too), column in decoded characters."""
    before = data[:offset].decode("utf-8", "replace")
    line, column = _offset_position(before, len(before))
    lines = _split_lines(data.decode("utf-8", "replace"))
    source = lines[line] if line < len(lines) else ""
    return Problem(
        "PE109",
        message,
        Location(filename, line + 1, column + 1),
        hint="save the file as UTF-8 (it may be Latin-1 or Windows-1252), or remove the stray bytes",
        source_line=source,
    )


def _split_lines(text: str) -> list[str]:
    """The lines of text without their breaks, numbered as PyYAML numbers them."""
    if not text:
        return []
    parts = _BREAK.split(text)
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _offset_position(text: str, offset: int) -> tuple[int, int]:
    """0-based (line, column) of a character offset in text."""
    line = 0
    line_start = 0
    for match in _BREAK.finditer(text, 0, offset):
        line += 1
        line_start = match.end()
    return line, offset - line_start


def _check_printable(text: str, filename: str, lines: list[str], problems: list[Problem]) -> bool:
    """Report characters YAML forbids (controls, NUL, lone surrogates); True if any was found."""
    found = 0
    for match in _NON_PRINTABLE.finditer(text):
        found += 1
        line, column = _offset_position(text, match.start())
        ch = match.group()
        if found > _MAX_CHAR_PROBLEMS:
            message = "more characters that YAML does not allow follow from here"
        else:
            name = unicodedata.name(ch, "control character")
            message = f"character U+{ord(ch):04X} ({name}) is not allowed in YAML"
        if ch == "\0":
            hint = "NUL characters usually mean the file is UTF-16 or binary; save it as UTF-8 text"
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            hint = "the text holds undecodable bytes (a lone surrogate); save the file as UTF-8"
        else:
            hint = 'remove it, or write it as an escape inside a double-quoted string (e.g. "\\x01")'
        problems.append(_problem_at("PE109", message, filename, lines, line, column, hint=hint))
        if found > _MAX_CHAR_PROBLEMS:
            break
    return found > 0


def _syntax_problem(exc: yaml.YAMLError, text: str, filename: str, lines: list[str]) -> Problem:
    """PE101 at PyYAML's problem mark, with its problem text and a hint for the usual causes."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if mark is None:
        # A reader error (no mark, only a character position) or something unexpected.
        line, column = _offset_position(text, min(getattr(exc, "position", 0) or 0, len(text)))
        return _problem_at(
            "PE101", f"YAML cannot read this text: {exc}", filename, lines, line, column, hint=_SYNTAX_HINT_DEFAULT
        )
    line, column = mark.line, mark.column
    message = str(problem or exc)
    at_end = line >= len(lines) or (line == len(lines) - 1 and column >= len(lines[line]))
    if context and context_mark is not None:
        if at_end:
            # "unexpected end of stream" at EOF helps nobody: point at what was left open.
            line, column = context_mark.line, context_mark.column
            message = f"{message} ({context}, which starts here)"
        elif (context_mark.line, context_mark.column) != (line, column):
            where = f"line {context_mark.line + 1}, column {context_mark.column + 1}"
            message = f"{message} ({context} that starts at {where})"
    # Match on PyYAML's problem text only: the context ("while scanning ...") would mislead.
    hint = next((h for needle, h in _SYNTAX_HINTS if needle in str(problem or exc)), _SYNTAX_HINT_DEFAULT)
    return _problem_at("PE101", f"YAML syntax error: {message}", filename, lines, line, column, hint=hint)


def _problem_at(
    code: str, message: str, filename: str, lines: list[str], line: int, column: int, *, hint: str, width: int = 1
) -> Problem:
    """A problem at a 0-based line and column of the file, with that line's text."""
    return Problem(
        code,
        message,
        Location(filename, line + 1, column + 1),
        hint=hint,
        source_line=lines[line] if line < len(lines) else None,
        caret_width=width,
    )


# -- composing events into nodes ---------------------------------------------------------------


@dataclass(eq=False, slots=True)
class _Scalar:
    start: tuple[int, int]
    end: tuple[int, int]
    span: ScalarSpan
    data: Any
    plain: bool
    size: int = 1
    height: int = 0


@dataclass(eq=False, slots=True)
class _Seq:
    start: tuple[int, int]
    end: tuple[int, int]
    items: list[_Node] = field(default_factory=list)
    size: int = 1
    height: int = 1


@dataclass(eq=False, slots=True)
class _Map:
    start: tuple[int, int]
    end: tuple[int, int]
    # Keys and values alternate: items[0] is the first key, items[1] its value, ...
    items: list[_Node] = field(default_factory=list)
    size: int = 1
    height: int = 1


@dataclass(eq=False, slots=True)
class _Alias:
    start: tuple[int, int]
    end: tuple[int, int]
    name: str
    target: _Node
    size: int = 1
    height: int = 0


_Node = _Scalar | _Seq | _Map | _Alias


class _Stop(Exception):
    """Composition cannot go on (a limit was hit); carries the problem to report."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def _mark(mark: Any) -> tuple[int, int]:
    return int(mark.line), int(mark.column)


def _node_problem(
    code: str, message: str, filename: str, lines: list[str], node: _Node, *, hint: str, width: int = 1
) -> Problem:
    line, column = node.start
    return _problem_at(code, message, filename, lines, line, column, hint=hint, width=width)


def _short_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


def _printable_int(number: int) -> int:
    """Refuse an integer Python cannot print (hex and octal escape the decimal digit limit)."""
    str(number)  # raises ValueError past sys.int_max_str_digits, like a decimal literal would
    return number


def _implicit(value: str) -> Any:
    """A plain scalar's value under the YAML 1.2 core schema (raises ValueError for a huge integer)."""
    if value in _NULLS:
        return None
    if value in _BOOLS:
        return _BOOLS[value]
    if value[0] not in _NUMBER_STARTS:  # most scalars of a rule file: ids, stages, expressions
        return value
    if _INT_DEC.fullmatch(value):
        return int(value, 10)
    if _INT_OCT.fullmatch(value):
        return _printable_int(int(value[2:], 8))
    if _INT_HEX.fullmatch(value):
        return _printable_int(int(value[2:], 16))
    if _FLOAT.fullmatch(value):
        return float(value)
    if _INF.fullmatch(value):
        return float("-inf") if value.startswith("-") else float("inf")
    if _NAN.fullmatch(value):
        return float("nan")
    return value


def _explicit(kind: str, value: str) -> tuple[bool, Any]:
    """(ok, data) for a scalar written with an explicit core tag such as `!!int`."""
    if kind == "str":
        return True, value
    data = _implicit(value)
    if kind == "float" and isinstance(data, int) and not isinstance(data, bool):
        return True, float(data)
    expected = {"int": int, "float": float, "bool": bool, "null": type(None)}[kind]
    # bool is an int subclass: `!!int true` must not pass.
    ok = isinstance(data, expected) and (kind == "bool" or not isinstance(data, bool))
    return ok, data


class _Composer:
    """Turns the event stream into a node graph, enforcing every limit and refusing unsafe tags."""

    def __init__(self, filename: str, lines: list[str], limits: _Limits, problems: list[Problem]) -> None:
        self.filename = filename
        self.lines = lines
        self.limits = limits
        self.problems = problems
        self.anchors: dict[str, _Node] = {}
        self.stack: list[_Seq | _Map] = []
        # Collections not yet closed: an alias to one of them would make the data infinite.
        self.open: set[int] = set()
        self.nodes = 0
        self.aliases = 0
        self.root: _Node | None = None

    def compose(self, events: Iterator[Event]) -> _Node | None:
        """The root node of the only document in the stream (None for an empty stream)."""
        next(events)  # StreamStartEvent
        event = next(events)
        if isinstance(event, StreamEndEvent):
            return None
        for event in events:
            if isinstance(event, DocumentEndEvent):
                break
            self._event(event)
        following = next(events, None)
        if isinstance(following, DocumentStartEvent):
            self.problems.append(
                self._problem(
                    "PE110",
                    "this file holds more than one YAML document (a second '---' starts here)",
                    _mark(following.start_mark),
                    hint="a rule file is one document: remove this '---' and what follows, "
                    "or move it to its own file listed in the manifest",
                    width=3,
                )
            )
        return self.root

    def _problem(self, code: str, message: str, at: tuple[int, int], *, hint: str, width: int = 1) -> Problem:
        line, column = at
        return _problem_at(code, message, self.filename, self.lines, line, column, hint=hint, width=width)

    def _event(self, event: Event) -> None:
        kind = type(event)  # PyYAML never subclasses its events: exact types, cheaper than isinstance
        if kind is ScalarEvent:
            self._scalar(event)  # type: ignore[arg-type]
        elif kind is SequenceEndEvent or kind is MappingEndEvent:
            self._close(event)  # type: ignore[arg-type]
        elif kind is SequenceStartEvent or kind is MappingStartEvent:
            self._open(event)  # type: ignore[arg-type]
        elif kind is AliasEvent:
            self._alias(event)  # type: ignore[arg-type]

    def _attach(self, node: _Node) -> None:
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise _Stop(
                self._problem(
                    "PE104",
                    f"this file has more than {self.limits.max_nodes:,} values; loading stopped here",
                    node.start,
                    hint="split the rules into several files listed in the manifest",
                )
            )
        if not self.stack:
            self.root = node
            return
        parent = self.stack[-1]
        is_key = isinstance(parent, _Map) and len(parent.items) % 2 == 0
        parent.items.append(node)
        if is_key and isinstance(node, _Scalar) and node.plain and node.span.value == "<<":
            self.problems.append(
                self._problem("PE103", "merge key '<<' is not supported", node.start, hint=_TAG_HINTS["merge"], width=2)
            )

    def _anchor(self, anchor: str | None, node: _Node) -> None:
        if anchor is None:
            return
        first = self.anchors.get(anchor)
        if first is not None:
            line, column = first.start
            self.problems.append(
                self._problem(
                    "PE101",
                    f"anchor &{anchor} is defined again (first at line {line + 1}, column {column + 1})",
                    node.start,
                    hint=f"give each anchor (&name) a different name; a reader cannot tell which one *{anchor} means",
                    width=len(anchor) + 1,
                )
            )
        self.anchors[anchor] = node

    def _check_tag(self, tag: str | None, expected: str, at: tuple[int, int]) -> str | None:
        """The core kind of an explicit tag (`int`, `seq`...), or None after reporting PE103 for any other."""
        if tag is None or tag == "!":
            return None
        kind = tag[len(_CORE) :] if tag.startswith(_CORE) else ""
        if kind == expected or (expected == "scalar" and kind in _SCALAR_TAGS):
            return kind
        # Point at the tag itself, which follows the anchor when both are written.
        line, column = at
        text = self.lines[line] if line < len(self.lines) else ""
        bang = text.find("!", column)
        width = 1
        if bang >= 0:
            column = bang
            width = len(text[bang:].split(None, 1)[0])
        short = _short_tag(tag)
        if kind in {"seq", "map"} | _SCALAR_TAGS:
            message = f"tag {short} does not fit this {'value' if expected == 'scalar' else expected}"
            hint = "remove the tag"
        else:
            message = f"tag {short} is not allowed in rule files"
            hint = _TAG_HINTS.get(kind, _TAG_HINT_DEFAULT)
            if kind.startswith("python/"):
                message += " (it would construct a Python object; nothing was constructed)"
        self.problems.append(self._problem("PE103", message, (line, column), hint=hint, width=max(1, width)))
        return ""

    def _scalar(self, event: ScalarEvent) -> None:
        start, end = _mark(event.start_mark), _mark(event.end_mark)
        value = event.value
        kind = self._check_tag(event.tag, "scalar", start)
        plain = bool(event.implicit[0]) and event.tag is None
        data: Any = value
        width = _span_width(start, end)
        try:
            if kind:
                ok, data = _explicit(kind, value)
                if not ok:
                    self.problems.append(
                        self._problem(
                            "PE112",
                            f"{value!r} is not a valid {_short_tag(_CORE + kind)}",
                            start,
                            hint=f"write a valid {kind} value, or remove the tag",
                            width=width,
                        )
                    )
            elif plain:
                data = _implicit(value)
        except ValueError:
            # int() refuses numbers with thousands of digits (CVE-2020-10735); so do we.
            self.problems.append(
                self._problem(
                    "PE112",
                    f"number with {len(value):,} digits is too large",
                    start,
                    hint="quote it if it is meant as a string",
                    width=min(width, 40),
                )
            )
        style = event.style or None  # libyaml reports plain style as ''
        span = ScalarSpan(value, style, start[0], start[1], end[0], end[1], event.anchor is not None or bool(event.tag))
        node = _Scalar(start, end, span, data, plain)
        self._anchor(event.anchor, node)
        self._attach(node)

    def _open(self, event: SequenceStartEvent | MappingStartEvent) -> None:
        start = _mark(event.start_mark)
        depth = len(self.stack) + 1
        if depth > self.limits.max_depth:
            raise _Stop(
                self._problem(
                    "PE105",
                    f"nesting is deeper than {self.limits.max_depth} levels",
                    start,
                    hint="flatten the structure; rule files never need this much nesting",
                )
            )
        is_seq = isinstance(event, SequenceStartEvent)
        self._check_tag(event.tag, "seq" if is_seq else "map", start)
        node: _Seq | _Map = _Seq(start, start) if is_seq else _Map(start, start)
        self._anchor(event.anchor, node)
        self._attach(node)
        self.stack.append(node)
        self.open.add(id(node))

    def _close(self, event: SequenceEndEvent | MappingEndEvent) -> None:
        node = self.stack.pop()
        self.open.discard(id(node))
        node.end = _mark(event.end_mark)
        node.size = 1 + sum(child.size for child in node.items)
        node.height = 1 + max((child.height for child in node.items), default=0)
        if node.size > self.limits.max_nodes:
            # Raw nodes are counted in _attach, so only aliases can make the expansion this large.
            heaviest = max((c for c in node.items if isinstance(c, _Alias)), key=lambda c: c.size, default=None)
            at = heaviest.start if heaviest is not None else node.start
            what = f"*{heaviest.name} here" if heaviest is not None else "its aliases"
            raise _Stop(
                self._problem(
                    "PE106",
                    f"aliases expand this {'list' if isinstance(node, _Seq) else 'mapping'} to {node.size:,} values "
                    f"(more than {self.limits.max_nodes:,}); {what} repeats {heaviest.size if heaviest else 0:,} "
                    "values (an alias bomb?)",
                    at,
                    hint="write the values out, or use a named list instead of nested aliases",
                )
            )

    def _alias(self, event: AliasEvent) -> None:
        start, end = _mark(event.start_mark), _mark(event.end_mark)
        name = str(event.anchor)
        self.aliases += 1
        if self.aliases > self.limits.max_aliases:
            raise _Stop(
                self._problem(
                    "PE106",
                    f"more than {self.limits.max_aliases} aliases (*name) in one file",
                    start,
                    hint="write the values out, or declare a named list once and refer to it by name",
                    width=len(name) + 1,
                )
            )
        target = self.anchors.get(name)
        if target is None:
            self.problems.append(
                self._problem(
                    "PE101",
                    f"alias *{name} refers to no anchor (&{name} is not defined above it)",
                    start,
                    hint=_UNDEFINED_ALIAS_HINT,
                    width=len(name) + 1,
                )
            )
            # A null stands in so composing can go on and find the file's other problems.
            self._attach(_Scalar(start, end, ScalarSpan("", None, *start, *end, False), None, True))
            return
        if id(target) in self.open:
            raise _Stop(
                self._problem(
                    "PE106",
                    f"alias *{name} is inside the value it refers to, which would make it infinite",
                    start,
                    hint="an alias can only repeat a value that is complete before it",
                    width=len(name) + 1,
                )
            )
        if len(self.stack) + target.height > self.limits.max_depth:
            raise _Stop(
                self._problem(
                    "PE105",
                    f"alias *{name} nests values deeper than {self.limits.max_depth} levels",
                    start,
                    hint="flatten the structure; rule files never need this much nesting",
                    width=len(name) + 1,
                )
            )
        self._attach(_Alias(start, end, name, target, target.size, target.height))


# -- building plain data -----------------------------------------------------------------------


def _kind_name(data: Any) -> str:
    if data is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number"}.get(type(data), type(data).__name__)


class _Builder:
    """Builds plain dicts/lists from the node graph, recording where every value and key is."""

    def __init__(self, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines
        self.marks: dict[DocPath, Location] = {}
        self.key_marks: dict[DocPath, Location] = {}
        self.sites: dict[DocPath, NodeSite] = {}
        self.key_sites: dict[DocPath, NodeSite] = {}
        # (problem, path) pairs: the path fills in the rule id once all data exists.
        self.problems: list[tuple[Problem, DocPath]] = []
        # A node reached several times through aliases reports its problems once.
        self.reported: set[tuple[int, str]] = set()

    def _record(
        self, marks: dict[DocPath, Location], sites: dict[DocPath, NodeSite], path: DocPath, node: _Node
    ) -> None:
        if path in marks:
            return
        line, column = node.start
        marks[path] = Location(self.filename, line + 1, column + 1)
        target = node
        while isinstance(target, _Alias):
            target = target.target
        sites[path] = NodeSite(_span_width(node.start, node.end), target.span if isinstance(target, _Scalar) else None)

    def _report(self, node: _Node, code: str, message: str, path: DocPath, hint: str, width: int = 1) -> None:
        if (id(node), code) in self.reported:
            return
        self.reported.add((id(node), code))
        problem = _node_problem(code, message, self.filename, self.lines, node, hint=hint, width=width)
        self.problems.append((problem, path))

    def value(self, node: _Node, path: DocPath, record: bool = True) -> Any:
        """The plain data of node; record=False walks it for problems without claiming its path."""
        if record:
            self._record(self.marks, self.sites, path, node)
        while isinstance(node, _Alias):
            node = node.target
        if isinstance(node, _Scalar):
            return node.data
        if isinstance(node, _Seq):
            out: list[Any] = []
            for index, child in enumerate(node.items):
                out.append(self.value(child, (*path, index), record))
            return out
        return self._mapping(node, path, record)

    def _mapping(self, node: _Map, path: DocPath, record: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first: dict[str, _Node] = {}
        for index in range(0, len(node.items), 2):
            key_node, value_node = node.items[index], node.items[index + 1]
            key = self._key(key_node, path)
            if key is None:
                self.value(value_node, path, record=False)
                continue
            child = (*path, key)
            if key in first:
                line, column = first[key].start
                self._report(
                    key_node,
                    "PE102",
                    f"duplicate key {key!r}; it is already defined at line {line + 1}, column {column + 1}",
                    child,
                    "YAML silently keeps only the last of repeated keys, which can hide a rule; "
                    "remove one of them or merge their contents",
                    _span_width(key_node.start, key_node.end),
                )
                self.value(value_node, child, record=False)
                continue
            first[key] = key_node
            if record:
                self._record(self.key_marks, self.key_sites, child, key_node)
            out[key] = self.value(value_node, child, record)
        return out

    def _key(self, key_node: _Node, path: DocPath) -> str | None:
        """The key as a string, or None after reporting PE111."""
        target = key_node
        while isinstance(target, _Alias):
            target = target.target
        if isinstance(target, _Scalar) and isinstance(target.data, str):
            return target.data
        if isinstance(target, _Scalar):
            text = target.span.value
            if target.data is None and not text:
                message = "a mapping key is empty; keys must be strings"
                hint = "write a key name before the ':'"
            else:
                message = f"mapping key {text} is read as {_kind_name(target.data)}; keys must be strings"
                hint = f'quote it to keep it as a string: "{text}":'
        else:
            kind = "list" if isinstance(target, _Seq) else "mapping"
            message = f"a {kind} is used as a mapping key; keys must be strings"
            hint = "use a plain string key ('? [a, b]' style complex keys are not supported)"
        self._report(key_node, "PE111", message, path, hint, _span_width(key_node.start, key_node.end))
        return None


def _span_width(start: tuple[int, int], end: tuple[int, int]) -> int:
    """The caret width from start to end: their column distance on one line, else 1."""
    (line, column), (end_line, end_column) = start, end
    return end_column - column if end_line == line and end_column > column else 1


# -- columns inside scalars --------------------------------------------------------------------


def _text_start(lines: list[str], line: int, column: int) -> tuple[int, int]:
    """Skip a node's anchor and tag (and the space or comments after them) to where its text begins."""
    while line < len(lines):
        text = lines[line]
        while column < len(text) and text[column] in " \t":
            column += 1
        if column >= len(text) or text[column] == "#":
            line, column = line + 1, 0
            continue
        if text[column] in "&!":
            while column < len(text) and text[column] not in " \t,[]{}":
                column += 1
            continue
        return line, column
    return line, column


def _scalar_position(lines: list[str], span: ScalarSpan, offset: int) -> tuple[int, int]:
    """0-based (line, column) of value character `offset`; falls back to counting from the text start."""
    line, column = span.line, span.column
    if span.has_properties:
        line, column = _text_start(lines, line, column)
    if span.style in ("|", ">"):
        found = _block_position(lines, span, line, offset)
    else:
        found = _flow_position(lines, span, line, column, offset)
    if found is not None:
        return found
    # The walk could not follow the text (should not happen): count from the text's start on its line.
    return line, column + (1 if span.style in ("'", '"') else 0) + offset


_ESCAPE_LENGTH = {"x": 2, "u": 4, "U": 8}


def _fold(lines: list[str], line: int) -> tuple[int, int, int]:
    """After the break ending `line`: (next text line, its first column, value chars the folding made)."""
    line += 1
    empty = 0
    while line < len(lines) and not lines[line].strip(" \t"):
        empty += 1
        line += 1
    if line >= len(lines):
        return line, 0, 0
    text = lines[line]
    # One break folds into a space; n empty lines in between become n newlines.
    return line, len(text) - len(text.lstrip(" \t")), empty or 1


def _flow_position(lines: list[str], span: ScalarSpan, line: int, column: int, offset: int) -> tuple[int, int] | None:
    """Walk a plain or quoted scalar's source in step with its value, undoing escapes and line folding."""
    style, value = span.style, span.value
    if style in ("'", '"'):
        if line >= len(lines) or lines[line][column : column + 1] != style:
            return None
        column += 1
    index = 0
    while line < len(lines):
        text = lines[line]
        if index >= len(value):
            return line, column  # just past the last character
        if not text[column:].strip(" \t"):
            # Trailing blanks and the break fold into the value (a space or newlines).
            next_line, next_column, made = _fold(lines, line)
            if made == 0 or offset < index + made:
                return line, column
            index += made
            line, column = next_line, next_column
            continue
        ch = text[column]
        if style == '"' and ch == "\\":
            if column + 1 == len(text):
                # An escaped line break joins the lines with nothing in between.
                line += 1
                if line < len(lines):
                    column = len(lines[line]) - len(lines[line].lstrip(" \t"))
                continue
            if index == offset:
                return line, column
            index += 1
            column += 2 + _ESCAPE_LENGTH.get(text[column + 1], 0)
            continue
        if style == "'" and ch == "'":
            if text[column + 1 : column + 2] != "'":
                return line, column  # the closing quote
            if index == offset:
                return line, column
            index += 1
            column += 2
            continue
        if style == '"' and ch == '"':
            return line, column
        if value[index] != ch:
            return None
        if index == offset:
            return line, column
        index += 1
        column += 1
    return None


def _block_position(lines: list[str], span: ScalarSpan, header: int, offset: int) -> tuple[int, int] | None:
    """Match a block scalar's value lines to the source lines after its `|`/`>` header."""
    value = span.value
    last = min(max(span.end_line, header + 1), len(lines) - 1)
    content = [n for n in range(header + 1, last + 1) if lines[n].strip(" ")]
    if not content:
        return None
    indent = len(lines[content[0]]) - len(lines[content[0]].lstrip(" "))
    index = 0
    previous_end: tuple[int, int] | None = None
    for number in content:
        source = lines[number]
        if len(source) - len(source.lstrip(" ")) < indent:
            break  # less indented: the scalar ended before this line
        text = source[indent:]
        found = value.find(text, index)
        if found < 0:
            return None
        if offset < found:
            # The offset is in a line break between lines (or leading spaces): end of the line before.
            return previous_end if previous_end is not None else (number, indent)
        if offset < found + len(text):
            return number, indent + offset - found
        index = found + len(text)
        previous_end = (number, len(source))
    return previous_end
