"""A proof checked again on random calls: each call a proved property's `when` picks must be decided as it says.

The proof rules are tested for soundness on their own (tests/test_verify.py); this checks their use on
a real pack. Random calls are built around the property's own literals and their spellings: under
random argument names (or the catalog's string arguments), alone, in a list, in an object, beside
random other arguments; each one `when` picks is decided by the installed layers as `verify` decides
it. A decision the property forbids is a proof failure - a bug of the proof rules, reported as such
(`verify --recheck N`), never a finding about the pack (the search reports those).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from policyengine.enforce.evaluate import call_for
from policyengine.enforce.install import PolicyLayers
from policyengine.values.frozen import freeze
from policyengine.verify._properties import Property
from policyengine.verify._search import (
    _CREDENTIALS,
    _HOST,
    _literals,
    _properties_of,
    _random_value,
    _spellings,
    _tools_of,
    decide,
    pools,
)

__all__ = ["Recheck", "recheck"]

# Argument names a call outside the catalog is written with: the roles' names and names that carry none.
_KEYS = ("path", "file_path", "command", "url", "code", "target", "files", "input", "args", "query", "dest", "x")


@dataclass(frozen=True)
class Recheck:
    """How many random calls were tried and picked for a proved property, and the first that broke it (if any)."""

    property: Property
    tried: int
    picked: int
    failure: tuple[str, Any, str, str | None] | None = None  # tool, arguments, decision, rule

    def to_json(self) -> dict[str, Any]:
        """The recheck as JSON (inside `verify --format json`'s result)."""
        found: dict[str, Any] = {"tried": self.tried, "picked": self.picked}
        if self.failure is not None:
            tool, arguments, decision, rule = self.failure
            found["failure"] = {"name": tool, "arguments": arguments, "decision": decision, "rule": rule}
        return found


def recheck(layers: PolicyLayers, prop: Property, calls: int, seed: int = 0) -> Recheck:
    """`calls` random calls around the property's literals; every one `when` picks decided, the first failure kept."""
    rng = random.Random(f"{seed}:{prop.id}:recheck")
    strings, numbers = pools([layers], [prop.when_text] if prop.when_text else [])
    own = _literals(prop.when_text or "")[0]
    # The property's literals and their spellings, and made-up credentials (a property over secrets(@) names none).
    spelled = [spelling for value in own for _, spelling in _spellings(value)]
    # A host as a URL and a command; a word as a command's program.
    spelled += [form for value in own if _HOST.fullmatch(value) for form in (f"http://{value}/x", f"curl -s {value}")]
    spelled += [f"{value} -f x" for value in own if re.fullmatch(r"[a-z0-9_.-]+", value)]
    targets = [*own, *spelled, *_CREDENTIALS, *(f"token {c} here" for c in _CREDENTIALS)]
    tools = _tools_of(layers, prop)
    picked = 0
    for tried in range(1, calls + 1):
        name, schema = rng.choice(tools)
        arguments = _arguments(schema, rng.sample(targets, min(len(targets), rng.randint(1, 3))), strings, numbers, rng)
        if prop.when is not None:
            call = call_for(layers.registry, name, freeze(arguments), "verify", None, None)
            try:
                if not prop.when.test(call.document):
                    continue
            except Exception:  # a condition that cannot read this call picks nothing, as in the search
                continue
        decision, rule = decide(layers, name, arguments)
        if decision == "invalid" and "invalid" not in prop.decisions:
            continue  # the call never runs
        picked += 1
        if prop.violated_by(decision):
            return Recheck(prop, tried, picked, (name, arguments, decision, rule))
    return Recheck(prop, calls, picked)


def _arguments(
    schema: Mapping[str, Any], chosen: list[str], strings: list[str], numbers: list[Any], rng: random.Random
) -> dict[str, Any]:
    """Random arguments holding the chosen targets: each alone, in a list, in an object, or all in one command."""
    props = _properties_of(schema)
    if props:
        arguments = {key: _random_value(spec, strings, numbers, rng) for key, spec in props.items()}
        text_keys = [key for key, spec in props.items() if spec.get("type", "string") == "string"]
        for target in chosen:
            if text_keys:
                arguments[rng.choice(text_keys)] = target
        return arguments
    arguments = {rng.choice(_KEYS): rng.choice(strings) for _ in range(rng.randint(0, 2))}
    if len(chosen) > 1 and rng.random() < 0.3:  # a program and its operands: `tar /home/dev`
        arguments["command"] = " ".join(chosen)
        return arguments
    for target in chosen:
        shapes = (target, [target], {"value": target}, [rng.choice(strings), target])
        arguments[rng.choice(_KEYS)] = rng.choice(shapes)
    return arguments
