"""Sessions, the core: the log and its fold, the stores, the session reads, and the registry's three steps.

docs/sessions.md is the contract. Every store keeps the same semantics (the same test runs against
memory, SQLite and a real redis-server); a store that fails makes the call fail closed.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine import Registry, define_tool, load_pack, pack_bundle
from policyengine.arguments import fingerprints
from policyengine.enforce.session_rules import PackSessionRules
from policyengine.errors import SessionStoreError
from policyengine.language import session_reads
from policyengine.sessions import MemoryStore, RedisStore, SqliteStore, open_store
from policyengine.values.results import Outcome, Stage
from policyengine.values.session import RECENT_CALLS, Entry, SessionState, Step
from support import rules_pack

# -- the log and its fold ---------------------------------------------------------------------------------------

_TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12)
_ENTRIES = st.builds(
    Entry,
    call_id=_TEXT,
    name=_TEXT,
    step=st.sampled_from(list(Step)),
    time=st.floats(min_value=0, max_value=4e9),
    tags=st.lists(_TEXT, max_size=3).map(tuple),
    labels=st.lists(st.tuples(st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True), _TEXT), max_size=3).map(tuple),
    prints=st.lists(_TEXT, max_size=3).map(tuple),
    amount=st.floats(min_value=0, max_value=1e9),
)


@given(_ENTRIES)
def test_an_entry_reads_back_exactly_as_it_was_written(entry: Entry) -> None:
    assert Entry.from_json(entry.to_json()) == entry


@pytest.mark.parametrize("line", ["", "{}", '{"c": "x"}', '{"c":"x","n":"t","s":"maybe","t":1}', "[1, 2]", "null"])
def test_a_line_that_is_not_an_entry_is_refused_not_guessed(line: str) -> None:
    with pytest.raises(ValueError, match="not a session entry"):
        Entry.from_json(line)


@settings(max_examples=60)
@given(st.lists(_ENTRIES, max_size=120))
def test_labels_only_accumulate_and_every_decided_call_is_counted(entries: list[Entry]) -> None:
    state = SessionState("s")
    held: set[str] = set()
    for entry in entries:
        state.add(entry)
        assert held <= set(state.labels)  # a label, once held, is never lost
        held = set(state.labels)
    decided = sum(1 for e in entries if e.step is not Step.RESULT)
    summarised = sum(int(bucket[0]) for bucket in state.earlier.values())
    assert len(state.calls) + summarised == decided  # past the recent window, calls are summarised, never dropped
    assert len(state.calls) <= RECENT_CALLS


def test_a_result_entry_adds_its_labels_to_the_call_it_reviews() -> None:
    state = SessionState("s")
    state.add(Entry("c1", "Read", Step.ALLOW, 10.0))
    state.add(Entry("c1", "Read", Step.RESULT, 11.0, labels=(("credential-seen", "r"),), prints=("p",)))
    document = state.document(12.0)
    assert document["calls"][0]["labels"] == ["credential-seen"]
    assert document["labels"]["credential-seen"] == {"call_id": "c1", "rule": "r", "time": 11.0}
    assert document["secrets"] == ["p"]
    assert len(document["calls"]) == 1  # a result is not a call


def test_the_first_call_that_set_a_label_is_the_one_the_session_names() -> None:
    state = SessionState("s")
    state.add(Entry("c1", "a", Step.ALLOW, 1.0, labels=(("x", "r1"),)))
    state.add(Entry("c2", "b", Step.ALLOW, 2.0, labels=(("x", "r2"),)))
    assert state.labels["x"] == ("c1", "r1", 1.0)


# -- session reads ----------------------------------------------------------------------------------------------


def _session(*entries: Entry, now: float) -> Any:
    state = SessionState("s")
    for entry in entries:
        state.add(entry)
    return state.document(now)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("pay", 2),
        ("pa?", 2),
        ("Pay", 2),  # names fold as `tools:` selectors fold them
        ("tag:money", 3),
        (["pay", "refund"], 3),
        ("*", 4),
        ("other", 0),
    ],
)
def test_session_count_counts_allowed_and_asked_calls_a_selector_names(selector: Any, expected: int) -> None:
    session = _session(
        Entry("1", "pay", Step.ALLOW, 100.0, ("money",)),
        Entry("2", "pay", Step.ASK, 110.0, ("money",)),
        Entry("3", "pay", Step.DENY, 120.0, ("money",)),  # a denied call spent nothing
        Entry("4", "refund", Step.ALLOW, 130.0, ("money",)),
        Entry("5", "ls", Step.ALLOW, 140.0),
        now=150.0,
    )
    assert session_reads.session_count(session, selector, "1h") == expected


def test_a_window_counts_only_the_calls_inside_it() -> None:
    session = _session(
        Entry("1", "pay", Step.ALLOW, 0.0, amount=5.0),
        Entry("2", "pay", Step.ALLOW, 3000.0, amount=7.0),
        Entry("3", "pay", Step.ALLOW, 3590.0, amount=11.0),
        now=3600.0,
    )
    assert session_reads.session_count(session, "pay", "30s") == 1
    assert session_reads.session_count(session, "pay", "15m") == 2
    assert session_reads.session_count(session, "pay", 3600) == 3
    assert session_reads.session_sum(session, "pay", "15m") == 18.0
    assert session_reads.session_sum(session, "pay", "1d") == 23.0


def test_calls_summarised_past_the_recent_window_still_count_whole_minutes() -> None:
    entries = [Entry(str(i), "pay", Step.ALLOW, 1000.0 + i, amount=1.0) for i in range(RECENT_CALLS + 40)]
    session = _session(*entries, now=1000.0 + RECENT_CALLS + 40)
    assert len(session["calls"]) == RECENT_CALLS
    assert session_reads.session_count(session, "pay", "1h") == RECENT_CALLS + 40
    assert session_reads.session_sum(session, "pay", "1h") == RECENT_CALLS + 40
    # A minute partly inside a window counts whole: a counter may overcount, never undercount.
    assert session_reads.session_count(session, "pay", 1) >= 1


@pytest.mark.parametrize("window", ["", "soon", "1w", "-5m", "1 h 2", -1])
def test_a_window_that_is_not_a_duration_is_an_error(window: Any) -> None:
    with pytest.raises(ValueError, match=r"window|negative"):
        session_reads.window_seconds(window)


def test_no_session_means_no_history() -> None:
    assert session_reads.session_count(None, "*", "1h") == 0
    assert session_reads.session_sum(None, "*", "1h") == 0.0
    assert session_reads.session_secrets({"arguments": {"a": "b"}}) == []


# -- stores: the same semantics everywhere ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on a free port, in a temporary folder, stopped afterwards."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip(
            "SKIPPED LOUDLY: redis-server is not installed (apt-get install redis-server); Redis store untested"
        )
    folder = tmp_path_factory.mktemp("redis")
    port = _free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        process.kill()
        pytest.skip("SKIPPED LOUDLY: redis-server did not start within 10 s; Redis store untested")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def two_stores(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Any, Any]:
    """Two store objects over the same sessions (two processes, as far as each can tell)."""
    if request.param == "memory":
        one = MemoryStore()
        return one, one
    if request.param == "sqlite":
        return SqliteStore(tmp_path / "s.db"), SqliteStore(tmp_path / "s.db")
    url = request.getfixturevalue("redis_url")
    RedisStore(url)._client.flushdb()  # a clean server for each test: the key is made again below
    return RedisStore(url), RedisStore(url)


def test_an_entry_written_through_one_store_is_read_through_the_other(two_stores: tuple[Any, Any]) -> None:
    one, other = two_stores
    assert one.key == other.key  # the same fingerprints, whoever makes them
    other.load("s1")  # folded before the write: the later load must still see it
    one.append("s1", Entry("c1", "Read", Step.ALLOW, time.time(), labels=(("private-data", "r"),)))
    one.append("s1", Entry("c1", "Read", Step.RESULT, time.time(), prints=("p1",)))
    state = other.load("s1")
    assert set(state.labels) == {"private-data"}
    assert list(state.prints) == ["p1"]
    assert state.count == 2
    assert other.load("s2").count == 0  # sessions never mix
    for n in range(5):
        other.append("s1", Entry(f"c{n + 2}", "pay", Step.ALLOW, time.time(), amount=2.0))
    assert one.load("s1").count == 7


def test_sessions_expire_after_their_ttl(tmp_path: Path) -> None:
    for store in (MemoryStore(ttl=0.2), SqliteStore(tmp_path / "e.db", ttl=0.2)):
        store.append("s", Entry("c", "a", Step.ALLOW, time.time(), labels=(("x", "r"),)))
        assert set(store.load("s").labels) == {"x"}
        time.sleep(0.35)
        assert store.load("s").labels == {}


def test_the_sqlite_store_is_private_to_its_user(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "sessions.db"
    SqliteStore(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_store_in_a_folder_that_is_a_file_says_where_and_how(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(SessionStoreError, match="session store") as found:
        SqliteStore(tmp_path / "file" / "s.db")
    assert "writable" in (found.value.hint or "")


@pytest.mark.parametrize("spec", ["mongo://x", "sessions", ""])
def test_an_unknown_store_spelling_is_refused_with_the_ones_known(spec: str) -> None:
    with pytest.raises(SessionStoreError, match=r"memory.*sqlite:PATH.*redis://"):
        open_store(spec)


def test_open_store_reads_each_spelling(tmp_path: Path) -> None:
    assert isinstance(open_store("memory"), MemoryStore)
    assert isinstance(open_store(f"sqlite:{tmp_path / 'a'}"), SqliteStore)
    assert isinstance(open_store(str(tmp_path / "b.db")), SqliteStore)


def test_a_redis_store_that_cannot_connect_is_an_error() -> None:
    with pytest.raises(SessionStoreError, match=r"session store redis://127\.0\.0\.1"):
        RedisStore(f"redis://127.0.0.1:{_free_port()}/0")


# -- the registry: the three steps --------------------------------------------------------------------------------

_RULES = [
    {"id": "label-reads", "stage": "pre-execute", "tools": ["read"], "label": "private-data"},
    {"id": "label-secrets", "stage": "post-execute", "tools": ["*"], "when": "length(secrets(result.value)) > `0`",
     "label": ["credential-seen"]},
    {"id": "no-send-after-private", "stage": "pre-execute", "tools": ["send"],
     "when": "session.labels.\"private-data\"",
     "decision": "deny", "reason": "read {session.labels.\"private-data\".call_id}"},
    {"id": "no-seen-secrets", "stage": "guard", "tools": ["*"], "when": "length(session_secrets(@)) > `0`",
     "reason": "carries {join(', ', session_secrets(@))}"},
    {"id": "rate", "stage": "pre-execute", "tools": ["pay"], "when": "session_count(session, 'pay', '1h') >= `2`",
     "decision": "deny"},
]  # fmt: skip
_SECRET = "ghp_4Fq9ZxL2mN8vR1tY6wK3pJ7sD0cH5bG2eA9u"


def _registry(tmp_path: Path, store: Any = None, rules: list[dict[str, Any]] | None = None) -> Registry:
    registry = Registry(sessions=store)
    for name, value in (("read", f"token: {_SECRET}"), ("send", "sent"), ("pay", "paid"), ("echo", "ok")):
        registry.register(
            define_tool(
                name=name, description=name, parameters={"text": {"type": "string"}}, execute=lambda _a, v=value: v
            )
        )
    registry.install(pack_bundle(load_pack(rules_pack(tmp_path, "p", _RULES if rules is None else rules))))
    return registry


def test_a_label_set_by_one_call_decides_the_next_call_of_its_session_only(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    assert registry.call_sync("send", {}, session_id="a").outcome is Outcome.OK
    read = registry.call_sync("read", {}, session_id="a")
    assert read.outcome is Outcome.OK
    denied = registry.call_sync("send", {}, session_id="a")
    assert (denied.outcome, denied.source.name if denied.source else None) == (Outcome.DENIED, "no-send-after-private")
    assert denied.reason == f"read {read.call_id}"
    assert registry.call_sync("send", {}, session_id="b").outcome is Outcome.OK
    assert registry.call_sync("send", {}).outcome is Outcome.OK  # no session id: a session of one call


@pytest.mark.parametrize(
    "carried",
    [
        _SECRET,
        _SECRET.upper(),
        base64.b64encode(_SECRET.encode()).decode(),
        base64.urlsafe_b64encode(b"x=" + _SECRET.encode()).decode(),
        _SECRET.encode().hex(),
        "%".join(["", *[f"{b:02x}" for b in _SECRET.encode()]]),
        " ".join(_SECRET[i : i + 4] for i in range(0, len(_SECRET), 4)),
    ],
)
def test_a_secret_seen_in_a_result_is_refused_when_sent_again_however_encoded(tmp_path: Path, carried: str) -> None:
    registry = _registry(tmp_path)
    registry.call_sync("read", {}, session_id="a")
    sent = registry.call_sync("echo", {"text": f"note {carried}"}, session_id="a")
    assert sent.outcome is Outcome.DENIED and sent.stage is Stage.GUARD
    assert sent.source is not None and sent.source.name == "no-seen-secrets"
    assert _SECRET not in (sent.reason or "")  # where and how, never the secret
    assert registry.call_sync("echo", {"text": f"note {carried}"}, session_id="b").outcome is Outcome.OK


def test_a_secret_split_across_arguments_is_still_the_secret(tmp_path: Path) -> None:
    registry = _registry(tmp_path, rules=[*_RULES[:4]])
    registry.register(
        define_tool(
            name="post",
            description="post",
            parameters={"a": {"type": "string"}, "b": {"type": "string"}},
            execute=lambda _a: "ok",
        )
    )
    registry.call_sync("read", {}, session_id="a")
    sent = registry.call_sync("post", {"a": _SECRET[:20], "b": _SECRET[20:]}, session_id="a")
    assert sent.outcome is Outcome.DENIED and sent.source is not None and sent.source.name == "no-seen-secrets"


def test_counters_count_the_session_calls_that_were_let_on(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    outcomes = [registry.call_sync("pay", {}, session_id="a").outcome for _ in range(4)]
    assert outcomes == [Outcome.OK, Outcome.OK, Outcome.DENIED, Outcome.DENIED]
    assert registry.call_sync("pay", {}, session_id="b").outcome is Outcome.OK


def test_sqlite_sessions_are_shared_by_two_registries(tmp_path: Path) -> None:
    first = _registry(tmp_path / "1", SqliteStore(tmp_path / "s.db"))
    second = _registry(tmp_path / "2", SqliteStore(tmp_path / "s.db"))
    first.call_sync("read", {}, session_id="a")
    assert second.call_sync("send", {}, session_id="a").outcome is Outcome.DENIED


class _Failing(MemoryStore):
    def __init__(self, fail: str) -> None:
        super().__init__()
        self.fail = fail

    def load(self, session_id: str) -> SessionState:
        if self.fail == "load":
            raise SessionStoreError("disk gone")
        return super().load(session_id)

    def append(self, session_id: str, entry: Entry) -> None:
        if self.fail == "append" or (self.fail == "result" and entry.step is Step.RESULT):
            raise SessionStoreError("disk full")
        super().append(session_id, entry)


@pytest.mark.parametrize(
    ("fail", "tool", "outcome", "said"),
    [
        ("load", "send", Outcome.DENIED, "session store failed (disk gone)"),
        ("append", "pay", Outcome.DENIED, "cannot be counted"),
        ("result", "read", Outcome.BLOCKED, "the result cannot be recorded"),
    ],
)
def test_a_store_that_fails_fails_the_call_closed(
    tmp_path: Path, fail: str, tool: str, outcome: Outcome, said: str
) -> None:
    registry = _registry(tmp_path, _Failing(fail))
    result = registry.call_sync(tool, {}, session_id="a")
    assert result.outcome is outcome
    assert said in (result.reason or "")


def test_a_pack_without_session_rules_has_no_store_and_no_session_document(tmp_path: Path) -> None:
    rules = [{"id": "ask-send", "stage": "pre-execute", "tools": ["send"], "decision": "ask"}]
    registry = _registry(tmp_path, rules=rules)
    assert registry.sessions is None
    assert registry.installation.sessions is None
    seen: list[Any] = []

    @registry.on_pre_execute
    async def look(call: Any, nxt: Any) -> Any:
        seen.append(call.document)
        return await nxt()

    registry.call_sync("echo", {}, session_id="a")
    assert seen and "session" not in seen[0]


# -- fingerprints: where a later call carries a secret seen earlier ------------------------------------------------

_CARRIERS = yaml.safe_load((Path(__file__).parent / "data" / "session_carriers.yaml").read_text("utf-8"))
_KEY = b"k" * 32


def _carried(secret: str, arguments: Any) -> list[str]:
    return fingerprints.Matcher(fingerprints.prints_of([secret], _KEY), _KEY).carried(arguments)


@pytest.mark.parametrize("case", _CARRIERS["cases"], ids=[c["name"] for c in _CARRIERS["cases"]])
def test_a_seen_secret_is_found_however_the_call_carries_it(case: dict[str, Any]) -> None:
    found = _carried(_CARRIERS["secret"], case["arguments"])
    assert bool(found) is case["carried"], (case["why"], found)


def test_the_carrier_cases_cover_both_answers() -> None:
    answers = [case["carried"] for case in _CARRIERS["cases"]]
    assert answers.count(True) >= 10 and answers.count(False) >= 5


_SECRETS = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=16, max_size=48
).filter(lambda s: len(fingerprints.reduced(s)) >= fingerprints.SHORTEST)
_ENCODINGS: list[Callable[[str], str]] = [
    lambda s: s,
    str.upper,
    lambda s: base64.b64encode(s.encode()).decode(),
    lambda s: base64.urlsafe_b64encode(b"token=" + s.encode()).decode().rstrip("="),
    lambda s: s.encode().hex(),
    lambda s: "".join(f"%{b:02x}" for b in s.encode()),
    lambda s: " ".join(s[i : i + 3] for i in range(0, len(s), 3)),
]


@settings(max_examples=80)
@given(_SECRETS, st.sampled_from(range(len(_ENCODINGS))), _TEXT)
def test_every_supported_encoding_of_any_secret_is_found(secret: str, encoding: int, around: str) -> None:
    carried = _ENCODINGS[encoding](secret)
    assert _carried(secret, {"body": f"{around} {carried} {around}"})


@settings(max_examples=80)
@given(_SECRETS, _SECRETS)
def test_a_secret_is_never_found_in_another_secret(secret: str, other: str) -> None:
    if fingerprints.reduced(secret) not in fingerprints.reduced(other):
        assert not _carried(secret, {"body": other})


def test_prints_keep_nothing_of_the_secret_in_clear() -> None:
    secret = _CARRIERS["secret"]
    made = fingerprints.prints_of([secret], _KEY)
    assert len(made) == 3  # as is, reversed, ROT13
    for text in (secret.lower(), fingerprints.reduced(secret)[:8], fingerprints.reduced(secret)[::-1][:8]):
        assert not any(text in one for one in made)
    assert set(fingerprints.prints_of([secret], b"x" * 32)).isdisjoint(made)  # another key, other prints
    assert fingerprints.prints_of(["short"], _KEY) == ()  # too short to tell from chance


def test_arguments_too_long_to_scan_are_reported_unscanned_never_clean() -> None:
    big = {"body": "a" * (fingerprints.MAX_SCAN + 10)}
    found = _carried(_CARRIERS["secret"], big)
    assert found and found[-1].startswith("unscanned")


# -- which calls are written: only what a rule can read later ---------------------------------------------------


@pytest.mark.parametrize(
    ("when", "selectors"),
    [
        ('session.labels."x"', ()),
        ("session.overflowed || session.id == 'a' || session.now > `0`", ()),
        ("length(session_secrets(@)) > `0`", ()),
        ("session_count(session, 'pay', '1h') > `1`", ("pay",)),
        ("session_sum(session, ['pay', 'tag:money'], '1d') > `1`", ("pay", "tag:money")),
        ("session_count(session, lists.money, '1h') > `1`", ("refund", "charge")),
        ("length(session.calls) > `3`", None),
        ("session.earlier[0].count > `3`", None),
        ("length(keys(session)) > `3`", None),
        ("session_count(session, name, '1h') > `1`", None),  # a selector only known per call
        ("arguments.session == 'x' && `[1, 2]`[:1] == [`1`]", ()),  # another `session` field; slices are no reads
    ],
)
def test_the_calls_a_pack_can_read_later_are_found_from_its_rules(
    tmp_path: Path, when: str, selectors: tuple[str, ...] | None
) -> None:
    rules = [{"id": "r", "stage": "pre-execute", "tools": ["*"], "when": when, "decision": "deny"}]
    pack = load_pack(rules_pack(tmp_path, "p", rules, lists={"money": ["refund", "charge"]}))
    found = PackSessionRules.of(pack)
    assert found is not None
    assert found.selectors == selectors
    assert found.lists_calls is (selectors is None)


class _WritesAll(PackSessionRules):
    """The rules as if some rule listed the whole log: every decided call is written (the reference path)."""

    def __init__(self, pack: Any) -> None:
        super().__init__(pack)
        self.selectors, self.lists_calls = None, True


_STREAM = st.lists(
    st.tuples(st.sampled_from(["pay", "refund", "read", "send", "echo"]), st.integers(min_value=-5, max_value=900)),
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(_STREAM)
def test_writing_only_what_rules_read_decides_as_writing_every_call(tmp_path_factory: Any, stream: Any) -> None:
    rules = [
        *_RULES,
        {"id": "sum", "stage": "pre-execute", "tools": ["pay", "refund"],
         "when": "session_sum(session, ['pay', 'refund'], '1h') > `1000`", "decision": "ask"},
    ]  # fmt: skip
    pack = load_pack(rules_pack(tmp_path_factory.mktemp("p"), "p", rules))
    decisions = []
    for kind in (PackSessionRules, _WritesAll):
        registry = Registry(sessions=MemoryStore())
        for name in ("read", "send", "pay", "refund", "echo"):
            registry.register(
                define_tool(name=name, description=name, parameters={"amount": {"type": "number"}},
                            execute=lambda _a, n=name: f"token: {_SECRET}" if n == "read" else "ok")
            )  # fmt: skip
        bundle = pack_bundle(pack)
        bundle.session = kind(pack)
        registry.install(bundle)
        decisions.append(
            [
                (r.outcome, r.source.name if r.source else None)
                for r in (registry.call_sync(n, {"amount": a}, session_id="s") for n, a in stream)
            ]
        )
    assert decisions[0] == decisions[1]
