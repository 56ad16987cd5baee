"""Path normalisation, containment and globbing used by security rules (policyengine.arguments.paths)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine.arguments.paths import (
    PathPatternError,
    glob_to_regex,
    normalize_path,
    path_escapes,
    path_matches,
    path_within,
)

SECRET_PATTERNS = [".env", ".env.*"]
SYSTEM_DIRS = ["/etc"]

# Spellings of a secret file an agent might use to slip past a ".env" rule: every one is caught.
ENV_BYPASSES = [
    ".env",
    "./.env",
    "a/../.env",
    "a//.env",
    ".ENV",
    ".env/",
    "a\\.env",
    "%2eenv",
    "%252eenv",
    "%25252e%65nv",
    "\uff0e\uff45\uff4e\uff56",  # full-width ".env" (U+FF0E U+FF45 U+FF4E U+FF56)
    "\uff05\uff12\uff45env",  # full-width "%2e", decoded after NFKC
    " .env ",
    ".env.local",
    "config/.Env.production",
    "/home/u/repo/.env",
    "C:\\Users\\u\\repo\\.ENV",
    ".e\x00nv",
    ".e\u200bnv",  # zero-width space
    "\ud800.env",  # lone surrogate from a JSON \ud800 escape
    ".env.",  # Windows ignores trailing dots
    ".env::$DATA",  # NTFS alternate data stream of .env
    ".env/../.env",
    "file:///srv/app/.env",
    ".env/nested/file",  # inside a directory named .env
    "%2e%65%6e%76",
    "%2E%45%4E%56",
    "%c0%ae%65nv",  # overlong UTF-8 for "."
    "%e0%80%ae%65nv",
    "%u002eenv",  # IIS %u escape
    ".env\ufe0f",  # variation selector 16 (Mn, not Cf: dropped as default-ignorable)
    ".e\u3164nv",  # HANGUL FILLER (Lo)
    ".e\U000e0100nv",  # VARIATION SELECTOR-17 (Mn, not Cf)
]

# Spellings of a system path that must stay inside /etc.
ETC_BYPASSES = [
    "//etc/passwd",
    "/etc/./passwd",
    "/tmp/../etc/shadow",
    "\\etc\\passwd",
    "/ETC/passwd",
    "/etc",
    "/etc/",
    "/../etc/passwd",
    "/%65tc/passwd",
    "/etc%2fpasswd",
    "%2fetc%2fpasswd",
    "/etc%252fpasswd",
    "file:///etc/passwd",
    "file://localhost/etc/hosts",
    "/\uff45tc/passwd",
    "/etc\t/passwd",
]

# Names that look similar but are not .env files: the rule must not fire on them.
ENV_NON_MATCHES = [
    "environment.txt",
    ".envrc",  # direnv's file: neither ".env" nor ".env.<something>"; decided: not a match
    "my.env.txt",
    "env",
    "a/env/b",
    "x.env",
    ".environment",
    "/etc/.envoy",
]

ETC_NON_MATCHES = [
    "/etcetera/x",
    "/etc.d/x",
    "etc/passwd",  # relative: compared to relative dirs only
    "/usr/etc/passwd",
    "/",
    "/et",
]


@pytest.mark.parametrize("path", ENV_BYPASSES)
def test_env_spellings_are_caught(path: str) -> None:
    assert path_matches(path, SECRET_PATTERNS)


@pytest.mark.parametrize("path", ETC_BYPASSES)
def test_etc_spellings_are_within(path: str) -> None:
    assert path_within(path, SYSTEM_DIRS)


@pytest.mark.parametrize("path", ENV_NON_MATCHES)
def test_env_look_alikes_do_not_match(path: str) -> None:
    assert not path_matches(path, SECRET_PATTERNS)


@pytest.mark.parametrize("path", ETC_NON_MATCHES)
def test_outside_etc(path: str) -> None:
    assert not path_within(path, SYSTEM_DIRS)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", "."),
        (".", "."),
        ("./", "."),
        ("a/..", "."),
        ("a/b/../c", "a/c"),
        ("../x", "../x"),
        ("a/../../x", "../x"),
        ("../a/../../b", "../../b"),
        ("/..", "/"),
        ("/../..", "/"),
        ("/", "/"),
        ("//", "/"),
        ("//etc//passwd//", "/etc/passwd"),
        ("/etc/./passwd", "/etc/passwd"),
        ("\\etc\\passwd", "?:/etc/passwd"),  # root-relative: the root of a drive (or "/") the engine cannot know
        ("C:\\Windows", "c:/windows"),
        ("C:\\Windows\\..\\..\\x", "c:/x"),
        ("c:", "c:/"),
        ("C:/", "c:/"),
        ("C:foo", "c:/foo"),
        ("\\\\?\\C:\\Windows\\System32", "c:/windows/system32"),
        ("\\\\?\\UNC\\server\\share\\x", "/server/share/x"),
        ("\\\\server\\share", "/server/share"),
        ("file:///etc/passwd", "/etc/passwd"),
        ("FILE://localhost/etc/passwd", "/etc/passwd"),
        ("  /Etc/Passwd  ", "/etc/passwd"),
        ("a/ b /c", "a/b/c"),
        ("%2e%2e%2fetc", "../etc"),
        ("%252e%252e%252fetc", "../etc"),
        ("%zz%", "%zz%"),
        ("\uff0e\uff45\uff4e\uff56", ".env"),
        ("STRASSE/Stra\u00dfe", "strasse/strasse"),
        ("a\x00b\x1fc\x7f", "a"),  # a NUL ends the path, as for a C API
        ("b\x1fc\x7f", "bc"),  # other controls vanish
        ("a\u202eb", "ab"),  # right-to-left override
        ("x.pem:Zone.Identifier", "x.pem"),
        ("dir.../f", "dir/f"),
        (".../f", ".../f"),
        ("~/x", "~/x"),
        # the machine's own administrative shares name its drives
        ("\\\\localhost\\c$\\Windows\\System32", "c:/windows/system32"),
        ("\\\\127.0.0.1\\C$", "c:/"),
        ("//[::1]/d$/x", "d:/x"),
        ("\\\\?\\UNC\\localhost\\c$\\windows", "c:/windows"),
        ("%5c%5clocalhost%5cc%24%5cwindows", "c:/windows"),
        # another machine's share, or a share that is not a drive, stays a path
        ("\\\\server\\c$\\windows", "c:/windows"),  # an administrative share: the host may be this machine
        ("//localhost/c$x/y", "//localhost/c$x/y"),  # a share of this machine: unknown place, kept as written
    ],
)
def test_normalize_path(raw: str, expected: str) -> None:
    assert normalize_path(raw) == expected


def test_deep_percent_encoding_fails_closed() -> None:
    # "%" + "25" * n + "2e" is "." encoded n + 1 times: each pass peels one level, so decoding
    # is quadratic in the length; past the bound it refuses instead of under-decoding.
    assert normalize_path("%" + "25" * 20 + "2eenv") == ".env"
    with pytest.raises(PathPatternError):
        normalize_path("%" + "25" * 40 + "2eenv")


def test_long_path_is_linear() -> None:
    path = "a/" * 16_000 + ".env"
    assert path_matches(path, SECRET_PATTERNS)
    assert normalize_path("../" * 10_000 + "x").count("..") == 10_000


def test_a_path_longer_than_any_filesystem_allows_is_refused_so_rules_fail_closed() -> None:
    from policyengine.arguments.paths import MAX_PATH_LENGTH, PathPatternError

    with pytest.raises(PathPatternError):
        path_matches("a/" * (MAX_PATH_LENGTH // 2) + ".env", SECRET_PATTERNS)
    with pytest.raises(PathPatternError):
        path_within("/etc/" + "x" * MAX_PATH_LENGTH, ["/etc"])


@pytest.mark.parametrize(
    ("path", "dirs", "expected"),
    [
        ("/etc/passwd", "/etc", True),
        ("/etc/passwd", ["/var", "/ETC/"], True),
        ("/etc", ["//etc//"], True),
        ("/etcetera", ["/etc"], False),
        ("/etc/passwd", [], False),
        ("/anything", ["/"], True),
        ("relative", ["/"], False),
        ("src/main.py", ["src"], True),
        ("./src/../src/x", ["./src"], True),
        ("src2/x", ["src"], False),
        ("src/x", ["/src"], False),
        ("x", ["."], True),
        ("../x", ["."], True),  # climbs above an unknown start: may be anywhere
        ("../x", [".."], True),
        ("../../x", [".."], True),
        ("../a/b", ["../a"], True),
        ("c:\\windows\\system32\\x.dll", ["C:/Windows"], True),
        ("d:\\windows", ["C:/Windows"], True),  # Windows may be installed on D: (issue 22, set D)
        ("d:\\projects\\windows", ["C:/Windows"], False),
        ("/c/windows", ["C:/Windows"], False),
    ],
)
def test_path_within(path: str, dirs: str | list[str], expected: bool) -> None:
    assert path_within(path, dirs) is expected


@pytest.mark.parametrize(
    ("path", "patterns", "expected"),
    [
        # A pattern without "/" matches any component, hence the basename and parent dirs.
        ("keys/x.pem", ["*.pem"], True),
        ("/abs/keys/x.PEM", ["*.pem"], True),
        ("x.pem.bak", ["*.pem"], False),  # editors' backup affixes are the packs' to read off
        ("x - Copy.pem", ["*.pem"], True),  # a file manager's copy of a key holds the key
        ("a/node_modules/b/c.js", ["node_modules"], True),
        ("a/node_modules_old/c.js", ["node_modules"], False),
        ("id_rsa", ["id_*"], True),
        ("a/b", ["?"], True),
        ("ab/cd", ["?"], False),
        # A pattern with "/": "*" stays within a component, "**" crosses them.
        ("secrets/a.key", ["secrets/*.key"], True),
        ("secrets/sub/a.key", ["secrets/*.key"], False),
        ("secrets/sub/a.key", ["secrets/**/*.key"], True),
        ("secrets/a.key", ["secrets/**/*.key"], True),
        ("/home/u/repo/secrets/a.key", ["secrets/*.key"], True),  # relative patterns float
        ("/etc/ssh/sshd_config", ["/etc/**"], True),
        ("/etc", ["/etc/**"], True),
        ("/usr/etc/x", ["/etc/**"], False),  # an absolute pattern is anchored at the root
        ("/usr/etc/x", ["etc/**"], True),
        ("etc/x", ["/etc/*"], False),
        ("/etc/ssh/keys/x", ["/etc/ssh"], True),  # a matched directory covers its contents
        ("/home/u/.ssh/id_ed25519", ["**/.ssh/**"], True),
        ("/home/u/.ssh", ["**/.ssh/**"], True),
        ("a/b/c/d", ["a/**/d"], True),
        ("a/d", ["a/**/d"], True),
        ("ab/d", ["a/**/d"], False),
        ("x", ["**"], True),
        ("/x", ["/"], True),
        ("x", ["/"], False),
        # Patterns are normalised like paths.
        ("a/.env", [".\\.ENV"], True),
        ("secrets/a.key", ["./secrets//*.key"], True),
        ("/etc/passwd", ["/tmp/../etc/*"], True),
        # Bracket expressions.
        ("a1", ["a[0-9]"], True),
        ("ab", ["a[0-9]"], False),
        ("ab", ["a[!0-9]"], True),
        ("ab", ["a[^0-9]"], True),
        ("a]", ["a[]]"], True),
        ("a[", ["a["], True),  # an unclosed "[" is a literal
        ("A1", ["[A-Z]1"], True),  # casefolded on both sides
        ("x", [], False),
        ("x", "x", True),
    ],
)
def test_path_matches(path: str, patterns: str | list[str], expected: bool) -> None:
    assert path_matches(path, patterns) is expected


def test_reversed_range_is_an_error() -> None:
    with pytest.raises(PathPatternError):
        path_matches("a", ["[z-a]"])


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("../x", True),
        ("a/../../x", True),
        ("a/%2e%2e/%2e%2e/x", True),
        ("..\\x", True),
        ("/etc/passwd", True),
        ("//x", True),
        ("C:\\x", True),
        ("~/x", True),
        ("~root/x", True),
        ("$HOME/x", True),
        ("%USERPROFILE%/x", True),
        ("x", False),
        ("a/../x", False),
        ("a/b/../../x", False),
        ("./x", False),
        ("", False),
        ("a~/x", False),
    ],
)
def test_path_escapes(path: str, expected: bool) -> None:
    assert path_escapes(path) is expected


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("*", "a/b", True),
        ("a?c", "a/c", True),
        ("[!a]", "/", True),
        ("*.py", "x.PY", False),
        ("a.c", "abc", False),
        ("(x)", "(x)", True),
        ("\u00e9*", "\u00e9t\u00e9", True),
    ],
)
def test_glob_to_regex(pattern: str, text: str, expected: bool) -> None:
    import re2

    assert (re2.fullmatch(glob_to_regex(pattern), text) is not None) is expected


_PIECES = st.sampled_from(
    ["a", "B", ".", "..", "/", "\\", "%2e", "%25", "%2f", ".env", "\uff0e", " ", "\x00", ":", "c:", "~", "*", "\u00df"]
)
_PATHS = st.lists(_PIECES, max_size=12).map("".join)


@given(_PATHS)
def test_normalize_is_idempotent(path: str) -> None:
    once = normalize_path(path)
    assert normalize_path(once) == once


@given(_PATHS)
def test_a_path_is_within_itself(path: str) -> None:
    assert path_within(path, [path])
    assert path_within(normalize_path(path), [path])


@given(_PATHS)
def test_env_below_any_directory_is_caught(prefix: str) -> None:
    assert path_matches(prefix + "/.env", SECRET_PATTERNS)
    assert path_matches(prefix + "\\.ENV.local", SECRET_PATTERNS)


@given(_PATHS)
def test_escape_agrees_with_normal_form(path: str) -> None:
    normal = normalize_path(path)
    assert path_escapes(path) == path_escapes(normal)
    if not path_escapes(path):
        assert path_within(path, ["."])


# -- shortcuts for plain paths --------------------------------------------------------------------

_PATHISH = st.text(alphabet=st.sampled_from([*"aB/.\\:? %2e~$_-\t\x00", "é", "\uff0e", "\u200b", "K"]), max_size=24)


@given(_PATHISH | st.text(max_size=16))
def test_decode_shortcut_equals_the_general_rounds(raw: str) -> None:
    from policyengine.arguments.paths import _decode, _decode_rounds

    try:
        expected = _decode_rounds(raw)
    except PathPatternError:
        return
    assert _decode(raw) == expected


@given(_PATHISH | st.text(max_size=16))
def test_parse_shortcut_equals_the_general_component_walk(raw: str) -> None:
    from policyengine.arguments.paths import _components, _decode_rounds, _parse, _split_root

    try:
        text = _decode_rounds(raw).strip().replace("\\", "/")
    except PathPatternError:
        return
    root, rest = _split_root(text)
    # Before classification (which only renames the root of unknown places), the shortcut and
    # the general walk agree component for component.
    if root != "?":
        assert _parse(raw, classify=False) == (root, _components(root, rest))


@pytest.mark.parametrize(
    "raw",
    [
        "file:///etc/passwd",
        "FILE://localhost/etc",
        "file:etc",
        "//?/C:/Windows",
        "//./unc/server/share",
        "/c:/windows",
        "/C:",
        "C:foo",
        "c:\\x",
        "//server/share/x",
        "/",
        "",
        " /srv/a ",
        "a/b/",
        "/srv/a./b",
        "\\\\?\\C:\\x",
        "/:x",
        "x:",
    ],
)
def test_parse_shortcut_agrees_on_every_kind_of_root(raw: str) -> None:
    from policyengine.arguments.paths import _components, _decode_rounds, _parse, _split_root

    text = _decode_rounds(raw).strip().replace("\\", "/")
    root, rest = _split_root(text)
    assert _parse(raw) == (root, _components(root, rest))
