"""In-process promises: every value handed to policy code is a frozen copy, and nothing escapes a stage.

Each section closes one way a listener, guard, approval service, wrapper, observer or caller
could get around a pack's decision from inside the process (docs/security.md, "In-process
promises", lists them with these tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyengine import (
    Accept,
    ApprovalAnswer,
    ApprovalRequest,
    Block,
    Deny,
    Dispatch,
    FrozenDict,
    FrozenError,
    FrozenList,
    Outcome,
    PendingResult,
    Registry,
    Signal,
    Source,
    SourceKind,
    Stage,
    ToolCall,
    ToolDefinition,
    ToolResult,
    accept,
    accept_value,
    allow,
    ask,
    block,
    define_tool,
    deny,
)
from policyengine.enforce.install import pack_bundle
from policyengine.packs.loader import load_pack
from policyengine.values.frozen import freeze, thaw
from support import SECRET_RECORD, MutatingApproval, Recorder, make_registry, make_tool, rules_pack, scaled

Next = Callable[..., Awaitable[Any]]
WRITE_PARAMS = {"path": {"type": "string", "required": True}}


def _scope_guard(call: ToolCall) -> str | None:
    """A red line on the token: writes need the write scope."""
    token = call.token
    if not isinstance(token, dict) or "write" not in token.get("scopes", ()):
        return "red line: no write scope"
    return None


# -- 1. the token is a frozen copy ------------------------------------------------------------------


def _grant_plainly(call: ToolCall) -> None:
    call.token["scopes"].append("write")


def _grant_by_base_class(call: ToolCall) -> None:
    list.append(call.token["scopes"], "write")


def _grant_by_swapping(call: ToolCall) -> None:
    dict.__setitem__(call.token, "scopes", ["read", "write"])


GRANTS = {"append": _grant_plainly, "list.append": _grant_by_base_class, "dict.__setitem__": _grant_by_swapping}


def _install_granter(registry: Registry, where: str, grant: Callable[[ToolCall], None]) -> None:
    if where == "pre-execute listener":

        async def granter(call: ToolCall, next: Next) -> Any:
            with contextlib.suppress(FrozenError):  # swallowing the refusal must not help either
                grant(call)
            return await next()

        registry.on_pre_execute(granter)
    elif where == "earlier guard":

        def granting_guard(call: ToolCall) -> None:
            with contextlib.suppress(FrozenError):
                grant(call)

        registry.guard(granting_guard)
    elif where == "approval service":

        async def asker(call: ToolCall, next: Next) -> Any:
            return ask("may it?")

        registry.on_pre_execute(asker)
        registry.set_approval(MutatingApproval(grant))
    else:
        assert where == "execute wrapper"

        async def wrapper(dispatch: Dispatch, next: Next) -> Any:
            with contextlib.suppress(FrozenError):
                grant(dispatch.call)
            return await next()

        registry.on_execute(wrapper)


@pytest.mark.parametrize("grant", GRANTS.values(), ids=GRANTS.keys())
@pytest.mark.parametrize("where", ["pre-execute listener", "earlier guard"])
def test_an_edit_to_the_token_never_passes_a_guard_that_reads_it(where: str, grant: Callable[[ToolCall], None]) -> None:
    runs: list[Any] = []

    async def body(_args: Any) -> str:
        runs.append("body")
        return "written"

    registry, _recorder = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))
    _install_granter(registry, where, grant)
    registry.guard(_scope_guard)

    result = registry.call_sync("fs_write", {"path": "notes.txt"}, token={"scopes": ["read"]})

    assert result.outcome is Outcome.DENIED, result.reason
    assert runs == []


@pytest.mark.parametrize("grant", GRANTS.values(), ids=GRANTS.keys())
@pytest.mark.parametrize("where", ["approval service", "execute wrapper"])
def test_an_edit_to_the_token_after_the_guards_never_reaches_the_body(
    where: str, grant: Callable[[ToolCall], None]
) -> None:
    seen: list[Any] = []

    async def body(_args: Any, dispatch: Dispatch) -> str:
        seen.append(thaw(dispatch.call.token))
        return "written"

    registry, _recorder = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))
    guarded: list[Any] = []
    registry.guard(lambda call: guarded.append(thaw(call.token)))
    _install_granter(registry, where, grant)

    result = registry.call_sync("fs_write", {"path": "notes.txt"}, token={"scopes": ["read"]})

    assert guarded == [{"scopes": ["read"]}]
    assert seen in ([], guarded)  # the body runs on the token the guard saw, or not at all
    if grant is not _grant_plainly:  # a base-class write is told and denied
        assert result.outcome is Outcome.DENIED, result.reason
        assert seen == []


def test_the_callers_later_edits_to_its_token_never_reach_the_body() -> None:
    token: dict[str, Any] = {"scopes": ["read"]}
    seen: list[Any] = []

    async def body(_args: Any, dispatch: Dispatch) -> str:
        token["scopes"].append("write")  # the caller, while the tool runs
        seen.append(thaw(dispatch.call.token))
        return "read"

    registry, _recorder = make_registry(make_tool("fs_read", body, parameters=WRITE_PARAMS))

    result = registry.call_sync("fs_read", {"path": "notes.txt"}, token=token)

    assert result.outcome is Outcome.OK, result.reason
    assert seen == [{"scopes": ["read"]}]


def test_a_token_that_is_not_json_data_is_refused_before_any_policy_runs() -> None:
    ran: list[str] = []

    async def body(_args: Any) -> str:
        ran.append("body")
        return "x"

    registry, recorder = make_registry(make_tool("fs_read", body, parameters=WRITE_PARAMS))

    @registry.guard
    def guard(call: ToolCall) -> None:
        ran.append("guard")

    result = registry.call_sync("fs_read", {"path": "notes.txt"}, token=object())

    assert result.outcome is Outcome.INVALID
    assert result.stage is Stage.VALIDATION
    assert result.reason is not None and "token" in result.reason
    assert ran == []
    assert recorder.results == [result]


# -- 2. roles are per call ---------------------------------------------------------------------------


ROLE_PARAMS = {"target": {"type": "string", "required": True, "role": "path"}}


def _roles_pack(tmp_path: Path) -> Path:
    rules = [
        {
            "id": "no-etc",
            "stage": "guard",
            "tools": ["*"],
            "when": "length(paths(@)[?starts_with(@, '/etc')]) > `0`",
            "reason": "red line: system path",
        }
    ]
    return rules_pack(tmp_path, "roles", rules)


@pytest.mark.parametrize("write", ["dict.__setitem__", "dict.clear"])
def test_a_write_to_call_roles_is_denied_and_never_changes_the_tools_roles_for_later_calls(
    tmp_path: Path, write: str
) -> None:
    runs: list[Any] = []

    async def body(args: Any) -> str:
        runs.append(thaw(args))
        return "done"

    tool = make_tool("fs_write", body, parameters=ROLE_PARAMS)
    roles_before = thaw(tool.roles)
    registries = [Registry(), Registry()]
    for registry in registries:
        registry.register(tool)
        registry.install(pack_bundle(load_pack(_roles_pack(tmp_path))))

    @registries[0].on_pre_execute
    async def unrole(call: ToolCall, next: Next) -> Any:
        assert call.roles is not None
        if write == "dict.__setitem__":
            dict.__setitem__(call.roles, "target", "text")
        else:
            dict.clear(call.roles)
        return await next()

    first = registries[0].call_sync("fs_write", {"target": "/etc/passwd"})
    later = [r.call_sync("fs_write", {"target": "/etc/passwd"}) for r in registries]

    assert first.outcome is Outcome.DENIED
    assert [r.outcome for r in later] == [Outcome.DENIED, Outcome.DENIED]
    assert later[1].stage is Stage.GUARD
    assert thaw(tool.roles) == roles_before
    assert runs == []


def test_each_call_gets_its_own_roles_mapping() -> None:
    seen: list[Any] = []
    registry, _ = make_registry(make_tool("fs_write", parameters=ROLE_PARAMS))

    @registry.guard
    def keep(call: ToolCall) -> None:
        seen.append(call.roles)

    registry.call_sync("fs_write", {"target": "a"})
    registry.call_sync("fs_write", {"target": "b"})

    assert len(seen) == 2 and seen[0] == seen[1] == {"target": "path"}
    assert seen[0] is not seen[1]
    assert seen[0] is not registry.tools["fs_write"].roles
    assert type(seen[0]) is FrozenDict


# -- 3. numbers are plain, finite int and float ------------------------------------------------------


class Float64(float):
    """What numpy.float64 is to Python: a float subclass (NaN included)."""


class Sneaky(float):
    """A float subclass whose float() lies."""

    def __float__(self) -> float:
        return 1.0


class Count(int):
    def __int__(self) -> int:
        return 0


class Tool(str, enum.Enum):  # noqa: UP042 - not StrEnum: its str() is 'Tool.WRITE', the case at issue
    WRITE = "fs_write"


class Level(enum.IntEnum):
    HIGH = 3


AMOUNT_PARAMS = {"amount": {"type": "number", "required": True}}


def _limit_pack(tmp_path: Path) -> Path:
    rules = [
        {
            "id": "limit",
            "stage": "guard",
            "tools": ["*"],
            "when": "arguments.amount >= `10000`",
            "reason": "red line: amount over the limit",
        }
    ]
    return rules_pack(tmp_path, "limits", rules)


@pytest.mark.parametrize(
    "amount",
    [Float64("nan"), Float64("inf"), Float64("-inf")],
    ids=["float-subclass-nan", "float-subclass-inf", "float-subclass-minus-inf"],
)
def test_a_non_finite_float_subclass_is_invalid_and_never_skips_a_limit(tmp_path: Path, amount: float) -> None:
    runs: list[Any] = []

    async def body(args: Any) -> str:
        runs.append(args)
        return "paid"

    registry, _ = make_registry(make_tool("pay", body, parameters=AMOUNT_PARAMS))
    registry.install(pack_bundle(load_pack(_limit_pack(tmp_path))))

    result = registry.call_sync("pay", {"amount": amount})

    assert result.outcome is Outcome.INVALID, result.reason
    assert runs == []


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        (Float64(2.5), 2.5),
        (Sneaky(20000.0), 20000.0),
        (Count(7), 7),
        (Level.HIGH, 3),
        (Tool.WRITE, "fs_write"),
    ],
    ids=["float-subclass", "float-with-lying-__float__", "int-with-lying-__int__", "IntEnum", "str-Enum"],
)
def test_freeze_makes_every_scalar_subclass_its_plain_value_whatever_it_overrides(value: Any, plain: Any) -> None:
    frozen = freeze({"v": value, "l": [value]})

    assert type(frozen["v"]) is type(plain)
    assert frozen["v"] == plain
    assert type(frozen["l"][0]) is type(plain)


def test_a_float_subclass_whose_float_lies_is_limited_on_its_real_value(tmp_path: Path) -> None:
    registry, _ = make_registry(make_tool("pay", parameters=AMOUNT_PARAMS))
    registry.install(pack_bundle(load_pack(_limit_pack(tmp_path))))

    result = registry.call_sync("pay", {"amount": Sneaky(20000.0)})

    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD


async def _one(_args: Any) -> float:
    return 1.0


def test_a_non_finite_float_subclass_in_a_replaced_value_blocks() -> None:
    registry, _ = make_registry(make_tool("fetch", _one, schema={"type": "number"}, render=None))

    @registry.on_post_execute
    async def swap(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return accept_value(Float64("nan"))

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.BLOCKED


def test_a_decimal_nan_is_not_json_data() -> None:
    from decimal import Decimal

    with pytest.raises(Exception, match="not JSON data"):
        freeze({"amount": Decimal("NaN")})


# -- 4. tool names are plain str ---------------------------------------------------------------------


def test_a_str_enum_tool_name_runs_the_tool_the_conditions_saw(tmp_path: Path) -> None:
    runs: list[str] = []

    async def body(_args: Any) -> str:
        runs.append("fs_write")
        return "written"

    rules = [
        {"id": "no-writes", "stage": "pre-execute", "tools": ["*"], "when": "name == 'fs_write'", "decision": "deny"}
    ]
    registry, _ = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))
    registry.install(pack_bundle(load_pack(rules_pack(tmp_path, "names", rules))))

    result = registry.call_sync(Tool.WRITE, {"path": "notes.txt"})

    assert result.outcome is Outcome.DENIED
    assert type(result.name) is str and result.name == "fs_write"
    assert runs == []


def test_a_str_enum_tool_name_is_seen_as_its_value_by_python_listeners() -> None:
    names: list[Any] = []
    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))

    @registry.guard
    def look(call: ToolCall) -> None:
        names.append((type(call.name), call.name, call.document["name"]))

    result = registry.call_sync(Tool.WRITE, {"path": "notes.txt"})

    assert result.outcome is Outcome.OK
    assert names == [(str, "fs_write", "fs_write")]


def test_a_tool_name_that_is_not_a_string_is_invalid() -> None:
    registry, recorder = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))

    result = registry.call_sync(42, {"path": "notes.txt"})  # type: ignore[arg-type]

    assert result.outcome is Outcome.INVALID
    assert recorder.results == [result]


# -- 5. arguments handed in frozen are copied ---------------------------------------------------------


@pytest.mark.parametrize("nesting", ["top level", "nested"])
def test_arguments_passed_in_frozen_are_copied_so_a_later_write_never_reaches_the_body(nesting: str) -> None:
    seen: list[Any] = []
    gate = asyncio.Event()

    async def body(args: Any) -> str:
        await gate.wait()
        seen.append(thaw(args))
        return "written"

    params = {"path": {"type": "string", "required": True}, "opts": {"type": "dict", "allow_unknown": True}}
    registry, _ = make_registry(make_tool("fs_write", body, parameters=params))
    paths: list[str] = []

    @registry.guard
    def look(call: ToolCall) -> None:
        paths.append(call.arguments["opts"]["to"])

    inner = FrozenDict(to="notes.txt")
    sent: Any = FrozenDict(path="notes.txt", opts=inner) if nesting == "top level" else {"path": "x", "opts": inner}

    async def scenario() -> Any:
        task = asyncio.ensure_future(registry.call("fs_write", sent))
        await asyncio.sleep(0.01)
        dict.__setitem__(inner, "to", "/etc/shadow")  # the caller, after policy decided
        gate.set()
        return await task

    result = asyncio.run(scenario())

    assert result.outcome is Outcome.OK, result.reason
    assert paths == ["notes.txt"]
    assert seen[0]["opts"] == {"to": "notes.txt"}
    assert result.arguments["opts"] == {"to": "notes.txt"}


# -- 6. reasons are plain str -------------------------------------------------------------------------


class Reason(str):
    """A str subclass that can change what it says."""

    text = "red line"

    def __str__(self) -> str:
        return self.text


def test_a_deny_reason_is_a_plain_str_from_construction() -> None:
    reason = Reason("red line")
    decision = deny(reason)

    assert type(decision.reason) is str
    assert type(Deny(reason).reason) is str
    assert type(block(reason).feedback) is str
    assert type(ask(reason).reason) is str


def test_a_decision_refuses_a_reason_that_is_not_a_string() -> None:
    with pytest.raises(TypeError):
        deny(["red", "line"])  # type: ignore[arg-type]


# -- 7. a decision names only the rule that made it ---------------------------------------------------


def test_a_python_listener_cannot_credit_its_decision_to_a_pack_rule(tmp_path: Path) -> None:
    rules = [{"id": "no-etc", "stage": "pre-execute", "tools": ["*"], "when": "`false`", "decision": "deny"}]
    pack = load_pack(rules_pack(tmp_path, "strict", rules))
    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))
    registry.install(pack_bundle(pack))
    forged = Source(SourceKind.RULE, "no-etc", pack.name, pack.digest)

    @registry.on_pre_execute(name="forger")
    async def forger(call: ToolCall, next: Next) -> Any:
        return Deny("blamed on the pack", forged)

    result = registry.call_sync("fs_write", {"path": "x"})

    assert result.outcome is Outcome.DENIED
    assert result.source is not None
    assert result.source.name == "forger" and result.source.kind is SourceKind.LISTENER
    assert result.source.pack is None


def test_a_python_guard_cannot_credit_its_red_line_to_a_pack_rule() -> None:
    forged = Source(SourceKind.RULE, "no-etc", "strict", "sha256:0")
    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))

    @registry.guard(name="forging-guard")
    def forging(call: ToolCall) -> Deny:
        return Deny("blamed on the pack", forged)

    result = registry.call_sync("fs_write", {"path": "x"})

    assert result.outcome is Outcome.DENIED
    assert result.source is not None and result.source.name == "forging-guard"


@pytest.mark.parametrize("how", ["returned rewrite", "rewrite through next()", "returned block"])
def test_a_python_post_listener_cannot_credit_its_block_or_rewrite_to_a_pack_rule(how: str) -> None:
    forged = Source(SourceKind.RULE, "redact", "strict", "sha256:0")
    registry, _ = make_registry(make_tool("fetch"))
    content = [{"type": "text", "text": "x"}]

    @registry.on_post_execute(name="forging-post")
    async def forging(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        if how == "returned block":
            return Block("blamed on the pack", forged)
        if how == "rewrite through next()":
            return await next(Accept(content=content, source=forged))
        return Accept(content=content, source=forged)

    result = registry.call_sync("fetch")

    if how == "returned block":
        assert result.outcome is Outcome.BLOCKED
        assert result.source is not None and result.source.name == "forging-post"
    else:
        assert result.outcome is Outcome.OK
        assert [s.name for s in result.rewrites] == ["forging-post"]


def test_a_pack_still_names_its_own_rules(tmp_path: Path) -> None:
    rules = [{"id": "no-writes", "stage": "pre-execute", "tools": ["*"], "decision": "deny", "reason": "no"}]
    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))

    @registry.on_pre_execute
    async def first(call: ToolCall, next: Next) -> Any:
        return await next()

    registry.install(pack_bundle(load_pack(rules_pack(tmp_path, "p", rules))))

    result = registry.call_sync("fs_write", {"path": "x"})

    assert result.source is not None and result.source.rule_id == "no-writes"


# -- 8. a post-execute block is final ----------------------------------------------------------------


def _redact_and_block_pack(tmp_path: Path, *, blocks: bool) -> Path:
    rules: list[dict[str, Any]] = [
        {"id": "redact-token", "stage": "post-execute", "tools": ["*"], "redact": [{"keys": ["token"]}]},
    ]
    if blocks:
        when = "result.value.user == 'ada'"
        rules.append({"id": "block-ada", "stage": "post-execute", "tools": ["*"], "when": when, "block": "no ada"})
    return rules_pack(tmp_path, "post", rules)


async def _fetch_record(_args: Any) -> dict[str, str]:
    return {"user": "ada", "token": "s3cr3t"}


RETURNS: dict[str, Callable[[], Any]] = {
    "accept()": accept,
    "Accept()": Accept,
    "accept(content)": lambda: accept([{"type": "text", "text": "all fine"}]),
}


def _fetch_after_approver(tmp_path: Path, returns: Callable[[], Any], *, blocks: bool) -> tuple[ToolResult, Recorder]:
    """Call `fetch` under the pack, below a listener `approver` that returns `returns()` after next()."""
    registry, recorder = make_registry(make_tool("fetch", _fetch_record, schema=SECRET_RECORD))

    @registry.on_post_execute(name="approver")
    async def approver(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        await next()
        return returns()

    registry.install(pack_bundle(load_pack(_redact_and_block_pack(tmp_path, blocks=blocks))))
    return registry.call_sync("fetch"), recorder


@pytest.mark.parametrize("returns", RETURNS.values(), ids=RETURNS.keys())
def test_an_earlier_listener_that_accepts_after_next_never_undoes_a_pack_block(
    tmp_path: Path, returns: Callable[[], Any]
) -> None:
    result, recorder = _fetch_after_approver(tmp_path, returns, blocks=True)

    assert result.outcome is Outcome.BLOCKED
    assert result.source is not None and result.source.rule_id == "block-ada"
    assert "s3cr3t" not in repr(recorder.results)


@pytest.mark.parametrize("returns", RETURNS.values(), ids=RETURNS.keys())
def test_an_earlier_listener_that_accepts_after_next_keeps_the_packs_redaction(
    tmp_path: Path, returns: Callable[[], Any]
) -> None:
    result, recorder = _fetch_after_approver(tmp_path, returns, blocks=False)

    assert result.outcome is Outcome.OK, result.reason
    assert result.value == {"user": "ada", "token": "[REDACTED]"}
    assert "s3cr3t" not in repr(recorder.results)


def test_an_earlier_listener_may_still_block_on_top_of_a_packs_redaction(tmp_path: Path) -> None:
    registry, _ = make_registry(make_tool("fetch", _fetch_record, schema=SECRET_RECORD))

    @registry.on_post_execute(name="stricter")
    async def stricter(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        await next()
        return block("not today")

    registry.install(pack_bundle(load_pack(_redact_and_block_pack(tmp_path, blocks=False))))

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.BLOCKED
    assert result.reason == "not today"


def test_a_python_block_below_an_accepting_listener_is_final_too() -> None:
    registry, _ = make_registry(make_tool("fetch"))

    @registry.on_post_execute(name="opener")
    async def opener(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        await next()
        return accept([{"type": "text", "text": "fine"}])

    @registry.on_post_execute(name="blocker")
    async def blocker(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return block("blocked below")

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.BLOCKED
    assert result.source is not None and result.source.name == "blocker"


# -- 9. BaseException and stray cancels are contained --------------------------------------------------


class Odd(BaseException):
    """A BaseException that is neither an Exception nor a cancel."""


BASE_ERRORS: dict[str, Callable[[], BaseException]] = {
    "custom BaseException": lambda: Odd("odd"),
    "KeyboardInterrupt": KeyboardInterrupt,
    "SystemExit": lambda: SystemExit(3),
    "stray CancelledError": lambda: asyncio.CancelledError("stray"),
}


def _raising_at(registry: Registry, where: str, error: Callable[[], BaseException]) -> Stage:
    if where == "pre-execute listener":

        async def pre(call: ToolCall, next: Next) -> Any:
            raise error()

        registry.on_pre_execute(pre)
        return Stage.PRE_EXECUTE
    if where == "guard":

        def guard(call: ToolCall) -> None:
            raise error()

        registry.guard(guard)
        return Stage.GUARD
    if where == "async guard":

        async def async_guard(call: ToolCall) -> None:
            raise error()

        registry.guard(async_guard)
        return Stage.GUARD
    if where == "approval service":

        class Raising:
            async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
                raise error()

        async def asker(call: ToolCall, next: Next) -> Any:
            return ask("may it?")

        registry.on_pre_execute(asker)
        registry.set_approval(Raising())
        return Stage.APPROVAL
    if where == "execute wrapper":

        async def wrapper(dispatch: Dispatch, next: Next) -> Any:
            raise error()

        registry.on_execute(wrapper)
        return Stage.EXECUTE
    assert where == "post-execute listener"

    async def post(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        raise error()

    registry.on_post_execute(post)
    return Stage.POST_EXECUTE


STAGES = [
    "pre-execute listener",
    "guard",
    "async guard",
    "approval service",
    "execute wrapper",
    "post-execute listener",
]


@pytest.mark.parametrize("error", BASE_ERRORS.values(), ids=BASE_ERRORS.keys())
@pytest.mark.parametrize("where", STAGES)
def test_a_base_exception_from_policy_code_fails_that_stage_closed_and_the_call_returns(
    where: str, error: Callable[[], BaseException]
) -> None:
    runs: list[str] = []

    async def body(_args: Any) -> str:
        runs.append("body")
        return "done"

    registry, recorder = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))
    stage = _raising_at(registry, where, error)

    async def scenario() -> Any:
        return await registry.call("fs_write", {"path": "x"})

    result = asyncio.run(scenario())

    expected = {
        Stage.POST_EXECUTE: Outcome.BLOCKED,
        Stage.EXECUTE: Outcome.ERROR,
    }.get(stage, Outcome.DENIED)
    assert result.outcome is expected, result.reason
    assert result.stage is stage
    assert recorder.results == [result]
    if stage is not Stage.POST_EXECUTE:
        assert runs == []


@pytest.mark.parametrize("error", BASE_ERRORS.values(), ids=BASE_ERRORS.keys())
def test_a_base_exception_from_the_tool_body_is_an_error_result(error: Callable[[], BaseException]) -> None:
    async def body(_args: Any) -> str:
        raise error()

    registry, recorder = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))

    result = asyncio.run(registry.call("fs_write", {"path": "x"}))

    assert result.outcome is Outcome.ERROR
    assert result.stage is Stage.EXECUTE
    assert recorder.results == [result]


def test_the_callers_real_cancel_still_propagates_through_a_policy_stage() -> None:
    started = asyncio.Event()
    registry, recorder = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))

    @registry.on_pre_execute
    async def slow(call: ToolCall, next: Next) -> Any:
        started.set()
        await asyncio.sleep(5)
        return await next()

    async def scenario() -> None:
        task = asyncio.ensure_future(registry.call("fs_write", {"path": "x"}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert recorder.outcomes == [Outcome.CANCELLED]


@pytest.mark.parametrize("error", BASE_ERRORS.values(), ids=BASE_ERRORS.keys())
def test_an_observer_raising_a_base_exception_never_skips_later_observers(error: Callable[[], BaseException]) -> None:
    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))
    seen: list[Outcome] = []

    def bad(result: Any) -> None:
        raise error()

    registry.on_result(bad, name="bad")
    registry.on_result(lambda r: seen.append(r.outcome), name="audit")

    result = asyncio.run(registry.call("fs_write", {"path": "x"}))

    assert result.outcome is Outcome.OK
    assert seen == [Outcome.OK]
    assert registry.stats["observer_failures"] == 1


@pytest.mark.parametrize("error", BASE_ERRORS.values(), ids=BASE_ERRORS.keys())
def test_a_signal_callback_raising_a_base_exception_never_keeps_the_cancel_from_later_callbacks(
    error: Callable[[], BaseException],
) -> None:
    signal = Signal()
    heard: list[str] = []

    def bad(_reason: Any) -> None:
        raise error()

    signal.add_callback(bad)
    signal.add_callback(lambda reason: heard.append(reason.message))

    signal.abort("stop")

    assert heard == ["stop"]


def test_a_callers_cancel_reaches_the_body_past_a_callback_raising_a_base_exception() -> None:
    signal = Signal()
    signal.add_callback(lambda _r: (_ for _ in ()).throw(KeyboardInterrupt()))
    reached: list[str] = []

    async def body(_args: Any, dispatch: Dispatch) -> str:
        await dispatch.signal.wait()
        reached.append("cancelled")
        return "late"

    registry, _ = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))

    async def scenario() -> Any:
        task = asyncio.ensure_future(registry.call("fs_write", {"path": "x"}, signal=signal))
        await asyncio.sleep(0.01)
        signal.abort("stop")
        return await task

    result = asyncio.run(scenario())

    assert result.outcome is Outcome.CANCELLED


# -- 10. a late answer never counts ---------------------------------------------------------------------


def test_a_sync_guard_that_answers_after_the_policy_timeout_denies() -> None:
    runs: list[str] = []

    async def body(_args: Any) -> str:
        runs.append("body")
        return "done"

    registry, _ = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS), policy_timeout=0.05)

    @registry.guard(name="slow-guard")
    def slow(call: ToolCall) -> None:
        time.sleep(0.1)
        return None

    result = registry.call_sync("fs_write", {"path": "x"})

    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.GUARD
    assert result.reason is not None and "within" in result.reason
    assert runs == []


def test_guards_within_the_policy_timeout_still_pass() -> None:
    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS), policy_timeout=5)
    registry.guard(lambda call: None)

    assert registry.call_sync("fs_write", {"path": "x"}).outcome is Outcome.OK


# -- 11. the invariant: whatever a listener tries, the body sees what the guards saw ----------------------


json_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
documents = st.recursive(
    json_leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=12,
)


def _writes(value: Any) -> list[Callable[[], None]]:
    """Every base-class write one can make to a frozen value's containers (one per container)."""
    found: list[Callable[[], None]] = []
    if isinstance(value, dict):
        found.append(lambda: dict.__setitem__(value, "injected", "/etc/shadow"))
        for item in value.values():
            found.extend(_writes(item))
    elif isinstance(value, list):
        found.append(lambda: list.append(value, "/etc/shadow"))
        for item in value:
            found.extend(_writes(item))
    return found


MEDDLERS = ["pre-execute listener", "pre-execute listener, after next()", "later guard", "approval", "execute wrapper"]


def _install_meddler(registry: Registry, where: str, meddle: Callable[[ToolCall], None]) -> None:
    """Something at `where` that makes one base-class write to the call it gets."""
    if where.startswith("pre-execute listener"):
        after = where.endswith("after next()")

        async def listener(call: ToolCall, next: Next) -> Any:
            if not after:
                meddle(call)
            decision = await next()
            if after:
                meddle(call)
            return decision

        registry.on_pre_execute(listener)
    elif where == "later guard":
        registry.guard(lambda call: meddle(call))
    elif where == "approval":

        class Meddling:
            async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
                meddle(request.call)
                return ApprovalAnswer.ALLOWED_ONCE

        async def asker(call: ToolCall, next: Next) -> Any:
            return ask("may it?")

        registry.on_pre_execute(asker)
        registry.set_approval(Meddling())
    else:

        async def wrapper(dispatch: Dispatch, next: Next) -> Any:
            meddle(dispatch.call)
            return await next()

        registry.on_execute(wrapper)


@settings(max_examples=scaled(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    doc=st.dictionaries(st.text(max_size=4), documents, max_size=4),
    token=documents,
    pick=st.integers(0, 1000),
    where=st.sampled_from(MEDDLERS),
)
def test_whatever_policy_code_writes_the_body_runs_on_what_the_guards_saw(
    doc: Any, token: Any, pick: int, where: str
) -> None:
    guarded: list[Any] = []
    ran: list[Any] = []

    async def body(args: Any, dispatch: Dispatch) -> str:
        ran.append((thaw(args), thaw(dispatch.call.token)))
        return "done"

    params = {"doc": {"type": "dict", "allow_unknown": True}}
    registry = Registry()
    registry.register(make_tool("tool", body, parameters=params))

    @registry.guard
    def look(call: ToolCall) -> None:
        guarded.append((thaw(call.arguments), thaw(call.token)))

    def meddle(call: ToolCall) -> None:
        writes = _writes(call.arguments) + _writes(call.token)
        writes[pick % len(writes)]()

    _install_meddler(registry, where, meddle)

    result = registry.call_sync("tool", {"doc": doc}, token=token)

    assert all(seen == ({"doc": doc}, token) for seen in guarded)  # no guard ever saw a write
    assert ran == []  # every write is told, wherever it was made
    assert result.outcome is Outcome.DENIED
    assert thaw(result.arguments) == {"doc": doc}


def test_allow_and_accept_stay_shared_singletons() -> None:
    assert allow() is allow()
    assert accept() is accept()


# -- 12. the rest of the identity is plain str too -------------------------------------------------------


class Agent(str):
    def __str__(self) -> str:
        return "root"


def test_agent_call_id_and_cwd_subclasses_become_the_plain_str_they_hold() -> None:
    seen: list[Any] = []
    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))

    @registry.guard
    def look(call: ToolCall) -> None:
        seen.append((call.agent, call.call_id, call.cwd, call.document["agent"]))
        seen.append(tuple(type(x) for x in (call.agent, call.call_id, call.cwd)))

    result = registry.call_sync(
        "fs_write", {"path": "x"}, agent=Agent("ada"), call_id=Agent("c-1"), cwd=Agent("/home/ada")
    )

    assert result.outcome is Outcome.OK
    assert seen == [("ada", "c-1", "/home/ada", "ada"), (str, str, str)]


@pytest.mark.parametrize("field", ["agent", "call_id", "cwd"])
def test_an_identity_field_that_is_not_a_string_is_invalid(field: str) -> None:
    registry, recorder = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))

    result = registry.call_sync("fs_write", {"path": "x"}, **{field: 42})

    assert result.outcome is Outcome.INVALID
    assert result.reason is not None and field in result.reason
    assert recorder.results == [result]


# -- 13. an answer that came after the deadline never counts, even when the loop was blocked ------------


@pytest.mark.parametrize("when", ["before next()", "after next()"])
def test_a_pre_execute_listener_that_blocks_past_the_policy_timeout_is_denied_and_named(when: str) -> None:
    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS), policy_timeout=0.05)

    @registry.on_pre_execute
    async def before(call: ToolCall, next: Next) -> Any:
        return await next()

    @registry.on_pre_execute
    async def blocking(call: ToolCall, next: Next) -> Any:
        if when == "before next()":
            time.sleep(0.1)  # never yields: the deadline's timer cannot fire
        await next()
        if when == "after next()":
            time.sleep(0.1)
        return allow()

    @registry.on_pre_execute
    async def after(call: ToolCall, next: Next) -> Any:
        return await next()

    result = registry.call_sync("fs_write", {"path": "x"})

    assert result.outcome is Outcome.DENIED
    assert result.reason is not None and "within" in result.reason
    assert result.source is not None and result.source.name.endswith("blocking")


def test_a_post_execute_listener_that_blocks_past_the_policy_timeout_and_accepts_is_blocked() -> None:
    registry, _ = make_registry(make_tool("fetch"), policy_timeout=0.05)

    @registry.on_post_execute
    async def blocking(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        time.sleep(0.1)
        return accept()

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.BLOCKED
    assert result.source is not None and result.source.name.endswith("blocking")


def test_an_approval_that_blocks_past_its_timeout_and_allows_is_denied() -> None:
    class Blocking:
        async def request(self, request: ApprovalRequest) -> ApprovalAnswer:
            time.sleep(0.1)
            return ApprovalAnswer.ALLOWED_ONCE

    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS), approval_timeout=0.05)
    registry.set_approval(Blocking())

    @registry.on_pre_execute
    async def asker(call: ToolCall, next: Next) -> Any:
        return ask("may it?")

    result = registry.call_sync("fs_write", {"path": "x"})

    assert result.outcome is Outcome.DENIED
    assert result.stage is Stage.APPROVAL


# -- 14. post-execute: what rules further down read is what was handed on ----------------------------------


def _secret_block_pack(tmp_path: Path) -> Path:
    rules = [
        {
            "id": "block-secrets",
            "stage": "post-execute",
            "tools": ["*"],
            "when": "result.value.token != null || starts_with(arguments.path || '', '/etc')",
            "block": "secret",
        }
    ]
    return rules_pack(tmp_path, "secrets", rules)


def _hide_token(call: ToolCall, pending: PendingResult) -> Callable[[], None]:
    token = pending.value["token"]
    dict.__delitem__(pending.value, "token")
    return lambda: dict.__setitem__(pending.value, "token", token)


def _swap_value(call: ToolCall, pending: PendingResult) -> Callable[[], None]:
    value = pending.value
    object.__setattr__(pending, "value", FrozenDict(user="ada"))
    return lambda: object.__setattr__(pending, "value", value)


def _hide_path(call: ToolCall, pending: PendingResult) -> Callable[[], None]:
    dict.__setitem__(call.arguments, "path", "notes.txt")
    return lambda: dict.__setitem__(call.arguments, "path", "/etc/shadow")


HIDES: dict[str, Callable[[ToolCall, PendingResult], Callable[[], None]]] = {
    "the token": _hide_token,
    "the whole value": _swap_value,
    "the path": _hide_path,
}


@pytest.mark.parametrize("hide", HIDES.values(), ids=HIDES.keys())
def test_a_post_listener_that_hides_something_from_a_pack_rule_and_puts_it_back_is_blocked(
    tmp_path: Path, hide: Callable[[ToolCall, PendingResult], Callable[[], None]]
) -> None:
    async def fetch(_args: Any) -> dict[str, str]:
        # With the path hidden the result holds no token: the path alone would block.
        return {"user": "ada"} if hide is _hide_path else {"user": "ada", "token": "s3cr3t"}

    params = {"path": {"type": "string"}}
    registry, recorder = make_registry(make_tool("fetch", fetch, schema=SECRET_RECORD, parameters=params))

    @registry.on_post_execute(name="hider")
    async def hider(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        put_back = hide(call, pending)
        decision = await next()
        put_back()
        return decision

    registry.install(pack_bundle(load_pack(_secret_block_pack(tmp_path))))

    result = registry.call_sync("fetch", {"path": "/etc/shadow" if hide is _hide_path else "notes.txt"})

    assert result.outcome is Outcome.BLOCKED, result.reason
    assert result.source is not None and result.source.name == "hider"
    assert "s3cr3t" not in repr(recorder.results)


def _unchecked(name: str, body: Callable[..., Any]) -> ToolDefinition:
    """A tool that declares no output schema: no validator copies its value on the way."""
    return define_tool(name=name, description="d", parameters={}, execute=body)


def test_a_value_a_listener_handed_on_is_copied_so_its_later_write_never_reaches_the_result(tmp_path: Path) -> None:
    registry, _ = make_registry(_unchecked("fetch", _fetch_record))
    kept = FrozenDict(user="ada")

    @registry.on_post_execute(name="keeper")
    async def keeper(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        decision = await next(accept_value(kept))
        dict.__setitem__(kept, "token", "s3cr3t")  # after the pack saw it
        return decision

    registry.install(pack_bundle(load_pack(_secret_block_pack(tmp_path))))

    result = registry.call_sync("fetch")

    assert result.outcome is Outcome.OK, result.reason
    assert result.value == {"user": "ada"}


def test_a_value_the_body_returned_is_copied_so_its_later_write_never_reaches_the_result() -> None:
    kept = FrozenDict(user="ada")

    async def body(_args: Any) -> Any:
        return kept

    registry, recorder = make_registry(_unchecked("fetch", body))

    result = registry.call_sync("fetch")
    dict.__setitem__(kept, "token", "s3cr3t")

    assert result.outcome is Outcome.OK
    assert result.value == {"user": "ada"}
    assert recorder.results[0].value == {"user": "ada"}


def test_a_body_that_writes_to_its_own_arguments_is_not_blamed_on_a_post_listener() -> None:
    async def body(args: Any) -> str:
        dict.__setitem__(args, "path", "/etc/shadow")  # its own copy: the result carries what policy saw
        return "written"

    registry, _ = make_registry(make_tool("fs_write", body, parameters=WRITE_PARAMS))

    @registry.on_pre_execute
    async def reader(call: ToolCall, next: Next) -> Any:
        return await next()

    @registry.on_post_execute
    async def reviewer(call: ToolCall, pending: PendingResult, next: Next) -> Any:
        return await next()

    result = registry.call_sync("fs_write", {"path": "notes.txt"})

    assert result.outcome is Outcome.OK, result.reason
    assert result.arguments == {"path": "notes.txt"}


def test_a_stray_cancel_anywhere_in_the_engine_ends_the_call_as_an_error_not_the_callers_cancel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import policyengine.runtime.registry as registry_module

    async def stray(*_args: Any) -> Any:
        raise asyncio.CancelledError("from nowhere")

    monkeypatch.setattr(registry_module, "run_call", stray)
    registry, recorder = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))

    result = asyncio.run(registry.call("fs_write", {"path": "x"}))

    assert result.outcome is Outcome.ERROR
    assert recorder.results == [result]


@pytest.mark.parametrize("number", [float("nan"), Float64("inf"), Float64("-inf")], ids=["nan", "inf", "-inf"])
def test_a_json_schema_number_is_finite_even_when_the_validator_is_called_directly(number: float) -> None:
    from policyengine.tools.json_schema_validator import compile_json_schema

    validator = compile_json_schema({"type": "object", "properties": {"amount": {"type": "number"}}})

    assert validator({"amount": number}) != []
    assert validator({"amount": Float64(2.5)}) == []


# -- 15. the tool's definition outlives the call: no write to it through a call survives ---------------


def _unrole_definition(definition: ToolDefinition) -> None:
    assert definition.roles is not None
    dict.__setitem__(definition.roles, "target", "text")


def _drop_definition_roles(definition: ToolDefinition) -> None:
    object.__setattr__(definition, "roles", None)


def _swap_definition_body(definition: ToolDefinition) -> None:
    object.__setattr__(definition, "execute", _fetch_record)


DEFINITION_WRITES: dict[str, Callable[[ToolDefinition], None]] = {
    "a base-class write to its roles": _unrole_definition,
    "its roles dropped": _drop_definition_roles,
    "its body swapped": _swap_definition_body,
}


@pytest.mark.parametrize("write", DEFINITION_WRITES.values(), ids=DEFINITION_WRITES.keys())
@pytest.mark.parametrize("where", ["execute wrapper", "execute wrapper, after next()", "post-execute listener"])
def test_a_write_to_the_tools_definition_through_a_call_fails_it_and_is_put_back_for_later_calls(
    tmp_path: Path, where: str, write: Callable[[ToolDefinition], None]
) -> None:
    runs: list[Any] = []

    async def body(args: Any) -> str:
        runs.append(thaw(args))
        return "done"

    tool = make_tool("fs_write", body, parameters=ROLE_PARAMS)
    roles, execute = tool.roles, tool.execute
    meddling, clean = Registry(), Registry()
    for registry in (meddling, clean):
        registry.register(tool)
        registry.install(pack_bundle(load_pack(_roles_pack(tmp_path))))
    if where == "post-execute listener":

        @meddling.on_post_execute
        async def post(call: ToolCall, pending: PendingResult, next: Next) -> Any:
            write(pending.definition)
            return await next()

    else:
        after = where.endswith("after next()")

        @meddling.on_execute
        async def wrapper(dispatch: Dispatch, next: Next) -> Any:
            if not after:
                write(dispatch.definition)
            value = await next()
            if after:
                write(dispatch.definition)
            return value

    first = meddling.call_sync("fs_write", {"target": "notes.txt"})
    later = clean.call_sync("fs_write", {"target": "/etc/passwd"})

    assert first.outcome in (Outcome.DENIED, Outcome.BLOCKED), first.reason
    assert first.reason is not None and "definition" in first.reason
    assert later.outcome is Outcome.DENIED and later.stage is Stage.GUARD
    assert tool.roles is roles and thaw(tool.roles) == {"target": "path"}
    assert tool.execute is execute


# -- 16. decisions other calls share are never changed by one ------------------------------------------


def _reword(decision: Any) -> None:
    object.__setattr__(decision, "reason", "rewritten")


def _rename_source(decision: Any) -> None:
    object.__setattr__(decision.source, "name", "someone-else")


@pytest.mark.parametrize("write", [_reword, _rename_source], ids=["its reason", "its rule's name"])
def test_a_listener_that_writes_to_the_decision_next_returned_fails_and_the_pack_rule_keeps_its_name(
    tmp_path: Path, write: Callable[[Any], None]
) -> None:
    rules = [{"id": "no-writes", "stage": "pre-execute", "tools": ["*"], "decision": "deny", "reason": "no"}]
    registry, _ = make_registry(make_tool("fs_write", parameters=WRITE_PARAMS))

    @registry.on_pre_execute(name="rewriter")
    async def rewriter(call: ToolCall, next: Next) -> Any:
        decision = await next()
        write(decision)
        return decision

    pack = load_pack(rules_pack(tmp_path, "p", rules))
    registry.install(pack_bundle(pack))

    result = registry.call_sync("fs_write", {"path": "x"})

    assert result.outcome is Outcome.DENIED
    assert result.source is not None and result.source.name == "rewriter"
    assert result.reason is not None and "wrote to a decision" in result.reason
    assert [rule.source.name for rule in pack.rules] == ["no-writes"]  # what every later call is credited to


@pytest.mark.parametrize("write", ["accept content", "allow source"])
def test_a_listener_that_writes_to_the_shared_allow_or_accept_fails_and_they_are_put_back(write: str) -> None:
    registry, _ = make_registry(make_tool("fetch"))

    if write == "accept content":

        @registry.on_post_execute
        async def post(call: ToolCall, pending: PendingResult, next: Next) -> Any:
            object.__setattr__(accept(), "content", FrozenList([FrozenDict(type="text", text="hijacked")]))
            return await next()

    else:

        @registry.on_pre_execute
        async def pre(call: ToolCall, next: Next) -> Any:
            object.__setattr__(allow(), "source", Source(SourceKind.RULE, "forged", "p", "d"))
            return await next()

    result = registry.call_sync("fetch")

    assert result.outcome in (Outcome.BLOCKED, Outcome.DENIED)
    assert accept().content is None and accept().source is None and allow().source is None
