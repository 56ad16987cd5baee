"""Dry-run recorded calls against packs: one record per input line, in order, nothing dropped.

Records that carry a `session_id` are replayed session by session: every record of a session is
decided in one work unit, in record order, against a session store of that unit (fresh for each
run), at the record's `time` when it has one, so session rules decide as they did live. Units hold
whole sessions (`units`), so workers and Dask partitions never split one; the output is put back
in input order (`in_order`).
"""

from __future__ import annotations

import heapq
import json
import math
import secrets
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from policyengine.enforce.decision_point import DecisionPoint, Question
from policyengine.enforce.evaluate import Evaluation, call_for
from policyengine.enforce.install import PolicyLayers, wrapping
from policyengine.errors import UsageError
from policyengine.packs.loader import catalog_for
from policyengine.packs.rules import Mode, RuleFailure
from policyengine.runtime.registry import Registry
from policyengine.tools.definition import ToolDefinition
from policyengine.values.decisions import Source, SourceKind
from policyengine.values.frozen import freeze
from policyengine.values.results import RULE_STAGES, MonitorHit, Stage, Would
from policyengine.values.session import Entry, SessionState

MAX_LINE_BYTES = 1 << 20  # 1 MiB: a recorded call larger than this is refused, not parsed
CHUNK = 2000
DRY_RUN = Source(SourceKind.REGISTRY, "dry-run")  # named by a denial for a fault of the replay itself


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


class ReplayStore:
    """The sessions of one work unit, in memory: whole sessions, emptied when the unit is done.

    It remembers the entries each call appended (`drain`), so a record can say which label
    rules labelled it. The key is random per process: fingerprints never leave it.
    """

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)
        self.states: dict[str, SessionState] = {}
        self.appended: list[Entry] = []

    @property
    def key(self) -> bytes:
        """The fingerprint key."""
        return self._key

    def load(self, session_id: str) -> SessionState:
        """The session's state so far (a new one for an id not seen in this unit)."""
        state = self.states.get(session_id)
        if state is None:
            state = self.states[session_id] = SessionState(session_id)
        return state

    def append(self, session_id: str, entry: Entry) -> None:
        """Fold one entry into its session, and keep it for `drain`."""
        self.load(session_id).add(entry)
        self.appended.append(entry)

    def drain(self) -> list[Entry]:
        """The entries appended since the last drain."""
        out, self.appended = self.appended, []
        return out

    def clear(self) -> None:
        """Forget every session: a unit holds its sessions whole, so none continues in another unit."""
        self.states.clear()
        self.appended.clear()


def _with_tools(layers: PolicyLayers, catalog: Mapping[str, ToolDefinition] | None) -> PolicyLayers:
    """The layers, their registry now knowing the catalog's tools."""
    for definition in (catalog or {}).values():
        layers.registry.register(definition)
    return layers


class Engine:
    """The registries of one process, built once, evaluating chunks of lines."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.store, self.other_store = ReplayStore(), ReplayStore()
        self.main = PolicyLayers.install(Registry(sessions=self.store), setup.packs)
        # --tools, else the main packs' `catalog:`; `--against` gets the same one, so a comparison
        # shows what the rules change, not what another catalog would refuse.
        self.catalog = catalog_for(self.main.packs, setup.tools)
        _with_tools(self.main, self.catalog)
        self.other = (
            _with_tools(PolicyLayers.install(Registry(sessions=self.other_store), setup.against), self.catalog)
            if setup.against
            else None
        )
        self.rule_ids = [r.id for p in self.main.packs for r in p.rules]
        self.stages = {r.id: r.stage.value for p in self.main.packs for r in p.rules}

    def run(self, chunk: Sequence[tuple[int, bytes]]) -> list[dict[str, Any]]:
        """Records for a chunk of (line number, raw line), in order."""
        return [self.record(number, raw) for number, raw in chunk]

    def batch(self, chunk: Sequence[tuple[int, bytes]]) -> Batch:
        """A unit's output lines and its share of the summary: workers send back text, not dicts.

        The unit holds its sessions whole (`units`): their state is dropped once it is done.
        """
        summary = Summary(self.rule_ids, self.stages)
        lines = []
        try:
            for (number, _raw), record in zip(chunk, self.run(chunk), strict=True):
                summary.add(record)
                lines.append((number, dump_record(record) + "\n"))
        finally:
            self.store.clear()
            self.other_store.clear()
        return Batch(lines, summary, len(chunk))

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
        session_id = call.get("session_id")
        if session_id is not None:
            ident["session_id"] = session_id
        try:
            record = ident | self._evaluate(self.main, call, self.store)
            if self.other is not None:
                against = self._evaluate(self.other, call, self.other_store)
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

    def _evaluate(self, layers: PolicyLayers, call: dict[str, Any], store: ReplayStore) -> dict[str, Any]:
        result = call.get("result")
        # Post-execute only runs on a result the tool produced: a recorded denial has none.
        ran = isinstance(result, dict) and "value" in result and result.get("outcome", "ok") == "ok"
        session_id = call.get("session_id")
        question = Question(
            call["name"],
            call.get("arguments", {}),
            agent=str(call.get("agent", "agent")),
            call_id=str(call.get("call_id", "")),
            # A recorded cwd wins; else --cwd; else the registry's (the pack's `cwd:`).
            cwd=call["cwd"] if isinstance(call.get("cwd"), str) else self.setup.cwd,
            # Decided as live: in the session's record order (the unit's), at the recorded time.
            session_id=session_id or None,
            now=call.get("time") if session_id else None,
            require_tool=self.catalog is not None and self.setup.unknown_tools == "invalid",
        )
        store.drain()
        # Packs alone decide without an event loop (always so in a dry-run); anything else settles
        # the same coroutine a registry's front ends await.
        evaluation = DecisionPoint(layers.registry, DRY_RUN).decide_blocking(question, result if ran else None)
        fields = _fields(evaluation)
        labelled = [rule for entry in store.drain() for _label, rule in entry.labels]
        if labelled:
            fields["label_rules"] = list(dict.fromkeys(labelled))
        if session_id:
            fields["labels"] = sorted(store.load(session_id).labels)
        watched = list(evaluation.monitored)
        if evaluation.decision.value in ("allow", "ask"):
            wrapped, would_wrap = _execute_rules(layers, call, question.cwd)
            if wrapped:
                fields["execute"] = wrapped
            watched += would_wrap
        if watched:  # only then: a dry-run of packs with no rule in monitor mode writes what it always wrote
            fields["monitored"] = [hit.to_json() for hit in watched]
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
    if "session_id" in call and not (isinstance(call["session_id"], str) and call["session_id"]):
        return None, f"`session_id` must be a non-empty string, got {json.dumps(call['session_id'])[:60]}"
    moment = call.get("time")
    if moment is not None and not (
        isinstance(moment, int | float) and not isinstance(moment, bool) and math.isfinite(moment)
    ):
        return None, f"`time` must be seconds since the epoch (a number), got {json.dumps(moment)[:60]}"
    return call, None


def session_of(raw: bytes) -> str | None:
    """The session id a raw line carries, or None (a line that does not parse has none)."""
    if b"session_id" not in raw and b"\\u" not in raw:  # most lines: no need to parse them twice
        return None
    try:
        call = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    found = call.get("session_id") if isinstance(call, dict) else None
    return found if isinstance(found, str) and found else None


def units(lines: Sequence[tuple[int, bytes]], size: int | None = None) -> list[list[tuple[int, bytes]]]:
    """The input cut into work units of about `size` lines, each holding every line of its sessions.

    Lines without a session are cut as consecutive slices (`size`: CHUNK); a session's lines all go to the unit
    where the session first appears, in input order. Unit k holds every line numbered from its
    first line up to the next unit's first line that no earlier unit took.
    """
    size = size or CHUNK
    out: list[list[tuple[int, bytes]]] = []
    home: dict[str, list[tuple[int, bytes]]] = {}
    fresh = size  # lines the current unit took that no earlier session called for
    for line in lines:
        session = session_of(line[1])
        unit = home.get(session) if session is not None else None
        if unit is None:
            if fresh >= size:
                out.append([])
                fresh = 0
            unit = out[-1]
            fresh += 1
            if session is not None:
                home[session] = unit
        unit.append(line)
    return out


def in_order(starts: Sequence[int], batches: Iterable[Batch]) -> Iterator[Batch]:
    """The units' batches (in unit order) as batches of text in input order.

    `starts[k]` is unit k's first line number: once units 0..k are done, every line before
    unit k+1's first is known and is released.
    """
    pending: list[tuple[int, str]] = []
    for k, batch in enumerate(batches):
        for item in batch.lines:
            heapq.heappush(pending, item)
        until = starts[k + 1] if k + 1 < len(starts) else math.inf
        out = []
        while pending and pending[0][0] < until:
            out.append(heapq.heappop(pending)[1])
        yield Batch([(0, "".join(out))], batch.summary, batch.size)


def _execute_rules(layers: PolicyLayers, call: dict[str, Any], cwd: str | None) -> tuple[list[str], list[MonitorHit]]:
    """Ids of the execute rules that would wrap this call's body (deadlines, retries), and those in monitor mode."""
    name = call["name"]
    tool = layers.registry.tools.get(name)
    tags = tool.tags if tool is not None else frozenset()
    candidates = [r for p in layers.packs for r in p.rules_for(Stage.EXECUTE, name, tags)]
    if not candidates:
        return [], []
    arguments = freeze(call.get("arguments", {}))
    agent, call_id = str(call.get("agent", "agent")), str(call.get("call_id", ""))
    document = call_for(layers.registry, name, arguments, agent, call_id, cwd).document
    out: list[str] = []
    watched: list[MonitorHit] = []
    for rule in candidates:
        try:
            applies = rule.applies(document)
        except Exception as error:  # a failing condition would fail the call closed at run time
            if rule.mode is Mode.MONITOR:  # as the wrapper records it (enforce/install.py)
                watched.append(MonitorHit(rule.source, rule.stage, Would.DENY, str(RuleFailure(rule, error))))
                continue
            applies = True
        if applies and rule.mode is Mode.MONITOR:  # recorded as a monitor hit: it would wrap, it does not
            watched.append(MonitorHit(rule.source, rule.stage, Would.WRAP, wrapping(rule)))
        elif applies:
            out.append(rule.id)
    return out, watched


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
    """Consecutive slices of the input (for what needs no session kept whole: spellings, tests)."""
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
    """The output of one unit: its record lines with their line numbers, and its summary counts."""

    lines: list[tuple[int, str]]
    summary: Summary
    size: int

    @property
    def text(self) -> str:
        """The record lines as one text, in the order held."""
        return "".join(text for _number, text in self.lines)


def evaluate_all(engine: Engine, lines: Sequence[tuple[int, bytes]], workers: int) -> Iterator[Batch]:
    """Batches of record lines in input order, from units evaluated here or on a pool of forked workers."""
    parts = units(lines)
    starts = [unit[0][0] for unit in parts]
    if workers <= 1 or len(parts) <= 1:
        yield from in_order(starts, map(engine.batch, parts))
        return
    import multiprocessing

    global _ENGINE
    _ENGINE = engine  # forked workers inherit the loaded packs: no reload per worker
    context = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    initializer = None if context.get_start_method() == "fork" else _init
    with context.Pool(workers, initializer=initializer, initargs=(engine.setup,)) as pool:
        yield from in_order(starts, pool.imap(_work, parts))  # imap keeps unit order


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
        # Calls per (rule, stage, would) of the rules in monitor mode, for the packs and for --against's.
        self.monitored: Counter[tuple[str, str, str]] = Counter()
        self.against_monitored: Counter[tuple[str, str, str]] = Counter()

    def merge(self, other: Summary) -> None:
        """Add another unit's counts."""
        self.calls += other.calls
        self.decisions.update(other.decisions)
        self.hits.update(other.hits)
        self.reasons.update(other.reasons)
        self.post.update(other.post)
        self.monitored.update(other.monitored)
        self.against_monitored.update(other.against_monitored)
        for rule, lines in other.changed.items():
            # Sorted: a unit holding a session takes its lines out of input order.
            self.changed[rule] = sorted(self.changed[rule] + lines)

    def add(self, record: dict[str, Any]) -> None:
        """Count one record."""
        self.calls += 1
        self.decisions[record["decision"]] += 1
        if record.get("rule") in self._known:
            self.hits[record["rule"]] += 1
        for rule in (record.get("rewrites") or []) + (record.get("execute") or []) + (record.get("label_rules") or []):
            self.hits[rule] += 1
        if record.get("post"):
            self.post[record["post"]] += 1
        _count_monitored(self.monitored, record)
        if isinstance(record.get("against"), dict):
            _count_monitored(self.against_monitored, record["against"])
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
        watched = {rule for rule, _stage, _would in self.monitored}
        never = [r for r in self.rule_ids if r not in self.hits and r not in watched]
        # A post-execute rule only meets calls whose recorded result post-execute reviewed: with none,
        # it was not tried, which says nothing about whether it would ever apply.
        reviewed = sum(self.post.values())
        untried = [] if reviewed else [r for r in never if self.stages.get(r) == Stage.POST_EXECUTE.value]
        out = {
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
        # Only with rules in monitor mode: the summary of packs without any is what it always was.
        if self.monitored:
            out["monitored"] = _monitored_json(self.monitored)
        if self.against_monitored:
            out["against_monitored"] = _monitored_json(self.against_monitored)
        return out


def _count_monitored(counts: Counter[tuple[str, str, str]], fields: Mapping[str, Any]) -> None:
    """Count a record's monitor hits: one call per (rule, stage, would)."""
    for key in {(h["rule"], h["stage"], h["would"]) for h in fields.get("monitored") or ()}:
        counts[key] += 1


def _monitored_json(counts: Counter[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """Calls per rule in monitor mode and what it would have done, most first."""
    return [
        {"rule": rule, "stage": stage, "would": would, "calls": n} for (rule, stage, would), n in counts.most_common()
    ]
