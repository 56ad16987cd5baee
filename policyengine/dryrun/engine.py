"""Dry-run recorded calls against packs: one record per input line, in order, nothing dropped."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policyengine.enforce.evaluate import Evaluation, call_for, evaluate, evaluate_now
from policyengine.enforce.install import PolicyLayers
from policyengine.errors import UsageError
from policyengine.packs.loader import catalog_for
from policyengine.runtime.registry import Registry
from policyengine.tools.definition import ToolDefinition
from policyengine.values.frozen import freeze
from policyengine.values.results import RULE_STAGES, Stage

MAX_LINE_BYTES = 1 << 20  # 1 MiB: a recorded call larger than this is refused, not parsed
CHUNK = 2000


@dataclass(frozen=True)
class Setup:
    """What every worker needs to rebuild the same registries (picklable)."""

    packs: tuple[str, ...]
    against: tuple[str, ...]
    tools: str | None  # --tools FILE; None: the catalogs the packs declare (`catalog:`), if any
    max_line_bytes: int = MAX_LINE_BYTES
    cwd: str | None = None
    # With a catalog, a tool it lacks is `invalid` (as `test` and `explain` say); `decide` evaluates
    # it without validation, as the Claude Code hook decides tools outside its catalog.
    unknown_tools: str = "invalid"


def _with_tools(layers: PolicyLayers, catalog: Mapping[str, ToolDefinition] | None) -> PolicyLayers:
    """The layers, their registry now knowing the catalog's tools."""
    for definition in (catalog or {}).values():
        layers.registry.register(definition)
    return layers


class Engine:
    """The registries of one process, built once, evaluating chunks of lines."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.main = PolicyLayers.install(Registry(), setup.packs)
        # --tools, else the main packs' `catalog:`; `--against` gets the same one, so a comparison
        # shows what the rules change, not what another catalog would refuse.
        self.catalog = catalog_for(self.main.packs, setup.tools)
        _with_tools(self.main, self.catalog)
        self.other = (
            _with_tools(PolicyLayers.install(Registry(), setup.against), self.catalog) if setup.against else None
        )
        self.rule_ids = [r.id for p in self.main.packs for r in p.rules]
        self.stages = {r.id: r.stage.value for p in self.main.packs for r in p.rules}

    def run(self, chunk: Sequence[tuple[int, bytes]]) -> list[dict[str, Any]]:
        """Records for a chunk of (line number, raw line), in order."""
        return [self.record(number, raw) for number, raw in chunk]

    def batch(self, chunk: Sequence[tuple[int, bytes]]) -> Batch:
        """A chunk's output lines and its share of the summary: workers send back text, not dicts."""
        summary = Summary(self.rule_ids, self.stages)
        lines = []
        for record in self.run(chunk):
            summary.add(record)
            lines.append(dump_record(record) + "\n")
        return Batch("".join(lines), summary, len(chunk))

    def record(self, number: int, raw: bytes) -> dict[str, Any]:
        """The output record for one input line; a malformed line becomes an error record."""
        call, problem = parse_line(raw, self.setup.max_line_bytes)
        if call is None:
            return {
                "line": number,
                "call_id": None,
                "name": None,
                "decision": "error",
                "stage": "input",
                "rule": None,
                "reason": problem,
            }
        ident = {"line": number, "call_id": call.get("call_id"), "name": call["name"]}
        try:
            record = ident | self._evaluate(self.main, call)
            if self.other is not None:
                against = self._evaluate(self.other, call)
                record["against"] = against
                record["changed"] = _changed(record, against)
        except Exception as error:  # an engine fault on one line must not lose the others
            record = ident | {
                "decision": "error",
                "stage": None,
                "rule": None,
                "reason": f"evaluation failed: {type(error).__name__}: {error}",
            }
        return record

    def _evaluate(self, layers: PolicyLayers, call: dict[str, Any]) -> dict[str, Any]:
        result = call.get("result")
        # Post-execute only runs on a result the tool produced: a recorded denial has none.
        ran = isinstance(result, dict) and "value" in result and result.get("outcome", "ok") == "ok"
        options: dict[str, Any] = {
            "agent": str(call.get("agent", "agent")),
            "call_id": str(call.get("call_id", "")),
            "result": result if ran else None,
            "require_tool": self.catalog is not None and self.setup.unknown_tools == "invalid",
            # A recorded cwd wins; else --cwd; else the registry's (the pack's `cwd:`).
            "cwd": call["cwd"] if isinstance(call.get("cwd"), str) else self.setup.cwd,
        }
        arguments = call.get("arguments", {})
        # Packs alone decide without an event loop (always so in a dry-run); anything else
        # goes through the same async evaluation a registry uses.
        evaluation = evaluate_now(layers.registry, call["name"], arguments, **options)
        if evaluation is None:
            evaluation = asyncio.run(evaluate(layers.registry, call["name"], arguments, **options))
        fields = _fields(evaluation)
        if evaluation.decision.value in ("allow", "ask"):
            wrapping = _execute_rules(layers, call, options["cwd"])
            if wrapping:
                fields["execute"] = wrapping
        return fields


def parse_line(raw: bytes, limit: int = MAX_LINE_BYTES) -> tuple[dict[str, Any] | None, str | None]:
    """A recorded call from one line, or (None, what is wrong with it)."""
    if len(raw) > limit:
        return None, f"line is {len(raw):,} bytes, over the {limit:,}-byte limit; not parsed"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"invalid UTF-8 at byte {error.start}"
    if not text.strip():
        return None, "empty line"
    try:
        call = json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"invalid JSON: {error.msg} (column {error.colno})"
    except RecursionError:
        return None, "invalid JSON: nested too deeply"
    except ValueError as error:  # e.g. an integer of more digits than Python will convert
        return None, f"invalid JSON: {error}"
    if not isinstance(call, dict):
        return None, f"a recorded call is a JSON object, got {type(call).__name__}"
    if not isinstance(call.get("name"), str) or not call["name"]:
        return None, "missing or non-string `name`"
    if not isinstance(call.get("arguments", {}), dict):
        return None, f"`arguments` must be an object, got {type(call['arguments']).__name__}"
    return call, None


def _execute_rules(layers: PolicyLayers, call: dict[str, Any], cwd: str | None) -> list[str]:
    """Ids of the execute rules that would wrap this call's body (deadlines, retries)."""
    name = call["name"]
    tool = layers.registry.tools.get(name)
    tags = tool.tags if tool is not None else frozenset()
    candidates = [r for p in layers.packs for r in p.rules_for(Stage.EXECUTE, name, tags)]
    if not candidates:
        return []
    arguments = freeze(call.get("arguments", {}))
    agent, call_id = str(call.get("agent", "agent")), str(call.get("call_id", ""))
    document = call_for(layers.registry, name, arguments, agent, call_id, cwd).document
    out = []
    for rule in candidates:
        try:
            if rule.applies(document):
                out.append(rule.id)
        except Exception:  # a failing condition would fail the call closed at run time
            out.append(rule.id)
    return out


def dump_record(record: dict[str, Any]) -> str:
    """One output line; escaped to ASCII when the input held text UTF-8 cannot carry."""
    text = json.dumps(record, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \ud800 escape in the input
        text = json.dumps(record, ensure_ascii=True, default=str)
    return text


def _fields(ev: Evaluation) -> dict[str, Any]:
    out: dict[str, Any] = {
        "decision": ev.decision.value,
        "stage": ev.stage.value if ev.stage else None,
        "rule": ev.source.rule_id if ev.source else None,
        "default": bool(ev.source and ev.source.rule_id is None),
        "pack": ev.source.pack if ev.source else None,
        "reason": ev.reason,
    }
    if ev.post is not None:
        out["post"] = ev.post.value
        out["rewrites"] = [s.name for s in ev.rewrites]
        if ev.feedback is not None:
            out["feedback"] = ev.feedback
        if ev.post.value == "rewritten":
            out["value"] = ev.value
    return out


def _changed(record: dict[str, Any], against: dict[str, Any]) -> bool:
    keys = ("decision", "rule", "post", "rewrites", "value")
    return any(record.get(k) != against.get(k) for k in keys)


def read_lines(path: str) -> list[tuple[int, bytes]]:
    """Every line with its 1-based number; a final line without a newline counts too."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [(i + 1, line.rstrip(b"\r")) for i, line in enumerate(lines)]


def chunks(lines: Sequence[tuple[int, bytes]], size: int = CHUNK) -> Iterator[Sequence[tuple[int, bytes]]]:
    """Consecutive slices of the input."""
    for start in range(0, len(lines), size):
        yield lines[start : start + size]


_ENGINE: Engine | None = None


def _init(setup: Setup) -> None:
    global _ENGINE
    _ENGINE = Engine(setup)


def _work(chunk: Sequence[tuple[int, bytes]]) -> Batch:
    assert _ENGINE is not None
    return _ENGINE.batch(chunk)


@dataclass
class Batch:
    """The output of one chunk: its record lines, in order, and its summary counts."""

    text: str
    summary: Summary
    size: int


def evaluate_all(engine: Engine, lines: Sequence[tuple[int, bytes]], workers: int) -> Iterator[Batch]:
    """Batches for every chunk, in input order, on this process or a pool of forked workers."""
    if workers <= 1 or len(lines) <= CHUNK:
        for chunk in chunks(lines):
            yield engine.batch(chunk)
        return
    import multiprocessing

    global _ENGINE
    _ENGINE = engine  # forked workers inherit the loaded packs: no reload per worker
    context = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    initializer = None if context.get_start_method() == "fork" else _init
    with context.Pool(workers, initializer=initializer, initargs=(engine.setup,)) as pool:
        yield from pool.imap(_work, chunks(lines))  # imap keeps input order


# The stages a summary reports hits for, in pipeline order (a rule's `stage:`).
HIT_STAGES = tuple(stage.value for stage in RULE_STAGES)


class Summary:
    """Counts per decision, hits per rule and stage, rules never hit, top reasons, changes by rule."""

    def __init__(self, rule_ids: Sequence[str], stages: Mapping[str, str] | None = None) -> None:
        self.rule_ids = list(rule_ids)
        self._known = frozenset(self.rule_ids)  # looked up per record: a list scan cost ~10 us on 1,000 rules
        # Rule id -> its stage ("pre-execute", "guard", "execute", "post-execute"), for the hits per stage.
        self.stages = dict(stages or {})
        self.decisions: Counter[str] = Counter()
        self.hits: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.post: Counter[str] = Counter()
        self.changed: dict[str, list[int]] = defaultdict(list)
        self.calls = 0

    def merge(self, other: Summary) -> None:
        """Add another chunk's counts (chunks arrive in input order)."""
        self.calls += other.calls
        self.decisions.update(other.decisions)
        self.hits.update(other.hits)
        self.reasons.update(other.reasons)
        self.post.update(other.post)
        for rule, lines in other.changed.items():
            self.changed[rule].extend(lines)

    def add(self, record: dict[str, Any]) -> None:
        """Count one record."""
        self.calls += 1
        self.decisions[record["decision"]] += 1
        if record.get("rule") in self._known:
            self.hits[record["rule"]] += 1
        for rule in (record.get("rewrites") or []) + (record.get("execute") or []):
            self.hits[rule] += 1
        if record.get("post"):
            self.post[record["post"]] += 1
        if record["decision"] != "allow" and record.get("reason"):
            self.reasons[record["reason"]] += 1
        if record.get("changed"):
            # Group by the rule that made the difference: ours if a rule decided, else theirs.
            candidates = (record.get("rule"), record["against"].get("rule"), *(record.get("rewrites") or ()))
            key = next((r for r in candidates if r), "(default)")
            self.changed[key].append(record["line"])

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON."""
        hits = self.hits.most_common()
        never = [r for r in self.rule_ids if r not in self.hits]
        # A post-execute rule only meets calls whose recorded result post-execute reviewed: with none,
        # it was not tried, which says nothing about whether it would ever apply.
        reviewed = sum(self.post.values())
        untried = [] if reviewed else [r for r in never if self.stages.get(r) == Stage.POST_EXECUTE.value]
        return {
            "calls": self.calls,
            "decisions": dict(self.decisions),
            "post": dict(self.post),
            "hits": dict(hits),
            "hits_by_stage": {
                stage: {rule: n for rule, n in hits if self.stages.get(rule) == stage} for stage in HIT_STAGES
            },
            "never_hit": [r for r in never if r not in untried],
            "not_exercised": untried,
            "top_reasons": [[reason, n] for reason, n in self.reasons.most_common(10)],
            "changed": {rule: lines for rule, lines in sorted(self.changed.items())},
            "changed_calls": sum(len(v) for v in self.changed.values()),
        }
