"""The last good packs: what a long-running front end decides with when an edit breaks loading, and what it says.

A pack edit that does not load (a YAML syntax error, a schema error, a condition that does not
compile) must not stop every tool, and must not go unnoticed either: the front end keeps the
packs that last loaded and says, wherever it speaks (stderr, its log, a field of its answers),
which pack failed, where, and which version is deciding instead. With no last good packs (the
first load), it fails closed as always.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from policyengine.packs.loader import Pack
from policyengine.values.problems import PackLoadError

__all__ = ["KeptPacks", "failed_load"]


@dataclass(frozen=True)
class KeptPacks:
    """Packs kept deciding after a load failed: the failure, and the version in use instead."""

    packs: tuple[Pack, ...]
    loaded_at: float  # seconds since the epoch, when the kept packs were loaded
    failure: str  # which pack failed to load, where, and why (failed_load)

    @property
    def digests(self) -> tuple[str, ...]:
        """The kept packs' digests, in layer order."""
        return tuple(p.digest for p in self.packs)

    def notice(self) -> str:
        """One line for stderr, a log or a field of a decision: what failed, and what decides instead."""
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.loaded_at))
        kept = ", ".join(f"{p.name}@{p.version} (digest {p.digest})" for p in self.packs)
        return f"{self.failure}; still deciding with the version loaded at {when}: {kept}"


def failed_load(error: BaseException, folders: Sequence[str | Path]) -> str:
    """`pack FOLDER failed to load at FILE:LINE:COLUMN: PEnnn message` (the first error; how many more)."""
    if not isinstance(error, PackLoadError):
        return f"packs {', '.join(map(str, folders))} failed to load: {type(error).__name__}: {error}"
    errors = error.errors or error.problems
    if not errors:
        return f"packs {', '.join(map(str, folders))} failed to load: {error.summary}"
    first = errors[0]
    folder = _folder_of(first.location.file if first.location else None, folders)
    where = f" at {first.location}" if first.location is not None else ""
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"pack {folder} failed to load{where}: {first.code} {first.message}{more}"


def _folder_of(file: str | None, folders: Sequence[str | Path]) -> str:
    """The pack folder a problem's file is in (the first folder when none holds it)."""
    if file is not None:
        for folder in folders:
            try:
                if Path(file).resolve().is_relative_to(Path(folder).resolve()):
                    return str(folder)
            except (OSError, RuntimeError):
                continue
    return ", ".join(map(str, folders))


def folder_state(folders: Sequence[str | Path]) -> tuple[tuple[str, int, int], ...]:
    """Every file under the pack folders with its mtime and size: cheap to take, changes with any edit."""
    seen: list[tuple[str, int, int]] = []
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                try:
                    info = os.stat(path)
                except OSError:  # removed while walked: the next look sees the new state
                    continue
                seen.append((path, info.st_mtime_ns, info.st_size))
    return tuple(seen)
