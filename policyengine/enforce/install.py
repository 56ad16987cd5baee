"""Packs on a registry: each pack becomes one bundle of listeners, guards and wrappers."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from policyengine.enforce.pack_stages import PACK_STAGES
from policyengine.enforce.session_rules import PackSessionRules
from policyengine.errors import PolicyEngineError
from policyengine.packs.last_good import KeptPacks, failed_load
from policyengine.packs.loader import Pack, load_packs
from policyengine.packs.rules import (
    EXPLAIN,
    Mode,
    Rule,
    RuleFailure,
    check_guards,
    decide_pre,
    monitored,
    rewrite_post,
)
from policyengine.runtime.registry import Bundle, Handle, Registry
from policyengine.runtime.stages import GuardEntry
from policyengine.runtime.tool_body import Aborted
from policyengine.runtime.waterfall import Listener
from policyengine.values.call import Dispatch, PendingResult, ToolCall
from policyengine.values.cancellation import AbortKind, Signal
from policyengine.values.decisions import Allow, Block, Deny, PostDecision, PreDecision, Source, SourceKind
from policyengine.values.problems import PackLoadError
from policyengine.values.results import Stage, Would

log = logging.getLogger("policyengine")


def pack_bundle(pack: Pack) -> Bundle:
    """Compile a pack into one pre-execute listener, one guard, one execute wrapper, one post listener."""
    listener = Source(SourceKind.LISTENER, f"pack {pack.name}@{pack.version}", pack.name, pack.digest)
    return Bundle(
        pre=[Listener(_pre_listener(pack), listener)],
        guards=[GuardEntry(_guard(pack), replace(listener, kind=SourceKind.GUARD))],
        execute=[Listener(_execute_wrapper(pack), listener)],
        post=[Listener(_post_listener(pack), listener)],
        default=pack.default,
        rule_ids=frozenset(r.id for r in pack.rules),
        compiler=PACK_STAGES,
        layer=pack,
        cwd=pack.cwd,
        session=PackSessionRules.of(pack),
    )


Next = Callable[..., Awaitable[Any]]


def _pre_listener(pack: Pack) -> Callable[[ToolCall, Next], Awaitable[PreDecision]]:
    async def pre_execute(call: ToolCall, next: Next) -> PreDecision:
        rules = pack.rules_for(Stage.PRE_EXECUTE, call.name, call.tags)
        decision, allowed_by = decide_pre(rules, call.document, EXPLAIN.get())
        if decision is not None:
            return decision
        later: PreDecision = await next()
        # An explicit allow of this layer beats the closing default, never a later layer's decision.
        if allowed_by is not None and later.source is not None and later.source.kind is SourceKind.DEFAULT:
            return Allow(allowed_by)
        return later

    return pre_execute


def _guard(pack: Pack) -> Callable[[ToolCall], Deny | None]:
    def guard(call: ToolCall) -> Deny | None:
        return check_guards(pack.rules_for(Stage.GUARD, call.name, call.tags), call.document, EXPLAIN.get())

    return guard


def _execute_wrapper(pack: Pack) -> Callable[[Dispatch, Next], Awaitable[Any]]:
    async def execute(dispatch: Dispatch, next: Next) -> Any:
        rules = pack.rules_for(Stage.EXECUTE, dispatch.call.name, dispatch.call.tags)
        matched = [r for r in rules if _applies(r, dispatch.call.document)]
        if any(r.mode is Mode.MONITOR for r in matched):
            for rule in matched:
                if rule.mode is Mode.MONITOR:  # it would have wrapped the body: recorded, not applied
                    monitored(rule, Would.WRAP, wrapping(rule))
            matched = [r for r in matched if r.mode is Mode.ENFORCE]
        if not matched:
            return await next()
        return await _with_rules(matched, dispatch, next)

    return execute


def wrapping(rule: Rule) -> str:
    """What an execute rule does to the body, in words (for a monitor hit)."""
    parts = [f"a deadline of {rule.timeout:g}s"] if rule.timeout is not None else []
    parts += [f"{rule.retries} retries"] if rule.retries else []
    return "would wrap the body with " + " and ".join(parts or ["nothing"])


def _applies(rule: Rule, document: Any) -> bool:
    try:
        return rule.applies(document)
    except Exception as error:  # fails closed: the wrapper raises, the body never runs
        if rule.mode is Mode.MONITOR:  # enforced, it would have failed the call: recorded, the body runs
            monitored(rule, Would.DENY, str(RuleFailure(rule, error)))
            return False
        raise RuleFailure(rule, error) from error


async def _with_rules(rules: Sequence[Rule], dispatch: Dispatch, next: Next) -> Any:
    """Earlier rules wrap later ones: rule 1's retries re-run rule 2's timeout, and so on."""
    rule, rest = rules[0], rules[1:]
    attempts = rule.retries + 1
    for attempt in range(attempts):
        step, combined = dispatch, None
        if rule.timeout is not None:
            # Combined with the signal it was given: an inner, longer deadline never lifts an outer one.
            deadline = Signal.timeout(rule.timeout, f"rule {rule.id}: deadline of {rule.timeout:g}s")
            combined = Signal.any(dispatch.signal, deadline)
            step = dispatch.with_signal(combined)
        try:
            if rest:
                return await _with_rules(rest, step, next)
            return await next(step)
        except Aborted as aborted:
            # Retry our own deadline only: a caller's cancel or an outer deadline is final.
            if aborted.reason.kind is not AbortKind.TIMEOUT or dispatch.signal.aborted or attempt + 1 == attempts:
                raise
        except Exception:
            if attempt + 1 == attempts:
                raise
        finally:
            if combined is not None:
                combined.detach()  # the caller's signal must not keep our listener
        await asyncio.sleep(rule.backoff * (2**attempt))
    raise AssertionError("unreachable")  # pragma: no cover


def _post_listener(pack: Pack) -> Callable[[ToolCall, PendingResult, Next], Awaitable[PostDecision]]:
    async def post_execute(call: ToolCall, result: PendingResult, next: Next) -> PostDecision:
        rules = pack.rules_for(Stage.POST_EXECUTE, call.name, call.tags)
        if not rules:
            return await next()  # type: ignore[no-any-return]
        rewrites = rewrite_post(rules, call.document, result.value, result.content, EXPLAIN.get())
        if rewrites and isinstance(rewrites[-1], Block):
            return rewrites[-1]
        return await next(*rewrites) if rewrites else await next()  # type: ignore[no-any-return]

    return post_execute


@dataclass
class PolicyLayers:
    """Packs installed on a registry in layer order, swappable as a whole, atomically."""

    registry: Registry
    folders: tuple[Path, ...]
    packs: tuple[Pack, ...]
    handles: tuple[Handle, ...]

    @classmethod
    def install(cls, registry: Registry, folders: Sequence[str | Path]) -> PolicyLayers:
        """Load every layer (all-or-nothing) and install them after what is already there."""
        packs = load_packs(folders)
        handles = tuple(registry.install(pack_bundle(p)) for p in packs)
        return cls(registry, tuple(Path(f) for f in folders), packs, handles)

    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False, compare=False)
    # When the running packs were loaded (for the notice a failed reload gives: packs/last_good.py).
    loaded_at: float = field(default_factory=time.time, compare=False)

    def reload(self, folders: Sequence[str | Path] | None = None) -> ReloadReport:
        """Load the layers again; on any problem keep the running packs, and say so (log warning, `notice`)."""
        wanted = self._wanted(folders)
        try:
            packs = load_packs(wanted)
        except PackLoadError as error:
            return self._kept(wanted, error)
        return self._swap(wanted, packs)

    async def reload_async(self, folders: Sequence[str | Path] | None = None) -> ReloadReport:
        """reload() with the loading and compiling in a worker thread, so the event loop keeps serving calls.

        A 10,000-rule pack takes over a second to compile: done on the loop, every call would wait.
        Concurrent reloads run one after the other; the swap itself happens on the loop, atomically.
        """
        wanted = self._wanted(folders)
        async with self._lock:
            try:
                packs = await asyncio.to_thread(load_packs, wanted)
            except PackLoadError as error:
                return self._kept(wanted, error)
            return self._swap(wanted, packs)

    def _wanted(self, folders: Sequence[str | Path] | None) -> tuple[Path, ...]:
        wanted = tuple(Path(f) for f in folders) if folders is not None else self.folders
        if len(wanted) != len(self.handles):
            raise PolicyEngineError(
                f"reload got {len(wanted)} layers, {len(self.handles)} are installed",
                hint="reload the same number of layers; install a new PolicyLayers to add one",
            )
        return wanted

    def _swap(self, wanted: tuple[Path, ...], packs: tuple[Pack, ...]) -> ReloadReport:
        self.registry.swap([(h, pack_bundle(p)) for h, p in zip(self.handles, packs, strict=True)])
        self.folders, self.packs, self.loaded_at = wanted, packs, time.time()
        return ReloadReport(True, packs, None)

    def _kept(self, wanted: tuple[Path, ...], error: PackLoadError) -> ReloadReport:
        """The report of a reload that failed: the running packs keep deciding, and a warning says which."""
        notice = KeptPacks(self.packs, self.loaded_at, failed_load(error, wanted)).notice()
        log.warning("policyengine: %s", notice)
        return ReloadReport(False, self.packs, error, notice)


@dataclass(frozen=True)
class ReloadReport:
    """What a reload did: whether it swapped, which packs run now, and why not."""

    swapped: bool
    packs: tuple[Pack, ...]
    error: PackLoadError | None
    notice: str | None = None  # a failed reload: which pack failed where, and which version still decides
