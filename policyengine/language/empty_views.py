"""The role view a condition needs non-empty: a rule over paths(@) is false on a call that names no path.

Most red lines read one role view of the call (`paths(@)[?...] | length(@) > \\`0\\``,
`length(urls(@)[?...]) > \\`0\\``), and most calls give that view nothing: 80% of the BFCL calls
name no path, yet each `*` guard over paths(@) ran its whole condition (five closures deep) to
find so. `needed_view` proves at load time, from the condition's syntax tree, that the condition
is false and raises nothing whenever one view is empty; the rule then first asks the call's
(memoised) view and skips the evaluation when it is empty (Expression.tester). A view that
cannot be read does not skip: the condition runs and fails closed as before.
tests/test_empty_views.py pins the proof's cases and compares both ways over every corpus call.
"""

from __future__ import annotations

from typing import Any

# The functions that are a role view of their argument document and nothing else (functions._ROLE_VIEWS).
VIEWS = frozenset(
    {"paths", "paths_outside_cwd", "urls", "commands", "programs", "invocations", "emails", "secrets", "amounts"}
    | {"written", "swept", "cache_folders"}
)


def needed_view(node: Any) -> str | None:
    """A view V such that the expression is falsy, raising nothing, whenever V(@) of its document is empty."""
    if not isinstance(node, dict):
        return None
    kind, children = node.get("type"), node.get("children") or []
    if kind == "comparator" and len(children) == 2:
        left, right = children
        if _is_length(left) and _zero_is_false(node.get("value"), right):
            return _emptied_by(left["children"][0])
        return None
    if kind == "pipe" and len(children) == 2:
        left, right = children
        # `F | length(@) > N`: the right side sees F's result, [] when the view is.
        return _emptied_by(left) if _false_on_nothing(right) else None
    if kind == "or_expression" and len(children) == 2:
        first, second = needed_view(children[0]), needed_view(children[1])
        return first if first is not None and first == second else None
    if kind == "and_expression" and len(children) == 2:
        # Only the left side: the right one runs only after it, so a falsy left raises nothing more.
        return needed_view(children[0])
    return None


def _false_on_nothing(node: Any) -> bool:
    """Whether the expression is falsy, raising nothing, on the empty list (`length(@) > N`, and/or of such)."""
    if not isinstance(node, dict):
        return False
    kind, children = node.get("type"), node.get("children") or []
    if kind == "comparator" and len(children) == 2:
        length, bound = children
        current = _is_length(length) and length["children"][0].get("type") == "current"
        return current and _zero_is_false(node.get("value"), bound)
    if kind == "or_expression" and len(children) == 2:
        return _false_on_nothing(children[0]) and _false_on_nothing(children[1])
    if kind == "and_expression" and len(children) == 2:
        return _false_on_nothing(children[0])
    return False


def _is_length(node: Any) -> bool:
    """`length(X)`: one argument."""
    return (
        isinstance(node, dict)
        and node.get("type") == "function_expression"
        and node.get("value") == "length"
        and len(node.get("children") or []) == 1
    )


def _zero_is_false(operator: Any, bound: Any) -> bool:
    """Whether `0 OPERATOR bound` is false for a literal number bound (`> 0`, `>= 1`, `== 3`...)."""
    if not isinstance(bound, dict) or bound.get("type") != "literal":
        return False
    value = bound.get("value")
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return (operator == "gt" and value >= 0) or (operator == "gte" and value > 0) or (operator == "eq" and value != 0)


def _emptied_by(node: Any) -> str | None:
    """The view V whose emptiness makes this value [] (the view itself, or a filter, projection or flatten of it)."""
    if not isinstance(node, dict):
        return None
    kind, children = node.get("type"), node.get("children") or []
    if kind == "function_expression" and node.get("value") in VIEWS:
        if len(children) == 1 and isinstance(children[0], dict) and children[0].get("type") == "current":
            return str(node["value"])
        return None
    if kind in ("filter_projection", "projection", "flatten") and children:
        return _emptied_by(children[0])
    return None
