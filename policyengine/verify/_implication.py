"""Proof by a red line: a property holds when its condition implies an enforcing guard's, over its tools.

Guards are monotonic: a red line that matches a call denies it, whatever any other rule says, and
one whose condition fails also denies (fail closed). So a `never` property that forbids neither
`deny` nor `invalid` (or an `always` property that allows `deny`) holds for every call when some
enforcing guard (not in monitor mode) of the installed layers covers all of the property's tools
and its condition is implied by the property's. This module decides that implication on the two
conditions' JMESPath trees by rules that are sound on their own (a rule that does not apply means
"not shown", never "shown"):

- the same tree (the packs' `lists.NAME` read as the literal lists they are);
- `a || b` implies `q` when both do; `a && b` when either does; `p` implies `a || b` when it
  implies either, `a && b` when it implies both;
- `length(X) > 0` (or `X | length(@) > 0`) implies `length(Y) > 0` when X's items are among Y's:
  the same expression, or the same source filtered by a predicate that implies Y's filter;
- `path_within(@, A)` implies `path_within(@, B)` when every path of A is absolute and lies within
  one of B (the engine's own `path_within`, on the literals: within is transitive).

Anything else (negation, comparisons, other functions) is not shown, and the property is searched
instead (docs/verify.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jmespath

from policyengine.language.expressions import compile_expression
from policyengine.packs.loader import Pack
from policyengine.packs.rules import Mode, Rule, RuleDecision, ToolMatcher
from policyengine.values.results import Stage

__all__ = ["implied_by_guard", "implies", "normalised", "red_lines"]

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
    if when is None:
        return None
    premise = normalised(when, lists)
    for rule, condition in guards:
        if _covers(rule.tools, tools) and (condition is None or implies(premise, condition)):
            return rule
    return None


def _covers(guard: ToolMatcher, tools: ToolMatcher) -> bool:
    """Whether the guard's tools include every tool the property's name (by their spelling: names, globs, tags)."""
    if "*" in guard.globs:
        return True
    return tools.folded <= guard.folded and set(tools.globs) <= set(guard.globs) and tools.tags <= guard.tags


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
        return {"type": "literal", "value": list(lists[children[1]["value"]]), "children": []}
    if kind == "multi_select_list" and all(c.get("type") == "literal" for c in children):
        return {"type": "literal", "value": [c["value"] for c in children], "children": []}
    if kind == "pipe" and len(children) == 2 and _is_nonempty(children[1], of_current=True):
        return _nonempty(children[0])
    if kind == "comparator" and _is_nonempty(node | {"children": children}, of_current=False):
        return _nonempty(children[0]["children"][0])
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


def implies(p: Node, q: Node) -> bool:
    """Whether p's truth implies q's, shown by the rules of this module (False: not shown)."""
    if p == q:
        return True
    kp, kq = p.get("type"), q.get("type")
    if kp == "or_expression" and all(implies(c, q) for c in p["children"]):
        return True
    if kp == "and_expression" and any(implies(c, q) for c in p["children"]):
        return True
    if kq == "or_expression" and any(implies(p, c) for c in q["children"]):
        return True
    if kq == "and_expression" and all(implies(p, c) for c in q["children"]):
        return True
    if kp == kq == "nonempty":
        return _within(p["children"][0], q["children"][0])
    if kp == kq == "function_expression" and p.get("value") == q.get("value") == "path_within":
        return _paths_within(p, q)
    return False


def _within(x: Node, y: Node) -> bool:
    """Whether every item of list expression x is an item of y."""
    if x == y:
        return True
    if x.get("type") == "filter_projection":
        source, projected, predicate = x["children"]
        if source == y:
            return True
        if y.get("type") == "filter_projection":
            other, other_projected, condition = y["children"]
            return source == other and projected == other_projected and implies(predicate, condition)
    return False


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
    test = compile_expression("path_within(@, lists.bounds)", {"bounds": bounds}, _refuse)
    if test is None:
        return False
    return all(test.search(a) is True for a in paths)


def _refuse(code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
    raise ValueError(f"{code}: {message}")
