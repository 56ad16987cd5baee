"""Installing as written: the distribution's name, the packs inside the wheel, and `--pack NAME` from any folder.

The whole path a user takes (a wheel, a fresh venv, the README's install lines, `init claude-code`,
a recorded `Read .env` denied) is scripts/check_install.py, which .ci/run runs; these tests pin its
parts: what the wheel holds, how every `--pack` option resolves, and that no install line anywhere
sends anyone to the package index's unrelated `policyengine`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from policyengine.cli import hook as hook_verb
from policyengine.cli.common import UnknownPackError, resolve_pack, shipped_packs
from policyengine.cli.main import build_parser, main
from policyengine.errors import DISTRIBUTION, UsageError
from policyengine.packs.loader import load_pack

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "policies"
NAMES = sorted(p.name for p in SHIPPED.iterdir() if (p / "pack.yaml").is_file())
READ_ENV = next(
    case["event"]
    for case in json.loads((Path(__file__).parent / "data" / "claude_code" / "pre_tool_use.json").read_text("utf-8"))
    if case["name"] == "reading .env"
)


def cli(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# -- the wheel ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `pip wheel` builds from this checkout (as scripts/check_install.py builds it)."""
    folder = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(ROOT), "-w", str(folder)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (built,) = folder.glob("*.whl")
    return built


def test_the_wheel_is_the_agent_policyengine_distribution(wheel: Path) -> None:
    assert wheel.name.startswith("agent_policyengine-")
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        fields = archive.read(metadata).decode("utf-8").split("\n\n", 1)[0].splitlines()
        scripts = archive.read(metadata.replace("METADATA", "entry_points.txt")).decode("utf-8")
    assert f"Name: {DISTRIBUTION}" in fields
    assert "policyengine = policyengine.cli.main:main" in scripts  # the CLI keeps its name


def test_the_wheel_ships_every_file_of_every_pack_and_schema(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    packs = {
        f"policyengine/shipped_packs/{p.relative_to(SHIPPED).as_posix()}" for p in SHIPPED.rglob("*") if p.is_file()
    }
    schemas = {f"policyengine/schemas/{p.name}" for p in (ROOT / "schemas").glob("*.yaml")}
    assert packs and packs <= names, sorted(packs - names)
    assert schemas <= names, sorted(schemas - names)


# -- packs list, packs path -----------------------------------------------------------------------


def test_packs_list_names_each_shipped_pack_with_its_compiled_rule_count_and_description() -> None:
    code, out, _ = cli("packs", "list", "--format", "json")
    assert code == 0
    listed = json.loads(out)
    assert [entry["name"] for entry in listed] == NAMES
    for entry in listed:
        pack = load_pack(SHIPPED / entry["name"])
        assert entry["rules"] == len(pack.rules) > 0
        assert entry["description"] == " ".join(pack.description.split()) != ""
        assert entry["version"] == pack.version


def test_packs_list_as_text_shows_each_name_and_rule_count() -> None:
    code, out, _ = cli("packs", "list")
    assert code == 0
    for name in NAMES:
        rules = len(load_pack(SHIPPED / name).rules)
        assert re.search(rf"^{re.escape(name)}  \S+  {rules} rules$", out, re.M), out


def test_packs_path_prints_the_shipped_folder() -> None:
    for name in NAMES:
        code, out, _ = cli("packs", "path", name)
        assert code == 0 and Path(out.strip()) == (SHIPPED / name).resolve()


def test_packs_path_of_an_unknown_name_lists_the_shipped_names() -> None:
    code, out, err = cli("packs", "path", "claud-code")
    assert code == 2 and out == ""
    assert "no shipped pack is named 'claud-code'" in err and ", ".join(NAMES) in err


# -- --pack NAME ----------------------------------------------------------------------------------


def _pack_options(parser: argparse.ArgumentParser, where: str = "") -> dict[str, argparse.Action]:
    """Every option or argument of every verb (and action) that names packs, by where it is."""
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found |= _pack_options(sub, f"{where} {name}".strip())
        elif action.dest in ("pack", "packs", "against") or (action.dest == "folder" and "bundle" in where):
            found[f"{where} {action.option_strings[0] if action.option_strings else action.dest}"] = action
    return found


def test_every_pack_option_of_every_verb_resolves_a_shipped_name() -> None:
    parser = build_parser()
    hook = argparse.ArgumentParser()
    hook_verb.add_arguments(hook)
    options = _pack_options(parser) | {f"hook {k}": v for k, v in _pack_options(hook).items()}
    expected = {
        "check packs", "test packs", "explain --pack", "dry-run --pack", "dry-run --against", "fmt packs",
        "hook --pack", "mcp-proxy --pack", "serve --pack", "bundle build folder",
        "init claude-code --pack", "init mcp --pack", "init serve --pack",
    }  # fmt: skip
    assert set(options) >= expected, sorted(expected - set(options))
    assert {name for name, action in options.items() if action.type is not resolve_pack} == set()


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "{name}"],
        ["test", "{name}"],
        ["explain", "--pack", "{name}", '{"name": "read_file", "arguments": {"path": ".env"}}'],
        ["dry-run", "--pack", "{name}", "--against", "{name}", "calls.jsonl"],
        ["fmt", "--check", "{name}"],
    ],
)
def test_a_shipped_name_works_from_any_folder(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "calls.jsonl").write_text(json.dumps({"name": "read_file", "arguments": {"path": ".env"}}) + "\n")
    monkeypatch.chdir(tmp_path)  # no policies/ here
    code, _, err = cli(*[word.replace("{name}", "baseline") for word in argv])
    assert code in (0, 1), err  # dry-run --fail-on is off; test and check pass; fmt --check finds nothing
    assert "PE108" not in err and "no shipped pack" not in err


def test_the_hook_takes_a_shipped_name_from_the_project_folder(tmp_path: Path) -> None:
    env = {**os.environ, "POLICYENGINE_CACHE": str(tmp_path / "cache"), "POLICYENGINE_HOOK_HELPER": "off"}
    done = subprocess.run(
        [sys.executable, "-m", "policyengine", "hook", "claude-code", "--pack", "claude-code"],
        input=json.dumps(READ_ENV),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_folder_named_like_a_shipped_pack_never_replaces_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A hook runs in the agent's project: a `claude-code/` folder the agent writes there must not become the policy.
    mine = tmp_path / "claude-code"
    mine.mkdir()
    (mine / "pack.yaml").write_text("name: mine\nversion: 1.0.0\nfiles: [rules.yaml]\n", "utf-8")
    (mine / "rules.yaml").write_text("rules: []\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert resolve_pack("claude-code") == str(shipped_packs()["claude-code"])
    code, out, _ = cli("check", "claude-code", "--format", "json")
    assert code == 0 and [p["name"] for p in json.loads(out)["packs"]] == ["claude-code"]
    # The folder is still reachable, written as a path.
    assert resolve_pack("./claude-code") == "./claude-code"
    code, out, _ = cli("check", "./claude-code", "--format", "json")
    assert code == 0 and [p["name"] for p in json.loads(out)["packs"]] == ["mine"]


@pytest.mark.parametrize("given", ["claud-code", "no/such/folder", "../baseline", "claude-code/../baseline"])
def test_neither_a_folder_nor_a_shipped_name_says_what_was_tried_and_lists_the_names(
    given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = tmp_path / "empty"
    sub.mkdir()
    monkeypatch.chdir(sub)
    with pytest.raises(UnknownPackError) as caught:
        resolve_pack(given)
    assert isinstance(caught.value, UsageError)  # the hook reports usage errors by name
    said = str(caught.value)
    assert "PE108" in said and os.path.abspath(sub / given) in said and ", ".join(NAMES) in said


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "claud-code"],
        ["test", "claud-code"],
        ["explain", "--pack", "claud-code", "{}"],
        ["dry-run", "--pack", "claud-code", "calls.jsonl"],
        ["fmt", "claud-code"],
        ["mcp-proxy", "--pack", "claud-code", "--", "true"],
        ["serve", "--pack", "claud-code"],
        ["bundle", "build", "claud-code", "-o", "x.tar.gz"],
        ["hook", "claude-code", "--pack", "claud-code"],
    ],
)
def test_every_verb_refuses_an_unknown_pack_with_exit_2_and_the_shipped_names(argv: list[str]) -> None:
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    assert "no shipped pack named 'claud-code'" in err and ", ".join(NAMES) in err


def test_shipped_packs_are_the_policies_folder_in_a_checkout() -> None:
    assert {name: path.resolve() for name, path in shipped_packs().items()} == {n: (SHIPPED / n) for n in NAMES}


# -- install lines --------------------------------------------------------------------------------

# A pip install line naming the bare distribution: `policyengine` not preceded by `agent-` (or
# another name character) and followed by an extra, a version, a quote or the end of a word.
BARE = re.compile(r"pip3? install\b[^\n;&|,`]*?(?<![\w.-])" + "policy" + r"engine(?=[\[\s'\"=<>~!,]|$)", re.M)
EXTRA = re.compile(r"(?<![\w-])" + "policy" + r"engine\[")
# Attack samples and the pack rules that refuse them quote such commands on purpose.
NOT_INSTALL_LINES = ("policies/", "tests/adversarial/", "benchmarks/redteam/")


def _text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = [ROOT / name for name in listed.split() if not name.startswith(NOT_INSTALL_LINES)]
    return [
        f for f in files if f.suffix in (".md", ".py", ".toml", ".txt", ".sh", ".json", ".yaml", "") and f.is_file()
    ]


def test_no_install_line_names_the_bare_policyengine_distribution() -> None:
    found = []
    for file in _text_files():
        text = file.read_text("utf-8", errors="replace")
        found += [f"{file.relative_to(ROOT)}: {m.group(0)}" for m in BARE.finditer(text)]
        found += [f"{file.relative_to(ROOT)}: {m.group(0)}" for m in EXTRA.finditer(text)]
    assert found == []
    assert BARE.search("pip install 'policy" + "engine[mcp]'") and BARE.search("pip install -U policy" + "engine")
    assert not BARE.search("pip install 'agent-policyengine[mcp]' && policyengine packs list")
