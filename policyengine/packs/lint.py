"""Pack linter: rules that never apply or decide, miss the catalog, mistake display for secrecy, rewrite in
quadratic time; files never loaded."""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from policyengine.language.regex_cost import quadratic_risk
from policyengine.language.tool_names import fold_tool_name
from policyengine.packs.loader import MANIFEST, Pack
from policyengine.packs.rules import Mode, Rule, RuleDecision, ToolMatcher
from policyengine.packs.type_check import PE601, PE606, check_types
from policyengine.tools.definition import ToolDefinition
from policyengine.values.problems import Location, Problem, ProblemSink, Severity, register_code
from policyengine.values.results import RULE_STAGES, Stage

__all__ = [
    "PE501",
    "PE502",
    "PE503",
    "PE504",
    "PE505",
    "PE506",
    "PE507",
    "PE508",
    "PE509",
    "PE510",
    "PE511",
    "PE512",
    "PE513",
    "covers",
    "lint",
    "normalise_when",
]

PE501 = register_code("PE501", "unreachable rule")
PE502 = register_code("PE502", "rule matches no tool of the catalog")
PE503 = register_code("PE503", "content replacement used for confidentiality")
PE504 = register_code("PE504", "duplicate condition")
PE505 = register_code("PE505", "unknown tool name (typo?)")
PE506 = register_code("PE506", "a path of unknown place would be read the permissive way")
PE511 = register_code("PE511", "a rule reads a session label no loaded rule sets")
PE512 = register_code("PE512", "a red line in monitor mode denies nothing")
PE513 = register_code("PE513", "the default of a pack in monitor mode is not applied")

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

    def lines(self, file: str) -> list[str] | None:
        """Every line of the file, if it is still readable."""
        if file not in self._files:
            try:
                text = Path(file).read_bytes().decode("utf-8-sig", errors="replace")
            except OSError:
                self._files[file] = None
            else:
                self._files[file] = _BREAK.split(text)
        return self._files[file]

    def line(self, location: Location | None) -> str | None:
        """The text of the located line, if the file is still readable."""
        if location is None:
            return None
        lines = self.lines(location.file)
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
    if not later.names and not later.globs and not later.tags:
        return False  # a rule for no tool is not hidden behind anything
    if any(_matches_all(g) for g in earlier.globs):
        return True
    # Glob containment in general is hard; an identical glob is the case worth catching. A tag
    # selects tools no name list can enumerate: only the same tag covers it.
    return (
        all(earlier.matches(n) for n in later.names)
        and all(g in earlier.globs for g in later.globs)
        and later.tags <= earlier.tags
    )


def _ends_chain(rule: Rule) -> str | None:
    """What an unconditional rule does to every call it matches ('denies', ...), or None if it may not."""
    return None if rule.when is not None else _decides(rule)


def _decides(rule: Rule) -> str | None:
    """What the rule does to every call its condition holds for, when that ends its chain; else None."""
    if rule.mode is Mode.MONITOR:
        return None  # it records what it would have done; the chain goes on past it
    if rule.stage is Stage.PRE_EXECUTE:
        if rule.verb is RuleDecision.DENY:
            return "denies"
        if rule.verb is RuleDecision.ASK:
            return "asks about (which ends the chain)"
        if rule.verb is RuleDecision.ALLOW and rule.final:
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
        # Label rules are not links of the chain: every matching one labels a call that is let on,
        # wherever it is written (a final allow does not skip them), so order hides none of them.
        if rule.stage is Stage.EXECUTE or rule.labels:
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
    # Compared folded, as rules select tools: `bash` names the catalog's `Bash`, no typo.
    known = {fold_tool_name(n) for n in names}
    for rule in rules:
        typos: list[tuple[str, str]] = []
        for name in sorted(n for n in rule.tools.names if fold_tool_name(n) not in known):
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
                    f"did you mean {suggestion!r}? (tool names are compared folded: case, -, _ and camelCase aside)",
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


# -- session reads: PE601 under `session` without a catalog, PE511 labels no rule sets ------------------

# `session.labels."x"` or `session.labels.x`, in a condition or a template (YAML has unescaped the quotes).
_LABEL_READ = re.compile(r'\bsession\s*\.\s*labels\s*\.\s*(?:"((?:[^"\\]|\\.)*)"|([A-Za-z_][A-Za-z0-9_]*))')


def _session_reads(packs: Sequence[Pack]) -> list[Problem]:
    """PE601 for the `session.*` reads of packs the catalog check did not type: the session document is
    the same for every tool, so a misspelt field of it (`session.label`) needs no catalog to be found."""
    # Only the rules that name the session: type-checking a whole pack costs about 2 ms a rule.
    reading = [
        dataclasses.replace(pack, rules=tuple(r for r in pack.rules if any(_SESSION.search(t) for t in _texts(r))))
        for pack in packs
    ]
    if not any(pack.rules for pack in reading):
        return []
    return [p for p in check_types(reading, {}) if p.code == PE601 and p.message.startswith("session")]


_SESSION = re.compile(r"\bsession\b")


def _texts(rule: Rule) -> list[str]:
    """A rule's condition and templates, as written."""
    texts = [rule.when.text] if rule.when is not None else []
    for template in (rule.reason, rule.content, rule.block):
        text = getattr(template, "text", None)
        if isinstance(text, str):
            texts.append(text)
    return texts


def _label_reads(rule: Rule) -> list[str]:
    """The labels a rule reads by name (`session.labels."x"`), in order, each once."""
    found: dict[str, None] = {}
    for text in _texts(rule):
        for match in _LABEL_READ.finditer(text):
            quoted, bare = match.groups()
            found[bare if bare is not None else re.sub(r"\\(.)", r"\1", quoted)] = None
    return list(found)


def _unset_labels(rules: Sequence[Rule], sources: _Sources) -> list[Problem]:
    """PE511 for every label a rule reads that no rule of any loaded layer sets with `label:`."""
    set_by = {label for rule in rules for label in rule.labels}
    problems: list[Problem] = []
    for rule in rules:
        for label in _label_reads(rule):
            if label in set_by:
                continue
            close = difflib.get_close_matches(label, sorted(set_by), n=1)
            known = f"the loaded rules set {', '.join(sorted(set_by))}" if set_by else "no loaded rule sets a label"
            problems.append(
                _warn(
                    sources,
                    PE511,
                    rule,
                    f"rule {rule.id!r} reads session label {label!r}, which no loaded rule sets with `label:`: "
                    f"session.labels.{json.dumps(label)} is always null",
                    (f"did you mean {close[0]!r}? ({known})" if close else f"{known}; ")
                    + ("" if close else f"add a rule with `label: {label}`, or load the layer that sets it"),
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
    if rule.labels:
        return ("label", frozenset(rule.labels))  # twins only when they add the same labels
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


def _condition(rule: Rule) -> str | None:
    """The condition as its parsed tree with lists folded in (None: no condition): equal keys, equal truth."""
    # Spacing, quoting style and parentheses do not count; `lists.NAME` counts by its values, which
    # two packs may declare differently.
    if rule.when is None:
        return None
    try:
        return json.dumps(rule.when.parsed.parsed, sort_keys=True, default=repr)
    except (TypeError, ValueError):  # a tree json cannot write: its text is still a sound key
        return "text:" + normalise_when(rule.when.text)


def _twin(rule: Rule) -> tuple[Any, ...]:
    """Stage, tools, condition and action: two rules with the same key are one rule written twice."""
    return (rule.stage, rule.tools.names, frozenset(rule.tools.globs), rule.tools.tags, _condition(rule), _action(rule))


def _duplicates(rules: Iterable[Rule], hidden: set[int], sources: _Sources) -> list[Problem]:
    """PE504 for a rule with the same stage, tools, condition and action as an earlier one."""
    problems: list[Problem] = []
    first: dict[tuple[Any, ...], Rule] = {}
    for rule in rules:
        earlier = first.setdefault(_twin(rule), rule)
        # A twin that can never apply or decide already has its PE501, PE507 or PE508; one warning per fault.
        if earlier is rule or id(rule) in hidden:
            continue
        condition = "condition" if rule.when is not None else "absence of a condition"
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
    if rule.verb is RuleDecision.ALLOW:
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


# -- PE507, PE508: rules an earlier rule with the same condition always decides before -----------------

PE507 = register_code("PE507", "pre-execute rule can never decide (an earlier rule, same condition, decides first)")
PE508 = register_code("PE508", "guard can never fire (an earlier guard, same condition, denies first)")

# How an earlier rule ends the chain before a later one with the same condition, for the message.
_FIRST: dict[RuleDecision | None, str] = {RuleDecision.DENY: "denies", RuleDecision.ASK: "asks (which ends the chain)"}

# Post-execute is left out: a rewrite between two rules changes the `result.value` both conditions
# read, so the same text may hold for the later rule and not for the earlier one. Execute rules compose.
_DECIDING_STAGES = (Stage.PRE_EXECUTE, Stage.GUARD)


def _dead(rules: Sequence[Rule], hidden: set[int], sources: _Sources) -> list[Problem]:
    """PE507/PE508 for a rule behind an earlier one, for its tools, with the same condition that ends the chain."""
    # The unconditional case is PE501, an exact twin (same tools and action too) PE504. Dead rules
    # join `hidden`, so no second warning repeats the fault.
    problems: list[Problem] = []
    deciders: dict[tuple[Stage, str], list[Rule]] = {}
    for rule in rules:
        condition = _condition(rule)
        if rule.stage not in _DECIDING_STAGES or condition is None or id(rule) in hidden or rule.labels:
            continue  # a label rule decides nothing (see _unreachable)
        earlier_rules = deciders.setdefault((rule.stage, condition), [])
        earlier = next((e for e in earlier_rules if covers(e.tools, rule.tools)), None)
        if earlier is None:
            if _decides(rule) is not None:
                earlier_rules.append(rule)
            continue
        if _twin(earlier) == _twin(rule):
            continue  # PE504 says it better: the rule is written twice
        hidden.add(id(rule))
        problems.append(_dead_warning(sources, rule, earlier))
    return problems


def _dead_warning(sources: _Sources, rule: Rule, earlier: Rule) -> Problem:
    """The PE507 (pre-execute) or PE508 (guard) warning for `rule`, naming the rule that decides first."""
    same_pack = earlier.source.pack == rule.source.pack
    layer = "" if same_pack else f" of pack {earlier.source.pack!r} (an earlier layer)"
    if rule.stage is Stage.GUARD:
        return _warn(
            sources,
            PE508,
            rule,
            f"guard {rule.id!r} can never fire: {_where(earlier)}{layer} has the same condition, covers its "
            "tools and denies first (the first red line that holds ends the guards)",
            f"delete this guard, since {earlier.id!r} already draws the red line; to have this guard's reason "
            f"shown instead, move it above {earlier.id!r}"
            if same_pack
            else f"delete this guard: the red line of {earlier.id!r} already holds in every layer",
        )
    return _warn(
        sources,
        PE507,
        rule,
        f"rule {rule.id!r} can never decide: {_where(earlier)}{layer} has the same condition, covers its tools "
        f"and {_FIRST.get(earlier.verb, 'allows with `final: true` (which skips later rules and layers)')} "
        "before it",
        f"delete this rule, or move it above {earlier.id!r} if it must decide (the first matching deny, ask "
        "or final allow ends the chain: put the strictest first)"
        if same_pack
        else f"delete this rule, or narrow the condition or tools of {earlier.id!r} in pack "
        f"{earlier.source.pack!r}: its decision ends the chain before this layer",
    )


# -- PE509: YAML files the manifest does not load ------------------------------------------------

PE509 = register_code("PE509", "YAML file in the pack folder that the manifest does not load")
PE510 = register_code("PE510", "pattern whose every-match rewrite may take quadratic time")

_YAML = frozenset({".yaml", ".yml"})
_GLOB_CHARS = frozenset("*?[")


def _key(path: Path) -> Path:
    """A path to compare files by: resolved when possible (symlinks, `a/../b`)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return path.absolute()


def _loaded_files(pack: Pack) -> set[Path]:
    """The manifest, the rule files, the catalog and the policy test files the `tests:` globs match."""
    loaded = {_key(pack.path / MANIFEST)} | {_key(pack.path / rel) for rel in pack.files}
    if pack.catalog is not None:
        loaded.add(_key(pack.catalog))
    for pattern in pack.tests:
        try:
            loaded |= {_key(path) for path in pack.path.glob(pattern.replace("\\", "/"))}
        except (OSError, ValueError, IndexError, NotImplementedError):
            continue  # `policyengine test` reports a glob it cannot use
    return loaded


def _test_folders(pack: Pack) -> Iterator[Path]:
    """The folder each `tests:` glob starts in (`tests/*.yaml` -> tests/), when it is inside the pack folder."""
    for pattern in pack.tests:
        parts = PurePosixPath(pattern.replace("\\", "/")).parts[:-1]
        fixed = list(itertools.takewhile(lambda part: not _GLOB_CHARS.intersection(part), parts))
        if fixed and ".." not in fixed and not PurePosixPath(*fixed).is_absolute():
            yield pack.path.joinpath(*fixed)


def _unlisted(pack: Pack, sources: _Sources) -> list[Problem]:
    """PE509 for each YAML file in the pack folder, or a folder `files:` or `tests:` points into, that nothing loads."""
    # Not recursive beyond those folders: fixtures and documentation may hold YAML. Dotfiles are
    # tool settings, not rules.
    loaded = _loaded_files(pack)
    folders = {pack.path} | {(pack.path / rel).parent for rel in pack.files} | set(_test_folders(pack))
    manifest = pack.path / MANIFEST
    problems: list[Problem] = []
    for folder in sorted(folders):
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for path in entries:
            if path.name.startswith(".") or path.suffix.lower() not in _YAML or _key(path) in loaded:
                continue
            if not path.is_file():
                continue
            where = Location.start_of(str(path))
            lines = sources.lines(str(path)) or []
            if any(line.startswith("tests:") for line in lines):
                message = f"{path} holds policy tests that never run: no glob of pack {pack.name}'s `tests:` matches it"
                hint = f"add a glob that matches it to `tests:` in {manifest}, or delete the file"
            else:
                message = f"{path} is not listed in pack {pack.name}'s `files:`: its rules are silently not loaded"
                hint = f"add it to `files:` in {manifest} (in evaluation order), or delete the file"
            problems.append(
                Problem(
                    PE509,
                    message,
                    where,
                    hint=hint,
                    severity=Severity.WARNING,
                    source_line=lines[0] if lines else None,
                )
            )
    return problems


# -- PE510: patterns whose every-match rewrite may take quadratic time -------------------------


def _rewrite_patterns(rule: Rule) -> Iterator[tuple[str, str]]:
    """(where, pattern) for each pattern the rule replaces every match of: redactions, literal regex_replace()."""
    for redaction in rule.redactions:
        if redaction.pattern is not None:
            yield "in `redact: pattern:`", str(_pattern_text(redaction.pattern))
    if rule.when is not None:
        yield from (("in regex_replace() in `when`", p) for p in _replace_literals(rule.when.parsed.parsed))


def _replace_literals(node: Any) -> Iterator[str]:
    if not isinstance(node, dict):
        return
    children = node.get("children") or []
    if node.get("type") == "function_expression" and node.get("value") == "regex_replace" and len(children) > 1:
        pattern = children[1]
        if isinstance(pattern, dict) and pattern.get("type") == "literal" and isinstance(pattern.get("value"), str):
            yield pattern["value"]
    for child in children:
        yield from _replace_literals(child)


def _slow_patterns(rules: Iterable[Rule], sources: _Sources) -> list[Problem]:
    """PE510 where a rule replaces every match of a pattern that may read to the end of the text for each."""
    problems = []
    for rule in rules:
        for where, pattern in _rewrite_patterns(rule):
            why = quadratic_risk(pattern)
            if why is None:
                continue
            problems.append(
                _warn(
                    sources,
                    PE510,
                    rule,
                    f"rule {rule.id!r} replaces every match of {pattern[:80]!r} {where}, and {why}: on a long "
                    "run of such text each search may read to its end, quadratic time (a 1 MB result: minutes)",
                    "bound the repetition that reads ahead (e.g. 'a{1,100}b|a' for 'a+b|a'), or make the "
                    "alternatives start with different characters",
                )
            )
    return problems


def lint(
    packs: Sequence[Pack], catalog: Mapping[str, Any] | None = None, *, against: Sequence[Pack] | None = None
) -> list[Problem]:
    """Every lint warning for packs layered in order (loader warnings included), by file, line, column."""
    sources = _Sources()
    rules = [rule for pack in packs for rule in pack.rules]
    problems: list[Problem] = [w for pack in packs for w in pack.warnings]
    unreachable, hidden = _unreachable(rules, sources)
    problems += unreachable
    problems += _dead(rules, hidden, sources)
    if catalog is not None:
        # Only the packs written for this catalog (`against`, default all): a generic layer (a
        # baseline for every agent) is not checked against a specific layer's tools.
        checked = list(packs if against is None else against)
        catalog_rules = [rule for pack in checked for rule in pack.rules]
        # Argument paths, types and templates against the catalog; its PE606 names each unknown tool
        # entry where it is written (with a did-you-mean), so those rules skip the coarser PE505/PE502.
        # (A catalog of bare names, as some callers pass, has no parameters to check against.)
        typed = check_types(checked, catalog) if all(isinstance(d, ToolDefinition) for d in catalog.values()) else []
        flagged = {p.rule_id for p in typed if p.code == PE606}
        problems += typed
        problems += _catalog([r for r in catalog_rules if r.id not in flagged], catalog, sources)
    else:
        checked = []
    problems += _session_reads([p for p in packs if p not in checked])
    problems += _unset_labels(rules, sources)
    problems += _display_only(rules, sources)
    problems += _duplicates(rules, hidden, sources)
    problems += _permissive_paths(rules, sources)
    problems += _slow_patterns(rules, sources)
    problems += _monitored_red_lines(rules, sources)
    for pack in packs:
        problems += _unlisted(pack, sources)
        problems += _monitored_default(pack)
    return sorted(problems, key=Problem.sort_key)


# -- PE512, PE513: what monitor mode leaves unenforced ---------------------------------------------


def _monitored_red_lines(rules: Iterable[Rule], sources: _Sources) -> list[Problem]:
    """PE512 for every guard in monitor mode: a red line that only records must be a choice, not a slip."""
    return [
        _warn(
            sources,
            PE512,
            rule,
            f"guard {rule.id!r} is in monitor mode: it records the calls it would deny and denies none of them",
            "remove `mode: monitor` (from the rule, or the pack's manifest) to enforce the red line; keep it only "
            "while staging it, and watch `policyengine logs` or the dry-run for its monitor hits",
        )
        for rule in rules
        if rule.stage is Stage.GUARD and rule.mode is Mode.MONITOR
    ]


def _monitored_default(pack: Pack) -> list[Problem]:
    """PE513 when a pack in monitor mode declares a default other than allow: it closes no chain."""
    from policyengine.packs.yaml_source import load_yaml_file

    if pack.mode is not Mode.MONITOR:
        return []
    # The manifest loaded a moment ago: it is read again only for the position of `default:`.
    doc = load_yaml_file(pack.path / MANIFEST, ProblemSink())
    if doc is None or not isinstance(doc.data, Mapping) or doc.data.get("default", "allow") == "allow":
        return []
    return [
        doc.problem(
            PE513,
            f"pack {pack.name} is in monitor mode: its `default: {doc.data['default']}` is not applied "
            "(calls no rule decides fall to the other layers' defaults) and records no monitor hit",
            ("default",),
            severity=Severity.WARNING,
            hint="stage the rules in monitor mode and keep `default: allow` until the pack is enforced; "
            "or put the default in an enforced layer",
        )
    ]
