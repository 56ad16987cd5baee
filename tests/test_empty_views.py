"""A condition that needs a role view non-empty is false at once on a call whose view is empty.

empty_views.needed_view proves it from the syntax tree at load time (Expression.needs_view), and
the rule's tester then asks the call's memoised view first. The proof's cases are pinned here, and
both ways (shortcut on and off) must give the same answer or the same error on every corpus call
for every shipped pack rule, including calls whose view cannot be read (the rule still fails closed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policyengine import freeze, load_pack
from policyengine.language import empty_views
from policyengine.language.expressions import compile_expression
from policyengine.values.call import call_document
from support import corpus_stride
from test_functions_fast_paths import _calls, _outcome

ROOT = Path(__file__).resolve().parent.parent
PACKS = ("baseline", "bfcl", "claude-code")


def _view(text: str) -> str | None:
    problems: list[str] = []

    def report(code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
        problems.append(f"{code} {message}")

    expression = compile_expression(text, {}, report)
    assert expression is not None, problems
    return expression.needs_view


@pytest.mark.parametrize(
    ("text", "view"),
    [
        ("paths(@)[?path_within(@, '/etc')] | length(@) > `0`", "paths"),
        ("length(paths(@)[?path_within(@, '/etc')]) > `0`", "paths"),
        ("length(urls(@)) >= `1`", "urls"),
        ("length(commands(@)[?contains(@, 'x')]) == `2`", "commands"),
        ("length(secrets(@)[*]) > `0`", "secrets"),
        ("length(amounts(@)[]) > `0.5`", "amounts"),
        ("length(paths(@)[?a]) > `0` || length(paths(@)[?b]) > `0`", "paths"),
        ("length(programs(@)) > `0` && arguments.x == 'y'", "programs"),
        ("paths(@)[?a] | length(@) > `0` && arguments.x", "paths"),
    ],
)
def test_a_condition_false_without_its_view_names_it(text: str, view: str) -> None:
    assert _view(text) == view


@pytest.mark.parametrize(
    "text",
    [
        "length(paths(@)) == `0`",  # true on an empty view
        "length(paths(@)) >= `0`",
        "length(paths(@)) < `1`",
        "!(length(paths(@)) > `0`)",
        "length(paths(arguments)) > `0`",  # another document than the call's
        "length(paths(@)) > `0` || length(urls(@)) > `0`",  # either view may hold it
        "length(paths(@)) > `0` || arguments.force",
        "arguments.x == 'y' && length(paths(@)) > `0`",  # the left side runs first and may raise
        "length(strings(arguments)) > `0`",  # not a role view
        "length(sort(paths(@))) > `0`",
        "paths(@)[?a] | length(@) > `-1`",
        "length(paths(@)) > 'a'",
        "paths(@)",
        "paths(@)[?a] | arguments.x && length(@) > `0`",
        "paths(@)[?a] | length(@) > `0` || length(@) == `0`",
    ],
)
def test_a_condition_that_may_hold_without_its_view_has_no_shortcut(text: str) -> None:
    assert _view(text) is None


def test_every_view_function_is_a_role_view() -> None:
    from policyengine.language import functions

    assert set(functions._ROLE_VIEWS) == empty_views.VIEWS


def _documents() -> list[Any]:
    found = []
    for name, arguments, cwd in _calls():
        place = cwd if isinstance(cwd, str) else None
        found.append(call_document(name or "tool", freeze(arguments), "agent", "call", place))
    # Views that cannot be read: the rule must still fail closed, not be skipped.
    for arguments in ({"path": 5}, {"command": {"x": 1}}, {"file_path": ["a", 3]}):
        found.append(call_document("tool", freeze(arguments), "agent", "call", None))
    return found


@pytest.mark.parametrize("pack", PACKS)
def test_shortcut_answers_as_the_full_condition_on_every_corpus_call(pack: str) -> None:
    rules = [r for r in load_pack(ROOT / "policies" / pack).rules if r.when is not None and r.when.needs_view]
    assert rules, f"no rule of {pack} has a view shortcut: the test would compare nothing"
    testers = [(rule.id, rule.when.tester(), rule.when.tester(shortcut=False)) for rule in rules if rule.when]
    skipped = 0
    for document in corpus_stride(_documents(), 3):  # call by call: the views are memoised per document
        for rule_id, fast, slow in testers:
            a, b = _outcome(fast, document), _outcome(slow, document)
            assert a == b, (rule_id, document, a, b)
            skipped += a == ("value", False)
    assert skipped > 0


def test_a_view_that_cannot_be_read_fails_the_rule_closed() -> None:
    rule = next(r for r in load_pack(ROOT / "policies" / "bfcl").rules if r.id == "fs-no-system-paths")
    assert rule.when is not None and rule.when.needs_view == "paths"
    document = call_document("tool", freeze({"path": 5}), "agent", "call", None)
    outcome = _outcome(rule.applies, document)
    assert outcome[0] == "error", outcome
