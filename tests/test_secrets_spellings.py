"""Secrets written another way (policyengine.arguments.secret_scanner): encoded, split, stated in prose.

The properties hold the detector to one contract: a secret it finds as it stands is still found
base64, hex or percent-encoded inside a JSON string (one or two levels), and, for token shapes
with a strong prefix, split in two sibling values at any point.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyengine.arguments.secret_scanner import (
    DECODE_BUDGET,
    MAX_DECODED,
    MAX_SPLIT,
    PAST_DECODING_BUDGET,
    PAST_SPLIT_BUDGET,
    find_secrets,
)
from support import scaled

# Made up: the shape of real tokens, opening nothing.
TOKENS = {
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "github-token": "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "gitlab-token": "glpat-aBcDeFgHiJkLmNoPqRsT12",
    "slack-token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe-key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "openai-key": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEF",
    "anthropic-key": "sk-ant-api03-aBcDeFgHiJkLmNoPqRsTuVwXyZ012345",
    "google-api-key": "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
    "npm-token": "npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "huggingface-token": "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567",
}
# Found raw but not split: no strong prefix to glue pieces to.
OTHER_SECRETS = {
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA",
    "basic-auth": "https://alice:S3cretPass@db.example.com/",
    "keyword": "password=hunter2hunter2",
    "card-number": "4111 1111 1111 1111",
}
SECRETS = {**TOKENS, **OTHER_SECRETS}


def _kinds(value: Any) -> set[str]:
    """The kinds found, without what they were decoded from: "aws-access-key (base64)" is aws-access-key."""
    return {f.kind.split(" (")[0] for f in find_secrets(value)}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


ENCODINGS: dict[str, Callable[[str], str]] = {
    "base64": _b64,
    "base64 without padding": lambda text: _b64(text).rstrip("="),
    "url-safe base64": lambda text: base64.urlsafe_b64encode(text.encode()).decode(),
    "base64 of a line (echo | base64)": lambda text: _b64(text + "\n"),
    "hex": lambda text: text.encode().hex(),
    "upper-case hex": lambda text: text.encode().hex().upper(),
    "percent-encoding": lambda text: "".join(f"%{b:02X}" for b in text.encode()),
    "backslash-x escapes": lambda text: "".join(f"\\x{b:02x}" for b in text.encode()),
    "base64 of base64": lambda text: _b64(_b64(text)),
    "base64 of hex": lambda text: _b64(text.encode().hex()),
    "hex of base64": lambda text: _b64(text).encode().hex(),
    "base64 of percent-encoding": lambda text: _b64("".join(f"%{b:02X}" for b in text.encode())),
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_every_secret_of_the_properties_is_found_as_it_stands(kind: str) -> None:
    # The premise of the properties below: each secret is found raw, with its own kind.
    assert kind in _kinds({"body": SECRETS[kind]})


@settings(max_examples=scaled(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(SECRETS)), st.sampled_from(sorted(ENCODINGS)), st.sampled_from(["", "data=", "x "]))
def test_a_secret_found_raw_is_found_encoded_inside_a_json_string(kind: str, encoding: str, before: str) -> None:
    encoded = ENCODINGS[encoding](SECRETS[kind])
    assert kind in _kinds({"body": before + encoded}), encoded
    # ... and inside JSON text inside a string (a request body written by hand).
    assert kind in _kinds(json.dumps({"body": encoded})), encoded


@settings(max_examples=scaled(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TOKENS)), st.data())
def test_a_token_with_a_strong_prefix_is_found_split_in_two_sibling_values(kind: str, data: st.DataObject) -> None:
    token = TOKENS[kind]
    cut = data.draw(st.integers(1, len(token) - 1))
    head, tail = token[:cut], token[cut:]
    assert kind in _kinds({"a": head, "b": tail}), (head, tail)
    assert kind in _kinds({"items": [head, tail], "n": 3}), (head, tail)
    # Non-string siblings between the pieces do not separate them.
    assert kind in _kinds({"a": head, "n": 1, "b": tail}), (head, tail)


@settings(max_examples=scaled(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TOKENS)), st.data())
def test_a_token_with_a_strong_prefix_is_found_in_quoted_pieces_of_one_string(kind: str, data: st.DataObject) -> None:
    token = TOKENS[kind]
    cut = data.draw(st.integers(1, len(token) - 1))
    joiner = data.draw(st.sampled_from(['" "', '""', "' '", "''", '" + "', '", "']))
    text = f'send "{token[:cut]}{joiner}{token[cut:]}" now'
    assert kind in _kinds(text), text


@settings(max_examples=scaled(200), deadline=None)
@given(st.text(st.characters(min_codepoint=0, max_codepoint=127), min_size=12, max_size=80), st.booleans())
def test_base64_of_any_ascii_text_passes_the_gate_that_picks_runs_to_decode(text: str, url_safe: bool) -> None:
    # The gate (_ENCODED_GATE) skips runs that cannot be base64 of text: it must never skip one that is.
    from policyengine.arguments.secret_scanner import _ENCODED_GATE_RE

    encoded = (base64.urlsafe_b64encode if url_safe else base64.b64encode)(text.encode()).decode()
    assert _ENCODED_GATE_RE.search(encoded), encoded


@settings(max_examples=scaled(200), deadline=None)
@given(st.binary(min_size=8, max_size=60))
def test_hex_of_any_bytes_passes_the_gate(data: bytes) -> None:
    from policyengine.arguments.secret_scanner import _ENCODED_GATE_RE

    assert _ENCODED_GATE_RE.search(data.hex()) and _ENCODED_GATE_RE.search(data.hex().upper())


def test_a_split_token_is_reported_at_the_container_that_holds_its_pieces() -> None:
    findings = find_secrets({"headers": {"a": "ghp_16C7e42F292c", "b": "6912E7710c838347Ae178B4a"}}, path="arguments")
    assert [(f.kind, f.where) for f in findings] == [("github-token (split)", "arguments.headers")]


def test_a_decoded_finding_names_the_encodings_outermost_first() -> None:
    aws = TOKENS["aws-access-key"]
    assert [f.kind for f in find_secrets({"b": _b64(aws)})] == ["aws-access-key (base64)"]
    assert [f.kind for f in find_secrets({"b": aws.encode().hex()})] == ["aws-access-key (hex)"]
    assert [f.kind for f in find_secrets({"b": _b64(aws.encode().hex())})] == ["aws-access-key (base64, hex)"]
    (finding,) = find_secrets({"body": _b64(aws)}, path="arguments")
    assert f"{finding.kind} at {finding.where}" == "aws-access-key (base64) at arguments.body"


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_the_excerpt_of_a_decoded_secret_does_not_show_it(kind: str) -> None:
    secret = SECRETS[kind]
    findings = find_secrets({"body": _b64(secret)})
    assert findings
    for finding in findings:
        assert secret not in finding.excerpt and _b64(secret) not in finding.excerpt


@pytest.mark.xfail(
    strict=True,
    reason="two levels of encoding are decoded (MAX_DECODE_LEVELS): each level multiplies the work on hostile text",
)
def test_three_levels_of_encoding_are_decoded() -> None:
    assert find_secrets({"b": _b64(_b64(_b64(TOKENS["aws-access-key"])))})


# --- budgets ------------------------------------------------------------------------------------------


def test_a_secret_in_the_first_mebibyte_of_encoded_text_is_decoded_and_found() -> None:
    filler = _b64("ordinary words, " * 40_000)  # ~850 KB of base64 that decodes to text
    assert "aws-access-key" in _kinds(filler + " " + _b64(TOKENS["aws-access-key"]))


def test_binary_base64_of_any_size_costs_no_budget_and_is_no_secret() -> None:
    blob = base64.b64encode(bytes(range(256)) * 8_000).decode()  # 2.7 MB: an image, an archive
    assert find_secrets({"file": blob}) == []
    assert "aws-access-key" in _kinds({"file": blob + " " + _b64(TOKENS["aws-access-key"])})


def test_past_the_decoding_budget_the_rest_is_reported_not_passed() -> None:
    runs = " ".join(_b64(f"ordinary words {i:06d}") for i in range(MAX_DECODED + 10))
    kinds = {f.kind for f in find_secrets({"body": runs})}
    assert kinds == {PAST_DECODING_BUDGET}
    big = _b64("x" * (DECODE_BUDGET + 100))  # one run decoding past the budget: decoded up to it
    assert find_secrets({"body": big + " " + _b64("more words here")}) != []


def test_past_the_split_budget_the_rest_is_reported_not_passed() -> None:
    text = '"AKIA" "WORD" ' * (5 * MAX_SPLIT)  # a candidate every five pieces (16 characters after AKIA)
    assert {f.kind for f in find_secrets(text)} == {PAST_SPLIT_BUDGET}
    assert find_secrets('"AKIA" "WORD" ' * 10) == []


# --- prose ----------------------------------------------------------------------------------------------

VALUES = ["securePass123", "Tr0ub4dor&3", "9f8e7d6c5b4a3928", "hunter2hunter2", "Zq9xL2pWk4", "pg-Pa55w0rd!"]
NOT_VALUES = ["required", "reset", "changed", "expired", "invalid", "https://example.com/reset", "www.example.com",
              "below", "here", "12", "enabled", "missing", "incorrect", "updated"]  # fmt: skip
STATEMENTS = [
    "the password for {who} is {value}",
    "The password for {who} was {value}",
    "{who}'s password is {value}",
    "password: {value}",
    "token: {value}",
    "my api key is {value}",
    "secret = {value}",
    "The token of {who} is {value}",
]
WHO = ["dr_smith", "alice", "the admin account", "our staging db", "bob@example.com"]


@settings(max_examples=scaled(150), deadline=None)
@given(
    st.sampled_from(STATEMENTS), st.sampled_from(WHO), st.sampled_from(VALUES), st.sampled_from(["", ".", " thanks"])
)
def test_a_credential_stated_in_prose_is_found(statement: str, who: str, value: str, end: str) -> None:
    text = statement.format(who=who, value=value) + end
    assert "keyword" in _kinds({"message": text}), text


@settings(max_examples=scaled(150), deadline=None)
@given(st.sampled_from(STATEMENTS), st.sampled_from(WHO), st.sampled_from(NOT_VALUES), st.sampled_from(["", "."]))
def test_a_sentence_about_a_credential_without_a_value_is_not_a_secret(
    statement: str, who: str, word: str, end: str
) -> None:
    text = statement.format(who=who, value=word) + end
    assert find_secrets({"message": text}) == [], text


@pytest.mark.parametrize(
    "text",
    [
        "Reset your password: https://example.com/reset",
        "Your password must be 12 characters",
        "enter your password",
        "Forgot your password? Click here.",
        "The password for your account was changed.",
        "Your API token: see the settings page",
    ],
)
def test_sentences_about_passwords_without_a_value_are_not_secrets(text: str) -> None:
    assert find_secrets({"message": text}) == []
