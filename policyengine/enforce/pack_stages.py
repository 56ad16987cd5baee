"""Packs as stage objects: what a registry runs when packs alone feed a stage.

A pack installed on a registry is a bundle of listeners (install.py) that can run in any
waterfall, beside listeners written in Python. When every listener of a stage comes from packs,
the registry asks `PACK_STAGES` for that stage's object instead, and these decide the same thing
without a waterfall, timers or awaits: the Decider for pre-execute (and the guards with it, when
they are the same packs: one probe of the call for both), the rule chains for the guards and
post-execute, and the execute waterfall only for tools some execute rule names. Tests pin the
equivalence with the waterfall path (tests/test_decider.py, tests/test_pipeline_shortcuts.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from policyengine.enforce.decider import Decider
from policyengine.packs.loader import Pack
from policyengine.packs.rules import EXPLAIN, Chain, check_guards, rewrite_post
from policyengine.runtime.installation import CompiledStages, LayersByStage, StageContext
from policyengine.runtime.rewrites import apply_rewrite
from policyengine.runtime.run import REGISTRY, Run, describe
from policyengine.runtime.waterfall import Waterfall
from policyengine.values.call import PendingResult, ToolCall
from policyengine.values.decisions import Block, Deny, PreDecision
from policyengine.values.results import Stage


class _ChainsByTool:
    """Each pack's non-empty rule chain of one stage for a tool, resolved once per tool name (bounded)."""

    __slots__ = ("_found", "_packs", "_stage", "_tags")

    def __init__(self, packs: tuple[Pack, ...], stage: Stage, tags: Mapping[str, frozenset[str]]) -> None:
        self._packs, self._stage, self._tags = packs, stage, tags
        self._found: dict[str, tuple[Chain, ...]] = {}

    def __call__(self, name: str) -> tuple[Chain, ...]:
        found = self._found.get(name)
        if found is None:
            if len(self._found) >= Decider.LIMIT:  # names can come from untrusted recorded calls
                self._found.clear()
            tags = self._tags.get(name, frozenset())
            chains = (p.rules_for(self._stage, name, tags) for p in self._packs)
            found = self._found[name] = tuple(c for c in chains if c)
        return found


class PackPreExecute:
    """Pre-execute of layered packs: the Decider, synchronously."""

    synchronous: ClassVar[bool] = True

    def __init__(self, decider: Decider) -> None:
        self.decider = decider

    def decide_sync(self, run: Run) -> PreDecision:
        """The layers' decision, closed by the strictest default."""
        return self.decider.pre(run.call.name, run.call.document)

    async def decide(self, run: Run) -> PreDecision:
        """decide_sync, for callers that await every stage."""
        return self.decide_sync(run)


class PackPreExecuteAndGuards(PackPreExecute):
    """Pre-execute when the guards are the same packs: one probe finds the red line too, for FoundRedLine."""

    def decide_sync(self, run: Run) -> PreDecision:
        """The decision; the red line that fires after it is left on the run."""
        decision, run.red_line = self.decider.stages(run.call.name, run.call.document)
        return decision


class FoundRedLine:
    """The guards when pre-execute already checked them (PackPreExecuteAndGuards): report what it found."""

    synchronous: ClassVar[bool] = True

    def check_sync(self, run: Run) -> Deny | None:
        """The red line pre-execute found, if any."""
        return run.red_line

    async def check(self, run: Run) -> Deny | None:
        """check_sync, for callers that await every stage."""
        return run.red_line


class PackGuards:
    """The guards of layered packs: the first red line of any layer denies; a fault is one."""

    synchronous: ClassVar[bool] = True

    def __init__(self, chains: _ChainsByTool) -> None:
        self.chains = chains

    def check_sync(self, run: Run) -> Deny | None:
        """The first red line, in layer order."""
        explain = EXPLAIN.get()
        document = run.call.document
        for rules in self.chains(run.call.name):
            try:
                # A rule that fails to evaluate is itself a red line (check_guards denies).
                red_line = check_guards(rules, document, explain)
            except Exception as error:  # an engine fault: fail closed like any other guard's
                return Deny(f"guards failed ({describe(error)})", REGISTRY)
            if red_line is not None:
                return red_line
        return None

    async def check(self, run: Run) -> Deny | None:
        """check_sync, for callers that await every stage."""
        return self.check_sync(run)


class PackWrappers:
    """Execute rules of layered packs: the waterfall of their wrappers, only for tools a rule names.

    A pack's wrapper with no rule for the tool only passes the call on, so the body then runs
    alone; the wrappers are the engine's own code and never write to the call.
    """

    trusted: ClassVar[bool] = True

    def __init__(self, chain: Waterfall[object], chains: _ChainsByTool) -> None:
        self.chain, self.chains = chain, chains

    def wraps(self, call: ToolCall) -> bool:
        """Whether any layer has an execute rule for this tool."""
        return bool(self.chains(call.name))


class PackPostExecute:
    """Post-execute of layered packs: each layer's rules in order, rewrites applied as they come."""

    synchronous: ClassVar[bool] = True

    def __init__(self, chains: _ChainsByTool) -> None:
        self.chains = chains

    def review_sync(self, run: Run, pending: PendingResult) -> PendingResult | Block:
        """The result with every rewrite applied, or the first block (a rewrite that fails to apply blocks)."""
        chains = self.chains(run.call.name)
        if not chains:
            return pending
        explain = EXPLAIN.get()
        call = run.call
        for rules in chains:
            for rewrite in rewrite_post(rules, call.document, pending.value, pending.content, explain):
                if isinstance(rewrite, Block):
                    return rewrite
                who = rewrite.source or REGISTRY
                try:
                    pending = apply_rewrite(call.arguments, pending, rewrite, who)
                except Exception as error:
                    return Block(f"{who} failed ({describe(error)}); failing closed", who)
        return pending

    async def review(self, run: Run, pending: PendingResult) -> PendingResult | Block:
        """review_sync, for callers that await every stage."""
        return self.review_sync(run, pending)


class PackStageCompiler:
    """Builds the stage objects above for the stages only packs feed (see StageCompiler)."""

    def compile(self, layers: LayersByStage, context: StageContext) -> CompiledStages:
        """Stage objects over the packs of each stage, in layer order."""
        tags = {n: d.tags for n, d in context.tools.items() if d.tags}
        pre: PackPreExecute | None = None
        guards: FoundRedLine | PackGuards | None = None
        if layers.pre is not None:
            decider = Decider(layers.pre, default=context.closing, tags=tags)
            same = layers.guards is not None and len(layers.guards) == len(layers.pre)
            if same and all(a is b for a, b in zip(layers.pre, layers.guards or (), strict=False)):
                pre, guards = PackPreExecuteAndGuards(decider), FoundRedLine()
            else:
                pre = PackPreExecute(decider)
        if guards is None and layers.guards is not None:
            guards = PackGuards(_ChainsByTool(layers.guards, Stage.GUARD, tags))
        execute = (
            PackWrappers(context.execute, _ChainsByTool(layers.execute, Stage.EXECUTE, tags))
            if layers.execute is not None
            else None
        )
        post = (
            PackPostExecute(_ChainsByTool(layers.post, Stage.POST_EXECUTE, tags)) if layers.post is not None else None
        )
        return CompiledStages(pre, guards, execute, post)


PACK_STAGES = PackStageCompiler()
