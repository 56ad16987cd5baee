"""Shell command strings turned into the programs they run and the paths they may touch.

`parse_command(text)` parses a command line the way bash would and returns every program that
may run (recursively: pipelines, lists, subshells, groups, `$(...)` and backticks, loop and
`if`/`case` bodies, function bodies, `sh -c` strings, wrappers such as `sudo`, `env`, `xargs`,
`find -exec`) and every word that may name a path. What it cannot place raises `CommandError`,
which red lines treat as matching: fail closed.

Parser choice, measured with `benchmarks/shell_parsers.py` (42 realistic agent commands, a
shared 2-core machine, medians of the per-command medians): tree-sitter-bash parses one in
5.4 us (2.4-22 us with the final newline we add) and accepts 41/42 (it refuses only the
unbalanced quote); bashlex takes 213 us (63-585 us, ~40x slower) and refuses 3/42 (a `case`
item, a quoted heredoc delimiter: both common). `parse_command` without its cache (parse, walk,
wrappers, re-parsed `sh -c` strings, the checks below): median 20 us, mean 24 us, 9-57 us; a
cache hit is well under 1 us. Reading operands as bash does (braces, globs, cd, the programs
table) added ~10%: the sum of per-command minima went from 885 to 977 us, 15 us of it `ssh`'s
remote command now parsed too (medians 19.5 -> 21.5 us). Hence tree-sitter-bash, used fail-closed:

- an ERROR or MISSING node anywhere means "unknown", never a best guess;
- where the grammar reads differently from bash (found by differential fuzzing against bash),
  the walk refuses instead of trusting it: an escape it skips as white space or drops
  (`ls<newline>\\rm x` becomes `ls` with an argument), a backslash-newline inside a word
  (bash joins `r\\<newline>m` into `rm`), a word it splits or joins (`'x'\\|y`, `] [`),
  `#` read as a comment inside a word, a reserved word read as a command (`! { x; }`), a
  heredoc whose lines it reads as code or ends at a line that only starts with the delimiter,
  `...` or $(...) left as text (`${x:-`cmd`}`, backticks in an unquoted heredoc); nested
  backticks are parsed again after bash's backslash removal;
- tree-sitter-bash 0.25.1 segfaults on `{` followed by a character above U+00FF (isdigit()
  on a wide character in its scanner): such input is refused before it reaches the parser;
- its error recovery is super-linear (64 KiB of `a|a|...|` with an error at the end: ~60 s;
  other shapes take seconds) and partly ignores cancellation, so each call is bounded: bytes
  read, parser operations, pipe symbols and a wall-clock budget (worst case found ~50 ms).

Unknown by design (raise CommandError): syntax errors; a program name built from an expansion
or a pattern (`$CMD`, `${X}`, `$(...)`, backticks, `/bin/r?`, `{rm,x}`); `eval`, `source`/`.`,
`trap`, `alias`, `sh -c`, `su -c` of non-literal text; a shell reading commands from a pipe or
terminal (`curl ... | sh`, `echo ... | sudo -s`); a word of a wrapper (`sudo`, `env`, `find`,
...) that is not literal or an option it does not know, since it could change which word is
the program; `${x@P}`; nesting deeper than MAX_DEPTH; input over MAX_BYTES or the parse budget;
NUL bytes; anything the parser raises.

`find ... -delete` reports program `rm` as well as `find`: it deletes files, and red lines on
deletion are written against `rm`.

Operands are what bash makes of each word (`_forms`): braces expanded as bash does (capped at
MAX_BRACE_WORDS; checked against bash itself by the tests), then a plain str for a literal word
or a `paths.PathPattern` for a word bash globs, literal `* ? [ $` and a leading `~` bracketed;
expansions (`$HOME/x`, `~/x`) stay as written and the path layer reads them as unknown places.
After `cd DIR` relative operands are also reported under DIR (over-approximated across
subshells). Programs are read by the data in `shell_programs.py`: wrappers, operand grammars
(`git show REV:PATH`, `curl -d @FILE`, the pattern of `grep`), URLs (`Command.urls`), code in
environment variables and git config; code for an interpreter (`python -c`) is the unknown
operand CODE_OPERAND. Program names are casefolded basenames, with their other names
(`rm.exe` is also `rm`). Code that runs later is read where it is written: environment variables
by name class (`variable_kind`), options named for a command (`RUNNER_OPTION`), and a quoted
`a[$(cmd)]` that bash's arithmetic may evaluate (`_subscript_code`). Passwords given as options
and the decoded input of decoders become words for the secret scan. Not looked into: code
assembled at run time from pieces, what an interpreter's code does (only that it is code).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import dataclasses
import fnmatch
import functools
import gc
import itertools
import re
import shlex
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

import tree_sitter
import tree_sitter_bash

from policyengine.arguments import _cache_cleaners as cleaners
from policyengine.arguments import _url_pins, paths
from policyengine.arguments import shell_programs as table

__all__ = [
    "CODE_OPERAND",
    "MAX_BRACE_WORDS",
    "MAX_BYTES",
    "MAX_DEPTH",
    "UNKNOWN_BRACES",
    "UNKNOWN_CWD",
    "Command",
    "CommandError",
    "glob_operands",
    "parse_command",
]

MAX_BYTES = 64 * 1024  # bigger inputs are unknown (UTF-8 bytes)
MAX_DEPTH = 16  # nested constructs and re-parsed strings (`sh -c`, `eval`, backticks)
# The grammar's error recovery is quadratic in the length of a pipeline (~50 ms for 1,000 stages
# with an error after them, ~60 s for 32,000) and that part never checks for cancellation, so
# only the number of `|` bounds it. A thousand is far above any real pipeline; heredoc bodies
# count too (a large markdown table written through a heredoc is the one legitimate way past it).
MAX_PIPES = 1024
# Per call of parse_command, over every (re-)parse it makes: tree-sitter calls back every 100
# parser operations, and the step it takes at an error is longer the more it has parsed before
# (~25 ms after 10,000 operations for the worst shape we found, ~200 ms after 30,000, seconds
# after 100,000), so few operations are allowed: 10,000 are ~10 KiB of dense script (a 6 KB
# script takes 58 checks) or 400 file names; heredoc bodies and quoted strings cost next to
# nothing. The clock bounds the rest (error recovery that re-reads the input at every step). It is
# the thread's CPU time, not the wall clock: on a loaded machine a preempted parse of a benign
# command must not turn unknown (and a dry-run's records must not depend on the load).
PARSE_SECONDS = 0.05
PARSE_CHECKS = 100
# Error recovery can re-read the input from each position (quadratic); a normal parse reads each
# byte about twice. Past this many bytes read, the input is cut and the command is unknown.
READ_FACTOR = 6
CHUNK = 4096  # bytes handed to tree-sitter per read, so the read budget is checked often enough
SMALL_INPUT = 1024  # at or below: parse the bytes directly (worst case ~25 ms, no callback cost)
CACHE_CHARS = 2048  # commands up to this many characters are cached
CACHE_SIZE = 4096

_LANGUAGE = tree_sitter.Language(tree_sitter_bash.language())


# The budget's clock is the thread's CPU time less the garbage collections it ran: a collection
# triggered inside a parse (a gen-2 pass over a large heap takes ~100 ms) is not the command's cost,
# and counting it turned a benign command unknown depending on what else the process held.
_GC_TIME = threading.local()


def _gc_callback(phase: str, _info: dict[str, int]) -> None:
    """Add each collection's CPU time to this thread's total."""
    if phase == "start":
        _GC_TIME.started = time.thread_time()
    elif (started := getattr(_GC_TIME, "started", None)) is not None:
        _GC_TIME.total = getattr(_GC_TIME, "total", 0.0) + time.thread_time() - started
        _GC_TIME.started = None


gc.callbacks.append(_gc_callback)


def _parse_clock() -> float:
    """This thread's CPU seconds, without the garbage collections it ran."""
    return time.thread_time() - float(getattr(_GC_TIME, "total", 0.0))


_LOCAL = threading.local()  # one Parser per thread: a Parser is not safe to share

# POSIX-family shells (and their packaged spellings: OpenBSD's ksh as oksh/loksh, AT&T ksh93, Oils'
# osh, busybox hush, schily bosh, mrsh, brush, gash, restricted rksh/rzsh); versioned and static
# names (bash5, zsh-5.9, bash-static) are canonical_names' job.
_SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "pdksh", "ash", "rbash", "yash", "posh"}
    | {"ksh93", "ksh88", "ksh2020", "oksh", "loksh", "lksh", "osh", "hush", "bosh", "pbosh", "mrsh", "brush", "gash"}
    | {"rksh", "rzsh", "rmksh"}
)
# Shells whose syntax is not POSIX: their -c strings cannot be read with the bash grammar (Oils'
# ysh/oil, Plan 9's rc, es, Redox's ion, murex included).
_OTHER_SHELLS = frozenset(
    {"fish", "csh", "tcsh", "nu", "elvish", "xonsh", "pwsh", "powershell"} | {"ysh", "oil", "rc", "es", "ion", "murex"}
)
# Programs that are not plain argument-takers (checked after the wrappers).
# What bash expands in a bare word before a Windows shell sees it and that shell's own reading does not
# model (`*` and `?` are read as patterns either way): bracket classes and braces.
_BASH_EXPANDS = re.compile(r"[\[{]")
# Windows' command shells: the text they run is read again (`cmd /c rd /s /q build` runs rd).
_WINDOWS_SHELLS = frozenset({"cmd", "powershell", "pwsh"})
# Characters with a meaning in cmd or PowerShell beyond plain words: text with one is unknown.
_CMD_SPECIAL = frozenset('^%!"()<>\n\r')
_POWERSHELL_SPECIAL = frozenset("$`(){}[]@'\"<>%#,=.\n\r") - frozenset(".")
_CMD_SWITCH = re.compile(r"/[A-Za-z?]{1,2}(?::[^/]*)?")
_READER_LINES = re.compile(r"[\n;]")  # sftp's lines; lftp's and smbclient's `;`
_WINDOWS_SEPARATORS = re.compile(r"&&|\|\||[&|;]")
# Programs a Windows line may name that run further code given as text.
_WINDOWS_CODE = frozenset(
    {"invoke-expression", "invoke-command", "start-process", "start", "call", "forfiles", "wsl", "wt", "runas"}
    | {"new-object", "add-type", "invoke-item", "ii", "for", "if"}
)
_SPECIAL = _SHELLS | _OTHER_SHELLS | _WINDOWS_SHELLS | {"eval", "source", ".", "trap", "alias", "find", "su", "runuser"}
_GIT_WITHOUT_MESSAGE = dataclasses.replace(
    table.GRAMMARS["git"], values=table.GRAMMARS["git"].values - {"m", "--message"}
)
_SUBCOMMAND_PROGRAMS = frozenset(
    {name for name, _ in table.SUBCOMMAND_WRAPPERS}
    | {name for name, _ in table.RUNS_SUBCOMMANDS}
    | {name for name, _ in table.CODE_SUBCOMMANDS}
)
# Programs that run the text or file they are handed as code: alone in a pager or editor
# variable (`GIT_PAGER=sh`) they run what the program writes to them.
_CODE_READERS = (
    _SHELLS
    | _OTHER_SHELLS
    | _WINDOWS_SHELLS
    | {"eval", "source", "."}
    | {name for name, grammar in table.GRAMMARS.items() if grammar.interpreter}
)
# Names some table gives a meaning to: a program's dispatch name is the first of its names here.
_KNOWN_NAMES = (
    _SPECIAL
    | table.WRAPPERS.keys()
    | table.GRAMMARS.keys()
    | table.RUNS_COMMANDS
    | table.TEXT_PROGRAMS
    | _SUBCOMMAND_PROGRAMS
    | {"cd", "pushd"}
)
# Programs whose words the engine can read: the others may run a word that is a command line.
_NAMED_PROGRAMS = (
    _KNOWN_NAMES
    | table.PLAIN_PROGRAMS
    | table.ACTING_PROGRAMS
    | table.COMMAND_READERS.keys()
    | table.STDIN_SCRIPTS.keys()
    | table.OWN_GLOBS.keys()
)
# A program name where a shell-like text starts a command: after `(`, `;`, `|`, `&`, `{`, `` ` ``
# (fzf's `execute(rm {})`, tmux's `run 'x; rm y'`); captured to be looked up in _NAMED_PROGRAMS.
_COMMAND_POSITION = re.compile(r"(?:^|[(;|&{`!]|\$\()\s*([A-Za-z0-9_./+-]+)(?=[\s;|&)}`]|$)")
_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})
# One ed command line: an address (numbers, marks, /re/, ?re?), a command letter, its parameter.
_ED_COMMAND = re.compile(
    r"(?:[0-9.$,;+\-\s^%]|'[a-z]|/(?:[^/\\]|\\.)*/?|\?(?:[^?\\]|\\.)*\??)*([A-Za-z!=#]?)(.*)", re.S
)
_ECHO_OPTION = re.compile(r"-[neE]+")  # echo's options: not text it writes
_PROGRAM_ONLY = re.compile(r"[A-Za-z0-9_./+@%,:-]+")  # a word that is only a program's name or path
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
# A git config key that a glob or braces may turn into another key (`https.prox?`, `{https.proxy,x}`).
_GLOBBED = re.compile(r"[*?\[{]")
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # cdable_vars: `cd NAME` may be `cd $NAME`
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*=")  # key=value arguments whose value may be a path
_NESTING = frozenset(
    {
        "subshell",
        "compound_statement",
        "command_substitution",
        "process_substitution",
        "if_statement",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "function_definition",
    }
)
_EXPANSIONS = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}
)
# bash starts a comment only at the start of a word, after one of these (or at the start).
_BEFORE_COMMENT = frozenset({b" ", b"\t", b"\n", b";", b"&", b"|", b"(", b")", b"<", b">"})
# What may follow `export`, `declare`, ... for bash to read them as keywords, not part of a word.
_AFTER_KEYWORD = frozenset({b"", b" ", b"\t", b"\n", b";", b"&", b"|", b")", b"<", b">"})
# Nodes whose text the grammar keeps as (part of) one word: an escape inside them is theirs.
_WORDISH = frozenset({"word", "string", "string_content", "concatenation", "number", "regex", "extglob_pattern"})
# UTF-8 lead bytes C4-FF start characters above U+00FF (see _Walk.parse).
_SCANNER_CRASH = re.compile(rb"\{[0-9.]*[\xc4-\xff]")
# Reserved words bash never runs as commands when unquoted at the start of a command.
_RESERVED = frozenset(
    {"!", "{", "}", "[[", "]]", "if", "then", "elif", "else", "fi", "do", "done", "case", "esac"}
    | {"while", "until", "for", "select", "function", "in"}
)
# What the walk does with a node type (others: visit the children).
_DESCEND, _LEAF, _COMMAND, _TEXT, _STRING_TEXT, _FILE_REDIRECT, _HEREDOC = range(7)
_EXPANSION, _SUBSTITUTION, _DECLARATION, _DESCRIPTOR, _NEGATION, _COMMENT, _ASSIGN, _HERESTRING = range(7, 15)
_NESTS = 64  # flag added to an action: the node opens a nesting level
_ACTIONS: dict[str, int] = {
    "command": _COMMAND,
    "word": _TEXT,
    "regex": _TEXT,
    "extglob_pattern": _TEXT,
    "string_content": _STRING_TEXT,
    "raw_string": _LEAF,
    "ansi_c_string": _LEAF,
    "comment": _COMMENT,
    "number": _LEAF,
    "variable_name": _LEAF,
    "special_variable_name": _LEAF,
    "file_descriptor": _DESCRIPTOR,
    "negated_command": _NEGATION,
    "heredoc_start": _LEAF,
    "heredoc_end": _LEAF,
    "test_operator": _LEAF,
    "file_redirect": _FILE_REDIRECT,
    "heredoc_redirect": _HEREDOC,
    "herestring_redirect": _HERESTRING,
    "expansion": _EXPANSION,
    "command_substitution": _SUBSTITUTION | _NESTS,
    "declaration_command": _DECLARATION,
    "variable_assignment": _ASSIGN,
    "unset_command": _DECLARATION,
    **{kind: _DESCEND | _NESTS for kind in _NESTING if kind != "command_substitution"},
}
# Argument nodes with nothing inside to walk (their text is checked when read as a word).
_PLAIN_WORDS = frozenset({"word", "number", "raw_string", "ansi_c_string"})
# Variables set earlier on the line (see _Walk._remember): expansions that read one as it is,
# nodes whose body may run again or later, names bash itself sets, and text in a value that
# an unquoted expansion would split or expand (kept unknown).
_VARIABLE_EXPANSIONS = frozenset({"simple_expansion", "expansion"})
_REPEATS = frozenset({"while_statement", "for_statement", "c_style_for_statement", "function_definition"})
_DYNAMIC = frozenset(
    {
        "PWD", "OLDPWD", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "HISTCMD", "EPOCHSECONDS", "EPOCHREALTIME",
        "REPLY", "OPTARG", "OPTIND", "IFS", "PIPESTATUS", "FUNCNAME", "DIRSTACK", "GROUPS", "UID", "EUID", "PPID",
        "SHELLOPTS", "COLUMNS", "LINES", "HOSTNAME", "MAPFILE", "COPROC",
    }
)  # fmt: skip
_SPLITS = frozenset(" \t\n{}~$\\")
# Builtins that set or unset variables by other means than NAME=VALUE (`time f=x` assigns in the
# shell; a `trap ... DEBUG` runs before every later command), and ways of writing that do the
# same (arithmetic, ${x:=y}, {fd}> redirections, IFS): after them nothing is filled in.
_SETTERS = frozenset(
    {"read", "mapfile", "readarray", "getopts", "let", "unset", "wait", "local", "readonly", "declare", "typeset"}
    | {"export", "source", ".", "eval", "coproc", "enable", "builtin", "trap", "time"}
)
_SETS_VARIABLES = re.compile(
    rb"\b(?:for|select|read|mapfile|readarray|getopts|let|unset|wait|local|readonly|coproc)\b"
    rb"|\(\(|\$\[|\$\{[^}]*=|\{[A-Za-z_][A-Za-z0-9_]*\}[<>]|IFS|\bprintf\b[^;&|\n]*-v"
)
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


@dataclass(frozen=True, slots=True)
class Command:
    """What one command line runs and touches: each item once, in the order met (a command, then what its words run)."""

    programs: tuple[str, ...]
    operands: tuple[str, ...]  # plain str, or paths.PathPattern for a word bash globs (see _forms)
    urls: tuple[str, ...] = ()  # URL-looking words and known URL operands (curl's, scp's host:path...)
    # Every word of every command as bash passes it: quotes and escapes removed, variables set
    # earlier on the line filled in, other expansions as written (for secrets(@): `'sec''ret'`).
    words: tuple[str, ...] = dataclasses.field(default=(), compare=False)  # a view: two readings are equal without it
    # Each argument vector run, its words as bash passes them joined by one space, once from the
    # program and again after each wrapper (`sudo git $'\x63lean' -f` gives `sudo git clean -f` and
    # `git clean -f`): a table that reads a subcommand or option from the text (commands(@)) sees
    # it after quote removal, $'..' decoding and the line's variables, however the shell spelled it.
    lines: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    # Each invocation of a program with subcommands (table.INVOCATIONS): `git daemon`, `npm init
    # vite`, `python -m http.server`, `gpg --send-keys`, `cmake -E rm`; `?` for a word not literal.
    invocations: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    # The operands the line may write (a subset of operands): redirection targets of any
    # descriptor, a copy's destination, output options' values, in-place editors' files, the
    # folder an extractor fills (table.WRITERS), spelled as operands are.
    writes: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    # Round fourteen (set L, cc-home-sweep-*): the operands handed to a program that may read what
    # is below them (any program but table.NAME_ONLY_PROGRAMS, and not as a write's target), a
    # finder's starting points when it runs a reader on or pipes what it finds, and the working
    # directory an invocation takes whole (table.WHOLE_CWD_INVOCATIONS), spelled as operands are.
    swept: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    # Round fifteen (set M, cache-clean-redirected): the folders a persisted setting makes a
    # toolchain's cache or build folder (`go env -w GOMODCACHE=DIR`, `npm config set cache DIR`),
    # which every later clean empties; spelled as operands are (an unreadable value as written).
    cache_folders: tuple[str, ...] = dataclasses.field(default=(), compare=False)


class CommandError(ValueError):
    """The command cannot be placed; red lines must treat it as matching."""


# How a piece of a word was written: what bash's brace expansion and globbing may still do to it.
_BARE, _QUOTED, _EXPANDED = range(3)  # unquoted text, quoted or escaped text, an expansion as written
_Parts = tuple[tuple[int, str], ...]


class _Word(NamedTuple):  # a NamedTuple: built for every word, 3x cheaper than a frozen dataclass
    """One shell word after quote removal (expansions kept as written)."""

    value: str
    known: bool  # no expansion, pattern or brace: the shell passes exactly this text
    single: bool  # stays one word (no unquoted expansion, pattern or brace to split or multiply it)
    parts: _Parts  # value's pieces by how they were written ("".join of the texts is value)


def _literal(value: str) -> _Word:
    """A word whose text is exactly value (quoted: nothing in it expands)."""
    return _Word(value, True, True, ((_QUOTED, value),))


def _execs(options: list[_Word]) -> bool:
    """Whether watch's options include -x / --exec (run the words as an argv, not through sh -c)."""
    return any(
        w.value == "--exec" or (w.value.startswith("-") and not w.value.startswith("--") and "x" in w.value)
        for w in options
    )


# find primaries whose argument names a file, and the ones whose argument is anything else.
_FIND_PATH_ARGS = frozenset(
    {"-fprint", "-fprint0", "-fls", "-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"}
)
_FIND_ARGS = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-type",
        "-xtype",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-perm",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-used",
        "-links",
        "-inum",
        "-maxdepth",
        "-mindepth",
        "-fstype",
        "-context",
        "-printf",
        "-regextype",
    }
)
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# Programs that only read a finder's output as text: piped to them, the names are not acted on.
_TEXT_FILTERS = frozenset(
    {"wc", "head", "tail", "sort", "uniq", "grep", "egrep", "fgrep", "rg", "cut", "tr", "less", "more", "nl", "column"}
)
_FIND_NAME_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex"})
_FIND_TESTS_START = frozenset({"(", ")", "!", ","})

_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_HEX = frozenset("0123456789abcdefABCDEF")
_ANSI_DIGITS = {"x": 2, "u": 4, "U": 8}  # most hex digits after $'\x, \u and \U


def glob_operands(pattern: str) -> tuple[str, ...]:
    """What a tool's file glob (`Glob`'s pattern, Grep's glob) selects: its braces expanded, each a PathPattern.

    The text is a glob as written, no shell around it: `*`, `?`, `[...]` and `{a,b}` select, a `$`
    is a character. A pattern with no wildcard left is a plain str (one path).
    """
    return _forms(((_BARE, pattern),))


def parse_command(text: str) -> Command:
    """Parse a shell command line into the programs it runs and its possible path operands."""
    if not isinstance(text, str):
        raise CommandError(f"a command must be a string, not {type(text).__name__}")
    if len(text) <= CACHE_CHARS:
        return _parse_cached(text)
    return _parse(text)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _parse_cached(text: str) -> Command:
    """Cached parse of a short command (errors are not cached: lru_cache keeps only results)."""
    return _parse(text)


def _parse(text: str) -> Command:
    """Parse without the cache; every failure leaves as CommandError."""
    # A C API would stop at the first NUL, and a shell given this string by way of execve or
    # `sh -c` would see only the part before it: what runs is not what we would parse.
    if "\x00" in text:
        raise CommandError("the command contains a NUL byte")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise CommandError("the command is not valid Unicode text (lone surrogate)") from None
    if len(data) > MAX_BYTES:
        raise CommandError(f"the command is longer than {MAX_BYTES} bytes")
    walk = _Walk()
    try:
        walk.parse(data, 0)
    except CommandError:
        raise
    except RecursionError:
        raise CommandError("the command is nested too deeply") from None
    except Exception as error:  # never let a parser or walker failure pass as anything else
        _parser().reset()  # in case a parse stopped half-way: the next one must start afresh
        raise CommandError(f"the command could not be parsed ({type(error).__name__}: {error})") from None
    if walk.written:
        walk.deferred()
    if walk.injected >= 0:
        _check_injected(list(walk.programs)[walk.injected :])
    for subcommand, line in walk.git_lines:
        if subcommand in walk.git_forced:
            walk.lines[f"{line} {_GIT_SAFETY_OPTIONS[subcommand]}"] = None
    return Command(
        tuple(walk.programs),
        tuple(walk.operands),
        tuple(walk.urls),
        tuple(walk.words),
        tuple(walk.lines),
        tuple(walk.invocations),
        tuple(walk.writes),
        tuple(walk.swept),
        tuple(walk.cache_folders),
    )


def _check_injected(programs: list[str]) -> None:
    """A secret runner's command may print the secrets it is given: unknown unless its programs cannot."""
    for program in programs:
        if program in table.ENVIRONMENT_PRINTERS or program in _CODE_READERS or program not in _NAMED_PROGRAMS:
            raise CommandError(f"a secret runner runs {program}, which may print the secrets it is given")


def _parser() -> tree_sitter.Parser:
    """The calling thread's parser."""
    parser: tree_sitter.Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = tree_sitter.Parser(_LANGUAGE)
    return parser


class _Walk:
    """One parse_command call: what was found so far and the budget left."""

    __slots__ = (
        "cache_env",
        "cache_folders",
        "cdable",
        "cdpath",
        "checks",
        "deadline",
        "dirs",
        "force_local",
        "git_forced",
        "git_lines",
        "injected",
        "invocations",
        "level",
        "lines",
        "local",
        "operands",
        "programs",
        "reader",
        "resolving",
        "swept",
        "urls",
        "variables",
        "whole",
        "words",
        "writes",
        "writing",
        "written",
    )

    def __init__(self) -> None:
        """Start with nothing found and the whole budget."""
        self.programs: dict[str, None] = {}  # a dict keeps the first-seen order
        self.operands: dict[str, None] = {}
        self.urls: dict[str, None] = {}
        self.words: dict[str, None] = {}
        self.lines: dict[str, None] = {}
        self.invocations: dict[str, None] = {}
        self.writes: dict[str, None] = {}  # the operands the line may write (Command.writes)
        self.swept: dict[str, None] = {}  # the operands a reading program is handed (Command.swept)
        # The cleaners' folder variables (_cache_cleaners.VARIABLES) set so far on the line, by an
        # assignment, export, `env X=`, or a persisted setting (`go env -w`): in any order or scope
        # (an over-approximation), the value as its word.
        self.cache_env: dict[str, _Word] = {}
        self.cache_folders: dict[str, None] = {}  # Command.cache_folders
        self.reader = ""  # the program the operands met now are handed to ("": an assignment's, unknown)
        self.whole = False  # the argv under way takes the cwd whole (_takes_cwd)
        self.writing = 0  # _WRITTEN: _operand also records a write; _WRITE_ONLY: records only the write
        # (file, writing command, its source): read only when deferred() needs the text
        self.written: list[tuple[str, tree_sitter.Node, bytes]] = []
        # Variables surely set to literal text earlier on the top-level line, in source order
        # (`f=.env; cat $f`); a name absent is unknown. `resolving` is off once the line does
        # anything that may set a variable in a way not modelled (see _may_set_variables).
        self.variables: dict[str, str] = {}
        self.resolving: bool | None = None  # None: not yet checked
        self.level = 0  # parse() calls under way: 1 is the line itself, more is code it runs
        # Where relative operands may be besides the cwd: set by `cd`/`pushd` for the rest of the
        # line (in a subshell too: an over-approximation), and by options such as `git -C` for
        # their own command (`local`). Relative operands are reported as written and joined to each.
        self.dirs: list[str] = []
        self.local: list[str] = []
        self.cdpath = False  # the line sets CDPATH: `cd rel` may go anywhere
        self.cdable = False  # the line may turn on cdable_vars: `cd NAME` may be `cd $NAME`
        self.force_local = False  # tar --force-local: an archive name's colon names no host
        # git subcommands whose safety switch the line turns off (table.GIT_SAFETY_KEYS), and each
        # git argv met, by subcommand: _parse spells those again with the switch's option.
        self.git_forced: set[str] = set()
        self.git_lines: list[tuple[str, str]] = []
        self.deadline = _parse_clock() + PARSE_SECONDS
        self.checks = 0
        # The number of programs met before a secret runner's command (table.SECRET_RUNNERS), or -1.
        self.injected = -1

    # -- parsing -------------------------------------------------------------------------------

    def parse(self, data: bytes, depth: int) -> None:
        """Parse one string of shell code (the command, or a string it runs) and walk it."""
        if depth > MAX_DEPTH:
            raise CommandError(f"the command nests more than {MAX_DEPTH} levels")
        if len(data) > MAX_BYTES:
            raise CommandError(f"the command is longer than {MAX_BYTES} bytes")
        if b"\x00" in data:  # a decoded $'\0'... cannot reach here, but a re-parsed string could
            raise CommandError("the command contains a NUL byte")
        if data.count(b"|") > MAX_PIPES:
            raise CommandError(f"the command has more than {MAX_PIPES} pipe symbols")
        if _SCANNER_CRASH.search(data):
            # tree-sitter-bash 0.25.1's scanner (scanner.c:1158 and :1172) passes the character
            # after `{`, `{12` or `{1..` to isdigit(), which reads out of bounds past 255: a
            # segfault of the whole process, found by the hypothesis test.
            raise CommandError("a '{' followed by a character above U+00FF (it crashes the parser)")
        # A final newline: without it the grammar spends 50-100 us at the end of a 3-stage
        # pipeline (20x the whole parse); and a trailing backslash becomes a checked continuation.
        data += b"\n"
        if b"CDPATH" in data:
            self.cdpath = True  # set before the walk: `CDPATH=/etc cd ssh` is walked cd first
        if b"cdable_vars" in data:
            # Round nine (set H, cdable-vars): with `shopt -s cdable_vars`, `cd HOME` goes to $HOME
            # when no folder HOME is there; the mention alone is enough (an over-approximation).
            self.cdable = True
        root = self._tree(data).root_node
        if root.has_error:
            raise CommandError(_syntax_error(root, data))
        self.level += 1
        self._walk(root, data, depth)
        self.level -= 1
        if b"\\" in data:
            _check_backslashes(root, data)

    def _tree(self, data: bytes) -> tree_sitter.Tree:
        """Parse bytes with tree-sitter within this call's budget."""
        if _parse_clock() > self.deadline:
            raise CommandError("the command took too long to parse")
        parser = _parser()
        if len(data) <= SMALL_INPUT:
            return parser.parse(data)
        limit = READ_FACTOR * len(data) + CHUNK
        read = 0
        cut = False

        def source(offset: int, _point: tuple[int, int]) -> bytes:
            """The next chunk of input, or end of input once the read budget is spent."""
            nonlocal read, cut
            if read > limit:
                cut = True
                return b""  # end of input: parsing stops, and `cut` makes the command unknown
            chunk = data[offset : offset + CHUNK]
            read += len(chunk)
            return chunk

        def progress(_offset: int, _has_error: bool) -> bool:
            """Whether to cancel: out of parser operations or time."""
            self.checks += 1
            return self.checks > PARSE_CHECKS or _parse_clock() > self.deadline

        try:
            tree = parser.parse(source, progress_callback=progress)
        except ValueError:  # "Parsing failed": the progress callback cancelled it
            parser.reset()  # a cancelled parse would otherwise resume on the next call
            raise CommandError("the command took too long to parse") from None
        if cut:
            raise CommandError("the command took too long to parse")
        return tree

    # -- the tree ------------------------------------------------------------------------------

    def _walk(self, root: tree_sitter.Node, data: bytes, depth: int) -> None:
        """Visit every node (an explicit stack: trees can be deeper than Python's recursion)."""
        stack: list[tuple[tree_sitter.Node, int]] = [(root, depth)]
        pop = stack.pop
        push = stack.append
        actions = _ACTIONS
        while stack:
            node, level = pop()
            kind = node.type
            action = actions.get(kind, _DESCEND)
            if action & _NESTS:
                level += 1
                if level > MAX_DEPTH:
                    raise CommandError(f"the command nests more than {MAX_DEPTH} levels")
                action &= ~_NESTS
            if action == _DESCEND:
                pass
            elif action == _LEAF:
                if not node.named_child_count:  # some "leaves" can hold code: `10#$(cmd)` is a number
                    continue
            elif action == _COMMAND:
                for child in reversed(self._command(node, data, level)):
                    push((child, level))
                continue
            elif action == _TEXT:
                text = _text(node, data)
                if _unparsed_code(text):
                    # `${x:-`cmd`}`, `${x:-<(cmd)}`: bash runs them; the grammar keeps them as text.
                    raise CommandError(f"a command substitution the parser leaves unparsed: {text!r}")
                if kind == "word" and _joined(text):
                    raise CommandError(f"the parser joined words that bash splits: {text!r}")
                if not node.named_child_count:
                    continue
            elif action == _STRING_TEXT:
                _check_string_content(node, data)
                if not node.named_child_count:
                    continue
            elif action == _FILE_REDIRECT:
                self._file_redirect(node, data)
            elif action == _HEREDOC:
                if not _check_heredoc(node, data):
                    body = _child(node, "heredoc_body")
                    if body is not None:
                        _check_heredoc_body(body, data)
                for child in node.named_children:
                    if child.type in ("word", "concatenation", "string", "raw_string", "number"):
                        self._word_operand(self._word(child, data))
                    elif child.type == "heredoc_body":
                        # `read x <<'EOF'` then `$((x))`: the body is data, as if quoted.
                        self._subscript_code(_literal(_text(child, data)), data, level, stdin=True)
            elif action == _HERESTRING:
                content = node.named_child(node.named_child_count - 1)
                if content is not None:
                    self._subscript_code(self._word(content, data), data, level, stdin=True)  # `read x <<< 'a[$(..)]'`
            elif action == _EXPANSION:
                if data[node.end_byte - 3 : node.end_byte] == b"@P}":
                    # ${x@P} expands x as a prompt, which runs the $(...) in its value.
                    raise CommandError("a ${...@P} expansion runs code held in a variable")
                fallback = _DEFAULT_VALUE.fullmatch(_text(node, data))
                if fallback is not None and fallback.group(1)[:1] in ("/", "~"):
                    # Round nine (set H, assigned-default-expansion): `${PREFIX:-/usr}` is /usr when
                    # PREFIX is unset - in an assignment (`PREFIX=${PREFIX:-/usr} make install`) too.
                    self._operand(fallback.group(1))
                default = _DEFAULT_ASSIGNMENT.match(_text(node, data))
                if default is not None and _special_variable(default.group(1)):
                    # `: ${GIT_PAGER:='rm x'}` assigns the variable as NAME=VALUE does.
                    assigned = _text(node, data)[default.end() : -1]
                    self._assignment(default.group(1), ((_QUOTED, assigned),), assigned, level, _literal_text(assigned))
            elif action == _SUBSTITUTION:
                if data[node.start_byte : node.start_byte + 1] == b"`":
                    inner = data[node.start_byte + 1 : node.end_byte - 1]
                    if b"\\" in inner:
                        # Inside backticks bash first removes the backslash of \\, \` and \$, then
                        # parses the result: `echo \`rm x\`` runs rm, which the grammar leaves as text.
                        self.parse(_unescape_backticks(inner), level)
                        continue
            elif action == _DESCRIPTOR:
                descriptor = _text(node, data)
                if not descriptor.isdigit() and not (descriptor.startswith("{") and descriptor.endswith("}")):
                    # `-eq2>&1`: bash reads the word -eq2 and a redirection; the grammar a descriptor.
                    raise CommandError(f"the parser read {descriptor!r} as a file descriptor")
                continue
            elif action == _COMMENT:
                if node.start_byte and data[node.start_byte - 1 : node.start_byte] not in _BEFORE_COMMENT:
                    # bash starts a comment only at the start of a word; `x=#z\` is a word.
                    raise CommandError(f"the parser read {_text(node, data)[:40]!r} as a comment")
                continue
            elif action == _NEGATION:
                if data[node.start_byte + 1 : node.start_byte + 2] not in (b" ", b"\t"):
                    # `!"x"` is one word, the program `!x`, to bash; the grammar negates `x`.
                    raise CommandError(f"the parser split the word {_text(node, data)[:40]!r}")
            elif action == _ASSIGN:
                self._variable_assignment(node, data, level)
            elif action == _DECLARATION:
                keyword = node.child(0)
                if keyword is not None:
                    if data[keyword.end_byte : keyword.end_byte + 1] not in _AFTER_KEYWORD:
                        # `export}x`: one word, a command bash looks up; the grammar splits a keyword off.
                        raise CommandError(f"the parser split the word {_text(node, data)[:40]!r}")
                    self.programs[_text(keyword, data)] = None
                    if keyword.type not in ("export", "declare", "typeset") or any(
                        child.type not in ("variable_assignment", "variable_name") for child in node.named_children
                    ):
                        self._stop_resolving()  # `unset f`, `declare -u f`, `readonly f=x`
            for child in reversed(node.named_children):  # reversed: pop in source order
                push((child, level))

    def _command(self, node: tree_sitter.Node, data: bytes, depth: int) -> list[tree_sitter.Node]:
        """One simple command: its program, wrappers and operands; returns the children to walk."""
        words: list[_Word] = []
        nested: list[tree_sitter.Node] = []  # children that may hold commands or redirections
        named = False
        previous_end = -1  # where the previous word ended
        for child in node.named_children:
            kind = child.type
            if kind in _REDIRECTS:
                nested.append(child)
                continue
            if child.start_byte == previous_end:
                # `'x y'\|"p q"` is one word to bash; the grammar made two of it.
                raise CommandError(f"the parser split the word {_text(node, data)[:40]!r}")
            previous_end = child.end_byte
            if kind == "command_name":
                named = True
                inner = child.named_child(0)
                if inner is None:
                    raise CommandError("a command has an empty name")
                text = _text(inner, data)
                if text in _RESERVED:
                    # bash reads it as syntax (`! { x; }` is a group); the grammar took a command.
                    raise CommandError(f"the parser read the reserved word {text!r} as a command")
                if inner.type == "word" and not inner.named_child_count:
                    words.append(_plain_word(text))
                else:
                    nested.append(inner)
                    words.append(self._word(inner, data))
            elif not named and kind == "variable_assignment":
                nested.append(child)  # `A=1 cmd`: only sets the environment; its value may run code
                self._cache_variable(child, data)  # before the program runs: `UV_CACHE_DIR=. uv cache clean`
            elif named:
                words.append(self._word(child, data))
                if kind not in _PLAIN_WORDS or child.named_child_count:
                    nested.append(child)
            else:
                nested.append(child)
        if words:
            for word in words:
                self.words[word.value] = None
                if "$(" in word.value or "`" in word.value:
                    self._subscript_code(word, data, depth)
                    output = self._text_output(word.value)
                    if output is not None:
                        self.words[output] = None  # `-d "AKIA.."$(echo ..)`: the text the word becomes
            self._argv(words, node, data, depth)
        return nested

    def _argv(self, words: list[_Word], node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """Run an argument vector: the program, then whatever it runs in turn."""
        local = len(self.local)  # directories this command's options name apply to it alone
        found = len(self.operands)
        reader, whole = self.reader, self.whole  # a nested argv (find -exec, sh -c) has its own
        self.whole = False
        self._run(words, node, data, depth)  # a CommandError ends the whole walk: no finally needed
        if _searches_tree(words, len(self.operands) == found):
            # Round twelve (set K, implicit-cwd-search): `grep -r KEY`, `rg secret`, `git grep -e x`
            # with no file operand search the working directory: it is their operand.
            self._operand(".")
        if self.whole:
            self._swept(".")
        self.reader, self.whole = reader, whole
        if len(self.local) > local:
            del self.local[local:]

    def _run(self, words: list[_Word], node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """_argv's body: a wrapper hands on the words of the command it runs."""
        while words:
            names, name = _program(words[0])
            self.reader = name
            self._line(name, words)
            self._writes(name, words[1:])
            if name in table.NAME_LISTS and _names_listed(name, words[1:]):
                # Round twelve (set K, listed-names): the files it reads are not on its line; the line is
                # spelled again with the long option the packs' name-list rules read (as _line does).
                self.lines[f"{name} --files-from=-"] = None
            invocation = table.INVOCATIONS.get(name)
            if invocation is not None:
                asked = _invocations(name, invocation, words[1:])
                self.invocations.update(dict.fromkeys(asked))
                # `git add -A`, `python -m http.server`: the cwd whole (_argv keeps it, after git -C)
                self.whole = self.whole or any(_takes_cwd(text, words[1:]) for text in asked)
            for program in names:
                self.programs[program] = None
            if name in _SETTERS or (name == "printf" and any(word.value.startswith("-v") for word in words)):
                self._stop_resolving()
                self._set_unseen(name, words)
            rest = words[1:]
            if (name in _EMPTYING_COPIERS and any(_empty_source(word.value) for word in rest)) or (
                name in _STDIN_COPIERS and node.type == "command" and self._stdin_empty(node, data)
            ):
                # Round nine (set H, devnull-clobber): copying, linking or installing /dev/null over
                # a file (`cp /dev/null x`, `ln -sf /dev/null x`, `tee x < /dev/null`) empties it, as
                # truncate does: read as truncate, a deleting program.
                self.programs["truncate"] = None
            if name in cleaners.CLEANERS or name in cleaners.SETTINGS:
                self._cache_clean(name, rest)
            if (name in cleaners.OUTPUT_FILTERS or name in _SEDS) and self._empties_output(name, rest, node, data):
                self.programs["truncate"] = None  # `sort -o x /dev/null`, `sed -i d x`: x emptied, as truncate does
            if name == "cmake" and len(rest) > 1 and rest[0].value == "-E" and rest[1].known:
                # Round nine (set H, cmake-e-delete): `cmake -E rm|remove|remove_directory` deletes
                # (read as rm), and chdir, env and time run the command after their own words.
                verb = rest[1].value
                if verb in table.CMAKE_DELETERS:
                    self.programs["rm"] = None
                    self._operands([word for word in rest[2:] if not word.value.startswith("-")])
                    return
                skip = {"chdir": 3, "time": 2}.get(verb)
                if verb == "env":
                    skip = 2
                    while skip < len(rest) and (rest[skip].value.startswith("-") or "=" in rest[skip].value):
                        skip += 1
                if skip is not None:
                    if skip < len(rest):
                        words = rest[skip:]
                        continue
                    return
                argv = table.CMAKE_PROGRAM_VERBS.get(verb)
                if argv is not None:  # `cmake -E tar czf x ~` is tar's sweep, `-E copy` cp's copy
                    words = [*(_literal(value) for value in argv), *rest[2:]]
                    continue
            if name in table.CREDENTIAL_OPTIONS:
                self._credentials(name, rest)
            if name in table.DECODERS:
                self._decoded(name, rest, node, data)
            if name in table.METADATA_CLIENTS:
                self._url(table.METADATA_CLIENTS[name])  # `ec2-metadata --all` reads this endpoint
            self._pins(rest)
            options = table.WRAPPERS.get(name)
            if name in table.COMPOSE_PLUGINS and len(rest) > 1 and rest[0].value == "compose":
                name, rest = table.COMPOSE_PLUGINS[name], rest[1:]  # `docker compose exec` is docker-compose's
            if options is None and name in table.SUBCOMMAND_GLOBALS and rest and rest[0].value.startswith("-"):
                rest = self._after_globals(name, rest, depth)  # `kubectl -n data exec POD -- CMD`
            if options is None and name in _SUBCOMMAND_PROGRAMS and rest and rest[0].known:
                subcommand = (name, rest[0].value)
                if subcommand in table.RUNS_SUBCOMMANDS and len(rest) > 1:
                    raise CommandError(f"{name} {rest[0].value} runs a command this engine cannot place")
                if subcommand in table.CODE_SUBCOMMANDS and len(rest) > 1:
                    self._operand(CODE_OPERAND)  # `deno eval CODE`
                    return
                options = table.SUBCOMMAND_WRAPPERS.get(subcommand)
                if subcommand in table.SECRET_RUNNERS and self.injected < 0:
                    self.injected = len(self.programs)  # what runs from here on gets the secrets
                command = self._container_run(rest[1:], depth) if subcommand in table.CONTAINER_RUN else None
                if command is not None:
                    self._line(name, words)
                    if not command:
                        return
                    words = command
                    continue
                if options is not None:
                    name = f"{name} {rest[0].value}"
                    rest = rest[1:]
            if options is not None:
                start = self._wrapper_options(name, options, rest, depth)
                if start < 0:
                    self._operands(rest[-start - 1 :])
                    return
                if start >= len(rest):
                    if name == "xargs":
                        self.programs["echo"] = None  # xargs with no command runs echo
                    elif name in ("sudo", "doas") and _opens_shell(name, rest[:start]):
                        self._shell_stdin(node, data, depth)  # `sudo -s` with no command reads stdin
                    return
                if name == "xargs" and node.type == "command":
                    self._xargs_items(rest[:start], rest[start:], node, data, depth)
                if (name == "watch" and not _execs(rest[:start])) or name in table.JOINS_WORDS:
                    # Without -x, watch joins its words and hands them to `sh -c`, as eval does.
                    self._code(rest[start:], depth, name)
                    return
                words = rest[start:]
                continue
            if name in table.COMMAND_READERS:
                self._reader(name, rest, node, data, depth)  # then its words as any program's
            if name in table.OWN_GLOBS:
                self._own_globs(name, rest)
            levels = table.SUBCOMMAND_LEVELS.get(name)
            if levels is not None:
                for word in rest[:levels]:
                    if word.value.startswith("-"):
                        break  # options: the subcommand words are before them
                    if not word.known:
                        raise CommandError(f"{name}: the subcommand {word.value!r} is not literal")
            if name in table.STDIN_WRITERS and node.type == "command":
                for word in rest:  # `tee s.sh <<< 'rm -rf x'`: the text goes to each file operand
                    if not word.value.startswith("-"):
                        self.written.append((word.value if word.known else _UNKNOWN_SCRIPT, node, data))
            if name in table.PATCH_PROGRAMS and node.type == "command":
                # Round six (set E, patch-writes): patch(1) reads its patch from standard input
                # unless given -i; a literal one names the files it writes, as git apply's does.
                self._git_patch(name, node, data)
            if name in table.SCHEDULERS:
                for text in self._stdin_texts(name, node, data):  # `echo '* * * * * rm -rf x' | crontab -`
                    self._script_text(text, strict=True)
            if name in table.SCRIPT_SETTER_PROGRAMS and rest:
                self._package_scripts([word.value for word in rest[:2]], rest, depth)
            if name not in _SPECIAL:
                if any(word.value in table.REPL_WORDS for word in rest) and self._repl_code(name, rest, node):
                    self._operand(CODE_OPERAND)  # `python manage.py shell <<EOF`, `rails console <<<`
                grammar = table.GRAMMARS.get(name)
                if name == "tar":
                    self.force_local = any(word.value.startswith("--force-l") for word in rest)
                if grammar is not None:
                    self._grammar(name, grammar, rest, node, data, depth)
                elif name in table.STDIN_COMMANDS and _reads_stdin(node) and all(w.value.startswith("-") for w in rest):
                    # Round six (set E, shell-grammar-deleters): `echo 'rm -rf src' | parallel`: with no
                    # command of its own, each line of its input is a command line.
                    for text in self._stdin_texts(name, node, data):
                        self.parse(text.encode("utf-8"), depth + 1)
                elif name in table.RUNS_COMMANDS and any(not word.value.startswith("-") for word in rest):
                    raise CommandError(f"{name} runs a command this engine cannot place")
                elif name in ("cd", "pushd"):
                    self._cd(rest)
                elif name == "coreutils" and rest and rest[0].value.startswith("--coreutils-prog="):
                    words = [_literal(rest[0].value.partition("=")[2]), *rest[1:]]  # the multicall's program
                    continue
                elif name not in table.TEXT_PROGRAMS:
                    if name in table.STDIN_SCRIPTS and _reads_stdin(node):
                        self._stdin_script(name, node, data, depth)
                    if not any(program in _NAMED_PROGRAMS for program in names):
                        if _verb_deletes(name, rest):
                            self.programs["rm"] = None  # `hg remove src`, `swift delete --all`: read as rm
                        start = self._unknown_program(rest, depth)
                        if start >= 0:
                            self._operands(rest)  # the program may open them as files, too (`ksu u -e /bin/id`)
                            words = rest[start:]
                            continue
                    else:
                        self._runner_options(rest, depth)
                    self._operands(rest)
            elif name in _SHELLS:
                self._shell(rest, node, data, depth)
            elif name in _WINDOWS_SHELLS:
                self._windows(name, rest, node, data, depth)
            elif name in _OTHER_SHELLS:
                if any(word.value.startswith("-") and "c" in word.value for word in rest):
                    raise CommandError(f"{name} -c runs code in a syntax other than bash")
                scripts = [word for word in rest if not word.value.startswith("-") or word.value == "-"]
                if (not scripts or scripts[0].value in _STDIN_FILES) and _reads_stdin(node):
                    # `fish <<< 'rm x'`, `echo CMD | tcsh`: commands from stdin, in another syntax.
                    raise CommandError(f"{name} reads commands from standard input in a syntax other than bash")
                self._operands(rest)
            elif name == "eval":
                self._code(rest, depth, name)
            elif name in ("source", "."):
                self._source(name, rest)
            elif name == "trap":
                self._trap(rest, depth)
            elif name == "alias":
                self._alias(rest, depth)
            elif name in ("su", "runuser"):
                self._su(name, rest, node, data, depth)
            else:  # find
                self._find(rest, node, data, depth)
            return

    def _line(self, name: str, words: list[_Word]) -> None:
        """Record an argv as bash passes it (Command.lines), and again with abbreviated long flags in full."""
        values = [word.value for word in words]
        self.lines[" ".join(values)] = None
        flags = table.LONG_FLAGS.get(name)
        if flags is None:
            return
        expanded = False
        for index, value in enumerate(values):
            option = value.partition("=")[0]
            if len(option) > 3 and option.startswith("--") and option not in flags:
                full = sorted(flag for flag in flags if flag.startswith(option))  # sorted: one spelling per run
                if full:
                    tail = value[len(option) :]  # `=VALUE` stays with its option (`--sou=X` is `--source=X`)
                    values[index] = " ".join(flag + tail for flag in full)  # `tar --remove-f` is `--remove-files`
                    expanded = True
        if expanded:
            self.lines[" ".join(values)] = None

    def _writes(self, name: str, words: list[_Word]) -> None:
        """The words of one argv that name what it writes (Command.writes; table.WRITERS, WRITTEN_OPTIONS)."""
        if name == "git":
            self._git_writes(words)
        row = table.WRITERS.get(name)
        written: list[tuple[_Word, int]] = []  # (word, where its value starts)
        archives: list[tuple[_Word, int]] = []  # an archiver's own file: written unless it extracts or lists
        into: list[tuple[_Word, int]] = []  # the folder an extractor fills
        operands: list[_Word] = []
        extracting = row is not None and "*" in row.extracts
        reading = in_place = options_done = False
        index, count = 0, len(words)
        while index < count:
            word = words[index]
            value = word.value
            index += 1
            if options_done or not value.startswith("-") or value == "-":
                if row is not None and not options_done and not operands:
                    if value in row.extracts:
                        extracting = True  # `7z x`, `cpio i`
                    if row is _TAR_ROW and index == 1 and value.isalpha():
                        # tar's old style (`tar xzf A -C D`): a cluster whose value letters take the next words
                        for letter in value:
                            extracting = extracting or letter in row.extracts
                            reading = reading or letter in row.reads
                            if index < count and (
                                letter in row.values or letter in row.options or letter in row.extract_dirs
                            ):
                                if letter in row.options:
                                    archives.append((words[index], 0))
                                elif letter in row.extract_dirs:
                                    into.append((words[index], 0))
                                index += 1
                        continue
                key, equals, _ = value.partition("=")
                if equals and key.casefold() in table.WRITTEN_KEYS:
                    written.append((word, len(key) + 1))  # `dd of=FILE`, `make DESTDIR=/x`
                operands.append(word)
                continue
            if value == "--":
                options_done = True
                continue
            option, equals, _ = value.partition("=")
            if value.startswith("--") or option in table.WRITTEN_OPTIONS:
                if row is not None:
                    extracting = extracting or option in row.extracts
                    reading = reading or option in row.reads
                    in_place = in_place or option in row.in_place
                kind = None
                if row is not None and option in row.extract_dirs:
                    kind = into
                elif row is not None and option in row.options:
                    kind = archives if row.extracts else written
                elif option in table.WRITTEN_OPTIONS or _written_prefix(option):
                    kind = written
                elif row is not None and option in row.values and not equals:
                    index += 1  # its value is no operand
                if kind is not None:
                    if equals:
                        kind.append((word, len(option) + 1))
                    elif index < count:
                        kind.append((words[index], 0))
                        index += 1
                continue
            if row is None:
                continue
            position = 1
            while position < len(value):
                letter = value[position]
                position += 1
                extracting = extracting or letter in row.extracts
                reading = reading or letter in row.reads
                if letter in row.in_place:
                    in_place = True
                    break  # `sed -i.bak`, `perl -pi.orig`: the rest is a suffix
                if letter in row.options or letter in row.extract_dirs or letter in row.values:
                    kind = (
                        into
                        if letter in row.extract_dirs
                        else None
                        if letter in row.values
                        else archives
                        if row.extracts
                        else written
                    )
                    if position < len(value):
                        if kind is not None:
                            kind.append((word, position))  # `-oFILE`, `7z x -o/opt/x`
                    elif index < count:
                        if kind is not None:
                            kind.append((words[index], 0))
                        index += 1
                    break
        if row is not None:
            if in_place or row.operands == "all":
                written.extend((word, 0) for word in operands)
            elif row.operands == "last" and len(operands) > 1 and not written:
                written.append((operands[-1], 0))  # `cp A B`, `install -m 755 A /x` (not `cp -t DIR A`)
            elif row.operands == "second" and len(operands) > 1:
                written.append((operands[1], 0))
            if extracting and not reading:
                written.extend(into or [(_literal("."), 0)])  # unnamed files into the folder (the cwd)
            elif not extracting and not reading:
                written.extend(archives)
        for word, start in written:
            # Only recorded as written: the walk reads each word as an operand (or not) by its own grammar.
            self.writing = _WRITE_ONLY
            self._word_operand(word, start)
            self.writing = 0

    def _git_writes(self, words: list[_Word]) -> None:
        """What a git argv rewrites in the worktree with content it does not name (table.GIT_WORKTREE_WRITERS)."""
        index = 0
        while index < len(words) and words[index].value.startswith("-"):
            index += 2 if words[index].value in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
        if index >= len(words):
            return
        subcommand, rest = words[index].value, words[index + 1 :]
        values = [word.value for word in rest]
        if subcommand in table.GIT_WORKTREE_WRITERS and not any(
            value in table.GIT_WORKTREE_WRITERS[subcommand] for value in values
        ):
            if subcommand != "reset" or (
                any(value in ("--hard", "--merge", "--keep") for value in values)
                and any(not value.startswith("-") and value not in ("HEAD", "@") for value in values)
            ):  # `git reset --hard` alone restores the repository's own HEAD
                written = [_literal(".")]  # `git apply P`, `git am`, `git reset --hard REV`: any file of the tree
            else:
                return
        elif subcommand in ("checkout", "restore") and "--" in values:
            written = rest[values.index("--") + 1 :]  # `git checkout REV -- .`: the pathspecs, from REV
        elif subcommand == "restore":
            written = [word for word in rest if not word.value.startswith("-")]
        else:
            return
        for word in written:
            self.writing = _WRITE_ONLY
            self._word_operand(word)
            self.writing = 0

    def _credentials(self, name: str, words: list[_Word]) -> None:
        """Passwords given as options (`sshpass -p PASS`, `mysql -pPASS`): `password=PASS` words for the secret scan.

        A password in an option has no shape the scanner can know (`Xk9#mP2vLq!7`), but the option
        says what it is; the word `password=VALUE` makes the packs' no-secrets-to-network red line see
        it. A value that is an expansion (`-p"$DB_PASS"`) stays as written, which is no secret.
        """
        forms = table.CREDENTIAL_OPTIONS[name]
        for index, word in enumerate(words):
            value = word.value
            if value == "--":
                break
            if not value.startswith("-") or value == "-":
                continue
            secret: str | None = None
            if value.startswith("--") or value.partition("=")[0] in forms:
                option, equals, attached = value.partition("=")
                form = forms.get(option)
                if form is None:
                    continue
                if equals:
                    secret = attached
                elif form != "attached" and index + 1 < len(words):
                    secret = words[index + 1].value
            else:
                form = forms.get(value[1])  # the first letter: later ones may be another option's value
                if form is None:
                    continue
                if len(value) > 2:
                    secret = value[2:]
                elif form != "attached" and index + 1 < len(words):
                    secret = words[index + 1].value
            if not secret:
                continue
            if form == "user":
                cut = min((at for at in map(secret.find, ":%,") if at >= 0), default=-1)
                if cut < 0:
                    continue  # a user name alone: the program asks for the password
                secret = secret[cut + 1 :]
            elif form == "pass:":
                if not secret.startswith("pass:"):
                    continue  # env:VAR, file:PATH, stdin: no password on the line
                secret = secret[5:]
            if secret:
                self.words["password=" + secret] = None

    def _decoded(self, name: str, words: list[_Word], node: tree_sitter.Node, data: bytes) -> None:
        """A decoder fed literal text (`echo HEX | xxd -r -p`, `uudecode <<EOF`): the decoded text is a word too.

        What it writes goes on down the pipe (to `curl -d @-`), so the secret scan must see it as
        a word of the command: hex with or without separators, uuencode, base64 and base32, each
        also read as UTF-16 (`base64 -d | iconv -f UTF-16LE`). Bounded (MAX_DECODED characters).
        """
        encoding, switches = table.DECODERS[name]
        values = [word.value for word in words]
        if switches and not any(value in switches or value.startswith("--decode") for value in values):
            return
        if encoding == "basenc":
            chosen = (value[2:] for value in values if value in ("--base64", "--base64url", "--base32", "--base16"))
            encoding = next(chosen, "")
            encoding = {"base16": "hex", "base64url": "base64"}.get(encoding, encoding)
        try:
            texts = self._stdin_texts(name, node, data)
        except CommandError:
            return  # input the engine cannot read: nothing to decode
        for text in texts:
            for decoded in _decodings(encoding, text[:MAX_DECODED], "-p" in values or "-ps" in values):
                self.words[decoded] = None

    def _own_globs(self, name: str, words: list[_Word]) -> None:
        """Globs a program expands itself (`gsutil cp '.en?' gs://b`, `rsync --include='.env*'`): PathPatterns."""
        options = table.OWN_GLOBS[name]
        values = [word.value for word in words]
        operands = "*" in options and (name != "tar" or "--wildcards" in values)
        if name == "curl" and ("-g" in values or "--globoff" in values):
            return
        globs: list[str] = []
        excluded = False  # zip -x PAT...: the words after it, up to an option, are left out
        skip = -1
        for index, word in enumerate(words):
            value = word.value
            if not word.known or index == skip:
                continue  # an expansion: reported as written, a name of unknown place
            if value in ("-x", "--exclude"):
                excluded = name == "zip"
                skip = index + 1  # tar --exclude PAT
                continue
            if value.startswith("-"):
                excluded = False
                option, equals, attached = value.partition("=")
                if "-i!" in options and value.startswith("-i") and "!" in value:
                    globs.append(value[value.index("!") + 1 :])  # 7z -i!PAT, -ir!PAT, -ir-!PAT
                elif option in options and equals:
                    globs.append(_included(option, attached))
                elif value in options and index + 1 < len(words) and words[index + 1].known:
                    globs.append(_included(value, words[index + 1].value))
                elif value.startswith("-f") and "-f" in options and len(value) > 2:
                    globs.append(_included("-f", value[2:]))  # rsync -f'+ .env'
            elif operands and not excluded and any(char in value for char in "*?[{"):
                globs.append(value)
        for pattern in globs:
            if pattern:
                for form in glob_operands(pattern):
                    self._operand(form)

    def _runner_options(self, words: list[_Word], depth: int) -> None:
        """A known program with no row: a long option named for a command (`--init-hook`, `--exec`) runs its value."""
        # Round eleven (set I, option-runs-command): RUNNER_OPTION was read for rows and unknown
        # programs only; a program on the plain lists (`pylint --init-hook=CODE`, `sort
        # --compress-program=CMD`, `install --strip-program=CMD`) runs such a value the same way.
        for index, word in enumerate(words):
            value = word.value
            if value == "--":
                return
            if value.startswith("--") and table.RUNNER_OPTION.fullmatch(value.partition("=")[0]):
                if "=" in value:
                    self._code([_Word(value.partition("=")[2], word.known, word.single, ())], depth, value)
                elif index + 1 < len(words):
                    self._code([words[index + 1]], depth, value)

    def _unknown_program(self, words: list[_Word], depth: int) -> int:
        """A program no table knows: its words that read as command lines are read; the index of a command, or -1."""
        # The engine cannot tell whether an unknown program runs its words (`chronic rm -rf x`,
        # `hyperfine 'rm -rf x'`, `fzf --bind 'x:execute(rm {})'`), so a word that reads as a command
        # of a known program is taken for one; other words stay operands (`mytool build`).
        start = -1
        for index, word in enumerate(words):
            value = word.value
            if value.startswith("--") and table.RUNNER_OPTION.fullmatch(value.partition("=")[0]):
                # `--pre=CMD`, `--exec CMD`: an option named for a command; its value is read as one.
                if "=" in value:
                    self._code([_Word(value.partition("=")[2], word.known, word.single, ())], depth, value)
                elif index + 1 < len(words):
                    self._code([words[index + 1]], depth, value)
                continue
            if value.startswith("-") and table.CODE_OPTION.fullmatch(value.partition("=")[0]):
                self._operand(CODE_OPERAND)  # `janet2 --eval CODE`: code for an interpreter no table knows
            if value.startswith("-") and "=" in value:
                value = value.partition("=")[2]  # `--exec='rm -rf x'`
            if any(space in value for space in " \t\n;|&("):
                # Its first word past `NAME=VALUE` prefixes (`'FOO=1 rm x'`), or a known name where
                # shell text starts a command (`x:execute(rm {})`): parsed, and unknown if it cannot be.
                first = next((piece for piece in value.split() if not _ASSIGNMENT.match(piece)), "")
                # Round fourteen (set L, unknown-runner-shell-strings): the shell takes the quotes
                # and backslashes out of the string's words (`"\\rm -rf x"`, `"r'm' -rf x"`), and an
                # unknown program's deleting subcommand (`"hg remove src"`) is a command line too.
                bare = value.translate(_QUOTING) if _QUOTED_TEXT.search(value) else value
                if (
                    _names_known(first.translate(_QUOTING))
                    or any(_names_known(match.group(1)) for match in _COMMAND_POSITION.finditer(bare))
                    or _verb_line(bare)
                ):
                    self.parse(value.encode("utf-8"), depth + 1)
            elif start < 0 and word.known and not value.startswith("-") and _names_known(value):
                start = index
        return start

    # -- wrappers ------------------------------------------------------------------------------

    def _xargs_items(
        self, options: list[_Word], command: list[_Word], node: tree_sitter.Node, data: bytes, depth: int
    ) -> None:
        """xargs' input items are words of the command it runs: a literal input is read in them (`<<< 'rm -rf src'`).

        Round six (set E, shell-grammar-deleters): `xargs -I{} sh -c '{}' <<< 'rm -rf src'` runs
        `sh -c 'rm -rf src'`, and `printf .env | xargs cat` runs `cat .env`. With a replace string
        (-I STR, -i, --replace) each input line takes its place in every word; without one the
        items (blank-separated, or the whole input with -0/-d) are appended. Input that is not
        literal (`find ... | xargs`) stays unread unless the command is the item itself (its
        program or a shell's whole `-c` code): then what runs is unknown.
        """
        if not command:
            return
        replace: str | None = None
        whole = False
        for index, word in enumerate(options):
            value = word.value
            if value == "-I" and index + 1 < len(options):
                replace = options[index + 1].value
            elif value.startswith("-I") and len(value) > 2:
                replace = value[2:]
            elif value.startswith("-i") or value.startswith("--replace"):
                replace = value.partition("=")[2] if "=" in value else value[2:] or "{}"
            elif value in ("-0", "--null") or value.startswith(("-d", "--delimiter")):
                whole = True
        for word in self._echoed_words(node, data):
            self._word_operand(word)  # `echo .[e]nv | xargs cat`: echo writes what bash made of its words
        try:
            texts = self._stdin_texts("xargs", node, data) if _reads_stdin(node) else []
        except CommandError:
            texts = []
            if replace and (
                command[0].value.startswith(replace)
                or any(word.value.strip().startswith(replace) for word in command[2:3] if command[1].value == "-c")
            ):
                raise CommandError("xargs runs a command given on its input, which is not literal") from None
        items: list[str] = []
        for text in texts:
            if whole or replace:
                pieces = [text.rstrip("\n")] if whole else [line.strip() for line in text.splitlines()]
            else:
                try:
                    pieces = shlex.split(text)
                except ValueError:
                    pieces = text.split()
            items.extend(piece for piece in pieces if piece)
        values = [word.value for word in command]
        if replace:
            for item in items[:_MAX_ITEMS]:
                self._argv([_literal(value.replace(replace, item)) for value in values], node, data, depth + 1)
        elif items:
            self._argv([*command, *map(_literal, items[:_MAX_ITEMS])], node, data, depth + 1)

    def _container_run(self, words: list[_Word], depth: int) -> list[_Word] | None:
        """`docker run [OPTIONS] IMAGE [CMD...]`: the command after the image ([] if none); None to read words as today.

        Round six (set E, sqlclients): `docker run --rm postgres psql -h prod -c 'DROP ...'` runs
        psql. The options are many and change with each release, so an option the table does not
        list (or a word that is not literal) leaves today's reading, never unknown. `--entrypoint
        E` makes E the program; a first word that is an option is an argument of the image's own
        entrypoint (no program). `-v HOST:DIR` and `--env-file` name host paths.
        """
        try:
            start = self._wrapper_options("docker run", table.CONTAINER_RUN_OPTIONS, words, depth)
        except CommandError:
            return None
        entrypoint: str | None = None
        for index, word in enumerate(words[:start]):
            option, equals, value = word.value.partition("=")
            if option == "--entrypoint":
                entrypoint = value if equals else words[index + 1].value if index + 1 < start else None
        command = words[start + 1 :]  # the image (or compose's service) is words[start]; options end there
        if entrypoint:
            command = [_literal(entrypoint), *command]
        if command and command[0].value.startswith("-"):
            self._operands(command)
            return []
        return command

    def _after_globals(self, name: str, words: list[_Word], depth: int) -> list[_Word]:
        """The words from a program's subcommand on, past its global options (SUBCOMMAND_GLOBALS); all if unsure.

        Only a subcommand that runs a command (`exec`) needs the skip: a global option the table
        does not list leaves the words as they are (the program keeps today's reading), unless a
        later word may be that subcommand (`kubectl --x y exec pod -- rm x`): then it is unknown.
        """
        try:
            start = self._wrapper_options(name, table.SUBCOMMAND_GLOBALS[name], words, depth)
        except CommandError:
            if any((name, word.value) in table.SUBCOMMAND_WRAPPERS for word in words):
                raise
            return words
        if 0 < start < len(words) and (name, words[start].value) in table.SUBCOMMAND_WRAPPERS:
            return words[start:]
        return words

    def _echoed_words(self, node: tree_sitter.Node, data: bytes) -> list[_Word]:
        """The words of an `echo`/`printf` piped into this command (globs and braces as written), else none."""
        current = node.parent if node.parent is not None and node.parent.type == "redirected_statement" else node
        parent = current.parent
        if parent is None or parent.type != "pipeline":
            return []
        elements = parent.named_children
        place = next((i for i, element in enumerate(elements) if element.id == current.id), 0)
        source = elements[place - 1] if place else None
        if source is None or source.type != "command":
            return []
        words = [
            self._word(child.named_child(0) or child, data) if child.type == "command_name" else self._word(child, data)
            for child in source.named_children
            if child.type not in _REDIRECTS and child.type != "variable_assignment"
        ]
        if not words or _program(words[0])[1] not in table.TEXT_PROGRAMS:
            return []
        return [word for word in words[1:] if not _ECHO_OPTION.fullmatch(word.value)]

    def _wrapper_options(self, name: str, options: table.Wrapper, words: list[_Word], depth: int) -> int:
        """Index of the wrapped command in words, or -(i+1) when words[i:] are operands, not a command."""
        positionals = options.positionals
        cursor = _Cursor(words)
        # Unknown text here could be an option, an assignment or the program itself.
        for word in cursor.literal(f"{name}: the word ", " is not literal, so its command is unknown"):
            value = word.value
            if value == "--":
                return cursor.index + 1
            if value == "-" and name == "env":
                continue  # `env -` is `env -i`
            if value.startswith("--") and len(value) > 2:
                option, equals, _ = value.partition("=")
                if option in options.long_values:
                    self._wrapper_value(name, option, option, options, cursor, len(option) + 1 if equals else 0, depth)
                elif options.long_flags is not None and option not in options.long_flags:
                    if name == "env" and option == "--split-string":
                        raise CommandError("env --split-string builds its command from one string")
                    raise CommandError(f"{name}: unknown option {option!r}")
                continue
            if value.startswith("-") and len(value) > 1:
                for position in range(1, len(value)):
                    letter = value[position]
                    if letter in options.no_command:
                        return -(cursor.index + 2)
                    if letter in options.values:
                        attached = position + 1 if position + 1 < len(value) else 0
                        self._wrapper_value(name, letter, "-" + letter, options, cursor, attached, depth)
                        break
                    if letter in options.optional:
                        break  # the rest of the word, if any, is its value
                    if options.flags is not None and letter not in options.flags:
                        if name == "env" and letter == "S":
                            raise CommandError("env -S builds its command from one string")
                        raise CommandError(f"{name}: unknown option -{letter}")
                continue
            if options.assignments and value.startswith("BASH_FUNC_") and "%%=" in value:
                # bash imports `BASH_FUNC_f%%=() { ...; }` from its environment as function f: code.
                self._code([_literal("f" + value.partition("%%=")[2])], depth, name)
                continue
            if options.assignments and _ASSIGNMENT.match(value):
                variable, _, assigned = value.partition("=")
                if _special_variable(variable.rstrip("+")):
                    self._assignment(variable.rstrip("+"), _after(word.parts, len(variable) + 1), assigned, depth)
                else:
                    after = _after(word.parts, len(variable) + 1)
                    self._assigned_paths(variable.rstrip("+"), _Word(assigned, word.known, word.single, after))
                    if variable in cleaners.VARIABLES:
                        self.cache_env[variable] = _Word(assigned, word.known, word.single, after)
                    self._git_environment(variable, assigned if word.known else "$")
                continue
            if positionals > 0:
                positionals -= 1
                if options.positional_paths:
                    self._word_operand(word)
                continue
            return cursor.index
        return len(words)

    def _wrapper_value(
        self, name: str, option: str, shown: str, options: table.Wrapper, cursor: _Cursor, start: int, depth: int
    ) -> None:
        """A wrapper option's value: its own word from `start` when attached (start > 0), else the next word."""
        if start:
            self._option_value(option, options, cursor.words[cursor.index], depth, start)
        else:
            self._option_value(option, options, cursor.value(name, shown), depth)

    def _option_value(self, option: str, options: table.Wrapper, word: _Word, depth: int, start: int = 0) -> None:
        """Record an option's value (word from character `start`): a path, the command's directory, or code."""
        if option in options.paths:
            self._word_operand(word, start)
        if option in options.dirs:
            self._local_dir(_after(word.parts, start))
        if option in options.code:
            self._code([_Word(word.value[start:], word.known, word.single, _after(word.parts, start))], depth, option)

    # -- programs read by their grammar (shell_programs.GRAMMARS) -------------------------------

    def _grammar(
        self, name: str, grammar: table.Grammar, words: list[_Word], node: tree_sitter.Node, data: bytes, depth: int
    ) -> None:
        """A program whose options and operands the table describes: paths, URLs, code and patterns."""
        pathspecs = True  # git: whether the subcommand's operands may be pathspecs
        if name == "git":
            words = self._git_globals(words, depth)
            if words and words[0].value in _GIT_SAFETY_OPTIONS:
                self.git_lines.append((words[0].value, " ".join(["git", *(word.value for word in words)])))
            if not words or self._git_subcommand(words[0].value, words[1:], node, data, depth):
                return
            if words[0].value not in table.GIT_MESSAGE_SUBCOMMANDS:
                grammar = _GIT_WITHOUT_MESSAGE  # `git show -m HEAD:.env`: -m is a flag there
            pathspecs = words[0].value not in table.GIT_NO_PATHSPECS
            words = words[1:]  # the subcommand names no file
        operands: list[_Word] = []
        scripted = False  # a pattern or script came from an option (`grep -e PAT`), not the first operand
        code = False  # code for the program came from an option (`python -c CODE`)
        options_done = False
        cursor = _Cursor(words)
        for word in cursor:
            value = word.value
            if options_done or not value.startswith("-") or value == "-":
                operands.append(word)
                if grammar.interpreter or (name == "ssh" and len(operands) > 1):
                    options_done = True  # `python x.py -c`, `ssh host ls -la`: the rest are arguments
                continue
            if value == "--":
                options_done = True
                continue
            taken = False  # a one-dash word's letter took its value, or may have (an optional value)
            if value.startswith("--"):
                option, equals, _ = value.partition("=")
                after = len(option) + 1  # where an attached value starts
                if not _takes_value(grammar, option) and name not in _NO_ABBREVIATIONS:
                    option = _abbreviation(grammar, option)  # `curl --upload-fi .env`: getopt_long's prefixes
                if not _takes_value(grammar, option):
                    if table.RUNNER_OPTION.fullmatch(option):
                        # A long option named for a command the row does not list (`rg --pre CMD`):
                        # its value is read as one, attached or the next word.
                        if equals:
                            self._code([_Word(value[after:], word.known, word.single, ())], depth, name)
                        elif (runner := cursor.take()) is not None:
                            self._code([runner], depth, name)
                        continue
                    if equals:
                        self._word_operand(word, after)  # an unknown --name=VALUE may be a path
                    continue
                if option in grammar.pairs:
                    cursor.index += 1  # the name comes first
                start = after if equals else 0
                taken = True  # a long option's word is never a path of its own
            else:
                if len(value) > 2 and _takes_value(grammar, value[1:]) and (following := cursor.take()) is not None:
                    # A one-dash option of several letters (`zip -TT CMD`, `find`-style programs).
                    code |= self._option(name, grammar, value[1:], following, 0, depth)
                    continue
                sign = value.find("=")
                if sign > 2 and _takes_value(grammar, value[1:sign]) and len(value[1:sign]) > 1:
                    # Its value attached by `=` (`go build -toolexec=CMD`, go's flag package).
                    code |= self._option(name, grammar, value[1:sign], word, sign + 1, depth)
                    continue
                option, start = "", 0
                for position in range(1, len(value)):
                    letter = value[position]
                    if letter in grammar.optional:
                        taken = True
                        break  # its value, if any, is the rest of the word
                    if _takes_value(grammar, letter):
                        option, start = letter, position + 1 if position + 1 < len(value) else 0
                        break
            given = cursor.value_of(word, start) if option else None
            if given is None:
                if not taken and len(value) > 2:
                    # `-xf/etc/x`, `-i.env`: an unknown option's attached value may be a path
                    self._operands([word])
                continue
            scripted |= option in grammar.scripts
            code |= self._option(name, grammar, option, *given, depth)
            options_done |= grammar.interpreter and (code or scripted)  # python -c CODE ARGS...
        if code:
            self._operand(CODE_OPERAND)
        if name in ("ssh", "nc"):
            self._connection(name, operands, depth)
            return
        pattern: _Word | None = None
        if grammar.first_is_pattern and not scripted and operands:
            script = pattern = operands.pop(0)
            check = _SCRIPT_CHECKS.get(name)
            if check is not None and (not script.known or check(script.value)):
                self._operand(CODE_OPERAND)  # a script that may run commands or open files
        if name == "python" and scripted and not code and self._python_module_code(words, operands, node):
            code = True
            self._operand(CODE_OPERAND)
        if (
            grammar.interpreter
            and not code
            and not scripted
            and (_reads_stdin(node) if not operands else operands[0].value in _STDIN_FILES)
        ):
            self._operand(CODE_OPERAND)  # `python <<EOF`, `curl ... | python`, `python3 - <<EOF`: code from stdin
        if name in table.STDIN_SCRIPTS and _reads_stdin(node):
            self._stdin_script(name, node, data, depth)
        for word in operands:
            self._grammar_operand(name, grammar, word, depth)
            if grammar.revisions:
                self._git_names(word, pathspecs)
        if name in ("fd", "fdfind"):
            self._fd_found(words, pattern, operands, node, data)

    def _python_module_code(self, words: list[_Word], operands: list[_Word], node: tree_sitter.Node) -> bool:
        """`python -m code <<EOF`, `python -m timeit STMT`: a module that runs code it is given."""
        module = ""
        known = True
        for index, word in enumerate(words):
            value = word.value
            if value == "-m" and index + 1 < len(words):
                module, known = words[index + 1].value, words[index + 1].known
                break
            if value.startswith("-m") and len(value) > 2:
                module, known = value[2:], word.known
                break
        top = module.partition(".")[0]
        if top in table.PYTHON_CODE_MODULES:
            return bool(operands)
        # A module name the engine cannot read may be any of them.
        return (top in table.PYTHON_STDIN_MODULES or not known) and _reads_stdin(node)

    def _fd_found(
        self, words: list[_Word], pattern: _Word | None, places: list[_Word], node: tree_sitter.Node, data: bytes
    ) -> None:
        """fd's files, when -x/-X or a pipe is handed them: `-e EXT`, a glob (-g) or a regex on the name."""
        values = [word.value for word in words]
        if not _writes_pipe(node, data) and not any(
            value in ("-x", "-X", "--exec", "--exec-batch") or value.startswith(("--exec=", "--exec-batch="))
            for value in values
        ):
            return
        names: list[str] = []
        for index, value in enumerate(values):
            if value in ("-e", "--extension") and index + 1 < len(values):
                names.append("*." + values[index + 1].lstrip("."))
            elif value.startswith("--extension="):
                names.append("*." + value.partition("=")[2].lstrip("."))
        if pattern is not None:
            if not pattern.known or any(value in ("-p", "--full-path") for value in values):
                names.append(UNKNOWN_FILES)
            elif any(value in ("-g", "--glob") for value in values):
                names.append(pattern.value or "*")  # a glob of its own (fd -g)
            else:
                names.append(_regex_name(pattern.value))
        self._found([place.value for place in places] or ["."], names)
        for place in places or [_literal(".")]:
            for form in _forms(place.parts):
                self._swept(form)  # round fourteen: `fd . ~ -X cat` reads every file below ~

    def _option(self, name: str, grammar: table.Grammar, option: str, word: _Word, start: int, depth: int) -> bool:
        """One option's value (word from `start`); returns whether it is code for the program."""
        if not word.single and "{" in word.value[start:]:
            # bash expands braces before the program reads its option (`curl -d {@.env,x}` passes
            # `-d @.env -d x`... as words): each expansion is read as the option's value.
            pieces = _brace_words(_after(word.parts, start))
            if pieces is None:
                self._operand(UNKNOWN_BRACES)
                return False
            if len(pieces) > 1 or pieces[0].value != word.value[start:]:
                code = False
                for index, piece in enumerate(pieces):
                    code |= self._option(name, grammar, option, piece, 0, depth)
                    if index and not start:
                        # A separate word's later expansions are operands to the program (`-d @.env x`).
                        self._grammar_operand(name, grammar, piece, depth)
                return code
        if (pin := _url_pins.option_syntax(name, option)) is not None:
            # Where the option sends the connection (`curl --resolve x:80:169.254.169.254`, `ssh -L
            # 8169:ADDR:80`, `wget -e http_proxy=ADDR`): each address operand is a host the call reaches.
            for target in _url_pins.targets(pin, word.value[start:]):
                self._url(target)
        if option in grammar.paths:
            self._word_operand(word, start)
            remote = _REMOTE.fullmatch(word.value[start:]) if name == "tar" and option in ("f", "--file") else None
            if remote is not None and not self.force_local:
                # Round nine (set H, tar-remote-archive): GNU tar's archive HOST:FILE is read or written
                # on HOST over rsh/ssh (rmt) unless --force-local: a URL of the command.
                place = remote.group(2)
                self._url(f"ssh://{remote.group(1)}{place if place.startswith('/') else '/' + place}")
            # `make -f /dev/stdin`, `awk -f -`: the script file is standard input, so code.
            return option in table.SCRIPT_FILE_OPTIONS.get(name, ()) and word.value[start:] in _STDIN_FILES
        elif option in grammar.dirs:
            self._dir_operand(word, start)
            self._local_dir(_after(word.parts, start))
        elif option in grammar.data:
            self._data_file(option, word, start)
        elif option in grammar.globs:
            self._file_glob(word, start)
        elif option in grammar.urls:
            target = word.value[start:]
            # curl takes a bare host (`-x 169.254.169.254:80`) as http://.
            self._url(target if name != "curl" or not target or _URL.match(target) else "http://" + target)
        elif option in grammar.runs:
            self._code([_Word(word.value[start:], word.known, word.single, _after(word.parts, start))], depth, name)
        elif option in grammar.code:
            return True
        elif name == "ssh" and option == "o":
            key, _, setting = word.value[start:].partition("=")
            if key.strip().casefold() in _SSH_CODE_OPTIONS:
                self._code([_literal(setting)] if word.known else [word], depth, "ssh -o")
        elif name == "sed" and option in ("e", "--expression") and (not word.known or _sed_runs(word.value[start:])):
            self._operand(CODE_OPERAND)
        elif name == "tar" and option == "--checkpoint-action" and word.value[start:].startswith("exec="):
            self._code(
                [_Word(word.value[start + 5 :], word.known, word.single, _after(word.parts, start + 5))], depth, name
            )
        elif (
            option in _DEFINE_OPTIONS
            and (define := _DEFINE.match(word.value, start)) is not None
            and _DEFINE_PLACE.match(word.value, define.end())
        ):
            # Round thirteen (set K, glued-define-paths): a define's value names the place a build installs
            # to or reads (`cmake -DCMAKE_INSTALL_PREFIX=/usr`, `-DX:PATH=/etc/app`): an operand, as make's X=/x is.
            self._word_operand(word, define.end())
        return False

    def _file_glob(self, word: _Word, start: int) -> None:
        """`grep --include=GLOB`, `rg -g GLOB`: the program reads the files the glob selects (`!GLOB` excludes)."""
        value = word.value[start:]
        if not word.known and ("$" in value or "`" in value):
            self._operand(value)  # an expansion as written: a name of unknown place
        elif value and not value.startswith("!"):
            self._operand(paths.PathPattern(value))

    def _data_file(self, option: str, word: _Word, start: int) -> None:
        """curl's `-d @FILE`, `-F name=@FILE;type=...`, `-F name=<FILE`, `--data-urlencode name@FILE`, `-b FILE`."""
        value = word.value[start:]
        if option in ("b", "--cookie"):
            if "=" not in value:
                self._word_operand(word, start)  # a cookie file
            return
        at = value.find("@")
        if option in ("F", "--form") and (below := value.find("=<")) >= 0 and (at < 0 or below < at):
            at = below + 1
        named = option in ("--data-urlencode", "--variable")  # NAME@FILE
        if at < 0 or (at and value[at - 1] != "=" and not (named and "=" not in value[:at])):
            return
        end = value.find(";", at) if option in ("F", "--form") else -1
        path = _after(word.parts, start + at + 1)
        if end >= 0:
            path = _before(path, end - at - 1)
        for form in _forms(path):
            self._operand(form)

    def _grammar_operand(self, name: str, grammar: table.Grammar, word: _Word, depth: int = 0) -> None:
        """One operand of a program the table describes."""
        value = word.value
        if grammar.plus_code and value.startswith("+") and len(value) > 1:
            self._operand(CODE_OPERAND)  # vim +CMD
            return
        if grammar.plus_shell and value.startswith("+"):
            if not word.known:
                raise CommandError(f"{name} runs commands that are not literal: {value!r}")
            if "!" in value:
                self.parse(value[value.index("!") + 1 :].encode("utf-8"), depth + 1)  # less '+!CMD'
            return
        if grammar.url_operands:
            if _URL.match(value):
                self._url(value)
                if value[:5].casefold() == "file:":
                    # A local file after all; curl expands {a,b} and [a-z] in it itself: unknown then.
                    if "{" in value or "[" in value:
                        self._operand(UNKNOWN_BRACES)
                    else:
                        self._word_operand(word)
            elif value and not value.startswith("-"):
                self._url("http://" + value)  # curl and wget take a bare host for http
            return
        if grammar.remote_operands and (remote := _REMOTE.fullmatch(value)) is not None:
            place = remote.group(2)
            self._url(f"ssh://{remote.group(1)}{place if place.startswith('/') else '/' + place}")
            return
        self._word_operand(word)
        if "=" in value and _KEY.match(value):
            self._word_operand(word, value.index("=") + 1)  # make DESTDIR=/x
            if name == "make" and word.known:
                # make's VAR=VALUE sets a variable its recipes may run (`make CC='rm -rf x'`): a
                # value that reads as a command of a known program is read as one.
                assigned = value.partition("=")[2]
                first = next((piece for piece in assigned.split() if not _ASSIGNMENT.match(piece)), "")
                if _names_known(first):
                    self.parse(assigned.encode("utf-8"), depth + 1)

    def _connection(self, name: str, operands: list[_Word], depth: int) -> None:
        """ssh HOST [COMMAND...] (the command is shell code run there), nc HOST PORT: URLs."""
        if not operands:
            return
        host = operands[0].value
        if name == "nc":
            port = operands[1].value if len(operands) > 1 else ""
            if port or not host.isdigit():  # `nc -l 8080`: a port to listen on, no host
                self._url(f"tcp://{host}:{port}" if port else f"tcp://{host}")
            return
        rest = operands[1:]
        first = operands[0]
        if not first.single and "{" in host:
            # `ssh {root@HOST,x}` is `ssh root@HOST x` to ssh: the first expansion is the host,
            # the others start the remote command.
            pieces = _brace_words(first.parts)
            if pieces is None:
                raise CommandError("ssh: a brace expansion of its destination past the bounds")
            host, rest = pieces[0].value, [*pieces[1:], *rest]
        if _URL.match(host):
            self._url(host)
        else:
            # ssh splits user and host at the last `@` (`./root@HOST` is the user `./root`): the
            # user is percent-encoded so that no `/` or `@` of it can move the URL's host.
            user, at, place = host.rpartition("@")
            self._url(f"ssh://{urllib.parse.quote(user, safe='')}@{place}" if at else f"ssh://{host}")
        self._code(rest, depth, "ssh")  # the remote command line: parsed as shell code

    # -- git -----------------------------------------------------------------------------------

    def _git_globals(self, words: list[_Word], depth: int) -> list[_Word]:
        """git's options before its subcommand (-C DIR, -c KEY=VALUE, --git-dir...): the words from the subcommand."""
        cursor = _Cursor(words)
        for word in cursor.literal("git: the word ", " is not literal, so what git runs is unknown"):
            value = word.value
            option, equals, _ = value.partition("=")
            if value in ("-C", "-c") or option in _GIT_VALUE_OPTIONS:
                given = cursor.value_of(word, len(option) + 1 if equals else 0)
                if given is None:
                    return []  # no value: no subcommand either
                target, start = given
                if not target.known:
                    raise CommandError(f"git: the value of {option} is not literal")
                if value == "-c":
                    self._git_setting(target.value, depth)
                elif option == "--config-env":
                    key = target.value[start:].partition("=")[0]  # `--config-env=KEY=VAR` too
                    self._git_safety(key, "", False)  # its value comes from the environment: unknown
                    if _git_key_kind(key):
                        raise CommandError(f"git --config-env sets {key} from the environment")
                elif value == "-C" or option in ("--git-dir", "--work-tree"):
                    if option == "--work-tree":
                        self._word_operand(target, start)  # the files git add and stash read
                    else:
                        self._dir_operand(target, start)
                    if value == "-C":
                        self._local_dir(_after(target.parts, start))
                continue
            if value.startswith("-"):
                if option in ("--exec-path",) and equals:
                    self._word_operand(word, len(option) + 1)
                continue
            break
        return words[cursor.index :]

    def _git_setting(self, setting: str, depth: int) -> None:
        """KEY=VALUE of `git -c` or `git config`: a value that git runs is parsed as shell code."""
        key, equals, value = setting.partition("=")
        if equals:
            self._git_safety(key, value, True)
        kind = _git_key_kind(key)
        if kind == "path":
            self._operand(value)
        elif kind == "code" or (value.startswith("!") and _git_bang_key(key)):
            self.parse(value.removeprefix("!").encode("utf-8"), depth + 1)
        elif key.casefold().startswith("alias.") and value:
            # Without `!` an alias is git's own words (`alias.x='show HEAD:.env'`): read as a git command.
            self.parse(f"git {value}".encode(), depth + 1)
        if value[:5].casefold() == "ext::":
            self._git_ext(value[5:], depth)  # remote.NAME.url=ext::CMD
        if key.casefold().endswith(".proxy") and value:
            # Round fifteen (set M): http.proxy, http.URL.proxy, remote.NAME.proxy: where git connects.
            for target in _url_pins.targets(_url_pins.PROXY, value):
                self._url(target)
        folded = key.casefold()
        if folded.startswith("url.ext::"):
            self._git_ext(key[9:].rpartition(".")[0], depth)  # url.ext::CMD.insteadOf=https://

    def _git_safety(self, key: str, value: str, known: bool) -> None:
        """A git config KEY=VALUE on the line that may turn a subcommand's safety switch off (GIT_SAFETY_KEYS)."""
        # Over-approximated: a key that holds the variable's name (`./clean.requireForce`) or a glob
        # that may match the key (`[c]lean.requireForce`) counts; git refuses the keys that are not it.
        folded = key.casefold()
        if known and value.strip().casefold() in table.GIT_TRUE:
            return
        for safety, (subcommand, _) in table.GIT_SAFETY_KEYS.items():
            globbed = any(char in folded for char in "*?[") and fnmatch.fnmatchcase(safety, folded)
            if globbed or safety.rpartition(".")[2] in folded:
                self.git_forced.add(subcommand)

    def _git_environment(self, name: str, value: str) -> None:
        """GIT_CONFIG_KEY_n / GIT_CONFIG_PARAMETERS naming a safety key: its value is taken as false (_git_safety)."""
        if name.startswith("GIT_CONFIG_KEY_") or name == "GIT_CONFIG_PARAMETERS":
            folded = value.casefold()
            for key, (subcommand, _) in table.GIT_SAFETY_KEYS.items():
                if key in folded or not _literal_text(value):
                    self.git_forced.add(subcommand)

    def _git_ext(self, text: str, depth: int) -> None:
        """The command of an `ext::` URL (git-remote-ext(1)): words split at unescaped spaces, run without a shell."""
        arguments: list[str] = []
        current: list[str] = []
        index = 0
        length = len(text)
        while index < length:
            char = text[index]
            if char == "%" and index + 1 < length:
                current.append(_GIT_EXT_ESCAPES.get(text[index + 1], text[index : index + 2]))
                index += 2
                continue
            if char == " ":
                arguments.append("".join(current))
                current = []
            else:
                current.append(char)
            index += 1
        arguments.append("".join(current))
        # %G and %V arguments are read by the helper, not passed to the command.
        argv = [argument for argument in arguments if argument and not argument.startswith(("%G", "%V"))]
        if argv:
            self.parse(shlex.join(argv).encode("utf-8"), depth + 1)

    def _git_subcommand(
        self, subcommand: str, words: list[_Word], node: tree_sitter.Node, data: bytes, depth: int
    ) -> bool:
        """git subcommands that run commands; returns True when the words are fully read."""
        values = [word.value for word in words]
        if subcommand == "bisect" and values[:1] == ["run"]:
            self._argv(words[1:], node, data, depth)
            return True
        if subcommand == "submodule" and "foreach" in values:
            rest = words[values.index("foreach") + 1 :]
            while rest and rest[0].value.startswith("-"):
                rest = rest[1:]
            self._code(rest, depth, "git submodule foreach")
            return True
        for word in words:
            if "::" in word.value and "ext::" in word.value.casefold():
                if not word.known:
                    raise CommandError("git is given an ext:: URL that is not literal: what it runs is unknown")
                value = word.value
                if value.startswith("-") and "=" in value:
                    value = value.partition("=")[2]  # `archive --remote=ext::CMD`, `--reference=`
                if value[:5].casefold() == "ext::":
                    self._git_ext(value[5:], depth)
        if subcommand == "config":
            # `git config [--file F] KEY VALUE`, `git config set KEY VALUE`: every pair of words is tried.
            plain = [word for word in words if not word.value.startswith("-")]
            for key, setting in itertools.pairwise(plain):
                if key.known:
                    self._git_safety(key.value, setting.value, setting.known)
                elif any(part in key.value.casefold() for part in ("clean", "force", "$", "*", "?", "[")):
                    self._git_safety("clean.requireforce", "", False)  # a key that may become the switch
                if setting.known and (not key.known or "proxy" in key.value.casefold() or _GLOBBED.search(key.value)):
                    # Round fifteen (set M): http.proxy, http.URL.proxy, remote.NAME.proxy: where git's
                    # later fetches connect; a key that may become one (a glob, braces) counts too.
                    for target in _url_pins.targets(_url_pins.PROXY, setting.value):
                        self._url(target)
                if key.known and not _git_setting_runs(key.value, setting.value):
                    continue
                if not setting.known:
                    raise CommandError("git config sets a command that is not literal")
                if key.known:
                    self._git_setting(f"{key.value}={setting.value}", depth)
                else:
                    # A key that is not literal (`$K`, `tar.*.comman?`, braces) may become any key,
                    # one that runs its value too.
                    self.parse(setting.value.removeprefix("!").encode("utf-8"), depth + 1)
            return False
        if subcommand == "rm" and not _git_rm_keeps(words):
            # Round fourteen (set L, unlisted-local-deleters): `git rm` deletes the files from the
            # work tree too (uncommitted changes with -f); --cached and --dry-run keep them.
            self.programs["rm"] = None
        self._git_options(subcommand, words, depth)
        self._git_stdin(subcommand, words, node, data)
        if subcommand in table.GIT_PATCH_READERS:
            self._git_patch(subcommand, node, data)
        return False

    def _git_patch(self, subcommand: str, node: tree_sitter.Node, data: bytes) -> None:
        """`git apply <<EOF`, `git am`, `patch <<EOF`: the files a literal patch on stdin writes (---/+++, renames)."""
        try:
            texts = self._stdin_texts(
                subcommand if subcommand in table.PATCH_PROGRAMS else f"git {subcommand}", node, data
            )
        except CommandError:
            self._operand(_GIT_UNKNOWN_NAMES)  # a patch another program writes: it may name any file
            return
        for text in texts:
            for match in _PATCH_NAME.finditer(text):
                for name in match.groups():
                    name = (name or "").rstrip()  # a name ends at a tab (a timestamp may follow) or the line
                    if name and name != "/dev/null":
                        self._word_operand(_literal(name))

    def _git_options(self, subcommand: str, words: list[_Word], depth: int) -> None:
        """A subcommand's options whose value is a command (`difftool -x CMD`) or config (`clone -c K=V`)."""
        runs = table.GIT_RUNS.get(subcommand, frozenset())
        attached = table.GIT_RUNS_ATTACHED.get(subcommand, frozenset())
        configs = table.GIT_CONFIG_OPTIONS.get(subcommand, frozenset())
        ranges = table.GIT_RANGE_FILES.get(subcommand, frozenset())
        code = table.GIT_CODE_OPTIONS.get(subcommand, frozenset())
        wanted = runs | attached | configs | ranges | code
        if not wanted:
            return
        cursor = _Cursor(words)
        for word in cursor:
            value = word.value
            if value == "--":
                return
            target: _Word | None = None
            if value.startswith("--") and len(value) > 2:
                given, equals, _ = value.partition("=")
                option = _git_long_option(given, wanted)
                if option is None:
                    continue
                if equals:
                    target = _Word(value[len(given) + 1 :], word.known, word.single, _after(word.parts, len(given) + 1))
                elif option not in attached:
                    target = cursor.take()
            elif value.startswith("-") and len(value) > 1:
                # Short options bundle (`-yx CMD`): the first letter that takes a command ends the word.
                position = next((i for i in range(1, len(value)) if value[i] in wanted), 0)
                if not position:
                    continue
                option = value[position]
                if position + 1 < len(value):
                    start = position + 1
                    target = _Word(value[start:], word.known, word.single, _after(word.parts, start))
                elif option not in attached:
                    target = cursor.take()
            else:
                continue
            if target is None:
                continue
            if option in configs:
                if not target.known:
                    raise CommandError(f"git {subcommand} sets config that is not literal")
                self._git_setting(target.value, depth)
            elif option in ranges:
                self._word_operand(target, target.value.rfind(":") + 1)  # -L 1,9:FILE, -L :NAME:FILE
            elif option in code:
                self._operand(CODE_OPERAND)  # `git filter-repo --blob-callback CODE`: Python
            else:
                self._code([target], depth, f"git {subcommand}")

    def _git_stdin(self, subcommand: str, words: list[_Word], node: tree_sitter.Node, data: bytes) -> None:
        """`git cat-file --batch` and kin read object names or paths from stdin: its literal text names them."""
        content = table.GIT_STDIN_CONTENT.get(subcommand, frozenset())
        if not any(word.value.startswith(_GIT_STDIN_PREFIXES) for word in words):
            return
        options = set()
        for index, word in enumerate(words):
            if word.value == "--":
                break
            option, equals, value = word.value.partition("=")
            if option == "--pathspec-from-file":
                given = value if equals else words[index + 1].value if index + 1 < len(words) else ""
                if given != "-":
                    self._operand(_GIT_UNKNOWN_NAMES)  # pathspecs in a file the engine does not read
                    continue
                content = content | {option}  # `-`: from stdin, and they select what git reads or writes
            if option in content or option in table.GIT_STDIN_NAMES:
                options.add(option)
        if not options:
            return
        unknown = _reads_input_file(node, data)
        try:
            texts = self._stdin_texts(f"git {subcommand}", node, data)
        except CommandError:
            texts, unknown = [], True  # written by another program: the names are not known here
        if unknown and options & content:
            self._operand(_GIT_UNKNOWN_NAMES)
        for text in texts:
            for line in text.splitlines():
                line = line.strip()
                for name in dict.fromkeys([line, *line.split()]):
                    if name and not name.startswith("-"):
                        word = _literal(name)
                        self._word_operand(word)
                        self._git_names(word, pathspecs=True)

    def _git_names(self, word: _Word, pathspecs: bool) -> None:
        """What git makes of an operand beyond the word: REV:PATH's path, a pathspec's magic and glob."""
        value = word.value
        start = _git_revision_path(value)
        if start is not None:
            self._word_operand(word, start)  # HEAD:.env names .env
        if pathspecs and all(kind != _EXPANDED for kind, _ in word.parts):
            for form in _git_pathspec(value):
                self._operand(form)
        if any(kind == _BARE and "{" in text for kind, text in word.parts):
            # bash expands braces before git reads its words: `{HEAD:.env,x}` gives `HEAD:.env`.
            for expanded in _forms(word.parts):
                start = _git_revision_path(expanded)
                if start is not None:
                    path = expanded[start:]
                    self._operand(paths.PathPattern(path) if isinstance(expanded, paths.PathPattern) else path)
                if pathspecs and not isinstance(expanded, paths.PathPattern) and "$" not in expanded:
                    for form in _git_pathspec(expanded):
                        self._operand(form)

    # -- environment variables -----------------------------------------------------------------

    def _variable_assignment(self, node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """NAME=VALUE: a variable whose value a program runs, or loads as a library, is read as such."""
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None or value_node is None:
            return
        name = _text(name_node, data)
        if name in table.CREDENTIAL_VARIABLES:
            self.words["password=" + self._word(value_node, data).value] = None  # `PGPASSWORD=PASS psql`
        self._cache_variable(node, data)
        for item in value_node.named_children if value_node.type == "array" else (value_node,):
            text = _text(item, data)
            if "$(" in text or "`" in text or "\\" in text or "$'" in text:
                self._subscript_code(self._word(item, data), data, depth)
        self._remember(node, name, value_node, data)
        if not _special_variable(name):
            if value_node.type != "array":
                word = self._word(value_node, data)
                parent = node.parent
                exported = (
                    parent is not None and parent.type == "declaration_command" and _text(parent, data)[:6] == "export"
                )
                if (parent is not None and parent.type == "command") or exported:
                    self._assigned_paths(name, word)  # the environment of a program (`export` too)
                if name.lower() in _url_pins.PROXY_VARIABLES and word.known:
                    # Round fifteen (set M): `https_proxy=ADDR curl URL` sends the request to ADDR.
                    for target in _url_pins.targets(_url_pins.PROXY, word.value):
                        self._url(target)
                self._git_environment(name, word.value if word.known else "$")
            return
        word = self._word(value_node, data)
        self._assignment(name, word.parts, word.value, depth, word.known)

    def _assigned_paths(self, name: str, word: _Word) -> None:
        """A variable set to a path names that path (`PREFIX=/usr make install`, `GOBIN=/usr/local/bin go install`).

        Round six (set E, shell-system-paths): build and install tools take their targets from the
        environment (PREFIX, DESTDIR, GOBIN, CARGO_INSTALL_ROOT...), and no table can list every
        name; so any assignment's value, or piece of a `:` list, that is spelled as a path
        (`/`, `~`, `./`, `../`) is a path operand, as `make PREFIX=/usr` already is. Search lists
        (`PATH`, `MANPATH`, `*PATH` not in PATH_VARIABLES) only say where to look: not operands.
        """
        if name.endswith("PATH") or (not word.value.startswith(_PATH_STARTS) and ":" not in word.value):
            return
        # Round fourteen: a value is swept only where it names the tree a program reads (GIT_WORK_TREE);
        # `export PROJECTS=~` or `HOME=/home/dev npm test` hands no program the folder's files.
        reader, self.reader = self.reader, "" if name in table.WORK_TREE_VARIABLES else "export"
        for form in _forms(word.parts):
            for piece in _PATH_LIST.split(form):
                if piece.startswith(_PATH_STARTS):
                    self._operand(paths.PathPattern(piece) if isinstance(form, paths.PathPattern) else piece)
        self.reader = reader

    def _remember(self, node: tree_sitter.Node, name: str, value_node: tree_sitter.Node | None, data: bytes) -> None:
        """Keep NAME=VALUE for later words when it surely runs, in order, with literal text; else NAME is unknown."""
        base = name.split("[", 1)[0]  # `f[0]=x` sets what `$f` reads
        self.variables.pop(base, None)
        if self.level != 1:
            return  # in code the line runs (eval, a trap): it may run at another time
        if self.resolving is None:
            self.resolving = not _may_set_variables(data)  # the line's own text
        if not self.resolving or base != name or name in _DYNAMIC or name.startswith("BASH"):
            return
        if value_node is None or value_node.type == "array":
            return  # `f=` (empty: an unquoted `$f` vanishes) and arrays stay unknown
        operator = node.child(1)
        if operator is None or operator.type != "=" or not _sure(node):
            return  # `f+=x` appends to a value that may be unknown
        word = self._word(value_node, data)
        value = word.value
        if value and "~" not in value and all(kind != _EXPANDED for kind, _ in word.parts):
            self.variables[name] = value  # an assignment's value is neither split nor globbed

    def _subscript_code(self, word: _Word, data: bytes, depth: int, stdin: bool = False) -> None:
        """Text that bash may run later as an array subscript in arithmetic: its `$(...)` is read now.

        bash evaluates a variable's value in arithmetic (`$(( x ))`, `(( x++ ))`, `let x+=1`,
        `[[ $x -gt 1 ]]`, `${arr[x]}`) and expands the subscript of an array reference in it, so
        `x='a[$(rm -rf b)]'; echo $(( x ))` runs rm although the `$(` was quoted. Where the value
        reaches arithmetic cannot be told, so a quoted `$(` or backtick after a `[` in the value,
        or any quoted one on a line that subscripts with an expansion (`a[$x]`: bash expands it
        twice) or evaluates arithmetic at all (the value may be assembled there from pieces), has
        the substitution read as code; a syntax error there makes the command unknown.
        An unquoted `$(...)` is a substitution the walk reads already. Text on standard input
        (`stdin`: a heredoc's body, a here-string) becomes a value only through a program on the
        same line (`read`, `$(cat <<EOF)`): read by one, it is a value as above; otherwise only a
        line (the body left out) that evaluates arithmetic or subscripts with an expansion reads it
        (`cat <<'EOF' > f` with `[` and a backtick in it is data).
        """
        value = word.value
        quoted: list[tuple[int, int]] = []  # (start, end) of the quoted pieces in value
        offset = 0
        for kind, text in word.parts:
            if kind == _QUOTED:
                quoted.append((offset, offset + len(text)))
            offset += len(text)
        start = _quoted_substitution(value)
        while start >= 0 and not any(begin <= start < end for begin, end in quoted):
            following = _quoted_substitution(value[start + 1 :])
            start = start + 1 + following if following >= 0 else -1
        if start < 0:
            return
        # Text on stdin is not part of the line that may subscript or evaluate it: a `[` and a
        # backtick inside a quoted heredoc's body are the body's, not the line's.
        line = data.replace(value.encode("utf-8", "surrogatepass"), b"") if stdin else data
        if stdin and _STDIN_TO_VARIABLE.search(line):
            stdin = False  # `read x <<'EOF'`, `$(cat <<EOF)`: the body becomes a variable's value
        if (
            (stdin or "[" not in value[:start])
            and b"[$" not in line
            and b"[`" not in line
            and not _ARITHMETIC.search(line)
        ):
            return
        self.parse(b"echo " + value[start:].encode("utf-8"), depth + 1)

    def _text_output(self, value: str) -> str | None:
        """A word with its `$(echo ARGS)` / `$(printf FORMAT ARGS)` replaced by their text, when every one can be.

        A secret split around a substitution that only prints literal text (`"AKIA.."$(echo ..)`,
        `"$(printf "$K" REST)"` with K set on the line) is whole again in this view, for the
        secret scan; anything else (other programs, unknown variables, other printf directives)
        leaves the word as it is.
        """

        def output(match: re.Match[str]) -> str:
            inner = _VARIABLE.sub(lambda m: self._variable_text(m.group(1) or m.group(2)), match.group(2))
            try:
                args = shlex.split(inner)
            except ValueError:
                raise _Unresolved from None
            if match.group(1) == "echo":
                while args and _ECHO_OPTION.fullmatch(args[0]):
                    args.pop(0)
                return " ".join(args).rstrip("\n")
            return _printf(args).rstrip("\n")

        if len(value) > MAX_DECODED:
            return None
        try:
            text = _TEXT_SUBSTITUTION.sub(output, value)
        except _Unresolved:
            return None
        return text if text != value else None

    def _variable_text(self, name: str) -> str:
        """A variable's literal value set earlier on the line (for _text_output); unknown stops the view."""
        value = self.variables.get(name) if self.level == 1 else None
        if value is None:
            raise _Unresolved
        return value

    def _repl_code(self, name: str, words: list[_Word], node: tree_sitter.Node) -> bool:
        """Whether a REPL subcommand (`shell`, `console`, `repl`...) is given code: on stdin or by `-c CODE`."""
        grammar = table.GRAMMARS.get(name)
        if name in table.PLAIN_PROGRAMS or name in table.TEXT_PROGRAMS or (grammar and grammar.first_is_pattern):
            return False  # `grep shell`, `cat console`: an operand, no subcommand
        operands = [index for index, word in enumerate(words) if not word.value.startswith("-")][:3]
        at = next((index for index in operands if words[index].value in table.REPL_WORDS), -1)
        if at < 0:
            return False  # a subcommand is among the first operands (`manage.py shell`, `rails console`)
        if any(word.value.partition("=")[0] in table.REPL_CODE_OPTIONS for word in words[at + 1 :]):
            return True
        return _reads_stdin(node)

    def _set_unseen(self, name: str, words: list[_Word]) -> None:
        """`read PAGER`, `mapfile PS4`, `printf -v KUBE_EDITOR ...`: a code variable set to text not seen.

        The value of a variable programs run (`variable_kind`) set by a builtin from its input or
        format cannot be read, so the command is unknown; any other variable stays merely unknown.
        """
        if name not in ("read", "mapfile", "readarray", "printf"):
            return
        names: list[str] = []
        for index, word in enumerate(words[1:], 1):
            value = word.value
            if name == "printf":
                if value == "-v" and index + 1 < len(words):
                    names.append(words[index + 1].value)
                elif value.startswith("-v") and len(value) > 2:
                    names.append(value[2:])
            elif not value.startswith("-"):
                names.append(value)  # read's and mapfile's names (an option's value is over-read)
        for variable in names:
            if _special_variable(variable.partition("[")[0]):
                raise CommandError(f"{name} sets {variable}, which programs run, to text the engine cannot see")

    def _stop_resolving(self) -> None:
        """From here on no variable is filled in: the line may set one in a way not modelled."""
        self.resolving = False
        self.variables.clear()

    def _resolved(self, node: tree_sitter.Node, data: bytes) -> str | None:
        """The value of `$name` or `${name}` when an earlier assignment on the line surely set it."""
        if self.level != 1:
            return None  # code a line runs (`sh -c`, `eval`, backticks) may run elsewhere or later
        text = _text(node, data)
        name = text[2:-1] if text.startswith("${") else text[1:]
        value = self.variables.get(name)
        if value is None:
            return None
        parent = node.parent
        while parent is not None:
            if parent.type in _REPEATS:
                return None  # a loop or function body may run after a later assignment
            parent = parent.parent
        return value

    def _assignment(self, name: str, parts: _Parts, value: str, depth: int, known: bool = True) -> None:
        """The value of an assignment to a variable the table knows (code, a prompt, options or paths)."""
        kind = table.variable_kind(name)
        if kind == "unknown":
            raise CommandError(f"{name} sets what programs run in a syntax this engine does not read")
        if ("code" in kind or "prompt" in kind or "options" in kind) and not known:
            raise CommandError(f"{name} is set to code that is not literal")
        if "code" in kind and value:
            if name in ("LESSOPEN", "LESSCLOSE"):
                value = value.lstrip("|-")  # less's `|CMD %s` and `||CMD %s` pipe through CMD
            if _PROGRAM_ONLY.fullmatch(value) and (
                name.endswith("SHELL") or not _CODE_READERS.intersection(_program(_literal(value))[0])
            ):
                # One program name (`CONFIG_SHELL=/bin/bash`, `EDITOR=vim`): the program runs with
                # arguments of its caller's choosing, not a command line reading standard input.
                for program in _program(_literal(value))[0]:
                    self.programs[program] = None
            else:
                # A command line; or a shell or interpreter alone (`GIT_PAGER=sh`), which would run
                # the text it is handed (a `*SHELL` variable names the shell its scripts run in).
                self.parse(value.encode("utf-8"), depth + 1)
                if _PROGRAM_ONLY.fullmatch(value):
                    self._operand(CODE_OPERAND)  # `GIT_PAGER=python3`: git's output is its code
        if "prompt" in kind and value:
            # A prompt is expanded as in double quotes: its $(...) and backticks run.
            self.parse(b'echo "' + value.replace("\\", "\\\\").replace('"', '\\"').encode("utf-8") + b'"', depth + 1)
        if "options" in kind and value:
            program = table.OPTION_VARIABLES[name]
            self.parse(shlex.join([program, *value.split()]).encode("utf-8"), depth + 1)
        if "paths" in kind:
            for form in _forms(parts):
                for piece in _PATH_LIST.split(form):
                    self._operand(paths.PathPattern(piece) if isinstance(form, paths.PathPattern) else piece)
        if name in table.LOADED_VARIABLES and value:
            self._operand(CODE_OPERAND)  # a library or config file loaded unseen: code the engine cannot read

    # -- programs that run code given as text --------------------------------------------------

    def _shell(self, words: list[_Word], node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """sh/bash/zsh...: `-c STRING` is parsed again; a script file is an operand; stdin is read."""
        command_mode = False
        stdin_mode = False
        cursor = _Cursor(words)
        for word in cursor.literal("shell option ", " is not literal"):
            value = word.value
            if value in ("--", "-"):
                cursor.index += 1
                break
            if value.startswith("--"):
                if value in ("--rcfile", "--init-file"):
                    self._word_operand(cursor.value("shell", value))
                continue
            if (value.startswith("-") or value.startswith("+")) and len(value) > 1:
                takes = 0
                for letter in value[1:]:
                    if letter == "c":
                        command_mode = True
                    elif letter == "s":
                        stdin_mode = True
                    elif letter in "oO":
                        takes += 1  # -o NAME, -O NAME: the names follow, in order
                for _ in range(takes):
                    cursor.value("shell", value)
                continue
            break
        rest = words[cursor.index :]
        if command_mode:
            if not rest:
                return
            script = rest[0]
            if not script.known:
                raise CommandError(f"the shell runs a string that is not literal: {script.value!r}")
            self.parse(script.value.encode("utf-8"), depth + 1)
            self._operands(rest[1:])
            return
        if rest and not stdin_mode:
            if rest[0].value in _STDIN_FILES:
                raise CommandError("the shell reads its commands from standard input")
            self._operands(rest)  # the script file and its arguments
            return
        self._operands(rest)
        self._shell_stdin(node, data, depth)

    def _windows(self, name: str, words: list[_Word], node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """cmd /c TEXT, powershell -Command TEXT, -EncodedCommand B64, -File SCRIPT: the text is read as commands."""
        if depth + 1 > MAX_DEPTH:
            raise CommandError(f"the command nests more than {MAX_DEPTH} levels")
        for word in words:
            # Bash expands what is bare before Windows' shell sees the line (`cmd /c type .[e]nv` may type .env);
            # `*` and `?` stay patterns either way, but an expansion, a bracket class or a brace is unknown there.
            if any(kind == _EXPANDED or (kind == _BARE and _BASH_EXPANDS.search(text)) for kind, text in word.parts):
                raise CommandError(f"{name}: bash expands {word.value!r} first, so what it runs is unknown")
        for index, word in enumerate(words):
            if not word.known:
                raise CommandError(f"{name}: the word {word.value!r} is not literal, so what it runs is unknown")
            option = word.value.casefold()
            if name == "cmd":
                if option[:2] in table.CMD_RUNS:
                    text = " ".join([word.value[2:], *(later.value for later in words[index + 1 :])])
                    self._windows_code(name, text.strip(), node, data, depth + 1)
                    return
                if option in table.CMD_SWITCHES or option.startswith("/t:"):
                    continue
                raise CommandError(f"cmd: {word.value!r} is not a switch this engine knows")
            if option.startswith("/"):
                option = "-" + option[1:]
            if not option.startswith("-"):
                if option.endswith(".ps1"):
                    self._operands(words[index:])  # pwsh's default is -File: the script and its arguments
                else:  # powershell's default is -Command: the rest is code
                    self._windows_code(name, " ".join(later.value for later in words[index:]), node, data, depth + 1)
                return
            option, colon, _ = option.partition(":")
            if option in table.POWERSHELL_FLAGS:
                continue
            if option in table.POWERSHELL_VALUES:
                if not colon and index + 1 < len(words):
                    del words[index + 1]  # the value, on its own word
                continue
            if option in table.POWERSHELL_FILE:
                self._operands(words[index + 1 :])
                return
            if option in table.POWERSHELL_CODE:
                text = " ".join(later.value for later in words[index + 1 :])
            elif option in table.POWERSHELL_ENCODED:
                if index + 1 >= len(words):
                    raise CommandError(f"{name}: {word.value} has no value")
                text = _decoded_powershell(words[index + 1].value)
            else:
                raise CommandError(f"{name}: {word.value!r} is not an option this engine knows")
            self._windows_code(name, text, node, data, depth + 1)
            return
        self._shell_stdin(node, data, depth)  # no command: it reads commands from its input

    def _windows_code(self, name: str, text: str, node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """Commands in cmd's or PowerShell's syntax: plain words joined by & && || | ; only, else unknown."""
        special = _CMD_SPECIAL if name == "cmd" else _POWERSHELL_SPECIAL
        if not text or text == "-" or special.intersection(text):
            raise CommandError(f"{name} runs code this engine cannot read: {text[:60]!r}")
        for statement in _WINDOWS_SEPARATORS.split(text):
            words = [_foreign_word(piece) for piece in statement.split()]
            if not words:
                continue
            names, dispatch = _program(words[0])
            if name != "cmd":
                cmdlet = table.POWERSHELL_ALIASES.get(dispatch)
                if cmdlet is not None:
                    names = (*names, cmdlet)
            if dispatch in _KNOWN_NAMES or any(program in _WINDOWS_CODE for program in names):
                if any(program in _WINDOWS_CODE for program in names):
                    raise CommandError(f"{name} runs {words[0].value!r}, which runs code this engine cannot place")
                self._argv(words, node, data, depth)  # a program the tables know reads its words as on Unix
                continue
            for program in names:
                self.programs[program] = None
            operands: list[_Word] = []
            for word in words[1:]:
                value = word.value
                if name == "cmd" and _CMD_SWITCH.fullmatch(value):
                    continue  # `rd /s /q`, `dir /a:h`
                if name != "cmd" and value.startswith("-") and ":" in value:
                    self._word_operand(word, value.index(":") + 1)  # -Path:FILE
                    continue
                operands.append(word)
            self._operands(operands)  # `-Recurse`, `-rf`: options

    def _sql_paths(self, text: str) -> None:
        """The files SQL opens: path-shaped string literals of SQL that reads or writes files are path operands.

        Round six (set E, sql-file-access): `duckdb -c "COPY (...) TO '/etc/cron.d/job'"` and
        `clickhouse local -q "SELECT * FROM file('.env')"` name the file in a string literal. In SQL
        that may open files (table.SQL_CODE, COPY, ATTACH, EXPORT/IMPORT DATABASE, INTO OUTFILE),
        each literal spelled as a path (a separator, a leading `.` or `~`, or a file extension; no
        blank) is a path operand, a glob (`read_csv('*.csv')`) a pattern; URLs are URLs.
        """
        if not table.SQL_FILE_ACCESS.search(text):
            return
        for match in _SQL_LITERAL.finditer(text):
            value = match.group(1).replace("''", "'")
            if _URL.match(value):
                self._url(value)
            elif _SQL_PATH.fullmatch(value):
                self._word_operand(_foreign_word(value))

    def _reader(self, name: str, words: list[_Word], node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """sftp, ftp, smbclient, sqlite3...: the commands they are given, from stdin or an option, name local paths."""
        texts: list[str] = []
        options = table.COMMAND_READERS[name]
        for index, word in enumerate(words):
            value = word.value
            option, equals, attached = value.partition("=")
            given: _Word | None = None
            if value in options:
                given = _value_word(name, value, words, index + 1)
            elif (equals and option in options) or (value[:2] in options and not value.startswith("--")):
                given, attached = word, attached if equals and option in options else value[2:]
            if given is not None:
                if not given.known:
                    raise CommandError(f"{name} runs commands that are not literal: {given.value!r}")
                texts.append(given.value if given is not word else attached)
            elif name in table.SQL_OPERAND_CLIENTS and index and value.startswith("."):
                if not word.known:
                    raise CommandError(f"{name} runs commands that are not literal: {value!r}")
                texts.append(value)  # `sqlite3 db '.shell rm x'`: an operand after the database is a command
        texts.extend(self._stdin_texts(name, node, data))
        if name in table.SQL_CLIENTS:
            sql = [word.value for word in words[1:] if not word.value.startswith("-")]
            if name not in table.SQL_OPERAND_CLIENTS:
                sql = []  # psql's and mysql's SQL comes with -c/-e or on stdin (in texts)
            if any(table.SQL_CODE.search(text) for text in (*texts, *sql)):
                self._operand(CODE_OPERAND)  # `select readfile('.env')`: SQL that opens files or runs programs
            for text in (*texts, *sql):
                self._sql_paths(text)
        for text in texts:
            for line in _READER_LINES.split(text):
                line = line.strip()
                if line.startswith(("!", "\\!")):
                    verb, rest = "!", line[line.index("!") + 1 :]  # `!CMD`, psql's `\\!CMD`
                else:
                    verb, _, rest = line.partition(" ")
                    verb = verb.casefold()
                how = table.READER_VERBS.get(verb)
                if how is None:
                    continue
                if how == "shell":
                    self.parse(rest.encode("utf-8"), depth + 1)
                    continue
                if how == "unknown":
                    raise CommandError(f"{name}: {verb} runs what this engine cannot place")
                try:
                    pieces = [piece for piece in shlex.split(rest) if not piece.startswith("-")]
                except ValueError:
                    raise CommandError(f"{name}: cannot read the command {line[:60]!r}") from None
                if how == "first":
                    pieces = pieces[:1]
                elif how == "second":
                    pieces = pieces[1:2]
                elif how == "none":
                    pieces = []
                for piece in pieces:
                    self._word_operand(_foreign_word(piece))

    def _stdin_texts(self, name: str, node: tree_sitter.Node, data: bytes) -> list[str]:
        """The literal text on a command's standard input: here-strings, heredocs, a pipe from echo or printf."""
        current = node.parent if node.parent is not None and node.parent.type == "redirected_statement" else node
        redirects = [child for child in node.named_children if child.type in _REDIRECTS]
        if current is not node:
            redirects.extend(child for child in current.named_children if child.type in _REDIRECTS)
        texts: list[str] = []
        for redirect in redirects:
            if redirect.type == "herestring_redirect":
                content = redirect.named_child(redirect.named_child_count - 1)
                if content is None or not (word := self._word(content, data)).known:
                    raise CommandError(f"{name} reads commands from a here-string that is not literal")
                texts.append(word.value)
            elif redirect.type == "heredoc_redirect":
                body = _child(redirect, "heredoc_body")
                if body is None:
                    continue
                if not _heredoc_quoted(redirect, data) and any(
                    child.type in _EXPANSIONS for child in body.named_children
                ):
                    raise CommandError(f"{name} reads commands from a heredoc with expansions")
                texts.append(_text(body, data))
        parent = current.parent
        if parent is not None and parent.type == "pipeline":
            elements = parent.named_children
            place = next((i for i, element in enumerate(elements) if element.id == current.id), 0)
            if place:
                texts.append(self._piped_text(name, elements[place - 1], data))
        return texts

    def _piped_text(self, name: str, source: tree_sitter.Node, data: bytes) -> str:
        """What `echo ...` or `printf ...` writes into a pipe; any other writer's output is unknown."""
        if source.type == "command":
            words = [
                self._word(child.named_child(0) or child, data)
                if child.type == "command_name"
                else self._word(child, data)
                for child in source.named_children
                if child.type not in _REDIRECTS
            ]
            if words and all(word.known for word in words):
                # `/bin/echo`, `command echo`, `env echo`, `timeout 5 echo`: the program after its
                # path and wrappers (a wrapper's options and operands are skipped up to it).
                start = 0
                if _program(words[0])[1] in table.WRAPPERS:
                    start = next((i for i, word in enumerate(words[:6]) if _program(word)[1] in table.TEXT_PROGRAMS), 0)
                if _program(words[start])[1] in table.TEXT_PROGRAMS:
                    # echo's -n/-e/-E and printf's `--` are no text (`printf -- '+++ b/.env'` writes
                    # the line alone). echo -e and printf turn \n into a newline: over-split, every
                    # piece is read.
                    text = [word.value for word in words[start + 1 :]]
                    while text and (_ECHO_OPTION.fullmatch(text[0]) or text[0] == "--"):
                        ended = text.pop(0) == "--"
                        if ended:
                            break
                    return " ".join(text).replace("\\n", "\n")
        raise CommandError(f"{name} reads commands from a pipe whose text is unknown")

    def _shell_stdin(self, node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """A shell reading commands from stdin: a literal here-string or heredoc is parsed again."""
        redirects = [child for child in node.named_children if child.type in _REDIRECTS]
        parent = node.parent
        if parent is not None and parent.type == "redirected_statement":
            redirects.extend(child for child in parent.named_children if child.type in _REDIRECTS)
        scripts: list[bytes] = []
        from_file = False
        for redirect in redirects:
            if redirect.type == "herestring_redirect":
                content = redirect.named_child(redirect.named_child_count - 1)
                if content is None or not (word := self._word(content, data)).known:
                    raise CommandError("the shell reads a here-string that is not literal")
                scripts.append(word.value.encode("utf-8"))
            elif redirect.type == "heredoc_redirect":
                body = _child(redirect, "heredoc_body")
                if body is None:
                    continue
                script = data[body.start_byte : body.end_byte]
                if not _heredoc_quoted(redirect, data):
                    if any(child.type in _EXPANSIONS for child in body.named_children):
                        raise CommandError("the shell reads a heredoc with expansions")
                    script = _unescape_heredoc(script)  # bash reads `\\rm` there as `\rm`
                scripts.append(script)
            elif redirect.type == "file_redirect" and _is_input_file(redirect, data):
                from_file = True  # a script file (`sh < x.sh`): its name is already an operand
        if not scripts and not from_file:
            raise CommandError("the shell reads its commands from standard input")
        for script in scripts:  # when there are several, bash reads the last; parse them all
            self.parse(script, depth + 1)

    def _stdin_script(self, name: str, node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """ed and vi read commands from stdin: ed's lines are read (`!CMD` runs, `r FILE` opens); vi's are code."""
        if table.STDIN_SCRIPTS[name] == "code":
            self._operand(CODE_OPERAND)
            return
        for text in self._stdin_texts(name, node, data):
            for line in text.splitlines():
                command = _ED_COMMAND.fullmatch(line)
                if command is None:
                    raise CommandError(f"{name}: cannot read the command {line[:40]!r}")
                letter, rest = command.group(1), command.group(2)
                if letter in "wW" and rest.startswith("q"):
                    rest = rest[1:]  # wq FILE
                rest = rest.strip()
                if letter == "!":
                    self.parse(rest.encode("utf-8"), depth + 1)
                elif letter and letter in "eEfrwW" and rest.startswith("!"):
                    self.parse(rest[1:].encode("utf-8"), depth + 1)  # `r !CMD`, `w !CMD`
                elif letter and letter in "eEfrwW" and rest:
                    self._operand(rest)
                    for piece in rest.split():  # echo's words joined by spaces: each may be the file
                        self._operand(piece)
                elif letter and letter in "gGvV" and "!" in rest:
                    raise CommandError(f"{name}: a global command may run a shell: {line[:40]!r}")

    def deferred(self) -> None:
        """Read the texts the line wrote to files as commands run later (cc-deferred-delete, round five set D)."""
        # A text written to a file whose name is a script's, a Makefile's or an rc file's, or to any
        # file when the line also runs a shell, make, source, crontab or the file itself, is read as
        # commands: a crontab's time fields, make's target lines and recipe prefixes taken off. When
        # the line runs it, a text that cannot be read is unknown; otherwise it may be data, and a
        # line that cannot be read is skipped.
        names = self.programs.keys()  # set operations in C: this runs for every line with a `>`
        runs = not names.isdisjoint(table.SCRIPT_RUNNERS) or any(
            _basename(target.rstrip(". ")).casefold() in names for target, _, _ in self.written
        )
        interpreted = not names.isdisjoint(_CODE_READERS)
        files: dict[str, list[str]] = {}
        for written, body, data in self.written:  # `echo a > s.sh; echo b >> s.sh`: one script
            target = written.rstrip(". ")  # Windows drops a name's trailing dots and blanks (`t.py.`)
            code = interpreted and bool(table.CODE_FILE.search(target))
            if runs or code or table.SCRIPT_FILE.search(_basename(target)):
                texts = [text for text in self._written_texts(body, data) if text]
                if texts and code:
                    self._operand(CODE_OPERAND)  # `> t.py && python3 t.py`: code the line wrote and runs
                files.setdefault(target, []).extend(texts)
        for target, texts in files.items():
            script = bool(table.SCRIPT_FILE.search(_basename(target)))
            if texts and (runs or script):
                # Unknown only when the line runs a script it wrote (`> x.json && make` may be data).
                self._script_text("\n".join(texts), strict=runs and script)

    def _script_text(self, text: str, strict: bool) -> None:
        """Parse text a shell, make or cron may run: whole, then line by line."""
        lines = []
        for line in text.replace("\\t", "\t").replace("\\n", "\n").splitlines():
            if _MAKE_TARGET.match(line):
                continue  # `all: deps`: a Makefile's target line, no command
            line = _CRON_TIMES.sub("", line, count=1).lstrip(" \t")
            lines.append(line.lstrip("@+-") if line[:1] in "@+-" else line)
        level, dirs = self.level, len(self.dirs)
        try:
            self.parse("\n".join(lines).encode("utf-8"), 1)
            return
        except CommandError:
            self.level = level
            del self.dirs[dirs:]
        for line in lines:
            try:
                self.parse(line.encode("utf-8"), 1)
            except CommandError:
                self.level = level
                del self.dirs[dirs:]
                if strict:
                    raise

    def _package_scripts(self, head: list[str], words: list[_Word], depth: int) -> None:
        """`npm pkg set scripts.x='rm -rf d'`, `npm set-script x CMD`: a script a later `npm run` runs."""
        setter = table.SCRIPT_SETTERS.get(tuple(head)) or table.SCRIPT_SETTERS.get(tuple(head[:1]))
        if setter == "pairs":
            for word in words[2:]:
                key, equals, value = word.value.partition("=")
                if equals and key.startswith("scripts."):
                    if not word.known:
                        raise CommandError(f"a package script set to text that is not literal: {key!r}")
                    self.parse(value.encode("utf-8"), depth + 1)
        elif setter == "name" and len(words) > 2:
            self._code(words[2:3], depth, "set-script")  # set-script NAME CMD

    def _code(self, words: list[_Word], depth: int, name: str) -> None:
        """eval ARGS: the arguments joined by spaces are parsed again."""
        if not words:
            return
        if not all(word.known for word in words):
            raise CommandError(f"{name} runs text that is not literal")
        self.parse(" ".join(word.value for word in words).encode("utf-8"), depth + 1)

    def _source(self, name: str, words: list[_Word]) -> None:
        """source FILE / . FILE: runs a file; unknown when the file name is not literal or is stdin."""
        if not words:
            return
        target = words[0]
        if not target.known:
            raise CommandError(f"{name} runs a file whose name is not literal: {target.value!r}")
        if target.value in _STDIN_FILES:
            raise CommandError(f"{name} runs commands from standard input")
        self._operands(words)

    def _trap(self, words: list[_Word], depth: int) -> None:
        """trap ACTION SIGNAL...: the action is shell code run later."""
        index = 0
        while index < len(words) and words[index].known and words[index].value in ("-p", "-l", "-P"):
            index += 1
        if index < len(words) and words[index].known and words[index].value == "--":
            index += 1
        if index + 1 >= len(words):
            return  # `trap`, `trap -p`, `trap SIGNAL`: nothing to run
        action = words[index]
        if not action.known:
            raise CommandError("trap runs text that is not literal")
        if action.value != "-":
            self.parse(action.value.encode("utf-8"), depth + 1)

    def _alias(self, words: list[_Word], depth: int) -> None:
        """alias NAME=VALUE: the value is shell code wherever the alias is used."""
        for word in words:
            if not word.known:
                raise CommandError("alias defines text that is not literal")
            _, equals, value = word.value.partition("=")
            if equals:
                self.parse(value.encode("utf-8"), depth + 1)

    def _su(self, name: str, words: list[_Word], node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """su/runuser: `-c STRING` is parsed again, `runuser -u USER -- cmd` runs cmd, else a shell reads stdin."""
        by_user = False
        cursor = _Cursor(words)
        for word in cursor.literal(f"{name}: the word ", " is not literal"):
            value = word.value
            if value == "--":
                if by_user:
                    self._argv(words[cursor.index + 1 :], node, data, depth)
                    return
                break
            if value.startswith("--command="):
                self._code([_literal(value.partition("=")[2])], depth, name)
                return
            if value == "--command" or (value.startswith("-") and not value.startswith("--") and "c" in value):
                if value != "--command" and not value.endswith("c"):
                    script = value[value.index("c") + 1 :]  # -cSTRING
                    self._code([_literal(script)], depth, name)
                    return
                self._code([cursor.value(name, value)], depth, name)
                return
            if value in ("-u", "--user") or value.startswith("--user="):
                by_user = True
                cursor.index += 0 if "=" in value else 1  # the user name
        if by_user:
            raise CommandError(f"{name} -u runs a command that could not be placed")
        self._shell_stdin(node, data, depth)  # no command: a login shell reading stdin

    def _find(self, words: list[_Word], node: tree_sitter.Node, data: bytes, depth: int) -> None:
        """find: starting points are operands; -exec/-ok run commands; -delete counts as rm."""
        index = 0
        count = len(words)
        starts: list[str] = []
        while index < count and words[index].known and words[index].value in ("-H", "-L", "-P"):
            index += 1
        while index < count:
            word = words[index]
            if not word.known:
                # A word find reads as an expression could be -delete or -exec: unknown.
                raise CommandError(f"find: the word {word.value!r} is not literal")
            value = word.value
            if value in ("-D",):
                index += 2
                continue
            if value.startswith("-O") or value.startswith("-D"):
                index += 1
                continue
            if value.startswith("-") or value in _FIND_TESTS_START:
                break
            self._word_operand(word)
            starts.append(value)
            index += 1
        names: list[str] = []  # what the tests select: the files an action or a pipe is handed
        acts = _writes_pipe(node, data)
        reads = acts  # a pipe to a program that acts on the names may read the files (`| xargs cat`)
        while index < count:
            word = words[index]
            if not word.known:
                raise CommandError(f"find: the word {word.value!r} is not literal")
            value = word.value
            index += 1
            if value in _FIND_EXEC:
                end = index
                while end < count:
                    if words[end].value == ";" or (words[end].value == "+" and words[end - 1].value == "{}"):
                        break
                    end += 1
                self._argv(words[index:end], node, data, depth)
                # Round fourteen (set L, cc-home-sweep-find-exec): `-exec cat {} +` reads every file
                # found below the starts; `-exec ls -ld {} \;` names them only.
                reads = reads or index >= end or _program(words[index])[1] not in table.NAME_ONLY_PROGRAMS
                index = end + 1
                acts = True
            elif value == "-delete":
                self.programs["rm"] = None
                acts = True
            elif value in _FIND_PATH_ARGS or value.startswith("-newer"):
                if index < count:
                    self._word_operand(words[index])
                index += 1
            elif value == "-fprintf":
                if index < count:
                    self._word_operand(words[index])
                index += 2
            elif value in _FIND_ARGS:
                if index < count and not words[index].single:
                    raise CommandError(f"find: the value of {value} may split into several words")
                if index < count and value in _FIND_NAME_TESTS:
                    names.append(_find_name(value, words[index].value))
                index += 1
        if reads:
            for start in starts:
                self._swept(start)
        if acts:
            # `find . -name .env -exec cat {} +`, `find . -name '*.pem' | xargs tar ...`: what runs
            # is handed the files the tests select, so they are operands: START/**/NAME (without a
            # name test, the start alone stands for its tree, as for `grep -r`).
            self._found(starts or ["."], names)

    def _found(self, starts: list[str], names: list[str]) -> None:
        """Files a finder hands on: each name test under each start (`./**/.env`), or unknown."""
        for name in names:
            if name == UNKNOWN_FILES or name.startswith("**/"):
                self._operand(name if name == UNKNOWN_FILES else paths.PathPattern(name))
                continue
            for start in starts:
                self._operand(paths.PathPattern(f"{_as_pattern(start).rstrip('/')}/**/{name}"))

    # -- operands ------------------------------------------------------------------------------

    def _file_redirect(self, node: tree_sitter.Node, data: bytes) -> None:
        """A redirection's target is an operand, unless it duplicates or closes a descriptor."""
        operator = "".join(_text(child, data) for child in node.children if not child.is_named)
        for target in node.children_by_field_name("destination"):  # the grammar may give several
            word = self._word(target, data)
            value = word.value
            if "&" in operator and operator not in ("&>", "&>>") and (value.isdigit() or value == "-"):
                continue  # >&2, 2>&1, <&-: descriptors, not files
            self.writing = _WRITTEN if ">" in operator else 0  # `>`, `>>`, `>|`, `&>`, `3>`, `<>`: any descriptor's
            self._word_operand(word)
            self.writing = 0
            if ">" in operator:
                # A target the engine cannot place (`> /tmp/c.s? && sh /tmp/c.sh`) may be the script run.
                self._written(node, value if word.known else _UNKNOWN_SCRIPT, data)
                if ">>" not in operator and not _empty_source(value) and self._writes_nothing(node, data):
                    self.programs["truncate"] = None  # `: > x`, `cat /dev/null > x`: emptied (devnull-clobber)

    def _writes_nothing(self, node: tree_sitter.Node, data: bytes) -> bool:
        """Whether the command a `>` redirection belongs to writes nothing: none, `:`/`true`, or a read of /dev/null."""
        parent = node.parent
        if parent is None or parent.type != "redirected_statement":
            return False
        body = parent.named_child(0)
        while body is not None and body.type in ("list", "pipeline"):
            body = body.named_child(body.named_child_count - 1)  # `cd src && true > x`: true's
        if body is None or body.type == "file_redirect":
            return True  # `> x` alone
        return body.type == "command" and self._silent_command(body, data)

    def _silent_command(self, body: tree_sitter.Node, data: bytes) -> bool:
        """Whether a simple command writes nothing to its output (`:`, `env true`, `cat /dev/null`)."""
        children = [child for child in body.named_children if child.type not in _REDIRECTS]
        children = [child.named_child(0) or child if child.type == "command_name" else child for child in children]
        words = [self._word(child, data) for child in children if child.type != "variable_assignment"]
        words = [word for word in words if not _ASSIGNMENT.match(word.value)]
        while words and words[0].known and _program_names(words[0].value)[1] in _SILENT_WRAPPERS:
            timed = _program_names(words[0].value)[1] == "timeout"
            words = words[1:]  # `env true > x`, `command : > x`
            while words and words[0].value.startswith("-"):
                words = words[1:]
            if timed and words:
                words = words[1:]  # `timeout 5 true > x`: the duration
        if not words or not words[0].known:
            return not words
        name = _program_names(words[0].value)[1]
        if name in _SILENT_PROGRAMS:
            return True
        operands = [word.value for word in words[1:] if not word.value.startswith("-")]
        return name in _EMPTY_READERS and bool(operands) and all(_empty_source(value) for value in operands)

    def _stdin_empty(self, node: tree_sitter.Node, data: bytes) -> bool:
        """Whether a command's stdin is empty: redirected from /dev/null, or piped from a command writing nothing."""
        if _stdin_is_empty(node, data):
            return True
        current = node
        parent = node.parent
        if parent is not None and parent.type == "redirected_statement":
            current, parent = parent, parent.parent
        if parent is None or parent.type != "pipeline":
            return False
        previous = None
        for child in parent.named_children:
            if child.id == current.id:
                break
            previous = child
        if previous is not None and previous.type == "redirected_statement":
            previous = previous.named_child(0)
        return previous is not None and previous.type == "command" and self._silent_command(previous, data)

    # -- round fifteen (set M): cleaners pointed elsewhere, and files written empty ----------------

    def _cache_variable(self, node: tree_sitter.Node, data: bytes) -> None:
        """Keep the value of an assignment to a cleaner's folder variable (`CARGO_TARGET_DIR=.`, `export X=~`)."""
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None or value_node is None or value_node.type == "array":
            return
        name = _text(name_node, data)
        if name in cleaners.VARIABLES:
            self.cache_env[name] = self._word(value_node, data)

    def _cache_clean(self, name: str, rest: list[_Word]) -> None:
        """A cleaner pointed at a folder by an option or a variable is `rm -rf FOLDER`; a setting names a cache folder.

        Round fifteen (set M, cache-clean-redirected): `cargo clean --target-dir .`, `UV_CACHE_DIR=~ uv
        cache clean`, `go env -w GOMODCACHE=$PWD && go clean -modcache` empty the folder named, as rm
        would: read as rm with it as the operand (a value not literal is an operand as written, an
        unknown place). With neither, the tool empties its own default folder: nothing is added.
        """
        values = [word.value for word in rest]
        for setting in cleaners.SETTINGS.get(name, ()):
            if cleaners.has_words(setting.words, values) and (
                not setting.modes or any(value in setting.modes for value in values)
            ):
                self._cache_setting(setting, rest)
        folders: list[_Word] = []
        for cleaner in cleaners.CLEANERS.get(name, ()):
            if not cleaners.has_words(cleaner.words, values):
                continue
            if cleaner.modes and not any(_mode_on(value, cleaner.modes) for value in values):
                continue
            options = dict(cleaner.options)
            for index, word in enumerate(rest):
                option, equals, _ = word.value.partition("=")
                if option not in options:
                    continue
                if equals:
                    start = len(option) + 1
                    folder = _Word(word.value[start:], word.known, word.single, _after(word.parts, start))
                elif index + 1 < len(rest):
                    folder = rest[index + 1]
                else:
                    continue
                folders.append(_below(folder, options[option]))
            for variable, below in cleaner.variables:
                value = self.cache_env.get(variable)
                if value is not None and (value.value or not value.known):
                    folders.append(_below(value, below))
        if folders:
            self.programs["rm"] = None
            reader, self.reader = self.reader, "rm"
            for folder in folders:
                self._word_operand(folder)
            self.reader = reader

    def _cache_setting(self, setting: cleaners.Setting, rest: list[_Word]) -> None:
        """A persisted cache folder (`go env -w GOMODCACHE=DIR`): the variable for later cleans, and a cache folder."""
        words = [word for word in rest if not word.value.startswith("-")]
        values = [word.value for word in words]
        size = len(setting.words)
        start = next(i for i in range(len(values) - size + 1) if tuple(values[i : i + size]) == setting.words) + size
        tail = words[start:]
        pairs: list[tuple[_Word, _Word]] = []
        for position, word in enumerate(tail if setting.pairs else tail[:1]):
            key, equals, _ = word.value.partition("=")
            if equals:
                begin = len(key) + 1
                pairs.append((word, _Word(word.value[begin:], word.known, word.single, _after(word.parts, begin))))
            elif not setting.pairs and position + 1 < len(tail):
                pairs.append((word, tail[position + 1]))
        for key_word, value in pairs:
            key = key_word.value.partition("=")[0]
            if key_word.known:
                found = setting.keys.get(cleaners.setting_key(key))
                variables = [found] if found is not None else []
            else:
                variables = list(setting.keys.values())  # `cache-di?`, `{cache-dir,x}`: it may be any key
            if not variables:
                continue
            for variable in variables:
                self.cache_env[variable] = value
            for form in _forms(value.parts):
                if isinstance(form, paths.PathPattern):
                    form = _UNKNOWN_FOLDER  # bash expands the glob first: any folder it may match
                self.cache_folders[form] = None
                if (self.dirs or self.local) and _relative(form):
                    for directory in (*self.dirs, *self.local):
                        self.cache_folders[_joined_path(directory, form)] = None

    def _empties_output(self, name: str, rest: list[_Word], node: tree_sitter.Node, data: bytes) -> bool:
        """Whether a text tool writes its output file empty: `sort -o x /dev/null`, `uniq /dev/null x`, `sed -i d x`."""
        if name in _SEDS:
            return _sed_in_place_empties(rest)
        spec = cleaners.OUTPUT_FILTERS[name]
        operands: list[_Word] = []
        output = silenced = words_in = False
        cursor = _Cursor(rest)
        for word in cursor.options(operands):
            value = word.value
            option, attached = "", ""
            if value.startswith("--"):
                option, equals, attached = value.partition("=")
                words_in = words_in or option in ("--echo", "--input-range")
                if (
                    (option in spec.outputs or option in spec.values)
                    and not equals
                    and (given := cursor.take()) is not None
                ):
                    attached = given.value
            else:
                for position in range(1, len(value)):
                    letter = "-" + value[position]
                    words_in = words_in or (name == "shuf" and letter in ("-e", "-i"))
                    if letter in spec.outputs or letter in spec.values:
                        option, attached = letter, value[position + 1 :]
                        if not attached and (given := cursor.take()) is not None:
                            attached = given.value
                        break
            output = output or option in spec.outputs
            silenced = silenced or (option in spec.silencers and attached.isdigit() and int(attached) == 0)
        if spec.second_operand:
            if len(operands) < 2:
                return False
            output, operands = True, operands[:1]
        if not output:
            return False
        if silenced:
            return True  # `shuf -n 0 -o x`: it writes no line at all
        if words_in:
            return False  # `shuf -e a b -o x`: its lines are its words
        files = [word for word in operands if word.value != "-"]
        if not all(word.known and _empty_source(word.value) for word in files):
            return False
        return (bool(files) and len(files) == len(operands)) or self._stdin_empty(node, data)

    def _written(self, node: tree_sitter.Node, target: str, data: bytes) -> None:
        """Keep the literal text `echo`/`printf`/a heredoc writes to a file: it may be a script run later."""
        # A deleting command written to a script, Makefile or crontab and run (`echo 'rm -rf x' > s.sh
        # && bash s.sh`) is read by deferred(). Text that is not literal is not kept: data written
        # with a variable is no script the engine could read, and most such writes are data.
        parent = node.parent
        if parent is None or parent.type != "redirected_statement":
            return
        body = parent.named_child(0)
        while body is not None and body.type in ("list", "pipeline"):
            body = body.named_child(body.named_child_count - 1)  # the grammar's `a && echo x > f`: echo's
        if body is not None and body.type == "command":
            self.written.append((target, body, data))  # its text is read only if deferred() needs it

    def _written_texts(self, body: tree_sitter.Node, data: bytes) -> list[str]:
        """The literal text a writing command writes: echo's or printf's words, cat's or tee's stdin."""
        name_node = _child(body, "command_name")
        if name_node is None:
            return []
        name = _program(self._word(name_node.named_child(0) or name_node, data))[1]
        try:
            if name in table.TEXT_PROGRAMS:
                return [self._piped_text(name, body, data)]  # echo or printf
            if name in table.WRAPPERS:  # `nice echo x > s.sh`, `env cat > s.sh <<EOF`
                try:
                    return [self._piped_text(name, body, data)]
                except CommandError:
                    return self._stdin_texts(name, body, data)
            if name in _TEXT_COPIERS:
                return self._stdin_texts(name, body, data)  # `cat > x.sh <<EOF`, `tee x.sh <<< ..`
        except CommandError:
            pass  # not literal text: no script the engine could read, and most such writes are data
        return []

    def _operands(self, words: Iterable[_Word]) -> None:
        """Arguments of an ordinary program: the ones that may name a path."""
        options_done = False
        for word in words:
            value = word.value
            if options_done:
                self._word_operand(word)
                continue
            if value == "--":
                options_done = True
                continue
            if value.startswith("-") and len(value) > 1:
                option, equals, _ = value.partition("=")
                if equals:
                    self._word_operand(word, len(option) + 1)  # --output=FILE, -Dpath=FILE
                    self._embedded_paths(word, len(option) + 1)  # --from-file=KEY=FILE, --secret id=x,src=FILE
                elif value[1] != "-" and len(value) > 2 and "/" in value:
                    reader, self.reader = self.reader, "cd"  # `cut -d/`: a glued value is named, not swept
                    self._word_operand(word, 2)  # -oFILE: the value attached to the first letter
                    slash = value.index("/")
                    start = slash
                    while start > 2 and value[start - 1] in ".~":
                        start -= 1
                    self._word_operand(word, start)  # -xf/etc/x: from the path-looking tail
                    self._glued_values(word)
                    self.reader = reader
                elif value[1] != "-":
                    reader, self.reader = self.reader, "cd"
                    self._glued_values(word)
                    self.reader = reader
                continue
            self._word_operand(word)
            if "=" in value and _KEY.match(value):
                self._word_operand(word, value.index("=") + 1)  # dd of=/dev/sda, make DESTDIR=/x
            self._embedded_paths(word, 0)

    def _glued_values(self, word: _Word) -> None:
        """A short option's value glued to it (`-t.claude`, `-vt.claude`, `-fid_ed25519`) is an operand.

        Which letter of a cluster takes a value is the program's business, and no table knows
        every program: so after each letter of the cluster's leading run of letters, the rest of
        the word is read as that option's value - a path - when it looks like one (a `.`, `/`,
        `~` or `_` in it). Deny rules over-match the shorter tails (`t.claude` beside `.claude`);
        a flag cluster (`-la`, `-xzvf`) gives nothing.
        """
        value = word.value
        if "=" in value or len(value) < 3:
            return
        position = 1
        while position < len(value) - 1 and value[position].isascii() and value[position].isalpha():
            tail = value[position + 1 :]
            if any(mark in tail for mark in "./~_"):
                self._word_operand(word, position + 1)
            position += 1

    def _embedded_paths(self, word: _Word, start: int) -> None:
        """Files named inside a word: `f@FILE`, `k=@FILE`, `k:=@FILE` (httpie, gh -F, vault, az), KEY=FILE lists."""
        value = word.value
        at = value.find("@", start)
        if at >= 0 and at + 1 < len(value):
            self._word_operand(word, at + 1)
            if value[at + 1] == "~":
                self._operand(value[at + 1 :])  # httpie and curl expand `~` in `f@~/x` themselves
        if "," in value[start:] and "=" in value[start:]:
            offset = start
            for piece in value[start:].split(","):  # docker --secret id=x,src=FILE
                if "=" in piece:
                    self._word_operand(word, offset + piece.index("=") + 1)
                offset += len(piece) + 1
        elif _KEY.match(value, start):
            self._word_operand(word, value.index("=", start) + 1)  # --from-file=KEY=FILE
        scheme = value.find("://", start)
        if scheme >= 0 and value[start:scheme].casefold() in ("file", "fileb"):
            self._word_operand(word, scheme + 3)  # aws's fileb://FILE

    def _word_operand(self, word: _Word, start: int = 0) -> None:
        """Keep what bash makes of a word (from character `start` of its value) as operands."""
        parts = word.parts
        if start:
            parts = _after(parts, start)
        for form in _forms(parts):
            if "://" in form and _URL.match(form):
                self.urls[form] = None
            self._operand(form)

    def _operand(self, value: str) -> None:
        """Keep one operand (not empty, not find's {} placeholder), and where a `cd` may have put it."""
        if not value or value == "{}":
            return
        if self.writing != _WRITE_ONLY:
            self.operands[value] = None
        if self.writing:
            self.writes[value] = None
        elif self.reader not in table.NAME_ONLY_PROGRAMS and not (
            self.reader in table.INTO_COPIERS and value in self.writes
        ):
            self._swept(value)  # a copy's destination is written, not read: `cp notes.txt ~/` sweeps no home
        if (self.dirs or self.local) and _relative(value):
            for directory in (*self.dirs, *self.local):
                if self.writing != _WRITE_ONLY:
                    self.operands[_joined_path(directory, value)] = None
                if self.writing:
                    self.writes[_joined_path(directory, value)] = None

    def _swept(self, value: str) -> None:
        """Keep one operand a reading program is handed (Command.swept), and where a `cd` may have put it."""
        self.swept[value] = None
        if (self.dirs or self.local) and _relative(value):
            for directory in (*self.dirs, *self.local):
                self.swept[_joined_path(directory, value)] = None

    def _url(self, value: str) -> None:
        """Keep one URL."""
        if value:
            self.urls[value] = None

    def _pins(self, words: list[_Word]) -> None:
        """Any program's pin and proxy options (`--host-resolver-rules=`, `--add-host`...): the hosts they reach."""
        # Round fifteen (set M, cc-metadata-resolve-pinning): a browser, docker or any launcher
        # sends a harmless URL's connection where the option says; the engine reads it as reached.
        for index, word in enumerate(words):
            value = word.value
            if not value.startswith("--"):
                continue
            option, sign, _ = value.partition("=")
            syntax = _url_pins.ANY_PROGRAM_OPTIONS.get(option)
            if syntax is None:
                continue
            if sign:
                target_word, start = word, len(option) + 1
            elif index + 1 < len(words):
                target_word, start = words[index + 1], 0
            else:
                continue
            operands = [target_word.value[start:]]
            if not target_word.single and "{" in operands[0]:
                # `--add-host {h:ADDR,x}`: bash passes each expansion; each is read as the value.
                pieces = _brace_words(_after(target_word.parts, start))
                operands += [piece.value for piece in pieces or ()]
            for operand in operands:
                for target in _url_pins.targets(syntax, operand):
                    self._url(target)

    # -- the working directory -----------------------------------------------------------------

    def _cd(self, words: list[_Word]) -> None:
        """cd/pushd DIR: later relative operands may be in DIR (and stay reported as written)."""
        targets = [word for word in words if not (word.value.startswith("-") and len(word.value) > 1)]
        for word in targets:
            self._word_operand(word)
        if not targets:
            directory = "~"  # `cd` alone goes home
        elif len(targets) > 1 or targets[0].value == "-" or len(forms := _forms(targets[0].parts)) != 1:
            directory = UNKNOWN_CWD  # `cd -`, `cd {a,b}`, `pushd +1`: a place the engine cannot know
        else:
            directory = forms[0]
            if directory.startswith(("+", "-")):
                directory = UNKNOWN_CWD  # pushd +N / -N rotates the stack
        if not directory:
            return
        joined = [_joined_path(place, directory) for place in self.dirs] if _relative(directory) else []
        if self.cdpath and _relative(directory):
            joined.append(_joined_path(UNKNOWN_CWD, directory))  # cd looks DIR up in CDPATH first
        if self.cdable and _VARIABLE_NAME.fullmatch(directory):
            # cdable_vars: a name that is no folder is the variable's value - `$NAME` as written
            # (a path rule reads $HOME as the home), or the value the line gave it.
            variable = self.variables.get(directory, f"${directory}")
            self._operand(variable)
            joined.append(variable)
        self.dirs = list(dict.fromkeys([*self.dirs, *joined, directory]))
        if len(self.dirs) > MAX_DIRS:
            self.dirs = [UNKNOWN_CWD]

    def _dir_operand(self, word: _Word, start: int) -> None:
        """The folder a command works in (`git -C DIR`, `make -C DIR`) is an operand named as cd's is, not swept."""
        reader, self.reader = self.reader, "cd"
        self._word_operand(word, start)
        self.reader = reader  # `tar -C ~ .`: the relative operands joined to DIR are still tar's

    def _local_dir(self, parts: _Parts) -> None:
        """An option naming the directory its command works in (`git -C DIR`, `tar -C DIR`)."""
        forms = _forms(parts)
        self.local.append(forms[0] if len(forms) == 1 and forms[0] else UNKNOWN_CWD)

    # -- words ---------------------------------------------------------------------------------

    def _word(self, node: tree_sitter.Node, data: bytes) -> _Word:
        """A word node after quote removal."""
        kind = node.type
        if node.named_child_count and kind in _PLAIN_WORDS:  # `10#$(cmd)` is a number
            text = _text(node, data)
            return _Word(text, False, False, ((_EXPANDED, text),))
        if kind == "word":
            return _plain_word(_text(node, data))
        if kind == "number":
            text = _text(node, data)
            return _Word(text, True, True, ((_BARE, text),))
        if kind == "raw_string":
            return _literal(_text(node, data)[1:-1])
        if kind == "string":
            return _double_quoted(node, data, self._resolved if self.variables else None)
        if kind == "ansi_c_string":
            return _literal(_ansi_c(_text(node, data)[2:-1]))
        if kind == "translated_string":
            inner = node.named_child(0)
            if inner is not None and inner.type == "string":
                return _double_quoted(inner, data)
        if kind == "concatenation":
            return self._concatenation(node, data)
        if self.variables and kind in _VARIABLE_EXPANSIONS:
            value = self._resolved(node, data)
            if value is not None and not _SPLITS.intersection(value):
                # Unquoted, bash globs the value (no brace or tilde expansion, excluded above).
                pattern = _glob(value)
                return _Word(value, not pattern, not pattern, ((_BARE, value),))
        # Expansions, brace expressions, patterns and anything else: as written, not literal.
        text = _text(node, data)
        return _Word(text, False, False, ((_BARE if kind == "brace_expression" else _EXPANDED, text),))

    def _concatenation(self, node: tree_sitter.Node, data: bytes) -> _Word:
        """Adjacent pieces of one word; text between pieces (if any) is unquoted word text."""
        parts: list[str] = []
        known = True
        single = True
        cursor = node.start_byte
        pieces: list[_Word] = []
        written: list[tuple[int, str]] = []
        children = node.children
        for index, child in enumerate(children):
            if child.start_byte > cursor:
                pieces.append(_unquoted(data[cursor : child.start_byte].decode("utf-8")))
            cursor = child.end_byte
            if child.is_named:
                pieces.append(self._word(child, data))
            elif not (
                index + 1 < len(children) and children[index + 1].type == "string" and _text(child, data) == "$"
            ):  # r$"m": the $ of a $"..." string is no text
                pieces.append(_unquoted(_text(child, data)))
        if node.end_byte > cursor:
            pieces.append(_unquoted(data[cursor : node.end_byte].decode("utf-8")))
        for piece in pieces:
            parts.append(piece.value)
            written.extend(piece.parts)
            known = known and piece.known
            single = single and piece.single
        value = "".join(parts)
        if single and _brace_pattern(_text(node, data)):
            known = single = False  # a{b,c}: bash makes two words of it
        return _Word(value, known, single, tuple(written))


# -- helpers -----------------------------------------------------------------------------------

MAX_DECODED = 16 * 1024  # characters of a decoder's literal input decoded for the secret scan
_HEX_NOISE = re.compile(r"0[xX]|\\x|[\s:,;.-]")
_XXD_LINE = re.compile(r"^\s*[0-9a-fA-F]+:\s*((?:[0-9a-fA-F]{2,4}\s?)+)", re.MULTILINE)


def _decodings(encoding: str, text: str, plain: bool) -> list[str]:
    """What a decoder makes of text, as UTF-8 and as UTF-16 (little and big endian); [] when it is no such encoding."""
    raw: bytes | None = None
    try:
        if encoding == "hex":
            if not plain and _XXD_LINE.search(text):
                text = "".join(match.group(1) for match in _XXD_LINE.finditer(text))  # an xxd dump
            raw = bytes.fromhex(_HEX_NOISE.sub("", text))
        elif encoding == "uu":
            lines = text.splitlines()
            if lines and lines[0].startswith("begin"):
                lines = lines[1:]
            raw = b"".join(binascii.a2b_uu(line) for line in lines if line.strip() not in ("", "`", "end"))
        elif encoding == "base64":
            compact = "".join(text.split())
            altchars = b"-_" if "-" in compact or "_" in compact else None  # base64url
            raw = base64.b64decode(compact + "=" * (-len(compact) % 4), altchars=altchars)
        elif encoding == "base32":
            compact = "".join(text.split()).upper()
            raw = base64.b32decode(compact + "=" * (-len(compact) % 8))
    except (ValueError, binascii.Error):
        return []
    if not raw:
        return []
    found: list[str] = []
    for codec in ("utf-8", "utf-16-le", "utf-16-be"):
        if codec != "utf-8" and (len(raw) % 2 or raw.count(0) < len(raw) // 4):
            continue  # UTF-16 of mostly ASCII text has a NUL in every other byte
        try:
            decoded = raw.decode(codec)
        except UnicodeDecodeError:
            continue
        decoded = decoded.strip("\x00\r\n ")
        if decoded and decoded.isprintable():
            found.append(decoded)
    return found


# Where bash evaluates arithmetic on a variable's value: `((..))`, `$((..))`, `$[..]`, `let`,
# `[[ .. -eq .. ]]`, integer declarations, a subscript of a name (`${a[k]}`), `declare -i`.
_ARITHMETIC = re.compile(
    rb"\(\(|\$\[|\blet\s|\[\[[^\]]*\s-(?:eq|ne|lt|le|gt|ge)\s|\b(?:declare|typeset|local)\s+-[A-Za-z]*i"
    rb"|\$\{[A-Za-z_][A-Za-z0-9_]*\[[^\]@*]"
)
# Programs and forms through which standard input becomes a variable's value on the same line.
_STDIN_TO_VARIABLE = re.compile(rb"\b(?:read|mapfile|readarray)\b|\$\(|`")
_DEFAULT_ASSIGNMENT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?=")  # ${NAME:=VALUE} assigns NAME
_DEFAULT_VALUE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=]([^}$`'\"\\\s]+)\}")  # ${NAME:-/usr}: a literal fallback


def _literal_text(text: str) -> bool:
    """Whether an expansion's word holds no expansion or quote the engine would have to read (`${X:=vim}`)."""
    return not any(char in text for char in "$`\\\"'")


class _Unresolved(Exception):
    """A substitution whose text _Walk._text_output cannot compute."""


# `$(echo ARGS)`, `$(printf ARGS)` and their backtick forms with no nested substitution or operator.
_TEXT_SUBSTITUTION = re.compile(r"(?:\$\(|`)\s*(echo|printf)\s+([^()`;&|<>\n]*?)\s*(?:\)|`)")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_PRINTF_DIRECTIVE = re.compile(r"%(.)")


def _printf(args: list[str]) -> str:
    """bash's printf for `%s`, `%%`, `\\n` and `\\t`, its format reused while arguments remain; else _Unresolved."""
    if args and args[0] == "--":
        args = args[1:]
    if not args or args[0].startswith("-"):
        raise _Unresolved  # an option (`printf -v`), or a format bash would read as one
    form, rest = args[0], args[1:]
    if any(match.group(1) not in "s%" for match in _PRINTF_DIRECTIVE.finditer(form)):
        raise _Unresolved
    form = form.replace("\\n", "\n").replace("\\t", "\t")
    slots = sum(1 for match in _PRINTF_DIRECTIVE.finditer(form) if match.group(1) == "s")
    pieces: list[str] = []
    while True:
        taken, rest = rest[:slots], rest[slots:]
        pieces.append(_fill(form, iter(taken)))
        if not rest or not slots or len(pieces) > 64:
            return "".join(pieces)


def _fill(form: str, values: Iterator[str]) -> str:
    """One pass of a printf format: each `%s` takes the next value (or nothing), `%%` is `%`."""
    return _PRINTF_DIRECTIVE.sub(lambda match: "%" if match.group(1) == "%" else next(values, ""), form)


def _quoted_substitution(text: str) -> int:
    """Where a `$(` (not the `$((` of arithmetic) or a backtick starts in quoted text; -1 when none does."""
    tick = text.find("`")
    dollar = text.find("$(")
    while dollar >= 0 and text.startswith("$((", dollar):
        dollar = text.find("$(", dollar + 3)
    found = [index for index in (tick, dollar) if index >= 0]
    return min(found) if found else -1


def _may_set_variables(data: bytes) -> bool:
    """Whether the line may set a variable otherwise than by NAME=VALUE (see _SETTERS)."""
    return _SETS_VARIABLES.search(data) is not None


def _sure(node: tree_sitter.Node) -> bool:
    """Whether an assignment runs in the line's own shell, always, before what follows it."""
    parent = node.parent
    if parent is not None and parent.type == "variable_assignments":
        node, parent = parent, parent.parent
    if parent is not None and parent.type == "declaration_command":
        keyword = parent.child(0)
        if keyword is None or keyword.type not in ("export", "declare", "typeset"):
            return False
        if any(child.type not in ("variable_assignment", "variable_name") for child in parent.named_children):
            return False  # flags (`declare -u`, `-i`, `-n`) change what the value becomes
        node, parent = parent, parent.parent
    while parent is not None and parent.type == "list":
        first = parent.named_child(0)
        if first is None or first.start_byte != node.start_byte or first.end_byte != node.end_byte:
            return False  # after && or ||: it may not run
        node, parent = parent, parent.parent
    if parent is None or parent.type != "program":
        return False  # a subshell, pipeline, group, branch or loop
    following = node.next_sibling
    return following is None or following.type != "&"


def _foreign_word(text: str) -> _Word:
    """A word of cmd, PowerShell or sftp text: literal, save that `*` and `?` select files and a leading `~` is home."""
    if "*" in text or "?" in text:
        return _Word(text, False, False, ((_BARE, text),))
    if text.startswith("~"):  # PowerShell and sftp expand it; where a program does not, home is the wider reading
        return _Word(text, True, True, ((_BARE, "~"), (_QUOTED, text[1:])))
    return _literal(text)


def _decoded_powershell(value: str) -> str:
    """The text of -EncodedCommand: base64 of UTF-16LE; anything else is unknown."""
    try:
        return base64.b64decode(value, validate=True).decode("utf-16-le")
    except (ValueError, UnicodeDecodeError):
        raise CommandError("powershell -EncodedCommand is not base64 of UTF-16LE text") from None


def _text(node: tree_sitter.Node, data: bytes) -> str:
    """The source text of a node."""
    return data[node.start_byte : node.end_byte].decode("utf-8")


def _basename(path: str) -> str:
    """The last name of a path, either separator."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _child(node: tree_sitter.Node, kind: str) -> tree_sitter.Node | None:
    """The first named child of a type."""
    for child in node.named_children:
        if child.type == kind:
            return child
    return None


def _invocations(name: str, spec: table.Invocation, words: list[_Word]) -> list[str]:
    """What a program with subcommands is asked to do, as `PROGRAM SUBCOMMAND...` strings (table.INVOCATIONS)."""
    if spec.kind == "subcommand":
        return _subcommand_invocations(name, spec, words)
    if spec.kind == "module":
        return _module_invocations(name, spec, words)
    found: list[str] = []
    cursor = _Cursor(words)
    for word in cursor:
        value = word.value
        if not word.known and (value.startswith("-") or spec.kind == "options"):
            found.append(f"{name} ?")  # `gpg $op KEY`: which command is unknown
            continue
        if value == "--":
            break
        if not value.startswith("-") or value == "-":
            continue  # an operand: gpg takes its options anywhere; cmake's -E verb is after its option
        option = value.partition("=")[0]
        if spec.kind == "verb":
            if option in spec.marks:
                found.append(f"{name} {option}")
            elif value in spec.verbs:
                verb = cursor.take()
                found.append(f"{name} {value} {verb.value if verb is not None and verb.known else '?'}")
                break  # the verb's own words follow (`cmake -E chdir DIR cmake -E rm x`: its own line)
            continue
        if value.startswith("--"):
            found.append(f"{name} {option}")  # an abbreviation is its own (unplaced) string
            cursor.index += option in spec.values and "=" not in value
            continue
        for position in range(1, len(value)):
            letter = f"-{value[position]}"
            found.append(f"{name} {letter}")
            if letter in spec.values:
                cursor.index += position == len(value) - 1  # its value is the rest of the word or the next word
                break
    return found


def _subcommand_invocations(name: str, spec: table.Invocation, words: list[_Word]) -> list[str]:
    """`git daemon`, `go mod tidy`, `npm init vite` (one per operand of spec.operands), from the first operand."""
    index = _past_options(spec, words, 0)
    if index >= len(words):
        return []
    parts = [name]
    for _ in range(2):
        word = words[index]
        parts.append(word.value if word.known else "?")
        index += 1
        if not word.known or " ".join(parts[1:]) not in spec.nested:
            break
        index = _past_options(spec, words, index)
        if index >= len(words):
            break
    head = " ".join(parts)
    if " ".join(parts[1:]) not in spec.operands:
        return [head]
    found: list[str] = []
    while (index := _past_options(spec, words, index)) < len(words):
        word = words[index]
        index += 1
        if word.value == "--" and word.known:
            break
        found.append(f"{head} {word.value if word.known else '?'}")
    return found or [head]


def _past_options(spec: table.Invocation, words: list[_Word], index: int) -> int:
    """The index of the next word that is no option (nor an option's value) from index."""
    while index < len(words):
        value = words[index].value
        if not value.startswith("-") or value in ("-", "--"):
            return index
        option = value.partition("=")[0]
        index += 1
        if option in spec.values and "=" not in value:
            index += 1  # `git -C DIR`, `npm --prefix DIR`
    return index


def _module_invocations(name: str, spec: table.Invocation, words: list[_Word]) -> list[str]:
    """`python -m MODULE` (also `-mMODULE`, `-um MODULE`); nothing for a script or `-c CODE`."""
    index = 0
    while index < len(words):
        word = words[index]
        value = word.value
        index += 1
        if not value.startswith("-") or value in ("-", "--") or value.startswith("--"):
            if value.startswith("--") and value != "--":
                continue  # `--version`, `--check-hash-based-pycs always` is rare: the module comes later
            return []  # a script (its own words follow) or stdin
        for position in range(1, len(value)):
            letter = value[position]
            if letter == "c":
                return []  # code on the line: read as code by the red lines
            if letter == "m":
                rest = value[position + 1 :]
                if rest:
                    return [f"{name} -m {rest if word.known else '?'}"]
                module = words[index] if index < len(words) else None
                if module is None:
                    return []
                return [f"{name} -m {module.value if module.known else '?'}"]
            if f"-{letter}" in spec.values:
                index += position == len(value) - 1
                break
    return []


_QUOTING = str.maketrans("", "", "\\'\"")  # the quoting characters the shell takes out of a word
_QUOTED_TEXT = re.compile(r"[\\'\"]")


def _verb_line(text: str) -> bool:
    """Whether a text reads as an unknown program's deleting subcommand (`hg remove src`) (cheap: words only)."""
    pieces = text.split()
    if len(pieces) < 2 or not _PROGRAM_ONLY.fullmatch(pieces[0]) or _names_known(pieces[0]):
        return False
    if pieces[0][:1].isupper():
        return False  # a sentence (`'Remove the old docs'`), not a program's name
    return _verb_deletes(pieces[0].rsplit("/", 1)[-1].casefold(), [_literal(piece) for piece in pieces[1:]])


_VERB_SHAPE = re.compile(r"[a-z][a-z0-9]*(?:[-_:][a-z0-9]+)*")  # a subcommand's spelling (`bulk-delete`)
_VERB_PIECES = re.compile(r"[-_:]")


def _verb_deletes(name: str, words: list[_Word]) -> bool:
    """Whether an unknown program's words name a deleting subcommand (`hg remove`) or option (`hdfs dfs -rm`)."""
    options = table.OPTION_DELETERS.get((name, words[0].value)) if words else None
    seen = 0
    deletes = False
    for word in words:
        value = word.value
        if value == "--":
            break
        if value.startswith("-"):
            folded = value.partition("=")[0].casefold()
            if folded in table.KEEPING_OPTIONS:
                return False  # `svn delete --keep-local x`, `--dry-run`: no file goes
            if options is not None and folded in options:
                deletes = True
            continue
        if seen < table.DELETING_VERB_WORDS:
            seen += 1
            folded = value.casefold()
            if not deletes and word.known and _VERB_SHAPE.fullmatch(folded) and not _names_known(folded):
                # A known program's name (`mytool --pre shred x`) is read as that program instead.
                deletes = any(_deleting_piece(piece) for piece in _VERB_PIECES.split(folded))
    return deletes


def _deleting_piece(piece: str) -> bool:
    """Whether a subcommand's piece is a deleting verb, or a long one glued to a word (`batchdelete`, `removeall`)."""
    if piece in table.DELETING_VERBS:
        return True
    if len(piece) <= 5 or piece.startswith("un"):  # `undelete` restores; `rm`, `del` glued are other words
        return False
    return any(piece.startswith(verb) or piece.endswith(verb) for verb in table.GLUED_DELETING_VERBS)


def _git_rm_keeps(words: list[_Word]) -> bool:
    """Whether `git rm`'s options keep the work tree's files (--cached, -n/--dry-run, any abbreviation)."""
    for word in words:
        value = word.value
        if value == "--":
            return False
        if value.startswith("--") and len(value) > 3:
            option = value.partition("=")[0]
            if "--cached".startswith(option) or "--dry-run".startswith(option):
                return True
        elif value.startswith("-") and not value.startswith("--") and "n" in value:
            return True
    return False


def _program(word: _Word) -> tuple[tuple[str, ...], str]:
    """A program's names and dispatch name (see _program_names); unknown when built from expansions or patterns."""
    if not word.known:
        raise CommandError(f"the program name {word.value!r} is built from an expansion or pattern")
    return _program_names(word.value)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _program_names(value: str) -> tuple[tuple[str, ...], str]:
    """A literal command word's names (basename casefolded, then its other names) and the one it is read by."""
    name = value.rsplit("/", 1)[-1].casefold()
    if not name:
        raise CommandError(f"the program name {value!r} is empty")
    names = table.canonical_names(name)
    if name.startswith("=") and len(name) > 1:
        # zsh expands `=rm` to the path of rm; bash runs `=rm`: report both.
        names = (*names, *table.canonical_names(name[1:]))
    if "\\" in name.rstrip("\\"):
        # `'C:\\Windows\\System32\\cmd.exe'`: on Windows the basename is after the last backslash.
        names = (*names, *table.canonical_names(name.rstrip("\\").rsplit("\\", 1)[-1]))
    names = tuple(dict.fromkeys(names))
    # The first name a table knows says how the program reads its words (`rm.exe` reads as `rm`).
    return names, next((known for known in names if known in _KNOWN_NAMES), names[-1])


def _included(option: str, value: str) -> str:
    """The glob an include option names: rsync's filter rules `+ PAT`, `+_PAT`, `include PAT`; others as given."""
    if option not in ("--filter", "-f"):
        return value
    rule, _, pattern = value.partition(" ")
    if rule in ("+", "include", "+!"):
        return pattern
    return value[2:] if value.startswith("+_") else ""  # `- x`, `merge f`...: no file sent


def _writes_pipe(node: tree_sitter.Node, data: bytes) -> bool:
    """Whether a command's output is piped to something that may act on the names (`| xargs cat`, not `| wc -l`)."""
    current = node.parent if node.parent is not None and node.parent.type == "redirected_statement" else node
    parent = current.parent
    if parent is None or parent.type != "pipeline":
        return False
    elements = parent.named_children
    place = next((i for i, element in enumerate(elements) if element.id == current.id), len(elements))
    for element in elements[place + 1 :]:
        name = _child(element, "command_name") if element.type == "command" else None
        if name is None or _text(name, data) not in _TEXT_FILTERS:
            return True
    return False


def _find_name(test: str, value: str) -> str:
    """A find name test as a name pattern: -name X is X; -path X is **/X; -regex is unknown."""
    if test in ("-regex", "-iregex"):
        return UNKNOWN_FILES
    if test in ("-name", "-iname"):
        return value or "*"
    # -path and -wholename match the whole path (their `*` crosses `/`): anywhere below a start.
    return "**/" + (value.lstrip("*/") or "*")


def _regex_name(regex: str) -> str:
    """fd's regex as a name pattern when it is a literal (`^\\.env$` is .env, `pem` is *pem*); else unknown."""
    start = regex.startswith("^")
    end = regex.endswith("$") and not regex.endswith("\\$")
    body = regex[1 if start else 0 : len(regex) - 1 if end else len(regex)]
    if any(char in re.sub(r"\\[.\\/\-_]", "", body) for char in ".*+?[](){}|^$\\"):
        return UNKNOWN_FILES
    literal = re.sub(r"\\([.\\/\-_])", r"\1", body)
    if not literal:
        return "*"
    return ("" if start else "*") + _as_pattern(literal) + ("" if end else "*")


def _names_known(value: str) -> bool:
    """Whether a word names a program the engine knows (`rm`, `/bin/rm`, `grm`); not for a word with quotes or `$`."""
    if not value or value[-1] == "/" or any(char in value for char in "$`'\"\\=*?[{"):
        return False
    return any(program in _NAMED_PROGRAMS for program in _program_names(value)[0])


# Round nine (set H, devnull-clobber): files that give nothing (or only zeros) when copied; the
# programs that copy, link or install a source over a file; those that copy their stdin to files;
# and the commands that write nothing to their output (`:`, `true`, `cat /dev/null`).
_EMPTY_SOURCES = frozenset({"/dev/null", "/dev/zero", "nul", "/dev/full"})
_EMPTYING_COPIERS = frozenset({"cp", "gcp", "ln", "install", "mv", "ditto", "rsync", "copy-item", "cpi", "dd"})
_STDIN_COPIERS = frozenset({"tee", "sponge", "dd"})
_SILENT_PROGRAMS = frozenset({":", "true", "false"})
_EMPTY_READERS = frozenset({"cat", "head", "tail", "tac", "dd"})
_SILENT_WRAPPERS = frozenset({"env", "command", "builtin", "nice", "nohup", "exec", "time", "timeout"})
_SEDS = frozenset({"sed", "gsed"})


def _below(word: _Word, below: str) -> _Word:
    """A folder's word with the part below it that a cleaner empties (`/_cacache`), if any."""
    if not below:
        return word
    return _Word(word.value + below, word.known, word.single, (*word.parts, (_QUOTED, below)))


def _mode_on(value: str, modes: frozenset[str]) -> bool:
    """Whether an option word turns a cleaner's mode on (`-modcache`, Go's `-modcache=true`, not `=false`)."""
    option, equals, setting = value.partition("=")
    return option in modes and (not equals or setting.casefold() not in ("false", "0", "f"))


def _sed_in_place_empties(words: list[_Word], bsd: bool = True) -> bool:
    """Whether `sed -i` is given files and a literal script that deletes every line (`sed -i d x`, `sed -ni '' x`).

    A word `''` after a bare `-i` is BSD sed's backup suffix and GNU sed's (empty) script: both are read.
    """
    in_place = quiet = from_file = suffixed = False
    scripts: list[_Word] = []
    operands: list[_Word] = []
    cursor = _Cursor(words)
    for word in cursor.options(operands):
        value = word.value
        if value.startswith("--"):
            option, equals, attached = value.partition("=")
            in_place = in_place or option == "--in-place"
            quiet = quiet or option in ("--quiet", "--silent")
            from_file = from_file or option == "--file"
            if (
                option in ("--expression", "--file", "--line-length")
                and not equals
                and (attached_word := cursor.take()) is not None
            ):
                if option == "--expression":
                    scripts.append(attached_word)
            elif option == "--expression":
                scripts.append(_Word(attached, word.known, word.single, word.parts))
            continue
        for position in range(1, len(value)):
            letter = value[position]
            if letter in "iI":
                in_place = True
                following = cursor.index + 1
                if bsd and position + 1 == len(value) and following < len(words) and words[following][:2] == ("", True):
                    cursor.index = following  # BSD sed's `-i ''`: no backup suffix
                    suffixed = True
                break  # GNU's `-iSUFFIX`: the rest is the suffix
            if letter == "n":
                quiet = True
            elif letter in "efl":
                tail = value[position + 1 :]
                tail_word = None if tail else cursor.take()
                if tail_word is None:
                    tail_word = _Word(tail, word.known, word.single, word.parts)
                if letter == "e":
                    scripts.append(tail_word)
                from_file = from_file or letter == "f"
                break
    if not in_place or from_file:
        return False
    if not scripts:
        if not operands:
            return False
        scripts, operands = operands[:1], operands[1:]
    script = "\n".join(word.value for word in scripts)
    if operands and all(word.known for word in scripts) and cleaners.sed_empties(script, quiet):
        return True
    return suffixed and _sed_in_place_empties(words, bsd=False)


def _stdin_is_empty(node: tree_sitter.Node, data: bytes) -> bool:
    """Whether a command's standard input is redirected from /dev/null (`tee x < /dev/null`)."""
    parent = node.parent
    if parent is None or parent.type != "redirected_statement":
        return False
    for child in parent.named_children:
        if child.type == "file_redirect" and _is_input_file(child, data):
            targets = child.children_by_field_name("destination")
            if any(_empty_source(_text(target, data).strip("'\"")) for target in targets):
                return True
    return False


def _empty_source(value: str) -> bool:
    """Whether a word names a file that gives nothing when read (/dev/null however spelled: `/DEV//null`)."""
    if "null" not in value.casefold() and "zero" not in value.casefold() and value.casefold() != "nul":
        return False
    try:
        return paths.normalize_path(value) in _EMPTY_SOURCES
    except Exception:  # a value the path functions cannot read is no known empty file
        return False


def names_known(value: str) -> bool:
    """Whether a word names a program the engine's tables know (roles reads a command's shape by it)."""
    return _names_known(value)


def _opens_shell(name: str, options: list[_Word]) -> bool:
    """Whether sudo's or doas's options ask for a shell (`-s`, `-i`, `--shell`, `--login`)."""
    letters = "s" if name == "doas" else "si"
    for word in options:
        value = word.value
        if value in ("--shell", "--login"):
            return True
        if value.startswith("-") and not value.startswith("--") and any(letter in value[1:] for letter in letters):
            return True
    return False


def _value_word(name: str, option: str, words: list[_Word], index: int) -> _Word:
    """The word after an option that takes a value; it may be unknown but must stay one word."""
    if index >= len(words):
        raise CommandError(f"{name}: option {option} has no value")
    word = words[index]
    if not word.single:
        raise CommandError(f"{name}: the value of {option} may split into several words")
    return word


class _Cursor:
    """A command's words read in order, where an option may take the word after it as its value."""

    __slots__ = ("index", "words")

    def __init__(self, words: list[_Word]) -> None:
        self.words = words
        self.index = 0  # the word being read; past the last once all are read

    def __iter__(self) -> Iterator[_Word]:
        while self.index < len(self.words):
            yield self.words[self.index]
            self.index += 1

    def literal(self, before: str, after: str) -> Iterator[_Word]:
        """The words, each literal: CommandError `before` the first that is not, then `after` it."""
        for word in self:
            if not word.known:
                raise CommandError(f"{before}{word.value!r}{after}")
            yield word

    def options(self, operands: list[_Word]) -> Iterator[_Word]:
        """The option words (`-x`, `--name`); every other word, and all after `--`, goes to operands (`-` too)."""
        done = False
        for word in self:
            value = word.value
            if done or value == "-" or not value.startswith("-"):
                operands.append(word)
            elif value == "--":
                done = True
            else:
                yield word

    def take(self) -> _Word | None:
        """The word after the one being read, taken (read no more as a word of its own); None after the last."""
        if self.index + 1 >= len(self.words):
            return None
        self.index += 1
        return self.words[self.index]

    def value(self, name: str, option: str) -> _Word:
        """The word after an option that takes a value, taken; it must be there and stay one word."""
        self.index += 1
        return _value_word(name, option, self.words, self.index)

    def value_of(self, word: _Word, start: int) -> tuple[_Word, int] | None:
        """An option's value: its word from `start` when attached there (start > 0), else the next word, taken."""
        if start:
            return word, start
        following = self.take()
        return None if following is None else (following, 0)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _plain_word(text: str) -> _Word:
    """The text of a `word` node (cached: the same words recur)."""
    return _unquoted(text)


def _joined(raw: str) -> bool:
    """Whether unquoted word text holds a blank or newline that no backslash escapes."""
    if " " not in raw and "\t" not in raw and "\n" not in raw:
        return False
    escaped = False
    for char in raw:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in " \t\n":
            return True
    return False


def _unquoted(raw: str) -> _Word:
    """Unquoted word text: backslash escapes removed; unescaped glob characters noted."""
    if _unparsed_code(raw):  # `a``b` in backticks: two substitutions to bash, plain text to the grammar
        raise CommandError(f"a command substitution the parser leaves unparsed: {raw!r}")
    if "\\" not in raw:
        if " " in raw or "\t" in raw or "\n" in raw:
            # `] [`: the grammar joined what bash splits into two words.
            raise CommandError(f"the parser joined words that bash splits: {raw!r}")
        pattern = _glob(raw)
        return _Word(raw, not pattern, not pattern, ((_BARE, raw),))
    out: list[str] = []
    plain: list[str] = []  # the unescaped characters only, to look for patterns
    written: list[tuple[int, str]] = []
    index = 0
    length = len(raw)
    while index < length:
        char = raw[index]
        if char == "\\" and index + 1 < length:
            following = raw[index + 1]
            if following != "\n":  # backslash-newline is removed (checked in _check_backslashes)
                out.append(following)
                written.append((_QUOTED, following))
            plain.append("_")  # an escaped character: neither a pattern nor a blank
            index += 2
            continue
        out.append(char)
        plain.append(char)
        written.append((_BARE, char))
        index += 1
    if any(char in " \t\n" for char in plain):
        raise CommandError(f"the parser joined words that bash splits: {raw!r}")
    pattern = _glob("".join(plain))
    return _Word("".join(out), not pattern, not pattern, tuple(written))


# Operands standing for what the engine cannot place. The path layer reads `$_...` as an
# expansion, an unknown name, so path red lines say "may" and allow rules "not surely"; the
# markers hold no glob character, so they read the same inside a PathPattern.
_TEXT_COPIERS = frozenset({"cat", "tee"})  # they write their literal stdin out unchanged
_UNKNOWN_FOLDER = "$_folder"  # a persisted cache folder given as a glob (`cache-dir /home/x/pro?`)
_UNKNOWN_SCRIPT = "$_script"  # a write target of unknown name: read when the line runs a script
# A crontab line's five time fields (or an @reboot-style nickname) and a Makefile's target line.
_CRON_TIMES = re.compile(r"^\s*(?:@[a-z]+|(?:[0-9*/,-]+\s+){4}[0-9A-Za-z*/,-]+)\s+")
_MAKE_TARGET = re.compile(r"^[^\s:=#][^:=#]*::?(?:\s|$)")

CODE_OPERAND = "$_code"  # code for an interpreter (`python -c`, `perl -e`, a risky sed or awk script)
UNKNOWN_FILES = "$_files"  # files a finder selects by a test the engine cannot read (`find -regex`, fd's regex)
UNKNOWN_CWD = "$_cwd"  # a directory `cd` moved to that the engine cannot know (`cd -`, `cd {a,b}`)
MAX_DIRS = 8  # places a line's `cd`s may have led to before they count as unknown
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_REMOTE = re.compile(r"((?:[^@/:\s]+@)?(?:\[[^\]/]+\]|[^/:\[\s]+)):(.*)")  # scp's [user@]host:path
_PATH_LIST = re.compile(r"[:\s]+")
# Each safety switch's subcommand and the option it stands for (table.GIT_SAFETY_KEYS).
_GIT_SAFETY_OPTIONS = dict(table.GIT_SAFETY_KEYS.values())
_SQL_LITERAL = re.compile(r"'((?:[^']|'')*)'")  # a SQL string literal ('' is a quote)
# A literal spelled as a path: a separator, a leading `.` or `~`, or a name with an extension; no blank.
_SQL_PATH = re.compile(r"(?=[^\s]*(?:[/\\]|^[.~]|[^./\\]\.[A-Za-z0-9]{1,10}$))[^\s]{1,4096}")
_MAX_ITEMS = 64  # xargs input items read into its command (_xargs_items)
_PATH_STARTS = ("/", "~", "./", "../")  # an assignment's value spelled as a path (_assigned_paths)
_SSH_CODE_OPTIONS = frozenset({"proxycommand", "localcommand", "remotecommand", "knownhostscommand"})
_GIT_VALUE_OPTIONS = frozenset(
    {"--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--attr-source", "--list-cmds"}
)


# What git reads after `%` in an ext:: URL (git-remote-ext(1)); %s and %S name the service.
_GIT_EXT_ESCAPES = {" ": " ", "%": "%", "s": "upload-pack", "S": "git-upload-pack"}
# The names a patch writes (git-apply(1), git-diff(1) "generating patches"): `--- a/X`, `+++ b/X`,
# `diff --git a/X b/Y`, `rename from/to X`, `copy from/to X`; the `a/` and `b/` prefixes dropped.
_PATCH_NAME = re.compile(
    r"^(?:(?:---|\+\+\+)[ \t]+(?:[ab]/)?(\S[^\t\n]*)"
    r"|diff --git (?:a/)?(\S+) (?:b/)?(\S+)"
    r"|(?:rename|copy) (?:from|to) (\S[^\n]*)"
    # A context diff's names (`*** FILE`, not a `*** 1,3 ****` hunk) and an `Index: FILE` line (patch(1)).
    r"|\*\*\*[ \t]+(?![0-9]+(?:,[0-9]+)?[ \t]+\*{4})(?:[ab]/)?(\S[^\t\n]*)|Index:[ \t]+(\S[^\n]*))",
    re.MULTILINE,
)
# Object names or pathspecs git reads from a stdin or file the engine cannot read: unknown names.
_GIT_UNKNOWN_NAMES = "$_names"
# Every option that makes git read names from stdin, as prefixes (`--batch=FORMAT`): a quick test first.
_GIT_STDIN_PREFIXES = tuple(
    sorted({"--pathspec-from-file", *table.GIT_STDIN_NAMES, *itertools.chain(*table.GIT_STDIN_CONTENT.values())})
)
_GIT_LITERAL = frozenset("*?[$~")  # characters a PathPattern brackets to read them literally


def _git_bang_key(key: str) -> bool:
    """Whether a git config key's value is code when it starts with `!` (alias.*, submodule.*.update)."""
    pieces = key.casefold().split(".")
    return f"{pieces[0]}.*" in table.GIT_BANG_CODE_KEYS or (
        len(pieces) >= 3 and f"{pieces[0]}.*.{pieces[-1]}" in table.GIT_BANG_CODE_KEYS
    )


def _git_setting_runs(key: str, value: str) -> bool:
    """Whether `git config KEY VALUE` may make git run something or read a path (then it is read)."""
    return bool(
        _git_key_kind(key)
        or _git_bang_key(key)
        or value[:5].casefold() == "ext::"
        or key.casefold().startswith("url.ext::")
    )


def _git_long_option(given: str, wanted: frozenset[str]) -> str | None:
    """The option of `wanted` that a long option names, in full or abbreviated (git takes any unique prefix)."""
    if given in wanted:
        return given
    if given in table.GIT_EXACT_OPTIONS:
        return None  # `send-email --to` is an option of its own, not `--to-cmd` abbreviated
    return min((option for option in wanted if option.startswith(given) and option.startswith("--")), default=None)


def _git_revision_path(value: str) -> int | None:
    """Where the path of a git REV:PATH starts (object-name.c: the first `:` outside `{...}`), or None."""
    if ":" not in value:
        return None
    if value.startswith(":"):
        if value.startswith(":/"):
            return None  # `:/TEXT` names a commit by its message (a pathspec `:/PATH` is read as one)
        start = 3 if len(value) > 3 and value[1] in "0123" and value[2] == ":" else 1
        return start if start < len(value) else None
    depth = 0
    for index, char in enumerate(value):
        if char == "{":
            depth += 1  # `@{12:00}`, `^{/fix: x}`: a colon in braces is the revision's
        elif char == "}" and depth:
            depth -= 1
        elif char == ":" and not depth:
            scheme = _URL.match(value)
            if scheme is not None and scheme.end() == index + 3:
                return None  # https://host/x is a URL, not a revision
            return index + 1 if index + 1 < len(value) else None
    return None


def _git_pathspec(value: str) -> tuple[str, ...]:
    """The files a git pathspec selects beyond its text (gitglossary(7) "pathspec"): magic stripped, globs read.

    `:(top,icase)x`, `:(attr:A)x`, `:/x`, `:!x` and `:^x` name x (path matching is casefolded
    already; an exclusion is read as naming x: over-approximated); `:(literal)x` is x as
    written; anything else is a glob git matches itself, quoted or not.
    """
    magic: set[str] = set()
    pattern = value
    if value.startswith(":("):
        close = value.find(")")
        if close < 0:
            return ()  # git refuses a long magic without `)`
        magic.update(item.strip().partition(":")[0].casefold() or "none" for item in value[2:close].split(","))
        pattern = value[close + 1 :]
    elif value.startswith(":"):
        index = 1
        while index < len(value) and value[index] in "/!^":
            magic.add(value[index])
            index += 1
        if magic and value[index : index + 1] == ":":
            index += 1
        if magic:
            pattern = value[index:]
    if "literal" in magic:
        return (pattern,)
    if not magic and not any(char in value for char in "*?[\\"):
        return ()  # the word itself (or REV:PATH's `:PATH`) says it all
    return _git_glob(pattern, crosses="glob" not in magic)


def _git_glob(pattern: str, crosses: bool) -> tuple[str, ...]:
    """A git glob (wildmatch, `\\` escapes) as PathPatterns; `*` and `?` also match `/` unless `:(glob)`.

    git's `*` and `?` may match a dot that starts a name (it has no leading-dot rule): a form with
    the dot in a name-starting wildcard's place is added. Where a wildcard may match the last `/`
    of a path (`d*id_rsa` matches deploy/id_rsa), the glob's rest is added as the last name.
    """
    plain: list[str] = []
    glob: list[str] = []
    wildcards: list[int] = []  # where `*` and `?` are in glob
    wild = False
    index = 0
    length = len(pattern)
    while index < length:
        char = pattern[index]
        if char == "\\" and index + 1 < length:
            index += 1
            char = pattern[index]
            plain.append(char)
            glob.append(f"[{char}]" if char in _GIT_LITERAL else char)
            index += 1
            continue
        close = _git_bracket_end(pattern, index) if char == "[" else -1
        if char in "*?" or close > 0:
            body = pattern[index + 1 : close] if close > 0 else ""
            if close < 0:
                wildcards.append(len(glob))
            piece = char if close < 0 else "[" + ("!" + body[1:] if body.startswith("^") else body) + "]"
            glob.append(piece)
            plain.append(piece)
            wild = True
            index = close + 1 if close > 0 else index + 1
            continue
        plain.append(char)
        glob.append(f"[{char}]" if char in _GIT_LITERAL else char)
        index += 1
    if not wild:
        return ("".join(plain),)  # no wildcard: a literal name (its escapes removed)
    variants = [glob]
    if crosses:
        # Past MAX_PATTERN_WILDCARDS the path layer reads the glob itself as "may match anything".
        for place in wildcards[-paths.MAX_PATTERN_WILDCARDS :]:
            rest = glob[place + 1 :]
            if rest and "/" not in rest:
                # A trailing `*` (`src*`) selects what is below a folder, as the folder's own name
                # does: judged by that name, as for every program that reads a folder.
                variants.append(["*", *rest] if glob[place] == "*" else rest)
    forms: list[str] = []
    for pieces in variants:
        forms.append(_git_form(pieces))
        # The last name's first wildcard may be its leading dot (`*env`, `?env` select .env); a
        # `*` may also be empty before a dot (`*.npmrc` selects .npmrc). Folders are judged by
        # their names, as for every program, so only the last name is read this way.
        start = max((i + 1 for i, piece in enumerate(pieces) if piece == "/"), default=0)
        if start < len(pieces) and _git_dot_start(pieces[start]):
            forms.append(_git_form([*pieces[:start], ".", *pieces[start + 1 :]]))
            if pieces[start] == "*" and pieces[start + 1 : start + 2] == ["."]:
                forms.append(_git_form([*pieces[:start], *pieces[start + 1 :]]))
    return tuple(dict.fromkeys(form for form in forms if form))


def _git_form(pieces: list[str]) -> str:
    """Glob pieces as an operand: a PathPattern while a wildcard or bracket is left, else the plain name."""
    text = "".join(pieces)
    return paths.PathPattern(text) if any(piece[0] in "*?[" for piece in pieces) else text


def _git_dot_start(piece: str) -> bool:
    """Whether a glob piece that starts a name may match a dot in git (`*`, `?`, `[.]`, `[!x]`)."""
    return piece in ("*", "?") or (len(piece) > 2 and piece[0] == "[" and ("." in piece or piece[1] == "!"))


def _reads_input_file(node: tree_sitter.Node, data: bytes) -> bool:
    """Whether a command's standard input is a file (`git cat-file --batch < names`): text unknown here."""
    holders = [node]
    if node.parent is not None and node.parent.type == "redirected_statement":
        holders.append(node.parent)
    return any(
        child.type == "file_redirect" and _is_input_file(child, data)
        for holder in holders
        for child in holder.named_children
    )


def _git_bracket_end(pattern: str, start: int) -> int:
    """The index of the `]` closing the bracket expression of a git glob at `start`, or -1."""
    index = start + 1
    if pattern[index : index + 1] in ("!", "^"):
        index += 1
    if pattern[index : index + 1] == "]":
        index += 1
    return pattern.find("]", index)


def _git_key_kind(key: str) -> str:
    """ "code" when git runs a config key's value, "path" when it names files, else ""."""
    key = key.casefold()
    pieces = key.split(".")
    candidates = [key]
    if len(pieces) >= 2:
        candidates.append(f"{pieces[0]}.*")
    if len(pieces) >= 3:
        candidates.append(f"{pieces[0]}.*.{pieces[-1]}")
    if any(candidate in table.GIT_CODE_KEYS for candidate in candidates):
        return "code"
    if any(candidate in table.GIT_PATH_KEYS for candidate in candidates):
        return "path"
    return ""


def _special_variable(name: str) -> bool:
    """Whether a variable's value is code, paths or unknown to the table."""
    return bool(table.variable_kind(name))


# Programs whose long options are matched whole (their parsers take no abbreviation, or the
# engine reads them elsewhere: git's tables resolve git's own prefixes).
_NO_ABBREVIATIONS = frozenset({"git"})
_DURATION = re.compile(r"[0-9][0-9.]*[smhd]?")  # a wrapper's duration (`timeout 5`, `sleep 1m`)
_WRITTEN, _WRITE_ONLY = (
    1,
    2,
)  # _Walk.writing: a redirection target is an operand and written; a table's write only written
_TAR_ROW = table.WRITERS["tar"]


@functools.lru_cache(maxsize=256)
def _long_options(grammar: table.Grammar) -> tuple[str, ...]:
    """A row's long options that take a value (computed once per row)."""
    options = (
        grammar.values | grammar.paths | grammar.data | grammar.urls | grammar.dirs | grammar.globs | grammar.code
    ) | grammar.runs
    return tuple(sorted(option for option in options if option.startswith("--")))


def _abbreviation(grammar: table.Grammar, option: str) -> str:
    """The option a long-option prefix stands for, or the option itself.

    getopt_long (GNU tools), curl, argparse and most option parsers take any unambiguous prefix
    of a long option (`curl --upload-fi .env` is `--upload-file .env`). A prefix of exactly one
    option of the row that takes a value is that option; had the program a flag with the same
    prefix, it would refuse the word as ambiguous and run nothing, so the reading is safe.
    """
    if len(option) < 4:
        return option
    found = [known for known in _long_options(grammar) if known.startswith(option)]
    return found[0] if len(found) == 1 else option


def _written_prefix(option: str) -> bool:
    """Whether a long option is getopt_long's prefix of one that names an output (`--target-dir`, `--outp`)."""
    return (
        len(option) >= 6
        and option.startswith("--")
        and any(known.startswith(option) for known in table.WRITTEN_OPTIONS if known.startswith("--"))
    )


def _takes_cwd(invocation: str, words: list[_Word]) -> bool:
    """Whether an invocation takes the whole working directory (table.WHOLE_CWD_INVOCATIONS): `git add -A`."""
    spec = table.WHOLE_CWD_INVOCATIONS.get(invocation)
    if spec is None:
        return False
    longs, letters, folders = spec
    taken = not (longs or letters)
    for word in words:
        value = word.value
        if value == "--":
            break
        option = value.partition("=")[0]
        if option in folders or (len(option) > 2 and option[:2] in folders and not option.startswith("--")):
            return False  # the folder is named: it is an operand already
        if option in longs or (option[:1] == "-" and option[1:2] != "-" and any(c in letters for c in option[1:])):
            taken = True
    return taken


def _searches_tree(words: list[_Word], unnamed: bool) -> bool:
    """Whether an argv searches a tree with no file operand named, so the cwd (rg, grep -r, git grep).

    `unnamed`: the walk found no operand in it. A program whose options the table does not know
    (`ag -u KEY`) names none either when one word at most is no option: its pattern.
    """
    for index, word in enumerate(words):
        if not word.known:
            return False
        name = _program_names(word.value)[1]
        if name in table.WRAPPERS and name not in ("xargs", "find"):
            continue  # `sudo rg KEY`: the program after the wrapper's words
        if word.value.startswith("-") or "=" in word.value or _DURATION.fullmatch(word.value):
            continue  # a wrapper's options and durations (`timeout 5`, `nice -n 5`)
        if index and words[index - 1].value.startswith("-") and name not in table.TREE_SEARCHERS and name != "git":
            continue  # a wrapper option's value (`sudo -u root rg KEY`)
        rest = [other.value for other in words[index + 1 :]]
        if name == "git":
            # `git grep` with no `--`: every word may be a pattern or a revision, none a pathspec
            return "grep" in rest and "--" not in rest
        if name in table.TREE_SEARCHERS or (
            name in table.RECURSIVE_SEARCHERS and any(_recursive_option(value) for value in rest)
        ):
            return unnamed or sum(not value.startswith("-") for value in rest) <= 1
        return False
    return False


def _names_listed(name: str, words: list[_Word]) -> bool:
    """Whether an argv takes the names of the files it reads from a list (table.NAME_LISTS), by getopt's grammar."""
    letters, longs = table.NAME_LISTS[name]
    for index, word in enumerate(words):
        value = word.value
        if value == "--":
            return False
        if value.startswith("--"):
            option = value.partition("=")[0]
            if any(len(option) >= shortest and full.startswith(option) for full, shortest in longs):
                return _hands_names_on(name, words[index + (1 if "=" in value else 2) :])
        elif value.startswith("-") or (index == 0 and name in ("tar", "gtar", "bsdtar") and value.isalnum()):
            # a cluster of short options (`-czfT`, tar's old-style `czfT`); a letter after a value-taking
            # one would be that option's value, which the table cannot tell: any listed letter counts
            if any(letter in letters for letter in value.lstrip("-")) and not value.startswith("-e"):
                return _hands_names_on(name, words[index + (2 if value[-1] in letters else 1) :])
        elif name == "xargs":
            return False  # xargs' command starts: its words are that program's
    return False


def _hands_names_on(name: str, rest: list[_Word]) -> bool:
    """xargs hands its list to a program that may open them (any but echo/printf); the others read them."""
    if name != "xargs":
        return True
    for index, word in enumerate(rest):
        if word.value.startswith("-") or (
            index and rest[index - 1].value in ("-n", "-L", "-P", "-s", "-d", "-I", "-E")
        ):
            continue
        if not word.known:
            return True
        program = _program_names(word.value)[1]  # a program known to open its operands (cat, tar, cp, base64...)
        return program not in table.TEXT_PROGRAMS and (
            program in table.PLAIN_PROGRAMS or program in table.GRAMMARS or program in table.WRITERS
        )
    return False


def _recursive_option(value: str) -> bool:
    """grep's -r, -R, --recursive, --dereference-recursive, -d recurse / --directories=recurse."""
    if value.startswith("--"):
        return value in ("--recursive", "--dereference-recursive", "--directories=recurse", "--rec", "--recur")
    return value.startswith("-") and not value.startswith("-e") and ("r" in value[1:] or "R" in value[1:])


# A define option's NAME[:TYPE]= (cmake's `-DNAME:PATH=VALUE`, mvn's and meson's `-DNAME=VALUE`).
_DEFINE_OPTIONS = frozenset({"D", "--define", "-D"})
_DEFINE = re.compile(r"[A-Za-z_][\w.-]{0,127}(?::[A-Za-z]{1,16})?=")
_DEFINE_PLACE = re.compile(r"[^\s]*[/\\~$%]|\.")  # a value that may be a place (`Release`, `ON` are words)


def _takes_value(grammar: table.Grammar, option: str) -> bool:
    """Whether a program's option takes a value (a path, data, a URL, a directory, code or text)."""
    return (
        option in grammar.values
        or option in grammar.paths
        or option in grammar.data
        or option in grammar.urls
        or option in grammar.dirs
        or option in grammar.globs
        or option in grammar.code
        or option in grammar.runs
    )


def _relative(value: str) -> bool:
    """Whether an operand is a relative path a `cd` moves (not absolute, home, a variable or a URL)."""
    return (
        not value.startswith(("/", "~", "$", "\\", "-"))
        and not (len(value) > 1 and value[1] == ":")
        and _URL.match(value) is None
    )


def _as_pattern(value: str) -> str:
    """A piece of a PathPattern: a plain operand's glob characters made literal."""
    if isinstance(value, paths.PathPattern):
        return value
    return "".join(f"[{char}]" if char in "*?[" else char for char in value)


def _joined_path(directory: str, value: str) -> str:
    """value under directory, a PathPattern when either is one."""
    if isinstance(directory, paths.PathPattern) or isinstance(value, paths.PathPattern):
        return paths.PathPattern(_as_pattern(directory).rstrip("/") + "/" + _as_pattern(value))
    return directory.rstrip("/") + "/" + value


def _reads_stdin(node: tree_sitter.Node) -> bool:
    """Whether a command's standard input is a heredoc, a here-string or a pipe (code, for an interpreter)."""
    current = node
    parent = node.parent
    if parent is not None and parent.type == "redirected_statement":
        current = parent
        parent = parent.parent
    for holder in (node, current):
        if any(child.type in ("heredoc_redirect", "herestring_redirect") for child in holder.named_children):
            return True
    if parent is not None and parent.type == "pipeline":
        first = parent.named_child(0)
        return first is not None and first.id != current.id
    return False


def _sed_runs(script: str) -> bool:
    """Whether a sed script may run a command or open a file (`e`, `w`, `r`, `s///e`, `s///w`); unreadable: yes."""
    index = 0
    length = len(script)
    while index < length:
        char = script[index]
        if char in " \t\n;{}!":
            index += 1
            continue
        if char.isdigit() or char in "$,~+":
            index += 1  # an address
            continue
        if char in "/\\":
            if char == "\\":
                index += 1  # \cREGEXc
            end = _delimited(script, index)
            if end < 0:
                return True
            index = end + 1
            while index < length and script[index] in "IM":
                index += 1
            continue
        if char in "ewrRWv":
            return char != "v"
        if char in "sy":
            if index + 1 >= length:
                return True
            middle = _delimited(script, index + 1)
            end = _delimited(script, middle) if middle >= 0 else -1
            if end < 0:
                return True
            index = end + 1
            flags_end = index
            while flags_end < length and script[flags_end] not in ";\n}":
                flags_end += 1
            if char == "s" and any(flag in script[index:flags_end] for flag in "ew"):
                return True
            index = flags_end
            continue
        if char in "aicbtT:":
            while index < length and script[index] != "\n" and not (char in "btT:" and script[index] in ";}"):
                index += 1
            continue
        if char in "pdDnNgGhHxlLqQz=FP#":
            if char == "#":
                while index < length and script[index] != "\n":
                    index += 1
            index += 1
            continue
        return True  # a command this reader does not know
    return False


def _delimited(text: str, opening: int) -> int:
    """Where the delimiter text[opening] occurs again, unescaped; -1 when it does not."""
    delimiter = text[opening]
    index = opening + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == delimiter:
            return index
        index += 1
    return -1


# An awk program that runs commands, reads or writes files by name: system(), getline, `| cmd`, `> file`.
_AWK_RUNS = re.compile(
    r"\bsystem\s*\(|\bgetline\b|\|&?\s*(?:\"|[A-Za-z_]\w*\s*(?:[;}\n]|$))|\bprintf?\b[^;}\n]*>|\bclose\s*\("
)


def _awk_runs(program: str) -> bool:
    """Whether an awk program may run a command or open a file it names."""
    return _AWK_RUNS.search(program) is not None


# Checks on the first operand of programs whose script is code (GRAMMARS' first_is_pattern).
_SCRIPT_CHECKS = {"sed": _sed_runs, "awk": _awk_runs}


# Brace expansion as bash does it, before globbing: past this many words the word is unknown.
MAX_BRACE_WORDS = 256
MAX_BRACE_CHARACTERS = 512  # a longer word with an unquoted `{` is an unknown name
# A sequence {1..N} of more terms than this stands for `*` (a name, never a `/`).
MAX_SEQUENCE = 64
# Operands standing for what the engine cannot place: the path layer reads `$?` as an unknown
# name (an expansion), so path red lines say "may" and allow rules "not surely".
UNKNOWN_BRACES = "$_braces"  # a brace expansion of more than MAX_BRACE_WORDS words
_SEQUENCE = re.compile(r"(-?[0-9]+)\.\.(-?[0-9]+)(?:\.\.(-?[0-9]+))?|([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?[0-9]+))?")
_SPECIAL_CHARS = frozenset("*?[{$~")
_Tokens = list[tuple[int, str]]  # a word one character (or one expansion) at a time


class _TooManyWords(Exception):
    """A brace expansion past MAX_BRACE_WORDS."""


def _before(parts: _Parts, end: int) -> _Parts:
    """The pieces of a word up to character `end` of its value."""
    out: list[tuple[int, str]] = []
    for kind, text in parts:
        if end <= 0:
            break
        out.append((kind, text[:end]))
        end -= len(text)
    return tuple(out)


def _after(parts: _Parts, start: int) -> _Parts:
    """The pieces of a word from character `start` of its value on."""
    out: list[tuple[int, str]] = []
    for kind, text in parts:
        if start >= len(text):
            start -= len(text)
            continue
        out.append((kind, text[start:]))
        start = 0
    return tuple(out)


@functools.lru_cache(maxsize=CACHE_SIZE)
def _forms(parts: _Parts) -> tuple[str, ...]:
    """The operands bash makes of a word: braces expanded, then a PathPattern for each glob.

    A fully literal word stays a plain str. A word with an unquoted `*`, `?` or `[...]`, or a
    literal `$`, leading `~` or glob character, becomes a `paths.PathPattern` in which the
    literal ones are bracketed (`[*]`, `[$]`, `[~]`) and the unquoted ones select names.
    Expansions (`$HOME`, `$(cmd)`) stay as written: the path layer reads them as unknown names.
    """
    if len(parts) == 1:
        kind, text = parts[0]
        if kind == _EXPANDED or not (_SPECIAL_CHARS.intersection(text)):
            return (text,)
    tokens = _tokens(parts)
    if any(kind == _BARE and char == "{" for kind, char in tokens):
        if len(tokens) > MAX_BRACE_CHARACTERS:
            return (UNKNOWN_BRACES,)  # reading braces costs a scan per `{`: long words are refused
        try:
            words = _braces(tokens, [0])
        except _TooManyWords:
            return (UNKNOWN_BRACES,)
    else:
        words = [tokens]
    return tuple(dict.fromkeys(_render(word) for word in words))


def _tokens(parts: _Parts) -> _Tokens:
    """A word's parts as brace expansion reads them: an expansion whole, quoted and bare text by character."""
    tokens: _Tokens = []
    for kind, text in parts:
        if kind == _EXPANDED:
            tokens.append((kind, text))
        else:
            tokens.extend((kind, char) for char in text)
    return tokens


def _brace_words(parts: _Parts) -> list[_Word] | None:
    """The words bash's brace expansion makes of a word, as words (not yet globbed); None past the bounds."""
    tokens = _tokens(parts)
    if len(tokens) > MAX_BRACE_CHARACTERS:
        return None
    try:
        expanded = _braces(tokens, [0])
    except _TooManyWords:
        return None
    words: list[_Word] = []
    for pieces in expanded:
        merged: list[tuple[int, str]] = []
        for kind, text in pieces:
            if merged and merged[-1][0] == kind:
                merged[-1] = (kind, merged[-1][1] + text)
            else:
                merged.append((kind, text))
        value = "".join(text for _, text in merged)
        known = all(kind == _QUOTED or (kind == _BARE and not _glob(text)) for kind, text in merged)
        words.append(_Word(value, known, True, tuple(merged)))
    return words


def _braces(tokens: _Tokens, count: list[int]) -> list[_Tokens]:
    """Bash's brace expansion of one word: the words it becomes, in order."""
    length = len(tokens)
    opening = -1
    while opening + 1 < length:
        opening += 1
        if tokens[opening] != (_BARE, "{") or (opening and tokens[opening - 1] == (_BARE, "$")):
            continue
        if opening == 0 and length > 1 and tokens[1] == (_BARE, "}"):
            continue  # bash ignores a `{}` that starts a word (find's placeholder)
        depth = 1
        commas: list[int] = []
        dots = False  # a `..` at the top level: the first `}` then ends the expression, valid or not
        closing = -1
        for index in range(opening + 1, length):
            kind, char = tokens[index]
            if kind != _BARE:
                continue
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    if commas or dots:
                        closing = index
                        break
                    depth = 1  # bash reads a `}` that closes no list as a character and looks on
            elif char == "," and depth == 1:
                commas.append(index)
            elif (
                char == "."
                and depth == 1
                and tokens[index + 1 : index + 2] == [(_BARE, ".")]
                and tokens[index + 2 : index + 3] != [(_BARE, "}")]
            ):
                dots = True
        if closing < 0:
            continue  # this `{` opens nothing; a later one may
        inner = tokens[opening + 1 : closing]
        choices: list[_Tokens]
        if commas:
            bounds = [opening, *commas, closing]
            choices = [tokens[bounds[i] + 1 : bounds[i + 1]] for i in range(len(bounds) - 1)]
        else:
            sequence = _sequence(inner)
            if sequence is None:
                opening = closing  # `{x..}`: literal braces; bash looks on after them
                continue
            choices = sequence
        head = tokens[:opening]
        tails = _braces(tokens[closing + 1 :], count)
        out: list[_Tokens] = []
        for choice in choices:
            for middle in _braces(choice, count):
                for tail in tails:
                    count[0] += 1
                    if count[0] > MAX_BRACE_WORDS:
                        raise _TooManyWords
                    out.append(head + middle + tail)
        return out
    return [tokens]


def _sequence(inner: _Tokens) -> list[_Tokens] | None:
    """The words of a {1..3} or {a..e} sequence (`*` when long), or None when inner is not one."""
    if any(kind != _BARE for kind, _ in inner):
        return None
    match = _SEQUENCE.fullmatch("".join(char for _, char in inner))
    if match is None:
        return None
    if match.group(1) is not None:
        first, last = int(match.group(1)), int(match.group(2))
        texts = [match.group(1), match.group(2)]
        width = (
            max(map(len, texts)) if any(t.lstrip("-").startswith("0") and len(t.lstrip("-")) > 1 for t in texts) else 0
        )
        step = abs(int(match.group(3) or 1)) or 1
        if abs(last - first) // step + 1 > MAX_SEQUENCE:
            return [[(_BARE, "*")]]
        numbers = range(first, last + (1 if last >= first else -1), step if last >= first else -step)
        return [[(_BARE, char) for char in str(number).zfill(width)] for number in numbers]
    first_char, last_char = ord(match.group(4)), ord(match.group(5))
    step = abs(int(match.group(6) or 1)) or 1
    codes = range(
        first_char, last_char + (1 if last_char >= first_char else -1), step if last_char >= first_char else -step
    )
    return [[(_BARE, chr(code))] for code in codes]


def _render(tokens: _Tokens) -> str:
    """One expanded word as an operand: a plain str, or a PathPattern when it holds a glob or literal specials."""
    out: list[str] = []
    pattern = False
    closing = -1  # the `]` that ends the bracket expression being copied
    length = len(tokens)
    for index, (kind, char) in enumerate(tokens):
        if kind == _EXPANDED or index <= closing:
            out.append(char)
            continue
        if kind == _BARE and char in "*?":
            pattern = True
            out.append(char)
        elif kind == _BARE and char == "[" and (end := _bracket_end(tokens, index)) > 0:
            pattern = True
            closing = end
            out.append(char)
        elif char in "*?[$" or (char == "~" and index == 0 and kind == _QUOTED):
            pattern = True
            out.append(f"[{char}]")
        else:
            out.append(char)
    if pattern:
        return paths.PathPattern("".join(out))
    return "".join(char for _, char in tokens) if length != 1 else tokens[0][1]


def _bracket_end(tokens: _Tokens, opening: int) -> int:
    """Where the unquoted `]` closing a bracket expression opened at `opening` is, or -1 (then `[` is literal)."""
    index = opening + 1
    if index < len(tokens) and tokens[index][1] in "!^":
        index += 1
    if index < len(tokens) and tokens[index][1] == "]":
        index += 1  # `[]x]`: a leading `]` is a member
    while index < len(tokens):
        kind, char = tokens[index]
        if kind == _BARE and char == "]":
            return index
        if char == "/":
            return -1  # a bracket expression never holds a `/`
        index += 1
    return -1


def _glob(text: str) -> bool:
    """Whether unquoted text holds a pathname pattern or a brace expansion."""
    if "*" in text or "?" in text:
        return True
    bracket = text.find("[")
    if bracket >= 0 and "]" in text[bracket + 1 :]:
        return True
    return "{" in text and _brace_pattern(text)


def _brace_pattern(text: str) -> bool:
    """Whether text may hold a brace expansion ({a,b} or {1..3}); over-approximate."""
    opening = text.find("{")
    if opening < 0:
        return False
    closing = text.rfind("}")
    middle = text[opening + 1 : closing]
    return closing > opening and ("," in middle or ".." in middle)


def _double_quoted(
    node: tree_sitter.Node, data: bytes, resolved: Callable[[tree_sitter.Node, bytes], str | None] | None = None
) -> _Word:
    """A "..." string: \\ escapes removed, variables `resolved` knows filled in, other expansions as written."""
    start = node.start_byte + 1
    end = node.end_byte - 1
    parts: list[str] = []
    written: list[tuple[int, str]] = []
    known = True
    cursor = start
    for child in node.named_children:
        if child.start_byte > cursor:
            parts.append(_dq(data[cursor : child.start_byte].decode("utf-8")))
            written.append((_QUOTED, parts[-1]))
        if child.type == "string_content":
            _check_string_content(child, data)
            parts.append(_dq(_text(child, data)))
            written.append((_QUOTED, parts[-1]))
        else:
            value = resolved(child, data) if resolved is not None and child.type in _VARIABLE_EXPANSIONS else None
            if value is not None:
                parts.append(value)
                written.append((_QUOTED, value))
            else:
                parts.append(_text(child, data))
                written.append((_EXPANDED, parts[-1]))
                known = False
        cursor = child.end_byte
    if end > cursor:
        parts.append(_dq(data[cursor:end].decode("utf-8")))
        written.append((_QUOTED, parts[-1]))
    return _Word("".join(parts), known, True, tuple(written))


# A backslash that quotes only some characters (inside double quotes, in backticks, in an unquoted
# heredoc) goes before them, stays before any other, and goes with the newline it joins.
_DQ_ESCAPE = re.compile(r'\\(?:\n|([$`"\\]))')
_BACKTICK_ESCAPE = re.compile(rb"\\([\\`$])")
_HEREDOC_ESCAPE = re.compile(rb"\\(?:\n|([\\`$]))")


def _dq(raw: str) -> str:
    """Text inside double quotes: a backslash escapes only $ ` " \\ and newline."""
    return _DQ_ESCAPE.sub(r"\1", raw) if "\\" in raw else raw


def _ansi_c(raw: str) -> str:
    """The text of $'...': bash's backslash escapes decoded."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    index = 0
    length = len(raw)
    while index < length:
        char = raw[index]
        if char != "\\" or index + 1 >= length:
            out.append(char)
            index += 1
            continue
        code = raw[index + 1]
        index += 2
        if code in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[code])
        elif code in "01234567":
            digits = code
            while len(digits) < 3 and index < length and raw[index] in "01234567":
                digits += raw[index]
                index += 1
            out.append(chr(int(digits, 8) & 0xFF))
        elif code in "xuU":
            most = _ANSI_DIGITS[code]
            digits = ""
            while len(digits) < most and index < length and raw[index] in _HEX:
                digits += raw[index]
                index += 1
            if not digits:
                out.append("\\" + code)
            else:
                number = int(digits, 16)
                if number > 0x10FFFF:
                    raise CommandError(f"$'...' holds an invalid character \\{code}{digits}")
                out.append(chr(number))
        elif code == "c" and index < length:
            out.append(chr(ord(raw[index].upper()) & 0x1F))
            index += 1
        else:
            out.append("\\" + code)
    text = "".join(out)
    if "\x00" in text:
        # bash cuts a $'...' string at a NUL; rather than mimic it, refuse.
        raise CommandError("$'...' holds a NUL character")
    return text


def _unescape_backticks(inner: bytes) -> bytes:
    """Backtick contents as bash parses them: \\\\, \\` and \\$ lose their backslash."""
    return _BACKTICK_ESCAPE.sub(rb"\1", inner)


def _unescape_heredoc(body: bytes) -> bytes:
    """An unquoted heredoc body as its reader gets it: a backslash before \\, $, ` or a newline goes."""
    return _HEREDOC_ESCAPE.sub(rb"\1", body)


def _heredoc_delimiter(start: tree_sitter.Node, data: bytes) -> tuple[bytes, bool]:
    """A heredoc's delimiter after quote removal, and whether it was quoted."""
    raw = data[start.start_byte : start.end_byte]
    quoted = any(char in raw for char in b"'\"\\")
    if not quoted:
        return raw, False
    out = bytearray()
    index = 0
    while index < len(raw):
        byte = raw[index]
        if byte == 0x5C and index + 1 < len(raw):
            out.append(raw[index + 1])
            index += 2
            continue
        if byte not in b"'\"":
            out.append(byte)
        index += 1
    return bytes(out), True


def _heredoc_quoted(node: tree_sitter.Node, data: bytes) -> bool:
    """Whether a heredoc's delimiter is quoted (its body is then literal text)."""
    start = _child(node, "heredoc_start")
    return start is not None and _heredoc_delimiter(start, data)[1]


def _check_heredoc(node: tree_sitter.Node, data: bytes) -> bool:
    """Check that the grammar reads this heredoc's lines as bash does; return whether it is quoted."""
    start = _child(node, "heredoc_start")
    end = _child(node, "heredoc_end")
    body = _child(node, "heredoc_body")
    if start is None or end is None:
        raise CommandError("a heredoc has no end")
    delimiter, quoted = _heredoc_delimiter(start, data)
    following = data[start.end_byte : start.end_byte + 1]
    if following and following not in b" \t\n;&|<>()":
        # `<<"E"OF`: the grammar takes `"E"` for the delimiter, bash takes `EOF`.
        raise CommandError("a heredoc delimiter is split by the parser")
    dash = any(not child.is_named and _text(child, data) == "<<-" for child in node.children)
    tabs = b"\t" if dash else b""
    # The body starts on the line after `<<EOF` (what follows it on that line is still code).
    newline = data.find(b"\n", start.end_byte)
    for child in node.named_children:
        if child.end_byte > newline and child.type not in ("heredoc_start", "heredoc_body", "heredoc_end"):
            # A body line starting with a backslash (`\\rm x`) is taken for words of the command.
            raise CommandError("the parser read heredoc lines as code")
    first = body.start_byte if body is not None else end.start_byte
    if newline < 0 or data[newline + 1 : first].strip(tabs):
        raise CommandError("the parser read heredoc lines as code")
    if data[end.start_byte : end.end_byte] != delimiter:
        raise CommandError("a heredoc ends at a line that is not its delimiter")
    line_start = data.rfind(b"\n", 0, end.start_byte) + 1
    if data[line_start : end.start_byte].strip(tabs) or data[end.end_byte : end.end_byte + 1] not in (b"\n", b""):
        # The grammar ends a heredoc at a line that only starts with the delimiter; bash does not.
        raise CommandError("a heredoc ends on a line with other text")
    for line in data[newline + 1 : line_start].split(b"\n")[:-1]:
        if (line.lstrip(b"\t") if dash else line) == delimiter:
            # bash would end the heredoc here, earlier than the grammar did.
            raise CommandError("the parser and bash disagree on where a heredoc ends")
    return quoted


def _unparsed_code(raw: str, starts: str = "$<>") -> bool:
    """Whether text the grammar took as plain holds an unescaped `...`, $(...), <(...) or >(...)."""
    if "`" not in raw and "(" not in raw:
        return False
    index = 0
    length = len(raw)
    while index < length:
        char = raw[index]
        if char == "\\":
            index += 2
            continue
        if char == "`" or (char in starts and raw[index + 1 : index + 2] == "("):
            return True
        index += 1
    return False


def _check_string_content(node: tree_sitter.Node, data: bytes) -> None:
    """Text inside "..." the grammar did not split: refuse an unparsed `...` or $(...)."""
    if _unparsed_code(_text(node, data), "$"):  # inside "...", <( is plain text
        raise CommandError(f"a command substitution the parser leaves unparsed: {_text(node, data)!r}")


def _check_heredoc_body(body: tree_sitter.Node, data: bytes) -> None:
    """An unquoted heredoc body runs `...` and $(...): refuse the ones the grammar did not parse."""
    cursor = body.start_byte
    for child in body.named_children:
        if child.start_byte > cursor and _unparsed_code(data[cursor : child.start_byte].decode("utf-8")):
            raise CommandError("an unquoted heredoc body runs `...`, which the parser leaves unparsed")
        cursor = max(cursor, child.end_byte)
    if _unparsed_code(data[cursor : body.end_byte].decode("utf-8")):
        raise CommandError("an unquoted heredoc body runs `...`, which the parser leaves unparsed")


def _is_input_file(node: tree_sitter.Node, data: bytes) -> bool:
    """Whether a file redirection feeds a file to standard input (`< file`, `0< file`)."""
    operator = "".join(_text(child, data) for child in node.children if not child.is_named)
    descriptor = _child(node, "file_descriptor")
    return operator == "<" and (descriptor is None or _text(descriptor, data) == "0")


def _check_backslashes(root: tree_sitter.Node, data: bytes) -> None:
    """Refuse a backslash the grammar may read differently from bash."""
    # An escaped character is part of a word to bash; the grammar sometimes skips it as white
    # space or drops it (`ls<newline>\\ x` becomes one command `ls x`; `'x'\\$` loses its `$`),
    # so every escape must lie inside a word node. bash removes backslash-newline before it
    # splits words (outside single quotes, comments and quoted heredocs): `r\\<newline>m` is
    # `rm`, `"$\\<newline>(x)"` runs x, where the grammar splits or ignores them. After a blank
    # it only joins two separate words, as the grammar does: the one form accepted.
    literal: list[tuple[int, int]] = []
    ansi: list[tuple[int, int]] = []
    wordish: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "raw_string" or kind == "comment":
            literal.append((node.start_byte, node.end_byte))
            continue
        if kind == "ansi_c_string":
            ansi.append((node.start_byte, node.end_byte))
            continue
        if kind == "heredoc_body":
            if node.parent is not None and _heredoc_quoted(node.parent, data):
                literal.append((node.start_byte, node.end_byte))
                continue
            wordish.append((node.start_byte, node.end_byte))
        elif kind in _WORDISH:
            wordish.append((node.start_byte, node.end_byte))
        stack.extend(node.named_children)
    quoted = _merged(literal)
    forbidden = _merged(ansi)
    words = _merged(wordish)
    position = data.find(b"\\")
    while position >= 0:
        following = data.find(b"\\", position + 2)
        if _inside(position, quoted):
            position = data.find(b"\\", position + 1)
            continue
        if data[position + 1 : position + 2] != b"\n":  # an escape: the grammar must keep it in a word
            if not _inside(position, words) and not _inside(position, forbidden):
                # `\\ x`, `'x'\\$`: the grammar skips them as white space or drops them.
                raise CommandError("an escaped character outside any word, which the parser skips")
            position = following  # the escaped character (maybe a backslash) is taken
            continue
        if _inside(position, forbidden):
            raise CommandError("a line continuation inside $'...'")
        # Not after a newline either: on a line of its own the grammar reads `\\` and both
        # newlines as one blank, joining two commands (`x=<newline>\\<newline>cmd`).
        before = data[position - 1 : position] if position > 0 else b"\n"
        if before not in (b" ", b"\t") or (position > 1 and data[position - 2 : position - 1] == b"\\"):
            raise CommandError("a line continuation inside a word, which the parser reads differently")
        position = following


def _merged(ranges: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Sorted (start, end) ranges merged into disjoint ones, as two lists for bisect."""
    starts: list[int] = []
    ends: list[int] = []
    for start, end in sorted(ranges):
        if ends and start <= ends[-1]:
            ends[-1] = max(ends[-1], end)
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


def _inside(position: int, merged: tuple[list[int], list[int]]) -> bool:
    """Whether a byte offset lies inside one of the merged ranges."""
    starts, ends = merged
    index = bisect.bisect_right(starts, position) - 1
    return index >= 0 and position < ends[index]


def _syntax_error(root: tree_sitter.Node, data: bytes) -> str:
    """A one-line description of the first ERROR or MISSING node."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing:
            line, column = node.start_point
            return f"syntax error: missing {node.type!r} at line {line + 1}, column {column + 1}"
        if node.is_error:
            line, column = node.start_point
            snippet = data[node.start_byte : node.start_byte + 20].decode("utf-8", "replace")
            return f"syntax error at line {line + 1}, column {column + 1} near {snippet!r}"
        if node.has_error:
            stack.extend(reversed(node.children))
    return "syntax error"
