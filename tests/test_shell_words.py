"""What bash makes of a command's words: globs, braces, cwd moves, program operand forms (tests/data/shell_words.yaml).

The property tests draw up to 150 cases each; POLICYENGINE_TEST_SCALE=10 draws ten times as many
(tests/support.py, scaled).
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jmespath
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from jmespath.exceptions import JMESPathError

from policyengine.arguments import shell
from policyengine.arguments.paths import PathPattern
from policyengine.arguments.shell import CommandError, parse_command
from policyengine.language.functions import OPTIONS
from support import scaled

CASES_FILE = Path(__file__).parent / "data" / "shell_words.yaml"
PROGRAMS_FILE = Path(__file__).parent / "data" / "shell_words_programs.yaml"  # programs the reader did not know
CASE_KEYS = {"command", "programs", "operands", "has_operands", "not_operands", "urls", "unknown"}


def _load_cases(path: Path = CASES_FILE, minimum: int = 80) -> list[dict[str, Any]]:
    """The cases of one tests/data/shell_words*.yaml file; a missing or malformed file fails collection."""
    cases = yaml.safe_load(path.read_text(encoding="utf-8"))  # missing file: an error, not a skip
    if not isinstance(cases, list) or len(cases) < minimum:
        raise AssertionError(f"{path.name} must hold a list of at least {minimum} cases")
    for case in cases:
        if not isinstance(case, dict) or not isinstance(case.get("command"), str) or set(case) - CASE_KEYS:
            raise AssertionError(f"malformed case in {path.name}: {case!r}")
        if case.get("unknown") is True and set(case) != {"command", "unknown"}:
            raise AssertionError(f"an unknown case has nothing else to check: {case!r}")
        if not case.get("unknown") and "programs" not in case:
            raise AssertionError(f"a case must list programs or be unknown: {case!r}")
    return cases


CASES = _load_cases() + _load_cases(PROGRAMS_FILE, 100)


def _expected(item: Any) -> tuple[str, str]:
    """A case's operand as (kind, text): a string is a plain str operand, {glob: TEXT} a PathPattern."""
    if isinstance(item, dict) and set(item) == {"glob"}:
        return "glob", str(item["glob"])
    if isinstance(item, (str, int)):
        return "str", str(item)
    raise AssertionError(f"an operand is a string or {{glob: TEXT}}, not {item!r}")


def _reported(operand: str) -> tuple[str, str]:
    """An operand parse_command reported, as (kind, text)."""
    return ("glob" if isinstance(operand, PathPattern) else "str", str(operand))


@pytest.mark.parametrize("case", CASES, ids=[repr(case["command"])[:60] for case in CASES])
def test_shell_words_case(case: dict[str, Any]) -> None:
    if case.get("unknown"):
        with pytest.raises(CommandError):
            parse_command(case["command"])
        return
    command = parse_command(case["command"])
    operands = [_reported(operand) for operand in command.operands]
    assert list(command.programs) == case["programs"], command
    if "operands" in case:
        assert operands == [_expected(item) for item in case["operands"]], command
    for item in case.get("has_operands", []):
        assert _expected(item) in operands, command
    for text in case.get("not_operands", []):
        assert text not in command.operands, command
    assert list(command.urls) == case.get("urls", []), command


def test_the_case_file_catches_bypasses_and_keeps_look_alikes() -> None:
    commands = [case["command"] for case in CASES]
    assert len(commands) == len(set(commands)), "a command is listed twice"
    assert sum(1 for case in CASES if case.get("unknown")) >= 6
    assert sum(1 for case in CASES if case.get("urls")) >= 15


# -- properties --------------------------------------------------------------------------------

NAME = st.builds(str.__add__, st.sampled_from("abxyz"), st.text(alphabet="abcxyz._-", max_size=5))
GLOB_WORD = st.builds(
    lambda head, glob, tail: head + glob + tail, NAME, st.sampled_from(["*", "?", "[ab]", "[!.]*"]), NAME
)


@settings(max_examples=scaled(150), deadline=None)
@given(GLOB_WORD)
def test_a_word_with_an_unquoted_glob_is_never_a_plain_str(word: str) -> None:
    operands = parse_command(f"cat {word}").operands
    assert operands and all(isinstance(operand, PathPattern) for operand in operands), operands


@settings(max_examples=scaled(150), deadline=None)
@given(st.text(alphabet="abc.*?[]$~{},/ ", min_size=1, max_size=12))
def test_a_single_quoted_word_reads_back_as_its_text(text: str) -> None:
    if text == "{}":
        return  # find's placeholder is never an operand (test_shell.py)
    operands = parse_command(f"cat '{text}'").operands
    assert len(operands) == 1, operands
    operand = operands[0]
    if isinstance(operand, PathPattern):
        # Every special character is bracketed, so unbracketing gives the text back.
        assert re.sub(r"\[([*?\[$~])\]", r"\1", str(operand)) == text
        assert any(char in text for char in "*?[$") or text.startswith("~")
    else:
        assert operand == text
        assert not any(char in text for char in "*?[$") and not text.startswith("~")


BRACE_WORD = st.text(alphabet="ab{},.", min_size=1, max_size=14)


@pytest.fixture(scope="module")
def bash() -> str:
    found = shutil.which("bash")
    assert found is not None, "bash is needed for the differential check"
    return found


def test_brace_expansion_matches_bash(bash: str) -> None:
    # Differential: random brace words (no glob characters, so bash prints its expansion as is).
    rng = random.Random(20261204)
    words = ["".join(rng.choice("ab{},.") for _ in range(rng.randint(1, 14))) for _ in range(scaled(300))]
    words += ["{a,b}{c,d}", "x{a,b{c,d}}y", "{a,{b,c}}", "{,a}", "{a,}", "{{a,b}}", "a{,}b", "{a}{b,c}", "},{a,b}"]
    words += ["{},a}", "x{},a}", "{a},b}", "{{},a}", "{a,{},b}", "{a{},b}", "{a,b}{}"]
    script = "".join(f"printf '%s\\n' {word}; echo ===\n" for word in words)
    run = subprocess.run([bash, "--norc", "-c", script], capture_output=True, text=True, timeout=30, check=True)
    outputs = run.stdout.split("===\n")[:-1]
    assert len(outputs) == len(words)
    checked = 0
    for word, output in zip(words, outputs, strict=True):
        if "{" in word and (word.count("{") > 6):
            continue
        try:
            command = parse_command(f"cat {word}")
        except CommandError:
            continue  # refusing is allowed
        # Empty words vanish; `{}` is find's placeholder, never an operand.
        expected = list(dict.fromkeys(line for line in output.split("\n")[:-1] if line and line != "{}"))
        assert [str(operand) for operand in command.operands] == expected, word
        checked += 1
    assert checked >= scaled(300) // 2


@settings(max_examples=scaled(150), deadline=None)
@given(st.text(alphabet="ab{},.0123456789", min_size=1, max_size=40))
def test_brace_expansion_is_capped(word: str) -> None:
    try:
        command = parse_command(f"cat {word}")
    except CommandError:
        return
    assert len(command.operands) <= shell.MAX_BRACE_WORDS


@settings(max_examples=scaled(150), deadline=None)
@given(st.text(alphabet="abc.*?[]$~{},/-", min_size=2, max_size=12), st.integers(min_value=1, max_value=11))
def test_the_one_piece_fast_path_agrees_with_the_general_reading(text: str, cut: int) -> None:
    cut = min(cut, len(text) - 1)
    for kind in (shell._BARE, shell._QUOTED):
        whole = shell._forms(((kind, text),))
        split = shell._forms(((kind, text[:cut]), (kind, text[cut:])))
        assert [(type(form), form) for form in whole] == [(type(form), form) for form in split]


@settings(max_examples=scaled(150), deadline=None)
@given(NAME, NAME)
def test_after_cd_a_relative_operand_is_also_reported_under_the_directory(directory: str, name: str) -> None:
    # NAME never starts with `-`, so every drawn command parses (no option to skip).
    for text in (f"cd {directory} && cat {name}", f"cd {directory}; cat {name}", f"(cd {directory}; cat {name})"):
        operands = parse_command(text).operands
        assert f"{directory}/{name}" in operands and name in operands, (text, operands)


def test_operands_of_a_command_before_any_cd_are_not_moved() -> None:
    assert parse_command("cat id_rsa; cd .ssh").operands == ("id_rsa", ".ssh")


# -- what the role views make of it (functions.py) -----------------------------------------------


def _call(command: str) -> dict[str, Any]:
    """A Claude Code Bash call running command."""
    return {"name": "Bash", "cwd": "/home/dev/project", "arguments": {"command": command}}


def test_urls_of_a_call_include_the_urls_its_commands_name() -> None:
    assert jmespath.search("urls(@)", _call("curl http://169.254.169.254/"), options=OPTIONS) == [
        "http://169.254.169.254/"
    ]
    assert jmespath.search("urls(@)", _call("ls -la"), options=OPTIONS) == []


def test_urls_of_a_call_whose_command_cannot_be_placed_fail_closed() -> None:
    with pytest.raises(JMESPathError):
        jmespath.search("urls(@)", _call("$CMD http://169.254.169.254/"), options=OPTIONS)


def test_paths_of_a_call_include_a_globbed_operand_resolved() -> None:
    # That it stays a PathPattern through resolve_path is the path layer's part (tests/test_path_patterns.py).
    found = jmespath.search("paths(@)", _call("cat .en? README.md"), options=OPTIONS)
    assert found == ["/home/dev/project/.en?", "/home/dev/project/readme.md"]


def test_paths_of_a_call_follow_cd() -> None:
    found = jmespath.search("paths(@)", _call("cd .ssh && cat id_rsa"), options=OPTIONS)
    assert "/home/dev/project/.ssh/id_rsa" in found
