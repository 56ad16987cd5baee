"""How replacing every match grows with the text, for the PE510 cases (printed, never asserted).

    python benchmarks/regex_cost.py [--small 4096] [--large 32768]

For each case of tests/data/regex_cost.yaml that names the text to measure on (`measured`,
repeated to the size), times re2's `sub` on the small and the large text (best of three) and
prints the growth beside PE510's verdict: linear rewrites grow about as the text does (8x by
default), quadratic ones about as its square (64x).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import re2
import yaml

from policyengine.language.regex_cost import quadratic_risk

CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "regex_cost.yaml"


def best_of_three(pattern: Any, text: str) -> float:
    """The fastest of three replace-every-match runs, in seconds."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        pattern.sub(lambda _m: "-", text)
        times.append(time.perf_counter() - started)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    """Print one line per measured case."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=4096)
    parser.add_argument("--large", type=int, default=32768)
    args = parser.parse_args(argv)
    cases = [c for c in yaml.safe_load(CASES.read_text(encoding="utf-8")) if c.get("measured")]
    sizes = f"{args.small:>8,} chars {args.large:>8,} chars"
    print(f"{'pattern':24s} {'PE510':6s} {sizes}  growth (text x{args.large / args.small:g})")
    for case in cases:
        pattern = re2.compile(case["pattern"])
        unit = case["measured"]
        small = best_of_three(pattern, unit * (args.small // len(unit)))
        large = best_of_three(pattern, unit * (args.large // len(unit)))
        verdict = "warns" if quadratic_risk(case["pattern"]) else "quiet"
        print(
            f"{case['pattern']:24s} {verdict:6s} {small * 1000:11.1f} ms {large * 1000:11.1f} ms  x{large / small:.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
