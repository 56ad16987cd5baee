"""url_host and url_path: one canonical host and path for every spelling (docs/functions.md, issue 22)."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import jmespath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine.language.functions import OPTIONS, url_host, url_path

METADATA = "169.254.169.254"

# (url, its canonical host): every spelling a red line must see as the same host.
CASES = [
    ("http://169.254.169.254/latest/meta-data/", METADATA),
    ("http://2852039166/", METADATA),
    ("http://0xa9fea9fe/", METADATA),
    ("http://0XA9FEA9FE/", METADATA),
    ("http://0251.0376.0251.0376/", METADATA),
    ("http://0xa9.0xfe.0xa9.0xfe/", METADATA),
    ("http://169.254.43518/", METADATA),
    ("http://169.16689662/", METADATA),
    ("http://0xa9.254.0251.254/", METADATA),
    ("http://169.254.169.254./", METADATA),
    ("http://100.100.100.200./", "100.100.100.200"),
    ("http://100.100.25800/", "100.100.100.200"),
    ("http://[::ffff:100.100.100.200]/", "100.100.100.200"),
    ("http://[::ffff:169.254.169.254]:80/", METADATA),
    ("http://[::ffff:a9fe:a9fe]/", METADATA),
    ("http://[::169.254.169.254]/", METADATA),
    ("http://[64:ff9b::a9fe:a9fe]/", METADATA),
    ("http://[64:ff9b::169.254.169.254]/", METADATA),
    ("http://[::ffff:0:a9fe:a9fe]/", METADATA),
    ("http://[fd00:ec2:0:0:0:0:0:254]/", "fd00:ec2::254"),
    ("http://[FD00:EC2::254]/", "fd00:ec2::254"),
    ("http://[fe80::1%25eth0]/", "fe80::1"),
    ("http://user:pw@169.254.169.254/", METADATA),
    ("http://a@b@169.254.169.254/", METADATA),
    ("http://169.254.169.254:8080/x", METADATA),
    ("http://169.254.169.254?x", METADATA),
    ("http://169.254.169.254#x", METADATA),
    ("http:\\\\169.254.169.254\\x", METADATA),
    ("HTTP://Metadata.Google.Internal./computeMetadata/v1/", "metadata.google.internal"),
    ("http://metadata%2egoogle%2einternal/", "metadata.google.internal"),
    ("http://%6d%65%74%61%64%61%74%61/", "metadata"),
    ("http://\uff4d\uff45\uff54\uff41\uff44\uff41\uff54\uff41/", "metadata"),
    ("http://169\u3002254\u3002169\u3002254/", METADATA),
    ("http://169\uff0e254\uff0e169\uff0e254/", METADATA),
    ("http://\uff11\uff16\uff19.254.169.254/", METADATA),
    ("http://%EF%BC%91%EF%BC%96%EF%BC%99.254.169.254/", METADATA),
    # What WHATWG parsers (browsers, fetch, Node) read as the host of a special scheme.
    ("http:/169.254.169.254/", METADATA),
    ("http:169.254.169.254/", METADATA),
    ("http:///169.254.169.254/", METADATA),
    ("HTTPS:\\\\169.254.169.254\\x", METADATA),
    ("//169.254.169.254/latest/", METADATA),
    ("http://169.254.\t169.2\n54/", METADATA),
    # The forms urls(@) gives for commands: host:port, user@host, scp's host:path, a bare host.
    ("169.254.169.254:80", METADATA),
    ("root@2852039166:/etc/passwd", METADATA),
    ("tcp://0xa9fea9fe:80", METADATA),
    ("ssh://100.100.25800/x", "100.100.100.200"),
    ("metadata.google.internal", "metadata.google.internal"),
    ("169.254.169.254/latest/meta-data/", METADATA),
    # Ordinary hosts stay themselves.
    ("https://example.com/169.254.169.254", "example.com"),
    ("https://Example.COM:443/", "example.com"),
    ("https://169.254.169.254.nip.io.example.com/", "169.254.169.254.nip.io.example.com"),
    ("https://docs.nip.io/", "docs.nip.io"),  # a wildcard DNS service's own name spells no address
    ("https://1.2.3.4.5/", "1.2.3.4.5"),
    ("https://[::1]/", "::1"),
    ("https://[2001:db8::1]/", "2001:db8::1"),
]


@pytest.mark.parametrize(("url", "host"), CASES)
def test_every_spelling_of_a_host_is_one_canonical_host(url: str, host: str) -> None:
    assert url_host(url) == host


@pytest.mark.parametrize(
    "url",
    ["http://$H/latest", "http://${HOST}/", "http://*.internal/", "http://169.254.{169,1}.254/", "http://a b/"],
)
def test_a_host_the_engine_cannot_place_is_returned_as_written(url: str) -> None:
    host = url_host(url)
    assert host is not None and host in url


@pytest.mark.parametrize("url", ["file:///etc/passwd", "https://:443/", "http://user@/x", ""])
def test_a_url_that_names_no_host_has_none(url: str) -> None:
    assert url_host(url) is None


@pytest.mark.parametrize(
    "url", ["http://256.1.1.1/", "http://1.2.3.256/", "http://1.16777216/", "http://4294967296/", "http://09/"]
)
def test_a_number_no_ipv4_parser_accepts_is_no_address(url: str) -> None:
    host = url_host(url)
    assert host is not None and host in url.lower()


def test_url_host_is_a_rule_language_function_returning_null_for_no_host() -> None:
    search: Any = jmespath.search
    assert search("url_host(@)", "http://0xa9fea9fe/", options=OPTIONS) == METADATA
    assert search("url_host(@)", "file:///x", options=OPTIONS) is None


# -- properties ----------------------------------------------------------------------------------

_ADDRESSES = st.integers(min_value=0, max_value=0xFFFFFFFF)


def _number(value: int, base: str) -> str:
    return {"dec": str(value), "hex": hex(value), "HEX": f"0X{value:X}", "oct": f"0{value:o}"}[base]


@st.composite
def ipv4_spellings(draw: st.DrawFn) -> tuple[int, str]:
    """An IPv4 address and one spelling inet_aton accepts: 1-4 parts, each decimal, 0x-hex or 0-octal."""
    value = draw(_ADDRESSES)
    count = draw(st.integers(min_value=1, max_value=4))
    octets = value.to_bytes(4, "big")
    leading = list(octets[: count - 1])
    last = int.from_bytes(octets[count - 1 :], "big")
    bases = st.sampled_from(["dec", "hex", "HEX", "oct"])
    return value, ".".join(_number(part, draw(bases)) for part in [*leading, last])


@given(ipv4_spellings(), st.booleans())
def test_every_ipv4_spelling_canonicalises_to_the_dotted_quad_inet_aton_reads(
    spelled: tuple[int, str], trailing_dot: bool
) -> None:
    value, text = spelled
    quad = str(ipaddress.IPv4Address(value))
    assert socket.inet_ntoa(socket.inet_aton(text)) == quad  # the spelling is one the C library accepts
    assert url_host(f"http://{text}{'.' if trailing_dot else ''}/x") == quad
    assert url_host(f"{text}:22") == quad


@given(_ADDRESSES, st.sampled_from(["::ffff:{}", "::ffff:0:{}", "64:ff9b::{}", "::{}"]), st.booleans())
def test_an_ipv6_that_embeds_an_ipv4_is_that_ipv4(value: int, form: str, as_hex: bool) -> None:
    quad = str(ipaddress.IPv4Address(value))
    embedded = f"{value >> 16:x}:{value & 0xFFFF:x}" if as_hex else quad
    text = form.format(embedded)
    if form == "::{}" and value <= 1:
        return  # `::` and `::1` are the unspecified and loopback IPv6 addresses, not IPv4 ones
    assert ipaddress.IPv6Address(text)  # the spelling is an IPv6 address Python reads
    assert url_host(f"http://[{text}]/") == quad


@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_an_ipv6_address_is_compressed_as_python_compresses_it(value: int) -> None:
    address = ipaddress.IPv6Address(value)
    embeds = value >> 32 in (0, 0xFFFF, 0xFFFF0000, 0x0064FF9B << 64) and value > 1
    expected = str(ipaddress.IPv4Address(value & 0xFFFFFFFF)) if embeds else address.compressed
    assert url_host(f"http://[{address.exploded.upper()}]:443/") == expected


@given(st.text(max_size=40))
def test_url_host_never_raises_and_is_stable(text: str) -> None:
    host = url_host(f"http://{text}")
    assert host is None or isinstance(host, str)
    assert url_host(f"http://{text}") == host


# -- url_path (round seven: metadata APIs known by their path) ----------------------------------


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("http://imds/latest/meta-data/iam/", "/latest/meta-data/iam"),
        ("http://127.0.0.1:42356/%6Dsi/token?api-version=1", "/msi/token"),
        ("http://meta/./computeMetadata/v1/x", "/computemetadata/v1/x"),
        ("http://h/a/../LATEST//meta-data/", "/latest/meta-data"),
        ("http://h/%252e%252e/latest/meta-data", "/latest/meta-data"),
        ("http:\\\\h\\latest\\meta-data", "/latest/meta-data"),
        ("http://h/../../latest", "/latest"),  # a climb stops at the root, as a server's does
        ("http://h?x=/latest/meta-data", "/"),  # the query is no path
        ("http://h#/latest/meta-data", "/"),
        ("http://h", "/"),
        ("imds/latest/meta-data", "/latest/meta-data"),
    ],
)
def test_url_path_is_the_path_a_server_routes(url: str, path: str) -> None:
    assert url_path(url) == path


def test_url_path_is_a_rule_language_function_returning_null_for_no_host() -> None:
    search: Any = jmespath.search
    assert search("url_path(@)", "http://h/%6Dsi/token", options=OPTIONS) == "/msi/token"
    assert search("url_path(@)", "file:///etc/x", options=OPTIONS) is None


@given(st.text(max_size=40), st.text(max_size=40))
def test_url_path_never_raises_and_is_rooted_without_dot_segments(host: str, rest: str) -> None:
    path = url_path(f"http://{host}/{rest}")
    assert path is None or (path.startswith("/") and "/./" not in path + "/" and "/../" not in path + "/")
