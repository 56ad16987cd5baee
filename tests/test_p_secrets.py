"""Round fourteen's secret readers (set M): look-alikes, wide charsets, device configs, computed and spoken secrets."""

from __future__ import annotations

import base64
import codecs
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import secret_cardforms as cardforms
from policyengine.arguments import secret_charsets as charsets
from policyengine.arguments import secret_devices as devices
from policyengine.arguments import secret_lookalikes as lookalikes
from policyengine.arguments import secret_scanner as scanner
from policyengine.arguments import secret_spoken as spoken
from policyengine.arguments._lookalikes import TABLE

LISU_A, LISU_K, LISU_I = "\ua4ee", "\ua4d7", "\ua4f2"
SMALL_G, SMALL_H, SMALL_P = "\u0262", "\u029c", "\u1d18"
CARD = "4556737586899855"


def _kinds(value: object) -> list[str]:
    return [finding.kind for finding in scanner.find_secrets(value)]


# Look-alike scripts -------------------------------------------------------------------------


def test_the_table_folds_letters_to_one_ascii_letter_or_digit() -> None:
    assert TABLE[ord(LISU_A)] == "A" and TABLE[ord(SMALL_G)] == "g"
    for code, ascii_ in TABLE.items():
        char = chr(code)
        assert not char.isascii() and unicodedata.category(char).startswith("L")
        assert len(ascii_) == 1 and ascii_.isascii() and ascii_.isalnum()


def test_views_read_a_word_in_three_cases() -> None:
    word = LISU_A + LISU_K + LISU_I + LISU_A
    views = lookalikes.views(f"id {word}")
    assert "id AKIA" in views  # upper case: the bar-like letter is an I
    assert any(view == "id akla" or view == "id akia" for view in views)


def test_views_leave_text_without_lookalikes_alone() -> None:
    assert lookalikes.views("plain ascii") == []
    assert lookalikes.views("caf\u00e9 cr\u00e8me") == []


@settings(max_examples=50)
@given(st.text(alphabet=st.sampled_from([chr(c) for c in list(TABLE)[:60]] + list("ab1 _-")), max_size=40))
def test_views_hold_no_table_letter_and_keep_words(text: str) -> None:
    for view in lookalikes.views(text):
        assert not lookalikes.has_lookalike(view)
        assert len(view.split()) == len(text.split())


def test_a_token_in_small_capitals_is_found() -> None:
    token = SMALL_G + SMALL_H + SMALL_P + "_" + "q8wz3krt5ymnv2hx7cdl4pjs9bfg6tae1uko"
    assert any(kind.startswith("github-token") for kind in _kinds({"text": token}))


# Wide charsets -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        codecs.BOM_UTF16_LE + "hello there".encode("utf-16-le"),
        codecs.BOM_UTF16_BE + "hello there".encode("utf-16-be"),
        codecs.BOM_UTF32_LE + "hello there".encode("utf-32-le"),
        "hello there".encode("utf-32-le"),
        "hello there".encode("utf-32-be"),
    ],
)
def test_unwrapped_reads_wide_text(data: bytes) -> None:
    assert charsets.unwrapped(data) == b"hello there"


@pytest.mark.parametrize("codec", ["cp037", "cp500"])
def test_ebcdic_reads_mainframe_text(codec: str) -> None:
    assert charsets.ebcdic("ORDER 42 SHIPPED [ok]".encode(codec)) == b"ORDER 42 SHIPPED [ok]"


@settings(max_examples=60)
@given(st.binary(min_size=16, max_size=64))
def test_random_bytes_stay_binary_mostly(data: bytes) -> None:
    # Bytes with a control byte below 0x40 (but EBCDIC's line breaks) are never EBCDIC text.
    if any(b < 0x40 and b not in (0x05, 0x0D, 0x15, 0x25) for b in data):
        assert charsets.ebcdic(data) is None


def test_a_token_in_utf16_with_its_mark_is_found() -> None:
    blob = base64.b64encode(codecs.BOM_UTF16_LE + "AKIAQWERTYUIOPASDFGH".encode("utf-16-le")).decode()
    assert any(kind.startswith("aws-access-key") for kind in _kinds({"m": f"blob {blob}"}))


# Device configuration ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("snmp-server community N3tW0rkRO RO 10", "N3tW0rkRO"),
        ("crypto isakmp key Sh4redKey address 0.0.0.0 0.0.0.0", "Sh4redKey"),
        ("tacacs-server key 7 0822455D0A16", "0822455D0A16"),
        ("radius-server host 10.0.0.1 auth-port 1812 key Rad1usKey", "Rad1usKey"),
        ("username ops privilege 15 secret 9 $9$abcdefgh", "$9$abcdefgh"),
        ('set security ike policy p pre-shared-key ascii-text "$9$Hk5FCtO1Icrv"', "$9$Hk5FCtO1Icrv"),
        ("createUser mon SHA Auth2024x AES Priv2024y", "Priv2024y"),
        ("ntp authentication-key 1 md5 NtpK3y99", "NtpK3y99"),
    ],
)
def test_device_statements_name_their_secret(line: str, secret: str) -> None:
    assert devices.gate(line)
    assert secret in [value for *_, value in devices.hits(line, lambda _: False)]


@pytest.mark.parametrize(
    "line",
    [
        "service password-encryption",
        "key chain RIP-KEYS",
        "crypto isakmp policy 10 encr aes",
        "snmp-server community public RO",
        "snmp-server community <string> RO",
        "snmp-server location Rack-4",
    ],
)
def test_statements_around_secrets_are_none(line: str) -> None:
    assert devices.hits(line, lambda _: False) == []


def test_a_device_secret_is_hidden_in_a_result() -> None:
    text = "hostname r1\nsnmp-server community Gh7tr4ckQ RO\n"
    hidden = scanner.hide_secrets({"stdout": text}, lambda _: "[X]")
    assert "Gh7tr4ckQ" not in str(hidden) and "hostname r1" in str(hidden)


# Computed cards ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f"n {hex(int(CARD))}",
        f"n 0o{int(CARD):o}",
        f"n 0b{int(CARD):b}",
        f"visa {int(CARD):x}",
        f"{int(CARD) + 999} - 999",
        f"{int(CARD) - 10**9} + {10**9}",
    ],
)
def test_computed_cards_are_read(text: str) -> None:
    assert [digits for *_, digits in cardforms.hits(text, scanner._is_card)] == [CARD]


@pytest.mark.parametrize(
    "text",
    [
        "0x1E90FF and 0x7ffd5c3a",
        "fault at 0x00007ffe12345678",
        "total 1200 + 345",
        "gift card a1b2c3",
        "card deadbeefcafe1",
    ],
)
def test_benign_numbers_are_no_card(text: str) -> None:
    assert cardforms.hits(text, scanner._is_card) == []


@settings(max_examples=50)
@given(st.integers(min_value=10**12, max_value=10**19 - 1), st.integers(min_value=1, max_value=10**9))
def test_a_sum_is_a_card_only_when_its_value_is(total: int, part: int) -> None:
    found = cardforms.hits(f"{total + part} - {part}", scanner._is_card)
    assert bool(found) == (
        scanner._is_card(str(total)) and str(total)[0] in "23456" and not scanner._is_card(str(total + part))
    )


# Spoken secrets ------------------------------------------------------------------------------


def test_radio_runs_spell_letters_digits_and_symbols() -> None:
    runs = spoken.radio_runs("pw: TANGO romeo niner hash ALFA bravo wun too")
    assert [spelled for *_, spelled in runs] == ["Tr9#Ab12"]


def test_short_runs_are_words() -> None:
    assert spoken.radio_runs("Flight Delta Two Four, gate Bravo niner") == []


@pytest.mark.parametrize(
    ("text", "code"),
    [("7 3 9", "7 3 9"), ("6.1.4", "6.1.4"), ("0, 5, 4", "0, 5, 4"), ("nine one zero seven", "nine one zero seven")],
)
def test_cvv_read_out(text: str, code: str) -> None:
    spans = spoken.cvv_spans(f"as {text} ok", 0, len(text) + 6)
    assert [f"as {text} ok"[a:b] for a, b in spans] == [code]


# Round fifteen closed these two (tests/test_q_secrets.py): an expiry beside a bare word is a card's
# context, and a CVV asked for is read in the answer on the next line.
def test_a_base36_card_beside_its_expiry_is_read() -> None:
    assert _kinds({"c": "1f3wpjbcq20", "exp": "0429"})


def test_a_cvv_in_a_dialogue_is_read() -> None:
    text = "agent: can you confirm the CVV?\ncaller: sure, it's 5 0 3\n"
    assert "5 0 3" not in str(scanner.hide_cards({"t": text}, lambda _: "*"))
