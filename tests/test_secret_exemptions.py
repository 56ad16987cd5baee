"""Round eleven (set J): the exemptions recognise the whole benign value (secret_exemptions)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine.arguments import secret_exemptions as ex
from policyengine.arguments.secret_scanner import find_secrets

_WORDS = st.sampled_from(
    ["velvet", "canyon", "orbit", "lantern", "harbor", "quiet", "copper", "meadow", "tundra", "falcon", "river"]
)


@pytest.mark.parametrize(
    ("word", "after"),
    [("new_password", ""), ("API_KEY", ""), ("settings.DB_PASSWORD", ""), ("self.password", ""),
     ("os.environ[", "'"), ("getenv(", '"'), ("get_token(scope=", "'"), ("secrets.token_urlsafe(32", ")"),
     ("password_input", ""), ("config.db.host", ""), ("getpass(", ")")],
)  # fmt: skip
def test_a_code_reference_is_recognised_whole(word: str, after: str) -> None:
    assert ex.code_reference(word, after)


@pytest.mark.parametrize(
    ("word", "after"),
    [("monkey_business_forever", ""), ("Velvet.Canyon.Orbit", ""), ("tokens_of_amber_light", ""),
     ("Sessions.At.Dawn", ""), ("Xk9mP2(vL7qRt", "'"), ("hR4vN8[qT2mX6kP9w", "\n"), ("Xk9mP2(", "\n"),
     ("passion_fruit_smoothie", ""), ("Xy7kL9mQ2pw", "")],
)  # fmt: skip
def test_a_password_with_a_stem_or_a_bracket_is_no_code_reference(word: str, after: str) -> None:
    assert not ex.code_reference(word, after)


@given(st.lists(_WORDS, min_size=2, max_size=4), st.sampled_from(["_", "."]))
def test_words_joined_without_a_credential_word_are_never_code(words: list[str], separator: str) -> None:
    assert not ex.code_reference(separator.join(words).title() if separator == "." else separator.join(words))


@pytest.mark.parametrize(
    "text",
    ["your-api-key-here", "replace_me", "insert-token-here", "YOUR_STRIPE_SECRET_KEY", "example", "dummy-password"],
)
def test_a_template_is_made_of_template_words(text: str) -> None:
    assert ex.template_words(text)


@given(
    st.lists(_WORDS, min_size=2, max_size=4),
    st.sampled_from(sorted(ex.TEMPLATE_MARKERS)),
    st.integers(0, 4),
    st.sampled_from(["-", "_"]),
)
def test_one_template_word_among_passphrase_words_is_no_template(
    words: list[str], marker: str, at: int, separator: str
) -> None:
    words = sorted(set(words))
    if len(words) < 2:
        return
    words.insert(min(at, len(words)), marker)
    assert not ex.template_words(separator.join(words))


def test_only_options_that_say_there_is_no_password_are_exempt() -> None:
    assert ex.no_password_option("--lock")
    assert ex.no_password_option("--iscrypted --lock")
    assert ex.no_password_option("--password-stdin")
    assert not ex.no_password_option("--velvet-canyon-orbit-lantern")
    assert not ex.no_password_option("--lock-velvet")


@pytest.mark.parametrize(
    "text",
    ["op://Engineering/Postgres/password", "vault:secret/data/prod/db#password",
     "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf"],
)  # fmt: skip
def test_a_store_reference_is_a_scheme_and_a_path(text: str) -> None:
    assert ex.store_reference(text)


@pytest.mark.parametrize(
    "text",
    ["vault:Tangerine88Harbor", "op://Summer2024Sunrise", "arn:aws:secretsmanager:Orchid2291Falcon",
     "op://Private/Kx9Lm2Qp7VtR8w/password"],
)  # fmt: skip
def test_a_scheme_before_a_password_is_no_reference(text: str) -> None:
    assert not ex.store_reference(text)


def _armor(label: str, data: bytes) -> str:
    """An armored block of the data."""
    body = base64.b64encode(data).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


def test_a_well_formed_public_block_is_exempt_and_a_random_one_is_not() -> None:
    der = bytes([0x30, 0x82, 0x01, 0x0A, 0x30, 0x0D]) + bytes(range(200))
    assert ex.public_block_spans(_armor("CERTIFICATE", der))
    assert not ex.public_block_spans(_armor("CERTIFICATE", b"\x8b" + bytes(range(1, 40))))
    unfinished = "-----BEGIN CERTIFICATE-----\nGucD6xPrpPBT5AuIB1gUpnTU5UwNZH0SPjFTzW0x5NXM\n"
    assert not ex.public_block_spans(unfinished)
    assert find_secrets({"text": unfinished})


def test_a_password_variable_holds_its_passphrase_but_prose_about_it_does_not() -> None:
    assert find_secrets({"text": "BORG_PASSPHRASE=correct horse battery staple"})
    assert find_secrets({"text": "The VAULT_UNSEAL_PASSPHRASE is seven lanterns over harbor"})
    assert not find_secrets({"text": "BORG_PASSPHRASE is read from the environment at startup"})
    assert not find_secrets({"text": "RESTIC_PASSWORD: see the vault entry named restic-prod"})


def test_a_generated_run_in_a_url_counts_except_on_public_document_hosts() -> None:
    key = "Vq3LmX8pKz2WtR9nBc4YhJ7dFs1GaQ6eUo0iZyPk"
    assert find_secrets({"url": f"https://files.vendor-example.net/x/{key}"})
    assert not find_secrets({"url": f"https://docs.google.com/document/d/{key}/edit"})
    assert ex.public_id_url("https://drive.google.com/file/d/x")
    assert not ex.public_id_url("https://google.com.vendor-example.net/x")
