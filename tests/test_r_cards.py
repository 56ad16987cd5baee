"""Round fifteen (set N): card groups apart, CVV names read structurally, cards dictated or put together in posts."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import secret_cardgroups as groups
from policyengine.arguments import secret_cardwords as words
from policyengine.arguments import secret_cvvnames as cvvnames
from policyengine.arguments import secret_scanner as secrets
from policyengine.arguments.secret_scanner import _is_card, _luhn

CARD = "4916753807929236"
AMEX = "378239763598743"


def _stars(value: object) -> object:
    """A keep-last-4 mask, as mask-card-numbers asks."""
    text = str(value)
    return "*" * (len(text) - 4) + text[-4:]


def _fours(card: str) -> list[str]:
    return [card[i : i + 4] for i in range(0, 16, 4)]


# --- secret_cardgroups ---------------------------------------------------------------------------


def test_view_keeps_offsets_and_blanks_markup() -> None:
    text = '<span class="g">4916</span>\x1b[1;31m7538\x1b[0m \\texttt{0792}&#160;[b]9236[/b]'
    seen = groups.view(text)
    assert len(seen) == len(text)
    assert [seen[a:b] for a, b in [(m.start(), m.end()) for m in __import__("re").finditer(r"[0-9]+", seen)]] == [
        "4916",
        "7538",
        "0792",
        "9236",
    ]


@pytest.mark.parametrize(
    "layout",
    [
        "card:\n        {}\n        {}\n        {}\n        {}\n",
        "> {}\n> {}\n> {}\n> {}",
        "│ {} │\n│ {} │\n│ {} │\n│ {} │",
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        "{} and after that {} and after that {} and after that {}",
        "カード番号は{}、続けて次の四桁をお伝えしますと{}、続けて{}、最後は{}です",
    ],
)
def test_card_groups_read_layouts(layout: str) -> None:
    text = layout.format(*_fours(CARD))
    found = groups.card_groups(text, _is_card)
    assert len(found) == 1
    assert "".join(text[a:b] for a, b in found[0]) == CARD


def test_card_groups_read_amex_grouping() -> None:
    text = f"amex on file:\n   {AMEX[:4]}\n   {AMEX[4:10]}\n   {AMEX[10:]}"
    assert ["".join(text[a:b] for a, b in spans) for spans in groups.card_groups(text, _is_card)] == [AMEX]


def test_a_number_between_groups_breaks_the_chain() -> None:
    a, b, c, d = _fours(CARD)
    assert groups.card_groups(f"room {a}, floor 12, desk {b}, ext {c}, badge {d}", _is_card) == []


def test_a_long_filler_breaks_the_chain() -> None:
    a, b, c, d = _fours(CARD)
    long = " and then, after a very long and winding explanation, "
    assert groups.card_groups(f"{a}{long}{b}{long}{c}{long}{d}", _is_card) == []


def test_years_make_no_card() -> None:
    assert groups.card_groups("Founded in 2019, listed in 2022, merged in 2024, renamed in 2009.", _is_card) == []


def test_across_items() -> None:
    a, b, c, d = _fours(CARD)
    found = groups.across_items([f"first {a}", f"then {b}", f"then {c}", f"last {d}"], _is_card)
    assert found == [[(0, 6, 10), (1, 5, 9), (2, 5, 9), (3, 5, 9)]]


def test_hide_cards_masks_groups_apart_and_across_items() -> None:
    a, b, c, d = _fours(CARD)
    masked = secrets.hide_cards({"m": f"<i>{a}</i> x <i>{b}</i> y <i>{c}</i> z <i>{d}</i>"}, _stars)
    assert masked == {"m": f"<i>****</i> x <i>****</i> y <i>****</i> z <i>{d}</i>"}
    assert secrets.hide_cards([f"a {a}", f"b {b}", f"c {c}", f"d {d}"], _stars) == [
        "a ****",
        "b ****",
        "c ****",
        f"d {d}",
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=1000, max_value=9999), min_size=4, max_size=4),
    st.sampled_from([" x ", "\n  ", "</b><b>"]),
)
def test_groups_found_only_when_the_digits_are_a_card(numbers: list[int], filler: str) -> None:
    text = filler.join(str(n) for n in numbers)
    digits = "".join(str(n) for n in numbers)
    found = groups.card_groups(text, _is_card)
    years = sum(str(n)[:2] in ("19", "20") for n in numbers)
    assert bool(found) == (_is_card(digits) and years < 2)


def test_card_groups_is_cheap_on_many_numbers() -> None:
    text = " and then ".join(f"{n:04d}" for n in range(1000, 9000))
    start = time.process_time()
    groups.card_groups(text, _is_card)
    assert time.process_time() - start < 2.0


# --- secret_cvvnames -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "c_v_v",
        "C.V.V.",
        "C-V-C",
        "sec_cd",
        "secCd",
        "verif_cd",
        "card_vc",
        "code_on_back",
        "back_of_card_digits",
        "validation_code",
    ],
)
def test_cvv_names(key: str) -> None:
    assert secrets._cvv_name(key)


@pytest.mark.parametrize("key", ["backup_code", "callback_code", "card_id", "valid_until", "section_no", "v_c", "c_d"])
def test_not_cvv_names(key: str) -> None:
    assert not secrets._cvv_name(key)


def test_explicit_names_are_the_letters_apart() -> None:
    assert cvvnames.explicit_name(["c", "v", "v"])
    assert not cvvnames.explicit_name(["cvv"])  # the networks' table holds it
    assert not cvvnames.explicit_name(["sec", "cd"])  # needs a card's field beside it


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("CSV code 517 - card ending 6467", "CSV code *** - card ending 6467"),
        ("my 3-digit code: 628", "my 3-digit code: ***"),
        ("verif. code 196 for the visa", "verif. code *** for the visa"),
        ("sec code 561, exp 11/28", "sec code ***, exp 11/28"),
        ("C.V.V. 739", "C.V.V. ***"),
    ],
)
def test_cvv_prose_labels(text: str, masked: str) -> None:
    assert secrets.hide_cards(text, _stars) == masked


@pytest.mark.parametrize("text", ["Never store the CVV.", "CSV export finished: 2048 rows", "see section 3 code 4"])
def test_cvv_prose_without_a_code(text: str) -> None:
    assert secrets.hide_cards(text, _stars) == text


# --- secret_cardwords ------------------------------------------------------------------------------


def _spell(card: str, table: dict[str, int]) -> str:
    by_digit: dict[int, str] = {}
    for word, digit in table.items():
        by_digit.setdefault(digit, word)
    return " ".join(by_digit[int(c)] for c in card)


@pytest.mark.parametrize("language", sorted(words.DIGIT_WORDS))
def test_every_language_table_reads_a_card(language: str) -> None:
    text = "n: " + _spell(CARD, words.DIGIT_WORDS[language])
    assert [h[3] for h in words.word_hits(text, _is_card)] == [CARD]
    assert secrets.find_secrets({"message": text})


def test_every_table_has_ten_digits() -> None:
    for table in words.DIGIT_WORDS.values():
        assert set(table.values()) == set(range(10))


@pytest.mark.parametrize(
    "text",
    [
        f"card first half {CARD[:8]} and second half {CARD[8:]}",
        f"card = {CARD[:8]}|{CARD[8:]}",
        f"use {CARD[:8]}, then append {CARD[8:]}",
        f"0.{CARD} (drop the 0.)",
        f"ref 9{CARD} (ignore the leading 9)",
        f"({CARD[:4]} * 10^12) + {int(CARD[4:])}",
        f"{CARD[:4]}e12 + {int(CARD[4:])}",
    ],
)
def test_cards_put_together(text: str) -> None:
    assert CARD in {h[3] for h in words.hits(text, _is_card)}


@pytest.mark.parametrize(
    "text",
    [
        f"invoice {CARD[:6]} and ticket {CARD[6:]} are closed",
        f"Tracking 9{CARD} shipped today",
        "pi = 3.14159265358979 and e = 2.71828182845904",
        "Avogadro: 6.022e23 per mole; distance 1.5 * 10^8 km",
        "un deux trois quatre cinq six sept huit neuf",
        "go ni san yon go roku",
    ],
)
def test_numbers_without_cues_stay_numbers(text: str) -> None:
    assert words.hits(text, _is_card) == []


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=10**5, max_value=10**9),
    st.integers(min_value=10**5, max_value=10**9),
    st.sampled_from([" and booking ", "/", " | ", " then ", " end=", " to ", " next "]),
)
def test_two_ids_without_a_cue_are_never_a_card(a: int, b: int, filler: str) -> None:
    assert words.half_hits(f"order {a}{filler}{b}", _is_card) == []


def test_luhn_helper_agrees() -> None:
    assert _luhn(CARD) and _luhn(AMEX)


@pytest.mark.xfail(strict=True, reason="known limit: a numbered label (part 1, part 2) is a number between the groups")
def test_numbered_labels_between_groups() -> None:
    a, b, c, d = _fours(CARD)
    assert groups.card_groups(f"part 1 {a} part 2 {b} part 3 {c} part 4 {d}", _is_card)


@pytest.mark.xfail(strict=True, reason="known limit: a bare float's digits without a cue are a number")
def test_bare_fraction_without_cue() -> None:
    assert words.hits(f"0.{CARD}", _is_card)


def test_groups_across_items_keep_what_the_card_reader_masked() -> None:
    a, b, c, d = _fours(CARD)
    masked = secrets.hide_cards([f"{a} x 4111 1111 1111 1111", f"then {b}", f"then {c}", f"last {d}"], _stars)
    assert "4111 1111 1111" not in "".join(str(m) for m in masked)
