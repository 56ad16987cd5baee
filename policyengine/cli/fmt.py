"""The fmt verb: rewrite pack files in the canonical layout, or check (--check) or show (--diff) what would change."""

from __future__ import annotations

import argparse
from typing import TextIO

from policyengine.cli.common import EXIT_FINDINGS, EXIT_OK, resolve_pack
from policyengine.cli.report import paint
from policyengine.errors import PolicyEngineError, UsageError, install_hint

NAME = "fmt"
HELP = "format pack files (manifest, rule files, policy tests), comments kept"

INSTALL_HINT = install_hint("fmt")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The fmt verb's options."""
    parser.add_argument(
        "packs", nargs="+", type=resolve_pack, metavar="PACK", help="pack folders or shipped names; rewritten in place"
    )
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file is not formatted")
    parser.add_argument("--diff", action="store_true", help="change nothing; print a unified diff of the changes")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`fmt`: format every file of the packs; all files load and keep their content, or nothing is written."""
    try:
        from policyengine.packs.formatter import format_packs, write_atomically
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("ruamel"):
            raise
        raise UsageError(
            "`policyengine fmt` needs ruamel.yaml (it keeps comments when it rewrites YAML), which is not installed",
            hint=INSTALL_HINT,
        ) from error

    results = format_packs(args.packs)
    changed = [r for r in results if r.changed]
    if args.diff:
        for result in changed:
            out.write(_paint_diff(result.diff(), color))
    if args.check or args.diff:
        for result in changed:
            print(f"would reformat {result.file.display}", file=err if args.diff else out)
        summary = f"{len(changed)} file(s) would be reformatted, {len(results) - len(changed)} already formatted"
        print(summary, file=err if args.diff else out)
        return EXIT_FINDINGS if changed and args.check else EXIT_OK
    for done, result in enumerate(changed):
        try:
            write_atomically(result.file.path, result.after)
        except OSError as error:
            raise PolicyEngineError(
                f"cannot write {result.file.display}: {error.strerror or error} ({done} file(s) reformatted before it; "
                "the file itself is unchanged)",
                hint="make the file and its folder writable, then run fmt again",
            ) from error
        print(f"reformatted {result.file.display}", file=out)
    print(f"{len(changed)} file(s) reformatted, {len(results) - len(changed)} left unchanged", file=out)
    return EXIT_OK


def _paint_diff(diff: str, color: bool) -> str:
    """File headers bold, hunk headers cyan, removed lines red, added lines green, on a terminal."""
    if not color:
        return diff
    lines = diff.splitlines()
    painted = []
    for i, line in enumerate(lines):
        header = line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
        header = header or (line.startswith("+++ ") and i > 0 and lines[i - 1].startswith("--- "))
        code = (
            "1"
            if header
            else "36"
            if line.startswith("@@")
            else "32"
            if line[:1] == "+"
            else "31"
            if line[:1] == "-"
            else None
        )
        painted.append(paint(line, code, True) if code else line)
    return "\n".join(painted) + "\n"
