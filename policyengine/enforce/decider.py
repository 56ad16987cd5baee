"""Layered packs decided synchronously: the pre-execute chain and the guards, no event loop.

The semantics are exactly those of the packs installed on a registry (install.py): layers in
order, deny and ask end the chain, a final allow ends it, a non-final allow beats the closing
default (the latest layer's allow names the decision), the strictest default closes the chain,
and every layer's guards apply unless pre-execute denied. Tests pin the equivalence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from policyengine.packs.loader import Pack
from policyengine.packs.rule_plans import Plan, plan_for
from policyengine.packs.rules import (
    EXPLAIN,
    Chain,
    Explain,
    check_guards,
    decide_hits,
    decide_pre,
    guard_hits,
)
from policyengine.values.call import call_document
from policyengine.values.decisions import Allow, Deny, PreDecision, Source, SourceKind, strictness
from policyengine.values.frozen import FrozenDict, freeze
from policyengine.values.results import Stage

DEFAULT_ALLOW = Allow(Source(SourceKind.DEFAULT, "end of chain"))


Stages = tuple[PreDecision, Deny | None]  # pre-execute's decision, then the red line that fired (if any)


class _OneLayer:
    """One layer (the usual single pack): one plan over its pre-execute and guard rules, no layer loop.

    Bits 0..n-1 of the plan are the pre-execute chain, the bits above are the guards, so a call
    is probed once for both stages (its path normalised and walked once).
    """

    __slots__ = ("default", "guard", "guard_rest", "pre", "pre_mask", "pre_rest", "probe", "width")

    def __init__(self, pre: Chain, guard: Chain, plan: Plan, default: PreDecision) -> None:
        self.pre, self.guard, self.probe, self.default = pre, guard, plan.hits, default
        self.width = len(pre)
        self.pre_mask = (1 << self.width) - 1
        self.pre_rest = plan.rest & self.pre_mask
        self.guard_rest = plan.rest >> self.width

    @classmethod
    def of(cls, pre: tuple[Chain, ...], guard: tuple[Chain, ...], default: PreDecision) -> _OneLayer | None:
        """The shortcut when it applies: at most one chain per stage, and something a plan can index."""
        if len(pre) > 1 or len(guard) > 1:
            return None
        pre_chain, guard_chain = pre[0] if pre else Chain(()), guard[0] if guard else Chain(())
        plan = plan_for([*pre_chain, *guard_chain])
        return None if plan is None else cls(pre_chain, guard_chain, plan, default)

    def stages(self, document: FrozenDict) -> Stages | None:
        """Both stages' answers, or None when the plan is unsure (the caller then goes the general way)."""
        hits = self.probe(document)
        if hits is None:
            return None
        decision = self.default
        mine = hits & self.pre_mask
        if mine | self.pre_rest:
            found, allowed_by = decide_hits(self.pre, mine, self.pre_rest, document)
            if isinstance(found, Deny):
                return found, None
            if found is not None:
                decision = found
            elif allowed_by is not None:
                decision = Allow(allowed_by)
        todo = (hits >> self.width) | self.guard_rest
        return decision, guard_hits(self.guard, todo, document) if todo else None


class _LayerChains(NamedTuple):
    pre: tuple[Chain, ...]
    guard: tuple[Chain, ...]
    one: _OneLayer | None


class Decider:
    """A decision for a call from layered packs, in microseconds."""

    __slots__ = ("_chains", "_guard", "_pre", "_tags", "cwd", "default", "packs")

    # Tool names can come from untrusted recorded calls: the per-name cache is bounded.
    LIMIT = 10_000

    def __init__(
        self,
        packs: Sequence[Pack],
        *,
        default: PreDecision | None = None,
        tags: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        self.packs = tuple(packs)
        defaults = [p.default for p in self.packs]
        strictest = max(defaults, key=strictness) if defaults else DEFAULT_ALLOW
        self.default: PreDecision = default if default is not None else strictest
        self._pre = tuple(p.index[Stage.PRE_EXECUTE] for p in self.packs)
        self._guard = tuple(p.index[Stage.GUARD] for p in self.packs)
        self._chains: dict[str, _LayerChains] = {}
        # Capability tags of the registered tools, for rules that select `tag:NAME`.
        self._tags: Mapping[str, frozenset[str]] = tags or {}
        # Calls that carry no cwd start where the first pack that declares one says.
        self.cwd = next((p.cwd for p in self.packs if p.cwd), None)

    def _chains_for(self, name: str) -> _LayerChains:
        """Each layer's non-empty pre-execute and guard chains for a tool name (cached)."""
        found = self._chains.get(name)
        if found is None:
            if len(self._chains) >= self.LIMIT:
                self._chains.clear()
            tags = self._tags.get(name, frozenset())
            pre = tuple(chain for chain in (index.for_tool(name, tags) for index in self._pre) if chain)
            guard = tuple(chain for chain in (index.for_tool(name, tags) for index in self._guard) if chain)
            found = self._chains[name] = _LayerChains(pre, guard, _OneLayer.of(pre, guard, self.default))
        return found

    def decide(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        agent: str = "agent",
        call_id: str = "",
        cwd: str | None = None,
    ) -> PreDecision:
        """Allow, deny or ask for one call (arguments are frozen here; pass frozen ones to skip it)."""
        args = (
            freeze(arguments)
            if type(arguments) is dict
            else arguments
            if isinstance(arguments, FrozenDict)
            else freeze(arguments or {})
        )
        return self.decide_document(name, call_document(name, args, agent, call_id, cwd or self.cwd))

    def decide_document(self, name: str, document: FrozenDict) -> PreDecision:
        """The decision for a prepared call document (name, arguments, agent, call_id)."""
        decision, red_line = self.stages(name, document)
        return red_line or decision

    def stages(self, name: str, document: FrozenDict) -> Stages:
        """Pre-execute's decision, and the red line that fires after it (None when pre-execute denied)."""
        pre, guard, one = self._chains.get(name) or self._chains_for(name)
        explain = EXPLAIN.get()
        if one is not None and explain is None:
            staged = one.stages(document)
            if staged is not None:
                return staged
        decision = self._decide_pre(pre, document, explain)
        if isinstance(decision, Deny):
            return decision, None
        for rules in guard:
            red_line = check_guards(rules, document, explain)
            if red_line is not None:
                return decision, red_line
        return decision, None

    def pre(self, name: str, document: FrozenDict) -> PreDecision:
        """The pre-execute chain of every layer, closed by the default."""
        return self._decide_pre((self._chains.get(name) or self._chains_for(name))[0], document, EXPLAIN.get())

    def _decide_pre(self, chains: tuple[Chain, ...], document: FrozenDict, explain: Explain | None) -> PreDecision:
        allowed_by: Source | None = None
        for rules in chains:
            found, allowed = decide_pre(rules, document, explain)
            allowed_by = allowed or allowed_by
            if found is not None:
                return found
        return Allow(allowed_by) if allowed_by is not None else self.default
