"""The diff verb: `diff --semantic OLD NEW`, the calls two packs (or layer stacks) decide differently, weaker first.

Searched over the calls either catalog admits (docs/verify.md#semantic-diff), not over traffic:
`dry-run --against` compares recorded calls. Exit 1 when a class the `--fail-on` choice names is
found (default: weaker, a CI gate that a change lets on nothing the old packs stopped), 2 on a
problem in the packs.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TextIO

from policyengine.cli.common import EXIT_FINDINGS, EXIT_OK, install_layers, resolve_pack
from policyengine.errors import UsageError

if TYPE_CHECKING:
    from policyengine.verify import SemanticDiff

NAME = "diff"
HELP = "the calls two packs decide differently (--semantic: searched over the catalog)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The diff verb's options."""
    parser.add_argument("old", type=resolve_pack, metavar="OLD", help="the pack before (folder or shipped name)")
    parser.add_argument("new", type=resolve_pack, metavar="NEW", help="the pack after")
    parser.add_argument(
        "--semantic", action="store_true", help="search the calls the catalogs admit (the only mode; required)"
    )
    parser.add_argument("--tools", metavar="FILE", help="tool catalog for both sides (default: each pack's)")
    parser.add_argument("--fail-on", choices=["weaker", "any", "never"], default="weaker")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="which calls the search draws (default 0)")
    parser.add_argument("--calls", type=int, default=20_000, metavar="N", help="at most N calls (default 20,000)")
    parser.add_argument("--seconds", type=float, default=60.0, metavar="S", help="at most S seconds (default 60)")
    parser.add_argument("--format", choices=["text", "json"], default="text")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`diff --semantic`: the classes of calls decided differently; exit 1 on what --fail-on names."""
    from policyengine.verify import SearchBudget, semantic_diff

    if not args.semantic:
        raise UsageError(
            "diff compares two packs over the calls their catalogs admit: add --semantic",
            hint="to compare them over recorded calls, use `policyengine dry-run --pack NEW --against OLD FILE`",
        )
    if args.calls < 1 or args.seconds <= 0:
        raise UsageError("--calls must be at least 1 and --seconds more than 0")
    old, old_catalog = install_layers([args.old], args.tools)
    new, new_catalog = install_layers([args.new], args.tools)
    if old_catalog is None and new_catalog is None:
        raise UsageError(
            "diff --semantic writes calls from the tool catalog, and neither pack names one",
            hint="add `catalog: tools.jsonl` to a manifest, or pass --tools FILE",
        )
    budget = SearchBudget(calls=args.calls, seconds=args.seconds, seed=args.seed)
    found = semantic_diff(old, new, budget)
    if args.format == "json":
        document = {
            "budget": {"calls": budget.calls, "seconds": budget.seconds, "seed": budget.seed},
            "tried": found.tried,
            "classes": [c.to_json() for c in found.classes],
        }
        print(json.dumps(document, indent=2), file=out)
    else:
        print(_text(found, str(args.old), str(args.new)), file=out)
    failing = found.weaker if args.fail_on == "weaker" else found.classes if args.fail_on == "any" else ()
    return EXIT_FINDINGS if failing else EXIT_OK


def _text(found: SemanticDiff, old: str, new: str) -> str:
    lines = [
        f"diff --semantic {old} -> {new}: {len(found.classes)} class(es) of calls decided differently, "
        f"{len(found.weaker)} weaker ({found.tried:,} calls searched, {found.seconds:.1f} s; a class not found "
        "may still exist)"
    ]
    for c in found.classes:
        assert c.example is not None
        name, arguments = c.example
        example = json.dumps(arguments, ensure_ascii=False)
        mark = "WEAKER" if c.weaker else "stricter" if c.old != c.new else "other"
        lines.append(
            f"  {mark:8} {c.old} ({c.old_rule or 'default'}) -> {c.new} ({c.new_rule or 'default'}): "
            f"{c.calls:,} call(s) of {', '.join(sorted(c.tools))}; e.g. {name} {example}"
        )
    return "\n".join(lines)
