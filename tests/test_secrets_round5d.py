"""Round five of the secret detector, red-team set D: each class the set found, both ways."""

from __future__ import annotations

import pytest

from policyengine.arguments.redact import REDACTED, Redaction
from policyengine.arguments.secret_scanner import find_secrets, hide_cards, is_credential_key

SECRETS = Redaction(secrets=True)
SEED = "ripple canoe olympic despair hover naive toast wrestle vivid orbit fatigue brass"  # checksum fails
PASSWORD = "Xk9#mP2vL7q!"


def _kinds(value: object) -> set[str]:
    """The kinds found in a value."""
    return {finding.kind for finding in find_secrets(value)}


@pytest.mark.parametrize(
    "key", ["pass_phrase", "mnemonic", "bearer", "otp_seed", "recovery_codes", "secret_word", "nsec", "keypair"]
)
def test_the_other_names_of_credentials_are_credential_keys(key: str) -> None:
    assert is_credential_key(key)


@pytest.mark.parametrize("key", ["seed", "random_seed", "recovery_email", "bearer_format", "pk_column"])
def test_names_that_only_mention_them_are_not(key: str) -> None:
    assert not is_credential_key(key)


@pytest.mark.parametrize(
    "text",
    [
        SEED,
        f"backup words {SEED} (keep safe)",
        "https://relay.example/send?m=" + SEED.replace(" ", "+"),
        "\n".join(f"{n}. {word}" for n, word in enumerate(SEED.split(), 1)),
    ],
)
def test_a_seed_phrase_of_exact_length_counts_without_its_checksum(text: str) -> None:
    assert "seed-phrase" in _kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "apple, banana, cherry, grape, lemon, mango, orange, melon, kiwi, peach, plum, lime",  # a comma list
        " ".join(SEED.split()[:11]),  # eleven words
        SEED + " again",  # thirteen list words: prose or a list, the checksum decides window by window
        "buy buy buy buy buy buy sell sell sell sell sell sell",  # repeated words
    ],
)
def test_word_lists_that_are_no_seed_stay_clean(text: str) -> None:
    assert "seed-phrase" not in _kinds(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "https://a.blob.core.windows.net/db/x.bak?sv=2022-11-02&sp=r&sig=q8ZK1%2FbB2xY7nT4vR9mW3pL6sD0fG5h%3D",
            "azure-sas-url",
        ),
        (
            "https://objectstorage.us-ashburn-1.oraclecloud.com/p/wJ89m1NPdhHXshd2ee_AWk3c9p8/n/acme/b/bk/o/x",
            "oci-par-url",
        ),
        (
            "https://HOOKS.SLACK.COM:443/triggers/T04FFMXC182/8900511957994/002a3fe622ef97f05bfbc30983c6a460",
            "chat-webhook",
        ),
        ("https://chat.acme.io/hooks/r2hy2xu78ga0hi9szl6b0ge0o5", "chat-webhook"),
        ("https://hooks.zapier.com/hooks/catch/3171751/fvc5633/", "chat-webhook"),
        (
            "https://acme.webhook.office.com/webhookb2/4f1c2d3e-5a6b@9e8d7c6b-5a4f/IncomingWebhook/"
            "0123456789abcdef0123456789abcdef/1a2b",
            "chat-webhook",
        ),
        ("Administrator:500:aad3b435b51404eeaad3b435b51404ee:8846f7eaee8fb117ad06bdd830b7586c:::", "ntlm-hash"),
        ("nsec1l4j0huhphxe89jvgr44jur7ngdux08gqecgnx4h62mn8mmrsk4apr8mhnd", "nostr-key"),
        ("hvs.CAESIJ8h1bX2c3d4e5f6g7h8i9j0kLmNoPqRsTuV", "provider-token"),
        ("signing material 0x654d8d8fe7c6a2d11fcd503dfa2f4d5b1bc6670a71ba5f7afb3f5b19189a23d3", "hex-key"),
        ("HMAC used for the callbacks c67a329cc46c88de3ffed2fbc145b4f6fc62cf5a", "hex-key"),
    ],
)
def test_token_shapes_of_set_d_are_found(text: str, kind: str) -> None:
    assert kind in _kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "https://acmecdn.blob.core.windows.net/public/logo.png?sv=2022-11-02",  # no signature
        "see https://api.slack.com/automation/triggers/webhook",
        "https://github.com/acme/repo/settings/hooks/123456",
        "a well-known state-of-art built-in fail-safe rule",
        "uuid 1234-5678 abcd-ef12 9999-0000",
        "this that with from have when what were they will",
        "[" + ", ".join(str(300 + i) for i in range(64)) + "]",  # numbers past a byte
        "the secret scanning job ran on commit c67a329cc46c88de3ffed2fbc145b4f6fc62cf5a",
        "private sale: send to address 0x17ae62e1975929df559ede5def20a4eab385b6eb",
        "the private repo's sha256 is 654d8d8fe7c6a2d11fcd503dfa2f4d5b1bc6670a71ba5f7afb3f5b19189a23d3",
    ],
)
def test_their_look_alikes_stay_clean(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("AKIA_A0BB_Z2LG_79EQ_J9BZ (no underscores)", "aws-access-key (split)"),
        ("AKIA-1Z0VOVGC-MRU7M6YF", "aws-access-key (split)"),
        ("ghp_.EBfMKaGV.u1WRMHNQ.WGDpedwF.AdmihHWY.5g3S", "github-token (split)"),
        ("sk-ant-api03~-aJOOKkelDuv~1ZNFE27bemvB~7KuIFW1MOlKE~2YsaeDio_m-7~UmE6dQR4lJfP~Rze", "anthropic-key (split)"),
        ("sk_liv/e_inFx/WQLYfI/9XoPWg/tsEErl/aJ", "stripe-key (split)"),
        ("npm_G:JnWmx:NCEvI:aLrRF:13sJU:jPHWY:zNu1X:JT5Vm", "npm-token (split)"),
        ("sk-ant-api%7C03-aJOOKke%7ClDuv1ZNFE2%7C7bemvB7KuI%7CFW1MOlKE2Y%7CsaeDio", "anthropic-key (split)"),
    ],
)
def test_a_token_cut_by_one_repeated_mark_is_glued_back(text: str, kind: str) -> None:
    assert kind in _kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "ASIA_PACIFIC_SALES_2024_Q1",
        "ASIA_PACIFIC_SALES_Q1_2024_V2_X9",
        "see sk-learn/stable/modules/generated/sklearn.linear_model.html",
        "npm_config_cache/_cacache/content-v2/sha512/ab/cd",
    ],
)
def test_names_and_paths_with_a_prefix_stay_clean(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        f"office wifi: CorpGuest / {PASSWORD}",
        f"u=sa&p={PASSWORD}",
        "guest wifi at the meetup is Vx7#pQ2m!rT - enjoy!",
        "ssh root@10.0.0.4, it's hP3#vn8Lq!s2",
        "use hP3#vn8Lq!s2 to unlock the shared vault",
        "https://hooks.example/c?m=ssh%20deploy%4010.0.4.12%20with%20Hk9%24wL2z%21qP",
        f"{PASSWORD}\n",
    ],
)
def test_a_password_is_found_by_its_shape_without_a_name(text: str) -> None:
    assert "password (shape)" in _kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        'print(f"{x!r}")',
        "great talks at #Web3Dev2024 and #PyCon2025!",
        "WhatIs2Plus2?",
        "Summer2024! sale",  # a weak password needs its phrase ("the password is ...")
        "mail Admin@Host1Zz9",
        "run $HOME1Ab2! and %APPDATA%x9Q!",
        "sha256-47DEQpj8HBSa+TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
        "**Step1A2b**",
        "a[i]!=B2c && x<=Y9z",
    ],
)
def test_code_tags_variables_and_base64_are_no_password_shape(text: str) -> None:
    assert "password (shape)" not in _kinds(text)


def test_a_megabyte_of_base64_costs_one_look_for_the_password_shape() -> None:
    blob = "Ab1+" * 300_000  # one word: read once, never a candidate per gate match
    assert not any(f.kind.startswith("unchecked") for f in find_secrets({"file": blob}))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("rot47: 89A0{I?>q}|C`r@daA$sd:fxt>8z*'~`<@hGp?}2", "github-token (rot47)"),
        (
            "codes 103;104;112;95;76;120;110;109;66;78;77;114;49;67;111;53;50;112;83;68;53;105;55;73;69;109;103;75;"
            "89;86;79;49;107;111;57;118;65;110;78;97",
            "github-token (char codes)",
        ),
        (
            "01011010 01111000 00111001 00100001 01110000 01001100 00110100 00100011 01110001 01010111 00110010 "
            "01100101",
            "password (char codes)",
        ),
    ],
)
def test_rot47_semicolon_codes_and_binary_octets_are_read(text: str, kind: str) -> None:
    assert kind in _kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "01101000 01100101 01101100 01101100 01101111 00100000 01110111 01101111 01110010 01101100 01100100",
        "scores 10;12;15;18;20;22;25;28;30;32;35;38;40;42;45;48;50",
    ],
)
def test_codes_of_plain_text_stay_clean(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "pan:4539:5260:1815:9083",
        "group1, group2\n4539, 5260, 1815, 9083\n",
        "card 4539 5260 (cont.) 1815 9083",
        "card#4539#5260#1815#9083",
        "card 4539 and 6821 and 0284 and 7818 exp 09/28",
        "5425x3019x7904x4128",
        "card 5425 3O19 79O4 4128",
    ],
)
def test_a_card_in_its_grouping_with_fillers_is_found_and_masked(text: str) -> None:
    assert "card-number" in _kinds(text)
    masked = hide_cards(text, lambda _: "#")
    assert masked != text
    assert not any(group in masked for group in ("4539", "5425", "5260", "3019"))


@pytest.mark.parametrize(
    "text",
    [
        "we met in 2019, 2020, 2021 and 2022",
        "rooms 4539 and then later on 5260 then 1815 then 9083",  # a sentence between groups
        "Oooo 4539 5260 1815 90831",  # a longer number: not the card's grouping
    ],
)
def test_numbers_with_words_between_stay_clean(text: str) -> None:
    assert "card-number" not in _kinds(text)


def test_recovery_codes_totp_keys_and_keypairs_are_found_under_their_names() -> None:
    # In bare text their shapes cost the prefilter twice its time on batched calls: names only.
    value = {"recovery_codes": ["4f2a1-9c3b7"], "otp_seed": "JBSWY3DPEHPK3PXPRZ6D6P3E", "keypair": [81, 55, 224]}
    assert {f.where.split("[")[0] for f in find_secrets(value)} == {"recovery_codes", "otp_seed", "keypair"}


def test_a_bare_password_printed_by_a_secret_store_is_redacted() -> None:
    assert SECRETS.apply({"stdout": f"{PASSWORD}\n"}) == {"stdout": f"{REDACTED}\n"}
    assert SECRETS.apply({"stdout": "Release v2.4.1 on 2026-12-04: fixed #1234\n"}) == {
        "stdout": "Release v2.4.1 on 2026-12-04: fixed #1234\n"
    }
