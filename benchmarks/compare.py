"""Issue 6 benchmarks: our Decider against cedarpy and casbin on equivalent policies, in one process.

    python benchmarks/compare.py                 # every goal, a dry-run of 100,000 calls extrapolated
    python benchmarks/compare.py --json          # the same; the LAST line is one JSON object
    python benchmarks/compare.py --full          # also dry-runs the full 1,000,000 calls (goal 5)
    python benchmarks/compare.py --dry-run-calls 0   # skip the dry-run
    python benchmarks/compare.py --ab-only       # only the before/now comparison (6 below), ~1 min
    python benchmarks/compare.py --before 5e0a289    # compare with another commit (default: before issue 12)

Optional engines (pip install cedarpy casbin): a missing one is reported as null.

What is measured (medians and p99 of per-call times, `time.perf_counter_ns` around each call,
GC disabled while timing, after a warm-up; the machine is shared, so medians, not means):

1. a decision, pre-execute + guards, for the generated 1,000-rule pack: `Decider.decide(name,
   plain arguments)` (freezing the arguments included, as cedarpy gets a plain dict too) and
   `Decider.decide_document` (a prepared, frozen call document), against cedarpy
   (`is_authorized` with a PolicySet and an Entities handle parsed once; and
   `is_authorized_batch` in batches of 1,000) and casbin (one Enforcer, keyMatch on paths) on
   the same calls; the three engines' allow/deny verdicts are cross-checked call by call.
2. the same decision with 100 and with 10,000 rules (the added rules aim at other tools).
3. `Registry.call` of a no-op async tool: with the 1,000-rule pack installed, with no pack,
   and the bare `await body(args)`; on the calls the pack allows (the tool runs).
4. `load_pack` of 10,000 rules: seconds in this (fresh) process, then memory per rule with
   tracemalloc on a second load (on the 1,000-rule pack instead when a load takes over 4 s,
   to stay within the time budget; the output says which).
5. `python -m policyengine dry-run --workers 2 --format json` as a subprocess on N calls
   against the 1,000-rule pack, wall time and CPU time (the dry-run and its workers); unless N is
   1,000,000 (--full), extrapolated: start-up (a 10,000-call run) + marginal cost per call x 1M.

Before and now, and issue 11 (red lines on argument roles), in the same run:

6. goal 1's decision and goal 3's overhead on an earlier commit (`--before`, default BEFORE: the code
   before issue 12's move into layer folders; issue 11 compared with 5e0a289), checked out in a
   temporary git worktree, and on this code, each in a fresh child process that imports its own
   tree, alternated `--pairs` times on the same pack and calls (best median of each); both ratios
   must stay within 1.05 (issue 12; issue 11 allowed the decision 1.10). The child imports this
   module against either layout: the internal modules it needs are chosen by the layout of the
   package imported (`LAYERED`), the rest comes from the public API, which both layouts share.
7. the rewritten `policies/baseline` pack on the 1,161 BFCL calls (`Decider.decide`, us per call).
8. secret scanning (`policyengine.arguments.secret_scanner.find_secrets`) in us per KB of argument text: the BFCL
   call arguments, and a synthetic document full of credentials and prose.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gc
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate
from generate import Spec

import policyengine
from policyengine import Allow, Ask, Deny, FrozenDict, Registry, define_tool, freeze, load_pack, pack_bundle

cedarpy: Any
casbin: Any
try:
    import cedarpy
except ImportError:  # optional benchmark dependency
    cedarpy = None
try:
    import casbin as _casbin  # type: ignore[import-untyped]  # no stubs or py.typed
    from casbin import model as casbin_model

    casbin = _casbin
except ImportError:  # optional benchmark dependency
    casbin = None

# The package imported has its modules in layer folders (issue 12: policyengine/enforce/decider.py) or
# flat (before it: policyengine/decider.py). The before/now children import this module against either,
# so the internal modules below are picked by the layout, not by trying one and catching ImportError.
LAYERED = (Path(policyengine.__file__).parent / "enforce").is_dir()


def internal(layered: str, flat: str) -> ModuleType:
    """An internal module of the imported package: `policyengine.<layered>` or `policyengine.<flat>`."""
    return import_module(f"policyengine.{layered if LAYERED else flat}")


if TYPE_CHECKING:
    from policyengine.enforce.decider import Decider
else:
    Decider = internal("enforce.decider", "decider").Decider

GOALS = {
    "decision_median_us": 5.0,
    "speedup_vs_cedarpy": 30.0,
    "scaling_ratio": 2.0,
    "pipeline_overhead_us": 25.0,
    "compile_10k_s": 2.0,
    "dry_run_1m_s": 15.0,
}

Call = dict[str, Any]
LOG = sys.stderr

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
# main before issue 12 (layer folders, stage objects): both A/B figures must stay within 5% of it.
# Issue 11 compared with 5e0a289 (main before issue 11; decision within 10%): `--before 5e0a289`.
BEFORE = "0909a31"
AB_LIMIT = 1.05
# Issue 22 (red lines round three: the shell words, patterns and operand tables) may cost a policies/bfcl
# decision at most 15% more CPU than the code before it (`--before e335290`).
BFCL_AB_LIMIT = 1.15


def say(text: str = "") -> None:
    """Progress and tables go to stdout unless --json, where only the last line matters."""
    print(text, file=LOG, flush=True)


# -- timing ------------------------------------------------------------------------------------


def timed(fn: Callable[[Any], Any], items: Sequence[Any], *, rounds: int, budget: float) -> list[float]:
    """Per-call microseconds of fn(item), over `rounds` passes or until `budget` seconds pass."""
    out: list[float] = []
    clock = time.perf_counter_ns
    deadline = time.perf_counter() + budget
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for item in items:
                t0 = clock()
                fn(item)
                out.append((clock() - t0) / 1000)
                if len(out) % 64 == 0 and time.perf_counter() > deadline:
                    return out
    finally:
        if enabled:
            gc.enable()
    return out


def stats(samples: Sequence[float]) -> dict[str, float | int] | None:
    """Median, p99 and count of microsecond samples."""
    if not samples:
        return None
    ordered = sorted(samples)

    def pct(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 3)

    median = round(statistics.median(ordered), 3)
    return {"median_us": median, "p95_us": pct(0.95), "p99_us": pct(0.99), "n": len(ordered)}


def timer_overhead_us() -> float:
    """The median cost of the timing itself (two perf_counter_ns calls), included in every sample."""
    return stats(timed(lambda _x: None, range(20_000), rounds=1, budget=5))["median_us"]  # type: ignore[index]


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def fmt(value: float | None, unit: str = "us") -> str:
    if value is None:
        return "n/a"
    return f"{value:,.2f} {unit}" if value < 100 else f"{value:,.0f} {unit}"


# -- our engine --------------------------------------------------------------------------------


def verdict(decision: Any) -> str:
    return "deny" if isinstance(decision, Deny) else "ask" if isinstance(decision, Ask) else "allow"


def bench_ours(decider: Decider, calls: Sequence[Call], rounds: int, budget: float) -> dict[str, Any]:
    """decide() with plain arguments, and decide_document() with prepared documents."""
    items = [(c["name"], c["arguments"], c["agent"], c["call_id"]) for c in calls]
    docs = [
        (
            c["name"],
            FrozenDict(name=c["name"], arguments=freeze(c["arguments"]), agent=c["agent"], call_id=c["call_id"]),
        )
        for c in calls
    ]
    decide, decide_document = decider.decide, decider.decide_document

    def one(item: tuple[str, dict[str, Any], str, str]) -> Any:
        return decide(item[0], item[1], agent=item[2], call_id=item[3])

    def doc(item: tuple[str, FrozenDict]) -> Any:
        return decide_document(item[0], item[1])

    timed(one, items, rounds=1, budget=budget)  # warm-up: per-tool indexes, pattern caches
    full = timed(one, items, rounds=rounds, budget=budget)
    prepared = timed(doc, docs, rounds=rounds, budget=budget)
    return {"decide": stats(full), "decide_document": stats(prepared)}


# -- cedarpy -----------------------------------------------------------------------------------


def _cedar_str(text: str) -> str:
    return json.dumps(text)  # Cedar string literals use the same escapes as JSON here


def _like(text: str) -> str:
    assert '"' not in text and "\\" not in text
    return f'"{text}"'  # in a Cedar `like` pattern, `*` is the wildcard


def cedar_condition(spec: Spec) -> str:
    """The Cedar condition equivalent to the rule's JMESPath one, on the calls we generate.

    path_within(p, [d]) -> p == d or p like "d/*"; starts_with -> like "prefix*"; a
    path_matches glob without `/` matches any whole component: p like "g", "g/*", "*/g" or
    "*/g/*" (Cedar's `*` also crosses `/`, and Cedar does not normalise paths, so the two only
    agree on clean paths like the generated ones; the run cross-checks every verdict).
    """
    p = "context.path"
    if spec.kind == "path_within":
        return " || ".join(f"{p} == {_cedar_str(d)} || {p} like {_like(d + '/*')}" for d in spec.values)
    if spec.kind == "path_matches":
        parts = []
        for g in spec.values:
            assert "/" not in g
            parts += [f"{p} like {_like(v)}" for v in (g, f"{g}/*", f"*/{g}", f"*/{g}/*")]
        return " || ".join(parts)
    if spec.kind == "starts_with":
        return f"{p} like {_like(spec.values[0] + '*')}"
    if spec.kind == "owner_eq":
        return f"context.owner == {_cedar_str(spec.values[0])}"
    raise ValueError(spec.kind)


def cedar_policies(specs: Sequence[Spec]) -> str:
    """One forbid per deny, ask and guard rule, plus `permit` for the pack's default allow.

    Cedar has no `ask`: an ask rule is a forbid annotated @decision("ask") (it is not an allow).
    """
    out = ["permit(principal, action, resource);"]
    for s in specs:
        if s.tools == ("*",):
            action = "action"
        elif len(s.tools) == 1:
            action = f"action == Action::{_cedar_str(s.tools[0])}"
        else:
            action = "action in [" + ", ".join(f"Action::{_cedar_str(t)}" for t in s.tools) + "]"
        out.append(
            f'@id({_cedar_str(s.id)})\n@decision("{s.decision}")\n'
            f"forbid(principal, {action}, resource) when {{ {cedar_condition(s)} }};"
        )
    return "\n".join(out) + "\n"


def cedar_request(call: Call) -> dict[str, Any]:
    return {
        "principal": f"Agent::{_cedar_str(call['agent'])}",
        "action": f"Action::{_cedar_str(call['name'])}",
        "resource": f"Tool::{_cedar_str(call['name'])}",
        "context": call["arguments"],
    }


def bench_cedar(specs: Sequence[Spec], calls: Sequence[Call], rounds: int, budget: float) -> dict[str, Any] | None:
    if cedarpy is None:
        return None
    t0 = time.perf_counter()
    policies = cedarpy.PolicySet.from_str(cedar_policies(specs))
    entities = cedarpy.Entities.from_json_str("[]")
    parse_s = time.perf_counter() - t0
    requests = [cedar_request(c) for c in calls]
    is_authorized = cedarpy.is_authorized

    def one(request: dict[str, Any]) -> Any:
        return is_authorized(request, policies, entities)

    first = one(requests[0])
    if first.diagnostics.errors:
        raise RuntimeError(f"cedar evaluation errors: {first.diagnostics.errors}")
    timed(one, requests[:200], rounds=1, budget=budget / 4)
    single = timed(one, requests, rounds=rounds, budget=budget)
    batch_size = 1000
    batches = [requests[i : i + batch_size] for i in range(0, len(requests), batch_size)]
    batch_samples: list[float] = []
    deadline = time.perf_counter() + budget
    for _ in range(rounds):
        for chunk in batches:
            t = time.perf_counter_ns()
            cedarpy.is_authorized_batch(chunk, policies, entities)
            batch_samples.append((time.perf_counter_ns() - t) / 1000 / len(chunk))
        if time.perf_counter() > deadline:
            break
    return {
        "single": stats(single),
        "batch_per_call": stats(batch_samples),
        "policy_parse_s": round(parse_s, 3),
        "verdicts": lambda cs: ["allow" if one(cedar_request(c)).allowed else "deny" for c in cs],
    }


# -- casbin ------------------------------------------------------------------------------------

CASBIN_MODEL = """
[request_definition]
r = act, path, owner

[policy_definition]
p = act, kind, pat, eft

[policy_effect]
e = !some(where (p.eft == deny))

[matchers]
m = (p.act == "*" || r.act == p.act) && ((p.kind == "key" && keyMatch(r.path, p.pat)) \
|| (p.kind == "re" && regexMatch(r.path, p.pat)) || (p.kind == "owner" && r.owner == p.pat))
"""


def _glob_component_regex(glob: str) -> str:
    body = "".join("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re_escape(ch) for ch in glob)
    return f"^(.*/)?{body}(/.*)?$"


def re_escape(ch: str) -> str:
    import re

    return re.escape(ch)


def casbin_lines(specs: Sequence[Spec]) -> list[list[str]]:
    """Policy lines equivalent to the rules: keyMatch for directories and prefixes, a regex for
    component globs, equality for owners. Every line denies (casbin has no ask); no line allows,
    so the effect `!some(where (p.eft == deny))` is the pack's default allow."""
    lines: list[list[str]] = []
    for s in specs:
        for tool in s.tools:
            if s.kind == "path_within":
                for d in s.values:
                    lines += [[tool, "key", d, "deny"], [tool, "key", d + "/*", "deny"]]
            elif s.kind == "starts_with":
                lines.append([tool, "key", s.values[0] + "*", "deny"])
            elif s.kind == "path_matches":
                lines += [[tool, "re", _glob_component_regex(g), "deny"] for g in s.values]
            elif s.kind == "owner_eq":
                lines.append([tool, "owner", s.values[0], "deny"])
    return lines


def bench_casbin(specs: Sequence[Spec], calls: Sequence[Call], rounds: int, budget: float) -> dict[str, Any] | None:
    if casbin is None:
        return None
    m = casbin_model.Model()
    m.load_model_from_text(CASBIN_MODEL)
    enforcer = casbin.Enforcer(m)
    lines = casbin_lines(specs)
    enforcer.add_policies(lines)
    enforce = enforcer.enforce
    items = [(c["name"], c["arguments"]["path"], c["arguments"]["owner"]) for c in calls]

    def one(item: tuple[str, str, str]) -> Any:
        return enforce(*item)

    timed(one, items[:50], rounds=1, budget=budget / 4)
    samples = timed(one, items, rounds=rounds, budget=budget)
    return {
        "single": stats(samples),
        "policy_lines": len(lines),
        "verdicts": lambda cs: [
            "allow" if enforce(c["name"], c["arguments"]["path"], c["arguments"]["owner"]) else "deny" for c in cs
        ],
    }


# -- goal 3: the whole pipeline ----------------------------------------------------------------

PARAMETERS = {
    "path": {"type": "string", "required": True, "description": "A file path."},
    "owner": {"type": "string", "required": True, "description": "Who owns the data."},
    "content": {"type": "string", "description": "What to write."},
}


async def _noop(args: Any) -> str:
    return "ok"


def _registry(pack: Any | None) -> Registry:
    registry = Registry()
    for i in range(generate.HOT_TOOLS):
        registry.register(
            define_tool(
                name=generate.tool_name(i),
                description="A no-op tool for the benchmark.",
                parameters=PARAMETERS,
                execute=_noop,
            )
        )
    if pack is not None:
        registry.install(pack_bundle(pack))
    return registry


def bench_pipeline(pack: Any, calls: Sequence[Call], rounds: int, budget: float) -> dict[str, Any]:
    with_pack, without = _registry(pack), _registry(None)
    items = [(c["name"], c["arguments"], c["agent"], c["call_id"]) for c in calls]
    samples: dict[str, list[float]] = {"with_pack": [], "no_pack": [], "body": []}

    async def run(registry: Registry | None, out: list[float], n_rounds: int) -> None:
        clock = time.perf_counter_ns
        deadline = time.perf_counter() + budget / 3
        for _ in range(n_rounds):
            for name, args, agent, call_id in items:
                t0 = clock()
                if registry is None:
                    await _noop(args)
                else:
                    result = await registry.call(name, args, agent=agent, call_id=call_id)
                out.append((clock() - t0) / 1000)
                if registry is not None and result.outcome.value != "ok":
                    raise RuntimeError(f"{name} {args}: {result.outcome.value} {result.reason}")
            if time.perf_counter() > deadline:
                return

    async def main() -> None:
        await run(with_pack, [], 1)  # warm-up
        await run(without, [], 1)
        gc.disable()
        deadline = time.perf_counter() + budget
        try:
            for _ in range(rounds):  # interleaved, so drift on a shared machine hits both sides
                if time.perf_counter() > deadline:
                    break
                await run(with_pack, samples["with_pack"], 1)
                await run(without, samples["no_pack"], 1)
                await run(None, samples["body"], 1)
        finally:
            gc.enable()

    asyncio.run(main())
    s = {k: stats(v) for k, v in samples.items()}
    med: dict[str, float] = {k: v["median_us"] for k, v in s.items() if v}
    return {
        **s,
        "overhead_vs_body_us": _difference(med, "with_pack", "body"),
        "overhead_vs_no_pack_us": _difference(med, "with_pack", "no_pack"),
        "calls": len(items),
    }


# -- goal 4: compiling -------------------------------------------------------------------------


def time_load(folder: Path) -> tuple[Any, float]:
    t0 = time.perf_counter()
    pack = load_pack(folder)
    return pack, time.perf_counter() - t0


def memory_per_rule(folder: Path, n_rules: int) -> dict[str, Any]:
    """Memory the loaded pack keeps (tracemalloc, after GC) and the peak while loading."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        t0 = time.perf_counter()
        pack = load_pack(folder)
        seconds = time.perf_counter() - t0
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(pack.rules) == n_rules
    del pack
    return {
        "rules": n_rules,
        "retained_mb": round((current - before) / 1e6, 2),
        "peak_mb": round((peak - before) / 1e6, 2),
        "bytes_per_rule": round((current - before) / n_rules),
        "seconds_under_tracemalloc": round(seconds, 2),
    }


# -- goal 5: the dry-run -----------------------------------------------------------------------


def dry_run(pack: Path, calls_file: Path, workers: int) -> tuple[float, dict[str, Any]]:
    # Records are written, as a real dry-run writes them (to a file next to the calls, removed after).
    records = calls_file.with_suffix(".records.jsonl")
    cmd = [sys.executable, "-m", "policyengine", "dry-run", "--pack", str(pack), "--workers", str(workers)]
    cmd += ["--format", "json", "--color", "never", "--output", str(records), str(calls_file)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the dry-run and its pool workers
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"dry-run exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    summary = json.loads(proc.stdout)
    written = sum(1 for _line in records.open("rb"))
    records.unlink()
    if written != summary.get("calls"):
        raise RuntimeError(f"dry-run wrote {written} records for {summary.get('calls')} calls")
    return wall, {"calls": summary.get("calls"), "decisions": summary.get("decisions"), "cpu_s": cpu}


def bench_dry_run(data: Path, pack: Path, n: int, workers: int) -> dict[str, Any]:
    # Start-up (imports, loading the pack in the parent and in each pool worker, the pool): a run of
    # 10,000 calls (five chunks, so the pool is used); the marginal cost per call comes from the difference.
    small_n = max(1, min(10_000, n // 2))
    small = generate.write_calls(data / f"calls-{small_n}.jsonl", small_n)
    big = data / f"calls-{n}.jsonl"
    if not big.exists() or sum(1 for _ in big.open("rb")) != n:
        t0 = time.perf_counter()
        generate.write_calls(big, n)
        say(f"  wrote {n:,} calls in {time.perf_counter() - t0:.1f} s")
    small_wall, small_summary = dry_run(pack, small, workers)
    wall, summary = dry_run(pack, big, workers)
    if summary["calls"] != n:
        raise RuntimeError(f"dry-run reported {summary['calls']} calls, expected {n}")
    margin = max(n - small_n, 1)
    per_call = max(wall - small_wall, 0.0) / margin
    million = 1_000_000
    return {
        "calls": n,
        "workers": workers,
        "wall_s": round(wall, 2),
        "calls_per_s": round(n / wall),
        "startup_s": round(small_wall, 2),
        "cpu_s": round(summary["cpu_s"], 1),  # user + system of the dry-run and its workers
        "cpu_per_call_us": round((summary["cpu_s"] - small_summary["cpu_s"]) / margin * 1e6, 1),
        "decisions": summary["decisions"],
        "measured_1m": n == million,
        "estimate_1m_s": round(wall if n == million else small_wall + per_call * (million - small_n), 1),
        "linear_1m_s": round(wall * million / n, 1),
    }


# -- main --------------------------------------------------------------------------------------


def _arguments(call: Mapping[str, object]) -> Mapping[str, Any]:
    """A generated call's arguments (an object, as generate.py writes them)."""
    arguments = call["arguments"]
    assert isinstance(arguments, Mapping)
    return arguments


def _difference(medians: dict[str, float], a: str, b: str) -> float | None:
    """medians[a] - medians[b], rounded; None when either side has no samples."""
    return round(medians[a] - medians[b], 3) if a in medians and b in medians else None


def agreement(ours: Decider, engines: dict[str, Any], calls: Sequence[Call]) -> dict[str, Any]:
    """Allow vs not-allow, call by call: ours (ask counts as not allowed) against each engine."""
    mine = ["allow" if verdict(ours.decide(c["name"], c["arguments"])) == "allow" else "deny" for c in calls]
    out: dict[str, Any] = {"calls": len(calls), "ours_denied_or_asked": mine.count("deny")}
    for name, result in engines.items():
        if result is None:
            out[name] = None
            continue
        try:
            theirs = result.pop("verdicts")(calls)
        except Exception as error:  # an optional engine failing must not lose the other figures
            out[name] = {"error": f"{type(error).__name__}: {error}"}
            continue
        diff = [i for i, (a, b) in enumerate(zip(mine, theirs, strict=True)) if a != b]
        out[name] = {"disagree": len(diff), "examples": [calls[i] for i in diff[:3]]}
    return out


# -- before and now ------------------------------------------------------------------------------


def _child_figures(tree: Path, pack_dir: Path, n_calls: int, rounds: int, budget: float) -> dict[str, Any]:
    """Goal 1's decision and goal 3's overhead, timed in a child process that imports the package of `tree`."""
    # Everything the child needs comes through `compare`, whose imports follow the child's package layout.
    code = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(BENCH)!r})
        import compare, generate, policyengine
        pack = compare.load_pack({str(pack_dir)!r})
        decider = compare.Decider([pack])
        calls = list(generate.calls({n_calls}))
        result = compare.bench_ours(decider, calls, {rounds}, {budget})
        allowed = [c for c in calls if isinstance(decider.decide(c["name"], c["arguments"]), compare.Allow)]
        result["pipeline"] = compare.bench_pipeline(pack, allowed[:2000], {rounds}, {budget} * 3)
        # policies/bfcl of the child's own tree (its rules as they were then) on the BFCL calls.
        result["bfcl"] = compare.bench_pack_on_bfcl(compare.Path.cwd() / "policies" / "bfcl", {rounds}, {budget})
        result["package"] = policyengine.__file__
        result["layered"] = compare.LAYERED
        print(json.dumps(result))
        """
    )
    # The child runs in `tree`, so `import policyengine` finds that tree's package before any install.
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not str(result["package"]).startswith(str(tree)):
        raise RuntimeError(f"the child imported {result['package']}, not the package of {tree}")
    return result


def before_and_now(ref: str, pack_dir: Path, n_calls: int, rounds: int, budget: float, pairs: int = 2) -> Any:
    """The code of `ref` and this code, each in a fresh child, alternated `pairs` times: the best median of each."""
    scratch = Path(tempfile.mkdtemp(prefix="policyengine-before-"))
    tree = scratch / "tree"
    added = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], capture_output=True, text=True
    )
    if added.returncode:
        shutil.rmtree(scratch, ignore_errors=True)
        raise RuntimeError(f"git worktree add {ref}: {added.stderr.strip()}")
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "now": []}
    try:
        for i in range(pairs):
            for side, root in (("before", tree), ("now", ROOT)):
                r = _child_figures(root, pack_dir, n_calls, rounds, budget)
                runs[side].append(r)
                layout = "layer folders" if r["layered"] else "flat"
                say(
                    f"  pair {i + 1}, {side:<6} ({layout}): decide median {fmt(r['decide']['median_us'])}, "
                    f"Registry.call overhead {fmt(r['pipeline']['overhead_vs_body_us'])} "
                    f"(no pack: {fmt(r['pipeline']['no_pack']['median_us'] - r['pipeline']['body']['median_us'])}), "
                    f"policies/bfcl decide median {fmt(r['bfcl']['decide']['median_us'])}"
                )
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        side: {
            "decide_median_us": min(r["decide"]["median_us"] for r in results),
            "decide_medians_us": [r["decide"]["median_us"] for r in results],
            "pipeline_overhead_us": min(r["pipeline"]["overhead_vs_body_us"] for r in results),
            "pipeline_overheads_us": [r["pipeline"]["overhead_vs_body_us"] for r in results],
            # the same without a pack: separates the pipeline's own share from the pack stages'
            "no_pack_overheads_us": [
                round(r["pipeline"]["no_pack"]["median_us"] - r["pipeline"]["body"]["median_us"], 3) for r in results
            ],
            "layered": [r["layered"] for r in results],
            "bfcl_decide_median_us": min(r["bfcl"]["decide"]["median_us"] for r in results),
            "bfcl_decide_medians_us": [r["bfcl"]["decide"]["median_us"] for r in results],
            "bfcl_verdicts": results[-1]["bfcl"]["verdicts"],
        }
        for side, results in runs.items()
    }


def bfcl_calls() -> list[Call]:
    """The bundled BFCL sample calls."""
    with open(ROOT / "examples" / "bfcl-calls.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def bench_baseline_on_bfcl(rounds: int, budget: float) -> dict[str, Any]:
    """The rewritten baseline pack deciding every BFCL call (plain arguments, frozen per call)."""
    return bench_pack_on_bfcl(ROOT / "policies" / "baseline", rounds, budget)


def bench_pack_on_bfcl(pack_dir: Path, rounds: int, budget: float) -> dict[str, Any]:
    """A shipped pack deciding every BFCL call (plain arguments, frozen per call)."""
    decider = Decider([load_pack(pack_dir)])
    items = [(c["name"], c["arguments"]) for c in bfcl_calls()]

    def one(item: tuple[str, dict[str, Any]]) -> Any:
        return decider.decide(item[0], item[1])

    timed(one, items, rounds=1, budget=budget)  # warm-up: chains, pattern caches, the shell parser
    verdicts: dict[str, int] = {}
    for name, arguments in items:
        key = verdict(decider.decide(name, arguments))
        verdicts[key] = verdicts.get(key, 0) + 1
    return {"decide": stats(timed(one, items, rounds=rounds, budget=budget)), "verdicts": verdicts}


SYNTHETIC_SECRETS = {
    "note": "My password is not working, please help me reset it before the meeting on Tuesday.",
    "config": '{"db": {"user": "app", "password": "hunter2hunter2"}, '
    '"aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}',
    "env": "ACCESS_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\nDEBUG=1",
    "headers": [["Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJl"]],
    "card": "4111 1111 1111 1111",
    "prose": "The quarterly report covers revenue, churn and the hiring plan for the next two quarters. " * 8,
}


def bench_secrets(rounds: int, budget: float) -> dict[str, Any]:
    """find_secrets in us per KB of argument text (JSON-encoded size), on BFCL and on a synthetic document."""
    find_secrets = internal("language.secret_scanner", "secrets").find_secrets

    result: dict[str, Any] = {}
    for label, documents in (("bfcl", [c["arguments"] for c in bfcl_calls()]), ("synthetic", [SYNTHETIC_SECRETS])):
        kb = sum(len(json.dumps(d, ensure_ascii=False).encode()) for d in documents) / 1024
        frozen = [freeze(d) for d in documents]

        def scan_all(_item: Any, frozen: list[Any] = frozen) -> Any:
            return [find_secrets(d) for d in frozen]

        samples = timed(scan_all, [None], rounds=max(rounds, 20), budget=budget)
        median = statistics.median(samples)
        result[label] = {
            "documents": len(documents),
            "kb": round(kb, 1),
            "us_per_kb": round(median / kb, 2),
            "findings": sum(len(found) for found in scan_all(None)),
        }
    return result


def safely(label: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as error:  # an optional engine failing must not lose the other figures
        say(f"  {label} failed: {type(error).__name__}: {error}")
        return None


def goal(value: float | None, limit: float, higher_is_better: bool = False) -> dict[str, Any]:
    """Met or missed; `off_by` is how many times worse than the goal (above 1: missed by that factor)."""
    if value is None:
        return {"value": None, "goal": limit, "met": None, "off_by": None}
    met = value >= limit if higher_is_better else value <= limit
    off = (limit / value if value else None) if higher_is_better else value / limit
    return {"value": value, "goal": limit, "met": met, "off_by": round(off, 2) if off is not None else None}


def run_before_and_now(ref: str, pack_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Run the before/now comparison and print each figure beside its reference; the JSON section."""
    say(f"before/now: the code at {ref} and this code, fresh child processes alternated, best of {args.pairs}")
    ab = safely("before/now", lambda: before_and_now(ref, pack_dir, args.calls, args.rounds, args.budget, args.pairs))
    b_med = ab["before"]["decide_median_us"] if ab else None
    n_med = ab["now"]["decide_median_us"] if ab else None
    b_pipe = ab["before"]["pipeline_overhead_us"] if ab else None
    n_pipe = ab["now"]["pipeline_overhead_us"] if ab else None
    b_bfcl = ab["before"]["bfcl_decide_median_us"] if ab else None
    n_bfcl = ab["now"]["bfcl_decide_median_us"] if ab else None
    if ab:
        say(
            f"  decide median: before {fmt(b_med)} {ab['before']['decide_medians_us']}, "
            f"now {fmt(n_med)} {ab['now']['decide_medians_us']}; now / before: {ratio(n_med, b_med)} "
            f"(goal <= {AB_LIMIT})"
        )
        say(
            f"  Registry.call overhead (goal 3): before {fmt(b_pipe)} {ab['before']['pipeline_overheads_us']}, "
            f"now {fmt(n_pipe)} {ab['now']['pipeline_overheads_us']}; now / before: {ratio(n_pipe, b_pipe)} "
            f"(goal <= {AB_LIMIT})"
        )
        say(
            f"  policies/bfcl decide median on the BFCL calls: before {fmt(b_bfcl)} "
            f"{ab['before']['bfcl_decide_medians_us']}, now {fmt(n_bfcl)} {ab['now']['bfcl_decide_medians_us']}; "
            f"now / before: {ratio(n_bfcl, b_bfcl)} (goal <= {BFCL_AB_LIMIT}); verdicts before "
            f"{ab['before']['bfcl_verdicts']}, now {ab['now']['bfcl_verdicts']}"
        )
    return {
        "before_ref": ref,
        "pairs": args.pairs,
        "before_decide_median_us": b_med,
        "now_decide_median_us": n_med,
        "now_over_before": ratio(n_med, b_med),
        "before_pipeline_overhead_us": b_pipe,
        "now_pipeline_overhead_us": n_pipe,
        "pipeline_now_over_before": ratio(n_pipe, b_pipe),
        "before_bfcl_decide_median_us": b_bfcl,
        "now_bfcl_decide_median_us": n_bfcl,
        "bfcl_now_over_before": ratio(n_bfcl, b_bfcl),
        "runs": ab,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Issue 6 benchmarks (see the module docstring).")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    parser.add_argument("--calls", type=int, default=4000, help="distinct calls for in-process timings")
    parser.add_argument("--rounds", type=int, default=5, help="passes over the calls (fast engines)")
    parser.add_argument("--budget", type=float, default=8.0, help="max seconds per timed series")
    parser.add_argument(
        "--dry-run-calls",
        type=int,
        default=100_000,
        metavar="N",
        help="calls for goal 5 (0 skips it; the 1M estimate needs >= 100,000)",
    )
    parser.add_argument("--full", action="store_true", help="dry-run the full 1,000,000 calls")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=generate.default_out(), help="where packs and calls go")
    parser.add_argument(
        "--before", default=BEFORE, metavar="REF", help="the commit the before/now comparison measures (%(default)s)"
    )
    parser.add_argument("--pairs", type=int, default=2, help="before/now child pairs, alternated (%(default)s)")
    parser.add_argument("--ab-only", action="store_true", help="run only the before/now comparison")
    args = parser.parse_args()
    global LOG
    LOG = sys.stderr if args.json else sys.stdout
    started = time.perf_counter()
    data: Path = args.data
    if args.ab_only:
        say(
            f"policyengine before/now, {datetime.date.today()}, Python {platform.python_version()}, "
            f"{os.cpu_count()} cores (shared machine: figures vary run to run)"
        )
        ab_only = run_before_and_now(args.before, generate.write_pack(data / "pack-1000", 1000), args)
        goals = {
            "ab_decision_now_over_before": goal(ab_only["now_over_before"], AB_LIMIT),
            "ab_pipeline_now_over_before": goal(ab_only["pipeline_now_over_before"], AB_LIMIT),
            "ab_bfcl_now_over_before": goal(ab_only["bfcl_now_over_before"], BFCL_AB_LIMIT),
        }
        elapsed = time.perf_counter() - started
        say(f"\ntotal {elapsed:.0f} s")
        if args.json:
            print(json.dumps({"date": datetime.date.today().isoformat(), "before_and_now": ab_only, "goals": goals}))
        return
    sizes = (100, 1000, 10_000)
    packs = {n: generate.write_pack(data / f"pack-{n}", n) for n in sizes}
    calls = list(generate.calls(args.calls))
    say(
        f"policyengine benchmarks, {datetime.date.today()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} cores (shared machine: figures vary run to run)"
    )
    overhead = timer_overhead_us()
    say(f"timer overhead included in every sample: {overhead:.3f} us\n")

    # Goal 4 first, while nothing has been compiled in this process.
    say("goal 4: compiling")
    big, load_10k = time_load(packs[10_000])
    say(f"  load_pack(10,000 rules): {load_10k:.2f} s ({load_10k / 10_000 * 1e6:.0f} us per rule)")
    loaded = {10_000: big}
    load_s = {10_000: round(load_10k, 3)}
    for n in (1000, 100):
        loaded[n], seconds = time_load(packs[n])
        load_s[n] = round(seconds, 3)
        say(f"  load_pack({n:,} rules): {seconds:.2f} s")
    deciders = {n: Decider([p]) for n, p in loaded.items()}

    say("\ngoal 1: one decision, 1,000-rule pack")
    ours = bench_ours(deciders[1000], calls, args.rounds, args.budget)
    specs = generate.specs(1000)
    cedar = safely("cedarpy", lambda: bench_cedar(specs, calls, args.rounds, args.budget))
    cas = safely("casbin", lambda: bench_casbin(specs, calls, args.rounds, args.budget))
    check = agreement(deciders[1000], {"cedarpy": cedar, "casbin": cas}, calls[:500])
    o_med = ours["decide"]["median_us"]
    c_med = cedar["single"]["median_us"] if cedar else None
    cb_med = cedar["batch_per_call"]["median_us"] if cedar else None
    k_med = cas["single"]["median_us"] if cas else None
    rows = [
        ("ours: decide(name, arguments)", ours["decide"]),
        ("ours: decide_document(prepared doc)", ours["decide_document"]),
        ("cedarpy: is_authorized, reused PolicySet", cedar["single"] if cedar else None),
        ("cedarpy: is_authorized_batch of 1,000, per call", cedar["batch_per_call"] if cedar else None),
        ("casbin: enforce", cas["single"] if cas else None),
    ]
    for label, s in rows:
        if s is None:
            say(f"  {label:<50} n/a")
        else:
            say(
                f"  {label:<50} median {fmt(s['median_us']):>10}  p95 {fmt(s['p95_us']):>10}  "
                f"p99 {fmt(s['p99_us']):>10}  x{ratio(s['median_us'], o_med) or 0:>8,.1f} ours  (n={s['n']:,})"
            )
    say(
        f"  verdicts cross-checked on {check['calls']} calls (ours denied or asked {check['ours_denied_or_asked']}): "
        + ", ".join(
            f"{k} disagrees on {v['disagree']}" if v and "disagree" in v else f"{k} n/a"
            for k, v in check.items()
            if k in ("cedarpy", "casbin")
        )
    )

    say("\ngoal 1 reference: the same engines on the 100-rule pack")
    specs100 = generate.specs(100)
    ref_budget = args.budget / 2
    ours100 = bench_ours(deciders[100], calls, args.rounds, ref_budget)
    cedar100 = safely("cedarpy", lambda: bench_cedar(specs100, calls, args.rounds, ref_budget))
    cas100 = safely("casbin", lambda: bench_casbin(specs100, calls, args.rounds, ref_budget))
    for r in (cedar100, cas100):
        if r:
            r.pop("verdicts", None)
    ref = {
        "ours_median_us": ours100["decide"]["median_us"],
        "cedarpy_median_us": cedar100["single"]["median_us"] if cedar100 else None,
        "cedarpy_batch_median_us": cedar100["batch_per_call"]["median_us"] if cedar100 else None,
        "casbin_median_us": cas100["single"]["median_us"] if cas100 else None,
    }
    say("  " + ", ".join(f"{k.removesuffix('_median_us')} {fmt(v)}" for k, v in ref.items()))

    say("\ngoal 2: 100 vs 10,000 rules (the added rules aim at other tools)")
    scale: dict[int, Any] = {}
    for n in (100, 10_000, 1000):
        scale[n] = bench_ours(deciders[n], calls, args.rounds, args.budget / 2)
        say(
            f"  {n:>6,} rules: decide median {fmt(scale[n]['decide']['median_us'])}, "
            f"p99 {fmt(scale[n]['decide']['p99_us'])}; decide_document {fmt(scale[n]['decide_document']['median_us'])}"
        )
    scaling = ratio(scale[10_000]["decide"]["median_us"], scale[100]["decide"]["median_us"])
    scale_medians = {
        str(n): {
            "decide_median_us": s["decide"]["median_us"],
            "decide_p99_us": s["decide"]["p99_us"],
            "decide_document_median_us": s["decide_document"]["median_us"],
        }
        for n, s in sorted(scale.items())
    }
    say(f"  ratio 10,000 / 100: {scaling}")

    say("\ngoal 3: Registry.call of a no-op async tool, on the calls the pack allows")
    allowed = [c for c in calls if isinstance(deciders[1000].decide(str(c["name"]), _arguments(c)), Allow)]
    pipe = bench_pipeline(loaded[1000], allowed[:2000], args.rounds, args.budget * 3)
    for k in ("with_pack", "no_pack", "body"):
        say(f"  {k:<10} median {fmt(pipe[k]['median_us'])}, p99 {fmt(pipe[k]['p99_us'])} (n={pipe[k]['n']:,})")
    say(
        f"  overhead over the bare no-op body: {fmt(pipe['overhead_vs_body_us'])}; "
        f"the pack's share (with pack - no pack): {fmt(pipe['overhead_vs_no_pack_us'])}"
    )

    say("\ngoal 5: dry-run against the 1,000-rule pack")
    n_dry = 1_000_000 if args.full else args.dry_run_calls
    dry = None
    if n_dry > 0:
        dry = safely("dry-run", lambda: bench_dry_run(data, packs[1000], n_dry, args.workers))
        if dry:
            est = "measured" if dry["measured_1m"] else "estimated"
            say(
                f"  {dry['calls']:,} calls, --workers {dry['workers']}: {dry['wall_s']:.1f} s wall "
                f"({dry['calls_per_s']:,}/s; start-up {dry['startup_s']:.1f} s; CPU {dry['cpu_s']:.1f} s, "
                f"{dry['cpu_per_call_us']:.0f} us per call); 1,000,000 calls {est}: "
                f"{dry['estimate_1m_s']:.1f} s (linear: {dry['linear_1m_s']:.1f} s); decisions {dry['decisions']}"
            )
    else:
        say("  skipped (--dry-run-calls 0)")

    say("")
    ab = run_before_and_now(args.before, packs[1000], args)

    say("\nissue 11: red lines on argument roles")
    bl = bench_baseline_on_bfcl(args.rounds, args.budget)
    say(
        f"  policies/baseline on the {sum(bl['verdicts'].values()):,} BFCL calls: "
        f"median {fmt(bl['decide']['median_us'])}, "
        f"p99 {fmt(bl['decide']['p99_us'])} per call; verdicts {bl['verdicts']}"
    )
    sec = safely("secrets", lambda: bench_secrets(args.rounds, args.budget))
    if sec:
        for label, row in sec.items():
            say(
                f"  secret scanning, {label}: {row['us_per_kb']} us per KB "
                f"({row['documents']:,} documents, {row['kb']} KB, {row['findings']} findings)"
            )

    say("\ngoal 4: memory per rule (tracemalloc)")
    mem_n = 10_000 if load_10k <= 4.0 else 1000
    del deciders, scale, ours100, big
    loaded.pop(10_000)
    mem = memory_per_rule(packs[mem_n], mem_n)
    say(
        f"  {mem_n:,} rules: {mem['retained_mb']} MB kept ({mem['bytes_per_rule']:,} bytes per rule), "
        f"peak {mem['peak_mb']} MB while loading"
    )

    goals = {
        "1_decision_median_us": goal(o_med, GOALS["decision_median_us"]),
        "ab_decision_now_over_before": goal(ab["now_over_before"], AB_LIMIT),
        "ab_pipeline_now_over_before": goal(ab["pipeline_now_over_before"], AB_LIMIT),
        "1_speedup_vs_cedarpy": goal(ratio(c_med, o_med), GOALS["speedup_vs_cedarpy"], higher_is_better=True),
        "2_scaling_ratio_100_to_10k": goal(scaling, GOALS["scaling_ratio"]),
        "3_pipeline_overhead_us": goal(pipe["overhead_vs_body_us"], GOALS["pipeline_overhead_us"]),
        "4_compile_10k_s": goal(round(load_10k, 3), GOALS["compile_10k_s"]),
        "5_dry_run_1m_s": goal(dry["estimate_1m_s"] if dry else None, GOALS["dry_run_1m_s"]),
    }
    say("\ngoals")
    for name, g in goals.items():
        mark = "n/a" if g["met"] is None else "met" if g["met"] else "MISSED"
        off = f" (x{g['off_by']} the goal)" if g["met"] is False else ""
        say(f"  {name:<30} {g['value']!s:>10} (goal {g['goal']})  {mark}{off}")
    elapsed = time.perf_counter() - started
    say(f"\ntotal {elapsed:.0f} s")

    result = {
        "date": datetime.date.today().isoformat(),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "calls": len(calls),
        "timer_overhead_us": overhead,
        "ours_median_us": o_med,
        "ours_p99_us": ours["decide"]["p99_us"],
        "ours_document_median_us": ours["decide_document"]["median_us"],
        "cedarpy_median_us": c_med,
        "cedarpy_p99_us": cedar["single"]["p99_us"] if cedar else None,
        "cedarpy_batch_median_us": cb_med,
        "casbin_median_us": k_med,
        "casbin_p99_us": cas["single"]["p99_us"] if cas else None,
        "ratio_cedarpy_over_ours": ratio(c_med, o_med),
        "ratio_cedarpy_batch_over_ours": ratio(cb_med, o_med),
        "ratio_casbin_over_ours": ratio(k_med, o_med),
        "casbin_policy_lines": cas["policy_lines"] if cas else None,
        "cedarpy_policy_parse_s": cedar["policy_parse_s"] if cedar else None,
        "agreement": check,
        "reference_100_rules": ref,
        "scaling": scale_medians,
        "scaling_ratio_10k_over_100": scaling,
        "pipeline": pipe,
        "compile": {"load_s": {str(k): v for k, v in sorted(load_s.items())}, "memory": mem},
        "dry_run": dry,
        "before_and_now": ab,
        "issue11": {
            "baseline_on_bfcl": bl,
            "secrets": sec,
        },
        "goals": goals,
        "elapsed_s": round(elapsed, 1),
    }
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
