"""Compiled rules, the per-tool index, and how each stage's rules evaluate (pure functions)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from re import Pattern
from typing import Any

from policyengine.arguments.redact import Redaction
from policyengine.language.expressions import Expression, Template
from policyengine.language.tool_names import compile_tool_patterns, fold_tool_name
from policyengine.packs.rule_plans import Plan, Predicate, plan_for, predicate_of
from policyengine.values.decisions import Accept, AcceptValue, Allow, Ask, Block, Deny, PreDecision, Source
from policyengine.values.frozen import FrozenDict, freeze
from policyengine.values.problems import Location
from policyengine.values.results import MonitorHit, Stage, Would, monitor_hit


class Mode(enum.Enum):
    """Whether a rule enforces what it decides, or only records what it would have done (docs/rules.md)."""

    ENFORCE = "enforce"
    MONITOR = "monitor"


class RuleDecision(enum.Enum):
    """What a pre-execute rule decides."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class ToolMatcher:
    """Exact tool names, glob patterns and capability tags (`tag:NAME`), expanded from @lists at load time.

    Names and globs are compared folded (docs/rules.md): `deleteFile`, `Delete-File` and `delete_file`
    are one tool name, so no spelling of a name reaches a tool the rules name in another.
    """

    names: frozenset[str]
    globs: tuple[str, ...]
    tags: frozenset[str] = frozenset()
    folded: frozenset[str] = field(init=False, repr=False, compare=False)
    pattern: Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "folded", frozenset(map(fold_tool_name, self.names)))
        object.__setattr__(self, "pattern", compile_tool_patterns(self.globs))

    def matches(self, tool: str, tags: frozenset[str] = frozenset()) -> bool:
        """True when the rule applies to `tool` (whose definition carries `tags`)."""
        folded = fold_tool_name(tool)
        return (
            folded in self.folded
            or (self.pattern is not None and self.pattern.fullmatch(folded) is not None)
            or bool(self.tags & tags)
        )


@dataclass(frozen=True, slots=True, eq=False)
class Rule:
    """Fields every rule has; `source` names the rule, its pack and the pack digest."""

    id: str
    stage: Stage
    tools: ToolMatcher
    when: Expression | None
    source: Source
    description: str = ""
    location: Location | None = None
    # MONITOR: evaluated as usual, enforces nothing; a match is recorded as a MonitorHit (values/results.py)
    mode: Mode = Mode.ENFORCE
    # pre-execute and guard
    verb: RuleDecision | None = None
    final: bool = False
    reason: Template | None = None
    # execute
    timeout: float | None = None
    retries: int = 0
    backoff: float = 0.0
    # post-execute: exactly one of these
    redactions: tuple[Redaction, ...] = ()
    content: Template | None = None
    block: Template | None = None
    # pre-execute and post-execute: the labels a matching call or result adds to its session
    labels: tuple[str, ...] = ()
    # The condition as one closure, bound at load time: the hot loop calls it directly.
    applies: Callable[[Any], bool] = field(init=False, repr=False, compare=False)
    # The condition in a form a chain's Plan can test together with its neighbours (rule_plans.py).
    predicate: Predicate | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "applies", _always if self.when is None else self.when.tester())
        object.__setattr__(self, "predicate", predicate_of(self.when))

    def message(self, document: Any, fallback: str) -> str:
        """The rule's reason filled from the document, or a fallback naming the rule."""
        return self.reason.render(document) if self.reason else fallback


def _always(_document: Any) -> bool:
    return True


class RuleFailure(Exception):
    """A rule's condition or rewrite raised at run time; the stage fails closed."""

    def __init__(self, rule: Rule, error: Exception) -> None:
        super().__init__(f"rule {rule.id!r} could not be evaluated ({type(error).__name__}: {error}); failing closed")
        self.rule = rule


Explain = Callable[[Rule, Any], None]

# Set by `explain` and the policy test runner to hear every rule evaluated, with what its
# condition returned (or the exception); None on the hot path of real calls.
EXPLAIN: ContextVar[Explain | None] = ContextVar("policyengine_explain", default=None)


class Chain(tuple[Rule, ...]):
    """The rules one tool meets in one stage, in order, with the plan that tests them together."""

    plan: Plan | None

    def __new__(cls, rules: Sequence[Rule], plan: Plan | None = None) -> Chain:
        chain = super().__new__(cls, rules)
        chain.plan = plan
        return chain


@dataclass
class RuleIndex:
    """Rules of one stage, looked up by tool name (and tags); each is resolved once and cached."""

    rules: tuple[Rule, ...]
    cache: dict[str | tuple[str, frozenset[str]], Chain] = field(default_factory=dict)
    limit: int = 10_000
    # Names that meet the same rules share one chain (and its plan): unknown names from
    # recorded calls usually meet only the "*" rules.
    chains: dict[tuple[int, ...], Chain] = field(default_factory=dict)
    # Built at load: positions of the rules naming each tool exactly (by folded name), and of the rules with
    # globs, so resolving a new name costs the glob rules, not the whole pack.
    by_name: dict[str, list[int]] = field(init=False, repr=False)
    globbed: tuple[int, ...] = field(init=False, repr=False)
    tagged: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_name = {}
        for position, rule in enumerate(self.rules):
            for name in rule.tools.folded:
                self.by_name.setdefault(name, []).append(position)
        self.globbed = tuple(i for i, rule in enumerate(self.rules) if rule.tools.globs)
        self.tagged = tuple(i for i, rule in enumerate(self.rules) if rule.tools.tags)

    def for_tool(self, tool: str, tags: frozenset[str] = frozenset()) -> Chain:
        """The rules that can apply to `tool` (whose definition carries `tags`), in order."""
        key: str | tuple[str, frozenset[str]] = (tool, tags) if tags else tool
        hit = self.cache.get(key)
        if hit is None:
            if len(self.cache) >= self.limit:  # names can come from untrusted recorded calls
                self.cache.clear()
                self.chains.clear()
            found = set(self.by_name.get(fold_tool_name(tool), ()))
            found.update(i for i in self.globbed if self.rules[i].tools.matches(tool))
            if tags:
                found.update(i for i in self.tagged if self.rules[i].tools.tags & tags)
            positions = tuple(sorted(found))
            hit = self.chains.get(positions)
            if hit is None:
                rules = [self.rules[i] for i in positions]
                hit = self.chains[positions] = Chain(rules, plan_for(rules))
            self.cache[key] = hit
        return hit


def _test(rule: Rule, document: Any, explain: Explain | None) -> bool:
    """Evaluate a rule's condition, telling `explain`; an error becomes RuleFailure."""
    try:
        hit = rule.applies(document)
    except Exception as error:
        if explain:
            explain(rule, error)
        raise RuleFailure(rule, error) from error
    if explain:
        explain(rule, hit)
    return hit


def _bits(mask: int) -> list[int]:
    """Positions of the set bits, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


_WOULD = {RuleDecision.ALLOW: Would.ALLOW, RuleDecision.DENY: Would.DENY, RuleDecision.ASK: Would.ASK}


def monitored(rule: Rule, would: Would, reason: str | None) -> None:
    """Record what a rule in monitor mode would have done; the call goes on as if it had not matched."""
    monitor_hit(MonitorHit(rule.source, rule.stage, would, reason))


def _monitored_failure(rule: Rule, error: Exception) -> None:
    """A rule in monitor mode that raised: enforced, it would have failed closed (denied, or blocked the result)."""
    failure = error if isinstance(error, RuleFailure) else RuleFailure(rule, error)
    monitored(rule, Would.BLOCK if rule.stage is Stage.POST_EXECUTE else Would.DENY, str(failure))


def _monitored_pre(rule: Rule, document: Any) -> None:
    """What a matching pre-execute rule in monitor mode would have decided."""
    assert rule.verb is not None  # a pre-execute rule without a verb labels, and sits in the labelling index
    try:
        found = _pre_hit(rule, document)
        reason = getattr(found, "reason", None)
    except Exception as error:  # its reason failed to render: enforced, the call would have been denied
        reason = str(RuleFailure(rule, error))
    monitored(rule, _WOULD[rule.verb], reason)


def _pre_hit(rule: Rule, document: Any) -> PreDecision | None:
    """What a matching pre-execute rule decides; None for a non-final allow (the chain goes on)."""
    if rule.verb is RuleDecision.ALLOW:
        return Allow(rule.source) if rule.final else None
    if rule.verb is RuleDecision.DENY:
        return Deny(rule.message(document, f"Denied by rule {rule.id}."), rule.source)
    return Ask(rule.message(document, f"Rule {rule.id} asks for approval."), rule.source)


def decide_pre(
    rules: Sequence[Rule], document: Any, explain: Explain | None = None
) -> tuple[PreDecision | None, Source | None]:
    """(decision that ends the chain or None, the first non-final allow that matched)."""
    plan = rules.plan if explain is None and type(rules) is Chain else None
    hits = plan.hits(document) if plan is not None else None
    if plan is not None and hits is not None:
        if not hits | plan.rest:
            return None, None  # the common case: no rule of the chain matches
        return decide_hits(rules, hits, plan.rest, document)
    return _decide(rules, range(len(rules)), 0, document, explain)


def decide_hits(rules: Sequence[Rule], hits: int, rest: int, document: Any) -> tuple[PreDecision | None, Source | None]:
    """decide_pre from a plan's answer: the fused rules that matched (`hits`), the rules it cannot test (`rest`)."""
    return _decide(rules, _bits(hits | rest), hits, document, None)


def _decide(
    rules: Sequence[Rule], positions: Iterable[int], hits: int, document: Any, explain: Explain | None
) -> tuple[PreDecision | None, Source | None]:
    """decide_pre over the rules at `positions`; those in `hits` are known to match, the others are tested."""
    # With explain, _test has already made any error a RuleFailure; without, nothing per rule is spent on it.
    failures: type[Exception] = Exception if explain is None else RuleFailure
    allowed_by: Source | None = None
    for position in positions:
        rule = rules[position]
        if not hits >> position & 1:
            try:
                hit = rule.applies(document) if explain is None else _test(rule, document, explain)
            except failures as error:
                if rule.mode is Mode.MONITOR:
                    _monitored_failure(rule, error)
                    continue
                failure = error if explain is not None else RuleFailure(rule, error)
                return Deny(str(failure), rule.source), allowed_by
            if not hit:
                continue
        if rule.mode is Mode.MONITOR:
            _monitored_pre(rule, document)
            continue
        found = _pre_hit(rule, document)
        if found is not None:
            return found, allowed_by
        allowed_by = allowed_by or rule.source
    return None, allowed_by


def check_guards(rules: Sequence[Rule], document: Any, explain: Explain | None = None) -> Deny | None:
    """The first guard rule that fires, as a Deny naming it; evaluation errors deny."""
    plan = rules.plan if explain is None and type(rules) is Chain else None
    hits = plan.hits(document) if plan is not None else None
    if plan is not None and hits is not None:
        todo = hits | plan.rest
        return guard_hits(rules, todo, document) if todo else None
    return _first_red_line(rules, document, explain)


def guard_hits(rules: Sequence[Rule], todo: int, document: Any) -> Deny | None:
    """check_guards from a plan's answer: only the rules at the positions in `todo` can fire."""
    return _first_red_line([rules[i] for i in _bits(todo)], document, None)


def _first_red_line(rules: Sequence[Rule], document: Any, explain: Explain | None) -> Deny | None:
    for rule in rules:
        try:
            hit = _test(rule, document, explain)
        except RuleFailure as failure:
            if rule.mode is Mode.MONITOR:
                _monitored_failure(rule, failure)
                continue
            return Deny(str(failure), rule.source)
        if not hit:
            continue
        if rule.mode is Mode.MONITOR:
            try:
                reason = rule.message(document, f"Red line {rule.id}.")
            except Exception as error:  # enforced, the reason's failure would have denied too
                reason = str(RuleFailure(rule, error))
            monitored(rule, Would.DENY, reason)
            continue
        return Deny(rule.message(document, f"Red line {rule.id}."), rule.source)
    return None


def post_document(call_document: FrozenDict, value: Any, content: Any) -> FrozenDict:
    """The post-execute document: the call plus `result.value` and `result.content`."""
    return FrozenDict({**call_document, "result": FrozenDict(value=value, content=content)})


def _monitor_post(rule: Rule, document: FrozenDict, value: Any, explain: Explain | None) -> None:
    """What a matching post-execute rule in monitor mode would have done to the result; nothing is changed."""
    try:
        if not _test(rule, document, explain):
            return
        if rule.block is not None:
            monitored(rule, Would.BLOCK, rule.block.render(document))
        elif rule.content is not None:
            monitored(rule, Would.REWRITE, "would replace the content the model reads")
        else:
            rewritten = value
            for redaction in rule.redactions:
                rewritten = redaction.apply(rewritten)
            if rewritten != value:  # as enforced: a redaction that finds nothing is no rewrite
                monitored(rule, Would.REWRITE, "would redact the result")
    except Exception as error:  # a failing condition (RuleFailure) or rewrite: enforced, the result is blocked
        _monitored_failure(rule, error)


def rewrite_post(
    rules: Sequence[Rule], call_document: FrozenDict, value: Any, content: Any, explain: Explain | None = None
) -> list[Accept | AcceptValue | Block]:
    """Each matching rule's rewrite, in order; each rule sees the value as rewritten so far.

    A block ends the list; an evaluation error becomes a block naming the rule.
    """
    out: list[Accept | AcceptValue | Block] = []
    for rule in rules:
        document = post_document(call_document, value, content)
        if rule.mode is Mode.MONITOR:
            _monitor_post(rule, document, value, explain)
            continue
        try:
            if not _test(rule, document, explain):
                continue
            if rule.block is not None:
                out.append(Block(rule.block.render(document), rule.source))
                return out
            if rule.content is not None:
                content = freeze([{"type": "text", "text": rule.content.render(document)}])
                out.append(Accept(content, rule.source))
                continue
            rewritten = value
            for redaction in rule.redactions:
                rewritten = redaction.apply(rewritten)
            if rewritten != value:  # a rewrite that changed nothing is not worth re-validating
                value = rewritten
                out.append(AcceptValue(value, rule.source))
        except RuleFailure as failure:
            out.append(Block(str(failure), rule.source))
            return out
        except Exception as error:
            out.append(Block(str(RuleFailure(rule, error)), rule.source))
            return out
    return out
