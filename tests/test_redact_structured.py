"""Redaction inside JSON, YAML, INI/TOML and .env text replaces the secret and keeps the document valid.

A tool that reads `config.json` returns it as text: a pack's `redact: [{secrets: true}]`
replaces the credential inside its value, so the text still parses and every other key is as it
was; the model keeps the configuration, never the secret. Cases: tests/data/redact_structured.yaml;
then a property test over random documents with planted secrets.
"""

from __future__ import annotations

import configparser
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments.redact import Redaction

CASES = Path(__file__).parent / "data" / "redact_structured.yaml"


def _cases() -> list[dict[str, Any]]:
    cases = yaml.safe_load(CASES.read_text("utf-8"))
    assert isinstance(cases, list) and len(cases) >= 11  # missing data fails, never skips
    return cases


def redaction(spec: dict[str, Any]) -> Redaction:
    """The Redaction a pack's `redact:` entry compiles to."""
    assert spec == {"secrets": True}, spec
    return Redaction(secrets=True)


def parse(text: str, form: str) -> Any:
    """The document as its format reads it (raises when it no longer parses)."""
    if form == "json":
        return json.loads(text)
    if form == "yaml":
        return yaml.safe_load(text)
    if form == "toml":
        return tomllib.loads(text)
    if form == "ini":
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        return {section: dict(parser[section]) for section in parser.sections()}
    if form == "env":
        out = {}
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, equals, value = line.removeprefix("export ").partition("=")
            assert equals, f"not a .env line: {line!r}"
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            out[name.strip()] = value
        return out
    raise AssertionError(form)


def lookup(document: Any, key: str, form: str) -> Any:
    """A kept value: `key` at the top, or `section.key` in INI and TOML."""
    for part in key.split(".") if form in ("ini", "toml") else [key]:
        document = document[part]
    return document


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["name"])
def test_structured_text_keeps_its_format_and_loses_only_the_secret(case: dict[str, Any]) -> None:
    text, form = case["text"], case["format"]
    before = parse(text, form)  # the case itself is a valid document
    out = redaction(case["redact"]).apply(text)
    assert isinstance(out, str) and out != text
    after = parse(out, form)
    for secret in case["hidden"]:
        assert secret not in out, (secret, out)
    for key, value in (case["kept"] or {}).items():
        assert lookup(after, key, form) == lookup(before, key, form) == value, (key, out)
    assert type(after) is type(before)


# -- random documents with planted secrets ---------------------------------------------------------

# Values no detector reads as a secret: phrases, numbers, booleans. Phrases, not single words: the
# scanner reads a short word-like sibling of a token as a possible piece of it (a secret split across
# values) and hides both, which is its rule, not the document's.
PLAIN = st.one_of(
    st.sampled_from(["blue sky", "debug mode", "on call rota", "west region", "the main site", "info level"]),
    st.integers(min_value=0, max_value=65535),
    st.booleans(),
)
NAMES = st.from_regex(r"(name|region|mode|port|colour|host|level)_[a-z]{1,6}", fullmatch=True)
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
SECRET_TEXT = st.text(alphabet=ALNUM, min_size=16, max_size=24).filter(lambda s: any(c.isdigit() for c in s))
# A secret is a credential key's value, or a token of a known shape under a plain key.
PLANTED = st.one_of(
    st.tuples(st.sampled_from(["password", "api_token", "client_secret", "db_password"]), SECRET_TEXT),
    st.tuples(NAMES, st.text(alphabet=ALNUM, min_size=36, max_size=36).map(lambda s: "ghp_" + s)),
    st.tuples(
        NAMES, st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", min_size=16, max_size=16).map("AKIA".__add__)
    ),
)


def render(document: dict[str, Any], form: str) -> str:
    """The document written as `form` (one section, `main`, for INI and TOML)."""
    if form == "json":
        return json.dumps(document, indent=2)
    if form == "yaml":
        return yaml.safe_dump(document, sort_keys=False)
    if form == "toml":
        return "[main]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in document.items())
    if form == "ini":
        return "[main]\n" + "".join(
            f"{k} = {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in document.items()
        )
    return "".join(f"{k.upper()}={str(v).lower() if isinstance(v, bool) else v}\n" for k, v in document.items())


def read(text: str, form: str) -> dict[str, Any]:
    """The document back as {key: value}: INI/TOML's one section, .env names lower-cased."""
    parsed = parse(text, form)
    if form in ("ini", "toml"):
        parsed = parsed["main"]
    if form == "env":
        parsed = {k.lower(): v for k, v in parsed.items()}
    assert isinstance(parsed, dict)
    return parsed


@settings(max_examples=60, deadline=None)
@given(
    form=st.sampled_from(["json", "yaml", "ini", "toml", "env"]),
    plain=st.dictionaries(NAMES, PLAIN, min_size=1, max_size=6),
    planted=st.lists(PLANTED, min_size=1, max_size=3, unique_by=lambda p: p[0]),
)
def test_random_documents_parse_after_redaction_and_keep_every_plain_value(
    form: str, plain: dict[str, Any], planted: list[tuple[str, str]]
) -> None:
    secrets = {key: value for key, value in planted if key not in plain}
    document = {**plain, **secrets}
    text = render(document, form)
    before = read(text, form)
    out = Redaction(secrets=True).apply(text)
    assert isinstance(out, str)
    after = read(out, form)  # still parses, in its own format
    for value in secrets.values():
        assert value not in out, (value, out)
    for key in plain:
        assert after[key] == before[key], (key, out)
    assert set(after) == set(before)
