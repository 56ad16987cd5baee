"""Loader fuzzing, the short version for CI (issue 7; the long run is scripts/fuzz_loader.py).

The oracle and the mutators live in the script, imported here by path: a mutated pack either
loads or raises PackLoadError, every problem's location lies inside a file of the pack, and a
refused pack leaves a registry that runs a known-good pack deciding exactly as before. JMESPath
conditions generated from the grammar (fuzz_loader.grammar_expression) load or are refused with
located problems, and evaluate as jmespath 1.1.0 does, ordering comparisons of non-numbers aside.

Known loader bugs the fuzzer finds are listed in KNOWN_BUGS: the fuzz tests tolerate them (and
only them), and each has a minimal reproducer below marked xfail(strict=True), which fails the
suite as soon as the bug is fixed, so its KNOWN_BUGS entry and the marker get removed together.

The suite checks the first MUTANTS mutants of SEED and a few hundred hypothesis cases; the volume
runs are the script's (`python scripts/fuzz_loader.py --seed 20260707 --iterations 2000 --reload-rate
0.1` repeats the suite's mutants and goes on), or POLICYENGINE_TEST_SCALE=10 for ten times as many
here (tests/support.py, scaled).
"""

from __future__ import annotations

import importlib.util
import random
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import jmespath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jmespath.exceptions import JMESPathError

from policyengine import (
    Location,
    PackLoadError,
    PolicyLayers,
    Problem,
    Registry,
    Verdict,
    evaluate,
    load_pack,
    pack_bundle,
)
from support import scaled

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "fuzz_loader.py"


def _import_script(name: str = "fuzz_loader") -> ModuleType:
    """scripts/ is not a package: load the fuzzer from its path (once per session)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


fuzz = _import_script()

# Mutated expressions use jmespath's deprecated `literal` string syntax on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:deprecated string literal syntax")

SEED = 20260707
MUTANTS = scaled(200)  # the first 200 already exercise 45 of the 47 mutation kinds

# Finding signatures (see fuzz_loader._signature) of the loader bugs still open -> the bug. The
# bugs fixed since issue 7 are gone from this list, so the fuzz runs below catch them coming back.
KNOWN_BUGS: dict[str, str] = {
    r"location:PE109:(column-out-of-line|line-out-of-file|source-line-mismatch)": "PE109 counts lines by LF only",
}


# Timing findings depend on the machine (a loaded CI runner); the one slow refusal the fuzzer
# found is pinned by test_bug_a_small_deeply_nested_file_is_refused_quickly instead.
TOLERATED: dict[str, str] = {r"slow:load_pack": "a load slower than 2 s + 10 s per MB"}


def unknown(signatures: Any) -> list[str]:
    """The signatures no known bug (or tolerated timing) explains."""
    return [s for s in signatures if not any(re.fullmatch(p, s) for p in {**KNOWN_BUGS, **TOLERATED})]


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    h = fuzz.Harness(tmp_path_factory.mktemp("fuzz-loader"), reload_rate=0.1)
    yield h
    h.close()


# -- the oracle has teeth ----------------------------------------------------------------------


def test_every_corpus_pack_loads_installs_and_decides(harness: Any) -> None:
    for seed in fuzz.corpus():
        status, findings = harness.check(fuzz.Mutant(seed.name, dict(seed.files)), reload=True)
        assert (status, findings) == ("ok", []), seed.name


def test_the_known_good_pack_decides_the_probes_in_every_way(harness: Any) -> None:
    verdicts = {(p.name, e.decision.value) for p, e in zip(fuzz.PROBES, harness.baseline, strict=True)}
    assert {("probe", "deny"), ("shell", "ask"), ("shell", "allow"), ("read", "deny"), ("read", "allow")} <= verdicts
    redacted = [e for p, e in zip(fuzz.PROBES, harness.baseline, strict=True) if p.result and e.post is not None]
    assert any(e.post.value == "rewritten" for e in redacted)


def test_a_registry_changed_behind_the_oracles_back_is_a_finding(harness: Any) -> None:
    before = harness.registry.installation
    deny_all = fuzz.Mutant(
        "deny-all",
        {
            "pack.yaml": b"name: intruder\nversion: 1.0.0\nfiles: [r.yaml]\n",
            "r.yaml": b"rules:\n  - {id: intruder, stage: pre-execute, tools: ['*'], decision: deny}\n",
        },
    )
    fuzz.write_mutant(deny_all, harness.folder)
    handle = harness.registry.install(pack_bundle(load_pack(harness.folder)))
    try:
        signatures = {f.signature for f in harness._same_as_good("test", before)}
    finally:
        handle.remove()
    assert signatures == {"install:test:registry-rebuilt", "install:test:decisions-changed"}
    assert harness.decide() == harness.baseline


def test_locations_outside_the_file_are_findings(tmp_path: Path) -> None:
    folder = tmp_path / "pack"
    folder.mkdir()
    (folder / "pack.yaml").write_text("name: p\nversion: 1.0.0\r\nfiles: [r.yaml]\n", encoding="utf-8")
    manifest = str(folder / "pack.yaml")
    allowed = {manifest}

    def problem(file: str, line: int, column: int, source: str | None = None) -> Problem:
        return Problem("PE101", "m", Location(file, line, column), source_line=source)

    ok = [
        problem(manifest, 1, 1),
        problem(manifest, 2, 15),
        problem(manifest, 4, 1),
        problem(manifest, 3, 1, "files: [r.yaml]"),
    ]
    assert fuzz.check_locations(folder, ok, allowed) == []
    bad = {
        "location:PE101:line-out-of-file": problem(manifest, 5, 1),
        "location:PE101:column-out-of-line": problem(manifest, 2, 16),
        "location:PE101:source-line-mismatch": problem(manifest, 3, 1, "files: [x.yaml]"),
        "location:outside-pack-folder": problem(str(tmp_path / "elsewhere.yaml"), 1, 1),
        "location:PE101:not-a-pack-file": problem(str(folder / "other.yaml"), 1, 1),
    }
    for signature, p in bad.items():
        assert [f.signature for f in fuzz.check_locations(folder, [p], allowed)] == [signature]


def test_yaml_lines_count_the_breaks_yaml_counts() -> None:
    assert fuzz.yaml_lines(b"") == []
    assert fuzz.yaml_lines(b"\xef\xbb\xbfa\r\nb\rc\xc2\x85d\xe2\x80\xa8e\n") == ["a", "b", "c", "d", "e"]
    assert fuzz.yaml_lines(b"a\n\n") == ["a", ""]


def test_mutants_are_reproducible_from_seed_and_iteration() -> None:
    for iteration in range(30):
        a, b = fuzz.make_mutant(SEED, iteration), fuzz.make_mutant(SEED, iteration)
        assert (a.files, a.dirs, a.links, a.outside, a.ops) == (b.files, b.dirs, b.links, b.outside, b.ops)


# -- the fuzz runs ------------------------------------------------------------------------------


def test_mutated_packs_fixed_seed(harness: Any) -> None:
    """MUTANTS mutants: only Pack or PackLoadError, locations inside the files, nothing half installed."""
    stats = fuzz.run_range(harness, SEED, 0, MUTANTS, timeout=20.0)
    assert stats.iterations == MUTANTS
    assert stats.ok > MUTANTS // 20, "too few mutants load: the oracle's success path is barely exercised"
    assert stats.refused > MUTANTS // 2
    assert {op.split(":")[0] for op in stats.ops} >= {"byte", "token", "struct"}, "a mutation family never ran"
    new = unknown(stats.signatures)
    assert not [s for s in stats.signatures if s.startswith(("generator:", "oracle:", "timeout"))]
    assert not new, "\n\n".join(
        f"{s} (iterations {stats.examples[s]}; replay: python scripts/fuzz_loader.py --seed {SEED} "
        f"--replay {stats.examples[s][0]})\n{stats.details[s]}"
        for s in new
    )


_RULE_FIELDS, _REDACT_FIELDS, _FILE_FIELDS, _MANIFEST_FIELDS = fuzz.schema_fields()
_LIST_NAMES = ("tools", "dirs", "patterns")

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from((*fuzz.STAGES, *fuzz.DECISIONS, "*", "@tools", "@nope", "{name}", "lists.dirs", ""))
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _from_rng(make: Any) -> st.SearchStrategy[Any]:
    """A strategy drawing the fuzzer's random expressions/templates/regexes (shrinks via the rng)."""
    return st.randoms(use_true_random=False).map(make)


_plausible: dict[str, st.SearchStrategy[Any]] = {
    "id": st.from_regex(r"[a-z0-9][a-z0-9._-]{0,12}", fullmatch=True) | st.text(max_size=6),
    "description": st.text(max_size=20),
    "stage": st.sampled_from(fuzz.STAGES),
    "tools": st.lists(st.sampled_from(("*", "fs_*", "read", "@tools", "@nope", "[ab]", "x y")), min_size=1, max_size=3),
    "when": _from_rng(lambda r: fuzz.random_expression(r, _LIST_NAMES)),
    "decision": st.sampled_from(fuzz.DECISIONS),
    "final": st.booleans(),
    "reason": _from_rng(lambda r: fuzz.mutate_template(r, "{name} {arguments.path}", _LIST_NAMES)),
    "content": _from_rng(lambda r: fuzz.mutate_template(r, "{name}", _LIST_NAMES)),
    "block": _from_rng(lambda r: fuzz.mutate_template(r, "blocked", _LIST_NAMES)),
    "timeout": st.floats(min_value=-1, max_value=100) | st.integers(-1, 100),
    "retries": st.integers(-2, 12),
    "backoff": st.floats(min_value=-1, max_value=70),
    "redact": st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "path": st.sampled_from(("a.b", "items[*].card", "[0]", "a[", ".x")),
                "keys": st.lists(st.sampled_from(("*password*", "@tools", "[", "api_key")), min_size=1, max_size=2),
                "pattern": _from_rng(fuzz.random_regex),
                "replace_with": _scalars,
                "keep_last": st.integers(-1, 20),
            },
        ),
        max_size=2,
    ),
}
_rules = st.fixed_dictionaries(
    {}, optional={name: _plausible.get(name, _values) | _values for name in _RULE_FIELDS}
) | st.dictionaries(st.sampled_from(_RULE_FIELDS) | st.text(max_size=8), _values, max_size=6)
_lists = st.dictionaries(
    st.sampled_from(_LIST_NAMES) | st.text(max_size=6),
    st.lists(st.text(max_size=6) | st.integers() | st.floats() | st.booleans(), max_size=3) | _values,
    max_size=3,
)
_rule_files = st.fixed_dictionaries(
    {}, optional={"lists": _lists, "rules": st.lists(_rules, max_size=4)}
) | st.dictionaries(st.sampled_from(_FILE_FIELDS) | st.text(max_size=6), _values, max_size=3)
_manifests = st.fixed_dictionaries(
    {
        "name": st.from_regex(r"[a-z0-9][a-z0-9._-]{0,8}", fullmatch=True) | _scalars,
        "version": st.sampled_from(("1.0.0", "0.1.2-rc.1", "1.0", "v1")) | _scalars,
        "files": st.just(["rules.yaml"])
        | st.lists(st.sampled_from(("rules.yaml", "missing.yaml", "x.json")), max_size=3),
    },
    optional={
        "description": _scalars,
        "default": st.sampled_from(fuzz.DECISIONS) | _scalars,
        "default_reason": _scalars,
        "tests": _values,
        "extra": _values,
    },
)


@settings(
    max_examples=scaled(100), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(manifest=_manifests, rule_file=_rule_files, style=st.randoms(use_true_random=False))
def test_random_rule_documents_load_or_are_refused_with_locations_inside(
    harness: Any, manifest: dict[str, Any], rule_file: dict[str, Any], style: random.Random
) -> None:
    """Rules built from the schema's field names with values of random types, dumped in random YAML styles."""
    mutant = fuzz.Mutant(
        "hypothesis",
        {"pack.yaml": fuzz.dump_yaml(style, manifest), "rules.yaml": fuzz.dump_yaml(style, rule_file)},
    )
    status, findings = harness.check(mutant)
    assert status in ("ok", "refused", "finding")
    new = unknown(f.signature for f in findings)
    assert not new, "\n\n".join(f"{f.signature}\n{f.detail}\n{f.trace}" for f in findings)


# -- regression tests for the bugs the fuzzer found -----------------------------------------------

MANIFEST = "name: p\nversion: 1.0.0\nfiles: [r.yaml]\n"
RULE = "rules:\n  - id: a\n    stage: pre-execute\n    tools: [x]\n    decision: deny\n"


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return folder


def refused(folder: Path) -> PackLoadError:
    """load_pack must raise PackLoadError (anything else fails the test) with every location inside."""
    with pytest.raises(PackLoadError) as caught:
        load_pack(folder)
    allowed = {str(p) for p in folder.rglob("*")}
    assert fuzz.check_locations(folder, caught.value.problems, allowed) == []
    return caught.value


@pytest.mark.parametrize("stage", ["[pre-execute]", "{a: 1}"])
def test_bug_stage_of_a_collection_type_is_refused(tmp_path: Path, stage: str) -> None:
    rules = f"rules:\n  - id: a\n    stage: {stage}\n    tools: [x]\n    decision: deny\n"
    assert "PE205" in refused(write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": rules})).codes


def test_bug_rules_of_a_scalar_type_is_refused(tmp_path: Path) -> None:
    assert "PE204" in refused(write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": "rules: 5\n"})).codes


@pytest.mark.parametrize("lists", ["abc", "[a, b]"])
def test_bug_lists_that_are_not_a_mapping_are_refused(tmp_path: Path, lists: str) -> None:
    folder = write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": f"lists: {lists}\n" + RULE})
    assert "PE204" in refused(folder).codes


@pytest.mark.parametrize(
    "where",
    [
        "x: 0x{digits}\n" + RULE,  # unknown top-level key: digest_of
        RULE + "    description: 0o" + "7" * 5000 + "\n",  # wrong type in a rule: digest_of
        "rules:\n  - id: 0x{digits}\n",  # the rule id: rule_id_at
        "rules:\n  - id: a\n    stage: 0x{digits}\n    tools: [x]\n",  # the stage: its did-you-mean
        "lists:\n  t: [0x{digits}]\n" + RULE.replace("[x]", "['@t']"),  # a named list: tools
    ],
)
def test_bug_huge_hex_and_octal_integers_are_refused(tmp_path: Path, where: str) -> None:
    folder = write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": where.format(digits="f" * 4000)})
    refused(folder)


@pytest.mark.parametrize("field", ["when: 'a[{n}]'", "reason: '{{a[{n}]}}'"])
def test_bug_huge_index_in_an_expression_is_refused(tmp_path: Path, field: str) -> None:
    rules = RULE + "    " + field.format(n="9" * 5000) + "\n"
    assert "PE301" in refused(write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": rules})).codes


def test_bug_huge_index_in_a_redact_path_is_refused(tmp_path: Path) -> None:
    rules = (
        "rules:\n  - id: a\n    stage: post-execute\n    tools: [x]\n    redact:\n      - path: a[" + "9" * 5000 + "]\n"
    )
    refused(write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": rules}))


def test_bug_escape_past_the_last_code_point_is_refused(tmp_path: Path) -> None:
    folder = write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": RULE + '    description: "\\U00110000"\n'})
    assert refused(folder).codes == ("PE101",)


@pytest.mark.parametrize(
    "expression",
    ["(" * 1000 + "a" + ")" * 1000, "!" * 1000 + "a", " || ".join(["a"] * 1000), " | ".join(["a"] * 1000)],
    ids=["parens", "nots", "ors", "pipes"],
)
def test_bug_deeply_nested_expressions_are_refused(tmp_path: Path, expression: str) -> None:
    rules = RULE + f"    when: '{expression}'\n"
    assert "PE301" in refused(write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": rules})).codes


@pytest.mark.parametrize(("stage", "action"), [("pre-execute", "decision: deny\n    reason"), ("guard", "reason")])
def test_bug_an_expression_reference_placeholder_never_crashes_a_decision(
    harness: Any, tmp_path: Path, stage: str, action: str
) -> None:
    rules = f"rules:\n  - id: amp\n    stage: {stage}\n    tools: ['*']\n    {action}: 'stopped {{&name}}'\n"
    registry = Registry()
    PolicyLayers.install(registry, [write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": rules})])
    outcome = harness.loop.run_until_complete(evaluate(registry, "read", {"path": "x"}, result={"value": 1}))
    assert outcome.decision is Verdict.DENY  # post-execute already fails closed (blocks) on the same error


def test_bug_a_file_name_too_long_is_refused(tmp_path: Path) -> None:
    folder = write(tmp_path, {"pack.yaml": f"name: p\nversion: 1.0.0\nfiles: [{'a' * 300}.yaml]\n"})
    assert refused(folder).codes == ("PE403",)


def test_bug_a_catalog_name_too_long_is_refused(tmp_path: Path) -> None:
    # Found by the 100,000-mutant run of 2026-12-03: pathlib's is_file() raised OSError(36) out of the loader.
    manifest = f"name: p\nversion: 1.0.0\nfiles: [r.yaml]\ncatalog: {'x' * 5000}\n"
    folder = write(tmp_path, {"pack.yaml": manifest, "r.yaml": RULE})
    error = refused(folder)
    assert error.codes == ("PE403",) and "cannot be opened" in error.problems[0].message


def test_bug_a_small_deeply_nested_file_is_refused_quickly(tmp_path: Path) -> None:
    folder = write(tmp_path, {"pack.yaml": "{a:" + "[" * 2500})  # 2.5 KB: took ~1.5 s before the fix
    # CPU time of this thread, not wall time: a loaded machine (other tests, other workers) must not fail it.
    started = time.thread_time()
    refused(folder)
    assert time.thread_time() - started < 0.5


def test_bug_invalid_utf8_is_located_on_the_line_yaml_numbers(tmp_path: Path) -> None:
    folder = write(tmp_path, {"pack.yaml": b"name: p\rversion: 1.0.0\rfiles: [r.yaml]\r\xff\r"})
    error = refused(folder)  # refused() also checks that the location lies in the file
    assert error.problems[0].location == Location(str(folder / "pack.yaml"), 4, 1)


def test_bug_files_outside_the_pack_folder_are_refused(tmp_path: Path) -> None:
    write(tmp_path, {"outside.yaml": RULE})
    folder = write(tmp_path / "pack", {"pack.yaml": "name: p\nversion: 1.0.0\nfiles: [../outside.yaml]\n"})
    assert {"PE402", "PE403"} & set(refused(folder).codes)


def test_bug_a_symlink_loop_in_files_is_refused(tmp_path: Path) -> None:
    folder = write(tmp_path, {"pack.yaml": "name: p\nversion: 1.0.0\nfiles: [link.yaml]\n"})
    (folder / "link.yaml").symlink_to("link.yaml")
    assert refused(folder).codes == ("PE403",)


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1e999"])
def test_bug_a_named_list_with_a_non_finite_number_is_refused(tmp_path: Path, value: str) -> None:
    rules = f"lists:\n  d: [{value}]\n" + RULE + "    when: contains(lists.d, `1`)\n"
    refused(write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": rules}))


def test_bug_a_non_finite_replacement_is_refused_or_fails_closed(harness: Any, tmp_path: Path) -> None:
    rules = (
        "rules:\n  - id: a\n    stage: post-execute\n    tools: ['*']\n    redact:\n      - keys: [password]\n"
        "        replace_with: .inf\n  - id: b\n    stage: post-execute\n    tools: ['*']\n    block: no\n"
    )
    folder = write(tmp_path, {"pack.yaml": MANIFEST, "r.yaml": rules})
    try:
        load_pack(folder)
    except PackLoadError:
        return  # refused at load: fine
    registry = Registry()
    PolicyLayers.install(registry, [folder])
    outcome = harness.loop.run_until_complete(evaluate(registry, "read", {}, result={"value": {"password": "x"}}))
    assert outcome.post is not None and outcome.post.value == "blocked"


def test_a_registry_keeps_deciding_after_every_known_bug(harness: Any, tmp_path: Path) -> None:
    """Whatever escapes the loader today, nothing of the bad pack is installed."""
    cases = [
        RULE.replace("stage: pre-execute", "stage: [pre-execute]"),
        "rules: 5\n",
        "lists: abc\n" + RULE,
        "x: 0x" + "f" * 4000 + "\n" + RULE,
        RULE + "    when: '" + "(" * 1000 + "a" + ")" * 1000 + "'\n",
    ]
    for text in cases:
        _status, findings = harness.check(fuzz.Mutant("bug", {"pack.yaml": MANIFEST.encode(), "r.yaml": text.encode()}))
        assert not [f.signature for f in findings if f.kind != "escape"]
        assert harness.decide() == harness.baseline


# -- grammar-generated JMESPath conditions --------------------------------------------------------------

# A strategy over the grammar: hypothesis drives (and shrinks) the random choices of the generator.
grammar_expressions = st.randoms(use_true_random=False).map(fuzz.grammar_expression)
_JMESPATH_NODES = {
    "and_expression",
    "comparator",
    "current",
    "expref",
    "field",
    "filter_projection",
    "flatten",
    "function_expression",
    "identity",
    "index",
    "index_expression",
    "key_val_pair",
    "literal",
    "multi_select_dict",
    "multi_select_list",
    "not_expression",
    "or_expression",
    "pipe",
    "projection",
    "slice",
    "subexpression",
    "value_projection",
}


@pytest.fixture(scope="module")
def grammar_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the grammar oracle writes its one-rule packs (rewritten for each expression)."""
    return tmp_path_factory.mktemp("grammar") / "pack"


def _nodes(node: Any) -> Iterator[dict[str, Any]]:
    """Every node of a jmespath AST (a slice's int children are not nodes)."""
    if isinstance(node, dict):
        yield node
        for child in node.get("children", []):
            yield from _nodes(child)


def test_the_grammar_reaches_every_jmespath_form() -> None:
    """Every node type of jmespath's parser, and slices with each of start, stop and step left out."""
    seen: set[str] = set()
    slices: set[tuple[bool, bool, bool]] = set()
    parsed = 0
    for seed in range(500):
        try:
            ast = jmespath.compile(fuzz.grammar_expression(random.Random(seed))).parsed
        except JMESPathError:
            continue
        parsed += 1
        for node in _nodes(ast):
            seen.add(node["type"])
            if node["type"] == "slice":
                start, stop, step = node["children"]
                slices.add((start is None, stop is None, step is None))
                seen.add("slice with step 0" if step == 0 else "slice")
    assert parsed > 400, "most generated expressions must be valid JMESPath"
    assert seen >= _JMESPATH_NODES | {"slice with step 0"}, sorted(_JMESPATH_NODES - seen)
    assert len(slices) == 8


@settings(max_examples=scaled(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=grammar_expressions, rng=st.randoms(use_true_random=False))
def test_grammar_expressions_load_or_are_refused_located_and_evaluate_as_jmespath(
    grammar_folder: Path, text: str, rng: random.Random
) -> None:
    """Load: a Pack or PackLoadError with located problems. Evaluate: a value or a JMESPath error, as jmespath."""
    calls = [fuzz.random_call(rng) for _ in range(3)]
    status, findings = fuzz.check_expression(grammar_folder, text, calls, rng)
    assert status in ("ok", "refused")
    assert not findings, "\n\n".join(f"{f.signature}\n{f.detail}\n{f.trace}" for f in findings)


def _grammar_check(folder: Path, text: str, call: dict[str, Any]) -> tuple[str, list[str]]:
    """The grammar oracle's status and finding signatures for one expression on one call."""
    status, findings = fuzz.check_expression(folder, text, [call], random.Random(0))
    return status, [f.signature for f in findings]


CALL = {"name": "t", "agent": "a", "call_id": "c", "arguments": {"tags": ["x", "y"]}}


def test_the_grammar_oracle_accepts_the_deliberate_ordering_difference(grammar_folder: Path) -> None:
    """Ordering null raises in the engine (null in jmespath); jmespath's own TypeError is its own."""
    assert _grammar_check(grammar_folder, "arguments.amount < `1`", CALL) == ("ok", [])
    assert _grammar_check(grammar_folder, "contains('abc', `1`)", CALL) == ("ok", [])
    assert _grammar_check(grammar_folder, "arguments.tags[::0]", CALL) == ("ok", [])


def test_the_grammar_oracle_reports_an_internal_error_at_load(
    grammar_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("policyengine.language.expressions.compile_ast", broken)
    assert _grammar_check(grammar_folder, "arguments.tags[1:]", CALL) == ("refused", ["internal:RuntimeError"])


@pytest.mark.parametrize(
    ("closure", "signatures"),
    [
        (lambda _doc: cast(Any, {}).missing, {"eval:AttributeError", "eval:compiled-differs-from-fallback"}),
        (lambda _doc: 42, {"eval:compiled-differs-from-fallback"}),
    ],
    ids=["python-error", "wrong-value"],
)
def test_the_grammar_oracle_reports_a_wrong_evaluation(
    grammar_folder: Path, monkeypatch: pytest.MonkeyPatch, closure: Any, signatures: set[str]
) -> None:
    monkeypatch.setattr("policyengine.language.expressions.compile_ast", lambda *_args, **_kwargs: closure)
    status, found = _grammar_check(grammar_folder, "arguments.tags[1:]", CALL)
    assert status == "ok" and {s.split("@")[0] for s in found} == signatures


def test_the_grammar_oracle_reports_an_engine_that_differs_from_jmespath(
    grammar_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fuzz, "strict_search", lambda *_args: "elsewhere")
    status, found = _grammar_check(grammar_folder, "arguments.tags[1:]", CALL)
    assert status == "ok" and "eval:differs-from-jmespath" in found
