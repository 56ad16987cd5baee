"""Issue 23: what a decision costs with sessions, beside a single-call decision of the same pack, in one run.

    python benchmarks/sessions.py                # the three shipped packs, 1,161 BFCL calls, 5 rounds
    python benchmarks/sessions.py --rounds 9 --pack bfcl

For each shipped pack, the BFCL calls (examples/bfcl-calls.jsonl; each record's `session` names its
BFCL task, so a session grows as the task's calls come) are decided with `evaluate_sync` on the
pack's registry, the recorded calls in order, four ways, alternated round by round:

- `no session rules`: the pack with its session.yaml left out (the pack as it was before issue 23);
- `single call`: the pack as shipped, calls without a session id (each a session of one call);
- `session (memory)`: the pack as shipped, each call with its task's session id, a MemoryStore;
- `session (sqlite)`: the same with a SqliteStore in a temporary folder.

Each pack runs twice: as shipped (a decided call is written only when a label rule labels it or a
counter selects it), and marked `*`, with every decided call written (as when a rule reads
`session.calls`): the worst case for a store.

Printed: CPU microseconds per decision (the best round's mean over the calls, after a warm-up: CPU
time, as the machine is shared and wall time drifts with its load), and the
ratios the issue sets goals for: single call / no session rules (goal: within 1.05), and each
session way / single call (goal: at most 2.0). The machine is shared: read ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # not benchmarks/: its secrets.py would shadow the standard library's

from policyengine import Registry, load_pack, pack_bundle  # noqa: E402
from policyengine.enforce.evaluate import evaluate_sync  # noqa: E402
from policyengine.sessions import MemoryStore, SqliteStore  # noqa: E402


def _without_session_rules(pack: Path, into: Path) -> Path:
    """A copy of the pack whose manifest leaves session.yaml out."""
    copy = into / pack.name
    shutil.copytree(pack, copy, dirs_exist_ok=True)
    manifest = yaml.safe_load((copy / "pack.yaml").read_text("utf-8"))
    manifest["files"] = [f for f in manifest["files"] if f != "session.yaml"]
    manifest.pop("tests", None)
    (copy / "pack.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), "utf-8")
    return copy


def _decider(pack: Path, store: Any, with_sessions: bool, write_all: bool = False) -> Callable[[dict[str, Any]], Any]:
    registry = Registry(sessions=store)
    bundle = pack_bundle(load_pack(pack))
    if write_all and bundle.session is not None:
        # As if some rule read session.calls: every decided call is written (the worst case for a store).
        bundle.session.selectors, bundle.session.lists_calls = None, True
    registry.install(bundle)

    def decide(call: dict[str, Any]) -> Any:
        session = call.get("session") if with_sessions else None
        return evaluate_sync(
            registry, call["name"], call.get("arguments"), call_id=call.get("call_id"), session_id=session
        )

    return decide


def _cpu_us(decide: Callable[[dict[str, Any]], Any], calls: list[dict[str, Any]]) -> float:
    """CPU microseconds per call over one pass (the process's CPU: other load on the machine does not count)."""
    gc.disable()
    try:
        start = time.process_time()
        for call in calls:
            decide(call)
        return (time.process_time() - start) / len(calls) * 1e6
    finally:
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    """Print the figures and ratios; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pack", action="append", help="a shipped pack's name (default: all three)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    calls = [json.loads(line) for line in (ROOT / "examples" / "bfcl-calls.jsonl").read_text("utf-8").splitlines()]
    print(f"{len(calls)} BFCL calls in {len({c.get('session') for c in calls})} sessions, {args.rounds} rounds")
    print(f"{'pack':<12} {'no session rules':>17} {'single call':>12} {'session (memory)':>17} {'session (sqlite)':>17}"
          f" {'single/none':>12} {'memory/single':>14} {'sqlite/single':>14}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for name, write_all in [
            (n, w) for n in args.pack or ["baseline", "claude-code", "bfcl"] for w in (False, True)
        ]:
            shipped = ROOT / "policies" / name
            plain = _without_session_rules(shipped, Path(tmp) / str(write_all))
            best: dict[str, float] = {}
            for round_ in range(args.rounds):
                ways = {
                    "none": _decider(plain, None, False),
                    "single": _decider(shipped, None, False),
                    "memory": _decider(shipped, MemoryStore(), True, write_all),
                    "sqlite": _decider(
                        shipped, SqliteStore(Path(tmp) / f"{name}-{write_all}-{round_}.db"), True, write_all
                    ),
                }
                for way, decide in ways.items():
                    for call in calls[:200]:  # warm-up: chains, plans and caches built
                        decide({**call, "session": f"warm-{call.get('session')}"})
                    spent = _cpu_us(decide, calls)
                    best[way] = min(best.get(way, spent), spent)
            label = f"{name}{' *' if write_all else ''}"
            print(
                f"{label:<12} {best['none']:>14.1f} us {best['single']:>9.1f} us {best['memory']:>14.1f} us"
                f" {best['sqlite']:>14.1f} us {best['single'] / best['none']:>12.2f}"
                f" {best['memory'] / best['single']:>14.2f} {best['sqlite'] / best['single']:>14.2f}"
            )
    print("* every decided call written, as when some rule reads session.calls (else only labelled calls and")
    print("  calls a counter selects are written): the worst case for a store")
    print("goals: single/none within 1.05 (a pack's session rules cost nothing without a session id);")
    print("       memory/single and sqlite/single at most 2.0 (a decision with its session, against a single call)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
