"""Round thirteen: text carried in Unicode (secret_carriers) - decoders, gate, unreadable payloads, benign shapes."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine.arguments import secret_carriers as carriers
from policyengine.arguments import secret_scanner as scanner

TOKEN = "ghp_R7mQ2xVb9KpL4tWz8NcY3sHd6FjA1uEo5GiT"


def tags(text: str) -> str:
    """Text as TAG characters."""
    return "".join(chr(0xE0000 + ord(c)) for c in text)


def selectors(data: bytes) -> str:
    """Bytes as variation selectors."""
    return "".join(chr(0xFE00 + b) if b < 16 else chr(0xE0100 + b - 16) for b in data)


def bits(text: str, zero: str, one: str, *, lsb: bool = False) -> str:
    """Text's UTF-8 bytes as bits written with two symbols."""
    out = []
    for byte in text.encode():
        word = format(byte, "08b")
        out.append((word[::-1] if lsb else word).translate({48: zero, 49: one}))
    return "".join(out)


def braille(data: bytes) -> str:
    """Bytes as Braille cells."""
    return "".join(chr(0x2800 + b) for b in data)


def base100(data: bytes) -> str:
    """Bytes as base100 emoji."""
    return "".join(chr(0x1F3F7 + b) for b in data)


def views(text: str) -> list[str]:
    """The views read() hands back (gated as the scanner gates them)."""
    return [view for _, view in carriers.read(text).views] if carriers.gate(text) else []


def kinds(value: Any) -> list[str]:
    """The kinds find_secrets reports."""
    return [finding.kind for finding in scanner.find_secrets(value)]


PRINTABLE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=40)
READABLE = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Co", "Cn", "Zl", "Zp"), max_codepoint=0x2FFF),
    min_size=1,
    max_size=30,
).filter(lambda t: t.isprintable())


@given(PRINTABLE)
def test_tag_characters_read_as_their_ascii(text: str) -> None:
    assert any(text in view for view in views("note" + tags(text)))


@given(READABLE)
def test_variation_selectors_read_as_their_bytes(text: str) -> None:
    if len(text.encode()) >= 2:
        folded = text.translate(carriers._enclosed_table())  # the views fold enclosed letters
        assert any(folded in view for view in views("\U0001f600" + selectors(text.encode())))


@given(
    PRINTABLE, st.sampled_from(["\u200b\u200c", "\u2062\u2063", "\u200d\u2060", " \t", "\u00a0\u2002"]), st.booleans()
)
def test_bits_read_in_either_order_and_assignment(text: str, pair: str, lsb: bool) -> None:
    carried = bits(text, pair[0], pair[1], lsb=lsb)
    if pair == " \t" and not carriers.gate("x" + carried):
        return  # tabs and spaces changing fewer than seven times are indentation, not bits
    assert any(text in view for view in views("x" + carried + "y"))


@given(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=3, max_size=40))
def test_byte_alphabets_read_as_their_bytes(text: str) -> None:
    assert any(text in view for view in views(braille(text.encode())))
    if len(text) >= 6:
        assert any(text in view for view in views(base100(text.encode())))


CARRIER_ALPHABET = st.sampled_from(
    [
        *"ab1 \t",
        *("\U000e0067", "\U000e0041", "\ufe0f", "\U000e0120", "\u200b", "\u200c", "\u200d", "\u00a0", "\u2002"),
        *("\u2801", "\u2867", "\U0001f44d", "\U0001f600", "\U0001f170", "\U0001f1e6", "\u249c", "\u2776", "\U0001f3f4"),
    ]
)
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
WALES = "\U0001f3f4\U000e0067\U000e0062\U000e0077\U000e006c\U000e0073\U000e007f"
ENGLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
GRADE1 = "\u2820\u281e\u2813\u2811 \u281f\u2825\u280a\u2809\u2805 \u2803\u2817\u2815\u283a\u281d \u280b\u2815\u282d"


@given(st.text(CARRIER_ALPHABET, max_size=60))
def test_the_gate_never_hides_a_view(text: str) -> None:
    """A string the gate passes over carries nothing read() would decode (the gate is the only cost on most text)."""
    if not carriers.gate(text):
        reading = carriers.read(text)
        assert not reading.views and not reading.unreadable, text


@given(st.text(st.characters(max_codepoint=0x7F, blacklist_characters="\t"), max_size=200))
def test_ascii_text_without_a_tab_is_never_gated(text: str) -> None:
    assert not carriers.gate(text)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("family", ["selectors", "invisible bits", "Braille", "base100"])
def test_random_payloads_are_unreadable(seed: int, family: str) -> None:
    data = random.Random(seed).randbytes(32)
    carried = {
        "selectors": "\U0001f642" + selectors(data),
        "invisible bits": "hi" + "".join(format(b, "08b").translate({48: "\u200b", 49: "\u2060"}) for b in data),
        "Braille": braille(data),
        "base100": base100(data),
    }[family]
    assert carriers.read(carried).unreadable, family
    assert any(kind.startswith("possibly secret (unreadable") for kind in kinds({"text": carried}))


BENIGN = [
    f"Happy Burns Night {SCOTLAND} and thanks \u2764\ufe0f",
    f"{ENGLAND} v {WALES}",
    f"Steps: 1\ufe0f\u20e3 open 2\ufe0f\u20e3 click \U0001f469\u200d\U0001f4bb {FAMILY}{FAMILY}",
    "\u2764\ufe0f" * 12,
    f"{GRADE1} \u283c\u2801\u2803\u2809",
    "cpu \u2840\u2840\u28c0\u28c0\u28e0\u28e4\u28f4\u28f6\u28fe\u28ff\u28ff\u28f7\u28f6\u28e4\u28c0\u2840\u2880",
    "".join(chr(c) for c in range(0x1F493, 0x1F4A0)),
    "\U0001f1fa\U0001f1f8\U0001f1ec\U0001f1e7\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea\U0001f1ef\U0001f1f5\U0001f1e8\U0001f1e6",
    "\u24b6 yes \u24b7 no \u249c one \u249d two \u2474 first \u2488 a \u2776 \u2777 \u2778",
    "\u845b\U000e0100\u57ce\u3055\u3093",
    "id\tq1\tq2\n1\t \t \t \t \t \t \t \t \t \n",
    "see https://docs.example.com/\u200bguides/\u200binstall/\u200blinux",
    "\u202b\u05e9\u05dc\u05d5\u05dd\u202c \u200f\u05e2\u05d5\u05dc\u05dd\u200f \u2066abc\u2069",
]


@pytest.mark.parametrize("text", BENIGN)
def test_legitimate_unicode_carries_no_secret(text: str) -> None:
    reading = carriers.read(text)
    assert not reading.unreadable
    assert not scanner.find_secrets({"text": text})


def test_a_subdivision_flag_is_no_tag_run() -> None:
    assert not views(f"go {SCOTLAND}!")
    # The same tags with no flag before them are text: read.
    assert any("gbsct" in view for view in views("go " + tags("gbsct")))


def test_braille_words_read_as_grade_one_letters() -> None:
    assert "The quick brown fox 123" in views(f"{GRADE1} \u283c\u2801\u2803\u2809")


def test_enclosed_letters_fold_to_the_letter() -> None:
    table = carriers._enclosed_table()
    assert all(v.isascii() and v.isalnum() for v in table.values())
    assert "A" == "\U0001f170".translate(table) == "\U0001f150".translate(table) == "\U0001f1e6".translate(table)
    assert "\u249c".translate(table) == "a"  # PARENTHESIZED LATIN SMALL LETTER A: NFKD gives "(a)"
    assert "1" == "\u2776".translate(table) == "\u2488".translate(table)
    assert "\u24ff".translate(table) == "0"
    assert 0x24B6 not in table  # CIRCLED LATIN CAPITAL LETTER A: NFKD folds it already


@pytest.mark.parametrize(
    "text",
    [
        "build " + tags(TOKEN) + " is green",
        "ok" + selectors(TOKEN.encode()),
        "thanks" + bits(TOKEN, "\u200b", "\u200c"),
        "thanks" + bits(TOKEN, "\u2062", "\u2063", lsb=True),
        "done." + bits(TOKEN, " ", "\t"),
        "note " + braille(TOKEN.encode()),
        base100(TOKEN.encode()),
        "\u200b".join(braille(TOKEN.encode())),  # a zero-width space after each cell
        "%F3%A0%81%A7%F3%A0%81%A8%F3%A0%81%B0%F3%A0%81%9F" + "".join(f"%{b:02X}" for b in tags(TOKEN[4:]).encode()),
    ],
)
def test_a_carried_token_is_found(text: str) -> None:
    assert any(kind.startswith("github-token") for kind in kinds({"text": text})), text


def test_a_carried_token_in_hex_is_found() -> None:
    assert kinds({"text": ("see" + tags(TOKEN)).encode().hex()})


def test_a_card_in_carriers_is_masked_with_its_last_four() -> None:
    def hide(value: Any) -> str:
        text = str(value)
        return "*" * (len(text) - 4) + text[-4:]

    masked = scanner.hide_cards({"note": "card" + tags(" 4111 1111 1111 1111")}, hide)
    assert masked == {"note": "card ***************1111"}
    assert scanner.hide_cards({"n": "CVV" + tags(" 481")}, hide) == {"n": "CVV ***"}
    assert scanner.hide_cards(
        {"n": "thanks \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"}, hide
    )["n"].endswith("\U000e007f")


def test_a_secret_in_carriers_is_redacted() -> None:
    hidden = scanner.hide_secrets({"content": "todo" + tags(TOKEN)}, lambda _: "[REDACTED]")
    assert hidden == {"content": "[REDACTED]"}


def test_byte_alphabet_symbols_apart_by_spaces_are_one_run() -> None:
    spaced = " ".join(braille(TOKEN.encode()))
    assert any(kind.startswith("github-token") for kind in kinds({"text": spaced}))
    assert any(kind.startswith("github-token") for kind in kinds({"text": " ".join(base100(TOKEN.encode()))}))
    assert not scanner.find_secrets({"text": "yes " + " ".join(["\U0001f44d"] * 9)})
