"""Which patterns may cost quadratic time when every match is replaced (redact: pattern:, regex_replace).

RE2 finds each match in linear time, but replacing every match searches once per match. When a
preferred alternative reads ahead through an unbounded repetition and then fails, and a later
alternative matches something short at the same place, each search reads to the end of the run
before settling on the short match: `a+b|a` on a million `a`s takes minutes. A greedy optional
part that reads ahead (`b(?:b+c)?`) is the same, its empty alternative being the short match.

The check reads the pattern with Python's own parser (RE2's syntax is close to it); a pattern it
cannot read is not judged. It may warn where the text never has such runs: it says "may".
"""

from __future__ import annotations

# Python's own regex parser: private, at this name since 3.11 (the oldest Python this project runs on).
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

_REPEATS = frozenset({sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT})
_GROUPS = frozenset({sre.SUBPATTERN, sre.ATOMIC_GROUP})
_ZERO_WIDTH = frozenset({sre.AT, sre.ASSERT, sre.ASSERT_NOT})
_WIDEST_CLASS = 4096  # a class wider than this counts as "any character"

Items = list[tuple[Any, Any]]
Chars = frozenset[int] | None  # the characters a match may start with; None: any


def quadratic_risk(pattern: str) -> str | None:
    """Why replacing every match of `pattern` may take quadratic time; None if not (or the pattern is unreadable)."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception:  # RE2 syntax Python does not read (\pL, ...): not judged
        return None
    fold = bool(parsed.state.flags & sre.SRE_FLAG_IGNORECASE)
    return _risk(list(parsed), fold)


def _risk(items: Items, fold: bool) -> str | None:
    for k, (op, av) in enumerate(items):
        if op is sre.BRANCH:
            alternatives = [list(a) for a in av[1]]
            for i, alternative in enumerate(alternatives[:-1]):
                if not _reads_ahead(alternative):
                    continue
                first = _first(alternative, fold)[0]
                for j, later in enumerate(alternatives[i + 1 :], i + 2):
                    later_first, empty = _first(later, fold)
                    if empty or first is None or later_first is None or first & later_first:
                        return (
                            f"alternative {i + 1} reads ahead through an unbounded repetition and can fail "
                            f"where alternative {j} matches"
                        )
            for alternative in alternatives:
                found = _risk(alternative, fold)
                if found:
                    return found
        elif op in _REPEATS:
            low, high, inner = av
            if op is sre.MAX_REPEAT and low == 0 and high == 1 and _reads_ahead(list(inner)):
                # Left out, what follows must match where the optional part started: `(x+y)?z` reads
                # ahead only at an x, where z cannot match, so it stays linear.
                first = _first(list(inner), fold)[0]
                after, empty = _first(items[k + 1 :], fold)
                if empty or first is None or after is None or first & after:
                    return (
                        "an optional part reads ahead through an unbounded repetition and can fail where "
                        "what follows it matches"
                    )
            found = _risk(list(inner), fold)
            if found:
                return found
        elif op in _GROUPS:
            found = _risk(_body(op, av), fold)
            if found:
                return found
    return None


def _body(op: Any, av: Any) -> Items:
    """A group's items: (group, add flags, del flags, items) for a capture, the items themselves for an atomic one."""
    return list(av) if op is sre.ATOMIC_GROUP else list(av[-1])


def _unbounded(op: Any, av: Any) -> bool:
    return op in _REPEATS and av[1] == sre.MAXREPEAT


def _reads_ahead(items: Items) -> bool:
    """Whether matching `items` may run through an unbounded repetition and then need more that is not there."""
    for k, (op, av) in enumerate(items):
        rest = items[k + 1 :]
        required_after = any(not _empty(o, a) for o, a in rest)
        if _unbounded(op, av) and required_after:
            return True
        inner = _inner(op, av)
        if inner is not None:
            if any(_reads_ahead(branch) for branch in inner):
                return True
            if required_after and any(_ends_unbounded(branch) for branch in inner):
                return True
    return False


def _ends_unbounded(items: Items) -> bool:
    """Whether `items` may end in an unbounded repetition (nothing required after it)."""
    for k in range(len(items) - 1, -1, -1):
        op, av = items[k]
        if _unbounded(op, av):
            return True
        inner = _inner(op, av)
        if inner is not None and any(_ends_unbounded(branch) for branch in inner):
            return True
        if not _empty(op, av):
            return False
    return False


def _inner(op: Any, av: Any) -> list[Items] | None:
    """The sub-sequences of a group, a repetition or an alternation."""
    if op in _GROUPS:
        return [_body(op, av)]
    if op in _REPEATS:
        return [list(av[2])]
    if op is sre.BRANCH:
        return [list(a) for a in av[1]]
    return None


def _empty(op: Any, av: Any) -> bool:
    """Whether the item can match the empty string."""
    if op in _ZERO_WIDTH:
        return True
    if op in _REPEATS:
        return bool(av[0] == 0) or all(_empty(o, a) for o, a in av[2])
    if op in _GROUPS:
        return all(_empty(o, a) for o, a in _body(op, av))
    if op is sre.BRANCH:
        return any(all(_empty(o, a) for o, a in alternative) for alternative in av[1])
    return False


def _first(items: Items, fold: bool) -> tuple[Chars, bool]:
    """The characters a match of `items` may start with (None: any), and whether it may be empty."""
    found: set[int] = set()
    for op, av in items:
        chars, empty = _first_of(op, av, fold)
        if chars is None:
            return None, False
        found |= chars
        if not empty:
            return frozenset(found), False
    return frozenset(found), True


def _first_of(op: Any, av: Any, fold: bool) -> tuple[Chars, bool]:
    if op is sre.LITERAL:
        return frozenset({ord(chr(av).lower()) if fold else av}), False
    if op is sre.IN:
        return _class(av, fold), False
    if op in _ZERO_WIDTH:
        return frozenset(), True
    inner = _inner(op, av)
    if inner is None:  # any character, a negated literal, a back-reference...
        return None, False
    found: set[int] = set()
    for branch in inner:
        chars, _ = _first(branch, fold)
        if chars is None:
            return None, False
        found |= chars
    return frozenset(found), _empty(op, av)


def _class(items: Items, fold: bool) -> Chars:
    found: set[int] = set()
    for op, av in items:
        if op is sre.LITERAL:
            found.add(av)
        elif op is sre.RANGE and av[1] - av[0] < _WIDEST_CLASS:
            found.update(range(av[0], av[1] + 1))
        else:  # a negation, a category (\d, \w), a wide range
            return None
    return frozenset(ord(chr(c).lower()) for c in found) if fold else frozenset(found)
