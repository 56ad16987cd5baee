"""Round eleven (set I, j11-shell): filter keys' globs, shells' names, own folders and options that run commands.

A filter key holding a file glob, a shell's name under a shell key, a tool's own folder by its
key's last word, and options named for a command read for every program.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from policyengine.arguments import roles, shell
from policyengine.arguments import shell_programs as table
from policyengine.language import functions


def _roles(arguments: dict[str, object]) -> dict[str, list[object]]:
    """The role values found in arguments, by role name (only the roles that found any)."""
    found = roles.collect_all(arguments)
    return {role.value: values for role, values in found.values.items() if values}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("filter", "*.tfstat?"),
        ("only", "*.en[v]"),
        ("match", ".en?"),
        ("filters", ".env*"),
        ("file_select", ".netr?"),
        ("restrictTo", "id_rsa*"),
        ("match", " .en? "),
        ("name", ".en?"),
        ("file_ext", "*.pe[m]"),
    ],
)
def test_a_filter_key_holding_a_file_glob_is_a_glob(key: str, value: str) -> None:
    """`{filter: "*.tfstat?"}` selects the files it meets, as a glob key's value does."""
    assert value in _roles({key: value}).get("glob", [])


@pytest.mark.parametrize(
    ("key", "value"),
    [("filter", "status:open"), ("only", "mine"), ("match", "whole word"), ("filter", "a * b"), ("query", "*.env")],
)
def test_a_filter_with_no_wildcard_or_with_a_space_is_no_glob(key: str, value: str) -> None:
    """A query (`status:open`, `a * b`) or a content key's text is not read as files."""
    assert "glob" not in _roles({key: value})


_WORD = st.text(alphabet="abcdefghij.*?[]-_", min_size=1, max_size=12)


@given(_WORD, _WORD)
def test_a_filter_value_with_a_space_inside_is_never_a_glob(first: str, second: str) -> None:
    """Property: a value with a blank between two words is a query under a filter key, never files."""
    # `[.? ]` is YAML's flow sequence of `.?`, `- ??` a block sequence of `??` and `? ??` a mapping's
    # key (structured text is read, round eleven): those are no query.
    assume(not first.startswith("[") and first not in ("-", "?"))
    assert "glob" not in _roles({"filter": f"{first} {second}"})


@pytest.mark.parametrize("name", ["bash", "zsh", "sh", "/bin/bash", "/usr/bin/fish", "pwsh", "powershell.exe", "cmd"])
@pytest.mark.parametrize("key", ["shell", "shell_type", "interpreter"])
def test_a_bare_shell_name_under_a_shell_key_is_no_command(key: str, name: str) -> None:
    """`{input: "ls -la\\n", shell: bash}`: the shell that reads the typed text is named, nothing is run by it."""
    found = _roles({"input": "ls -la\n", key: name})
    assert name not in found.get("command", [])


@given(st.sampled_from(["bash", "zsh", "/bin/sh"]), st.text(alphabet="abc -'/", min_size=1, max_size=16))
def test_a_shell_key_with_more_than_a_name_stays_a_command(name: str, rest: str) -> None:
    """Property: a shell key's value with words after the name (`bash -c ...`) is a command as before."""
    value = f"{name} {rest.strip() or 'x'}"
    assert value in _roles({"shell": value}).get("command", [])


def test_a_program_name_other_than_a_shell_under_shell_stays_a_command() -> None:
    """`{shell: sudo}` runs sudo, whatever the key's usual meaning."""
    assert _roles({"shell": "sudo"}).get("command") == ["sudo"]


@pytest.mark.parametrize(
    ("key", "base"),
    [
        ("mount", True),
        ("mountpoint", True),
        ("chroot", True),
        ("install_prefix", True),
        ("target_dir", True),
        ("output_folder", True),
        ("cwd", True),
        ("build_context", True),
        ("volume", True),
        ("file", False),
        ("mount_options", False),
        ("path", False),
    ],
)
def test_a_key_whose_last_word_names_a_folder_is_a_tools_own_folder(key: str, base: bool) -> None:
    """read_file {mount: /, file: boot/grub/grub.cfg} reads the file under the mount."""
    assert functions._own_base_key(key) is base


def test_a_relative_path_is_read_from_a_mount_too() -> None:
    """The relative file is resolved against the session's cwd and against the tool's own folder."""
    document = {"arguments": {"mount": "/", "file": "boot/grub/grub.cfg"}, "cwd": "/workspace"}
    assert "/boot/grub/grub.cfg" in functions._by_role(document, "paths")


# Shell builtins that declare variables run nothing of an option's value.
_DECLARERS = frozenset({"[", "declare", "export", "local", "readonly", "typeset", "unset"})


@pytest.mark.parametrize(
    "program",
    sorted(p for p in table.PLAIN_PROGRAMS - _DECLARERS if p not in table.GRAMMARS and p not in table.TEXT_PROGRAMS),
)
def test_every_plain_program_runs_an_option_named_for_a_command(program: str) -> None:
    """Property over the plain list: `P --init-hook='rm -rf data'` runs rm (RUNNER_OPTION is read for every program)."""
    assert "rm" in shell.parse_command(f"{program} --init-hook='rm -rf data' x").programs


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("pylint --init-hook 'rm -rf data' src", "rm"),
        ("sort --compress-program='shred -u x' big.txt", "shred"),
        ("install --strip-program='sudo id' a.out /tmp/x", "sudo"),
        ("sort --compress-program=gzip big.txt", "gzip"),
    ],
)
def test_an_option_named_for_a_command_runs_its_value(command: str, program: str) -> None:
    """Attached or as the next word, the value is a command line of its own."""
    assert program in shell.parse_command(command).programs


def test_an_option_value_that_is_no_command_line_makes_the_command_unknown() -> None:
    """pylint's hook is Python: text the shell cannot read fails the rules closed, as for an unknown program."""
    with pytest.raises(shell.CommandError):
        shell.parse_command("pylint --init-hook=\"import shutil; shutil.rmtree('data')\" src")


def test_options_after_a_double_dash_are_operands() -> None:
    """`ls -- --exec=x` names a file called --exec=x: nothing runs."""
    assert shell.parse_command("ls -- '--exec=rm -rf x'").programs == ("ls",)
