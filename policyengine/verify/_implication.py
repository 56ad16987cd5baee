"""Proof by a red line: a property holds when its condition implies an enforcing guard's, over its tools.

Guards are monotonic: a red line that matches a call denies it, whatever any other rule says, and
one whose condition fails also denies (fail closed). So a `never` property that forbids neither
`deny` nor `invalid` (or an `always` property that allows `deny`) holds for every call when some
enforcing guard (not in monitor mode) of the installed layers covers all of the property's tools
and its condition is implied by the property's. This module decides that implication on the two
conditions' JMESPath trees by rules that are sound on their own (a rule that does not apply means
"not shown", never "shown"):

- the same tree (the packs' `lists.NAME` read as the literal lists they are; `!(a && b)` read as
  `!a || !b` and `!(a || b)` as `!a && !b`, the same boolean);
- `a || b` implies `q` when both do; `a && b` when either does; `p` implies `a || b` when it
  implies either, `a && b` when it implies both;
- `length(X) > 0` (or `X | length(@) > 0`) implies `length(Y) > 0` when X's items are among Y's:
  the same expression, or the same source filtered by a predicate that implies Y's filter; or when X
  pins an item of a source S (`S[?contains(['x'], @)]`) and Y is built from S item by item
  (filters, projections, flattening, pipes of these) and is nonempty for each pinned item alone;
- `path_within(@, A)` implies `path_within(@, B)` when every path of A is absolute and lies within
  one of B (the engine's own `path_within`, on the literals: within is transitive), and rules out
  `path_surely_within(@, B)` of trees apart and `contains(L, @)` of entries outside A;
- `f(E, A)` implies `f(E, B)` for a test that holds when any entry of its list does (path_matches,
  glob_match, regex_match, tool_matches, path_within and their sure forms) when A's entries are among B's;
- a premise that pins a value to literals (`E == 'x'`, `contains(['x', 'y'], E)`) implies a condition
  that, with E replaced by each literal, the engine evaluates to true (nothing else of the call is read:
  the condition's other parts are literals too, or it is not shown). A path item may remember how it
  was written (FoldedPath) and only the surely tests read that, answering no more often: so a pinned
  value never stands where a `path_surely_*` test is asserted, and values with glob characters are
  never pinned.

A property over named tools is proved tool by tool: each red line's condition is specialised to the
tool (`name` is that name; `tool_matches(name, ...)`, `&&`, `||`, `!` and `@ | X` of literals are
evaluated), so a branch for other tools drops out. What is not shown is reported: the red line and
the part of its condition no rule reached (`Proof.gaps`, as text that parses back to the same tree).

Anything else (other comparisons, other functions, regexes over classes of values) is not shown,
and the property is searched instead (docs/verify.md). `verify --recheck N` decides random calls
around each proof's values (_recheck.py): a proof the rules got wrong shows there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jmespath

from policyengine.language.expression_compiler import search
from policyengine.language.expressions import compile_expression
from policyengine.language.functions import FUNCTIONS
from policyengine.packs.loader import Pack
from policyengine.packs.rules import Mode, Rule, RuleDecision, ToolMatcher
from policyengine.values.frozen import freeze
from policyengine.values.results import Stage

__all__ = [
    "Proof",
    "fold",
    "implied_by_guard",
    "implies",
    "named_tools",
    "normalised",
    "prove",
    "red_lines",
    "simplified",
    "text_of",
    "truthy",
]

Node = dict[str, Any]


def red_lines(packs: Sequence[Pack]) -> list[tuple[Rule, Node | None]]:
    """The packs' enforcing deny guards with their conditions' trees, built once (None: no condition, every call)."""
    return [
        (rule, None if rule.when is None else normalised(rule.when.text, pack.lists))
        for pack in packs
        for rule in pack.rules
        if rule.stage is Stage.GUARD
        and rule.mode is Mode.ENFORCE
        and rule.verb is RuleDecision.DENY
        and not rule.labels
    ]


def implied_by_guard(
    when: str | None, lists: Mapping[str, Any], tools: ToolMatcher, guards: list[tuple[Rule, Node | None]]
) -> Rule | None:
    """The first red line (of `red_lines`) whose condition `when` implies, over every tool `tools` names; else None."""
    proof = prove(when, lists, tools, guards)
    if proof.red_line is None:
        return None
    first = proof.red_line.split(", ")[0]
    return next(rule for rule, _ in guards if rule.id == first)


def named_tools(tools: ToolMatcher) -> list[str]:
    """The tools a selector names one by one (sorted), or none when it holds a glob or a tag (no one tool)."""
    return sorted(tools.names) if tools.names and not tools.globs and not tools.tags else []


def _covers(guard: ToolMatcher, tools: ToolMatcher) -> bool:
    """Whether the guard's tools include every tool the property's name (by their spelling: names, globs, tags)."""
    if "*" in guard.globs:
        return True
    # A name the guard matches (by name or glob); a glob or tag only when the guard names it too.
    return (
        all(guard.matches(name) for name in tools.names)
        and set(tools.globs) <= set(guard.globs)
        and tools.tags <= guard.tags
    )


def normalised(text: str, lists: Mapping[str, Any]) -> Node:
    """The condition's tree: `lists.NAME` and literal lists as literals, `X | length(@) > 0` as `length(X) > 0`."""
    return _norm(jmespath.compile(text).parsed, lists)


def _norm(node: Node, lists: Mapping[str, Any]) -> Node:
    kind = node.get("type")
    children = [_norm(c, lists) if isinstance(c, dict) else c for c in node.get("children", [])]
    if (
        kind == "subexpression"
        and len(children) == 2
        and all(c.get("type") == "field" for c in children)
        and children[0]["value"] == "lists"
        and children[1]["value"] in lists
    ):
        return {
            "type": "literal",
            "value": list(lists[children[1]["value"]]),
            "children": [],
            "list": children[1]["value"],
        }
    if kind == "multi_select_list" and all(c.get("type") == "literal" for c in children):
        return {"type": "literal", "value": [c["value"] for c in children], "children": []}
    if kind == "pipe" and len(children) == 2 and _is_nonempty(children[1], of_current=True):
        return _nonempty(children[0])
    if kind == "comparator" and _is_nonempty(node | {"children": children}, of_current=False):
        return _nonempty(children[0]["children"][0])
    if kind == "not_expression" and children and children[0].get("type") in ("and_expression", "or_expression"):
        # De Morgan: `!(a && b)` is `!a || !b` (and `!(a || b)` is `!a && !b`), the same boolean value.
        inner = children[0]
        flipped = "or_expression" if inner["type"] == "and_expression" else "and_expression"
        negated = [_norm({"type": "not_expression", "children": [c]}, lists) for c in inner["children"]]
        return {"type": flipped, "children": negated}
    return {**node, "children": children}


def _is_nonempty(node: Node, *, of_current: bool) -> bool:
    """`length(@) > 0` (of_current) or `length(X) > 0`; `>= 1` too."""
    if node.get("type") != "comparator" or node.get("value") not in ("gt", "gte"):
        return False
    left, right = node["children"]
    bound = 0 if node["value"] == "gt" else 1
    if right.get("type") != "literal" or right.get("value") != bound or type(right.get("value")) is not int:
        return False
    if left.get("type") != "function_expression" or left.get("value") != "length" or len(left["children"]) != 1:
        return False
    return (left["children"][0].get("type") == "current") is of_current


def _nonempty(of: Node) -> Node:
    return {"type": "nonempty", "children": [of]}


@dataclass(frozen=True)
class Proof:
    """The red lines that prove a property (one a tool, joined), or for each covering red line what was not shown."""

    red_line: str | None
    gaps: tuple[tuple[str, str, str], ...] = ()  # (red line, tool or "", the part of its condition not reached)


def prove(
    when: str | None,
    lists: Mapping[str, Any],
    tools: ToolMatcher,
    guards: list[tuple[Rule, Node | None]],
    first: str | None = None,
) -> Proof:
    """Whether `when` implies an enforcing red line's condition for every tool `tools` names (`first`: try it first)."""
    if when is None:
        return Proof(None)
    premise = normalised(when, lists)
    covering = sorted((g for g in guards if _covers(g[0].tools, tools)), key=lambda g: g[0].id != first)
    # Named tools only: each is proved with the red lines specialised to it; a glob or tag names no one tool.
    names: list[str | None] = [*named_tools(tools)] or [None]
    proving: list[str] = []
    gaps: list[tuple[str, str, str]] = []
    for name in names:
        found = None
        for rule, condition in covering:
            goal = None if condition is None else condition if name is None else fold(condition, name)
            gap = None if goal is None else _gap(premise, goal)
            if gap is None:
                found = rule.id
                break
            gaps.append((rule.id, name or "", text_of(gap)))
        if found is None:
            return Proof(None, tuple(g for g in gaps if g[1] == (name or "")))
        proving.append(found)
    return Proof(", ".join(dict.fromkeys(proving)))


def implies(p: Node, q: Node) -> bool:
    """Whether p's truth implies q's, shown by the rules of this module (False: not shown)."""
    return _gap(p, q) is None


def _gap(p: Node, q: Node) -> Node | None:
    """None when p's truth implies q's by this module's rules; else the part of q no rule reached."""
    if p == q or _truthy_literal(q):
        return None
    kp, kq = p.get("type"), q.get("type")
    if kp == "or_expression" and all(_gap(c, q) is None for c in p["children"]):
        return None
    if kp == "and_expression" and any(_gap(c, q) is None for c in p["children"]):
        return None
    if _pinned(p, q):
        return None
    if kq == "or_expression":
        found = [_gap(p, c) for c in q["children"]]
        if any(g is None for g in found):
            return None
        # Report an alternative the proof went into (a strict part of it), one that tests what the
        # premise tests first (`path_matches` for a path_matches premise), else the whole.
        tested = _functions(p)
        deeper = [(g, c) for g, c in zip(found, q["children"], strict=True) if g is not c and g is not None]
        deeper.sort(key=lambda pair: len(_functions(pair[1]) & tested), reverse=True)
        return deeper[0][0] if deeper else q
    if kq == "and_expression":
        for c in q["children"]:
            if (gap := _gap(p, c)) is not None:
                return gap
        return None
    if kq == "not_expression" and kp == "function_expression" and _excludes(p, q["children"][0]):
        return None
    if kp == kq == "nonempty":
        return _within(p["children"][0], q["children"][0])
    if kp == kq == "function_expression" and p.get("value") == q.get("value") == "path_within":
        return None if _paths_within(p, q) or _among(p, q) else q
    if kp == kq == "function_expression" and _among(p, q):
        return None
    return q


# Tests true when any entry of their list argument holds: a larger list holds whenever a smaller one does.
_ANY_OF = frozenset(
    {
        "path_matches",
        "path_surely_matches",
        "path_within",
        "path_surely_within",
        "glob_match",
        "regex_match",
        "tool_matches",
    }
)


def _functions(node: Node) -> set[str]:
    """The names of the functions an expression calls."""
    found = {str(node["value"])} if node.get("type") == "function_expression" else set()
    for child in node.get("children", []):
        if isinstance(child, dict):
            found |= _functions(child)
    return found


def _among(p: Node, q: Node) -> bool:
    """f(E, A) implies f(E, B): a test of _ANY_OF, the same subject, A's literal entries among B's."""
    if p.get("value") != q.get("value") or p.get("value") not in _ANY_OF:
        return False
    (subject, small), (other, large) = p["children"], q["children"]
    if subject != other or small.get("type") != "literal" or large.get("type") != "literal":
        return False
    entries, bounds = small["value"], large["value"]
    entries = [entries] if isinstance(entries, str) else entries
    bounds = [bounds] if isinstance(bounds, str) else bounds
    return isinstance(entries, list) and isinstance(bounds, list) and set(map(str, entries)) <= set(map(str, bounds))


def _pinned(p: Node, q: Node) -> bool:
    """A premise pinning E to literals implies q when q, E each literal, evaluates true (reading nothing else)."""
    pins = _pins(p)
    if pins is None or _asserts_surely(q):
        return False
    subject, values = pins
    return all(_truthy_literal(_simplify(_rewrite(q, _replacing(subject, value)))) for value in values)


def _pins(p: Node) -> tuple[Node, list[Any]] | None:
    """(E, values) for `E == 'x'` or `contains(['x', 'y'], E)`, else None.

    A path the engine reads may remember how it was written (FoldedPath) or be a glob (PathPattern):
    only its "surely" tests read more than its text, and they answer no more often than on the text.
    So a pinned value stands for the item where a surely test is negated, never where it is asserted
    (the callers check), and a value with glob characters (a PathPattern's own reading) is not pinned.
    """
    kind, children = p.get("type"), p.get("children", [])
    if kind == "comparator" and p.get("value") == "eq" and len(children) == 2:
        left, right = children
        if right.get("type") == "literal" and left.get("type") != "literal":
            subject, values = left, [right["value"]]
        elif left.get("type") == "literal" and right.get("type") != "literal":
            subject, values = right, [left["value"]]
        else:
            return None
    elif kind == "function_expression" and p.get("value") == "contains" and len(children) == 2:
        listed, subject = children
        if listed.get("type") != "literal" or not isinstance(listed["value"], list) or subject.get("type") == "literal":
            return None
        values = list(listed["value"])
    else:
        return None
    if (
        not values
        or len(values) > _MAX_PINNED
        or any(isinstance(v, str) and any(c in v for c in "*?[") for v in values)
    ):
        return None
    return subject, values


def _asserts_surely(node: Node, positive: bool = True) -> bool:
    """Whether a `path_surely_*` test stands in node other than negated (under a comparison: either way)."""
    kind = node.get("type")
    if kind == "function_expression" and str(node.get("value")).startswith("path_surely") and positive:
        return True
    if kind == "comparator":
        return any(_asserts_surely(c, True) or _asserts_surely(c, False) for c in node.get("children", []))
    flip = kind == "not_expression"
    return any(_asserts_surely(c, positive != flip) for c in node.get("children", []) if isinstance(c, dict))


def _replacing(subject: Node, value: Any) -> Callable[[Node], Node | None]:
    literal = {"type": "literal", "value": value, "children": []}
    return lambda node: literal if node == subject else None


_MAX_PINNED = 256
_MAX_FOLDS = 8


def simplified(condition: Node) -> Node:
    """The condition with what reads only literals evaluated (no tool name assumed)."""
    return _simplify(condition)


def fold(node: Node, tool: str) -> Node:
    """The condition specialised to one tool: `name` is its name, and what then reads only literals is evaluated."""
    literal = {"type": "literal", "value": tool, "children": []}
    # `@ | X` read as X brings X's `name` to the top scope: fold again until nothing changes.
    for _ in range(_MAX_FOLDS):
        folded = _simplify(_rewrite(node, lambda n: literal if n == _NAME_FIELD else None))
        if folded == node:
            break
        node = folded
    return node


_NAME_FIELD: Node = {"type": "field", "children": [], "value": "name"}
# Child positions read against another value than the node's own current one (a filter's item, a pipe's left).
_INNER_SCOPE = {
    "filter_projection": (1, 2),
    "projection": (1,),
    "value_projection": (1,),
    "flatten": (),
    "subexpression": (1,),
    "index_expression": (1,),
    "pipe": (1,),
}


def _rewrite(node: Node, replace: Callable[[Node], Node | None]) -> Node:
    """Node with every part at its own scope that `replace` answers for replaced (inner scopes untouched)."""
    found = replace(node)
    if found is not None:
        return found
    inner = _INNER_SCOPE.get(str(node.get("type")), ())
    children = node.get("children", [])
    if not children:
        return node
    return {
        **node,
        "children": [
            c if i in inner or not isinstance(c, dict) else _rewrite(c, replace) for i, c in enumerate(children)
        ],
    }


def _simplify(node: Node) -> Node:
    """Literal-only parts evaluated by the engine; `&&`, `||`, `!` of literals decided; `@ | X` read as X."""
    kind = node.get("type")
    children = [_simplify(c) if isinstance(c, dict) else c for c in node.get("children", [])]
    node = {**node, "children": children} if children else node
    if kind == "pipe" and children and children[0].get("type") == "current":
        return children[1]
    if kind == "and_expression" and children[0].get("type") == "literal":
        return children[1] if truthy(children[0]["value"]) else children[0]
    if kind == "or_expression" and children[0].get("type") == "literal":
        return children[0] if truthy(children[0]["value"]) else children[1]
    if kind == "or_expression" and children[1].get("type") == "literal" and not truthy(children[1]["value"]):
        return children[0] if _boolean(children[0]) else node  # `x || false` is x's truth when x is true or false
    if (
        kind in ("not_expression", "comparator", "function_expression")
        and children
        and all(c.get("type") == "literal" for c in children)
    ):
        try:
            value = search(node, freeze({}), _OPTIONS)
        except Exception:  # an error at run time fails the rule closed: not decided here
            return node
        return {"type": "literal", "value": value, "children": []}
    return node


_OPTIONS = jmespath.Options(custom_functions=FUNCTIONS)
_BOOLEAN_FUNCTIONS = frozenset({"contains", "starts_with", "ends_with", "path_unknown"})


def _boolean(node: Node) -> bool:
    """Whether the expression's value is a boolean, so `x || false` is x's truth."""
    return node.get("type") in ("comparator", "not_expression", "nonempty") or (
        node.get("type") == "function_expression" and node.get("value") in _ANY_OF | _BOOLEAN_FUNCTIONS
    )


def truthy(value: Any) -> bool:
    """JMESPath's truth: false, null and empty strings, lists and objects are false; 0 is true."""
    if value is None or value is False:
        return False
    if isinstance(value, str | list | tuple | Mapping):
        return len(value) > 0
    return True


def _truthy_literal(node: Node) -> bool:
    return node.get("type") == "literal" and truthy(node.get("value"))


def text_of(node: Node) -> str:
    """The expression's text, for a report (`lists.NAME` kept by name, long literals cut)."""
    kind, c, value = node.get("type"), node.get("children", []), node.get("value")
    if kind == "literal":
        if "list" in node:
            return f"lists.{node['list']}"
        if isinstance(value, str):
            return "'" + value.replace("'", "\\'") + "'"  # a raw string: only its quote is escaped
        text = json.dumps(value).replace("`", "\\`")
        return f"`{text if len(text) <= 60 else text[:57] + '...'}`"
    if kind == "current":
        return "@"
    if kind == "field":  # a quoted identifier when not a plain name (`session.labels."credential-seen"`)
        return str(value) if _PLAIN_NAME.fullmatch(str(value)) else json.dumps(value)
    if kind == "nonempty":
        return f"length({text_of(c[0])}) > `0`"
    if kind == "subexpression":
        return ".".join(text_of(x) for x in c)
    if kind == "function_expression":
        return f"{value}({', '.join(text_of(x) for x in c)})"
    if kind == "comparator":
        ops = {"eq": "==", "ne": "!=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
        return f"{text_of(c[0])} {ops.get(str(value), value)} {text_of(c[1])}"
    if kind in ("and_expression", "or_expression"):
        return f"({text_of(c[0])} {'&&' if kind == 'and_expression' else '||'} {text_of(c[1])})"
    if kind == "not_expression":  # `!` binds tighter than a comparison: `!(length(x) > 0)`
        inner = text_of(c[0])
        return f"!({inner})" if c[0].get("type") in ("comparator", "nonempty") else f"!{inner}"
    if kind == "filter_projection":
        return f"{_source(c[0])}[?{text_of(c[2])}]" + _then(c[1])
    if kind == "pipe":  # in parentheses: a pipe binds loosest, and `(a | b)[]` is not `a | b[]`
        return f"({text_of(c[0])} | {text_of(c[1])})"
    if kind == "multi_select_list":
        return f"[{', '.join(text_of(x) for x in c)}]"
    return _more_text(str(kind), c, value)


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _then(node: Node) -> str:
    """What a projection applies to each item: nothing for the item itself, `[...]` joined as is, else `.x`."""
    if node.get("type") == "identity":
        return ""
    text = text_of(node)
    return text if text.startswith("[") else f".{text}"


def _source(node: Node) -> str:
    """A projection's source: nothing for the current value (`[?...]`, `[*]`)."""
    return "" if node.get("type") == "identity" else text_of(node)


def _more_text(kind: str, c: list[Node], value: Any) -> str:
    """text_of for projections, indexes and the rarer nodes."""
    if kind == "identity":
        return "@"
    if kind == "projection":
        # `a[]` and `a[1:2]` project by themselves; anything else is projected by `[*]`.
        sliced = c[0].get("type") == "index_expression" and c[0]["children"][1].get("type") == "slice"
        head = text_of(c[0]) if sliced or c[0].get("type") == "flatten" else f"{_source(c[0])}[*]"
        return head + _then(c[1])
    if kind == "value_projection":
        return f"{text_of(c[0])}.*" + _then(c[1])
    if kind == "flatten":
        return f"{_source(c[0])}[]"
    if kind == "index_expression":
        return _source(c[0]) + text_of(c[1])
    if kind == "index":
        return f"[{value}]"
    if kind == "slice":
        return "[" + ":".join("" if v is None else str(v) for v in c).rstrip(":") + "]"
    if kind in ("multi_select_hash", "multi_select_dict"):
        return "{" + ", ".join(text_of(x) for x in c) + "}"
    if kind == "key_val_pair":
        return f"{value}: {text_of(c[0])}"
    if kind == "expref":
        return f"&{text_of(c[0])}"
    return f"<{kind}>"


def _within(x: Node, y: Node) -> Node | None:
    """None when list x nonempty implies list y nonempty (x's items among y's, or a pinned item); else y's gap."""
    if x == y:
        return None
    if x.get("type") == "filter_projection":
        source, projected, predicate = x["children"]
        if source == y:
            return None
        gap = None
        if y.get("type") == "filter_projection" and y["children"][:2] == [source, projected]:
            gap = _gap(predicate, y["children"][2])  # the same list filtered: the predicate implies y's
            if gap is None:
                return None
        if _through(source, projected, predicate, y):
            return None
        if gap is not None:
            return gap
    return _nonempty(y)


def _through(source: Node, projected: Node, predicate: Node, y: Node) -> bool:
    """`S[?@ == v]` nonempty implies y nonempty when y is built from S item by item and y of `[v]` is nonempty.

    y must take S's items one at a time (filters, projections, flattening, pipes of these: y of a list
    holding v holds y of `[v]`), read nothing else of the call, and assert no surely test (a path
    item may remember a spelling such a test reads); each pinned value is tried.
    """
    pins = _pins(predicate)
    if pins is None or pins[0].get("type") != "current" or projected.get("type") != "identity" or _asserts_surely(y):
        return False
    for value in pins[1]:
        closed = _narrowed(y, source, {"type": "literal", "value": [value], "children": []})
        if closed is None or not _closed(closed):
            return False
        try:
            found = search(closed, freeze({}), _OPTIONS)
        except Exception:  # an error at run time fails the rule closed: not decided here
            return False
        if not truthy(found):
            return False
    return True


def _narrowed(node: Node, source: Node, items: Node) -> Node | None:
    """node with source as `items`, or None unless node's list is built from source's items one at a time.

    Built item by item: filters, projections, flattening, pipes of these, `S || []`, and a flattened
    `[S, OTHER][]` (OTHER read as `[]`: it only adds items). So node of a list holding the items holds
    node of `items`.
    """
    if node == source:
        return items
    kind, children = node.get("type"), node.get("children", [])
    if kind in ("filter_projection", "projection") and children:
        inner = _narrowed(children[0], source, items)
        return None if inner is None else {**node, "children": [inner, *children[1:]]}
    if kind == "flatten" and children and children[0].get("type") == "multi_select_list":
        parts = [_narrowed(c, source, items) for c in children[0]["children"]]
        if all(p is None for p in parts):
            return None
        listed = {**children[0], "children": [_EMPTY if p is None else p for p in parts]}
        return {**node, "children": [listed]}
    if kind == "flatten" and children:
        inner = _narrowed(children[0], source, items)
        return None if inner is None else {**node, "children": [inner]}
    if kind == "or_expression" and len(children) == 2 and children[1] == _EMPTY:
        return _narrowed(children[0], source, items)  # `S || []` is S when S holds an item
    if kind == "pipe" and len(children) == 2:
        inner = _narrowed(children[0], source, items)
        if inner is None or _narrowed(children[1], _IDENTITY, _IDENTITY) is None:
            return None
        return {**node, "children": [inner, children[1]]}
    return None


_IDENTITY: Node = {"type": "identity", "children": []}
_EMPTY: Node = {"type": "literal", "value": [], "children": []}


def _closed(node: Node) -> bool:
    """Whether node reads nothing of the call at its own scope (inner scopes read their items)."""
    kind = node.get("type")
    if kind in ("current", "field", "identity"):
        return False
    inner = _INNER_SCOPE.get(str(kind), ())
    return all(_closed(c) for i, c in enumerate(node.get("children", [])) if isinstance(c, dict) and i not in inner)


def _excludes(p: Node, x: Node) -> bool:
    """`path_within(@, A)` rules out `path_surely_within(@, B)` and `contains(L, @)` by the literals.

    A path that may lie within A but surely lies within B has a reading within both, so no tree of
    A may hold or lie within one of B; an item equal to an entry of L lies within A only if that
    entry does (the engine's own `path_within` decides each pair of literals).
    """
    if p.get("value") != "path_within" or x.get("type") != "function_expression":
        return False
    (subject, small) = p["children"]
    bounds = _absolute_literals(small)
    if subject.get("type") != "current" or bounds is None:
        return False
    if x.get("value") == "path_surely_within" and x["children"][0] == subject:
        others = _absolute_literals(x["children"][1])
        return others is not None and not any(
            _literally_within(a, [b]) or _literally_within(b, [a]) for a in bounds for b in others
        )
    if x.get("value") == "contains" and x["children"][1] == subject and x["children"][0].get("type") == "literal":
        entries = x["children"][0]["value"]
        return (
            isinstance(entries, list)
            and not any(isinstance(e, str) and _literally_within(e, bounds) for e in entries)
            and all(isinstance(e, str) for e in entries)
        )
    return False


def _absolute_literals(node: Node) -> list[str] | None:
    """A literal's absolute paths (a string or a list of them), else None."""
    if node.get("type") != "literal":
        return None
    value = node["value"]
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values:
        return None
    if not all(isinstance(v, str) and v.startswith("/") and not any(c in v for c in "*?[") for v in values):
        return None
    return values


def _literally_within(path: str, bounds: list[str]) -> bool:
    """The engine's own path_within on literals (an error counts as within: nothing is shown from it)."""
    return _engine_within(path, bounds) is not False


def _engine_within(path: str, bounds: list[str]) -> bool | None:
    """The engine's `path_within(path, bounds)` on literals; None when it cannot answer."""
    try:
        test = compile_expression("path_within(@, lists.bounds)", {"bounds": bounds}, _refuse)
        found = None if test is None else test.search(path)
    except Exception:  # a literal the engine refuses: no answer, so nothing is shown from it
        return None
    return found if isinstance(found, bool) else None


def _paths_within(p: Node, q: Node) -> bool:
    """path_within(@, A) implies path_within(@, B): the same subject, and every literal of A within B."""
    (subject, small), (other, large) = p["children"], q["children"]
    if subject != other or subject.get("type") != "current":
        return False
    if small.get("type") != "literal" or large.get("type") != "literal":
        return False
    paths, bounds = small["value"], large["value"]
    if isinstance(paths, str):
        paths = [paths]
    if isinstance(bounds, str):
        bounds = [bounds]
    if not isinstance(paths, list) or not isinstance(bounds, list):
        return False
    if not all(isinstance(a, str) and a.startswith("/") for a in paths):
        return False  # a relative or odd literal names no one place: within-ness is not shown for it
    return all(_engine_within(a, bounds) is True for a in paths)


def _refuse(code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
    raise ValueError(f"{code}: {message}")
