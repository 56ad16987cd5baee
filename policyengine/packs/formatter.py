"""Pack files in one canonical layout, comments kept: what `policyengine fmt` writes.

Why ruamel.yaml: a formatter rewrites files people wrote, so it must round-trip their comments.
PyYAML, which the loader parses with, drops comments (and quoting) on the way in; ruamel.yaml's
round-trip mode keeps comments, quote styles, flow/block style and key order through a load and a
dump. It is an optional extra (`pip install 'agent-policyengine[fmt]'`): only this module imports it,
and only the fmt verb imports this module, so `import policyengine` and every other verb run
without it.

The layout (docs/rules.md, "Formatting"): 2-space indentation, block lists indented under their
key, keys of manifests, rules, redactions and policy tests in one order (`_orders()`), quotes and
flow/block style as written, no wrapping, `null` for null, full-line comments indented like the
line they precede, no trailing whitespace, one final newline.

Keys are reordered on the text, before ruamel sees it, by moving whole lines: ruamel attaches a
comment to the key *before* it, so moving keys inside its model would move comments to the wrong
key. Nothing is trusted: every formatted text is loaded again with the loader (YAML 1.2 core, as
the engine reads it) and with PyYAML's safe_load (YAML 1.1, as many editors read it) and must
give exactly the original data (types included), keep every comment, and be left unchanged by a
second formatting. A file that fails any of these is refused (PE801) and never written.
"""

from __future__ import annotations

import difflib
import enum
import io
import math
import os
import re
import stat
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.emitter import RoundTripEmitter
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.error import YAMLError as RuamelError
from ruamel.yaml.representer import RoundTripRepresenter
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from policyengine.packs.loader import MANIFEST
from policyengine.packs.rule_schemas import schema
from policyengine.packs.yaml_source import SourceDoc, load_yaml, load_yaml_file
from policyengine.values.problems import Location, Problem, ProblemSink, register_code

__all__ = [
    "PE801",
    "FileKind",
    "Formatted",
    "PackFile",
    "format_packs",
    "format_text",
    "key_order",
    "pack_files",
    "write_atomically",
]

PE801 = register_code("PE801", "file cannot be formatted without changing its content")

# Characters a reader cannot see, or cannot tell from a space: in a double-quoted string they are
# written as escapes (`\u200B`), so formatting never turns a visible escape into an invisible character.
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
# The escapes a JSON reader knows too; ruamel's YAML-only ones (`\_`, `\L`, `\e`) read as noise.
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n", "\r": "\\r"}
# Line breaks to YAML 1.1 readers (PyYAML, ruamel.yaml), not to YAML 1.2: written raw, readers
# disagree on the file's lines, so fmt asks for an escape instead of guessing.
_OTHER_BREAKS = re.compile("[\x85\u2028\u2029]")
_BLOCK_HEADER = re.compile(r"[|>]([0-9+-]*)")
_HEADER_COMMENT = re.compile(r"(?<=[ \t])#.*")
_DOCUMENT_START = re.compile(r"---(?:[ \t]+(#.*))?[ \t]*")
# libyaml when PyYAML has it (about 20 times faster); its marks count characters, as the pure parser's do.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FileKind(enum.Enum):
    """What a pack file holds, which decides the order of its keys."""

    MANIFEST = "manifest"
    RULES = "rule file"
    TESTS = "policy tests"


@dataclass(frozen=True)
class PackFile:
    """One file of a pack to format, and what it holds."""

    path: Path
    kind: FileKind

    @property
    def display(self) -> str:
        """The path as reported."""
        return str(self.path)


@dataclass(frozen=True)
class Formatted:
    """A file's text as read and as formatted."""

    file: PackFile
    before: str
    after: str

    @property
    def changed(self) -> bool:
        """Whether formatting changes the file."""
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff from the file as read to the file as formatted ('' when unchanged)."""
        name = self.file.display
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=name,  # `patch -p0` applies it
            tofile=name,
        )
        # A last line without a newline still ends its diff line, so diffs concatenate cleanly.
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


# -- key order ----------------------------------------------------------------------------------


# Orders that differ from the schema's: a rule reads identity, selection, condition, then effect;
# a test's call and expectation put short fields first and the long ones (arguments, the value,
# the content) last, so a one-line `{...}` still shows what the test is about.
_RULE_HEAD = ("id", "description", "stage", "tools", "when")
_CALL_HEAD = ("name", "agent", "call_id", "cwd")
_EXPECT_HEAD = (
    "decision",
    "rule",
    "stage",
    "reason",
    "reason_contains",
    "post",
    "rewrites",
    "feedback_contains",
    "labels",  # a sequence's step: the labels the session holds after it
)


def _ordered(head: Sequence[str], *schemas: Mapping[str, Any]) -> tuple[str, ...]:
    """`head`, then every other field of `schemas` in schema order."""
    order = list(head)
    for fields in schemas:
        order.extend(k for k in fields if k not in order)
    return tuple(order)


@cache
def _orders() -> dict[FileKind, dict[tuple[str, ...], tuple[str, ...]]]:
    """Per kind of file: the key order of the mappings found at a path (`*` is any list index)."""
    stages = schema("rules")
    test = schema("tests")["tests"]["schema"]["schema"]
    step = test["steps"]["schema"]["schema"]
    block = _ordered((), test["result"]["schema"]["content"]["schema"]["schema"])  # a content block: type, text
    return {
        FileKind.MANIFEST: {(): _ordered((), schema("pack"))},
        FileKind.RULES: {
            (): _ordered((), schema("rule-file")),
            ("rules", "*"): _ordered(
                _RULE_HEAD, *(stages[s] for s in ("pre-execute", "guard", "execute", "post-execute"))
            ),
            ("rules", "*", "redact", "*"): _ordered((), stages["post-execute"]["redact"]["schema"]["schema"]),
        },
        FileKind.TESTS: {
            (): _ordered((), schema("tests")),
            ("tests", "*"): _ordered((), test),
            ("tests", "*", "call"): _ordered(_CALL_HEAD, test["call"]["schema"]),
            ("tests", "*", "result"): _ordered((), test["result"]["schema"]),
            ("tests", "*", "result", "content", "*"): block,
            ("tests", "*", "expect"): _ordered(_EXPECT_HEAD, test["expect"]["schema"]),
            ("tests", "*", "expect", "content", "*"): block,
            # A sequence's steps: each a call, its result and its expectation, in the order of a test's.
            ("tests", "*", "steps", "*"): _ordered((), step),
            ("tests", "*", "steps", "*", "call"): _ordered(_CALL_HEAD, step["call"]["schema"]),
            ("tests", "*", "steps", "*", "result"): _ordered((), step["result"]["schema"]),
            ("tests", "*", "steps", "*", "result", "content", "*"): block,
            ("tests", "*", "steps", "*", "expect"): _ordered(_EXPECT_HEAD, step["expect"]["schema"]),
            ("tests", "*", "steps", "*", "expect", "content", "*"): block,
        },
    }


def key_order(kind: FileKind, path: Sequence[str | int]) -> tuple[str, ...] | None:
    """The key order of the mapping at `path` in a file of `kind`, or None: keep the keys as written."""
    pattern = tuple("*" if isinstance(step, int) else step for step in path)
    return _orders()[kind].get(pattern)


def _target(keys: Sequence[str], order: Sequence[str]) -> list[int]:
    """Indexes of `keys` in canonical order: known keys in `order`, unknown ones after, as written."""
    rank = {key: i for i, key in enumerate(order)}
    return sorted(range(len(keys)), key=lambda i: (rank.get(keys[i], len(rank)), i))


# -- reordering block mappings on the text ---------------------------------------------------------


def _last_line(node: Node, lines: Sequence[str]) -> int:
    """The last line (0-based) holding text of `node`."""
    start, end = node.start_mark, node.end_mark
    if isinstance(node, ScalarNode):
        if node.style in ("|", ">"):
            # The end mark of a block scalar lies past the blank lines after it, at the next token.
            last = end.line if lines[end.line][: end.column].strip() else end.line - 1
            header = _BLOCK_HEADER.search(lines[start.line], start.column)
            keep = header is not None and "+" in header.group(1)
            while not keep and last > start.line and not lines[last].strip():
                last -= 1
            return max(last, start.line)
        return end.line if end.column > 0 or end.line == start.line else end.line - 1
    if isinstance(node, (SequenceNode, MappingNode)) and not node.flow_style:
        children: Iterable[Node] = (
            node.value if isinstance(node, SequenceNode) else (n for pair in node.value for n in pair)
        )
        return max((_last_line(child, lines) for child in children), default=start.line)
    return end.line


def _permute(lines: list[str], node: MappingNode, order: Sequence[str]) -> None:
    """Put a block mapping's entries in `order` by moving their lines, each with the comments above it."""
    # Only the plain layout is moved: keys in one column, each on a line of its own, nothing but
    # `- ` before the first. Anything else keeps its order (and is still formatted).
    entries = node.value
    if node.flow_style or len(entries) < 2 or not all(isinstance(k, ScalarNode) for k, _ in entries):
        return
    target = _target([str(k.value) for k, _ in entries], order)
    if target == list(range(len(entries))):
        return
    column = entries[0][0].start_mark.column
    key_lines = [k.start_mark.line for k, _ in entries]
    lasts = [max(_last_line(k, lines), _last_line(v, lines)) for k, v in entries]
    if any(k.start_mark.column != column for k, _ in entries):
        return
    if any(key_lines[i] <= lasts[i - 1] for i in range(1, len(entries))):
        return
    prefix = lines[key_lines[0]][:column]
    if prefix.strip(" -"):  # a `?`, a tag or an anchor before the first key
        return
    # Entry i owns its lines and the blank and comment lines above it (entry 0: those belong to
    # whatever holds the mapping, and stay above it).
    starts = [key_lines[0], *(last + 1 for last in lasts[:-1])]
    chunks = [lines[start : last + 1] for start, last in zip(starts, lasts, strict=True)]
    chunks[0][0] = " " * column + chunks[0][0][column:]
    first = target[0]
    at = key_lines[first] - starts[first]
    above, own = chunks[first][:at], chunks[first][at:]
    own[0] = prefix + own[0][column:]
    lines[starts[0] : lasts[-1] + 1] = above + own + [line for i in target[1:] for line in chunks[i]]


def _reorder_text(text: str, kind: FileKind) -> str:
    """The text with its known block mappings' keys in canonical order (innermost first)."""
    root = yaml.compose(text, _SAFE_LOADER)
    if root is None:
        return text
    found: list[tuple[MappingNode, tuple[str, ...]]] = []
    seen: set[int] = set()

    def walk(node: Node, path: tuple[str | int, ...]) -> bool:
        """Collect the mappings to reorder, innermost first; False when a node is reached twice (an alias)."""
        if id(node) in seen:
            return False
        seen.add(id(node))
        if isinstance(node, SequenceNode):
            return all(walk(item, (*path, i)) for i, item in enumerate(node.value))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if not (walk(key, path) and walk(value, (*path, str(key.value)))):
                    return False
            order = key_order(kind, path)
            if order is not None:
                found.append((node, order))
        return True

    if not walk(root, ()):
        return text  # moving lines could put an alias before its anchor
    lines = text.split("\n")
    for node, order in found:
        _permute(lines, node, order)
    return "\n".join(lines)


def _reorder_flow(data: Any, kind: FileKind, path: tuple[str | int, ...] = ()) -> None:
    """Put the keys of known flow mappings (`{...}`) in canonical order, in ruamel's model."""
    if isinstance(data, CommentedSeq):
        for i, item in enumerate(data):
            _reorder_flow(item, kind, (*path, i))
    elif isinstance(data, CommentedMap):
        for key, value in data.items():
            _reorder_flow(value, kind, (*path, str(key)))
        order = key_order(kind, path)
        if order is not None and data.fa.flow_style():
            keys = list(data)
            for i in _target([str(k) for k in keys], order):
                data.move_to_end(keys[i])


# -- ruamel ---------------------------------------------------------------------------------------


class _Emitter(RoundTripEmitter):
    """ruamel's emitter, keeping the space before end-of-line comments and escapes for invisible characters."""

    def write_comment(self, comment: Any, pre: bool = False) -> None:
        """An end-of-line comment keeps its distance from the value; other comments are ruamel's."""
        # ruamel keeps the comment's column: a value moved by re-indenting would drift from it.
        lines: Sequence[str] | None = getattr(self.dumper, "source_lines", None)
        mark = comment.start_mark
        if pre or not self.column or not comment.value.startswith("#") or lines is None or mark.line >= len(lines):
            super().write_comment(comment, pre)
            return
        before = lines[mark.line][: mark.column].rstrip()
        gap = mark.column - len(before) if before else 1
        value = comment.value[:-1] if comment.value.endswith("\n") else comment.value
        self.stream.write(" " * max(1, gap) + value)
        self.write_line_break()

    def write_double_quoted(self, text: Any, split: Any = True) -> None:
        """JSON's escapes, and `\\uXXXX` for every invisible character; never wraps (the width is unbounded)."""
        if self.root_context and getattr(self, "requested_indent", None) is not None:
            self.write_line_break()
            if self.requested_indent != 0:
                self.write_indent()
        self.write_indicator('"', True)
        out: list[str] = []
        for ch in text:
            if ch in _ESCAPES:
                out.append(_ESCAPES[ch])
            elif ch != " " and unicodedata.category(ch) in _INVISIBLE:
                code = ord(ch)
                out.append(
                    f"\\x{code:02X}" if code <= 0xFF else f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"
                )
            else:
                out.append(ch)
        data = "".join(out)
        self.column += len(data)
        self.stream.write(data)
        self.write_indicator('"', False)


class _Representer(RoundTripRepresenter):
    """ruamel's round-trip representer, writing null as `null` (ruamel writes nothing)."""

    def represent_none(self, data: Any) -> Any:
        """`null`, wherever it stands."""
        return self.represent_scalar("tag:yaml.org,2002:null", "null")


_Representer.add_representer(type(None), _Representer.represent_none)


def _ruamel() -> YAML:
    """A round-trip YAML instance set up for the canonical layout."""
    handler = YAML(typ="rt", pure=True)
    handler.Emitter = _Emitter
    handler.Representer = _Representer
    handler.preserve_quotes = True
    handler.width = 1 << 30  # never wrap: JMESPath and templates read best on one line
    handler.indent(mapping=2, sequence=4, offset=2)
    handler.brace_single_entry_mapping_in_flow_sequence = True  # [{a: 1}], not [a: 1]
    handler.allow_unicode = True
    return handler


def _round_trip(text: str, kind: FileKind) -> str:
    """The text loaded and dumped again by ruamel, flow mappings' keys in order."""
    handler = _ruamel()
    handler.source_lines = text.split("\n")  # type: ignore[attr-defined]  # read by _Emitter.write_comment
    data = handler.load(text)
    _reorder_flow(data, kind)
    out = io.StringIO()
    handler.dump(data, out)
    return out.getvalue()


# -- the text pass --------------------------------------------------------------------------------


def _inside_scalars(text: str) -> set[int]:
    """Lines (0-based) that continue a scalar begun on an earlier line: their spaces and `#` are content."""
    inside: set[int] = set()
    lines = text.split("\n")
    for event in yaml.parse(text, _SAFE_LOADER):
        start, end = event.start_mark, event.end_mark
        if isinstance(event, yaml.ScalarEvent) and start is not None and end is not None:
            last = end.line
            if event.style in ("|", ">") and not lines[end.line][: end.column].strip():
                last -= 1  # the end mark of a block scalar lies on the line after its text
            inside.update(range(start.line + 1, last + 1))
    return inside


def _tidy(text: str) -> str:
    """No trailing whitespace, comments indented like the line they precede, no blank lines at either end."""
    lines = text.split("\n")
    inside = _inside_scalars(text)
    indent = 0
    for i in range(len(lines) - 1, -1, -1):
        if i in inside:
            continue
        line = lines[i].rstrip()
        stripped = line.lstrip()
        if stripped.startswith("#"):
            line = " " * indent + stripped
        elif stripped:
            indent = len(line) - len(stripped)
        lines[i] = line
    while lines and not lines[-1] and len(lines) - 1 not in inside:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines) + "\n"


def _without_document_start(text: str) -> str:
    """The text without a `---` that only opens its one document (ruamel drops it, and the comments above it)."""
    # A `---` after a directive (`%YAML`) is needed, and one followed by content (`--- {...}`) holds it: both stay.
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        start = _DOCUMENT_START.fullmatch(line.rstrip())
        if start is None:
            return text
        lines[i : i + 1] = [start.group(1)] if start.group(1) else []  # its comment stays on that line
        return "\n".join(lines)
    return text


def _format_once(text: str, kind: FileKind) -> str:
    """One formatting pass: `---`, key order, ruamel's layout, then the text pass."""
    return _tidy(_round_trip(_reorder_text(_without_document_start(text), kind), kind))


# -- checking that nothing was lost -----------------------------------------------------------------

_REPORT = "please report it, with the file; meanwhile fmt leaves the file as it is"


def _difference(a: Any, b: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """Where two documents first differ, types included (true is not 1, 1 is not 1.0; NaN is NaN), or None."""
    # Key order does not count: putting keys in order is what formatting does.
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return path
        return next((d for k in a if (d := _difference(a[k], b[k], (*path, k))) is not None), None)
    if isinstance(a, list):
        if len(a) != len(b):
            return path
        return next(
            (d for i, (x, y) in enumerate(zip(a, b, strict=True)) if (d := _difference(x, y, (*path, i)))), None
        )
    if isinstance(a, float):
        same = (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        return None if same else path
    return None if a == b else path


@dataclass(frozen=True)
class _Comment:
    """A comment's text and where it starts."""

    text: str
    line: int  # 1-based
    column: int  # 1-based


def _comments(text: str) -> list[_Comment]:
    """Every comment of a YAML text, with where it starts."""
    # Between tokens lie only spaces, breaks and comments; the one place a comment hides inside a
    # token is the line of a block scalar's header (`|-  # why`) or of a directive.
    found: list[_Comment] = []
    line, column, position = 0, 0, 0
    for token in yaml.scan(text, _SAFE_LOADER):
        start = token.start_mark
        gap = text[position : start.index]
        for match in re.finditer(r"#[^\n]*", gap):
            before = gap[: match.start()]
            breaks = before.count("\n")
            at = match.start() - before.rfind("\n") - 1 if breaks else column + match.start()
            found.append(_Comment(match.group().rstrip(), line + breaks + 1, at + 1))
        if isinstance(token, yaml.DirectiveToken) or (
            isinstance(token, yaml.ScalarToken) and token.style in ("|", ">")
        ):
            end = text.find("\n", start.index)
            header = _HEADER_COMMENT.search(text, start.index, len(text) if end < 0 else end)
            if header is not None:
                found.append(
                    _Comment(header.group().rstrip(), start.line + 1, header.start() - start.index + start.column + 1)
                )
        if token.end_mark.index >= position:
            line, column, position = token.end_mark.line, token.end_mark.column, token.end_mark.index
    return found


def _safe_load(text: str) -> tuple[bool, Any]:
    """PyYAML's safe_load, as editors and yamllint read the file (YAML 1.1)."""
    try:
        return True, yaml.load(text, _SAFE_LOADER)
    except (yaml.YAMLError, ValueError, RecursionError):
        return False, None


def _refusal(doc: SourceDoc, source: str, formatted: str) -> Problem | None:
    """Why the formatted text must not replace the file (a value or a comment would change), or None."""
    sink = ProblemSink()
    after = load_yaml(formatted, doc.filename, sink)
    if after is None:
        first = sink.problems[0].message if sink.problems else "unknown problem"
        return Problem(
            PE801, f"the formatted file would not load ({first})", Location.start_of(doc.filename), hint=_REPORT
        )
    where = _difference(doc.data, after.data)
    if where is not None:
        return doc.problem(PE801, "formatting would change this value", where, hint=_REPORT)
    loaded, plain = _safe_load(source)
    where = _difference(plain, _safe_load(formatted)[1]) if loaded else None
    if where is not None:
        message = "formatting would change this value for YAML 1.1 readers (yaml.safe_load)"
        return doc.problem(PE801, message, where, hint=_REPORT)
    kept = [c.text for c in _comments(formatted)]
    for comment in _comments(source):
        if comment.text not in kept:
            return Problem(
                PE801,
                "formatting would drop this comment: ruamel.yaml, which formats the file, cannot keep a comment here",
                Location(doc.filename, comment.line, comment.column),
                hint="move it onto a line of its own, above a key or a list item; ruamel.yaml drops comments inside "
                "[...] and {...}, between a key and its value, after the `|` or `>` of a list item, and above a file "
                "written as one {...}",
                source_line=doc.line_text(comment.line),
                caret_width=max(1, len(comment.text)),
            )
        kept.remove(comment.text)
    return None


def _unreadable(source: str, doc: SourceDoc) -> Problem | None:
    """Where ruamel.yaml cannot read a text the loader accepts (PyYAML is more lenient here and there), or None."""
    try:
        _ruamel().load(source)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        return Problem(
            PE801,
            f"ruamel.yaml, which formats the file, cannot read it: {error.problem or error.context}",
            Location(doc.filename, line, column),
            hint="the loader accepts this spot but ruamel.yaml does not: write it more plainly (spaces, not tabs, "
            "around indicators; a block scalar's first line indented the most)",
            source_line=doc.line_text(line),
        )
    except (RuamelError, ValueError, TypeError, RecursionError):
        return None
    return None


def format_text(text: str | bytes, kind: FileKind, filename: str, sink: ProblemSink) -> str | None:
    """The canonical text of one pack file; None (problems in `sink`) when it does not load or cannot be formatted."""
    problems = ProblemSink()
    doc = load_yaml(text, filename, problems)
    sink.extend(problems.problems)
    if doc is None:
        return None
    source = text.decode("utf-8") if isinstance(text, bytes) else text
    # YAML reads \r\n and \r as \n, inside scalars too: normalising them changes no value.
    source = source.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    odd = _OTHER_BREAKS.search(source)
    if odd is not None:
        line = source.count("\n", 0, odd.start()) + 1
        column = odd.start() - source.rfind("\n", 0, odd.start())
        sink.add(
            Problem(
                PE801,
                f"U+{ord(odd.group()):04X} is a line break to some YAML readers and not to others",
                Location(filename, line, column),
                hint=f'write it as an escape in a double-quoted string ("\\u{ord(odd.group()):04X}")',
                source_line=doc.line_text(line),
            )
        )
        return None
    try:
        formatted = _format_once(source, kind)
        again = _format_once(formatted, kind)
        if again != formatted:  # ruamel can need a second pass to settle a comment's column
            formatted, again = again, _format_once(again, kind)
        problem = _refusal(doc, source, formatted)
        if problem is None and again != formatted:
            problem = Problem(
                PE801, "formatting it again would change it again", Location.start_of(filename), hint=_REPORT
            )
    except (RuamelError, yaml.YAMLError, ValueError, TypeError, AttributeError, RecursionError) as error:
        problem = _unreadable(source, doc) or Problem(
            PE801, f"formatting failed ({type(error).__name__}: {error})", Location.start_of(filename), hint=_REPORT
        )
    if problem is not None:
        sink.add(problem)
        return None
    return formatted


# -- packs ------------------------------------------------------------------------------------------


def pack_files(folder: Path, sink: ProblemSink) -> list[PackFile]:
    """A pack's manifest, the rule files it lists and the policy test files its globs match, in that order."""
    manifest = folder / MANIFEST
    doc = load_yaml_file(manifest, sink, filename=str(manifest))
    if doc is None:
        return []
    found = [PackFile(manifest, FileKind.MANIFEST)]
    data = doc.data if isinstance(doc.data, dict) else {}
    listed = data.get("files")
    for i, rel in enumerate(listed if isinstance(listed, list) else []):
        if not isinstance(rel, str):
            continue
        path = folder / rel
        problem = _outside_or_missing(folder, path)
        if problem is not None:
            sink.add(
                doc.problem("PE403", f"rule file {rel} {problem}", ("files", i), hint="fix `files:` in the manifest")
            )
            continue
        found.append(PackFile(path, FileKind.RULES))
    globs = data.get("tests")
    for i, pattern in enumerate(globs if isinstance(globs, list) else []):
        if not isinstance(pattern, str):
            continue
        pure = PurePosixPath(pattern.replace("\\", "/"))
        if not pattern.strip() or pure.is_absolute() or ".." in pure.parts or re.match(r"^[A-Za-z]:", pattern):
            sink.add(
                doc.problem(
                    "PE402",
                    f"test glob {pattern!r} must be relative to the pack folder, without '..'",
                    ("tests", i),
                    hint="write it like tests/*.yaml",
                )
            )
            continue
        try:
            matches = sorted(folder.glob(pure.as_posix()))
        except (ValueError, IndexError, NotImplementedError) as error:
            sink.add(doc.problem("PE402", f"test glob {pattern!r} is not a usable glob ({error})", ("tests", i)))
            continue
        found.extend(PackFile(path, FileKind.TESTS) for path in matches if path.is_file())
    return found


def _outside_or_missing(folder: Path, path: Path) -> str | None:
    """Why a listed rule file cannot be formatted, or None."""
    try:
        if not path.resolve().is_relative_to(folder.resolve()):
            return "is outside the pack folder"  # never rewrite a file the pack does not hold
        if not path.is_file():
            return f"not found in {folder}"
    except (OSError, ValueError, RuntimeError) as error:
        return f"cannot be opened: {error}"
    return None


def _unique(files: Iterable[PackFile]) -> Iterator[PackFile]:
    """Each file once (packs given twice, a rule file matched by a test glob): the first role wins."""
    seen: set[Path] = set()
    for file in files:
        key = file.path.resolve()
        if key not in seen:
            seen.add(key)
            yield file


def format_packs(folders: Sequence[str | Path]) -> list[Formatted]:
    """Every file of every pack, formatted in memory; PackLoadError (nothing formatted) on any problem."""
    sink = ProblemSink()
    files = list(_unique(f for folder in folders for f in pack_files(Path(folder), sink)))
    results: list[Formatted] = []
    for file in files:
        try:
            raw = file.path.read_bytes()
        except OSError as error:
            sink.add(
                Problem(
                    "PE108", f"cannot read {file.display}: {error.strerror or error}", Location.start_of(file.display)
                )
            )
            continue
        formatted = format_text(raw, file.kind, file.display, sink)
        if formatted is not None:
            results.append(Formatted(file, _as_read(raw), formatted))
    sink.raise_if_errors("nothing was formatted")
    return results


def _as_read(raw: bytes) -> str:
    """The file's text exactly (a BOM and \\r\\n kept), so any difference from the formatted text shows."""
    return raw.decode("utf-8")


def write_atomically(path: Path, text: str) -> None:
    """Replace the file with `text` in one step: a temporary file beside it, then a rename (mode kept)."""
    target = path.resolve()  # through a symlink: rewrite the file it names, keep the link
    mode = stat.S_IMODE(target.stat().st_mode)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
