"""Round fifteen (set N): secret files by the shape of their names, short names on mounted drives, mounted roots."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine import PolicyLayers, Registry
from policyengine.adapters.claude_code import BUILTIN_CATALOG
from policyengine.arguments.paths import (
    _ROOT_MOUNT_NAME,
    _SYSTEM_HEADS,
    is_unknown,
    normalize_path,
    path_surely_within,
    path_within,
)
from policyengine.enforce.evaluate import evaluate_sync
from policyengine.tools.catalog import load_catalog
from support import load_yaml

ROOT = Path(__file__).resolve().parent.parent
SYSTEM = ["/etc", "/usr", "/boot", "/var", "/root", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]


@cache
def _lists() -> dict[str, Any]:
    data = load_yaml(ROOT / "policies" / "claude-code" / "lists.yaml")
    assert isinstance(data, dict)
    lists = data["lists"]
    assert isinstance(lists, dict)
    return lists


def _any(name: str, subject: str) -> bool:
    return any(re.search(pattern, subject) for pattern in _lists()[name])


def _secret_name(path: str) -> bool:
    """The pack's name-shape test, as no-secret-files reads it over a normalised path."""
    subject = normalize_path(path)
    return (_any("secret_name_shapes", subject) or _any("secret_bare_name_shapes", subject)) and not _any(
        "secret_name_plain", subject
    )


@pytest.mark.parametrize(
    "path",
    [
        "key.json",
        "keyfile.json",
        "creds.json",
        "config/gcp-keyfile.json",
        "deploy/service_key.yaml",
        "ops/db-password.txt",
        "keys/signing-key.asc",
        "jwk.json",
        "ios/App/Keys.plist",
        "creds.json~",
        "secret.prod.yaml",
        "api_token.2.json.bak",
        ".api_key",
        ".token",
        "ops/vault_password_file",
        "ops/ansible-vault-password-file",
        "signing.privkey",
        "deploy/github_rsa",
        "ci/deploy_ed25519",
        "keys/ci_ecdsa",
        "config/jwtRS256",
        "certs/jwt_es384",
        "rs256.key",
        "C:\\Users\\dev\\project\\Creds.JSON",
    ],
)
def test_credential_names_by_shape(path: str) -> None:
    assert _secret_name(path), path


@pytest.mark.parametrize(
    "path",
    [
        "src/auth/keys.ts",
        "src/config/db.env.ts",
        "src/auth/token.py",
        "src/secrets_loader.py",
        "docs/credential-rotation.md",
        "docs/api-keys.md",
        "config/jwtRS256.key.pub",
        "deploy/github_rsa.pub",
        "certs/ca.crt",
        "keys/public-key.json",
        "keys/pubkey.asc",
        "deploy/ssh/authorized_keys",
        "schemas/credentials.schema.json",
        "example-key.json",
        "locales/en/reset-password.json",
        "i18n/fr/password.json",
        ".github/workflows/rotate-keys.yml",
        "design/tokens.json",
        "models/special_tokens_map.json",
        "requirements-private.txt",
        "db/primary-key.json",
        "src/keyboard.json",
        "keybindings.json",
        "monkey.json",
        "META-INF/CERT.RSA",
        "aes256.txt",
        "testdata/ed25519_vectors.json",
        "api_token",
        "secret_key",
        "rotate_db_password",
        "fix/api-key",
        "fix/db-creds",
        "pkg/token",
        "src/keys",
        "src/_secrets",
        "prod.db.password",
        "/etc/passwd",
    ],
)
def test_look_alikes_are_no_credential_names(path: str) -> None:
    assert not _secret_name(path), path


_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12)


@settings(max_examples=60)
@given(
    word=_WORDS, ext=st.sampled_from(["ts", "tsx", "js", "py", "go", "rs", "java", "md", "rst", "html", "css", "pub"])
)
def test_code_documents_and_public_halves_never_match(word: str, ext: str) -> None:
    for name in (f"{word}-key.{ext}", f"{word}_token.{ext}", f"creds.{word}.{ext}", f"{word}_rsa.{ext}"):
        assert not _secret_name(f"src/{name}"), name


@settings(max_examples=60)
@given(word=_WORDS, cred=st.sampled_from(["key", "creds", "token", "secret", "password", "keyfile"]))
def test_a_credential_word_last_with_a_data_extension_matches(word: str, cred: str) -> None:
    name = f"{word}-{cred}.json"
    plain = _any("secret_name_plain", normalize_path(f"config/{name}"))
    assert _secret_name(f"config/{name}") != plain, name


@pytest.mark.xfail(
    strict=True,
    reason="known limit: an SSH key named with no credential word and no algorithm (deploy/ansible_id) cannot be "
    "told from any other file by its name; its content is the only sign",
)
def test_a_key_named_for_its_user_only() -> None:
    assert _secret_name("deploy/ansible_id")


# Mounted roots (bl-mnt-installer-roots, bl-unlisted-host-mount-roots).


@pytest.mark.parametrize(
    "path",
    [
        "/mnt/etc/fstab",
        "/mnt/root/.ssh",
        "/mnt/gentoo/etc/portage/make.conf",
        "/mnt/debian/etc/apt/sources.list",
        "/mnt/wslg/distro/etc/ssl/private/x.key",
        "/media/usb/etc/shadow",
        "/run/media/dev/disk/var/lib/dpkg/status",
        "/srv/chroot/bookworm/usr/bin/sudo",
        "/hostroot/etc/kubernetes/admin.conf",
        "/host_root/var/lib/kubelet/pki/x.pem",
        "/host-rootfs/etc/kubernetes/pki/ca.key",
        "/node-root/root/.docker",
        "/noderoot/etc/containerd/config.toml",
        "/newroot/usr/lib/systemd/system/sshd.service",
        "/run/host/etc/os-release",
    ],
)
def test_mounted_roots_are_read_as_the_root(path: str) -> None:
    assert path_within(path, SYSTEM), path
    assert not path_surely_within(path, SYSTEM), "an alias widens what may be forbidden, never what is surely inside"


@pytest.mark.parametrize(
    "path",
    [
        "/workspace/mnt/etc/config.yaml",
        "mnt/etc/app.conf",
        "hostroot/README.md",
        "/mnt/c/Users/dev/project/lib/util.py",
        "/mnt/c/etc/x",
        "/mnt/data/photos/2024/img.jpg",
        "/mnt/data/projects/app/etc/settings.yaml",
        "/media/usb/backup.tar",
        "/hostroot-docs/README.md",
        "/home/dev/mnt/etc/x",
    ],
)
def test_other_folders_named_mnt_or_root_are_not(path: str) -> None:
    assert not path_within(path, SYSTEM), path


@settings(max_examples=60)
@given(
    mount=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=2, max_size=12),
    head=st.sampled_from(sorted(_SYSTEM_HEADS)),
    tail=_WORDS,
)
def test_a_named_mount_below_mnt_reads_a_system_folder_as_the_root(mount: str, head: str, tail: str) -> None:
    assert path_within(f"/mnt/{mount}/{head}/{tail}", f"/{head}")
    assert path_within(f"/media/{mount}/{head}/{tail}", f"/{head}")


@settings(max_examples=60)
@given(
    mount=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=2, max_size=8),
    name=st.sampled_from(["photos", "projects", "src", "home", "data", "opt", "srv"]),
    tail=_WORDS,
)
def test_a_mount_below_mnt_whose_next_name_is_no_system_folder_stays_a_data_disk(
    mount: str, name: str, tail: str
) -> None:
    assert not path_within(f"/mnt/{mount}/{name}/{tail}", SYSTEM)


@pytest.mark.parametrize(
    ("name", "mount"),
    [
        ("hostroot", True),
        ("host_root", True),
        ("host-rootfs", True),
        ("hostrootfs", True),
        ("node-root", True),
        ("noderoot", True),
        ("newroot", True),
        ("oldroot", True),
        ("rootfs", True),
        ("hostfs", True),
        ("root", False),
        ("roots", False),
        ("hostroot-docs", False),
        ("grootfs2", False),
        ("fs", False),
    ],
)
def test_root_mount_names(name: str, mount: bool) -> None:
    assert (_ROOT_MOUNT_NAME.fullmatch(name) is not None) is mount


# 8.3 short names on a drive as POSIX tools mount it (cc-win-secret-aliases).


@pytest.mark.parametrize(
    ("path", "unknown"),
    [
        ("/c/Users/dev/project/ENV~1", True),
        ("/mnt/c/x/CREDEN~1.JSO", True),
        ("/cygdrive/d/AWS~1/credentials", True),
        ("C:\\Users\\dev\\ENV~1", True),
        ("/home/dev/ENV~1", False),
        ("/mnt/ENV~1", False),
        ("/_/HEAD~1", False),
        ("/c/x/notes.txt~", False),
    ],
)
def test_short_names_on_mounted_drives(path: str, unknown: bool) -> None:
    assert is_unknown(path) is unknown


# The bare home (cc-benign-shell): arguable, the pack refuses paths through ~.


@cache
def _claude_code() -> PolicyLayers:
    registry = Registry()
    for definition in load_catalog(BUILTIN_CATALOG).values():
        registry.register(definition)
    return PolicyLayers.install(registry, [ROOT / "policies" / "claude-code"])


def _decided(command: str) -> tuple[str, str | None]:
    evaluation = evaluate_sync(
        _claude_code().registry,
        "Bash",
        {"command": command, "description": "x"},
        call_id="r-names",
        cwd="/home/dev/project",
    )
    assert evaluation is not None
    return evaluation.decision.value, evaluation.rule


def test_a_home_s_secret_folder_is_refused() -> None:
    assert _decided("ls ~/.ssh") == ("deny", "no-secret-files")


@pytest.mark.xfail(
    strict=True,
    reason="by the pack's design: a path through ~ is of unknown place, so it may be a secret file and, in the "
    "shell, /root (a system directory): `ls ~` is refused as `ls ~/Downloads` is (docs/claude-code.md)",
)
def test_listing_the_home_is_allowed() -> None:
    assert _decided("ls ~")[0] != "deny"
