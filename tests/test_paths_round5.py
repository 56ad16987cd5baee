"""Issue 22, round five: allow-side tests hold for the literal reading; NTFS case; shares, junctions, IPv6 hosts."""

from __future__ import annotations

import copy
import pickle
import sys
import unicodedata
from typing import Any

import jmespath
import pytest

from policyengine.arguments import roles
from policyengine.arguments.paths import (
    FoldedPath,
    normalize_path,
    path_matches,
    path_surely_matches,
    path_surely_within,
    path_within,
    resolve_path,
)
from policyengine.language.functions import OPTIONS, url_host
from policyengine.values.frozen import freeze

CWD = "/home/dev/project"

# Each names, on Linux, a sibling of the project that normalisation folds into it.
SIBLINGS = [
    "/home/dev/Project/run.sh",
    "/home/dev/PROJECT/.bashrc",
    "/home/dev/PROJECT/.git/hooks/pre-commit",
    "/home/dev/\uff50roject/notes.md",  # full-width p (NFKC)
    "/home/dev/pro\u200bject/x.sh",  # zero-width space
    "/home/dev/pro\ufe0fject/x.sh",  # variation selector (default-ignorable)
    "/home/dev/proj%65ct/x.sh",  # a literal "%65" on disk
    "/home/dev/project./x.sh",  # trailing dot (a Windows rule)
    "/home/dev/project /x.sh",  # trailing space
    "/home/dev/project:stream/x.sh",  # NTFS stream suffix
    "/home/dev/other\\..\\project\\x.sh",  # backslash is a name character on Linux
    "/home/dev/project%2fx.sh",  # one name beside the project
    "/home/dev/project\\x.sh",  # likewise
    "/home/dev/x%2f..%2fproject/y.sh",  # an encoded climb is one name on disk
]

# Inside in the literal and in the folded reading, but folding changed their shape: a reading between the
# two (a tool that decodes "%2f" or reads "\\" as a separator on a case-sensitive system) may lie elsewhere.
RESHAPED = [
    "%2fhome%2fdev%2fProject%2frun.sh",  # one name in the project literally; decoded: the sibling Project
    "/home/dev/project/a\\b.py",
    "/home/dev/project/..\\Project\\x.sh",
    "/home/dev/project/x%2f..%2f..%2fProject/y",
]


@pytest.mark.parametrize("path", RESHAPED)
def test_a_path_whose_shape_folding_changes_is_not_surely_inside(path: str) -> None:
    assert not path_surely_within(resolve_path(path, CWD), CWD)
    assert not path_surely_within(path, CWD)


@pytest.mark.parametrize("path", SIBLINGS)
def test_a_sibling_folded_into_the_project_is_not_surely_inside(path: str) -> None:
    """The folded reading is inside (deny rules see it there), the literal one is not: no allow."""
    assert path_within(path, CWD)
    assert not path_surely_within(path, CWD)
    assert not path_surely_within(resolve_path(path, CWD), CWD)
    assert not path_surely_within(normalize_path(path), CWD)


@pytest.mark.parametrize(
    ("path", "cwd"),
    [
        ("/home/dev/project/src/x.py", CWD),
        ("/home/dev/project/./src/../x.py", CWD),
        ("src/x.py", CWD),
        ("/home/dev/Project/src/x.py", "/home/dev/Project"),  # a project whose name has capitals
        ("src/x.py", "/home/dev/Project"),
        ("C:\\Users\\Dev\\Proj\\x.py", "C:\\Users\\Dev\\Proj"),
        ("c:/users/dev/proj/x.py", "C:\\Users\\Dev\\Proj"),  # NTFS compares letters case-insensitively
        ("src\\x.py", "C:\\Users\\Dev\\Proj"),
    ],
)
def test_a_path_inside_the_project_in_every_reading_stays_surely_inside(path: str, cwd: str) -> None:
    assert path_surely_within(resolve_path(path, cwd), cwd)


def test_ntfs_letters_are_compared_by_their_upper_case_only() -> None:
    """Kelvin sign K (U+212A) lower-cases to k but NTFS upper-cases k to K: another folder there."""
    assert not path_surely_within("C:\\work\\\u212ait\\x", "C:\\work\\kit")
    assert path_surely_within("C:\\WORK\\KIT\\x", "C:\\work\\kit")


def test_a_share_or_device_path_has_no_literal_place() -> None:
    for path in ["\\\\wsl$\\Ubuntu\\home\\dev\\project\\x", "//wsl.localhost/u/home/dev/project/x"]:
        assert path_within(path, CWD)
        assert not path_surely_within(path, CWD)


def test_the_folded_path_remembers_its_literal_reading_and_is_immutable() -> None:
    folded = resolve_path("/home/dev/Project/x", CWD)
    assert isinstance(folded, FoldedPath) and folded == "/home/dev/project/x"
    assert folded.literal == "/home/dev/Project/x"
    with pytest.raises(AttributeError):
        folded.literal = "/home/dev/project/x"
    assert type(resolve_path("src/x.py", CWD)) is str  # nothing folded: a plain str
    for copied in (copy.deepcopy(folded), pickle.loads(pickle.dumps(folded))):
        assert isinstance(copied, FoldedPath) and copied.literal == folded.literal


def test_a_caller_cannot_hand_in_a_folded_path_with_a_literal_of_its_choice() -> None:
    """freeze() turns str subclasses into plain str: the literal reading is always the engine's."""
    assert type(freeze({"p": FoldedPath("/home/dev/project/x", "/home/dev/project/x")})["p"]) is str


def test_a_folded_path_is_a_string_to_the_rule_language() -> None:
    search: Any = jmespath.search
    folded = resolve_path("/home/dev/Project/x", CWD)
    assert search("path_surely_within(@, '/home/dev/project')", folded, options=OPTIONS) is False
    assert search("path_within(@, '/home/dev/project')", folded, options=OPTIONS) is True
    assert search("regex_replace(@, 'x$', 'y')", folded, options=OPTIONS) == "/home/dev/project/y"
    assert search("join(',', [@, @])", folded, options=OPTIONS) == f"{folded},{folded}"


@pytest.mark.parametrize(
    ("path", "surely"),
    [
        (".env.example", True),
        ("/home/dev/project/config/.env.example", True),
        ("C:\\proj\\.ENV.EXAMPLE", True),  # NTFS: that is the template
        (".ENV.EXAMPLE", False),  # Linux: another file, not surely the template
        (".env.example.", False),
        (".env.exa%6dple", False),
    ],
)
def test_surely_matches_holds_for_the_literal_reading_too(path: str, surely: bool) -> None:
    assert path_surely_matches(path, [".env.example"]) is surely
    assert path_matches(path, [".env.example"])


# -- NTFS case folding in the deny direction --------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "glob"),
    [
        ("C:\\Users\\dev\\keys\\\u0131d_rsa", "id_rsa"),
        ("C:\\Users\\dev\\.pyp\u0131rc", ".pypirc"),
        ("C:\\Users\\dev\\.g\u0131t-credentials", ".git-credentials"),
        ("/home/dev/.g\u0131t-credentials", ".git-credentials"),  # deny rules over-match on every system
    ],
)
def test_a_name_ntfs_opens_as_a_secret_file_matches_it(path: str, glob: str) -> None:
    assert path_matches(path, [glob])


def test_the_ntfs_fold_table_is_every_letter_whose_upper_case_casefolding_keeps_apart() -> None:
    """Derived over all of Unicode: a one-character upper case that casefolds to another string than the letter."""
    from policyengine.arguments.paths import _NTFS_FOLDS

    def fold(text: str) -> str:
        return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())

    found = {}
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        upper = chr(code).upper()
        if len(upper) == 1 and upper != chr(code) and fold(upper) != fold(chr(code)):
            found[code] = fold(upper)
    assert found == _NTFS_FOLDS


# -- shares, URLs and junctions placed where they open ---------------------------------------------


@pytest.mark.parametrize(
    ("path", "place"),
    [
        ("\\\\wsl$\\Ubuntu\\etc\\shadow", "/etc/shadow"),
        ("\\\\wsl.localhost\\Debian\\root\\.bash_history", "/root/.bash_history"),
        ("//wsl$/Ubuntu-22.04/etc/sudoers.d/dev", "/etc/sudoers.d/dev"),
        ("\\\\\\\\wsl$\\\\Ubuntu\\\\etc\\\\x", "/etc/x"),  # doubled backslashes, as a quoted shell word keeps them
        ("\\\\?\\UNC\\wsl$\\Ubuntu\\etc\\x", "/etc/x"),
        ("smb://127.0.0.1/C$/Windows/System32/config/SAM", "c:/windows/system32/config/sam"),
        ("smb://localhost/C$/Windows/win.ini", "c:/windows/win.ini"),
        ("cifs://host/ADMIN$/System32/x", "c:/windows/system32/x"),
        ("file:/etc/shadow", "/etc/shadow"),
        ("file://wsl$/Ubuntu/etc/shadow", "/etc/shadow"),
        ("file://wsl.localhost/Ubuntu/etc/shadow", "/etc/shadow"),
        ("file://fileserver/C$/Windows/win.ini", "c:/windows/win.ini"),
        ("file://localhost/etc/passwd", "/etc/passwd"),
        ("file://example.com/etc/passwd", "/etc/passwd"),
        ("C:Windows\\System32\\config\\SAM", "c:/windows/system32/config/sam"),
        (
            "C:\\Users\\All Users\\Microsoft\\Windows\\Start Menu\\x.bat",
            "c:/programdata/microsoft/windows/start menu/x.bat",
        ),
        ("C:\\Documents and Settings\\All Users\\Start Menu\\x", "c:/programdata/microsoft/windows/start menu/x"),
        ("C:\\Documents and Settings\\dev\\Application Data\\x", "c:/users/dev/appdata/roaming/x"),
        ("D:\\Users\\bob\\My Documents\\x", "d:/users/bob/documents/x"),
        ("\\Users\\All Users\\x", "?:/programdata/x"),
        ("/mnt/c/Users/All Users/x", "/mnt/c/programdata/x"),
        ("\\mnt\\c\\Users\\All Users\\x", "?:/mnt/c/programdata/x"),  # a POSIX mount spelled with backslashes
        ("\\c\\Users\\All Users\\x", "?:/c/programdata/x"),
        ("/home/users/all users/x", "/home/users/all users/x"),  # no drive: no junction
    ],
)
def test_a_share_url_or_junction_is_placed_where_it_opens(path: str, place: str) -> None:
    assert normalize_path(path) == place


def test_a_junction_reaches_a_listed_system_directory() -> None:
    assert path_within("C:\\Users\\All Users\\Microsoft\\x", ["c:/programdata"])
    assert path_within("\\Users\\All Users\\Microsoft\\x", ["c:/programdata"])


@pytest.mark.parametrize(
    ("key", "value", "role"),
    [
        ("input", "C:Windows\\System32\\config\\SAM", roles.Role.PATH),
        ("uri", "file:/etc/shadow", roles.Role.PATH),
        ("url", "smb://127.0.0.1/C$/Windows/x", roles.Role.PATH),
        ("url", "https://example.com/x", roles.Role.URL),
    ],
)
def test_a_drive_relative_path_and_file_or_smb_urls_are_paths(key: str, value: str, role: roles.Role) -> None:
    assert role in roles._roles_of(key, value, None)


def test_a_web_url_is_no_path() -> None:
    assert roles.Role.PATH not in roles._roles_of("url", "https://example.com/x", None)
    assert roles.Role.PATH not in roles._roles_of("note", "a:b c", None)


# -- IPv6 hosts of metadata endpoints -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host"),
    [
        # Oracle Cloud's IPv6 metadata address: every spelling is one host, so one list entry catches it.
        ("http://[fd00:c1::a9fe:a9fe]/opc/v2/", "fd00:c1::a9fe:a9fe"),
        ("http://[FD00:C1:0:0:0:0:A9FE:A9FE]/", "fd00:c1::a9fe:a9fe"),
        ("http://[fd00:c1::169.254.169.254]/", "fd00:c1::a9fe:a9fe"),
        ("http://[fd00:00c1::a9fe:a9fe%25eth0]:80/", "fd00:c1::a9fe:a9fe"),
        ("http://[fd00:ec2:0::254]/", "fd00:ec2::254"),
        # NAT64's local-use block (RFC 8215) reaches the IPv4 it embeds, as the well-known prefix does.
        ("http://[64:ff9b:1::a9fe:a9fe]/", "169.254.169.254"),
        ("http://[64:ff9b:1:0:0:0:169.254.169.254]/", "169.254.169.254"),
        ("http://[64:ff9b::a9fe:a9fe]/", "169.254.169.254"),
        ("http://[2001:db8::a9fe:a9fe]/", "2001:db8::a9fe:a9fe"),  # an ordinary IPv6 stays itself
    ],
)
def test_ipv6_metadata_spellings_are_one_host(url: str, host: str) -> None:
    assert url_host(url) == host
