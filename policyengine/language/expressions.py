"""Rule expressions: JMESPath compiled and checked once at load, and reason templates."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import jmespath
from jmespath import exceptions as jp_exceptions
from jmespath.parser import ParsedResult

from policyengine.errors import FreezeError
from policyengine.language.empty_views import needed_view
from policyengine.language.expression_compiler import compile_ast, search
from policyengine.language.functions import (
    FUNCTIONS,
    OPTIONS,
    PATH_BUDGET,
    PATH_TESTS,
    PathBudget,
    function_arity,
    pattern_problem,
    view_is_empty,
)
from policyengine.language.syntax import describe_syntax_error
from policyengine.values.frozen import freeze
from policyengine.values.problems import register_code

# A fault of the engine itself (not of the rule) met while compiling a rule: reported at the
# expression (or the rule), so a loader bug refuses the pack with a located problem, never a traceback.
PE308 = register_code("PE308", "internal error compiling a rule (please report)")


class Report(Protocol):
    """Where compile problems go: a code, a message, the character offset in the text."""

    def __call__(self, code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
        """Record one problem."""


@dataclass(frozen=True, slots=True)
class Expression:
    """A JMESPath expression compiled once, with named lists folded in as literals."""

    text: str
    parsed: ParsedResult
    # Python closures with jmespath's semantics (pinned by the compliance suite) except that
    # ordering non-numbers raises; None falls back to jmespath's interpreter with the same rule.
    compiled: Callable[[Any], Any] | None = None
    # Whether it may call a path test (path_within, ...) per item of a list: each evaluation then
    # gets a budget (~0.4 us); a path test on one argument runs once and needs none.
    tests_paths: bool = False
    # A role view (paths, urls...) the condition is false without: tested first, memoised per call (empty_views.py).
    needs_view: str | None = None

    # compiled (or the interpreter), inside a path budget when it tests paths: built once.
    searcher: Callable[[Any], Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "searcher", self._searcher())

    def search(self, document: Any) -> Any:
        """Evaluate against a (frozen) document with the policy functions."""
        return self.searcher(document)

    def _searcher(self) -> Callable[[Any], Any]:
        """One closure: the compiled expression (or the interpreter), inside a path budget when it tests paths."""
        if self.compiled is not None:
            inner = self.compiled
        else:
            parsed = self.parsed.parsed

            def inner(document: Any) -> Any:
                return search(parsed, document, OPTIONS)

        if not self.tests_paths:
            return inner
        open_budget, close_budget = PATH_BUDGET.set, PATH_BUDGET.reset

        def budgeted(document: Any) -> Any:
            token = open_budget(PathBudget())
            try:
                return inner(document)
            finally:
                close_budget(token)

        return budgeted

    def test(self, document: Any) -> bool:
        """JMESPath truthiness of the result: false, null, '', [] and {} are false."""
        value = self.search(document)
        return not (value is None or value is False or value == "" or value == [] or value == {})

    def tester(self, *, shortcut: bool = True) -> Callable[[Any], bool]:
        """`test` as one closure over the compiled expression (rules call it on every call).

        With `shortcut`, a condition that needs a role view non-empty is false at once on a call
        whose view is empty (the view is memoised per call; empty_views.py has the proof).
        """
        search = self.searcher

        def test(document: Any) -> bool:
            value = search(document)
            if value is True:
                return True
            return not (value is None or value is False or value == "" or value == [] or value == {})

        view = self.needs_view
        if view is None or not shortcut:
            return test

        def test_view(document: Any) -> bool:
            if view_is_empty(document, view):
                return False
            return test(document)

        return test_view


_ARITY = function_arity()


def compile_expression(text: str, lists: Mapping[str, Any], report: Report) -> Expression | None:
    """Parse `text`, refuse unknown functions, bad arity and unknown lists; None on any problem."""
    try:
        parsed = jmespath.compile(text)
    except jp_exceptions.JMESPathError as error:  # lexer and parser errors, an empty expression
        _syntax_error(report, text, error)
        return None
    except (ValueError, RecursionError) as error:  # a huge index, or nesting the parser cannot hold
        report(
            "PE301",
            f"invalid JMESPath: {type(error).__name__}: {error}"[:300],
            0,
            max(1, len(text)),
            "simplify the expression",
        )
        return None
    except Exception as error:  # a fault inside jmespath's parser: the rule cannot be checked, so refuse it
        _internal_error(report, text, error)
        return None
    problems_before = _Counter(report)
    try:
        ast = _resolve(parsed.parsed, text, lists, problems_before)
        compiled = compile_ast(ast, FUNCTIONS) if not problems_before.count else None
        tests_paths = _calls_per_item(ast, PATH_TESTS, False)
        needs_view = needed_view(ast)
    except RecursionError:
        report("PE301", "expression nested too deeply", 0, max(1, len(text)), "simplify the expression")
        return None
    except Exception as error:  # a bug of the checks or the compiler: refuse the pack, located, never crash
        _internal_error(report, text, error)
        return None
    if problems_before.count:
        return None
    return Expression(text, ParsedResult(text, ast), compiled, tests_paths, needs_view)


# AST nodes whose children may run once per item of a list (map(&...), sort_by(&...) take an expref).
_PER_ITEM = frozenset({"projection", "value_projection", "filter_projection", "expref"})


def _calls_per_item(node: Any, functions: frozenset[str], per_item: bool) -> bool:
    """Whether the AST may call one of `functions` once per item of a list (a single call is bounded)."""
    if not isinstance(node, dict):
        return False
    if per_item and node.get("type") == "function_expression" and node.get("value") in functions:
        return True
    inside = per_item or node.get("type") in _PER_ITEM
    return any(_calls_per_item(child, functions, inside) for child in node.get("children") or ())


def _syntax_error(report: Report, text: str, error: jp_exceptions.JMESPathError) -> None:
    """Report a PE301 that says what was found at the caret and what could have come there."""
    try:
        problem = describe_syntax_error(text)
    except Exception:  # the explanation is a courtesy: a fault in it must not hide the error itself
        problem = None
    if problem is not None:
        report("PE301", f"invalid JMESPath: {problem.message}", problem.offset, problem.width, problem.hint)
        return
    # jmespath's own words, for an error the explanation does not know.
    position = getattr(error, "lex_position", None) or 0
    report("PE301", f"invalid JMESPath: {getattr(error, 'msg', None) or error}", position, 1, _GRAMMAR)


_GRAMMAR = "see https://jmespath.org/specification.html for the grammar"


def _internal_error(report: Report, text: str, error: Exception, what: str = "expression") -> None:
    """Report an engine fault met while compiling `text` as a PE308 problem spanning it."""
    report(
        PE308,
        f"internal error compiling {what}: {type(error).__name__}: {error} (please report)"[:400],
        0,
        max(1, len(text)),
        "this is a policyengine bug, not a mistake in the rule; rewriting the expression may avoid it",
    )


class _Counter:
    """Counts problems passed through to a report."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.count = 0

    def __call__(self, code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
        self.count += 1
        self.report(code, message, offset, width, hint)


_LISTS = {"type": "field", "children": [], "value": "lists"}
# Node types whose first child is the left-hand side of the same path (a.b[0], a[*].b, a[?x]).
_BANG = re.compile(r"!(?!=)")  # a negation, not `!=`

# A slice is not among them: its children are its start, stop and step (ints or None), not nodes.
_CHAINED = {
    "subexpression",
    "index_expression",
    "projection",
    "filter_projection",
    "value_projection",
    "flatten",
}


def _null_after_negation(node: dict[str, Any]) -> bool:
    """Whether a chain that starts with `!x` reads a field, index or projection of the boolean (null)."""
    if node.get("type") != "subexpression":
        return True  # an index, slice, projection or flatten of a boolean is null
    # After a dot, a function or a multi-select still sees the boolean: `!a.to_string(@)` is "false".
    rest = node["children"][1]
    while isinstance(rest, dict) and rest.get("type") in _CHAINED and rest.get("children"):
        rest = rest["children"][0]
    return isinstance(rest, dict) and rest.get("type") == "field"


def _resolve(
    node: dict[str, Any], text: str, lists: Mapping[str, Any], report: _Counter, starts_path: bool = True
) -> dict[str, Any]:
    kind = node.get("type")
    children = node.get("children", [])
    if starts_path and kind == "field" and node.get("value") == "lists":
        report(
            "PE304",
            "`lists` is reserved for named lists; write lists.NAME",
            max(text.find("lists"), 0),
            5,
            f"declared lists: {', '.join(sorted(lists)) or 'none'}",
        )
        return node
    if starts_path and kind == "subexpression" and children and children[0] == _LISTS and len(children) > 1:
        folded = _fold_list(children[1], text, lists, report)
        if folded is None:
            return node
        rest = children[2:]
        node = {"type": "subexpression", "children": [folded, *rest]} if rest else folded
        kind, children = node.get("type"), node.get("children", [])
    if kind == "function_expression":
        name = node["value"]
        offset = max(text.find(f"{name}("), 0)
        if name not in _ARITY:
            close = difflib.get_close_matches(name, list(_ARITY), n=1)
            report(
                "PE302",
                f"unknown function {name}()",
                offset,
                len(name),
                f"did you mean {close[0]}()?" if close else "see docs/functions.md for the functions rules can use",
            )
        else:
            low, high = _ARITY[name]
            got = len(children)
            if got < low or (high is not None and got > high):
                want = f"{low}" if low == high else f"{low} or more" if high is None else f"{low} to {high}"
                report("PE303", f"{name}() takes {want} argument(s), got {got}", offset, len(name))
    first = children[0] if children and isinstance(children[0], dict) else {}
    if kind in _CHAINED and first.get("type") == "not_expression" and _null_after_negation(node):
        # `!arguments.ok` parses as `(!arguments).ok`: a field of a boolean, always null, so the
        # rule silently never applies (a deny that never denies). Refuse it, with the fix.
        negated = first["children"][0] if first.get("children") else {}
        name = negated.get("value") if negated.get("type") == "field" else None
        bang = (name and re.search(rf"!\s*\"?{re.escape(name)}\b", text)) or _BANG.search(text)
        report(
            "PE307",
            "`!` applies to the first step only: `!a.b` is `(!a).b`, a field of a boolean, always null",
            bang.start() if bang else 0,
            1,
            "write !(a.b) to negate the whole path",
        )
    resolved = [
        _resolve(child, text, lists, report, starts_path if i == 0 and kind in _CHAINED else kind != "subexpression")
        if isinstance(child, dict) and child.get("type") != "literal"
        else child
        for i, child in enumerate(children)
    ]
    if kind == "function_expression":
        for position, child in enumerate(resolved):
            if isinstance(child, dict) and child.get("type") == "literal":
                problem = pattern_problem(node["value"], position, child["value"])
                if problem:
                    report(
                        "PE306",
                        problem,
                        max(text.find(f"{node['value']}("), 0),
                        len(node["value"]),
                        "patterns use RE2 / glob syntax (no backreferences or lookaround)",
                    )
    return {**node, "children": resolved} if children else node


def _fold_list(node: dict[str, Any], text: str, lists: Mapping[str, Any], report: _Counter) -> dict[str, Any] | None:
    """`lists.NAME...`: replace the leftmost field NAME of the rest of the path by the list itself."""
    if node.get("type") == "field":
        name = node["value"]
        if name not in lists:
            close = difflib.get_close_matches(name, list(lists), n=1)
            report(
                "PE304",
                f"unknown list {name!r}",
                max(text.find(f"lists.{name}"), 0),
                len(name) + 6,
                f"did you mean lists.{close[0]}?"
                if close
                else f"declare it under `lists:`; declared: {', '.join(sorted(lists)) or 'none'}",
            )
            return None
        # Folded in at load time: no per-call lookup, and the value is frozen like call data.
        try:
            value = freeze(list(lists[name]))
        except FreezeError as error:  # e.g. .inf or .nan in the list: not JSON, no rule can use it
            report(
                "PE304",
                f"list {name!r} cannot be used: {error.message}",
                max(text.find(f"lists.{name}"), 0),
                len(name) + 6,
                "named lists hold strings, finite numbers and booleans",
            )
            return None
        return {"type": "literal", "children": [], "value": value}
    if node.get("type") in _CHAINED and node.get("children") and isinstance(node["children"][0], dict):
        first = _fold_list(node["children"][0], text, lists, report)
        return None if first is None else {**node, "children": [first, *node["children"][1:]]}
    report("PE304", "write lists.NAME to use a named list", max(text.find("lists."), 0), 6, None)
    return None


@dataclass(frozen=True, slots=True)
class Template:
    """A reason or feedback text whose {placeholders} are JMESPath; {{ and }} are braces."""

    text: str
    parts: tuple[str | Expression, ...]

    def render(self, document: Any) -> str:
        """Fill the placeholders from a call document; never raises."""
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            try:
                value = part.search(document)
            except Exception as error:  # a message must still be produced: the decision stands
                out.append(f"<{{{part.text}}} failed: {error}>")
                continue
            try:
                out.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
            except (TypeError, ValueError):  # an integer too long to print, an &expression
                out.append(f"<{{{part.text}}} is too large to show>")
        return "".join(out)


def compile_template(text: str, lists: Mapping[str, Any], report: Report) -> Template | None:
    """Split a template into literal text and compiled placeholders; None on any problem."""
    try:
        return _compile_template(text, lists, report)
    except Exception as error:  # a bug in splitting the template: refuse the pack, located, never crash
        _internal_error(report, text, error, "template")
        return None


def _compile_template(text: str, lists: Mapping[str, Any], report: Report) -> Template | None:
    """compile_template without the guard against internal faults."""
    parts: list[str | Expression] = []
    literal: list[str] = []
    i, failed = 0, False
    while i < len(text):
        char = text[i]
        if char in "{}" and text[i : i + 2] == char * 2:
            literal.append(char)
            i += 2
            continue
        if char == "}":
            report("PE305", "unmatched `}` in template", i, 1, "write }} for a literal closing brace")
            return None
        if char != "{":
            literal.append(char)
            i += 1
            continue
        end = placeholder_end(text, i)
        if end is None:
            report("PE305", "unclosed `{` in template", i, 1, "close the placeholder with }, or write {{ for a brace")
            return None
        inner = text[i + 1 : end]
        if not inner.strip():
            report("PE305", "empty placeholder {}", i, 2, "put a JMESPath expression inside, e.g. {name}")
            return None
        shifted = _shift(report, i + 1)
        expression = compile_expression(inner, lists, shifted)
        failed = failed or expression is None
        if literal:
            parts.append("".join(literal))
            literal = []
        if expression is not None:
            parts.append(expression)
        i = end + 1
    if literal:
        parts.append("".join(literal))
    return None if failed else Template(text, tuple(parts))


def _shift(report: Report, by: int) -> Report:
    def shifted(code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
        report(code, message, offset + by, width, hint)

    return shifted


def placeholder_end(text: str, start: int) -> int | None:
    """Index of the `}` closing the placeholder at `start`, skipping quoted JMESPath."""
    depth, i, quote = 0, start, ""
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 2
                continue
            if char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None
