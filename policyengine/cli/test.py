"""The test verb: run the packs' policy tests, report as text, JSON or JUnit, gate on failures and coverage."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from policyengine.cli.common import EXIT_FINDINGS, EXIT_OK, install_layers
from policyengine.errors import UsageError

NAME = "test"
HELP = "run the packs' policy tests"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The test verb's options."""
    parser.add_argument("packs", nargs="+", metavar="PACK", help="pack folders, in layer order")
    parser.add_argument("--require-tests", action="store_true", help="a pack without tests fails")
    parser.add_argument("--coverage", action="store_true", help="report rules no test exercised")
    parser.add_argument("--threshold", type=float, metavar="PERCENT", help="minimum rule coverage (with --coverage)")
    parser.add_argument(
        "--tools", metavar="FILE", help="tool catalog: validate the tests' arguments (default: the packs' `catalog:`)"
    )
    parser.add_argument("--format", choices=["text", "json", "junit"], default="text")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`test`: run the policy tests of every pack; failures, missing tests or low coverage exit 1."""
    from policyengine.testing.reports import format_report, to_json, to_junit
    from policyengine.testing.runner import discover, run_tests

    if args.threshold is not None and not 0 <= args.threshold <= 100:
        raise UsageError(f"--threshold must be a percentage from 0 to 100, got {args.threshold:g}")
    layers, catalog = install_layers(args.packs, args.tools)
    files = discover(layers.packs)
    # With a catalog, tests see what a registry of those tools would do: invalid arguments and unknown tools.
    report = run_tests(layers, files, require_tests=args.require_tests, require_tool=catalog is not None)
    threshold = args.threshold if args.coverage else None
    ok = report.ok(threshold)
    if args.format == "json":
        print(json.dumps(to_json(report, threshold=threshold), indent=2), file=out)
    elif args.format == "junit":
        print(to_junit(report), file=out)
    else:
        print(format_report(report, threshold=threshold), file=out)
    return EXIT_OK if ok else EXIT_FINDINGS
