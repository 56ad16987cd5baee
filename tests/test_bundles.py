"""Signed pack bundles: build, sign, verify, refuse tampering, poll a path or a local HTTP URL, and the CLI verbs."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import json
import os
import shutil
import stat
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from policyengine.cli.main import main
from policyengine.packs.loader import load_pack
from policyengine.service.bundles import (
    BUNDLE_MANIFEST,
    BundleError,
    BundleManifest,
    BundleSource,
    build_bundle,
    generate_keys,
    sign_bundle,
    verify_bundle,
)
from policyengine.values.problems import PackLoadError

RULES = """\
rules:
  - id: deny-writes
    stage: pre-execute
    tools: [write_file]
    decision: deny
    reason: "No writes."
"""
TESTS = "tests: []\n"


def write_pack(folder: Path, version: str = "1.0.0", rules: str = RULES) -> Path:
    """A small pack with a rule file, a test file and a catalog, plus a stray file a bundle must leave out."""
    (folder / "tests").mkdir(parents=True, exist_ok=True)
    (folder / "pack.yaml").write_text(
        f"name: demo\nversion: {version}\nfiles: [rules.yaml]\ntests: [tests/*.yaml]\ncatalog: tools.jsonl\n"
    )
    (folder / "rules.yaml").write_text(rules)
    (folder / "tests" / "basic.yaml").write_text(TESTS)
    (folder / "tools.jsonl").write_text('{"name": "write_file", "parameters": {"type": "object"}}\n')
    (folder / "notes.txt").write_text("not part of the pack\n")
    return folder


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A signing key pair, and a second public key that signed nothing."""
    root = tmp_path_factory.mktemp("keys")
    generate_keys(root / "key", root / "key.pub")
    generate_keys(root / "other", root / "other.pub")
    return root / "key", root / "key.pub", root / "other.pub"


@pytest.fixture
def signed(tmp_path: Path, keys: tuple[Path, Path, Path]) -> Path:
    """A built and signed bundle of the demo pack."""
    bundle = tmp_path / "out" / "demo.tar.gz"
    bundle.parent.mkdir()
    build_bundle(write_pack(tmp_path / "pack"), bundle)
    sign_bundle(bundle, keys[0])
    return bundle


def entries(bundle: Path) -> list[tuple[str, bytes]]:
    """The members of a bundle, in order."""
    with tarfile.open(bundle, "r:gz") as tar:
        return [(m.name, tar.extractfile(m).read()) for m in tar]  # type: ignore[union-attr]


def retar(bundle: Path, members: list[tuple[str, bytes]], links: tuple[tuple[str, str], ...] = ()) -> None:
    """Rewrite `bundle` with these regular files (and symlinks name -> target), as a forger would."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    bundle.write_bytes(gzip.compress(raw.getvalue()))


def rehash(members: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The members with bundle.json's hashes brought up to date (a forger with no key can do this)."""
    manifest = json.loads(members[0][1])
    for name, data in members[1:]:
        manifest["files"][name] = "sha256:" + hashlib.sha256(data).hexdigest()
    return [(BUNDLE_MANIFEST, json.dumps(manifest).encode()), *members[1:]]


# --- round trip and determinism ----------------------------------------------------------------------------------


def test_round_trip_build_sign_verify_extracts_the_pack_with_its_digest(
    signed: Path, keys: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    pack = load_pack(tmp_path / "pack")
    names = [name for name, _ in entries(signed)]
    assert names == [BUNDLE_MANIFEST, "pack.yaml", "rules.yaml", "tests/basic.yaml", "tools.jsonl"]
    with tarfile.open(signed, "r:gz") as tar:
        assert {(m.mtime, m.uid, m.gid, m.mode, m.uname) for m in tar} == {(0, 0, 0, 0o644, "")}
    manifest = verify_bundle(signed, keys[1])
    assert (manifest.name, manifest.version, manifest.digest) == ("demo", "1.0.0", pack.digest)
    assert manifest.files["rules.yaml"] == "sha256:" + hashlib.sha256(RULES.encode()).hexdigest()
    assert manifest.folder is None
    kept = verify_bundle(signed, keys[1], into=tmp_path / "installed")
    assert kept.folder == tmp_path / "installed"
    with pytest.raises(BundleError, match="it already exists"):
        verify_bundle(signed, keys[1], into=tmp_path / "installed")
    assert load_pack(tmp_path / "installed").digest == pack.digest
    assert not (tmp_path / "installed" / "notes.txt").exists()
    assert signed.with_name("demo.tar.gz.sig").read_bytes().endswith(b"\n")


def test_builds_are_deterministic_whatever_the_folder_and_the_mtimes(tmp_path: Path) -> None:
    write_pack(tmp_path / "a")
    build_bundle(tmp_path / "a", tmp_path / "one.tar.gz")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    for path in (tmp_path / "b").rglob("*"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
    build_bundle(tmp_path / "b", tmp_path / "two.tar.gz")
    build_bundle(tmp_path / "a", tmp_path / "three.tar.gz")
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "three.tar.gz").read_bytes()


def test_a_pack_that_does_not_load_is_not_bundled(tmp_path: Path) -> None:
    write_pack(tmp_path / "pack", rules="rules:\n  - id: x\n    stage: nowhere\n")
    with pytest.raises(PackLoadError):
        build_bundle(tmp_path / "pack", tmp_path / "demo.tar.gz")
    assert not (tmp_path / "demo.tar.gz").exists()


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(
    keys: tuple[Path, Path, Path],
) -> None:
    assert stat.S_IMODE(keys[0].stat().st_mode) == 0o600
    assert b"PUBLIC KEY" in keys[1].read_bytes()
    with pytest.raises(BundleError, match="refusing to overwrite"):
        generate_keys(keys[0].with_name("fresh"), keys[1])
    assert not keys[0].with_name("fresh").exists()  # no half-written pair


def test_a_pack_file_named_like_the_bundle_manifest_or_outside_the_folder_is_not_bundled(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    (pack / "pack.yaml").write_text((pack / "pack.yaml").read_text().replace("tools.jsonl", BUNDLE_MANIFEST))
    (pack / BUNDLE_MANIFEST).write_text("{}")
    with pytest.raises(BundleError, match=r"may not be named bundle\.json"):
        build_bundle(pack, tmp_path / "demo.tar.gz")
    (tmp_path / "secret.yaml").write_text("tests: []\n")
    (pack / "tests" / "leak.yaml").symlink_to(tmp_path / "secret.yaml")
    with pytest.raises(BundleError, match="is outside the pack folder"):
        build_bundle(pack, tmp_path / "demo.tar.gz")


# --- refusals ----------------------------------------------------------------------------------------------------


def test_a_flipped_byte_breaks_the_signature(signed: Path, keys: tuple[Path, Path, Path]) -> None:
    data = bytearray(signed.read_bytes())
    data[len(data) // 2] ^= 0x01
    signed.write_bytes(bytes(data))
    with pytest.raises(BundleError, match="signature does not match"):
        verify_bundle(signed, keys[1])


def test_a_file_changed_and_retarred_without_signing_again_is_refused(
    signed: Path, keys: tuple[Path, Path, Path]
) -> None:
    members = [(n, d.replace(b"deny", b"allow") if n == "rules.yaml" else d) for n, d in entries(signed)]
    retar(signed, rehash(members))
    with pytest.raises(BundleError, match="signature does not match"):
        verify_bundle(signed, keys[1])


def test_another_key_and_a_missing_or_garbled_signature_are_refused(
    signed: Path, keys: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    with pytest.raises(BundleError, match="signature does not match"):
        verify_bundle(signed, keys[2])
    garbled = tmp_path / "garbled.sig"
    garbled.write_text("not base64!\n")
    with pytest.raises(BundleError, match="not base64 of a 64-byte"):
        verify_bundle(signed, keys[1], garbled)
    signed.with_name("demo.tar.gz.sig").unlink()
    with pytest.raises(BundleError, match=r"no signature at .*never installed"):
        verify_bundle(signed, keys[1])
    with pytest.raises(BundleError, match="not a PEM public key"):
        verify_bundle(signed, keys[0], garbled)  # the private key where the public one goes


@pytest.mark.parametrize(
    ("forge", "reason"),
    [
        (lambda m: [*m, ("../x", b"boo")], r"'\.\./x' is absolute, climbs out"),
        (lambda m: [*m, ("/etc/x", b"boo")], r"'/etc/x' is absolute"),
        (lambda m: [*m, ("extra.yaml", b"boo")], r"'extra.yaml' is not listed in bundle.json"),
        (lambda m: [*m, m[2]], r"'rules.yaml' appears twice"),
        (lambda m: [*m[:2], ("rules.yaml", m[2][1] + b"#"), *m[3:]], r"'rules.yaml' does not match its sha256"),
        (lambda m: [*m[:2], *m[3:]], r"lists files the archive lacks: \['rules.yaml'\]"),
        (lambda m: [*m[1:], m[0]], r"the first entry is 'pack.yaml'"),
        (lambda m: [(m[0][0], b"[]"), *m[1:]], r"bundle.json is not a JSON object"),
        (lambda m: rehash([*m[:2], ("rules.yaml", b"rules: 5\n"), *m[3:]]), r"the bundled pack does not load"),
    ],
)
def test_a_signed_but_malformed_bundle_is_refused_with_its_reason(
    forge: Any, reason: str, signed: Path, keys: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    # Signed with the right key: the content checks must hold even against the key's holder (or a build bug).
    retar(signed, forge(entries(signed)))
    sign_bundle(signed, keys[0])
    with pytest.raises(BundleError, match=reason):
        verify_bundle(signed, keys[1], into=tmp_path / "installed")
    assert not (tmp_path / "installed").exists()
    assert not list(tmp_path.glob(".bundle-*"))


def test_a_symlink_entry_is_refused(signed: Path, keys: tuple[Path, Path, Path]) -> None:
    retar(signed, entries(signed), links=(("tests/link.yaml", "/etc/passwd"),))
    sign_bundle(signed, keys[0])
    with pytest.raises(BundleError, match=r"'tests/link.yaml' is a link"):
        verify_bundle(signed, keys[1])


def test_a_decompression_bomb_is_refused(signed: Path, keys: tuple[Path, Path, Path]) -> None:
    members = entries(signed)
    retar(signed, rehash([*members, ("tests/huge.yaml", b"\0" * 2_000_000)]))
    sign_bundle(signed, keys[0])
    with pytest.raises(BundleError, match="inflates to more than 1000000 bytes"):
        verify_bundle(signed, keys[1], max_unpacked=1_000_000)


def test_a_digest_that_is_not_the_packs_is_refused(signed: Path, keys: tuple[Path, Path, Path]) -> None:
    members = entries(signed)
    manifest = json.loads(members[0][1])
    manifest["digest"] = "sha256:" + "0" * 64
    retar(signed, [(BUNDLE_MANIFEST, json.dumps(manifest).encode()), *members[1:]])
    sign_bundle(signed, keys[0])
    with pytest.raises(BundleError, match=r"the extracted pack is demo 1\.0\.0 sha256:"):
        verify_bundle(signed, keys[1])


def test_a_manifest_round_trips_through_json() -> None:
    manifest = BundleManifest("demo", "1.0.0", "sha256:" + "a" * 64, {"pack.yaml": "sha256:" + "b" * 64})
    assert BundleManifest.from_json(manifest.to_json(), "here") == manifest
    with pytest.raises(BundleError, match="format 2 is not supported"):
        BundleManifest.from_json(manifest.to_json().replace(b'"format": 1', b'"format": 2'), "here")


# --- polling -----------------------------------------------------------------------------------------------------


def test_a_source_path_is_polled_cheaply_and_a_new_bundle_is_picked_up(
    signed: Path, keys: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    source = BundleSource(str(signed), keys[1], tmp_path / "work")
    first = source.poll()
    assert first is not None and load_pack(first).version == "1.0.0"
    assert source.poll() is None
    build_bundle(write_pack(tmp_path / "pack", version="1.1.0"), signed)
    sign_bundle(signed, keys[0])
    second = source.poll()
    assert second is not None and second != first and load_pack(second).version == "1.1.0"
    assert source.current == second and source.manifest is not None and source.manifest.version == "1.1.0"
    signed.write_bytes(signed.read_bytes()[:-10])  # a half-published or tampered bundle
    with pytest.raises(BundleError, match="signature does not match"):
        source.poll()
    assert source.current == second
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == sorted([first.name, second.name])


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves the files of `root` with a content ETag, answering 304 to a matching If-None-Match."""

    root: Path
    log: list[tuple[str, int]]

    def do_GET(self) -> None:
        path = self.root / self.path.lstrip("/")
        if not path.is_file():
            self._reply(404, b"")
            return
        body = path.read_bytes()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        if self.headers.get("If-None-Match") == etag:
            self._reply(304, b"", etag)
        else:
            self._reply(200, body, etag)

    def _reply(self, status: int, body: bytes, etag: str | None = None) -> None:
        self.log.append((self.path, status))
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server(signed: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """A local HTTP server on 127.0.0.1 serving the signed bundle's folder; its URL and its request log."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    log: list[tuple[str, int]] = []
    handler = type("Handler", (_Handler,), {"root": signed.parent, "log": log})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", log
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_source_url_uses_its_etag_picks_up_a_new_bundle_and_refuses_a_tampered_one(
    server: tuple[str, list[tuple[str, int]]], signed: Path, keys: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    url, log = server
    source = BundleSource(f"{url}/demo.tar.gz", keys[1], tmp_path / "work")
    first = source.poll()
    assert first is not None and load_pack(first).digest == load_pack(tmp_path / "pack").digest
    log.clear()
    assert source.poll() is None
    assert log == [("/demo.tar.gz", 304)]
    build_bundle(write_pack(tmp_path / "pack", version="2.0.0"), signed)
    sign_bundle(signed, keys[0])
    second = source.poll()
    assert second is not None and load_pack(second).version == "2.0.0"
    members = entries(signed)
    retar(signed, [*members, ("../x", b"boo")])  # tampered after signing
    with pytest.raises(BundleError, match="signature does not match"):
        source.poll()
    assert source.current == second
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == sorted([first.name, second.name])
    assert not (tmp_path / "x").exists()


def test_a_missing_url_or_signature_raises(
    server: tuple[str, list[tuple[str, int]]], keys: Any, tmp_path: Path
) -> None:
    url, _ = server
    with pytest.raises(BundleError, match="HTTP 404"):
        BundleSource(f"{url}/absent.tar.gz", keys[1], tmp_path / "work").poll()
    with pytest.raises(BundleError, match="only paths and http"):
        BundleSource("ftp://example.invalid/x", keys[1], tmp_path / "work")


# --- the CLI -----------------------------------------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_cli_builds_signs_and_verifies(tmp_path: Path) -> None:
    pack = write_pack(tmp_path / "pack")
    key, pub, bundle = str(tmp_path / "k"), str(tmp_path / "k.pub"), str(tmp_path / "demo.tar.gz")
    assert run_cli("bundle", "keygen", "--private", key, "--public", pub)[0] == 0
    code, out, _ = run_cli("bundle", "build", str(pack), "-o", bundle)
    assert code == 0 and "demo 1.0.0 sha256:" in out
    assert run_cli("bundle", "sign", bundle, "--key", key)[0] == 0
    code, out, _ = run_cli("bundle", "verify", bundle, "--public-key", pub)
    assert code == 0
    assert f"digest: {load_pack(pack).digest}" in out and "name: demo" in out and "version: 1.0.0" in out
    Path(bundle).write_bytes(Path(bundle).read_bytes() + b"\0")
    code, _, err = run_cli("bundle", "verify", bundle, "--public-key", pub)
    assert code == 2 and "signature does not match" in err and "hint:" in err
    code, _, err = run_cli("bundle", "keygen", "--private", key, "--public", pub)
    assert code == 2 and "refusing to overwrite" in err
    code, _, err = run_cli("bundle")
    assert code == 2 and "ACTION" in err
