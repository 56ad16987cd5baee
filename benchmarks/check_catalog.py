"""Time `check` with and without a tool catalog: load_packs + lint, then also the type check.

    python benchmarks/generate.py --rules 10000 --calls 10 --out /tmp/tc
    python benchmarks/check_catalog.py --pack /tmp/tc/pack-10000 --tools 100

writes a catalog of the pack's first N tools (`catalog-N.jsonl` beside the pack: `path` and `owner`
strings, and `content` for writers, as generate.py's calls send them) and prints the median time of
A `load_packs + lint(packs)` (check without a catalog), B `load_catalog + load_packs + lint(packs,
catalog)` (check --tools: lint runs check_types and its own catalog checks), C what the
type check alone adds to A, the ratios B/A and C/A, and where the time goes. The 10,000-rule pack
names 1,000 tools, so a 100-tool catalog leaves 9,000 rules naming tools it lacks (each a PE606,
located in its file): the path with the most problems. `--tools 1000` covers
every tool. Benchmarks print; they never assert.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import VERBS, tool_count, tool_name, write_pack

from policyengine.packs.lint import lint
from policyengine.packs.loader import load_packs
from policyengine.packs.type_check import check_types
from policyengine.tools.catalog import load_catalog


def tool_definition(i: int) -> dict[str, Any]:
    """The catalog entry of generate.py's tool i, typed as its recorded calls are."""
    properties: dict[str, Any] = {
        "path": {"type": "string", "description": "The file the call reads or writes."},
        "owner": {"type": "string", "description": "Who owns the file."},
    }
    if VERBS[i % len(VERBS)] in ("write", "upload"):
        properties["content"] = {"type": "string", "description": "What to write."}
    return {
        "name": tool_name(i),
        "description": f"Tool {i} of the benchmark pack.",
        "parameters": {"type": "object", "properties": properties, "required": ["path", "owner"]},
    }


def write_catalog(path: Path, n_tools: int) -> Path:
    """A JSON Lines catalog of the first n_tools tools."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(tool_definition(i)) + "\n" for i in range(n_tools)), encoding="utf-8")
    return path


def median_time(action: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median wall time of `action` over `repeat` runs (a collection before each), and its last result."""
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pack", type=Path, default=Path("/tmp/tc/pack-10000"), help="pack folder (default: %(default)s)"
    )
    parser.add_argument("--rules", type=int, default=10_000, help="rules of the pack, written if the folder is missing")
    parser.add_argument("--tools", type=int, default=100, help="tools in the catalog (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each measurement (median)")
    args = parser.parse_args()
    if not (args.pack / "pack.yaml").is_file():
        write_pack(args.pack, args.rules)
    catalog_path = write_catalog(args.pack.parent / f"catalog-{args.tools}.jsonl", args.tools)

    def without() -> Any:
        packs = load_packs([args.pack])
        return lint(packs)

    def with_catalog() -> Any:
        tools = load_catalog(catalog_path)
        packs = load_packs([args.pack])
        return lint(packs, tools)  # what `check` runs: lint calls check_types with the catalog

    def type_check_only() -> Any:
        tools = load_catalog(catalog_path)
        packs = load_packs([args.pack])
        return lint(packs) + check_types(packs, tools)

    base, _ = median_time(without, args.repeat)
    full, problems = median_time(with_catalog, args.repeat)
    added, _ = median_time(type_check_only, args.repeat)
    packs = load_packs([args.pack])
    tools = load_catalog(catalog_path)
    load, _ = median_time(lambda: load_packs([args.pack]), args.repeat)
    plain_lint, _ = median_time(lambda: lint(packs), args.repeat)
    lint_catalog, _ = median_time(lambda: lint(packs, tools), args.repeat)
    typed, _ = median_time(lambda: check_types(packs, tools), args.repeat)
    catalog_time, _ = median_time(lambda: load_catalog(catalog_path), args.repeat)
    rules = sum(len(p.rules) for p in packs)
    print(f"pack: {args.pack} ({rules:,} rules, {tool_count(rules):,} tools); catalog: {len(tools)} tools")
    print(f"A  check without the catalog: load_packs + lint                                {base:7.3f} s")
    print(f"B  check with the catalog: load_catalog + load_packs + lint(tools) (types included) {full:7.3f} s")
    print(f"C  A + load_catalog + check_types (lint without its catalog checks)            {added:7.3f} s")
    print(f"ratios: B/A {full / base:.2f}, C/A {added / base:.2f}")
    print(
        f"  load_packs {load:.3f} s, lint {plain_lint:.3f} s, lint with the catalog {lint_catalog:.3f} s, "
        f"load_catalog {catalog_time:.3f} s, check_types {typed:.3f} s"
    )
    counts = Counter(p.code for p in problems)
    print("  problems (B): " + (", ".join(f"{code} {n:,}" for code, n in sorted(counts.items())) or "none"))


if __name__ == "__main__":
    main()
