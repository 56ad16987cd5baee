"""Deep-frozen JSON values that JMESPath sees exactly as the plain document."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from operator import is_
from typing import Any, ClassVar, NoReturn, Self, SupportsIndex

import jmespath.functions as _jp_functions

from policyengine.errors import FreezeError, FrozenError

MAX_DEPTH = 100


def _refuse(*_args: object, **_kwargs: object) -> NoReturn:
    raise FrozenError(
        "frozen value cannot be changed",
        hint="arguments and results are read-only snapshots; deny or block with feedback instead of rewriting them",
    )


class _Frozen:
    """What the two frozen containers do alike: a copy is the value itself, pickled and shown over its base."""

    __slots__ = ()
    _base: ClassVar[type[Any]]  # dict or list

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._base(self),))

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, _memo: object) -> Self:
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._base(self)!r})"


class FrozenDict(_Frozen, dict[str, Any]):
    """A read-only dict, deep by construction; a real dict so jmespath's isinstance checks pass."""

    __slots__ = ()
    _base = dict

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Values are frozen on the way in, so every FrozenDict is deep and freeze() can trust it.
        dict.__init__(self, _freeze_items(dict(*args, **kwargs), "$", 0))

    @classmethod
    def _of(cls, items: dict[str, Any]) -> FrozenDict:
        """Wrap items that are already frozen (no second walk)."""
        new = dict.__new__(cls)
        dict.__init__(new, items)
        return new

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __ior__(self, _other: object) -> NoReturn:  # type: ignore[misc]
        _refuse()

    def __hash__(self) -> int:  # type: ignore[override]
        # Equal dicts compare equal whatever their key order, so the hash must ignore it too.
        return hash(frozenset(self.items()))


class FrozenList(_Frozen, list[Any]):
    """A read-only list, deep by construction; a real list so jmespath's index and filters work."""

    __slots__ = ()
    _base = list

    def __init__(self, items: Iterable[Any] = ()) -> None:
        list.__init__(self, [freeze(item, path=f"$[{i}]", _depth=1) for i, item in enumerate(items)])

    @classmethod
    def _of(cls, items: list[Any]) -> FrozenList:
        """Wrap items that are already frozen (no second walk)."""
        new = list.__new__(cls)
        list.__init__(new, items)
        return new

    __setitem__ = __delitem__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __iadd__(self, _other: Iterable[Any]) -> NoReturn:  # type: ignore[misc]
        _refuse()

    def __imul__(self, _n: SupportsIndex) -> NoReturn:
        _refuse()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))


# jmespath's function type checks compare type(x).__name__ against fixed tables
# (it deliberately avoids isinstance), so length(), sort_by() and friends raise on
# any subclass it does not know. Registering our two names is additive and keeps
# every jmespath function seeing frozen data exactly as plain JSON.
_jp_functions.TYPES_MAP.setdefault("FrozenDict", "object")
_jp_functions.TYPES_MAP.setdefault("FrozenList", "array")
for _jp_type, _name in (("object", "FrozenDict"), ("array", "FrozenList")):
    if _name not in _jp_functions.REVERSE_TYPES_MAP[_jp_type]:
        _jp_functions.REVERSE_TYPES_MAP[_jp_type] = (
            *_jp_functions.REVERSE_TYPES_MAP[_jp_type],
            _name,
        )

_EXACT_SCALARS = frozenset({str, int, float, bool, type(None)})
_dict_new, _dict_init = dict.__new__, dict.__init__


def freeze(value: Any, *, path: str = "$", _depth: int = 0) -> Any:
    """Return a deep read-only snapshot of plain JSON data; refuse anything else."""
    if _depth > MAX_DEPTH:
        raise FreezeError(f"{path}: nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if kind is dict:  # the common case first: call arguments as JSON parsing or a caller built them
        frozen = _dict_new(FrozenDict)  # FrozenDict._of, inlined: this runs once per call
        _dict_init(frozen, _freeze_items(value, path, _depth))
        return frozen
    if kind is float and not math.isfinite(value):
        # Not JSON, and every comparison with NaN is false: a limit rule would never fire.
        raise FreezeError(f"{path}: {value} is not a JSON number", hint="send a finite number")
    if kind in _EXACT_SCALARS or kind is FrozenDict or kind is FrozenList:
        return value  # frozen containers are deep by construction
    if isinstance(value, Mapping):
        return FrozenDict._of(_freeze_items(value, path, _depth))
    if isinstance(value, (list, tuple)):
        return FrozenList._of([freeze(item, path=f"{path}[{i}]", _depth=_depth + 1) for i, item in enumerate(value)])
    return plain_scalar(value, path)


def plain_scalar(value: Any, path: str = "$") -> str | int | float:
    """A str, int or float subclass (enums, numpy scalars) as the exact built-in value it holds; refuse the rest.

    Read through the base class, never the subclass's own __str__, __int__ or __float__: a `(str,
    Enum)` member is its value, not 'Tool.WRITE', and a float that lies about itself is what it holds.
    """
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool cannot be subclassed: an exact bool never gets here
        return int.__int__(value)
    if isinstance(value, float):
        number = float.__float__(value)
        if not math.isfinite(number):
            # A subclass's NaN (numpy.float64('nan')) fails every comparison just as a plain one does.
            raise FreezeError(f"{path}: {number} is not a JSON number", hint="send a finite number")
        return number
    raise FreezeError(
        f"{path}: {type(value).__name__} is not JSON data",
        hint="arguments and values hold only objects, arrays, strings, numbers, booleans and null",
    )


def copy_in(value: Any) -> Any:
    """freeze() for data handed in from outside: frozen containers in it are copied too, never shared.

    freeze() trusts a FrozenDict or FrozenList it is given (they are deep by construction), but a
    caller still holds what it handed in and can write to it through the base class while the
    call runs; a copy is the only snapshot nobody else can reach.
    """
    if type(value) is dict:
        for item in dict.values(value):
            if type(item) not in _EXACT_SCALARS:
                break
        else:
            return freeze(value)  # flat and plain, as most arguments are: freeze() builds new containers anyway
    if _plain(value, 0):
        return freeze(value)  # nested, but plain dicts and lists only: freeze() builds every one anew too
    return freeze(unfrozen(value))


def _plain(value: Any, depth: int) -> bool:
    """True when `value` is exact dicts, lists and tuples of exact scalars: freeze() copies all of it anew."""
    kind = type(value)
    if kind in _EXACT_SCALARS:
        return True
    if depth > MAX_DEPTH:
        return False  # left for freeze(unfrozen()) to refuse
    if kind is dict:
        items: Any = dict.values(value)
    elif kind is list or kind is tuple:
        items = value
    else:
        return False  # a frozen container freeze() would share, or a mapping that may answer differently twice
    for item in items:  # a loop, not all(): this runs on every call's arguments
        if type(item) not in _EXACT_SCALARS and not _plain(item, depth + 1):
            break
    else:
        return True
    return False


def unfrozen(value: Any, depth: int = 0) -> Any:
    """Plain containers for every container in `value`, leaves as they are: for freeze() or a validator to copy in."""
    kind = type(value)
    if kind in _EXACT_SCALARS or depth > MAX_DEPTH:  # too deep: left for freeze() to refuse
        return value
    if isinstance(value, Mapping):
        return {key: unfrozen(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [unfrozen(item, depth + 1) for item in value]
    return value


def _freeze_items(value: Mapping[Any, Any], path: str, depth: int) -> dict[str, Any]:
    items = {}
    for key, item in value.items():
        if type(key) is not str:
            raise FreezeError(f"{path}: key {key!r} is a {type(key).__name__}; JSON object keys are strings")
        kind = type(item)
        if (kind is str or kind is int or kind is bool or item is None) and depth < MAX_DEPTH:
            items[key] = item  # the common leaves, without building their path for an error
        else:
            items[key] = freeze(item, path=f"{path}.{key}", _depth=depth + 1)
    return items


def thaw(value: Any) -> Any:
    """Return a plain, mutable deep copy of a frozen value."""
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list):
        return [thaw(item) for item in value]
    return value


_CONTAINERS = frozenset({FrozenDict, FrozenList})


def duplicate(value: Any) -> Any:
    """A frozen copy of a frozen value: new containers, the same (immutable) leaves."""
    kind = type(value)
    if kind is FrozenDict:
        copy = _dict_new(FrozenDict)
        _dict_init(copy, value)  # a C-level merge; only nested containers need a walk
        for item in dict.values(value):
            if type(item) in _CONTAINERS:
                break
        else:
            return copy  # flat, as most arguments are
        for key, item in dict.items(value):
            if type(item) in _CONTAINERS:
                dict.__setitem__(copy, key, duplicate(item))
        return copy
    if kind is FrozenList:
        return FrozenList._of([duplicate(item) if type(item) in _CONTAINERS else item for item in value])
    return value


def identical(a: Any, b: Any, _depth: int = 0) -> bool:
    """True when two frozen values have the same shape and container types and the very same leaves."""
    kind = type(a)
    if kind is not type(b) or _depth > MAX_DEPTH:  # deeper than freeze allows: only a write makes that
        return False
    if kind is FrozenDict:
        return [*dict.keys(a)] == [*dict.keys(b)] and all(
            identical(x, y, _depth + 1) for x, y in zip(dict.values(a), dict.values(b), strict=True)
        )
    if kind is FrozenList:
        return list.__len__(a) == list.__len__(b) and all(
            identical(x, y, _depth + 1) for x, y in zip(list.__iter__(a), list.__iter__(b), strict=True)
        )
    return a is b


class Snapshot:
    """Exactly what some frozen containers held when taken: tells, and undoes, any write to them since.

    FrozenDict and FrozenList refuse writes through their own methods, but they are real
    dicts and lists (jmespath needs that), so `dict.__setitem__(d, k, v)`, `list.append(l, x)`
    and friends still change them. A snapshot keeps, for every container under its roots, the
    very objects it held, and compares by identity: an equal but different value (`1` for
    `True`, a plain list for a FrozenList) counts as a change. It copies no leaf.
    """

    __slots__ = ("_dicts", "_lists")

    def __init__(self, *roots: Any) -> None:
        self._dicts: list[tuple[FrozenDict, tuple[Any, ...]]] = []  # each with its keys, then its values
        self._lists: list[tuple[FrozenList, tuple[Any, ...]]] = []
        for root in roots:
            if type(root) is FrozenDict or type(root) is FrozenList:
                _record(root, self._dicts, self._lists, 0)

    def intact(self) -> bool:
        """True when every container still holds exactly what it held."""
        for mapping, items in self._dicts:
            if type(mapping) is not FrozenDict:
                return False
            now = (*dict.keys(mapping), *dict.values(mapping))
            if len(now) != len(items) or not all(map(is_, now, items)):
                return False
        for sequence, items in self._lists:
            if type(sequence) is not FrozenList:
                return False
            now = (*list.__iter__(sequence),)
            if len(now) != len(items) or not all(map(is_, now, items)):
                return False
        return True

    def restore(self) -> bool:
        """Put every container back as it was; True when any had changed."""
        if self.intact():
            return False
        for mapping, items in self._dicts:
            object.__setattr__(mapping, "__class__", FrozenDict)
            half = len(items) // 2
            dict.clear(mapping)
            dict.update(mapping, zip(items[:half], items[half:], strict=True))
        for sequence, items in self._lists:
            object.__setattr__(sequence, "__class__", FrozenList)
            list.__setitem__(sequence, slice(None), items)
        return True


def _record(
    container: FrozenDict | FrozenList,
    dicts: list[tuple[FrozenDict, tuple[Any, ...]]],
    lists: list[tuple[FrozenList, tuple[Any, ...]]],
    depth: int,
) -> None:
    """Add `container` and every container under it to a snapshot's records."""
    if depth > 2 * MAX_DEPTH:  # far deeper than freeze() allows, even inside a call document: a cycle
        raise FreezeError("a frozen value nests without end: something wrote a cycle into it")
    # Read through the base class: whatever the instance overrides, this is what it holds.
    if isinstance(container, FrozenDict):
        values = (*dict.values(container),)
        dicts.append((container, (*dict.keys(container), *values)))
    else:
        values = (*list.__iter__(container),)
        lists.append((container, values))
    for item in values:
        if type(item) is FrozenDict or type(item) is FrozenList:
            _record(item, dicts, lists, depth + 1)
