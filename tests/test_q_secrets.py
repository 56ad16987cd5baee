"""Round fifteen (set M): cards as a bare word beside their expiry, CVVs answered, repository filters."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from policyengine import PolicyLayers, Registry
from policyengine.arguments import roles
from policyengine.arguments import secret_cardforms as cardforms
from policyengine.arguments import secret_documents as documents
from policyengine.arguments import secret_scanner as scanner
from policyengine.arguments.roles import Role
from policyengine.enforce.evaluate import evaluate_sync

VISA = "4556737586899855"  # Luhn-valid, Visa's length and prefix
B36 = "18v88cjrfrj"  # VISA in base 36
HEX = format(int(VISA), "x")


def _b36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out


def _luhn_card(prefix: str, length: int, body: str) -> str:
    """A Luhn-valid number of a length from a prefix and filler digits."""
    head = (prefix + body)[: length - 1]
    for check in "0123456789":
        if scanner._luhn(head + check):
            return head + check
    raise AssertionError("no check digit")


def _cards(value: object) -> list[str]:
    return [finding.kind for finding in scanner.find_secrets(value) if finding.kind.startswith("card-number")]


def _hits(text: str) -> list[str]:
    return [digits for _, _, _, digits in cardforms.hits(text, scanner._is_card)]


# Cards beside their expiry --------------------------------------------------------------------


def test_the_base36_sample_is_the_card() -> None:
    assert _b36(int(VISA)) == B36 and int(HEX, 16) == int(VISA)


@pytest.mark.parametrize(
    "text",
    [
        f"{B36} exp 04/29",
        f"expiry: 11/27 then {HEX}",
        f"valid thru 0330 {B36}",
        f"n={B36}&e=0828",
        f"curl -d 'x={HEX}&ed=12-29' https://example.net",
        f"MM/YY 05/2031 {B36}",
    ],
)
def test_a_bare_word_within_reach_of_an_expiry_is_a_card(text: str) -> None:
    assert _hits(text) == [VISA]


@pytest.mark.parametrize(
    "text",
    [
        f"{B36} exported 0429 rows",  # no expiry's name inside a word
        f"id {B36} at 04/29",  # a date with no expiry's name
        f"n={B36}&page=0828",  # a pair under a key that names something else
        f"{B36}\nexp 04/29",  # the expiry on another line
        f"e=0828 {'x' * 70} {B36}",  # out of reach
        "sha 4e2a91c0d3 exp 04/29",  # a word whose value is no card
    ],
)
def test_a_bare_word_without_an_expiry_beside_it_is_not_read(text: str) -> None:
    assert _hits(text) == []


def test_a_word_named_and_beside_an_expiry_is_one_card() -> None:
    assert _hits(f"card {B36} exp 04/29") == [VISA]


@pytest.mark.parametrize(
    "value",
    [
        {"card": B36},
        {"cardNumber": HEX},
        {"cc_num": B36},
        {"c": B36, "exp": "0429"},
        {"c": B36, "e": "04/29"},
        {"c": B36, "exp_month": "4", "exp_year": "2029"},
        {"c": HEX, "card_cvc": "123"},
        {"c": {"n": B36, "x": "12/30"}},
        [B36, "04/29"],
    ],
)
def test_objects_vouch_for_a_bare_word_by_a_card_key_or_an_expiry_or_cvv_sibling(value: object) -> None:
    assert _cards(value)


@pytest.mark.parametrize(
    "value",
    [
        {"id": B36},
        {"id": B36, "expires": "3600"},  # a lifetime in seconds
        {"id": B36, "exp": 1893456000},  # a JWT's claim
        {"id": B36, "page": "0429"},  # a month and year's shape under a key naming something else
        {"id": B36, "valid": "1"},
        [B36, "0429"],  # in a list, a month and year only with its separator
    ],
)
def test_objects_without_a_cards_context_leave_a_word_alone(value: object) -> None:
    assert _cards(value) == []


@pytest.mark.parametrize(
    ("digits", "issued"),
    [
        ("4111111111111", True),
        ("5111111111111", False),  # 13 digits are Visa's only
        ("36111111111111", True),
        ("29111111111111", False),
        ("371111111111111", True),
        ("5511111111111111", True),
        ("3111111111111111", False),  # 16 digits from 3 are JCB's (35)
        ("6011111111111111111", True),
        ("71111111111111111", False),
    ],
)
def test_issued_lengths(digits: str, issued: bool) -> None:
    assert cardforms._issued(digits) is issued


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="0123456789", min_size=14, max_size=14))
@example("53157819102010")  # its hex form, 10197244590045, has no letter (found by this test, session 42)
def test_an_issued_card_in_base36_or_hex_beside_an_expiry_is_read(body: str) -> None:
    card = _luhn_card("4", 16, body)
    assert _hits(f"{_b36(int(card))} exp 04/29") == [card]
    assert _hits(f"n={format(int(card), 'x')}&e=0429") == [card]


def test_a_word_of_decimal_digits_beside_a_card_context_is_read_as_hex_unless_it_is_a_card_itself() -> None:
    assert _hits("n=10197244590045&e=0429") == ["4531578191020101"]
    assert _hits("card: 10197244590045") == ["4531578191020101"]
    assert _hits("4111111111111111 exp 04/29") == []  # a card in decimal is the card reader's, reported once
    # An id of digits whose hex value is no issued Luhn-valid card stays an id (2-4.5% of random 13-16-digit ones are).
    for benign in ("order 123456789012 exp 04/29", "ref 2024061500123 valid thru 11/27", "card: 9876543210987654"):
        assert _hits(benign) == [], benign
    assert [f.kind for f in scanner.find_secrets({"q": "4111111111111111 exp 04/29"})] == ["card-number"]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="0123456789abcdefghijklmnopqrstuvwxyz", min_size=9, max_size=16))
def test_what_the_expiry_reader_reports_is_an_issued_luhn_valid_card(word: str) -> None:
    for digits in _hits(f"{word} exp 04/29"):
        assert cardforms._issued(digits) and scanner._is_card(digits)
        assert digits in (str(int(word, 16)) if all(c in "0123456789abcdef" for c in word) else "", str(int(word, 36)))


# CVVs asked for and answered ------------------------------------------------------------------


def _cvv(text: str) -> list[str]:
    return [text[a:b] for a, b in documents.cvv_spans(text, scanner._cvv_name)]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("agent: the CVV?\ncaller: sure, it's 5 0 3\n", "5 0 3"),
        ("what is the CVC? it is 4-1-7, ok", "4-1-7"),
        ("Security code:\n\n  nine one two\n", "nine one two"),
        ("Q: card verification code?\nA: 3192\n", "3192"),
    ],
)
def test_a_cvv_asked_for_is_read_in_its_answer(text: str, code: str) -> None:
    assert _cvv(text) == [code]


@pytest.mark.parametrize(
    "text",
    [
        "Is a CVV required?\nNo.",
        "Where is the CVV?\nOn the back of the card.",
        "CVV:\n(left empty)",
        "Seats 7 3 9?\nrow 4 1 2",
    ],
)
def test_a_question_with_no_code_after_it_holds_none(text: str) -> None:
    assert _cvv(text) == []


def test_a_cvv_answered_is_masked_in_a_result() -> None:
    text = "agent: the CVV?\ncaller: sure, it's 5 0 3\n"
    assert "5 0 3" not in str(scanner.hide_cards({"t": text}, lambda _: "*"))


# Repository filters ---------------------------------------------------------------------------


def _roles(arguments: dict[str, object]) -> dict[Role, list[object]]:
    return {role: values for role, values in roles.collect_all(arguments).values.items() if values}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("repo_filter", "github.com/acme/*"),
        ("repoFilter", "acme/api-*"),
        ("include_repos", "acme/*"),
        ("org_filter", "*"),
        ("host_mask", "*.example.net"),
    ],
)
def test_a_remote_filter_selecting_remote_places_is_no_file_glob(key: str, value: str) -> None:
    assert Role.GLOB not in _roles({key: value})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("repo_filter", ".e*"),
        ("repo_filter", "acme/.en?"),
        ("repo_filter", "~/*"),
        ("repo_filter", "/srv/*"),
        ("repo_path_filter", "config/*"),
        ("file_filter", "github.com/acme/*"),
        ("include", "github.com/*"),
        ("filter", "src/*"),
    ],
)
def test_a_file_glob_stays_one(key: str, value: str) -> None:
    assert Role.GLOB in _roles({key: value})


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["repo_filter", "include_repos", "org_glob", "hostFilter"]),
    st.text(alphabet="abc-_*?/", max_size=12),
    st.text(alphabet="abce*?[]nv", min_size=1, max_size=6),
)
def test_a_dot_part_under_a_remote_filter_is_still_a_file_glob(key: str, head: str, name: str) -> None:
    value = f"{head.rstrip('/')}/.{name}" if head.strip("/") else f".{name}"
    if any(c in value for c in "*?["):
        assert Role.GLOB in _roles({key: value})


# Known limits ---------------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="out of scope: a card's expiry and CVV as bare numbers, with no expiry's name")
def test_a_bare_word_beside_an_unnamed_expiry_and_cvv() -> None:
    assert _hits(f"{B36} 04/29 123") == [VISA]


@pytest.mark.xfail(
    strict=True, reason="over-reach kept: after a CVV question, the answer's first three or four digits are masked"
)
def test_digits_answering_a_cvv_question_with_no_code() -> None:
    assert _cvv("Is a CVV required?\nNo, flight 4 1 2 leaves at nine") == []


@pytest.mark.xfail(
    strict=True,
    reason="not this reader's: baseline's no-deletes-through-shell reads the first item of any list argument as a"
    " launched program, and a glob there may be a deleter ({repos: [github.com/acme/*]})",
)
def test_a_list_of_repository_globs_is_no_program() -> None:
    registry = Registry()
    PolicyLayers.install(registry, [Path(__file__).resolve().parent.parent / "policies" / "baseline"])
    evaluation = evaluate_sync(
        registry, "grep_sourcegraph", {"query": "x", "repos": ["github.com/acme/*"]}, call_id="t"
    )
    assert evaluation is not None and evaluation.decision.value != "deny"
