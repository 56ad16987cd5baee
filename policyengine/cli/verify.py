"""The verify verb: properties of the packs searched for a counterexample over the calls the catalog admits.

`policyengine verify --pack DIR PROPERTIES.yaml...` (docs/verify.md). Every property is searched
(bounded, seeded, each call decided by the installed layers); one whose condition implies an
enforcing red line's is reported proved, the others "not proven" when no counterexample was found.
Exit 1 when a property has a counterexample or was never exercised (no call tried was picked by
its `when`), or - run on the packs' own properties/ files - when an enforcing red line of the packs
is neither stated by a property (`red_line:`) nor listed under `unstated:` with why; 2 on a problem
in the files.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TextIO

from policyengine.cli.common import EXIT_FINDINGS, EXIT_OK, install_layers, resolve_pack
from policyengine.errors import UsageError

if TYPE_CHECKING:
    from policyengine.verify import PropertyResult, SearchBudget

NAME = "verify"
HELP = "search the packs for a call that breaks a property"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The verify verb's options."""
    parser.add_argument(
        "properties",
        nargs="*",
        metavar="PROPERTIES",
        help="property files (YAML, docs/verify.md); default: every *.yaml in each pack's properties/ folder",
    )
    parser.add_argument(
        "--pack",
        dest="packs",
        action="append",
        required=True,
        type=resolve_pack,
        metavar="PACK",
        help="a pack folder or shipped pack name; repeat for layers, in order",
    )
    parser.add_argument("--tools", metavar="FILE", help="tool catalog (default: the packs' `catalog:`)")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="which calls the search draws (default 0)")
    parser.add_argument("--calls", type=int, default=20_000, metavar="N", help="at most N calls a property")
    parser.add_argument("--seconds", type=float, default=10.0, metavar="S", help="at most S seconds a property")
    parser.add_argument(
        "--recheck",
        type=int,
        default=0,
        metavar="N",
        help="decide N random calls around each proved property's literals: any it breaks is a proof failure",
    )
    parser.add_argument("--format", choices=["text", "json"], default="text")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`verify`: search and prove every property; exit 1 on any finding the module docstring lists."""
    from policyengine.verify import Outcome, SearchBudget, load_property_files, recheck, unstated_red_lines, verify

    if args.calls < 1 or args.seconds <= 0 or args.recheck < 0:
        raise UsageError("--calls must be at least 1, --seconds more than 0 and --recheck not negative")
    layers, _catalog = install_layers(args.packs, args.tools)
    shipped = [str(f) for pack in layers.packs for f in sorted(pack.path.glob("properties/*.yaml"))]
    files = list(args.properties) or shipped
    if not files:
        raise UsageError(
            "no property files: none named, and no pack has a properties/ folder",
            hint="name property files, or write them as PACK/properties/*.yaml (docs/verify.md)",
        )
    lists = {name: entries for pack in layers.packs for name, entries in pack.lists.items()}
    found = load_property_files(files, lists)
    budget = SearchBudget(calls=args.calls, seconds=args.seconds, seed=args.seed)
    results = verify(layers, found.properties, budget)
    # Every red line stated or explained: asked of the packs' own property files (the default run).
    unstated = [] if args.properties else unstated_red_lines(layers, found)
    # A proof checked again on random calls (--recheck N): a failure is a bug of the proof rules.
    rechecked = {
        r.property.id: recheck(layers, r.property, args.recheck, args.seed)
        for r in results
        if args.recheck and r.outcome is Outcome.PROVED
    }
    if args.format == "json":
        document = {
            "budget": _budget_json(budget),
            "results": [
                r.to_json() | ({"recheck": rechecked[r.property.id].to_json()} if r.property.id in rechecked else {})
                for r in results
            ],
            "unstated": [{"pack": pack, "red_line": rule} for pack, rule in unstated],
            "explained": [{"red_line": rule, "why": why} for rule, why in found.unstated.items()],
        }
        print(json.dumps(document, indent=2), file=out)
    else:
        print(_text(results, budget, [str(p) for p in args.packs]), file=out)
        for check in rechecked.values():
            if check.failure is None:
                print(
                    f"  rechecked       {check.property.id}: {check.tried:,} random calls, {check.picked:,} picked, "
                    "each decided as proved",
                    file=out,
                )
            else:
                tool, arguments, decision, rule = check.failure
                print(
                    f"  PROOF FAILED    {check.property.id}: {tool} {json.dumps(arguments, ensure_ascii=False)} is "
                    f"decided {decision} (by {rule or 'the pack default'}); a bug of verify's proof rules: report it",
                    file=out,
                )
        for rule, why in found.unstated.items():
            print(f"  unstated        red line {rule}: {why}", file=out)
        for pack, rule in unstated:
            print(
                f"  NOT STATED      red line {rule} of pack {pack}: no property states it (red_line: {rule}) "
                "and no `unstated:` entry says why",
                file=out,
            )
    failed = (
        any(r.outcome in (Outcome.COUNTEREXAMPLE, Outcome.NOT_EXERCISED) for r in results)
        or bool(unstated)
        or any(check.failure is not None for check in rechecked.values())
    )
    return EXIT_FINDINGS if failed else EXIT_OK


def _budget_json(budget: SearchBudget) -> dict[str, float | int]:
    return {"calls": budget.calls, "seconds": budget.seconds, "seed": budget.seed}


def _text(results: list[PropertyResult], budget: SearchBudget, packs: list[str]) -> str:
    from policyengine.verify import Outcome

    lines = [
        f"verify: {len(results)} properties against {', '.join(packs)} "
        f"(searched, seed {budget.seed}, at most {budget.calls:,} calls or {budget.seconds:g} s a property; "
        "proved only where a red line's condition is implied)"
    ]
    for r in results:
        where = f"{r.property.id} ({r.property.file}:{r.property.line})"
        if r.outcome is Outcome.COUNTEREXAMPLE:
            arguments = json.dumps(r.arguments, ensure_ascii=False)
            rule = r.rule or "the pack default"
            lines.append(
                f"  COUNTEREXAMPLE  {where}: {r.tool} {arguments} is decided {r.decision} (by {rule}); "
                f"the property says {r.property.kind.value} {', '.join(sorted(r.property.decisions))}"
            )
        elif r.outcome is Outcome.PROVED:
            lines.append(
                f"  PROVED          {where}: its condition implies the condition of "
                f"{'red lines' if ', ' in (r.proved_by or '') else 'red line'} {r.proved_by} for each of its tools "
                f"(and {r.tried:,} calls tried, {r.picked:,} picked, none broke it)"
            )
        elif r.outcome is Outcome.NOT_EXERCISED:
            lines.append(
                f"  NOT EXERCISED   {where}: {r.tried:,} calls tried, none picked by its `when`; "
                "check its tools and condition (nothing was tested)"
            )
        else:
            lines.append(
                f"  not proven      {where}: {r.tried:,} calls tried, {r.picked:,} picked by its `when`, "
                f"none broke it ({r.seconds:.1f} s)"
            )
            lines.extend(
                f"                  not shown: red line {rule}{f' for {tool}' if tool else ''} needs {part}"
                for rule, tool, part in r.gaps[:3]
            )
    return "\n".join(lines)
