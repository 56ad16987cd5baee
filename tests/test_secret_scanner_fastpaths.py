"""The secret scanner's fast paths against the code they replace: every finding the same, on every corpus.

Each fast path (a locator before a reader's `re` pattern, a cache, a reordered gate) keeps the
code it replaces here as `_reference_*`, and the two are compared over the strings and documents of
the repository's corpora: tests/adversarial/*.yaml, benchmarks/redteam/*.jsonl,
examples/bfcl-calls.jsonl and the string constants of tests/test_secrets*.py. A fast path that
changes one finding fails here.
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import secret_byte_codes as _byte_codes
from policyengine.arguments import secret_encodings as _encodings
from policyengine.arguments import secret_encodings as enc
from policyengine.arguments import secret_scanner as scanner
from policyengine.arguments.secret_scanner import (  # what the reference code below reads
    _KEY_CACHE,
    _MAX_CHAR_CODES,
    _MAX_LEAVES,
    _MIN_ENCODED,
    _PROGRAM_NAMES,
    _PROGRAM_PATHS,
    MAX_DEPTH,
    _argv_findings,
    _card_groups,
    _card_number_value,
    _column_digits,
    _connection_password,
    _credential,
    _encodings_search,
    _excerpt,
    _from_char_codes,
    _mask,
    _maybe_pair,
    _nul_join,
    _number_groups,
    _Path,
    _prefilter,
    _Raw,
    _scan_texts,
    _sibling_findings,
    _split_groups,
    _split_heads_search,
    _split_neighbours,
    is_credential_key,
    pair_value,
)
from support import load_yaml

ROOT = Path(__file__).resolve().parent.parent


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _arguments(value: Any) -> Iterator[Any]:
    """The `arguments` of every call in a loaded YAML or JSON document."""
    if isinstance(value, dict):
        if "arguments" in value:
            yield value["arguments"]
        for item in value.values():
            yield from _arguments(item)
    elif isinstance(value, list):
        for item in value:
            yield from _arguments(item)


@functools.cache
def corpus_documents() -> tuple[Any, ...]:
    """The call arguments of every corpus (adversarial cases, red-team sets, BFCL calls), once each."""
    documents: list[Any] = []
    for path in sorted((ROOT / "tests" / "adversarial").glob("*.yaml")):
        documents.extend(_arguments(load_yaml(path)))
    jsonl = [*sorted((ROOT / "benchmarks" / "redteam").glob("*.jsonl")), ROOT / "examples" / "bfcl-calls.jsonl"]
    for path in jsonl:
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                documents.extend(_arguments(json.loads(line)))
    unique = {json.dumps(document, sort_keys=True, default=repr): document for document in documents}
    return tuple(unique.values())


@functools.cache
def corpus_strings() -> tuple[str, ...]:
    """Every distinct string of the corpora, with the string constants of the secret tests."""
    found: set[str] = set()
    for document in corpus_documents():
        found.update(_strings(document))
    for path in sorted((ROOT / "tests").glob("test_secrets*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found.update(
            node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
        )
    return tuple(sorted(found))


def test_the_corpus_is_there() -> None:
    """The comparison below reads thousands of documents and strings (a moved file would empty it)."""
    assert len(corpus_documents()) > 5000
    assert len(corpus_strings()) > 8000


# --- readers' runs found by a locator (secret_encodings._finditer) --------------------------------

_LOCATED: list[tuple[str, re.Pattern[str], Callable[[bytes, int], int] | None]] = [
    ("wrapped", enc._WRAPPED_RUN, enc._WRAPPED_LOCATE),
    ("random", enc._RANDOM_RUN, enc._RANDOM_LOCATE),
    ("radix", enc._RADIX_WORD, enc._RADIX_LOCATE),
]


def _reference_finditer(pattern: re.Pattern[str], text: str) -> list[tuple[int, int, str]]:
    """What the readers read before the locators: the pattern's own finditer."""
    return [(m.start(), m.end(), m.group()) for m in pattern.finditer(text)]


def _located(
    pattern: re.Pattern[str], locate: Callable[[bytes, int], int] | None, text: str
) -> list[tuple[int, int, str]]:
    """The matches _finditer gives, the locator used whatever the text's length."""
    return [(m.start(), m.end(), m.group()) for m in enc._finditer(pattern, locate, text)]


def test_every_locator_is_built() -> None:
    """The extension's raw Match is there (else the readers fall back to finditer: right, but slow)."""
    assert all(locate is not None for _, _, locate in _LOCATED)


@pytest.mark.parametrize(("name", "pattern", "locate"), _LOCATED, ids=[name for name, _, _ in _LOCATED])
def test_located_runs_are_finditer_on_the_corpus(
    name: str, pattern: re.Pattern[str], locate: Callable[[bytes, int], int] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every corpus string, alone and all of them glued into long texts: the same matches, in order."""
    monkeypatch.setattr(enc, "_LOCATE_FROM", 0)
    texts = corpus_strings()
    for text in texts:
        assert _located(pattern, locate, text) == _reference_finditer(pattern, text), (name, text)
    for sep in ("\n", " ", "\0", '" "'):
        for at in range(0, len(texts), 200):
            glued = sep.join(texts[at : at + 200])
            assert _located(pattern, locate, glued) == _reference_finditer(pattern, glued), name


_KEY = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_WORDS = st.one_of(
    st.text(alphabet=_KEY, min_size=1, max_size=40),
    st.text(alphabet="abcdefghijkmnopqrstuvwxyz123456789", min_size=25, max_size=45),
    st.text(alphabet="0123456789abcdef", min_size=2, max_size=40),
    st.sampled_from(["the", "report", "distanceToNext", "final_report_2024", "user_id=42", "QUtJQUlP", "AbCd12", "é"]),
)
_BLANKS = [" ", "  ", "\t", "\n", "\r\n", "\\n", "|", " | ", "\x1f"]  # what the readers take pieces apart by
_JOINS = ['" "', '"+"', "','", "' . '", ",", ".", ":", "=", "==", '"', "'"]  # quotes joined, other marks
_SEPARATORS = st.sampled_from(_BLANKS + _JOINS)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_WORDS, _SEPARATORS), max_size=16))
def test_located_runs_are_finditer_on_random_texts(parts: list[tuple[str, str]]) -> None:
    """Property: words of a key's alphabet, hex, base36 and prose apart by the readers' separators."""
    text = "".join(word + sep for word, sep in parts)
    saved = enc._LOCATE_FROM
    enc._LOCATE_FROM = 0
    try:
        for name, pattern, locate in _LOCATED:
            assert _located(pattern, locate, text) == _reference_finditer(pattern, text), (name, text)
    finally:
        enc._LOCATE_FROM = saved


def test_a_long_run_of_key_characters_is_read_in_linear_time() -> None:
    """A megabyte of one run (or of runs one character apart) gives the locator one candidate per run."""
    import time

    for text in ("Ab1" * 350_000, "Ab1x " * 200_000, "a" * 1_000_000):
        start = time.process_time()
        for _, pattern, locate in _LOCATED:
            list(enc._finditer(pattern, locate, text[:200_000]))
        assert time.process_time() - start < 5.0


# --- whole documents --------------------------------------------------------------------------


def _findings(value: Any) -> list[tuple[str, str, str]]:
    """find_secrets as comparable tuples."""
    return [(f.kind, f.where, f.excerpt) for f in scanner.find_secrets(value)]


@pytest.mark.parametrize("chunk", range(4))
def test_find_secrets_is_the_reference_on_every_corpus_document(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """find_secrets with every fast path against the same with the reference code patched in."""
    documents = corpus_documents()[chunk::4]
    monkeypatch.setattr(enc, "_LOCATE_FROM", 0)  # the locators on short strings too
    now = [_findings(document) for document in documents]
    for name, reference in _REFERENCES.items():
        monkeypatch.setattr(*_target(name), reference)
    before = [_findings(document) for document in documents]
    for document, a, b in zip(documents, now, before, strict=True):
        assert a == b, document


def _target(name: str) -> tuple[Any, str]:
    """(module, attribute) of a replaced function named "module.function"."""
    module, _, attribute = name.partition(".")
    return {"enc": enc, "scanner": scanner}[module], attribute


def _reference_piece_runs(
    text: str, which: frozenset[str] = frozenset({"wrapped", "random"})
) -> Iterator[tuple[str, int, int, str]]:
    """secret_encodings.piece_runs before the locators (34fa546), with round thirteen's grouped runs (no fast path)."""
    if "grouped" in which:
        yield from enc.grouped_runs(text)
    pairs = (("wrapped", enc._same_width, enc._WRAPPED_RUN), ("random", enc._random_run, enc._RANDOM_RUN))
    for reader, run_pattern in ((reader, pattern) for name, reader, pattern in pairs if name in which):
        for n, match in enumerate(run_pattern.finditer(text)):
            if n >= enc.MAX_RUNS:
                break
            found = itertools.islice(enc._PIECE.finditer(match.group()), enc._MAX_PIECES * enc.MAX_RUNS)
            pieces = [enc._Piece(m.start(1), m.end(1), m.group(1)) for m in found]
            for at in range(0, len(pieces), enc._MAX_PIECES):
                yield from reader(pieces[at : at + enc._MAX_PIECES], match.start())


def _reference_radix_words(text: str) -> Iterator[tuple[str, int, int, bytes]]:
    """secret_encodings.radix_words before the locators (34fa546)."""
    for n, match in enumerate(enc._RADIX_WORD.finditer(text)):
        if n >= enc.MAX_RUNS:
            break
        word = match.group()
        if len(word) > enc._MAX_WORD:
            continue
        if all(c in enc._BASE58_INDEX for c in word):
            number = 0
            for c in word:
                number = number * 58 + enc._BASE58_INDEX[c]
            yield "base58", match.start(), match.end(), enc._number_bytes(number, len(word) - len(word.lstrip("1")))
        if word.islower() or word.isdigit():
            yield "base36", match.start(), match.end(), enc._number_bytes(int(word, 36), 0)


def _reference__find(value: Any, at: _Path, depth: int) -> list[_Raw]:
    """secret_scanner._find at 34fa546 (its fast path and the sibling checks)."""
    texts: list[str] = []
    places: list[tuple[_Path, str | int | None]] = []
    credentials: dict[_Path, _Raw] = {}
    numbers: list[_Raw] = []
    groups: list[tuple[_Path, list[int]]] = []
    containers: list[tuple[Any, _Path, bool]] = []
    _reference__walk(value, at, depth, texts, places, credentials, numbers, groups, containers)
    joined = "\n".join(texts)
    # The fast path: one prefilter pass over every string (keys included) finds no candidate.
    # Non-ASCII text is looked at once normalised. A split token has its prefix in the joined
    # text too (the walk puts sibling values side by side; see _walk).
    if joined.isascii() and not _prefilter(joined):
        # One pass (the prefilter and round eight's gate together): nothing anywhere, not even
        # pieces across values. Integers are not in the joined text: a card cut into numbers
        # ([4961, 1516, ...]) is read here, and digit groups in one field of each object of a list.
        numbers.extend(
            raw
            for item, where, ints in containers
            if (ints and _number_groups(item)) or _column_digits(item)
            for raw in _sibling_findings(item, where)
        )
        return [*credentials.values(), *numbers]
    # Which kinds of pieces the document has at all: digit groups, random pieces (one pass each).
    digits = [len(t) for t in texts if len(t) <= 8 and t.isdigit()]
    has_digits = len(digits) >= 2 and sum(digits) >= 13
    random = _encodings.random_pieces_gate(joined)
    siblings = [
        raw
        for item, where, ints in containers
        if (ints and _number_groups(item)) or ((has_digits or random) and _reference__sibling_gate(item, random=random))
        for raw in _sibling_findings(item, where)
    ]
    numbers.extend(siblings)
    if (
        joined.isascii()
        and len(texts) > 1
        and not _prefilter(joined, encodings=False)
        and not _encodings_search(_nul_join(texts).encode("ascii"))
    ):
        # Round eight's gate matched only across values ("cityA\ncityB\n94016"): the NUL join keeps
        # pieces apart; a card or a key cut across sibling values was read above.
        return [*credentials.values(), *numbers]
    found = [*_scan_texts(texts, places, depth), *(_split_groups(texts, groups) if groups else [])]
    found.extend(
        (where, "card-number (split)", _excerpt("card-number", digits)) for where, digits in _card_groups(texts, groups)
    )
    if not found and not isinstance(value, str) and _split_heads_search(joined.encode("utf-8", "surrogatepass")):
        found = _split_neighbours(value, at)
    # A credential's value that also matched a shape is reported once, by its shape.
    shaped = {where for where, _, _ in found}
    return [*(raw for where, raw in credentials.items() if where not in shaped), *found, *numbers]


def _reference__walk(
    value: Any,
    at: _Path,
    depth: int,
    texts: list[str],
    places: list[tuple[_Path, str | int | None]],
    credentials: dict[_Path, _Raw],
    numbers: list[_Raw],
    groups: list[tuple[_Path, list[int]]],
    containers: list[tuple[Any, _Path, bool]] | None = None,
) -> None:
    """secret_scanner._walk at 34fa546, with round nine's credential parents (its behaviour, not its fast paths)."""
    # Strings are the common leaf: their place is kept as (parent path, key) so no path tuple
    # is built for a leaf unless a finding needs it.
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    # An object's keys, then its string values, then its containers: the string values of one
    # container sit side by side in the joined text, so the prefilter's split prefixes (gaps allowed,
    # newline among them) see a prefix cut across two values, and no split check runs without one.
    if isinstance(value, dict):
        pair = pair_value(value, scanner._pair_name) if _maybe_pair(value) else None
        strings: list[str] = []
        string_places: list[tuple[_Path, str | int | None]] = []
        nested: list[tuple[str, Any]] | None = None
        ints = 0
        jwk = _encodings.jwk_private(value) if "kty" in value else None
        for key, item in value.items():
            if not isinstance(key, str):
                key = str(key)
            texts.append(key)  # a secret can hide in a key too
            places.append((at, key))
            known = _KEY_CACHE.get(key)
            if (
                known
                or (known is None and is_credential_key(key))
                or key == pair
                or (jwk and key in jwk)
                or (isinstance(item, str) and 22 <= len(item) <= 130 and _encodings.key_material(key, item))
            ):
                _credential(item, (*at, key), credentials)
            if jwk == [] and key in _encodings.JWK_PUBLIC:
                continue  # a public JSON Web Key's modulus and coordinates are published on purpose
            if isinstance(item, str):
                strings.append(item)
                string_places.append((at, key))
            elif item is not None and item is not True and item is not False:
                if nested is None:
                    nested = []
                nested.append((key, item))
                ints += type(item) is int
        # Round fifteen (q-secrets, merged after this reference was taken): a card as a bare word under
        # a card's key or beside its expiry, read on every object (the scanner reads it only when a
        # string has a bare word's length: the fast path checked here).
        numbers.extend(scanner._keyed_cards(value, at))
        if len(strings) > 1:
            groups.append((at, list(range(len(texts), len(texts) + len(strings)))))
        if containers is not None and (len(strings) > 1 or ints > 1):
            containers.append((value, at, ints > 1))  # two values or more that may be pieces of one card or key
        texts.extend(strings)
        places.extend(string_places)
        for key, item in nested or ():
            # Round nine (f9-secrets, merged after this reference was taken): a plural credential parent.
            if key[-1:] in "sS" and scanner.plural_parent(key, item):
                scanner._parent_secrets(item, (*at, key), credentials, plural=True, depth=depth)
            _reference__walk(item, (*at, key), depth + 1, texts, places, credentials, numbers, groups, containers)
    elif isinstance(value, list | tuple):
        if (
            len(value) == 2
            and isinstance(value[0], str)
            and scanner._PAIR_NAME.fullmatch(value[0])
            and is_credential_key(value[0])
        ):
            _credential(value[1], (*at, 1), credentials)
        first = len(texts)
        ints = 0
        for i, item in enumerate(value):
            if isinstance(item, str):
                texts.append(item)
                places.append((at, i))
            else:
                ints += type(item) is int
        numbers.extend(scanner._keyed_cards(value, at))  # round fifteen, on every list (see above)
        if 3 <= len(value) <= 6:
            numbers.extend(((*at, i), "password (connection)", _mask(value[i])) for i in _connection_password(value))
        if len(texts) - first >= 3:
            words = texts[first:]
            # Set and suffix tests in C first: most lists name no program of the table.
            if not _PROGRAM_NAMES.isdisjoint(words) or any(w.endswith(_PROGRAM_PATHS) for w in words):
                numbers.extend(_argv_findings(words, at))
        if _MIN_ENCODED <= len(value) <= _MAX_CHAR_CODES and type(value[0]) is int:
            # [103, 104, 112, 95, ...]: a list of character codes is the text it spells, scanned as one.
            spelled = _from_char_codes(x if type(x) is int else -1 for x in value)
            if spelled is not None:
                texts.append(spelled)
                places.append((at, None))
        if len(value) >= _byte_codes.MIN_CODES:
            # Round fourteen's behaviour: one code per item is a run of codes, read as one.
            if len(texts) - first == len(value):
                codes = _byte_codes.joined_items(texts[first:])
            else:
                codes = _byte_codes.joined_numbers(value) if type(value[0]) is int else None
            if codes is not None:
                texts.append(codes)
                places.append((at, None))
        if len(texts) - first > 1:
            groups.append((at, list(range(first, len(texts)))))
        if containers is not None and 2 <= len(value) <= _MAX_LEAVES:
            containers.append((value, at, ints > 1))  # items that may be pieces of one card or key
        for i, item in enumerate(value):
            if not isinstance(item, str) and item is not None and item is not True and item is not False:
                _reference__walk(item, (*at, i), depth + 1, texts, places, credentials, numbers, groups, containers)
    elif isinstance(value, str):
        texts.append(value)
        places.append((at, None))
    elif value is None or isinstance(value, bool):
        return
    elif isinstance(value, int | float):
        if not -1e12 < value < 1e12:  # long enough to be a card number (or not finite)
            digits = _card_number_value(value)
            if digits is not None:
                numbers.append((at, "card-number", _excerpt("card-number", digits)))
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def _reference__sibling_gate(value: dict[Any, Any] | list[Any] | tuple[Any, ...], *, random: bool = True) -> bool:
    """secret_scanner._sibling_gate at 34fa546."""
    items = list(value.values()) if isinstance(value, dict) else list(value)
    strings = [x for x in items if type(x) is str]
    if any(isinstance(x, dict) for x in items):
        strings += [v for x in items if isinstance(x, dict) for v in x.values() if type(v) is str]
    if len(strings) < 2:
        return False
    # Digit groups in separate strings ("4620", "9665", ...) or random pieces of a key.
    groups = [len(x) for x in strings if len(x) <= 8 and x.isdigit()]
    if len(groups) >= 2 and sum(groups) >= 13:  # enough digits for a card
        return True
    return random and _encodings.random_pieces_gate("\n".join(strings))


def _reference_random_pieces_gate(text: str) -> bool:
    """secret_encodings.random_pieces_gate at 34fa546 (no memo)."""
    return enc._READER_SEARCH["random"](text.encode("utf-8", "surrogatepass"))


_REFERENCES: dict[str, Callable[..., Any]] = {
    "enc.piece_runs": _reference_piece_runs,
    "enc.radix_words": _reference_radix_words,
    "enc.random_pieces_gate": _reference_random_pieces_gate,
    "scanner._find": _reference__find,
    "scanner._sibling_gate": _reference__sibling_gate,
    "scanner._walk": _reference__walk,
}


# --- hide_secrets: the neighbour-glue check before the second scan --------------------------------


def _reference_hide_secrets(value: Any, hide: Callable[[Any], Any]) -> Any:
    """hide_secrets at depth 0 before the glue check went first (ff9badc): a second scan, then the glue check."""
    if not scanner._find(value, (), 0) and not scanner._layout_candidate(value, 0):
        return value
    hidden = scanner.hide_secrets(value, hide, 1)
    if not scanner._find(hidden, (), 0):
        return hidden
    leaves: list[str] = []
    scanner._leaves(hidden, leaves)
    return scanner._hide_neighbours(hidden, hide, set(scanner._split_pieces(leaves[: _MAX_LEAVES + 1])[1]))


def _hidden_and_calls(hide_secrets: Callable[[Any, Callable[[Any], Any]], Any], document: Any) -> tuple[Any, int]:
    """What a hide_secrets makes of a document, and how many times it called hide."""
    calls = 0

    def hide(_value: Any) -> str:
        nonlocal calls
        calls += 1
        return "[REDACTED]"

    return hide_secrets(document, hide), calls


@pytest.mark.parametrize("chunk", range(2))
def test_hide_secrets_is_the_reference_on_the_corpus(chunk: int) -> None:
    """The same output and the same hide calls as the code with the second scan first, on a fifteenth of the corpus.

    A fifteenth (~900 documents, ~3 s of CPU for both sides): the whole corpus costs ~100 s, the adversarial
    documents ~3 ms each, and the two differ only in the order of two checks whose results are compared here.
    """
    documents = corpus_documents()[chunk::30]
    rewritten = 0
    for document in documents:
        now = _hidden_and_calls(scanner.hide_secrets, document)
        assert now == _hidden_and_calls(_reference_hide_secrets, document), document
        rewritten += now[1] > 0
    assert rewritten > 50  # the comparison reaches the rewriting path, not only the nothing-to-hide one


def test_hide_secrets_hides_a_token_split_across_neighbour_values() -> None:
    """The glue check still finds a key cut across two values of different objects (what the second scan guards)."""
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    document = {"token": "abc123xyz", "a": {"x": token[:16]}, "b": {"y": token[16:]}}
    hidden, calls = _hidden_and_calls(scanner.hide_secrets, document)
    assert token[:16] not in json.dumps(hidden) and token[16:] not in json.dumps(hidden)
    assert calls >= 3


# --- _layout_candidate: a short text's answer kept ------------------------------------------------


def _layout_outcome(layout: Callable[[str], bool], text: str) -> bool | str:
    """The answer, or the error raised (a lone surrogate cannot be searched: redaction hides the field)."""
    try:
        return layout(text)
    except ValueError as error:
        return type(error).__name__


def test_a_kept_layout_answer_is_the_texts_own_on_every_corpus_string(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked twice in two orders (kept answers read back, the dict dropped when full), each is _layout_text's."""
    scanner._LAYOUT_SEEN.clear()
    monkeypatch.setattr(scanner, "_SEEN_SIZE", 257)  # dropped whole many times over the corpus
    texts = corpus_strings()
    expected = [_layout_outcome(scanner._layout_text, text) for text in texts]
    assert 100 < expected.count(True) < len(texts)  # both answers are compared, not one
    for order in (range(len(texts)), reversed(range(len(texts)))):
        for n in order:
            assert _layout_outcome(scanner._layout_text_kept, texts[n]) == expected[n], texts[n]
            assert _layout_outcome(scanner._layout_text_kept, texts[n]) == expected[n], texts[n]  # the kept one
    assert 0 < len(scanner._LAYOUT_SEEN) <= 257


_LAYOUT_PARTS = ["password=", "token: ", "x", "hunter2hunter2", " ", "=", '{"pass":"', "abc"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_LAYOUT_PARTS), max_size=6))
def test_a_kept_layout_answer_is_the_texts_own_on_random_texts(parts: list[str]) -> None:
    text = "".join(parts)
    assert scanner._layout_text_kept(text) is scanner._layout_text(text)
    assert scanner._layout_text_kept(text) is scanner._layout_text(text)
