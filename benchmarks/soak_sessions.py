"""A soak of `policyengine serve` with sessions: no label and no counter increment may be lost.

    python benchmarks/soak_sessions.py --store sqlite|redis [--seconds 600] [--threads 4]
                                       [--live 64] [--steps 120] [--seed 1]

starts `python -m policyengine serve` (the real CLI) on a free port with a pack of its own (written
to a temporary folder: label rules, a rule that reads a label, payment counters), a decision log
and `--sessions` on SQLite or on a real `redis-server` it starts on a free port. N client threads
(keep-alive connections) each keep `--live` sessions going, sending one session's calls in order
(a new session replaces one that made `--steps` calls): labelling calls (`mark`, a label set by
pre-execute; `fetch`, whose result `/v1/review` labels), `send` (denied once the session holds
the label k3) and counted payments (`pay`: asked once the session's payments reach 2,000, denied
from the 40th allowed or asked payment in an hour).

Every answer is checked while it runs against the client's own tally (a lost label or increment
shows as a decision that differs), and afterwards, session by session: the labels the store's log
holds (read by a fresh store) are exactly the labels the client set, the payments it logged as
allowed or asked are exactly those the client saw allowed or asked, and the decision log holds one
decide record per call with the same decision and counts. It prints decisions/s, p50/p99 and the
losses (0 when nothing was lost) and exits 1 on any loss. Benchmarks print; the exit code says
whether the check held.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# benchmarks/secrets.py would shadow the standard library's `secrets`, which the web stack imports.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import httpx  # noqa: E402

ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from policyengine.service.decision_log import rotated_files  # noqa: E402
from policyengine.sessions.stores import open_store  # noqa: E402
from policyengine.values.session import Step  # noqa: E402

MARKS = [f"k{i}" for i in range(8)]
TAGS = [f"r{i}" for i in range(4)]
RATE = 40  # payments (allowed or asked) an hour before the next is denied
ASK_AT = 2000  # a session's payments, this call's included, from which each is asked

PACK = {
    "pack.yaml": "name: soak\nversion: 1.0.0\ndescription: the session soak's pack\ndefault: allow\n"
    "files: [rules.yaml]\n",
    "rules.yaml": json.dumps(
        {
            "rules": [
                *(
                    {"id": f"label-{k}", "stage": "pre-execute", "tools": ["mark"], "when": f"arguments.k == '{k}'",
                     "label": k}
                    for k in MARKS
                ),
                *(
                    {"id": f"label-{t}", "stage": "post-execute", "tools": ["fetch"],
                     "when": f"result.value.tag == '{t}'", "label": t}
                    for t in TAGS
                ),
                {"id": "deny-send-after-k3", "stage": "pre-execute", "tools": ["send"],
                 "when": 'session.labels."k3" != null', "decision": "deny", "reason": "k3 was set"},
                {"id": "deny-pay-rate", "stage": "pre-execute", "tools": ["pay"],
                 "when": f"session_count(session, 'pay', '1h') >= `{RATE}`", "decision": "deny",
                 "reason": "too many payments"},
                {"id": "ask-pay-sum", "stage": "pre-execute", "tools": ["pay"],
                 "when": f"sum([session_sum(session, 'pay', '24h'), arguments.amount]) >= `{ASK_AT}`",
                 "decision": "ask", "reason": "pay?"},
            ]
        },
        indent=1,
    ),
}  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Session:
    """What the client knows of one session: the labels it set, its payments allowed or asked."""

    sid: str
    labels: set[str] = field(default_factory=set)
    counted: int = 0  # payments allowed or asked
    spent: float = 0.0
    calls: int = 0
    decided: Counter[tuple[str, str]] = field(default_factory=Counter)  # (tool, decision) -> count


@dataclass
class Tally:
    """One client thread's results."""

    latencies: list[float] = field(default_factory=list)
    requests: int = 0
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    sessions: list[Session] = field(default_factory=list)


def expected_pay(session: Session, amount: float) -> str:
    if session.counted >= RATE:
        return "deny"
    return "ask" if session.spent + amount >= ASK_AT else "allow"


def client(url: str, seed: int, live: int, steps: int, stop: float, tally: Tally) -> None:
    """Keep `live` sessions going until `stop`, checking every answer against the client's own tally."""
    rng = random.Random(seed)
    http = httpx.Client(base_url=url, timeout=30)

    def post(endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        reply = http.post(f"/v1/{endpoint}", json=body)
        tally.latencies.append(time.perf_counter() - started)
        tally.requests += 1
        if reply.status_code != 200:
            raise RuntimeError(f"{endpoint}: {reply.status_code} {reply.text[:200]}")
        answer: dict[str, Any] = reply.json()
        return answer

    def fresh() -> Session:
        session = Session(f"soak-{seed}-{uuid.uuid4().hex[:12]}")
        tally.sessions.append(session)
        return session

    sessions = [fresh() for _ in range(live)]
    try:
        while time.monotonic() < stop:
            i = rng.randrange(live)
            session = sessions[i]
            if session.calls >= steps:
                session = sessions[i] = fresh()
            session.calls += 1
            roll = rng.random()
            body: dict[str, Any]
            if roll < 0.45:
                amount = rng.randrange(10, 100)
                body = {"name": "pay", "arguments": {"amount": amount}, "session_id": session.sid}
                want = expected_pay(session, amount)
            elif roll < 0.65:
                k = rng.choice(MARKS)
                body = {"name": "mark", "arguments": {"k": k}, "session_id": session.sid}
                want = "allow"
            elif roll < 0.85:
                body = {"name": "fetch", "arguments": {"url": "https://example.org/"}, "session_id": session.sid}
                want = "allow"
            else:
                body = {"name": "send", "arguments": {"to": "x"}, "session_id": session.sid}
                want = "deny" if "k3" in session.labels else "allow"
            answer = post("decide", body)
            got = answer["decision"]
            session.decided[(body["name"], got)] += 1
            if got != want:
                tally.mismatches.append(f"{session.sid} {body['name']}: expected {want}, got {answer}")
            if body["name"] == "pay" and got in ("allow", "ask"):
                session.counted += 1
                session.spent += body["arguments"]["amount"]
            elif body["name"] == "mark" and got == "allow":
                session.labels.add(body["arguments"]["k"])
            elif body["name"] == "fetch" and got == "allow":
                tag = rng.choice(TAGS)
                review = {**body, "call_id": answer["call_id"], "result": {"value": {"tag": tag}}}
                reviewed = post("review", review)
                if reviewed["post"] == "blocked":
                    tally.mismatches.append(f"{session.sid} fetch review blocked: {reviewed}")
                else:
                    session.labels.add(tag)
    except Exception as error:  # said in the figures: a soak that broke is not a soak that held
        tally.errors.append(f"{type(error).__name__}: {error}")
    finally:
        http.close()


def start_redis(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("soak_sessions: redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", ""]
    argv += ["--appendonly", "no", "--logfile", str(folder / "redis.log")]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis

    client = redis.Redis(port=port, socket_connect_timeout=1)
    for _ in range(500):
        try:
            client.ping()
            return proc, f"redis://127.0.0.1:{port}/0"
        except redis.ConnectionError:
            time.sleep(0.02)
    proc.kill()
    sys.exit(f"soak_sessions: redis-server did not start on port {port}")


WRITTEN = frozenset({("pay", "allow"), ("pay", "ask"), ("mark", "allow")})


def check(spec: str, log: Path, sessions: list[Session]) -> tuple[int, list[str]]:
    """Every session's labels and counters against the store's log and the decision log; (losses, what)."""
    problems: list[str] = []
    store = open_store(spec)  # a fresh store: it folds every entry of the log, nothing cached
    records: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in rotated_files(log):
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                if record.get("session_id"):
                    records[record["session_id"]].append(record)
    for session in sessions:
        state = store.load(session.sid)
        held = set(state.labels)
        if held != session.labels:
            problems.append(f"{session.sid}: store labels {sorted(held)} != set {sorted(session.labels)}")
        entries = store.entries(session.sid)  # type: ignore[union-attr]
        counted = sum(1 for e in entries if e.name == "pay" and e.step in (Step.ALLOW, Step.ASK))
        if counted != session.counted:
            problems.append(f"{session.sid}: store counts {counted} payments, the client saw {session.counted}")
        # The log holds the calls a rule can read later (docs/sessions.md): each allowed or asked payment (the
        # counters select it) and each mark (its label); a send, a fetch's decision and a denial are not written.
        decided = Counter((e.name, e.step.value) for e in entries if e.step is not Step.RESULT)
        written = Counter({key: n for key, n in session.decided.items() if key in WRITTEN})
        if decided != written:
            problems.append(f"{session.sid}: store decisions {dict(decided)} != answers {dict(written)}")
        logged = [r for r in records.get(session.sid, []) if "post" not in r]
        in_log = Counter((r["name"], r["decision"]) for r in logged)
        if in_log != session.decided:
            problems.append(f"{session.sid}: decision log {dict(in_log)} != answers {dict(session.decided)}")
        last = max(records.get(session.sid, []), key=lambda r: r["timestamp"], default=None)
        if last is not None and set(last.get("labels") or ()) != session.labels:
            problems.append(f"{session.sid}: last record's labels {last.get('labels')} != {sorted(session.labels)}")
    return len(problems), problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", choices=["sqlite", "redis"], default="sqlite")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--live", type=int, default=64, help="sessions each thread keeps going at once")
    parser.add_argument("--steps", type=int, default=120, help="calls a session makes before a new one replaces it")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="policyengine-soak-"))
    redis_proc = None
    server = None
    try:
        pack = folder / "pack"
        pack.mkdir()
        for name, text in PACK.items():
            (pack / name).write_text(text)
        if args.store == "redis":
            redis_proc, spec = start_redis(folder)
        else:
            spec = f"sqlite:{folder / 'sessions.sqlite3'}"
        log = folder / "decisions.jsonl"
        argv = [sys.executable, "-m", "policyengine", "serve", "--pack", str(pack), "--port", "0"]
        argv += ["--sessions", spec, "--audit", str(log), "--reload-interval", "0", "--log-level", "warning"]
        server = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        assert server.stderr is not None
        first = server.stderr.readline()
        if not first.startswith("policyengine serve: http://"):
            sys.exit(f"soak_sessions: serve did not start: {first}{server.stderr.read()}")
        url = first.split()[2]
        threading.Thread(target=lambda: sys.stderr.writelines(server.stderr or ()), daemon=True).start()
        for _ in range(500):
            try:
                if httpx.get(url + "/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.02)
        cpu = _cpu(server.pid)
        started = time.monotonic()
        stop = started + args.seconds
        tallies = [Tally() for _ in range(args.threads)]
        threads = [
            threading.Thread(target=client, args=(url, args.seed * 1000 + n, args.live, args.steps, stop, t))
            for n, t in enumerate(tallies)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        server_cpu = _cpu(server.pid) - cpu
        server.send_signal(signal.SIGTERM)  # the log is closed after every answered decision is written
        server.wait(30)
        sessions = [s for t in tallies for s in t.sessions]
        mismatches = [m for t in tallies for m in t.mismatches]
        errors = [e for t in tallies for e in t.errors]
        checked = time.monotonic()
        losses, problems = check(spec, log, sessions)
        latencies = sorted(x for t in tallies for x in t.latencies)
        requests = sum(t.requests for t in tallies)
        p50 = statistics.quantiles(latencies, n=100)[49] * 1000
        p99 = statistics.quantiles(latencies, n=100)[98] * 1000
        counted = sum(s.counted for s in sessions)
        labels = sum(len(s.labels) for s in sessions)
        print(
            f"soak_sessions --store {args.store}: {elapsed:.0f} s, {args.threads} client threads, "
            f"{len(sessions)} sessions, {requests} requests ({requests / elapsed:.0f}/s, "
            f"p50 {p50:.1f} ms, p99 {p99:.1f} ms), server CPU {server_cpu / elapsed * 100:.0f}%"
        )
        print(
            f"  checked in {time.monotonic() - checked:.1f} s: {labels} labels and {counted} counted payments "
            f"against the store's log and the decision log; losses {losses}, answers that differed from the "
            f"client's tally {len(mismatches)}, client errors {len(errors)}"
        )
        for line in (problems + mismatches + errors)[:20]:
            print("  " + line)
        return 1 if losses or mismatches or errors else 0
    finally:
        if server is not None and server.poll() is None:
            server.kill()
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait()
        if os.environ.get("SOAK_KEEP") is None:
            shutil.rmtree(folder, ignore_errors=True)


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) the process used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


if __name__ == "__main__":
    sys.exit(main())
