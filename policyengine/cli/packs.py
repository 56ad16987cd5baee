"""The packs verb: the packs shipped inside the package (`packs list`), and where one is (`packs path NAME`)."""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import Any, TextIO

from policyengine.cli.common import EXIT_OK, shipped_pack, shipped_packs
from policyengine.cli.report import paint
from policyengine.errors import UsageError

NAME = "packs"
HELP = "list the shipped packs, or print one's folder (any --pack takes their names)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The packs verb's actions: list, path."""
    actions = parser.add_subparsers(dest="packs_action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="each shipped pack: name, rule count, description")
    listing.add_argument("--format", choices=["text", "json"], default="text")
    path = actions.add_parser("path", help="print the folder of a shipped pack (to copy it, or read its rules)")
    path.add_argument("name", metavar="NAME", help="a shipped pack's name (see `policyengine packs list`)")
    for action in (listing, path):
        # As on every verb: --color is accepted after the action too; SUPPRESS keeps the top-level default.
        action.add_argument("--color", choices=["auto", "always", "never"], default=argparse.SUPPRESS)


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`packs list` or `packs path NAME`."""
    if args.packs_action == "path":
        print(shipped_pack(args.name), file=out)
        return EXIT_OK
    listed = _listing()
    if args.format == "json":
        print(json.dumps(listed, indent=2), file=out)
        return EXIT_OK
    for entry in listed:
        print(f"{paint(entry['name'], '1', color)}  {entry['version']}  {entry['rules']} rules", file=out)
        for line in textwrap.wrap(entry["description"], 96):
            print(f"    {line}", file=out)
    print(f"{len(listed)} shipped pack(s); give a name to any --pack, e.g. --pack {listed[0]['name']}", file=out)
    return EXIT_OK


def _listing() -> list[dict[str, Any]]:
    """Each shipped pack, loaded (so the rule count is the compiled one): name, version, rules, description, path."""
    from policyengine.packs.loader import load_pack

    found = shipped_packs()
    if not found:
        raise UsageError(
            "this installation ships no packs (the policyengine.shipped_packs folder is missing)",
            hint="reinstall agent-policyengine; from a checkout, run from its folder or `pip install .`",
        )
    listed = []
    for name, folder in found.items():
        pack = load_pack(folder)
        listed.append(
            {
                "name": name,
                "version": pack.version,
                "rules": len(pack.rules),
                "description": " ".join(pack.description.split()),
                "path": str(folder),
            }
        )
    return listed
