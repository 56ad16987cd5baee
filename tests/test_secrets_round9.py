"""Round nine (set H): one reader of secrets for guards and redaction, documents read by shape, qualified keys."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import secret_documents as documents
from policyengine.arguments import secret_key_words as key_words
from policyengine.arguments import secret_reader as reader
from policyengine.arguments import secret_scanner as scanner
from support import load_yaml

CASES = Path(__file__).parent / "adversarial"
SECRET = "walnut3658bay"


def _hidden(value: Any) -> Any:
    return scanner.hide_secrets(value, lambda _: "[REDACTED]")


def _redact_cases() -> list[tuple[str, Any]]:
    """Every case of the corpus whose `secrets: true` redaction (redact-secret-strings) rewrites its result."""
    out = []
    for path in sorted(CASES.glob("*.yaml")):
        data = load_yaml(path)
        for case in data.get("cases", []) if isinstance(data, dict) else data:
            result = case.get("result")
            rewritten = result and "value" in case and case["value"] != result.get("value")
            if case.get("rule") == "redact-secret-strings" and rewritten:
                out.append((f"{path.name}: {case['name']}", result["value"]))
    return out


REDACT_CASES = _redact_cases()


def test_the_corpus_has_redaction_cases() -> None:
    assert len(REDACT_CASES) >= 100


@pytest.mark.parametrize(("name", "value"), REDACT_CASES, ids=[n for n, _ in REDACT_CASES])
def test_what_redaction_hides_is_a_secret_for_the_guards(name: str, value: Any) -> None:
    """The structural promise: a result the secrets redaction rewrites, sent out as an argument, is a secret."""
    assert reader.found_secrets({"text": value}, path="arguments"), name


_SNIPPETS = [
    "Key        Value\n---        -----\ndb_pass    {s}\n",
    '<add key="SmtpPassword" value="{s}" />',
    "-[ RECORD 1 ]-\nusername | app\npassword | {s}\n",
    "user,password,created (UTC)\nana,{s},2026-01-02\n",
    "mysql:\n  passwords:\n    root: {s}\n",
    "INSERT INTO users (id, passwd) VALUES (1, '{s}');",
    "/app/db/password\n{s}\n",
    '<input type="password" value="{s}">',
    '- textbox "Password" [ref=e1]: {s}',
    "DB_PASSWORD_ADMIN={s}",
    "hello world",
    "token,count\nthe,5120\n",
    "passwords:\n  min_length: 12\n",
]


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.sampled_from(_SNIPPETS), min_size=1, max_size=4),
    st.sampled_from(["", "\n", "\n\n", " note: "]),
    st.sampled_from([SECRET, "cedar7734field", "<redacted>", "***", ""]),
    st.booleans(),
)
def test_redaction_and_detection_agree(parts: list[str], joint: str, secret: str, nested: bool) -> None:
    """Property: wherever hide_secrets rewrites a value, found_secrets reports a place (one reader for both)."""
    text = joint.join(p.format(s=secret) for p in parts)
    value: Any = {"outer": {"text": text}} if nested else {"text": text}
    if _hidden(value) != value:
        assert reader.found_secrets(value), text


def test_the_reader_reports_where() -> None:
    found = reader.found_secrets({"body": f"key    value\n---    -----\ndb_pass    {SECRET}\n"}, path="arguments")
    assert [f.where for f in found] == ["arguments.body"]
    assert reader.redaction_findings({"body": "nothing here"}) == []


# -- qualified keys ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["DB_PASSWORD_ADMIN", "jwt_secret_v2", "token_gitlab", "smtp.password.legacy", "API_KEY_FALLBACK", "secret.eu-west",
     "pass_ldap", "session_key_v2", "bearer_internal", "apiKeyV2"],
)  # fmt: skip
def test_a_credential_word_with_qualifiers_after_it_is_a_credential(key: str) -> None:
    assert scanner.is_credential_key(key)


@pytest.mark.parametrize(
    "key",
    ["password_hint", "token_count", "secret_name", "token_type", "token_endpoint", "password_policy_v2",
     "next_token_v2", "max_token_length", "secret_scanning", "PasswordAuthentication", "access_key_id",
     "private_key_path", "token_limit_admin", "pass_through", "pass_rate", "sort_key_v2", "./scripts/db-password.sh"],
)  # fmt: skip
def test_a_qualifier_about_the_credential_makes_it_metadata(key: str) -> None:
    assert not scanner.is_credential_key(key)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(key_words.STRONG_WORDS - {"pass"})),
    st.lists(st.sampled_from(sorted(key_words.ABOUT_WORDS)), min_size=1, max_size=3),
)
def test_an_about_word_after_a_strong_word_is_never_read_as_a_qualifier(word: str, tail: list[str]) -> None:
    """Property: qualified_credential never answers yes when a word after the credential word is about it."""
    assert not key_words.qualified_credential([word, *tail], lambda _: True)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(key_words.STRONG_WORDS)),
    st.lists(st.from_regex(r"[a-z]{2,8}|v[0-9]", fullmatch=True), min_size=1, max_size=3),
)
def test_unknown_qualifiers_count_as_the_credential(word: str, tail: list[str]) -> None:
    """Property: qualifiers are an open class - any word that is not ABOUT the credential keeps it one."""
    if any(w in key_words.ABOUT_WORDS or w in key_words.STRONG_WORDS for w in tail):
        return
    assert key_words.qualified_credential([word, *tail], lambda _: True)


# -- documents --------------------------------------------------------------------------------


def _spans(text: str) -> list[str]:
    spans = documents.document_spans(text, scanner.is_credential_key, scanner._is_placeholder)
    return [text[a:b] for a, b in spans]


@pytest.mark.parametrize(
    "text",
    [
        f"#,login,password\n1,ana,{SECRET}\n",
        f"user,password,role\n\nana,{SECRET},admin\n",
        f"user,password,role\n# exported\nana,{SECRET}\n",
        f"| user | password | note |\n|---|---|---|\n| ops | {SECRET} | uses a\\|b |\n",
        f'user,password,note\nops,{SECRET},"first line\nsecond line"\n',
        f"credentials:\n  admin: {SECRET}\n",
        f'[pins]\nfront_desk = "{SECRET}"\n',
        f"COPY public.users (id, email, password) FROM stdin;\n1\ta@b.c\t{SECRET}\n\\.\n",
        f"INSERT INTO `wp_options` (`option_name`, `option_value`) VALUES ('smtp_password', '{SECRET}');",
        f"INSERT INTO users VALUES(1,'ana','{SECRET}');\nCREATE TABLE users(id INT, login TEXT, password TEXT);",
        f"zkCli get /app/db/password\n{SECRET}\n",
        f"    DefaultPassword    REG_SZ    {SECRET}\n",
        f'<input class="x" type="password" name="cred_box" value="{SECRET}">',
        f"await page.getByLabel('Password').fill('{SECRET}');",
        f'uid=1_12 textbox "Password" value="{SECRET}"',
    ],
)
def test_documents_say_where_a_credential_is(text: str) -> None:
    assert SECRET in _spans(text)


@pytest.mark.parametrize(
    "text",
    [
        "user,password,changed\nana,<redacted>,2026-01-02\n",
        "token,count\nthe,5120\nhello,312\n",
        "passwords:\n  min_length: 12\n  require_symbols: true\n",
        "INSERT INTO users (id, password_reset_at) VALUES (1, '2026-01-01');",
        '<input type="password" name="pw" placeholder="Password">',
        "/app/db/host\ndb.internal\n",
        "Set the password, then log in.\nThe token, once issued, lasts an hour.\n",
        "-[ RECORD 1 ]-\nusername | app\npassword | (null)\n",
    ],
)
def test_documents_without_a_credential_value_give_none(text: str) -> None:
    assert _spans(text) == []


def test_a_table_reader_has_no_cap_an_output_can_exhaust() -> None:
    """The 17th table and the 1,001st row are read like the first (a linear pass, no per-text cap)."""
    tables = "".join(f"session_id,duration_s\ns{i:04d},3{i}\n\n" for i in range(300))
    rows = "user,password\n" + "".join(f"user{i:04d},fill{i:04d}word\n" for i in range(2000))
    for text in (f"{tables}user,password\nana,{SECRET}\n", f"{rows}ana,{SECRET}\n"):
        assert SECRET in _spans(text)


def test_the_table_reader_is_linear() -> None:
    """Bounded time on a long hostile table: every line is read once."""
    text = "user,password\n" + "a,b\n" * 200_000
    start = time.process_time()
    documents.table_spans(text, scanner.is_credential_key, scanner._is_placeholder)
    assert time.process_time() - start < 5


# -- parents, plurals, encoded names ----------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        {"creds": {"ana": SECRET}},
        {"tokens": {"nightly": SECRET}},
        {"api_keys": [SECRET]},
        {"access_tokens": [{"owner": "ana", "v": SECRET}]},
        {"auth": {"users": {"ana": SECRET}}},
        {"kvs": [{"key": "L2FwcC9kYi9wYXNzd29yZA==", "value": "d2FsbnV0MzY1OGJheQ=="}]},
    ],
)
def test_credential_parents_and_encoded_names_are_read_by_both(value: Any) -> None:
    assert scanner.find_secrets(value)
    assert _hidden(value) != value


@pytest.mark.parametrize(
    "value",
    [
        {"tokens": 1234},
        {"tokens": ["Hello", "world"]},
        {"usage": {"tokens": {"input": 10, "output": 3}}},
        {"credentials": {"username": "bob", "password": "<redacted>"}},
        {"auth": {"type": "oauth2", "url": "https://login.example.com"}},
    ],
)
def test_parents_without_a_secret_value_stay(value: Any) -> None:
    assert scanner.find_secrets(value) == []
    assert _hidden(value) == value


# -- card verification values -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "checkout note: 739 (CVV)",
        "CVV for card ending 0366: 739",
        "cvv \u2192 739",
        "CVV\n739",
        "last4,cvv\n0366,739\n",
    ],
)
def test_a_cvv_near_its_label_is_found(text: str) -> None:
    assert "739" in [text[a:b] for a, b in documents.cvv_spans(text, scanner._cvv_name)]


def test_a_number_far_from_a_cvv_label_is_kept() -> None:
    text = "booked 412 days ago; CVV was not stored"
    assert documents.cvv_spans(text, scanner._cvv_name) == []


def test_the_charge_tools_are_the_catalogs_tools_that_take_a_payment_instrument() -> None:
    """bfcl's charge_tools is derived from its catalog: every tool with a parameter payment_instrument_keys names."""
    import json
    import re

    pack = Path(__file__).parent.parent / "policies" / "bfcl"
    lists = yaml.safe_load((pack / "lists.yaml").read_text(encoding="utf-8"))["lists"]
    pattern = re.compile(lists["payment_instrument_keys"][0].replace("(?i)", ""), re.IGNORECASE)
    derived = []
    for line in (pack / "tools.jsonl").read_text(encoding="utf-8").splitlines():
        tool = json.loads(line)
        names = " ".join(tool.get("parameters", {}).get("properties", {}))
        if pattern.search(names):
            derived.append(tool["name"])
    assert sorted(lists["charge_tools"]) == sorted(derived)
