"""The packs shipped inside the package, and the resolver every `--pack` option goes through.

A `--pack` value that is a shipped pack's bare name (`claude-code`) is that pack, whatever the
working directory holds: a hook runs in the agent's project, and an agent that writes a
`claude-code/` folder there must not choose its own policy. Anything else is a folder (write
`./NAME` for a folder named like a shipped pack), else an error that says what was tried and lists
the shipped names. The hook
resolves its packs on every tool call, so this module imports nothing heavier than `pathlib`
unless it has to report an error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policyengine.cli.unknown_pack import UnknownPackError

# pyproject.toml installs the top-level policies/ folder as this package (as schemas/ is installed).
SHIPPED_PACKAGE = "policyengine.shipped_packs"
MANIFEST = "pack.yaml"
# The help of every --pack option.
PACK_HELP = "a pack folder, or a shipped pack's name (`policyengine packs list`); repeatable"


def shipped_root() -> Path | None:
    """The folder holding the shipped packs: inside an installed package, else a checkout's policies/."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "shipped_packs"
    if installed.is_dir():
        return installed
    checkout = package.parent
    if (checkout / "policies").is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout / "policies"
    # Another layout (an editable install that maps the package elsewhere): ask the import system.
    from importlib import resources

    try:
        found = Path(str(resources.files(SHIPPED_PACKAGE)))
    except (ModuleNotFoundError, TypeError):
        return None
    return found if found.is_dir() else None


def shipped_packs() -> dict[str, Path]:
    """Every shipped pack by name (its folder's name, which is its manifest's `name:`), in name order."""
    root = shipped_root()
    if root is None:
        return {}
    return {entry.name: entry for entry in sorted(root.iterdir()) if (entry / MANIFEST).is_file()}


def shipped_pack(name: str) -> Path:
    """The folder of the shipped pack `name`; UnknownPackError listing the shipped names when there is none."""
    folder = _shipped_folder(name)
    if folder is None:
        raise _unknown(name, f"no shipped pack is named {name!r}")
    return folder


def resolve_pack(given: str | os.PathLike[str]) -> str:
    """A `--pack` value as a folder: a shipped pack's bare name is that pack (first), else the folder given."""
    text = os.fspath(given)
    folder = _shipped_folder(text)
    if folder is not None:
        return str(folder)
    if os.path.isdir(text):
        return text
    where = os.path.abspath(text)
    raise _unknown(text, f"no pack folder {where} and no shipped pack named {text!r}")


def resolve_packs(given: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Each `--pack` value resolved, in order (see resolve_pack)."""
    return [resolve_pack(value) for value in given]


def _shipped_folder(name: str) -> Path | None:
    # A name, never a path: `../x` or `a/b` must not reach outside the shipped folder.
    if not name or name in (".", "..") or "/" in name or os.sep in name or (os.altsep and os.altsep in name):
        return None
    root = shipped_root()
    if root is None:
        return None
    folder = root / name
    return folder if (folder / MANIFEST).is_file() else None


def _unknown(given: str, what: str) -> UnknownPackError:
    # Imported here: the error's modules cost the hook ~10 ms a call, and only a mistake needs them.
    from policyengine.cli.unknown_pack import UnknownPackError
    from policyengine.values.problems import Location, Problem

    names = ", ".join(shipped_packs()) or "none (this installation ships no packs)"
    problem = Problem(
        "PE108",
        f"{what}: a --pack is a folder holding {MANIFEST}, or a shipped pack's name",
        Location.start_of(os.path.join(given, MANIFEST)),
        hint=f"shipped packs: {names} (`policyengine packs list`); check the spelling or the folder's path",
    )
    return UnknownPackError([problem], summary="the packs do not load")
