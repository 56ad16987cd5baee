"""Secret detection (policyengine.arguments.secret_scanner): credential keys, token shapes, text assignments, cards."""

from __future__ import annotations

import functools
import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from policyengine.arguments.secret_scanner import (
    _ASSIGNMENT_RE,
    CREDENTIAL_ENDINGS,
    CREDENTIAL_WORDS,
    MAX_DECODE_ROUNDS,
    MAX_DEPTH,
    Finding,
    card_numbers,
    find_secrets,
    is_credential_key,
)
from policyengine.values.frozen import freeze
from support import read_yaml

CASES_FILE = Path(__file__).resolve().parent / "adversarial" / "secrets.yaml"
CASE_KEYS = {"name", "value", "secret", "kinds"}
MIN_CASES = 80


def _cases() -> list[Any]:
    """The data file's cases; a missing or malformed file fails the run, it never skips."""
    assert CASES_FILE.is_file(), f"missing test data {CASES_FILE}"
    cases = read_yaml(CASES_FILE)
    assert isinstance(cases, list) and len(cases) >= MIN_CASES, f"{CASES_FILE.name}: needs {MIN_CASES}+ cases"
    names = [case.get("name") for case in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    for case in cases:
        assert isinstance(case, dict) and {"name", "value", "secret"} <= case.keys() <= CASE_KEYS, case
        assert isinstance(case["secret"], bool), case["name"]
    return [pytest.param(case, id=case["name"]) for case in cases]


@pytest.mark.parametrize("case", _cases())
def test_adversarial_case(case: dict[str, Any]) -> None:
    findings = find_secrets(case["value"])
    if case["secret"]:
        assert findings, f"not found: {case['value']!r}"
        kinds = {f.kind for f in findings}
        assert set(case.get("kinds", [])) <= kinds, f"kinds {kinds} lack {case.get('kinds')}"
    else:
        assert findings == [], f"false positive on {case['value']!r}"


# --- credential keys -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "password", "Password", "PASSWORD", "passwd", "pwd", "passphrase", "db_password", "DB_PASSWORD",
        "userPassword", "user-password", "dbpassword", "new_password", "password_confirm", "password2",
        "secret", "client_secret", "clientSecret", "CLIENT_SECRET", "webhook_secret", "token", "access_token",
        "accessToken", "refresh_token", "id_token", "csrftoken", "api_key", "apiKey", "apikey", "x-api-key",
        "X-API-KEY", "XApiKey", "authorization", "Authorization", "proxy-authorization", "auth", "cookie",
        "set-cookie", "Set-Cookie", "private_key", "privateKey", "aws_secret_access_key",
        "AWS_SECRET_ACCESS_KEY", "credentials", "creds", "session", "sessionid", "JSESSIONID", "cvv", "cvc",
        "cvv2", "CVC2", "security_code", "securityCode", "card_verification_number", "pin", "pin_code", "otp",
        "mfa_code", "secret_key", "signing_key", "pass\u200bword", "\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44",
        "pass%77ord", "spring.datasource.password", "Ocp-Apim-Subscription-Key",
    ],
)  # fmt: skip
def test_credential_keys_are_recognised_in_any_spelling(key: str) -> None:
    assert is_credential_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "token_count", "max_tokens", "tokens", "num_tokens", "input_tokens", "password_policy", "password_hint",
        "password_length", "password_reset_url", "forgot_password_url", "forgot_password", "secret_santa_name",
        "next_page_token", "nextPageToken", "page_token", "continuation_token", "eos_token", "pad_token",
        "cancellation_token", "passport_number", "secretary", "tokenizer", "bypass", "compass", "author",
        "authentication_type", "auth_url", "keyword", "key", "public_key", "primary_key", "private_key_id",
        "private_key_path", "aws_access_key_id", "session_timeout", "session_id", "pin_location", "spinner",
        "card_number", "cardholder_name", "username", "",
    ],
)  # fmt: skip
def test_keys_that_only_mention_a_credential_are_not_credential_keys(key: str) -> None:
    assert not is_credential_key(key)


def _table_keys() -> list[str]:
    return sorted(CREDENTIAL_WORDS) + ["_".join(ending) for ending in sorted(CREDENTIAL_ENDINGS)]


@pytest.mark.parametrize("key", _table_keys())
def test_every_key_of_the_table_is_found_in_text_assignments_too(key: str) -> None:
    # The text pattern looks for stems; a table entry without one would be found as a key only.
    assert is_credential_key(key)
    assert _ASSIGNMENT_RE.search(f"{key}=Zq9xL2pW") is not None
    assert find_secrets(f"{key}=Zq9xL2pW"), key


def test_a_credential_key_with_a_placeholder_value_is_not_a_secret_but_its_shapes_still_are() -> None:
    assert find_secrets({"password": "<password>"}) == []
    assert [f.kind for f in find_secrets({"password": "<AKIAQ3EGRTZ7XK4PLM2N>"})] == ["aws-access-key"]


def test_a_credential_value_that_matches_a_shape_is_reported_once_by_its_shape() -> None:
    findings = find_secrets({"token": "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"})
    assert [(f.kind, f.where) for f in findings] == [("github-token", "token")]


def test_changeme_is_a_working_default_password_so_it_is_a_secret() -> None:
    assert find_secrets({"password": "changeme"})
    assert find_secrets("password=changeme")


def test_a_list_of_scalars_under_a_credential_key_is_a_list_of_secrets() -> None:
    findings = find_secrets({"auth": ["alice", "pa55word", None]})
    assert [f.where for f in findings] == ["auth[0]", "auth[1]"]


def test_a_dict_under_a_credential_key_is_walked_not_reported_whole() -> None:
    value = {"credentials": {"type": "service_account", "private_key": "MIIEvQ"}}
    assert [f.where for f in find_secrets(value)] == ["credentials.private_key"]


# --- where, excerpt --------------------------------------------------------------------------------


def test_where_is_the_document_path_of_the_value_below_the_given_prefix() -> None:
    value = {"options": {"password": "hunter2hunter2"}, "headers": [["Authorization", "Bearer abc123def"]]}
    wheres = {f.where for f in find_secrets(value, path="arguments")}
    assert wheres == {"arguments.options.password", "arguments.headers[0][1]"}


def test_where_quotes_keys_that_are_not_identifiers() -> None:
    findings = find_secrets({"my headers": {"x.api.key": "k-123"}}, path="arguments")
    assert [f.where for f in findings] == ['arguments["my headers"]["x.api.key"]']


def test_where_of_a_top_level_string_is_the_prefix_itself() -> None:
    assert [f.where for f in find_secrets("ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789")] == [""]
    assert [f.where for f in find_secrets(["x", 4111111111111111], path="a")] == ["a[1]"]


def test_the_excerpt_masks_the_secret() -> None:
    assert find_secrets({"password": "hunter2hunter2"}) == [Finding("keyword", "password", "hun…(14 chars)")]
    (finding,) = find_secrets("card 4111 1111 1111 1111")
    assert finding.excerpt == "…1111 (16 digits)"


@pytest.mark.parametrize(
    "secret",
    [
        "hunter2hunter2",
        "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
        "AKIAQ3EGRTZ7XK4PLM2N",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "S3cretPass",
    ],
)
def test_no_excerpt_contains_the_secret_or_most_of_it(secret: str) -> None:
    texts = [{"password": secret}, f"password={secret}", f"https://u:{secret}@host/", f"token {secret}"]
    for value in texts:
        for finding in find_secrets(value):
            assert secret not in finding.excerpt
            assert len(finding.excerpt.split("…")[0]) <= len(secret) // 4


# --- limits and types ------------------------------------------------------------------------------


def _nested(levels: int) -> Any:
    value: Any = {"password": "hunter2"}
    for _ in range(levels):
        value = [value]
    return value


def test_nesting_up_to_the_limit_is_scanned_and_deeper_raises_so_callers_fail_closed() -> None:
    assert find_secrets(_nested(MAX_DEPTH - 1))
    with pytest.raises(ValueError, match="deeper"):
        find_secrets(_nested(MAX_DEPTH + 1))
    with pytest.raises(ValueError, match="deeper"):
        find_secrets(_nested(MAX_DEPTH + 1), path="arguments")


def test_json_text_nested_too_deeply_raises_instead_of_being_skipped() -> None:
    with pytest.raises(ValueError):
        find_secrets("[" * 200 + "]" * 200)
    with pytest.raises(ValueError):
        find_secrets("[" * 100_000 + "]" * 100_000)


def test_percent_encoding_deeper_than_the_bound_raises() -> None:
    text = "A"
    for _ in range(MAX_DECODE_ROUNDS + 2):
        text = "%" + text.encode().hex() if len(text) == 1 else text.replace("%", "%25")
    with pytest.raises(ValueError, match="encoded"):
        find_secrets(text)


def test_values_that_are_not_json_raise_type_error() -> None:
    with pytest.raises(TypeError):
        find_secrets({"a": object()})


def test_subclasses_and_frozen_values_are_scanned_like_plain_ones() -> None:
    class Text(str):
        pass

    class Number(int):
        pass

    value = {"password": Text("hunter2"), "n": Number(4111111111111111), "t": (Text("AKIAQ3EGRTZ7XK4PLM2N"),)}
    assert {f.kind for f in find_secrets(value)} == {"keyword", "card-number", "aws-access-key"}
    assert find_secrets(freeze({"headers": [["Authorization", "Bearer abc123def"]]})) != []


def test_booleans_are_not_numbers() -> None:
    assert find_secrets({"cvv": True, "n": True}) == []
    assert card_numbers(True) == []


def test_nan_and_infinity_are_not_card_numbers() -> None:
    assert find_secrets([float("nan"), float("inf"), -float("inf"), 1e300]) == []


def test_lone_surrogates_do_not_break_the_scan() -> None:
    assert find_secrets("\ud800AKIA\udfffQ3EGRTZ7XK4PLM2N")
    assert find_secrets({"\ud800": "\udc00 hello"}) == []


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,
        "password=" * 100_000,
        "1 " * 500_000,
        "%25" * 300_000,
        "eyJ" * 300_000,
        "-----BEGIN " * 100_000,
        "https://" + "a:" * 300_000,
        "\u200b" * 500_000,
        "K7xQ9vZ2mK8pL4nR" * 60_000,
    ],
    ids=["letters", "assignments", "digits", "percents", "jwt-heads", "key-heads", "colons", "zero-width", "entropy"],
)
def test_huge_hostile_strings_are_scanned_without_error(text: str) -> None:
    # Linear time is RE2's; these only check nothing crashes or recurses on them.
    find_secrets({"a": text})


# --- card numbers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("4111 1111 1111 1111", ["4111111111111111"]),
        ("4111-1111-1111-1111", ["4111111111111111"]),
        ("4111.1111.1111.1111", ["4111111111111111"]),
        ("4111_1111_1111_1111", ["4111111111111111"]),
        ("4111,1111,1111,1111", ["4111111111111111"]),
        ("4111 - 1111 - 1111 - 1111", ["4111111111111111"]),
        ("pay 5500 0000 0000 0004 and 3782 822463 10005", ["5500000000000004", "378282246310005"]),
        (4111111111111111, ["4111111111111111"]),
        (4111111111111111.0, ["4111111111111111"]),
        ("%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31", ["4111111111111111"]),
        ("4111\u00a01111\u20091111\u30001111", ["4111111111111111"]),
        ("4111\u20131111\u20141111\u22121111", ["4111111111111111"]),
        ("\u096a" + "\u0967" * 15, ["4111111111111111"]),  # Devanagari
        ("1.5 4111 1111 1111 1111 2.0", ["4111111111111111"]),
        ("4111111111111112", []),
        ("1700000000007", []),
        ("0000 0000 0000 0000", []),
        ("12345", []),
        (12345, []),
        (1700000000007, []),
        ("41111111111111111111111", []),
    ],
)  # fmt: skip
def test_card_numbers_in_any_grouping(value: Any, expected: list[str]) -> None:
    assert card_numbers(value) == expected


DIGIT_SCRIPTS = [0x30, 0xFF10, 0x660, 0x6F0, 0x966, 0x9E6, 0xE50, 0x1D7CE]  # ASCII, full-width, Arabic...


def _luhn_complete(body: str) -> str:
    """The body with the check digit that makes it Luhn-valid."""
    for check in "0123456789":
        digits = body + check
        total = sum(
            (n * 2 - 9 if n * 2 > 9 else n * 2) if i % 2 else n for i, n in enumerate(map(int, reversed(digits)))
        )
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable")


@st.composite
def grouped_cards(draw: st.DrawFn) -> tuple[str, str]:
    """A Luhn-valid 16-digit card (first digit 2-6) written in random groups, separators and digit scripts."""
    body = str(draw(st.integers(2, 6))) + "".join(str(draw(st.integers(0, 9))) for _ in range(14))
    card = _luhn_complete(body)
    cuts = sorted(draw(st.sets(st.integers(1, 15), max_size=15)))
    groups = [card[a:b] for a, b in itertools.pairwise([0, *cuts, 16])]
    out = []
    for i, group in enumerate(groups):
        if i:
            out.append(draw(st.sampled_from([" ", "-", ".", "  ", " - ", "\u00a0", "\u2009", "\u2013"])))
        script = draw(st.sampled_from(DIGIT_SCRIPTS))
        out.append("".join(chr(script + int(d)) for d in group))
    return card, "".join(out)


@settings(max_examples=133, deadline=None)
@given(grouped_cards(), st.sampled_from(["", "card ", "pay with: ", "n°"]), st.sampled_from(["", " thanks", "."]))
def test_any_luhn_valid_card_survives_any_grouping_and_unicode_digits(
    case: tuple[str, str], before: str, after: str
) -> None:
    card, text = case
    assert card in card_numbers(before + text + after)
    assert "card-number" in {f.kind for f in find_secrets({"note": before + text + after})}


@settings(max_examples=100, deadline=None)
@given(grouped_cards())
def test_a_luhn_valid_card_as_a_json_number_is_found(case: tuple[str, str]) -> None:
    card, _ = case
    assert card_numbers(int(card)) == [card]
    assert [f.kind for f in find_secrets({"n": int(card)})] == ["card-number"]


@settings(max_examples=100, deadline=None)
@given(st.integers(10**12, 10**19 - 1))
def test_a_number_is_a_card_exactly_when_luhn_passes_and_it_starts_with_2_to_6_or_is_uatp(n: int) -> None:
    digits = str(n)
    luhn = _luhn_complete(digits[:-1]) == digits
    uatp = digits[0] == "1" and len(digits) == 15  # UATP airline cards: issuer 1, 15 digits
    assert bool(card_numbers(n)) == (luhn and ("2" <= digits[0] <= "6" or uatp))


# --- obfuscation properties ------------------------------------------------------------------------

TOKENS = {
    "aws-access-key": "AKIAQ3EGRTZ7XK4PLM2N",
    "github-token": "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "slack-token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe-key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "openai-key": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEF",
    "google-api-key": "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA",
    "basic-auth": "https://alice:S3cretPass@db.example.com/",
    "keyword": "password=hunter2hunter2",
}
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f", "\u202a", "\ufe0f",
             "\U000e0041", "\u180e", "\u034f", "\u3164", "\u2062"]  # fmt: skip


INSERTS = st.lists(st.tuples(st.integers(0, 200), st.sampled_from(INVISIBLE)), max_size=8)


@settings(max_examples=133, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TOKENS)), INSERTS)
def test_invisible_characters_anywhere_in_a_token_do_not_hide_it(kind: str, inserts: list[tuple[int, str]]) -> None:
    token = TOKENS[kind]
    chars = list(token)
    for position, invisible in inserts:
        chars.insert(position % (len(chars) + 1), invisible)
    assert kind in {f.kind for f in find_secrets({"text": "see " + "".join(chars) + " now"})}


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(TOKENS)), st.data())
def test_full_width_and_percent_encoded_tokens_are_found(kind: str, data: st.DataObject) -> None:
    token = TOKENS[kind]
    chars = []
    for ch in token:
        style = data.draw(st.sampled_from(["plain", "wide", "percent"]))
        if style == "wide" and "!" <= ch <= "~":
            chars.append(chr(ord(ch) + 0xFEE0))
        elif style == "percent" and ch.isalnum():
            chars.append(f"%{ord(ch):02X}")
        else:
            chars.append(ch)
    assert kind in {f.kind for f in find_secrets("".join(chars))}


PROSE_WORDS = ["password", "passwords", "token", "secret", "key", "api", "my", "is", "not", "working", "please",
               "reset", "your", "the", "was", "expired", "help", "forgot", "login", "account", "session", "pin",
               "cookie", "auth", "code", "security", "and", "it", "a", "new", "card", "number"]  # fmt: skip


@settings(max_examples=166, deadline=None)
@given(st.lists(st.sampled_from(PROSE_WORDS), min_size=1, max_size=20), st.sampled_from(["", ".", "?", "!"]))
# Found by this test (session 34): "help" after "password is" read as a letters-only password.
@example(["password", "is", "help"], "")
def test_prose_made_of_credential_words_is_not_a_secret(words: list[str], end: str) -> None:
    sentence = " ".join(words).capitalize() + end
    assert find_secrets({"message": sentence}) == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_any_json_value_is_scanned_without_error_and_findings_are_well_formed(value: Any) -> None:
    for finding in find_secrets(value, path="arguments"):
        assert finding.kind and finding.where.startswith("arguments") and "…" in finding.excerpt


def test_bfcl_calls_report_only_credential_keys_and_real_card_shapes() -> None:
    # The recorded BFCL arguments carry fake credentials and cards on purpose; nothing else fires.
    calls = Path(__file__).resolve().parent.parent / "examples" / "bfcl-calls.jsonl"
    kinds = set()
    for line in calls.read_text(encoding="utf-8").splitlines():
        for finding in find_secrets(json.loads(line)["arguments"], path="arguments"):
            key = finding.where.split(".")[1]
            kinds.add(finding.kind)
            assert is_credential_key(key) or key == "card_number", finding
    assert kinds == {"keyword", "card-number"}


def test_random_ascii_noise_rarely_looks_like_a_secret() -> None:
    rng = random.Random(7)
    words = ["the", "report", "budget", "2024", "final", "pdf", "folder", "temp", "analysis", "meeting", "at", "10"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 30))) for _ in range(2000)]
    assert [t for t in texts if find_secrets(t)] == []


# --- the fast path never hides a finding -----------------------------------------------------------

PIECES = [
    *"abcXYZ019 \n\t:=._-/+@%&#{}[]\"'<>,;",
    "password", "token", "api_key", "AKIAQ3EGRTZ7XK4PLM2N", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "eyJhbGciOiJIUzI1NiJ9", "-----BEGIN RSA PRIVATE KEY-----", "https://", "u:p4ss@", "4111 ", "1111-", "sk-",
    "xoxb-1234567890-", " is ", "\\u0041", "%41", "&#65;", "K7xQ9vZ2mK8pL4nR7tY1wE6uI3oA5sD0", "hunter2",
    "Bearer ", "\u200b", "\uff14",
    "QUtJQUlPU0ZPRE5ON0VYQU1QTEU=", '"AKIA" "', "IOSFODNN7EXAMPLE", "414b4941494f53464f444e4e", "gh", "p_16C7e42F",
    "machine h login u password ", "- name: DB_PASSWORD\n  value: ", "db:5432:app:u:", "sha512-", "ssh-ed25519 ",
    "A K I A I O S F O D N N 7 E X A M P L E", "login: admin / ", "P@ssw0rd2024!",
    "a4B871eA743838c0177E2196c292F24e7C61_phg",
    "four-", "one ", "AKIA\\IOSF", "a=AKIAIOSF; b=ODNN7EXAMPLE; ", '"$a$b"', "' -d '", "h1:",
]  # fmt: skip
texts_of_pieces = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


@settings(max_examples=200, deadline=None)
@given(texts_of_pieces)
def test_the_prefilter_passes_every_string_with_a_finding(text: str) -> None:
    from policyengine.arguments.secret_scanner import _analyse, _prefilter

    if text.isascii():
        assert not _analyse(text) or _prefilter(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(texts_of_pieces, min_size=8, max_size=20))
def test_the_joined_prefilter_picks_every_string_the_per_string_prefilter_picks(texts: list[str]) -> None:
    from policyengine.arguments.secret_scanner import _candidates, _prefilter

    plain = [t for t in texts if t.isascii()]
    assert {i for i, t in enumerate(plain) if _prefilter(t)} <= _candidates(plain)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=400).map("".join))
def test_the_set_and_the_regexp_prefilters_agree_below_the_set_limit(text: str) -> None:
    from policyengine.arguments.secret_scanner import _SET_LIMIT, _prefilter_regexp, _prefilter_set

    data = text.encode("utf-8")[:_SET_LIMIT]
    assert bool(_prefilter_set(data)) == _prefilter_regexp(data)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=400).map("".join), st.integers(min_value=0, max_value=2048))
def test_the_grouped_gates_answer_as_one_search_over_every_gate(text: str, cut: int) -> None:
    # The scanner splits its gates into groups (one DFA over all of them thrashes on varied text);
    # the union of the groups must answer as the one program, on either side of the short-text cut.
    from policyengine.arguments import secret_scanner as scanner

    data = text.encode("utf-8")[:cut]
    one_gate, one_categories = _references()
    assert scanner._prefilter_all_set(data) == bool(one_gate(data)) == scanner._prefilter_all_regexp(data)
    assert scanner._categories_set(data) == frozenset(one_categories(data) or ())


@functools.cache
def _references() -> tuple[Any, Any]:
    """References for the grouped gates: the one regexp over every gate, and one regexp per analysis.

    (One RE2 Set over every pattern would be the literal reference, but its states are what made
    the scanner group them: 0.6-5 ms a text on the corpora.)
    """
    import re2

    from policyengine.arguments import secret_scanner as scanner
    from policyengine.arguments.secret_encodings import raw_search

    searches = [raw_search(re2.compile(p, scanner._PREFILTER_OPTIONS)) for p in scanner._CATEGORY_PATTERNS]
    return scanner._prefilter_all_regexp, lambda data: [n for n, search in enumerate(searches) if search(data)]


def test_the_grouped_gates_answer_as_one_search_on_the_corpora() -> None:
    from policyengine.arguments import secret_scanner as scanner

    root = Path(__file__).resolve().parent.parent
    texts = [
        json.dumps(case["call"]["arguments"]).encode()
        for path in sorted((root / "tests" / "adversarial").glob("calls-*.yaml"))
        for case in read_yaml(path).get("cases", [])
        if isinstance((case.get("call") or {}).get("arguments"), dict)
    ]
    prose = (root / "docs" / "security.md").read_bytes()
    texts += [prose[i : i + 300] for i in range(0, 300 * 60, 300)]
    texts = [data for data in texts if len(data) <= scanner._SET_LIMIT]
    assert len(texts) > 6000, len(texts)  # missing data fails, never skips
    one_gate, one_categories = _references()
    for data in texts:
        assert scanner._prefilter_all_set(data) == bool(one_gate(data)), data
        assert scanner._categories_set(data) == frozenset(one_categories(data) or ()), data


@settings(max_examples=100, deadline=None)
@given(st.lists(texts_of_pieces, max_size=6), st.lists(texts_of_pieces, max_size=6))
def test_a_document_reports_what_its_strings_report_alone(values: list[str], keys: list[str]) -> None:
    document = {"values": values, "map": dict.fromkeys(keys, 1)}
    whole = {(f.kind, f.where) for f in find_secrets(document)}
    alone = {(f.kind, f"values[{i}]") for i, v in enumerate(values) for f in find_secrets(v)}
    assert alone <= whole
