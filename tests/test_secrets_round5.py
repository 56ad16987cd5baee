"""Round five of the secret detector (issue 22, red-team set A): what the rewrites leave, and the data they rest on."""

from __future__ import annotations

import hashlib
from pathlib import Path

from policyengine.arguments import secret_scanner
from policyengine.arguments.redact import REDACTED, Redaction
from policyengine.arguments.secret_scanner import find_secrets

SECRETS = Redaction(secrets=True)
CARDS = Redaction(cards=True, keep_last=4)
LANGUAGE = Path(secret_scanner.__file__).parent


def test_the_bip39_word_list_is_the_published_one_with_its_licence() -> None:
    data = (LANGUAGE / "bip39_english.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda"
    assert "MIT License" in (LANGUAGE / "bip39_english.LICENSE").read_text(encoding="utf-8")


def test_a_seed_phrase_is_hidden_in_place_and_its_numbering_stays() -> None:
    text = "mnemonic:\nlegal winner thank year wave sausage worth useful legal winner thank yellow\nend"
    assert SECRETS.apply(text) == f"mnemonic:\n{REDACTED}\nend"


def test_an_electrum_seed_is_a_seed_too() -> None:
    # Electrum's own seeds use the same words with a version hash instead of BIP-39's checksum.
    words = "wild father tree among universe such mobile favorite target dynamic credit identify"
    assert [f.kind for f in find_secrets(words)] == ["seed-phrase"]


def test_sibling_pieces_of_a_card_are_masked_as_the_card_not_piece_by_piece() -> None:
    # keep_last 4 on each four-digit piece alone would keep every piece whole.
    value = {"messages": {"USR002": ["4539", "1488", "0343", "6467"]}}
    assert CARDS.apply(value) == {"messages": {"USR002": ["****", "****", "****", "6467"]}}
    assert CARDS.apply(["45320151", "12830366"]) == ["********", "****0366"]
    assert Redaction(cards=True).apply(["4539", "1488", "0343", "6467"]) == [REDACTED] * 4


def test_a_labelled_cvv_is_masked_whole_in_any_spelling_and_a_status_word_stays() -> None:
    assert CARDS.apply("CVV: 737\nCard: 4539 1488 0343 6467") == "CVV: ***\nCard: ***************6467"
    assert CARDS.apply("security code is 1234") == "security code is ****"
    assert CARDS.apply("CVV: \uff17\uff13\uff17") == "CVV: ***"
    assert CARDS.apply("CVV: NzM3") == "CVV: ****"
    assert Redaction(cards=True).apply("cvc2=842") == f"cvc2={REDACTED}"
    for benign in ("CVV: required", "error code 404 at version 737", "card code ok"):
        assert CARDS.apply(benign) == benign


def test_an_env_example_is_left_exactly_as_it_was() -> None:
    # The reference ${DB_PASSWORD} was read as "${DB_PASSWORD" and redacted, leaving a stray "}".
    text = "API_KEY=your-api-key-here\nDB_PASSWORD=${DB_PASSWORD}\nAWS_ACCESS_KEY_ID=<your-key>\n"
    assert SECRETS.apply(text) == text
    assert "Zq7pQh66" not in SECRETS.apply("DB_PASSWORD=${DB_PASSWORD}Zq7pQh66")


def test_table_cells_are_hidden_in_place() -> None:
    text = "| service | user | password |\n|---|---|---|\n| prod db | admin | Zq7pQh66z9uzyEgd! |\n"
    assert SECRETS.apply(text) == text.replace("Zq7pQh66z9uzyEgd!", REDACTED)
    csv = 'user,"password",note\nbob,"Tk8#mQ2pL9x",hi\n'
    assert SECRETS.apply(csv) == csv.replace("Tk8#mQ2pL9x", REDACTED)


def test_terraform_output_stays_json_with_only_the_value_hidden() -> None:
    text = '{"db_password": {"sensitive": true, "type": "string", "value": "Zq7pQh66z9uzyEgd!"}, "r": {"value": "eu"}}'
    assert SECRETS.apply(text) == text.replace("Zq7pQh66z9uzyEgd!", REDACTED)


def test_an_unarmored_key_body_is_hidden_across_its_lines() -> None:
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\nc2gtZWQyNTUxOQAAACBky6vzFjcOsQwEzNIuevF5"
    assert SECRETS.apply(f"key:\n{body}\ndone") == f"key:\n{REDACTED}\ndone"


def test_a_key_header_alone_is_not_hidden_but_with_a_body_it_is() -> None:
    assert SECRETS.apply("grep -rn 'BEGIN PRIVATE KEY' tests/") == "grep -rn 'BEGIN PRIVATE KEY' tests/"
    text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    assert SECRETS.apply(text) == REDACTED


def test_a_password_before_its_word_is_hidden_in_place() -> None:
    assert SECRETS.apply("Use Xk9#mP2vLq!7 as the password for prod") == f"Use {REDACTED} as the password for prod"


def test_an_encoded_password_before_its_word_is_found() -> None:
    encoded = b"Xk9#mP2vLq!7".hex()
    assert find_secrets(f"Use {encoded} as the password for prod")


def test_a_connection_tuples_password_is_hidden_in_place() -> None:
    value = {"cfg": {"smtp": ["mail.example.com", 587, "ops", "Gp7!Wz3#Kq8v"]}}
    assert SECRETS.apply(value) == {"cfg": {"smtp": ["mail.example.com", 587, "ops", REDACTED]}}
    text = '{"smtp": ["mail.example.com", 587, "ops", "Gp7!Wz3#Kq8v"]}'
    assert SECRETS.apply(text) == text.replace("Gp7!Wz3#Kq8v", REDACTED)
