"""Explain a decision: every rule considered, stage by stage, what its condition returned."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from policyengine.enforce.evaluate import Evaluation, call_for, evaluate
from policyengine.enforce.install import PolicyLayers, wrapping
from policyengine.language.trace import ExpressionTrace
from policyengine.language.trace import trace as trace_condition
from policyengine.packs.rules import EXPLAIN, Mode, Rule, post_document, rewrite_post
from policyengine.runtime import session_steps
from policyengine.runtime.rewrites import apply_rewrite
from policyengine.runtime.run import REGISTRY
from policyengine.tools.definition import define_tool
from policyengine.values.call import PendingResult, ToolCall, new_call_id
from policyengine.values.decisions import Accept, AcceptValue, Block
from policyengine.values.frozen import FrozenDict, freeze
from policyengine.values.results import MonitorHit, Stage, Would


@dataclass(frozen=True, slots=True)
class Considered:
    """One rule evaluated for the call: its stage, pack, and what its condition returned."""

    stage: Stage
    rule: str
    pack: str | None
    matched: bool
    error: str | None
    location: str | None
    # With explain(trace=True): the rule's `when` and its evaluation, sub-expression by sub-expression
    # (trace is None for a rule without a condition, or in the rare case its document cannot be rebuilt).
    condition: str | None = None
    trace: ExpressionTrace | None = None
    # A label rule: the labels it adds to the session when it matches (or fails: labels only make later calls stricter).
    labels: tuple[str, ...] = ()
    # MONITOR: a match was recorded as a monitor hit (Evaluation.monitored), nothing was enforced.
    mode: Mode = Mode.ENFORCE

    @property
    def trace_agrees(self) -> bool:
        """Whether the trace ends where the evaluation did (it runs on a document rebuilt for it)."""
        if self.trace is None:
            return True
        return self.trace.matched == self.matched and (self.trace.error is None) == (self.error is None)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record (with `trace` when the condition was traced)."""
        out: dict[str, Any] = {
            "stage": self.stage.value,
            "rule": self.rule,
            "pack": self.pack,
            "matched": self.matched,
            "error": self.error,
            "location": self.location,
        }
        if self.labels:
            out["labels"] = list(self.labels)
        if self.mode is Mode.MONITOR:
            out["mode"] = self.mode.value
        if self.trace is not None:
            out["trace"] = {**self.trace.to_json(), "agrees": self.trace_agrees}
        return out


@dataclass(frozen=True, slots=True)
class Explanation:
    """The evaluation, and the trail of rules that led to it."""

    evaluation: Evaluation
    considered: tuple[Considered, ...]
    # The session document the call's rules read (None: no rule of the layers reads the session).
    session: FrozenDict | None = None

    def exercised(self) -> set[str]:
        """Ids of the rules whose condition held for this call (policy test coverage)."""
        return {c.rule for c in self.considered if c.matched}

    def labelled(self) -> list[tuple[str, str]]:
        """(label, rule id) for each label the call's label rules set (only rules that ran: a denied call sets none)."""
        out: dict[str, str] = {}
        for c in self.considered:
            if c.labels and (c.matched or c.error is not None):
                for label in c.labels:
                    out.setdefault(label, c.rule)
        return list(out.items())


def _record(trail: list[Considered], heard: list[Rule]) -> Any:
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
                labels=rule.labels,
                mode=rule.mode,
            )
        )
        heard.append(rule)

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
    trace: bool = False,
    require_tool: bool = False,
    session_id: str | None = None,
    now: float | None = None,
) -> Explanation:
    """Evaluate a call against the installed layers and record every rule considered.

    With `trace`, each rule's condition is evaluated once more, node by node, into a ExpressionTrace. With
    `require_tool` (a catalog applies), a tool the registry does not know is `invalid`, as in a call.
    With a `session_id`, the call reads and writes that session in the registry's store, as a real
    call would (label rules that labelled it are among the rules considered); `session` is the
    session document its rules read.
    """
    trail: list[Considered] = []
    heard: list[Rule] = []
    # One id and one clock for the evaluation and the traces: a condition may read call_id or session.now.
    call_id = call_id or new_call_id()
    now = time.time() if now is None else now
    # The call as its rules saw it, its session loaded before the evaluation writes the call's own entry.
    seen = _call_as_seen(layers, name, arguments, agent, call_id, cwd, session_id, now)
    token = EXPLAIN.set(_record(trail, heard))
    try:
        evaluation = await evaluate(
            layers.registry,
            name,
            arguments,
            agent=agent,
            call_id=call_id,
            result=result,
            cwd=cwd,
            require_tool=require_tool,
            session_id=session_id,
            now=now,
        )
    finally:
        EXPLAIN.reset(token)
    if evaluation.decision.value in ("allow", "ask"):
        # Execute rules never run in an evaluation; show which would wrap the body.
        call = call_for(layers.registry, name, freeze(arguments or {}), agent, call_id, cwd)
        watched: list[MonitorHit] = []
        for pack in layers.packs:
            for rule in pack.rules_for(Stage.EXECUTE, name, call.tags):
                try:
                    applies: bool | Exception = rule.applies(call.document)
                except Exception as error:
                    applies = error
                _record(trail, heard)(rule, applies)
                if applies is not False and rule.mode is Mode.MONITOR:  # it would wrap the body; it does not
                    watched.append(MonitorHit(rule.source, rule.stage, Would.WRAP, wrapping(rule)))
        if watched:
            evaluation = replace(evaluation, monitored=(*evaluation.monitored, *watched))
    if trace and trail:
        trail = _traced(layers, trail, heard, seen, result)
    return Explanation(evaluation, tuple(trail), seen.session)


def _call_as_seen(
    layers: PolicyLayers,
    name: str,
    arguments: Mapping[str, Any] | None,
    agent: str,
    call_id: str,
    cwd: str | None,
    session_id: str | None = None,
    now: float | None = None,
) -> ToolCall:
    """The call as the stages saw it: arguments validated (a known tool) or frozen (an unknown one), its session."""
    definition = layers.registry.tools.get(name)
    try:
        frozen = definition.validate_arguments(arguments or {})[0] if definition is not None else None
        seen = frozen if frozen is not None else freeze(arguments or {})
    except Exception:  # arguments that cannot be frozen: the evaluation says so, nothing is traced
        seen = FrozenDict()
    call = call_for(layers.registry, name, seen, agent, call_id, cwd, session_id)
    inst = layers.registry.installation
    if inst.sessions is not None:
        opened = session_steps.opened(inst, call, now)
        if isinstance(opened, ToolCall):  # a store that fails: the evaluation denies, and says why
            call = opened
    return call


def _traced(
    layers: PolicyLayers,
    trail: list[Considered],
    heard: list[Rule],
    call: ToolCall,
    result: Mapping[str, Any] | None,
) -> list[Considered]:
    """Each considered rule with the trace of its condition on the document it was evaluated on."""
    post = _post_documents(layers, call, result) if result is not None else {}
    out = []
    for considered, rule in zip(trail, heard, strict=True):
        if rule.when is None:
            out.append(considered)
            continue
        if rule.labels and rule.stage is Stage.POST_EXECUTE:
            # A post-execute label rule reads the result as the tool returned it, before any rewrite.
            document = _recorded_document(layers, call, result)
        else:
            document = post.get(id(rule)) if rule.stage is Stage.POST_EXECUTE else call.document
        traced = trace_condition(rule.when, document) if document is not None else None
        out.append(replace(considered, condition=rule.when.text, trace=traced))
    return out


def _recorded_document(layers: PolicyLayers, call: ToolCall, result: Mapping[str, Any] | None) -> FrozenDict | None:
    """The post-execute document of the recorded result as it came (None: no result, or a malformed one)."""
    if result is None:
        return None
    definition = layers.registry.tools.get(call.name) or define_tool(
        name=call.name, description=f"unknown tool {call.name}", parameters={}, execute=lambda _a: None
    )
    try:
        value = freeze(result.get("value"))
        content = result.get("content")
        return post_document(
            call.document, value, freeze(definition.render(call.arguments, value) if content is None else content)
        )
    except Exception:
        return None


def _post_documents(layers: PolicyLayers, call: ToolCall, result: Mapping[str, Any]) -> dict[int, FrozenDict]:
    """The document each post-execute rule read: the recorded result as the rules before it left it.

    The rules' hook hears a rule and its outcome, not the document; this replays what
    PackPostExecute does (rewrite_post per pack, apply_rewrite between packs) to rebuild it.
    """
    definition = layers.registry.tools.get(call.name) or define_tool(
        name=call.name, description=f"unknown tool {call.name}", parameters={}, execute=lambda _a: None
    )
    documents: dict[int, FrozenDict] = {}
    try:
        value = freeze(result.get("value"))
        content = result.get("content")
        content = freeze(content if content is not None else definition.render(call.arguments, value))
    except Exception:  # a malformed recorded result: the evaluation said so and no rule ran
        return documents
    pending = PendingResult(value, content, definition)
    for pack in layers.packs:
        rules = pack.rules_for(Stage.POST_EXECUTE, call.name, call.tags)
        value, content = pending.value, pending.content
        for rule in rules:
            documents[id(rule)] = post_document(call.document, value, content)
            for rewrite in rewrite_post([rule], call.document, value, content):
                if isinstance(rewrite, Block):
                    return documents
                if isinstance(rewrite, Accept):
                    content = rewrite.content
                elif isinstance(rewrite, AcceptValue):
                    value = rewrite.value
        for rewrite in rewrite_post(rules, call.document, pending.value, pending.content):
            if isinstance(rewrite, Block):
                return documents
            try:
                pending = apply_rewrite(call.arguments, pending, rewrite, rewrite.source or REGISTRY)
            except Exception:  # the stage blocks here: no later rule runs
                return documents
    return documents
