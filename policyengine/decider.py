"""Layered packs decided synchronously: the pre-execute chain and the guards, no event loop.

The semantics are exactly those of the packs installed on a registry (install.py): layers in
order, deny and ask end the chain, a final allow ends it, a non-final allow beats the closing
default (the latest layer's allow names the decision), the strictest default closes the chain,
and every layer's guards apply unless pre-execute denied. Tests pin the equivalence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .call import call_document
from .decisions import Allow, Ask, Deny, PreDecision, Source, SourceKind
from .frozen import FrozenDict, freeze
from .packs import Pack
from .rules import EXPLAIN, Chain, Explain, RuleStage, check_guards, decide_pre

DEFAULT_ALLOW = Allow(Source(SourceKind.DEFAULT, "end of chain"))


def strictness(decision: PreDecision) -> int:
    """How strict a closing default is: deny over ask over allow."""
    return 2 if isinstance(decision, Deny) else 1 if isinstance(decision, Ask) else 0


class Decider:
    """A decision for a call from layered packs, in microseconds."""

    __slots__ = ("_chains", "_guard", "_pre", "default", "packs")

    # Tool names can come from untrusted recorded calls: the per-name cache is bounded.
    LIMIT = 10_000

    def __init__(self, packs: Sequence[Pack], *, default: PreDecision | None = None) -> None:
        self.packs = tuple(packs)
        defaults = [p.default for p in self.packs]
        strictest = max(defaults, key=strictness) if defaults else DEFAULT_ALLOW
        self.default: PreDecision = default if default is not None else strictest
        self._pre = tuple(p.index[RuleStage.PRE_EXECUTE] for p in self.packs)
        self._guard = tuple(p.index[RuleStage.GUARD] for p in self.packs)
        self._chains: dict[str, tuple[tuple[Chain, ...], tuple[Chain, ...]]] = {}

    def _chains_for(self, name: str) -> tuple[tuple[Chain, ...], tuple[Chain, ...]]:
        """Each layer's non-empty pre-execute and guard chains for a tool name (cached)."""
        found = self._chains.get(name)
        if found is None:
            if len(self._chains) >= self.LIMIT:
                self._chains.clear()
            pre = tuple(chain for chain in (index.for_tool(name) for index in self._pre) if chain)
            guard = tuple(chain for chain in (index.for_tool(name) for index in self._guard) if chain)
            found = self._chains[name] = (pre, guard)
        return found

    def decide(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, agent: str = "agent", call_id: str = ""
    ) -> PreDecision:
        """Allow, deny or ask for one call (arguments are frozen here; pass frozen ones to skip it)."""
        args = arguments if isinstance(arguments, FrozenDict) else freeze(arguments or {})
        return self.decide_document(name, call_document(name, args, agent, call_id))

    def decide_document(self, name: str, document: FrozenDict) -> PreDecision:
        """The decision for a prepared call document (name, arguments, agent, call_id)."""
        pre, guard = self._chains.get(name) or self._chains_for(name)
        explain = EXPLAIN.get()
        decision = self._decide_pre(pre, document, explain)
        if isinstance(decision, Deny):
            return decision
        for rules in guard:
            red_line = check_guards(rules, document, explain)
            if red_line is not None:
                return red_line
        return decision

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

    def guards(self, name: str, document: FrozenDict) -> Deny | None:
        """The first red line of any layer that fires, or None."""
        explain = EXPLAIN.get()
        for rules in self._chains_for(name)[1]:
            red_line = check_guards(rules, document, explain)
            if red_line is not None:
                return red_line
        return None
