"""Safe, bounded YAML loading: every problem kind at its exact line:column, and positions inside scalars."""

from __future__ import annotations

import json
import os
import pickle
import time
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import policyengine.packs.yaml_source as yamlsrc
from policyengine.packs.yaml_source import SourceDoc, load_yaml, load_yaml_file, rule_id_at
from policyengine.values.problems import Location, PackLoadError, Problem, ProblemSink, Severity

PARSERS = ["libyaml", "pure"] if getattr(yaml, "__with_libyaml__", False) else ["pure"]


@pytest.fixture(params=PARSERS, autouse=True)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run every test with libyaml's parser (when built) and with PyYAML's pure-Python one."""
    monkeypatch.setattr(yamlsrc, "_USE_LIBYAML", request.param == "libyaml")
    return str(request.param)


def load(text: str | bytes, **kwargs: object) -> tuple[SourceDoc | None, list[Problem]]:
    sink = ProblemSink()
    doc = load_yaml(text, "p.yaml", sink, **kwargs)  # type: ignore[arg-type]
    return doc, list(sink.problems)


def where(problem: Problem) -> str:
    """`line:column code` of a problem, the compact form the tests compare."""
    assert problem.location is not None
    return f"{problem.location.line}:{problem.location.column} {problem.code}"


def only(text: str | bytes, **kwargs: object) -> Problem:
    doc, problems = load(text, **kwargs)
    assert doc is None
    assert len(problems) == 1, [p.render() for p in problems]
    return problems[0]


# -- data ----------------------------------------------------------------------------------------

RULES = """\
name: base
rules:
  - id: deny-env
    tools: [fs_read, "fs_*"]
    when: "contains(arguments.path, '.env')"
    action:
      decision: deny
      reason: 'It''s a secret: {arguments.path}'
  - id: 42
    final: true
"""


def test_loads_plain_data_with_marks() -> None:
    doc, problems = load(RULES)
    assert problems == [] and doc is not None
    assert doc.data == {
        "name": "base",
        "rules": [
            {
                "id": "deny-env",
                "tools": ["fs_read", "fs_*"],
                "when": "contains(arguments.path, '.env')",
                "action": {"decision": "deny", "reason": "It's a secret: {arguments.path}"},
            },
            {"id": 42, "final": True},
        ],
    }
    assert type(doc.data) is dict and type(doc.data["rules"]) is list
    assert doc.filename == "p.yaml"
    assert doc.lines[2] == "  - id: deny-env"
    assert doc.marks[()] == Location("p.yaml", 1, 1)
    assert doc.marks[("rules",)] == Location("p.yaml", 3, 3)
    assert doc.marks[("rules", 0)] == Location("p.yaml", 3, 5)
    assert doc.marks[("rules", 0, "id")] == Location("p.yaml", 3, 9)
    assert doc.marks[("rules", 0, "tools", 1)] == Location("p.yaml", 4, 22)
    assert doc.marks[("rules", 0, "action", "reason")] == Location("p.yaml", 8, 15)
    assert doc.key_marks[("rules", 0, "action", "reason")] == Location("p.yaml", 8, 7)
    assert doc.key_marks[("rules", 1, "final")] == Location("p.yaml", 10, 5)


def test_yaml_1_2_core_schema_keeps_data_json_like() -> None:
    doc, problems = load(
        "a: yes\nb: no\nc: on\nd: 2024-01-01\ne: 0o17\nf: 0x1F\ng: 1e3\nh: ~\ni: 012\nj: True\n"
        "k: -.inf\nl: '1'\nm: !!str 12\nn: !!float 3\no: ! 7\np: !!bool false\nq: !!null null\nr:\n"
    )
    assert problems == [] and doc is not None
    assert doc.data == {
        "a": "yes",
        "b": "no",
        "c": "on",
        "d": "2024-01-01",
        "e": 15,
        "f": 31,
        "g": 1000.0,
        "h": None,
        "i": 12,
        "j": True,
        "k": float("-inf"),
        "l": "1",
        "m": "12",
        "n": 3.0,
        "o": "7",
        "p": False,
        "q": None,
        "r": None,
    }


def test_aliases_expand_to_independent_copies() -> None:
    doc, problems = load("base: &b {x: [1, 2]}\none: *b\ntwo: *b\n")
    assert problems == [] and doc is not None
    assert doc.data["one"] == doc.data["two"] == {"x": [1, 2]}
    assert doc.data["one"] is not doc.data["two"]
    assert doc.data["one"]["x"] is not doc.data["base"]["x"]
    # The value written as an alias is located at the alias; what it contains, at the anchor.
    assert doc.marks[("one",)] == Location("p.yaml", 2, 6)
    assert doc.marks[("one", "x")] == Location("p.yaml", 1, 14)


def test_bytes_with_utf8_bom_and_crlf() -> None:
    doc, problems = load("\ufeffa: 1\r\nb: 'é'\r\n".encode())
    assert problems == [] and doc is not None
    assert doc.data == {"a": 1, "b": "é"}
    assert doc.lines == ["a: 1", "b: 'é'"]
    assert doc.marks[("b",)] == Location("p.yaml", 2, 4)


def test_empty_file_is_allowed_when_no_mapping_is_expected() -> None:
    doc, problems = load("# only a comment\n", expect_mapping=False)
    assert problems == [] and doc is not None and doc.data is None
    assert doc.locate(("anything",)) == Location("p.yaml", 1, 1)
    doc, problems = load("- 1\n- 2\n", expect_mapping=False)
    assert doc is not None and doc.data == [1, 2]


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(10**12), 10**12)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"]), max_size=12),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.text(st.characters(codec="utf-8", categories=["L", "N"]), max_size=6), inner, max_size=4
            )
        ),
        max_leaves=20,
    )
)
def test_json_documents_load_to_the_same_data(value: object) -> None:
    doc, problems = load(json.dumps({"v": value}, ensure_ascii=False))
    assert problems == [] and doc is not None
    assert doc.data == {"v": value}


# -- PE101 syntax --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "in_message", "in_hint"),
    [
        ("a: b: c\n", "1:5 PE101", "mapping values are not allowed", "quote the value"),
        ("a:\n\t- x\n", "2:1 PE101", "'\\t'", "tabs"),
        ("a: 1\nb: 'abc\n", "2:4 PE101", "quoted scalar", "never closed"),
        ("k: [1, 2\n", "1:4 PE101", "flow sequence", "close the list"),
        ("a:\n  - x\n - y\n", "3:2 PE101", "block end", "indented"),
        ('a: "C:\\dir"\n', "1:8 PE101", "unknown escape", "single quotes"),
    ],
)
def test_syntax_errors_at_the_problem_mark(text: str, expected: str, in_message: str, in_hint: str) -> None:
    problem = only(text)
    assert where(problem) == expected
    assert problem.message.startswith("YAML syntax error: ")
    assert in_message in problem.message
    assert problem.hint is not None and in_hint in problem.hint
    assert problem.source_line == text.splitlines()[problem.location.line - 1]  # type: ignore[union-attr]


def test_undefined_alias_and_duplicate_anchor_are_reported_together() -> None:
    doc, problems = load("a: &x 1\nb: &x 2\nc: *nope\n")
    assert doc is None
    assert [where(p) for p in problems] == ["2:4 PE101", "3:4 PE101"]
    assert "&x is defined again (first at line 1, column 4)" in problems[0].message
    assert "*nope refers to no anchor" in problems[1].message


# -- PE102 duplicate keys ------------------------------------------------------------------------


def test_duplicate_key_at_the_second_key_with_a_hint() -> None:
    text = (
        "rules:\n"
        "  - id: allow-read\n"
        "    action: {decision: deny}\n"
        "    stage: pre-execute\n"
        "    action: {decision: allow}\n"
    )
    doc, problems = load(text)
    assert doc is None
    assert [where(p) for p in problems] == ["5:5 PE102"]
    problem = problems[0]
    assert problem.message == "duplicate key 'action'; it is already defined at line 3, column 5"
    assert problem.rule_id == "allow-read"
    assert problem.caret_width == len("action")
    assert problem.hint is not None and "hide a rule" in problem.hint
    assert problem.source_line == "    action: {decision: allow}"


def test_duplicate_keys_everywhere_are_all_reported() -> None:
    doc, problems = load("a: 1\nb: {x: 1, x: 2}\na: 3\n'b': 4\n")
    assert doc is None
    assert [where(p) for p in problems] == ["2:11 PE102", "3:1 PE102", "4:1 PE102"]


def test_duplicate_key_inside_an_aliased_mapping_is_reported_once() -> None:
    doc, problems = load("base: &b {k: 1, k: 2}\none: *b\ntwo: *b\n")
    assert doc is None
    assert [where(p) for p in problems] == ["1:17 PE102"]


# -- PE103 tags ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tagged",
    [
        "!!python/object/apply:os.system ['echo hi']",
        "!!python/object/apply:os.system\n  args: ['echo hi']",
        "!!python/name:os.system",
        "!!python/module:os",
        "!!python/object/new:os.system [echo hi]",
    ],
)
def test_python_tags_are_refused_without_running_anything(tagged: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(os, "system", lambda *args: cast(Any, calls.append(args)) or 0)
    problem = only(f"ok: 1\nrun: {tagged}\n")
    assert where(problem) == "2:6 PE103"
    assert problem.message.startswith(f"tag {tagged.split()[0]} is not allowed")
    assert "nothing was constructed" in problem.message
    assert problem.caret_width == len(tagged.split()[0])
    assert calls == []


@pytest.mark.parametrize(
    ("text", "expected", "hint"),
    [
        ("d: !!timestamp 2024-01-01\n", "1:4 PE103", "quote the value"),
        ("b: !!binary aGk=\n", "1:4 PE103", "base64"),
        ("s: !!set {a, b}\n", "1:4 PE103", "plain list"),
        ("o: !!omap [a: 1]\n", "1:4 PE103", "plain mapping"),
        ("c: !custom x\n", "1:4 PE103", "remove the tag"),
        ("c: &anchor !local x\n", "1:12 PE103", "remove the tag"),
        ("l: !!map [1]\n", "1:4 PE103", "remove the tag"),
        ("base: &b {x: 1}\nuse:\n  <<: *b\n", "3:3 PE103", "merge keys"),
    ],
)
def test_non_core_tags_are_refused(text: str, expected: str, hint: str) -> None:
    problem = only(text)
    assert where(problem) == expected
    assert problem.hint is not None and hint in problem.hint


def test_forbidden_tag_is_reported_even_when_a_syntax_error_follows() -> None:
    doc, problems = load("a: !!python/name:os.system\nb: 'unclosed\n")
    assert doc is None
    assert [where(p) for p in problems] == ["1:4 PE103", "2:4 PE101"]


def test_every_problem_of_a_file_is_reported_at_once() -> None:
    text = "a: !!binary aGk=\nb: {k: 1, k: 2}\n3: x\nc: !!int nope\n"
    doc, problems = load(text)
    assert doc is None
    assert sorted(where(p) for p in problems) == ["1:4 PE103", "2:11 PE102", "3:1 PE111", "4:4 PE112"]


# -- PE104 / PE105 / PE106 limits ----------------------------------------------------------------


def test_too_large_before_parsing() -> None:
    problem = only("a: 1\n" + "#" * 2000 + "\n[[[unparsed", max_bytes=1000)
    assert where(problem) == "1:1 PE104"
    assert "the limit is 1,000 bytes" in problem.message
    assert only(b"x" * 1001, max_bytes=1000).code == "PE104"
    # Multi-byte characters count as bytes, not characters.
    assert only("a: " + "é" * 600, max_bytes=1000).code == "PE104"


def test_too_many_values_is_too_large() -> None:
    problem = only("a: [" + ", ".join(["1"] * 60) + "]\n", max_nodes=50)
    assert where(problem) == "1:" + str(5 + 3 * 47) + " PE104"


def test_deep_flow_nesting() -> None:
    ok_doc, problems = load("a: " + "[" * 63 + "]" * 63)
    assert problems == [] and ok_doc is not None
    problem = only("a: " + "[" * 100_000)
    # The root mapping is level 1, so the 64th '[' (column 3 + 64) is level 65.
    assert where(problem) == "1:67 PE105"
    assert "deeper than 64 levels" in problem.message


def test_deep_block_nesting() -> None:
    text = "".join("  " * level + f"k{level}:\n" for level in range(70))
    problem = only(text)
    assert where(problem) == "65:129 PE105"
    assert where(only("a: [[[1]]]\n", max_depth=3)) == "1:6 PE105"


def test_nesting_through_aliases() -> None:
    problem = only("x: &x [[[1]]]\ny: [[*x]]\n", max_depth=5)
    assert where(problem) == "2:6 PE105"
    assert "*x nests values deeper than 5 levels" in problem.message


def test_max_depth_must_be_reasonable() -> None:
    with pytest.raises(ValueError):
        load_yaml("a: 1", "p.yaml", ProblemSink(), max_depth=10_000)


def billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_stopped_quickly() -> None:
    started = time.process_time()
    problem = only(billion_laughs())
    elapsed = time.process_time() - started
    assert elapsed < 1.0
    # f's list (9 x e's 66,430 values) is the first that expands past 100,000 values.
    assert where(problem) == "6:8 PE106"
    assert "alias bomb" in problem.message


def test_billion_laughs_as_nested_mappings() -> None:
    text = "l0: &l0 {a: lol, b: lol, c: lol, d: lol}\n" + "".join(
        f"l{i}: &l{i} {{a: *l{i - 1}, b: *l{i - 1}, c: *l{i - 1}, d: *l{i - 1}}}\n" for i in range(1, 12)
    )
    started = time.process_time()
    problem = only(text)
    assert time.process_time() - started < 1.0
    assert problem.code == "PE106"


def test_too_many_aliases() -> None:
    text = "a: &a [1]\nb: [" + ", ".join(["*a"] * 150) + "]\n"
    problem = only(text)
    # The 101st alias: "b: [" then "*a, " per alias.
    assert where(problem) == f"2:{5 + 4 * 100} PE106"
    assert "more than 100 aliases" in problem.message
    assert only("a: &a 1\nb: [*a, *a, *a]\n", max_aliases=2).code == "PE106"


def test_recursive_alias_is_refused() -> None:
    problem = only("a: &x\n  - 1\n  - *x\n")
    assert where(problem) == "3:5 PE106"
    assert "infinite" in problem.message


# -- PE107 top level -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "in_message"),
    [
        ("- a\n- b\n", "1:1 PE107", "is a list"),
        ("\n\n  just text\n", "3:3 PE107", "single value"),
        ("", "1:1 PE107", "empty"),
        ("# nothing\n", "1:1 PE107", "empty"),
        ("---\n", "1:1 PE107", "empty"),
    ],
)
def test_top_level_must_be_a_mapping(text: str, expected: str, in_message: str) -> None:
    problem = only(text)
    assert where(problem) == expected
    assert in_message in problem.message


# -- PE108 files ---------------------------------------------------------------------------------


def test_load_yaml_file_reads_and_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    sink = ProblemSink()
    doc = load_yaml_file(path, sink, filename="pack/rules.yaml")
    assert doc is not None and doc.data == {"a": 1}
    assert doc.marks[("a",)] == Location("pack/rules.yaml", 1, 4)


def test_missing_or_unreadable_files(tmp_path: Path) -> None:
    sink = ProblemSink()
    assert load_yaml_file(tmp_path / "missing.yaml", sink) is None
    assert load_yaml_file(tmp_path, sink) is None
    assert [p.code for p in sink.problems] == ["PE108", "PE108"]
    first = sink.problems[0]
    assert first.location == Location(str(tmp_path / "missing.yaml"), 1, 1)
    assert first.message == "file not found"
    assert "directory" in sink.problems[1].message


def test_large_file_is_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a: 1\n" * 1000)
    sink = ProblemSink()
    assert load_yaml_file(path, sink, max_bytes=100) is None
    assert [p.code for p in sink.problems] == ["PE104"]
    assert "5,000 bytes" in sink.problems[0].message


# -- PE109 encoding ------------------------------------------------------------------------------


def test_invalid_utf8_bytes_are_each_located() -> None:
    doc, problems = load(b"a: caf\xe9\nb: ok\nc: x\xff\xfey\n")
    assert doc is None
    assert [where(p) for p in problems] == ["1:7 PE109", "3:5 PE109", "3:6 PE109"]
    assert problems[0].message == "byte 0xE9 is not valid UTF-8"
    assert problems[0].source_line == "a: caf\ufffd"


def test_column_counts_characters_before_a_bad_byte() -> None:
    problem = only("é中: ".encode() + b"\xff\n")
    assert where(problem) == "1:5 PE109"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a: 1\r\nb: x\xff\r\n", "2:5"),  # CRLF is one break
        (b"a: 1\rb: 2\rc: \xff\r", "3:4"),  # old Mac CR alone breaks a line for YAML
        ("a: 1\u2028b: 2\u0085c: ".encode() + b"\xff\n", "3:4"),  # LS and NEL break lines too
        (b"a: 1\n\r\nb: \xff", "3:4"),
    ],
)
def test_a_bad_byte_is_located_on_the_line_yaml_numbers(data: bytes, expected: str) -> None:
    problem = only(data)
    assert where(problem) == f"{expected} PE109"
    assert problem.source_line is not None and problem.source_line.endswith("\ufffd")


@pytest.mark.parametrize("bom", ["utf-16", "utf-32"])
def test_utf16_and_utf32_are_refused(bom: str) -> None:
    problem = only("a: 1\n".encode(bom))
    assert where(problem) == "1:1 PE109"
    assert bom.upper() in problem.message


def test_control_characters_are_each_located() -> None:
    doc, problems = load("a: x\x01\nb: \x00\n")
    assert doc is None
    assert [where(p) for p in problems] == ["1:5 PE109", "2:4 PE109"]
    assert "U+0001" in problems[0].message
    assert problems[1].hint is not None and "UTF-16" in problems[1].hint


def test_lone_surrogates_in_text_are_refused() -> None:
    assert where(only("a: \udce9\n")) == "1:4 PE109"


def test_many_bad_characters_are_capped() -> None:
    doc, problems = load("a: " + "\x01" * 50 + "\n")
    assert doc is None
    assert len(problems) == 11
    assert "more characters" in problems[-1].message


# -- PE110 / PE111 / PE112 -----------------------------------------------------------------------


def test_second_document_is_refused() -> None:
    problem = only("a: 1\n---\nb: 2\n")
    assert where(problem) == "2:1 PE110"
    assert problem.caret_width == 3
    doc, problems = load("---\na: 1\n...\n")
    assert problems == [] and doc is not None and doc.data == {"a": 1}


@pytest.mark.parametrize(
    ("text", "expected", "in_message"),
    [
        ("a: 1\n1: x\n", "2:1 PE111", "read as an integer"),
        ("true: x\n", "1:1 PE111", "read as a boolean"),
        ("null: x\n", "1:1 PE111", "read as null"),
        ("? \n: x\n", "1:2 PE111", "empty"),
        ("? [a, b]\n: x\n", "1:3 PE111", "list is used as a mapping key"),
        ("{a: 1}: x\n", "1:1 PE111", "mapping is used"),
    ],
)
def test_keys_must_be_strings(text: str, expected: str, in_message: str) -> None:
    problem = only(text)
    assert where(problem) == expected
    assert in_message in problem.message


def test_quoted_number_key_is_a_string() -> None:
    doc, problems = load("'1': x\n\"true\": y\n")
    assert problems == [] and doc is not None and doc.data == {"1": "x", "true": "y"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: !!int x\n", "1:4 PE112"),
        ("a: !!int true\n", "1:4 PE112"),
        ("a: !!float yes\n", "1:4 PE112"),
        ("a: !!bool 1\n", "1:4 PE112"),
        ("a: !!null 0\n", "1:4 PE112"),
        ("a: " + "9" * 5000 + "\n", "1:4 PE112"),
    ],
)
def test_values_that_do_not_fit_their_tag(text: str, expected: str) -> None:
    assert where(only(text)) == expected


# -- locate / position / problem -----------------------------------------------------------------

LOCATED = """\
rules:
  - id: deny-env
    when: "contains(arguments.path, '.env') && foo(("
    plain: contains(a, 'b') ) x
    single: 'it''s here'
    esc: "a\\tb\\u00e9c"
    multi: "first line
      second   line

      third"
    joined: "one \\
      two"
    lit: |
      line one
        indented two
      line three
    fold: >-
      folded one
      folded two

      para two
    anch: &q "quoted (x"
    ali: *q
    tagged: !!str   'x(y'
    nested:
      deeper:
        - {k: v}
    pmulti: alpha beta
      gamma delta
"""


@pytest.fixture
def located() -> SourceDoc:
    doc, problems = load(LOCATED)
    assert problems == [] and doc is not None
    return doc


def test_locate_nested_paths_and_keys(located: SourceDoc) -> None:
    r = ("rules", 0)
    assert located.locate((*r, "nested", "deeper", 0, "k")) == Location("p.yaml", 27, 15)
    assert located.locate((*r, "nested", "deeper", 0, "k"), key=True) == Location("p.yaml", 27, 12)
    assert located.locate((*r, "nested", "deeper", 0)) == Location("p.yaml", 27, 11)
    assert located.locate((*r, "nested", "deeper")) == Location("p.yaml", 27, 9)
    # A key that is not there: the longest existing prefix, i.e. the parent mapping.
    assert located.locate((*r, "tools")) == Location("p.yaml", 2, 5)
    assert located.locate((*r, "nested", "missing", 3)) == Location("p.yaml", 26, 7)
    assert located.locate(("nope", 1, 2)) == Location("p.yaml", 1, 1)
    # key=True falls back to the value when there is no key (a list index).
    assert located.locate(("rules", 0), key=True) == Location("p.yaml", 2, 5)


@pytest.mark.parametrize(
    ("key", "needle", "expected"),
    [
        ("when", "((", (3, 51)),
        ("when", "contains", (3, 12)),
        ("plain", ")", (4, 27)),
        ("single", "s here", (5, 18)),
        ("esc", "b", (6, 14)),
        ("esc", "c", (6, 21)),
        ("multi", "second", (8, 7)),
        ("multi", "third", (10, 7)),
        ("joined", "two", (12, 7)),
        ("lit", "line one", (14, 7)),
        ("lit", "indented", (15, 9)),
        ("lit", "three", (16, 12)),
        ("fold", "two", (19, 14)),
        ("fold", "para", (21, 7)),
        ("anch", "(x", (22, 22)),
        ("ali", "(x", (22, 22)),
        ("tagged", "(", (24, 23)),
        ("pmulti", "beta", (28, 19)),
        ("pmulti", "gamma", (29, 7)),
        ("pmulti", "delta", (29, 13)),
    ],
)
def test_position_inside_scalars(located: SourceDoc, key: str, needle: str, expected: tuple[int, int]) -> None:
    value = located.data["rules"][0][key]
    offset = value.index(needle)
    loc = located.position(("rules", 0, key), offset)
    assert (loc.line, loc.column) == expected
    line = located.lines[loc.line - 1]
    assert line[loc.column - 1 :].startswith(needle.split()[0][:1])


@settings(max_examples=100, deadline=None)
@given(
    st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"]), min_size=1, max_size=30),
    st.sampled_from(["double", "single"]),
)
def test_position_finds_every_character_of_a_quoted_scalar(value: str, style: str) -> None:
    def written(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)[1:-1] if style == "double" else text.replace("'", "''")

    quote = '"' if style == "double" else "'"
    doc, problems = load(f"key: {quote}{written(value)}{quote}\n")
    assert problems == [] and doc is not None and doc.data == {"key": value}
    for offset, ch in enumerate(value):
        loc = doc.position(("key",), offset)
        assert loc.line == 1
        assert doc.lines[0][loc.column - 1 :].startswith(written(ch))


def test_position_past_the_end_and_in_folded_breaks(located: SourceDoc) -> None:
    when = located.data["rules"][0]["when"]
    end = located.position(("rules", 0, "when"), len(when))
    assert (end.line, end.column) == (3, 53)  # the closing quote
    assert located.position(("rules", 0, "when"), 10_000) == end
    # The space that folding made from a line break points at the end of the first line.
    multi = located.data["rules"][0]["multi"]
    fold = located.position(("rules", 0, "multi"), multi.index(" second"))
    assert (fold.line, fold.column) == (7, 23)


def test_position_on_a_non_scalar_counts_from_its_start(located: SourceDoc) -> None:
    assert located.position(("rules", 0, "nested", "deeper"), 2) == Location("p.yaml", 27, 11)


def test_problem_points_inside_a_quoted_scalar(located: SourceDoc) -> None:
    when = located.data["rules"][0]["when"]
    problem = located.problem(
        "PE301",
        "JMESPath syntax error: unexpected token",
        ("rules", 0, "when"),
        column_offset=when.index("(("),
        width=2,
        hint="close the parenthesis",
    )
    assert problem.location == Location("p.yaml", 3, 51)
    assert problem.rule_id == "deny-env"
    assert problem.source_line == located.lines[2]
    _header, text, carets = problem.render().splitlines()[:3]
    assert text[carets.index("^") : carets.index("^") + 2] == "(("
    assert carets.count("^") == 2


def test_problem_defaults_underline_the_whole_value_or_key(located: SourceDoc) -> None:
    problem = located.problem("PE204", "wrong type", ("rules", 0, "single"))
    assert problem.location == Location("p.yaml", 5, 13)
    assert problem.caret_width == len("'it''s here'")
    unknown = located.problem("PE202", "unknown field 'plain'", ("rules", 0, "plain"), key=True)
    assert unknown.location == Location("p.yaml", 4, 5)
    assert unknown.caret_width == len("plain")
    missing = located.problem("PE203", "required field 'tools' is missing", ("rules", 0, "tools"))
    assert missing.location == Location("p.yaml", 2, 5)
    assert missing.caret_width == 1
    warning = located.problem("PE404", "unused", ("rules",), severity=Severity.WARNING, rule_id="explicit")
    assert warning.severity is Severity.WARNING and warning.rule_id == "explicit"


def test_rule_id_at() -> None:
    doc, _ = load(RULES)
    assert doc is not None
    assert rule_id_at(doc, ("rules", 0, "action", "reason")) == "deny-env"
    assert doc.rule_id_at(("rules", 1, "final")) == "42"
    assert rule_id_at(doc, ("rules",)) is None
    assert rule_id_at(doc, ("rules", 5)) is None
    assert rule_id_at(doc, ("name",)) is None
    assert rule_id_at(doc, ("rules", True)) is None


def test_problem_render_caret_under_the_reported_column() -> None:
    doc, problems = load("rules:\n  - id: x\n    id: y\n")
    assert doc is None
    rendered = problems[0].render().splitlines()
    message = "duplicate key 'id'; it is already defined at line 2, column 5"
    assert rendered[0] == f"p.yaml:3:5: error PE102 [rule x]: {message}"
    assert rendered[1] == "  3 |     id: y"
    assert rendered[2] == "    |     ^^"


# -- the sink and PackLoadError across files -----------------------------------------------------


def test_pack_load_error_lists_all_problems_of_all_files() -> None:
    sink = ProblemSink()
    assert load_yaml("b: {k: 1, k: 2}\n", "pack/b.yaml", sink) is None
    assert load_yaml("x: !!python/name:os.system\n", "pack/a.yaml", sink) is None
    good = load_yaml("rules: []\n", "pack/c.yaml", sink)
    assert good is not None
    assert good.problem("PE404", "list 'x' is never used", ("rules",), severity=Severity.WARNING)
    sink.add(good.problem("PE404", "list 'x' is never used", ("rules",), severity=Severity.WARNING))
    with pytest.raises(PackLoadError) as info:
        sink.raise_if_errors()
    err = info.value
    assert [str(p.location) for p in err.problems] == ["pack/a.yaml:1:4", "pack/b.yaml:1:11", "pack/c.yaml:1:8"]
    text = str(err)
    assert text.endswith("3 problems (2 errors, 1 warning); nothing was installed")
    assert "pack/a.yaml:1:4: error PE103" in text and "pack/b.yaml:1:11: error PE102" in text
    assert err.exit_code == 2
    assert pickle.loads(pickle.dumps(err)).problems == err.problems


def test_warnings_do_not_make_load_yaml_fail() -> None:
    sink = ProblemSink()
    sink.add(Problem("PE404", "earlier warning", Location("x.yaml", 1, 1), severity=Severity.WARNING))
    assert load_yaml("a: 1\n", "p.yaml", sink) is not None


def test_a_file_loaded_twice_fails_twice() -> None:
    # The sink drops exact duplicates; load_yaml still knows its own file failed.
    sink = ProblemSink()
    assert load_yaml("a: 1\na: 2\n", "p.yaml", sink) is None
    assert load_yaml("a: 1\na: 2\n", "p.yaml", sink) is None
    assert len(sink.problems) == 1
