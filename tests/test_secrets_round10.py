"""Round ten (set I): credential names glued into one word and custom vendor key headers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine.arguments import secret_scanner as scanner


@pytest.mark.parametrize(
    "key",
    ["dbpass", "smtppass", "mysqlrootpass", "rootpw", "adminpwd", "vncpass", "ldappsw", "accesskey",
     "signingkey", "licensekey", "encryptionkey", "x-rapidapi-key", "dd-application-key", "x-octopus-api",
     "x-appwrite-key", "x-supabase-token"],
)  # fmt: skip
def test_a_glued_credential_name_is_a_credential(key: str) -> None:
    assert scanner.is_credential_key(key)


@pytest.mark.parametrize(
    "key",
    ["bypass", "compass", "lowpass", "oldpwd", "hotkey", "monkey", "turnkey", "primarykey", "sortkey",
     "dbhost", "dbport", "smtptls", "x-cache-key", "x-idempotency-key", "x-request-id", "x-api-version",
     "passport"],
)  # fmt: skip
def test_a_glued_look_alike_is_no_credential(key: str) -> None:
    assert not scanner.is_credential_key(key)


@given(st.from_regex(r"[a-z]{2,10}", fullmatch=True), st.sampled_from(["pass", "pwd", "pw", "psw"]))
def test_a_password_word_after_any_name_is_a_credential(name: str, word: str) -> None:
    key = name + word
    assert scanner.is_credential_key(key) or key in scanner._NOT_GLUED or scanner._key_words(key) != [key]


@given(st.sampled_from(sorted(scanner._GLUED_ENDINGS)))
def test_every_two_word_ending_glued_is_a_credential(glued: str) -> None:
    assert scanner.is_credential_key(glued)


@pytest.mark.parametrize("value", ["--lock", "--iscrypted", "--plaintext"])
def test_a_long_option_in_place_of_the_value_is_no_secret(value: str) -> None:
    assert not scanner._secret_scalar(value)


@pytest.mark.parametrize(
    "text",
    [
        "C: AUTH PLAIN AGRlcGxveUBhY21lLmlvAHJpdmVyc3RvbmU0NDE3",
        "a2 AUTHENTICATE PLAIN\nAG9wc0BhY21lLmlvAGhvbGxvd2NyZXN0ODg=",
        "334 UGFzc3dvcmQ6\nbGFudGVybmZpZWxkMjA4",
        "a002 LOGIN deploy@acme.io copperhollowfern",
        "USER deploy\n+OK\nPASS quietharbormeadow",
        "PRIVMSG NickServ :IDENTIFY deploybot orchardlane9921",
        '"AUTH" "default" "saltmarsh3306"',
        "*3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$13\r\nemberglade613\r\n",
        "open ftp.acme.io\nuser upload fernvalley31\n",
    ],
)
def test_a_password_in_its_protocols_place_is_found(text: str) -> None:
    assert scanner.text_has_secret(text)


@pytest.mark.parametrize(
    "text",
    [
        "The relay advertises 250-AUTH PLAIN LOGIN but rejects AUTH PLAIN with 535 5.7.8; LOGIN works.",
        "Server sends 334 VXNlcm5hbWU6 then 334 UGFzc3dvcmQ6 ('Password:'); our client times out.",
        "a002 LOGIN returns NO [AUTHENTICATIONFAILED] since the TLS change",
        "POP3: USER works, PASS is rejected with -ERR [AUTH] since the TLS change",
        "bouncer needs CAP REQ :sasl before AUTHENTICATE PLAIN, otherwise NickServ IDENTIFY is the fallback",
        'MONITOR shows "AUTH" "default" "<hidden>" every 2s',
        "PASS src/app.test.js\nPASS  src/util.test.ts (5 ms)\n",
        "AUTH LOGIN prompts",
        "user root logged in from 10.0.0.4",
    ],
)
def test_talk_about_login_protocols_is_no_secret(text: str) -> None:
    assert not scanner.text_has_secret(text)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=6, max_size=24))
def test_any_sasl_plain_blob_after_auth_is_found(password: str) -> None:
    import base64

    blob = base64.b64encode(b"\x00ops@example.org\x00" + password.encode()).decode()
    assert scanner.text_has_secret(f"AUTH PLAIN {blob}")


@pytest.mark.parametrize(
    "key",
    ["cle_api", "clave_api", "chiave_segreta", "chave_secreta", "jeton_acces", "zugangsschluessel", "токен_доступа",
     "访问令牌", "APIキー", "アクセストークン", "비밀키", "klucz_api", "clé_secrète", "cléAPI"],
)  # fmt: skip
def test_a_key_or_token_word_in_another_language_with_what_it_opens_is_a_credential(key: str) -> None:
    assert scanner.is_credential_key(key)


@pytest.mark.parametrize(
    "key",
    ["clave_api_version", "jetons", "jeton", "cle", "chiave", "令牌数", "トークン上限", "토큰 수", "schluessel_nummer",
     "cle_primaire", "llave_foranea", "ключ_сортировки"],
)  # fmt: skip
def test_a_foreign_key_word_alone_or_about_the_key_is_no_credential(key: str) -> None:
    assert not scanner.is_credential_key(key)


@given(st.text(alphabet="0123456789abcdef", min_size=66, max_size=66))
def test_a_share_of_66_hex_is_found_unless_it_is_a_compressed_public_key(share: str) -> None:
    found = scanner.text_has_secret(f"share: {share}")
    assert found or share[:2] in ("02", "03")
