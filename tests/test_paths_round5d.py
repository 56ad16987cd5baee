"""Issue 22, round five set D: the system's other roots, a file manager's copy names, a glob's name head, URL hosts."""

from __future__ import annotations

import pytest

from policyengine.arguments.paths import (
    PathPattern,
    path_matches,
    path_surely_matches,
    path_surely_within,
    path_within,
    within_matcher,
)
from policyengine.language.functions import url_host

SYSTEM = [
    "/etc",
    "/usr",
    "/sbin",
    "/var/lib",
    "/library/privilegedhelpertools",
    "c:/windows",
    "c:/program files",
    "/mnt/c/windows",  # the packs list WSL's and Cygwin's mounts of C: (a mount of D: is read as C:'s)
    "/cygdrive/c/program files",
]
SECRETS = [".env", ".env.*", ".netrc", ".pgpass", ".git-credentials", "secrets.*", "id_rsa*", ".ssh", "*.pem"]

# The system's own folders seen from another root: each may be in SYSTEM (and none is surely anywhere).
OTHER_ROOTS = [
    "D:\\Windows\\System32\\drivers\\etc\\hosts",  # Windows installed on D:
    "E:\\Program Files\\Acme\\plugins\\evil.dll",  # Program Files moved to E:
    "file:///D:/Windows/System32/x",
    "\\\\localhost\\D$\\Windows\\x",
    "/mnt/d/Windows/System32/x",  # WSL's mount of drive D:
    "/cygdrive/e/Program Files/x",
    "/rootfs/etc/kubernetes/admin.conf",  # a node agent's mount of the host's root
    "/host/etc/shadow",
    "/hostfs/etc/passwd",
    "/proc/self/root/etc/shadow",  # a process's view of its root
    "/proc/1/root/usr/bin/x",
    "/sysroot/ostree/deploy/fedora/deploy/8c1d.0/etc/shadow",  # an OSTree deployment
    "/ostree/deploy/fedora-coreos/deploy/3a1b9c.0/etc/ld.so.preload",
    "/sysroot/etc/passwd",
    "/.snapshots/12/snapshot/etc/sudoers",  # snapper's btrfs snapshot
    "/Volumes/Macintosh HD/Library/PrivilegedHelperTools/x",  # macOS: the system volume mounted again
    "/Volumes/Macintosh HD/sbin/mount_nfs",
    "/System/Volumes/Data/usr/local/bin/x",  # macOS's data volume
    "/nix/var/nix/profiles/system/etc/sudoers",  # NixOS builds /etc from it
    "/run/current-system/etc/sudoers",
    "/rootfs/sysroot/ostree/deploy/x/deploy/y/etc/shadow",  # an alias inside an alias
    # Windows' own spellings of its folder (already unknown or placed; kept here beside the other drives)
    "%SystemRoot%\\System32\\x",
    "\\\\?\\GLOBALROOT\\Device\\HarddiskVolume3\\Windows\\x",
    "\\\\.\\D:\\Windows\\x",
    "\\\\?\\Volume{4c1b02c1-d990-11dc-99ae-806e6f6e6963}\\Windows\\x",
    "D:\\WINDOW~1\\System32\\x",
    "D:\\PROGRA~1\\x",
    "D:\\Windows.\\System32\\x",
    "D:\\Windows::$INDEX_ALLOCATION\\System32\\x",
]

# Benign look-alikes: not in SYSTEM under any root.
NOT_OTHER_ROOTS = [
    "D:\\projects\\app\\windows\\x.py",
    "/Volumes/USB/photos/a.jpg",
    "/home/dev/rootfs/etc/x",  # a folder named rootfs in a project
    "/home/dev/host/etc/x",
    "/proc/self/status",
    "/sysroot",  # the other root itself is no system folder
    "/volumes/backup",
    "/mnt/data/windows/x",  # a folder named windows on a data mount, not a drive letter
]


@pytest.mark.parametrize("path", OTHER_ROOTS)
def test_a_system_folder_under_another_root_may_be_one(path: str) -> None:
    assert path_within(path, SYSTEM)
    assert within_matcher(SYSTEM)(path)
    assert not path_surely_within(path, SYSTEM)


@pytest.mark.parametrize("path", NOT_OTHER_ROOTS)
def test_benign_look_alikes_of_other_roots_stay_outside(path: str) -> None:
    assert not path_within(path, SYSTEM)


def test_another_root_never_widens_a_surely_test() -> None:
    """An allow on a project on D: holds; the C: reading is for "may" tests only."""
    assert path_surely_within("D:\\projects\\app\\x.py", ["d:/projects"])
    assert not path_surely_within("/rootfs/etc/x", ["/etc"])


@pytest.mark.parametrize(
    "subject",
    [
        "/Volumes/*/etc/passwd",
        "/r*/etc/passwd",
        "D:/W*/x",
        "/proc/[0-9]*/root/etc/shadow",
        "/sysroot/ostree/deploy/*/deploy/*/etc/x",
    ],
)
def test_a_pattern_under_another_root_may_be_a_system_folder(subject: str) -> None:
    assert path_within(PathPattern(subject), SYSTEM)


# A file manager's or browser's copy of a secret file holds the secret.
COPIES = [
    "/home/dev/.netrc copy",  # Finder
    "/home/dev/.pgpass - Copy",  # Explorer
    "/home/dev/.pgpass - Copy (2)",
    "Copy of .env",  # Windows XP's Explorer
    "Copy (3) of .env",
    ".env (copy)",  # GNOME's Files
    ".env (another copy)",
    ".env (3rd copy)",
    ".env (1)",  # a browser's second download
    ".env(2)",
    ".env copy 2",
    "config/secrets copy.yml",  # the affix before the extension
    "x - Copy.pem",
    "/home/dev/Downloads/.git-credentials (1)",
    ".env copy (1)",  # a copy of a copy
    "/home/dev/.ssh - Copy/id_ed25519",  # a copy of a secret folder
]
NOT_COPIES = ["notes copy.md", "README (1).md", "photo(2).png", "copy of notes.txt", "copyright.txt", ".envrc-notes"]


@pytest.mark.parametrize("path", COPIES)
def test_a_copy_of_a_secret_file_may_be_one(path: str) -> None:
    assert path_matches(path, SECRETS)


def test_a_copy_name_is_read_for_may_tests_only() -> None:
    """A template's copy is not surely the template: the allow side never reads a copy's affixes off."""
    assert not path_surely_matches(".env.example (1)", [".env.example"])


@pytest.mark.parametrize("path", NOT_COPIES)
def test_a_copy_of_a_harmless_file_stays_harmless(path: str) -> None:
    assert not path_matches(path, SECRETS)


def test_editor_backups_are_the_packs_to_read() -> None:
    """Editors' backup affixes (`.env~`, `x.pem.bak`) stay with the packs' affix lists (deny-env-file-copies)."""
    assert not path_matches("x.pem.bak", ["*.pem"])


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("[k]ubeconfig.yaml", True),
        ("k?beconfig.yaml", True),
        ("[i]d_rsa.pub", True),
        ("ku*.yaml", True),
        ("i?_r*.pub", True),
        ("[!i]d_rsa.pub", False),
        ("[a-c]*.md", False),  # a one-character head is as broad as `*`
        ("*.md", False),
    ],
)
def test_a_glob_whose_head_spells_a_name_meets_its_rule(subject: str, expected: bool) -> None:
    assert path_matches(PathPattern(subject), ["kubeconfig*", "id_rsa*"]) is expected


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://[2002:a9fe:a9fe::]/latest/", "169.254.169.254"),  # 6to4
        ("http://[2002:a9fe:a9fe:1::5]/", "169.254.169.254"),
        ("http://[2001:0:4136:e378:8000:63bf:5601:5601]/", "169.254.169.254"),  # Teredo, client inverted
        ("http://169-254-169-254.nip.io/", "169.254.169.254"),  # wildcard DNS, dashed
        ("http://www.169.254.169.254.sslip.io/", "169.254.169.254"),
        ("http://app-169-254-169-254.sslip.io/", "169.254.169.254"),
        ("http://a9fea9fe.nip.io/", "169.254.169.254"),  # hex
        ("http://fd00-ec2--254.sslip.io/", "fd00:ec2::254"),  # IPv6, "--" for "::"
        ("http://--ffff-a9fe-a9fe.sslip.io/", "169.254.169.254"),
        ("http://10.0.0.1.traefik.me/", "10.0.0.1"),
        # Ordinary names and addresses stay themselves.
        ("http://nip.io/", "nip.io"),
        ("http://my-app.sslip.io/", "my-app.sslip.io"),
        ("http://cafe-babe.sslip.io/", "cafe-babe.sslip.io"),
        ("http://[2001:db8::1]/", "2001:db8::1"),
        ("http://[2001:4860:4860::8888]/", "2001:4860:4860::8888"),
        ("http://169.254.169.254.nip.io.example.com/", "169.254.169.254.nip.io.example.com"),
    ],
)
def test_url_host_reads_tunnels_and_wildcard_dns(url: str, host: str) -> None:
    assert url_host(url) == host
