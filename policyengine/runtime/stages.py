"""The policy stages as objects: each answers with a decision value, and the pipeline acts on it.

One object per stage is chosen when an installation is built (installation.py) and every entry
point uses it: `Registry.call`, `evaluate()`, `explain` and the dry-run. The objects here run what
was installed in Python (waterfalls of listeners, guard functions, wrappers); a layer that knows
better, such as packs compiled by the engine, hands the registry objects of its own that keep the
same contract (enforce/pack_stages.py). The runtime does not know where a stage came from.

The contract, per stage (its Protocols are in run.py, beside the Run they take):
- pre-execute answers Allow, Ask or Deny, with the source that decided; a fault, a timeout or a
  tampering listener is a Deny naming the culprit (fail closed).
- the guards answer the first red line as a Deny, or None.
- execute says, per call, whether any wrapper applies (else the body runs alone) and whether the
  wrappers are trusted not to write to the call (else every hand-off is checked).
- post-execute answers the pending result with every rewrite applied, or a Block (a fault blocks).

A stage is `synchronous` when it never awaits: the pipeline then calls `*_sync` directly, with no
coroutine per call (packs alone decide in microseconds; an await per stage would cost ~7%).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields, replace
from operator import attrgetter, is_
from typing import Any, ClassVar

from policyengine.runtime.rewrites import apply_rewrite
from policyengine.runtime.run import REGISTRY, Run, describe, failed
from policyengine.runtime.seals import DefinitionSeal, Seal
from policyengine.runtime.waterfall import ChainResult, Trace, Waterfall, credit
from policyengine.values.call import PendingResult, ToolCall
from policyengine.values.cancellation import strict_timeout
from policyengine.values.decisions import Block, Deny, PostDecision, PreDecision, Source, restore_shared
from policyengine.values.frozen import Snapshot

Guard = Callable[[ToolCall], "str | Deny | Awaitable[str | Deny | None] | None"]


@dataclass(frozen=True, slots=True)
class GuardEntry:
    """A registered guard and who it is."""

    fn: Guard
    source: Source


class ClosingDefault:
    """Pre-execute with no listener: the closing default decides, with no timer and no await."""

    synchronous: ClassVar[bool] = True

    def __init__(self, closing: PreDecision) -> None:
        self.closing = closing

    def decide_sync(self, run: Run) -> PreDecision:
        """The closing default."""
        return self.closing

    async def decide(self, run: Run) -> PreDecision:
        """The closing default."""
        return self.closing


async def _policy_chain(
    runner: Awaitable[ChainResult[Any]], trace: Trace, timeout: float
) -> ChainResult[Any] | tuple[Source, str]:
    """A policy waterfall under the policy deadline: its verdict, or who failed it and why (fail closed)."""
    cancels = cancelling()
    trace.deadline = asyncio.get_running_loop().time() + timeout
    try:
        async with strict_timeout(timeout):
            verdict = await runner
    except TimeoutError:
        who = trace.stuck or REGISTRY
        return who, f"{who} did not decide within {timeout:g}s; failing closed"
    except asyncio.CancelledError as error:
        if cancelling() > cancels:
            raise  # the caller's own cancel
        who = trace.culprit(error) or REGISTRY
        return who, failed(who, error)
    except GeneratorExit:
        raise  # the call's coroutine is being closed: nothing is left to decide
    except BaseException as error:  # policy code raising KeyboardInterrupt or SystemExit fails closed too
        who = trace.culprit(error) or REGISTRY
        return who, failed(who, error)
    if restore_shared():  # every later allow() or accept() in the process would carry what was written
        return REGISTRY, "a listener wrote to the shared allow() or accept() decision (put back); failing closed"
    if trace.faults:
        # A listener that swallowed a downstream failure still cannot open the gate.
        fault = trace.faults[0]
        return fault.source, failed(fault.source, fault.error)
    return verdict


def cancelling() -> int:
    """How many cancels of the running task are pending: one more after an await means the caller cancelled."""
    task = asyncio.current_task()
    return task.cancelling() if task is not None else 0


class PreExecuteChain:
    """Pre-execute listeners written in Python: a waterfall under the policy deadline."""

    synchronous: ClassVar[bool] = False

    def __init__(self, chain: Waterfall[PreDecision], timeout: float) -> None:
        self.chain, self.timeout = chain, timeout

    def decide_sync(self, run: Run) -> PreDecision:
        """Never called: listeners are coroutines."""
        raise NotImplementedError("pre-execute listeners are awaited")

    async def decide(self, run: Run) -> PreDecision:
        """The waterfall's decision, or a denial naming who failed it."""
        run.watch()  # listeners written in Python follow: record the call before any of them gets it
        trace = Trace(watch=run.call_changes)
        verdict = await _policy_chain(self.chain.run((run.call,), trace), trace, self.timeout)
        if isinstance(verdict, tuple):
            return Deny(verdict[1], verdict[0])
        decision: PreDecision = verdict.value
        if isinstance(decision, Deny):
            return Deny(decision.reason, verdict.source)
        return replace(decision, source=verdict.source)


class NoGuards:
    """No guard installed."""

    synchronous: ClassVar[bool] = True

    def check_sync(self, run: Run) -> Deny | None:
        """Nothing to check."""
        return None

    async def check(self, run: Run) -> Deny | None:
        """Nothing to check."""
        return None


class GuardFunctions:
    """Guards written in Python, sync or async, in order; each may only read the call."""

    synchronous: ClassVar[bool] = False

    def __init__(self, entries: tuple[GuardEntry, ...], timeout: float) -> None:
        self.entries, self.timeout = entries, timeout

    def check_sync(self, run: Run) -> Deny | None:
        """Never called: a guard may be async."""
        raise NotImplementedError("guards written in Python are awaited")

    async def check(self, run: Run) -> Deny | None:
        """The first red line; a guard that fails, hangs or writes to the call is one."""
        entry = None
        seal = run.watch()
        # Sync guards run straight through (a timer cannot interrupt them anyway); only an
        # awaitable answer is put under the stage's deadline.
        deadline = time.monotonic() + self.timeout
        cancels = cancelling()
        try:
            for entry in self.entries:
                reason = entry.fn(run.call)
                if inspect.isawaitable(reason):
                    async with strict_timeout(max(0.0, deadline - time.monotonic())):
                        reason = await reason
                if time.monotonic() > deadline:
                    raise TimeoutError  # a sync guard that overran: its late answer never counts
                changes = seal.what_changed()
                if changes is not None:  # whatever it answered: it may only read the call
                    return Deny(f"{entry.source} {changes}; failing closed", entry.source)
                if reason is None:
                    continue
                if isinstance(reason, Deny):  # compiled packs name the rule that fired
                    return Deny(reason.reason, credit(reason.source, entry.source))
                if isinstance(reason, str):
                    return Deny(reason or f"{entry.source} denied", entry.source)
                raise TypeError(f"returned {type(reason).__name__}, not a reason string or None")
        except TimeoutError:
            who = entry.source if entry else REGISTRY
            return Deny(f"{who} did not decide within {self.timeout:g}s; failing closed", who)
        except GeneratorExit:
            raise  # the call's coroutine is being closed
        except BaseException as error:
            if isinstance(error, asyncio.CancelledError) and cancelling() > cancels:
                raise  # the caller's own cancel; any other is the guard's failure
            who = entry.source if entry else REGISTRY
            return Deny(f"{who} failed ({describe(error)}); failing closed", who)
        return None


class Wrappers:
    """Execute wrappers written in Python (or none): they wrap every call, and every hand-off is checked."""

    trusted: ClassVar[bool] = False

    def __init__(self, chain: Waterfall[Any]) -> None:
        self.chain = chain
        self._any = bool(chain.listeners)

    def wraps(self, call: ToolCall) -> bool:
        """Whether any wrapper is installed."""
        return self._any


class NoPostExecute:
    """No post-execute listener: the result passes as the tool made it."""

    synchronous: ClassVar[bool] = True

    def review_sync(self, run: Run, pending: PendingResult) -> PendingResult | Block:
        """The result, unchanged."""
        return pending

    async def review(self, run: Run, pending: PendingResult) -> PendingResult | Block:
        """The result, unchanged."""
        return pending


class _Reviewed:
    """The call and every result handed through post-execute, as first handed: tells any later write.

    Rules further down the chain (a pack's) read the call and the result; a listener written in
    Python that wrote to either through the base classes, then put it back after next(), would
    steer them. Rewrites go through next(rewrite) or a returned decision, never a write.
    """

    __slots__ = ("_results", "_seal", "_tool")

    def __init__(self, run: Run, pending: PendingResult) -> None:
        # The call as it is now, not as pre-execute sealed it: the body may have written to its own
        # arguments (the result carries a copy made before it ran), and no listener here did that.
        self._seal = Seal(run.call)
        self._tool = DefinitionSeal(pending.definition)  # listeners get it as result.definition
        self._results: list[tuple[PendingResult, tuple[Any, ...], Snapshot]] = []

    def changes(self, args: tuple[Any, ...], _returning: bool) -> str | None:
        """Trace.watch: what was written to the call or to a result under review; None if nothing."""
        pending = args[1]
        if not any(seen is pending for seen, _fields, _snapshot in self._results):
            self._results.append((pending, _pending_fields(pending), Snapshot(pending.value, pending.content)))
        changes = self._seal.what_changed() or self._tool.what_changed()
        if changes is not None:
            return changes
        for seen, handed, snapshot in self._results:
            if not all(map(is_, _pending_fields(seen), handed)) or not snapshot.intact():
                return "wrote to the result under review"
        return None


_pending_fields = attrgetter(*(f.name for f in fields(PendingResult)))


class PostExecuteChain:
    """Post-execute listeners written in Python: a waterfall under the policy deadline."""

    synchronous: ClassVar[bool] = False

    def __init__(self, chain: Waterfall[PostDecision], timeout: float) -> None:
        self.chain, self.timeout = chain, timeout

    def review_sync(self, run: Run, pending: PendingResult) -> PendingResult | Block:
        """Never called: listeners are coroutines."""
        raise NotImplementedError("post-execute listeners are awaited")

    async def review(self, run: Run, pending: PendingResult) -> PendingResult | Block:
        """The result with every rewrite applied, or the block (a fault blocks, naming who)."""
        trace = Trace(watch=_Reviewed(run, pending).changes)
        verdict = await _policy_chain(self.chain.run((run.call, pending), trace), trace, self.timeout)
        if isinstance(verdict, tuple):
            return Block(verdict[1], verdict[0])
        decision = verdict.value
        if isinstance(decision, Block):
            return Block(decision.feedback, verdict.source)
        who = verdict.source or REGISTRY
        try:
            # The decider saw the result with every rewrite passed through next() before it; the
            # decision it returned applies on top of that.
            seen = verdict.seen[1] if verdict.seen else pending
            return apply_rewrite(run.call.arguments, seen, decision, who)
        except BaseException as error:  # render is the tool's code: whatever it raises blocks
            return Block(f"{who} failed ({describe(error)}); failing closed", who)
