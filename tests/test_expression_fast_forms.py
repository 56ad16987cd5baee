"""The expression compiler's fast forms (issue 22's CPU bound) against the general code they skip.

`length(x)` on a list and a one-argument function that takes any type (paths(@), urls(@),
secrets(@)...) are called without jmespath's type check; with expression_compiler._FAST_FORMS
off the same AST compiles to the checked call. Every rule condition of the shipped packs is
compiled both ways and evaluated on every corpus call (tests/adversarial, benchmarks/redteam, the
BFCL calls): the answers, or the errors, must be the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jmespath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine import freeze, load_pack
from policyengine.language import expression_compiler
from policyengine.language.functions import FUNCTIONS
from policyengine.values.call import call_document
from support import FULL_CORPUS, load_yaml

ROOT = Path(__file__).resolve().parent.parent
PACKS = ("bfcl", "baseline", "claude-code")


@cache
def _documents() -> tuple[Any, ...]:
    """The call document of every distinct call in tests/adversarial, benchmarks/redteam and the BFCL examples."""
    found: list[tuple[str, Any, Any]] = []
    for file in sorted((ROOT / "tests" / "adversarial").glob("*.yaml")):
        data = load_yaml(file)  # libyaml, parsed once per process and shared with the other corpus tests
        for case in data.get("cases", []) if isinstance(data, dict) else []:
            call = case.get("call") or {}
            found.append((str(call.get("name", "")), call.get("arguments") or {}, call.get("cwd")))
    for file in [*sorted((ROOT / "benchmarks" / "redteam").glob("*.jsonl")), ROOT / "examples" / "bfcl-calls.jsonl"]:
        for line in file.read_text(encoding="utf-8").split("\n"):  # not splitlines: \u2028 sits inside strings
            if line.strip():
                row = json.loads(line)
                call = row.get("call", row)
                found.append((str(call.get("name", "")), call.get("arguments") or {}, call.get("cwd")))
    unique = {json.dumps(call, sort_keys=True, default=str): call for call in found}
    return tuple(
        call_document(name or "tool", freeze(arguments), "agent", "call", cwd if isinstance(cwd, str) else None)
        for name, arguments, cwd in unique.values()
    )


@cache
def _conditions() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(rule id, resolved AST) of every distinct rule condition of the shipped packs.

    A condition two rules share (the same AST) is kept once, under the first rule's id: it compiles
    to the same code both ways, so a second copy could only give the same answers again.
    """
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for name in PACKS:
        for rule in load_pack(ROOT / "policies" / name).rules:
            if rule.when is not None:
                ast = rule.when.parsed.parsed
                found.setdefault(json.dumps(ast, sort_keys=True, default=repr), (f"{name}/{rule.id}", ast))
    return tuple(found.values())


def _both_ways(
    ast: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """The AST compiled with the fast forms and without them."""
    fast = expression_compiler.compile_ast(ast, FUNCTIONS)
    monkeypatch.setattr(expression_compiler, "_FAST_FORMS", False)
    general = expression_compiler.compile_ast(ast, FUNCTIONS)
    monkeypatch.setattr(expression_compiler, "_FAST_FORMS", True)
    assert fast is not None and general is not None
    return fast, general


def _outcome(evaluate: Callable[[Any], Any], document: Any) -> Any:
    """What an expression gives, or the error it raises (type and message)."""
    try:
        return ("value", evaluate(document))
    except Exception as error:  # a rule fails closed by raising: the same error either way
        return ("error", type(error).__name__, str(error))


def test_the_corpora_are_large() -> None:
    assert len(_documents()) > 5_000
    assert len(_conditions()) > 60


def test_every_pack_condition_takes_a_fast_form() -> None:
    # The forms are worth testing only if the shipped rules use them: most read a reader and a length.
    texts = [rule.when.text for name in PACKS for rule in load_pack(ROOT / "policies" / name).rules if rule.when]
    assert sum("length(" in text for text in texts) > 30
    assert sum("paths(@)" in text for text in texts) > 5


def test_the_fast_forms_are_taken_and_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without this the differential tests could compare the general code with itself.
    for text, form in (("length(a)", "length_of"), ("paths(@)", "call_any"), ("secrets(a)", "call_any")):
        fast, general = _both_ways(jmespath.compile(text).parsed, monkeypatch)
        assert (fast.__name__, general.__name__) == (form, "call1")
    fast, general = _both_ways(jmespath.compile("starts_with(a, 'x')").parsed, monkeypatch)
    assert fast.__name__ == general.__name__  # a typed argument keeps its check


# The whole corpus both ways costs ~4 min of CPU (14,418 documents x 78 conditions, twice): a quarter
# of the suite's time for two closures (`length` of a list, a reader of any value) that the property
# test below meets with every type. The suite takes every eighth document (every fourth took 54 s of a
# worker, the suite's largest test, with CI at 9-10 min), in two tests that `-n auto` spreads;
# POLICYENGINE_FULL_CORPUS=1 takes every document (CONTRIBUTING.md).
CHUNKS = 2 if not FULL_CORPUS else 4
STRIDE = 16 if not FULL_CORPUS else 4


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fast_forms_are_the_general_code_on_every_pack_condition_and_corpus_call(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = [(rule_id, *_both_ways(ast, monkeypatch)) for rule_id, ast in _conditions()]
    # Document by document: the readers are memoised per call document, so each call is walked once.
    for document in _documents()[chunk::STRIDE]:
        for rule_id, fast, general in compiled:
            assert _outcome(fast, document) == _outcome(general, document), (rule_id, document)


def _values() -> st.SearchStrategy[Any]:
    """JSON-like values, frozen and plain, of every type a function argument may be given."""
    leaves = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=6)
    )
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
        max_leaves=12,
    )


# Expressions whose function gets every type of value: length on lists, strings, objects,
# numbers and null (a type error), and readers of any value.
EXPRESSIONS = (
    "length(@)",
    "length(a)",
    "length(a[])",
    "length(a[?@ != `null`]) > `0`",
    "a[*] | length(@)",
    "paths(@)",
    "urls(a)",
    "length(amounts(@))",
    "type(a)",
    "not_null(a)",
)


def _iter_documents(value: Any) -> Iterator[Any]:
    """The value as given, frozen, and under `a` both ways."""
    yield value
    yield freeze(value)
    yield {"a": value}
    yield freeze({"a": value})


@settings(max_examples=150, deadline=None)
@given(value=_values())
def test_fast_forms_are_the_general_code_on_generated_values(value: Any) -> None:
    for text in EXPRESSIONS:
        ast = jmespath.compile(text).parsed
        fast = expression_compiler.compile_ast(ast, FUNCTIONS)
        expression_compiler._FAST_FORMS = False
        try:
            general = expression_compiler.compile_ast(ast, FUNCTIONS)
        finally:
            expression_compiler._FAST_FORMS = True
        assert fast is not None and general is not None
        for document in _iter_documents(value):
            assert _outcome(fast, document) == _outcome(general, document), (text, document)


def _signatures() -> list[tuple[str, int]]:
    """(name, arity) of every function whose signature the compiler checks itself."""
    table = FUNCTIONS.FUNCTION_TABLE
    found = [(name, len(spec["signature"])) for name, spec in sorted(table.items())]
    return [(name, arity) for name, arity in found if expression_compiler._fast_call(FUNCTIONS, name, arity)]


def test_the_type_checks_cover_string_or_array_signatures() -> None:
    # The string-or-array signatures (regex_match, glob_match...) are where a string's characters
    # are not walked: the property below must meet some of them.
    table = FUNCTIONS.FUNCTION_TABLE
    mixed = [n for n, _a in _signatures() if any("string" in a.get("types", []) and any(
        t.startswith("array-") for t in a.get("types", [])) for a in table[n]["signature"])]  # fmt: skip
    assert len(mixed) >= 3, mixed


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_compilers_type_check_is_jmespaths(data: st.DataObject) -> None:
    name, arity = data.draw(st.sampled_from(_signatures()))
    values = [data.draw(_values() | st.text(max_size=40) | st.lists(st.text(max_size=3))) for _ in range(arity)]
    fast = expression_compiler._fast_call(FUNCTIONS, name, arity)
    assert fast is not None
    try:
        FUNCTIONS._type_check(values, FUNCTIONS.FUNCTION_TABLE[name]["signature"], name)
        expected = True
    except jmespath.exceptions.JMESPathTypeError:
        expected = False
    assert fast[1](values) is expected, (name, values)


# `path_matches(@, [lists.a, lists.b][])`: lists joined in the condition are a literal too, so the
# test compiles to one RE2 alternation instead of a match per glob (claude-code's credential-file
# red line: 522 globs, ~1,000 RE2 matches a path before).
JOINED = (
    'path_matches(@, [`[".env", "*.pem"]`, `"**/.ssh/id_*"`, `null`, `["secrets/*.key", null]`][])',
    'regex_match(@, [`["^a", "b$"]`, `"(?i)x"`][])',
    'path_within(@, [`["/etc"]`, `["~/.aws", "/var/run"]`][])',
    # On a null current node the joined list is null (a type error), whatever the subject.
    'path_matches(\'.env\', [`[".env"]`, `"*.pem"`][])',
)
JOINED_SUBJECTS = (
    ".env",
    "a/b/.env",
    "x.pem",
    "/home/u/.ssh/id_rsa",
    "~/.ssh/id_ed25519",
    "secrets/a.key",
    "src/main.py",
    "/etc/passwd",
    "~/.aws/credentials",
    "$HOME/.env",
    "C:\\Users\\a\\.env",
    ".en?",
    "*.pem",
    "ab",
    "xb",
    "X",
    "",
    None,
    5,
    True,
    ["a"],
    {"a": 1},
)


@pytest.mark.parametrize("text", JOINED)
def test_lists_joined_in_a_condition_are_specialised_and_answer_as_the_function(text: str) -> None:
    parsed = jmespath.compile(text).parsed
    assert expression_compiler._literal_value(parsed["children"][1]) is not expression_compiler._NOT_LITERAL
    compiled = expression_compiler.compile_ast(parsed, FUNCTIONS)
    assert compiled is not None and compiled.__name__ == "special"
    options = jmespath.Options(custom_functions=FUNCTIONS)
    for subject in JOINED_SUBJECTS:
        expected = _outcome(lambda v: jmespath.search(text, v, options), subject)
        assert _outcome(compiled, subject) == expected, (text, subject)
