"""What a command writes (written(@)), name lists, implicit cwd searches and ~NAME homes (round twelve)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine.arguments import paths
from policyengine.arguments.shell import parse_command
from policyengine.language import functions

CWD = "/home/dev/project"


def _view(command: str, what: str, cwd: str = CWD) -> list[str]:
    """One role view of a Bash call."""
    return functions._by_role({"name": "Bash", "cwd": cwd, "arguments": {"command": command}}, what)


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("cat a 2>/x/y", ["/x/y"]),
        ("cat a 9>>/x/y", ["/x/y"]),
        ("cat a &>/x/y", ["/x/y"]),
        ("cat a 1>|/x/y", ["/x/y"]),
        ("cat a 2>&1", []),
        ("cp a b /x/dest", ["/x/dest"]),
        ("cp -t /x/dir a b", ["/x/dir"]),
        ("cp --target-directory=/x/dir a", ["/x/dir"]),
        ("mv --target-dir /x/dir a", ["/x/dir"]),
        ("install -m 755 shim /x/bin/git", ["/x/bin/git"]),
        ("curl -o /x/out https://h.example/a", ["/x/out"]),
        ("wget -qO/x/out https://h.example/a", ["/x/out"]),
        ("gcc -shared -o /x/lib.so a.c", ["/x/lib.so"]),
        ("openssl enc -in a -out /x/out", ["/x/out"]),
        ("sort -o /x/out /y/in", ["/x/out"]),
        ("dd if=/y/in of=/x/out", ["/x/out"]),
        ("make install DESTDIR=/x/root", ["/x/root"]),
        ("pip install --prefix=/x/p pkg", ["/x/p"]),
        ("xxd -r -p in.hex /x/out", ["/x/out"]),
        ("sed -i s/a/b/ /x/f", ["/home/dev/project/s/a/b", "/x/f"]),
        ("tar -xzf a.tgz -C /x/dir", ["/x/dir"]),
        ("tar xzf a.tgz", [CWD]),
        ("tar tzf /y/a.tgz", []),
        ("tar czf /x/a.tgz src", ["/x/a.tgz"]),
        ("unzip a.zip -d /x/dir", ["/x/dir"]),
        ("unzip -l a.zip", []),
        ("7z x a.7z -o/x/dir", ["/x/dir"]),
        ("cat /y/in", []),
        ("grep -o pat /y/in", []),
        ("cp /./x//y/../z a", ["/home/dev/project/a"]),
        ("cp a /./x//y/../z", ["/x/z"]),
        ("cd /x && cp a b", ["/home/dev/project/b", "/x/b"]),
        ("cp a /x/{p,q}/b", ["/x/p/b", "/x/q/b"]),
        ("git apply fix.patch", [CWD]),
        ("git reset --hard origin/main", [CWD]),
        ("git reset --hard", []),
        ("git reset --soft HEAD~1", []),
        ("git apply --check fix.patch", []),
        ("git checkout origin/x -- .", [CWD]),
    ],
)
def test_written_paths(command: str, written: list[str]) -> None:
    assert sorted(_view(command, "written")) == sorted(written)


@given(st.sampled_from(["cp a", "install -m 644 a", "ln -sf a", "mv a"]), st.sampled_from(["/./", "//", "/tmp/../"]))
def test_a_destination_is_written_whatever_its_dot_spelling(program: str, spelling: str) -> None:
    """Dot segments, doubled slashes and climbs are resolved before a written place is matched."""
    assert _view(f"{program} {spelling}opt/homebrew/bin/git", "written") == ["/opt/homebrew/bin/git"]


@given(
    st.sampled_from(["cat", "head -n 3", "grep -o x", "wc -l", "diff", "ls -la", "stat"]),
    st.lists(st.text(alphabet="abcdefghij./-_~", min_size=1, max_size=12), max_size=4),
)
def test_a_reader_with_no_redirection_writes_nothing(program: str, words: list[str]) -> None:
    """Only redirections and the table's writers write: a reader's words are never written places."""
    try:
        parsed = parse_command(" ".join([program, *words]))
    except ValueError:
        return
    assert parsed.writes == ()


@pytest.mark.parametrize(
    ("command", "listed"),
    [
        ("tar czfT /tmp/b.tgz names.txt", True),
        ("tar -czf /tmp/b.tgz -T names.txt", True),
        ("tar -czf /tmp/b.tgz --files names.txt", True),
        ("tar -czf /tmp/b.tgz --files-fr=names.txt", True),
        ("zip -q --names-stdin /tmp/e.zip", True),
        ("xargs -a names.txt cat", True),
        ("xargs -anames.txt cat", True),
        ("xargs --arg-file=names.txt tar -czf /tmp/b.tgz", True),
        ("du --files0-fr=names0.txt -b", True),
        ("xargs -a ids.txt -n1 echo", False),
        ("tar cvf out.tar src", False),
        ("tar -czf out.tgz --exclude-from=.tarignore src", False),
        ("tar -czf out.tgz --file-mode=644 src", False),
    ],
)
def test_name_lists_by_getopt_grammar(command: str, listed: bool) -> None:
    lines = parse_command(command).lines
    assert any(line.endswith(" --files-from=-") for line in lines) is listed


@pytest.mark.parametrize(
    ("command", "cwd_searched"),
    [
        ("grep -r KEY", True),
        ("grep -rn --include=*.py KEY", True),
        ("rg -i secret", True),
        ("rg -t py secret", True),
        ("ag -u password", True),
        ("git grep --no-index -e token", True),
        ("timeout 5 grep -R token", True),
        ("sudo -u root rg token", True),
        ("grep KEY", False),
        ("rg secret src", False),
        ("grep -r KEY lib", False),
    ],
)
def test_a_tree_search_with_no_file_searches_the_cwd(command: str, cwd_searched: bool) -> None:
    assert ("/home/ops" in _view(command, "paths", "/home/ops")) is cwd_searched


@pytest.mark.parametrize(
    ("path", "resolved"),
    [
        ("~sys/../usr/bin/sudo", "~sys/../usr/bin/sudo"),
        ("~messagebus/../../etc/sudoers", "~messagebus/../../etc/sudoers"),
        ("~+/..", "/home/dev"),
        ("~+/src", "/home/dev/project/src"),
        ("./~bin/README", "/home/dev/project/~bin/readme"),
        ("~/x/../y", "~/y"),
    ],
)
def test_tilde_homes(path: str, resolved: str) -> None:
    assert paths.resolve_path(path, CWD) == resolved


def test_a_climb_out_of_another_users_home_is_unknown() -> None:
    assert paths.is_unknown(paths.resolve_path("~daemon/../sbin/init", CWD))
    assert not paths.is_unknown(paths.resolve_path("./~daemon/sbin", CWD))


def test_written_is_empty_without_a_command() -> None:
    call: dict[str, Any] = {"name": "Write", "cwd": CWD, "arguments": {"file_path": "/x", "content": "y"}}
    assert functions._by_role(call, "written") == []


@pytest.mark.xfail(strict=True, reason="rsync drops a quoted ${HOME:?}/ source: asked, not refused")
def test_an_rsync_of_a_parameter_expanded_home_is_known_limit() -> None:
    call: dict[str, Any] = {"name": "Bash", "cwd": CWD, "arguments": {"command": 'rsync -a "${HOME:?}/" h.example:h/'}}
    assert any(path.startswith("${home") for path in functions._by_role(call, "paths"))


@pytest.mark.xfail(
    strict=True, reason="root_level_files are shapes (regexes): a glob spelling of /vmlinuz is no such shape"
)
def test_a_glob_spelling_of_a_root_file_is_known_limit() -> None:
    written = _view("tac kernel.img 2>/vmlinu?", "written")
    assert any(path == "/vmlinuz" for path in written)
