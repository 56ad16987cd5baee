"""Round fifteen's post readers (set N): spelling alphabets, case-folded tokens, flipped text, shifts, directives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import _secret_casefold as casefold
from policyengine.arguments import _secret_directives as directives
from policyengine.arguments import _secret_flipped as flipped
from policyengine.arguments import _secret_shifts as shifts
from policyengine.arguments import secret_scanner as scanner
from policyengine.arguments import secret_spoken as spoken

KEY_ID = "AKIAQ4ZK7MWR2PTXHN5B"


def _kinds(value: object) -> list[str]:
    return [finding.kind for finding in scanner.find_secrets(value)]


def _spell(key: str, alphabet: str) -> str:
    _, letters, digits = next(entry for entry in spoken.ALPHABETS if entry[0] == alphabet)
    by_letter = {letter: word for word, letter in reversed(list(letters.items()))}
    by_digit = {digit: word for word, digit in reversed(list(digits.items()))}
    return " ".join(by_letter[c.lower()].title() if c.isalpha() else by_digit[c] for c in key)


def _flip(text: str) -> str:
    return "".join(flipped.FLIP[c][0] if c in flipped.FLIP else c for c in text)[::-1]


# Spelling alphabets -------------------------------------------------------------------------


@pytest.mark.parametrize("alphabet", [name for name, _, _ in spoken.ALPHABETS])
def test_every_alphabet_spells_a_key_id(alphabet: str) -> None:
    text = f"id: {_spell(KEY_ID, alphabet)}"
    assert any(spelled.upper() == KEY_ID for _, _, spelled, _ in spoken.spelled_runs(text))
    assert any(kind.startswith("aws-access-key") for kind in _kinds({"m": text}))


def test_the_radio_reader_keeps_its_answers() -> None:
    assert spoken.radio_runs("pw: TANGO romeo niner hash ALFA bravo wun too") == [
        (4, 45, "Tr9#Ab12"),
    ]
    assert spoken.radio_runs("Flight Delta Two Four, gate Bravo niner") == []


def test_words_of_an_alphabet_that_spell_no_key_are_prose() -> None:
    assert _kinds({"m": "Tour: Berlin Hamburg Leipzig Jena Potsdam Essen Unna Goslar, then home"}) == []
    assert _kinds({"m": "Roster: Adam Mary John Frank David Edward Henry Paul Robert"}) == []


# Case-folded tokens -------------------------------------------------------------------------


def test_a_one_case_token_in_the_other_case_is_read_in_its_own() -> None:
    found = casefold.hits("SHPAT_707AAD75D46DF1F99B35C0A88A6815D4 and akiamqrtzwhkx3ndbpvy")
    assert [(kind, token) for kind, _, _, token in found] == [
        ("aws-access-key (case-folded)", "AKIAMQRTZWHKX3NDBPVY"),
        ("provider-token (case-folded)", "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"),
    ]


def test_a_token_in_its_own_case_is_left_to_the_shapes() -> None:
    assert casefold.hits("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") == []


@pytest.mark.parametrize(
    "text", ["#asiapacific2024", "SKU 12345", "BUILD 9F3C0A7B52E14D6B8A0C3E5F7D9B1A24", "key-value"]
)
def test_words_and_bare_hex_are_not_case_folded_tokens(text: str) -> None:
    assert casefold.hits(text) == []


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64))
def test_a_digitalocean_token_shouted_is_found_when_its_body_is_a_keys(body: str) -> None:
    digits = sum(c.isdigit() for c in body)
    found = casefold.hits(f"DOP_V1_{body.upper()}")
    assert bool(found) == (digits >= 2 and len(body) - digits >= 2)


# Flipped text -------------------------------------------------------------------------------


def test_unflip_undoes_the_usual_form_of_every_character() -> None:
    shared = {
        form
        for form in (forms[0] for forms in flipped.FLIP.values())
        if sum(forms[0] == form for forms in flipped.FLIP.values()) > 1
    }
    for char, forms in flipped.FLIP.items():
        if forms[0] not in shared:
            assert flipped.UNFLIP[ord(forms[0])] == char


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abcdefghijkmnopqrtuvwyABCDEFGJKLPQRTUVY123457_", min_size=8, max_size=40))
def test_a_flipped_word_is_turned_back(word: str) -> None:
    views = flipped.views(f"note: {_flip(word)}")
    assert f"note: {word}" in views


def test_flipped_prose_and_ascii_hold_no_view_worth_a_finding() -> None:
    assert flipped.views("Upside-down cake: 2 cups flour") == []
    assert _kinds({"m": _flip("happy birthday Sam, see you at 7")}) == []


def test_a_flipped_sentence_is_read_as_one() -> None:
    assert "password: Winter2024!Prod" in flipped.views(_flip("password: Winter2024!Prod"))


# Shifted prefixes ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(shifts.PREFIXES), st.integers(min_value=1, max_value=25))
def test_every_shift_of_every_prefix_is_read_back(prefix: str, shift: int) -> None:
    token = prefix + "Xq7RkT2mWz9LbN4cVh8J0pQs"
    assert any(reading == token for _, _, reading, _ in shifts.readings(shifts.shift_letters(token, shift)))


def test_atbash_is_read_back() -> None:
    token = "xoxb-8823410057-5521098834-aB3dE5fG7hJ9kL1mN2pQ"
    assert (0, len(token), token, "atbash") in shifts.readings(shifts.shift_letters(token, None))


def test_a_shifted_token_is_a_finding_and_a_slug_is_not() -> None:
    assert _kinds({"m": "token +7: " + shifts.shift_letters("glpat-Xq7RkT2mWz9LbN4cVh8J", 7)})
    assert _kinds({"m": "bot token +2: " + shifts.shift_letters("xoxb-8823410057-5521098834-aB3dE5fG7hJ9kL1mN2pQ", 2)})
    assert _kinds({"m": "shipped build-2024-release-candidate-final today"}) == []


# Directives ---------------------------------------------------------------------------------


def test_a_directive_line_is_read_and_prose_is_not() -> None:
    assert directives.lines("  auth_pass m4ple7ree\n") == [("auth_pass", 12, 21, "m4ple7ree")]
    assert directives.lines("Password policy\n") == []
    assert _kinds({"out": "bind 127.0.0.1\nrequirepass sunsetorchard77\n"}) == ["keyword (directive)"]
    assert _kinds({"out": "auth_type PASS\nauth_basic_user_file /etc/nginx/.htpasswd;\n"}) == []


# Known limits -------------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="out of scope: a keyword Vigenere has no fixed image of the prefix to gate on")
def test_a_vigenere_key_is_not_read() -> None:
    assert _kinds({"m": "Vigenere with the word KEY: KOGKIVSVAKIOQUUSBTYW"})


@pytest.mark.xfail(
    strict=True,
    reason="out of scope: a password introduced only by what it does ('get in with X', 'the magic word is X');"
    " a phrase table would refuse 'sign in with Google' and 'unlock it with your badge'",
)
def test_a_password_given_by_what_it_does_is_not_read() -> None:
    assert _kinds({"m": "the staging box opens with tidalmarsh42"})


@pytest.mark.xfail(strict=True, reason="not done this round: base32 in RFC 4648's extended-hex alphabet")
def test_base32hex_is_not_read() -> None:
    assert _kinds({"body": "CTK70NQI71LL8CJDA4SNCM1KET63ERI26DHLKDJP90ON6IHLCH330PQ169O4AE3B"})


@pytest.mark.xfail(strict=True, reason="not done this round: a one-letter u/p pair (the p is a password only beside u)")
def test_a_u_p_pair_is_not_read() -> None:
    assert _kinds({"basic": {"u": "svc", "p": "ambermeadowlark"}})
