"""Issue 22, round six (set E): redaction reads the layouts tools print credentials in (secret_layouts).

Each case is (what a tool returned, what the model may read): the credential is hidden and only it,
the document stays what it was (JSON stays JSON, a table stays a table), benign look-alikes stay.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from policyengine.arguments import secret_layouts as layouts
from policyengine.arguments.redact import REDACTED, Redaction
from policyengine.arguments.secret_scanner import is_credential_key

R = REDACTED
SECRETS = Redaction(secrets=True)
CARDS = Redaction(cards=True, keep_last=4)
ETH = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

# (id, result, redacted) for `secrets: true`.
SECRET_CASES: list[tuple[str, Any, Any]] = [
    # Records: a name and a value in sibling fields, in providers' spellings.
    (
        "beanstalk-option",
        {"OptionSettings": [{"Namespace": "aws:env", "OptionName": "RDS_PASSWORD", "Value": "Kestrel-Harbor-2291!"}]},
        {"OptionSettings": [{"Namespace": "aws:env", "OptionName": "RDS_PASSWORD", "Value": R}]},
    ),
    (
        "cloudformation-parameter",
        [
            {"ParameterKey": "DbMasterPassword", "ParameterValue": "bronze"},
            {"ParameterKey": "Env", "ParameterValue": "prod"},
        ],
        [{"ParameterKey": "DbMasterPassword", "ParameterValue": R}, {"ParameterKey": "Env", "ParameterValue": "prod"}],
    ),
    (
        "k-v",
        {"settings": [{"k": "DB_PASSWORD", "v": "Pl4tinum$Falcon7"}, {"k": "REGION", "v": "eu-west-1"}]},
        {"settings": [{"k": "DB_PASSWORD", "v": R}, {"k": "REGION", "v": "eu-west-1"}]},
    ),
    ("key-val", {"key": "stripe_secret", "val": "plainword"}, {"key": "stripe_secret", "val": R}),
    (
        "ssm-securestring",
        {"Parameter": {"Name": "/prod/stripe/live", "Type": "SecureString", "Value": "abc123xyz"}},
        {"Parameter": {"Name": "/prod/stripe/live", "Type": "SecureString", "Value": R}},
    ),
    (
        "1password-concealed",
        {"fields": [{"id": "x1", "type": "CONCEALED", "label": "door", "value": "Orchid"}]},
        {"fields": [{"id": "x1", "type": "CONCEALED", "label": "door", "value": R}]},
    ),
    (
        "gitlab-masked",
        {"key": "DEPLOY_HOOK", "value": "https://x.example/h/abc123", "masked": True},
        {"key": "DEPLOY_HOOK", "value": R, "masked": True},
    ),
    (
        "benign-records",
        {"a": {"OptionName": "InstanceType", "Value": "t3.micro"}, "b": {"Type": "String", "Name": "n", "Value": "v1"}},
        None,
    ),
    # Column tables given as values.
    (
        "columns-rows",
        {"columns": ["email", "api_key"], "rows": [["ops@northwind.io", "41dc109a258ff3d9a018c410d11f6c2d"]]},
        {"columns": ["email", "api_key"], "rows": [["ops@northwind.io", R]]},
    ),
    (
        "schema-objects",
        {"schema": [{"name": "login"}, {"name": "password"}], "data": [["root", "x1y2z3"]]},
        {"schema": [{"name": "login"}, {"name": "password"}], "data": [["root", R]]},
    ),
    ("header-row", [["login", "password"], ["root", "Tq9#vLm2xR!b"]], [["login", "password"], ["root", R]]),
    ("benign-columns", {"columns": ["id", "email"], "rows": [[1, "ana@example.org"]]}, None),
    ("header-pairs-stay-pairs", [["Accept", "*/*"], ["X-Trace", "abc"]], None),
    # Text tables.
    (
        "vault-kv",
        "====== Data ======\nKey        Value\n---        -----\ndb_pass    Pl4tinum$Falcon7\ndb_user    app\n",
        f"====== Data ======\nKey        Value\n---        -----\ndb_pass    {R}\ndb_user    app\n",
    ),
    (
        "pipe-name-value",
        "| Name | Value |\n|---|---|\n| db_password | hunter2xyz |\n",
        f"| Name | Value |\n|---|---|\n| db_password | {R} |\n",
    ),
    ("csv-name-value", "name,value\nDB_PASSWORD,hunter2xyz\n", f"name,value\nDB_PASSWORD,{R}\n"),
    ("aligned-column", "USER       PASSWORD\nadmin      Orchid-Lamp\n", f"USER       PASSWORD\nadmin      {R}\n"),
    ("benign-kv", "Key        Value\n---        -----\nregion     eu-west-1\n", None),
    ("benign-kubectl", "NAME      READY   STATUS\napi-1     1/1     Running\n", None),
    (
        "psql-expanded",
        "-[ RECORD 1 ]------\nemail   | ops@northwind.io\napi_key | 41dc109a258ff3d9a018c410d11f6c2d\n",
        f"-[ RECORD 1 ]------\nemail   | ops@northwind.io\napi_key | {R}\n",
    ),
    ("redis-numbered", '1) "requirepass"\n2) "Harbor-Lynx-9931"\n', f'1) "requirepass"\n2) "{R}"\n'),
    # Labels of several words.
    (
        "netsh",
        "    Security key           : Present\n    Key Content            : CorpWifi!Lantern73\n",
        f"    Security key           : Present\n    Key Content            : {R}\n",
    ),
    ("benign-sentence", "Reset your password: https://accounts.example.org/reset\n", None),
    # XML.
    ("xml-add", '<add key="SmtpPassword" value="J1o3l27kh71VrGe1dH" />', f'<add key="SmtpPassword" value="{R}" />'),
    ("xml-entry", '<entry key="db.password">Harbor#77xQ</entry>', f'<entry key="db.password">{R}</entry>'),
    ("xml-string", '<string name="stripe_secret">Quartz-Ridge</string>', f'<string name="stripe_secret">{R}</string>'),
    (
        "hadoop-property",
        "<property><name>fs.s3a.secret.key</name><value>wJalrXUtnFEMI</value></property>",
        f"<property><name>fs.s3a.secret.key</name><value>{R}</value></property>",
    ),
    ("benign-xml", '<add key="LogLevel" value="Debug" /><input type="password" name="pw" />', None),
    # A DER private key as a hex dump.
    (
        "der-xxd-p",
        "3082 04bd 0201 0030 0d06 092a 8648 86f7 0d01 0101 0500 0482 04a7\n3082 04a3 0201 0002 8201 0100 9154 6911\n",
        f"{R}\n",
    ),
    ("der-c-array", "{\n  0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20, 0x5a,\n};", f"{{\n  0x{R}\n}};"),
    ("benign-certificate", "308203a130820289a003020102021445d0e13c\n", None),
    ("benign-public-key", "30820122300d06092a864886f70d01010105000382010f00\n", None),
    # Raw wallet keys.
    ("eth-alone", f"0x{ETH}\n", f"{R}\n"),
    ("eth-wallet-word", f"hot wallet signer {ETH}", f"hot wallet signer {R}"),
    ("benign-tx", f"tx 0x{ETH} confirmed", None),
    ("benign-hash-key", {"hash": f"0x{ETH}"}, None),
    ("benign-checksum", f"{ETH}  dist/app.tar.gz\n", None),
    # Keys named for the power they give, token abbreviated.
    (
        "admin-key",
        {"appId": "ACME01", "adminKey": "0f3fa3174fb90e765149e0d68c16c19a"},
        {"appId": "ACME01", "adminKey": R},
    ),
    ("auth-tok", {"authTok": "41dc109a258ff3d9a018c410d11f6c2d"}, {"authTok": R}),
    ("benign-tok", {"tokens": [{"tok": "the", "pos": "DET"}], "keyCount": 3}, None),
]


@pytest.mark.parametrize(("result", "redacted"), [pytest.param(r, h, id=i) for i, r, h in SECRET_CASES])
def test_secrets_in_a_layout_are_hidden_and_only_they(result: Any, redacted: Any) -> None:
    assert SECRETS.apply(result) == (result if redacted is None else redacted)


def test_json_text_with_a_record_stays_json() -> None:
    text = json.dumps({"Parameters": [{"ParameterKey": "DbPassword", "ParameterValue": "Br0nze^Otter"}]}, indent=2)
    out = SECRETS.apply({"stdout": text})["stdout"]
    assert json.loads(out) == {"Parameters": [{"ParameterKey": "DbPassword", "ParameterValue": R}]}


@pytest.mark.parametrize(
    "encoded",
    [
        pytest.param(
            "\uff2b\uff45\uff59 \uff23\uff4f\uff4e\uff54\uff45\uff4e\uff54 : CorpWifi!Lantern73", id="full-width"
        ),
        pytest.param("Key%20Content%20%3A%20CorpWifi!Lantern73", id="url-encoded"),
        pytest.param("S2V5IENvbnRlbnQgOiBDb3JwV2lmaSFMYW50ZXJuNzM=", id="base64"),
    ],
)
def test_a_layout_normalised_or_decoded_is_hidden_too(encoded: str) -> None:
    assert SECRETS.apply({"out": encoded}) == {"out": R}


# (id, text, masked) for `cards: true, keep_last: 4`: the mask keeps the card's real last four.
CARD_CASES: list[tuple[str, str, str | None]] = [
    ("reversed", "card=8638715072765245", "card=8638************"),
    ("labelled-halves", "first8=60118507 last8=45358681", "first8=******** last8=****8681"),
    ("french", "card: quatre cinq trois neuf 282066763034", "card: " + "*" * 31 + "3034"),
    ("spanish", "tarjeta: cuatro uno uno uno 111111111111", "tarjeta: " + "*" * 27 + "1111"),
    ("reversed-said", "written backwards: 8638715072765245", "written backwards: 8638************"),
    ("pieces-in-words", "first 8 digits: 60118507, last 8: 45358681", "first 8 digits: ********, last 8: ****8681"),
    ("benign-reversed-id", "order 8638715072765245 shipped", None),
    ("benign-date-range", "start=20261204 end=20261205", None),
    ("benign-labelled-ids", "order=12345678 ref=87654321 first=2026 last=1204", None),
    ("benign-timestamp", "at 1733400000123 ms", None),
    ("benign-prose", "dos tres cuatro amigos", None),
]


@pytest.mark.parametrize(("text", "masked"), [pytest.param(t, m, id=i) for i, t, m in CARD_CASES])
def test_cards_written_reversed_in_pieces_or_spelled_keep_their_last_four(text: str, masked: str | None) -> None:
    assert CARDS.apply({"file_content": text}) == {"file_content": text if masked is None else masked}


@pytest.mark.parametrize(
    "key", ["adminKey", "writeKey", "sdk_key", "authTok", "session_tkn", "keyMaterial", "Key Content", "requirepass"]
)
def test_credential_keys_by_power_and_abbreviation(key: str) -> None:
    assert is_credential_key(key)


@pytest.mark.parametrize("key", ["next_page_token", "prompt_tokens", "tok", "keyCount", "Security key", "OptionName"])
def test_keys_that_only_mention_a_credential(key: str) -> None:
    assert not is_credential_key(key)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("key " * 250_000, id="stems-on-one-line"),
        pytest.param('<a x="1" password="2" ' * 40_000, id="unclosed-tags"),
        pytest.param("Key Content a b : " * 50_000, id="label-like"),
        pytest.param("first8=60118507 " * 60_000, id="card-pieces"),
        pytest.param("3082 04bd 0201 00" * 60_000, id="der-headers"),
        pytest.param(("Key  Value\n" + "db_pass  x1y2z3\n") * 30_000, id="tables"),
    ],
)
def test_layout_readers_stay_linear_on_hostile_text(text: str) -> None:
    # The readers alone (the detector's own cost on such text is bounded in test_hostile_calls).
    started = time.process_time()
    layouts.layout_spans(text, is_credential_key, lambda value: False)
    layouts.card_layout_spans(text, lambda digits: True)
    assert time.process_time() - started < 1.5


def test_a_reversed_card_under_a_card_key_is_masked() -> None:
    assert CARDS.apply({"card": "8638715072765245", "order": "8638715072765245"}) == {
        "card": "8638************",
        "order": "8638715072765245",
    }
