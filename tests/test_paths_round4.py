"""Issue 22, round four: a NUL in any escape, names judged as opened, paths resolved against the cwd."""

from __future__ import annotations

from typing import Any

import jmespath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine.arguments import roles
from policyengine.arguments.paths import as_opened, nul_readings, path_matches, path_surely_within, path_within
from policyengine.language.functions import OPTIONS

ENV = [".env"]
CWD = "/home/dev/project"

# Every escape the path functions decode, each spelling a NUL inside ".env".
NUL_SPELLINGS = [
    ".e\x00nv",
    ".e%00nv",
    ".e%2500nv",
    ".e%252500nv",
    ".e%u0000nv",
    ".e%U0000nv",
    ".e%c0%80nv",
    ".e%e0%80%80nv",
    "\uff0e\uff45\uff05\uff10\uff10\uff4e\uff56",  # full-width ".e%00nv"
    ".e\uff05\uff10\uff10nv",
    ".e%\uff10\uff10nv",
    ".e\ufe6a00nv",  # small percent sign U+FE6A, NFKC "%"
    ".e%2\u200b500nv",  # an invisible character inside the escape
]


@pytest.mark.parametrize("path", NUL_SPELLINGS)
def test_a_nul_in_any_escape_gives_the_reading_of_a_tool_that_strips_it(path: str) -> None:
    assert len(nul_readings(path)) == 2
    assert path_matches(path, ENV)


@pytest.mark.parametrize("path", ["notes.txt", "a%20b.txt", "100%25.txt", "\uff4e\uff4f\uff54\uff45\uff53", "%2eenv"])
def test_a_path_that_spells_no_nul_has_one_reading(path: str) -> None:
    assert nul_readings(path) == (path,)


@given(st.text(alphabet="abc.%0\x00\uff05\uff10u", max_size=12))
def test_the_stripped_reading_is_the_decoded_path_without_its_nuls(path: str) -> None:
    from policyengine.arguments.paths import PathPatternError, _decode_rounds, _strip_nul

    try:
        decoded = _decode_rounds(path, _strip_nul)
    except PathPatternError:
        return
    readings = nul_readings(path)
    assert readings[0] == path
    assert readings[1:] in ((), (decoded,))
    assert "\x00" not in decoded


# -- names judged as a filesystem opens them ---------------------------------------------------

OPENED = [
    (".env.", ".env"),
    (".env ", ".env"),
    (".env . .", ".env"),
    (".env::$DATA", ".env"),
    (".env:Zone.Identifier", ".env"),
    ("config/.env ", "config/.env"),
    ("config\\.env.", "config\\.env"),
    ("..", ".."),
    ("done.", "done"),
]


@pytest.mark.parametrize(("text", "opened"), OPENED)
def test_the_last_name_is_cleaned_as_a_lenient_filesystem_opens_it(text: str, opened: str) -> None:
    assert as_opened(text) == opened


@pytest.mark.parametrize(
    "value", [".env.", ".env ", ".env\t", ".env::$DATA", ".env:Zone.Identifier", "config/.env ", ".ssh. "]
)
def test_a_name_that_opens_as_a_dotfile_is_a_path_under_an_unknown_key(value: str) -> None:
    assert roles.Role.PATH in roles._value_roles(value)


@pytest.mark.parametrize("value", ["done.", "e.g.", "v1.2.", "hello world.", "a:b", "ok ", "3.14"])
def test_a_word_with_a_trailing_dot_or_a_colon_is_no_path(value: str) -> None:
    assert roles.Role.PATH not in roles._value_roles(value)


# -- resolve_path ------------------------------------------------------------------------------


def _resolve(path: str, cwd: str = CWD) -> Any:
    search: Any = jmespath.search
    return search("resolve_path(p, c)", {"p": path, "c": cwd}, options=OPTIONS)


@pytest.mark.parametrize(
    ("path", "place"),
    [
        ("src/new.py", "/home/dev/project/src/new.py"),
        ("./src/./new.py", "/home/dev/project/src/new.py"),
        ("/home/dev/project/src/new.py", "/home/dev/project/src/new.py"),
        ("../other/x", "/home/dev/other/x"),
        ("src/%2e%2e/%2e%2e/x", "/home/dev/x"),
        ("SRC/New.py", "/home/dev/project/src/new.py"),
    ],
)
def test_resolve_path_places_a_path_as_paths_does(path: str, place: str) -> None:
    assert _resolve(path) == place


def test_a_relative_edit_inside_the_project_is_surely_inside_once_resolved() -> None:
    assert not path_surely_within("src/new.py", CWD)  # as written, a relative path is not surely anywhere
    assert path_surely_within(_resolve("src/new.py"), CWD)
    assert not path_surely_within(_resolve("../x/new.py"), CWD)


@pytest.mark.parametrize("path", ["src/x\x00/../../../../tmp/y", "\x00/etc/passwd", "src/x%00/../../../../tmp/y"])
def test_a_nul_whose_readings_disagree_is_an_unknown_place(path: str) -> None:
    place = _resolve(path)
    assert not path_surely_within(place, CWD)
    assert path_within(place, "/etc")


def test_a_nul_whose_readings_agree_is_that_place() -> None:
    assert _resolve("src/new.py\x00") == "/home/dev/project/src/new.py"


def test_only_three_code_points_fold_to_a_percent_sign() -> None:
    """nul_readings skips decoding a text with no percent sign: no other code point may fold into one."""
    import sys
    import unicodedata

    from policyengine.arguments.paths import _PERCENT_SIGNS

    folding = {
        chr(c)
        for c in range(sys.maxunicode + 1)
        if not 0xD800 <= c <= 0xDFFF
        and ("%" in unicodedata.normalize("NFKC", chr(c)) or "%" in unicodedata.normalize("NFKC", chr(c).casefold()))
    }
    assert folding == set(_PERCENT_SIGNS)
