"""Problems, their rendering, the sink that collects them and the error that lists them all."""

from __future__ import annotations

import pickle

import pytest

from policyengine.errors import PolicyEngineError
from policyengine.values.problems import (
    CODES,
    Location,
    PackLoadError,
    Problem,
    ProblemSink,
    Severity,
    code_group,
    register_code,
    render_problems,
)


def make(code: str = "PE101", line: int = 1, column: int = 1, file: str = "a.yaml", **kwargs: object) -> Problem:
    return Problem(code, kwargs.pop("message", "boom"), Location(file, line, column), **kwargs)  # type: ignore[arg-type]


# -- Location ------------------------------------------------------------------------------------


def test_location_renders_file_line_column() -> None:
    assert str(Location("policies/base.yaml", 12, 9)) == "policies/base.yaml:12:9"


def test_location_is_one_based() -> None:
    with pytest.raises(ValueError, match="1-based"):
        Location("a.yaml", 0, 1)
    with pytest.raises(ValueError, match="1-based"):
        Location("a.yaml", 1, 0)


def test_location_start_of_file() -> None:
    assert Location.start_of("x.yaml") == Location("x.yaml", 1, 1)


def test_location_is_frozen_and_hashable() -> None:
    loc = Location("a.yaml", 2, 3)
    with pytest.raises(AttributeError):
        loc.line = 5  # type: ignore[misc]
    assert {loc, Location("a.yaml", 2, 3)} == {loc}


# -- codes ---------------------------------------------------------------------------------------


def test_code_registry_groups() -> None:
    for code in ("PE101", "PE102", "PE103", "PE104", "PE105", "PE106", "PE107", "PE108", "PE109"):
        assert code in CODES and code_group(code) == "yaml"
    for code in ("PE201", "PE202", "PE203", "PE204", "PE205"):
        assert code_group(code) == "schema" and code in CODES
    for code in ("PE301", "PE302", "PE303", "PE304", "PE305", "PE306", "PE307"):
        assert code_group(code) == "expression" and code in CODES
    for code in ("PE401", "PE402", "PE403", "PE404"):
        assert code_group(code) == "pack" and code in CODES
    assert isinstance(CODES, dict)
    assert all(isinstance(title, str) and title for title in CODES.values())
    assert code_group("nope") == "other"


def test_register_code_adds_and_refuses_conflicts() -> None:
    try:
        assert register_code("PE499", "test-only code") == "PE499"
        assert CODES["PE499"] == "test-only code"
        register_code("PE499", "test-only code")  # same title again is fine
        with pytest.raises(ValueError, match="already registered"):
            register_code("PE499", "something else")
    finally:
        CODES.pop("PE499", None)
    with pytest.raises(ValueError, match="PE123"):
        register_code("X1", "bad")


def test_problem_refuses_malformed_code_and_width() -> None:
    with pytest.raises(ValueError):
        Problem("E1", "m", None)
    with pytest.raises(ValueError):
        Problem("PE101", "m", None, caret_width=0)


def test_problem_title_and_defaults() -> None:
    p = make("PE102")
    assert p.title == "duplicate mapping key"
    assert p.severity is Severity.ERROR and p.is_error
    assert p.rule_id is None and p.hint is None and p.caret_width == 1


# -- rendering -----------------------------------------------------------------------------------


def test_render_header_snippet_caret_and_hint() -> None:
    p = Problem(
        "PE301",
        "JMESPath syntax error: unexpected token",
        Location("path/file.yaml", 12, 9),
        rule_id="deny-x",
        hint="close the parenthesis",
        source_line='  when: "foo(("',
        caret_width=3,
    )
    assert p.render() == (
        "path/file.yaml:12:9: error PE301 [rule deny-x]: JMESPath syntax error: unexpected token\n"
        '  12 |   when: "foo(("\n'
        "     |         ^^^\n"
        "  hint: close the parenthesis"
    )
    assert str(p) == p.render()


def test_caret_sits_under_the_column() -> None:
    source = "    tools: [fs_write, fs_edit]"
    p = make(line=7, column=source.index("fs_edit") + 1, source_line=source, caret_width=len("fs_edit"))
    _header, text, carets = p.render().splitlines()
    assert text == "  7 | " + source
    assert carets.index("^") == text.index("fs_edit")
    assert carets.count("^") == len("fs_edit")


def test_render_without_location_source_or_hint() -> None:
    assert Problem("PE402", "manifest is missing", None).render() == "error PE402: manifest is missing"
    assert make(line=3, column=2).render() == "a.yaml:3:2: error PE101: boom"


def test_render_warning_and_multiline_hint() -> None:
    p = make("PE404", severity=Severity.WARNING, hint="remove it\nor use it")
    assert p.render().splitlines() == [
        "a.yaml:1:1: warning PE404: boom",
        "  hint: remove it",
        "        or use it",
    ]


def test_caret_is_clipped_to_the_line_end_and_at_least_one() -> None:
    p = make(column=4, source_line="ab: x", caret_width=50)
    assert p.render().splitlines()[2] == "    | " + "   " + "^^"
    past_end = make(column=6, source_line="ab: x", caret_width=3)
    assert past_end.render().splitlines()[2] == "    | " + " " * 5 + "^"


def test_caret_accounts_for_tabs_and_wide_characters() -> None:
    # A tab is shown as four spaces and a CJK character takes two terminal columns.
    p = make(column=4, source_line="\t中x: y", caret_width=1)
    _header, text, carets = p.render().splitlines()
    assert text == "  1 |     中x: y"
    assert carets == "    | " + " " * 7 + "^"  # tab 4 + 中 2 + x 1, caret under ':'
    wide = make(column=2, source_line="a中b", caret_width=1)
    assert wide.render().splitlines()[2] == "    |  ^^"


def test_control_characters_do_not_break_the_snippet() -> None:
    p = make(column=4, source_line="a: \x01b")
    assert p.render().splitlines()[1] == "  1 | a: \ufffdb"


def test_long_lines_are_cut_around_the_column() -> None:
    source = "x" * 300 + "TARGET" + "y" * 300
    p = make(column=301, source_line=source, caret_width=6)
    _header, text, carets = p.render().splitlines()
    assert len(text) < 140
    assert text.startswith("  1 | …") and text.endswith("…")
    assert text[carets.index("^") : carets.index("^") + 6] == "TARGET"


def test_color_render_uses_ansi_styles() -> None:
    p = make(source_line="a: b", hint="fix it", rule_id="r1")
    colored = p.render(color=True)
    assert "\x1b[31m" in colored and "\x1b[0m" in colored and "hint" in colored
    assert "\x1b" not in p.render()


# -- the sink ------------------------------------------------------------------------------------


def test_sink_collects_errors_and_warnings() -> None:
    sink = ProblemSink()
    e = sink.add(make("PE101"))
    w = sink.add(make("PE404", severity=Severity.WARNING))
    sink.extend([make("PE202", line=2)])
    assert sink.problems == (e, w, make("PE202", line=2))
    assert sink.errors == (e, make("PE202", line=2))
    assert sink.warnings == (w,)
    assert sink.has_errors and sink.error_count() == 2
    assert list(sink) == list(sink.problems)


def test_sink_ignores_exact_duplicates() -> None:
    sink = ProblemSink()
    sink.add(make())
    sink.add(make())
    sink.add(make(message="other"))
    assert len(sink.problems) == 2


def test_sink_without_errors_does_not_raise() -> None:
    sink = ProblemSink()
    sink.raise_if_errors()
    sink.add(make("PE404", severity=Severity.WARNING))
    sink.raise_if_errors()
    assert not sink.has_errors


def test_raise_if_errors_sorts_by_file_line_column_and_keeps_warnings() -> None:
    sink = ProblemSink()
    sink.add(make(file="b.yaml", line=1, column=1, message="b1"))
    sink.add(make(file="a.yaml", line=9, column=1, message="a9"))
    sink.add(make(file="a.yaml", line=2, column=7, message="a2c7"))
    sink.add(make("PE404", file="a.yaml", line=2, column=3, message="a2c3", severity=Severity.WARNING))
    sink.add(Problem("PE402", "no location", None))
    with pytest.raises(PackLoadError) as info:
        sink.raise_if_errors()
    err = info.value
    assert [p.message for p in err.problems] == ["no location", "a2c3", "a2c7", "a9", "b1"]
    assert len(err.errors) == 4 and len(err.warnings) == 1
    assert err.codes == ("PE402", "PE404", "PE101", "PE101", "PE101")


def test_for_file_filters_problems() -> None:
    sink = ProblemSink()
    sink.add(make(file="a.yaml"))
    sink.add(make(file="b.yaml"))
    assert [p.location.file for p in sink.for_file("b.yaml") if p.location] == ["b.yaml"]


# -- PackLoadError -------------------------------------------------------------------------------


def test_pack_load_error_lists_every_problem_then_a_count() -> None:
    problems = [
        make("PE102", line=4, column=5, message="duplicate key 'id'", source_line="    id: b", caret_width=2),
        make("PE203", line=2, column=3, message="required field 'tools' is missing", rule_id="deny-x"),
        make("PE305", file="b.yaml", line=1, column=1, message="bad template", hint="close the braces"),
    ]
    err = PackLoadError(problems)
    text = str(err)
    for p in problems:
        assert p.render() in text
    assert text.endswith("3 problems; nothing was installed")
    assert "a.yaml:4:5: error PE102: duplicate key 'id'" in text
    assert "[rule deny-x]" in text
    assert isinstance(err, PolicyEngineError)
    assert err.exit_code == 2
    assert err.problems == tuple(problems)


def test_pack_load_error_count_line_names_warnings_and_singular() -> None:
    assert str(PackLoadError([make()])).endswith("\n\n1 problem; nothing was installed")
    mixed = PackLoadError([make(), make("PE404", severity=Severity.WARNING)], summary="pack refused")
    assert str(mixed).endswith("2 problems (1 error, 1 warning); pack refused")


def test_pack_load_error_survives_pickling() -> None:
    err = PackLoadError([make(hint="h", source_line="x: 1")], summary="custom")
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, PackLoadError)
    assert again.problems == err.problems
    assert str(again) == str(err)


def test_render_problems_and_colored_error() -> None:
    assert render_problems([], summary="ok") == "0 problems; ok"
    assert "\x1b[" in PackLoadError([make(source_line="a: 1")]).render(color=True)
