"""Explain a decision: every rule considered, stage by stage, what its condition returned."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from policyengine.enforce.evaluate import Evaluation, call_for, evaluate
from policyengine.enforce.install import PolicyLayers
from policyengine.packs.rules import EXPLAIN, Rule
from policyengine.values.frozen import freeze
from policyengine.values.results import Stage


@dataclass(frozen=True, slots=True)
class Considered:
    """One rule evaluated for the call: its stage, pack, and what its condition returned."""

    stage: Stage
    rule: str
    pack: str | None
    matched: bool
    error: str | None
    location: str | None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record."""
        return {
            "stage": self.stage.value,
            "rule": self.rule,
            "pack": self.pack,
            "matched": self.matched,
            "error": self.error,
            "location": self.location,
        }


@dataclass(frozen=True, slots=True)
class Explanation:
    """The evaluation, and the trail of rules that led to it."""

    evaluation: Evaluation
    considered: tuple[Considered, ...]

    def exercised(self) -> set[str]:
        """Ids of the rules whose condition held for this call (policy test coverage)."""
        return {c.rule for c in self.considered if c.matched}


def _record(trail: list[Considered]) -> Any:
    def hear(rule: Rule, outcome: Any) -> None:
        error = f"{type(outcome).__name__}: {outcome}" if isinstance(outcome, Exception) else None
        trail.append(
            Considered(
                rule.stage,
                rule.id,
                rule.source.pack,
                outcome is True,
                error,
                str(rule.location) if rule.location else None,
            )
        )

    return hear


async def explain(
    layers: PolicyLayers,
    name: str,
    arguments: Mapping[str, Any] | None,
    *,
    agent: str = "agent",
    call_id: str | None = None,
    result: Mapping[str, Any] | None = None,
    cwd: str | None = None,
) -> Explanation:
    """Evaluate a call against the installed layers and record every rule considered."""
    trail: list[Considered] = []
    token = EXPLAIN.set(_record(trail))
    try:
        evaluation = await evaluate(
            layers.registry, name, arguments, agent=agent, call_id=call_id, result=result, cwd=cwd
        )
    finally:
        EXPLAIN.reset(token)
    if evaluation.decision.value in ("allow", "ask"):
        # Execute rules never run in an evaluation; show which would wrap the body.
        call = call_for(layers.registry, name, freeze(arguments or {}), agent, call_id or "explain", cwd)
        for pack in layers.packs:
            for rule in pack.rules_for(Stage.EXECUTE, name, call.tags):
                try:
                    _record(trail)(rule, rule.applies(call.document))
                except Exception as error:
                    _record(trail)(rule, error)
    return Explanation(evaluation, tuple(trail))
