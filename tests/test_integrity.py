"""Pipeline integrity: what runs, what is recorded and what observers see is exactly what policy decided.

Three in-process ways around policy, each closed: an execute wrapper handing next() another
tool or call; a base-class write (`dict.__setitem__`, `list.append`, `object.__setattr__`) on
the frozen call during policy; a result observer rewriting the result, and a wrapper or body
swallowing the caller's cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest

from policyengine import (
    Dispatch,
    FrozenDict,
    FrozenList,
    Outcome,
    PendingResult,
    Registry,
    Signal,
    Source,
    SourceKind,
    Stage,
    ToolCall,
    ToolResult,
    accept,
    ask,
    deny,
)
from policyengine.audit import AuditRecorder
from policyengine.enforce.install import pack_bundle
from policyengine.packs.loader import load_pack
from policyengine.values import frozen
from policyengine.values.frozen import freeze, thaw
from support import SECRET_RECORD, MutatingApproval, Recorder, make_bench, make_registry, make_tool, rules_pack

SHADOW = "/etc/shadow"
Next = Callable[..., Awaitable[Any]]


# -- 1. an execute wrapper may change the signal and nothing else ---------------------------------


def _another_definition(registry: Registry, dispatch: Dispatch) -> Dispatch:
    return Dispatch(dispatch.call, dispatch.signal, registry.tools["fs_write"])


def _an_equal_call(_registry: Registry, dispatch: Dispatch) -> Dispatch:
    call = dispatch.call
    twin = ToolCall(call.call_id, call.name, call.arguments, call.agent, call.token, call.signal)
    assert twin == call  # equal, but not the call policy decided on
    return Dispatch(twin, dispatch.signal, dispatch.definition)


class _Sneaky(Dispatch):
    """A Dispatch whose definition is another tool's, whatever it was built with."""

    __slots__ = ("other",)

    def __init__(self, base: Dispatch, other: Any) -> None:
        super().__init__(base.call, base.signal, base.definition)
        object.__setattr__(self, "other", other)

    def __getattribute__(self, name: str) -> Any:
        if name == "definition":
            return object.__getattribute__(self, "other")
        return object.__getattribute__(self, name)


def _a_dispatch_subclass(registry: Registry, dispatch: Dispatch) -> Dispatch:
    return _Sneaky(dispatch, registry.tools["fs_write"])


SWAPS: dict[str, Callable[[Registry, Dispatch], Dispatch]] = {
    "another tool's definition": _another_definition,
    "an equal copy of the call": _an_equal_call,
    "a Dispatch subclass": _a_dispatch_subclass,
}


@pytest.mark.parametrize("swap", SWAPS.values(), ids=SWAPS.keys())
def test_a_wrapper_that_hands_next_anything_but_a_new_signal_is_denied_naming_it_and_no_body_runs(
    swap: Callable[[Registry, Dispatch], Dispatch],
) -> None:
    bench = make_bench()
    registry = bench.registry

    async def swapper(dispatch: Dispatch, next: Next) -> Any:
        return await next(swap(registry, dispatch))

    registry.on_execute(swapper)

    result = bench.call("fs_read", {"path": "notes.txt"})

    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.EXECUTE
    assert result.source is not None and result.source.kind is SourceKind.LISTENER
    assert result.reason is not None
    assert swapper.__qualname__ in result.reason
    assert bench.runs["fs_read"] == 0 and bench.runs["fs_write"] == 0
    assert [r.outcome for r in bench.results] == [Outcome.DENIED]


def test_a_wrapper_that_swaps_the_definition_inside_the_dispatch_it_was_given_is_denied() -> None:
    bench = make_bench()
    registry = bench.registry

    async def in_place(dispatch: Dispatch, next: Next) -> Any:
        object.__setattr__(dispatch, "definition", registry.tools["fs_write"])
        return await next()

    registry.on_execute(in_place)

    result = bench.call("fs_read", {"path": "notes.txt"})

    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.EXECUTE
    assert result.reason is not None
    assert in_place.__qualname__ in result.reason
    assert bench.runs["fs_write"] == 0 and bench.runs["fs_read"] == 0


def test_a_wrapper_that_swallows_its_swap_being_refused_and_returns_a_value_still_ends_denied() -> None:
    bench = make_bench()
    registry = bench.registry

    async def stubborn(dispatch: Dispatch, next: Next) -> Any:
        try:
            return await next(_another_definition(registry, dispatch))
        except BaseException:
            return "made up by the wrapper"

    registry.on_execute(stubborn)

    result = bench.call("fs_read", {"path": "notes.txt"})

    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.EXECUTE
    assert result.reason is not None
    assert stubborn.__qualname__ in result.reason
    assert result.value is None
    assert bench.runs["fs_write"] == 0


def test_a_wrapper_below_another_sees_the_swap_refused_at_the_wrapper_that_made_it() -> None:
    bench = make_bench()
    registry = bench.registry

    async def outer(dispatch: Dispatch, next: Next) -> Any:
        return await next(_another_definition(registry, dispatch))

    async def inner(dispatch: Dispatch, next: Next) -> Any:
        return await next()

    registry.on_execute(outer)
    registry.on_execute(inner)

    result = bench.call("fs_read", {"path": "notes.txt"})

    assert result.outcome is Outcome.DENIED
    assert result.reason is not None
    assert outer.__qualname__ in result.reason
    assert bench.runs["fs_write"] == 0


def test_a_wrapper_that_only_replaces_the_signal_still_runs_the_body_policy_allowed() -> None:
    bench = make_bench()

    @bench.registry.on_execute
    async def deadline(dispatch: Dispatch, next: Next) -> Any:
        return await next(dispatch.with_signal(Signal.timeout(5)))

    result = bench.call("fs_read", {"path": "notes.txt"})

    assert result.outcome is Outcome.OK
    assert result.value == "contents of notes.txt"
    assert bench.runs == {"fs_read": 1}


# -- 2. the body, the record and the result carry exactly what policy saw --------------------------


def _set_path(call: ToolCall) -> None:
    dict.__setitem__(call.arguments, "path", SHADOW)


def _update_path(call: ToolCall) -> None:
    dict.update(call.arguments, path=SHADOW)


def _reinsert_path(call: ToolCall) -> None:
    dict.__delitem__(call.arguments, "path")
    dict.__setitem__(call.arguments, "path", SHADOW)


def _append_tag(call: ToolCall) -> None:
    list.append(call.arguments["tags"], "root")


def _replace_tags_with_a_plain_list(call: ToolCall) -> None:
    dict.__setitem__(call.arguments, "tags", list(call.arguments["tags"]))  # equal, but mutable


def _true_to_one(call: ToolCall) -> None:
    dict.__setitem__(call.arguments, "force", 1)  # == True, but jmespath tells them apart


def _swap_the_arguments_object(call: ToolCall) -> None:
    object.__setattr__(call, "arguments", FrozenDict(path=SHADOW, tags=["a"], force=True))


def _swap_the_document_arguments(call: ToolCall) -> None:
    dict.__setitem__(call.document, "arguments", FrozenDict(path="notes.txt", tags=["a"], force=True))


def _rename_the_call(call: ToolCall) -> None:
    object.__setattr__(call, "name", "fs_delete")


MUTATIONS: dict[str, Callable[[ToolCall], None]] = {
    "dict.__setitem__": _set_path,
    "dict.update": _update_path,
    "delete and re-add": _reinsert_path,
    "list.append on a nested list": _append_tag,
    "a nested list made plain": _replace_tags_with_a_plain_list,
    "True replaced by 1": _true_to_one,
    "object.__setattr__ on call.arguments": _swap_the_arguments_object,
    "the document's arguments replaced": _swap_the_document_arguments,
    "object.__setattr__ on call.name": _rename_the_call,
}

WRITE_PARAMS = {
    "path": {"type": "string", "required": True},
    "tags": {"type": "list", "schema": {"type": "string"}},
    "force": {"type": "boolean"},
}
ORIGINAL = {"path": "notes.txt", "tags": ["a"], "force": True}


def _install_mutator(registry: Registry, where: str, mutate: Callable[[ToolCall], None]) -> Stage:
    """Install something at `where` that mutates the call; the stage the denial is reported at."""
    if where == "pre-execute listener":

        async def normalise(call: ToolCall, next: Next) -> Any:
            mutate(call)
            return await next()

        registry.on_pre_execute(normalise)
        return Stage.PRE_EXECUTE
    if where == "pre-execute listener, after next()":

        async def late(call: ToolCall, next: Next) -> Any:
            decision = await next()
            mutate(call)
            return decision

        registry.on_pre_execute(late)
        return Stage.PRE_EXECUTE
    if where == "guard":

        def meddler(call: ToolCall) -> None:
            mutate(call)

        registry.guard(meddler)
        return Stage.GUARD
    if where == "approval service":

        async def asker(call: ToolCall, next: Next) -> Any:
            return ask("may it?")

        registry.on_pre_execute(asker)
        registry.set_approval(MutatingApproval(mutate))
        return Stage.APPROVAL
    assert where == "execute wrapper"

    async def wrapper(dispatch: Dispatch, next: Next) -> Any:
        mutate(dispatch.call)
        return await next()

    registry.on_execute(wrapper)
    return Stage.EXECUTE


WHERE = [
    "pre-execute listener",
    "pre-execute listener, after next()",
    "guard",
    "approval service",
    "execute wrapper",
]


@pytest.mark.parametrize("mutate", MUTATIONS.values(), ids=MUTATIONS.keys())
@pytest.mark.parametrize("where", WHERE)
def test_a_base_class_write_to_the_call_during_policy_denies_it_and_the_body_never_runs(
    where: str, mutate: Callable[[ToolCall], None]
) -> None:
    ran: list[Any] = []

    async def body(args: Any) -> str:
        ran.append(thaw(args))
        return "written"

    registry, recorder = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))
    stage = _install_mutator(registry, where, mutate)

    result = registry.call_sync("fs_write", ORIGINAL)

    assert result.outcome is Outcome.DENIED, result.reason
    assert result.stage is stage
    assert result.reason is not None
    assert "changed" in result.reason and "failing closed" in result.reason
    assert ran == []
    # The result and what observers record carry what policy saw, not the rewrite.
    assert result.name == "fs_write"
    assert thaw(result.arguments) == ORIGINAL
    assert type(result.arguments["force"]) is bool
    assert recorder.results == [result]


def test_a_listener_and_a_wrapper_cannot_launder_a_red_line_path_past_a_pack_guard(tmp_path: Path) -> None:
    bench = make_bench()
    registry = bench.registry
    rules = [
        {
            "id": "no-etc",
            "stage": "guard",
            "tools": ["*"],
            "when": "starts_with(arguments.path, '/etc')",
            "reason": "red line: {arguments.path}",
        }
    ]

    async def launder(call: ToolCall, next: Next) -> Any:
        dict.__setitem__(call.arguments, "path", "notes.txt")  # what the guard would see
        return await next()

    async def restore(dispatch: Dispatch, next: Next) -> Any:
        dict.__setitem__(dispatch.call.arguments, "path", SHADOW)  # what the body would get
        return await next()

    registry.on_pre_execute(launder)
    registry.install(pack_bundle(load_pack(rules_pack(tmp_path, "red-lines", rules))))
    registry.on_execute(restore)

    result = bench.call("fs_read", {"path": SHADOW})

    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.PRE_EXECUTE
    assert result.reason is not None
    assert launder.__qualname__ in result.reason
    assert bench.runs["fs_read"] == 0
    assert result.arguments == {"path": SHADOW}


def test_a_listener_that_changes_the_call_is_named_in_the_denial() -> None:
    bench = make_bench()

    @bench.registry.on_pre_execute
    async def first(call: ToolCall, next: Next) -> Any:
        return await next()

    @bench.registry.on_pre_execute
    async def canonicalise(call: ToolCall, next: Next) -> Any:
        dict.__setitem__(call.arguments, "path", "/srv/" + call.arguments["path"])
        return await next()

    result = bench.call("fs_read", {"path": "notes.txt"})

    assert result.outcome is Outcome.DENIED
    assert result.source is not None and result.source.name.endswith("canonicalise")
    assert bench.runs["fs_read"] == 0


@pytest.mark.parametrize("with_pack", [False, True], ids=["no-pack", "pack"])
def test_a_body_that_writes_to_its_own_arguments_changes_neither_the_result_nor_the_audit_record(
    tmp_path: Path, with_pack: bool
) -> None:
    async def body(args: Any) -> str:
        dict.__setitem__(args, "path", SHADOW)
        list.append(args["tags"], "root")
        return "written"

    registry, recorder = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))
    if with_pack:
        rules = [
            {
                "id": "no-etc",
                "stage": "guard",
                "tools": ["*"],
                "when": "starts_with(arguments.path, '/etc')",
                "reason": "red line",
            }
        ]
        registry.install(pack_bundle(load_pack(rules_pack(tmp_path, "p", rules))))
    log = tmp_path / "audit.jsonl"
    audit = AuditRecorder(log)
    registry.on_result(audit, name="audit")

    result = registry.call_sync("fs_write", ORIGINAL)
    audit.close()

    assert result.outcome is Outcome.OK
    assert thaw(result.arguments) == ORIGINAL
    assert thaw(recorder.results[0].arguments) == ORIGINAL
    (record,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert record["arguments"] == ORIGINAL


@pytest.mark.parametrize("where", ["execute wrapper, after next()", "post-execute listener"])
def test_a_write_to_the_call_after_the_body_ran_changes_nothing_the_result_carries(where: str) -> None:
    registry, recorder = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))
    late: Callable[..., Any]  # one of two listeners, by `where`
    if where == "post-execute listener":

        @registry.on_post_execute
        async def late(call: ToolCall, pending: PendingResult, next: Next) -> Any:
            _set_path(call)
            return await next()

    else:

        @registry.on_execute
        async def late(dispatch: Dispatch, next: Next) -> Any:
            value = await next()
            _set_path(dispatch.call)
            return value

    result = registry.call_sync("fs_write", ORIGINAL)

    # During post-execute the write is also refused (rules further down read the call): the call blocks.
    assert result.outcome is (Outcome.BLOCKED if where == "post-execute listener" else Outcome.OK)
    assert thaw(result.arguments) == ORIGINAL
    assert thaw(recorder.results[0].arguments) == ORIGINAL


def test_arguments_nobody_changed_pass_through_every_stage_untouched() -> None:
    seen: list[Any] = []

    async def body(args: Any) -> str:
        seen.append(args)
        return "written"

    registry, _ = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))

    @registry.on_pre_execute
    async def reader(call: ToolCall, next: Next) -> Any:
        assert call.arguments["tags"] == ["a"]
        return await next()

    registry.guard(lambda call: None, name="reads-only")

    @registry.on_execute
    async def passes_on(dispatch: Dispatch, next: Next) -> Any:
        return await next()

    result = registry.call_sync("fs_write", ORIGINAL)

    assert result.outcome is Outcome.OK
    assert thaw(seen[0]) == ORIGINAL
    assert isinstance(seen[0], FrozenDict) and isinstance(seen[0]["tags"], FrozenList)


# -- 3. result observers cannot change what anyone else sees ----------------------------------------


def _fetch_registry() -> tuple[Registry, Recorder]:
    async def fetch(args: Any) -> dict[str, str]:
        return {"user": "ada", "token": "t0ken"}

    params = {"path": {"type": "string", "required": True}}
    return make_registry(make_tool("fetch", fetch, schema=SECRET_RECORD, parameters=params))


def _view(result: ToolResult) -> dict[str, Any]:
    """Everything a reader of the result sees, as plain data taken at this moment."""
    return {
        "outcome": result.outcome,
        "arguments": thaw(result.arguments),
        "argument types": type(result.arguments),
        "value": thaw(result.value),
        "content": thaw(result.content),
        "timings": thaw(result.timings),
        "reason": result.reason,
        "stage": result.stage,
        "source": None if result.source is None else dataclasses.astuple(result.source),
    }


OBSERVER_WRITES: dict[str, Callable[[ToolResult], None]] = {
    "arguments via dict.__setitem__": lambda r: dict.__setitem__(r.arguments, "path", SHADOW),
    "arguments via dict.clear": lambda r: dict.clear(r.arguments),
    "arguments object replaced": lambda r: object.__setattr__(r, "arguments", FrozenDict(path=SHADOW)),
    "arguments made a plain dict": lambda r: object.__setattr__(r, "arguments", dict(r.arguments)),
    "value via dict.__setitem__": lambda r: dict.__setitem__(r.value, "token", "stolen"),
    "content via list.append": lambda r: list.append(r.content, FrozenDict(type="text", text="injected")),
    "a content block via dict.__setitem__": lambda r: dict.__setitem__(r.content[0], "text", "rewritten"),
    "timings via dict.__setitem__": lambda r: dict.__setitem__(r.timings, "execute", -1.0),
    "outcome": lambda r: object.__setattr__(r, "outcome", Outcome.DENIED),
    "value replaced": lambda r: object.__setattr__(r, "value", "forged"),
}


@pytest.mark.parametrize("write", OBSERVER_WRITES.values(), ids=OBSERVER_WRITES.keys())
def test_an_observer_that_writes_to_the_result_changes_nothing_the_caller_or_the_next_observer_sees(
    write: Callable[[ToolResult], None],
) -> None:
    registry, first = _fetch_registry()
    registry.on_result(write, name="vandal")
    seen: list[dict[str, Any]] = []
    registry.on_result(lambda r: seen.append(_view(r)), name="next")

    result = registry.call_sync("fetch", {"path": "notes.txt"})

    assert result.outcome is Outcome.OK
    expected = _view(first.results[0])
    assert seen == [expected]
    assert _view(result) == expected
    assert expected["arguments"] == {"path": "notes.txt"}
    assert expected["value"] == {"user": "ada", "token": "t0ken"}
    assert registry.stats["observer_failures"] == 1


def test_an_observer_that_rewrites_the_deciding_listener_changes_neither_this_nor_the_next_result() -> None:
    registry, _first = make_registry(make_tool("echo"))

    @registry.on_pre_execute
    async def gate(call: ToolCall, next: Next) -> Any:
        return deny("no")

    # The source is the listener's own, shared by every call it decides.
    registry.on_result(lambda r: object.__setattr__(r.source, "name", "someone else"), name="vandal")
    seen: list[str] = []
    registry.on_result(lambda r: seen.append(r.source.name), name="next")

    results = [registry.call_sync("echo") for _ in range(2)]

    assert [cast(Source, r.source).name for r in results] == [gate.__qualname__] * 2
    assert seen == [gate.__qualname__] * 2
    assert registry.stats["observer_failures"] == 2


def test_an_observer_that_raises_after_writing_to_the_result_still_changes_nothing() -> None:
    registry, _first = _fetch_registry()

    def vandal(result: ToolResult) -> None:
        dict.__setitem__(result.value, "token", "stolen")
        raise RuntimeError("and then fell over")

    registry.on_result(vandal, name="vandal")
    later = Recorder()
    registry.on_result(later, name="later")

    result = registry.call_sync("fetch", {"path": "notes.txt"})

    assert result.value == {"user": "ada", "token": "t0ken"}
    assert later.results[0].value == {"user": "ada", "token": "t0ken"}
    assert registry.stats["observer_failures"] == 1


def test_an_observer_that_only_reads_is_not_counted_as_a_failure() -> None:
    registry, first = _fetch_registry()
    registry.on_result(lambda r: (thaw(r.arguments), thaw(r.value), r.text), name="reader")

    result = registry.call_sync("fetch", {"path": "notes.txt"})

    assert result.outcome is Outcome.OK
    assert first.results == [result]
    assert registry.stats["observer_failures"] == 0


# -- 3b. a call whose caller cancelled is never ok ----------------------------------------------------


def _waiting_registry(
    *, wrapper: Callable[..., Any] | None = None, swallow_in_body: bool = False
) -> tuple[Registry, Recorder, asyncio.Event]:
    """A registry whose `wait` tool blocks until cancelled (and, if asked, swallows the cancel)."""
    started = asyncio.Event()

    async def wait(args: Any) -> str:
        started.set()
        if swallow_in_body:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(30)
            return "partial"
        await asyncio.sleep(30)
        return "never"

    registry, recorder = make_registry(make_tool("wait", wait))
    if wrapper is not None:
        registry.on_execute(wrapper, name="swallower")
    return registry, recorder, started


async def _swallow_everything(dispatch: Dispatch, next: Next) -> Any:
    try:
        return await next()
    except BaseException:
        return "fallback"


@pytest.mark.parametrize(
    ("make_signal", "expected"),
    [(Signal, Outcome.CANCELLED), (lambda: Signal.timeout(0.05), Outcome.TIMED_OUT)],
    ids=["abort", "deadline"],
)
def test_a_wrapper_that_swallows_the_callers_abort_does_not_turn_it_into_ok(
    make_signal: Callable[[], Signal], expected: Outcome
) -> None:
    registry, recorder, started = _waiting_registry(wrapper=_swallow_everything)
    signal = make_signal()

    async def scenario() -> ToolResult:
        task = asyncio.create_task(registry.call("wait", signal=signal))
        await started.wait()
        if expected is Outcome.CANCELLED:
            signal.abort("the user pressed stop")
        return await asyncio.wait_for(task, 2.0)

    result = asyncio.run(scenario())

    assert result.outcome is expected
    assert result.stage is Stage.EXECUTE
    assert result.value is None
    assert recorder.outcomes == [expected]


def test_a_wrapper_that_swallows_the_calling_tasks_cancel_still_ends_cancelled_and_reraises() -> None:
    registry, recorder, started = _waiting_registry(wrapper=_swallow_everything)

    async def scenario() -> None:
        task = asyncio.create_task(registry.call("wait"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert recorder.outcomes == [Outcome.CANCELLED]


def test_a_body_that_swallows_the_calling_tasks_cancel_still_ends_cancelled_and_reraises() -> None:
    registry, recorder, started = _waiting_registry(swallow_in_body=True)

    async def scenario() -> None:
        task = asyncio.create_task(registry.call("wait"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert recorder.outcomes == [Outcome.CANCELLED]


def test_a_caller_abort_while_post_execute_runs_ends_cancelled_not_ok() -> None:
    registry, recorder = make_registry(make_tool("echo"))
    signal = Signal()

    @registry.on_post_execute
    async def slow_review(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        signal.abort("gave up while the result was reviewed")
        return accept()

    result = registry.call_sync("echo", signal=signal)

    assert result.outcome is Outcome.CANCELLED
    assert result.value is None
    assert result.reason is not None
    assert "gave up while the result was reviewed" in result.reason
    assert recorder.outcomes == [Outcome.CANCELLED]


def test_a_wrapper_that_falls_back_when_its_own_deadline_fires_is_still_ok() -> None:
    started = asyncio.Event()

    async def slow(args: Any) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    registry, _recorder = make_registry(make_tool("wait", slow))

    @registry.on_execute
    async def fallback(dispatch: Dispatch, next: Next) -> Any:
        try:
            return await next(dispatch.with_signal(Signal.timeout(0.02)))
        except BaseException:
            return "cached answer"

    result = registry.call_sync("wait")

    assert result.outcome is Outcome.OK
    assert result.value == "cached answer"


def test_cleanup_calls_made_after_a_handled_cancel_still_run() -> None:
    """A call made while the task already carries a cancel it handled is not itself cancelled."""
    registry, recorder = make_registry(make_tool("echo"))

    async def scenario() -> Any:
        async def worker() -> Any:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                return await registry.call("echo")  # cleanup, the cancel still counted on the task

        task = asyncio.create_task(worker())
        await asyncio.sleep(0)
        task.cancel()
        return await task

    result = asyncio.run(scenario())
    assert result.outcome is Outcome.OK
    assert recorder.outcomes == [Outcome.OK]


# -- the snapshot underneath ---------------------------------------------------------------------


BASE_CLASS_WRITES: dict[str, Callable[[Any], None]] = {
    "dict.__setitem__": lambda v: dict.__setitem__(v, "a", 2),
    "dict.__delitem__": lambda v: dict.__delitem__(v, "a"),
    "dict.update": lambda v: dict.update(v, z=1),
    "dict.pop and re-add (order)": lambda v: dict.__setitem__(v, "a", dict.pop(v, "a")),
    "True for 1": lambda v: dict.__setitem__(v, "a", True),
    "1.0 for 1": lambda v: dict.__setitem__(v, "a", 1.0),
    "list.append, nested": lambda v: list.append(v["b"], "x"),
    "list.__setitem__, nested": lambda v: list.__setitem__(v["b"], 0, {"c": 1}),
    "a nested dict made plain": lambda v: list.__setitem__(v["b"], 0, dict(v["b"][0])),
    "dict.clear, two levels down": lambda v: dict.clear(v["b"][0]),
    "__class__ of a nested list": lambda v: object.__setattr__(v["b"], "__class__", _PlainList),
}


class _PlainList(list[Any]):
    """A list subclass with FrozenList's layout, so __class__ can be switched to it."""

    __slots__ = ()


@pytest.mark.parametrize("write", BASE_CLASS_WRITES.values(), ids=BASE_CLASS_WRITES.keys())
def test_a_snapshot_tells_every_base_class_write_and_puts_the_value_back(write: Callable[[Any], None]) -> None:
    value = freeze({"a": 1, "b": [{"c": 1}, "d"], "e": None})
    before = json.dumps(value)
    snapshot = frozen.Snapshot(value)
    assert snapshot.intact()

    write(value)

    assert not snapshot.intact()
    assert snapshot.restore()
    assert snapshot.intact()
    assert json.dumps(value) == before
    assert type(value["b"]) is FrozenList and type(value["b"][0]) is FrozenDict
    assert type(value["a"]) is int


def test_a_duplicate_shares_no_container_with_the_original() -> None:
    value = freeze({"a": [{"b": ["c"]}], "d": "e"})
    copy = frozen.duplicate(value)
    list.append(value["a"][0]["b"], "written")

    assert copy == {"a": [{"b": ["c"]}], "d": "e"}
    assert type(copy) is FrozenDict and type(copy["a"]) is FrozenList
