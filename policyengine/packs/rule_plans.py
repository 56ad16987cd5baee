"""A tool's simple rules tested together: one lookup per argument instead of one test per rule.

Most rule conditions are one test of one argument against literals: `path_within(arguments.path,
[...])`, `path_matches(...)`, `starts_with(...)`, `arguments.owner == '...'`. For a tool's chain
of rules, a Plan indexes those literals once (directories by their components, prefixes by
length, globs in one RE2 set, values in a dict) and answers "which of these rules match this
call" with a few dictionary lookups, as a bit mask over the chain. The waterfall then visits only
the rules that matched plus the rules a plan cannot fuse, in their order, so first-match
semantics, reasons and sources are unchanged.

A plan only answers when the answer is certain: when a subject the functions need as a string
is something else, or a path cannot be normalised, `hits` returns None and the caller evaluates
rule by rule, with the functions' own errors (which fail closed). Tests compare both ways.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import re2  # type: ignore[import-untyped,unused-ignore]

from policyengine.arguments.paths import (
    _CACHEABLE_LENGTH,
    _RE2_OPTIONS,
    UNKNOWN,
    _climbs,
    _parse,
    _parse_any,
    _path_glob_to_regex,
)
from policyengine.arguments.paths import _parse_subject_cached as subject_cache
from policyengine.language.expression_compiler import _literal_value, _path
from policyengine.language.expressions import Expression


class Kind(enum.Enum):
    """The test a fusible condition makes."""

    WITHIN = "path_within"
    GLOBS = "path_matches"
    PREFIX = "starts_with"
    EQUALS = "=="


# These need their subject as a string: anything else is a type error the rule reports itself.
_STRING_ONLY = frozenset({Kind.WITHIN, Kind.GLOBS, Kind.PREFIX})


@dataclass(frozen=True, slots=True)
class Predicate:
    """A condition that is one test of one field against literal strings."""

    subject: tuple[str, ...]
    kind: Kind
    values: tuple[str, ...]


def _fields(node: dict[str, Any]) -> tuple[str, ...] | None:
    """The keys of a plain field path (a, a.b, a.b.c), or None."""
    if node.get("type") == "field":
        return (node["value"],)
    if node.get("type") == "subexpression":
        keys: list[str] = []
        for child in node["children"]:
            part = _fields(child)
            if part is None:
                return None
            keys.extend(part)
        return tuple(keys)
    return None


def _strings(node: dict[str, Any], *, single: bool) -> tuple[str, ...] | None:
    """A literal string (or, unless `single`, a non-empty list of them), or None."""
    value = _literal_value(node)
    if type(value) is str:
        return (value,)
    if single or not isinstance(value, (list, tuple)) or not value or any(type(v) is not str for v in value):
        return None
    return tuple(value)


def predicate_of(expression: Expression | None) -> Predicate | None:
    """The fusible form of a rule condition, or None when it must be evaluated on its own."""
    if expression is None:
        return None
    node = expression.parsed.parsed
    kind = node.get("type")
    children = node.get("children") or []
    if kind == "comparator" and node.get("value") == "eq" and len(children) == 2:
        for field, literal in ((children[0], children[1]), (children[1], children[0])):
            subject, values = _fields(field), _strings(literal, single=True)
            if subject is not None and values is not None:
                return Predicate(subject, Kind.EQUALS, values)
        return None
    if kind != "function_expression" or len(children) != 2:
        return None
    try:
        fused = Kind(node["value"])
    except ValueError:
        return None
    subject, values = _fields(children[0]), _strings(children[1], single=fused is Kind.PREFIX)
    if subject is None or values is None:
        return None
    return Predicate(subject, fused, values)


class _Fusible(Protocol):
    """What a plan reads from a rule."""

    @property
    def predicate(self) -> Predicate | None:
        """The rule's fusible condition."""


Probe = Callable[[Any], int | None]

# A trie node: the bits of the rules whose directory ends here, and the next components.
_Node = tuple[int, dict[str, "_Node"]]


def _insert(tries: dict[str, _Node], root: str, parts: tuple[str, ...], bit: int) -> None:
    """Add one directory to the trie of its root (nodes are rebuilt as immutable pairs)."""

    def add(node: _Node, depth: int) -> _Node:
        bits, children = node
        if depth == len(parts):
            return bits | bit, children
        children[parts[depth]] = add(children.get(parts[depth], (0, {})), depth + 1)
        return bits, children

    tries[root] = add(tries.get(root, (0, {})), 0)


class Plan:
    """Which fusible rules of one chain match a call, as bits over the chain's positions."""

    __slots__ = ("_probes", "hits", "rest")

    def __init__(self, probes: Sequence[Probe], rest: int) -> None:
        self._probes = tuple(probes)
        self.rest = rest  # bits of the rules to evaluate one by one
        # Bits of the fused rules that match, or None when only rule-by-rule evaluation is
        # certain. Most chains read one argument: then its probe is the whole answer.
        self.hits: Probe = (
            self._probes[0] if len(self._probes) == 1 else _both(*self._probes) if len(self._probes) == 2 else self._all
        )

    def _all(self, document: Any) -> int | None:
        """Every probe's bits, or None as soon as one is unsure."""
        mask = 0
        for probe in self._probes:
            found = probe(document)
            if found is None:
                return None
            mask |= found
        return mask


def _both(first: Probe, second: Probe) -> Probe:
    """Two probes as one (a tool's path and one more argument is the common shape)."""

    def both(document: Any) -> int | None:
        a = first(document)
        if a is None:
            return None
        b = second(document)
        return None if b is None else a | b

    return both


def plan_for(rules: Sequence[_Fusible]) -> Plan | None:
    """A plan for a chain with at least one fusible rule, else None."""
    by_subject: dict[tuple[str, ...], list[tuple[int, Predicate]]] = {}
    rest = 0
    for position, rule in enumerate(rules):
        predicate = rule.predicate
        if predicate is None:
            rest |= 1 << position
        else:
            by_subject.setdefault(predicate.subject, []).append((1 << position, predicate))
    if not by_subject:
        return None
    try:
        probes = [_probe(subject, tests) for subject, tests in by_subject.items()]
    except Exception:  # a literal the loader let through but a plan cannot index: go rule by rule
        return None
    return Plan(probes, rest)


def _matcher(glob_set: Any) -> Callable[[bytes], Sequence[int] | None]:
    """The set's Match on UTF-8 bytes: the extension's own method when the wrapper exposes it (a third faster)."""
    raw = getattr(glob_set, "_set", None)
    if raw is not None and callable(getattr(raw, "Match", None)):
        return raw.Match  # type: ignore[no-any-return]
    return glob_set.Match  # type: ignore[no-any-return]  # the wrapper takes bytes as they are


def _probe(subject: tuple[str, ...], tests: list[tuple[int, Predicate]]) -> Probe:
    """One field's tests as a function of the document returning the matching rules' bits."""
    get = _path(subject)
    equals: dict[str, int] = {}
    prefixes: dict[int, dict[str, int]] = {}
    within: dict[str, _Node] = {}  # a trie per root: component -> (bits of dirs ending here, children)
    glob_set = re2.Set.FullMatchSet(_RE2_OPTIONS)
    glob_bits: list[int] = []
    for bit, predicate in tests:
        for value in predicate.values:
            if predicate.kind is Kind.EQUALS:
                equals[value] = equals.get(value, 0) | bit
            elif predicate.kind is Kind.PREFIX:
                table = prefixes.setdefault(len(value), {})
                table[value] = table.get(value, 0) | bit
            elif predicate.kind is Kind.WITHIN:
                _insert(within, *_parse_any(value), bit)
        if predicate.kind is Kind.GLOBS:
            # One set entry per rule: its globs as one alternation, as globs_matcher builds it.
            glob_set.Add("|".join(f"(?:{_path_glob_to_regex(p)})" for p in predicate.values))
            glob_bits.append(bit)
    if glob_bits:
        glob_set.Compile()
    strict = any(p.kind in _STRING_ONLY for _bit, p in tests)
    prefix_tables = tuple(sorted(prefixes.items()))
    # Most values start with none of the prefixes: one slice of the shortest length rules them out.
    shortest = prefix_tables[0][0] if prefix_tables else 0
    gate = frozenset(p[:shortest] for _length, table in prefix_tables for p in table)
    needs_path = bool(within or glob_bits)
    match_globs = _matcher(glob_set) if glob_bits else None

    # The usual subject is arguments.<name>: two plain lookups, with the exact JMESPath getter
    # for anything else (a missing key, a non-object on the way).
    first, second = subject if len(subject) == 2 else ("", "")

    def probe(document: Any) -> int | None:
        if first:
            try:
                value = document[first][second]
            except Exception:
                value = get(document)
        else:
            value = get(document)
        if type(value) is not str:
            return None if strict else 0
        mask = equals.get(value, 0) if equals else 0
        if gate and value[:shortest] in gate:
            for length, table in prefix_tables:
                mask |= table.get(value[:length], 0)
        if not needs_path:
            return mask
        # Any failure below (a path too long, encoded too deep) leaves it to the rules one by
        # one, which fail closed with the function's own error.
        try:
            # The call-argument cache of paths.py, without its Python wrapper (length checked the same way).
            root, parts = subject_cache(value) if len(value) <= _CACHEABLE_LENGTH else _parse(value)
            if root == UNKNOWN:
                return None  # a path of unknown place: the functions decide, with their may/surely reading
            node = within.get(root)
            if node is not None:
                # A directory matches when it is a leading run of the path's components; relative
                # paths also need the same number of leading "..", so shallower directories do not count.
                low = 0 if root else _climbs(parts)
                bits, children = node
                if low == 0:  # every absolute path, and relative ones that do not climb
                    mask |= bits
                    for part in parts:
                        found = children.get(part)
                        if found is None:
                            break
                        bits, children = found
                        mask |= bits
                else:
                    for depth, part in enumerate(parts, 1):
                        found = children.get(part)
                        if found is None:
                            break
                        bits, children = found
                        if depth >= low:
                            mask |= bits
            if match_globs is not None:
                matched = match_globs((root + "/".join(parts) if root else "/".join(parts) or ".").encode())  # _join
                if matched:
                    for index in matched:
                        mask |= glob_bits[index]
        except Exception:
            return None
        return mask

    return probe
