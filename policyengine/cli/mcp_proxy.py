"""The mcp-proxy verb: an MCP server that puts packs in front of an upstream MCP server's tools.

Its stdout is the MCP wire: nothing is ever printed there; problems go to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
from typing import Any, TextIO

from policyengine.errors import UsageError, install_hint

NAME = "mcp-proxy"
HELP = "serve an upstream MCP server's tools over stdio, through the packs"

# The defaults, repeated from policyengine/adapters/mcp_proxy.py so `--help` needs no MCP SDK.
CALL_TIMEOUT = 60.0
MAX_RESULT_BYTES = 4 * 1024 * 1024
APPROVAL_TIMEOUT = 300.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The mcp-proxy verb's options."""
    from policyengine.cli.pack_folders import PACK_HELP, resolve_pack  # a folder, else a shipped pack's name

    parser.add_argument("--pack", action="append", required=True, type=resolve_pack, metavar="PACK", help=PACK_HELP)
    parser.add_argument(
        "--audit",
        metavar="FILE",
        help="append one audit record per call, credentials redacted, to a file created 0600 (replayable by dry-run)",
    )
    parser.add_argument(
        "--otel",
        action="store_true",
        help="export each call's record as an OpenTelemetry span and log (OTLP/HTTP to the OTEL_* environment's "
        "endpoint; needs the [otel] extra)",
    )
    parser.add_argument(
        "--save-tools",
        metavar="FILE",
        help="write the upstream's tools as registered (for `dry-run --tools FILE`) once they are listed",
    )
    parser.add_argument(
        "--call-timeout",
        type=float,
        default=CALL_TIMEOUT,
        metavar="SECONDS",
        help=f"longest wait for the upstream's answer to a call (default {CALL_TIMEOUT:g}); packs may set shorter ones",
    )
    parser.add_argument(
        "--max-result-bytes",
        type=int,
        default=MAX_RESULT_BYTES,
        metavar="N",
        help=f"largest message the upstream may send; a larger result is an error (default {MAX_RESULT_BYTES:,})",
    )
    parser.add_argument(
        "--approval-timeout",
        type=float,
        default=APPROVAL_TIMEOUT,
        metavar="SECONDS",
        help=f"longest wait for a person to answer an approval question (default {APPROVAL_TIMEOUT:g}); then deny",
    )
    parser.add_argument(
        "--cwd",
        metavar="DIR",
        help="where the upstream runs and relative paths resolve (default: the current directory)",
    )
    parser.add_argument(
        "--sessions",
        metavar="SPEC",
        help="where sessions live (one per client connection): memory (default, this process), "
        "sqlite:PATH, or redis://HOST:PORT/DB",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]: the upstream MCP server")


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`mcp-proxy`: check the options, load the packs, then proxy until the client disconnects."""
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command or not command[0]:
        raise UsageError(
            "mcp-proxy needs the command that starts the upstream MCP server",
            hint="put it after `--`: policyengine mcp-proxy --pack DIR -- python my_server.py",
        )
    _positive("--call-timeout", args.call_timeout)
    _positive("--approval-timeout", args.approval_timeout)
    if args.max_result_bytes < 1024:
        raise UsageError(
            f"--max-result-bytes {args.max_result_bytes} is too small", hint="give at least 1024 (the default is 4 MiB)"
        )
    if args.cwd is not None and not os.path.isdir(args.cwd):
        raise UsageError(f"--cwd {args.cwd} is not a directory", hint="give the directory the upstream should run in")
    if args.audit is not None:
        _private("--audit", args.audit, err)
    if args.save_tools is not None:
        _writable("--save-tools", args.save_tools, append=False)
    try:
        mcp_proxy: Any = importlib.import_module("policyengine.adapters.mcp_proxy")
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in {"mcp", "mcp_types", "anyio", "jsonschema", "pydantic"}:
            raise
        raise UsageError(
            f"mcp-proxy needs the official MCP SDK, which is not installed ({error.name} is missing)",
            hint=install_hint("mcp"),
        ) from None
    options = mcp_proxy.ProxyOptions(
        command=tuple(command),
        packs=tuple(args.pack),
        audit=args.audit,
        save_tools=args.save_tools,
        call_timeout=args.call_timeout,
        max_result_bytes=args.max_result_bytes,
        approval_timeout=args.approval_timeout,
        cwd=args.cwd,
        sessions=args.sessions,
        otel=args.otel,
    )

    def warn(message: str) -> None:
        print(message, file=err, flush=True)

    return int(mcp_proxy.run(options, warn=warn))


def _positive(option: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{option} {value:g} is not a positive number of seconds", hint=f"e.g. {option} 30")


def _private(option: str, path: str, err: TextIO) -> None:
    """Create (0600) or check the audit file at start: one others can read is tightened, loudly, or refused."""
    from policyengine.audit import open_private

    try:
        os.close(open_private(path, warn=lambda message: print(message, file=err, flush=True)))
    except OSError as error:
        raise UsageError(
            f"{option}: cannot write {path}: {error.strerror or error}", hint="give a file in a writable directory"
        ) from None


def _writable(option: str, path: str, *, append: bool) -> None:
    """Refuse at start a file the proxy could not write later."""
    try:
        with open(path, "a" if append else "w", encoding="utf-8"):
            pass
    except OSError as error:
        raise UsageError(
            f"{option}: cannot write {path}: {error.strerror or error}", hint="give a file in a writable directory"
        ) from None
