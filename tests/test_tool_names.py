"""Tool names are folded before `tools:` selectors and tool_matches() compare them (docs/rules.md)."""

from __future__ import annotations

import functools
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import jmespath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.language import functions
from policyengine.language.functions import OPTIONS
from policyengine.language.tool_names import fold_tool_name, fold_tool_pattern, tool_matches
from policyengine.packs.lint import PE505, lint
from policyengine.packs.loader import Pack, load_pack
from policyengine.packs.rules import ToolMatcher
from support import read_yaml, write_pack

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT / "tests" / "data" / "tool_names.yaml"


def _cases(section: str, *keys: str) -> list[Any]:
    """One section of the data file as parameters (missing data fails, it never skips)."""
    assert DATA.is_file(), f"missing test data {DATA}"
    rows = read_yaml(DATA)[section]
    assert rows, f"{DATA.name}: no {section}"
    return [pytest.param(*(row[k] for k in keys), id=str(row[keys[0]])) for row in rows]


SPELLINGS = _cases("folds", "name", "folded")
PATTERNS = _cases("patterns", "pattern", "folded")
REACHED = _cases("reached", "name", "patterns")
NOT_REACHED = _cases("not_reached", "name", "patterns")


@pytest.mark.parametrize(("name", "folded"), SPELLINGS)
def test_every_spelling_of_a_name_folds_to_one(name: str, folded: str) -> None:
    assert fold_tool_name(name) == folded


@pytest.mark.parametrize(("pattern", "folded"), PATTERNS)
def test_a_pattern_folds_as_names_do_and_keeps_its_wildcards(pattern: str, folded: str) -> None:
    assert fold_tool_pattern(pattern) == folded


@pytest.mark.parametrize(("name", "patterns"), REACHED)
def test_a_selector_reaches_the_tool_in_any_spelling(name: str, patterns: list[str]) -> None:
    assert tool_matches(name, patterns)
    assert ToolMatcher(frozenset(p for p in patterns if "*" not in p and "?" not in p and "[" not in p),
                       tuple(p for p in patterns if any(c in p for c in "*?["))).matches(name)  # fmt: skip
    assert jmespath.search("tool_matches(name, patterns)", {"name": name, "patterns": patterns}, options=OPTIONS)


@pytest.mark.parametrize(("name", "patterns"), NOT_REACHED)
def test_a_selector_does_not_reach_another_word(name: str, patterns: list[str]) -> None:
    assert not tool_matches(name, patterns)
    assert not ToolMatcher(frozenset(), tuple(patterns)).matches(name)
    assert not jmespath.search("tool_matches(name, patterns)", {"name": name, "patterns": patterns}, options=OPTIONS)


def test_tool_matches_takes_one_pattern_as_a_string() -> None:
    assert jmespath.search("tool_matches(name, 'Bash')", {"name": "bash"}, options=OPTIONS)


@functools.cache
def _pack(name: str) -> Pack:
    """A shipped pack, loaded at first use (collection loads none)."""
    return load_pack(ROOT / "policies" / name)


@pytest.mark.parametrize(("pack", "name", "rule"), [
    ("claude-code", "bash", "no-system-dirs-in-shell"),
    ("claude-code", "BASH", "deny-blocked-programs"),
    ("claude-code", "multi_edit", "allow-project-edits"),
    ("claude-code", "mcp__fs__deleteFile", "deny-blocked-tools"),
    ("baseline", "Shell", "shell-deadline"),
    ("baseline", "RunCommand", "shell-deadline"),
    ("bfcl", "RM", "ask-before-delete"),
    ("bfcl", "placeOrder", "deny-orders-over-limit"),
])  # fmt: skip
def test_the_rule_index_selects_a_rule_for_another_spelling_of_its_tool(pack: str, name: str, rule: str) -> None:
    rules = [r for index in _pack(pack).index.values() for r in index.for_tool(name)]
    assert rule in {r.id for r in rules}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["baseline", "bfcl", "claude-code"]), st.text(alphabet="aAbBeEhHlLmMrRsStT_-. ", max_size=10))
def test_the_rule_index_is_the_linear_scan_it_replaces(pack: str, name: str) -> None:
    for index in _pack(pack).index.values():
        assert list(index.for_tool(name)) == [r for r in index.rules if r.tools.matches(name)]


_NAMES = st.text(alphabet="aAbBzZ09-_. \u200b\uff41", max_size=12)


@settings(max_examples=300, deadline=None)
@given(_NAMES)
def test_folding_is_idempotent(name: str) -> None:
    assert fold_tool_name(fold_tool_name(name)) == fold_tool_name(name)


@settings(max_examples=300, deadline=None)
@given(_NAMES)
def test_a_name_matches_itself_as_a_pattern(name: str) -> None:
    assert tool_matches(name, [name])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abz09_", min_size=1, max_size=10), st.text(alphabet="abz09_*?", min_size=1, max_size=8))
def test_on_folded_spellings_matching_is_the_glob_it_replaces(name: str, pattern: str) -> None:
    # On names already in folded form (lower case, single `_` inside), folding changes nothing:
    # matching is exactly fnmatchcase, the comparison it replaces.
    name, pattern = fold_tool_name(name), fold_tool_pattern(pattern)
    assert tool_matches(name, [pattern]) == fnmatchcase(name, pattern)


_GATE = """
rules:
  - id: gate-shell
    stage: pre-execute
    tools: [%s]
    decision: ask
"""


def test_a_folded_spelling_of_a_catalog_tool_is_no_typo_and_selects_it(tmp_path: Path) -> None:
    catalog: dict[str, Any] = {"Bash": None, "place_order": None}
    folded = load_pack(write_pack(tmp_path, "folded", {"rules.yaml": _GATE % "placeOrder"}))
    assert lint([folded], catalog) == []
    typo = load_pack(write_pack(tmp_path, "typo", {"rules.yaml": _GATE % "Bashh"}))
    assert [p.code for p in lint([typo], catalog)] == [PE505]


@settings(max_examples=300, deadline=None)
@given(_NAMES, st.lists(st.text(alphabet="aAbB_-.*?", min_size=1, max_size=6), max_size=4))
def test_the_selector_and_the_function_agree(name: str, patterns: list[str]) -> None:
    globs = tuple(p for p in patterns if any(c in p for c in "*?["))
    names = frozenset(p for p in patterns if p not in globs)
    assert ToolMatcher(names, globs).matches(name) == tool_matches(name, patterns)


def test_the_type_check_selects_the_catalog_tool_a_folded_spelling_names(tmp_path: Path) -> None:
    from policyengine.packs.type_check import PE606, check_types
    from policyengine.tools.catalog import load_catalog

    catalog = load_catalog(ROOT / "policies" / "bfcl" / "tools.jsonl")
    rules = _GATE.replace("decision: ask", "when: arguments.amount > `0`\n    decision: ask")
    folded = load_pack(write_pack(tmp_path, "folded", {"rules.yaml": rules % "placeOrder"}))
    assert [p.code for p in check_types([folded], catalog) if p.code == PE606] == []
    typo = load_pack(write_pack(tmp_path, "typo", {"rules.yaml": rules % "placeOrdr"}))
    assert [p.code for p in check_types([typo], catalog) if p.code == PE606] == [PE606]


@settings(max_examples=300, deadline=None)
@given(_NAMES, st.lists(st.text(alphabet="aAbB_-.*?", min_size=1, max_size=6), min_size=1, max_size=4))
def test_the_specialised_tool_matches_is_the_function_it_replaces(name: str, patterns: list[str]) -> None:
    """A rule's literal list is folded and compiled once at load (functions._specialize); same answers."""
    run = functions._specialize("tool_matches", [functions.DYNAMIC, patterns])
    assert run is not None
    assert run(name) == tool_matches(name, patterns)
