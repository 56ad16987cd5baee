"""A rule's condition evaluated node by node: what every sub-expression returned, and why it did not match.

For `explain --trace`, not for calls: `trace()` runs the expression's AST (named lists already
folded in) through `StrictInterpreter`, the compiled closures' own reference (same functions,
same fail-closed ordering rule), recording each node's value, and lays the records out as a
tree of `Step`s over the expression's text.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from jmespath.visitor import _Expression

from policyengine.language.expression_compiler import StrictInterpreter
from policyengine.language.expressions import Expression
from policyengine.language.functions import OPTIONS
from policyengine.language.syntax import Spans, parse_with_spans
from policyengine.language.type_names import TypeNames, type_name

__all__ = ["ExpressionTrace", "Step", "compact", "trace"]

# Nodes that evaluate their right-hand side once per element of their left-hand side.
_PROJECTIONS = frozenset({"projection", "value_projection", "filter_projection"})
# A chain of these is a path (a.b[0].c), shown on one line.
_PATH_STEPS = frozenset({"field", "index", "identity", "current", "subexpression", "index_expression"})
_SYMBOLS = {"eq": "==", "ne": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}


@dataclass(frozen=True, slots=True)
class Step:
    """One sub-expression evaluated once: its text, what it returned or raised, and the steps inside it."""

    # The jmespath node type; "element" for one element a projection (or a function's &expression)
    # went through, whose value is that element (`@` for the steps inside it).
    kind: str
    text: str
    span: tuple[int, int] | None  # offsets in the expression; None for text the parser made up
    value: Any = None
    error: str | None = None
    children: tuple[Step, ...] = ()
    note: str | None = None  # for a path that is null: where it went null
    omitted: int = 0  # elements left out of `children`
    operator: str | None = None  # for a comparison: ==, <, ...
    evaluated: bool = True  # False for the right side of a && or || that the left side decided

    def to_json(self, limit: int = 1000) -> dict[str, Any]:
        """A JSON-ready tree; a value whose JSON is longer than `limit` characters is cut."""
        out: dict[str, Any] = {"text": self.text, "kind": self.kind, "span": list(self.span) if self.span else None}
        if not self.evaluated:
            out["evaluated"] = False
        elif self.error is not None:
            out["error"] = self.error
        else:
            shown = compact(self.value, None)
            if len(shown) <= limit:
                out["value"] = json.loads(shown) if _is_json(self.value) else shown
            else:
                out["value_preview"] = compact(self.value, limit)
                out["value_length"] = len(shown)
        if self.note:
            out["note"] = self.note
        if self.children:
            out["children"] = [child.to_json(limit) for child in self.children]
        if self.omitted:
            out["omitted"] = self.omitted
        return out


@dataclass(frozen=True, slots=True)
class ExpressionTrace:
    """A condition's evaluation: the expression, its tree of steps and, when false, why."""

    text: str
    root: Step
    value: Any
    error: Exception | None = field(default=None, compare=False)
    truncated: bool = False  # the evaluation visited more nodes than were recorded

    @property
    def matched(self) -> bool:
        """JMESPath truthiness of the value, as a rule tests it (an error never matches)."""
        if self.error is not None:
            return False
        value = self.value
        return not (value is None or value is False or value == "" or value == [] or value == {})

    def why(self) -> str | None:
        """For a condition that did not match: the sub-expressions that made it false, null or fail."""
        if self.matched:
            return None
        return "; ".join(_blame(self.root))

    def lines(self, width: int = 80) -> list[str]:
        """The tree as indented lines: `text  => value`, values as compact JSON cut at `width`."""
        out: list[str] = []
        _lines(self.root, 0, width, out)
        if self.truncated:
            out.append("... (the evaluation went on; the trace records only its first steps)")
        return out

    def to_json(self, limit: int = 1000) -> dict[str, Any]:
        """The trace as JSON: expression, value or error, why, and the tree."""
        return {
            "expression": self.text,
            "matched": self.matched,
            "error": _describe(self.error) if self.error is not None else None,
            "why": self.why(),
            "truncated": self.truncated,
            "tree": self.root.to_json(limit),
        }


def trace(expression: Expression, document: Any, *, max_elements: int = 10, max_steps: int = 5000) -> ExpressionTrace:
    """Evaluate `expression` on `document` node by node; the value is what the compiled condition returns."""
    ast = expression.parsed.parsed
    tracer = _Tracer(max_steps)
    error: Exception | None = None
    value: Any = None
    try:
        value = tracer.visit(ast, document)
    except Exception as raised:  # the rule fails closed on it; the trace shows where
        error = raised
    spans = _spans_of(expression.text, ast)
    builder = _Builder(expression.text, spans, document, max_elements, complete=tracer.skipped == 0)
    root_visit = tracer.root.children[0] if tracer.root.children else _Visit(ast, document)
    root = builder.step(root_visit) or Step(ast.get("type", "?"), expression.text, (0, len(expression.text)), value)
    return ExpressionTrace(expression.text, root, value, error, tracer.skipped > 0)


# --- recording ------------------------------------------------------------------------------------


class _Visit:
    """One call of the interpreter's visit: the node, the current value, the result, the visits inside."""

    __slots__ = ("children", "error", "node", "result", "value")

    def __init__(self, node: Any, value: Any) -> None:
        self.node = node
        self.value = value
        self.result: Any = None
        self.error: Exception | None = None
        self.children: list[_Visit] = []


class _Tracer(StrictInterpreter):
    """StrictInterpreter that records every visit (up to a budget) as a tree of _Visit."""

    def __init__(self, budget: int) -> None:
        super().__init__(OPTIONS)
        self.root = _Visit(None, None)
        self._stack = [self.root]
        self._budget = budget
        self.skipped = 0

    def visit(self, node: Any, *args: Any, **kwargs: Any) -> Any:
        """Visit as StrictInterpreter does, noting the node, its input and its result."""
        if len(args) != 1 or kwargs:  # not a node evaluation (none is known): nothing to record
            return super().visit(node, *args, **kwargs)
        if self._budget <= 0:
            self.skipped += 1
            return super().visit(node, *args)
        self._budget -= 1
        record = _Visit(node, args[0])
        self._stack[-1].children.append(record)
        self._stack.append(record)
        try:
            record.result = super().visit(node, *args)
        except Exception as error:
            record.error = error
            raise
        finally:
            self._stack.pop()
        return record.result


# --- spans ----------------------------------------------------------------------------------------


def _spans_of(text: str, resolved: dict[str, Any]) -> Spans:
    """Spans of the resolved AST's nodes, from a parse of the text aligned with it."""
    try:
        raw, raw_spans = parse_with_spans(text)
    except Exception:  # the text compiled once; if it no longer parses here, show made-up text
        return {}
    out: Spans = {}
    _align(raw, resolved, raw_spans, out)
    return out


def _is_lists(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "field" and node.get("value") == "lists"


def _align(raw: Any, resolved: Any, spans: Spans, out: Spans) -> None:
    """Give each resolved node the span of the raw node it came from; folded `lists.NAME` get theirs."""
    if not (isinstance(raw, dict) and isinstance(resolved, dict)):
        return
    span = spans.get(id(raw))
    if span is not None:
        out[id(resolved)] = span
    raw_children = raw.get("children") or []
    children = resolved.get("children") or []
    folded = raw.get("type") == "subexpression" and raw_children and _is_lists(raw_children[0])
    if folded and (resolved.get("type") != "subexpression" or len(children) != len(raw_children)):
        # lists.NAME.rest was resolved to NAME's value (a literal) followed by the rest.
        start = span[0] if span else None
        if len(raw_children) == 2:
            _align_folded(raw_children[1], resolved, start, spans, out)
            return
        _align_folded(raw_children[1], children[0], start, spans, out)
        for a, b in zip(raw_children[2:], children[1:], strict=False):
            _align(a, b, spans, out)
        return
    if raw.get("type") == resolved.get("type") and len(raw_children) == len(children):
        for a, b in zip(raw_children, children, strict=True):
            _align(a, b, spans, out)


def _align_folded(raw: Any, resolved: Any, start: int | None, spans: Spans, out: Spans) -> None:
    """The leftmost path of a folded list: its spans start at `lists`."""
    if not (isinstance(raw, dict) and isinstance(resolved, dict)):
        return
    span = spans.get(id(raw))
    if span is not None:
        out[id(resolved)] = (span[0] if start is None else start, span[1])
    if resolved.get("type") == "literal":
        return
    raw_children, children = raw.get("children") or [], resolved.get("children") or []
    if raw_children and children:
        _align_folded(raw_children[0], children[0], start, spans, out)
        for a, b in zip(raw_children[1:], children[1:], strict=False):
            _align(a, b, spans, out)


# --- the tree -------------------------------------------------------------------------------------


class _Builder:
    """Turns the recorded visits into Steps: text from spans, projections per element, paths on one line."""

    def __init__(self, text: str, spans: Spans, document: Any, max_elements: int, *, complete: bool) -> None:
        self.complete = complete  # every visit was recorded: a missing one was never made
        self.text = text
        self.spans = spans
        self.document = document
        self.max_elements = max_elements

    def text_of(self, node: dict[str, Any]) -> str:
        """The node's source text, or a spelling of it for nodes without one."""
        span = self.spans.get(id(node))
        if span is not None:
            return self.text[span[0] : span[1]]
        kind = node.get("type")
        children = [c for c in node.get("children") or [] if isinstance(c, dict)]
        if kind in ("identity", "current"):
            return "@"
        if kind == "index":
            return f"[{node.get('value')}]"
        if kind == "slice":
            start, stop, step = ("" if p is None else str(p) for p in node.get("children") or [None] * 3)
            return f"[{start}:{stop}]" if step == "" else f"[{start}:{stop}:{step}]"
        if kind == "flatten" and children:
            return self.text_of(children[0]) + "[]"
        if kind == "key_val_pair" and children:
            return f"{node.get('value')}: {self.text_of(children[0])}"
        if kind in ("index_expression", "subexpression") and children:
            return "".join(self.text_of(c) for c in children if not self._hidden(c))
        if kind == "literal":
            return f"`{compact(node.get('value'), None)}`"
        return f"({kind})"

    def _hidden(self, node: Any) -> bool:
        """An identity the parser made up (`[*]`'s sides): nothing in the text, nothing to show."""
        return isinstance(node, dict) and node.get("type") == "identity" and id(node) not in self.spans

    def step(self, visit: _Visit) -> Step | None:
        """The Step of one visit, None for a made-up identity."""
        node = visit.node
        if not isinstance(node, dict) or self._hidden(node):
            return None
        kind = str(node.get("type"))
        span = self.spans.get(id(node))
        error = _describe(visit.error) if visit.error is not None else None
        base = {"kind": kind, "text": self.text_of(node), "span": span, "value": visit.result, "error": error}
        if kind == "comparator":
            return Step(**base, children=self._steps(visit.children), operator=_SYMBOLS.get(str(node.get("value"))))
        if _is_path(node) or kind == "field":
            # a.b[0].c on one line: its steps would only repeat the value; say where a null came from.
            note = self._null_at(visit) if visit.result is None and error is None else None
            return Step(**base, note=note)
        if kind == "key_val_pair" and visit.children:
            inner = self.step(visit.children[0])
            return Step(**base, children=inner.children if inner else ())
        if kind in _PROJECTIONS:
            children, omitted = self._per_element(visit, node)
            return Step(**base, children=children, omitted=omitted)
        if kind == "function_expression":
            children, omitted = self._function(visit, node)
            return Step(**base, children=children, omitted=omitted)
        steps = self._steps(visit.children)
        short = len(visit.children) == 1 and visit.error is None and self.complete
        if kind in ("and_expression", "or_expression") and short:
            # The left side decided: show the right side, marked as never evaluated.
            right = (node.get("children") or [None, None])[1]
            if isinstance(right, dict):
                skipped = Step(str(right.get("type")), self.text_of(right), self.spans.get(id(right)), evaluated=False)
                steps += (skipped,)
        return Step(**base, children=steps)

    def _steps(self, visits: list[_Visit]) -> tuple[Step, ...]:
        return tuple(s for s in (self.step(v) for v in visits) if s is not None)

    def _per_element(self, visit: _Visit, node: dict[str, Any]) -> tuple[tuple[Step, ...], int]:
        """The base, then one group per element: a filter's condition, the right-hand side."""
        children_nodes = node.get("children") or []
        starts = children_nodes[2] if node.get("type") == "filter_projection" else children_nodes[1]
        visits = visit.children
        if not visits:
            return (), 0
        head = self._steps(visits[:1])
        groups: list[list[_Visit]] = []
        for v in visits[1:]:
            if v.node is starts or not groups:
                groups.append([])
            groups[-1].append(v)
        if all(all(self._hidden(v.node) for v in group) for group in groups):
            return head, 0  # `a[*]`, `a[]`: each element would only repeat itself
        return head + self._elements(groups), max(0, len(groups) - self.max_elements)

    def _function(self, visit: _Visit, node: dict[str, Any]) -> tuple[tuple[Step, ...], int]:
        """The arguments, then each evaluation of an &expression the function made (sort_by, max_by...)."""
        arguments = len(node.get("children") or [])
        head = self._steps(visit.children[:arguments])
        extra = visit.children[arguments:]
        if not extra:
            return head, 0
        return head + self._elements([[v] for v in extra]), max(0, len(extra) - self.max_elements)

    def _elements(self, groups: list[list[_Visit]]) -> tuple[Step, ...]:
        out = []
        for i, group in enumerate(groups[: self.max_elements]):
            element = group[0].value
            out.append(Step("element", f"[{i}]", None, element, children=self._steps(group)))
        return tuple(out)

    def _null_at(self, visit: _Visit) -> str | None:
        """For a path that came out null: the first field or index that was missing, and what it was read from."""
        leaves: list[_Visit] = []

        def collect(v: _Visit) -> None:
            if not v.children:
                leaves.append(v)
            for c in v.children:
                collect(c)

        collect(visit)
        span = self.spans.get(id(visit.node))
        read = None  # where the text read so far ends: what a step reads from is the text before it
        for leaf in leaves:
            if leaf.result is not None or leaf.error is not None:
                read = self._read_to(leaf, read)
                continue
            kind = leaf.node.get("type")
            owner = self.text[span[0] : read] if span is not None and read is not None else None
            if not owner:
                owner = "the call" if leaf.value is self.document else "@"
            value = leaf.value
            if value is None:
                return None  # null already on the way in (the current element, a null @)
            if kind == "field":
                name = json.dumps(leaf.node.get("value"), ensure_ascii=False)
                if isinstance(value, dict):
                    return f"{owner} has no field {name}"
                return f"{owner} is {_type(value)} {compact(value, 40)}, not an object, so it has no field {name}"
            if kind == "index":
                if isinstance(value, list):
                    return f"{owner} has no element [{leaf.node.get('value')}]: it has {len(value)}"
                return f"{owner} is {_type(value)} {compact(value, 40)}, not an array"
            return None
        return None

    def _read_to(self, leaf: _Visit, read: int | None) -> int | None:
        """Where the text of a path step ends; an index has no span of its own, so up to its `]`."""
        span = self.spans.get(id(leaf.node))
        if span is not None:
            return span[1]
        if read is not None and leaf.node.get("type") == "index":
            close = self.text.find("]", read)
            return close + 1 if close >= 0 else read
        return read


def _is_path(node: dict[str, Any]) -> bool:
    """A chain of fields and indexes only (a.b[0].c), with at least two steps."""
    if node.get("type") not in ("subexpression", "index_expression"):
        return False

    def plain(n: Any) -> bool:
        return isinstance(n, dict) and n.get("type") in _PATH_STEPS and all(plain(c) for c in n.get("children") or [])

    return plain(node)


def _describe(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


_TYPES: TypeNames = (
    (type(None), "null"),
    (bool, "a boolean"),
    ((int, float), "a number"),
    (str, "a string"),
    (list, "an array"),
    (dict, "an object"),
)


def _type(value: Any) -> str:
    """The JMESPath type name of a value."""
    return type_name(value, _TYPES)


# --- values ---------------------------------------------------------------------------------------


def _is_json(value: Any) -> bool:
    """Whether compact() of the value is JSON json.loads gives back (no &expression, no NaN)."""
    if isinstance(value, _Expression):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_is_json(v) for v in value.values())
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    return value is None or isinstance(value, (str, int, bool))


def _default(value: Any) -> Any:
    return "<&expression>" if isinstance(value, _Expression) else repr(value)


def compact(value: Any, width: int | None = 80) -> str:
    """A value as one line of JSON; longer than `width`, cut with an ellipsis and its full length."""
    if isinstance(value, _Expression):
        return "<&expression>"
    try:
        shown = json.dumps(value, ensure_ascii=False, default=_default)
    except (TypeError, ValueError):  # a circular value, an integer too long to print
        shown = repr(value)
    if width is None or len(shown) <= width:
        return shown
    return f"{shown[: max(1, width - 1)]}… ({len(shown)} chars)"


def _lines(step: Step, depth: int, width: int, out: list[str]) -> None:
    pad = "  " * depth
    if step.kind == "element":
        out.append(f"{pad}{step.text} @ = {compact(step.value, width)}")
    elif not step.evaluated:
        out.append(f"{pad}{step.text}  (not evaluated)")
    else:
        shown = f"raised {step.error}" if step.error is not None else compact(step.value, width)
        out.append(f"{pad}{step.text}  => {shown}" + (f"  ({step.note})" if step.note else ""))
    for child in step.children:
        _lines(child, depth + 1, width, out)
    if step.omitted:
        out.append(f"{pad}  ... {step.omitted} more element(s)")


# --- why not --------------------------------------------------------------------------------------


def _falsy(value: Any) -> bool:
    return value is None or value is False or value == "" or value == [] or value == {}


def _constant(step: Step) -> bool:
    """A literal, or a list of literals: its value is in its text."""
    if step.kind == "literal":
        return True
    return step.kind == "multi_select_list" and all(c.kind == "literal" for c in step.children)


def _blame(step: Step) -> list[str]:
    """The sub-expressions that made `step` false, null or fail, innermost first that explains it."""
    if step.error is not None:
        for child in step.children:
            if child.error is not None:
                return _blame(child)
        return [f"{step.text} raised {step.error}"]
    kind, children = step.kind, step.children
    shown = compact(step.value, 60)
    if kind == "and_expression" and children:
        return _blame(children[0] if _falsy(children[0].value) or len(children) == 1 else children[1])
    if kind == "or_expression" and children:
        return [why for child in children if child.evaluated for why in _blame(child)]
    if kind == "not_expression" and children:
        return [f"{step.text} is false: {children[0].text} is {compact(children[0].value, 60)}"]
    if kind == "comparator" and len(children) == 2:
        left, right = children
        because = f"{step.text} is {shown} ({compact(left.value, 40)} {step.operator} {compact(right.value, 40)})"
        notes = [c.note for c in children if c.note]
        return [because + "".join(f"; {n}" for n in notes)]
    if step.note:
        return [f"{step.text} is {shown}: {step.note}"]
    if kind == "function_expression":
        # The values the function got, but for literals (the text already says them).
        read = [c for c in children if c.kind != "element" and not _constant(c)]
        given = ", ".join(f"{c.text} = {compact(c.value, 40)}" for c in read[:3])
        return [f"{step.text} is {shown}" + (f" ({given})" if given else "")]
    if kind == "pipe" and len(children) == 2 and _falsy(children[0].value):
        # `x | length(@) > 0`: what made the right side false is usually that x was empty.
        return ["; ".join(_blame(children[0])) + ", so " + "; ".join(_blame(children[1]))]
    if kind in ("pipe", "subexpression", "index_expression") and children:
        return _blame(children[-1])
    if kind in _PROJECTIONS and children:
        base = children[0]
        if step.value is None:
            wanted = "an object" if kind == "value_projection" else "an array"
            return [f"{step.text} is null: {base.text} is {compact(base.value, 40)}, not {wanted}"]
        if isinstance(base.value, list) and not base.value:
            return [f"{step.text} is []: {base.text} is []"]
        if kind == "filter_projection" and isinstance(base.value, list):
            return [f"{step.text} is []: none of the {len(base.value)} element(s) of {base.text} passes the filter"]
        return [f"{step.text} is {shown}: {base.text} is {compact(base.value, 40)}"]
    return [f"{step.text} is {shown}"]
