"""Round thirteen (set K): credentials behind an exemption's cloak; an exemption holds for the whole value only."""

from __future__ import annotations

import base64
import bz2
import hashlib
import lzma
import struct
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from policyengine.arguments import secret_encodings as encodings
from policyengine.arguments import secret_exemptions as exemptions
from policyengine.arguments.secret_scanner import find_secrets

KEY = "ZbcOE6jc0METTwIkTWhiHYQrWlfI2wNkPPzCmP59"  # 40 characters of a generated key (no real one)
_B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _png() -> bytes:
    """A whole 1x1 PNG, chunks and CRCs as an encoder writes them."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0\0\0\0\0"))
        + chunk(b"IEND", b"")
    )


_GIF = base64.b64decode("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")


# --- digests ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("algorithm", "payload"),
    [
        ("sha256", hashlib.sha256(b"x").hexdigest()),
        ("sha256", base64.b64encode(hashlib.sha256(b"x").digest()).decode()),
        ("sha256", base64.b64encode(hashlib.sha256(b"x").digest()).decode().rstrip("=")),
        ("sha384", base64.b64encode(hashlib.sha384(b"x").digest()).decode()),
        ("sha512", base64.b64encode(hashlib.sha512(b"x").digest()).decode()),
        ("h1", base64.b64encode(hashlib.sha256(b"x").digest()).decode()),
        ("md5:hex", hashlib.md5(b"x").hexdigest()),
        ("sha1:hex", hashlib.sha1(b"x").hexdigest()),
        ("blake3:hex", hashlib.sha256(b"x").hexdigest()),
    ],
)
def test_a_digest_of_its_algorithms_size_is_exact(algorithm: str, payload: str) -> None:
    assert exemptions.exact_digest(algorithm, payload)


@pytest.mark.parametrize(
    ("algorithm", "payload"),
    [
        ("sha256", KEY),  # 40: no SHA-256 (64 hex, 43 base64)
        ("sha512", KEY + KEY[:24]),  # 64: SHA-384's length, not SHA-512's
        ("md5:hex", KEY[:22]),  # an MD5's base64 length after a label: MD5 is printed in hex
        ("blake3:hex", KEY + "abc"),  # 43: base64 of 32 bytes, but BLAKE3 is printed in hex
        ("h1", hashlib.sha256(b"x").hexdigest()),  # go.sum's h1 is base64
        ("sha1", KEY + "=="),  # padded, far from 27
    ],
)
def test_another_payload_is_no_digest(algorithm: str, payload: str) -> None:
    assert not exemptions.exact_digest(algorithm, payload)


@pytest.mark.parametrize("label", ["sha256:", "sha1=", "md5=", "blake3:", "h1:", "sha224:", "blake2b:"])
def test_a_key_behind_a_digest_label_is_found(label: str) -> None:
    assert find_secrets(f"checksum {label}{KEY}")


@pytest.mark.parametrize("prefix", ["sha512-", "sha384-", "sha256-", "sha1-"])
def test_a_key_behind_an_sri_prefix_is_found(prefix: str) -> None:
    assert find_secrets(f"integrity {prefix}{KEY}xY7Qz")  # 45: no digest's length


def test_published_digests_stay_clean() -> None:
    sha512 = base64.b64encode(hashlib.sha512(b"pkg").digest()).decode()
    sha256 = base64.b64encode(hashlib.sha256(b"mod").digest()).decode()
    text = f"integrity sha512-{sha512} go.sum h1:{sha256} image sha256:{hashlib.sha256(b'i').hexdigest()}"
    assert not find_secrets(text)


@given(st.binary(min_size=32, max_size=32))
def test_every_sha256_in_base64_is_exact(digest: bytes) -> None:
    encoded = base64.b64encode(digest).decode()
    assert exemptions.exact_digest("sha256", encoded)
    assert exemptions.exact_digest("sha256", encoded.rstrip("="))


# --- data: URIs ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("media", "data"),
    [("image/png", _png()), ("image/gif", _GIF)],
)
def test_an_image_of_its_declared_type_is_exempt(media: str, data: bytes) -> None:
    text = f"data:{media};base64,{base64.b64encode(data).decode()}"
    start = text.index(",") + 1
    assert exemptions.media_data_uri(text, start, text[start:])
    assert not find_secrets(text)


def test_an_image_of_another_declared_type_is_not_exempt() -> None:
    text = f"data:image/jpeg;base64,{base64.b64encode(_png()).decode()}"
    start = text.index(",") + 1
    assert not exemptions.media_data_uri(text, start, text[start:])


@pytest.mark.parametrize(
    "text",
    [
        f"data:image/png;base64,{KEY}",
        f"data:image/png;base64,iVBORw0KGgo{KEY}",  # the signature, then a key
        f"data:application/octet-stream;base64,{KEY}",
        f"data:;base64,{KEY}",
        f"base64,{KEY}",
    ],
)
def test_a_key_behind_a_data_uri_is_found(text: str) -> None:
    assert find_secrets(f"avatar {text}")


@given(st.binary(min_size=8, max_size=200))
def test_random_bytes_are_no_png(tail: bytes) -> None:
    assert not exemptions.media_data_uri(
        "data:image/png;base64,", 22, base64.b64encode(b"\x89PNG\r\n\x1a\n" + tail).decode()
    )


# --- public hosts ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        f"https://docs.google.com/document/d/{KEY}",
        f"https://drive.google.com/file/d/{KEY}",
        f"https://github.com/acme/app/blob/{KEY}",
        f"https://www.youtube.com/watch?v={KEY}",
    ],
)
def test_a_public_hosts_own_layout_is_exempt(url: str) -> None:
    assert exemptions.public_id_url(url, len(url) - len(KEY))


@pytest.mark.parametrize(
    "url",
    [
        f"https://web.archive.org/save/https://collector.example.net/{KEY}",
        f"https://translate.google.com/translate?u=https://evil.example.net/{KEY}",
        f"https://docs.google.com/viewer?url=files.example.net/{KEY}",
        f"x://google.com/{KEY}",
        f"https://github.com/{KEY}",
        f"https://www.google.com/url?q={KEY}",
        f"https://www.google.com/url?q=https%3A%2F%2Fevil.example.net%2F{KEY}",
    ],
)
def test_a_proxied_or_decoy_url_is_not_exempt(url: str) -> None:
    assert not exemptions.public_id_url(url, len(url) - len(KEY))
    assert find_secrets(f"see {url}")


def test_a_second_long_segment_after_a_document_id_is_not_exempt() -> None:
    url = f"https://docs.google.com/document/d/{KEY}aB3/{KEY}"
    run = url.index("/document")
    assert not exemptions.public_id_url(url, run)


# --- grouped keys ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("size", "mark"), [(5, "."), (4, ":"), (8, ";"), (5, ","), (5, "/"), (4, "/"), (14, ".")])
def test_a_key_cut_into_groups_is_glued_and_found(size: int, mark: str) -> None:
    grouped = mark.join(KEY[i : i + size] for i in range(0, len(KEY), size))
    assert [glued for _, _, _, glued in encodings.grouped_runs(f"ref {grouped} ok")] == [KEY]
    assert find_secrets(f"ref {grouped}")


@pytest.mark.parametrize(
    "text",
    [
        "at com.example.payments.internal.ledger.LedgerService.postEntry(LedgerService.java:214)",
        "OID 1.3.6.1.4.1.311.21.8.8915476.11372865.2938475.1027364.85.1.2",
        "fe80::1ff:fe23:4567:890a and 2001:db8:85a3:0:0:8a2e:370:7334, MAC 00:1A:2B:3C:4D:5E",
        "release v12.4.0-rc.3+build.20241206.1532.a1b2c3d",
        "ISBN 978-0-306-40615-7; 978-1-4028-9462-6; logged at 2024-12-06T07:30:15.123Z",
        "serial: 4C4C4544.0035.4410.8051.B4C04F4E3232",
        "see src/main/java/com/example/payments/internal/ledger/LedgerService.java",
        "curl -s -d 'ip=2001:db8:85a3:0:0:8a2e:370:7334&mac=00:1A:2B:3C:4D:5E' https://inventory.example.net/hosts",
    ],
)
def test_grouped_identifiers_stay_clean(text: str) -> None:
    assert not find_secrets(text)


def test_a_base64_blob_with_slashes_is_not_read_in_slash_groups() -> None:
    blob = base64.b64encode(bytes(range(256)) * 8).decode()
    assert not list(encodings.grouped_runs(blob))


@given(st.lists(st.text(alphabet=_B62, min_size=1, max_size=12), min_size=1, max_size=40), st.sampled_from(".:;,/"))
def test_grouped_runs_glue_only_what_the_text_holds(parts: list[str], mark: str) -> None:
    text = mark.join(parts)
    for how, start, end, glued in encodings.grouped_runs(text):
        assert how == "grouped"
        assert text[start:end].replace(mark, "") == glued


# --- compressed blobs ------------------------------------------------------------------------------
_ENV = f"AWS_SECRET_ACCESS_KEY={KEY}\nGITHUB_TOKEN=ghp_{KEY[:36]}\n".encode() * 8


@pytest.mark.parametrize(
    "compress",
    [lzma.compress, bz2.compress, lambda data: lzma.compress(data, format=lzma.FORMAT_ALONE)],
)
def test_a_compressed_credential_file_is_read(compress: object) -> None:
    assert callable(compress)
    data = compress(_ENV)
    assert encodings.decompressed(data, 1 << 16) == _ENV
    assert find_secrets(base64.urlsafe_b64encode(data).decode())


def test_decompression_is_bounded() -> None:
    data = lzma.compress(b"\0" * (1 << 22))
    out = encodings.decompressed(data, 1 << 16)
    assert out is not None
    assert len(out) <= 1 << 16


@given(st.binary(max_size=300))
def test_bytes_that_do_not_decompress_give_nothing_or_a_bounded_prefix(data: bytes) -> None:
    for head in (b"\xfd7zXZ\x00", b"BZh91AY&SY", b"]\x00\x00\x80\x00"):
        out = encodings.decompressed(head + data, 4096)
        assert out is None or len(out) <= 4096


def test_compressed_prose_stays_clean() -> None:
    prose = b"Install the package, run the server and read the release notes for each version. " * 20
    for data in (lzma.compress(prose), bz2.compress(prose)):
        assert not find_secrets(base64.b64encode(data).decode())


# --- known limits ----------------------------------------------------------------------------------
@pytest.mark.xfail(
    strict=True,
    reason="a key of exactly a digest's length after its label (64 base64 characters after 'sha384-') is that digest's "
    "shape: the two cannot be told apart",
)
def test_a_key_of_a_digests_exact_length_is_found() -> None:
    assert find_secrets(f"integrity sha384-{KEY}{KEY[:24]}")


@pytest.mark.xfail(
    strict=True,
    reason="a key cut into DNS labels of lower case and digits only (base36) is no generated key by its shape: "
    "high entropy wants upper case, lower case and digits mixed",
)
def test_a_lower_case_key_in_dns_labels_is_found() -> None:
    assert find_secrets("z6jt6pzh.xtzbfnbn.5jqqzk9k.d2xpi5yb.vcjfm1i5.exfil.example.net")
