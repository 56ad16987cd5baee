"""The test verb: run the packs' policy tests, report as text, JSON or JUnit, gate on failures and coverage.

With `--spellings` it spells every test's call instead (docs/spellings.md) and fails on any spelling
decided more weakly than the test's call.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TextIO

from policyengine.cli.common import EXIT_FINDINGS, EXIT_OK, install_layers, resolve_pack
from policyengine.errors import UsageError

if TYPE_CHECKING:
    from policyengine.enforce.install import PolicyLayers
    from policyengine.testing.runner import TestFile
    from policyengine.testing.spellings import SpellingReport
    from policyengine.tools.definition import ToolDefinition

NAME = "test"
HELP = "run the packs' policy tests"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The test verb's options."""
    parser.add_argument(
        "packs", nargs="+", type=resolve_pack, metavar="PACK", help="pack folders or shipped pack names, in layer order"
    )
    parser.add_argument("--require-tests", action="store_true", help="a pack without tests fails")
    parser.add_argument("--coverage", action="store_true", help="report rules no test exercised")
    parser.add_argument("--threshold", type=float, metavar="PERCENT", help="minimum rule coverage (with --coverage)")
    parser.add_argument(
        "--tools", metavar="FILE", help="tool catalog: validate the tests' arguments (default: the packs' `catalog:`)"
    )
    parser.add_argument(
        "--format", choices=["text", "json", "junit", "sarif"], default="text", help="sarif: with --spellings"
    )
    add_spelling_arguments(parser)


def add_spelling_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a spelling run, shared by test and dry-run."""
    from policyengine.testing.spellings import DEFAULT_BUDGET, DEFAULT_MAX_PER_VALUE

    parser.add_argument(
        "--spellings",
        action="store_true",
        help="spell every path, URL, command and secret of each call; fail on a spelling decided more weakly",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="which spellings are drawn (default 0)")
    parser.add_argument(
        "--max-spellings",
        type=int,
        default=DEFAULT_MAX_PER_VALUE,
        metavar="K",
        help=f"at most K spellings per value and kind (default {DEFAULT_MAX_PER_VALUE})",
    )
    parser.add_argument(
        "--spelling-budget",
        type=int,
        default=DEFAULT_BUDGET,
        metavar="N",
        help=f"at most N spellings in a run (default {DEFAULT_BUDGET:,})",
    )


def check_spelling_arguments(args: argparse.Namespace) -> None:
    """Refuse spelling options that cannot run."""
    if args.max_spellings < 1 or args.spelling_budget < 1:
        raise UsageError("--max-spellings and --spelling-budget must be at least 1")


def declared_roles(tools: Mapping[str, ToolDefinition]) -> Callable[[str], Mapping[str, str] | None]:
    """A tool's declared argument roles by its name (None for a tool outside the catalog)."""

    def roles(name: str) -> Mapping[str, str] | None:
        definition = tools.get(name)
        return definition.roles if definition is not None else None

    return roles


def print_spellings(report: SpellingReport, form: str, out: TextIO) -> int:
    """Print a spelling run in a format; exit 1 on any weaker spelling."""
    from policyengine.testing.reports import format_spellings, spellings_json, spellings_junit, spellings_sarif

    if form == "json":
        print(json.dumps(spellings_json(report), indent=2), file=out)
    elif form == "junit":
        print(spellings_junit(report), file=out)
    elif form == "sarif":
        print(json.dumps(spellings_sarif(report), indent=2), file=out)
    else:
        print(format_spellings(report), file=out)
    return EXIT_OK if report.ok else EXIT_FINDINGS


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`test`: run the policy tests of every pack; failures, missing tests or low coverage exit 1."""
    from policyengine.testing.reports import format_report, to_json, to_junit
    from policyengine.testing.runner import discover, run_tests

    if args.threshold is not None and not 0 <= args.threshold <= 100:
        raise UsageError(f"--threshold must be a percentage from 0 to 100, got {args.threshold:g}")
    if args.spellings:
        check_spelling_arguments(args)
        if args.coverage or args.require_tests or args.threshold is not None:
            raise UsageError("--spellings reports spellings only: drop --coverage, --threshold and --require-tests")
    elif args.format == "sarif":
        raise UsageError("--format sarif reports spellings: add --spellings")
    layers, catalog = install_layers(args.packs, args.tools)
    files = discover(layers.packs)
    if args.spellings:
        return print_spellings(_spell_tests(layers, files, catalog is not None, args), args.format, out)
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


def _spell_tests(
    layers: PolicyLayers, files: list[TestFile], require_tool: bool, args: argparse.Namespace
) -> SpellingReport:
    """Every test's call and its spellings, decided as the test run decides them.

    A sequence is spelled by its first call, which reads an empty session as a call decided alone
    does; its later calls are decided by what the session holds, which a spelling alone lacks.
    """
    from policyengine.testing.spellings import Call, Subject, check, layers_decider

    subjects = [
        Subject(
            f"{test.file}:{test.location.line} {test.name}",
            Call(test.tool, test.arguments, test.cwd, test.result, test.agent, test.call_id),
            test.location,
        )
        for test_file in files
        for test in test_file.tests
    ]
    return check(
        subjects,
        layers_decider(layers, require_tool=require_tool),
        roles=declared_roles(layers.registry.tools),
        seed=args.seed,
        max_per_value=args.max_spellings,
        budget=args.spelling_budget,
    )
