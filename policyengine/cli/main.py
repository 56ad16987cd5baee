"""The command line: `main(argv) -> int`, testable in-process; each verb lives in its own module.

Exit codes: 0 clean, 1 findings or failing tests, 2 usage error or invalid input; 141 when the reader of
the output went away (`policyengine ... | head`), quietly, as a program killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, Protocol, TextIO

from policyengine.cli import hook
from policyengine.errors import PolicyEngineError, UsageError

# 128 + SIGPIPE: what a shell reports for `yes | head`; Python ignores SIGPIPE, so the CLI says it itself.
EXIT_BROKEN_PIPE = 141


class Verb(Protocol):
    """What main needs of a verb module: its name, its help line, its options and how to run it."""

    NAME: str
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the verb's options to its subparser."""

    def run(self, args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
        """Run the verb; return its exit code."""


def verb_modules() -> tuple[Verb, ...]:
    """Every verb, in help order; imported here, not at the top, so that `hook` loads none of the others."""
    from policyengine.cli import (
        bundle,
        check,
        diff,
        dry_run,
        explain,
        fmt,
        init,
        logs,
        mcp_proxy,
        packs,
        schema,
        serve,
        test,
        verify,
    )

    return (check, test, verify, diff, explain, schema, dry_run, fmt, hook, mcp_proxy, serve, bundle, logs, packs, init)


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so main() owns every exit code."""

    def error(self, message: str) -> Any:
        raise UsageError(f"{self.prog}: {message}", hint=f"run `{self.prog} --help`")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every verb."""
    from policyengine import __version__

    parser = _Parser(prog="policyengine", description="Security policy between an AI agent and the tools it calls.")
    parser.add_argument("--version", action="version", version=f"policyengine {__version__}")
    parser.add_argument("--color", choices=["auto", "always", "never"], default="auto", help="colour output")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    # --color is accepted before or after the verb; SUPPRESS keeps the top-level default.
    common = _Parser(add_help=False)
    common.add_argument("--color", choices=["auto", "always", "never"], default=argparse.SUPPRESS, help="colour output")
    for verb in verb_modules():
        verb.add_arguments(verbs.add_parser(verb.NAME, parents=[common], help=verb.HELP))
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the CLI; return the exit code (0 clean, 1 findings, 2 usage or invalid input, 141 reader gone)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        return _main(argv, out, err)
    except BrokenPipeError:
        if out is sys.stdout:
            # The interpreter flushes stdout again at exit and would print a second BrokenPipeError.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None, out: TextIO, err: TextIO) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == [hook.NAME]:
        # An agent runs the hook on every tool call: it parses its own options and skips the other
        # verbs' imports (~300 ms), which would make every call of the agent wait.
        return hook.main(arguments[1:], out=out, err=err)
    from policyengine import __version__
    from policyengine.cli.common import EXIT_OK
    from policyengine.cli.report import problem_json, sarif, use_color
    from policyengine.values.problems import PackLoadError

    try:
        with contextlib.redirect_stdout(out):  # --help and --version print to the given stream
            args = build_parser().parse_args(arguments)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    except PolicyEngineError as error:
        print(f"error: {error}", file=err)
        return error.exit_code
    if args.verb is None:
        names = ", ".join(verb.NAME for verb in verb_modules())
        print(f"policyengine {__version__}: use one of {names} (see --help)", file=out)
        return EXIT_OK
    color = use_color(out, args.color)
    run = {verb.NAME: verb.run for verb in verb_modules()}[args.verb]
    try:
        return run(args, out, err, color)
    except PackLoadError as error:
        if getattr(args, "format", "text") == "json":
            print(json.dumps({"ok": False, "problems": [problem_json(p) for p in error.problems]}, indent=2), file=out)
        elif getattr(args, "format", "text") == "sarif":
            print(json.dumps(sarif(error.problems), indent=2), file=out)
        else:
            print(error.render(color=use_color(err, args.color)), file=err)
        return error.exit_code
    except PolicyEngineError as error:
        print(f"error: {error}", file=err)
        return error.exit_code
