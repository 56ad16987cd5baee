"""paths.within_matcher's prefix index against the scan of every directory it replaces (_may_within)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.arguments import paths
from support import load_yaml

ROOT = Path(__file__).resolve().parent.parent


def _reference(dirs: list[str]) -> Callable[[str], bool]:
    """within_matcher before the index: every reading against every directory."""
    parsed = [paths._parse_any(directory) for directory in dirs]
    return lambda path: any(paths._may_within(r, p, parsed) for r, p in paths._may_readings(paths._readings(path)))


@functools.cache
def _pack_lists() -> list[list[str]]:
    """Every list of strings the shipped packs define (the directory lists among them)."""
    found: list[list[str]] = []
    for path in sorted(ROOT.glob("policies/*/*.yaml")):
        document = load_yaml(path)  # libyaml: this runs at collection, on every worker
        if isinstance(document, dict) and isinstance(document.get("lists"), dict):
            found.extend(
                value
                for value in document["lists"].values()
                if isinstance(value, list) and value and all(isinstance(x, str) for x in value)
            )
    return found


_PATHS = [
    "/etc", "/etc/passwd", "/etc/../etc/shadow", "../x", "..", ".", "./etc", "../../etc/x", "~/.ssh/id_rsa",
    "C:\\Windows\\System32", "?:/windows/x", "\\rootfs\\etc", "/", "", "etc/passwd", "/usr/local/bin/x",
    "/proc/self/environ", "//etc/x", "/var/run/docker.sock", "$HOME/.aws/credentials", "/mnt/c/Windows",
]  # fmt: skip


@pytest.mark.parametrize("index", range(len(_pack_lists())))
def test_the_index_is_the_scan_for_every_pack_list(index: int) -> None:
    """Every list of the shipped packs, on paths of every root and shape."""
    dirs = _pack_lists()[index]
    indexed, scanned = paths.within_matcher(dirs), _reference(dirs)
    for path in _PATHS:
        assert indexed(path) == scanned(path), (dirs[:3], path)


_PART = st.sampled_from(["etc", "usr", "..", ".", "x", "bin", "Windows", "?:", "~", "$HOME", "proc", ""])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_PART, max_size=4), min_size=1, max_size=6),
    st.lists(_PART, max_size=6),
    st.sampled_from(["/", "", "./", "../", "C:\\", "?:/", "~/"]),
    st.sampled_from(["/", "\\"]),
)
def test_the_index_is_the_scan_on_random_paths(
    dirs: list[list[str]], parts: list[str], lead: str, separator: str
) -> None:
    """Property: random directories and paths (relative, rooted, climbing, drive-unknown)."""
    directories = ["/" + "/".join(d) for d in dirs[: len(dirs) // 2]] + ["/".join(d) for d in dirs[len(dirs) // 2 :]]
    path = lead + separator.join(parts)
    assert paths.within_matcher(directories)(path) == _reference(directories)(path)
