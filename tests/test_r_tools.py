"""Round fifteen (set N, r-tools): address_values and the tool-name lexicons of the packs."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import jmespath
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.language.functions import PolicyFunctions, function_arity
from policyengine.language.tool_names import tool_words

_OPTIONS = jmespath.Options(custom_functions=PolicyFunctions())
_ROOT = Path(__file__).resolve().parent.parent


def _addresses(value: object) -> list[str]:
    found = jmespath.search("address_values(@)", value, options=_OPTIONS)
    assert isinstance(found, list)
    return found


def _lists(pack: str) -> dict[str, list[str]]:
    loaded = yaml.safe_load((_ROOT / "policies" / pack / "lists.yaml").read_text(encoding="utf-8"))
    lists = loaded.get("lists", loaded)
    assert isinstance(lists, dict)
    return lists


# -- address_values --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "169.254.169.254",
        "2852039166",
        "0xA9FEA9FE",
        "0xa9.0xfe.0xa9.0xfe",
        "0251.0376.0251.0376",
        "169.254.43518",
        " 2852039166:80 ",
        "::ffff:169.254.169.254",
        "::ffff:a9fe:a9fe",
        "[::ffff:169.254.169.254]:80",
        "[64:ff9b::a9fe:a9fe]",
        "169.254.169.254.",
        2852039166,
        [169, 254, 169, 254],
        ["169", "254", "169", "254"],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 169, 254, 169, 254],
        {"deep": [{"x": {"y": "0xa9fea9fe"}}]},
    ],
)
def test_every_spelling_of_the_metadata_address(value: object) -> None:
    assert "169.254.169.254" in _addresses(value)


@pytest.mark.parametrize(
    "value",
    [
        "GET",
        "/latest/meta-data/",
        "169.254.169.254/latest",  # a URL-ish path: the URL readers' part, not a bare address
        "2026-12-07",
        "1.2.3.4.5",
        "256.1.1.1",
        "[::ffff:169.254.169.254",
        "10.0.0.1:99999999",
        True,
        None,
        1.5,
        [169, 254, 169],
        [169, 254, 169, 256],
        [True, 254, 169, 254],
        "x" * 100,
    ],
)
def test_values_that_spell_no_metadata_address(value: object) -> None:
    assert "169.254.169.254" not in _addresses(value)


def test_address_values_is_a_policy_function() -> None:
    assert function_arity()["address_values"] == (1, 1)
    assert _addresses({"port": 80, "host": "example.com"}) == ["0.0.0.80"]


def test_address_values_refuses_absurd_nesting() -> None:
    value: object = "0xa9fea9fe"
    for _ in range(200):
        value = [value]
    with pytest.raises(jmespath.exceptions.JMESPathError):
        _addresses(value)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=(1 << 32) - 1))
def test_every_ipv4_spelling_reads_back(number: int) -> None:
    dotted = str(ipaddress.IPv4Address(number))
    octets = [int(part) for part in dotted.split(".")]
    spellings: list[object] = [dotted, str(number), hex(number), f"::ffff:{dotted}", f"[::ffff:{dotted}]:443"]
    spellings += [".".join(hex(o) for o in octets), ".".join(f"0{o:o}" for o in octets), number, octets]
    for spelling in spellings:
        assert dotted in _addresses({"k": spelling}), spelling


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="0123456789abcdefABCDEFxX.:[]%"), max_size=30))
def test_text_without_address_characters_is_never_read(text: str) -> None:
    assert _addresses({"k": text}) == []


# -- the packs' lexicons ---------------------------------------------------------------------------


def _glued(name: str) -> bool:
    patterns = _lists("baseline")["writer_glued_words"]
    return any(re.search(p, word) for word in tool_words(name) for p in patterns)


@pytest.mark.parametrize(
    "name",
    [
        "rewrite",
        "autofix",
        "reformat",
        "autosave",
        "reencrypt",
        "decompress",
        "uncompress",
        "gunzip",
        "bunzip2",
        "unxz",
        "unzstd",
        "gzip",
        "mkdirs",
        "makedirs",
        "rewriteFile",
        "mcp__fs__autoFormat",
    ],
)
def test_glued_writer_words(name: str) -> None:
    assert _glued(name)


@pytest.mark.parametrize(
    "name",
    [
        "design_review",
        "deploy",
        "report",
        "decode",
        "prefix",
        "preview",
        "read_zip",
        "list_tar",
        "list_downloads",
        "get_records",
    ],
)
def test_words_that_only_look_glued(name: str) -> None:
    assert not _glued(name)


def _service(name: str) -> bool:
    patterns = _lists("baseline")["remote_service_words"]
    return any(re.search(p, "_".join(tool_words(name))) for p in patterns)


@pytest.mark.parametrize(
    ("name", "hosted"),
    [
        ("read_jira_search", True),
        ("readBigQuery", True),
        ("read_bigquery", True),
        ("grep_datadog_logs", True),
        ("grepDataDog", True),
        ("read_pagerduty_incidents", True),
        ("glob_bucket", True),
        ("read_slackware_notes", False),
        ("read_file", False),
        ("grep_sentryless", False),
    ],
)
def test_hosted_service_words(name: str, hosted: bool) -> None:
    assert _service(name) is hosted


@pytest.mark.parametrize(
    ("value", "remote"),
    [
        ("s3", True),
        ("GCS", True),
        (" azure ", True),
        ("gs://b/k", True),
        ("hf", True),
        ("file", False),
        ("local", False),
        ("memory", False),
        ("s3 bucket", False),
    ],
)
def test_remote_protocol_values(value: str, remote: bool) -> None:
    patterns = _lists("baseline")["remote_protocol_values"]
    assert any(re.search(p, value) for p in patterns) is remote
