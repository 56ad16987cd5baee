"""Round thirteen (set K): numerals folded for cards, credential dumps and files read by layout, flat lists."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine.arguments import secret_dumps as dumps
from policyengine.arguments import secret_layouts as layouts
from policyengine.arguments import secret_numerals as numerals
from policyengine.arguments import secret_reader as reader
from policyengine.arguments import secret_scanner as scanner

R = "[REDACTED]"


def _hide(_value: Any) -> str:
    return R


def _redact(text: str) -> Any:
    return scanner.hide_secrets(text, _hide)


# ---------------------------------------------------------------------------------------------
# secret_numerals
# ---------------------------------------------------------------------------------------------


def test_numerals_hold_the_cjk_and_dingbat_digits_and_no_decimal_digit() -> None:
    table = numerals.numerals()
    pairs = (("〇一二三四五六七八九", "0123456789"), ("❶❷❸⓿", "1230"), ("零壹贰叁肆伍陆柒捌玖", "0123456789"))
    for text, digits in pairs:
        assert "".join(table[ord(c)] for c in text) == digits
    assert not any(unicodedata.category(chr(code)) == "Nd" for code in table)
    assert ord("Ⅳ") not in table and ord("①") not in table  # NFKD folds them already (to IV, to 1)


@given(st.text(alphabet=st.sampled_from(sorted(map(chr, numerals.numerals()))), min_size=1, max_size=40))
def test_fold_keeps_length_and_reads_each_numeral_by_its_value(text: str) -> None:
    folded = numerals.fold(text)
    assert len(folded) == len(text)
    assert folded.isascii() and folded.isdigit()
    assert all(int(d) == int(unicodedata.numeric(c)) for c, d in zip(text, folded, strict=True))


@given(st.text(max_size=60))
def test_digit_value_agrees_with_unicode_where_it_knows_a_digit(text: str) -> None:
    for char in text:
        value = numerals.digit_value(char)
        if unicodedata.digit(char, None) is not None:
            assert value == unicodedata.digit(char)
        elif value is not None:
            assert value == unicodedata.numeric(char)


def test_has_numeral_needs_no_pass_for_ascii() -> None:
    assert not numerals.has_numeral("4111 1111 1111 1111")
    assert numerals.has_numeral("卡 四一一一")
    assert not numerals.has_numeral("日本語のテキスト")


@pytest.mark.parametrize(
    "text",
    [
        "四一一一 一一一一 一一一一 一一一一",
        "❹❶❶❶❶❶❶❶❶❶❶❶❶❶❶❶",
        "肆壹壹壹-壹壹壹壹-壹壹壹壹-壹壹壹壹",
        "〤〡〡〡〡〡〡〡〡〡〡〡〡〡〡〡",
    ],
)
def test_a_card_in_numerals_is_a_card(text: str) -> None:
    assert scanner.card_numbers(text) == ["4111111111111111"]
    assert scanner.find_secrets({"message": f"pay with {text}"})
    masked = scanner.hide_cards(f"pay {text} now", lambda v: "*" * (len(str(v)) - 4) + str(v)[-4:])
    # The last four as written, or read (the carriers' reader masks enclosed digits with the card read in place).
    assert masked.startswith("pay ***") and masked.endswith((text[-4:] + " now", "1111 now"))


def test_numerals_in_words_are_no_card() -> None:
    assert scanner.card_numbers("我们一起去三里屯\uff0c七点见\uff0c一二三四五") == []
    assert not scanner.find_secrets({"content": "Steps: ❶ clone ❷ build ❸ test ❹ ship"})


# ---------------------------------------------------------------------------------------------
# secret_dumps: password_like
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "word", ["CedarStone5019", "s3cret!xy", "$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/", "{SSHA}Zm9vYmFyYmF6"]
)
def test_password_like(word: str) -> None:
    assert dumps.password_like(word)


@pytest.mark.parametrize(
    "word",
    ["1.25-alpine", "7.2.4", "3fa9c2d", "README.md", "example.com", "changeme", "\\Windows\\Sys32", "a/b/C1d2", "x"],
)
def test_not_password_like(word: str) -> None:
    assert not dumps.password_like(word)


# ---------------------------------------------------------------------------------------------
# secret_dumps: layouts, through the redaction
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[smtp.example.net]:587 ops@example.net:Sunset5Dawn\n", f"[smtp.example.net]:587 ops@example.net:{R}\n"),
        ('"bob" * "Summer4Breeze" *\n', f'"bob" * "{R}" *\n'),
        ("bob\nSilver6Gate\n", f"bob\n{R}\n"),
        ("backup:Willow7Breeze\nmirror:Granite2Dawn\n", f"backup:{R}\nmirror:{R}\n"),
        ("bob:{PLAIN}Ivory5Light::::\n", "bob:{PLAIN}" + R + "::::\n"),
        ("https://dav.example.net/dav alice Orchid3Ridge\n", f"https://dav.example.net/dav alice {R}\n"),
        ("$USER1$=/usr/lib/nagios/plugins\n$USER4$=Marble5Bay\n", f"$USER1$=/usr/lib/nagios/plugins\n$USER4$={R}\n"),
        ('203.0.113.5 198.51.100.7 : PSK "Sunset8Stone"\n', f'203.0.113.5 198.51.100.7 : PSK "{R}"\n'),
        ("username ops password 0 Copper2River\n", f"username ops password 0 {R}\n"),
    ],
)
def test_service_credential_files(text: str, expected: str) -> None:
    assert _redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\t * NTLM     : 2e56a0b1ef1253682c95dd91aeee6fc5\n", f"\t * NTLM     : {R}\n"),
        ("  Hash NTLM: 41551dc5e93e304fe4d75f2ed268c1cd\n", f"  Hash NTLM: {R}\n"),
        ("    ntlm- 0: 41551dc5e93e304fe4d75f2ed268c1cd\n", f"    ntlm- 0: {R}\n"),
        ("\t   rc4_hmac_nt       24fe6c2560dc705f595da8ab9874f433\n", f"\t   rc4_hmac_nt       {R}\n"),
        (
            "ACME\\bob:aes256-cts-hmac-sha1-96:35e4f82605a5de62f8dbdc6c8216ae1c4e9f003fe666a9f04ba08d28be0af0c1\n",
            f"ACME\\bob:aes256-cts-hmac-sha1-96:{R}\n",
        ),
        (
            "carol:1001:XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX:76FF76CC6E55C221586D7F70122ED59F:[U    ]:LCT-65000000:\n",
            f"carol:1001:XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX:{R}:[U    ]:LCT-65000000:\n",
        ),
        (
            "   3 host/ws01.acme@ACME.LOCAL (0xd757139b09dd2460833929172d56b660da68482cd09fcfde108c07dd3dc37f46)\n",
            f"   3 host/ws01.acme@ACME.LOCAL (0x{R})\n",
        ),
        ("[*] DefaultPassword \n(Unknown User):Willow4Dawn\n", f"[*] DefaultPassword \n(Unknown User):{R}\n"),
    ],
)
def test_windows_and_kerberos_dumps(text: str, expected: str) -> None:
    assert _redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "alice:x:1000:1000:Alice Lee,,,:/home/alice:/bin/bash\n",
        "PasswordAuthentication no\nPermitEmptyPasswords no\n",
        "listener 1883\npassword_file /etc/mosquitto/passwd\nallow_anonymous false\n",
        "# client        server  secret                  IP addresses\n",
        "nginx:1.25-alpine\nredis:7.2.4\n",
        "main\n3fa9c2d1e4b5a6f708192a3b4c5d6e7f80912a3b\n",
        "SHA256 hash of setup.exe:\n8fb6d5f37e8055ce720bd0b1d56587f88c0071f285966ba17e72b2b12672aa73\n",
        "sha1: 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12\n",
        "\t * Username : alice\n\t * Password : (null)\n",
        "maxmemory\n0\n",
        "id\nemail\npassword\ncreated_at\n",
        "C:\\Windows\\System32",
        "Default principal: bob@ACME.LOCAL\n12/06/26 07:00:01  12/06/26 17:00:01  krbtgt/ACME.LOCAL@ACME.LOCAL\n",
    ],
)
def test_look_alikes_stay(text: str) -> None:
    assert _redact(text) == text
    assert not reader.found_secrets({"text": text})


def test_user_password_lines_count_as_a_file_or_as_two_accounts() -> None:
    assert _redact("backup:Willow7Breeze\n") == f"backup:{R}\n"
    assert _redact("hi\nbackup:Willow7Breeze\nmirror:Granite2Dawn\n") == f"hi\nbackup:{R}\nmirror:{R}\n"
    # One such line among other lines is as often a tag or a name.
    assert _redact("built image\napp:Release2024\n") == "built image\napp:Release2024\n"


def test_bare_replies_read_in_pairs() -> None:
    text = "dbfilename\ndump.rdb\nrequirepass\nCedar9Bay\nmaxmemory\n0\n"
    assert _redact(text) == f"dbfilename\ndump.rdb\nrequirepass\n{R}\nmaxmemory\n0\n"
    # Out of step (an odd block): no pairs are read.
    assert _redact("header\nrequirepass\nCedar9Bay\n") == "header\nrequirepass\nCedar9Bay\n"


def test_flat_lists() -> None:
    def is_name(name: str) -> bool:
        return bool(scanner.is_credential_key(name))

    assert layouts.alternating_values(["host", "db", "password", "x1", "plan", "pro"], is_name) == [3]
    assert layouts.alternating_values(["requirepass", "x1"], is_name) == []  # a pair is read as one already
    assert layouts.alternating_values(["a b", "x", "password", "y"], is_name) == []  # not names
    assert layouts.alternating_values(["timeout", "30", "token_ttl_seconds", "3600"], is_name) == []
    assert scanner.hide_secrets(["user", "bob", "pass", "Maple4Stone"], _hide) == ["user", "bob", "pass", R]


@given(st.lists(st.text(max_size=12), max_size=10))
def test_alternating_values_points_at_values_only(items: list[str]) -> None:
    found = layouts.alternating_values(items, lambda name: "pass" in name)
    assert all(i % 2 == 1 and "pass" in items[i - 1] for i in found)


@given(st.text(max_size=200))
def test_dump_spans_stay_inside_the_text(text: str) -> None:
    for start, end in dumps.dump_spans(text, scanner.is_credential_key, lambda _v: False):
        assert 0 <= start < end <= len(text)


@given(st.text(alphabet=st.characters(blacklist_characters=":\n=*/"), max_size=120))
def test_the_cheap_gate_passes_every_text_a_reader_finds_something_in(text: str) -> None:
    if not dumps.maybe_dump(text):
        assert dumps.dump_spans(text, scanner.is_credential_key, lambda _v: False) == []


@pytest.mark.xfail(
    strict=True,
    reason=(
        "known limit: Sino-Korean numerals written in Hangul (il, i, sam, sa: 일이삼사) are syllables with no "
        "numeric value in Unicode, like digits spelled as English words; only the English, French, Spanish, "
        "German, Italian, Portuguese and Dutch words are read (secret_layouts' spelled cards)"
    ),
)
def test_a_card_in_hangul_numerals_is_a_card() -> None:
    assert scanner.card_numbers("사일일일 일일일일 일일일일 일일일일") == ["4111111111111111"]


def _printer_patterns() -> list[Any]:
    import re2

    from support import load_yaml

    lists = load_yaml(Path(__file__).resolve().parent.parent / "policies" / "baseline" / "lists.yaml")
    return [re2.compile(p) for p in lists["lists"]["credential_printing_commands"]]


@pytest.mark.parametrize(
    ("command", "printer"),
    [
        (
            "python3 -c \"import subprocess;print(subprocess.check_output(['op','read','op://p/db/pw']).decode())\"",
            True,
        ),
        ("node -e \"console.log(require('child_process').execSync('bw get password db').toString())\"", True),
        ("perl -e 'print `pass show infra/smtp`'", True),
        ("ruby -e 'puts %x(secret-tool lookup service db)'", True),
        ("make print-db-password", True),
        ("bash scripts/get-db-pass.sh", True),
        ("npm run --silent secret:get", True),
        ("python3 -c 'import sys; print(sys.version)'", False),
        ("make build", False),
        ("bash scripts/deploy.sh", False),
        ("grep -r get-token src/", False),
    ],
)
def test_baseline_reads_printers_hidden_in_code_and_script_names(command: str, printer: bool) -> None:
    line = re.sub(r"[\\'\"]", "", command)  # the rule's regex_replace: the quotes the shell drops
    assert any(p.search(line) for p in _printer_patterns()) is printer
