"""Soak test of `policyengine serve`: decisions under load while the pack is reloaded, checked against the log.

Starts `python -m policyengine serve --pack DIR --audit FILE` on a free 127.0.0.1 port, with DIR a
small pack written to a temp folder, and for `--minutes` minutes:

- clients call `POST /v1/decide` continuously (`--clients` concurrent, `--rate` requests per second
  in all): most on keep-alive connections, every `--fresh-every`-th on a connection of its own,
  each call with a unique call_id, and one in `--bad-every` with a body that is not a call (it
  must get a 4xx, never a 5xx);
- every `--reload-every` seconds the pack flips between two versions (v1 denies `rm` and allows
  `mv`, v2 the opposite), in turn: rules.yaml replaced atomically + SIGHUP, replaced atomically
  with no signal (the folder watch must see it), rewritten in place + SIGHUP, and a touch of
  pack.yaml + SIGHUP (the same content again: a reload to the same digest).

Every answer is counted by status code and pack_digest. Invariants, checked at the end:

- no 5xx, no malformed body answered below 400, and the server never exits;
- every 200 answer names the digest of v1 or v2 and decides as that version does (no answer
  mixes the two), and serve ends on the version written last;
- the decision log (JSON lines, rotated files included) has exactly one line per 200 answer, by
  call_id, with the same decision and pack_digest (lines for calls that got no 200, say a
  dropped connection, are reported, not counted as violations).

Prints the counts, the slowest answers (with the pack change before each); exits 1 on any
violation.

Usage::

    python scripts/soak_serve.py                   # 10 minutes
    python scripts/soak_serve.py --minutes 2 --clients 16 --rate 400 --reload-every 2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from policyengine import load_pack
from policyengine.service.decision_log import rotated_files

ROOT = Path(__file__).resolve().parent.parent


def _load_benchmark() -> Any:
    """benchmarks/load.py, for its HTTP/1.1 response reader (one copy of it)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("policyengine_load_benchmark", ROOT / "benchmarks" / "load.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


read_response = _load_benchmark().read_response
HOST = "127.0.0.1"
PATH = "/v1/decide"

MANIFEST = """name: soak
version: 1.0.0
description: A small pack that serve reloads under load; v1 and v2 differ in rules.yaml only.
default: allow
files: [rules.yaml]
"""


def rules(version: str) -> str:
    """rules.yaml of a version: v1 denies rm, v2 denies mv; the other is allowed."""
    tool = "rm" if version == "v1" else "mv"
    return f"""rules:
  - id: {version}-deny-{tool}
    description: {version} denies {tool}.
    stage: pre-execute
    tools: ["{tool}"]
    decision: deny
    reason: "{version} denies {{name}}."
"""


def expected(version: str, name: str) -> str:
    """The decision a version makes on a call of this tool."""
    return "deny" if (name, version) in (("rm", "v1"), ("mv", "v2")) else "allow"


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("rm", {"file_name": "old.txt"}),
    ("mv", {"source": "a.txt", "destination": "b.txt"}),
    ("cat", {"file_name": "notes.txt"}),
    ("ls", {}),
]


# -- the pack folder ------------------------------------------------------------------------------


def write_atomically(path: Path, text: str) -> None:
    """Write a file through a temp file and a rename: a reader sees the old or the new content."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def digests(root: Path) -> dict[str, str]:
    """The digest of each version, from copies written outside the served folder."""
    out = {}
    for version in ("v1", "v2"):
        folder = root / "staging" / version
        folder.mkdir(parents=True)
        (folder / "pack.yaml").write_text(MANIFEST, encoding="utf-8")
        (folder / "rules.yaml").write_text(rules(version), encoding="utf-8")
        out[version] = load_pack(folder).digest
    return out


@dataclass
class Reloader:
    """Flips the served pack between v1 and v2, in four ways in turn."""

    folder: Path
    process: subprocess.Popen[bytes]
    version: str = "v1"
    flips: int = 0
    by_mode: Counter[str] = field(default_factory=Counter)
    signals: int = 0
    changes: list[tuple[float, str]] = field(default_factory=list)  # (monotonic time, mode)

    def step(self) -> None:
        """One reload: the next mode in turn."""
        mode = ("replace+SIGHUP", "replace (watch)", "rewrite+SIGHUP", "touch+SIGHUP")[sum(self.by_mode.values()) % 4]
        self.by_mode[mode] += 1
        self.changes.append((time.monotonic(), mode))
        if mode == "touch+SIGHUP":
            os.utime(self.folder / "pack.yaml")
        else:
            self.version = "v2" if self.version == "v1" else "v1"
            self.flips += 1
            if mode == "rewrite+SIGHUP":
                (self.folder / "rules.yaml").write_text(rules(self.version), encoding="utf-8")
            else:
                write_atomically(self.folder / "rules.yaml", rules(self.version))
        if mode.endswith("SIGHUP") and self.process.poll() is None:
            self.process.send_signal(signal.SIGHUP)
            self.signals += 1


# -- clients ----------------------------------------------------------------------------------------


@dataclass
class Answer:
    """One 200 answer: what the client sent and what it got."""

    name: str
    decision: str
    digest: str


@dataclass
class Tally:
    """Every answer, by status and digest; the 200s by call_id."""

    statuses: Counter[int] = field(default_factory=Counter)
    digests: Counter[str] = field(default_factory=Counter)
    decisions: Counter[str] = field(default_factory=Counter)
    answers: dict[str, Answer] = field(default_factory=dict)
    bad_statuses: Counter[int] = field(default_factory=Counter)  # answers to the deliberately bad bodies
    connection_errors: Counter[str] = field(default_factory=Counter)
    unparsable: int = 0
    latencies: list[float] = field(default_factory=list)
    slowest: list[tuple[float, float, str]] = field(default_factory=list)  # (seconds, monotonic start, call_id)
    samples_5xx: list[str] = field(default_factory=list)


def request_bytes(port: int, body: bytes, close: bool) -> bytes:
    """One HTTP/1.1 request, keep-alive unless `close`."""
    head = [f"POST {PATH} HTTP/1.1", f"Host: {HOST}:{port}", "Content-Type: application/json"]
    if close:
        head.append("Connection: close")
    head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def client(index: int, port: int, args: argparse.Namespace, end: float, tally: Tally, rng: random.Random) -> None:
    """Call /v1/decide at this client's share of the rate until `end`."""
    interval = args.clients / args.rate
    streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    next_at = time.monotonic() + rng.uniform(0, interval)
    n = 0
    limit = int(args.rate * args.minutes * 60 / args.clients) + 1000  # bounded, whatever the clock does
    while n < limit and (now := time.monotonic()) < end:
        if next_at > now:
            await asyncio.sleep(next_at - now)
        next_at = max(next_at + interval, time.monotonic() - interval)
        n += 1
        call_id = f"soak-{index}-{n}"
        bad = args.bad_every and n % args.bad_every == 0
        fresh = args.fresh_every and n % args.fresh_every == 0
        name, arguments = rng.choice(CALLS)
        if bad:
            body = rng.choice([b"{not json", b'{"arguments": {}}', b"[]", b'{"name": 5, "arguments": []}'])
        else:
            body = json.dumps({"name": name, "arguments": arguments, "call_id": call_id, "agent": "soak"}).encode()
        try:
            if streams is None or fresh:
                if streams is not None:
                    streams[1].close()
                streams = await asyncio.open_connection(HOST, port)
            reader, writer = streams
            t0 = time.perf_counter()
            writer.write(request_bytes(port, body, bool(fresh)))
            status, payload, close = await asyncio.wait_for(read_response(reader), timeout=30)
            took = time.perf_counter() - t0
            tally.latencies.append(took)
            if len(tally.slowest) < 5 or took > tally.slowest[0][0]:
                heapq.heappush(tally.slowest, (took, time.monotonic() - took, call_id))
                if len(tally.slowest) > 5:
                    heapq.heappop(tally.slowest)
            if close or fresh:
                writer.close()
                streams = None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError) as error:
            tally.connection_errors[type(error).__name__] += 1
            if streams is not None:
                streams[1].close()
                streams = None
            continue
        if bad:
            tally.bad_statuses[status] += 1
            if status >= 500 and len(tally.samples_5xx) < 5:
                tally.samples_5xx.append(f"bad body {body!r}: {status} {payload[:200]!r}")
            continue
        tally.statuses[status] += 1
        if status >= 500 and len(tally.samples_5xx) < 5:
            tally.samples_5xx.append(f"{call_id} {name}: {status} {payload[:200]!r}")
        if status != 200:
            continue
        try:
            answer = json.loads(payload)
            decision, digest = str(answer["decision"]), str(answer["pack_digest"])
        except (ValueError, KeyError, TypeError):
            tally.unparsable += 1
            continue
        tally.digests[digest] += 1
        tally.decisions[decision] += 1
        tally.answers[call_id] = Answer(name, decision, digest)
    if streams is not None:
        streams[1].close()


# -- the run ----------------------------------------------------------------------------------------


def free_port() -> int:
    """A port nobody listens on at 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def wait_ready(port: int, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    """Until GET /healthz answers 200 (at most `seconds`); exits if the server dies first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"serve exited with {process.returncode} before it was ready")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=1) as s:
            s.sendall(f"GET /healthz HTTP/1.1\r\nHost: {HOST}:{port}\r\nConnection: close\r\n\r\n".encode())
            if s.recv(64).startswith(b"HTTP/1.1 200"):
                return
        time.sleep(0.1)
    raise SystemExit(f"serve not ready after {seconds:.0f} s")


def healthz(port: int) -> str:
    """The body of GET /healthz, or why not."""
    try:
        with socket.create_connection((HOST, port), timeout=5) as s:
            s.sendall(f"GET /healthz HTTP/1.1\r\nHost: {HOST}:{port}\r\nConnection: close\r\n\r\n".encode())
            data = b""
            for _ in range(1000):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return data.split(b"\r\n\r\n", 1)[-1].decode("utf-8", "replace")
    except OSError as error:
        return f"unreachable: {error}"


def read_log(path: Path) -> tuple[Counter[str], dict[str, dict[str, Any]], int]:
    """Log lines per call_id, the last record of each, and the lines that are not JSON."""
    counts: Counter[str] = Counter()
    records: dict[str, dict[str, Any]] = {}
    broken = 0
    for file in rotated_files(path):
        with file.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                try:
                    record = json.loads(line)
                    call_id = str(record["call_id"])
                except (ValueError, KeyError, TypeError):
                    broken += 1
                    continue
                counts[call_id] += 1
                records[call_id] = record
    return counts, records, broken


async def soak(args: argparse.Namespace, port: int, reloader: Reloader) -> Tally:
    """Clients and the reloader until the time is up."""
    tally = Tally()
    rng = random.Random(args.seed)
    end = time.monotonic() + args.minutes * 60
    tasks = [
        asyncio.create_task(client(i, port, args, end, tally, random.Random(rng.random()))) for i in range(args.clients)
    ]
    last_report = time.monotonic()
    while (now := time.monotonic()) < end:
        await asyncio.sleep(min(args.reload_every, max(0.0, end - now)))
        if time.monotonic() >= end:
            break
        reloader.step()
        if reloader.process.poll() is not None:
            print(f"serve exited with {reloader.process.returncode} during the soak", flush=True)
            break
        if time.monotonic() - last_report >= 60:
            last_report = time.monotonic()
            left = max(0.0, end - last_report)
            print(
                f"  {sum(tally.statuses.values()):,} answers, {reloader.flips} flips, statuses "
                f"{dict(sorted(tally.statuses.items()))}, {left / 60:.1f} min left",
                flush=True,
            )
    await asyncio.gather(*tasks)
    return tally


def check(tally: Tally, digests: dict[str, str], log: Path) -> tuple[list[str], list[str]]:
    """The summary lines and every violated invariant."""
    lines: list[str] = []
    violations: list[str] = []
    version_of = {d: v for v, d in digests.items()}
    fives = sum(n for s, n in tally.statuses.items() if s >= 500) + sum(
        n for s, n in tally.bad_statuses.items() if s >= 500
    )
    if fives:
        violations.append(f"{fives} 5xx answer(s): {tally.samples_5xx}")
    bad_2xx = sum(n for s, n in tally.bad_statuses.items() if s < 400)
    if bad_2xx:
        violations.append(f"{bad_2xx} malformed request(s) answered below 400: {dict(tally.bad_statuses)}")
    if tally.unparsable:
        violations.append(f"{tally.unparsable} 200 answer(s) without decision and pack_digest")
    unknown = {d: n for d, n in tally.digests.items() if d not in version_of}
    if unknown:
        violations.append(f"answers naming a digest of neither version: {unknown}")
    wrong = [
        f"{cid}: {a.name} -> {a.decision} under {version_of[a.digest]}"
        for cid, a in tally.answers.items()
        if a.digest in version_of and a.decision != expected(version_of[a.digest], a.name)
    ]
    if wrong:
        violations.append(f"{len(wrong)} answer(s) not decided as their pack decides (mixed packs?): {wrong[:5]}")
    counts, records, broken = read_log(log)
    missing = [cid for cid in tally.answers if counts[cid] == 0]
    doubled = [cid for cid in tally.answers if counts[cid] > 1]
    extra = [cid for cid in counts if cid.startswith("soak-") and cid not in tally.answers]
    differ = [
        cid
        for cid, a in tally.answers.items()
        if cid in records
        and (
            records[cid].get("decision") != a.decision
            or records[cid].get("pack_digest", records[cid].get("digest")) != a.digest
        )
    ]
    files = rotated_files(log)
    lines.append(
        f"decision log: {sum(counts.values()):,} lines in {len(files)} file(s) "
        f"({sum(f.stat().st_size for f in files) / 1e6:.1f} MB); 200 answers without a line: {len(missing)}, "
        f"with more than one: {len(doubled)}; lines for calls with no 200 answer: {len(extra)}; "
        f"lines that differ from the answer: {len(differ)}; unreadable lines: {broken}"
    )
    if missing:
        violations.append(f"{len(missing)} 200 answer(s) with no log line (LOST): {missing[:5]}")
    if doubled:
        violations.append(f"{len(doubled)} 200 answer(s) logged more than once: {doubled[:5]}")
    if differ:
        violations.append(f"{len(differ)} log line(s) that differ from the answer: {differ[:5]}")
    if broken:
        violations.append(f"{broken} log line(s) that are not JSON records")
    if extra:
        # A call whose connection broke after the server decided: logged, never answered to us.
        lines.append(f"  note: logged but not answered 200 (dropped connections?): {extra[:5]}")
    return lines, violations


def slow(tally: Tally, reloader: Reloader, start: float) -> list[str]:
    """The slowest answers: when they started, and the pack change just before."""
    out = []
    for took, at, call_id in sorted(tally.slowest, reverse=True):
        before = [(t, mode) for t, mode in reloader.changes if t <= at]
        after = f", {at - before[-1][0]:.2f} s after a {before[-1][1]}" if before else ""
        out.append(f"{took * 1000:.0f} ms at {at - start:.1f} s ({call_id}{after})")
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run serve and the soak, check, report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients")
    parser.add_argument("--rate", type=float, default=300.0, help="requests per second, all clients together")
    parser.add_argument("--reload-every", type=float, default=3.0, help="seconds between pack changes")
    parser.add_argument("--fresh-every", type=int, default=50, help="every Nth call of a client on a new connection")
    parser.add_argument("--bad-every", type=int, default=100, help="every Nth call of a client is malformed (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--serve-arg", action="append", default=[], metavar="ARG", help="one more serve argument")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (pack, decision log, serve log)")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        root = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pe-soak-serve-")))
        root.mkdir(parents=True, exist_ok=True)
        versions = digests(root)
        folder = root / "pack"
        folder.mkdir()
        (folder / "pack.yaml").write_text(MANIFEST, encoding="utf-8")
        (folder / "rules.yaml").write_text(rules("v1"), encoding="utf-8")
        log = root / "decisions.jsonl"
        port = free_port()
        command = [sys.executable, "-m", "policyengine", "serve", "--pack", str(folder), "--host", HOST]
        command += ["--port", str(port), "--audit", str(log), *args.serve_arg]
        print(f"serve: {' '.join(command[1:])}", flush=True)
        print(
            f"soak: {args.minutes:g} min, {args.clients} clients, {args.rate:g} req/s, a pack change every "
            f"{args.reload_every:g} s; digests v1 {versions['v1'][:19]}..., v2 {versions['v2'][:19]}...",
            flush=True,
        )
        with (root / "serve.log").open("wb") as sink:
            process = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
        try:
            wait_ready(port, process)
            reloader = Reloader(folder, process)
            t0 = time.monotonic()
            tally = asyncio.run(soak(args, port, reloader))
            seconds = time.monotonic() - t0
            time.sleep(3.0)  # longer than serve's default folder poll (2 s): the last change is in
            health = healthz(port)
            alive = process.poll() is None
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
        lines, violations = check(tally, versions, log)
        if not alive:
            violations.append(f"serve exited during the soak ({process.returncode})")
        try:
            state = json.loads(health)
        except ValueError:
            state = {}
        final = state.get("pack_digest")
        if final != versions[reloader.version]:
            violations.append(f"serve ends on {final}, not on the last version written ({reloader.version})")
        answered = sum(tally.statuses.values()) + sum(tally.bad_statuses.values())
        lat = sorted(tally.latencies) or [0.0]
        named = {versions["v1"]: "v1", versions["v2"]: "v2"}
        print(f"duration {seconds:.0f} s; requests answered {answered:,} ({answered / seconds:.0f}/s)")
        print(
            f"  calls by status: {dict(sorted(tally.statuses.items()))}; malformed bodies by status: "
            f"{dict(sorted(tally.bad_statuses.items()))}; connection errors: {dict(tally.connection_errors)}"
        )
        print(
            f"  200 answers by digest: { ({named.get(d, d): n for d, n in tally.digests.items()}) }; "
            f"by decision: {dict(tally.decisions)}"
        )
        p50, p99 = lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        print(f"  latency p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, max {lat[-1] * 1000:.1f} ms")
        print(f"  slowest: {'; '.join(slow(tally, reloader, t0))}")
        print(
            f"pack changes: {sum(reloader.by_mode.values())} ({dict(reloader.by_mode)}), {reloader.flips} version "
            f"flips, {reloader.signals} SIGHUPs"
        )
        print(
            f"serve at the end: {named.get(str(final), final)} (last written: {reloader.version}), "
            f"{state.get('reloads')} reloads, {state.get('reload_failures')} failed, last error "
            f"{state.get('reload_error')}"
        )
        for line in lines:
            print(line)
        print(f"violations: {len(violations)}")
        for violation in violations:
            print(f"  - {violation}")
        if args.keep:
            print(f"kept: {root} (serve.log, decisions.jsonl, pack/)")
        elif violations:
            print(f"serve log (last lines):\n{(root / 'serve.log').read_text(errors='replace')[-3000:]}")
        return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
