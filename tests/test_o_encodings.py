"""Round fourteen: credentials written as runs of character codes (secret_byte_codes) and RFC 2047 encoded words."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import secret_byte_codes as codes
from policyengine.arguments.secret_scanner import _encoded_password, _normalise, find_secrets, text_has_secret

_MORSE = {letter: code for code, letter in codes.MORSE_TABLE.items()}
PASSWORD = "MapleHarbor9183#"


def _decimal(word: str, sep: str = " ") -> str:
    return sep.join(str(ord(c)) for c in word)


def _hex(word: str, prefix: str, sep: str, suffix: str = "") -> str:
    return sep.join(f"{prefix}{ord(c):02x}{suffix}" for c in word)


def _morse(text: str) -> str:
    return " / ".join(" ".join(_MORSE[c] for c in word) for word in text.upper().split())


def _spelled(text: str) -> list[tuple[str, str]]:
    return [(how, spelled) for how, _, _, spelled, _ in codes.runs(text)]


@pytest.mark.parametrize(
    ("text", "how"),
    [
        (" ".join(format(ord(c), "08b") for c in PASSWORD), "binary octets"),
        ("".join(format(ord(c), "08b") for c in PASSWORD), "binary octets"),
        (_decimal(PASSWORD), "char codes"),
        (f"String.fromCharCode({_decimal(PASSWORD, ',')})", "char codes"),
        (f"[{_decimal(PASSWORD, '; ')}]", "char codes"),
        (_hex(PASSWORD, "0x", ", "), "hex bytes"),
        (_hex(PASSWORD, "0x", ", ", "u8"), "hex bytes"),
        (_hex(PASSWORD, "\\x", ""), "hex bytes"),
        (_hex(PASSWORD, "%u00", ""), "hex bytes"),
        (_hex(PASSWORD, "=", "").upper(), "hex bytes"),
        (", ".join(f'"{ord(c):02x}"' for c in PASSWORD), "hex bytes"),
        (_hex(PASSWORD, "", " "), "hex bytes"),
        ("".join(f"\\{ord(c):03o}" for c in PASSWORD), "octal escapes"),
        ("".join(f"\\0{ord(c):03o}" for c in PASSWORD), "octal escapes"),
        ("\n".join(str(ord(c)) for c in PASSWORD), "char codes"),
        (_decimal(PASSWORD, " | "), "char codes"),
        ("".join(f"&#{ord(c)};" for c in PASSWORD), "char codes"),
        (" ".join("0b" + format(ord(c), "08b") for c in PASSWORD), "binary octets"),
        (_hex(PASSWORD, "", ":"), "hex bytes"),
        (" ".join(f"{ord(c):03o}" for c in PASSWORD), "octal codes"),
    ],
)
def test_each_base_spells_the_word(text: str, how: str) -> None:
    assert (how, PASSWORD) in _spelled(text)


def test_morse_reads_punctuation_and_word_gaps() -> None:
    assert _spelled(_morse("pw Walrus7731!")) == [("morse", "PW WALRUS7731!")]
    assert _spelled(".... . .-.. .-.. --- ........ .-- --- .-. .-.. -..") == []  # no letter is eight dots


@pytest.mark.parametrize(
    "text",
    [
        _decimal("Harbor9"),  # seven codes: under MIN_CODES
        "67 111 112 112, 101 114 67 97 110 121",  # two separators in one run
        "34 45 56 67 78 89 91 99 100 120",  # in order: data
        "48656c6c6f576f726c64",  # bare hex digits in a row: a hex string, not codes apart
        "\\033[1;32mOK\\033[0m \\033[31mFAIL\\033[0m",  # colour escapes
        "12:30:45 10:20:30 11:22:33",  # times
        "de:ad:be:ef:00:11:22:33:44:55",  # bytes that are no text
    ],
)
def test_what_is_no_run(text: str) -> None:
    assert _spelled(text) == []


def test_pairs_of_decimal_digits_are_never_read_as_hex() -> None:
    assert [how for how, _ in _spelled("Exam scores: 72 85 91 77 98 64 55 83 90 88")] == ["char codes"]


def test_lists_of_one_code_per_item() -> None:
    assert codes.joined_items([f"{ord(c):02x}" for c in PASSWORD]) == _hex(PASSWORD, "", ", ")
    assert codes.joined_items(["ff", "80", "00"]) is None  # too few
    assert codes.joined_items(["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]) is None
    assert codes.joined_numbers([ord(c) for c in PASSWORD]) == _decimal(PASSWORD, ", ")
    assert codes.joined_numbers([255, 128, 64, 32, 16, 8, 4, 2]) is None  # not printable codes
    assert codes.joined_numbers([True] * 9) is None


@pytest.mark.parametrize(
    ("word", "cased", "found"),
    [
        ("CopperCanyon7426!", True, True),
        ("hunter2024spring", True, True),
        ("COPPERCANYON7426!", False, True),  # Morse: read in lower case
        ("helloworld", True, False),  # no digit
        ("hello world 2024", True, False),  # a sentence
        ("T?P4b=D?O_", True, False),  # scores as codes: no word in them
        ("cdxA8#!x", True, False),  # letters without a vowel
        ("Harbor9", True, False),  # too short
    ],
)
def test_encoded_password(word: str, cased: bool, found: bool) -> None:
    assert _encoded_password(word, cased=cased) is found


def test_encoded_words_are_read_decoded() -> None:
    assert _normalise("=?iso-8859-1?Q?Gr=FC=DFe_aus_M=FCnchen?=") == "Gru\u00dfe aus Munchen"
    token = "sk_live_4Tq8Zm2Lx7Rv9Nc3Wb6Kp1Yd5Hf0Jg8Sa"
    subject = "=?utf-8?B?" + base64.b64encode(token.encode()).decode() + "?="
    assert [f.kind for f in find_secrets({"subject": subject})] == ["stripe-key"]
    assert find_secrets({"subject": "=?utf-8?Q?Caf=C3=A9_menu?=", "body": "noon =E2=80=94 ok"}) == []
    assert _normalise("=?x-unknown?Q?ab?=") == "ab"  # an unknown charset: UTF-8


def test_a_list_of_hex_strings_is_one_run() -> None:
    found = find_secrets({"k": [f"{ord(c):02x}" for c in "AKIAZ4R7TQ2M9XK3W6PB"]})
    assert [f.kind for f in found] == ["aws-access-key (hex bytes)"]
    assert find_secrets({"palette": ["ff", "80", "00", "33", "cc", "99", "66", "11"]}) == []


_WORDS = st.sampled_from(["copper", "harbor", "maple", "juniper", "walrus", "orchid", "sunset", "river"])
_PASSWORDS = st.builds(
    lambda a, b, n, s: a.capitalize() + b.capitalize() + str(n) + s,
    _WORDS,
    _WORDS,
    st.integers(10, 99999),
    st.sampled_from(["!", "$", "&", "?", "@"]),  # (Morse has no "#", "%" or "*")
)
_ENCODERS = (
    lambda w: _decimal(w),
    lambda w: _decimal(w, ","),
    lambda w: " ".join(format(ord(c), "08b") for c in w),
    lambda w: _hex(w, "0x", ", "),
    lambda w: _hex(w, "%u00", ""),
    lambda w: _hex(w, "=", "").upper(),
    lambda w: "".join(f"\\{ord(c):03o}" for c in w),
    lambda w: _morse(w),
)


@settings(max_examples=40, deadline=None)
@given(_PASSWORDS, st.sampled_from(range(len(_ENCODERS))))
def test_a_password_in_any_base_is_found(word: str, encoder: int) -> None:
    assert text_has_secret("note: " + _ENCODERS[encoder](word))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(32, 126), min_size=8, max_size=40))
def test_numbers_in_order_spell_nothing(values: list[int]) -> None:
    assert _spelled(", ".join(map(str, sorted(values)))) == []


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=8, max_size=40))
def test_runs_spell_back_what_was_encoded(text: str) -> None:
    values = [ord(c) for c in text]
    if values in (sorted(values), sorted(values, reverse=True)):
        return
    assert ("char codes", text) in _spelled(_decimal(text))
    assert ("hex bytes", text) in _spelled(_hex(text, "0x", ", "))


@pytest.mark.xfail(strict=True, reason="a short run of capitals, digits and symbols is read as data (scores spell it)")
def test_known_limit_a_short_password_without_lower_case() -> None:
    assert text_has_secret(_decimal("XK9#MP2V!Q"))
