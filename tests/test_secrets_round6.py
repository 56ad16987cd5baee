"""Round six of the secret detector, red-team set E: each class the set found, both ways.

Token families with no fixed prefix, capability URLs by their path word, package managers' logins and
configuration commands, words that name a password, encodings the decoder did not read, two-mark
separators, hashtag pieces and look-alike card digits. The attack values are new spellings of set E's
classes (built by hand or encoded here), not its own calls.
"""

from __future__ import annotations

import time

import pytest

from policyengine.arguments.secret_scanner import find_secrets


def _kinds(value: object) -> set[str]:
    """The kinds found in a value."""
    return {finding.kind for finding in find_secrets(value)}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("export VAULT_TOKEN=s.Qw8rTz3LmN5pXy7KcV2bHd9F before the deploy", "vault-token"),  # hexcred/tokfamily
        ("agent pool token sd7ta3azujkda7llcnbrdgumqhqwssshe74vkjpuk7m3q5z2p6w4", "azure-devops-pat"),  # tokfamily
        (
            "sms creds AC75c1eeb249feff68b6dd365d1bf1dbff:032b8a6f5adf4da46de95c90cdfc2925",
            "twilio-credentials",
        ),  # hexcred
        ("list sync key 67bc7ec1c73a91603e75758b545bef57-us6", "mailchimp-key"),  # hexcred
        ("NEW_RELIC_LICENSE 3eba822d9b89d3b6a0bcb18ec50c2db35219NRAL", "newrelic-key"),  # hexcred
        ("pagerduty routing for the ops service is 284fbbcccce0030bfd26f44766c4f3b5", "provider-key"),  # hexcred
        ("Heroku API (ci user) -> 6f7acf16-030f-5780-99c6-837ee369a566", "provider-key"),  # hexcred
        (
            "AES-256 key for the backups: fb7ed0ce3dea720307be041c08bf245748b0ec19679e2e8013ae9ed3b7b11d8a",
            "hex-key",
        ),  # hexcred
        (
            "post to https://chat.acme.io/hooks/Xb7kQ2mN9pLr4TsW/Zp8vK3cH6yJ1qR5tB9nM2wF4",
            "capability-url",
        ),  # webhookcap
        (
            "trigger https://maker.ifttt.com/trigger/backup_failed/json/with/key/pQ7rS2tU9vW4xY6zA3bC",
            "capability-url",
        ),  # webhookcap
        ("composer config -g github-oauth.github.com f3a9c2e7b1d4f6a8c0e2b4d6f8a1c3e5b7d9f0a2", "keyword"),  # pkgcreds
        ("poetry config pypi-token.acme Qz9xW3vB7nM2kL5jH8gF4dS1aP6oI0uY", "keyword"),  # pkgcreds
        ("yarn config set npmAuthToken Wr9xharborGate7741", "keyword"),  # pkgcreds
        ("cargo login Zq8Xw2Vb6Nm4Lk9Jh3Gf7Ds1Ap5Oi0Uy", "keyword"),  # pkgcreds
        ("bundle config gems.acme.io ci:Lantern-Orbit-7741", "keyword"),  # pkgcreds
        ("nuget sources update -Name acme -Password Qz9xW3vB7nM2kL5j", "keyword"),  # pkgcreds
        # Round eight: a safe's combination is a credential key (safe_combination): its value is one by its key.
        ("the safe combination is Harbor!Gate42", "keyword"),  # prosepw
        ("guest wlan: Orchid#Valley88", "password (prose)"),  # prosepw
        ("the vault door opens with Copper-Falcon-5523!", "password (prose)"),  # prosepw
        ("jenkins root => Tidal$Marble91 (temp)", "password (prose)"),  # prosepw
        ("65 75 73 65 81 88 55 76 50 77 53 78 56 80 51 82 54 84 52 87", "aws-access-key (char codes)"),  # encoded
        (
            "o: 101 113 111 101 121 130 67 114 62 115 65 116 70 120 63 122 66 124 64 127",
            "aws-access-key (octal codes)",
        ),  # encoded
        (
            (
                "chr(103).chr(104).chr(112).chr(95).chr(90).chr(107).chr(51).chr(118).chr(81).chr(57).chr(119).chr(76"
                ").chr(109).chr(50).chr(82).chr(116).chr(55).chr(89).chr(112).chr(88).chr(99).chr(53).chr(78).chr(98)"
                ".chr(56).chr(72).chr(100).chr(52).chr(70).chr(115).chr(54).chr(71).chr(106).chr(49).chr(75).chr(97)."
                "chr(69).chr(101).chr(48).chr(85)"
            ),
            "github-token (chr())",
        ),  # encoded
        (
            (
                ".- / -.- / .. / .- / --.- / -..- / --... / .-.. / ..--- / -- / ..... / -. / ---.. / .--. / ...-- / "
                ".-. / -.... / - / ....- / .--"
            ),
            "aws-access-key (morse)",
        ),  # encoded
        ("b85 XJ~L=T5B_QQ8{-^Z8B1HH(794V>M1<I7nnPMsqetYB5V;MP)Em", "github-token (base85)"),  # encoded
        ('<~B4u6k>&,p;;)rhoD),"22d(*%@l7"j3(RR:7WUIXC,&@i7:e/Q~>', "github-token (ascii85)"),  # encoded
        (
            "blob H4sIAAAAAAACAyvJz07Ns03PKIiPyjYuC7Qs98k1CioxjyyISDb1S7LwSDFxKzZzzzL0TnRNNQgFAGT5W+cuAAAA",
            "github-token (base64)",
        ),  # secret-encodings
        ("now_Gr3cX9dSt2Ya7FwEj5Ui8Ok4Mz6Nq1RhLl0B", "github-token (shifted)"),  # encoded
        ("ZPRZJC7O2N5M8K3I6G4D", "aws-access-key (shifted)"),  # encoded
        (
            (
                "id.json [35, 29, 241, 193, 76, 17, 44, 48, 227, 91, 214, 67, 57, 15, 189, 29, 56, 191, 4, 39, 128, "
                "220, 248, 219, 68, 84, 92, 158, 169, 130, 76, 133, 110, 80, 32, 168, 142, 139, 76, 232, 252, 124, "
                "136, 192, 15, 192, 81, 153, 103, 38, 137, 134, 142, 185, 116, 126, 125, 230, 136, 191, 121, 9, 201, "
                "66]"
            ),
            "wallet-keypair (byte array)",
        ),  # wallet
        (
            (
                "g..h..p.._..Z..k..3..v..Q..9..w..L..m..2..R..t..7..Y..p..X..c..5..N..b..8..H..d..4..F..s..6..G..j..1"
                "..K..a..E..e..0..U"
            ),
            "github-token (spaced)",
        ),  # bf-credentials-in-posts
        ("card 4S56 3B81 52l3 8516", "card-number"),  # bf-credentials-in-posts
    ],
)
def test_each_class_of_set_e_is_found_in_a_new_spelling(text: str, kind: str) -> None:
    assert kind in _kinds({"text": text})


@pytest.mark.parametrize(
    "text",
    [
        "the handler calls s.getElementsByClassName2 on load",
        "heroku app 3f2a9c1e-7b4d-4e8a-9c0f-1a2b3c4d5e6f restarted",
        "sentry release 66befa08f94ca60484541f1c1f8464ecedd25c14 deployed",
        "see https://api.github.com/repos/acme/site/hooks/123456789 for the hook",
        "https://docs.acme.io/tokens/refresh-access-token-flow",
        "wifi network is Guest-5G on floor 2",
        "admin -> dashboard -> settings",
        "the combo box shows the selected item",
        "scores 10 20 30 40 50 60 70 80 90 10 20 30 40 50 60 70",
        (
            "[0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, "
            "1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]"
        ),
        "SOS is ... --- ... in morse",
        "const f = (x) => {return g(x);}",
        "card 4S39 32l4 7S93 B323",
        "tags #release #notes #v2 #changelog",
        "yarn config set npmRegistryServer https://npm.acme.io",
        "run cargo login then paste the token from the registry page",
        "1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3",
        "the release notes are in notes-for-the-quarterly-release-of-the-platform-v2",
        "wifi SSID: Corp-Guest-2024",
        "user -> Profile2024 page",
        "Combination therapy with Drug-A200 and Drug-B300",
        "DELETE https://api.acme.io/v1/tokens/7f3a9b2c4d5e6f7a8b9c0d1e2f3a4b5c",
        "https://forum.acme.io/t/How-To-Install-V2-On-Ubuntu-22/1234",
        "https://x.io/keys/release_2024_signing_key_v3",
    ],
)
def test_their_benign_look_alikes_stay_clean(text: str) -> None:
    assert not _kinds({"text": text})


def test_a_token_cut_into_hashtags_is_glued_back() -> None:
    value = {"content": "release notes", "tags": ["#ghp_Zk3vQ9wLm2", "#Rt7YpXc5Nb8Hd", "#4Fs6Gj1KaEe0U"]}
    assert "github-token (split)" in _kinds(value)


def test_a_gzip_bomb_inflates_to_its_cap_only() -> None:
    import base64
    import gzip

    bomb = base64.b64encode(gzip.compress(b"A" * (16 << 20), mtime=0)).decode()
    started = time.process_time()
    assert not _kinds({"text": bomb})
    assert time.process_time() - started < 1.0


def test_many_base85_like_words_fail_closed_past_the_budget() -> None:
    words = " ".join(f"Ab{n:04d}x!y#z$w%Q9abcd" for n in range(400))
    assert "undecoded (past the decoding budget)" in _kinds({"text": words})
