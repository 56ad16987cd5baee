"""The adversarial corpus: crafted calls against the shipped packs, both directions.

Each file under tests/adversarial/ named `calls-*.yaml` holds cases of one category: a call
(optionally with a working directory, an inline tool catalog and a recorded result), the
decision the shipped pack must reach and the rule that must reach it, and for results the value
that must come out. Refusals and the benign look-alikes that must stay allowed sit side by side.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pytest

from policyengine import PolicyLayers, Registry
from policyengine.adapters.claude_code import BUILTIN_CATALOG
from policyengine.enforce.evaluate import evaluate_sync
from policyengine.tools.catalog import load_catalog
from policyengine.values.frozen import thaw
from support import load_yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "adversarial"
PACKS = {
    "baseline": ROOT / "policies" / "baseline",
    "bfcl": ROOT / "policies" / "bfcl",
    "claude-code": ROOT / "policies" / "claude-code",
}
DECISIONS = {"allow", "deny", "ask", "invalid"}
CASE_KEYS = {"name", "pack", "call", "tools", "result", "expect", "rule", "value", "why"}


def _files() -> list[Path]:
    files = sorted(CORPUS.glob("calls-*.yaml"))
    assert files, f"no adversarial case files under {CORPUS}: missing test data fails, it never skips"
    return files


def _cases() -> list[Any]:
    params = []
    for file in _files():
        data = load_yaml(file)
        assert isinstance(data, dict) and isinstance(data.get("cases"), list), f"{file.name}: needs a `cases:` list"
        for index, case in enumerate(data["cases"]):
            params.append(
                pytest.param(data.get("category", file.stem), case, id=f"{file.stem}:{index}:{case.get('name')}")
            )
    return params


CASES = _cases()


@cache
def _layers(pack: str, tools: str) -> PolicyLayers:
    """The shipped pack installed on a registry, with the case's inline catalog (JSON text) if any.

    claude-code's calls meet Claude Code's built-in tools as the hook registers them (its catalog
    declares roles: Glob's pattern is a glob, Read's file_path a path).
    """
    registry = Registry()
    if pack == "claude-code":
        for definition in load_catalog(BUILTIN_CATALOG).values():
            registry.register(definition)
    if tools:
        path = Path(_scratch()) / f"catalog-{abs(hash(tools))}.json"
        path.write_text(tools, encoding="utf-8")
        for definition in load_catalog(path).values():
            registry.register(definition)
    return PolicyLayers.install(registry, [PACKS[pack]])


@lru_cache(maxsize=1)
def _scratch() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="policyengine-adversarial-")


def test_the_corpus_is_large_and_goes_both_ways() -> None:
    decisions = [case.values[1]["expect"] for case in CASES]
    packs = {case.values[1].get("pack", "baseline") for case in CASES}
    assert packs == set(PACKS), f"every shipped pack meets the corpus; missing {sorted(set(PACKS) - packs)}"
    assert len(CASES) >= 1_900, f"only {len(CASES)} adversarial cases"
    assert decisions.count("allow") >= 100, "benign look-alikes that must stay allowed are under-represented"
    assert len(CASES) - decisions.count("allow") >= 200, "refusals are under-represented"


def test_every_category_of_the_issue_has_cases() -> None:
    categories = {case.values[0] for case in CASES}
    wanted = {"roles", "paths", "commands", "secrets", "redaction", "selection", "types"}
    # Issue 22, round three: the red team's classes (secrets are calls-secrets.yaml's).
    wanted |= {
        "tool-names",
        "allow-rules",
        "lists",
        "false-positives",
        "shell-expansion",
        "program-operands",
        "wrappers",
        "urls",
        "asks",
    }
    assert wanted <= categories, f"missing categories: {sorted(wanted - categories)}"


@pytest.mark.parametrize(("category", "case"), CASES)
def test_adversarial_case(category: str, case: Mapping[str, Any]) -> None:
    assert set(case) <= CASE_KEYS, f"unknown keys {sorted(set(case) - CASE_KEYS)}"
    assert case["expect"] in DECISIONS, f"expect must be one of {sorted(DECISIONS)}"
    assert case["expect"] == "allow" or case.get("rule"), "a refusal names the rule it exercises"
    call = case["call"]
    tools = json.dumps(case["tools"]) if case.get("tools") else ""
    layers = _layers(case.get("pack", "baseline"), tools)
    evaluation = evaluate_sync(
        layers.registry,
        call["name"],
        call.get("arguments", {}),
        call_id=f"adversarial:{case.get('name')}",
        result=case.get("result"),
        require_tool=bool(tools),
        cwd=call.get("cwd"),
    )
    assert evaluation is not None
    got = evaluation.decision.value
    why = f"{case.get('name')}: {got} by {evaluation.rule!r}: {evaluation.reason}"
    assert got == case["expect"], why
    if case.get("rule"):
        rules = {evaluation.rule, *(source.name for source in evaluation.rewrites)}
        assert case["rule"] in rules, why
    if "value" in case:
        assert thaw(evaluation.value) == case["value"], why


def test_the_security_docs_table_of_the_corpus_is_the_corpus() -> None:
    """docs/security.md's table is generated from the case files (scripts/corpus_table.py --write), never by hand."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "corpus_table", Path(__file__).parent.parent / "scripts" / "corpus_table.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.documented() == module.table(), "run: python scripts/corpus_table.py --write"
