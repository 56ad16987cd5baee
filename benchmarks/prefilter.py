"""The secret scanner's gates: one RE2 DFA over every gate against one DFA per group, on three kinds of text.

    python benchmarks/prefilter.py

Every gate of the prefilter (and the 18 patterns that pick the analyses) in one RE2 Set is one
DFA: the product of the gates' automata. On varied text its states outgrow the memory budget and
RE2 rebuilds them byte by byte. The scanner keeps that DFA for short texts only and splits the
rest into groups (secret_scanner._any_matcher, _indexes_matcher) and remembers the answers for
texts up to 512 bytes. This prints, in microseconds a text, the one-DFA reference beside the
grouped matchers searching every text, their ratio, and the grouped matchers on texts seen before
("kept"), on:

- the arguments of every tests/adversarial call as JSON (the red-team corpus),
- docs/*.md cut into 300-byte pieces (prose, as a file read returns it),
- the string values of examples/bfcl-calls.jsonl (the short values of the service benchmark).

The answers are compared text by text (they must be equal; the script exits 1 if not).
"""

from __future__ import annotations

import glob
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from policyengine.arguments import secret_scanner as scanner

ROOT = Path(__file__).resolve().parent.parent


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def corpora() -> dict[str, list[bytes]]:
    """The three kinds of text, as the UTF-8 bytes the gates read (at most the Set's limit)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    red_team = []
    for path in sorted(glob.glob(str(ROOT / "tests" / "adversarial" / "calls-*.yaml"))):
        for case in yaml.load(Path(path).read_text("utf-8"), Loader=loader).get("cases", []):
            arguments = (case.get("call") or {}).get("arguments")
            if isinstance(arguments, dict):
                red_team.append(json.dumps(arguments).encode())
    prose = []
    for path in sorted(glob.glob(str(ROOT / "docs" / "*.md"))):
        data = Path(path).read_bytes()
        prose += [data[i : i + 300] for i in range(0, len(data), 300)]
    bfcl = []
    for line in (ROOT / "examples" / "bfcl-calls.jsonl").read_text("utf-8").split("\n"):
        if line.strip():
            row = json.loads(line)
            bfcl += [s.encode() for s in _strings(row.get("call", row).get("arguments") or {})]
    limit = scanner._SET_LIMIT
    return {name: [d for d in texts if len(d) <= limit] for name, texts in
            (("red team (JSON)", red_team), ("prose (300 B)", prose), ("BFCL values", bfcl))}  # fmt: skip


def per_text(match: Callable[[bytes], Any], texts: Sequence[bytes]) -> tuple[float, list[Any]]:
    """Microseconds a text (CPU time, the best of three passes after a warm one) and the answers."""
    answers = [match(d) for d in texts]
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for data in texts:
            match(data)
        best = min(best, time.process_time() - started)
    return best / len(texts) * 1e6, answers


def main() -> int:
    category_patterns = scanner._CATEGORY_PATTERNS
    one_prefilter = scanner._set_matcher(["|".join(f"(?:{p})" for p in scanner._PREFILTER_ALL_GATES)])
    one_categories = scanner._set_matcher(category_patterns)
    pairs = {
        "prefilter": (lambda d: bool(one_prefilter(d)), scanner._prefilter_all_set),
        "categories": (lambda d: frozenset(one_categories(d) or ()), scanner._categories_set),
    }
    status = 0
    print(
        f"{'matcher':<11} {'text':<16} {'texts':>6} {'one DFA us':>11} {'grouped us':>11} {'ratio':>7} {'kept us':>8}"
    )
    remembered = scanner._SEEN_LENGTH
    for name, (reference, grouped) in pairs.items():
        for label, texts in corpora().items():
            before, expected = per_text(reference, texts)
            scanner._SEEN_LENGTH = -1  # every text searched: what a text seen for the first time costs
            try:
                now, answers = per_text(grouped, texts)
            finally:
                scanner._SEEN_LENGTH = remembered
            kept, _answers = per_text(grouped, texts)  # a text seen before (up to _SEEN_LENGTH bytes)
            if answers != expected:
                print(f"{name} on {label}: the grouped matcher answers otherwise", file=sys.stderr)
                status = 1
            print(f"{name:<11} {label:<16} {len(texts):>6} {before:>11.1f} {now:>11.1f}", end="")
            print(f" {before / now:>6.1f}x {kept:>8.1f}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
