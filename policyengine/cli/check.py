"""The check verb: load every pack, lint, print the problems as text, JSON or SARIF."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from policyengine.cli.common import EXIT_FINDINGS, EXIT_OK, resolve_pack, tools_for
from policyengine.cli.report import paint, problem_json, sarif
from policyengine.packs.loader import Pack, load_packs
from policyengine.values.problems import Severity, render_problems

NAME = "check"
HELP = "load and lint packs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The check verb's options."""
    parser.add_argument(
        "packs", nargs="+", type=resolve_pack, metavar="PACK", help="pack folders or shipped pack names, in layer order"
    )
    parser.add_argument(
        "--tools",
        metavar="FILE",
        help="tool catalog (JSON Lines or JSON) to check rules against (default: the packs' `catalog:`)",
    )
    parser.add_argument("--strict", action="store_true", help="warnings fail the check (exit 1)")
    parser.add_argument("--format", choices=["text", "json", "sarif"], default="text")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`check`: load every pack (all-or-nothing), then lint; warnings fail only with --strict."""
    from policyengine.packs.lint import lint

    packs = load_packs(args.packs)
    tools = tools_for(args, packs)
    # The single entry for every static finding; checks that need the catalog (tool names, argument
    # types) take the same `tools` there.
    # --tools checks every layer; a pack's own `catalog:` checks the packs that declare one.
    against = None if getattr(args, "tools", None) else [p for p in packs if p.catalog is not None]
    problems = lint(packs, tools, against=against)
    # Rules the red lines always overturn (PE902) and rules that never apply (PE903), by `verify`'s proofs.
    from policyengine.verify import never_applying, overturned_rules

    problems = [*problems, *overturned_rules(packs), *never_applying(packs)]
    warnings = [p for p in problems if p.severity is Severity.WARNING]
    failed = bool(warnings) and args.strict
    if args.format == "json":
        print(
            json.dumps(
                {
                    "ok": not failed,
                    "packs": [_pack_json(p) for p in packs],
                    "problems": [problem_json(p) for p in problems],
                },
                indent=2,
            ),
            file=out,
        )
    elif args.format == "sarif":
        print(json.dumps(sarif(problems), indent=2), file=out)
    else:
        if problems:
            print(render_problems(problems, color=color), file=out)
        rules = sum(len(p.rules) for p in packs)
        verdict = paint("FAIL", "31;1", color) if failed else paint("ok", "32;1", color)
        print(
            f"{verdict}: {len(packs)} pack(s), {rules} rules, {len(warnings)} warning(s)"
            + (f", against a catalog of {len(tools)} tools" if tools is not None else "")
            + (" (--strict)" if args.strict else ""),
            file=out,
        )
    return EXIT_FINDINGS if failed else EXIT_OK


def _pack_json(pack: Pack) -> dict[str, Any]:
    return {
        "name": pack.name,
        "version": pack.version,
        "digest": pack.digest,
        "path": str(pack.path),
        "catalog": str(pack.catalog) if pack.catalog is not None else None,
        "rules": [r.id for r in pack.rules],
    }
