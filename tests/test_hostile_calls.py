"""Hostile calls against the shipped packs: every call gets a defined result, in bounded time.

Targets: the .env rule (deny-env-files) and the system-directory guard (no-system-dirs) of
policies/baseline, and the file-system red line (fs-no-system-paths) of policies/bfcl, with
tool bodies that do nothing.  Inputs: path spellings (percent- and double-encoding,
backslashes, `//`, `.`/`..`, trailing dots and spaces, NTFS streams, file: URLs), unicode
look-alikes (full-width and compatibility forms, zero-width and bidi controls, combining
marks), nesting up to and beyond the 100-level freeze limit, non-string keys, NaN and
infinities, a 10 MB string and a 100,000-item list.

A defined result is ok, denied or invalid, never an internal error.  Each test prints its
worst per-call time; the bound asserted (2 s) is generous so CI noise never fails it.  The
inputs that exceed it are kept as strict xfails, run in a child process that is killed at the
bound so they cost at most the bound.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from policyengine import Outcome, PolicyLayers, Registry, Stage, ToolDefinition, ToolResult, define_tool, thaw
from policyengine.audit import AuditRecorder
from policyengine.language import functions
from policyengine.language.expressions import compile_expression

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / "policies" / "baseline"
BFCL = REPO / "policies" / "bfcl"

# CPU seconds per call: a hang guard, not a timing (an exponential or quadratic reading takes minutes).
# The worst case, 100,000 list items through baseline's gate, took ~2 s of CPU here after the type
# check stopped walking a pattern's characters (5 s before); CI's machine ran it 1.3x slower than
# this one, so a 6 s bound failed there. 20 s keeps the guard far from any machine's speed.
BOUND = 20.0
DEFINED = frozenset({Outcome.OK, Outcome.DENIED, Outcome.INVALID})
MB = 1024 * 1024

STRING = {"type": "string", "required": True, "description": "a string"}
STRINGS = {"type": "list", "schema": {"type": "string"}, "description": "strings"}
ANYTHING = {"type": "dict", "allow_unknown": True, "description": "nested data"}


async def _ok(_args: Any) -> str:
    return "ok"


def baseline_registry() -> Registry:
    """Seed-like tools with every argument name the baseline path rules read, plus nested data."""
    registry = Registry()
    tools: dict[str, dict[str, Any]] = {
        "fs_read": {"path": STRING, "tags": STRINGS, "data": ANYTHING, "n": {"type": "number"}},
        "read_many": {"paths": {**STRINGS, "required": True}},
        # A tool of unknown kind with two paths (copy itself is a writer since round four).
        "compare": {"source": STRING, "destination": STRING},
        "open_file": {"file": STRING},
        "http_post": {"url": STRING, "body": {"type": "string"}, "data": ANYTHING},
        "shell": {"command": STRING},
    }
    for name, parameters in tools.items():
        registry.register(define_tool(name=name, description=f"hostile {name}", parameters=parameters, execute=_ok))
    PolicyLayers.install(registry, [BASELINE])
    return registry


def bfcl_registry(catalog: Mapping[str, ToolDefinition]) -> Registry:
    """The BFCL catalog with bodies that do nothing; grep also takes nested data and a list."""
    registry = Registry()
    for name, definition in catalog.items():
        parameters = thaw(definition.parameters)
        if name == "grep":
            parameters.update(data=ANYTHING, lines=STRINGS)
        registry.register(
            define_tool(name=name, description=definition.description, parameters=parameters, execute=_ok)
        )
    PolicyLayers.install(registry, [BFCL])
    return registry


@pytest.fixture(scope="module")
def baseline() -> Registry:
    return baseline_registry()


@pytest.fixture(scope="module")
def bfcl(bfcl_catalog: dict[str, ToolDefinition]) -> Registry:
    return bfcl_registry(bfcl_catalog)


Call = tuple[str, Mapping[Any, Any]]


def run_calls(registry: Registry, calls: Sequence[Call]) -> list[tuple[ToolResult, float]]:
    """Each call through the whole pipeline, one after the other, timed."""

    async def main() -> list[tuple[ToolResult, float]]:
        out = []
        for name, arguments in calls:
            # CPU time of this process, not wall time: what is bounded is the work a hostile call
            # costs, which other processes on a loaded machine (or a second test worker) do not change.
            started = time.process_time()
            result = await registry.call(name, arguments)
            out.append((result, time.process_time() - started))
        return out

    return asyncio.run(main())


def assert_defined(results: list[tuple[ToolResult, float]], label: str) -> None:
    """Every result defined, no internal error; print and bound the worst time."""
    worst = max(seconds for _r, seconds in results)
    print(f"{label}: {len(results)} calls, worst {worst * 1000:.1f} ms per call")
    for result, _seconds in results:
        assert result.outcome in DEFINED, f"{result.outcome.value}: {result.reason}"
        assert "internal error" not in (result.reason or "")
    assert worst < BOUND, f"{label}: a call took {worst:.2f}s"


def _engine_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "policyengine" and r.levelno >= logging.ERROR]


# -- path spellings ---------------------------------------------------------------------------------

DOTENV_SPELLINGS = [
    ".env", ".ENV", ".Env", "./.env", "a/../.env", "a/b/../../.env", "a//.env", "a/./.env", "a\\.env",
    "a\\..\\.env", "..%2f.env", "%2e%2e/.env",
    # percent-encoding, double and triple
    "%2eenv", "%2Eenv", "%2e%65%6e%76", "%252eenv", "%25252e%2565nv", "a%5c.env", "a%255c.env",
    # trailing dots and spaces, NTFS streams
    ".env.", ".env ", ".env. . ", " .env", ".env::$DATA", ".env:stream",
    # file: URLs, Windows forms
    "file:///srv/app/.env", "file://localhost/srv/app/.env", "FILE:///srv/app/.ENV", "file:.env",
    "\\\\?\\C:\\app\\.env", "C:\\app\\.env", "//server/share/.env",
    # look-alikes: full-width, compatibility dots, script e, no-break and ideographic spaces
    "\uff0e\uff45\uff4e\uff56", "%EF%BC%8Eenv", "\u2024env", "\ufe52env", ".\u212fnv", "\u00a0.env", ".env\u3000",
    # invisible: zero-width, joiners, bidi controls, soft hyphen, BOM, NUL, line separator
    ".e\u200bnv", ".\u200denv", "\u202e.env", ".env\u200f", ".e\u00adnv", "\ufeff.env", ".env\x00", ".env\u2028",
    # the pack's .env.* pattern and folders
    ".env.local", "config/.env.production", ".env\x00.txt", "/srv/app/.env/", ".env/",
]  # fmt: skip

# Different names, not spellings of .env: a rule that denied these would deny everything.
# .envrc (direnv) and NAME.env (compose env_file, so ..env too) are env files of their own (issue 22, set B).
NOT_DOTENV = ["env", ".\u0435nv", ".env\u0301", ".env%", ".env%zz", "notes/.environment", ".envoy", "my.env.txt"]

SYSTEM_SPELLINGS = [
    "/etc/passwd", "//etc/passwd", "///etc//passwd", "/./etc/passwd", "/tmp/../etc/passwd", "/../etc/passwd",
    "/../../../../etc/passwd", "/var/lib/../../etc/shadow", "/home/../root", "%2fetc%2fpasswd",
    "%252fetc%252fpasswd", "\\etc\\passwd", "/ETC/passwd", "/Etc/Passwd", "/etc./passwd", "/etc /passwd",
    "/etc::$DATA/passwd", "file:///etc/passwd", "file://localhost/etc/passwd", "FILE:///etc/shadow",
    "file:/etc/passwd", "/\uff45\uff54\uff43/passwd", "\uff0fetc\uff0fpasswd", "/e\u200btc/passwd",
    "/\u202eetc/passwd", "/et\u00adc/passwd", "\t/etc/passwd", "/etc\x00/passwd", " /etc/passwd ",
    "/usr/bin/env", "/proc/self/environ", "/root/.ssh/id_rsa", "/dev/shm/x", "/sys/kernel", "/boot/grub",
    "/sbin/init", "/bin/sh", "/etc", "/etc/",
]  # fmt: skip

WINDOWS_SYSTEM_SPELLINGS = [
    "C:\\Windows\\System32\\drivers\\etc\\hosts", "c:/WINDOWS/system32", "C:Windows\\System32",
    "\\\\?\\C:\\Windows\\System32", "\\\\.\\C:\\Windows", "C:/Windows::$DATA/x", "file:c:/windows/x",
    "%43:%5cWindows", "c:/windows./system32", "C:\\Windows \\x",
]  # fmt: skip

# /srv/etc/app.conf: an etc folder under another place is no /etc (round seven: but its system files,
# /srv/etc/passwd as /srv/chroot/X/etc/shadow, are a root mounted there - system_dir_tails).
NOT_SYSTEM = ["/etcetera", "/\u0435tc/passwd", "etc/passwd", "/srv/etc/app.conf", "/usrlocal", "notes.txt"]


def _ids(values: Sequence[str]) -> list[str]:
    return [ascii(v)[1:-1][:40] for v in values]


@pytest.mark.parametrize("path", DOTENV_SPELLINGS, ids=_ids(DOTENV_SPELLINGS))
def test_every_spelling_of_a_dotenv_path_is_denied_by_baseline(baseline: Registry, path: str) -> None:
    calls: list[Call] = [
        ("fs_read", {"path": path}),
        ("read_many", {"paths": ["notes.txt", path]}),
        ("compare", {"source": "notes.txt", "destination": path}),
        ("open_file", {"file": path}),
    ]
    results = run_calls(baseline, calls)
    assert_defined(results, f"dotenv {path!a}")
    for result, _s in results:
        assert result.outcome is Outcome.DENIED, f"{result.name} {path!a}: {result.outcome.value}"
        assert result.stage is Stage.PRE_EXECUTE and result.source is not None
        assert result.source.name == "deny-env-files"


@pytest.mark.parametrize("path", NOT_DOTENV, ids=_ids(NOT_DOTENV))
def test_names_that_only_resemble_dotenv_pass_baseline(baseline: Registry, path: str) -> None:
    [(result, _s)] = run_calls(baseline, [("fs_read", {"path": path})])
    assert result.outcome is Outcome.OK, result.reason


@pytest.mark.parametrize(
    "path", SYSTEM_SPELLINGS + WINDOWS_SYSTEM_SPELLINGS, ids=_ids(SYSTEM_SPELLINGS + WINDOWS_SYSTEM_SPELLINGS)
)
def test_every_spelling_of_a_system_directory_is_refused_by_the_baseline_guard(baseline: Registry, path: str) -> None:
    calls: list[Call] = [
        ("fs_read", {"path": path}),
        ("read_many", {"paths": ["notes.txt", path]}),
        ("compare", {"source": path, "destination": "notes.txt"}),
    ]
    results = run_calls(baseline, calls)
    assert_defined(results, f"system {path!a}")
    for result, _s in results:
        assert result.outcome is Outcome.DENIED, f"{result.name} {path!a}: {result.outcome.value}"
        assert (result.stage, result.source and result.source.name) == (Stage.GUARD, "no-system-dirs")


@pytest.mark.parametrize("path", SYSTEM_SPELLINGS, ids=_ids(SYSTEM_SPELLINGS))
def test_every_spelling_of_a_system_directory_is_refused_by_the_bfcl_fs_red_line(bfcl: Registry, path: str) -> None:
    calls: list[Call] = [
        ("cat", {"file_name": path}),
        ("cd", {"folder": path}),
        ("cp", {"source": "notes.txt", "destination": path}),
        ("grep", {"file_name": "notes.txt", "pattern": "x", "data": {"deep": [{"deeper": path}]}}),
    ]
    results = run_calls(bfcl, calls)
    assert_defined(results, f"bfcl system {path!a}")
    for result, _s in results:
        assert result.outcome is Outcome.DENIED, f"{result.name} {path!a}: {result.outcome.value}"
        assert (result.stage, result.source and result.source.name) == (Stage.GUARD, "fs-no-system-paths")


@pytest.mark.parametrize("path", NOT_SYSTEM, ids=_ids(NOT_SYSTEM))
def test_paths_that_only_resemble_system_directories_pass(baseline: Registry, bfcl: Registry, path: str) -> None:
    [(result, _s)] = run_calls(baseline, [("fs_read", {"path": path})])
    assert result.outcome is Outcome.OK, result.reason
    [(result, _s)] = run_calls(bfcl, [("cat", {"file_name": path})])
    assert result.outcome is Outcome.OK, result.reason


@pytest.mark.parametrize(
    "path", ["file:///C:/Windows/System32/config/SAM", "file://localhost/c:/windows/system32", "/C:/Windows/x"]
)
def test_a_file_url_to_a_windows_drive_is_refused_by_the_baseline_guard(baseline: Registry, path: str) -> None:
    [(result, _s)] = run_calls(baseline, [("fs_read", {"path": path})])
    assert result.outcome is Outcome.DENIED, f"{path}: {result.outcome.value}"


# -- nesting, keys, numbers, odd strings ----------------------------------------------------------------


def nest(depth: int, leaf: Any, *, lists: bool = False) -> Any:
    """`leaf` wrapped in `depth` levels of objects (or arrays), built without recursion."""
    value = leaf
    for level in range(depth):
        value = [value] if lists and (depth - level) % 2 == 0 else {"k": value}  # the outermost is an object
    return value


DEPTHS = [1, 50, 98, 99, 100, 101, 150, 1000, 100_000]


@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_nesting_is_seen_up_to_the_freeze_limit_and_invalid_beyond(
    baseline: Registry, bfcl: Registry, depth: int, caplog: pytest.LogCaptureFixture
) -> None:
    # "data" sits one level below the arguments; a leaf at depth 100 is the deepest a call may hold.
    within = depth + 1 <= 100
    secret = "api_key = sk-0123456789abcdefghijklmnop"
    for lists in (False, True):
        base = run_calls(
            baseline,
            [
                ("http_post", {"url": "https://example.com", "data": nest(depth, secret, lists=lists)}),
                ("fs_read", {"path": "notes.txt", "data": nest(depth, "/etc/passwd", lists=lists)}),
            ],
        )
        red = run_calls(
            bfcl, [("grep", {"file_name": "a", "pattern": "b", "data": nest(depth, "/etc/passwd", lists=lists)})]
        )
        assert_defined(base + red, f"depth {depth} ({'lists' if lists else 'objects'})")
        (network, _), (plain, _), (fs, _) = base + red
        if within:
            # The secret and the system path are found however deep they sit.
            assert (network.outcome, network.stage) == (Outcome.DENIED, Stage.GUARD), network.reason
            assert (fs.outcome, fs.stage) == (Outcome.DENIED, Stage.GUARD), fs.reason
            # A value shaped like a path is a path under any key, however deep: the red line sees it.
            assert (plain.outcome, plain.stage) == (Outcome.DENIED, Stage.GUARD), plain.reason
        else:
            for result in (network, plain, fs):
                assert result.outcome is Outcome.INVALID and "nested deeper than 100 levels" in (result.reason or "")
    assert _engine_errors(caplog) == []


BAD_KEYS: list[Any] = [1, None, True, 1.5, (1, 2), b"path", frozenset()]


@pytest.mark.parametrize("key", BAD_KEYS, ids=[type(k).__name__ for k in BAD_KEYS])
def test_non_string_keys_are_invalid_at_any_depth(baseline: Registry, bfcl: Registry, key: Any) -> None:
    calls: list[Call] = [
        ("fs_read", {"path": "notes.txt", key: "x"}),
        ("fs_read", {"path": "notes.txt", "data": {"a": [{key: "/etc/passwd"}]}}),
        ("fs_read", {"path": "notes.txt", "data": nest(60, {key: 1})}),
    ]
    results = run_calls(baseline, calls) + run_calls(bfcl, [("cat", {"file_name": "a", key: "/etc/passwd"})])
    assert_defined(results, f"key {type(key).__name__}")
    for result, _s in results:
        assert result.outcome is Outcome.INVALID, result.reason
        assert "JSON object keys are strings" in (result.reason or "")


@pytest.mark.parametrize(
    "value", [b"bytes", {1, 2}, object(), 1j, bytearray(b"x"), Path("/etc/passwd")], ids=lambda v: type(v).__name__
)
def test_values_that_are_not_json_are_invalid(baseline: Registry, value: Any) -> None:
    results = run_calls(baseline, [("fs_read", {"path": value}), ("fs_read", {"path": "n", "data": {"deep": [value]}})])
    assert_defined(results, f"value {type(value).__name__}")
    assert all(result.outcome is Outcome.INVALID for result, _s in results)


ODD_NUMBERS: list[float] = [float("nan"), float("inf"), float("-inf"), -0.0, 1e308, 2**63, -(10**4000)]


@pytest.mark.parametrize("number", ODD_NUMBERS, ids=["nan", "inf", "-inf", "-0.0", "1e308", "2**63", "4001-digit-int"])
def test_odd_numbers_get_a_defined_result(baseline: Registry, bfcl: Registry, number: float) -> None:
    results = run_calls(
        baseline,
        [
            ("fs_read", {"path": "notes.txt", "n": number}),
            ("fs_read", {"path": "notes.txt", "data": {"n": [number, {"m": number}]}}),
            ("fs_read", {"path": number}),
        ],
    )
    results += run_calls(
        bfcl,
        [
            ("place_order", {"order_type": "Buy", "symbol": "AAPL", "price": number, "amount": 10}),
            ("withdraw_funds", {"amount": number}),
            ("tail", {"file_name": "a", "lines": number}),
        ],
    )
    assert_defined(results, "odd number")
    assert results[2][0].outcome is Outcome.INVALID  # a number is not a path


def test_infinite_and_huge_amounts_are_denied_by_the_bfcl_limits(bfcl: Registry) -> None:
    results = run_calls(
        bfcl,
        [
            ("place_order", {"order_type": "Buy", "symbol": "AAPL", "price": float("inf"), "amount": 10}),
            ("place_order", {"order_type": "Buy", "symbol": "AAPL", "price": 1e308, "amount": 10}),
            ("withdraw_funds", {"amount": float("inf")}),
            ("withdraw_funds", {"amount": 10**4000}),
        ],
    )
    assert_defined(results, "huge amounts")
    # Infinity is not a JSON number: refused before any policy runs. Finite huge numbers hit the limits.
    assert [r.outcome for r, _s in results] == [Outcome.INVALID, Outcome.DENIED, Outcome.INVALID, Outcome.DENIED]


def test_a_denial_quoting_a_5000_digit_amount_is_still_a_denial(bfcl: Registry) -> None:
    [(result, _s)] = run_calls(bfcl, [("withdraw_funds", {"amount": 10**5000})])
    assert result.outcome is Outcome.DENIED, f"{result.outcome.value}: {result.reason}"
    assert result.source is not None and result.source.name == "deny-transfers-over-limit"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("place_order", {"order_type": "Buy", "symbol": "AAPL", "price": float("nan"), "amount": 10**9}),
        ("withdraw_funds", {"amount": float("nan")}),
        ("fund_account", {"amount": float("nan")}),
    ],
    ids=["place_order", "withdraw_funds", "fund_account"],
)
def test_a_nan_amount_never_slips_past_the_bfcl_limits(bfcl: Registry, tool: str, arguments: dict[str, Any]) -> None:
    [(result, _s)] = run_calls(bfcl, [(tool, arguments)])
    assert result.outcome is not Outcome.OK, f"{tool} with NaN ran (stage {result.stage})"


ODD_STRINGS = [
    "\ud800", "\udfff.env", "/etc/\udc80", "e\u0301" * 50, "\u0130\u0130/ETC", "\U0001f4a9/../.env", "%c0%ae%c0%ae/etc",
    "%u002e%u002e/etc", "%", "%%%%", "%2", "%zz", "\\\\", "//", "/", ".", "..", "...", "" , " ", "\x00" * 100,
    "\u202e" * 1000, "a" * 5000 + "/.env", "../" * 2000 + "etc/passwd", "%25" * 33 + "2e", "\ufdfa" * 100,
    "C:", "C:\\", "\\\\?\\", "file:", "file://", "file:///", "::$DATA", ":", "$HOME/.env", "~/.env", "%USERPROFILE%",
]  # fmt: skip


def test_odd_strings_get_a_defined_result(baseline: Registry, bfcl: Registry, caplog: pytest.LogCaptureFixture) -> None:
    results = run_calls(baseline, [("fs_read", {"path": s}) for s in ODD_STRINGS])
    results += run_calls(baseline, [("read_many", {"paths": ODD_STRINGS})])
    results += run_calls(bfcl, [("cat", {"file_name": s}) for s in ODD_STRINGS])
    results += run_calls(bfcl, [("post_tweet", {"content": s, "tags": ODD_STRINGS}) for s in ODD_STRINGS[:5]])
    assert_defined(results, "odd strings")
    assert _engine_errors(caplog) == []


# -- property: whatever a model sends ---------------------------------------------------------------------

_HOSTILE_CHARS = [*"./\\%2e5:$ aE~", "\u200b", "\u202e", "\uff0e", "\u0301", "\ud800", "\x00", "\ufdfa", "\u0130"]
hostile_text = st.one_of(
    st.text(max_size=30),
    st.sampled_from(DOTENV_SPELLINGS + SYSTEM_SPELLINGS + ODD_STRINGS),
    st.text(alphabet=st.sampled_from(_HOSTILE_CHARS), max_size=40),
)
scalars = st.one_of(
    # Integers stay under 4,300 digits: beyond that, see the xfail on Template.render above.
    st.none(),
    st.booleans(),
    st.integers(),
    st.just(10**4000),
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
)
keys = st.one_of(hostile_text, st.integers(), st.none())
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=25
)
BASELINE_TOOLS = ["fs_read", "read_many", "compare", "open_file", "http_post", "shell", "nope"]
BFCL_NAMES = ["cat", "cd", "cp", "mv", "find", "grep", "echo", "place_order", "post_tweet", "send_message", "rm"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pack=st.sampled_from(["baseline", "bfcl"]),
    tool_index=st.integers(min_value=0, max_value=20),
    arguments=st.dictionaries(keys, values, max_size=5) | st.fixed_dictionaries({"path": values}),
)
def test_any_call_a_model_can_send_gets_a_defined_result(
    baseline: Registry, bfcl: Registry, pack: str, tool_index: int, arguments: dict[Any, Any]
) -> None:
    registry, names = (baseline, BASELINE_TOOLS) if pack == "baseline" else (bfcl, BFCL_NAMES)
    name = names[tool_index % len(names)]
    results = run_calls(registry, [(name, arguments)])
    assert_defined(results, f"{pack} {name}")


# -- huge arguments ------------------------------------------------------------------------------------------


def huge_cases() -> list[tuple[str, str, Call]]:
    """(label, pack, call) with a 10 MB string or a 100,000-item list, inside the bound on this machine."""
    ten = 10 * MB
    return [
        ("10 MB plain path", "baseline", ("fs_read", {"path": "a" * ten})),
        ("10 MB full-width dots", "baseline", ("fs_read", {"path": "\uff0e" * (ten // 3)})),
        ("10 MB zero-width spaces", "baseline", ("fs_read", {"path": "\u200b" * (ten // 3)})),
        ("10 MB body to a network tool", "baseline", ("http_post", {"url": "https://x", "body": "a" * ten})),
        ("10 MB of secrets to a network tool", "baseline", ("http_post", {"url": "x", "body": "token=" * (ten // 6)})),
        ("100,000 tags (not paths)", "baseline", ("fs_read", {"path": "notes", "tags": ["x"] * 100_000})),
        ("10 MB file name (bfcl)", "bfcl", ("cat", {"file_name": "a" * ten})),
        ("10 MB echo content (bfcl)", "bfcl", ("echo", {"content": "a" * ten, "file_name": "x"})),
        ("100,000 strings under the fs red line (bfcl)", "bfcl", ("grep", {"file_name": "a", "pattern": "b",
                                                                          "lines": ["x"] * 100_000})),
    ]  # fmt: skip


def test_huge_arguments_get_a_defined_result_in_bounded_time(baseline: Registry, bfcl: Registry) -> None:
    worst = ("", 0.0)
    for label, pack, call in huge_cases():
        [(result, seconds)] = run_calls(baseline if pack == "baseline" else bfcl, [call])
        print(f"{label}: {result.outcome.value} in {seconds * 1000:.0f} ms")
        assert result.outcome in DEFINED, result.reason
        worst = max(worst, (label, seconds), key=lambda w: w[1])
        assert seconds < BOUND, f"{label}: {seconds:.2f}s"
    print(f"worst: {worst[0]} at {worst[1] * 1000:.0f} ms")


def test_a_call_body_is_scanned_for_secrets_once_though_rules_also_scan_values_they_build(
    baseline: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two baseline red lines read secrets(@), and one of them also secrets([...hosts...]) of a list
    # it builds: the call's arguments must stay memoised across both (a 10 MB body costs ~0.9 s a scan).
    from policyengine.arguments import secret_scanner

    scanned: list[Any] = []
    real = secret_scanner.find_secrets

    def counting(value: Any, *, path: str = "") -> list[Any]:
        scanned.append(value)
        return real(value, path=path)

    monkeypatch.setattr(secret_scanner, "find_secrets", counting)
    body = "a" * 100_000
    [(result, _)] = run_calls(baseline, [("http_post", {"url": "https://x", "body": body})])
    assert result.outcome is Outcome.OK
    assert sum(isinstance(v, Mapping) and v.get("body") == body for v in scanned) == 1, len(scanned)


_TIMED_CHILD = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from policyengine import PolicyLayers, Registry, define_tool

    recipe = json.loads(sys.argv[1])
    async def ok(_args):
        return "ok"
    registry = Registry()
    registry.register(define_tool(name="fs_read", description="d", parameters={"path": {"type": "string"}}, execute=ok))
    registry.register(define_tool(name="read_many", description="d",
                                  parameters={"paths": {"type": "list", "schema": {"type": "string"}}}, execute=ok))
    PolicyLayers.install(registry, [recipe["pack"]])
    body = recipe["unit"] * recipe["times"]
    if recipe["items"]:
        call = ("read_many", {"paths": [recipe["prefix"] + body + str(i) for i in range(recipe["items"])]})
    else:
        call = ("fs_read", {"path": recipe["prefix"] + body})
    print("ready", flush=True)
    started = time.process_time()
    result = asyncio.run(registry.call(*call))
    print(result.outcome.value, time.process_time() - started, flush=True)
    """
)


def call_in_child(recipe: Mapping[str, Any], bound: float) -> tuple[str, float | None]:
    """Run one hostile call in a child process; kill it once it has run for `bound` seconds."""
    child = subprocess.Popen(
        [sys.executable, "-c", _TIMED_CHILD, json.dumps({"pack": str(BASELINE), **recipe})],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert child.stdout is not None
    ready = child.stdout.readline()  # setup (imports, pack, building the input) is not timed
    if ready.strip() != "ready":
        _out, err = child.communicate()
        pytest.fail(f"child failed before the call: {err[-2000:]}")
    try:
        out, _err = child.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return "still running", None
    outcome, seconds = out.split()
    return outcome, float(seconds)


_SLOW = "bug: policy evaluation time per call is unbounded; path functions run several full passes over the "
SLOW_CASES = [
    pytest.param(
        {"prefix": "", "unit": "\ufdfa", "times": 2 * MB // 3, "items": 0},
        id="2MB-nfkc-expansion",
    ),
    pytest.param(
        {"prefix": "/etc/", "unit": "%25", "times": 10 * MB // 3, "items": 0},
        id="10MB-percent-signs",
    ),
    pytest.param(
        {"prefix": "%2fetc%2f", "unit": "%25", "times": 10, "items": 100_000},
        id="100k-encoded-paths",  # 8.8 s before paths(@) refused calls of over MAX_PATHS paths
    ),
    pytest.param(
        {"prefix": "", "unit": "%25", "times": 10_900, "items": 100},
        id="100-deeply-encoded-32k-paths",  # 2.1 s before the MAX_PATH_CHARACTERS budget
    ),
]


@pytest.mark.parametrize("recipe", SLOW_CASES)
def test_adversarial_huge_arguments_are_evaluated_within_the_bound(recipe: dict[str, Any]) -> None:
    outcome, seconds = call_in_child(recipe, BOUND)
    print(f"{recipe}: {outcome} in {'>' + str(BOUND) if seconds is None else f'{seconds:.2f}'} s")
    assert seconds is not None and seconds < BOUND, f"still running after {BOUND}s"
    if recipe["items"]:
        assert outcome == "denied", "a call past the path budget is refused, not let through unread"


def _many_paths(count: int, name: str = "a.txt") -> Call:
    return ("read_many", {"paths": [f"notes{i}/{name}" for i in range(count)]})


@pytest.mark.parametrize(
    ("call", "what"),
    [
        (_many_paths(functions.MAX_PATHS + 1), "paths, more than"),
        (("read_many", {"paths": ["a" * 32_000] * (functions.MAX_PATH_CHARACTERS // 32_000 + 1)}), "characters"),
    ],
    ids=["count", "characters"],
)
def test_a_call_past_the_path_budget_is_refused_by_the_path_red_lines(
    baseline: Registry, call: Call, what: str
) -> None:
    [(result, seconds)] = run_calls(baseline, [call])
    assert result.outcome is Outcome.DENIED and result.reason is not None
    assert what in result.reason and "split the call" in result.reason
    assert seconds < BOUND


def test_a_call_at_the_path_budget_is_read_and_judged_on_its_paths(baseline: Registry) -> None:
    [(benign, _)] = run_calls(baseline, [_many_paths(functions.MAX_PATHS)])
    assert benign.outcome is Outcome.OK, benign.reason
    [(forbidden, _)] = run_calls(baseline, [_many_paths(functions.MAX_PATHS, ".env")])
    assert forbidden.outcome is Outcome.DENIED and forbidden.reason is not None
    assert ".env" in forbidden.reason and "split the call" not in forbidden.reason


# -- audit ---------------------------------------------------------------------------------------------------


def test_a_call_with_a_huge_integer_is_still_audited(bfcl_catalog: dict[str, ToolDefinition]) -> None:
    stream = io.StringIO()
    recorder = AuditRecorder(stream)
    registry = bfcl_registry(bfcl_catalog)
    registry.on_result(recorder, name="audit")
    [(result, _s)] = run_calls(registry, [("tail", {"file_name": "notes.txt", "lines": 10**5000})])
    assert result.outcome is Outcome.OK
    assert recorder.written == 1, f"not audited: {recorder.last_error}"


DIRECT_RULES = """\
rules:
  - id: no-system-dirs
    description: a red line that tests each path itself, not through paths(@)
    stage: guard
    tools: [read_many]
    when: "arguments.paths[?path_within(@, '/etc')] | length(@) > `0`"
    reason: "system directory"
  - id: under-a-root
    description: a path test whose second argument is computed (not a literal), so not specialised
    stage: guard
    tools: [read_under]
    when: "arguments.paths[?!path_surely_within(@, join('', ['/', 'w']))] | length(@) > `0`"
    reason: "outside the root"
  - id: reads
    description: reading is allowed; the red lines above still apply
    stage: pre-execute
    tools: [read_many, read_under, read_listed]
    decision: allow
  - id: ask-for-many
    description: a template that tests each path itself
    stage: guard
    tools: [read_listed]
    when: "length(arguments.paths) > `50000`"
    reason: "too many paths, of which in /etc: {arguments.paths[?path_within(@, '/etc')] | join(', ', @)}"
  - id: markdown-only
    description: an allow rule that tests each path itself
    stage: pre-execute
    tools: [read_docs]
    when: "length(arguments.paths[?path_surely_matches(@, '*.md')]) == length(arguments.paths)"
    decision: allow
"""


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    folder = tmp_path_factory.mktemp("direct")
    (folder / "pack.yaml").write_text("name: direct\nversion: 1.0.0\ndefault: deny\nfiles: [r.yaml]\n")
    (folder / "r.yaml").write_text(DIRECT_RULES)
    registry = Registry()
    for name in ("read_many", "read_under", "read_docs", "read_listed"):
        parameters = {"paths": {**STRINGS, "required": True}}
        registry.register(define_tool(name=name, description=name, parameters=parameters, execute=_ok))
    PolicyLayers.install(registry, [folder])
    return registry


@pytest.mark.parametrize(
    ("tool", "template"),
    [("read_many", "notes{i}/a.txt"), ("read_under", "/w/{i}.txt"), ("read_docs", "d{i}.md")],
    ids=["literal-dirs", "computed-dirs", "allow-rule"],
)
def test_a_rule_testing_each_path_itself_is_bounded_and_fails_closed_past_the_budget(
    direct: Registry, tool: str, template: str
) -> None:
    def call(count: int) -> Call:
        return (tool, {"paths": [template.format(i=i) for i in range(count)]})

    [(within, _)] = run_calls(direct, [call(functions.MAX_PATHS)])
    assert within.outcome is Outcome.OK, within.reason  # at the budget: read and judged, benign
    [(past, seconds)] = run_calls(direct, [call(10 * functions.MAX_PATHS)])
    assert past.outcome is Outcome.DENIED and past.reason is not None and "split the call" in past.reason
    assert seconds < BOUND, f"{seconds:.2f}s"


def test_a_rule_testing_each_path_itself_still_finds_the_forbidden_one_at_the_budget(direct: Registry) -> None:
    paths = [f"notes{i}/a.txt" for i in range(functions.MAX_PATHS - 1)] + ["/etc/passwd"]
    [(result, _)] = run_calls(direct, [("read_many", {"paths": paths})])
    assert result.outcome is Outcome.DENIED and result.reason == "system directory"


@pytest.mark.parametrize(
    ("when", "budgeted"),
    [
        ("arguments.paths[?path_within(@, '/etc')]", True),
        ("paths(@)[?path_matches(@, '*.pem')] | length(@) > `0`", True),
        ("map(&path_within(@, '/etc'), arguments.paths)", True),
        ("sort_by(arguments.files, &path_escapes(name))", True),
        ("path_within(arguments.path, ['/etc'])", False),  # once per evaluation: bounded without a budget
        ("arguments.items[?price > `10`]", False),
    ],
)
def test_an_expression_that_may_test_paths_per_item_evaluates_under_a_budget(when: str, budgeted: bool) -> None:
    expression = compile_expression(when, {}, lambda *problem, **_: pytest.fail(str(problem)))
    assert expression is not None and expression.tests_paths is budgeted


def test_a_template_testing_each_path_itself_has_the_budget_and_the_decision_stands(direct: Registry) -> None:
    [(result, seconds)] = run_calls(direct, [("read_listed", {"paths": [f"d{i}.md" for i in range(60_000)]})])
    assert result.outcome is Outcome.DENIED and result.source is not None and result.source.name == "ask-for-many"
    assert result.reason is not None and result.reason.startswith("too many paths, of which in /etc: <{")
    assert "split the call" in result.reason and seconds < BOUND
