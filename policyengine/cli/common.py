"""What several verbs share: the exit codes, the tool catalog a verb checks and evaluates against, and pack folders.

Every `--pack` value goes through `resolve_pack` (cli/pack_folders.py): a folder that exists, else
a shipped pack's name (`claude-code`), else `UnknownPackError`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from policyengine.cli.pack_folders import PACK_HELP, resolve_pack, resolve_packs, shipped_pack, shipped_packs
from policyengine.cli.unknown_pack import UnknownPackError
from policyengine.packs.loader import Pack, catalog_for

if TYPE_CHECKING:
    from policyengine.enforce.install import PolicyLayers
    from policyengine.tools.definition import ToolDefinition

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_OK",
    "EXIT_USAGE",
    "PACK_HELP",
    "UnknownPackError",
    "install_layers",
    "resolve_pack",
    "resolve_packs",
    "shipped_pack",
    "shipped_packs",
    "tools_for",
]

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def tools_for(args: argparse.Namespace, packs: Sequence[Pack]) -> dict[str, ToolDefinition] | None:
    """The catalog: `--tools FILE` if given, else the union of the packs' `catalog:` files; None without either."""
    return catalog_for(packs, getattr(args, "tools", None))


def install_layers(
    folders: Sequence[str | Path], tools: str | Path | None = None
) -> tuple[PolicyLayers, dict[str, ToolDefinition] | None]:
    """The packs on a fresh registry that knows the catalog's tools (`tools`, else the packs'), and that catalog."""
    from policyengine.enforce.install import PolicyLayers
    from policyengine.runtime.registry import Registry

    layers = PolicyLayers.install(Registry(), folders)
    catalog = catalog_for(layers.packs, tools)
    for definition in (catalog or {}).values():
        layers.registry.register(definition)
    return layers, catalog
