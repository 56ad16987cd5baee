"""The bounded, seeded search for a call that breaks a property, every candidate decided by the real engine.

For each property, the calls of its tools are written from the catalog's JSON Schemas with values
drawn from probes (a few generic values and made-up credentials of the detector's shapes), from
what the packs and the property name (list entries, the literals of every rule's and the
property's condition, globs made concrete) and from their spellings (testing/spellings.py:
`.ENV` for `.env`, `./.env`, `%2eenv`...). A call the property's `when` picks is decided by the
installed layers exactly as `policyengine test` decides it; a decision the property forbids is a
counterexample: a concrete call, reported with the rule that decided it (a call the registry
refuses as invalid never runs, and counts only for a property that names `invalid`). The search proves
nothing: a property with no counterexample is "not proven", with how many calls were tried and
how many `when` picked (none picked: "not exercised", the search never reached the property),
unless an enforcing red line's condition is implied by its own (_implication.py): then "proved".
Deterministic for a seed.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import random
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from policyengine.enforce.evaluate import call_for, evaluate, evaluate_sync
from policyengine.enforce.install import PolicyLayers
from policyengine.packs.loader import Pack
from policyengine.testing.spellings import spell_command, spell_path, spell_url
from policyengine.values.frozen import freeze
from policyengine.verify._implication import Proof, prove, red_lines
from policyengine.verify._properties import Property, PropertyFiles, PropertyKind

__all__ = [
    "Outcome",
    "PropertyResult",
    "SearchBudget",
    "bounded",
    "candidates",
    "decide",
    "pools",
    "unstated_red_lines",
    "verify",
]

# Quoted literals of a condition: 'raw strings' and `json literals` (numbers and strings among them).
_RAW_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'")
_JSON_LITERAL = re.compile(r"`([^`]*)`")
_GENERIC_STRINGS = ("", "x", "README.md", "src/app.py", "/tmp/x", "https://example.com/", "ls -la", "hello")
# Credentials of the shapes the secret detector reads (made up: none was ever issued), so that a property
# over `secrets(@)` is exercised; each is also written inside a sentence.
_CREDENTIALS = (
    "ghp_4fJk9QzP2mXv7LwR3sT8uY1nB6cD0eH5aG2k",
    "AKIAQ3J5ZKX7M2PLW8RT",
    "4539 1488 0343 6467",
    "password=Tr0ub4dor&3xq",
    "sk-proj-8fJ2kL9mN4pQ7rS1tU6vW3xY0zA5bC8dE2fG",
)
_GENERIC_NUMBERS = (0, 1, -1, 2, 100, 10_000, 1_000_000)
_ADDRESS = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3}){3}|\[[0-9a-f:.]+\]", re.IGNORECASE)
_HOST = re.compile(r"(?=[^/ ]*\.)[a-z0-9][a-z0-9.-]{2,252}[a-z0-9]|\[[0-9a-f:.]+\]", re.IGNORECASE)
_MAX_POOL = 4_000
_MAX_NESTED = 400
# A list a condition reads under a negation: what it names is let go (`!path_surely_matches(@, lists.templates)`).
_EXEMPTION = re.compile(r"!\(*\s*[a-z_]+\(@,\s*lists\.([A-Za-z0-9_]+)\)")
# The argument names a tool outside the catalog is called with (the engine reads roles by name).
_COMMON_KEYS = ("path", "command", "url", "file_path", "code")


class Outcome(enum.Enum):
    """What the proof and the search found for one property."""

    PROVED = "proved"  # an enforcing red line's condition is implied by the property's (_implication.py)
    COUNTEREXAMPLE = "counterexample"  # a call the engine decides as the property forbids
    NOT_PROVEN = "not proven"  # calls were picked by `when` and none broke the property
    NOT_EXERCISED = "not exercised"  # no call tried was picked by `when`: the property was never tested


@dataclass(frozen=True)
class SearchBudget:
    """At most `calls` candidate calls and `seconds` a property; `seed` picks which."""

    calls: int = 20_000
    seconds: float = 10.0
    seed: int = 0


@dataclass(frozen=True)
class PropertyResult:
    """One property's outcome, the counterexample (tool, arguments, decision, rule) if any, and the counts."""

    property: Property
    outcome: Outcome
    tried: int
    picked: int
    seconds: float
    tool: str | None = None
    arguments: Any = None
    decision: str | None = None
    rule: str | None = None
    proved_by: str | None = None  # the red line whose condition the property's implies
    gaps: tuple[tuple[str, str, str], ...] = ()  # not proved: (red line, tool, the part of its condition not shown)

    def to_json(self) -> dict[str, Any]:
        """The result as JSON (`verify --format json`)."""
        found: dict[str, Any] = {
            "id": self.property.id,
            "kind": self.property.kind.value,
            "decisions": sorted(self.property.decisions),
            "outcome": self.outcome.value,
            "tried": self.tried,
            "picked": self.picked,
            "seconds": round(self.seconds, 3),
            "location": f"{self.property.file}:{self.property.line}",
        }
        if self.proved_by is not None:
            found["proved_by"] = self.proved_by
        if self.gaps:
            found["not_shown"] = [{"red_line": r, "tool": tool, "condition": part} for r, tool, part in self.gaps]
        if self.outcome is Outcome.COUNTEREXAMPLE:
            found["counterexample"] = {
                "name": self.tool,
                "arguments": self.arguments,
                "decision": self.decision,
                "rule": self.rule,
            }
        return found


def verify(layers: PolicyLayers, properties: Sequence[Property], budget: SearchBudget) -> list[PropertyResult]:
    """Search each property for a counterexample, within the budget."""
    # Each property's own literals first: with many tools in turn, a property meets what it names early.
    results = []
    for prop in properties:
        strings, numbers = pools([layers], [prop.when_text] if prop.when_text else [])
        results.append(_search(layers, prop, strings, numbers, budget))
    return results


def unstated_red_lines(layers: PolicyLayers, files: PropertyFiles) -> list[tuple[str, str]]:
    """(pack, red line) of each enforcing red line no property states (`red_line:`) and no `unstated` entry names."""
    stated = {prop.red_line for prop in files.properties} | set(files.unstated)
    return [(rule.source.pack or "", rule.id) for rule, _ in red_lines(layers.packs) if rule.id not in stated]


def _search(
    layers: PolicyLayers, prop: Property, strings: list[str], numbers: list[Any], budget: SearchBudget
) -> PropertyResult:
    started = time.monotonic()
    registry = layers.registry
    tools = _tools_of(layers, prop)
    tried = picked = 0
    rng = random.Random(f"{budget.seed}:{prop.id}")
    for name, arguments in bounded(candidates(tools, strings, numbers, rng), budget, started):
        tried += 1
        if prop.when is not None:
            call = call_for(registry, name, freeze(arguments), "verify", None, None)
            try:
                if not prop.when.test(call.document):
                    continue
            except Exception:  # a condition that cannot read this call picks nothing (the engine's rules fail closed)
                continue
        picked += 1
        decision, rule = decide(layers, name, arguments)
        if decision == "invalid" and "invalid" not in prop.decisions:
            continue  # the registry refused the arguments: the call never runs (a slip of the writer, not a finding)
        if prop.violated_by(decision):
            return PropertyResult(
                prop, Outcome.COUNTEREXAMPLE, tried, picked, time.monotonic() - started, name, arguments, decision, rule
            )
    # The search ran in full before a proof is claimed: a counterexample (above) always wins over it.
    proof = _proof(layers, prop)
    seconds = time.monotonic() - started
    if proof.red_line is not None:
        return PropertyResult(prop, Outcome.PROVED, tried, picked, seconds, proved_by=proof.red_line)
    outcome = Outcome.NOT_PROVEN if picked else Outcome.NOT_EXERCISED
    return PropertyResult(prop, outcome, tried, picked, seconds, gaps=proof.gaps)


def _proof(layers: PolicyLayers, prop: Property) -> Proof:
    """The red lines that prove the property (its decisions allow deny, never invalid), or what was not shown."""
    if prop.kind is PropertyKind.NEVER and ({"deny", "invalid"} & prop.decisions):
        return Proof(None)
    if prop.kind is PropertyKind.ALWAYS and "deny" not in prop.decisions:
        return Proof(None)
    proof = prove(prop.when_text, prop.lists, prop.tools, red_lines(layers.packs), prop.red_line)
    if prop.red_line is not None:  # the gaps of the red line the property states, when it names one
        return Proof(proof.red_line, tuple(g for g in proof.gaps if g[0] == prop.red_line) or proof.gaps)
    return proof


def decide(layers: PolicyLayers, name: str, arguments: Any) -> tuple[str, str | None]:
    """The decision and deciding rule of the installed layers, as `policyengine test` decides a call."""
    registry = layers.registry
    # With a catalog, a tool outside it is invalid (as `policyengine test` decides); without one, as the hook does.
    options: dict[str, Any] = {"agent": "verify", "require_tool": bool(registry.tools) and name not in registry.tools}
    evaluation = evaluate_sync(registry, name, arguments, **options)
    if evaluation is None:
        evaluation = asyncio.run(evaluate(registry, name, arguments, **options))
    source = evaluation.source
    return evaluation.decision.value, source.rule_id if source is not None else None


def bounded(calls: Iterator[tuple[str, Any]], budget: SearchBudget, started: float) -> Iterator[tuple[str, Any]]:
    """The first `budget.calls` calls, stopping early once `budget.seconds` have passed since `started`."""
    for call in itertools.islice(calls, budget.calls):
        if time.monotonic() - started > budget.seconds:
            return
        yield call


def _tools_of(layers: PolicyLayers, prop: Property) -> list[tuple[str, Mapping[str, Any]]]:
    """The catalog's tools the property names (with their parameter schemas), then names outside the catalog."""
    tools: list[tuple[str, Mapping[str, Any]]] = [
        (name, definition.to_json_schema())
        for name, definition in sorted(layers.registry.tools.items())
        if prop.tools.matches(name, definition.tags)
    ]
    known = {name for name, _ in tools}
    tools.extend((name, {}) for name in sorted(prop.tools.names) if name not in known)
    return tools


def pools(installed: Sequence[PolicyLayers], conditions: Sequence[str] = ()) -> tuple[list[str], list[Any]]:
    """The strings and numbers calls are written with: probes, then the packs' and conditions' literals, spelled."""
    packs = [pack for layers in installed for pack in layers.packs]
    texts = [*conditions, *(rule.when.text for pack in packs for rule in pack.rules if rule.when is not None)]
    seeds: list[str] = []
    numbers: list[Any] = list(_GENERIC_NUMBERS)
    for text in texts:
        found, found_numbers = _literals(text)
        seeds.extend(found)
        numbers.extend(found_numbers)
    own = list(dict.fromkeys(s for text in conditions for s in _literals(text)[0]))
    named = set(seeds)  # what the conditions (the property's and the rules') quote: hosts among them become URLs
    for pack in packs:
        for entries in pack.lists.values():
            seeds.extend(str(e) for e in entries if isinstance(e, str))
    # The probes first: every argument meets them before the packs' thousands of literals.
    strings: list[str] = [*_GENERIC_STRINGS, *_CREDENTIALS, *(f"my key is {c} thanks" for c in _CREDENTIALS)]
    for index, seed in enumerate(dict.fromkeys(seeds)):
        if index == len(own):  # after the conditions' own literals: their targets inside exempt folders
            strings.extend(itertools.islice(_nested(packs, texts, own), _MAX_NESTED))
        for concrete in _concrete(seed):
            strings.append(concrete)
            strings.extend(spelled for _, spelled in _spellings(concrete))
        if _HOST.fullmatch(seed) and (seed in named or _ADDRESS.fullmatch(seed)):
            # A host a condition names, or any address: reached through a URL and through the shell too.
            for url in (f"http://{seed}/latest/meta-data/", f"curl -s http://{seed}/"):
                strings.append(url)
                strings.extend(spelled for _, spelled in _spellings(url))
    return list(dict.fromkeys(strings))[:_MAX_POOL], list(dict.fromkeys(numbers))


def _literals(text: str) -> tuple[list[str], list[Any]]:
    """A condition's quoted strings, and its numbers with their neighbours."""
    strings = [m.group(1) for m in _RAW_LITERAL.finditer(text)]
    numbers: list[Any] = []
    for m in _JSON_LITERAL.finditer(text):
        value = m.group(1).strip()
        if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", value):
            number = float(value) if "." in value else int(value)
            numbers.extend([number, number - 1, number + 1])
        elif value.startswith('"') and value.endswith('"') and len(value) >= 2:
            strings.append(value[1:-1])
    return strings, numbers


def _nested(packs: Sequence[Pack], texts: Sequence[str], targets: Sequence[str]) -> Iterator[str]:
    """Each target (a condition's literal, made concrete) inside a folder named by an exemption's entry.

    An exemption (`!path_surely_matches(@, lists.templates)`) is where a red line lets a path go; a
    test of the whole path may read a folder named like an exempt file as exempting what lies in it
    (`.env.example/.env`, found this way in the claude-code pack).
    """
    exempt = dict.fromkeys(m.group(1) for text in texts for m in _EXEMPTION.finditer(text))
    entries = [e for pack in packs for name in exempt for e in pack.lists.get(name, ()) if isinstance(e, str)]
    # A regex entry (of `!regex_match(@, lists.X)`) names no folder: only plain names and globs do.
    folders = dict.fromkeys(_made_concrete(e) for e in entries if not any(c in e for c in "()|\\^$"))
    for target in dict.fromkeys(_made_concrete(t) for t in targets):
        yield from (f"{folder}/{target}" for folder in folders)


def _made_concrete(text: str) -> str:
    """A glob made concrete (`**/` gone, wildcards one letter), or the text as it is."""
    return list(_concrete(text))[1 if any(c in text for c in "*?[") else 0]


def _concrete(text: str) -> Iterator[str]:
    """The text, and a glob made concrete (`**/` gone or one folder deep, `*` and `?` one letter, a class its first)."""
    yield text
    if not any(c in text for c in "*?["):
        return
    made = re.sub(r"\[!?\]?[^\]]*\]", lambda m: (m.group(0).lstrip("[!").rstrip("]") or "a")[:1], text)
    yield made.replace("**/", "").replace("*", "x").replace("?", "x")
    yield made.replace("**/", "a/").replace("*", "x").replace("?", "x")


def _spellings(text: str) -> Iterator[tuple[str, str]]:
    """A few spellings of a path, URL or command naming the same thing (the engine must read them alike)."""
    spell = spell_url if "://" in text else spell_command if " " in text else spell_path
    return itertools.islice(spell(text), 8)


def candidates(
    tools: list[tuple[str, Mapping[str, Any]]], strings: list[str], numbers: list[Any], rng: random.Random
) -> Iterator[tuple[str, Any]]:
    """Calls in a fixed order: each pool value in each argument, the tools taken in turn; then random mixes."""
    systematic = [_systematic(name, schema, strings, numbers) for name, schema in tools]
    while systematic:  # round-robin: with many tools, each is reached within the budget
        for calls in list(systematic):
            call = next(calls, None)
            if call is None:
                systematic.remove(calls)
            else:
                yield call
    while tools:
        name, schema = rng.choice(tools)
        props = _properties_of(schema)
        if not props:
            yield name, {rng.choice(_COMMON_KEYS): rng.choice(strings)}
            continue
        required = _required(schema)
        yield (
            name,
            {
                key: _random_value(spec, strings, numbers, rng)
                for key, spec in props.items()
                if key in required or rng.random() < 0.5
            },
        )


def _systematic(
    name: str, schema: Mapping[str, Any], strings: list[str], numbers: list[Any]
) -> Iterator[tuple[str, Any]]:
    """One tool's calls with one argument varied over the pool at a time, the required ones set."""
    props = _properties_of(schema)
    if not props:  # each value under each name in turn: a short budget meets every name
        for value in strings:
            for key in _COMMON_KEYS:
                yield name, {key: value}
        return
    base = {key: _default(spec) for key, spec in props.items() if key in _required(schema)}
    for key, spec in props.items():
        for value in _values_for(spec, strings, numbers):
            yield name, {**base, key: value}


def _properties_of(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return {str(k): v for k, v in props.items() if isinstance(v, Mapping)} if isinstance(props, Mapping) else {}


def _required(schema: Mapping[str, Any]) -> set[str]:
    required = schema.get("required") if isinstance(schema, Mapping) else None
    return {str(r) for r in required} if isinstance(required, list | tuple) else set()


def _type(spec: Mapping[str, Any]) -> str:
    kind = spec.get("type")
    if isinstance(kind, list | tuple):
        kind = next((k for k in kind if k != "null"), "string")
    return str(kind) if kind is not None else "string"


def _enum(spec: Mapping[str, Any]) -> list[Any] | None:
    """The argument's allowed values, when its schema lists them."""
    values = spec.get("enum")
    return list(values) if isinstance(values, list | tuple) and values else None


def _default(spec: Mapping[str, Any]) -> Any:
    if (allowed := _enum(spec)) is not None:
        return allowed[0]
    kind = _type(spec)
    return {"string": "x", "integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}.get(kind, "x")


def _values_for(spec: Mapping[str, Any], strings: list[str], numbers: list[Any]) -> Iterator[Any]:
    """Every pool value of the argument's type (an array gets each string alone in a list)."""
    if (allowed := _enum(spec)) is not None:
        yield from allowed
        return
    kind = _type(spec)
    if kind == "string":
        yield from strings
    elif kind in ("integer", "number"):
        yield from (n for n in numbers if kind == "number" or isinstance(n, int))
    elif kind == "boolean":
        yield from (True, False)
    elif kind == "array":
        items = spec.get("items")
        item_kind = _type(items) if isinstance(items, Mapping) else "string"
        if item_kind == "string":
            yield from ([s] for s in strings)
        elif item_kind in ("integer", "number"):
            yield from ([n] for n in numbers)


def _random_value(spec: Mapping[str, Any], strings: list[str], numbers: list[Any], rng: random.Random) -> Any:
    if (allowed := _enum(spec)) is not None:
        return rng.choice(allowed)
    kind = _type(spec)
    if kind == "string":
        return rng.choice(strings)
    if kind == "integer":
        return rng.choice([n for n in numbers if isinstance(n, int)])
    if kind == "number":
        return rng.choice(numbers)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [rng.choice(strings) for _ in range(rng.randint(1, 3))]
    if kind == "object":
        return {key: _random_value(sub, strings, numbers, rng) for key, sub in _properties_of(spec).items()}
    return rng.choice(strings)
