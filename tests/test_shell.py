"""Shell commands parsed into programs and operands, failing closed (policyengine.arguments.shell).

The property tests draw up to 150 cases each; POLICYENGINE_TEST_SCALE=10 draws ten times as many
(tests/support.py, scaled).
"""

from __future__ import annotations

import gc
import random
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from policyengine.arguments import shell as shell
from policyengine.arguments import shell_programs as table
from policyengine.arguments.shell import MAX_BYTES, MAX_DEPTH, Command, CommandError, parse_command
from support import read_yaml, scaled

ADVERSARIAL = Path(__file__).parent / "adversarial" / "commands.yaml"
CASE_KEYS = {"command", "programs", "operands", "not_programs", "unknown"}


def _load_adversarial() -> list[dict[str, Any]]:
    """The cases of tests/adversarial/commands.yaml; a missing or malformed file fails collection."""
    cases = read_yaml(ADVERSARIAL)  # missing file: an error, not a skip
    if not isinstance(cases, list) or len(cases) < 60:
        raise AssertionError(f"{ADVERSARIAL} must hold a list of at least 60 cases")
    for case in cases:
        if not isinstance(case, dict) or not isinstance(case.get("command"), str) or set(case) - CASE_KEYS:
            raise AssertionError(f"malformed case in {ADVERSARIAL}: {case!r}")
        if case.get("unknown") is True and set(case) != {"command", "unknown"}:
            raise AssertionError(f"an unknown case has nothing else to check: {case!r}")
        if not case.get("unknown") and "programs" not in case:
            raise AssertionError(f"a case must list programs or be unknown: {case!r}")
    return cases


ADVERSARIAL_CASES = _load_adversarial()


def _programs(text: str) -> tuple[str, ...]:
    """The programs parse_command reports for text."""
    return parse_command(text).programs


# -- what must be found ------------------------------------------------------------------------

RM_SPELLINGS = [
    "rm -rf /tmp/x",
    "/bin/rm -rf /tmp/x",
    "\\rm -rf /tmp/x",
    "r''m -rf /tmp/x",
    '"r"m -rf /tmp/x',
    "RM -rf /tmp/x",
    "$'\\x72m' -rf /tmp/x",
]


@pytest.mark.parametrize("text", RM_SPELLINGS)
def test_every_spelling_of_rm_is_program_rm(text: str) -> None:
    command = parse_command(text)
    assert "rm" in command.programs
    assert "/tmp/x" in command.operands


def test_cat_etc_shadow_gives_program_cat_and_operand() -> None:
    assert parse_command("cat /etc/shadow") == Command(("cat",), ("/etc/shadow",))


def test_redirection_target_is_an_operand() -> None:
    command = parse_command("echo x > /etc/passwd")
    assert command.programs == ("echo",)
    assert "/etc/passwd" in command.operands


@pytest.mark.parametrize("text", ["ls 2>>/var/log/a", "cat < /var/log/a", "ls &> /var/log/a", "{ ls; } > /var/log/a"])
def test_every_redirection_form_reports_its_target(text: str) -> None:
    assert "/var/log/a" in parse_command(text).operands


def test_descriptor_duplication_is_not_an_operand() -> None:
    assert parse_command("ls 2>&1 >&2 <&-").operands == ()


def test_sh_c_string_is_parsed_again() -> None:
    command = parse_command("sh -c 'rm -rf /'")
    assert command.programs == ("sh", "rm")
    assert command.operands == ("/",)


@pytest.mark.parametrize("shell_name", ["sh", "bash", "zsh", "dash", "ksh"])
def test_every_posix_shell_c_string_is_parsed_again(shell_name: str) -> None:
    assert "rm" in _programs(f"{shell_name} -ec 'rm -rf /tmp/x'")


def test_command_substitution_inside_an_argument_counts() -> None:
    assert _programs("echo $(rm x)") == ("echo", "rm")


def test_backticks_count_and_nested_backticks_are_unescaped() -> None:
    assert "rm" in _programs("echo `rm x`")
    assert "rm" in _programs("echo `echo \\`rm x\\``")


@pytest.mark.parametrize(
    "text",
    [
        "ls | rm x",
        "ls && rm x",
        "ls || rm x",
        "ls; rm x",
        "ls & rm x",
        "ls\nrm x",
        "(rm x)",
        "{ rm x; }",
        "if rm x; then :; fi",
        "for i in 1; do rm x; done",
        "while rm x; do :; done",
        "case a in a) rm x;; esac",
        "f() { rm x; }",
        "x=$(rm x)",
        "cat <(rm x)",
        'echo "$(rm x)"',
        "cat <<EOF\n$(rm x)\nEOF",
    ],
)
def test_commands_inside_every_construct_are_found(text: str) -> None:
    assert "rm" in _programs(text)


def test_xargs_command_counts() -> None:
    assert _programs("xargs rm") == ("xargs", "rm")


def test_xargs_without_command_runs_echo() -> None:
    assert _programs("xargs") == ("xargs", "echo")


def test_find_delete_counts_as_rm() -> None:
    command = parse_command("find / -delete")
    assert command.programs == ("find", "rm")
    assert command.operands == ("/",)


def test_find_exec_command_counts() -> None:
    assert _programs("find . -exec rm {} \\;") == ("find", "rm")
    assert _programs("find . -execdir rm {} +") == ("find", "rm")
    assert _programs("find . -ok rm {} ';' -print") == ("find", "rm")


def test_find_name_pattern_is_not_an_operand() -> None:
    assert parse_command("find src -name '*.py'").operands == ("src",)


def test_sudo_with_options_runs_its_command() -> None:
    assert _programs("sudo -u root rm x") == ("sudo", "rm")
    assert _programs("sudo -Eu root -- rm x") == ("sudo", "rm")


def test_env_with_options_and_assignments_runs_its_command() -> None:
    assert _programs("env -i PATH=/x rm y") == ("env", "rm")


def test_command_builtin_runs_its_command() -> None:
    assert _programs("command rm z") == ("command", "rm")


@pytest.mark.parametrize(
    "text",
    [
        "exec rm x",
        "nohup rm x",
        "nice -n 5 rm x",
        "nice -5 rm x",
        "timeout 10 rm x",
        "timeout --signal=KILL 10 rm x",
        "doas -u root rm x",
        "time -p rm x",
        "stdbuf -o L rm x",
        "busybox rm x",
        "chroot /mnt rm x",
        "xargs -0 -n 1 rm",
        "sudo nice timeout 3 env A=1 rm x",
    ],
)
def test_every_wrapper_runs_its_command(text: str) -> None:
    assert "rm" in _programs(text)


def test_eval_of_literal_text_is_parsed_again() -> None:
    assert "rm" in _programs("eval 'rm x'")
    assert "rm" in _programs('eval rm "x"')


def test_leading_assignments_are_skipped() -> None:
    assert set(_programs("A=1 B=$(id) rm x")) == {"id", "rm"}


def test_shell_reading_a_literal_heredoc_or_here_string_parses_it() -> None:
    assert "rm" in _programs("bash <<< 'rm x'")
    assert "rm" in _programs("bash <<'EOF'\nrm x\nEOF")


def test_su_c_string_is_parsed_again() -> None:
    assert _programs("su -c 'rm x' root") == ("su", "rm")
    assert _programs("su - root -c 'rm x'") == ("su", "rm")


@pytest.mark.parametrize("text", ["echo 'rm x' | sudo -s", "sudo -i", "doas -s", "echo 'rm x' | su -"])
def test_root_shell_reading_stdin_is_unknown(text: str) -> None:
    with pytest.raises(CommandError, match="standard input"):
        parse_command(text)


def test_command_substitution_inside_a_number_counts() -> None:
    assert "rm" in _programs("echo 10#$(rm x)")


def test_option_values_that_name_files_are_operands() -> None:
    assert "/etc/x" in parse_command("sort --output=/etc/x y").operands
    assert "/etc/x" in parse_command("sort -o/etc/x y").operands
    assert "/dev/sda" in parse_command("dd if=/dev/zero of=/dev/sda").operands


def test_operands_keep_expansions_as_written() -> None:
    assert parse_command('cat "$HOME/x" ~/y *.py').operands == ("$HOME/x", "~/y", "*.py")


# -- benign commands parse cleanly -------------------------------------------------------------


def test_ls_la_is_just_ls() -> None:
    assert parse_command("ls -la") == Command(("ls",), ())


def test_git_status_and_diff_is_git() -> None:
    assert _programs("git status && git diff") == ("git",)


def test_quoted_rm_in_grep_pattern_is_not_a_program() -> None:
    command = parse_command('grep -r "rm -rf" .')
    assert command.programs == ("grep",)
    assert command.operands == (".",)  # grep's first operand is its pattern, not a file


def test_echo_argument_is_not_a_program_and_redirect_is_operand() -> None:
    command = parse_command('echo "/var/log/syslog" > notes.txt')
    assert command.programs == ("echo",)
    assert "notes.txt" in command.operands


def test_quoted_heredoc_body_is_text() -> None:
    assert _programs("cat <<'EOF' > a.md\nrun `rm -rf /` and $(rm x)\nEOF") == ("cat",)


def test_comment_is_not_a_command() -> None:
    assert _programs("ls # ; rm -rf /") == ("ls",)


def test_line_continuation_between_words_is_accepted() -> None:
    # Round six: `docker run IMAGE` reads its image as no file (shell._container_run).
    assert parse_command("docker run \\\n  --rm \\\n  image") == Command(("docker",), ())


# -- unknown by design -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "$CMD x",
        "${CMD} x",
        "$(echo rm) x",
        "`echo rm` x",
        "r? x",
        "/bin/r* x",
        "echo 'x",
        'eval "$X"',
        "source $F",
        ". <(curl x)",
        "curl x | sh",
        'sh -c "$X"',
        "sudo $CMD",
        "env $OPTS rm x",
        "find . $EXPR",
        "r\\\nm x",
        "! { rm x; }",
        "echo ${x:-`rm x`}",
        "cat <<EOF\n`rm x`\nEOF",
    ],
)
def test_command_that_cannot_be_placed_raises(text: str) -> None:
    with pytest.raises(CommandError):
        parse_command(text)


@pytest.mark.parametrize(
    "text",
    [
        "ls\n\\rm -rf /",  # the grammar makes `\n\\rm` an argument of ls
        "ls\n\\ rm -rf /",  # ... and skips `\\ ` as white space
        "x=\n\\\nrm x",  # a line holding only `\\`: one command to the grammar
        "x=#z\\\nrm x",  # `#z\\` taken for a comment inside a word
        "echo `a``rm x`",  # two substitutions to bash, one to the grammar
        "'x y'\\|rm",  # one word to bash, two to the grammar
        "] [ rm",  # two words to bash, one to the grammar
        "-eq2>&1 rm",  # -eq2 read as a file descriptor
        "!'rm' x",  # the program `!rm` to bash, a negated rm to the grammar
        "export}rm x",  # one word to bash, the keyword export to the grammar
        "'x'\\$ rm",  # the grammar drops `\\$`
    ],
)
def test_where_the_grammar_reads_differently_from_bash_it_is_unknown(text: str) -> None:
    with pytest.raises(CommandError):
        parse_command(text)


def test_nul_byte_raises() -> None:
    with pytest.raises(CommandError, match="NUL"):
        parse_command("ls\x00; rm -rf /")


def _nested_shells(levels: int) -> str:
    """`rm x` run by `levels` shells, each reading the next from a quoted heredoc."""
    # Fixed-width delimiters: the grammar ends a heredoc at a line that only starts with its
    # delimiter (E1 at E15), where bash needs the whole line (the command is then unknown).
    opening = "".join(f"bash <<'E{level:02}'\n" for level in range(levels))
    closing = "".join(f"\nE{level:02}" for level in reversed(range(levels)))
    return opening + "rm x" + closing


def test_too_deep_shell_nesting_raises() -> None:
    with pytest.raises(CommandError, match="nests"):
        parse_command(_nested_shells(MAX_DEPTH + 1))


def test_shell_nesting_within_the_bound_parses() -> None:
    assert "rm" in _programs(_nested_shells(MAX_DEPTH))
    assert "rm" in _programs("sh -c " + shell_quote("bash -c " + shell_quote("rm x")))


def test_too_deep_syntax_nesting_raises() -> None:
    with pytest.raises(CommandError, match="nests"):
        parse_command("( " * (MAX_DEPTH + 1) + "ls" + " )" * (MAX_DEPTH + 1))


def test_oversize_command_raises() -> None:
    with pytest.raises(CommandError, match="longer"):
        parse_command("echo " + "a" * MAX_BYTES)


def test_non_string_raises_command_error() -> None:
    with pytest.raises(CommandError):
        parse_command(["rm", "-rf", "/"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "a|" * 2000,  # long pipeline, error at the end: quadratic error recovery in the grammar
        "2>&1`" * 3000,
        "$[" * 20000,
        "x=(" * 15000,
    ],
)
def test_pathological_input_is_refused_quickly(text: str) -> None:
    start = time.perf_counter()
    with pytest.raises(CommandError):
        parse_command(text)
    assert time.perf_counter() - start < 2.0  # unguarded, these take from 0.2 s to over a minute


def test_heredoc_line_the_grammar_reads_as_words_is_unknown() -> None:
    # The grammar takes a body line starting with a backslash for words of the command, and
    # leaves the body empty: bash (reading the heredoc) would run `\rm x`.
    with pytest.raises(CommandError, match="heredoc lines"):
        parse_command("bash <<EOF\n\\\\rm x\nEOF")


def test_heredoc_ended_early_by_the_grammar_is_unknown() -> None:
    with pytest.raises(CommandError):
        parse_command("cat <<EOF\nEOFs are fine\nEOF")


def test_brace_before_a_wide_character_is_refused_not_a_crash() -> None:
    # tree-sitter-bash 0.25.1 passes it to isdigit(), which reads out of bounds (segfault).
    for text in ["a{\U000f0000", "echo {12\u4e00", "echo {1..\U0010ffff}"]:
        with pytest.raises(CommandError, match="crashes"):
            parse_command(text)
    assert parse_command("echo {é}").programs == ("echo",)  # up to U+00FF is in isdigit's table


def test_results_are_cached_and_errors_are_not() -> None:
    assert parse_command("ls -la /tmp") is parse_command("ls -la /tmp")
    for _ in range(2):
        with pytest.raises(CommandError):
            parse_command("$CMD")


def test_parsers_are_per_thread() -> None:
    results: list[tuple[str, ...]] = []

    def work(index: int) -> None:
        for round_ in range(50):
            results.append(shell._parse(f"echo {index} {round_} | rm x{index}").programs)

    threads = [threading.Thread(target=work, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [("echo", "rm")] * 200


# -- properties and the adversarial file -------------------------------------------------------

SHELLISH = st.text(alphabet=" \t\n\\'\"$`(){}[]|&;<>#*?~=!-/abcrmx0E", max_size=80)


@settings(max_examples=scaled(150), deadline=None)
@given(st.one_of(st.text(max_size=80), SHELLISH))
def test_parse_command_returns_a_command_or_raises_command_error(text: str) -> None:
    try:
        command = parse_command(text)
    except CommandError:
        return
    assert isinstance(command, Command)
    assert all(isinstance(program, str) and program for program in command.programs)
    assert all(isinstance(operand, str) and operand for operand in command.operands)


HEREDOC_LINE = st.text(alphabet=" \t\\'\"$`(){}[]|&;<>#*?=!-/abcrmxEOF", max_size=12).filter(lambda line: line != "EOF")


@settings(max_examples=scaled(150), deadline=None)
@given(st.lists(HEREDOC_LINE, max_size=4), st.sampled_from(["'EOF'", '"EOF"', "\\EOF"]), st.sampled_from(["<<", "<<-"]))
@example(["[`x`]"], "'EOF'", "<<")  # a `[` and a backtick in the body once counted as the line's subscript
@example(["$(=)"], '"EOF"', "<<")
def test_quoted_heredoc_body_never_runs_anything(lines: list[str], delimiter: str, operator: str) -> None:
    if operator == "<<-" and any(line.lstrip("\t") == "EOF" for line in lines):
        return  # with <<-, that line would end the heredoc
    text = f"cat {operator}{delimiter} > out.txt\n" + "".join(line + "\n" for line in lines) + "EOF\nls"
    try:
        command = parse_command(text)
    except CommandError:
        return  # refusing is allowed; reporting a program from the body is not
    assert command.programs == ("cat", "ls")


# Differential check against bash itself: random commands built from tricky pieces run in a
# restricted bash with an empty PATH, so every program it tries to start fails with "command not
# found" and is named on stderr; parse_command must report each of those names, or refuse.
BASH_PIECES = [
    *["zzq", "zzq", "a", "b=1", "'x y'", '"p q"', "\\ ", "\\\n", "\\", "\n", ";", " ", "  ", "|", "&&"],
    *["#c", "$x", "$(zzq)", "`zzq`", '"$(zzq)"', "'zzq'", "z\\zq", "{ zzq; }", "(zzq)", "<<<w", "<f", "$'\\n'"],
    *["\\$", "\\\\", '"\\""', "\t", "\\\t", "!", "if zzq; then zzq; fi", "x=#", "case a in a) zzq;; esac"],
    *["for i in 1; do zzq; done", "f() { zzq; }; f", "eval 'zzq'", "command zzq", "time zzq", "<<E\nzzq\nE\n"],
]
NOT_FOUND = re.compile(r"^[^:\n]*: (?:line \d+: )?(.+?): command not found$", re.MULTILINE)


def test_every_program_bash_runs_is_reported_or_refused(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    assert bash is not None, "bash is needed for the differential check"
    rng = random.Random(20261202)
    checked = 0
    for _ in range(500):
        text = "".join(rng.choice(BASH_PIECES) + rng.choice([" ", "", "\n"]) for _ in range(rng.randint(2, 8)))
        try:
            programs = set(parse_command(text).programs)
        except CommandError:
            continue
        run = subprocess.run(
            [bash, "-r", "-c", text],
            cwd=tmp_path,
            env={"PATH": "/nonexistent"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            text=True,
            errors="replace",
        )
        names = {shell._ansi_c(name[2:-1]) if name.startswith("$'") else name for name in NOT_FOUND.findall(run.stderr)}
        assert {name.lower() for name in names} <= programs, (text, names, programs)
        checked += 1
    assert checked >= 50  # enough of them parse for the check to mean something


def test_adversarial_file_has_enough_cases() -> None:
    assert len(ADVERSARIAL_CASES) >= 60


@pytest.mark.parametrize("case", ADVERSARIAL_CASES, ids=[repr(case["command"])[:60] for case in ADVERSARIAL_CASES])
def test_adversarial_case(case: dict[str, Any]) -> None:
    if case.get("unknown"):
        with pytest.raises(CommandError):
            parse_command(case["command"])
        return
    command = parse_command(case["command"])
    assert set(case["programs"]) <= set(command.programs), command
    assert set(case.get("operands", [])) <= set(command.operands), command
    assert not set(case.get("not_programs", [])) & set(command.programs), command


def shell_quote(text: str) -> str:
    """Single-quote text for a POSIX shell."""
    return "'" + text.replace("'", "'\\''") + "'"


def test_echo_and_printf_arguments_are_text_not_path_operands_but_their_redirections_are() -> None:
    assert parse_command("echo $HOME ~/x /etc/shadow").operands == ()
    assert parse_command("printf '%s' ~/x > out.txt").operands == ("out.txt",)
    assert parse_command("echo $(cat /etc/shadow)").operands == ("/etc/shadow",)


# -- the programs table (policyengine/arguments/shell_programs.py) -------------------------------


@pytest.mark.parametrize("name", sorted(table.WRAPPERS))
def test_every_wrapper_in_the_table_runs_the_command_after_it(name: str) -> None:
    positionals = " ".join(["1"] * table.WRAPPERS[name].positionals)
    assert "rm" in _programs(f"{name} {positionals} rm x")


@pytest.mark.parametrize("pair", sorted(table.SUBCOMMAND_WRAPPERS), ids=" ".join)
def test_every_subcommand_wrapper_runs_the_command_after_it(pair: tuple[str, str]) -> None:
    before = "pkg " * table.SUBCOMMAND_WRAPPERS[pair].positionals  # `npm explore PKG rm x`
    assert "rm" in _programs(f"{pair[0]} {pair[1]} {before}rm x")


@pytest.mark.parametrize("name", sorted(table.RUNS_COMMANDS))
def test_a_program_that_runs_a_command_the_table_cannot_read_is_unknown(name: str) -> None:
    with pytest.raises(CommandError):
        parse_command(f"{name} rm x")
    assert parse_command(f"{name} --help").programs == (name,)


@pytest.mark.parametrize("name", sorted(table.GRAMMARS))
def test_a_grammar_gives_each_option_one_meaning(name: str) -> None:
    grammar = table.GRAMMARS[name]
    sets = [grammar.values, grammar.paths, grammar.data, grammar.globs, grammar.urls, grammar.dirs]
    sets += [grammar.code, grammar.runs]
    seen: set[str] = set()
    for options in sets:
        assert not seen & options, (name, seen & options)  # the first set would hide the second
        seen |= options
    assert grammar.scripts <= seen and grammar.pairs <= seen


@pytest.mark.parametrize(
    ("written", "names"),
    [
        ("rm", ("rm",)),
        ("/usr/bin/RM.EXE", ("rm.exe", "rm")),
        ("Curl.cmd", ("curl.cmd", "curl")),
        ("nc.openbsd", ("nc.openbsd", "nc")),
        ("python3.12", ("python3.12", "python")),
        ("python3", ("python3", "python")),
        ("mkfs.ext4", ("mkfs.ext4", "mkfs")),
        ("sudoedit", ("sudoedit", "sudo")),
        ("vim", ("vim",)),
        ("=rm", ("=rm", "rm")),
    ],
)
def test_a_program_is_reported_under_its_written_and_canonical_names(written: str, names: tuple[str, ...]) -> None:
    assert parse_command(f"{written} x").programs == names


def test_a_garbage_collection_inside_a_parse_is_not_charged_to_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """A collection run inside a parse (here: a finaliser burning 3x the budget) leaves the command known."""

    class Slow:
        def __init__(self) -> None:
            self.cycle = self  # only the cyclic collector frees it

        def __del__(self) -> None:
            end = time.thread_time() + 3 * shell.PARSE_SECONDS
            while time.thread_time() < end:
                pass

    parser = shell._parser
    collected: list[int] = []

    def parser_then_collect() -> Any:
        if not collected:
            collected.append(gc.collect())  # between the budget's start and the inner command's parse
        return parser()

    gc.collect()
    Slow()
    monkeypatch.setattr(shell, "_parser", parser_then_collect)
    command = parse_command("bash -c 'rm -rf build-gc-budget-check'")
    assert collected and "rm" in command.programs
