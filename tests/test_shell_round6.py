"""Round six of issue 22 (set E, reading commands): tests/data/shell_words_round6.yaml and the tables behind it.

Each class is tested by its table, row by row: git's safety switches turned off on the line
(GIT_SAFETY_KEYS, read in Command.lines), commands run in a container or pod (SUBCOMMAND_WRAPPERS),
paths in a program's environment, patches on standard input (PATCH_PROGRAMS), xargs' and
parallel's input (STDIN_COMMANDS), files named in SQL (SQL_FILE_ACCESS) and eval options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jmespath
import pytest

from policyengine.arguments import shell_programs as table
from policyengine.arguments.shell import CommandError, parse_command
from policyengine.language.functions import OPTIONS
from support import check_shell_word_case, load_shell_word_cases

CASES_FILE = Path(__file__).parent / "data" / "shell_words_round6.yaml"
CASE_KEYS = {"command", "programs", "has_operands", "not_operands", "lines", "not_lines", "unknown"}


CASES = load_shell_word_cases(CASES_FILE, CASE_KEYS, 50)


def search(expression: str, document: Any) -> Any:
    """Evaluate a rule expression with the engine's functions."""
    return jmespath.search(expression, document, options=OPTIONS)


@pytest.mark.parametrize("case", CASES, ids=[repr(case["command"])[:60] for case in CASES])
def test_round6_case(case: dict[str, Any]) -> None:
    check_shell_word_case(case)


@pytest.mark.parametrize("key", sorted(table.GIT_SAFETY_KEYS))
@pytest.mark.parametrize("value", ["false", "no", "off", "0", "", "maybe"])
def test_every_safety_key_set_false_spells_its_option(key: str, value: str) -> None:
    """Each GIT_SAFETY_KEYS row, set to any false or unknown value by -c, gives the subcommand with its option."""
    subcommand, option = table.GIT_SAFETY_KEYS[key]
    lines = search("commands(@)", {"arguments": {"command": f'git -c "{key}={value}" {subcommand} -d'}})
    assert f"git {subcommand} -d {option}" in lines


def test_a_safety_key_set_to_an_expansion_is_unknown() -> None:
    with pytest.raises(CommandError):
        parse_command('git -c "clean.requireForce=$X" clean -d')


@pytest.mark.parametrize("key", sorted(table.GIT_SAFETY_KEYS))
@pytest.mark.parametrize("value", ["true", "yes", "on", "1"])
def test_a_safety_key_left_on_adds_no_option(key: str, value: str) -> None:
    subcommand, option = table.GIT_SAFETY_KEYS[key]
    assert not any(line.endswith(option) for line in parse_command(f"git -c {key}={value} {subcommand} -d").lines)


@pytest.mark.parametrize("program", sorted(table.CONTAINER_EXEC_PROGRAMS))
def test_every_container_program_runs_the_command_of_exec(program: str) -> None:
    """`PROGRAM exec TARGET -- psql -c SQL`: psql is a program of the line for each row."""
    assert "psql" in parse_command(f"{program} exec target -- psql -c 'DROP TABLE t'").programs
    assert parse_command(f"{program} logs target").programs == (program,)


@pytest.mark.parametrize("program", sorted(table.PATCH_PROGRAMS))
def test_every_patch_program_writes_the_files_of_its_patch(program: str) -> None:
    assert "/etc/hosts" in parse_command(f"{program} -p0 <<< '+++ /etc/hosts'").operands


@pytest.mark.parametrize("program", sorted(table.STDIN_COMMANDS))
def test_every_stdin_command_runner_runs_its_literal_input(program: str) -> None:
    assert "rm" in parse_command(f"echo 'rm -rf x' | {program}").programs


@pytest.mark.parametrize(
    "sql",
    ["COPY t TO '/etc/x'", "ATTACH '/etc/x' AS y", "select * from file('/etc/x')", "EXPORT DATABASE '/etc/x'",
     "select readfile('/etc/x')", "VACUUM INTO '/etc/x'"],
)  # fmt: skip
def test_sql_that_opens_files_names_its_literals(sql: str) -> None:
    assert table.SQL_FILE_ACCESS.search(sql)
    assert "/etc/x" in parse_command(f'duckdb -c "{sql}"').operands


@pytest.mark.parametrize("sql", ["select '/etc/x'", "insert into t values ('/etc/x')", "select * from copyright"])
def test_sql_without_file_access_names_no_literal(sql: str) -> None:
    assert "/etc/x" not in parse_command(f'psql -c "{sql}"').operands


@pytest.mark.parametrize("program", sorted(table.METADATA_CLIENTS))
def test_every_metadata_client_names_its_endpoint(program: str) -> None:
    """A METADATA_CLIENTS program's endpoint is one of urls(@), so the metadata red lines meet it."""
    urls = search("urls(@)", {"arguments": {"command": f"{program} --all"}})
    assert table.METADATA_CLIENTS[program] in urls
