"""Time one MCP tool call made directly to an upstream server and made through `policyengine mcp-proxy`.

    python benchmarks/mcp_proxy.py [--calls 2000] [--pack DIR]... [--tool echo] [--no-relay] [--profile FILE]

starts tests/mcp_upstream_server.py alone, behind the real CLI entry (`python -m policyengine
mcp-proxy --pack ... -- python tests/mcp_upstream_server.py`), and (unless --no-relay) behind a
relay that copies bytes between the pipes and parses nothing: the floor of any stdio proxy
written in Python, one more process and two more pipe hops per call. The SDK's stdio client
makes the same call (`echo {"text": "hello"}`) on every side in turn, the order rotating each
round, so a slow moment of the machine costs every side alike. It prints the median, p90 and p99
per-call latency of each side, what the proxy adds (difference of the medians, and median of the
per-round differences), and how much of that the bare extra hop explains. `--profile FILE` runs
the proxy under cProfile (slower) and writes its stats there. Benchmarks print; they never assert.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

# benchmarks/secrets.py would shadow the standard library's `secrets`, which the MCP SDK imports.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

ROOT = HERE.parent
UPSTREAM = ROOT / "tests" / "mcp_upstream_server.py"

# A stdio relay that parses nothing: asyncio pipes both ways, as the proxy's own transport reads them.
RELAY = """
import asyncio, os, sys
async def main():
    loop = asyncio.get_running_loop()
    proc = await asyncio.create_subprocess_exec(*sys.argv[1:], stdin=-1, stdout=-1)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(1, "wb", 0))
    out = asyncio.StreamWriter(transport, protocol, None, loop)
    async def pump(src, dst):
        while data := await src.read(1 << 16):
            dst.write(data)
            await dst.drain()
        dst.close()
    await asyncio.gather(pump(reader, proc.stdin), pump(proc.stdout, out))
asyncio.run(main())
"""


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def sides(args: argparse.Namespace) -> dict[str, StdioServerParameters]:
    """How each side starts: the upstream alone, behind the relay, behind the proxy."""
    upstream = [sys.executable, str(UPSTREAM)]
    proxy = ["-m", "policyengine", "mcp-proxy"]
    if args.profile:
        proxy = ["-m", "cProfile", "-o", args.profile, *proxy]
    for pack in args.pack:
        proxy += ["--pack", pack]
    out = {"direct": StdioServerParameters(command=upstream[0], args=upstream[1:], cwd=str(ROOT))}
    if args.relay:
        out["relay"] = StdioServerParameters(command=sys.executable, args=["-c", RELAY, *upstream], cwd=str(ROOT))
    out["proxy"] = StdioServerParameters(command=sys.executable, args=[*proxy, "--", *upstream], cwd=str(ROOT))
    return out


async def bench(args: argparse.Namespace) -> dict[str, list[float]]:
    """Per-call seconds for each side, measured in rotation."""
    arguments: dict[str, Any] = {"text": "hello"} if args.tool == "echo" else {}
    started = sides(args)
    times: dict[str, list[float]] = {name: [] for name in started}
    async with AsyncExitStack() as stack:
        sessions: dict[str, ClientSession] = {}
        for name, params in started.items():
            read, write = await stack.enter_async_context(stdio_client(params))
            sessions[name] = await stack.enter_async_context(ClientSession(read, write))
            await sessions[name].initialize()
            await sessions[name].list_tools()
            for _ in range(args.warmup):
                await sessions[name].call_tool(args.tool, arguments)
        names = list(sessions)
        clock = time.perf_counter
        for i in range(args.calls):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                start = clock()
                result = await sessions[name].call_tool(args.tool, arguments)
                times[name].append(clock() - start)
                if result.is_error:
                    raise SystemExit(f"{name}: the call failed: {result.content}")
    return times


def report(times: dict[str, list[float]], args: argparse.Namespace) -> None:
    """Print every side side by side, and the added latency."""
    us = 1e6
    print(f"{args.calls:,} calls of {args.tool} per side, in rotation; packs: {', '.join(args.pack)}")
    print(f"{'':8}{'median':>9}{'p90':>9}{'p99':>9}   (microseconds per call)")
    for name, values in times.items():
        print(
            f"{name:8}{statistics.median(values) * us:9.0f}"
            f"{percentile(values, 0.9) * us:9.0f}{percentile(values, 0.99) * us:9.0f}"
        )
    direct = statistics.median(times["direct"])
    added = statistics.median(times["proxy"]) - direct
    rounds = statistics.median(p - d for p, d in zip(times["proxy"], times["direct"], strict=True))
    print(f"added by the proxy: {added * us:.0f} us (difference of medians), {rounds * us:.0f} us (median per round)")
    if "relay" in times:
        hop = statistics.median(times["relay"]) - direct
        rest = added - hop
        print(f"  of which one more stdio hop (the byte relay) costs {hop * us:.0f} us; the rest, {rest * us:.0f} us,")
        print("  is the proxy's work: MCP parsing and serialisation (SDK server and client), the pipeline, the audit")
    print(f"target: at most 1000 us added per call -> {'met' if added <= 1e-3 else 'NOT met'}")


def main() -> None:
    """Parse the options, run, report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--pack", action="append", default=None, metavar="DIR")
    parser.add_argument("--tool", default="echo")
    parser.add_argument("--no-relay", dest="relay", action="store_false", help="skip the byte relay side")
    parser.add_argument("--profile", metavar="FILE", help="run the proxy under cProfile, stats written here")
    args = parser.parse_args()
    args.pack = args.pack or [str(ROOT / "policies" / "baseline")]
    report(anyio.run(bench, args), args)


if __name__ == "__main__":
    main()
