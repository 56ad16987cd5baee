"""Decisions per second and p50/p99 latency of `policyengine serve`, side by side with a bare endpoint on its stack.

    python benchmarks/load.py [--levels 1,16,64] [--duration 5] [--warmup 1] [--rounds 3]
                              [--pack DIR] [--calls FILE] [--client auto|raw|httpx|wrk] [--no-audit]
                              [--http auto|httptools|h11] [--workers 1,2]

starts the servers as subprocesses, each on a free 127.0.0.1 port:

- decide, once per `--workers` count N (default 1 and 2, compared in the same run): the real CLI
  entry, `python -m policyengine serve --pack DIR --host 127.0.0.1 --port P --workers N --audit
  FILE` (a decision log in a temporary folder, as a deployment would run it; `--no-audit` leaves
  it out), answering `POST /v1/decide`;
- bare: this file with `--bare-server`: the stack's own limit, an endpoint that reads the body
  (without parsing it) and returns a constant JSON document shaped like a decision, dispatched
  the way serve dispatches /v1/decide (a plain ASGI callable in front of a Starlette app), run by
  Uvicorn on a socket bound by serve's own `bind` with serve's `uvicorn.Config` settings.
  Whatever decide loses against it is the request's parsing, the decision, the metrics and the
  decision log;
- starlette: the same server's `/bare-starlette`, a Starlette route (`Request.body()` and a
  `JSONResponse` of the same document): what a typical endpoint on the stack costs, for scale.

The generator is one asyncio loop of N clients, each on its own keep-alive connection, sending the
calls of `examples/bfcl-calls.jsonl` (to `policies/bfcl`) round-robin, each client starting at a
different call. Per level: a warm-up, then a fixed window in which every completed request is
counted and its latency kept; bare and decide run back to back at each level, `--rounds` times (the
order alternates each round). `--client wrk` drives the same bodies with wrk (a C generator,
`apt-get install wrk`: ~9-14% of a core where the Python loop takes 18-29%), one Lua script per
server; wrk reports percentiles per window, so p50/p99 are then medians over rounds. The table shows
req/s (median over rounds), p50/p99 (all rounds pooled), the ratio decide/bare (median of the
back-to-back pairs: the machine is shared with other work, whose load moves between rounds), the
ratio of N workers to one (same pairing), and the server's CPU microseconds per request on each side
(read from /proc, the server's process and its workers together), whose ratio does not depend on
what else runs, and the cores the server kept busy (its CPU seconds per second). `--client auto`
first drives the bare endpoint at the highest level with httpx.AsyncClient and with raw asyncio
streams speaking HTTP/1.1, says which is faster, and uses it. The machine's cores are shared by the
generator and the server (the CPU share of each is printed per run). Benchmarks print; they never
assert.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# benchmarks/secrets.py would shadow the standard library's `secrets`, which the web stack imports.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import httpx  # noqa: E402

ROOT = HERE.parent
HOST = "127.0.0.1"
BARE_PATH = "/bare"
STARLETTE_PATH = "/bare-starlette"
DECIDE_PATH = "/v1/decide"
# The shape and size of a decide answer, fixed.
CONSTANT = {
    "decision": "allow",
    "stage": None,
    "rule": None,
    "pack": None,
    "reason": None,
    "call_id": "multi_turn_base_0:0:0",
    "pack_digest": "sha256:" + "0" * 64,
}
TICK = os.sysconf("SC_CLK_TCK")
BARE_SIDES = ["bare", "starlette"]


# -- the bare endpoint --------------------------------------------------------------------------------


def run_bare_server(host: str, port: int, http: str) -> None:
    """The constant JSON document on a plain ASGI path and on a Starlette route, on Uvicorn as `serve` runs it."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def bare(request: Request) -> JSONResponse:
        await request.body()
        return JSONResponse(CONSTANT)

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    starlette = Starlette(
        routes=[Route(STARLETTE_PATH, bare, methods=["POST"]), Route("/healthz", healthz, methods=["GET"])]
    )
    document = json.dumps(CONSTANT, separators=(",", ":")).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(document)).encode())]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        # As policyengine/service/app.py dispatches: its hot paths straight on ASGI, the rest to Starlette.
        if scope["type"] != "http" or scope["path"] != BARE_PATH:
            await starlette(scope, receive, send)
            return
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": document})

    # As policyengine/cli/serve.py runs its app: its socket, its uvicorn.Config, Server.serve under asyncio.run.
    from policyengine.cli.serve import HEADER_TIMEOUT, KEEP_ALIVE_TIMEOUT, bind
    from policyengine.service.http_protocol import protocol_class

    sock = bind(host, port)
    config = uvicorn.Config(
        app,
        log_level="info",
        timeout_keep_alive=int(KEEP_ALIVE_TIMEOUT),  # serve's default, 5 s
        http=protocol_class(http, HEADER_TIMEOUT),  # serve's protocol, its head deadline included
        lifespan="on",
        server_header=False,
        proxy_headers=False,
        access_log=False,
    )
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


# -- servers ------------------------------------------------------------------------------------------


def free_port() -> int:
    """A port nobody listens on at 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """One server subprocess: its name, port, path to POST to, extra request headers."""

    name: str
    process: subprocess.Popen[bytes]
    port: int
    path: str
    headers: dict[str, str] = field(default_factory=dict)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the server process and its live children (workers) so far (from /proc)."""
        total = 0.0
        parent = str(self.process.pid)
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if entry == parent or fields[1] == parent:
                total += (int(fields[11]) + int(fields[12])) / TICK
        return total

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start(name: str, command: list[str], port: int, path: str, headers: dict[str, str], log: Path) -> Server:
    """Start a server and wait (at most 30 s) until GET /healthz answers 200."""
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
    server = Server(name, process, port, path, headers)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{name} server exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"http://{HOST}:{port}/healthz", headers=headers, timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    server.stop()
    raise SystemExit(f"{name} server not ready after 30 s: {log.read_text()[-2000:]}")


# -- the generator ------------------------------------------------------------------------------------


@dataclass
class Tally:
    """What one timed window saw."""

    clients: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    failures: int = 0  # connection errors (the client reconnects)
    server_cpu: float = 0.0
    generator_cpu: float = 0.0
    # wrk reports a count and percentiles, not each latency (--client wrk)
    count: int | None = None
    quantiles: dict[float, float] = field(default_factory=dict)

    @property
    def requests(self) -> int:
        return len(self.latencies) if self.count is None else self.count

    @property
    def rate(self) -> float:
        return self.requests / self.seconds


def request_bytes(server: Server, body: bytes) -> bytes:
    """One complete HTTP/1.1 keep-alive request."""
    head = [f"POST {server.path} HTTP/1.1", f"Host: {HOST}:{server.port}", "Content-Type: application/json"]
    head += [f"{k}: {v}" for k, v in server.headers.items()]
    head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """One response: status, body, and whether the server closes the connection after it."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length, chunked, close = 0, False, False
    for line in lines[1:]:
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip().lower()
        if key == "content-length":
            length = int(value)
        elif key == "transfer-encoding":
            chunked = "chunked" in value
        elif key == "connection":
            close = value == "close"
    body = b""
    if chunked:
        for _ in range(100_000):
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            body += (await reader.readexactly(size + 2))[:-2]
            if size == 0:
                break
    elif length:
        body = await reader.readexactly(length)
    return status, body, close


Client = Callable[[Server, list[bytes], int, float, float, Tally], Coroutine[Any, Any, None]]


async def raw_client(server: Server, bodies: list[bytes], first: int, measure: float, end: float, tally: Tally) -> None:
    """One keep-alive connection speaking HTTP/1.1 over asyncio streams, until `end`."""
    requests = [request_bytes(server, body) for body in bodies]
    clock, n, i = time.perf_counter, len(requests), first
    writer: asyncio.StreamWriter | None = None
    for _ in range(100):  # reconnections
        try:
            reader, writer = await asyncio.open_connection(HOST, server.port)
            while (t0 := clock()) < end:
                writer.write(requests[i % n])
                i += 1
                status, _body, close = await read_response(reader)
                t1 = clock()
                if t0 >= measure:
                    tally.latencies.append(t1 - t0)
                    tally.statuses[status] += 1
                if close:
                    break
            else:
                return
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            if clock() >= measure:
                tally.failures += 1
            await asyncio.sleep(0.01)
        finally:
            if writer is not None:
                writer.close()
                writer = None


def httpx_clients(client: httpx.AsyncClient) -> Client:
    """Clients that share one httpx.AsyncClient, its pool sized to the client count."""

    async def one(server: Server, bodies: list[bytes], first: int, measure: float, end: float, tally: Tally) -> None:
        url = f"http://{HOST}:{server.port}{server.path}"
        headers = {"Content-Type": "application/json", **server.headers}
        clock, n, i = time.perf_counter, len(bodies), first
        while (t0 := clock()) < end:
            try:
                response = await client.post(url, content=bodies[i % n], headers=headers)
            except httpx.HTTPError:
                if t0 >= measure:
                    tally.failures += 1
                await asyncio.sleep(0.01)
                continue
            finally:
                i += 1
            t1 = clock()
            if t0 >= measure:
                tally.latencies.append(t1 - t0)
                tally.statuses[response.status_code] += 1

    return one


_WRK_DONE = """
done = function(summary, latency, requests)
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.timeout
  io.write(string.format('WRK {"requests": %d, "p50": %d, "p99": %d, "status": %d, "errors": %d}\\n',
    summary.requests, latency:percentile(50), latency:percentile(99), e.status, errors))
end
"""


def wrk_script(server: Server, bodies: list[bytes], folder: Path) -> Path:
    """A wrk Lua script sending the bodies round-robin (each connection from its own offset) to the server's path."""
    path = folder / f"wrk-{server.name}-{server.port}.lua"
    level = 1
    while any(f"]{'=' * level}]".encode() in body for body in bodies):
        level += 1
    eq = "=" * level
    headers = {"Content-Type": "application/json", **server.headers}
    lines = ["local bodies = {"]
    lines += [f"  [{eq}[{body.decode()}]{eq}]," for body in bodies]
    lines.append("}")
    lines.append("local headers = {" + ", ".join(f'["{k}"] = "{v}"' for k, v in headers.items()) + "}")
    lines.append("local requests, n, i = {}, #bodies, 0")
    lines.append(f'for k = 1, n do requests[k] = wrk.format("POST", "{server.path}", headers, bodies[k]) end')
    lines.append("request = function() i = i % n + 1; return requests[i] end")
    path.write_text("\n".join(lines) + _WRK_DONE, encoding="utf-8")
    return path


def drive_wrk(server: Server, script: Path, clients: int, warmup: float, duration: float) -> Tally:
    """wrk (one thread, a C event loop: a few % of a core) for warmup seconds untimed, then duration seconds timed."""
    url = f"http://{HOST}:{server.port}{server.path}"

    def wrk(seconds: float) -> str:
        command = ["wrk", "-t1", f"-c{clients}", f"-d{max(1, round(seconds))}s", "--timeout", "30s", "-s", str(script)]
        return subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout

    if warmup > 0:
        wrk(warmup)
    tally = Tally(clients, max(1, round(duration)))
    before = (server.cpu_seconds(), os.times())
    out = wrk(duration)
    after = (server.cpu_seconds(), os.times())
    report = json.loads(next(line for line in out.splitlines() if line.startswith("WRK "))[4:])
    tally.count = int(report["requests"])
    tally.quantiles = {0.5: report["p50"] / 1e6, 0.99: report["p99"] / 1e6}
    tally.statuses[200] = tally.count - int(report["status"])
    if report["status"]:
        tally.statuses[0] = int(report["status"])  # wrk counts non-2xx answers without their status
    tally.failures = int(report["errors"])
    tally.server_cpu = after[0] - before[0]
    tally.generator_cpu = (after[1].children_user + after[1].children_system) - (
        before[1].children_user + before[1].children_system
    )
    return tally


async def drive(server: Server, bodies: list[bytes], clients: int, warmup: float, duration: float, kind: str) -> Tally:
    """N concurrent clients for warmup + duration seconds; the tally of the timed window."""
    if kind == "wrk":
        script = wrk_script(server, bodies, Path(tempfile.gettempdir()))
        try:
            return await asyncio.to_thread(drive_wrk, server, script, clients, warmup, duration)
        finally:
            script.unlink(missing_ok=True)
    tally = Tally(clients, duration)
    stride = max(1, len(bodies) // clients)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=30) as pool:
        one: Client = raw_client if kind == "raw" else httpx_clients(pool)
        now = time.perf_counter()
        measure, end = now + warmup, now + warmup + duration
        cpu = []
        tasks = [asyncio.create_task(one(server, bodies, c * stride, measure, end, tally)) for c in range(clients)]
        await asyncio.sleep(max(0.0, measure - time.perf_counter()))
        cpu.append((server.cpu_seconds(), time.process_time()))
        await asyncio.sleep(max(0.0, end - time.perf_counter()))
        cpu.append((server.cpu_seconds(), time.process_time()))
        await asyncio.gather(*tasks)
    tally.server_cpu = cpu[1][0] - cpu[0][0]
    tally.generator_cpu = cpu[1][1] - cpu[0][1]
    return tally


# -- the run ------------------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, nearest rank; 0 when there are none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def load_bodies(calls: Path, limit: int) -> list[bytes]:
    """Request bodies of /v1/decide from a JSONL of recorded calls: name, arguments, call_id, agent."""
    bodies: list[bytes] = []
    with calls.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                call = json.loads(line)
                body: dict[str, Any] = {"name": call["name"], "arguments": call.get("arguments", {})}
                body["call_id"] = str(call.get("call_id", f"load-{len(bodies)}"))
                body["agent"] = "load-benchmark"
                bodies.append(json.dumps(body, separators=(",", ":")).encode())
            if len(bodies) >= limit:
                break
    return bodies


def decision_mix(server: Server, bodies: list[bytes]) -> Counter[str]:
    """Send every body once (also a warm-up); count the decisions and statuses."""
    mix: Counter[str] = Counter()
    url = f"http://{HOST}:{server.port}{server.path}"
    with httpx.Client(timeout=30, headers={"Content-Type": "application/json", **server.headers}) as client:
        for body in bodies:
            response = client.post(url, content=body)
            if response.status_code == 200:
                mix[str(response.json().get("decision"))] += 1
            else:
                mix[f"HTTP {response.status_code}"] += 1
    return mix


def serve_command(args: argparse.Namespace, port: int, tmp: Path, workers: int) -> list[str]:
    """`python -m policyengine serve --workers N` as a deployment would run it."""
    command = [sys.executable, "-m", "policyengine", "serve", "--pack", str(args.pack), "--host", HOST]
    command += ["--port", str(port), "--http", args.http, "--workers", str(workers)]
    if args.audit:
        command += ["--audit", str(tmp / f"decisions-{workers}.jsonl")]
    if args.token_file:
        command += ["--token-file", str(args.token_file)]
    return command + list(args.serve_arg)


def main() -> None:
    """Parse the options, start both servers, drive them, report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--levels", default="1,16,64", help="concurrent clients, comma-separated")
    parser.add_argument("--duration", type=float, default=5.0, help="timed seconds per level and endpoint")
    parser.add_argument("--warmup", type=float, default=1.0, help="untimed seconds before each window")
    parser.add_argument("--rounds", type=int, default=3, help="repeat every level; medians of the rates")
    parser.add_argument("--pack", type=Path, default=ROOT / "policies" / "bfcl")
    parser.add_argument("--calls", type=Path, default=ROOT / "examples" / "bfcl-calls.jsonl")
    parser.add_argument("--max-calls", type=int, default=100_000, help="use at most this many calls")
    parser.add_argument(
        "--client",
        choices=["auto", "raw", "httpx", "wrk"],
        default="auto",
        help="the generator: Python's (auto picks raw or httpx) or wrk, a C generator (apt-get install wrk)",
    )
    parser.add_argument("--no-audit", dest="audit", action="store_false", help="serve without a decision log")
    parser.add_argument("--token-file", type=Path, help="pass to serve and send as a bearer token")
    parser.add_argument("--serve-arg", action="append", default=[], metavar="ARG", help="one more serve argument")
    parser.add_argument(
        "--http", choices=["auto", "httptools", "h11"], default="auto", help="the HTTP parser of both servers"
    )
    parser.add_argument(
        "--workers", default="1,2", help="serve's worker counts to compare, comma-separated (default 1,2)"
    )
    parser.add_argument("--bare-server", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_server:
        run_bare_server(HOST, args.bare_server, args.http)
        return
    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    args.worker_counts = sorted({int(x) for x in args.workers.split(",") if x.strip()})
    bodies = load_bodies(args.calls, args.max_calls)
    headers = {}
    if args.token_file:
        headers["Authorization"] = f"Bearer {args.token_file.read_text().strip()}"
    cores = os.cpu_count() or 0
    generator = "wrk, one thread" if args.client == "wrk" else "one asyncio loop"
    print(f"machine: {cores} cores, SHARED by the generator ({generator}) and the server under test", flush=True)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    shown = args.calls.relative_to(ROOT) if args.calls.is_relative_to(ROOT) else args.calls
    print(f"bodies: {len(bodies)} calls from {shown}, to {args.pack}", flush=True)
    with tempfile.TemporaryDirectory(prefix="pe-load-") as tmpdir:
        tmp = Path(tmpdir)
        servers: dict[str, Server] = {}
        try:
            port = free_port()
            bare_cmd = [sys.executable, str(Path(__file__).resolve()), "--bare-server", str(port), "--http", args.http]
            servers["bare"] = start("bare", bare_cmd, port, BARE_PATH, {}, tmp / "bare.log")
            servers["starlette"] = Server("starlette", servers["bare"].process, port, STARLETTE_PATH)
            for workers in args.worker_counts:
                port = free_port()
                command = serve_command(args, port, tmp, workers)
                name = f"decide{workers}"
                shown = " ".join(Path(c).name if c == sys.executable else c for c in command)
                print(f"{name}: {shown}", flush=True)
                servers[name] = start(name, command, port, DECIDE_PATH, headers, tmp / f"serve-{workers}.log")
                mix = decision_mix(servers[name], bodies)
                print(f"decisions of the bodies (each sent once, untimed): {dict(mix.most_common())}", flush=True)
            print(asyncio.run(run(args, servers, bodies, levels)), end="")
            if args.audit:
                from policyengine.service.decision_log import rotated_files

                for workers in args.worker_counts:
                    files = rotated_files(tmp / f"decisions-{workers}.jsonl")
                    lines = sum(f.read_bytes().count(b"\n") for f in files)
                    size = sum(f.stat().st_size for f in files) / 1e6
                    print(
                        f"decision log of decide{workers}: {lines:,} lines ({size:.0f} MB, {len(files)} file(s)) "
                        "written during the run"
                    )
            print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finally:
            for server in servers.values():
                server.stop()  # starlette shares bare's process: stopping it twice is a no-op


async def run(args: argparse.Namespace, servers: dict[str, Server], bodies: list[bytes], levels: list[int]) -> str:
    """Choose the client, run every level on both endpoints, return the report."""
    out: list[str] = []
    kind = args.client
    if kind == "auto":
        top = max(levels)
        rates = {}
        for candidate in ("httpx", "raw"):
            tally = await drive(servers["bare"], bodies, top, 0.5, 2.0, candidate)
            rates[candidate] = tally.rate
        kind = max(rates, key=lambda k: rates[k])
        print(
            f"client check (bare endpoint, {top} clients, 2 s): httpx.AsyncClient {rates['httpx']:,.0f} req/s, "
            f"raw asyncio streams {rates['raw']:,.0f} req/s -> using {kind}",
            flush=True,
        )
    tallies: dict[tuple[str, int], list[Tally]] = {}
    decides = [f"decide{n}" for n in args.worker_counts]
    sides = [*BARE_SIDES, *decides]
    for round_ in range(args.rounds):
        for level in levels:
            order = sides if round_ % 2 == 0 else sides[::-1]
            for name in order:
                tally = await drive(servers[name], bodies, level, args.warmup, args.duration, kind)
                tallies.setdefault((name, level), []).append(tally)
                bad = {k: v for k, v in tally.statuses.items() if k != 200}
                print(
                    f"  round {round_ + 1} {name:9} {level:3} clients: {tally.rate:8,.0f} req/s, "
                    f"server CPU {tally.server_cpu / tally.seconds:4.0%}, generator CPU "
                    f"{tally.generator_cpu / tally.seconds:4.0%}"
                    + (f", non-200: {bad}" if bad else "")
                    + (f", connection errors: {tally.failures}" if tally.failures else ""),
                    flush=True,
                )
    ms = 1000
    pooled = "median over rounds" if kind == "wrk" else "all rounds pooled"
    out.append(
        f"\n{args.duration:g} s per level and endpoint after {args.warmup:g} s of warm-up, {args.rounds} round(s), "
        f"client: {kind}; {os.cpu_count()} cores shared by generator and server\n"
        f"req/s: median over rounds; p50/p99: ms, {pooled}; ratios: median over rounds of the ratio of "
        "rates measured back to back;\ncpu us: the server's CPU microseconds per request, workers included "
        "(median over rounds); cores: the server's CPU seconds per second (median); gen: the generator's\n"
    )

    def rate(name: str, level: int) -> float:
        return statistics.median(t.rate for t in tallies[(name, level)])

    def cpu_us(name: str, level: int) -> float:
        return statistics.median(t.server_cpu / max(1, t.requests) for t in tallies[(name, level)]) * 1e6

    def share(name: str, level: int, generator: bool = False) -> float:
        runs = tallies[(name, level)]
        return statistics.median((t.generator_cpu if generator else t.server_cpu) / t.seconds for t in runs)

    def ratio(of: str, to: str, level: int) -> float:
        pairs = zip(tallies[(to, level)], tallies[(of, level)], strict=True)
        return statistics.median(d.rate / b.rate if b.rate else 0.0 for b, d in pairs)

    def p(name: str, level: int, q: float) -> float:
        runs = tallies[(name, level)]
        if any(t.quantiles for t in runs):  # wrk: the median of each round's percentile
            return statistics.median(t.quantiles[q] for t in runs) * ms
        return percentile([x for t in runs for x in t.latencies], q) * ms

    out.append(f"{'clients':>7} | {'bare req/s':>10} {'p99':>6} {'cpu us':>6} | {'starlette':>9} {'p99':>6} |")
    for name in decides:
        out.append(f" {name + ' req/s':>14} {'p50':>6} {'p99':>6} {'cpu us':>6} {'cores':>5} {'gen':>4} |")
    out.append(f" {'decide1/bare':>12}")
    for name in decides[1:]:
        out.append(f" {name + '/decide1':>16}")
    out.append("\n")
    for level in levels:
        row = f"{level:7} | {rate('bare', level):10,.0f} {p('bare', level, 0.99):6.2f} {cpu_us('bare', level):6.0f} |"
        row += f" {rate('starlette', level):9,.0f} {p('starlette', level, 0.99):6.2f} |"
        for name in decides:
            row += (
                f" {rate(name, level):14,.0f} {p(name, level, 0.5):6.2f} {p(name, level, 0.99):6.2f}"
                f" {cpu_us(name, level):6.0f} {share(name, level):5.2f} {share(name, level, True):4.0%} |"
            )
        first = decides[0]
        row += f" {ratio(first, 'bare', level):12.0%}"
        for name in decides[1:]:
            row += f" {ratio(name, first, level):16.2f}x"
        out.append(row + "\n")
    if len(decides) > 1:
        top, first, last = max(levels), decides[0], decides[-1]
        scale = ratio(last, first, top)
        out.append(
            f"{last} against {first} at {top} clients: {scale:.2f}x the decisions/s; CPU per decision "
            f"{cpu_us(first, top):.0f} -> {cpu_us(last, top):.0f} us; cores busy {share(first, top):.2f} -> "
            f"{share(last, top):.2f} (the generator took {share(last, top, True):.0%} of a core)\n"
        )
    return "".join(out)


if __name__ == "__main__":
    main()
