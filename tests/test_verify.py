"""`policyengine verify`: a property's counterexample is found by the search and decided by the real engine."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policyengine.cli.common import install_layers
from policyengine.cli.main import main
from policyengine.values.problems import PackLoadError
from policyengine.verify import Outcome, SearchBudget, load_properties, verify
from support import rules_pack

ROOT = Path(__file__).resolve().parent.parent

CATALOG = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
    {
        "name": "fetch_url",
        "description": "Fetch a URL.",
        "parameters": {
            "type": "object",
            "properties": {"url": {"type": "string"}, "retries": {"type": "integer"}},
            "required": ["url"],
        },
    },
]
RED_LINE_ENV: dict[str, Any] = {
    "id": "no-env-files",
    "stage": "guard",
    "tools": ["*"],
    "decision": "deny",
    "reason": "no .env",
    "when": "paths(@)[?path_matches(@, '**/.env')] | length(@) > `0`",
}
SYSTEM_RED_LINE: dict[str, Any] = {
    "id": "no-system",
    "stage": "guard",
    "tools": ["*"],
    "decision": "deny",
    "reason": "no",
    "when": "paths(@)[?path_within(@, ['/etc', '/usr'])] | length(@) > `0`",
}
PROPERTY_ENV: dict[str, Any] = {
    "id": "env-never-allowed",
    "never": ["allow", "ask"],
    "tools": ["read_file"],
    "when": "paths(@)[?path_matches(@, '**/.env')] | length(@) > `0`",
}


def _pack(tmp_path: Path, rules: list[dict[str, Any]], **manifest: Any) -> Path:
    folder = rules_pack(tmp_path, "p", rules, catalog="tools.jsonl", **manifest)
    (folder / "tools.jsonl").write_text("".join(json.dumps(t) + "\n" for t in CATALOG), encoding="utf-8")
    return folder


def _properties(tmp_path: Path, *props: dict[str, Any], name: str = "properties.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"properties": list(props)}, sort_keys=False), encoding="utf-8")
    return path


def _bfcl_with(tmp_path: Path, file: str, old: str, new: str) -> Path:
    """A copy of the shipped bfcl pack with `old` (found once in `file`) written as `new`: a planted change."""
    import shutil

    copy = tmp_path / "bfcl-changed"
    shutil.copytree(ROOT / "policies" / "bfcl", copy)
    text = (copy / file).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{file} no longer holds {old!r} once"
    (copy / file).write_text(text.replace(old, new), encoding="utf-8")
    return copy


def _verify(pack: Path, props: Path, **budget: Any) -> list[Any]:
    layers, _ = install_layers([pack])
    lists = {k: v for p in layers.packs for k, v in p.lists.items()}
    return verify(layers, load_properties([props], lists), SearchBudget(**budget))


def test_a_red_line_with_the_propertys_condition_proves_it_and_the_search_still_runs(tmp_path: Path) -> None:
    [result] = _verify(_pack(tmp_path, [RED_LINE_ENV]), _properties(tmp_path, PROPERTY_ENV), calls=3_000)
    assert result.outcome is Outcome.PROVED and result.proved_by == "no-env-files"
    assert result.picked > 20  # `.env` and its spellings reached the red line


def test_an_allow_rule_before_a_pre_execute_deny_is_found_with_a_counterexample(tmp_path: Path) -> None:
    # The planted weakness: a final allow for reads, written above the deny of .env files.
    rules = [
        {"id": "reads-are-fine", "stage": "pre-execute", "tools": ["read_*"], "decision": "allow", "final": True},
        {**RED_LINE_ENV, "id": "deny-env", "stage": "pre-execute"},
    ]
    started = time.monotonic()
    [result] = _verify(_pack(tmp_path, rules), _properties(tmp_path, PROPERTY_ENV))
    assert result.outcome is Outcome.COUNTEREXAMPLE and time.monotonic() - started < 10
    assert result.tool == "read_file" and result.decision == "allow" and result.rule == "reads-are-fine"
    assert ".env" in result.arguments["path"].lower()


def test_a_condition_that_misses_an_upper_case_spelling_is_found(tmp_path: Path) -> None:
    # The planted weakness: the red line reads the path with a case-sensitive regex; the property with the
    # engine's path test (which folds case as the red lines do) picks `.ENV`, and the search spells it so.
    weak = {**RED_LINE_ENV, "when": "regex_match(arguments.path, '(^|/)\\.env$')"}
    started = time.monotonic()
    [result] = _verify(_pack(tmp_path, [weak]), _properties(tmp_path, PROPERTY_ENV))
    assert result.outcome is Outcome.COUNTEREXAMPLE and time.monotonic() - started < 10
    assert result.decision == "allow" and result.arguments["path"] != result.arguments["path"].lower()


def test_a_secret_inside_a_folder_named_like_an_exempt_template_is_found(tmp_path: Path) -> None:
    # The weakness the claude-code pack had: a whole-path "surely a template" test exempts what lies
    # inside a folder named `.env.example` (gitignore's reading of a folder). The search writes the
    # property's target inside each exemption's entries and finds it.
    exempting = {
        **RED_LINE_ENV,
        "when": "paths(@)[?path_matches(@, '**/.env') && !path_surely_matches(@, lists.templates)] | length(@) > `0`",
    }
    pack = _pack(tmp_path, [exempting], lists={"templates": [".env.example", ".env.sample"]})
    started = time.monotonic()
    [result] = _verify(pack, _properties(tmp_path, PROPERTY_ENV))
    assert result.outcome is Outcome.COUNTEREXAMPLE and time.monotonic() - started < 10
    assert result.decision == "allow" and result.arguments["path"] in (".env.example/.env", ".env.sample/.env")


def test_a_property_no_call_reaches_is_reported_not_exercised(tmp_path: Path) -> None:
    never_true = {**PROPERTY_ENV, "id": "unreachable", "when": "`false`"}
    [result] = _verify(_pack(tmp_path, [RED_LINE_ENV]), _properties(tmp_path, never_true), calls=500)
    assert result.outcome is Outcome.NOT_EXERCISED and result.picked == 0 and result.tried == 500


def test_always_is_broken_by_a_call_decided_otherwise(tmp_path: Path) -> None:
    prop = {"id": "env-always-denied", "always": ["deny"], "tools": ["read_file"], "when": PROPERTY_ENV["when"]}
    [holds] = _verify(_pack(tmp_path / "a", [RED_LINE_ENV]), _properties(tmp_path, prop), calls=2_000)
    assert holds.outcome is Outcome.PROVED
    [broken] = _verify(_pack(tmp_path / "b", []), _properties(tmp_path, prop, name="b.yaml"), calls=2_000)
    assert broken.outcome is Outcome.COUNTEREXAMPLE and broken.decision == "allow"


def test_the_search_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    pack, props = _pack(tmp_path, []), _properties(tmp_path, {**PROPERTY_ENV, "tools": ["fetch_url"], "when": None})
    runs = [_verify(pack, props, calls=300, seed=7)[0] for _ in range(2)]
    assert runs[0].arguments == runs[1].arguments and runs[0].tried == runs[1].tried
    assert runs[0].outcome is Outcome.COUNTEREXAMPLE  # no rule: the first call of fetch_url is allowed


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ([{"id": "a", "tools": ["read_file"]}], "exactly one of `never` and `always`"),
        ([{"id": "a", "never": ["allowed"], "tools": ["read_file"]}], "decisions are a list of"),
        ([{"id": "a", "never": ["allow"], "tools": ["@nope"]}], "unknown list 'nope'"),
        ([{"id": "a", "never": ["allow"], "tools": ["read_file"], "when": "paths(@"}], "PE301"),
        ([{"id": "a", "never": ["allow"], "tools": ["x"], "whne": "true"}], "unknown key 'whne'"),
        (
            [{"id": "a", "never": ["allow"], "tools": ["x"]}, {"id": "a", "never": ["allow"], "tools": ["x"]}],
            "duplicate property id 'a'",
        ),
    ],
)
def test_a_bad_property_file_is_refused_with_every_problem_located(
    tmp_path: Path, props: list[dict[str, Any]], message: str
) -> None:
    path = _properties(tmp_path, *props)
    with pytest.raises(PackLoadError) as raised:
        load_properties([path], {})
    text = str(raised.value)
    assert message in text and f"{path}:" in text


def test_the_verb_exits_1_with_the_counterexample_and_0_when_none_is_found(tmp_path: Path) -> None:
    weak = _pack(tmp_path / "weak", [{**RED_LINE_ENV, "when": "regex_match(arguments.path, '(^|/)\\.env$')"}])
    strong = _pack(tmp_path / "strong", [RED_LINE_ENV])
    props = _properties(tmp_path, PROPERTY_ENV)
    out, err = io.StringIO(), io.StringIO()
    assert main(["verify", "--pack", str(weak), str(props)], out=out, err=err) == 1
    assert "COUNTEREXAMPLE  env-never-allowed" in out.getvalue() and "proved only where" in out.getvalue()
    out = io.StringIO()
    assert main(["verify", "--pack", str(strong), str(props), "--calls", "2000", "--format", "json"], out=out) == 0
    [result] = json.loads(out.getvalue())["results"]
    assert result["outcome"] == "proved" and result["proved_by"] == "no-env-files" and result["picked"] > 0


def test_without_a_catalog_calls_use_common_argument_names_decided_as_the_hook_decides(tmp_path: Path) -> None:
    pack = rules_pack(tmp_path, "p", [])  # no rule, no catalog: a read of .env is allowed
    out = io.StringIO()
    assert (
        main(["verify", "--pack", str(pack), str(_properties(tmp_path, PROPERTY_ENV)), "--format", "json"], out=out)
        == 1
    )
    [result] = json.loads(out.getvalue())["results"]
    assert result["outcome"] == "counterexample" and result["counterexample"]["decision"] == "allow"
    assert set(result["counterexample"]["arguments"]) <= {"path", "command", "url", "file_path"}


@pytest.mark.parametrize("pack", ["claude-code", "baseline"])
def test_the_shipped_properties_without_a_catalog_state_every_red_line_and_none_breaks(pack: str) -> None:
    # Properties that pin values are proved by their red line specialised to each tool; those over a
    # whole class are searched, with the part of the red line the proof could not reach reported.
    out = io.StringIO()
    assert main(["verify", "--pack", pack, "--calls", "1500", "--recheck", "100", "--format", "json"], out=out) == 0
    document = json.loads(out.getvalue())
    results = document["results"]
    assert {r["outcome"] for r in results} <= {"proved", "not proven"}
    assert all(r["picked"] > 0 for r in results if r["outcome"] == "not proven")  # a search that tested something
    assert document["unstated"] == []  # every red line is stated or explained
    assert document["explained"][0]["red_line"] == "no-seen-secrets-sent"
    proved = [r for r in results if r["outcome"] == "proved"]
    # claude-code: every property proved (pinned values and the two classes); baseline: all but the
    # property of its pre-execute .env deny, which is no red line (searched only).
    assert len(proved) == len(results) - (pack == "baseline")
    assert all(r["not_shown"] for r in results if r["outcome"] == "not proven")
    # Each proof checked again on random calls around its literals: picked ones, none broke it.
    assert all(r["recheck"]["picked"] > 0 and "failure" not in r["recheck"] for r in proved)


def test_recheck_reports_a_proof_the_rules_got_wrong(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A planted mistake in the proof rules (any larger list implies any other): the property is
    # "proved" by a red line that does not cover it, and the recheck's random calls show the failure.
    import policyengine.verify._implication as implication

    monkeypatch.setattr(implication, "_among", lambda p, q: p.get("value") == q.get("value"))
    red_line = {**SYSTEM_RED_LINE, "when": "paths(@)[?path_matches(@, ['/etc/**'])] | length(@) > `0`"}
    prop = {
        "id": "home-never-read",
        "never": ["allow"],
        "tools": ["read_file"],
        "when": "paths(@)[?path_matches(@, ['/home/**'])] | length(@) > `0`",
    }
    out = io.StringIO()
    pack = _pack(tmp_path, [red_line])
    props = _properties(tmp_path, prop)
    # One call searched (a probe the property does not pick): the search alone would not see it.
    assert main(["verify", "--pack", str(pack), str(props), "--calls", "1", "--recheck", "500"], out=out) == 1
    assert "PROOF FAILED    home-never-read: read_file" in out.getvalue()


def test_a_red_line_no_property_states_fails_verify(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "baseline"
    shutil.copytree(ROOT / "policies" / "baseline", copy)
    text = (copy / "properties" / "red-lines.yaml").read_text(encoding="utf-8")
    (copy / "properties" / "red-lines.yaml").write_text(
        text.replace("    red_line: no-secret-files-listed\n", ""), encoding="utf-8"
    )
    out = io.StringIO()
    assert main(["verify", "--pack", str(copy), "--calls", "200"], out=out) == 1
    assert "NOT STATED      red line no-secret-files-listed" in out.getvalue()


# -- the shipped packs -----------------------------------------------------------------------------


def test_a_system_folder_dropped_from_bfcls_red_line_is_found_under_10_s(tmp_path: Path) -> None:
    # The planted weakness: /etc taken out of the list the system-path red line reads.
    copy = _bfcl_with(tmp_path, "lists.yaml", "  system_dirs: [/etc, /usr,", "  system_dirs: [/usr,")
    layers, _ = install_layers([copy])
    lists = {k: v for p in layers.packs for k, v in p.lists.items()}
    props = load_properties([copy / "properties" / "red-lines.yaml"], lists)
    started = time.monotonic()
    result = verify(layers, [props[0]], SearchBudget())[0]
    assert result.outcome is Outcome.COUNTEREXAMPLE and time.monotonic() - started < 10
    assert result.decision in ("allow", "ask") and "/etc" in json.dumps(result.arguments).lower()


def test_the_verb_reads_each_packs_properties_folder_and_finds_a_removed_red_line(tmp_path: Path) -> None:
    # The planted weakness: bfcl's red line on credentials in posts aimed at no tool.
    aimed = 'tools: ["@posting_tools", "tag:open-world"]'
    copy = _bfcl_with(tmp_path, "red-lines.yaml", aimed, 'tools: ["no_such_tool"]')
    out = io.StringIO()
    started = time.monotonic()
    assert main(["verify", "--pack", str(copy), "--calls", "3000", "--format", "json"], out=out) == 1
    assert time.monotonic() - started < 30  # two properties, 10 s each at most
    outcomes = {r["id"]: r for r in json.loads(out.getvalue())["results"]}
    assert outcomes["system-paths-never-reached"]["outcome"] == "proved"
    found = outcomes["credentials-never-posted"]
    assert found["outcome"] == "counterexample" and found["counterexample"]["decision"] in ("allow", "ask")


def test_the_verb_says_so_when_there_is_no_property_file(tmp_path: Path) -> None:
    err = io.StringIO()
    assert main(["verify", "--pack", str(_pack(tmp_path, [RED_LINE_ENV]))], err=err) == 2
    assert "no property files" in err.getvalue() and "properties/" in err.getvalue()


def test_every_file_of_the_shipped_packs_matches_the_wheels_package_data() -> None:
    # The wheel ships policies/ as policyengine.shipped_packs by these globs: a file none matches (a
    # properties/ folder, say) would be missing from `policyengine verify --pack bfcl` once installed.
    import fnmatch
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["policyengine.shipped_packs"]
    policies = ROOT / "policies"
    files = [p.relative_to(policies).as_posix() for p in policies.rglob("*") if p.is_file()]
    assert any(f.endswith("properties/red-lines.yaml") for f in files)
    unshipped = [f for f in files if not any(fnmatch.fnmatchcase(f, g) and f.count("/") == g.count("/") for g in globs)]
    assert unshipped == []


# -- diff --semantic ---------------------------------------------------------------------------------


def _loosened_bfcl(tmp_path: Path) -> Path:
    """A copy of bfcl whose transfer limit is 50,000 instead of 10,000 (one rule loosened)."""
    limit = "amounts(@)[?@ >= `10000`] | length(@) > `0`"
    return _bfcl_with(tmp_path, "gate.yaml", limit, limit.replace("10000", "50000"))


def test_diff_semantic_reports_exactly_the_loosened_rules_class(tmp_path: Path) -> None:
    out = io.StringIO()
    argv = ["diff", "--semantic", str(ROOT / "policies" / "bfcl"), str(_loosened_bfcl(tmp_path))]
    assert main([*argv, "--calls", "6000", "--format", "json"], out=out) == 1  # weaker: the gate fails
    [found] = json.loads(out.getvalue())["classes"]
    assert found["weaker"] is True
    assert found["old"] == {"decision": "deny", "rule": "deny-transfers-over-limit"}
    assert found["new"] == {"decision": "ask", "rule": "ask-transfers"}
    assert 10_000 <= found["example"]["arguments"]["amount"] < 50_000


def test_diff_semantic_the_other_way_is_stricter_and_passes_the_weaker_gate(tmp_path: Path) -> None:
    out = io.StringIO()
    argv = ["diff", "--semantic", str(_loosened_bfcl(tmp_path)), str(ROOT / "policies" / "bfcl"), "--calls", "6000"]
    assert main(argv, out=out) == 0
    assert "stricter ask (ask-transfers) -> deny (deny-transfers-over-limit)" in out.getvalue()
    assert main([*argv, "--fail-on", "any"], out=io.StringIO()) == 1


def test_diff_without_semantic_points_at_dry_run_against(tmp_path: Path) -> None:
    err = io.StringIO()
    bfcl = str(ROOT / "policies" / "bfcl")
    assert main(["diff", bfcl, bfcl], err=err) == 2
    assert "--semantic" in err.getvalue() and "dry-run" in err.getvalue()


# -- proof by a red line -----------------------------------------------------------------------------


def test_the_shipped_bfcl_properties_are_proved_by_their_red_lines() -> None:
    layers, _ = install_layers([ROOT / "policies" / "bfcl"])
    lists = {k: v for p in layers.packs for k, v in p.lists.items()}
    props = load_properties([ROOT / "policies" / "bfcl" / "properties" / "red-lines.yaml"], lists)
    results = verify(layers, props, SearchBudget(calls=4_000))
    assert [(r.property.id, r.outcome, r.proved_by) for r in results] == [
        ("system-paths-never-reached", Outcome.PROVED, "fs-no-system-paths"),
        ("credentials-never-posted", Outcome.PROVED, "no-credentials-in-posts"),
        ("system-places-never-reached", Outcome.PROVED, "fs-no-system-places"),
        # fs-no-system-searches reads paths with a regex: evaluated on the one path the property pins.
        ("no-search-from-the-root", Outcome.PROVED, "fs-no-system-searches"),
    ]
    assert all(r.picked > 0 for r in results)


@pytest.mark.parametrize(
    ("guard", "prop", "why"),
    [
        ({"mode": "monitor"}, {}, "a red line in monitor mode denies nothing"),
        ({"tools": ["fetch_url"]}, {}, "the red line covers fewer tools than the property"),
        ({}, {"never": ["deny"]}, "the property forbids deny itself"),
        ({}, {"never": ["invalid"]}, "a red line does not keep calls valid"),
        ({}, {"when": "paths(@)[?path_within(@, ['/etc', '/home'])] | length(@) > `0`"}, "/home is outside"),
        ({}, {"when": "paths(@)[?path_within(@, ['etc'])] | length(@) > `0`"}, "a relative literal"),
        ({}, {"when": "!(paths(@)[?path_within(@, ['/etc'])] | length(@) > `0`)"}, "negation is not modelled"),
    ],
)
def test_a_property_is_not_proved_when_the_red_line_does_not_cover_it(
    tmp_path: Path, guard: dict[str, Any], prop: dict[str, Any], why: str
) -> None:
    red_line = SYSTEM_RED_LINE | guard
    stated = {
        "id": "p",
        "never": ["allow", "ask"],
        "tools": ["read_file"],
        "when": "paths(@)[?path_within(@, ['/etc'])] | length(@) > `0`",
    } | prop
    [result] = _verify(_pack(tmp_path, [red_line]), _properties(tmp_path, stated), calls=300)
    assert result.outcome is not Outcome.PROVED, why
    [baseline] = _verify(
        _pack(tmp_path / "b", [red_line | {"mode": "enforce"} if "mode" in guard else red_line]),
        _properties(tmp_path, stated | {"never": ["allow", "ask"]}, name="b.yaml"),
        calls=300,
    )
    if not ({"tools", "mode"} & set(guard)) and "when" not in prop:
        assert baseline.outcome is Outcome.PROVED  # the same pair, the difference taken away, is proved


_PATHS = ["/etc", "/etc/ssh", "/usr", "/usr/lib", "/home", "/home/u", "/var/log", "/tmp"]
_ATOMS = st.one_of(
    st.lists(st.sampled_from(_PATHS), min_size=1, max_size=3).map(lambda ps: f"path_within(@, {ps!r})"),
    st.sampled_from(["regex_match(@, 'ssh')", "regex_match(@, '^/u')", "path_matches(@, '**/*.log')"]),
    # Ruled out by a path_within premise when the trees are apart (or no entry lies within it).
    st.sampled_from(
        [
            "!path_surely_within(@, ['/var/log'])",
            "!path_surely_within(@, ['/etc/ssh'])",
            "!path_surely_within(@, ['/'])",
            "!contains(['/etc/passwd', '/dev/null'], @)",
            "!contains(['/dev/null'], @)",
        ]
    ),
)
_PREDICATES = st.recursive(
    _ATOMS,
    lambda inner: st.tuples(inner, st.sampled_from(["||", "&&"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    max_leaves=4,
)
_CONDITIONS = _PREDICATES.map(lambda p: f"paths(@)[?{p}] | length(@) > `0`") | _PREDICATES.map(
    lambda p: f"length(paths(@)[?{p}]) > `0`"
)


@settings(max_examples=150, deadline=None)
@given(premise=_CONDITIONS, conclusion=_CONDITIONS, data=st.data())
def test_every_implication_shown_holds_on_random_calls(premise: str, conclusion: str, data: st.DataObject) -> None:
    # Soundness: whenever the prover shows W => G, no call has W true and G false (calls of random paths).
    from policyengine.enforce.evaluate import call_for
    from policyengine.language.expressions import compile_expression
    from policyengine.runtime.registry import Registry
    from policyengine.values.frozen import freeze
    from policyengine.verify._implication import implies, normalised

    premise = premise.replace("'", '"').replace('"', "'")
    conclusion = conclusion.replace("'", '"').replace('"', "'")
    if not implies(normalised(premise, {}), normalised(conclusion, {})):
        return
    compiled = [compile_expression(text, {}, _fail) for text in (premise, conclusion)]
    assert compiled[0] is not None and compiled[1] is not None
    tails = st.sampled_from(
        ["", "/x", "/ssh/key", "/lib/a.so", "/a.log", "/../etc/passwd", "/.//u", "/passwd", "/*", "/../*"]
    )
    registry = Registry()
    for _ in range(20):
        paths = data.draw(st.lists(st.tuples(st.sampled_from([*_PATHS, "/opt", "/"]), tails), max_size=3))
        arguments = {f"path{i}": head + tail for i, (head, tail) in enumerate(paths)}
        document = call_for(registry, "read_file", freeze(arguments), "t", "c", "/workspace").document
        if compiled[0].test(document):
            assert compiled[1].test(document), (premise, conclusion, arguments)


_PINNED = ["/etc/passwd", "/tmp/x", "/home/u/.ssh/key", "/usr/lib/a.so", "/var/log/a.log"]
_GLOBS = ["**/*.log", "/etc/**", "**/key", "/usr/lib/*"]
_MORE_ATOMS = st.one_of(
    st.lists(st.sampled_from(_PINNED), min_size=1, max_size=3).map(lambda ps: f"contains({ps!r}, @)"),
    st.sampled_from(_PINNED).map(lambda v: f"@ == {v!r}"),
    st.lists(st.sampled_from(_GLOBS), min_size=1, max_size=3).map(lambda gs: f"path_matches(@, {gs!r})"),
    st.lists(st.sampled_from(_GLOBS), min_size=1, max_size=3).map(lambda gs: f"glob_match(@, {gs!r})"),
    st.sampled_from(
        [
            "!path_surely_matches(@, ['/tmp/**'])",
            "path_surely_within(@, ['/tmp', '/home'])",
            "!path_surely_within(@, ['/var'])",
            "regex_match(@, 'key$')",
        ]
    ),
)
_MORE_PREDICATES = st.recursive(
    _MORE_ATOMS,
    lambda inner: (
        st.tuples(inner, st.sampled_from(["||", "&&"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
        | inner.map(lambda x: f"!{x}" if x.startswith("(") else f"!({x})")
    ),  # negations pushed in (De Morgan)
    max_leaves=4,
)


@settings(max_examples=200, deadline=None)
@given(premise=_MORE_PREDICATES, conclusion=_MORE_PREDICATES, data=st.data())
def test_every_implication_shown_by_pinned_values_or_listed_entries_holds(
    premise: str, conclusion: str, data: st.DataObject
) -> None:
    # Soundness of the pinned-value and larger-list rules, over paths(@) items that remember how they
    # were written (a climb, `//`) - the surely tests read that, so a pinned text must not stand for them.
    from policyengine.enforce.evaluate import call_for
    from policyengine.language.expressions import compile_expression
    from policyengine.runtime.registry import Registry
    from policyengine.values.frozen import freeze
    from policyengine.verify._implication import implies, normalised

    premise_text = f"length(paths(@)[?{premise}]) > `0`"
    conclusion_text = f"length(paths(@)[?{conclusion}]) > `0`"
    if not implies(normalised(premise_text, {}), normalised(conclusion_text, {})):
        return
    compiled = [compile_expression(text, {}, _fail) for text in (premise_text, conclusion_text)]
    assert compiled[0] is not None and compiled[1] is not None
    # `{U}`: upper case, which paths(@) folds and remembers as written (the surely tests read that).
    spellings = st.sampled_from(["{}", "{U}", "/tmp/../{}", "{}/.", "/.{}", "{}/../{}"])
    registry = Registry()
    for _ in range(20):
        picked = data.draw(st.lists(st.tuples(st.sampled_from([*_PINNED, "/tmp/key", "/etc"]), spellings), max_size=2))
        arguments = {
            f"path{i}": form.replace("{}", value).replace("{U}", value.upper())
            for i, (value, form) in enumerate(picked)
        }
        document = call_for(registry, "read_file", freeze(arguments), "t", "c", "/workspace").document
        if compiled[0].test(document):
            assert compiled[1].test(document), (premise, conclusion, arguments)


_CHAINS = [
    "paths(@)[?{p}]",
    "paths(@)[?{p}] | [?{q}]",
    "[paths(@), strings(arguments)][] | [?{p}]",
    "(paths(@) || `[]`)[?{p}]",
    "paths(@)[:1][?{p}]",  # not item by item: the pinned path may be the second
    "paths(@)[*].normalize_path(@) | [?{p}]",
]


@settings(max_examples=200, deadline=None)
@given(
    pinned=st.lists(st.sampled_from(_PINNED), min_size=1, max_size=2),
    chain=st.sampled_from(_CHAINS),
    p=_MORE_ATOMS,
    q=_MORE_ATOMS,
    data=st.data(),
)
def test_a_pinned_item_carried_through_a_chain_of_list_steps_is_sound(
    pinned: list[str], chain: str, p: str, q: str, data: st.DataObject
) -> None:
    # `S[?contains(V, @)]` nonempty implies `CHAIN(S)` nonempty when the chain takes S's items one at a
    # time and CHAIN([v]) is nonempty for each v: checked on calls with the pinned path among others.
    from policyengine.enforce.evaluate import call_for
    from policyengine.language.expressions import compile_expression
    from policyengine.runtime.registry import Registry
    from policyengine.values.frozen import freeze
    from policyengine.verify._implication import implies, normalised

    premise_text = f"length(paths(@)[?contains({pinned!r}, @)]) > `0`"
    conclusion_text = f"length({chain.format(p=p, q=q)}) > `0`"
    if not implies(normalised(premise_text, {}), normalised(conclusion_text, {})):
        return
    assert not chain.startswith("paths(@)[:1]"), conclusion_text  # never shown: a slice is not item by item
    compiled = [compile_expression(text, {}, _fail) for text in (premise_text, conclusion_text)]
    assert compiled[0] is not None and compiled[1] is not None
    registry = Registry()
    for _ in range(10):
        # Other paths first (a slice would miss the pinned one), none surely within /tmp or /home (masking a miss).
        others = data.draw(st.lists(st.sampled_from(["/opt/x", "/etc", "/var/log/a"]), max_size=2))
        # Folded spellings: `/TMP/X` is `/tmp/x` to paths(@), remembered as written for the surely tests.
        value = data.draw(st.sampled_from(pinned))
        spelled = data.draw(st.sampled_from([value, value.upper(), value.title(), f"/tmp/..{value}", f"{value}/."]))
        arguments = {f"path{i}": value for i, value in enumerate([*others, spelled])}
        document = call_for(registry, "read_file", freeze(arguments), "t", "c", "/workspace").document
        assert compiled[0].test(document)
        assert compiled[1].test(document), (premise_text, conclusion_text, arguments)


def test_a_pinned_value_never_stands_for_a_path_under_an_asserted_surely_test() -> None:
    from policyengine.verify._implication import implies, normalised

    # `/tmp/x` surely lies in /tmp as text, but an item folded from `/tmp/../tmp/x`-like spellings may not.
    premise = normalised("length(paths(@)[?@ == '/tmp/x']) > `0`", {})
    assert not implies(premise, normalised("length(paths(@)[?path_surely_within(@, ['/tmp'])]) > `0`", {}))
    assert implies(premise, normalised("length(paths(@)[?!path_surely_within(@, ['/var'])]) > `0`", {}))
    assert implies(premise, normalised("length(paths(@)[?path_within(@, ['/tmp'])]) > `0`", {}))


def _fail(code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
    raise AssertionError(f"{code}: {message}")


# -- check: rules a red line always overturns (PE902) ----------------------------------------------


def test_check_warns_of_an_allow_rule_a_red_line_always_overturns(tmp_path: Path) -> None:
    dead = {
        "id": "allow-etc-reads",
        "stage": "pre-execute",
        "tools": ["read_file"],
        "decision": "allow",
        "when": "paths(@)[?path_within(@, ['/etc/ssh'])] | length(@) > `0`",
    }
    alive = dead | {"id": "allow-home-reads", "when": "paths(@)[?path_within(@, ['/home'])] | length(@) > `0`"}
    red_line = SYSTEM_RED_LINE
    pack = _pack(tmp_path, [dead, alive, red_line])
    out = io.StringIO()
    assert main(["check", str(pack), "--strict", "--format", "json"], out=out) == 1
    found = [p for p in json.loads(out.getvalue())["problems"] if p["code"] == "PE902"]
    assert [p["rule"] for p in found] == ["allow-etc-reads"]
    assert "red line 'no-system'" in found[0]["message"] and found[0]["line"] > 1
    monitored = _pack(tmp_path / "m", [dead, alive, red_line | {"mode": "monitor"}])
    out = io.StringIO()
    main(["check", str(monitored), "--format", "json"], out=out)
    assert not [p for p in json.loads(out.getvalue())["problems"] if p["code"] == "PE902"]  # it denies nothing


def test_check_warns_of_rules_whose_condition_never_holds(tmp_path: Path) -> None:
    # PE903: false from the condition's literals alone, for every tool the rule names.
    other_tool = {
        "id": "never-fires",
        "stage": "guard",
        "tools": ["read_file"],
        "decision": "deny",
        "when": "tool_matches(name, ['write_file']) && length(paths(@)) > `0`",
        "reason": "no",
    }
    empty_list = {
        "id": "never-applies",
        "stage": "pre-execute",
        "tools": ["*"],
        "decision": "ask",
        "when": "contains(`[]`, 'x') || !`true`",
        "reason": "no",
    }
    alive = other_tool | {"id": "fires-for-writes", "tools": ["read_file", "write_file"]}
    pack = _pack(tmp_path, [other_tool, empty_list, alive])
    out = io.StringIO()
    main(["check", str(pack), "--format", "json"], out=out)
    found = {p["rule"]: p["message"] for p in json.loads(out.getvalue())["problems"] if p["code"] == "PE903"}
    assert set(found) == {"never-fires", "never-applies"}
    assert found["never-fires"].startswith("red line never fires") and "of read_file" in found["never-fires"]
    assert found["never-applies"].startswith("rule never applies")


@pytest.mark.parametrize("pack", ["claude-code", "baseline", "bfcl"])
def test_the_shipped_packs_have_no_rule_that_never_applies(pack: str) -> None:
    out = io.StringIO()
    main(["check", pack, "--format", "json"], out=out)
    assert not [p for p in json.loads(out.getvalue())["problems"] if p["code"] in ("PE902", "PE903")]


def test_a_reported_condition_reads_back_as_the_same_expression() -> None:
    # The proof reports what it could not show as text: every shipped rule's condition, written by
    # text_of and parsed again, is the same tree (long literal lists are cut for reports: skipped).
    from policyengine.verify._implication import normalised, text_of

    checked = 0
    for pack in ("claude-code", "baseline", "bfcl"):
        layers, _ = install_layers([ROOT / "policies" / pack])
        for rule_id, when in ((r.id, r.when) for p in layers.packs for r in p.rules if r.when is not None):
            tree = normalised(when.text, {})
            text = text_of(tree)
            if "...`" in text:
                continue
            assert normalised(text, {}) == tree, (rule_id, text)
            checked += 1
    assert checked > 80


def test_a_negated_conjunction_is_read_as_either_negation_never_both() -> None:
    # De Morgan in the normaliser: `!(a && b)` is `!a || !b` - implied by `!a`, and implying neither.
    from policyengine.verify._implication import implies, normalised

    def nonempty(predicate: str) -> dict[str, Any]:
        return normalised(f"length(paths(@)[?{predicate}]) > `0`", {})

    either = nonempty("!(path_matches(@, ['/etc/**']) && regex_match(@, 'key$'))")
    assert implies(nonempty("!path_matches(@, ['/etc/**'])"), either)
    assert implies(nonempty("!regex_match(@, 'key$')"), either)
    assert not implies(either, nonempty("!path_matches(@, ['/etc/**'])"))  # /etc/passwd: a true, b false
    assert implies(
        nonempty("!(path_matches(@, ['/etc/**']) || regex_match(@, 'key$'))"), nonempty("!regex_match(@, 'key$')")
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, True), (0.0, True), ("0", True), (False, False), (None, False), ("", False), ([], False), ({}, False)],
)
def test_the_proofs_read_truth_as_jmespath_does(value: Any, expected: bool) -> None:
    # `0 && x` is x in JMESPath: a zero folded as false would report a rule that applies as one that never does.
    from policyengine.verify._implication import truthy

    assert truthy(value) is expected
