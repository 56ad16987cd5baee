"""Round eight of the secret detector, labels and prose (set G): each class both ways.

The password's word in the languages of the EU, the UN and the most spoken ones (secret_labels.
PASSWORD_WORDS), misspelt, a value of any shape after a strong label, PINs and door codes told in
prose, generated codes after a credential's noun, a login's fields in a query string and passwords
cut by punctuation. The attack values are new spellings of set G's classes, not its own calls.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import secret_labels as labels
from policyengine.arguments.secret_scanner import find_secrets, hide_secrets, is_credential_key
from support import scaled


def _found(value: Any) -> bool:
    """True when the scanner finds a secret in the value."""
    return bool(find_secrets(value))


def _hidden(value: Any) -> str:
    """The value with its secrets replaced, as text."""
    return str(hide_secrets(value, lambda _: "[REDACTED]"))


# --- the table -------------------------------------------------------------------------------------

EU = [
    "bg",
    "cs",
    "da",
    "de",
    "el",
    "en",
    "es",
    "et",
    "fi",
    "fr",
    "ga",
    "hr",
    "hu",
    "it",
    "lt",
    "lv",
    "mt",
    "nl",
    "pl",
    "pt",
    "ro",
    "sk",
    "sl",
    "sv",
]
UN = ["ar", "zh", "en", "fr", "ru", "es"]
MOST_SPOKEN = [
    "en",
    "zh",
    "hi",
    "es",
    "fr",
    "ar",
    "bn",
    "pt",
    "ru",
    "ur",
    "id",
    "de",
    "ja",
    "mr",
    "te",
    "tr",
    "ta",
    "vi",
    "ko",
    "fa",
    "jv",
    "it",
    "ha",
    "gu",
    "th",
    "am",
    "pa",
]


def test_the_table_covers_the_eu_the_un_and_the_most_spoken_languages() -> None:
    missing = [code for code in (*EU, *UN, *MOST_SPOKEN) if code not in labels.PASSWORD_WORDS]
    assert missing == []


@pytest.mark.parametrize("word", sorted({w for words in labels.PASSWORD_WORDS.values() for w in words}))
def test_every_word_of_the_table_is_a_credential_key(word: str) -> None:
    assert is_credential_key(word), word
    assert is_credential_key(f"db_{word}" if word.isascii() else word), word


@pytest.mark.parametrize(
    ("word", "folded"),
    [
        ("Contraseña", "contrasena"),
        ("şifrə", "sifre"),
        ("Hasło", "haslo"),
        ("LÖSENORD", "losenord"),
        ("jelszó", "jelszo"),
    ],
)
def test_fold_drops_accents_and_spells_whole_letters_in_ascii(word: str, folded: str) -> None:
    assert labels.fold(word) == folded


@settings(max_examples=scaled(200), deadline=None)
@given(st.text(max_size=40))
def test_fold_is_idempotent(text: str) -> None:
    assert labels.fold(labels.fold(text)) == labels.fold(text)


# --- the word misspelt -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "word", ["passwrd", "pasword", "passowrd", "pssword", "pword", "pwrd", "PASSWRD", "Pasword", "passwrod", "p.w."]
)
def test_misspellings_of_password_are_read_as_it(word: str) -> None:
    assert labels.password_misspelling(word)
    assert is_credential_key(word)


@pytest.mark.parametrize("word", ["powered", "prowled", "passport", "passage", "pass", "sword", "password_hint"])
def test_words_that_only_resemble_password_are_not_it(word: str) -> None:
    assert not labels.password_misspelling(word)


@settings(max_examples=scaled(200), deadline=None)
@given(st.integers(min_value=1, max_value=7), st.sampled_from("aeiou"), st.sampled_from(["a", "o"]))
def test_a_vowel_added_dropped_or_a_letter_doubled_in_password_is_still_password(
    at: int, vowel: str, drop: str
) -> None:
    word = "password"
    assert labels.password_misspelling(word[:at] + vowel + word[at:])
    assert labels.password_misspelling(word.replace(drop, "", 1))
    assert labels.password_misspelling(word[:at] + word[at] + word[at:])


# --- labels in other languages: keys, text and prose -------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["wachtwoord", "adgangskode", "salasõna", "slaptažodis", "parolă", "geslo", "passord", "senha", "pasahitza",
     "fjalëkalim", "密码", "パスワード", "비밀번호", "كلمة المرور", "סיסמה", "รหัสผ่าน", "mật khẩu",
     "Benutzerkennwort", "admin_haslo", "SMTP_PASSWRD", "db-pword"],
)  # fmt: skip
def test_a_value_under_a_foreign_or_misspelt_password_key_is_hidden(key: str) -> None:
    value = {"user": "ana", key: "lumière-du-nord"}
    assert _found(value), key
    assert "lumière-du-nord" not in _hidden(value), key


@pytest.mark.parametrize(
    "text",
    [
        "Le mot de passe du serveur est lumiere2291.",
        "A senha do roteador é pinheiro7731",
        "wachtwoord: tulpenveld-42",
        "haslo do serwera to zielonylas77",
        "пароль от сервера: berezka-93",
        "KENNWORT=sommerwind2024",
        "Het wachtwoord voor de NAS is molenwiek88",
    ],
)
def test_a_password_after_its_word_in_another_language_is_found(text: str) -> None:
    assert _found(text), text


# --- a value of any shape after a strong label ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("the guest wifi password is lavenderfields, enjoy", "lavenderfields"),
        ("our NAS password was changed, it is now copperkettle", "copperkettle"),
        ("passphrase: silver otter river lantern", "silver otter river lantern"),
        ("the passphrase for the backup is the lazy purple walrus", "lazy purple walrus"),
        ("password for bob on the printer is dandelion", "dandelion"),
    ],
)
def test_a_letters_only_password_after_a_strong_label_is_found_and_hidden(text: str, secret: str) -> None:
    assert _found(text), text
    assert secret not in _hidden({"text": text}), text


@pytest.mark.parametrize(
    "text",
    [
        "password policy", "the password field", "password reset link", "password must be 12 chars",
        "your password is incorrect.", "the password is stored in the vault", "The password is case sensitive.",
        "how to reset a forgotten password on macOS", "password field shows no hint on mobile",
        "the password is the same as before", "password: see the wiki", "passphrase: ask the security team",
        "Catalan strings: 'contrasenya' = password, 'usuari' = user", "the pwd is characters",
        "Your password was changed successfully.", "password: unchanged since march",
        "La clave del éxito es la constancia.", "Das Kennwort muss 12 Zeichen lang sein",
    ],
)  # fmt: skip
def test_prose_about_passwords_without_a_value_is_no_secret(text: str) -> None:
    assert not _found(text), text


# --- PINs and codes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("my PIN is 4821", "4821"),
        ("PIN code: 0042", "0042"),
        ("card pin 1234", "1234"),
        ("the gate code for the yard is 9051", "9051"),
        ("SIM PUK: 11223344", "11223344"),
        ("locker combination 07-21-33", "07-21-33"),
        ("phone passcode is 2580", "2580"),
    ],
)
def test_a_pin_or_door_code_told_in_prose_is_found_and_hidden(text: str, secret: str) -> None:
    assert _found(text), text
    assert secret not in _hidden({"text": text}), text


@pytest.mark.parametrize(
    "text",
    ["PIN the issue", "pin the version to 1.2.3", "pinned 3 tabs", "Pin it to the board", "the postal code is 90210",
     "status code 404", "error code: 1234 in the log"],
)  # fmt: skip
def test_pin_the_verb_and_other_codes_are_no_secret(text: str) -> None:
    assert not _found(text), text


@pytest.mark.parametrize(
    "key", ["door_code", "alarmCode", "unlock_code", "puk", "safe_combination", "wpa2_key", "aes_key", "totp_key"]
)
def test_codes_and_keys_by_what_they_open_are_credential_keys(key: str) -> None:
    assert is_credential_key(key)


@pytest.mark.parametrize("key", ["zip_code", "status_code", "country_code", "keyword", "passport", "parola_hint"])
def test_codes_that_open_nothing_are_not_credential_keys(key: str) -> None:
    assert not is_credential_key(key)


# --- generated codes after a noun, query pairs, punctuated passwords ---------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "the recovery word for the share is Pq73LmX9Kz2W",
        "enrolment code: Bz48Wq2Mn7Xk",
        "use Hv62Tp9Lq3Xz to log in as admin",
        "https://sso.partner.test/login?user=ops&p=tidepool5521",
        "https://sso.partner.test/login?p=tidepool5521&usr=ops",
        "wifi: Zt4.Qm8.Vx2",
        "door is ~Gr8vT3nQ7x",
    ],
)
def test_generated_codes_query_pairs_and_punctuated_passwords_are_found(text: str) -> None:
    assert _found(text), text


@pytest.mark.parametrize(
    "text",
    [
        "https://docs.partner.test/search?q=password+policy&p=2",
        "https://docs.example.org/search?q=pswd+field+validation&p=2",
        "https://shop.test/list?user=alice&page=2",
        "see src/App/Main2.Tsx",
        "#Web3Dev2024 rocks",
        "version 1.2.3-Beta4",
        "the key is in the drawer",
    ],
)
def test_searches_pages_paths_and_hashtags_are_no_secret(text: str) -> None:
    assert not _found(text), text


@pytest.mark.parametrize("word", ["Kp7/Wm3/Xr9q", "Mx9.Bq4.Lzt", "Nq4(Vr8)Tzk", "*Rt7vQ2mK9", "?Blue7Sky9x"])
def test_punctuated_accepts_generated_passwords_cut_by_punctuation(word: str) -> None:
    assert labels.punctuated(word)


@pytest.mark.parametrize("word", ["#Web3Dev2024", "$Home2Dir9x", "v1.2.3", "Main2.Tsx", "a.b.c.d", "Harbor_Light"])
def test_punctuated_rejects_tags_variables_versions_and_names(word: str) -> None:
    assert not labels.punctuated(word)


# --- cost ---------------------------------------------------------------------------------------------


def test_a_megabyte_of_labels_is_read_in_bounded_time() -> None:
    text = "password is " * 90_000 + "PIN code " * 10_000
    start = time.process_time()
    find_secrets(text)
    assert time.process_time() - start < 10
