"""Round eight of the secret detector, red-team set G: encodings, token shapes and layouts, both ways.

Bytes written apart (any separator, any per-byte prefix, hex dumps), wrapped or grouped encodings,
base58/base36, keys and cards cut across sibling values, TOTP setup keys and recovery codes, openssl
-text dumps, raw key material under a key's name, JWK private members, verification values under
other names. The attack values are built here (new spellings of set G's classes, not its calls).
"""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import secret_encodings as enc
from policyengine.arguments.secret_scanner import find_secrets, hide_cards, hide_secrets

GH = "ghp_" + "R8mQ2vX7kL9pT4wN6yB3cF1hJ5dS0aZqE2uG"
SK = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcXq"


def _kinds(value: object) -> set[str]:
    """The kinds found in a value."""
    return {finding.kind.partition(" (")[0] for finding in find_secrets(value)}


def _mask(value: Any) -> Any:
    """A keep-last-four mask, as the bfcl pack's card redaction."""
    text = str(value)
    return "*" * (len(text) - 4) + text[-4:]


def _redact(value: Any) -> str:
    """The replacement of a secrets redaction."""
    return "[REDACTED]"


@pytest.mark.parametrize(
    ("fmt", "sep"),
    [
        ("%02x", ","),
        ("%02x", ", "),
        ("0x%02x", ";"),
        ("0X%02X", " "),
        ("\\x%02x", ""),
        ("%02x", "_"),
        ("%02x", "\n"),
        ("%d", "|"),
        ("%d", "/"),
        ("%d", "\n"),
        ("&#x%02x", ""),
        ("U+%04X", " "),
        ("%02x", " - "),
    ],
)
def test_a_token_as_bytes_apart_is_read_back(fmt: str, sep: str) -> None:
    assert "github-token" in _kinds({"text": "bytes: " + sep.join(fmt % b for b in GH.encode())})


def test_a_hex_dump_is_read_line_by_line() -> None:
    data = SK.encode()
    lines = [
        f"{i:08x}: " + " ".join(data[j : j + 2].hex() for j in range(i, min(i + 16, len(data)), 2))
        for i in range(0, len(data), 16)
    ]
    assert "stripe-key" in _kinds("\n".join(lines))


@settings(max_examples=60, deadline=None)
@given(
    sep=st.sampled_from([",", ", ", ";", " ", "\n", "|", "_", ":", "-"]),
    prefix=st.sampled_from(["", "0x", "\\x"]),
)
def test_byte_lists_decode_to_their_bytes(sep: str, prefix: str) -> None:
    """Invariant: a byte list written with one separator and prefix reads back as its bytes (hex)."""
    data = GH.encode()
    text = sep.join(f"{prefix}{b:02x}" for b in data)
    assert any(how == "hex bytes" and found == data for how, _, _, found in enc.byte_runs(text))


@pytest.mark.parametrize("width", [4, 6, 8, 12, 16, 20, 76])
def test_wrapped_base64_is_glued_back(width: int) -> None:
    payload = base64.b64encode(GH.encode()).decode()
    sep = " " if width <= 8 else "\n"
    assert "github-token" in _kinds(sep.join(payload[i : i + width] for i in range(0, len(payload), width)))


def test_base58_and_base36_words_are_decoded() -> None:
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    n = int.from_bytes(SK.encode(), "big")
    b58 = ""
    while n:
        n, r = divmod(n, 58)
        b58 = alphabet[r] + b58
    # A random-looking base58 word is a high-entropy token already; decoded, it is the key it spells.
    assert _kinds(f"b58: {b58}") & {"stripe-key", "high-entropy"}
    n = int.from_bytes(GH.encode(), "big")
    b36 = ""
    while n:
        n, r = divmod(n, 36)
        b36 = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + b36
    assert "github-token" in _kinds(f"b36: {b36}")


@pytest.mark.parametrize(
    "value",
    [
        "Qm7xT2pLk9Vw4ZrB\nn8Yc3HdF6sJq1MtG\nx5Ke0WaR",
        {"title": "Co4IOqMWlPlXtDd7", "body": "DHznKFPSuDaxlbvc O0MrLwY4"},
        ["Tz4Rk8Lm2QxW9vBn", "Hc7Jp3Ys6DfG1aKe", "Zu5No0Xi"],
        [{"text": "Wq3Ez8Rt5Yu2Io7P"}, {"text": "aS4dF9gH1jK6lZ0x"}, {"text": "Cv2Bn7Mq"}],
    ],
)
def test_a_prefixless_key_cut_in_random_pieces_is_glued(value: object) -> None:
    assert "high-entropy" in _kinds(value)


def test_key_pieces_in_sibling_values_are_hidden() -> None:
    hidden = hide_secrets({"Parts": ["Lp9Vx3Qw7ZtR2m", "Kb6Nh1Yc4Fs8Jd", "Gu5Ea0Wo"], "Name": "/k"}, _redact)
    assert hidden == {"Parts": ["[REDACTED]"] * 3, "Name": "/k"}


@pytest.mark.parametrize(
    "text",
    [
        "Google Authenticator setup key: z6ai kgzi pdxd py5s 4ivy lrfc x5tv epw7",
        "authenticator key for the root account: 2BHNEEG7JZTMAOUJ",
        "TOTP key VR6PNIFWV47EWJUOEPIPKXQT5I5M7Z4D",
        "scan failed, enter this key manually: 52tv ukxe 3y5o 4xic",
        "otpauth://totp/ACME:alice?secret=KRUGS4ZANFZSAYLTMVRXEZLU&issuer=ACME",
        "k7fq m2xa pz3d wq5t hn4r e6vb yl2c ua7s",
        "Bitwarden recovery code y9tl b6up imxt 4hdf joiw ygo5 95kt 6wn4",
    ],
)
def test_setup_keys_and_recovery_codes_are_found(text: str) -> None:
    assert "totp-secret" in _kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "this week were busy with code fixes then more work from home",
        "2FA setup key was rotated for alice; she re-enrolled",
        "recovery code: 1234 5678 9012 3456",  # digits only: a number, not a code of letters and digits
        "merged:\na94a8fe fix login\nb3c91d2 bump deps",
        "scores: 12, 34, 56, 78, 90, 11, 22, 33, 44, 55, 66, 77, 88, 99, 10, 20, 30",
        "deploy key ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ci@x",
        "iPhone 15 Pro Max and Galaxy S24 Ultra in the NEW YORK CITY HALL store",
    ],
)
def test_look_alikes_of_encodings_are_not_secrets(text: str) -> None:
    assert not find_secrets(text)


def test_openssl_text_private_numbers_are_hidden_and_the_public_stay() -> None:
    dump = (
        "Private-Key: (256 bit)\npriv:\n    e9:01:a8:d7:ff:0c:14:e3:88:97:bd:cd:6a:a9:fd:\n    8a:d1:40:ec:25\n"
        "pub:\n    04:1a:2b\n"
    )
    hidden = hide_secrets(dump, _redact)
    assert "e9:01" not in hidden and "pub:\n    04:1a:2b" in hidden


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("aes_key", "77fda9668d551f42a7286e9b194434e46896a284e3c2ca7bd3d93b9b55586c63"),
        ("enc_key", "20ae8f6cceefb3b59b3162370d9743a2"),
        ("keyHex", "5caf9669fde2c36c86578b7f6857eea8a3cdf6765ffd3fcb1c2237db5385643f"),
        ("fernet_key", "q8Xn2vR5tY7uI0oP3aS6dF9gH1jK4lZ-xC_vB2nM5qW="),
    ],
)
def test_raw_key_material_under_a_key_name_is_a_secret(name: str, value: str) -> None:
    assert enc.key_material(name, value)
    assert hide_secrets({name: value}, _redact) == {name: "[REDACTED]"}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("cache_key", "5d41402abc4b2a76b9719d911017c592"),
        ("key_id", "77fda9668d551f42a7286e9b194434e4"),
        ("public_key", "77fda9668d551f42a7286e9b194434e46896a284e3c2ca7bd3d93b9b55586c63"),
        ("idempotency_key", "20ae8f6cceefb3b59b3162370d9743a2"),
        ("aes_key", "0000000000000000000000000000000000"),
        ("sort_key", "c2VjcmV0LXNvcnQta2V5LXZhbHVl"),
    ],
)
def test_ids_and_hashes_under_key_names_are_not_key_material(name: str, value: str) -> None:
    assert not enc.key_material(name, value)


def test_a_jwk_private_member_is_hidden_and_a_public_jwk_stays() -> None:
    private = {"keys": [{"kty": "oct", "kid": "h1", "k": "HTwtY6hVJ9Z0INe24O4XqV"}]}
    assert hide_secrets(private, _redact) == {"keys": [{"kty": "oct", "kid": "h1", "k": "[REDACTED]"}]}
    modulus = (
        "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4"
    )
    public = {"keys": [{"kty": "RSA", "kid": "r1", "n": modulus, "e": "AQAB"}]}
    assert not find_secrets(public)
    assert hide_secrets(public, _redact) == public


@pytest.mark.parametrize(
    "value",
    [
        {"cards": {"5105105105105100": {"name": "Ops"}}},
        {"card": {"parts": [4111, 1111, 1111, 1111], "exp": "01/28"}},
        {"card": {"holder": "Bob Ray", "a": "5105", "b": "1051", "c": "0510", "d": "5100"}},
        {"tags": ["#promo", "5105", "1051", "0510", "5100"]},
        [{"text": "Bob Ray"}, {"text": "4111"}, {"text": "1111"}, {"text": "1111"}, {"text": "1111"}],
    ],
)
def test_a_card_in_any_layout_is_masked(value: object) -> None:
    assert "card-number" in _kinds(value) or "5105105105105100" in str(value)
    masked = hide_cards(value, _mask)
    assert masked != value
    assert "5105" not in str(masked).replace("5100", "") or "1111" in str(value)


@pytest.mark.parametrize(
    "value",
    [
        {"years": [2019, 2020, 2021, 2022]},
        {"ports": [8080, 8443, 9090, 3000]},
        {"build": ["run", "4821", "ref", "2023"]},
        {"last4": "0366", "exp": "12/27"},
    ],
)
def test_numbers_that_are_no_card_stay(value: object) -> None:
    assert hide_cards(value, _mask) == value


@pytest.mark.parametrize(
    ("value", "masked"),
    [
        ({"card": {"last4": "0366", "csv": "611"}}, {"card": {"last4": "0366", "csv": "***"}}),
        ({"card": {"last4": "0366", "securityNo": "644"}}, {"card": {"last4": "0366", "securityNo": "***"}}),
        ({"f": [{"label": "CVV", "data": "537"}]}, {"f": [{"label": "CVV", "data": "***"}]}),
        ({"note": "CVV number:\n482"}, {"note": "CVV number:\n***"}),
        ({"note": "cvv was 483"}, {"note": "cvv was ***"}),
    ],
)
def test_verification_values_under_other_names_are_masked(value: object, masked: object) -> None:
    assert hide_cards(value, _mask) == masked


def test_a_security_number_without_a_card_stays() -> None:
    assert hide_cards({"security_number": "611", "room": "12"}, _mask) == {"security_number": "611", "room": "12"}


@pytest.mark.parametrize(
    "text",
    [
        "aB3 " * 50_000,
        "ab2c " * 50_000,
        "Ab3dEf9h\n" * 25_000,
        " ".join(f"{i % 256:02x}" for i in range(100_000)),
        "x" * 300_000,
        "Z2hw X21O " * 30_000,
    ],
)
def test_readers_stay_linear_on_hostile_text(text: str) -> None:
    started = time.process_time()
    find_secrets(text)
    assert time.process_time() - started < 3.0


@pytest.mark.parametrize(
    "text",
    [
        "WPA2 key for the office AP: sunflower-meadow-7",
        "the WPA3 key on the lab router is cobalt-falcon-93",
        "AP config: ssid=lab5g wpa2_key=quiet-harbor-58",
        "router WPS PIN 12345670",
        "WIFI:T:WPA;S:Lab5G;P:copper-Kettle-19;;",
    ],
)
def test_wifi_keys_are_found(text: str) -> None:
    assert _kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "WPA2 key exchange is slow on this router",
        "the router password policy requires 12 chars",
        "reset the router key to factory default",
        "the ssid is lab-5g-2024 and the wifi key is on the fridge",
    ],
)
def test_wifi_words_without_a_key_are_not_secrets(text: str) -> None:
    assert not find_secrets(text)
