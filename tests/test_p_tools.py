"""Round fourteen (set M, p-tools): tool_words and the SQL file reader (_sql_files)."""

from __future__ import annotations

import jmespath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import paths, roles
from policyengine.arguments._sql_files import UNKNOWN, sql_files
from policyengine.language.functions import PolicyFunctions, function_arity
from policyengine.language.tool_names import fold_tool_name, tool_words

_OPTIONS = jmespath.Options(custom_functions=PolicyFunctions())


# -- tool_words ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("mcp__fichiers__supprimerDossier", ("supprimer", "dossier")),
        ("mcp__dateien__verzeichnis_löschen", ("verzeichnis", "loschen")),
        ("mcp__pliki__usuń_katalog", ("usun", "katalog")),
        ("mcp__dosya__kald\u0131r", ("kaldir",)),
        ("mcp__fs__rmtree", ("rmtree",)),
        ("mcp__trash__list_items", ("list", "items")),  # the server's name is not the tool's
        ("Bash", ("bash",)),
        ("delete-File.now", ("delete", "file", "now")),
        ("mcp__x__Straße_leeren", ("strasse", "leeren")),
    ],
)
def test_tool_words(name: str, words: tuple[str, ...]) -> None:
    assert tool_words(name) == words


def test_tool_words_is_a_policy_function() -> None:
    assert function_arity()["tool_words"] == (1, 1)
    assert jmespath.search("tool_words(name)", {"name": "mcp__s__deleteAll"}, options=_OPTIONS) == ["delete", "all"]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_tool_words_are_ascii_folded_words_of_the_name(name: str) -> None:
    words = tool_words(name)
    assert all(word and "_" not in word for word in words)
    # Without a server prefix and in plain ASCII, the words are the folded name's.
    if name.isascii() and "mcp__" not in name.casefold():
        assert "_".join(words) == fold_tool_name(name)


# -- the SQL file reader ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "read", "written"),
    [
        ("SELECT readfile('.env')", [".env"], []),
        ("select hex(readfile('/home/dev/' || char(46) || 'ssh/id_rsa'))", ["/home/dev/.ssh/id_rsa"], []),
        ("SELECT LOAD_FILE(CONCAT('/et', 'c/passwd'))", ["/etc/passwd"], []),
        ("SELECT pg_read_file('/et' || 'c/shadow', 0, 100)", ["/etc/shadow"], []),
        ("SELECT pg_read_file(E'\\x2fetc\\x2fhosts')", ["/etc/hosts"], []),
        ("SELECT load_file(0x2f6574632f706173737764)", ["/etc/passwd"], []),
        ("SELECT load_file(X'2f6574632f706173737764')", ["/etc/passwd"], []),
        ("SELECT read_text($$/etc/hosts$$)", ["/etc/hosts"], []),
        ("SELECT * FROM read_csv(['a.csv', '.env'])", ["a.csv", ".env"], []),
        ("SELECT * FROM 'data.csv'", ["data.csv"], []),
        ("SELECT readfile(path) FROM files", [UNKNOWN], []),
        ("SELECT writefile('/etc/cron.d/x', 'data')", [], ["/etc/cron.d/x"]),
        ("SELECT lo_export(lo_from_bytea(0, 'x'), '/us' || 'r/bin/x')", [], ["/usr/bin/x"]),
        ("COPY t TO '/tmp/t.csv' WITH (FORMAT csv)", [], ["/tmp/t.csv"]),
        ("COPY t FROM '/etc/passwd'", ["/etc/passwd"], []),
        ("COPY t FROM STDIN", [], []),
        ("COPY (SELECT 1) TO PROGRAM 'sh -c x'", [UNKNOWN], []),
        ("SELECT * INTO OUTFILE '/var/www/x.php' FROM t", [], ["/var/www/x.php"]),
        ("LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t", ["/etc/passwd"], []),
        ("ATTACH DATABASE '/tmp/x.db' AS x", [], ["/tmp/x.db"]),
        ("VACUUM INTO '/tmp/backup.db'", [], ["/tmp/backup.db"]),
        ("INSERT INTO FUNCTION file('/tmp/out.tsv') SELECT 1", [], ["/tmp/out.tsv"]),
        ("SELECT name, length(readme) FROM packages WHERE name LIKE 'read%'", [], []),
        ("SELECT filename FROM uploads WHERE filename = 'report.pdf'", [], []),
        ("please copy the file to the shared folder", [], []),
        ("the file (optional) goes here", [], []),
    ],
)
def test_sql_files(sql: str, read: list[str], written: list[str]) -> None:
    found = sql_files(sql)
    assert (found.read, found.written) == (read, written)


def test_a_glob_is_a_path_pattern() -> None:
    (found,) = sql_files("SELECT * FROM read_parquet('data/*.parquet')").read
    assert isinstance(found, paths.PathPattern)


def test_the_unknown_operand_is_an_unknown_place() -> None:
    assert paths.is_unknown(UNKNOWN)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="'\"()|,;+ xX0$Eabcdefilnoprst/.\\-*", max_size=80))
def test_sql_files_never_raises_and_names_distinct_files(text: str) -> None:
    for prefix in ("SELECT readfile(", "COPY t TO ", "SELECT * FROM read_csv(", ""):
        found = sql_files(prefix + text)
        assert len(found.read) == len(set(found.read)) and len(found.written) == len(set(found.written))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="abcdefgh./_-", min_size=1, max_size=8), min_size=1, max_size=5))
def test_a_concatenation_of_literals_is_the_joined_name(parts: list[str]) -> None:
    """However a literal name is split (|| or concat()), the reader gives the whole name."""
    name = "".join(parts)
    joined = " || ".join(f"'{part}'" for part in parts)
    called = "concat(" + ", ".join(f"'{part}'" for part in parts) + ")"
    assert sql_files(f"SELECT readfile({joined})").read == [name]
    assert sql_files(f"SELECT readfile({called})").read == [name]


# -- roles: where SQL is read ------------------------------------------------------------------------


def test_sql_under_a_query_key_is_read_and_under_content_is_not() -> None:
    found = roles.collect_all({"query": "SELECT readfile('/etc/shadow')"})
    assert "/etc/shadow" in found.values[roles.Role.PATH]
    written = roles.collect_all({"sql": "SELECT writefile('/etc/x', 'y')"})
    assert written.written == ["/etc/x"]
    assert "/etc/x" in written.values[roles.Role.PATH]
    content = roles.collect_all({"content": "SELECT readfile('/etc/shadow')", "title": "Fix readfile('/etc/x') crash"})
    assert content.values[roles.Role.PATH] == []


def test_a_command_is_left_to_the_shell_parser() -> None:
    found = roles.collect_all({"command": "git commit -m \"fix readfile('/etc/shadow')\""})
    assert "/etc/shadow" not in found.values[roles.Role.PATH]
    assert found.written == []


def test_a_declared_text_argument_is_not_read_as_sql() -> None:
    found = roles.collect_all({"query": "SELECT readfile('/etc/shadow')"}, {"query": "text"})
    assert found.values[roles.Role.PATH] == []


# -- known limits -----------------------------------------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="a name built by a function the reader does not evaluate (replace, substr, "
    "from_base64) is an unknown place, not the name it spells: the red lines refuse it, but the "
    "reason cannot name the file",
)
def test_a_name_built_by_replace_is_evaluated() -> None:
    assert sql_files("SELECT readfile(replace('/etc/shXdow', 'X', 'a'))").read == ["/etc/shadow"]
