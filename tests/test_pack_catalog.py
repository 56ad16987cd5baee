"""`catalog:` in a manifest: a located path outside the digest, the verbs' default catalog (union of layers)."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from policyengine import PackLoadError
from policyengine.cli.common import install_layers
from policyengine.cli.main import main
from policyengine.packs.loader import MANIFEST, catalog_for, digest_of, load_pack, load_packs
from policyengine.packs.yaml_source import load_yaml_file
from policyengine.testing.runner import discover, run_tests
from policyengine.tools.catalog import CatalogError
from policyengine.values.problems import ProblemSink
from support import write_pack

ROOT = Path(__file__).resolve().parents[1]
BFCL = ROOT / "policies" / "bfcl"
BASELINE = ROOT / "policies" / "baseline"
TOOLS = ROOT / "examples" / "bfcl-tools.jsonl"

RULES = {
    "rules": [
        {"id": "ask-orders", "stage": "pre-execute", "tools": ["place_order"], "decision": "ask"},
    ]
}


def cli(*argv: str | os.PathLike[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def tool_line(name: str, **properties: str) -> str:
    """A BFCL-shaped definition: required parameters of the given types."""
    return json.dumps(
        {
            "name": name,
            "description": f"the {name} tool",
            "parameters": {
                "type": "dict",
                "properties": {key: {"type": kind} for key, kind in properties.items()},
                "required": list(properties),
            },
        }
    )


def catalog_pack(root: Path, name: str, lines: list[str], *, rules: dict[str, Any] | None = None) -> Path:
    """A pack whose folder holds `tools.jsonl` (the given definitions) named by `catalog:`."""
    folder = write_pack(root, name, {f"{name}.yaml": rules or RULES}, catalog="tools.jsonl")
    (folder / "tools.jsonl").write_text("".join(line + "\n" for line in lines), "utf-8")
    return folder


def at(folder: Path, token: str) -> tuple[int, int]:
    """1-based (line, column) of the first `token` in the manifest."""
    for number, line in enumerate((folder / MANIFEST).read_text("utf-8").splitlines(), 1):
        if token in line:
            return number, line.index(token) + 1
    raise AssertionError(token)


# -- the manifest key ------------------------------------------------------------------------------


def test_the_shipped_bfcl_pack_declares_its_catalog_a_verbatim_copy_of_the_example() -> None:
    pack = load_pack(BFCL)
    assert pack.catalog == BFCL / "tools.jsonl"
    assert pack.catalog.read_bytes() == TOOLS.read_bytes()
    assert (BFCL / "NOTICE.md").is_file()  # where the copy comes from, and its licence
    assert load_pack(BASELINE).catalog is None


def test_the_catalog_is_not_part_of_the_digest(tmp_path: Path) -> None:
    copy = tmp_path / "bfcl"
    shutil.copytree(BFCL, copy)
    manifest = copy / MANIFEST
    manifest.write_text(manifest.read_text("utf-8").replace("catalog: tools.jsonl\n", ""), "utf-8")
    without = load_pack(copy)
    assert without.catalog is None
    assert without.digest == load_pack(BFCL).digest
    # A pack without `catalog:` hashes its whole manifest, exactly as before the key existed.
    assert without.digest == digest_of(_data(manifest), [(name, _data(copy / name)) for name in without.files])


def _data(path: Path) -> Any:
    doc = load_yaml_file(path, ProblemSink(), filename=str(path))
    assert doc is not None
    return doc.data


@pytest.mark.parametrize(
    ("catalog", "message", "hint"),
    [
        ("missing.jsonl", "tool catalog missing.jsonl not found in", "relative to the pack folder"),
        ("../outside.jsonl", "tool catalog ../outside.jsonl is outside the pack folder", "copy the catalog into"),
        ("tools", "tool catalog tools not found in", "relative to the pack folder"),  # a folder, not a file
    ],
)
def test_a_catalog_that_cannot_be_used_is_a_located_load_problem(
    tmp_path: Path, catalog: str, message: str, hint: str
) -> None:
    (tmp_path / "outside.jsonl").write_text(tool_line("x") + "\n", "utf-8")
    folder = write_pack(tmp_path, "p", {"p.yaml": RULES}, catalog=catalog)
    (folder / "tools").mkdir()
    with pytest.raises(PackLoadError) as raised:
        load_pack(folder)
    (problem,) = raised.value.problems
    assert problem.code == "PE403"
    assert message in problem.message
    assert problem.hint is not None and hint in problem.hint
    assert problem.location is not None
    assert (problem.location.file, problem.location.line, problem.location.column) == (
        str(folder / MANIFEST),
        *at(folder, catalog),
    )
    # The CLI renders it like any load problem: exit 2, file:line:column, caret.
    code, _out, err = cli("check", folder)
    assert code == 2 and f"{folder / MANIFEST}:{at(folder, catalog)[0]}:" in err and "PE403" in err


def test_an_unreadable_catalog_is_a_located_load_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = catalog_pack(tmp_path, "p", [tool_line("x")])
    real_open = Path.open

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == "tools.jsonl":  # as a file mode would, for a user it binds (not root)
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(PackLoadError) as raised:
        load_pack(folder)
    (problem,) = raised.value.problems
    assert problem.code == "PE403" and "tools.jsonl cannot be read: Permission denied" in problem.message
    assert problem.location is not None and problem.location.line == at(folder, "catalog:")[0]


def test_an_absolute_catalog_path_is_a_schema_problem(tmp_path: Path) -> None:
    folder = write_pack(tmp_path, "p", {"p.yaml": RULES}, catalog=str(TOOLS))
    with pytest.raises(PackLoadError) as raised:
        load_pack(folder)
    (problem,) = raised.value.problems
    assert problem.code == "PE201" and problem.message.startswith("catalog:")
    assert problem.location is not None and problem.location.line == at(folder, "catalog:")[0]


def test_a_broken_catalog_file_fails_the_verbs_that_read_it_with_its_own_location(tmp_path: Path) -> None:
    folder = catalog_pack(tmp_path, "p", [tool_line("place_order", price="float"), "{not json"])
    load_pack(folder)  # loading only checks that the file is there and readable
    code, _out, err = cli("check", folder)
    assert code == 2
    assert f"{folder / 'tools.jsonl'}:2:" in err and "PE702" in err


# -- the union over layers ---------------------------------------------------------------------------


def test_layers_catalogs_are_merged_and_identical_copies_do_not_clash(tmp_path: Path) -> None:
    org = catalog_pack(tmp_path, "org", [tool_line("place_order", price="float"), tool_line("cd", folder="string")])
    project = catalog_pack(
        tmp_path,
        "project",
        [tool_line("cd", folder="string"), tool_line("ls")],
        rules={"rules": [{"id": "ask-ls", "stage": "pre-execute", "tools": ["ls"], "decision": "ask"}]},
    )
    plain = write_pack(
        tmp_path,
        "plain",
        {"plain.yaml": {"rules": [{"id": "deny-rm", "stage": "pre-execute", "tools": ["rm"], "decision": "deny"}]}},
    )
    catalog = catalog_for(load_packs([org, plain, project]))
    assert catalog is not None and sorted(catalog) == ["cd", "ls", "place_order"]
    assert catalog_for(load_packs([plain])) is None
    # --tools replaces every layer's catalog.
    override = catalog_for(load_packs([org, project]), TOOLS)
    assert override is not None and "ls" in override and len(override) == 129


def test_a_tool_two_catalogs_define_differently_is_a_clear_error(tmp_path: Path) -> None:
    org = catalog_pack(tmp_path, "org", [tool_line("place_order", price="float")])
    project = catalog_pack(
        tmp_path,
        "project",
        [tool_line("place_order", price="string")],
        rules={"rules": [{"id": "deny-orders", "stage": "pre-execute", "tools": ["place_order"], "decision": "deny"}]},
    )
    with pytest.raises(CatalogError) as raised:
        catalog_for(load_packs([org, project]))
    (problem,) = raised.value.problems
    assert problem.code == "PE703"
    assert "pack org" in problem.message and "pack project" in problem.message and "'place_order'" in problem.message
    assert problem.location is not None
    assert (problem.location.file, problem.location.line) == (str(project / MANIFEST), at(project, "tools.jsonl")[0])
    assert problem.hint is not None and "--tools" in problem.hint
    code, _out, err = cli("check", org, project)
    assert code == 2 and "PE703" in err
    # One catalog for every layer settles it.
    assert cli("check", org, project, "--tools", org / "tools.jsonl")[0] == 0


# -- the verbs use it without flags ------------------------------------------------------------------


def test_check_uses_the_pack_catalog_and_tools_overrides_it(tmp_path: Path) -> None:
    typo = {"rules": [{"id": "ask-orders", "stage": "pre-execute", "tools": ["place_ordr"], "decision": "ask"}]}
    folder = catalog_pack(tmp_path, "p", [tool_line("place_order", price="float")], rules=typo)
    code, out, _err = cli("check", folder, "--format", "json")
    data = json.loads(out)
    assert code == 0 and [p["code"] for p in data["problems"]] == ["PE606"]
    assert "did you mean 'place_order'" in data["problems"][0]["hint"]
    assert data["packs"][0]["catalog"] == str(folder / "tools.jsonl")
    assert cli("check", folder, "--strict")[0] == 1
    other = tmp_path / "other.jsonl"
    other.write_text(tool_line("place_ordr") + "\n", "utf-8")
    assert cli("check", folder, "--strict", "--tools", other)[0] == 0


def test_explain_validates_arguments_against_the_pack_catalog() -> None:
    call = json.dumps({"name": "fund_account", "arguments": {"amount": "50000"}})
    code, out, _err = cli("explain", "--pack", BFCL, call, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert (data["decision"], data["stage"]) == ("invalid", "validation")
    assert "amount" in data["reason"]


def test_explain_calls_a_tool_the_catalog_lacks_invalid_at_lookup_and_without_a_catalog_evaluates_it() -> None:
    call = json.dumps({"name": "make_transaction", "arguments": {"amount": 5}})
    code, out, _err = cli("explain", "--pack", BFCL, call, "--format", "json")
    assert code == 0 and (json.loads(out)["decision"], json.loads(out)["stage"]) == ("invalid", "lookup")
    code, out, _err = cli("explain", "--pack", BASELINE, call, "--format", "json")  # no catalog: rules decide
    assert code == 0 and json.loads(out)["decision"] != "invalid"


INVALID_TESTS = """\
tests:
  - name: a string price is invalid
    call: {name: place_order, arguments: {price: "1"}}
    expect: {decision: invalid, stage: validation, reason_contains: price}
  - name: an unknown tool is invalid
    call: {name: wire_money, arguments: {}}
    expect: {decision: invalid, stage: lookup}
"""


def test_policy_tests_expecting_invalid_pass_from_the_command_line(tmp_path: Path) -> None:
    folder = write_pack(tmp_path, "p", {"p.yaml": RULES}, tests=["tests/*.yaml"])
    (folder / "tests").mkdir()
    (folder / "tests" / "invalid.yaml").write_text(INVALID_TESTS, "utf-8")
    tools = tmp_path / "tools.jsonl"
    tools.write_text(tool_line("place_order", price="float") + "\n", "utf-8")
    # Without a catalog the calls reach the rules: both expectations fail.
    code, out, _err = cli("test", folder, "--format", "json")
    assert code == 1 and json.loads(out)["summary"]["failed"] == 2
    # With --tools (or the pack's own `catalog:`) they are invalid, as a registry of those tools answers.
    assert cli("test", folder, "--tools", tools)[0] == 0
    manifest = folder / MANIFEST
    manifest.write_text(manifest.read_text("utf-8") + "catalog: tools.jsonl\n", "utf-8")
    shutil.copy(tools, folder / "tools.jsonl")
    code, out, err = cli("test", folder)
    assert code == 0, out + err


def test_the_runner_answers_lookup_for_an_unknown_tool_only_when_asked(tmp_path: Path) -> None:
    folder = write_pack(tmp_path, "p", {"p.yaml": RULES}, tests=["tests/*.yaml"])
    (folder / "tests").mkdir()
    (folder / "tests" / "t.yaml").write_text(INVALID_TESTS, "utf-8")
    layers, catalog = install_layers([folder])
    assert catalog is None
    loose = run_tests(layers, discover(layers.packs))
    assert [r.passed for r in loose.results] == [False, False]
    strict = run_tests(layers, discover(layers.packs), require_tool=True)
    assert [r.passed for r in strict.results] == [False, True]  # place_order is unknown here too
    assert strict.results[1].exercised == frozenset()


def test_dry_run_against_gets_the_main_side_catalog(tmp_path: Path) -> None:
    untyped = tmp_path / "bfcl-untyped"
    shutil.copytree(BFCL, untyped)
    manifest = untyped / MANIFEST
    manifest.write_text(manifest.read_text("utf-8").replace("catalog: tools.jsonl\n", ""), "utf-8")
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"name": "fund_account", "arguments": {"amount": "5"}}) + "\n", "utf-8")
    out = tmp_path / "out.jsonl"
    code, _stdout, err = cli(
        "dry-run", "--pack", BFCL, "--against", untyped, calls, "--output", out, "--fail-on", "changed"
    )
    assert code == 0, err  # the same catalog on both sides: only rule changes would show
    (record,) = (json.loads(line) for line in out.read_text("utf-8").splitlines())
    assert record["decision"] == record["against"]["decision"] == "invalid"


def test_a_generic_layer_is_not_checked_against_a_specific_layers_catalog_unless_tools_says_so() -> None:
    baseline, bfcl = BASELINE, BFCL
    # baseline declares no catalog: it is written for any agent, so bfcl's tools do not judge its names.
    assert cli("check", "--strict", baseline, bfcl)[0] == 0
    # --tools applies to every layer: baseline's generic `cmd` list then looks like a typo of `cd`.
    code, out, _err = cli("check", "--strict", "--format", "json", baseline, bfcl, "--tools", bfcl / "tools.jsonl")
    assert code == 1
    assert {p["rule"] for p in json.loads(out)["problems"]} <= {r.id for r in load_pack(baseline).rules}
