"""The schema verb: print the JSON Schemas of the file formats."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from policyengine.cli.common import EXIT_OK
from policyengine.errors import UsageError

NAME = "schema"
HELP = "print JSON Schemas of the file formats"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The schema verb's options."""
    parser.add_argument("name", nargs="?", help="one of the schema names (default: all)")
    parser.add_argument("--format", choices=["json"], default="json")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`schema`: the JSON Schemas of rule files, manifests, tests and recorded calls."""
    from policyengine.packs.file_schemas import export_schemas

    schemas = export_schemas()
    if args.name is not None:
        if args.name not in schemas:
            raise UsageError(f"unknown schema {args.name!r}", hint=f"choose one of: {', '.join(sorted(schemas))}")
        print(json.dumps(schemas[args.name], indent=2), file=out)
    else:
        print(json.dumps(schemas, indent=2), file=out)
    return EXIT_OK
