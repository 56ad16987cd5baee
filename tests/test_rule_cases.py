"""Table-driven rule-language cases: tests/cases/*.yaml, in the style of the JMESPath compliance files.

Each case file is a YAML list of groups. A group holds either one inline `pack:` or a list of
`layers:` (packs installed in that order, organisation first), and the `cases:` to run against it:

    - description: what the group shows
      pack:                         # manifest fields (name and version are filled in if missing)
        default: deny               # optional: allow | deny | ask, default_reason, ...
        files:                      # file name -> content, in file order (becomes `files:`)
          rules.yaml:               # a mapping is dumped as YAML; a string is written as is
            lists: {...}
            rules: [...]
      cases:
        - call: {name: fs_write, arguments: {path: a.txt}, agent: bot, call_id: c1}
          decision: deny            # allow | deny | ask | invalid | error
          rule: deny-writes         # id of the deciding rule; `default` (or null) for a pack default
          reason: "..."             # exact reason (null: no reason)
          reason_contains: [...]    # substrings the reason must contain (a string or a list)
          stage: pre-execute        # the stage of the decision
          result: {value: ..., content: [...]}   # recorded result: post-execute is evaluated too
          post: rewritten           # accepted | rewritten | blocked
          value: {...}              # the canonical value after the rewrites
          content: [...]            # the content blocks after the rewrites
          feedback: "..."           # exact feedback of a block
          feedback_contains: [...]
          rewrites: [rule-a, rule-b]  # ids of the post-execute rules that rewrote or blocked, in order

Every field given is compared; fields left out are not checked. Values compare as JSON
(`true` is not `1`). A group whose pack fails to load fails every one of its cases, showing the
rendered problems.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from policyengine import PackLoadError, PolicyLayers, Registry, SourceKind, evaluate, thaw

CASES = Path(__file__).parent / "cases"

GROUP_KEYS = {"description", "pack", "layers", "cases", "comment"}
CASE_KEYS = {
    "call",
    "description",
    "comment",
    "decision",
    "rule",
    "reason",
    "reason_contains",
    "stage",
    "result",
    "post",
    "value",
    "content",
    "feedback",
    "feedback_contains",
    "rewrites",
}
CALL_KEYS = {"name", "arguments", "agent", "call_id"}
CHECKED = CASE_KEYS - {"call", "description", "comment", "result"}


def _case_files() -> list[Path]:
    return sorted(CASES.glob("*.yaml"))


_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: read at collection


@functools.cache
def _read(path: Path) -> list[dict[str, Any]]:
    groups = yaml.load(path.read_text("utf-8"), Loader=_SAFE_LOADER)
    assert isinstance(groups, list) and groups, f"{path.name}: a case file is a non-empty list of groups"
    return groups


def _params() -> Iterator[Any]:
    for path in _case_files():
        try:
            groups = _read(path)
        except (yaml.YAMLError, AssertionError):  # reported by the test itself, not at collection
            yield pytest.param(path.name, -1, -1, id=f"{path.name}: the case file loads")
            continue
        for gi, group in enumerate(groups):
            for ci, case in enumerate(group.get("cases") or [None]):
                label = str(group.get("description", ""))
                if isinstance(case, dict) and case.get("description"):
                    label += f" / {case['description']}"
                yield pytest.param(path.name, gi, ci, id=f"{path.name}:{gi}:{ci} {label}")


def _write_pack(folder: Path, spec: dict[str, Any], default_name: str) -> None:
    folder.mkdir(parents=True)
    manifest = {k: v for k, v in spec.items() if k != "files"}
    manifest.setdefault("name", default_name)
    manifest.setdefault("version", "1.0.0")
    files = spec.get("files") or {}
    assert isinstance(files, dict) and files, "an inline pack needs `files:` (file name -> content)"
    manifest["files"] = list(files)
    (folder / "pack.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True), "utf-8")
    for name, content in files.items():
        text = content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False, allow_unicode=True)
        (folder / name).write_text(text, "utf-8")


def _install(group: dict[str, Any], root: Path) -> Registry:
    """Write the group's pack(s) under root and install them, in order, on a fresh registry."""
    if "layers" in group:
        assert "pack" not in group, "a group has either `pack:` or `layers:`, not both"
        specs = group["layers"]
    else:
        specs = [group["pack"]]
    folders = []
    for i, spec in enumerate(specs):
        folder = root / f"layer{i}"
        _write_pack(folder, spec, f"layer-{i}" if "layers" in group else "case-pack")
        folders.append(folder)
    registry = Registry()
    try:
        PolicyLayers.install(registry, folders)
    except PackLoadError as error:
        pytest.fail(f"the group's pack did not load:\n{error.render()}", pytrace=False)
    return registry


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: booleans are not numbers, 1 equals 1.0, containers compare deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _deciding_rule(evaluation: Any) -> str | None:
    source = evaluation.source
    if source is None:
        return None
    return "default" if source.kind is SourceKind.DEFAULT else source.name


def check_case(evaluation: Any, case: dict[str, Any]) -> list[str]:
    """Every mismatch between an Evaluation and the expected fields of a case."""
    wrong: list[str] = []

    def expect(field: str, actual: Any, wanted: Any) -> None:
        if not same_json(actual, wanted):
            wrong.append(f"{field}: expected {wanted!r}, got {actual!r}")

    if "decision" in case:
        expect("decision", evaluation.decision.value, case["decision"])
    if "rule" in case:
        wanted = case["rule"]
        actual = _deciding_rule(evaluation)
        ok = actual in (None, "default") if wanted is None else actual == wanted
        if not ok:
            wrong.append(f"rule: expected {wanted!r}, got {actual!r} (source {evaluation.source})")
    if "stage" in case:
        expect("stage", evaluation.stage.value if evaluation.stage else None, case["stage"])
    if "reason" in case:
        expect("reason", evaluation.reason, case["reason"])
    for part in _as_list(case.get("reason_contains", [])):
        if part not in (evaluation.reason or ""):
            wrong.append(f"reason: expected to contain {part!r}, got {evaluation.reason!r}")
    if "post" in case:
        expect("post", evaluation.post.value if evaluation.post else None, case["post"])
    if "value" in case:
        expect("value", thaw(evaluation.value), case["value"])
    if "content" in case:
        expect("content", thaw(evaluation.content), case["content"])
    if "feedback" in case:
        expect("feedback", evaluation.feedback, case["feedback"])
    for part in _as_list(case.get("feedback_contains", [])):
        if part not in (evaluation.feedback or ""):
            wrong.append(f"feedback: expected to contain {part!r}, got {evaluation.feedback!r}")
    if "rewrites" in case:
        expect("rewrites", [s.name for s in evaluation.rewrites], case["rewrites"])
    return wrong


@pytest.fixture(scope="module")
def group_registry(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The registry of a group, installed once per group (evaluate() never changes it)."""
    cache: dict[tuple[str, int], Registry] = {}

    def get(file: str, group_index: int) -> Registry:
        key = (file, group_index)
        if key not in cache:
            root = tmp_path_factory.mktemp(f"{Path(file).stem}-{group_index}")
            cache[key] = _install(_read(CASES / file)[group_index], root)
        return cache[key]

    return get


@pytest.mark.parametrize(("file", "group_index", "case_index"), list(_params()))
def test_rule_case(file: str, group_index: int, case_index: int, group_registry: Any) -> None:
    groups = _read(CASES / file)  # raises, with the YAML error, for a case file that does not load
    group = groups[group_index]
    unknown = set(group) - GROUP_KEYS
    assert not unknown, f"unknown group keys {sorted(unknown)}"
    assert group.get("cases"), "a group needs at least one case"
    case = group["cases"][case_index]
    unknown = set(case) - CASE_KEYS
    assert not unknown, f"unknown case keys {sorted(unknown)} (known: {sorted(CASE_KEYS)})"
    assert set(case) & CHECKED, "a case must check at least one field"
    call = case["call"]
    assert set(call) <= CALL_KEYS and "name" in call, f"bad call {call!r}"
    registry = group_registry(file, group_index)
    evaluation = asyncio.run(
        evaluate(
            registry,
            call["name"],
            call.get("arguments", {}),
            agent=call.get("agent", "agent"),
            call_id=call.get("call_id"),
            result=case.get("result"),
        )
    )
    wrong = check_case(evaluation, case)
    assert not wrong, "\n".join(wrong) + f"\n\nfull evaluation: {evaluation}"


# -- the runner itself must be able to fail ------------------------------------------------------


def test_corpus_is_large_enough() -> None:
    files = _case_files()
    groups = [g for f in files for g in _read(f)]
    cases = [c for g in groups for c in g["cases"]]
    assert len(files) >= 5 and len(cases) >= 150, (len(files), len(groups), len(cases))


def test_same_json_is_strict() -> None:
    assert same_json({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not same_json(True, 1)
    assert not same_json([1], [1, 1])
    assert not same_json({"a": None}, {})
    assert not same_json("1", 1)


def test_check_case_reports_every_mismatch(tmp_path: Path) -> None:
    group = {
        "pack": {
            "files": {
                "rules.yaml": {
                    "rules": [
                        {"id": "no-x", "stage": "pre-execute", "tools": ["x"], "decision": "deny", "reason": "no"}
                    ]
                }
            }
        }
    }
    registry = _install(group, tmp_path)
    evaluation = asyncio.run(evaluate(registry, "x", {}))
    assert check_case(evaluation, {"decision": "deny", "rule": "no-x", "reason": "no", "stage": "pre-execute"}) == []
    wrong = check_case(evaluation, {"decision": "allow", "rule": "other", "reason": "yes", "stage": "guard"})
    assert len(wrong) == 4
    assert check_case(evaluation, {"rule": None}) != []
