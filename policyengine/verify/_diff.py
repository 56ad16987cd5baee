"""The semantic diff of two installations: the calls they decide differently, in classes, weaker first.

The calls are written as the property search writes them (`_search.candidates`: every tool of
either catalog, the literals of both sides' packs and their spellings), each decided by both sides'
installed layers. A difference's class is the pair of decisions and the pair of rules that made
them (`deny by deny-transfers-over-limit -> ask by ask-transfers`), with the tools it was seen on,
how many calls fell in it and the first such call. A class is weaker when the new side lets on
what the old one stopped or asked about (allow < ask < deny; a call refused as invalid never runs,
so it ranks as deny). Searched, seeded and bounded: a class not found may still exist.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from policyengine.enforce.install import PolicyLayers
from policyengine.verify._search import SearchBudget, bounded, candidates, decide, pools

__all__ = ["DiffClass", "SemanticDiff", "semantic_diff"]

_RANK = {"allow": 0, "ask": 1, "deny": 2, "invalid": 2, "error": 2}


@dataclass
class DiffClass:
    """Calls the two sides decide differently in the same way: decisions, rules, tools, a count and an example."""

    old: str
    new: str
    old_rule: str | None
    new_rule: str | None
    tools: set[str] = field(default_factory=set)
    calls: int = 0
    example: tuple[str, Any] | None = None

    @property
    def weaker(self) -> bool:
        """The new side lets on what the old stopped or asked about."""
        return _RANK.get(self.new, 2) < _RANK.get(self.old, 2)

    def to_json(self) -> dict[str, Any]:
        """The class as JSON (`diff --semantic --format json`)."""
        assert self.example is not None
        return {
            "weaker": self.weaker,
            "old": {"decision": self.old, "rule": self.old_rule},
            "new": {"decision": self.new, "rule": self.new_rule},
            "tools": sorted(self.tools),
            "calls": self.calls,
            "example": {"name": self.example[0], "arguments": self.example[1]},
        }


@dataclass(frozen=True)
class SemanticDiff:
    """The classes found (weaker first, then by how many calls), the calls tried and the time taken."""

    classes: tuple[DiffClass, ...]
    tried: int
    seconds: float

    @property
    def weaker(self) -> tuple[DiffClass, ...]:
        """The classes where the new side is weaker."""
        return tuple(c for c in self.classes if c.weaker)


def semantic_diff(old: PolicyLayers, new: PolicyLayers, budget: SearchBudget) -> SemanticDiff:
    """Search calls of both catalogs for decisions that differ between `old` and `new`, within the budget."""
    started = time.monotonic()
    strings, numbers = pools([old, new])
    tools = _tools(old, new)
    rng = random.Random(f"{budget.seed}:diff")
    found: dict[tuple[str, str, str | None, str | None], DiffClass] = {}
    tried = 0
    for name, arguments in bounded(candidates(tools, strings, numbers, rng), budget, started):
        tried += 1
        before, after = decide(old, name, arguments), decide(new, name, arguments)
        if before == after:
            continue
        key = (before[0], after[0], before[1], after[1])
        kept = found.setdefault(key, DiffClass(*key))
        kept.tools.add(name)
        kept.calls += 1
        if kept.example is None:
            kept.example = (name, arguments)
    ordered = sorted(found.values(), key=lambda c: (not c.weaker, -c.calls, c.old, c.new, c.old_rule or ""))
    return SemanticDiff(tuple(ordered), tried, time.monotonic() - started)


def _tools(old: PolicyLayers, new: PolicyLayers) -> list[tuple[str, Mapping[str, Any]]]:
    """Every tool of either side's catalog with its JSON Schema (the new side's where both define it)."""
    tools: dict[str, Mapping[str, Any]] = {}
    for layers in (old, new):
        tools.update((name, d.to_json_schema()) for name, d in layers.registry.tools.items())
    return sorted(tools.items())
