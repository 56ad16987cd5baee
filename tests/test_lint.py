"""The pack linter: each warning at the exact rule, a near miss that stays quiet, and clean shipped packs."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.language.regex_cost import quadratic_risk
from policyengine.packs.lint import PE501, PE502, PE503, PE504, PE505, covers, lint, normalise_when
from policyengine.packs.loader import Pack, load_pack, load_packs
from policyengine.packs.rules import ToolMatcher
from policyengine.values.problems import CODES, Location, Problem, Severity

ROOT = Path(__file__).resolve().parent.parent
BFCL_TOOLS = Path(__file__).resolve().parents[1] / "examples" / "bfcl-tools.jsonl"


def write(root: Path, name: str, files: Mapping[str, str]) -> Path:
    """A pack folder `root/name` with a manifest and the rule files (dedented), in order."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "pack.yaml").write_text(f"name: {name}\nversion: 1.0.0\nfiles: [{', '.join(files)}]\n", encoding="utf-8")
    for file, text in files.items():
        (folder / file).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return folder


def pack(root: Path, text: str, name: str = "p", file: str = "rules.yaml") -> Pack:
    """Load a one-file pack."""
    return load_pack(write(root, name, {file: text}))


def id_at(folder: Path, rule_id: str, file: str = "rules.yaml") -> Location:
    """Where `id: RULE_ID` puts the id value in the file (1-based line and column)."""
    path = folder / file
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip(" -").startswith("id:") and rule_id in line.split("id:", 1)[1].strip(" '\""):
            column = line.index(rule_id) + 1
            if line[column - 2] in "'\"":
                column -= 1  # a quoted scalar starts at its quote
            return Location(str(path), number, column)
    raise AssertionError(f"no rule {rule_id} in {path}")


def codes(problems: Sequence[Problem]) -> list[str]:
    return [p.code for p in problems]


def only(problems: Sequence[Problem], code: str) -> Problem:
    found = [p for p in problems if p.code == code]
    assert len(found) == 1, [str(p) for p in problems]
    return found[0]


# -- registration and shape ----------------------------------------------------------------------


def test_codes_are_registered() -> None:
    for code in (PE501, PE502, PE503, PE504, PE505):
        assert code in CODES


def test_warning_shape_snippet_caret_and_hint(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: deny-shell
            stage: pre-execute
            tools: [shell]
            decision: deny
          - id: ask-shell
            stage: pre-execute
            tools: [shell]
            decision: ask
        """,
    )
    problem = only(lint([p]), PE501)
    assert problem.severity is Severity.WARNING
    assert problem.location == Location(str(p.path / "rules.yaml"), 6, 9)
    assert problem.rule_id == "ask-shell"
    assert problem.source_line == "  - id: ask-shell"
    assert problem.caret_width == len("ask-shell")
    assert problem.hint and "deny-shell" in problem.hint
    rendered = problem.render()
    assert "  6 |   - id: ask-shell" in rendered
    assert "    |         ^^^^^^^^^" in rendered


def test_quoted_id_caret_covers_the_quotes(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: first
            stage: guard
            tools: ["*"]
            reason: "No."
          - id: "second"
            stage: guard
            tools: [shell]
            reason: "No."
        """,
    )
    problem = only(lint([p]), PE501)
    assert problem.location == Location(str(p.path / "rules.yaml"), 6, 9)
    assert problem.caret_width == len('"second"')


# -- PE501 unreachable ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("earlier", "earlier_tools", "later_tools"),
    [
        ("decision: deny", "[shell]", "[shell]"),
        ("decision: ask", "[shell, bash]", "[bash]"),
        ("decision: allow\n    final: true", "['*']", "[shell, 'fs_*']"),
        ("decision: deny", "['fs_*']", "[fs_write, 'fs_*']"),
    ],
)
def test_pe501_after_unconditional_pre_execute(
    tmp_path: Path, earlier: str, earlier_tools: str, later_tools: str
) -> None:
    folder = write(
        tmp_path,
        "p",
        {
            "rules.yaml": f"""
rules:
  - id: first
    stage: pre-execute
    tools: {earlier_tools}
    {earlier}
  - id: later
    stage: pre-execute
    tools: {later_tools}
    when: "agent == 'bot'"
    decision: deny
"""
        },
    )
    problem = only(lint([load_pack(folder)]), PE501)
    assert problem.location == id_at(folder, "later")
    assert "'first'" in problem.message


@pytest.mark.parametrize(
    ("earlier", "earlier_tools", "later_tools"),
    [
        ("decision: deny\n    when: \"agent == 'x'\"", "[shell]", "[shell]"),  # conditional deny
        ("decision: allow", "['*']", "[shell]"),  # a non-final allow does not end the chain
        ("decision: deny", "[shell]", "[shell, bash]"),  # bash still reaches the later rule
        ("decision: deny", "['fs_*']", "['fs_w*']"),  # different globs: not provably covered
    ],
)
def test_pe501_near_misses(tmp_path: Path, earlier: str, earlier_tools: str, later_tools: str) -> None:
    folder = write(
        tmp_path,
        "p",
        {
            "rules.yaml": f"""
rules:
  - id: first
    stage: pre-execute
    tools: {earlier_tools}
    {earlier}
  - id: later
    stage: pre-execute
    tools: {later_tools}
    decision: ask
"""
        },
    )
    assert lint([load_pack(folder)]) == []


def test_pe501_across_files_and_layers(tmp_path: Path) -> None:
    org = write(
        tmp_path,
        "org",
        {
            "a.yaml": """
            rules:
              - id: org-no-shell
                stage: pre-execute
                tools: [shell]
                decision: deny
            """,
        },
    )
    project = write(
        tmp_path,
        "project",
        {
            "b.yaml": """
            rules:
              - id: project-allow-shell
                stage: pre-execute
                tools: [shell]
                decision: allow
                final: true
            """,
        },
    )
    problems = lint(load_packs([org, project]))
    problem = only(problems, PE501)
    assert problem.location == id_at(project, "project-allow-shell", "b.yaml")
    assert "pack 'org'" in problem.message
    # In the other order the final allow comes first, and hides the deny instead.
    reverse = only(lint(load_packs([project, org])), PE501)
    assert reverse.rule_id == "org-no-shell"


def test_pe501_guards(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: never-shell
            stage: guard
            tools: [shell]
            reason: "No shell."
          - id: shell-paths
            stage: guard
            tools: [shell]
            when: "arguments.path == '/etc'"
            reason: "Not in /etc."
        """,
    )
    problem = only(lint([p]), PE501)
    assert problem.location == id_at(p.path, "shell-paths")


def test_pe501_guard_near_miss(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: never-shell-in-etc
            stage: guard
            tools: [shell]
            when: "arguments.path == '/etc'"
            reason: "Not in /etc."
          - id: never-shell
            stage: guard
            tools: [shell]
            reason: "No shell."
        """,
    )
    assert lint([p]) == []


def test_pe501_never_for_execute_rules(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: everything-deadline
            stage: execute
            tools: ["*"]
            timeout: 30
          - id: shell-retries
            stage: execute
            tools: [shell]
            retries: 2
        """,
    )
    assert lint([p]) == []


def test_pe501_post_execute_after_unconditional_block(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: block-login
            stage: post-execute
            tools: [login]
            block: "No."
          - id: redact-login
            stage: post-execute
            tools: [login]
            redact:
              - keys: ["*token*"]
        """,
    )
    problem = only(lint([p]), PE501)
    assert problem.location == id_at(p.path, "redact-login")
    assert "blocks" in problem.message


def test_pe501_post_execute_near_miss(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: block-big
            stage: post-execute
            tools: ["*"]
            when: "length(to_string(result.value)) > `100`"
            block: "Too big."
          - id: redact-login
            stage: post-execute
            tools: [login]
            redact:
              - keys: ["*token*"]
        """,
    )
    assert lint([p]) == []


def test_covers() -> None:
    def m(*tools: str) -> ToolMatcher:
        return ToolMatcher(frozenset(t for t in tools if "*" not in t), tuple(t for t in tools if "*" in t))

    assert covers(m("*"), m("a", "b*"))
    assert covers(m("**"), m("x"))
    assert covers(m("a*"), m("ab", "a*"))
    assert not covers(m("a*"), m("b"))
    assert not covers(m("a*"), m("ab*"))
    assert not covers(m("*"), m())  # a rule for no tool is not reported as hidden


# -- PE502 / PE505 catalog -----------------------------------------------------------------------

CATALOG_PACK = """
rules:
  - id: gate-orders
    stage: pre-execute
    tools: [place_order]
    decision: ask
"""


def test_pe502_rule_matches_no_catalog_tool(tmp_path: Path) -> None:
    p = pack(tmp_path, CATALOG_PACK)
    problem = only(lint([p], {"ls": None, "cat": None}), PE502)
    assert problem.location == id_at(p.path, "gate-orders")
    assert "place_order" in problem.message


def test_pe502_near_misses(tmp_path: Path) -> None:
    p = pack(tmp_path, CATALOG_PACK)
    assert lint([p], {"place_order": {"description": "buy"}}) == []
    assert lint([p]) == []  # no catalog, no catalog check


def test_pe502_globs_count(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: fs-deadline
            stage: execute
            tools: ["fs_*"]
            timeout: 5
        """,
    )
    assert lint([p], {"fs_read": None}) == []
    assert codes(lint([p], {"read": None})) == [PE502]


def test_pe505_typo_suggests_the_closest_tool(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: gate-orders
            stage: pre-execute
            tools: [plce_order]
            decision: ask
        """,
    )
    problems = lint([p], {"place_order": None, "cancel_order": None, "ls": None})
    assert codes(problems) == [PE505]  # no PE502 on top of it: the typo says more
    assert problems[0].location == id_at(p.path, "gate-orders")
    assert problems[0].hint is not None and "'place_order'" in problems[0].hint


def test_pe505_typo_inside_a_list_that_matches_other_tools(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        lists:
          trading: [place_order, cancel_ordr, http_get]
        rules:
          - id: trading-deadline
            stage: execute
            tools: ["@trading"]
            timeout: 5
        """,
    )
    problems = lint([p], {"place_order": None, "cancel_order": None, "http_post": None})
    assert codes(problems) == [PE505]  # http_get is simply another environment's tool, not a typo
    assert "'cancel_ordr'" in problems[0].message


def test_pe505_near_miss_unrelated_unknown_name(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: gate-orders
            stage: pre-execute
            tools: [place_order, make_transaction]
            decision: ask
        """,
    )
    assert lint([p], {"place_order": None, "get_transaction_history": None}) == []


# -- PE503 content replacement as confidentiality ------------------------------------------------


@pytest.mark.parametrize(
    ("rule_id", "description"),
    [
        ("hide-secrets", "Summarise the result."),
        ("summarise-login", "Masks the password of the account."),
        ("mask_api_key", ""),
        ("login-view", "Shows a short apiKey summary."),
        ("login-view", "Keeps PII out of the transcript."),
        ("login-view", "Confidentiality of the user's tokens."),
    ],
)
def test_pe503_content_only_for_secrets(tmp_path: Path, rule_id: str, description: str) -> None:
    p = pack(
        tmp_path,
        f"""
        rules:
          - id: {rule_id}
            description: "{description}"
            stage: post-execute
            tools: [login]
            content: "Logged in as {{result.value.user}}."
        """,
    )
    problem = only(lint([p]), PE503)
    assert problem.location == id_at(p.path, rule_id)
    assert problem.hint is not None and "redact:" in problem.hint and "block:" in problem.hint


@pytest.mark.parametrize(
    "action",
    ['redact: [{keys: ["*secret*"]}]', 'block: "No secrets here."'],
)
def test_pe503_near_miss_redact_or_block(tmp_path: Path, action: str) -> None:
    p = pack(
        tmp_path,
        f"""
        rules:
          - id: redact-secrets
            description: Secrets and tokens never leave.
            stage: post-execute
            tools: [login]
            {action}
        """,
    )
    assert lint([p]) == []


def test_pe503_near_miss_content_without_confidentiality_words(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: summarise-listing
            description: A short listing for the model (the monkey test).
            stage: post-execute
            tools: [ls]
            content: "{length(result.value.files)} files"
        """,
    )
    assert lint([p]) == []


# -- PE504 duplicate conditions ------------------------------------------------------------------


def test_pe504_same_tools_condition_and_decision(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: deny-big
            stage: pre-execute
            tools: [place_order, cancel_order]
            when: "arguments.amount > `10`"
            decision: deny
          - id: deny-big-again
            stage: pre-execute
            tools: [cancel_order, place_order]
            when: "arguments.amount   >`10`"
            decision: deny
        """,
    )
    problem = only(lint([p]), PE504)
    assert problem.location == id_at(p.path, "deny-big-again")
    assert "'deny-big'" in problem.message


@pytest.mark.parametrize(
    ("second_when", "second_decision", "second_tools", "found"),
    [
        ("arguments.amount > `20`", "deny", "[place_order]", []),  # different condition
        # Different decision: not a twin, but the deny decides first, so the ask is dead (PE507).
        ("arguments.amount > `10`", "ask", "[place_order]", ["PE507"]),
        ("arguments.amount > `10`", "deny", "[place_order, cancel_order]", []),  # different tools
    ],
)
def test_pe504_near_misses(
    tmp_path: Path, second_when: str, second_decision: str, second_tools: str, found: list[str]
) -> None:
    folder = write(
        tmp_path,
        "p",
        {
            "rules.yaml": f"""
rules:
  - id: first
    stage: pre-execute
    tools: [place_order]
    when: "arguments.amount > `10`"
    decision: deny
  - id: second
    stage: pre-execute
    tools: {second_tools}
    when: "{second_when}"
    decision: {second_decision}
"""
        },
    )
    assert codes(lint([load_pack(folder)])) == found


def test_pe504_whitespace_inside_string_literals_counts(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: first
            stage: guard
            tools: [shell]
            when: "arguments.command == 'rm  -rf'"
            reason: "No."
          - id: second
            stage: guard
            tools: [shell]
            when: "arguments.command == 'rm -rf'"
            reason: "No."
          - id: third
            stage: guard
            tools: [shell]
            when: "arguments.command=='rm -rf'"
            reason: "No."
        """,
    )
    problem = only(lint([p]), PE504)
    assert problem.rule_id == "third"
    assert "'second'" in problem.message


def test_pe504_across_layers(tmp_path: Path) -> None:
    rule = """
    rules:
      - id: {id}
        stage: execute
        tools: [http_get]
        when: "agent == 'crawler'"
        timeout: 5
    """
    org = write(tmp_path, "org", {"a.yaml": rule.format(id="org-deadline")})
    project = write(tmp_path, "project", {"b.yaml": rule.format(id="project-deadline")})
    problem = only(lint(load_packs([org, project])), PE504)
    assert problem.location == id_at(project, "project-deadline", "b.yaml")
    assert problem.hint is not None and "retries" in problem.hint


def test_pe504_different_redactions_compose(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: redact-keys
            stage: post-execute
            tools: ["*"]
            redact:
              - keys: ["*token*"]
          - id: redact-strings
            stage: post-execute
            tools: ["*"]
            redact:
              - pattern: "sk-[a-z0-9]{20,}"
          - id: redact-keys-again
            stage: post-execute
            tools: ["*"]
            redact:
              - keys: ["*token*"]
        """,
    )
    problem = only(lint([p]), PE504)
    assert problem.rule_id == "redact-keys-again"


def test_pe504_not_on_top_of_pe501(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        rules:
          - id: deny-shell
            stage: pre-execute
            tools: [shell]
            decision: deny
          - id: deny-shell-again
            stage: pre-execute
            tools: [shell]
            decision: deny
        """,
    )
    assert codes(lint([p])) == [PE501]


def test_normalise_when() -> None:
    assert normalise_when("a  ==\n 'x  y'") == "a=='x  y'"
    assert normalise_when('f(`[1, 2]`, "a b")') == 'f(`[1, 2]`,"a b")'
    assert normalise_when("a == 'it\\'s  x' && b") == "a=='it\\'s  x'&&b"


# -- loader warnings and ordering ----------------------------------------------------------------


def test_unused_lists_come_through(tmp_path: Path) -> None:
    p = pack(
        tmp_path,
        """
        lists:
          spare: [a, b]
        rules:
          - id: ask-shell
            stage: pre-execute
            tools: [shell]
            decision: ask
        """,
    )
    problem = only(lint([p]), "PE404")
    assert problem.location == Location(str(p.path / "rules.yaml"), 2, 3)


def test_ordered_by_file_line_column(tmp_path: Path) -> None:
    folder = write(
        tmp_path,
        "p",
        {
            "b.yaml": """
            rules:
              - id: deny-shell
                stage: pre-execute
                tools: [shell]
                decision: deny
              - id: hide-secret
                stage: post-execute
                tools: [login]
                content: "hidden"
            """,
            "a.yaml": """
            lists:
              unused: [x]
            rules:
              - id: ask-shell
                stage: pre-execute
                tools: [shell]
                decision: ask
            """,
        },
    )
    problems = lint([load_pack(folder)])
    assert [(Path(p.location.file).name, p.code) for p in problems if p.location] == [
        ("a.yaml", "PE404"),
        ("a.yaml", PE501),
        ("b.yaml", PE503),
    ]
    assert [p.sort_key() for p in problems] == sorted(p.sort_key() for p in problems)
    assert all(p.severity is Severity.WARNING for p in problems)


# -- the shipped packs ---------------------------------------------------------------------------


def bfcl_catalog() -> dict[str, Any]:
    names = (json.loads(line)["name"] for line in BFCL_TOOLS.read_text(encoding="utf-8").splitlines() if line.strip())
    return dict.fromkeys(names)


def test_shipped_baseline_is_clean() -> None:
    assert [str(p) for p in lint([load_pack(ROOT / "policies" / "baseline")])] == []


def test_shipped_bfcl_is_clean_against_its_catalog() -> None:
    catalog = bfcl_catalog()
    assert [str(p) for p in lint([load_pack(ROOT / "policies" / "bfcl")], catalog)] == []


def test_shipped_packs_layered_are_clean() -> None:
    packs = load_packs([ROOT / "policies" / "baseline", ROOT / "policies" / "bfcl"])
    assert [str(p) for p in lint(packs)] == []


# -- PE506: may/surely path tests read the permissive way ---------------------------------------------


@pytest.mark.parametrize(
    ("decision_and_when", "flagged"),
    [
        # A "may" test whose truth restricts errs toward denial: quiet.
        ("stage: guard\n    when: \"paths(@)[?path_within(@, '/etc')] | length(@) > `0`\"", False),
        (
            "stage: pre-execute\n    decision: deny\n"
            "    when: \"paths(@)[?!path_surely_within(@, '/w')] | length(@) > `0`\"",
            False,
        ),
        (
            "stage: pre-execute\n    decision: allow\n"
            "    when: \"paths(@)[?path_surely_matches(@, '*.md')] | length(@) > `0`\"",
            False,
        ),
        # Negated, in an allow rule, or under == it would let an unknown place through.
        ("stage: guard\n    when: \"paths(@)[?!path_within(@, '/w')] | length(@) > `0`\"", True),
        (
            "stage: pre-execute\n    decision: allow\n    when: \"paths(@)[?path_within(@, '/w')] | length(@) > `0`\"",
            True,
        ),
        ("stage: guard\n    when: \"length(paths(@)[?path_matches(@, '.env')]) == `0`\"", True),
        ("stage: guard\n    when: \"paths(@)[?path_surely_within(@, '/etc')] | length(@) > `0`\"", True),
        ("stage: guard\n    when: \"`0` < length(paths(@)[?path_within(@, '/etc')])\"", False),
    ],
)
def test_pe506_flags_a_path_test_that_reads_an_unknown_place_the_permissive_way(
    tmp_path: Path, decision_and_when: str, flagged: bool
) -> None:
    loaded = pack(tmp_path, f"rules:\n  - id: r\n    tools: ['*']\n    reason: x\n    {decision_and_when}\n")
    codes = [p.code for p in lint([loaded])]
    assert ("PE506" in codes) is flagged, codes


# -- PE510: patterns whose every-match rewrite may take quadratic time ---------------------------------

REGEX_COST_CASES: list[dict[str, Any]] = yaml.safe_load((ROOT / "tests" / "data" / "regex_cost.yaml").read_text())


@pytest.mark.parametrize("case", REGEX_COST_CASES, ids=[c["pattern"] for c in REGEX_COST_CASES])
def test_a_pattern_that_reads_ahead_before_a_short_match_is_judged_quadratic(case: dict[str, Any]) -> None:
    assert (quadratic_risk(case["pattern"]) is not None) is case["quadratic"], quadratic_risk(case["pattern"])


def test_the_regex_cost_cases_hold_both_kinds() -> None:
    kinds = [case["quadratic"] for case in REGEX_COST_CASES]
    assert kinds.count(True) >= 5 and kinds.count(False) >= 5


@pytest.mark.parametrize(
    ("rule", "flagged"),
    [
        ("stage: post-execute\n    redact:\n      - pattern: 'a+b|a'", True),
        ("stage: post-execute\n    redact:\n      - pattern: 'a{1,100}b|a'", False),
        ("stage: guard\n    reason: x\n    when: \"regex_replace(arguments.text, 'b(?:b+c)?', '') == ''\"", True),
        ("stage: guard\n    reason: x\n    when: \"regex_replace(arguments.text, '(?:x+y)?z', '') == ''\"", False),
        ("stage: guard\n    reason: x\n    when: \"regex_match(arguments.text, 'a+b|a')\"", False),  # one search
    ],
    ids=["redact", "redact-bounded", "regex_replace", "regex_replace-linear", "regex_match"],
)
def test_pe510_warns_at_the_rule_that_rewrites_with_a_quadratic_pattern(
    tmp_path: Path, rule: str, flagged: bool
) -> None:
    loaded = pack(tmp_path, f"rules:\n  - id: r\n    description: d\n    tools: ['*']\n    {rule}\n")
    problems = [p for p in lint([loaded]) if p.code == "PE510"]
    assert bool(problems) is flagged, [str(p) for p in lint([loaded])]
    if flagged:
        [problem] = problems
        assert problem.rule_id == "r" and problem.severity is Severity.WARNING
        assert problem.location == id_at(loaded.path, "r") and "quadratic" in problem.message


# fmt: off
_REGEX_TOKENS = [
    "a", "b", "x", ".", r"\d", r"\w", r"\S", "[ab]", "[^a]", "(", ")", "(?:", "(?>", "(?=", "(?<=a)",
    "|", "*", "+", "?", "{2,}", "{1,3}", "*?", "++", "^", "$", "(?i)", r"\b", r"\pL", "(?P<n>", r"\1",
]
# fmt: on


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(_REGEX_TOKENS), max_size=14).map("".join)))
def test_judging_a_pattern_never_raises(pattern: str) -> None:
    verdict = quadratic_risk(pattern)
    assert verdict is None or "unbounded repetition" in verdict
