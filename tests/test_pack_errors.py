"""Malformed packs are refused whole, with every problem at its exact file:line:column (SPEC.md section 5).

Each mistake below is a small pack written byte for byte, the problem code it must raise and the
1-based `file:line:column` the problem must point at. `at` is the text found at that position, so a
reader can check the numbers by eye (and the test checks them against the file too).

Every load happens on a registry that already runs a good pack: after the refusal the good pack
must still decide, and nothing of the bad pack (not even its valid files) may be installed.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest

from policyengine import Location, PackLoadError, PolicyLayers, Problem, Registry, evaluate

GOOD_PACK = {
    "pack.yaml": "name: previous\nversion: 1.0.0\nfiles: [rules.yaml]\n",
    "rules.yaml": (
        "rules:\n"
        "  - id: previous-deny-probe\n"
        "    stage: pre-execute\n"
        "    tools: [probe]\n"
        "    decision: deny\n"
        "    reason: the previous pack decides\n"
    ),
}

# A valid file added to every bad pack whose manifest the test writes: were any part of the bad
# pack installed, this rule would deny every call and its default would deny the rest.
VALID_EXTRA = (
    "rules:\n"
    "  - id: bad-pack-deny-everything\n"
    "    stage: pre-execute\n"
    "    tools: ['*']\n"
    "    decision: deny\n"
    "    reason: the bad pack was installed\n"
)

RULE = "rules:\n  - id: r1\n"  # most mistakes sit in the first rule, whose id is r1


@dataclass
class Mistake:
    """A bad pack, the problem it must raise, and where."""

    kind: str
    files: dict[str, str]
    code: str
    where: str  # file:line:column, the file relative to the pack folder
    at: str  # the source text that starts at line:column
    rule_id: str | None = None
    codes: list[str] | None = None  # every error code of the load, in order (default: [code])
    message: str = ""  # a substring of the message
    hint: str = ""  # a substring of the hint
    layers: list[dict[str, str]] = field(default_factory=list)  # packs loaded before this one

    @property
    def file(self) -> str:
        return self.where.split(":")[0]

    @property
    def line(self) -> int:
        return int(self.where.split(":")[1])

    @property
    def column(self) -> int:
        return int(self.where.split(":")[2])


def manifest(*files: str, version: str = "1.0.0") -> str:
    return f"name: bad\nversion: {version}\nfiles: [{', '.join(files)}]\n"


MISTAKES = [
    Mistake(
        "yaml-syntax-error",
        {"rules.yaml": RULE + "    stage: pre-execute\n    tools: [fs_write\n    decision: deny\n"},
        "PE101",
        "rules.yaml:5:13",
        ": deny",
        message="expected ',' or ']'",
    ),
    Mistake(
        "tab-indentation",
        {"rules.yaml": RULE + "\tstage: pre-execute\n    tools: [x]\n"},
        "PE101",
        "rules.yaml:3:1",
        "\tstage",
        hint="tabs",
    ),
    Mistake(
        "duplicate-key",
        {"rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n    decision: deny\n    decision: allow\n"},
        "PE102",
        "rules.yaml:6:5",
        "decision: allow",
        rule_id="r1",
        message="line 5, column 5",
    ),
    Mistake(
        "unknown-field-typo",
        {"rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n    decison: deny\n"},
        "PE202",
        "rules.yaml:5:5",
        "decison",
        rule_id="r1",
        codes=["PE203", "PE202"],
        hint="did you mean 'decision'?",
    ),
    Mistake(
        "missing-required-tools",
        {"rules.yaml": RULE + "    stage: pre-execute\n    decision: deny\n"},
        "PE203",
        "rules.yaml:2:5",
        "id: r1",
        rule_id="r1",
        message="tools: required field",
        hint="add `tools:`",
    ),
    Mistake(
        "wrong-type-tools-string",
        {"rules.yaml": RULE + "    stage: pre-execute\n    tools: fs_write\n    decision: deny\n"},
        "PE204",
        "rules.yaml:4:12",
        "fs_write",
        rule_id="r1",
        message="must be of list type",
    ),
    Mistake(
        "unallowed-stage",
        {"rules.yaml": RULE + "    stage: preexecute\n    tools: [x]\n    decision: deny\n"},
        "PE205",
        "rules.yaml:3:12",
        "preexecute",
        rule_id="r1",
        hint="did you mean 'pre-execute'?",
    ),
    Mistake(
        "unallowed-decision",
        {"rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n    decision: maybe\n"},
        "PE205",
        "rules.yaml:5:15",
        "maybe",
        rule_id="r1",
        hint="allowed: allow, deny, ask",
    ),
    Mistake(
        "allow-in-a-guard",
        {"rules.yaml": RULE + "    stage: guard\n    tools: [x]\n    decision: allow\n    reason: r\n"},
        "PE205",
        "rules.yaml:5:15",
        "allow",
        rule_id="r1",
        hint="allowed: deny",
    ),
    Mistake(
        "final-on-a-deny",
        {"rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n    decision: deny\n    final: true\n"},
        "PE201",
        "rules.yaml:6:12",
        "true",
        rule_id="r1",
        message="final",
    ),
    Mistake(
        "bad-jmespath-caret-inside-the-string",
        {
            "rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n"
            "    when: \"length(arguments.paths[?@ == 'x') > `0`\"\n    decision: deny\n"
        },
        "PE301",
        "rules.yaml:5:44",
        ") > `0`",
        rule_id="r1",
        message="invalid JMESPath",
    ),
    Mistake(
        "bad-jmespath-in-a-folded-block",
        {
            "rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n"
            "    when: >-\n      arguments.path == 'a' || || x\n    decision: deny\n"
        },
        "PE301",
        "rules.yaml:6:32",
        "|| x",
        rule_id="r1",
    ),
    Mistake(
        "bad-jmespath-in-single-quotes-with-escapes",
        {
            "rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n"
            "    when: 'arguments.path == ''a'' || || x'\n    decision: deny\n"
        },
        "PE301",
        "rules.yaml:5:39",
        "|| x",
        rule_id="r1",
    ),
    Mistake(
        "unterminated-string-in-jmespath",
        {
            "rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n"
            '    when: "arguments.path == \'a"\n    decision: deny\n'
        },
        "PE301",
        "rules.yaml:5:30",
        "'a",
        rule_id="r1",
    ),
    Mistake(
        "unknown-function",
        {
            "rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n"
            '    when: "arguments.n > `1` && is_strng(arguments.path)"\n    decision: deny\n'
        },
        "PE302",
        "rules.yaml:5:33",
        "is_strng(",
        rule_id="r1",
        message="unknown function is_strng()",
        hint="did you mean is_string()?",
    ),
    Mistake(
        "wrong-argument-count",
        {
            "rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n"
            '    when: "!(path_matches(arguments.path))"\n    decision: deny\n'
        },
        "PE303",
        "rules.yaml:5:14",
        "path_matches(",
        rule_id="r1",
        message="path_matches() takes 2 argument(s), got 1",
    ),
    Mistake(
        "unknown-list-in-an-expression",
        {
            "rules.yaml": "lists:\n  env_files: [.env]\n" + RULE + "    stage: pre-execute\n    tools: [x]\n"
            '    when: "path_matches(arguments.path, lists.env_file)"\n    decision: deny\n'
        },
        "PE304",
        "rules.yaml:7:41",
        "lists.env_file)",
        rule_id="r1",
        message="unknown list 'env_file'",
        hint="did you mean lists.env_files?",
    ),
    Mistake(
        "unknown-list-in-tools",
        {
            "rules.yaml": "lists:\n  write_tools: [fs_write]\n" + RULE + "    stage: pre-execute\n"
            "    tools: [fs_edit, '@write_tool']\n    decision: deny\n"
        },
        "PE304",
        "rules.yaml:6:22",
        "'@write_tool'",
        rule_id="r1",
        message="unknown list 'write_tool' in tools",
        hint="did you mean @write_tools?",
    ),
    Mistake(
        "unknown-list-in-redact-keys",
        {
            "rules.yaml": RULE
            + "    stage: post-execute\n    tools: [x]\n    redact:\n      - keys: [token, '@secrets']\n"
        },
        "PE304",
        "rules.yaml:6:23",
        "'@secrets'",
        rule_id="r1",
        message="unknown list 'secrets' in keys",
    ),
    Mistake(
        "template-unclosed-brace",
        {
            "rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n    decision: deny\n"
            '    reason: "{name} may not write {arguments.path"\n'
        },
        "PE305",
        "rules.yaml:6:35",
        "{arguments.path",
        rule_id="r1",
        message="unclosed `{`",
    ),
    Mistake(
        "template-unmatched-closing-brace",
        {
            "rules.yaml": RULE + "    stage: post-execute\n    tools: [x]\n"
            '    block: "use {{ and }} for braces, not } alone"\n'
        },
        "PE305",
        "rules.yaml:5:43",
        "} alone",
        rule_id="r1",
        message="unmatched `}`",
    ),
    Mistake(
        "bad-jmespath-inside-a-template",
        {"rules.yaml": RULE + '    stage: guard\n    tools: [x]\n    reason: "path {arguments.[path} denied"\n'},
        "PE301",
        "rules.yaml:5:35",
        "} denied",
        rule_id="r1",
    ),
    Mistake(
        "bad-regex-literal",
        {
            "rules.yaml": RULE + "    stage: guard\n    tools: [x]\n"
            "    when: \"regex_match(arguments.cmd, '(curl|wget')\"\n    reason: r\n"
        },
        "PE306",
        "rules.yaml:5:12",
        "regex_match(",
        rule_id="r1",
        message="invalid pattern '(curl|wget'",
    ),
    Mistake(
        "negation-of-a-paths-first-step",
        {
            "rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n"
            "    when: \"arguments.env == 'prod' && !arguments.ticket\"\n    decision: deny\n"
        },
        "PE307",
        "rules.yaml:5:39",
        "!arguments.ticket",
        rule_id="r1",
        message="`!a.b` is `(!a).b`",
        hint="!(a.b)",
    ),
    Mistake(
        "bad-redact-pattern",
        {"rules.yaml": RULE + "    stage: post-execute\n    tools: [x]\n    redact:\n      - pattern: '(?<=x)y'\n"},
        "PE306",
        "rules.yaml:6:18",
        "'(?<=x)y'",
        rule_id="r1",
        message="bad regular expression",
    ),
    Mistake(
        "duplicate-rule-id-within-a-pack",
        {
            "a.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n    decision: deny\n",
            "b.yaml": "rules:\n  - id: other\n    stage: guard\n    tools: [y]\n    reason: r\n"
            "  - id: r1\n    stage: guard\n    tools: [z]\n    reason: r\n",
        },
        "PE401",
        "b.yaml:6:9",
        "r1",
        rule_id="r1",
        message="rule id 'r1' is already used by pack bad at ",
    ),
    Mistake(
        "duplicate-rule-id-across-two-layers",
        {"rules.yaml": "rules:\n  - id: org-rule\n    stage: guard\n    tools: [y]\n    reason: r\n"},
        "PE401",
        "rules.yaml:2:9",
        "org-rule",
        rule_id="org-rule",
        message="already used by pack org at ",
        layers=[
            {
                "pack.yaml": "name: org\nversion: 2.0.0\nfiles: [rules.yaml]\n",
                "rules.yaml": "rules:\n  - id: org-rule\n    stage: pre-execute\n    tools: [x]\n    decision: deny\n",
            }
        ],
    ),
    Mistake(
        "manifest-missing-files",
        {"pack.yaml": "name: bad\nversion: 1.0.0\ndefault: deny\n", "rules.yaml": VALID_EXTRA},
        "PE203",
        "pack.yaml:1:1",
        "name: bad",
        message="files: required field",
    ),
    Mistake(
        "manifest-lists-a-missing-file",
        {"pack.yaml": manifest("rules.yaml", "nothere.yaml"), "rules.yaml": VALID_EXTRA},
        "PE403",
        "pack.yaml:3:21",
        "nothere.yaml",
        message="rule file nothere.yaml not found",
    ),
    Mistake(
        "manifest-bad-version",
        {"pack.yaml": manifest("rules.yaml", version="v1.0"), "rules.yaml": VALID_EXTRA},
        "PE201",
        "pack.yaml:2:10",
        "v1.0",
        message="version: value does not match regex",
    ),
    Mistake(
        "manifest-unallowed-default",
        {"pack.yaml": "name: bad\nversion: 1.0.0\ndefault: block\nfiles: [rules.yaml]\n", "rules.yaml": VALID_EXTRA},
        "PE205",
        "pack.yaml:3:10",
        "block",
        hint="allowed: allow, deny, ask",
    ),
    Mistake(
        "post-execute-rule-without-an-action",
        {"rules.yaml": RULE + "    stage: post-execute\n    tools: [x]\n    when: result.value.secret\n"},
        "PE203",
        "rules.yaml:2:5",
        "id: r1",
        rule_id="r1",
        message="needs one of `redact`, `content`, `block` or `label`",
    ),
    Mistake(
        "execute-rule-without-timeout-or-retries",
        {"rules.yaml": RULE + "    stage: execute\n    tools: ['http_*']\n"},
        "PE203",
        "rules.yaml:2:5",
        "id: r1",
        rule_id="r1",
        message="needs `timeout`, `retries`, or both",
    ),
    Mistake(
        "python-object-tag",
        {
            "rules.yaml": RULE + "    stage: pre-execute\n    tools: [x]\n"
            "    decision: !!python/object/apply:os.system ['echo pwned']\n"
        },
        "PE103",
        "rules.yaml:5:15",
        "!!python/object/apply:os.system",
        message="nothing was constructed",
    ),
    Mistake(
        "python-object-tag-on-a-mapping",
        {"rules.yaml": "rules:\n  - !!python/object:policyengine.Registry\n    id: r1\n    stage: guard\n"},
        "PE103",
        "rules.yaml:2:5",
        "!!python/object:policyengine.Registry",
        message="is not allowed in rule files",
    ),
    Mistake(
        "alias-bomb",
        {
            "rules.yaml": "lists:\n"
            "  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            "  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
            "  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
            "  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
            "  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
            "rules: []\n"
        },
        "PE106",
        "rules.yaml:6:10",
        "*d",
        message="alias bomb",
    ),
]


def write_pack(folder: Path, files: dict[str, str]) -> Path:
    """Write a pack byte for byte; without a pack.yaml, list its files then a valid extra file."""
    folder.mkdir(parents=True)
    files = dict(files)
    if "pack.yaml" not in files:
        files["zz-valid.yaml"] = VALID_EXTRA
        files["pack.yaml"] = manifest(*[name for name in files if name != "pack.yaml"]).replace(
            "version: 1.0.0", "version: 1.0.0\ndefault: deny"
        )
    for name, text in files.items():
        (folder / name).write_text(text, "utf-8")
    return folder


def decide(registry: Registry, name: str) -> tuple[str, str | None]:
    evaluation = asyncio.run(evaluate(registry, name, {}))
    return evaluation.decision.value, evaluation.rule


def assert_previous_pack_still_decides(registry: Registry) -> None:
    assert decide(registry, "probe") == ("deny", "previous-deny-probe")
    for other in ("anything", "x", "y"):  # what the bad pack (or a layer loaded with it) would deny
        assert decide(registry, other) == ("allow", "default of pack previous"), other


def find(error: PackLoadError, mistake: Mistake) -> Problem:
    wanted = [
        p for p in error.errors if p.code == mistake.code and p.location and Path(p.location.file).name == mistake.file
    ]
    assert wanted, f"no {mistake.code} in {mistake.file}:\n{error.render()}"
    return wanted[-1] if mistake.kind.startswith("duplicate-rule-id") else wanted[0]


@pytest.fixture
def registry(tmp_path: Path) -> Registry:
    reg = Registry()
    PolicyLayers.install(reg, [write_pack(tmp_path / "previous", GOOD_PACK)])
    assert_previous_pack_still_decides(reg)
    return reg


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.kind for m in MISTAKES])
def test_a_malformed_pack_is_refused_whole_at_the_exact_location(
    mistake: Mistake, registry: Registry, tmp_path: Path
) -> None:
    folders = [write_pack(tmp_path / f"layer{i}", files) for i, files in enumerate(mistake.layers)]
    folders.append(write_pack(tmp_path / "bad", mistake.files))

    with pytest.raises(PackLoadError) as raised:
        PolicyLayers.install(registry, folders)
    error = raised.value

    assert [p.code for p in error.errors] == (mistake.codes or [mistake.code]), error.render()
    problem = find(error, mistake)
    assert problem.location is not None
    assert Path(problem.location.file) == tmp_path / "bad" / mistake.file
    assert (problem.location.line, problem.location.column) == (mistake.line, mistake.column), error.render()
    # The numbers point at the text the table names: check them against the file itself.
    line_text = (tmp_path / "bad" / mistake.file).read_text("utf-8").splitlines()[mistake.line - 1]
    assert line_text[mistake.column - 1 :].startswith(mistake.at), (line_text, mistake.column)
    if mistake.code != "PE401":  # see test_the_rendered_message_has_a_caret_under_the_column
        assert problem.source_line == line_text
    assert problem.rule_id == mistake.rule_id
    assert mistake.message in problem.message, problem.message
    assert mistake.hint in (problem.hint or ""), problem.hint
    assert error.summary == "nothing was installed"

    # Nothing of the bad pack is installed: the previous pack still decides, alone.
    assert_previous_pack_still_decides(registry)


@pytest.mark.parametrize("mistake", [m for m in MISTAKES if not m.layers], ids=lambda m: m.kind)
def test_a_reload_with_a_malformed_pack_keeps_the_running_pack(mistake: Mistake, tmp_path: Path) -> None:
    registry = Registry()
    layers = PolicyLayers.install(registry, [write_pack(tmp_path / "previous", GOOD_PACK)])
    report = layers.reload([write_pack(tmp_path / "bad", mistake.files)])
    assert not report.swapped
    assert report.error is not None and mistake.code in report.error.codes
    assert [p.name for p in report.packs] == ["previous"]
    assert_previous_pack_still_decides(registry)


def test_at_least_fifteen_distinct_kinds_of_mistakes() -> None:
    assert len({m.kind for m in MISTAKES}) == len(MISTAKES) >= 15
    assert len({m.code for m in MISTAKES}) >= 15


# -- every problem at once ------------------------------------------------------------------------

FIRST_FILE = """\
lists:
  env_files: [.env]
rules:
  - id: typo
    stage: pre-execute
    tools: [x]
    decison: deny
  - id: unknown-function
    stage: pre-execute
    tools: [x]
    when: "is_strng(arguments.path)"
    decision: deny
  - id: bad-template
    stage: guard
    tools: [x]
    reason: "no {arguments.path"
  - id: fine
    stage: guard
    tools: [x]
    reason: r
"""

SECOND_FILE = """\
rules:
  - id: wrong-type
    stage: pre-execute
    tools: fs_write
    decision: deny
  - id: unknown-list
    stage: guard
    tools: ['@nope']
    reason: r
  - id: bad-regex
    stage: guard
    tools: [x]
    when: "regex_match(arguments.c, '(')"
    reason: r
  - id: fine
    stage: guard
    tools: [y]
    reason: duplicate id
  - id: guard-allow
    stage: guard
    tools: [x]
    decision: allow
    reason: r
"""

EXPECTED_ALL = [
    ("first.yaml", 2, 3, "PE404"),  # warning: env_files is never used
    ("first.yaml", 4, 5, "PE203"),  # typo: decision missing...
    ("first.yaml", 7, 5, "PE202"),  # ...because it is spelled decison
    ("first.yaml", 11, 12, "PE302"),
    ("first.yaml", 16, 17, "PE305"),
    ("second.yaml", 4, 12, "PE204"),
    ("second.yaml", 8, 13, "PE304"),
    ("second.yaml", 13, 12, "PE306"),
    ("second.yaml", 15, 9, "PE401"),  # `fine` is already used in first.yaml
    ("second.yaml", 22, 15, "PE205"),
]


def test_every_problem_of_every_file_is_reported_at_once(registry: Registry, tmp_path: Path) -> None:
    folder = write_pack(
        tmp_path / "bad",
        {
            "pack.yaml": "name: bad\nversion: 1.0.0\nfiles: [first.yaml, second.yaml]\n",
            "first.yaml": FIRST_FILE,
            "second.yaml": SECOND_FILE,
        },
    )
    with pytest.raises(PackLoadError) as raised:
        PolicyLayers.install(registry, [folder])
    error = raised.value
    got = [
        (Path(p.location.file).name, p.location.line, p.location.column, p.code) for p in error.problems if p.location
    ]
    assert got == EXPECTED_ALL, error.render()
    assert len(error.errors) == 9 and len(error.warnings) == 1
    # The rendered text ends with the count of problems.
    assert str(error).endswith("10 problems (9 errors, 1 warning); nothing was installed")
    assert_previous_pack_still_decides(registry)


def test_a_duplicate_id_is_reported_even_when_the_first_rule_has_other_problems(tmp_path: Path) -> None:
    # `same` in a.yaml has a misspelt field, `same` in b.yaml is fine: the id is used twice all
    # the same, and an all-at-once report must say so now, not after the typo is fixed.
    folder = write_pack(
        tmp_path / "bad",
        {
            "pack.yaml": "name: bad\nversion: 1.0.0\nfiles: [a.yaml, b.yaml]\n",
            "a.yaml": "rules:\n  - id: same\n    stage: guard\n    tools: [x]\n    reason: r\n    whne: x\n",
            "b.yaml": "rules:\n  - id: same\n    stage: guard\n    tools: [y]\n    reason: r\n",
        },
    )
    with pytest.raises(PackLoadError) as raised:
        PolicyLayers.install(Registry(), [folder])
    got = [
        (
            Path(cast(Location, p.location).file).name,
            cast(Location, p.location).line,
            cast(Location, p.location).column,
            p.code,
        )
        for p in raised.value.problems
    ]
    assert got == [("a.yaml", 6, 5, "PE202"), ("b.yaml", 2, 9, "PE401")], raised.value.render()


# -- rendering: a caret line under the right column ------------------------------------------------

CARET = re.compile(r"^  (?P<gutter> +) \| (?P<pad> *)(?P<carets>\^+)$")


@pytest.mark.parametrize(
    ("kind", "width"),
    [
        ("unknown-function", len("is_strng")),
        ("bad-jmespath-caret-inside-the-string", 1),
        ("template-unclosed-brace", 1),
        ("unknown-list-in-an-expression", len("lists.env_file")),
        ("duplicate-key", len("decision")),
        ("manifest-bad-version", len("v1.0")),
        ("duplicate-rule-id-within-a-pack", len("r1")),
    ],
    ids=lambda value: value if isinstance(value, str) else f"width{value}",
)
def test_the_rendered_message_has_a_caret_under_the_column(kind: str, width: int, tmp_path: Path) -> None:
    mistake = next(m for m in MISTAKES if m.kind == kind)
    with pytest.raises(PackLoadError) as raised:
        PolicyLayers.install(Registry(), [write_pack(tmp_path / "bad", mistake.files)])
    rendered = raised.value.render()
    lines = rendered.splitlines()
    header = f"{tmp_path / 'bad' / mistake.file}:{mistake.line}:{mistake.column}: error {mistake.code}"
    index = next(i for i, line in enumerate(lines) if line.startswith(header))
    source = (tmp_path / "bad" / mistake.file).read_text("utf-8").splitlines()[mistake.line - 1]
    assert lines[index + 1] == f"  {mistake.line} | {source}".rstrip()
    caret = CARET.match(lines[index + 2])
    assert caret, lines[index + 2]
    assert len(caret["gutter"]) == len(str(mistake.line))
    assert len(caret["pad"]) == mistake.column - 1
    assert len(caret["carets"]) == width
    # Under the caret is the text the problem is about.
    assert source[len(caret["pad"]) :].startswith(mistake.at)
