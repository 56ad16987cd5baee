"""A tool's simple rules tested together (fused.py) decide exactly as rule-by-rule evaluation.

The property tests draw a hundred cases each; POLICYENGINE_TEST_SCALE=10 draws ten times as many
(tests/support.py, scaled).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine import load_pack
from policyengine.enforce.decider import Decider
from policyengine.packs.loader import Pack
from policyengine.packs.rule_plans import Kind, Predicate, predicate_of
from policyengine.packs.rules import Chain, check_guards, decide_pre
from policyengine.values.decisions import Deny, Source
from policyengine.values.frozen import FrozenDict, freeze
from policyengine.values.results import Stage
from support import rules_pack, scaled

# Conditions a plan fuses, and some it must leave to rule-by-rule evaluation.
FUSIBLE = [
    "path_within(arguments.path, ['/srv/a', '/srv/a/b'])",
    "path_within(arguments.path, 'docs')",
    "path_within(arguments.path, ['../x', '.'])",
    "path_within(arguments.path, ['/', 'c:/windows'])",
    "path_within(arguments.path, ['/SRV/A%2fb'])",
    "path_matches(arguments.path, ['*.pem', 'secrets/*'])",
    "path_matches(arguments.path, ['/srv/**/k', '.env*'])",
    "path_matches(arguments.path, '**')",
    "starts_with(arguments.path, '/srv/')",
    "starts_with(arguments.path, '')",
    "starts_with(arguments.path, 'docs/')",
    "arguments.owner == 'x'",
    "'y' == arguments.owner",
    "name == 'read'",
    "arguments.meta.kind == 'x'",
]
OTHER = [
    "contains(arguments.path, 'a')",
    "arguments.n > `3`",
    "path_within(arguments.path, ['/srv/a']) && arguments.owner == 'x'",
    "arguments.owner == `3`",
    "arguments.owner != 'x'",
    "path_within(arguments.other, arguments.dirs)",
]
PATHS = [
    "/srv/a",
    "/srv/a/b/c.pem",
    "/SRV/A/./B",
    "/srv/%61/k",
    "docs",
    "docs/x",
    "./docs/../docs/y",
    "../x/y",
    "../../x",
    "x/../../x",
    ".",
    "",
    "C:\\Windows\\System32",
    "file:///srv/a",
    "secrets/a.pem",
    "a/.env.local",
    "/srv/q/r/k",
    "%252e%252e/x",
    "/srv/a\u200b",
    "x" * 40_000,  # too long: the path functions refuse it, so the rules fail closed
    "%25" * 40 + "2e",  # encoded too deep: refused too
]
VALUES = st.one_of(
    st.sampled_from(PATHS),
    st.text(alphabet=st.sampled_from(list("ab/.\\:%2e ")), max_size=12),
    st.none(),
    st.integers(0, 5),
    st.lists(st.sampled_from(["/srv/a", "x"]), max_size=2),
)
OWNERS = st.one_of(st.sampled_from(["x", "y", "z"]), st.none(), st.just(3), st.just(True))


def _load(rules: list[dict[str, Any]]) -> Pack:
    with tempfile.TemporaryDirectory() as root:
        return load_pack(rules_pack(Path(root), "fused", rules))


@st.composite
def chains(draw: st.DrawFn, stage: str) -> list[dict[str, Any]]:
    rules = []
    for i in range(draw(st.integers(1, 10))):
        rule: dict[str, Any] = {"id": f"r{i}", "stage": stage, "tools": ["*"]}
        when = draw(st.sampled_from(FUSIBLE) | st.sampled_from(OTHER) | st.none())
        if when is not None:
            rule["when"] = when
        if stage == "guard":
            rule["reason"] = "red line"
        if stage == "pre-execute":
            rule["decision"] = draw(st.sampled_from(["allow", "deny", "ask"]))
            if rule["decision"] == "allow" and draw(st.booleans()):
                rule["final"] = True
        rules.append(rule)
    return rules


PLAIN_PATHS = st.sampled_from(PATHS[:-2]) | st.text(alphabet=st.sampled_from(list("ab/.")), max_size=12)


@st.composite
def documents(draw: st.DrawFn, plain: bool = False) -> FrozenDict:
    """Call documents; `plain` ones always carry a string path and owner, so plans answer for them."""
    arguments: dict[str, Any] = {}
    for key, values in (("path", VALUES), ("owner", OWNERS), ("n", st.integers(0, 5)), ("other", VALUES)):
        if plain and key in ("path", "owner"):
            arguments[key] = draw(PLAIN_PATHS if key == "path" else st.sampled_from(["x", "y", "z"]))
        elif draw(st.booleans()):
            arguments[key] = draw(values)
    if draw(st.booleans()):
        arguments["dirs"] = ["/srv"]
    if draw(st.booleans()):
        arguments["meta"] = {"kind": draw(OWNERS)}
    name = draw(st.sampled_from(["read", "write"]))
    return cast(FrozenDict, freeze({"name": name, "arguments": arguments, "agent": "agent", "call_id": "c1"}))


@settings(max_examples=scaled(100), deadline=None)
@given(chains("pre-execute"), st.lists(documents(), min_size=1, max_size=8))
def test_fused_pre_execute_decides_exactly_as_rule_by_rule(rules: list[dict[str, Any]], docs: list[Any]) -> None:
    chain = _load(rules).rules_for(Stage.PRE_EXECUTE, "read")
    assert isinstance(chain, Chain)
    for document in docs:
        assert decide_pre(chain, document) == decide_pre(tuple(chain), document)


@settings(max_examples=scaled(100), deadline=None)
@given(chains("guard"), st.lists(documents(), min_size=1, max_size=8))
def test_fused_guards_fire_exactly_as_rule_by_rule(rules: list[dict[str, Any]], docs: list[Any]) -> None:
    chain = _load(rules).rules_for(Stage.GUARD, "read")
    for document in docs:
        assert check_guards(chain, document) == check_guards(tuple(chain), document)


@pytest.mark.parametrize("path", PATHS)
def test_every_sample_path_decides_the_same_fused_and_rule_by_rule(path: str) -> None:
    rules = [
        {"id": f"r{i}", "stage": "pre-execute", "tools": ["*"], "when": when, "decision": "deny"}
        for i, when in enumerate(FUSIBLE)
    ]
    chain = _load(rules).rules_for(Stage.PRE_EXECUTE, "read")
    document = freeze({"name": "write", "arguments": {"path": path}, "agent": "a", "call_id": "c"})
    assert decide_pre(chain, document) == decide_pre(tuple(chain), document)


def test_a_non_string_path_still_fails_closed_naming_the_rule() -> None:
    pack = _load(
        [
            {
                "id": "owner",
                "stage": "pre-execute",
                "tools": ["*"],
                "when": "arguments.owner == 'x'",
                "decision": "ask",
            },
            {
                "id": "keys",
                "stage": "pre-execute",
                "tools": ["*"],
                "when": "path_matches(arguments.path, '*.pem')",
                "decision": "deny",
            },
        ]
    )
    decision = Decider([pack]).decide("read", {"path": 7, "owner": "y"})
    assert isinstance(decision, Deny)
    assert decision.source is not None
    assert decision.source.rule_id == "keys"
    assert "could not be evaluated" in decision.reason


def test_first_matching_rule_wins_among_fused_rules() -> None:
    pack = _load(
        [
            {
                "id": "allow-docs",
                "stage": "pre-execute",
                "tools": ["*"],
                "when": "starts_with(arguments.path, 'docs/')",
                "decision": "allow",
            },
            {
                "id": "deny-pem",
                "stage": "pre-execute",
                "tools": ["*"],
                "when": "path_matches(arguments.path, '*.pem')",
                "decision": "deny",
            },
            {
                "id": "ask-x",
                "stage": "pre-execute",
                "tools": ["*"],
                "when": "arguments.owner == 'x'",
                "decision": "ask",
            },
        ]
    )
    decider = Decider([pack])
    assert cast(Source, decider.decide("read", {"path": "docs/a.pem", "owner": "x"}).source).rule_id == "deny-pem"
    assert cast(Source, decider.decide("read", {"path": "src/a.txt", "owner": "x"}).source).rule_id == "ask-x"
    # A non-final allow that matched names the decision when nothing later ends the chain.
    assert cast(Source, decider.decide("read", {"path": "docs/a.txt", "owner": "y"}).source).rule_id == "allow-docs"


def test_names_that_meet_the_same_rules_share_one_chain_and_plan() -> None:
    pack = _load(
        [
            {
                "id": "all",
                "stage": "guard",
                "tools": ["*"],
                "when": "path_within(arguments.path, '/etc')",
                "reason": "r",
            },
            {"id": "one", "stage": "guard", "tools": ["shell"], "when": "arguments.cmd == 'rm'", "reason": "r"},
        ]
    )
    assert pack.rules_for(Stage.GUARD, "a") is pack.rules_for(Stage.GUARD, "b")
    assert pack.rules_for(Stage.GUARD, "shell") is not pack.rules_for(Stage.GUARD, "a")
    assert pack.rules_for(Stage.GUARD, "a").plan is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("path_within(arguments.path, ['/a', '/b'])", Predicate(("arguments", "path"), Kind.WITHIN, ("/a", "/b"))),
        ("path_matches(path, '*.pem')", Predicate(("path",), Kind.GLOBS, ("*.pem",))),
        ("starts_with(arguments.a.b, 'x')", Predicate(("arguments", "a", "b"), Kind.PREFIX, ("x",))),
        ("arguments.owner == 'x'", Predicate(("arguments", "owner"), Kind.EQUALS, ("x",))),
        ("'x' == arguments.owner", Predicate(("arguments", "owner"), Kind.EQUALS, ("x",))),
        ('arguments.owner == `"x"`', Predicate(("arguments", "owner"), Kind.EQUALS, ("x",))),
        ("starts_with(arguments.a, ['x'])", None),  # starts_with takes one string: its own error
        ("path_within(arguments.path, `[]`)", None),
        ("path_within(arguments.path, [`1`])", None),
        ("arguments.owner == `3`", None),
        ("arguments.owner == arguments.user", None),
        ("path_within(arguments.paths[0], '/a')", None),
        ("!path_within(arguments.path, '/a')", None),
        ("contains(arguments.path, 'a')", None),
    ],
)
def test_which_conditions_fuse(text: str, expected: Predicate | None) -> None:
    from policyengine.language.expressions import compile_expression

    problems: list[str] = []
    expression = compile_expression(text, {}, lambda code, message, *_a, **_k: problems.append(message))
    assert expression is not None, problems
    assert predicate_of(expression) == expected


def test_a_chain_whose_literals_cannot_be_indexed_is_evaluated_rule_by_rule() -> None:
    from policyengine.packs.rule_plans import plan_for

    class Fake:
        predicate = Predicate(("arguments", "path"), Kind.GLOBS, ("[z-a]",))  # a reversed range

    assert plan_for([Fake()]) is None


@settings(max_examples=scaled(100), deadline=None)
@given(chains("pre-execute"), chains("guard"), st.lists(documents(plain=True) | documents(), min_size=1, max_size=8))
def test_the_one_layer_shortcut_decides_exactly_as_rule_by_rule(
    pre: list[dict[str, Any]], guard: list[dict[str, Any]], docs: list[Any]
) -> None:
    from policyengine.packs.rules import EXPLAIN

    for rule in guard:
        rule["id"] = "g" + rule["id"]
    decider = Decider([_load(pre + guard)])
    for document in docs:
        fast = decider.decide_document(document["name"], document)
        token = EXPLAIN.set(lambda _rule, _result: None)  # explaining evaluates every rule on its own
        try:
            reference = decider.decide_document(document["name"], document)
        finally:
            EXPLAIN.reset(token)
        assert fast == reference


# -- the per-tool index --------------------------------------------------------------------------

INDEX_RULES = [
    {"id": "exact", "stage": "guard", "tools": ["read", "write"], "reason": "r"},
    {"id": "glob", "stage": "guard", "tools": ["re*"], "reason": "r"},
    {"id": "both", "stage": "guard", "tools": ["write", "*_file"], "reason": "r"},
    {"id": "all", "stage": "guard", "tools": ["*"], "reason": "r"},
    {"id": "class", "stage": "guard", "tools": ["[rw]ead", "x?"], "reason": "r"},
    {"id": "exact-again", "stage": "guard", "tools": ["read"], "reason": "r"},
]


TOOL_NAMES = st.sampled_from(["read", "write", "rm_file", "xy", "x", "weed", "re"]) | st.text(max_size=8)


@settings(max_examples=scaled(100), deadline=None)
@given(st.lists(TOOL_NAMES, max_size=20))
def test_the_tool_index_finds_exactly_the_rules_a_full_scan_finds_in_order(names: list[str]) -> None:
    index = _load(INDEX_RULES).index[Stage.GUARD]
    for name in names:
        assert [r.id for r in index.for_tool(name)] == [r.id for r in index.rules if r.tools.matches(name)]
