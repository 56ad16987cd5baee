"""Located problems found while loading a rule pack, their codes, and the error that lists them all."""

from __future__ import annotations

import enum
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from policyengine.errors import PolicyEngineError

__all__ = [
    "CODES",
    "CODE_GROUPS",
    "Location",
    "PackLoadError",
    "Problem",
    "ProblemSink",
    "Severity",
    "code_group",
    "register_code",
    "render_problems",
]

# The registry of problem codes: CODE -> short title. A plain dict on purpose, so every module that
# finds a new kind of problem registers its code next to the code that reports it (see register_code).
CODES: dict[str, str] = {
    # PE1xx: the YAML text itself (packs/yaml_source.py)
    "PE101": "YAML syntax error",
    "PE102": "duplicate mapping key",
    "PE103": "forbidden YAML tag",
    "PE104": "file too large",
    "PE105": "nesting too deep",
    "PE106": "too many aliases or alias expansion too large",
    "PE107": "top level is not a mapping",
    "PE108": "file missing or unreadable",
    "PE109": "file is not valid UTF-8 text",
    "PE110": "more than one YAML document in a file",
    "PE111": "mapping key is not a string",
    "PE112": "invalid scalar value",
    # PE2xx: schema (Cerberus) violations
    "PE201": "schema violation",
    "PE202": "unknown field",
    "PE203": "required field missing",
    "PE204": "wrong type",
    "PE205": "value not allowed",
    # PE3xx: expressions, templates, patterns
    "PE301": "JMESPath syntax error",
    "PE302": "unknown JMESPath function",
    "PE303": "wrong number of function arguments",
    "PE304": "unknown named list",
    "PE305": "invalid template",
    "PE306": "invalid regular expression or glob",
    "PE307": "negation applied to the first step of a path (always null)",
    "PE310": "empty capability tag in tools",
    # PE4xx: the pack as a whole
    "PE401": "duplicate rule id",
    "PE402": "manifest problem",
    "PE403": "rule file listed twice or not found",
    "PE404": "named list never used",
}

CODE_GROUPS: dict[str, str] = {"1": "yaml", "2": "schema", "3": "expression", "4": "pack", "5": "lint"}

_CODE_RE = re.compile(r"PE[0-9]{3}")


def register_code(code: str, title: str) -> str:
    """Add a problem code to CODES; refuses a malformed code or a second, different title."""
    if not _CODE_RE.fullmatch(code):
        raise ValueError(f"problem code {code!r} must look like 'PE123'")
    known = CODES.get(code)
    if known is not None and known != title:
        raise ValueError(f"problem code {code} is already registered as {known!r}")
    CODES[code] = title
    return code


def code_group(code: str) -> str:
    """The group of a code ('yaml', 'schema', 'expression', 'pack'), or 'other'."""
    return CODE_GROUPS.get(code[2:3], "other") if _CODE_RE.fullmatch(code) else "other"


@dataclass(frozen=True, order=True)
class Location:
    """A position in a source file; line and column are 1-based, columns count characters."""

    file: str
    line: int
    column: int

    def __post_init__(self) -> None:
        if self.line < 1 or self.column < 1:
            raise ValueError(f"line and column are 1-based, got {self.line}:{self.column}")

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    @classmethod
    def start_of(cls, file: str) -> Location:
        """The first character of a file, for problems about the file as a whole."""
        return cls(file, 1, 1)


class Severity(enum.Enum):
    """How bad a problem is: errors refuse the pack, warnings are only reported."""

    ERROR = "error"
    WARNING = "warning"


# ANSI styles for render(color=True); kept minimal so they read on dark and light terminals.
_BOLD, _RED, _YELLOW, _BLUE, _CYAN, _RESET = "\x1b[1m", "\x1b[31m", "\x1b[33m", "\x1b[34m", "\x1b[36m", "\x1b[0m"
_SEVERITY_STYLE = {Severity.ERROR: _RED, Severity.WARNING: _YELLOW}
# Very long lines (minified flow YAML) are cut around the column so the caret stays on screen.
_SNIPPET_MAX = 120
_SNIPPET_BEFORE = 40


@dataclass(frozen=True)
class Problem:
    """One problem: what (code, message), where (location, rule id), and how to fix it (hint)."""

    code: str
    message: str
    location: Location | None
    rule_id: str | None = None
    hint: str | None = None
    severity: Severity = Severity.ERROR
    source_line: str | None = None
    caret_width: int = 1

    def __post_init__(self) -> None:
        if not _CODE_RE.fullmatch(self.code):
            raise ValueError(f"problem code {self.code!r} must look like 'PE123'")
        if self.caret_width < 1:
            raise ValueError(f"caret_width must be at least 1, got {self.caret_width}")

    @property
    def title(self) -> str:
        """The short title registered for this problem's code."""
        return CODES.get(self.code, "problem")

    @property
    def is_error(self) -> bool:
        """True when this problem refuses the pack."""
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, int]:
        """Order by file, line, column; problems without a location come first."""
        loc = self.location
        return ("", 0, 0) if loc is None else (loc.file, loc.line, loc.column)

    def header(self, color: bool = False) -> str:
        """The first line: `file:line:column: error PE101 [rule id]: message`."""
        where = f"{self.location}: " if self.location is not None else ""
        label = f"{self.severity.value} {self.code}"
        rule = f" [rule {self.rule_id}]" if self.rule_id else ""
        if color:
            style = _SEVERITY_STYLE[self.severity]
            return f"{_BOLD}{where}{style}{label}{_RESET}{_BOLD}{rule}: {self.message}{_RESET}"
        return f"{where}{label}{rule}: {self.message}"

    def render(self, color: bool = False) -> str:
        """The header, the source line with a caret line under the column, then the hint."""
        lines = [self.header(color)]
        if self.source_line is not None and self.location is not None:
            lines.extend(self._snippet(self.location, self.source_line, color))
        if self.hint:
            label = f"{_CYAN}hint{_RESET}" if color else "hint"
            first, *rest = self.hint.splitlines() or [""]
            lines.append(f"  {label}: {first}")
            lines.extend(f"        {more}" for more in rest)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def _snippet(self, loc: Location, source: str, color: bool) -> list[str]:
        """Two lines: `  12 | text` and `     |    ^^^`, aligned in display columns."""
        start = loc.column - 1
        text, offset = source, start
        prefix = suffix = ""
        # Cut long lines to a window around the column; '…' marks the cut ends.
        if len(text) > _SNIPPET_MAX:
            first = max(0, min(start - _SNIPPET_BEFORE, len(text) - _SNIPPET_MAX))
            prefix = "…" if first > 0 else ""
            suffix = "…" if first + _SNIPPET_MAX < len(text) else ""
            text, offset = text[first : first + _SNIPPET_MAX], start - first
        shown = prefix + _display(text) + suffix
        # The caret sits after the display width of what precedes the column (tabs, wide CJK, controls).
        pad = _width(prefix) + _width(_display(text[:offset]))
        remaining = _width(_display(text[offset : offset + self.caret_width]))
        carets = "^" * max(1, remaining)
        number = str(loc.line)
        gutter = " " * len(number)
        if color:
            style = _SEVERITY_STYLE[self.severity]
            bar = f"{_BLUE}|{_RESET}"
            return [
                f"  {_BLUE}{number}{_RESET} {bar} {shown}",
                f"  {gutter} {bar} {' ' * pad}{style}{carets}{_RESET}",
            ]
        return [f"  {number} | {shown}".rstrip(), f"  {gutter} | {' ' * pad}{carets}"]


def _display(text: str) -> str:
    """Text safe to print on one terminal line: tabs become spaces, control characters become U+FFFD."""
    out = []
    for ch in text:
        if ch == "\t":
            out.append("    ")
        elif unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp"):
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def _width(text: str) -> int:
    """Terminal columns taken by text: wide East Asian characters count 2, combining marks 0."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def _count_line(problems: tuple[Problem, ...], summary: str) -> str:
    """`3 problems; nothing was installed`, naming warnings only when some are present."""
    n = len(problems)
    errors = sum(1 for p in problems if p.is_error)
    warnings = n - errors
    line = f"{n} problem{'' if n == 1 else 's'}"
    if warnings:
        line += f" ({errors} error{'' if errors == 1 else 's'}, {warnings} warning{'' if warnings == 1 else 's'})"
    return f"{line}; {summary}" if summary else line


def render_problems(problems: Iterable[Problem], *, summary: str = "", color: bool = False) -> str:
    """Every problem rendered, a blank line between them, then the count line."""
    items = tuple(problems)
    blocks = [p.render(color) for p in items]
    blocks.append(_count_line(items, summary))
    return "\n\n".join(blocks)


def _restore_pack_load_error(cls: type[PackLoadError], problems: tuple[Problem, ...], summary: str) -> PackLoadError:
    """Rebuild a PackLoadError from its parts (pickling support)."""
    return cls(problems, summary=summary)


class _BySeverity:
    """The errors and the warnings among a load's problems, each in the order found."""

    __slots__ = ()

    def _all(self) -> tuple[Problem, ...]:
        raise NotImplementedError

    @property
    def errors(self) -> tuple[Problem, ...]:
        """The problems with severity ERROR: those that refuse a pack."""
        return tuple(p for p in self._all() if p.is_error)

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """The problems with severity WARNING, reported alongside, which alone would not refuse it."""
        return tuple(p for p in self._all() if not p.is_error)


class PackLoadError(PolicyEngineError, _BySeverity):
    """Loading a pack failed: carries every problem found, so one run shows them all."""

    exit_code = 2

    def __init__(self, problems: Iterable[Problem], *, summary: str = "nothing was installed") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.summary = summary
        super().__init__(render_problems(self.problems, summary=summary))

    def _all(self) -> tuple[Problem, ...]:
        return self.problems

    @property
    def codes(self) -> tuple[str, ...]:
        """The codes of all problems, in order (handy in tests and CI summaries)."""
        return tuple(p.code for p in self.problems)

    def render(self, color: bool = False) -> str:
        """All problems, then the count line; color adds ANSI styles for a terminal."""
        return render_problems(self.problems, summary=self.summary, color=color)

    def __str__(self) -> str:
        return self.render()

    def __reduce__(self) -> tuple[object, ...]:
        # The default reduce would call __init__(message) and lose the problems.
        return (_restore_pack_load_error, (type(self), self.problems, self.summary))


class ProblemSink(_BySeverity):
    """Collects problems from every file and stage so a load reports them all at once."""

    def __init__(self) -> None:
        self._problems: list[Problem] = []
        # Exact duplicates (the same node reached twice through an alias) are kept once.
        self._seen: set[Problem] = set()

    def add(self, problem: Problem) -> Problem:
        """Record one problem (an exact duplicate is ignored) and return it."""
        if problem not in self._seen:
            self._seen.add(problem)
            self._problems.append(problem)
        return problem

    def extend(self, problems: Iterable[Problem]) -> None:
        """Record several problems."""
        for problem in problems:
            self.add(problem)

    @property
    def problems(self) -> tuple[Problem, ...]:
        """Every problem, in the order found."""
        return tuple(self._problems)

    def _all(self) -> tuple[Problem, ...]:
        return tuple(self._problems)

    @property
    def has_errors(self) -> bool:
        """True when at least one error was recorded."""
        return any(p.is_error for p in self._problems)

    def error_count(self) -> int:
        """How many errors were recorded (compare before/after to see if a step failed)."""
        return sum(1 for p in self._problems if p.is_error)

    def for_file(self, file: str) -> tuple[Problem, ...]:
        """The problems located in one file."""
        return tuple(p for p in self._problems if p.location is not None and p.location.file == file)

    def sorted(self) -> tuple[Problem, ...]:
        """Every problem ordered by file, line, column (stable, so same-spot problems keep their order)."""
        return tuple(sorted(self._problems, key=Problem.sort_key))

    def __iter__(self) -> Iterator[Problem]:
        return iter(tuple(self._problems))

    def render(self, color: bool = False) -> str:
        """Every problem, sorted, then the count line."""
        return render_problems(self.sorted(), color=color)

    def raise_if_errors(self, summary: str = "nothing was installed") -> None:
        """Raise PackLoadError with every problem (warnings too), sorted, if any error was recorded."""
        if self.has_errors:
            raise PackLoadError(self.sorted(), summary=summary)
