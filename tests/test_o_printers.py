"""Round fourteen (set L): credential printers by grammar, and URLs given in parts (_url_parts.split_urls)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import _url_parts
from policyengine.language.functions import url_host, url_path
from support import load_yaml

ROOT = Path(__file__).resolve().parent.parent


@cache
def _printers(pack: str) -> list[Any]:
    import re2

    lists = load_yaml(ROOT / "policies" / pack / "lists.yaml")
    return [re2.compile(p) for p in lists["lists"]["credential_printing_commands"]]


def _prints(command: str, pack: str = "claude-code") -> bool:
    """Whether the pack's table takes the command for a printer, read as the rules read it (quotes dropped)."""
    text = re.sub(r"[\\'\"]", "", command)
    return any(p.search(text) for p in _printers(pack))


@pytest.mark.parametrize(
    "command",
    [
        "nmcli -s -g 802-11-wireless-security.psk connection show cafe",
        "nmcli --show-secrets connection show vpn",
        "nmcli device wifi show-password",
        "credstash get db.password",
        "berglas access sm://p/s",
        "teller show",
        "ejson decrypt a.ejson",
        "dotenvx get KEY",
        "aws-vault export prod",
        "saml2aws script",
        "consul acl token read -self",
        "nomad acl token self",
        "az storage account show-connection-string -n s",
        "aws eks get-token --cluster-name c",
        "aws --profile p ssm get-parameter --name x --with-decryption",
        "envchain ns env",
        "envchain ns env | grep KEY",
        "summon --yaml x printenv PW",
        "aws-vault exec prod -- sh -c 'echo $AWS_SECRET_ACCESS_KEY'",
        "doppler run -- node -e 'console.log(process.env)'",
        "sudo credstash getall",
    ],
)
def test_printers_are_read_by_grammar(command: str) -> None:
    assert _prints(command, "claude-code") and _prints(command, "baseline")


@pytest.mark.parametrize(
    "command",
    [
        "nmcli connection show",
        "aws-vault list",
        "consul members",
        "consul acl token list",
        "credstash list",
        "envchain ns terraform plan",
        "sops set a.enc.yaml '[\"k\"]' '\"v\"'",
        "gcloud container clusters get-credentials prod",
        "aws kms list-keys",
        "az keyvault key list --vault-name v",
        "grep -rn get-token src/",
        "grep -r 'token read' src",
        "kubectl get secrets",
        "secretlint --format json '**/*'",
        "env | sort",
    ],
)
def test_look_alikes_are_no_printers(command: str) -> None:
    assert not _prints(command, "claude-code") and not _prints(command, "baseline")


def test_both_packs_hold_the_round_fourteen_printers() -> None:
    """The baseline's table is kept in step with claude-code's (its comment says so)."""
    cc = load_yaml(ROOT / "policies" / "claude-code" / "lists.yaml")["lists"]["credential_printing_commands"]
    bl = load_yaml(ROOT / "policies" / "baseline" / "lists.yaml")["lists"]["credential_printing_commands"]
    assert cc[-10:] == bl[-10:]


_VERBS = ["get", "show", "print", "read", "reveal", "access", "export", "dump", "decrypt", "fetch", "generate"]
_NOUNS = ["token", "secret", "password", "passphrase", "connection-string", "api-key", "sas", "password-data"]


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(_VERBS),
    st.lists(st.sampled_from(["db", "auth", "login", "role", "access"]), max_size=2),
    st.sampled_from(_NOUNS),
    st.sampled_from(["grep -rn", "rg", "rg -n", "ag", "grep -r -i"]),
)
def test_a_search_for_a_printers_word_is_no_printer(verb: str, middle: list[str], noun: str, search: str) -> None:
    word = "-".join([verb, *middle, noun])
    assert _prints(f"aws svc {word}")  # the subcommand under a CLI is one
    assert not _prints(f"{search} {word} src/")  # the same word searched for is none


@pytest.mark.xfail(
    strict=True,
    reason="known limit: an injector's child that is a script file (aws-vault exec prod -- ./show-env.sh) may print "
    "the environment, but the engine reads the command line, not the script's text",
)
def test_an_injected_script_that_prints_the_environment() -> None:
    assert _prints("aws-vault exec prod -- ./show-env.sh")


# -- URLs given in parts --------------------------------------------------------------------------


def test_a_url_in_parts_is_joined() -> None:
    arguments = {"method": "GET", "host": "localhost", "port": 50342, "path": "/oauth2/token", "headers": {"a": "b"}}
    assert _url_parts.split_urls(arguments) == ["http://localhost:50342/oauth2/token"]


def test_an_ipv6_host_is_bracketed_and_a_scheme_read() -> None:
    arguments = {"host": "fd00:ec2::254", "port": "80", "path": "latest/api/token", "scheme": "http://"}
    assert _url_parts.split_urls(arguments) == ["http://[fd00:ec2::254]:80/latest/api/token"]


def test_a_host_with_its_port_keeps_it() -> None:
    assert _url_parts.split_urls({"hostname": "localhost:50342", "port": 80, "path": "/x"}) == [
        "http://localhost:50342/x"
    ]


def test_a_query_object_is_encoded() -> None:
    arguments = {"host": "h", "path": "/p", "query": {"resource": "https://vault.azure.net", "n": 1, "f": True}}
    assert _url_parts.split_urls(arguments) == ["http://h/p?resource=https%3A%2F%2Fvault.azure.net&n=1"]


def test_nested_parts_are_read_to_a_bound() -> None:
    assert _url_parts.split_urls({"request": {"server": "10.0.0.1", "port": 8080}}) == ["http://10.0.0.1:8080"]
    deep: dict[str, Any] = {"host": "h", "port": 1}
    for _ in range(5):
        deep = {"inner": deep}
    assert _url_parts.split_urls(deep) == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"host": "localhost"},  # a host alone: the red line reads it already, no URL is made
        {"port": 80, "path": "/x"},  # no host
        {"host": "http://a/b", "path": "/x"},  # a URL itself, read by its role
        {"host": "a b", "port": 1},  # no host name
        {"target": "backup", "path": "/etc"},  # a target is not named a host
        "localhost:80/x",
    ],
)
def test_no_url_without_a_host_and_a_part(arguments: Any) -> None:
    assert _url_parts.split_urls(arguments) == []


def test_the_urls_a_call_makes_are_bounded() -> None:
    arguments = {f"k{i}": {"host": f"h{i}", "port": i} for i in range(200)}
    assert len(_url_parts.split_urls(arguments)) == 64


_LABEL = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True)


@settings(max_examples=80, deadline=None)
@given(
    st.one_of(_LABEL, st.lists(_LABEL, min_size=2, max_size=3).map(".".join), st.ip_addresses().map(str)),
    st.one_of(st.none(), st.integers(min_value=1, max_value=65535)),
    st.lists(st.from_regex(r"[a-z0-9_]{1,8}", fullmatch=True), min_size=1, max_size=3).map(lambda s: "/".join(s)),
)
def test_the_joined_url_has_the_parts_host_and_path(host: str, port: int | None, path: str) -> None:
    arguments: dict[str, Any] = {"host": host, "path": path}
    if port is not None:
        arguments["port"] = port
    (url,) = _url_parts.split_urls(arguments)
    assert url_path(url) == f"/{path}"
    got = url_host(url)
    assert got is not None
    if ":" not in host:  # IPv6 readings are normalised (an embedded IPv4 read as one)
        assert got.rstrip(".") == host.lower()
