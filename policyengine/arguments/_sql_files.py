"""The files SQL in a call's argument opens or writes by itself: file functions and file clauses.

Round fourteen (set M, cc-mcp-sql-file-functions, bl-sql-file-functions). A query tool hands its
SQL to a server or an embedded engine that reads and writes files on request: SQLite's
readfile/writefile, PostgreSQL's pg_read_file/pg_ls_dir/lo_import/lo_export and COPY ... FROM/TO,
MySQL's LOAD_FILE, INTO OUTFILE/DUMPFILE and LOAD DATA INFILE, DuckDB's read_csv/read_text and a
path as a table, ClickHouse's file(), ATTACH and VACUUM INTO. The shell parser reads such SQL given
to a client (`sqlite3 db "..."`); this module reads it in any argument, for roles.py.

A file operand is read as SQL evaluates it: string literals ('', "", E'', $$..$$, X'' hex, 0x hex)
joined by `||`, `+` or concat(), and char()/chr() of numbers, give the file's name. An operand the
reader cannot evaluate (a column, a parameter, an unknown function, a subquery) is UNKNOWN, a place
that counts as possibly forbidden; so is SQL that runs a program (COPY ... PROGRAM, xp_cmdshell).
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

import re2  # type: ignore[import-untyped,unused-ignore]

from policyengine.arguments import paths

__all__ = ["HINT", "UNKNOWN", "SqlFiles", "sql_files", "worth_reading"]

UNKNOWN = "$_sql"  # a file SQL opens whose name the reader cannot evaluate: an unknown place

# The functions that open a file, by name (lower case): which arguments name a file read, which a
# file written. SQLite (readfile, writefile, fsdir, zipfile, load_extension), PostgreSQL
# (pg_read_file, pg_read_binary_file, pg_ls_dir, pg_stat_file, lo_import, lo_export, adminpack's
# pg_file_write/rename/unlink), MySQL/MariaDB (load_file), DuckDB (read_* table functions, glob,
# parquet_scan, st_read), ClickHouse (file), H2 (file_read, file_write, csvread, csvwrite).
_FUNCTIONS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    **dict.fromkeys(
        [
            "readfile",
            "fsdir",
            "zipfile",
            "load_extension",
            "load_file",
            "pg_read_file",
            "pg_read_binary_file",
            "pg_ls_dir",
            "pg_stat_file",
            "lo_import",
            "file",
            "file_read",
            "csvread",
            "glob",
            "parquet_scan",
            "read_csv",
            "read_csv_auto",
            "read_text",
            "read_blob",
            "read_json",
            "read_json_auto",
            "st_read",
            "read_json_objects",
            "read_ndjson",
            "read_ndjson_auto",
            "read_ndjson_objects",
            "read_parquet",
            "read_xlsx",
            "sniff_csv",
            "pg_file_sync",
        ],
        ((0,), ()),
    ),
    **dict.fromkeys(["writefile", "pg_file_write", "pg_file_unlink", "csvwrite"], ((), (0,))),
    "lo_export": ((), (1,)),
    "file_write": ((), (1,)),
    "pg_file_rename": ((), (0, 1, 2)),
}
# Functions that run a program (their text is a command on the server): the place is unknown.
_PROGRAM_FUNCTIONS = frozenset({"xp_cmdshell", "sys_exec", "sys_eval"})
# Names that are also ordinary words (`the file (optional)`): a file function only in a statement.
_GENERIC = frozenset({"file", "glob"})
_STATEMENT = re.compile(r"(?i)\b(?:select|insert|with|values|create|copy|call|exec|execute|pragma)\b")
# Clauses: the keyword sequence (words, lower case) and whether the file after it is written.
_CLAUSES: tuple[tuple[tuple[str, ...], bool], ...] = (
    (("into", "outfile"), True),
    (("into", "dumpfile"), True),
    (("infile",), False),  # LOAD DATA [LOCAL] INFILE, LOAD XML INFILE
    (("vacuum", "into"), True),
    (("export", "database"), True),
    (("import", "database"), False),
    (("bulk",), False),  # BULK INSERT t FROM 'f' reads on; OPENROWSET(BULK 'f', ...)
    (("inpath",), False),  # Hive/Spark LOAD DATA [LOCAL] INPATH
    (("runscript", "from"), False),
    (("script", "to"), True),
)
# Words after which a file's name follows, skipping optional words (ATTACH [DATABASE] [IF NOT EXISTS] 'f').
_ATTACH_SKIP = frozenset({"database", "if", "not", "exists", "partition"})

# A string worth reading: a file function's name before `(`, or a file clause's words (one C scan;
# prose that names no such function costs nothing more).
HINT = re.compile(
    r"(?i)\b(?:readfile|writefile|fsdir|zipfile|load_extension|load_file|pg_\w+|lo_(?:import|export)|file|file_read"
    r"|file_write|csv(?:read|write)|glob|parquet_scan|read_\w+|st_read|sniff_csv|xp_cmdshell|sys_e(?:xec|val))\s*\("
    r"|\binto\s+(?:out|dump)file\b|\binfile\b|\binpath\b|(?:^|[;\n]|\*/)\s*copy\b|\battach\s+(?:database\s+)?(?:if\s+not"
    r"\s+exists\s+)?(?:['\"$]|\w+\s*\()|\bvacuum\b[^;]*\binto\b|\bbulk\s+(?:insert\b|['\"])|\brunscript\s+from\b"
    r"|\bscript\s+to\s+'"
    r"|\b(?:export|import)\s+database\b|\bdisk\s*=|\bfrom\s+(?:'|\$\w*\$)|\bload\s+'"
)
# Every file function or clause needs one of these characters (a call's parenthesis, a literal's
# quote, a dollar quote, `DISK =`): most strings have none and skip the hint (one C scan).
_HINT_CHARS = re.compile(r"[('\"$=]")
_HINT_RE2 = re2.compile(HINT.pattern)  # linear, one pass over the alternation (Python's re tries each word)


def worth_reading(text: str) -> bool:
    """Whether a string may hold SQL that opens files (the cheap prefilter before sql_files)."""
    if not text.isascii():
        text = _folded(text)  # a full-width or compatibility spelling is read as its plain form
    return _HINT_CHARS.search(text) is not None and _HINT_RE2.search(text[:_MAX_TEXT]) is not None


def _folded(text: str) -> str:
    """NFKC of the text: a name or a file function in compatibility characters reads as the plain one."""
    return unicodedata.normalize("NFKC", text[:_MAX_TEXT])


_TOKEN = re.compile(
    r"\s+|--[^\n]*|/\*.*?(?:\*/|$)|#[^\n]*"  # blanks and comments
    r"|(?P<e>[Ee]'(?:[^'\\]|\\.|'')*')"  # PostgreSQL escape string
    r"|(?P<x>[Xx]'[0-9A-Fa-f]*')|(?P<h>0[xX][0-9A-Fa-f]+)"  # hex literals
    r"|(?P<s>'(?:[^']|'')*'?)|(?P<d>\"(?:[^\"]|\"\")*\"?)|(?P<b>`[^`]*`?)"  # strings, quoted names
    r"|(?P<dollar>\$(?P<tag>[A-Za-z_]\w*)?\$)"  # dollar quoting opens
    r"|(?P<n>\d+(?:\.\d+)?)|(?P<w>[A-Za-z_][\w$]*)|(?P<op>\|\||::|[-+*/=<>!%&|^~]+)|(?P<p>[()\[\],.;:@?{}])",
    re.DOTALL,
)
_MAX_TEXT = 65536  # as roles' JSON text: the rest of a longer string is not read
_MAX_TOKENS = 20000


class _Tok(NamedTuple):
    kind: str  # "s" a string's value, "w" a word (lower case), "n" a number, "op", "p" punctuation
    value: str


class SqlFiles(NamedTuple):
    """What SQL opens: the files it reads and the files it writes (UNKNOWN for a name it cannot evaluate)."""

    read: list[str]
    written: list[str]


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'"}
_E_ESCAPE = re.compile(r"\\([xX][0-9A-Fa-f]{1,2}|[0-7]{1,3}|u[0-9A-Fa-f]{4}|.)", re.DOTALL)


def _e_string(body: str) -> str:
    """A PostgreSQL E'' string's value (backslash escapes)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xXu" and len(code) > 1:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8) % 0x110000)
        return _ESCAPES.get(code, code)

    return _E_ESCAPE.sub(one, body.replace("''", "'"))


def _hex(digits: str) -> str:
    """A hex literal's bytes as text (MySQL and SQLite read 0x2f65... and X'2f65...' as a string)."""
    if len(digits) % 2:
        digits = "0" + digits
    return bytes.fromhex(digits).decode("utf-8", "replace")


def _tokens(text: str) -> list[_Tok]:
    """The SQL's tokens, comments and blanks left out; string literals as their values."""
    found: list[_Tok] = []
    pos, end = 0, len(text)
    while pos < end and len(found) < _MAX_TOKENS:
        match = _TOKEN.match(text, pos)
        if match is None:
            found.append(_Tok("p", text[pos]))  # a character no token reads: punctuation
            pos += 1
            continue
        pos = match.end()
        kind = match.lastgroup
        value = match.group()
        if kind is None or kind == "tag":
            continue
        if kind == "s":
            found.append(_Tok("s", value[1:-1].replace("''", "'") if value.endswith("'") else value[1:]))
        elif kind == "d":
            found.append(_Tok("s", value[1:-1].replace('""', '"')))  # MySQL's string; SQLite's fallback
        elif kind == "e":
            found.append(_Tok("s", _e_string(value[2:-1])))
        elif kind == "x":
            found.append(_Tok("s", _hex(value[2:-1])))
        elif kind == "h":
            found.append(_Tok("s", _hex(value[2:])))
        elif kind == "dollar":
            close = text.find(value, pos)
            body = text[pos:] if close < 0 else text[pos:close]
            pos = end if close < 0 else close + len(value)
            found.append(_Tok("s", body))
        elif kind == "b":
            found.append(_Tok("w", value.strip("`").lower()))
        elif kind == "w":
            found.append(_Tok("w", value.lower()))
        else:
            found.append(_Tok(kind, value))
    return found


def _close(tokens: list[_Tok], start: int) -> int:
    """The index of the `)` or `]` closing the bracket before `start` (len(tokens) when unclosed)."""
    depth = 1
    for index in range(start, len(tokens)):
        value = tokens[index].value if tokens[index].kind == "p" else ""
        if value in ("(", "["):
            depth += 1
        elif value in (")", "]"):
            depth -= 1
            if depth == 0:
                return index
    return len(tokens)


def _arguments(tokens: list[_Tok], start: int, stop: int) -> list[list[_Tok]]:
    """The comma-separated arguments between start and stop (brackets nest)."""
    args: list[list[_Tok]] = [[]]
    depth = 0
    for token in tokens[start:stop]:
        if token.kind == "p" and token.value in ("(", "["):
            depth += 1
        elif token.kind == "p" and token.value in (")", "]"):
            depth -= 1
        elif token.kind == "p" and token.value == "," and depth == 0:
            args.append([])
            continue
        args[-1].append(token)
    return args if args != [[]] else []


def _values(tokens: list[_Tok]) -> list[str]:
    """What an operand names: each string it evaluates to ([UNKNOWN] when it cannot be evaluated)."""
    if len(tokens) >= 2 and tokens[0] == _Tok("p", "[") and tokens[-1] == _Tok("p", "]"):
        # A DuckDB list of files: each element is a file.
        return [value for item in _arguments(tokens, 1, len(tokens) - 1) for value in _values(item)]
    value = _evaluate(tokens)
    return [UNKNOWN] if value is None else [value]


def _evaluate(tokens: list[_Tok]) -> str | None:
    """The string an expression of literals, `||`/`+`, concat() and char()/chr() gives, or None."""
    parts: list[str] = []
    index, count = 0, len(tokens)
    expect_operand = True
    while index < count:
        token = tokens[index]
        if expect_operand:
            if token.kind in ("s", "n"):
                parts.append(token.value)
                index += 1
            elif token.kind == "p" and token.value == "(":
                stop = _close(tokens, index + 1)
                inner = _evaluate(tokens[index + 1 : stop])
                if inner is None:
                    return None
                parts.append(inner)
                index = stop + 1
            elif token.kind == "w" and index + 1 < count and tokens[index + 1] == _Tok("p", "("):
                stop = _close(tokens, index + 2)
                called = _call(token.value, _arguments(tokens, index + 2, stop))
                if called is None:
                    return None
                parts.append(called)
                index = stop + 1
            else:
                return None  # a column, a parameter, a subquery: not a literal
            expect_operand = False
        elif token.kind == "op" and token.value in ("||", "+"):
            expect_operand = True
            index += 1
        elif token.kind == "op" and token.value == "::" and index + 1 < count and tokens[index + 1].kind == "w":
            index += 2  # a PostgreSQL cast ('x'::text) keeps the value
        elif token.kind == "w" and token.value == "collate" and index + 1 < count:
            index += 2
        else:
            return None
    return "".join(parts) if parts and not expect_operand else None


def _call(name: str, args: list[list[_Tok]]) -> str | None:
    """The string a call of a string function of literals gives, or None for any other call."""
    if name in ("concat", "concat_ws"):
        values = [_evaluate(arg) for arg in args]
        if any(value is None for value in values):
            return None
        texts = [value for value in values if value is not None]
        return texts[0].join(texts[1:]) if name == "concat_ws" and texts else "".join(texts)
    if name in ("char", "chr", "nchar", "unistr_char"):
        out: list[str] = []
        for arg in args:
            number = arg[0].value if len(arg) >= 1 and arg[0].kind == "n" and "." not in arg[0].value else None
            if number is None or int(number) >= 0x110000:
                if arg and arg[0] == _Tok("w", "using"):
                    continue
                return None
            out.append(chr(int(number)))
        return "".join(out)
    if name in ("lower", "upper", "trim", "ltrim", "rtrim", "text", "cast", "unhex") and len(args) == 1:
        value = _evaluate(args[0])
        if value is None:
            return None
        if name == "unhex":
            return _hex(value) if re.fullmatch(r"[0-9A-Fa-f]*", value) else None
        return {"lower": value.lower(), "upper": value.upper()}.get(name, value.strip() if "trim" in name else value)
    return None


def sql_files(text: str) -> SqlFiles:
    """The files the SQL in a string opens and writes (see the module's docstring); empty for none."""
    if len(text) > _MAX_TEXT:
        text = text[:_MAX_TEXT]
    if not worth_reading(text):
        return SqlFiles([], [])
    if not text.isascii():
        text = _folded(text)
    tokens = _tokens(text)
    statement = _STATEMENT.search(text) is not None
    read: list[str] = []
    written: list[str] = []
    count = len(tokens)
    for index, token in enumerate(tokens):
        if token.kind != "w":
            continue
        word = token.value
        following = tokens[index + 1] if index + 1 < count else None
        if following == _Tok("p", "(") and (word in _FUNCTIONS or word in _PROGRAM_FUNCTIONS):
            if word in _GENERIC and not statement:
                continue
            if word in _PROGRAM_FUNCTIONS:
                read.append(UNKNOWN)
                continue
            stop = _close(tokens, index + 2)
            args = _arguments(tokens, index + 2, stop)
            reads, writes = _FUNCTIONS[word]
            if word == "file" and index >= 1 and tokens[index - 1] == _Tok("w", "function"):
                reads, writes = (), (0,)  # ClickHouse's INSERT INTO FUNCTION file('f'): written
            for position in reads:
                if position < len(args):
                    read.extend(_values(args[position]))
            for position in writes:
                if position < len(args):
                    written.extend(_values(args[position]))
            continue
        if word == "copy" and (index == 0 or tokens[index - 1] == _Tok("p", ";")):
            _copy(tokens, index + 1, read, written)
        elif word == "attach":
            start = index + 1
            while start < count and tokens[start].kind == "w" and tokens[start].value in _ATTACH_SKIP:
                start += 1
            if _names_file(tokens, start):
                written.extend(_values(_operand(tokens, start)))
        elif word == "from" and following is not None and following.kind == "s":
            read.append(following.value)  # DuckDB: a file as a table (FROM 'data.csv')
        elif word == "load" and following is not None and following.kind == "s":
            read.append(following.value)  # DuckDB: LOAD 'x.duckdb_extension' (code from a file)
        elif word == "disk" and following == _Tok("op", "="):
            written.extend(_values(_operand(tokens, index + 2)))  # MSSQL BACKUP ... TO DISK = 'f'
        else:
            for words, writes_file in _CLAUSES:
                size = len(words)
                if tuple(t.value if t.kind == "w" else "" for t in tokens[index : index + size]) == words:
                    start = index + size
                    while start < count and tokens[start].kind == "w" and tokens[start].value in ("local", "inpath"):
                        start += 1
                    if words[-1] in ("outfile", "dumpfile", "infile", "inpath") or _names_file(tokens, start):
                        (written if writes_file else read).extend(_values(_operand(tokens, start)))
                    break
    return SqlFiles(_placed(read), _placed(written))


_WILDCARD = re.compile(r"[*?\[]")


def _placed(names: list[str]) -> list[str]:
    """The names, distinct, a glob (DuckDB and ClickHouse expand `*`, `?`, `[...]`) as a path pattern."""
    return [paths.PathPattern(name) if _WILDCARD.search(name) else name for name in dict.fromkeys(names)]


def _names_file(tokens: list[_Tok], start: int) -> bool:
    """Whether a clause's operand starts as a file's name does: a string, or a call (concat(...), char(...))."""
    if start >= len(tokens):
        return False
    first = tokens[start]
    return first.kind == "s" or (first.kind == "w" and start + 1 < len(tokens) and tokens[start + 1] == _Tok("p", "("))


def _operand(tokens: list[_Tok], start: int) -> list[_Tok]:
    """The expression a clause's file name is, from start to the next clause word, `,`, `;` or `)`."""
    found: list[_Tok] = []
    depth = 0
    for token in tokens[start:]:
        if token.kind == "p" and token.value in ("(", "["):
            depth += 1
        elif token.kind == "p" and token.value in (")", "]"):
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (
            (token.kind == "p" and token.value in (",", ";"))
            or (token.kind == "w" and found and found[-1].kind != "op" and token.value not in ("collate",))
        ):
            break  # a word after a complete operand starts the next clause (WITH, AS, FORMAT...)
        found.append(token)
    return found


def _copy(tokens: list[_Tok], start: int, read: list[str], written: list[str]) -> None:
    """COPY table|(query) FROM|TO 'file' | PROGRAM 'cmd' | STDIN|STDOUT: the file, or UNKNOWN for a program."""
    index, count = start, len(tokens)
    depth = 0
    while index < count:
        token = tokens[index]
        if token.kind == "p" and token.value == "(":
            depth += 1
        elif token.kind == "p" and token.value == ")":
            depth -= 1
        elif token.kind == "p" and token.value == ";" and depth == 0:
            return
        elif depth == 0 and token.kind == "w" and token.value in ("from", "to"):
            target = tokens[index + 1] if index + 1 < count else None
            if target is None:
                return
            if target.kind == "w" and target.value in ("stdin", "stdout"):
                return
            if target.kind == "w" and target.value == "program":
                read.append(UNKNOWN)  # a command the server runs
                return
            if _names_file(tokens, index + 1):
                (read if token.value == "from" else written).extend(_values(_operand(tokens, index + 1)))
            return
        index += 1
