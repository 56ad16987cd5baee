"""Regular expressions in rules run in linear time: no catastrophic backtracking.

Classic catastrophic patterns against 1 MB adversarial inputs, through a whole registry call:
in a pre-execute condition (the `regex_match` JMESPath function) and in a post-execute
`redact: pattern:` rule.  A backtracking engine would never finish these; RE2 must.  The bound
asserted is a generous 1 s per call (the target is 50 ms; the figures are printed), and the
cases that miss the target, or grow faster than linearly, are kept as strict xfails.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jmespath
import pytest
import yaml

from policyengine import Outcome, PolicyLayers, Registry, ToolResult, define_tool
from policyengine.language.functions import OPTIONS

N = 1024 * 1024  # 1 MB of adversarial input
BOUND = 1.0  # seconds per call: generous on purpose
TARGET = 0.050  # what linear-time matching of 1 MB should cost
# A matching (.*a){20} costs 0.5-0.9 s per 1 MB here (capture groups, see the xfail below): linear, but too
# close to BOUND on a loaded CI machine, so those two calls get a looser bound; the xfail tracks the target.
SLOW_CASE_BOUND = 3.0

# (id, pattern, adversarial input, does the pattern match it?)
CASES: list[tuple[str, str, str, bool]] = [
    ("nested-plus", "(a+)+$", "a" * N + "!", False),
    ("alternation-star", "(a|a)*b", "a" * N, False),
    ("dot-star-repeat", "(.*a){20}", "a" * N, True),
    ("dot-star-repeat-no-match", "(.*a){20}", "a" * 19 + "b" * (N - 19), False),
    ("overlapping-plus", "(x+x+)+y", "x" * N, False),
    ("anchored-alternation", "^(a|aa)+$", "a" * N + "b", False),
    ("word-space-star", "^(\\w+\\s?)*$", "ab " * (N // 3) + "!", False),
]
IDS = [case[0] for case in CASES]


def _write_pack(root: Path) -> Path:
    """One pre-execute rule and one redact rule per case, selected by the argument `which`."""
    rules: list[dict[str, Any]] = []
    for case_id, pattern, _text, _hit in CASES:
        rules.append(
            {
                "id": f"match-{case_id}",
                "description": f"regex_match with {pattern}",
                "stage": "pre-execute",
                "tools": ["check"],
                "when": f"arguments.which == '{case_id}' && regex_match(arguments.text, '{pattern}')",
                "decision": "deny",
                "reason": f"matched {case_id}",
            }
        )
        rules.append(
            {
                "id": f"redact-{case_id}",
                "description": f"redact {pattern}",
                "stage": "post-execute",
                "tools": ["echo"],
                "when": f"arguments.which == '{case_id}'",
                "redact": [{"pattern": pattern, "replace_with": "[R]"}],
            }
        )
    rules.append(
        {
            "id": "redact-quadratic",
            "description": "an alternative that scans ahead before every short match",
            "stage": "post-execute",
            "tools": ["echo"],
            "when": "arguments.which == 'quadratic'",
            "redact": [{"pattern": "a+b|a", "replace_with": "-"}],
        }
    )
    folder = root / "regex"
    folder.mkdir()
    manifest = {"name": "regex", "version": "1.0.0", "description": "catastrophic patterns", "files": ["rules.yaml"]}
    (folder / "pack.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    (folder / "rules.yaml").write_text(yaml.safe_dump({"rules": rules}, sort_keys=False), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    registry = Registry()
    parameters = {
        "text": {"type": "string", "required": True, "description": "the subject"},
        "which": {"type": "string", "required": True, "description": "which rule applies"},
    }

    async def check(_args: Any) -> str:
        return "checked"

    async def echo(args: Any) -> str:
        return str(args["text"])

    registry.register(define_tool(name="check", description="regex_match target", parameters=parameters, execute=check))
    registry.register(define_tool(name="echo", description="redaction target", parameters=parameters, execute=echo))
    PolicyLayers.install(registry, [_write_pack(tmp_path_factory.mktemp("packs"))])
    return registry


def fastest(action: Callable[[], Any], runs: int = 2) -> tuple[Any, float]:
    """The result of `action` and its best time over up to `runs` runs (less CI noise); fast runs are not repeated."""
    best = float("inf")
    value: Any = None
    for _ in range(runs):
        started = time.process_time()  # CPU time: a loaded machine must not change the verdict
        value = action()
        best = min(best, time.process_time() - started)
        if best < TARGET:
            break
    return value, best


def _function_time(pattern: str, text: str) -> tuple[bool, float]:
    expression = jmespath.compile("regex_match(text, pattern)")
    hit, seconds = fastest(lambda: expression.search({"text": text, "pattern": pattern}, options=OPTIONS), runs=1)
    return bool(hit), seconds


@pytest.mark.parametrize(("case_id", "pattern", "text", "hit"), CASES, ids=IDS)
def test_regex_match_in_a_rule_is_linear_on_1mb(
    registry: Registry, case_id: str, pattern: str, text: str, hit: bool
) -> None:
    result, seconds = fastest(lambda: registry.call_sync("check", {"text": text, "which": case_id}))
    found, function_seconds = _function_time(pattern, text)
    print(
        f"regex_match {pattern!r} on {len(text):,} chars: whole call {seconds * 1000:.1f} ms, "
        f"function alone {function_seconds * 1000:.1f} ms"
    )
    assert found is hit
    assert result.outcome is (Outcome.DENIED if hit else Outcome.OK), result.reason
    assert seconds < (SLOW_CASE_BOUND if case_id == "dot-star-repeat" else BOUND)


@pytest.mark.parametrize(("case_id", "pattern", "text", "hit"), CASES, ids=IDS)
def test_redact_pattern_is_linear_on_1mb(registry: Registry, case_id: str, pattern: str, text: str, hit: bool) -> None:
    result, seconds = fastest(lambda: registry.call_sync("echo", {"text": text, "which": case_id}))
    print(f"redact {pattern!r} on {len(text):,} chars: whole call {seconds * 1000:.1f} ms")
    assert result.outcome is Outcome.OK, result.reason
    assert (result.value != text) is hit
    assert seconds < (SLOW_CASE_BOUND if case_id == "dot-star-repeat" else BOUND)


@pytest.mark.parametrize("stage", ["regex_match", "redact"])
def test_a_matching_catastrophic_pattern_meets_the_50ms_target(registry: Registry, stage: str) -> None:
    tool = "check" if stage == "regex_match" else "echo"
    result, seconds = fastest(lambda: registry.call_sync(tool, {"text": "a" * N, "which": "dot-star-repeat"}), runs=1)
    print(f"{stage} (.*a){{20}} on 1 MB of 'a': {seconds * 1000:.1f} ms (target {TARGET * 1000:.0f} ms)")
    assert result.outcome in (Outcome.OK, Outcome.DENIED)
    assert seconds < TARGET


@pytest.mark.xfail(
    strict=True,
    reason="bug: redaction (and regex_replace) find every match by repeated RE2 searches; for a pattern whose "
    "preferred alternative scans ahead (a+b|a) each search reads to the end of the input, so the work is "
    "quadratic: 8x the input costs ~35x the time here, and 1 MB would take many minutes (check warns: PE510)",
)
def test_redaction_time_grows_linearly_with_the_input(registry: Registry) -> None:
    def redact(size: int) -> tuple[ToolResult, float]:
        result, seconds = fastest(lambda: registry.call_sync("echo", {"text": "a" * size, "which": "quadratic"}))
        assert result.outcome is Outcome.OK and result.value == "-" * size
        return result, seconds

    _, small = redact(4096)
    _, large = redact(8 * 4096)
    print(f"redact 'a+b|a': 4 KiB {small * 1000:.1f} ms, 32 KiB {large * 1000:.1f} ms, ratio {large / small:.1f}")
    assert large / small < 16, "8x the input cost more than 16x the time"
