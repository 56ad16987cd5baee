"""The readers' fast paths (issue 22's CPU bound) against the code they skip, over every corpus.

Each fast path can be turned off (functions._FAST_PATHS, roles._SHAPE_FAST_MAX): a call or string
is read both ways and the answers (or the errors) must be the same. The corpora are the adversarial
case files, the red-team sets and the BFCL calls, plus generated strings where a property holds.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import re2
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine import freeze
from policyengine.arguments import paths, roles, secret_scanner
from policyengine.language import functions
from policyengine.values.call import call_document
from support import corpus_stride, load_yaml

ROOT = Path(__file__).resolve().parent.parent


@cache
def _calls() -> tuple[tuple[str, dict[str, Any], str | None], ...]:
    """(name, arguments, cwd) of every call in tests/adversarial, benchmarks/redteam and the BFCL examples."""
    found: list[tuple[str, dict[str, Any], str | None]] = []
    for file in sorted((ROOT / "tests" / "adversarial").glob("*.yaml")):
        data = load_yaml(file)  # parsed once per process, shared with the other corpus tests
        for case in data.get("cases", []) if isinstance(data, dict) else []:
            call = case.get("call") or {}
            found.append((str(call.get("name", "")), call.get("arguments") or {}, call.get("cwd")))
    for file in [*sorted((ROOT / "benchmarks" / "redteam").glob("*.jsonl")), ROOT / "examples" / "bfcl-calls.jsonl"]:
        for line in file.read_text(encoding="utf-8").split("\n"):  # not splitlines: \u2028 sits inside strings
            if line.strip():
                row = json.loads(line)
                call = row.get("call", row)
                found.append((str(call.get("name", "")), call.get("arguments") or {}, call.get("cwd")))
    unique = {json.dumps(call, sort_keys=True, default=str): call for call in found}  # sets repeat calls
    return tuple(unique.values())


def _strings(value: Any) -> Iterator[str]:
    """Every string in a value, keys included, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _outcome(read: Callable[..., Any], *args: Any) -> Any:
    """What a reader gives, or the error it raises (type and message), so both ways compare alike."""
    try:
        return ("value", read(*args))
    except Exception as error:  # the readers fail closed by raising: the same error either way
        return ("error", type(error).__name__, str(error))


def _document(name: str, arguments: dict[str, Any], cwd: str | None) -> Any:
    """The call document a rule reads (what paths(@) is given)."""
    cwd = cwd if isinstance(cwd, str) else None
    return call_document(name or "tool", freeze(arguments), "agent", "call", cwd)


def test_the_corpus_is_large() -> None:
    assert len(_calls()) > 5_000


def test_value_roles_fast_path_is_the_slow_path_on_every_corpus_string(monkeypatch: pytest.MonkeyPatch) -> None:
    strings = sorted({s for _, arguments, _ in _calls() for s in _strings(arguments)})
    fast = [_outcome(roles._value_roles, s) for s in strings]
    monkeypatch.setattr(roles, "_SHAPE_FAST_MAX", -1)
    slow = [_outcome(roles._value_roles, s) for s in strings]
    differ = [s for s, a, b in zip(strings, fast, slow, strict=True) if a != b]
    assert not differ, differ[:10]


# Text near the fast path's edge: the characters a shape needs, blanks, and ordinary words.
_EDGE = st.text(alphabet=st.sampled_from(list("abzAZ09_- \t\n!#&*()[]{}<>|;'\"=+,?/\\~.:$%@é")), max_size=40)


@settings(max_examples=600, deadline=None)
@given(value=_EDGE)
def test_value_roles_fast_path_is_the_slow_path_on_generated_strings(value: str) -> None:
    fast = _outcome(roles._value_roles, value)
    saved = roles._SHAPE_FAST_MAX
    roles._SHAPE_FAST_MAX = -1
    try:
        slow = _outcome(roles._value_roles, value)
    finally:
        roles._SHAPE_FAST_MAX = saved
    assert fast == slow


def _readers(document: Any) -> Any:
    """Every role view of one call, read afresh (no memo shared with the other way)."""
    parts = _outcome(functions._call_parts, document)
    if parts[0] == "error":
        return parts
    return {what: _outcome(view, parts[1]) for what, view in functions._ROLE_VIEWS.items()}


class _ScanOnce:
    """secret_scanner.find_secrets remembered by its input (the same object, or the same word list).

    The scanner's modules import no module holding a fast-path switch (test below), so with the same
    input it finds the same secrets both ways: the slow pass scans only what its own views hand it
    differently (other command words, another object), and the secrets view is still compared whole.
    """

    def __init__(self, scan: Callable[..., Any]) -> None:
        self.scan = scan
        self.seen: dict[tuple[Any, str], tuple[Any, Any]] = {}  # holds each input, so its id is not reused
        self.hits = 0

    def __call__(self, value: Any, *, path: str = "") -> Any:
        words = isinstance(value, list) and all(type(word) is str for word in value)
        key = (tuple(value) if words else id(value), path)
        held = self.seen.get(key)
        if held is not None and (words or held[0] is value):
            self.hits += 1
            return list(held[1])
        found = self.scan(value, path=path)
        self.seen[key] = (value, list(found))
        return found


def test_the_secret_scanner_reads_no_fast_path_switch() -> None:
    """Why _ScanOnce may share a scan between the passes: no secret module imports functions or roles."""
    imported: set[str] = set()
    language = ROOT / "policyengine" / "arguments"
    # The scanner's private helpers (_secret_framings) are read as the secret modules are.
    for file in sorted([*language.glob("secret_*.py"), *language.glob("_secret_*.py")]):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("policyengine"):
                imported.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names if alias.name.startswith("policyengine"))
    assert imported, "the secret modules import one another"
    # _ignorables and _lookalikes are generated tables of characters that import nothing.
    tables = ("_ignorables", "_lookalikes")
    allowed = (
        "policyengine.arguments.secret_",
        "policyengine.arguments._secret_",
        *(f"policyengine.arguments.{table}" for table in tables),
        "policyengine.values.frozen.",  # the frozen types (secret_reader remembers frozen arguments it read)
    )
    assert all(name.startswith(allowed) for name in imported), sorted(imported)
    for table in tables:
        assert not (language / f"{table}.py").read_text(encoding="utf-8").count("import "), table


def test_readers_fast_paths_are_the_slow_paths_on_every_corpus_call(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = corpus_stride(_calls(), 3)  # ~26 s for all of them
    documents = [_document(*call) for call in calls]
    scan = _ScanOnce(secret_scanner.find_secrets)
    monkeypatch.setattr(secret_scanner, "find_secrets", scan)
    fast = [_readers(document) for document in documents]
    monkeypatch.setattr(functions, "_FAST_PATHS", False)
    monkeypatch.setattr(roles, "_SHAPE_FAST_MAX", -1)
    slow = [_readers(document) for document in documents]
    differ = [(call, a, b) for call, a, b in zip(calls, fast, slow, strict=True) if a != b]
    assert not differ, differ[:3]
    assert scan.hits > len(documents) // 2, "the slow pass scanned the same arguments afresh"


@cache
def _pack_patterns() -> tuple[tuple[str, ...], ...]:
    """Every distinct list of strings in the shipped packs' lists, and the regex literals of bfcl's red lines.

    A list two packs both define (the same strings in the same order) is kept once: it compiles to
    the same pattern, so a second copy could only give the same answers again.
    """
    found: list[tuple[str, ...]] = []
    for file in sorted((ROOT / "policies").glob("*/lists.yaml")):
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        for value in (data.get("lists") or data).values():
            if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
                found.append(tuple(value))
    text = (ROOT / "policies" / "bfcl" / "red-lines.yaml").read_text(encoding="utf-8")
    found.extend((literal,) for literal in sorted(set(re.findall(r"regex_match\(@, '([^']+)'\)", text))))
    return tuple(dict.fromkeys(found))


def _compiled(patterns: tuple[str, ...], glob: bool) -> Any:
    """The one pattern _specialize compiles for a list (None when the list does not compile that way)."""
    try:
        if glob:
            joined = "|".join(f"(?:{paths.glob_to_regex(p)})" for p in patterns)
        else:
            joined = "|".join(f"(?:{p})" for p in patterns)
        return re2.compile(joined, functions._RE2_OPTIONS)
    except Exception:  # not a regex (or glob) list: _specialize leaves it to the general function
        return None


def test_re2_yes_no_fast_path_is_the_wrappers_search_on_every_pack_list(monkeypatch: pytest.MonkeyPatch) -> None:
    every = sorted({s for _, arguments, _ in _calls() for s in _strings(arguments) if len(s) <= 200})
    subjects = corpus_stride(every, 3)  # ~24 s for all of them
    subjects += ["", "/etc/passwd", "C:\\Windows\\System32", "/Volumes/X/etc/sudoers", "\u00e9t\u00e9/etc", "a\ud800b"]
    checked = 0
    for patterns in _pack_patterns():
        for glob in (False, True):
            regex = _compiled(patterns, glob)
            if regex is None:
                continue
            fast = functions._re2_test(regex, anchored=glob)
            monkeypatch.setattr(functions, "_FAST_PATHS", False)
            slow = functions._re2_test(regex, anchored=glob)
            monkeypatch.setattr(functions, "_FAST_PATHS", True)
            differ = [s for s in subjects if _outcome(fast, s) != _outcome(slow, s)]
            assert not differ, (patterns[:3], glob, differ[:5])
            checked += 1
    assert checked >= 20


@settings(max_examples=300, deadline=None)
@given(subject=st.text(max_size=30), anchored=st.booleans())
def test_re2_yes_no_fast_path_on_generated_text(subject: str, anchored: bool) -> None:
    regex = re2.compile(r"(?i)(^|[/\\])(etc|system32)([/\\]|$)|\.env|^\S+@\S+$|é", functions._RE2_OPTIONS)
    fast = functions._re2_test(regex, anchored=anchored)
    slow = (lambda s: regex.fullmatch(s) is not None) if anchored else (lambda s: regex.search(s) is not None)
    assert _outcome(fast, subject) == _outcome(slow, subject)


def test_remembered_resolve_is_resolve_on_every_corpus_string() -> None:
    subjects = sorted({s for _, arguments, _ in _calls() for s in _strings(arguments) if len(s) <= 600})
    functions._RESOLVED.clear()
    for cwd in (None, "/home/dev/project", "C:\\work", "/"):
        for subject in subjects:
            direct = _outcome(roles.resolve, subject, cwd)
            # Twice: the first read fills the table, the second is answered from it.
            assert _outcome(functions._resolve, subject, cwd) == direct, (subject, cwd)
            assert _outcome(functions._resolve, subject, cwd) == direct, (subject, cwd)
    assert functions._RESOLVED, "plain strings were remembered"


def test_remembered_resolve_keeps_what_carries_more_than_its_text() -> None:
    folded = paths.FoldedPath("/home/dev/project", "/home/dev/Project")
    functions._RESOLVED.clear()
    assert functions._resolve("notes.txt", folded) == roles.resolve("notes.txt", folded)
    assert functions._resolve(folded, None) == roles.resolve(folded, None)
    assert not functions._RESOLVED, "a FoldedPath is never a key"
    functions._RESOLVED.update({(f"k{i}", None): ("x",) for i in range(functions._RESOLVED_MAX)})
    functions._resolve("notes.txt", None)
    assert len(functions._RESOLVED) == 1, "a full table is emptied, not grown"


def test_remembered_key_tokens_are_the_split_on_every_corpus_key() -> None:
    keys = sorted({str(key) for _, arguments, _ in _calls() for key in _keys(arguments)})
    keys += ["filePath", "DEST-dir", "", "__", "HTTPServerURL", "\u00e9t\u00e9Dir"]
    roles._TOKEN_CACHE.clear()
    for key in keys:
        split = [t for t in roles._SPLIT.split(roles._CAMEL.sub("_", key).lower()) if t]
        assert roles._tokens(key) == split, key
        words = roles._tokens(key)  # answered from the table: a copy the caller may change
        assert words == split, key
        words.append("x")
        assert roles._tokens(key) == split, key


def _keys(value: Any) -> Iterator[Any]:
    """Every object key in a value, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def _leaves(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """Every (key, scalar) pair in a value, at any depth; a list's items keep the list's key."""
    if isinstance(value, dict):
        for child_key, item in value.items():
            yield from _leaves(item, str(child_key))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, key)
    elif value is not None:
        yield key, value


def _facts_roles(key: str, value: Any) -> frozenset[roles.Role]:
    """A leaf's roles the way collect_all's walk reads an undeclared key: from the key's remembered facts."""
    facts = roles._facts(key)
    return roles._string_roles(facts, key, value) if type(value) is str else facts.scalar


def test_key_facts_roles_are_roles_of_on_every_corpus_leaf() -> None:
    leaves = sorted(
        {(key, value) for _, arguments, _ in _calls() for key, value in _leaves(arguments)},
        key=repr,
    )
    assert len(leaves) > 10_000
    differ = [
        (key, value)
        for key, value in leaves
        if _outcome(_facts_roles, key, value) != _outcome(roles._roles_of, key, value, None)
    ]
    assert not differ, differ[:10]


_KEY_WORDS = st.sampled_from(
    [
        *("path", "file", "url", "cmd", "command", "shell", "content", "body", "filter", "name", "to", "uri"),
        *("do", "amount", "title", "api_key", "dir", "ext", "x", "args", "text", "email", "glob", "pattern", "data"),
    ]
)


@settings(max_examples=400, deadline=None)
@given(words=st.lists(_KEY_WORDS, min_size=1, max_size=3), value=_EDGE | st.integers() | st.booleans())
def test_key_facts_roles_are_roles_of_on_generated_leaves(words: list[str], value: Any) -> None:
    key = "_".join(words)
    assert _outcome(_facts_roles, key, value) == _outcome(roles._roles_of, key, value, None)


def test_remembered_key_facts_are_emptied_when_full() -> None:
    roles._FACTS.clear()
    for n in range(4096):
        roles._facts(f"k{n}")
    roles._facts("path")
    assert len(roles._FACTS) == 1, "a full table is emptied, not grown"
    assert roles._facts("path").roles == roles.key_roles("path")
