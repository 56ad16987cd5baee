"""Pack linter: warnings about rules that can never apply, miss the tool catalog, or mistake display for secrecy."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from policyengine.packs.loader import Pack
from policyengine.packs.rules import Rule, ToolMatcher, Verb
from policyengine.values.problems import Location, Problem, Severity, register_code
from policyengine.values.results import RULE_STAGES, Stage

__all__ = ["PE501", "PE502", "PE503", "PE504", "PE505", "PE506", "covers", "lint", "normalise_when"]

PE501 = register_code("PE501", "unreachable rule")
PE502 = register_code("PE502", "rule matches no tool of the catalog")
PE503 = register_code("PE503", "content replacement used for confidentiality")
PE504 = register_code("PE504", "duplicate condition")
PE505 = register_code("PE505", "unknown tool name (typo?)")
PE506 = register_code("PE506", "a path of unknown place would be read the permissive way")

# difflib's default cutoff (0.6) suggests unrelated tools of a real catalog (make_transaction ->
# get_transaction_history in BFCL); 0.8 still catches one- or two-letter typos of real names.
_TYPO_CUTOFF = 0.8

# Words that say a rule is about keeping something secret. `_` is a word character for \b, and
# camelCase hides word starts, so the text is split on both before matching (see _confidential_word).
_CONFIDENTIAL = re.compile(
    r"\b(secrets?|redact\w*|mask\w*|credentials?|passw(?:or)?ds?|passcodes?|tokens?|(?:api)?keys?|pii"
    r"|confidential\w*)\b",
    re.IGNORECASE,
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# The line breaks PyYAML counts when it numbers lines (as in packs/yaml_source.py): str.splitlines knows more
# breaks, which would show the wrong line under a problem.
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")

# JMESPath quoting: 'raw string', `JSON literal`, "quoted identifier"; whitespace inside them counts.
_QUOTES = "'`\""


class _Sources:
    """Source lines of rule files, each file read once (or None when it cannot be read any more)."""

    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}

    def line(self, location: Location | None) -> str | None:
        """The text of the located line, if the file is still readable."""
        if location is None:
            return None
        if location.file not in self._files:
            try:
                text = Path(location.file).read_bytes().decode("utf-8-sig", errors="replace")
            except OSError:
                self._files[location.file] = None
            else:
                self._files[location.file] = _BREAK.split(text)
        lines = self._files[location.file]
        if lines is None or not 1 <= location.line <= len(lines):
            return None
        return lines[location.line - 1]


def _id_width(rule: Rule, line: str | None) -> int:
    """Caret width over the rule's id value, its quotes included when it is quoted."""
    width = len(rule.id)
    loc = rule.location
    if line is not None and loc is not None:
        rest = line[loc.column - 1 :]
        if rest[:1] in ("'", '"') and rest[1 : 1 + width] == rule.id:
            width += 2
    return max(1, width)


def _warn(sources: _Sources, code: str, rule: Rule, message: str, hint: str) -> Problem:
    """A warning at the rule's id, with the source line for the snippet."""
    line = sources.line(rule.location)
    return Problem(
        code,
        message,
        rule.location,
        rule_id=rule.id,
        hint=hint,
        severity=Severity.WARNING,
        source_line=line,
        caret_width=_id_width(rule, line),
    )


def _where(rule: Rule) -> str:
    """`rule 'x' (file:line:col)` for naming another rule in a message."""
    return f"rule {rule.id!r}" + (f" ({rule.location})" if rule.location is not None else "")


# -- PE501: unreachable rules ------------------------------------------------------------------


def _matches_all(glob: str) -> bool:
    """True for `*`, `**`, ...: a glob that every tool name matches."""
    return bool(glob) and set(glob) == {"*"}


def covers(earlier: ToolMatcher, later: ToolMatcher) -> bool:
    """True when every tool `later` can match is surely matched by `earlier` (a sound under-approximation)."""
    if not later.names and not later.globs:
        return False  # a rule for no tool is not hidden behind anything
    if any(_matches_all(g) for g in earlier.globs):
        return True
    # Glob containment in general is hard; an identical glob is the case worth catching.
    return all(earlier.matches(n) for n in later.names) and all(g in earlier.globs for g in later.globs)


def _ends_chain(rule: Rule) -> str | None:
    """What an unconditional rule does to every call it matches ('denies', ...), or None if it may not."""
    if rule.when is not None:
        return None
    if rule.stage is Stage.PRE_EXECUTE:
        if rule.verb is Verb.DENY:
            return "denies"
        if rule.verb is Verb.ASK:
            return "asks about (which ends the chain)"
        if rule.verb is Verb.ALLOW and rule.final:
            return "finally allows (skipping later rules and layers)"
        return None
    if rule.stage is Stage.GUARD:
        return "denies (a red line)"
    if rule.stage is Stage.POST_EXECUTE and rule.block is not None:
        return "blocks"
    return None  # execute rules compose: every matching one wraps the body


def _unreachable(rules: Sequence[Rule], sources: _Sources) -> tuple[list[Problem], set[int]]:
    """PE501 for each rule hidden behind an earlier unconditional one (earlier layers included)."""
    problems: list[Problem] = []
    hidden: set[int] = set()
    enders: dict[Stage, list[tuple[Rule, str]]] = {stage: [] for stage in RULE_STAGES}
    for rule in rules:
        if rule.stage is Stage.EXECUTE:
            continue
        blocker = next(((e, what) for e, what in enders[rule.stage] if covers(e.tools, rule.tools)), None)
        if blocker is not None:
            earlier, what = blocker
            layer = "" if earlier.source.pack == rule.source.pack else f" of pack {earlier.source.pack!r}"
            problems.append(
                _warn(
                    sources,
                    PE501,
                    rule,
                    f"rule {rule.id!r} can never apply: {_where(earlier)}{layer} {what} every call "
                    f"to the tools this rule matches, without a condition",
                    f"move this rule above {earlier.id!r} (strictest first), give {earlier.id!r} a `when:` "
                    f"condition or narrower `tools:`, or delete this rule",
                )
            )
            hidden.add(id(rule))
        what_it_does = _ends_chain(rule)
        if what_it_does is not None:
            enders[rule.stage].append((rule, what_it_does))
    return problems, hidden


# -- PE502, PE505: the tool catalog ------------------------------------------------------------


def _catalog(rules: Iterable[Rule], catalog: Mapping[str, Any], sources: _Sources) -> list[Problem]:
    """PE505 for exact names that look like typos of catalog tools, PE502 for rules matching no tool."""
    problems: list[Problem] = []
    names = [str(n) for n in catalog]
    known = set(names)
    for rule in rules:
        typos: list[tuple[str, str]] = []
        for name in sorted(rule.tools.names - known):
            close = difflib.get_close_matches(name, names, n=1, cutoff=_TYPO_CUTOFF)
            if close:
                typos.append((name, close[0]))
        for name, suggestion in typos:
            problems.append(
                _warn(
                    sources,
                    PE505,
                    rule,
                    f"rule {rule.id!r} names tool {name!r}, which is not in the catalog",
                    f"did you mean {suggestion!r}? (tool names are exact and case-sensitive)",
                )
            )
        # A rule whose only miss is a typo already has its PE505, which says more than PE502.
        if not typos and not any(rule.tools.matches(n) for n in names):
            listed = sorted(rule.tools.names) + list(rule.tools.globs)
            problems.append(
                _warn(
                    sources,
                    PE502,
                    rule,
                    f"rule {rule.id!r} matches no tool of the catalog (tools: {', '.join(listed) or 'none'})",
                    "check the names and globs in `tools:` against the catalog, or delete the rule "
                    "if those tools are gone",
                )
            )
    return problems


# -- PE503: content replacement that claims to protect something --------------------------------


def _confidential_word(rule: Rule) -> str | None:
    """The first word of the rule's id or description that speaks of keeping something secret."""
    text = _CAMEL.sub(" ", f"{rule.id} {rule.description}").replace("_", " ")
    found = _CONFIDENTIAL.search(text)
    return found.group(1) if found else None


def _display_only(rules: Iterable[Rule], sources: _Sources) -> list[Problem]:
    """PE503 for `content:` rules whose id or description promise confidentiality."""
    problems: list[Problem] = []
    for rule in rules:
        if rule.stage is not Stage.POST_EXECUTE or rule.content is None or rule.redactions:
            continue
        word = _confidential_word(rule)
        if word is None:
            continue
        problems.append(
            _warn(
                sources,
                PE503,
                rule,
                f"rule {rule.id!r} speaks of {word!r} but only replaces the content the model sees: "
                "display is not confidentiality",
                "the canonical value still reaches observers, audit and later rules; use `redact:`, "
                "which rewrites the canonical value, or `block:`",
            )
        )
    return problems


# -- PE504: duplicate conditions ---------------------------------------------------------------


def normalise_when(text: str) -> str:
    """The condition without whitespace outside quotes: JMESPath ignores it, string literals do not."""
    out: list[str] = []
    quote: str | None = None
    escaped = False
    for ch in text:
        if quote is not None:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in _QUOTES:
            quote = ch
            out.append(ch)
        elif not ch.isspace():
            out.append(ch)
    return "".join(out)


def _pattern_text(compiled: Any) -> Any:
    """A compiled re2 pattern compares by its source text."""
    return getattr(compiled, "pattern", compiled)


def _action(rule: Rule) -> tuple[Any, ...]:
    """What the rule does, as far as it decides whether a same-condition twin is redundant."""
    if rule.stage is Stage.PRE_EXECUTE:
        return (rule.verb, rule.final)
    if rule.stage is Stage.POST_EXECUTE:
        if rule.block is not None:
            return ("block",)  # the first block ends the chain: the twin never runs, whatever it says
        if rule.content is not None:
            return ("content", rule.content.text)
        # Different rewrites of the same calls compose (credential keys, then secret strings).
        return (
            "redact",
            tuple(
                (r.path, _pattern_text(r.keys), _pattern_text(r.pattern), r.replace_with, r.keep_last)
                for r in rule.redactions
            ),
        )
    # Guards only deny; execute twins stack deadlines and multiply retries on the same calls.
    return ()


_DUPLICATE_HINTS = {
    Stage.PRE_EXECUTE: "delete one of them, or change its condition or tools",
    Stage.GUARD: "the first one already denies these calls; delete one of them, or change its condition",
    Stage.EXECUTE: "merge them into one rule: nested execute rules stack deadlines and multiply retries",
    Stage.POST_EXECUTE: "delete one of them, or change its condition or tools",
}


def _duplicates(rules: Iterable[Rule], hidden: set[int], sources: _Sources) -> list[Problem]:
    """PE504 for a rule with the same stage, tools, condition and action as an earlier one."""
    problems: list[Problem] = []
    first: dict[tuple[Any, ...], Rule] = {}
    for rule in rules:
        when = normalise_when(rule.when.text) if rule.when is not None else None
        key = (rule.stage, rule.tools.names, frozenset(rule.tools.globs), when, _action(rule))
        earlier = first.setdefault(key, rule)
        # An unreachable twin already has its PE501; one warning per fault.
        if earlier is rule or id(rule) in hidden:
            continue
        condition = "condition" if when is not None else "absence of a condition"
        problems.append(
            _warn(
                sources,
                PE504,
                rule,
                f"rule {rule.id!r} repeats {_where(earlier)}: same stage, tools, {condition} and action; "
                "it is redundant",
                _DUPLICATE_HINTS[rule.stage],
            )
        )
    return problems


# -- PE506: may/surely path tests read the permissive way ------------------------------------------

# "May" tests say yes for a path of unknown place, "surely" tests say no: each errs toward denial
# only when its truth makes the rule more restrictive (see docs/functions.md).
_MAY = frozenset({"path_within", "path_matches"})
_SURELY = {"path_surely_within": "path_within", "path_surely_matches": "path_matches"}
_SURELY_OF = {may: surely for surely, may in _SURELY.items()}
# How an ordering comparison passes its operands' direction on: (left, right).
_ORDER = {"gt": (1, -1), "gte": (1, -1), "lt": (-1, 1), "lte": (-1, 1)}


def _direction(rule: Rule) -> int:
    """+1 when the rule's condition being true restricts (deny, ask, guard, block), -1 for allow, 0 otherwise."""
    if rule.stage is Stage.GUARD or rule.block is not None:
        return 1
    if rule.verb is Verb.ALLOW:
        return -1
    if rule.verb is not None:
        return 1
    return 0


def _misread(node: Any, direction: int, found: list[tuple[str, int]]) -> None:
    """Collect (function, direction) for every may/surely path test, direction 0 when it cannot be told."""
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    children = node.get("children") or []
    if kind == "function_expression" and (node.get("value") in _MAY or node.get("value") in _SURELY):
        found.append((node["value"], direction))
    if kind == "not_expression":
        child_directions = [-direction] * len(children)
    elif kind == "comparator":
        left, right = _ORDER.get(node.get("value", ""), (0, 0))
        child_directions = [direction * left, direction * right]
    else:
        child_directions = [direction] * len(children)
    for child, child_direction in zip(children, child_directions, strict=False):
        _misread(child, child_direction, found)


def _permissive_paths(rules: Iterable[Rule], sources: _Sources) -> list[Problem]:
    """Warn where a may-test would let an unknown place through, or a surely-test would."""
    problems = []
    for rule in rules:
        direction = _direction(rule)
        if rule.when is None or direction == 0:
            continue
        found: list[tuple[str, int]] = []
        _misread(rule.when.parsed.parsed, direction, found)
        for function, seen in found:
            if (function in _MAY and seen == 1) or (function in _SURELY and seen == -1):
                continue
            other = _SURELY_OF.get(function) or _SURELY[function]
            if seen == 0:
                why, hint = "under == or !=, so nobody can tell which way", f"compare with > or <, or use {other}"
            else:
                why = "where its truth makes the rule less strict"
                hint = f"use {other}: an unknown place must count as possibly forbidden"
            problems.append(
                _warn(
                    sources,
                    PE506,
                    rule,
                    f"rule {rule.id!r} reads {function}() {why}: "
                    "a path of unknown place (~, $HOME, ../ with no cwd) would slip through",
                    hint,
                )
            )
    return problems


def lint(packs: Sequence[Pack], catalog: Mapping[str, Any] | None = None) -> list[Problem]:
    """Every lint warning for packs layered in order (loader warnings included), by file, line, column."""
    sources = _Sources()
    rules = [rule for pack in packs for rule in pack.rules]
    problems: list[Problem] = [w for pack in packs for w in pack.warnings]
    unreachable, hidden = _unreachable(rules, sources)
    problems += unreachable
    if catalog is not None:
        problems += _catalog(rules, catalog, sources)
    problems += _display_only(rules, sources)
    problems += _duplicates(rules, hidden, sources)
    problems += _permissive_paths(rules, sources)
    return sorted(problems, key=Problem.sort_key)
