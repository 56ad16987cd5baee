"""The hook verb: answer an agent's hook protocol (Claude Code) on stdin and stdout."""

from __future__ import annotations

import argparse
from typing import TextIO

from policyengine.errors import UsageError

NAME = "hook"
HELP = "answer a Claude Code hook event (stdin JSON) with the packs' decision"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The hook verb's options."""
    parser.add_argument("agent", choices=["claude-code"], help="whose hook protocol to speak")
    parser.add_argument("--pack", action="append", required=True, metavar="DIR", help="a policy pack (repeatable)")
    parser.add_argument("--audit", metavar="FILE", help="append one audit record per decided call")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`hook claude-code`: not built yet."""
    raise UsageError("hook is not built yet")
