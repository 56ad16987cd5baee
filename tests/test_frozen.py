"""Deep freezing of call arguments: read-only at every depth, JSON only, invisible to JMESPath."""

from __future__ import annotations

import copy
import json
import operator
import pickle
from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Any, cast

import jmespath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import policyengine
from policyengine import FrozenDict, FrozenError, FrozenList, freeze, thaw
from policyengine.errors import FreezeError, PolicyEngineError
from policyengine.values.call import ToolCall

NESTED = {
    "top": "value",
    "a": {"b": [{"c": [1, 2, {"d": ["x", "y"]}]}, [3, 4]]},
    "list": [[["deep"]], {"k": {"kk": [5]}}],
}


def _containers(value: Any) -> Iterator[Any]:
    """Every dict and list inside `value`, the top one included, depth-first."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _containers(item)
    elif isinstance(value, list):
        yield value
        for item in value:
            yield from _containers(item)


def _frozen_dicts() -> list[FrozenDict]:
    return cast(list[FrozenDict], [c for c in _containers(freeze(NESTED)) if isinstance(c, dict)])


def _frozen_lists() -> list[FrozenList]:
    return cast(list[FrozenList], [c for c in _containers(freeze(NESTED)) if isinstance(c, list)])


# --------------------------------------------------------------------------- structure


def test_freeze_returns_frozen_types_at_every_depth() -> None:
    frozen = freeze(NESTED)
    containers = list(_containers(frozen))
    assert len(containers) == len(list(_containers(NESTED)))
    for container in containers:
        assert type(container) in (FrozenDict, FrozenList), type(container)


def test_frozen_value_equals_the_plain_document() -> None:
    frozen = freeze(NESTED)
    assert frozen == NESTED
    assert isinstance(frozen, dict)
    assert isinstance(frozen["a"]["b"], list)


def test_freeze_is_a_snapshot_not_a_view_of_the_original() -> None:
    original: dict[str, Any] = {"paths": ["a"], "opts": {"n": 1}}
    frozen = freeze(original)
    original["paths"].append("b")
    original["opts"]["n"] = 2
    original["new"] = True
    assert frozen == {"paths": ["a"], "opts": {"n": 1}}


def test_freeze_turns_tuples_and_mapping_proxies_into_frozen_list_and_dict() -> None:
    frozen = freeze({"paths": ("a", ".env"), "meta": MappingProxyType({"k": (1, 2)})})
    assert type(frozen["paths"]) is FrozenList
    assert type(frozen["meta"]) is FrozenDict
    assert type(frozen["meta"]["k"]) is FrozenList
    assert frozen == {"paths": ["a", ".env"], "meta": {"k": [1, 2]}}


def test_freeze_keeps_scalars_and_normalises_str_subclasses_to_str() -> None:
    class Name(str):
        pass

    frozen = freeze({"s": Name("bob"), "i": 3, "f": 1.5, "b": False, "n": None})
    assert type(frozen["s"]) is str
    assert frozen == {"s": "bob", "i": 3, "f": 1.5, "b": False, "n": None}
    assert type(frozen["b"]) is bool
    assert type(frozen["i"]) is int


def test_freeze_of_an_already_frozen_value_is_idempotent() -> None:
    frozen = freeze(NESTED)
    again = freeze(frozen)
    assert again == frozen
    assert type(again) is FrozenDict


def test_freeze_of_hand_built_frozen_dict_is_still_deep_and_json_only() -> None:
    """freeze() promises a deep read-only snapshot even for a FrozenDict built by hand."""
    shallow = FrozenDict(paths=["a"])
    frozen = freeze(shallow)
    with pytest.raises(FrozenError):
        frozen["paths"].append("b")
    assert shallow["paths"] == ["a"]
    with pytest.raises(FreezeError):
        freeze(FrozenDict(tags={"a", "b"}))


def test_thaw_returns_plain_mutable_copy_at_every_depth() -> None:
    plain = thaw(freeze(NESTED))
    assert plain == NESTED
    for container in _containers(plain):
        assert type(container) in (dict, list), type(container)
    plain["a"]["b"][0]["c"].append(99)
    plain["a"]["new"] = 1
    assert plain["a"]["b"][0]["c"][-1] == 99
    # the thawed copy does not share storage with the original frozen value
    frozen = freeze(NESTED)
    thawed = thaw(frozen)
    thawed["list"][0][0].append("more")
    assert frozen["list"][0][0] == ["deep"]


def test_frozen_values_serialise_to_the_same_json() -> None:
    assert json.dumps(freeze(NESTED)) == json.dumps(NESTED)
    assert json.dumps(freeze(NESTED), sort_keys=True) == json.dumps(NESTED, sort_keys=True)


# --------------------------------------------------------------------------- mutation refused


def _ior(d: Any) -> None:
    d |= {"k": 1}


def _iadd(lst: Any) -> None:
    lst += [1]


def _imul(lst: Any) -> None:
    lst *= 2


DICT_MUTATIONS: list[tuple[str, Callable[[Any], Any]]] = [
    ("setitem-new", lambda d: operator.setitem(d, "new", 1)),
    ("setitem-existing", lambda d: operator.setitem(d, next(iter(d)), 1)),
    ("delitem", lambda d: operator.delitem(d, next(iter(d)))),
    ("update-mapping", lambda d: d.update({"k": 1})),
    ("update-kwargs", lambda d: d.update(k=1)),
    ("update-empty", lambda d: d.update()),
    ("pop", lambda d: d.pop(next(iter(d)))),
    ("pop-default", lambda d: d.pop("missing", None)),
    ("popitem", lambda d: d.popitem()),
    ("setdefault", lambda d: d.setdefault("k", 1)),
    ("clear", lambda d: d.clear()),
    ("ior", _ior),
]

LIST_MUTATIONS: list[tuple[str, Callable[[Any], Any]]] = [
    ("setitem", lambda lst: operator.setitem(lst, 0, "x")),
    ("setitem-slice", lambda lst: operator.setitem(lst, slice(0, 1), [])),
    ("delitem", lambda lst: operator.delitem(lst, 0)),
    ("delitem-slice", lambda lst: operator.delitem(lst, slice(None))),
    ("append", lambda lst: lst.append(1)),
    ("extend", lambda lst: lst.extend([1])),
    ("insert", lambda lst: lst.insert(0, 1)),
    ("pop", lambda lst: lst.pop()),
    ("remove", lambda lst: lst.remove(lst[0])),
    ("clear", lambda lst: lst.clear()),
    ("sort", lambda lst: lst.sort(key=str)),
    ("reverse", lambda lst: lst.reverse()),
    ("iadd", _iadd),
    ("imul", _imul),
]


@pytest.mark.parametrize(("label", "mutate"), DICT_MUTATIONS, ids=[m[0] for m in DICT_MUTATIONS])
def test_frozen_dict_refuses_every_mutation_at_any_depth(label: str, mutate: Callable[[Any], Any]) -> None:
    dicts = _frozen_dicts()
    assert len(dicts) >= 4  # top level and several nested levels
    for d in dicts:
        before = thaw(d)
        with pytest.raises(FrozenError):
            mutate(d)
        assert d == before, f"{label} changed {before!r}"


@pytest.mark.parametrize(("label", "mutate"), LIST_MUTATIONS, ids=[m[0] for m in LIST_MUTATIONS])
def test_frozen_list_refuses_every_mutation_at_any_depth(label: str, mutate: Callable[[Any], Any]) -> None:
    lists = _frozen_lists()
    assert len(lists) >= 5
    for lst in lists:
        before = thaw(lst)
        with pytest.raises(FrozenError):
            mutate(lst)
        assert lst == before, f"{label} changed {before!r}"


def test_frozen_error_is_a_type_error_and_a_policyengine_error() -> None:
    frozen = freeze({"a": [1]})
    with pytest.raises(TypeError) as info:
        frozen["a"].append(2)
    assert isinstance(info.value, FrozenError)
    assert isinstance(info.value, PolicyEngineError)
    assert policyengine.FrozenError is FrozenError
    assert issubclass(FrozenError, TypeError)


def test_frozen_containers_are_hashable_and_usable_as_keys() -> None:
    frozen = freeze({"a": [1, {"b": 2}]})
    assert hash(frozen) == hash(freeze({"a": [1, {"b": 2}]}))
    assert {frozen: 1}[freeze({"a": [1, {"b": 2}]})] == 1


def test_equal_frozen_dicts_have_equal_hashes_whatever_the_key_order() -> None:
    """The hash/eq contract: a == b implies hash(a) == hash(b)."""
    first = freeze({"a": 1, "b": 2})
    second = freeze({"b": 2, "a": 1})
    assert first == second
    assert hash(first) == hash(second)
    assert len({first, second}) == 1


def test_copy_and_deepcopy_stay_frozen() -> None:
    frozen = freeze(NESTED)
    for clone in (copy.copy(frozen), copy.deepcopy(frozen)):
        assert clone == NESTED
        with pytest.raises(FrozenError):
            clone["a"]["b"].append(1)


# --------------------------------------------------------------------------- non-JSON refused


@pytest.mark.parametrize(
    ("document", "path_fragment", "type_fragment"),
    [
        ({"tags": {"a", "b"}}, "$.tags", "set"),
        ({"blob": b"bytes"}, "$.blob", "bytes"),
        ({"blob": bytearray(b"x")}, "$.blob", "bytearray"),
        ({"a": [1, 2, object()]}, "$.a[2]", "object"),
        ({"a": {"b": [{"c": frozenset()}]}}, "$.a.b[0].c", "frozenset"),
        ({"when": 1j}, "$.when", "complex"),
        ({1: "one"}, "$", "int"),
        ({"a": [{"b": {(1, 2): "x"}}]}, "$.a[0].b", "tuple"),
        ({"a": {None: 1}}, "$.a", "NoneType"),
    ],
)
def test_freeze_refuses_non_json_data_naming_the_path(document: Any, path_fragment: str, type_fragment: str) -> None:
    with pytest.raises(FreezeError) as info:
        freeze(document)
    message = str(info.value)
    assert message.startswith(path_fragment + ":"), message
    assert type_fragment in message
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value, PolicyEngineError)


def test_freeze_refuses_a_top_level_non_json_value() -> None:
    with pytest.raises(FreezeError, match=r"^\$: set"):
        freeze({1, 2})


def test_freeze_refuses_cyclic_data_without_recursion_error() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(FreezeError, match="deeper than"):
        freeze(cyclic)


def test_freeze_accepts_moderate_nesting_and_refuses_absurd_nesting() -> None:
    def nest(depth: int) -> Any:
        value: Any = "leaf"
        for _ in range(depth):
            value = [value]
        return value

    assert thaw(freeze(nest(50))) == nest(50)
    with pytest.raises(FreezeError):
        freeze(nest(500))


# --------------------------------------------------------------------------- pickle


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip_keeps_value_and_frozenness(protocol: int) -> None:
    frozen = freeze(NESTED)
    restored = pickle.loads(pickle.dumps(frozen, protocol=protocol))
    assert restored == NESTED
    assert type(restored) is FrozenDict
    for container in _containers(restored):
        assert type(container) in (FrozenDict, FrozenList)
    with pytest.raises(FrozenError):
        restored["a"]["b"][0]["c"].append(3)
    with pytest.raises(FrozenError):
        restored["new"] = 1


# --------------------------------------------------------------------------- the jmespath trap

DOC: dict[str, Any] = {
    "paths": ["src/app.py", ".env", "docs/readme.md", "config/.env.local", "b.txt"],
    "people": [
        {"name": "ann", "age": 31, "tags": ["admin", "dev"]},
        {"name": "bob", "age": 25, "tags": ["dev"]},
        {"name": "cy", "age": 40, "tags": []},
    ],
    "nested": [[1, 2], [3, [4, 5]], []],
    "nums": [3, 1.5, 2, 10],
    "obj": {"x": 1, "y": {"z": [1, 2]}, "w": "text"},
    "flag": True,
    "nothing": None,
}

JMESPATH_CASES: list[tuple[str, dict[str, Any]]] = [
    # projections and indexes
    ("paths[*]", DOC),
    ("paths[0]", DOC),
    ("paths[-1]", DOC),
    ("people[*].name", DOC),
    ("people[1].tags[0]", DOC),
    ("obj.*", DOC),
    ("obj.y.z[1]", DOC),
    # slices
    ("paths[1:3]", DOC),
    ("paths[::-1]", DOC),
    ("paths[::2]", DOC),
    # filters
    ("paths[?contains(@, '.env')]", DOC),
    ("paths[?starts_with(@, 'src/')]", DOC),
    ("paths[?ends_with(@, '.md')]", DOC),
    ("people[?age > `30`].name", DOC),
    ("people[?contains(tags, 'dev')].name", DOC),
    ("people[?length(tags) > `0`].name", DOC),
    ("people[?name == 'bob'] | [0].age", DOC),
    # flatten
    ("nested[]", DOC),
    ("nested[][]", DOC),
    ("people[].tags[]", DOC),
    # functions with array / object type checks
    ("length(paths)", DOC),
    ("length(obj)", DOC),
    ("length(people[0])", DOC),
    ("sort(paths)", DOC),
    ("sort(people[*].name)", DOC),
    ("sort_by(people, &age)[*].name", DOC),
    ("sort_by(people, &name)[-1].name", DOC),
    ("max_by(people, &age).name", DOC),
    ("min_by(people, &age).name", DOC),
    ("join(', ', paths)", DOC),
    ("join('-', people[*].name)", DOC),
    ("keys(obj)", DOC),
    ("values(obj)", DOC),
    ("keys(people[0])", DOC),
    ("contains(paths, '.env')", DOC),
    ("contains(people[*].name, 'cy')", DOC),
    ("starts_with(paths[0], 'src')", DOC),
    ("type(paths)", DOC),
    ("type(obj)", DOC),
    ("type(people[0].tags)", DOC),
    ("type(nothing)", DOC),
    ("to_array(obj)", DOC),
    ("to_array(paths)", DOC),
    ("to_string(obj)", DOC),
    ('merge(obj, `{"x": 2}`)', DOC),
    ("merge(people[0], people[1])", DOC),
    ("not_null(nothing, paths)", DOC),
    ("not_null(missing, obj.y)", DOC),
    ("reverse(paths)", DOC),
    ("reverse(people)[0].name", DOC),
    ("map(&name, people)", DOC),
    ("map(&length(tags), people)", DOC),
    ("avg(nums)", DOC),
    ("sum(nums)", DOC),
    ("max(nums)", DOC),
    ("min(people[*].age)", DOC),
    # multiselect, pipes, comparisons, truthiness
    ("{first: paths[0], n: length(paths), kind: type(obj)}", DOC),
    ("[paths[0], obj.x, length(nested)]", DOC),
    ('obj.y == `{"z": [1, 2]}`', DOC),
    ("nested[2] == `[]`", DOC),
    ("nested[2] || 'empty'", DOC),
    ("people[?tags] | length(@)", DOC),
    # a bare call document, as rules see it
    ("arguments.paths[?contains(@, '.env')] | length(@)", {"name": "read", "arguments": {"paths": DOC["paths"]}}),
    ("length(arguments.paths) > `2`", {"name": "read", "arguments": {"paths": DOC["paths"]}}),
]


def test_jmespath_trap_case_list_is_large_enough() -> None:
    assert len({expr for expr, _doc in JMESPATH_CASES}) >= 25


@pytest.mark.parametrize(("expression", "document"), JMESPATH_CASES, ids=[c[0] for c in JMESPATH_CASES])
def test_jmespath_sees_frozen_document_exactly_as_plain(expression: str, document: dict[str, Any]) -> None:
    expected = jmespath.search(expression, document)
    assert expected is not None, "case must produce a value on the plain document to be meaningful"
    assert jmespath.search(expression, freeze(document)) == expected


@pytest.mark.parametrize(("expression", "document"), JMESPATH_CASES, ids=[c[0] for c in JMESPATH_CASES])
def test_jmespath_sees_frozen_tuple_and_proxy_input_exactly_as_plain(expression: str, document: dict[str, Any]) -> None:
    """Data that arrives as tuples / MappingProxyType is frozen into something jmespath understands."""

    def awkward(value: Any) -> Any:
        if isinstance(value, dict):
            return MappingProxyType({k: awkward(v) for k, v in value.items()})
        if isinstance(value, list):
            return tuple(awkward(v) for v in value)
        return value

    assert jmespath.search(expression, freeze(awkward(document))) == jmespath.search(expression, document)


def test_jmespath_trap_is_real_for_tuples_so_freeze_must_not_use_them() -> None:
    """Documents why FrozenList is a list subclass: jmespath 1.x ignores tuples."""
    assert jmespath.search("paths[*]", {"paths": ("a", ".env")}) is None
    assert jmespath.search("paths[*]", freeze({"paths": ("a", ".env")})) == ["a", ".env"]


def test_deny_style_condition_finds_the_secret_path_in_a_frozen_call_document() -> None:
    arguments = freeze({"paths": ["src/main.py", ".env", "notes/.env.backup"]})
    call = ToolCall(call_id="c-1", name="read_files", arguments=arguments, agent="agent-1")
    document = call.document
    assert isinstance(document, FrozenDict)
    assert jmespath.search("contains(arguments.paths[*], '.env')", document) is True
    assert jmespath.search("arguments.paths[?contains(@, '.env')]", document) == [".env", "notes/.env.backup"]
    assert jmespath.search("name == 'read_files' && length(arguments.paths[?contains(@, '.env')]) > `0`", document)
    clean = ToolCall(call_id="c-2", name="read_files", arguments=freeze({"paths": ["src/main.py"]}), agent="a")
    assert jmespath.search("contains(arguments.paths[*], '.env')", clean.document) is False
    assert jmespath.search("arguments.paths[?contains(@, '.env')]", clean.document) == []


def test_compiled_expression_behaves_the_same_on_frozen_data() -> None:
    compiled = jmespath.compile("sort_by(people, &age)[?age > `26`].name | join(',', @)")
    assert compiled.search(freeze(DOC)) == compiled.search(DOC) == "ann,cy"


# --------------------------------------------------------------------------- property test

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_documents = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


def _assert_plain(value: Any) -> None:
    if isinstance(value, dict):
        assert type(value) is dict
        for item in value.values():
            _assert_plain(item)
    elif isinstance(value, list):
        assert type(value) is list
        for item in value:
            _assert_plain(item)


def _assert_deeply_frozen(value: Any) -> None:
    if isinstance(value, dict):
        assert type(value) is FrozenDict
        for item in value.values():
            _assert_deeply_frozen(item)
    elif isinstance(value, list):
        assert type(value) is FrozenList
        for item in value:
            _assert_deeply_frozen(item)


@settings(max_examples=150, deadline=None)
@given(json_documents)
def test_freeze_and_thaw_round_trip_any_json_document(doc: Any) -> None:
    frozen = freeze(doc)
    assert frozen == doc
    _assert_deeply_frozen(frozen)
    assert json.dumps(frozen) == json.dumps(doc)
    thawed = thaw(frozen)
    assert thawed == doc
    _assert_plain(thawed)
    if isinstance(thawed, dict):
        thawed["__added__"] = 1
        assert "__added__" in thawed
        assert "__added__" not in frozen  # generated keys are at most 8 characters
    elif isinstance(thawed, list):
        thawed.append("__added__")
        assert len(thawed) == len(doc) + 1
        assert len(frozen) == len(doc)
    assert pickle.loads(pickle.dumps(frozen)) == doc


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinity_are_not_json_and_are_refused(number: float) -> None:
    """Every comparison with NaN is false, so a limit rule would silently never fire."""
    with pytest.raises(FreezeError, match="not a JSON number"):
        freeze({"amount": number})


# --------------------------------------------------------------------------- copying data in


def _frozen_here_and_there(doc: Any, mask: int) -> Any:
    """`doc` with some of its containers (chosen by the bits of `mask`) already frozen, as a caller may hand it."""
    counter = iter(range(10_000))

    def build(value: Any) -> Any:
        if isinstance(value, dict):
            built: Any = {k: build(v) for k, v in value.items()}
        elif isinstance(value, list):
            built = [build(v) for v in value]
        else:
            return value
        return freeze(built) if mask >> (next(counter) % 30) & 1 else built

    return build(doc)


@settings(max_examples=150, deadline=None)
@given(json_documents, st.integers(0, 2**30))
def test_copy_in_equals_freeze_and_shares_no_container_with_what_was_handed_in(doc: Any, mask: int) -> None:
    from policyengine.values.frozen import copy_in

    handed = _frozen_here_and_there(doc, mask)
    copied = copy_in(handed)

    assert copied == freeze(doc) == doc
    _assert_deeply_frozen(copied)
    handed_ids = {id(c) for c in _containers(handed)}
    assert not any(id(c) in handed_ids for c in _containers(copied))


class _Numpyish(float):
    """A float subclass, as numpy.float64 is."""


@pytest.mark.parametrize("number", [_Numpyish("nan"), _Numpyish("inf"), _Numpyish("-inf")])
def test_a_non_finite_float_subclass_is_refused_like_a_plain_one(number: float) -> None:
    with pytest.raises(FreezeError, match="not a JSON number"):
        freeze({"amount": number})
    with pytest.raises(FreezeError, match="not a JSON number"):
        freeze([number])


def test_scalar_subclasses_become_the_exact_builtin_they_hold_whatever_their_dunders_say() -> None:
    class Lying(float):
        def __float__(self) -> float:
            return 0.0

    class Shout(str):
        def __str__(self) -> str:
            return "LOUD"

    frozen = freeze({"f": Lying(5.0), "s": Shout("quiet")})

    assert frozen == {"f": 5.0, "s": "quiet"}
    assert type(frozen["f"]) is float and type(frozen["s"]) is str


def test_copy_in_refuses_nesting_deeper_than_freeze_allows_without_recursing_forever() -> None:
    from policyengine.values.frozen import MAX_DEPTH, copy_in

    deep: Any = "leaf"
    for _ in range(MAX_DEPTH * 50):
        deep = [deep]
    with pytest.raises(FreezeError, match="deeper"):
        copy_in({"a": deep})


@pytest.mark.parametrize(
    ("cwd", "roles", "session"),
    [(None, None, None), ("/w", {"source": "path"}, None), ("/w", None, {"labels": ["x"]}), (None, {"a": "url"}, {})],
)
def test_a_call_with_a_session_is_the_call_built_with_that_session(
    cwd: str | None, roles: dict[str, str] | None, session: dict[str, Any] | None
) -> None:
    # with_session copies the call instead of building it again: it must be the same call.
    arguments = freeze({"source": "a.txt", "n": [1, True, None]})
    held = None if roles is None else freeze(roles)
    call = ToolCall("c-1", "mv", arguments, "agent", cwd=cwd, roles=held, session_id="s", session=freeze(session))
    later = freeze({"labels": ["secret-read"], "calls": [{"name": "cat"}]})
    copied = call.with_session(later)
    built = ToolCall("c-1", "mv", arguments, "agent", cwd=cwd, roles=held, session_id="s", session=later)
    assert copied == built and copied.signal is call.signal and copied.tags == built.tags
    assert list(copied.document.items()) == list(built.document.items())
    assert copied.session is later and copied.document["session"] is later
    assert call.session == (None if session is None else freeze(session))  # the call itself is unchanged
    plain = call.with_session({"labels": []})  # type: ignore[arg-type]  # a plain mapping is frozen
    assert type(plain.session) is FrozenDict and plain.document["session"] == {"labels": []}
