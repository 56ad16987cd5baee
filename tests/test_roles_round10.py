"""Round ten (set I): readers of arguments the packs could not place."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from policyengine.arguments.roles import Role, collect_all, key_roles
from policyengine.language import functions


def _paths(arguments: dict[str, object], cwd: str | None = "/w") -> list[str]:
    """paths(@) of a call document."""
    return list(functions._by_role({"arguments": arguments, "cwd": cwd}, "paths"))


def test_scheme_less_value_under_url_key_is_a_path() -> None:
    """A URL-named key's value with no scheme is a path too; a URL stays only a URL."""
    found = collect_all({"uri": "/etc/hosts", "url": "https://a.example/x"})
    assert "/etc/hosts" in found.values[Role.PATH]
    assert "https://a.example/x" not in found.values[Role.PATH]


def test_path_shaped_keys_are_paths() -> None:
    """A rooted, dotfile or slash-joined key is a path; a word key is not."""
    found = collect_all({"files": {"/etc/cron.d/job": "x", ".env": "y", "src/a.py": "z", "plain": "w"}})
    assert {"/etc/cron.d/job", ".env", "src/a.py"} <= set(found.values[Role.PATH])
    assert "plain" not in found.values[Role.PATH]


def test_program_key_beside_args_is_one_argv() -> None:
    """{bin: rm, args: [...]} is the argv [rm, ...], read once, at any depth."""
    assert collect_all({"spec": {"binary": "rm", "args": ["-rf", "data"]}}).argv == [["rm", "-rf", "data"]]
    assert collect_all({"bin": "ls", "args": ["-la"]}).argv == [["ls", "-la"]]


def test_file_filter_keys_are_globs() -> None:
    """Filter keys name file globs; a content pattern stays plain content."""
    for key in ("glob_pattern", "file_name_pattern", "include", "mask", "wildcard", "pathspec"):
        assert key_roles(key) == frozenset({Role.GLOB}), key
    assert key_roles("pattern") == frozenset({Role.TEXT})


def test_json_in_request_body_is_read_but_not_file_content() -> None:
    """JSON under body/params_text is read as arguments; under content it is what a writer writes."""
    assert "/etc/shadow" in collect_all({"params_text": '["/etc/shadow"]'}).values[Role.PATH]
    assert collect_all({"content": '{"path": "/etc/shadow"}'}).values[Role.PATH] == []


def test_tool_own_cwd_is_a_base() -> None:
    """A relative path is also read against the tool's own cwd argument."""
    found = _paths({"command": "cat etc/sudoers", "cwd": "/"})
    assert "/etc/sudoers" in found and "/w/etc/sudoers" in found


def test_paths_outside_cwd() -> None:
    """Inside the cwd is placed; without a cwd only rooted and unknown paths are outside."""
    document = {"arguments": {"a": "/w/x", "b": "/etc/x"}, "cwd": "/w"}
    assert functions._by_role(document, "paths_outside_cwd") == ["/etc/x"]
    assert functions._by_role({"arguments": {"path": "a/b", "p": "/etc/x"}}, "paths_outside_cwd") == ["/etc/x"]


@given(st.lists(st.text(alphabet="abcxyz._-", min_size=1, max_size=8), min_size=1, max_size=4))
def test_rooted_keys_always_read(parts: list[str]) -> None:
    """Property: any rooted key is among the paths, whatever its value."""
    key = "/" + "/".join(parts)
    assert key in collect_all({"files": {key: {"mode": 1}}}).values[Role.PATH]


def test_option_runs_command_in_plain_readers() -> None:
    """split --filter and bat --pager run their value as a command."""
    from policyengine.arguments.shell import parse_command

    assert "rm" in parse_command("split -n l/1 --filter='xargs rm -rf' paths.txt").programs
    assert "rm" in parse_command("bat --paging=always --pager='rm -rf build' README.md").programs
    assert parse_command("split -l 100 big.csv part_").programs == ("split",)
