"""Layered packs decided synchronously: the pre-execute chain and the guards, no event loop.

The semantics are exactly those of the packs installed on a registry (install.py): layers in
order, deny and ask end the chain, a final allow ends it, a non-final allow beats the closing
default (the latest layer's allow names the decision), the strictest default closes the chain,
and every layer's guards apply unless pre-execute denied. Tests pin the equivalence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .decisions import Allow, Ask, Deny, PreDecision, Source, SourceKind
from .frozen import FrozenDict, freeze
from .packs import Pack
from .rules import EXPLAIN, RuleStage, check_guards, decide_pre

DEFAULT_ALLOW = Allow(Source(SourceKind.DEFAULT, "end of chain"))


def strictness(decision: PreDecision) -> int:
    """How strict a closing default is: deny over ask over allow."""
    return 2 if isinstance(decision, Deny) else 1 if isinstance(decision, Ask) else 0


class Decider:
    """A decision for a call from layered packs, in microseconds."""

    __slots__ = ("_guard", "_pre", "default", "packs")

    def __init__(self, packs: Sequence[Pack], *, default: PreDecision | None = None) -> None:
        self.packs = tuple(packs)
        defaults = [p.default for p in self.packs]
        strictest = max(defaults, key=strictness) if defaults else DEFAULT_ALLOW
        self.default: PreDecision = default if default is not None else strictest
        self._pre = tuple(p.index[RuleStage.PRE_EXECUTE] for p in self.packs)
        self._guard = tuple(p.index[RuleStage.GUARD] for p in self.packs)

    def decide(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, agent: str = "agent", call_id: str = ""
    ) -> PreDecision:
        """Allow, deny or ask for one call (arguments are frozen here; pass frozen ones to skip it)."""
        args = arguments if isinstance(arguments, FrozenDict) else freeze(arguments or {})
        return self.decide_document(name, FrozenDict(name=name, arguments=args, agent=agent, call_id=call_id))

    def decide_document(self, name: str, document: FrozenDict) -> PreDecision:
        """The decision for a prepared call document (name, arguments, agent, call_id)."""
        decision = self.pre(name, document)
        if isinstance(decision, Deny):
            return decision
        return self.guards(name, document) or decision

    def pre(self, name: str, document: FrozenDict) -> PreDecision:
        """The pre-execute chain of every layer, closed by the default."""
        explain = EXPLAIN.get()
        decision: PreDecision | None = None
        allowed_by: Source | None = None
        for index in self._pre:
            rules = index.for_tool(name)
            if not rules:
                continue
            found, allowed = decide_pre(rules, document, explain)
            allowed_by = allowed or allowed_by
            if found is not None:
                decision = found
                break
        if decision is None:
            decision = Allow(allowed_by) if allowed_by is not None else self.default
        return decision

    def guards(self, name: str, document: FrozenDict) -> Deny | None:
        """The first red line of any layer that fires, or None."""
        explain = EXPLAIN.get()
        for index in self._guard:
            rules = index.for_tool(name)
            if rules:
                red_line = check_guards(rules, document, explain)
                if red_line is not None:
                    return red_line
        return None
