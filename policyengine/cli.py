"""The command line: `main(argv) -> int`, testable in-process."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__
from .errors import PolicyEngineError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every verb."""
    parser = argparse.ArgumentParser(
        prog="policyengine",
        description="Security policy between an AI agent and the tools it calls.",
    )
    parser.add_argument("--version", action="version", version=f"policyengine {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 clean, 1 findings, 2 usage or invalid input)."""
    parser = build_parser()
    try:
        parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        print(f"policyengine {__version__}")
        return 0
    except PolicyEngineError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
