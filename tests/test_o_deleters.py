"""Round fourteen (set L): deleters no list names, and task runners' shell strings.

A program no table knows whose subcommand is named like a deleter (shell_programs.DELETING_VERBS)
is read as rm; so is `git rm` without --cached or a dry run, and a filesystem shell's deleting
option (OPTION_DELETERS). A runner's string whose first word is quoted is read as a line, and the
secret managers' runners (SECRET_RUNNERS) run their command as a wrapper does, unless it may print
the secrets it is given. The case file is tests/adversarial/calls-o-deleters.yaml.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from policyengine.arguments import shell
from policyengine.arguments import shell_programs as table
from policyengine.arguments.shell import CommandError, parse_command

UNKNOWN_NAMES = st.from_regex(r"[a-z][a-z0-9]{2,9}(-[a-z]{2,6})?", fullmatch=True)
OPERANDS = st.lists(st.from_regex(r"[a-z0-9./_]{1,10}", fullmatch=True), max_size=3)
NOT_DELETING = ("ls", "list", "status", "info", "show", "get", "cat", "stat", "du", "snapshots")


def _unknown(name: str) -> bool:
    """Whether no table knows the program (nor any of its other names), and it is no deleter itself."""
    names = shell._program_names(name)[0]
    return not any(program in shell._NAMED_PROGRAMS for program in names) and not shell._deleting_piece(name)


def _quiet(words: list[str]) -> bool:
    """Whether no operand is itself a known program or a deleting word."""
    return not any(shell._names_known(word) or shell._deleting_piece(word) for word in words)


@settings(max_examples=40, deadline=None)
@given(UNKNOWN_NAMES, st.sampled_from(sorted(table.DELETING_VERBS)), OPERANDS)
def test_an_unknown_programs_deleting_subcommand_reads_as_rm(name: str, verb: str, operands: list[str]) -> None:
    assume(_unknown(name) and _quiet(operands) and not shell._names_known(verb))
    command = parse_command(" ".join([name, verb, *operands]))
    assert "rm" in command.programs, command
    assert set(operands) <= set(command.operands), command


@settings(max_examples=40, deadline=None)
@given(UNKNOWN_NAMES, st.sampled_from(NOT_DELETING), OPERANDS)
def test_listing_and_status_subcommands_stay_plain(name: str, verb: str, operands: list[str]) -> None:
    assume(_unknown(name) and _quiet(operands))
    command = parse_command(" ".join([name, verb, *operands]))
    assert "rm" not in command.programs, command


@settings(max_examples=40, deadline=None)
@given(UNKNOWN_NAMES, st.sampled_from(sorted(table.DELETING_VERBS)), st.sampled_from(sorted(table.KEEPING_OPTIONS)))
def test_a_keeping_option_leaves_the_files(name: str, verb: str, option: str) -> None:
    assume(_unknown(name) and not shell._names_known(verb))
    assert "rm" not in parse_command(f"{name} {verb} {option} src").programs


@pytest.mark.parametrize(
    ("line", "deletes"),
    [
        ("hg remove --force src", True),
        ("svn delete src", True),
        ("svn delete --keep-local src", False),
        ("oci os object bulk-delete --bucket-name b --force", True),
        ("wrangler r2 bucket delete b", True),
        ("qshell batchdelete b -i objects.lst", True),
        ("tool undelete x", False),
        ("tool confirm x", False),
        ("linode-cli obj rb b", True),
        ("hdfs dfs -rm -r -skipTrash /user/x", True),
        ("hadoop fs -expunge", True),
        ("hdfs dfs -ls /user/x", False),
        ("restic -r ./repo snapshots", False),
        ("mytool --pre-command shred x.txt", False),  # shred is read as shred itself
        ("mytool 'Remove the old docs'", False),
    ],
)
def test_subcommand_and_option_deleters(line: str, deletes: bool) -> None:
    assert ("rm" in parse_command(line).programs) is deletes


@pytest.mark.parametrize(
    ("line", "deletes"),
    [
        ("git rm -r -q --ignore-unmatch src docs", True),
        ("git -C /srv/app rm lib", True),
        ("git rm --cached -r build", False),
        ("git rm --ca x", False),  # parse-options takes an unambiguous prefix
        ("git rm -rn x", False),
        ("git rm --dry-run x", False),
        ("git rm -- --cached", True),  # after `--` a word is a pathspec
    ],
)
def test_git_rm_deletes_unless_cached_or_dry(line: str, deletes: bool) -> None:
    assert ("rm" in parse_command(line).programs) is deletes


@pytest.mark.parametrize(
    "line",
    [
        'npx concurrently "\\rm -rf coverage" "jest"',
        "npx concurrently \"r'm' -rf dist\" vite",
        "npx concurrently 'hg remove src' jest",
        "pm2 start 'swift delete --all'",
    ],
)
def test_a_runners_string_with_a_quoted_or_verb_first_word_is_read(line: str) -> None:
    assert "rm" in parse_command(line).programs


@pytest.mark.parametrize(
    ("line", "program"),
    [
        ("doppler run --command 'NODE_ENV=test npm test'", "npm"),
        ("doppler run -c dev -- npm test", "npm"),
        ("op run --account acme -- rm -rf build", "rm"),
        ("aws-vault exec prod -- terraform plan", "terraform"),
        ("direnv exec . make test", "make"),
    ],
)
def test_a_secret_runners_command_is_read(line: str, program: str) -> None:
    assert program in parse_command(line).programs


@pytest.mark.parametrize(
    "line",
    [
        "doppler run -- printenv",
        "doppler run --command 'echo $DB_PASSWORD'",
        "op run -- sh -c 'echo $X'",
        "aws-vault exec prod -- env",
        "op run -- ./deploy.sh",  # a script no table knows may print them
        "op run --bogus -- npm test",  # an option not listed
        "sops exec-env secrets.enc.yaml printenv",
    ],
)
def test_a_secret_runner_that_may_print_its_secrets_is_unknown(line: str) -> None:
    with pytest.raises(CommandError):
        parse_command(line)


@pytest.mark.xfail(
    strict=True,
    reason="engine: an unknown program's deleting long option (`--delete-all`) is not read as a deletion; "
    "`--rm`, `--delete` and `--purge` mean other things to too many programs (docs/security.md)",
)
def test_an_unknown_programs_deleting_option_is_not_read() -> None:
    assert "rm" in parse_command("timeshift-launcher --delete-all").programs
