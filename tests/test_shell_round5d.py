"""Round five of issue 22 (set D, reading commands): tests/data/shell_words_round5d.yaml and the tables behind it.

Each class is tested by its table, row by row: Command.lines (each argv as bash passes its words,
so a subcommand table meets `git $'\\x63lean'` and `d=cle; git ${d}an`), getopt prefixes of
deleting long flags, deferred commands (text a line writes to a script and runs), and
interpreters whose code is `$_code`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jmespath
import pytest

from policyengine.arguments import shell_programs as table
from policyengine.language.functions import OPTIONS
from support import check_shell_word_case, load_shell_word_cases

CASES_FILE = Path(__file__).parent / "data" / "shell_words_round5d.yaml"
CASE_KEYS = {"command", "programs", "has_operands", "not_operands", "lines", "not_lines", "unknown"}


CASES = load_shell_word_cases(CASES_FILE, CASE_KEYS, 50)


def search(expression: str, document: Any) -> Any:
    """Evaluate a rule expression with the engine's functions."""
    return jmespath.search(expression, document, options=OPTIONS)


@pytest.mark.parametrize("case", CASES, ids=[repr(case["command"])[:60] for case in CASES])
def test_round5d_case(case: dict[str, Any]) -> None:
    check_shell_word_case(case)


def test_commands_of_a_call_hold_the_lines_after_the_text() -> None:
    """commands(@) is the command as written, then each argv as bash passes it (no duplicates)."""
    call = {"arguments": {"command": "git $'\\x63lean' -fdx; git clean -fdx"}}
    assert search("commands(@)", call) == ["git $'\\x63lean' -fdx; git clean -fdx", "git clean -fdx"]
    assert search("commands(@)", {"arguments": {"command": "git status"}}) == ["git status"]


def test_commands_of_a_call_that_cannot_be_parsed_are_the_text_alone() -> None:
    """A command the parser refuses adds no line: the red lines that parse it refuse it."""
    assert search("commands(@)", {"arguments": {"command": "echo 'x"}}) == ["echo 'x"]


def test_long_flags_are_long_options() -> None:
    """Every LONG_FLAGS entry is a full long option: a prefix is expanded to it, never the reverse."""
    for program, flags in table.LONG_FLAGS.items():
        for flag in flags:
            assert flag.startswith("--") and len(flag) > 4, (program, flag)


@pytest.mark.parametrize("name", ["run.sh", "x.BASH", "Makefile", "GNUmakefile", "rules.mk", ".bashrc", ".profile"])
def test_script_file_names(name: str) -> None:
    assert table.SCRIPT_FILE.search(name)


@pytest.mark.parametrize("name", ["NOTES.md", "out.txt", "config.json", "passwd", "hosts", "data.csv"])
def test_data_file_names(name: str) -> None:
    assert not table.SCRIPT_FILE.search(name)
