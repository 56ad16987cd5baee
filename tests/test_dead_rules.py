"""Dead rules (PE507 pre-execute, PE508 guards) and YAML files the manifest does not load (PE509)."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from policyengine.cli.main import main
from policyengine.packs.lint import PE504, PE507, PE508, PE509, covers, lint
from policyengine.packs.loader import load_pack, load_packs
from policyengine.packs.rules import ToolMatcher
from policyengine.values.problems import CODES, Location, Problem, Severity

ROOT = Path(__file__).resolve().parents[1]


def write(root: Path, name: str, files: Mapping[str, str], **manifest: str) -> Path:
    """A pack folder `root/name` with a manifest listing `files` (dedented), in order, plus extra manifest lines."""
    folder = root / name
    folder.mkdir(parents=True)
    extra = "".join(f"{key}: {value}\n" for key, value in manifest.items())
    (folder / "pack.yaml").write_text(
        f"name: {name}\nversion: 1.0.0\nfiles: [{', '.join(files)}]\n{extra}", encoding="utf-8"
    )
    for file, text in files.items():
        (folder / file).parent.mkdir(parents=True, exist_ok=True)
        (folder / file).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return folder


def id_at(folder: Path, rule_id: str, file: str = "rules.yaml") -> Location:
    """Where `id: RULE_ID` puts the id value in the file."""
    path = folder / file
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip(" -").startswith("id:") and line.split("id:", 1)[1].strip() == rule_id:
            return Location(str(path), number, line.index(rule_id) + 1)
    raise AssertionError(f"no rule {rule_id} in {path}")


def two_rules(first: str, second: str) -> str:
    """A rule file with two rules, each given as its YAML body (indented by 4)."""
    first, second = textwrap.indent(first, "    "), textwrap.indent(second, "    ")
    return f"rules:\n  - id: first\n{first}\n  - id: second\n{second}\n"


def found(problems: Sequence[Problem], *codes: str) -> list[Problem]:
    return [p for p in problems if p.code in codes]


def test_codes_are_registered() -> None:
    for code in (PE507, PE508, PE509):
        assert code in CODES


# -- PE507: pre-execute ---------------------------------------------------------------------------

DENY_BIG = "stage: pre-execute\ntools: ['*']\nwhen: \"arguments.amount > `10`\"\ndecision: deny"


@pytest.mark.parametrize(
    ("first", "second", "verb"),
    [
        # An ask after a deny of the same calls never asks; spacing and parentheses do not count.
        (DENY_BIG, 'stage: pre-execute\ntools: [pay]\nwhen: "(arguments.amount>`10`)"\ndecision: ask', "denies"),
        # A deny after an ask never denies: the ask ends the chain.
        (
            'stage: pre-execute\ntools: [pay, refund]\nwhen: "arguments.amount > `10`"\ndecision: ask',
            'stage: pre-execute\ntools: [pay]\nwhen: "arguments.amount > `10`"\ndecision: deny',
            "asks",
        ),
        # A final allow skips everything after it.
        (
            "stage: pre-execute\ntools: ['pay*']\nwhen: \"agent == 'bot'\"\ndecision: allow\nfinal: true",
            "stage: pre-execute\ntools: ['pay*']\nwhen: \"agent=='bot'\"\ndecision: deny",
            "final: true",
        ),
        # 'x' and `"x"` are the same literal.
        (
            "stage: pre-execute\ntools: [pay]\nwhen: \"agent == 'bot'\"\ndecision: deny",
            'stage: pre-execute\ntools: [pay]\nwhen: "agent == `\\"bot\\"`"\ndecision: ask',
            "denies",
        ),
    ],
)
def test_pe507_a_rule_behind_the_same_condition_that_ends_the_chain(
    tmp_path: Path, first: str, second: str, verb: str
) -> None:
    folder = write(tmp_path, "p", {"rules.yaml": two_rules(first, second)})
    problems = lint([load_pack(folder)])
    (problem,) = problems
    assert problem.code == PE507 and problem.severity is Severity.WARNING
    assert problem.location == id_at(folder, "second")
    assert problem.rule_id == "second"
    assert f"rule 'first' ({id_at(folder, 'first')})" in problem.message
    assert "same condition" in problem.message and verb in problem.message
    assert problem.hint is not None and "delete this rule" in problem.hint and "move it above 'first'" in problem.hint
    assert problem.source_line == "  - id: second"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # A non-final allow does not end the chain: the deny after it still decides.
        (
            'stage: pre-execute\ntools: [pay]\nwhen: "arguments.amount > `10`"\ndecision: allow',
            'stage: pre-execute\ntools: [pay]\nwhen: "arguments.amount > `10`"\ndecision: deny',
        ),
        # The earlier rule covers fewer tools: refund still reaches the later one.
        (
            'stage: pre-execute\ntools: [pay]\nwhen: "arguments.amount > `10`"\ndecision: deny',
            'stage: pre-execute\ntools: [pay, refund]\nwhen: "arguments.amount > `10`"\ndecision: ask',
        ),
        # Another condition.
        (DENY_BIG, 'stage: pre-execute\ntools: [pay]\nwhen: "arguments.amount > `20`"\ndecision: ask'),
        # Whitespace inside a string literal counts.
        (
            "stage: pre-execute\ntools: [pay]\nwhen: \"agent == 'a b'\"\ndecision: deny",
            "stage: pre-execute\ntools: [pay]\nwhen: \"agent == 'a  b'\"\ndecision: ask",
        ),
        # A tag is not covered by names.
        (
            "stage: pre-execute\ntools: [pay]\nwhen: \"agent == 'bot'\"\ndecision: deny",
            "stage: pre-execute\ntools: [pay, 'tag:payments']\nwhen: \"agent == 'bot'\"\ndecision: ask",
        ),
        # Post-execute: a rewrite between them may change the value both conditions read.
        (
            'stage: post-execute\ntools: [pay]\nwhen: "contains(to_string(result.value), \'x\')"\nblock: "no"',
            'stage: post-execute\ntools: [pay]\nwhen: "contains(to_string(result.value), \'x\')"\ncontent: "x"',
        ),
    ],
)
def test_pe507_near_misses(tmp_path: Path, first: str, second: str) -> None:
    folder = write(tmp_path, "p", {"rules.yaml": two_rules(first, second)})
    assert found(lint([load_pack(folder)]), PE507, PE508) == []


def test_an_exact_twin_is_pe504_not_pe507(tmp_path: Path) -> None:
    folder = write(tmp_path, "p", {"rules.yaml": two_rules(DENY_BIG, DENY_BIG.replace("> `10`", ">`10`"))})
    assert [p.code for p in lint([load_pack(folder)])] == [PE504]


def test_one_warning_per_dead_rule_naming_the_first_rule_that_decides(tmp_path: Path) -> None:
    text = two_rules(DENY_BIG, DENY_BIG.replace("deny", "ask")) + (
        "  - id: third\n    stage: pre-execute\n    tools: ['*']\n    when: \"arguments.amount > `10`\"\n"
        "    decision: allow\n    final: true\n"
    )
    folder = write(tmp_path, "p", {"rules.yaml": text})
    problems = lint([load_pack(folder)])
    assert [(p.code, p.rule_id) for p in problems] == [(PE507, "second"), (PE507, "third")]
    assert all("rule 'first'" in p.message for p in problems)


LAYER_RULE = (
    "lists:\n  big: [10]\nrules:\n  - id: {id}\n    stage: pre-execute\n    tools: {tools}\n"
    '    when: "arguments.amount > lists.big[0]"\n    decision: {decision}\n'
)


def test_pe507_across_layers_names_the_earlier_pack(tmp_path: Path) -> None:
    org = write(tmp_path, "org", {"rules.yaml": LAYER_RULE.format(id="org-deny", tools="['*']", decision="deny")})
    project = write(
        tmp_path, "project", {"rules.yaml": LAYER_RULE.format(id="project-ask", tools="[pay]", decision="ask")}
    )
    (problem,) = lint(load_packs([org, project]))
    assert problem.code == PE507 and problem.rule_id == "project-ask"
    assert "of pack 'org' (an earlier layer)" in problem.message
    assert problem.hint is not None and "narrow the condition or tools of 'org-deny' in pack 'org'" in problem.hint


def test_the_same_list_name_with_other_values_is_another_condition(tmp_path: Path) -> None:
    rule = (
        "  - id: {id}\n    stage: pre-execute\n    tools: [pay]\n"
        '    when: "contains(lists.big, agent)"\n    decision: {d}\n'
    )
    org = write(tmp_path, "org", {"rules.yaml": "lists:\n  big: [a]\nrules:\n" + rule.format(id="org-deny", d="deny")})
    project = write(
        tmp_path, "project", {"rules.yaml": "lists:\n  big: [b]\nrules:\n" + rule.format(id="project-ask", d="ask")}
    )
    assert lint(load_packs([org, project])) == []


# -- PE508: guards --------------------------------------------------------------------------------


def test_pe508_a_guard_behind_the_same_red_line(tmp_path: Path) -> None:
    first = "stage: guard\ntools: ['fs_*']\nwhen: \"starts_with(arguments.path, '/etc')\"\nreason: \"No /etc.\""
    second = 'stage: guard\ntools: [fs_read]\nwhen: "starts_with(arguments.path,\'/etc\')"\nreason: "Not /etc!"'
    folder = write(tmp_path, "p", {"rules.yaml": two_rules(first, second)})
    (problem,) = lint([load_pack(folder)])
    assert problem.code == PE508 and problem.location == id_at(folder, "second")
    assert "guard 'second' can never fire" in problem.message and "rule 'first'" in problem.message
    assert problem.hint is not None and "delete this guard" in problem.hint
    # For the same tools the guard is written twice: PE504 says so instead.
    twin = write(tmp_path, "twin", {"rules.yaml": two_rules(first, second.replace("[fs_read]", "['fs_*']"))})
    assert [p.code for p in lint([load_pack(twin)])] == [PE504]


def test_pe508_near_miss_another_condition(tmp_path: Path) -> None:
    first = "stage: guard\ntools: ['*']\nwhen: \"starts_with(arguments.path, '/etc')\"\nreason: \"No.\""
    second = 'stage: guard\ntools: [fs_read]\nwhen: "starts_with(arguments.path, \'/usr\')"\nreason: "No."'
    folder = write(tmp_path, "p", {"rules.yaml": two_rules(first, second)})
    assert lint([load_pack(folder)]) == []


def test_covers_tags() -> None:
    assert covers(ToolMatcher(frozenset(), ("*",)), ToolMatcher(frozenset(), (), frozenset({"destructive"})))
    assert covers(
        ToolMatcher(frozenset(), (), frozenset({"destructive", "writes"})),
        ToolMatcher(frozenset(), (), frozenset({"destructive"})),
    )
    assert not covers(ToolMatcher(frozenset({"rm"}), ()), ToolMatcher(frozenset({"rm"}), (), frozenset({"writes"})))


# -- PE509: YAML files nothing loads ---------------------------------------------------------------

RULE = "rules:\n  - id: {id}\n    stage: pre-execute\n    tools: [pay]\n    decision: ask\n"


def test_pe509_an_unlisted_rule_file_is_named_at_its_first_line(tmp_path: Path) -> None:
    folder = write(tmp_path, "p", {"rules.yaml": RULE.format(id="listed")})
    (folder / "more-rules.yaml").write_text(RULE.format(id="forgotten"), "utf-8")
    (problem,) = lint([load_pack(folder)])
    assert problem.code == PE509 and problem.severity is Severity.WARNING
    assert problem.location == Location(str(folder / "more-rules.yaml"), 1, 1)
    assert problem.source_line == "rules:"
    assert "more-rules.yaml" in problem.message and "silently not loaded" in problem.message
    assert problem.hint is not None and "`files:`" in problem.hint and str(folder / "pack.yaml") in problem.hint


def test_pe509_an_unmatched_test_file_says_its_tests_never_run(tmp_path: Path) -> None:
    folder = write(tmp_path, "p", {"rules.yaml": RULE.format(id="r")}, tests="[tests/*.yaml]")
    (folder / "tests").mkdir()
    (folder / "tests" / "ok.yaml").write_text("tests: []\n", "utf-8")
    (folder / "tests" / "gate.yml").write_text("tests: []\n", "utf-8")  # `.yml`: the glob says `.yaml`
    (folder / "gate-tests.yml").write_text("tests:\n  - name: x\n", "utf-8")
    problems = lint([load_pack(folder)])
    assert [p.location for p in problems] == [
        Location(str(folder / "gate-tests.yml"), 1, 1),
        Location(str(folder / "tests" / "gate.yml"), 1, 1),
    ]
    for problem in problems:
        assert problem.code == PE509 and "never run" in problem.message
        assert problem.hint is not None and "`tests:`" in problem.hint


def test_pe509_knows_what_the_manifest_loads_and_where_to_look(tmp_path: Path) -> None:
    folder = write(
        tmp_path,
        "p",
        {"rules/gate.yaml": RULE.format(id="gate")},
        tests="[tests/*.yaml]",
        catalog="tools.yaml",
    )
    (folder / "tools.yaml").write_text("[]\n", "utf-8")  # the catalog: listed
    (folder / "tests").mkdir()
    (folder / "tests" / "gate.yaml").write_text("tests: []\n", "utf-8")  # matched by `tests:`
    (folder / "tests" / "fixtures").mkdir()
    (folder / "tests" / "fixtures" / "data.yaml").write_text("x: 1\n", "utf-8")  # below the glob's folder
    (folder / ".pre-commit-config.yaml").write_text("repos: []\n", "utf-8")  # a dotfile: tool settings
    (folder / "docs").mkdir()
    (folder / "docs" / "example.yaml").write_text(RULE.format(id="doc"), "utf-8")  # no `files:` entry points here
    (folder / "notes.txt").write_text("not YAML\n", "utf-8")
    (folder / "rules" / "extra.YAML").write_text(RULE.format(id="extra"), "utf-8")  # `files:` points here
    problems = lint([load_pack(folder)])
    assert [(p.code, p.location) for p in problems] == [(PE509, Location(str(folder / "rules" / "extra.YAML"), 1, 1))]


def test_pe509_fails_check_strict_and_shipped_packs_stay_clean(tmp_path: Path) -> None:
    folder = write(tmp_path, "p", {"rules.yaml": RULE.format(id="listed")})
    (folder / "old.yaml").write_text(RULE.format(id="old"), "utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(folder)], out=out, err=err) == 0
    assert "warning PE509" in out.getvalue()
    assert main(["check", str(folder), "--strict"], out=io.StringIO(), err=io.StringIO()) == 1
    for pack in ("baseline", "bfcl"):
        out = io.StringIO()
        code = main(["check", "--strict", str(ROOT / "policies" / pack)], out=out, err=io.StringIO())
        assert code == 0, out.getvalue()
