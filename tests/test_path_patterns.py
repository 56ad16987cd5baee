"""Path patterns as subjects (PathPattern: a glob the shell or a Glob tool expands) and the last path spellings."""

from __future__ import annotations

import functools
import importlib.util
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import jmespath
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from policyengine.arguments import _ignorables, paths
from policyengine.arguments.paths import (
    PathPattern,
    PathPatternError,
    decode,
    escape_pattern,
    globs_matcher,
    is_unknown,
    normalize_path,
    path_escapes,
    path_matches,
    path_surely_matches,
    path_surely_within,
    path_within,
    resolve_path,
    within_matcher,
)
from policyengine.language import functions
from policyengine.language.expressions import compile_expression
from policyengine.language.functions import OPTIONS
from policyengine.values.frozen import freeze
from support import read_yaml

ROOT = Path(__file__).resolve().parent.parent
CASE_FILE = ROOT / "tests" / "data" / "path_patterns.yaml"
CASES: dict[str, list[Any]] = read_yaml(CASE_FILE)


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    """Test ids: the subject, and the globs or directories it is tested against."""
    return [f"{case['subject']!r}-{case.get('globs') or case.get('dirs') or ''}" for case in cases]


def test_the_case_file_has_every_section() -> None:
    """Missing test data fails: each section the tests below read holds cases."""
    for section in ("matches", "within", "normalize", "places", "env_spellings", "not_env", "unchanged"):
        assert CASES.get(section), section


# -- matching ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES["matches"], ids=_ids(CASES["matches"]))
def test_a_pattern_may_match_a_glob_when_some_expansion_does(case: dict[str, Any]) -> None:
    """path_matches on a PathPattern: the pattern's and the glob's languages meet."""
    assert path_matches(PathPattern(case["subject"]), case["globs"]) is case["expected"], case.get("why")


@pytest.mark.parametrize("case", CASES["matches"], ids=_ids(CASES["matches"]))
def test_the_compiled_glob_matcher_agrees_on_patterns(case: dict[str, Any]) -> None:
    """globs_matcher (rules with literal globs) answers as path_matches does."""
    assert globs_matcher(case["globs"])(PathPattern(case["subject"])) is case["expected"]


@pytest.mark.parametrize("case", CASES["matches"], ids=_ids(CASES["matches"]))
def test_a_pattern_surely_matches_only_when_it_names_one_path(case: dict[str, Any]) -> None:
    """path_surely_matches: a wildcard is never sure, unless a one-name glob takes the literal name it ends in."""
    subject = PathPattern(case["subject"])
    surely = path_surely_matches(subject, case["globs"])
    if surely:
        assert path_matches(subject, case["globs"])
    last = subject.rsplit("/", 1)[-1]
    named = not any(char in last for char in "*?[") and any(
        "/" not in glob and path_matches(last, glob) for glob in case["globs"]
    )
    if ("*" in subject or "?" in subject) and not named:
        assert not surely


def test_a_pattern_ending_in_a_template_name_surely_is_one() -> None:
    """`Glob **/.env.example` is a template wherever it is: the secret-file red line's exception holds for it."""
    assert path_surely_matches(PathPattern("**/.env.example"), ".env.example")
    assert path_surely_matches(PathPattern("/h/*/.env.example"), [".env.sample", ".env.example"])
    assert not path_surely_matches(PathPattern("**/.env.*"), ".env.example")
    assert not path_surely_matches(PathPattern("**/.env.example"), "/etc/.env.example")


def test_a_pattern_of_escapes_surely_matches_its_literal_name() -> None:
    """`[e]nv` names only "env"; `[*].md` only the file named "*.md"."""
    assert path_surely_matches(PathPattern(".[e]nv"), ".env")
    assert path_surely_matches(PathPattern("[*].md"), "[*].md")
    assert not path_surely_matches(PathPattern("[*].md"), "x.md")
    assert not path_surely_matches(PathPattern(".en?"), ".env")


@pytest.mark.parametrize("case", CASES["within"], ids=_ids(CASES["within"]))
def test_a_pattern_may_lie_within_and_surely_lies_within(case: dict[str, Any]) -> None:
    """path_within: some expansion inside; path_surely_within: every expansion inside."""
    subject = PathPattern(case["subject"])
    assert path_within(subject, case["dirs"]) is case["may"], case.get("why")
    assert path_surely_within(subject, case["dirs"]) is case["surely"], case.get("why")


@pytest.mark.parametrize("case", CASES["within"], ids=_ids(CASES["within"]))
def test_the_compiled_within_matcher_agrees_on_patterns(case: dict[str, Any]) -> None:
    """within_matcher (rules with literal directories) answers as path_within does."""
    assert within_matcher(case["dirs"])(PathPattern(case["subject"])) is case["may"]


@pytest.mark.parametrize("case", CASES["places"], ids=_ids(CASES["places"]))
def test_a_pattern_of_unknown_place_is_one_that_may_climb_or_expand(case: dict[str, Any]) -> None:
    """path_unknown and path_escapes: ".?" may be "..", "$HOME" expands, "[$]" and "[~]" are literal."""
    subject = PathPattern(case["subject"])
    assert is_unknown(subject) is case["unknown"], case.get("why")
    assert path_escapes(subject) is case["escapes"], case.get("why")


# -- normalisation keeps the type --------------------------------------------------------------


@pytest.mark.parametrize("case", CASES["normalize"], ids=_ids(CASES["normalize"]))
def test_normalising_a_pattern_keeps_it_a_pattern_while_a_wildcard_is_left(case: dict[str, Any]) -> None:
    """normalize_path decodes, casefolds and resolves a pattern as a path; its type says whether globs remain."""
    normalized = normalize_path(PathPattern(case["subject"]))
    assert normalized == case["expected"], case.get("why")
    assert (type(normalized) is PathPattern) is case["pattern"]
    assert normalize_path(normalized) == normalized  # idempotent, as for paths


def test_resolving_a_pattern_against_the_cwd_keeps_it_a_pattern() -> None:
    """resolve_path (and roles.resolve) prefix the cwd, escaping the cwd's own metacharacters."""
    resolved = resolve_path(PathPattern("../.E*"), "/srv/app")
    assert resolved == "/srv/.e*" and type(resolved) is PathPattern
    bracketed = resolve_path(PathPattern("*.md"), "/work[1]")
    assert bracketed == "/work[[]1]/*.md" and path_surely_within(bracketed, "/work[1]")
    assert resolve_path(PathPattern("~/.e*"), "/srv") == "~/.e*"
    assert resolve_path(PathPattern("/etc/*"), "/srv") == "/etc/*"
    assert type(resolve_path(PathPattern("notes.txt"), "/srv")) is str


def test_roles_resolve_keeps_patterns_and_their_nul_readings() -> None:
    """roles.resolve: each NUL reading of a PathPattern is a PathPattern too."""
    from policyengine.arguments import roles

    readings = roles.resolve(PathPattern(".e\x00*"), "/w")
    assert readings == ["/w/.e", "/w/.e*"]
    assert type(readings[1]) is PathPattern
    assert path_matches(PathPattern(".e\x00n?"), ".env")


def test_a_plain_string_is_never_read_as_a_pattern() -> None:
    """Tool arguments and literal operands keep their meaning: a star in a str is a character."""
    assert not path_matches(".en?", ".env")
    assert not path_matches("*", ".env")
    assert path_surely_within("/etc/*", "/etc")
    # Folded from "A", it remembers its literal reading (a FoldedPath), but it is no pattern.
    assert not isinstance(normalize_path("A/*.md"), PathPattern)
    assert type(normalize_path("a/*.md")) is str


def test_a_path_pattern_never_comes_from_call_arguments() -> None:
    """freeze() turns str subclasses into plain str: a caller cannot smuggle pattern semantics in (or out)."""
    frozen = freeze({"path": PathPattern(".en?"), "paths": [PathPattern("*")], "nested": {"p": PathPattern("x*")}})
    assert type(frozen["path"]) is str
    assert type(frozen["paths"][0]) is str
    assert type(frozen["nested"]["p"]) is str


def test_escape_pattern_names_exactly_its_text() -> None:
    """escape_pattern: brackets around `*`, `?` and `[` (what the shell layer does for quoted text)."""
    escaped = escape_pattern("a*b?[c].env")
    assert escaped == "a[*]b[?][[]c].env" and type(escaped) is PathPattern
    assert path_surely_matches(escaped, "a[*]b[?][[]c].env")
    assert not path_matches(escaped, "axb?c.env")


# -- JMESPath sees a PathPattern as a string ---------------------------------------------------

DOCUMENT = {"operands": [PathPattern(".en?"), "notes.txt", PathPattern("*.md")], "one": PathPattern("/et?/x")}

JMESPATH_CASES: list[tuple[str, Any]] = [
    ("join(', ', operands)", ".en?, notes.txt, *.md"),
    ("operands[?contains(@, '?')]", [".en?"]),
    ("operands[?starts_with(@, '*')]", ["*.md"]),
    ("operands[?ends_with(@, '.md')]", ["*.md"]),
    ("length(one)", 6),
    ("one == '/et?/x'", True),
    ("one > '/a'", True),
    ("sort(operands)", ["*.md", ".en?", "notes.txt"]),
    ("max_by(operands, &@)", "notes.txt"),
    ("operands[?path_matches(@, '.env')]", [".en?"]),
    ("operands[?path_matches(@, ['.env', '.env.*'])]", [".en?"]),
    ("path_within(one, '/etc')", True),
    ("path_surely_within(one, '/etc')", False),
    ("path_surely_matches(one, '/etc/x')", False),
    ("path_unknown(one)", False),
    ("path_escapes(one)", True),
    ("normalize_path(one)", "/et?/x"),
    ("is_string(one)", True),
    ("type(one)", "string"),
]


@pytest.mark.parametrize(("expression", "expected"), JMESPATH_CASES)
def test_jmespath_functions_take_a_pattern_as_a_string(expression: str, expected: Any) -> None:
    """Through the interpreter and through the compiled expression (with its specialised path tests)."""
    assert jmespath.search(expression, DOCUMENT, options=OPTIONS) == expected
    problems: list[Any] = []
    compiled = compile_expression(expression, {}, lambda *problem: problems.append(problem))
    assert compiled is not None and not problems
    assert compiled.search(DOCUMENT) == expected


@pytest.mark.parametrize(
    ("name", "constant", "subject", "expected"),
    [
        ("path_matches", [".env", ".env.*"], ".en?", True),
        ("path_matches", ".env", "*.md", False),
        ("path_within", ["/etc"], "/et?/x", True),
        ("path_within", "/etc", "/usr/*", False),
    ],
)
def test_the_specialised_path_tests_answer_for_patterns(name: str, constant: Any, subject: str, expected: bool) -> None:
    """A rule's literal globs or directories compile once; the compiled test answers a PathPattern itself."""
    run = functions._specialize(name, [functions.DYNAMIC, constant])
    assert run is not None
    assert run(PathPattern(subject)) is expected
    assert run(subject) is False  # the same text as a plain str is a literal name


def test_normalize_path_keeps_the_pattern_type_through_jmespath() -> None:
    """A normalised pattern still matches as a pattern in the next function."""
    assert type(jmespath.search("normalize_path(one)", DOCUMENT, options=OPTIONS)) is PathPattern
    assert jmespath.search("path_matches(normalize_path(operands[0]), '.env')", DOCUMENT, options=OPTIONS) is True


# -- properties --------------------------------------------------------------------------------

_GLOB_ALPHABET = st.sampled_from(list("ab.-/*?[]!^e"))
_PATH_ALPHABET = st.sampled_from(list("ab.-/*?[]!^e"))


@settings(max_examples=600, deadline=None)
@given(st.text(_GLOB_ALPHABET, max_size=12), st.text(_PATH_ALPHABET, max_size=12))
def test_the_token_matcher_agrees_with_the_rule_regex_on_literal_text(glob: str, text: str) -> None:
    """The rule glob's automaton accepts exactly what _path_glob_to_regex's RE2 regex fullmatches."""
    try:
        regex = paths._compiled_path_glob(glob)
    except PathPatternError:
        with pytest.raises(PathPatternError):
            paths._rule_automaton(glob)
        return
    automaton = paths._rule_automaton(glob)
    assert paths._intersect(paths._text_automaton(text, below=False), automaton) is (regex.fullmatch(text) is not None)


_LITERAL_ALPHABET = st.sampled_from([*"abe.-/\\ ~$:%2", "..", "%2e", "~/", "$x", "c:", "\u00e9", "\u200b", "\x00"])
GLOBS = [".env", ".env.*", "*.pem", "id_rsa*", "**/.ssh/**", "secrets/**", "/etc/*", "a/**/b", "/", "."]
DIRS = [["/etc"], ["src"], ["."], ["/"], ["c:/windows"], [".."], ["?:/windows"]]


@settings(max_examples=400, deadline=None)
@given(st.lists(_LITERAL_ALPHABET, max_size=10).map("".join), st.sampled_from(DIRS), st.sampled_from([None, "/w"]))
# Found by this test (session 34): `a/b\\a` names the folder `a/b` as `a/b/a` does.
@example("a/b\\a", ["/etc"], None)
def test_a_pattern_without_wildcards_answers_as_the_plain_path(text: str, dirs: list[str], cwd: str | None) -> None:
    """For every literal subject, the PathPattern branch gives the plain str answer, function by function."""
    try:
        assume(not paths._METACHARACTERS.search(decode(text)))
        plain_parse = normalize_path(text)
    except PathPatternError:
        return
    pattern = PathPattern(text)
    assert normalize_path(pattern) == plain_parse
    assert resolve_path(pattern, cwd) == resolve_path(text, cwd)
    assert is_unknown(pattern) is is_unknown(text)
    assert path_escapes(pattern) is path_escapes(text)
    assert path_matches(pattern, GLOBS) is path_matches(text, GLOBS)
    for glob in GLOBS:
        assert path_matches(pattern, glob) is path_matches(text, glob), glob
        assert path_surely_matches(pattern, glob) is path_surely_matches(text, glob), glob
    assert path_within(pattern, dirs) is path_within(text, dirs)
    assert path_surely_within(pattern, dirs) is path_surely_within(text, dirs)
    assert globs_matcher(GLOBS)(pattern) is globs_matcher(GLOBS)(text)
    assert within_matcher(dirs)(pattern) is within_matcher(dirs)(text)


_NAME = st.text(st.sampled_from(list("abenv.-_")), min_size=1, max_size=5).filter(
    lambda name: not name.endswith(".") and name.strip(".") != ""
)
SOUNDNESS_GLOBS = [".env", ".e*", ".env.*", "a/**/b", "*.ne", "b?", "/a/*", "ab", "[ab]e*", "/a/b/**", "v/.env"]
SOUNDNESS_DIRS = [["/a"], ["a"], ["/a/b"], ["b/e"], ["/"], ["."], ["/a/.env"]]


@st.composite
def _path_and_pattern(draw: st.DrawFn) -> tuple[str, str]:
    """A literal path and a pattern made from it by turning characters into wildcards (so it expands to the path)."""
    names = draw(
        st.lists(st.one_of(_NAME, st.sampled_from(["a", "b", ".env", "v", "..", "."])), min_size=1, max_size=5)
    )
    rooted = draw(st.booleans())
    pattern_names = []
    for name in names:
        if name in (".", ".."):
            pattern_names.append(draw(st.sampled_from([name, ".[.x]" if name == ".." else "."])))
            continue
        if draw(st.integers(0, 9)) == 0:
            pattern_names.append("*" if not name.startswith(".") else ".*")  # the whole name
            continue
        out = []
        for index, ch in enumerate(name):
            kind = draw(st.sampled_from(["keep", "keep", "one", "class", "negated", "star"]))
            leading_dot = index == 0 and ch == "."  # no wildcard, bracket included, matches a name's leading dot
            if leading_dot:
                kind = "keep"
            if kind == "one" and not leading_dot:
                out.append("?")
            elif kind == "class":
                out.append(f"[x{ch}]")
            elif kind == "negated":
                out.append("[!x]")
            elif kind == "star" and not leading_dot:
                out.append(f"*{ch}")
            else:
                out.append(ch)
        pattern_names.append("".join(out))
    if len(pattern_names) > 1 and draw(st.booleans()):
        # "**" stands for any run of whole components, none included.
        start = draw(st.integers(0, len(pattern_names) - 1))
        stop = draw(st.integers(start, len(pattern_names) - 1))
        # A ".." after "**" is read as a climb of unknown height (tested apart); "**" never names a hidden name.
        if ".." not in names[start:] and not any(name.startswith(".") for name in names[start:stop]):
            pattern_names[start:stop] = ["**"]
    prefix = "/" if rooted else ""
    return prefix + "/".join(names), prefix + "/".join(pattern_names)


def _named_by_its_last_name(path: str, glob: str) -> bool:
    """Whether the glob matches the path as a pattern's expansion is judged (paths._name_rule_automaton).

    Deliberate limits: a glob whose last name has a wildcard (`*.ne`) or is not hidden (`ab`) is met
    only by the name a pattern ends in, not by a folder its wildcards pass (`*/x` is no read of a
    folder `a.ne`, although a plain `a.ne/x` is); a trailing star is a variant without a dot.
    """
    root, parts = paths._parse_subject(path)
    if root == paths.UNKNOWN:
        tail = paths._known_tail(parts)
        if tail is None:
            return True
        return paths._intersect(paths._text_automaton("/".join(tail), False), paths._name_rule_automaton(glob))
    return paths._intersect(paths._text_automaton(normalize_path(path), False), paths._name_rule_automaton(glob))


@settings(max_examples=500, deadline=None)
@given(_path_and_pattern(), st.sampled_from(SOUNDNESS_GLOBS), st.sampled_from(SOUNDNESS_DIRS))
# Found by this test (session 34): a pattern climbing above its start surely named `.env` by its last name.
@example(("_/../../_/.env", "*/../../*/.env"), ".env", ["/a"])
def test_what_one_expansion_may_do_its_pattern_may_do(pair: tuple[str, str], glob: str, dirs: list[str]) -> None:
    """Soundness of "may" and of "surely": a pattern answers for every path it expands to."""
    path, pattern = pair
    subject = PathPattern(pattern)
    if path_matches(path, glob) and _named_by_its_last_name(path, glob):
        assert path_matches(subject, glob)
    if path_within(path, dirs):
        assert path_within(subject, dirs)
    if path_surely_within(subject, dirs):
        assert path_surely_within(path, dirs)
    if path_surely_matches(subject, glob):
        assert path_surely_matches(path, glob)
    if path_escapes(path):
        assert path_escapes(subject)


@settings(max_examples=300, deadline=None)
@given(_path_and_pattern(), st.lists(st.sampled_from(SOUNDNESS_GLOBS), min_size=1, max_size=3), st.sampled_from(DIRS))
def test_the_compiled_matchers_agree_with_the_functions_on_patterns(
    pair: tuple[str, str], globs: list[str], dirs: list[str]
) -> None:
    """globs_matcher and within_matcher (literal rule arguments) against path_matches and path_within."""
    subject = PathPattern(pair[1])
    assert globs_matcher(globs)(subject) is path_matches(subject, globs)
    assert within_matcher(dirs)(subject) is path_within(subject, dirs)


@functools.cache
def _kept_matcher(globs: tuple[str, ...]) -> Callable[[str], bool]:
    """One globs_matcher per glob list for the whole run, as a rule keeps its own: its kept answers are met."""
    return globs_matcher(globs)


@settings(max_examples=300, deadline=None)
@given(_path_and_pattern(), st.lists(st.sampled_from(SOUNDNESS_GLOBS), min_size=1, max_size=2))
def test_a_matchers_kept_answer_for_a_pattern_is_the_functions(pair: tuple[str, str], globs: list[str]) -> None:
    """globs_matcher keeps a pattern subject's answer: asked again, it still answers as path_matches."""
    subject = PathPattern(pair[1])
    expected = path_matches(subject, globs)
    matcher = _kept_matcher(tuple(globs))
    assert matcher(subject) is expected
    assert matcher(subject) is expected  # from what it kept
    assert matcher(PathPattern(str(subject))) is expected


def test_a_pattern_past_the_bounds_may_match_and_is_surely_nothing() -> None:
    """Past MAX_PATTERN_WILDCARDS the search is skipped: may is true, surely is false, and it is quick."""
    huge = PathPattern("/srv/" + "[a]" * (paths.MAX_PATTERN_WILDCARDS + 1) + "x")
    assert path_matches(huge, "/etc/shadow") is True
    assert path_surely_within(huge, "/srv") is False
    assert path_surely_matches(huge, "/srv") is False
    assert path_surely_within(PathPattern("/srv/" + "[a]" * paths.MAX_PATTERN_WILDCARDS), "/srv") is True
    wide = PathPattern("/*/" + "?" * (paths.MAX_PATTERN_WILDCARDS + 1))
    assert path_matches(wide, "/etc/shadow") is True
    assert path_within(PathPattern("/*" * (paths.MAX_PATTERN_WILDCARDS + 1)), "/etc") is True
    assert path_surely_within(wide, "/") is False


def test_a_pattern_at_the_bounds_is_decided_within_a_bound() -> None:
    """The worst search allowed (3 components read three ways, 16 wildcards, none matching) stays bounded."""
    globs = [".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", ".ssh", ".aws", "**/.ssh/**", "secrets/**"]
    pattern = PathPattern("/w/.?/.?/.?/q" + "*q" * 13 + "z")
    assert len(paths._pattern_readings(pattern)) > 1
    assert not paths._too_large(paths._pattern_readings(pattern)[0][1])
    started = time.perf_counter()
    assert path_matches(pattern, globs) is False
    # ~15 ms on a loaded 2-core machine; an exponential search would take minutes.
    assert time.perf_counter() - started < 5  # a hang guard, not a timing: 20x the slowest run seen


# -- the remaining spellings -------------------------------------------------------------------


@pytest.mark.parametrize("text", CASES["env_spellings"])
def test_overlong_utf8_u_escapes_and_ignorables_spell_env(text: str) -> None:
    """Overlong UTF-8 in escapes and %uXXXX decode; default-ignorables and fillers are dropped."""
    assert path_matches(text, ".env")
    assert normalize_path(text) == ".env"


@pytest.mark.parametrize("text", CASES["not_env"])
def test_decoding_changes_nothing_else(text: str) -> None:
    """Dropping ignorables and reading overlong bytes do not turn other names into .env."""
    assert not path_matches(text, ".env")


@pytest.mark.parametrize("text", CASES["unchanged"])
def test_legitimate_characters_near_the_ignorables_stay(text: str) -> None:
    """Korean, emoji without a variation selector and Braille blanks are names, not invisible marks."""
    assert decode(text) == text


def test_an_overlong_nul_ends_the_path() -> None:
    """%c0%80 is the overlong NUL of modified UTF-8: a C API stops there."""
    assert normalize_path(".env%c0%80/../notes.txt") == ".env"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_percent_decoding_agrees_with_unquote_on_valid_utf8(text: str) -> None:
    """_unquote replaces urllib's unquote: on well-formed escapes (quote's output) both give the text."""
    assume("\x00" not in text and not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text))
    encoded = quote(text, safe="")
    assert paths._unquote(encoded) == unquote(encoded) == text


def test_ignorables_are_dropped_without_slowing_ascii() -> None:
    """The ASCII shortcut still skips the rounds: a plain path decodes to itself lower-cased."""
    assert decode("SRC/Main.py") == "src/main.py"
    assert paths._decode("SRC/Main.py") == paths._decode_rounds("SRC/Main.py")


def test_the_ignorables_table_is_what_unicode_says() -> None:
    """The committed table equals \\p{Default_Ignorable_Code_Point} plus the Hangul fillers (regex computes it)."""
    pytest.importorskip("regex", reason="regex (the test extra) derives the table; install agent-policyengine[test]")
    spec = importlib.util.spec_from_file_location("gen_ignorables", ROOT / "scripts" / "gen_ignorables.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert tuple(generator.ranges(generator.ignorable_code_points())) == _ignorables.RANGES


def test_every_ignorable_is_dropped() -> None:
    """Each code point in the table vanishes from a name (the first and last of every range)."""
    for first, last in _ignorables.RANGES:
        for code in {first, last}:
            if unicodedata.category(chr(code)) == "Cs":
                continue
            assert decode(f".e{chr(code)}nv") == ".env", hex(code)


def test_a_pattern_with_the_stand_in_characters_fails_closed() -> None:
    """U+E000-U+E003 stand in for components while parsing; a pattern holding them is refused, not misread."""
    with pytest.raises(PathPatternError):
        path_matches(PathPattern(".e\ue001/*"), ".env")
    assert not path_matches(".e\ue001/x", ".env")  # a plain path is unaffected


def test_names_before_an_expansion_may_still_be_in_the_path() -> None:
    """`.env/$x/y*` may be `.env/y1` (when $x is empty or "."); a name that is not the glob's stays apart."""
    assert path_matches(PathPattern(".env/$x/y*"), ".env")
    assert path_matches(".env/$x/y", ".env") and path_matches("keys/%D%/id_rsa.pem", "*.pem")
    assert not path_matches(".venv/$x/lib", ".env") and not path_matches(PathPattern(".venv/$x/l*"), ".env")
