"""Signed pack bundles: build a deterministic tar.gz of a pack, sign it (Ed25519), verify it, poll a source for it.

A bundle is a gzip'd tar whose first member is `bundle.json` (format, pack name, version, pack digest,
the SHA-256 of every file), then the pack's files in sorted order. `BUNDLE.sig` holds one line: the
base64 of the Ed25519 signature over the 32-byte SHA-256 of the bundle's bytes. docs/bundles.md.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from policyengine.errors import PolicyEngineError, install_hint
from policyengine.packs.loader import MANIFEST, load_pack
from policyengine.values.problems import PackLoadError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

FORMAT = 1
BUNDLE_MANIFEST = "bundle.json"
SIGNATURE_SUFFIX = ".sig"
# Packs are kilobytes to a few megabytes: these bound what a hostile source can make us read or inflate.
MAX_BUNDLE_BYTES = 32 * 1024 * 1024
MAX_UNPACKED_BYTES = 128 * 1024 * 1024
MAX_ENTRIES = 10_000
_FIXED_MTIME = 0
_FILE_MODE = 0o644
_SHA256 = re.compile(r"^sha256:[0-9a-f]{64}$")


class BundleError(PolicyEngineError):
    """A bundle could not be built, signed, fetched or verified; nothing from it was installed."""


@dataclass(frozen=True)
class BundleManifest:
    """The contents of `bundle.json`; `folder` is where a verified bundle was extracted, if it was kept."""

    name: str
    version: str
    digest: str
    files: Mapping[str, str]
    format: int = FORMAT
    folder: Path | None = field(default=None, compare=False)

    def to_json(self) -> bytes:
        """`bundle.json`'s bytes: sorted keys, two-space indent, one trailing newline (deterministic)."""
        data = {
            "format": self.format,
            "name": self.name,
            "version": self.version,
            "digest": self.digest,
            "files": dict(sorted(self.files.items())),
        }
        return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, raw: bytes, where: str) -> BundleManifest:
        """Parse `bundle.json` strictly: any unknown, missing or malformed field refuses the bundle."""
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise _refused(where, f"{BUNDLE_MANIFEST} is not JSON ({error})") from None
        if not isinstance(data, dict):
            raise _refused(where, f"{BUNDLE_MANIFEST} is not a JSON object")
        if data.get("format") != FORMAT:
            raise BundleError(
                f"{where}: bundle format {data.get('format')!r} is not supported (this policyengine reads {FORMAT})",
                hint="rebuild the bundle with this version's `policyengine bundle build`, or upgrade policyengine",
            )
        expected = {"format", "name", "version", "digest", "files"}
        if set(data) != expected:
            raise _refused(where, f"{BUNDLE_MANIFEST} has fields {sorted(data)}, expected {sorted(expected)}")
        name, version, digest, files = data["name"], data["version"], data["digest"], data["files"]
        if not (isinstance(name, str) and isinstance(version, str) and isinstance(digest, str)):
            raise _refused(where, f"{BUNDLE_MANIFEST}: name, version and digest must be strings")
        if not _SHA256.match(digest):
            raise _refused(where, f"{BUNDLE_MANIFEST}: digest {digest!r} is not sha256:<64 hex>")
        if not isinstance(files, dict) or MANIFEST not in files:
            raise _refused(where, f"{BUNDLE_MANIFEST}: `files` must be an object that lists {MANIFEST}")
        for rel, hashed in files.items():
            _check_name(rel, where)
            if rel == BUNDLE_MANIFEST or not isinstance(hashed, str) or not _SHA256.match(hashed):
                raise _refused(where, f"{BUNDLE_MANIFEST}: entry {rel!r} -> {hashed!r} is not a file and its sha256")
        return cls(name=name, version=version, digest=digest, files=files, format=FORMAT)


def _refused(where: str, what: str) -> BundleError:
    return BundleError(
        f"{where}: bundle refused: {what}",
        hint="rebuild the bundle with `policyengine bundle build` and sign it again; do not edit a bundle by hand",
    )


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# --- building ----------------------------------------------------------------------------------------------------


def _pack_files(folder: Path, files: tuple[str, ...], tests: tuple[str, ...], catalog: Path | None) -> list[str]:
    """The pack-relative POSIX paths a bundle carries: the manifest, its rule files, its tests and its catalog."""
    root = folder.resolve()
    # PurePosixPath drops `./` and doubled slashes, which the loader accepts and a bundle entry name may not hold.
    names = {MANIFEST, *(PurePosixPath(rel).as_posix() for rel in files)}
    if catalog is not None:
        names.add(catalog.relative_to(folder).as_posix())
    for pattern in tests:
        pure = PurePosixPath(pattern.replace("\\", "/"))
        if not pattern.strip() or pure.is_absolute() or ".." in pure.parts or re.match(r"^[A-Za-z]:", pattern):
            raise BundleError(
                f"{folder / MANIFEST}: test glob {pattern!r} must be relative to the pack folder, without '..'",
                hint="write it like tests/*.yaml",
            )
        try:
            matches = sorted(folder.glob(pure.as_posix()))
        except (ValueError, IndexError, NotImplementedError) as error:
            raise BundleError(f"{folder / MANIFEST}: test glob {pattern!r} is not a usable glob ({error})") from None
        names.update(p.relative_to(folder).as_posix() for p in matches if p.is_file())
    for rel in names:
        # A bundle carries the content of what the pack reads; a link out of the folder would ship unreviewed files.
        if not (folder / rel).resolve().is_relative_to(root):
            raise BundleError(
                f"{folder / rel} is outside the pack folder {folder}",
                hint="copy the file into the pack folder instead of linking to it",
            )
        _check_name(rel, str(folder))
    if BUNDLE_MANIFEST in names:
        raise BundleError(
            f"{folder / BUNDLE_MANIFEST}: a pack file may not be named {BUNDLE_MANIFEST} (the bundle's own manifest)",
            hint=f"rename the file and update pack.yaml; {BUNDLE_MANIFEST} is reserved at the top of a bundle",
        )
    return sorted(names)


def _tar_info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = _FIXED_MTIME
    info.mode = _FILE_MODE
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.type = tarfile.REGTYPE
    return info


def build_bundle(folder: str | Path, output: str | Path) -> BundleManifest:
    """Write the pack at `folder` as a deterministic bundle at `output`; the pack must load (else PackLoadError)."""
    folder = Path(folder)
    pack = load_pack(folder)
    names = _pack_files(folder, pack.files, pack.tests, pack.catalog)
    contents: dict[str, bytes] = {}
    for rel in names:
        try:
            contents[rel] = (folder / rel).read_bytes()
        except OSError as error:
            raise BundleError(f"cannot read {folder / rel}: {error.strerror or error}") from None
    manifest = BundleManifest(
        name=pack.name,
        version=pack.version,
        digest=pack.digest,
        files={rel: _sha256(data) for rel, data in contents.items()},
    )
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, data in [(BUNDLE_MANIFEST, manifest.to_json()), *sorted(contents.items())]:
            tar.addfile(_tar_info(rel, len(data)), io.BytesIO(data))
    packed = io.BytesIO()
    # No file name and a fixed mtime in the gzip header: the same pack gives the same bytes.
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, compresslevel=9, mtime=_FIXED_MTIME) as gz:
        gz.write(raw.getvalue())
    _write_atomic(Path(output), packed.getvalue())
    return manifest


def _write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write through a temporary file and a rename: a poller never reads half a bundle or half a signature."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent or Path("."), prefix=f".{path.name}.")
    except OSError as error:
        raise BundleError(f"cannot write {path}: {error.strerror or error}", hint="check the folder exists") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise BundleError(f"cannot write {path}: {error.strerror or error}") from None


# --- keys and signatures -----------------------------------------------------------------------------------------


def _ed25519() -> Any:
    """The cryptography module for Ed25519, imported on first use (`agent-policyengine[server]`)."""
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:  # pragma: no cover - the dev environment has it
        raise BundleError(
            "signing and verifying bundles needs the `cryptography` package",
            hint=install_hint("server"),
        ) from None
    return ed25519


def generate_keys(private_path: str | Path, public_path: str | Path) -> None:
    """Write a new Ed25519 key pair as PEM: the private key 0600 (refusing to overwrite either file)."""
    from cryptography.hazmat.primitives import serialization

    private_path, public_path = Path(private_path), Path(public_path)
    key = _ed25519().Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    for path in (private_path, public_path):
        if path.exists():  # checked for both first: no half-written pair (O_EXCL below still guards a race)
            raise BundleError(
                f"{path} already exists; refusing to overwrite a key",
                hint="choose other paths, or move the old key away first",
            )
    for path, data, mode in ((private_path, private_pem, 0o600), (public_path, public_pem, 0o644)):
        try:
            # O_EXCL: overwriting a signing key would lose it; 0600 from creation, never readable by others.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            raise BundleError(
                f"{path} already exists; refusing to overwrite a key",
                hint="choose other paths, or move the old key away first",
            ) from None
        except OSError as error:
            raise BundleError(f"cannot create {path}: {error.strerror or error}") from None
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)


def _read_limited(path: Path, limit: int, what: str) -> bytes:
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise BundleError(f"cannot read {what} {path}: {error.strerror or error}", hint="check the path") from None
    if len(data) > limit:
        raise BundleError(f"{what} {path} is larger than {limit} bytes", hint="a pack bundle is at most a few MB")
    return data


def _private_key(path: str | Path) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization

    path = Path(path)
    keygen = "create one with `policyengine bundle keygen`"
    return _pem_key(  # type: ignore[no-any-return]
        _read_limited(path, 64 * 1024, "private key"),
        lambda pem: serialization.load_pem_private_key(pem, password=None),
        _ed25519().Ed25519PrivateKey,
        (f"{path} is not an unencrypted PEM private key", keygen),
        (f"{path} is not an Ed25519 key", keygen),
    )


def load_public_key(public_key: str | Path | bytes) -> Ed25519PublicKey:
    """An Ed25519 public key from a PEM file (a path) or PEM bytes."""
    from cryptography.hazmat.primitives import serialization

    where = "the public key" if isinstance(public_key, bytes) else str(public_key)
    return _pem_key(  # type: ignore[no-any-return]
        public_key if isinstance(public_key, bytes) else _read_limited(Path(public_key), 64 * 1024, "public key"),
        serialization.load_pem_public_key,
        _ed25519().Ed25519PublicKey,
        (f"{where} is not a PEM public key", "pass the .pub file written by `policyengine bundle keygen`"),
        (f"{where} is not an Ed25519 public key", "use the key from `policyengine bundle keygen`"),
    )


def _pem_key(
    pem: bytes, load: Callable[[bytes], object], kind: type, not_pem: tuple[str, str], not_kind: tuple[str, str]
) -> Any:
    """The key `load` reads from `pem`, of class `kind`; else a BundleError (message, hint) saying which it is not."""
    try:
        key = load(pem)
    except (ValueError, TypeError) as error:
        raise BundleError(f"{not_pem[0]} ({error})", hint=not_pem[1]) from None
    if not isinstance(key, kind):
        raise BundleError(not_kind[0], hint=not_kind[1])
    return key


def sign_bundle(bundle: str | Path, private_key: str | Path) -> Path:
    """Sign `bundle` with the PEM key at `private_key`; write and return `bundle + ".sig"` (base64, one line)."""
    bundle = Path(bundle)
    data = _read_limited(bundle, MAX_BUNDLE_BYTES, "bundle")
    signature = _private_key(private_key).sign(hashlib.sha256(data).digest())
    target = bundle.with_name(bundle.name + SIGNATURE_SUFFIX)
    _write_atomic(target, base64.b64encode(signature) + b"\n")
    return target


def _check_signature(data: bytes, signature: bytes, key: Ed25519PublicKey, where: str) -> None:
    from cryptography.exceptions import InvalidSignature

    try:
        raw = base64.b64decode(signature.strip(), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 64:
        raise BundleError(
            f"{where}: the signature is not base64 of a 64-byte Ed25519 signature",
            hint="sign the bundle with `policyengine bundle sign`",
        )
    try:
        key.verify(raw, hashlib.sha256(data).digest())
    except InvalidSignature:
        raise BundleError(
            f"{where}: the signature does not match this bundle and public key (tampered, re-built, or another key)",
            hint="re-sign the bundle with `policyengine bundle sign`, or check that the right public key is configured",
        ) from None


# --- verifying ---------------------------------------------------------------------------------------------------


def _check_name(name: object, where: str) -> None:
    """A member name: relative POSIX, no '..', '.', empty part, backslash, drive, control character."""
    ok = (
        isinstance(name, str)
        and bool(name)
        and not name.startswith("/")
        and "\\" not in name
        and not re.match(r"^[A-Za-z]:", name)
        and not any(ord(c) < 32 for c in name)
        and all(part not in ("", ".", "..") for part in name.split("/"))
    )
    if not ok:
        raise _refused(where, f"entry name {name!r} is absolute, climbs out with '..' or is malformed")


def _inflate(data: bytes, limit: int, where: str) -> bytes:
    """Gunzip with a ceiling on the output: a small bundle cannot inflate to gigabytes (a decompression bomb)."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as error:
        raise _refused(where, f"not a gzip file ({error})") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise _refused(where, f"it inflates to more than {limit} bytes")
    if not inflater.eof or inflater.unused_data:
        raise _refused(where, "the gzip stream is truncated or followed by other data")
    return out


def _members(raw: bytes, where: str) -> Iterator[tuple[tarfile.TarInfo, bytes]]:
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for count, info in enumerate(tar, 1):
                if count > MAX_ENTRIES:
                    raise _refused(where, f"more than {MAX_ENTRIES} entries")
                _check_name(info.name, where)
                if not info.isreg():
                    kind = "a link" if info.issym() or info.islnk() else "not a regular file"
                    raise _refused(where, f"entry {info.name!r} is {kind}; a bundle holds regular files only")
                handle = tar.extractfile(info)
                assert handle is not None  # a regular file
                yield info, handle.read()
    except (tarfile.TarError, ValueError, EOFError) as error:  # UnicodeError is a ValueError: a garbled pax header
        raise _refused(where, f"not a tar archive ({error})") from None


def _unpack(data: bytes, where: str, max_unpacked: int) -> tuple[BundleManifest, dict[str, bytes]]:
    """The manifest and the files of a bundle, each checked against it; nothing is written."""
    manifest: BundleManifest | None = None
    contents: dict[str, bytes] = {}
    for info, body in _members(_inflate(data, max_unpacked, where), where):
        if manifest is None:
            if info.name != BUNDLE_MANIFEST:
                raise _refused(where, f"the first entry is {info.name!r}, not {BUNDLE_MANIFEST}")
            manifest = BundleManifest.from_json(body, where)
            continue
        if info.name in contents or info.name == BUNDLE_MANIFEST:
            raise _refused(where, f"entry {info.name!r} appears twice")
        expected = manifest.files.get(info.name)
        if expected is None:
            raise _refused(where, f"entry {info.name!r} is not listed in {BUNDLE_MANIFEST}")
        if _sha256(body) != expected:
            raise _refused(where, f"entry {info.name!r} does not match its sha256 in {BUNDLE_MANIFEST}")
        contents[info.name] = body
    if manifest is None:
        raise _refused(where, "the archive is empty")
    missing = sorted(set(manifest.files) - set(contents))
    if missing:
        raise _refused(where, f"{BUNDLE_MANIFEST} lists files the archive lacks: {missing}")
    return manifest, contents


def _extract(manifest: BundleManifest, contents: Mapping[str, bytes], folder: Path, where: str) -> None:
    """Write the checked files under the fresh `folder`, then load the pack: it must have the manifest's digest."""
    root = folder.resolve()
    for rel, body in contents.items():
        target = folder / rel
        if not target.resolve().is_relative_to(root):  # names were checked; this is the last line of defence
            raise _refused(where, f"entry {rel!r} would be written outside the extraction folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("xb") as handle:  # "x": never follow or replace something already there
            handle.write(body)
    try:
        pack = load_pack(folder)
    except PackLoadError as error:
        raise BundleError(
            f"{where}: the bundled pack does not load:\n{error.render()}",
            hint="fix the pack, check it with `policyengine check`, then build and sign the bundle again",
        ) from None
    if (pack.digest, pack.name, pack.version) != (manifest.digest, manifest.name, manifest.version):
        raise _refused(
            where,
            f"the extracted pack is {pack.name} {pack.version} {pack.digest}, but {BUNDLE_MANIFEST} says "
            f"{manifest.name} {manifest.version} {manifest.digest}",
        )


def verify_bytes(
    data: bytes,
    signature: bytes,
    public_key: Ed25519PublicKey,
    *,
    where: str,
    into: Path | None = None,
    max_unpacked: int = MAX_UNPACKED_BYTES,
) -> BundleManifest:
    """Verify a bundle held in memory (see verify_bundle); `into` (which must not exist) keeps the extracted pack."""
    if len(data) > MAX_BUNDLE_BYTES:
        raise BundleError(f"{where}: the bundle is larger than {MAX_BUNDLE_BYTES} bytes")
    # The signature first: nothing of an unsigned archive is parsed, inflated or written.
    _check_signature(data, signature, public_key, where)
    manifest, contents = _unpack(data, where, max_unpacked)
    if into is not None and (into.exists() or into.is_symlink()):
        raise BundleError(f"{where}: cannot extract into {into}: it already exists", hint="pass a new folder")
    parent = into.parent if into is not None else None
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".bundle-", dir=parent))
    try:
        _extract(manifest, contents, scratch, where)
        if into is None:
            return manifest
        # A rename within one folder: the pack appears whole or not at all.
        os.rename(scratch, into)
    except OSError as error:
        raise BundleError(f"{where}: cannot extract the bundle: {error.strerror or error}") from None
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return BundleManifest(manifest.name, manifest.version, manifest.digest, manifest.files, manifest.format, into)


def verify_bundle(
    bundle: str | Path,
    public_key: str | Path | bytes,
    signature: str | Path | None = None,
    *,
    into: str | Path | None = None,
    max_unpacked: int = MAX_UNPACKED_BYTES,
) -> BundleManifest:
    """Check the signature (default `bundle + ".sig"`), every entry and the pack's digest; raise BundleError if not."""
    bundle = Path(bundle)
    key = load_public_key(public_key)
    sig_path = Path(signature) if signature is not None else bundle.with_name(bundle.name + SIGNATURE_SUFFIX)
    data = _read_limited(bundle, MAX_BUNDLE_BYTES, "bundle")
    if not sig_path.exists():
        raise BundleError(
            f"{bundle}: no signature at {sig_path}; an unsigned bundle is never installed",
            hint="sign it with `policyengine bundle sign BUNDLE --key KEY`, or pass the signature's path",
        )
    sig = _read_limited(sig_path, 4096, "signature")
    return verify_bytes(
        data, sig, key, where=str(bundle), into=Path(into) if into is not None else None, max_unpacked=max_unpacked
    )


# --- polling -----------------------------------------------------------------------------------------------------


class BundleSource:
    """A bundle at a path or an http(s) URL, polled: each changed, verified bundle is extracted to a new folder."""

    def __init__(self, source: str, public_key: str | Path, workdir: str | Path, *, timeout: float = 10.0) -> None:
        self.source = source
        self.is_url = source.startswith(("http://", "https://"))
        if "://" in source and not self.is_url:
            raise BundleError(f"bundle source {source!r}: only paths and http(s) URLs are supported")
        self.key = load_public_key(public_key)
        self.workdir = Path(workdir)
        self.timeout = timeout
        self.current: Path | None = None
        self.manifest: BundleManifest | None = None
        self._state: tuple[Any, ...] | None = None  # what the last good bundle looked like (stat, or ETag)
        self._sha: str | None = None
        self._folders: list[Path] = []

    def poll(self) -> Path | None:
        """The folder of a new verified pack, or None if the bundle did not change; BundleError if it is bad."""
        fetched = self._fetch_url() if self.is_url else self._fetch_path()
        if fetched is None:
            return None
        data, signature, state = fetched
        sha = hashlib.sha256(data).hexdigest()
        if sha == self._sha:  # the same bytes again (a touch, a server without ETag)
            self._state = state
            return None
        self.workdir.mkdir(parents=True, exist_ok=True)
        target = self._new_folder(sha)
        manifest = verify_bytes(data, signature, self.key, where=self.source, into=target)
        self._state, self._sha, self.current, self.manifest = state, sha, target, manifest
        self._folders.append(target)
        self._prune()
        return target

    def _new_folder(self, sha: str) -> Path:
        base = f"pack-{sha[:16]}"
        target, n = self.workdir / base, 1
        while target.exists():
            n += 1
            target = self.workdir / f"{base}-{n}"
        return target

    def _prune(self, keep: int = 2) -> None:
        # The previous folder stays: a caller may still be reading it while it swaps to the new one.
        while len(self._folders) > keep:
            shutil.rmtree(self._folders.pop(0), ignore_errors=True)

    def _fetch_path(self) -> tuple[bytes, bytes, tuple[Any, ...]] | None:
        path = Path(self.source)
        sig_path = path.with_name(path.name + SIGNATURE_SUFFIX)
        try:
            stats = path.stat(), sig_path.stat()
        except OSError as error:
            raise BundleError(
                f"bundle source {self.source}: cannot stat {error.filename}: {error.strerror or error}",
                hint="publish the bundle and its .sig side by side",
            ) from None
        state = tuple((s.st_mtime_ns, s.st_size, s.st_ino) for s in stats)
        if state == self._state:
            return None
        return _read_limited(path, MAX_BUNDLE_BYTES, "bundle"), _read_limited(sig_path, 4096, "signature"), state

    def _fetch_url(self) -> tuple[bytes, bytes, tuple[Any, ...]] | None:
        headers = {}
        if self._state is not None:
            etag, modified = self._state
            if etag:
                headers["If-None-Match"] = etag
            if modified:
                headers["If-Modified-Since"] = modified
        status, data, reply = self._get(self.source, headers, MAX_BUNDLE_BYTES)
        if status == 304:
            return None
        _, signature, _ = self._get(self.source + SIGNATURE_SUFFIX, {}, 4096)
        state = (reply.get("ETag"), reply.get("Last-Modified"))
        return data, signature, state

    def _get(self, url: str, headers: dict[str, str], limit: int) -> tuple[int, bytes, Mapping[str, str]]:
        request = urllib.request.Request(url, headers={"User-Agent": "policyengine-bundle", **headers})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                data = reply.read(limit + 1)
                status, got = reply.status, dict(reply.headers.items())
        except urllib.error.HTTPError as error:
            if error.code == 304:
                return 304, b"", {}
            raise BundleError(
                f"cannot fetch {url}: HTTP {error.code} {error.reason}",
                hint="check the URL; the signature is expected at the bundle's URL + .sig",
            ) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise BundleError(f"cannot fetch {url}: {reason}", hint="check the URL and the network") from None
        if len(data) > limit:
            raise BundleError(f"{url} is larger than {limit} bytes", hint="a pack bundle is at most a few MB")
        return status, data, got
