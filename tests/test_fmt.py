"""`policyengine fmt`: one canonical layout for pack files, comments kept, values never changed.

The corpora are the suite's own: the shipped packs, the packs tests/cases/*.yaml write, the loader
fuzzer's mutants (scripts/fuzz_loader.py) and packs of random rules dumped in random styles with
comments sprinkled in. For each, formatting either refuses a file (PE801, nothing written) or
gives a file with the same data (as the loader and as yaml.safe_load read it), every comment, the
same pack digest and rules, and that a second `fmt` leaves alone.
"""

from __future__ import annotations

import errno
import importlib.util
import io
import os
import random
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pytest
import yaml

from policyengine import PackLoadError, load_pack
from policyengine.cli.main import main
from policyengine.packs.formatter import PE801, FileKind, format_text, key_order, pack_files
from policyengine.packs.yaml_source import load_yaml
from policyengine.values.problems import ProblemSink
from support import scaled

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = [ROOT / "policies" / "baseline", ROOT / "policies" / "bfcl"]
EXAMPLE_PACKS = sorted(p.parent for p in (ROOT / "examples").rglob("pack.yaml"))
CASES = sorted((ROOT / "tests" / "cases").glob("*.yaml"))
SCRIPT = ROOT / "scripts" / "fuzz_loader.py"


def cli(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _fuzz() -> ModuleType:
    """scripts/fuzz_loader.py, imported by path once (test_fuzz_loader.py shares the module)."""
    if "fuzz_loader" in sys.modules:
        return sys.modules["fuzz_loader"]
    spec = importlib.util.spec_from_file_location("fuzz_loader", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_loader"] = module
    spec.loader.exec_module(module)
    return module


def _files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _comment_texts(text: str) -> list[str]:
    """The comments of a YAML text, by PyYAML's scanner: what lies between tokens, and after a `|` or `>`."""
    found, position = [], 0
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        found += [c.rstrip() for c in re.findall(r"#[^\n]*", text[position : token.start_mark.index])]
        if isinstance(token, yaml.ScalarToken) and token.style in ("|", ">"):
            header = text[token.start_mark.index :].split("\n", 1)[0]
            found += [c.rstrip() for c in re.findall(r"(?<=\s)#.*", header)]
        position = max(position, token.end_mark.index)
    return sorted(found)


def assert_formatted_well(before: str | bytes, kind: FileKind, name: str = "f.yaml") -> str | None:
    """Format one text: refused with PE801 only, or the same data and comments, and a fixed point."""
    sink = ProblemSink()
    after = format_text(before, kind, name, sink)
    if after is None:
        assert sink.problems and {p.code for p in sink.problems} == {PE801}, sink.render()
        return None
    text = before.decode("utf-8") if isinstance(before, bytes) else before
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    original, formatted = load_yaml(text, name, ProblemSink()), load_yaml(after, name, ProblemSink())
    assert original is not None and formatted is not None
    assert _canonical(formatted.data) == _canonical(original.data)
    try:
        plain = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError):
        pass
    else:
        assert _canonical(yaml.safe_load(after)) == _canonical(plain)
    assert _comment_texts(after) == _comment_texts(text)
    assert format_text(after, kind, name, ProblemSink()) == after, "formatting twice changed the file"
    assert after.endswith("\n")
    return after


def _canonical(data: Any) -> Any:
    """Data compared with its types (true is not 1, 1 is not 1.0) and NaN equal to NaN; key order aside."""
    if isinstance(data, dict):
        return sorted((repr(k), _canonical(v)) for k, v in data.items())
    if isinstance(data, list):
        return [_canonical(v) for v in data]
    return (type(data).__name__, repr(data) if isinstance(data, float) else data)


def assert_same_pack(before: Path, after: Path) -> None:
    """The formatted pack loads to the same digest and rules, and every file to the same plain data."""
    old, new = load_pack(before), load_pack(after)
    assert new.digest == old.digest
    assert [(r.id, r.stage) for r in new.rules] == [(r.id, r.stage) for r in old.rules]
    assert new.lists == old.lists and new.tests == old.tests and new.cwd == old.cwd
    for path in before.rglob("*.yaml"):
        formatted = yaml.safe_load((after / path.relative_to(before)).read_text("utf-8"))
        assert _canonical(formatted) == _canonical(yaml.safe_load(path.read_text("utf-8"))), path


# -- the shipped packs --------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", SHIPPED + EXAMPLE_PACKS, ids=lambda p: p.name)
def test_the_shipped_packs_are_formatted(folder: Path) -> None:
    code, out, _ = cli("fmt", "--check", folder)
    assert code == 0, out
    assert re.search(r"\b0 file\(s\) would be reformatted", out)


@pytest.mark.parametrize("folder", SHIPPED[:1], ids=lambda p: p.name)  # one pack each: ruamel is slow
def test_a_shipped_pack_reindented_with_crlf_formats_back_byte_for_byte(folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    for file in pack_files(copy, ProblemSink()):
        text = file.path.read_text("utf-8")
        # Four spaces a level instead of two, `-   ` for `- ` (the shipped block scalars have one
        # indentation, so doubling keeps their values), and Windows line ends.
        text = re.sub(r"(?m)^( *)(- )?", lambda m: m.group(1) * 2 + ("-   " if m.group(2) else ""), text)
        file.path.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    assert cli("fmt", "--check", copy)[0] == 1
    assert cli("fmt", copy)[0] == 0
    for path in folder.rglob("*.yaml"):
        assert (copy / path.relative_to(folder)).read_bytes() == path.read_bytes(), path


def _reversed_keys(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _reversed_keys(data[k]) for k in reversed(data)}
    if isinstance(data, list):
        return [_reversed_keys(v) for v in data]
    return data


@pytest.mark.parametrize("folder", SHIPPED[1:], ids=lambda p: p.name)  # one pack each: ruamel is slow
def test_a_shipped_pack_with_every_key_reversed_formats_to_the_same_pack(folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    for file in pack_files(copy, ProblemSink()):
        data = _reversed_keys(yaml.safe_load(file.path.read_text("utf-8")))
        file.path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=70), "utf-8")
    assert cli("fmt", copy)[0] == 0
    assert_same_pack(folder, copy)
    for file in pack_files(copy, ProblemSink()):
        assert_formatted_well(file.path.read_bytes(), file.kind, file.display)
        first_keys = re.findall(r"(?m)^  - (\w+):", file.path.read_text("utf-8"))
        assert set(first_keys) <= {"id", "name"}, file.path  # every rule starts with its id, every test with its name


# -- the suite's corpora ------------------------------------------------------------------------------


def _case_packs(path: Path, root: Path) -> Iterator[Path]:
    """The packs a tests/cases file writes (as test_rule_cases writes them)."""
    for gi, group in enumerate(yaml.safe_load(path.read_text("utf-8"))):
        for li, spec in enumerate(group.get("layers") or [group["pack"]]):
            folder = root / f"g{gi}-{li}"
            folder.mkdir(parents=True)
            manifest = {k: v for k, v in spec.items() if k != "files"}
            manifest.setdefault("name", "case-pack")
            manifest.setdefault("version", "1.0.0")
            manifest["files"] = list(spec["files"])
            (folder / "pack.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True), "utf-8")
            for name, content in spec["files"].items():
                text = content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False)
                (folder / name).write_text(text, "utf-8")
            yield folder


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_the_packs_of_the_rule_cases_format_to_the_same_packs(path: Path, tmp_path: Path) -> None:
    for folder in _case_packs(path, tmp_path / "before"):
        copy = tmp_path / "after" / folder.name
        shutil.copytree(folder, copy)
        try:
            load_pack(folder)
        except PackLoadError:
            # A case about a pack that does not load: its files are checked one by one.
            for file in pack_files(copy, ProblemSink()):
                assert_formatted_well(file.path.read_bytes(), file.kind, file.display)
            continue
        # fmt itself refuses to write a file whose data, comments or second formatting would differ.
        assert cli("fmt", copy)[0] == 0
        assert_same_pack(folder, copy)
        assert cli("fmt", "--check", copy)[0] == 0


def test_the_fuzzers_mutants_are_formatted_or_refused_never_changed(tmp_path: Path) -> None:
    fuzz = _fuzz()
    formatted = refused = 0
    for iteration in range(scaled(8)):
        mutant = fuzz.make_mutant(20260707, iteration)
        for name, data in mutant.files.items():
            if not name.endswith((".yaml", ".yml")) or len(data) > 20_000:
                continue  # ruamel.yaml takes seconds for the 100,000-node mutants
            if load_yaml(data, name, ProblemSink()) is None:
                continue
            kind = FileKind.MANIFEST if name == "pack.yaml" else FileKind.RULES
            if assert_formatted_well(data, kind, name) is None:
                refused += 1
            else:
                formatted += 1
        folder = tmp_path / f"m{iteration}" / "pack"
        fuzz.write_mutant(mutant, folder)
        try:
            load_pack(folder)
        except PackLoadError:
            continue
        copy = tmp_path / f"m{iteration}-formatted"
        shutil.copytree(folder, copy, symlinks=True)
        if any(p.stat().st_size > 20_000 for p in copy.rglob("*.yaml") if p.is_file()):
            continue
        if cli("fmt", copy)[0] == 0:  # 2: a file was refused, and checked above
            assert_same_pack(folder, copy)
    assert formatted > 10 * refused, (formatted, refused)


def _commented(rng: random.Random, text: str) -> str:
    """Comments added at random line ends and between lines, each kept only where the text still loads."""
    lines = text.split("\n")
    for i in sorted(rng.sample(range(len(lines)), min(len(lines), 12)), reverse=True):
        line = lines[i]
        if not line.strip():
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        candidate = [*lines[:i], indent + f"# note-{i}", line + f"  # eol-{i}", *lines[i + 1 :]]
        if load_yaml("\n".join(candidate), "r.yaml", ProblemSink()) is not None:
            lines = candidate
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(scaled(15)))
def test_random_rules_in_random_styles_with_comments_keep_their_content(seed: int) -> None:
    fuzz = _fuzz()
    rng = random.Random(f"fmt:{seed}")
    while True:  # random values include strings the loader refuses (lone surrogates): draw until it loads
        data: dict[str, Any] = {"rules": [fuzz.random_rule(rng, ["names"]) for _ in range(rng.randint(1, 4))]}
        if rng.random() < 0.5:
            data = {"lists": {"names": ["a", "b*"]}, **data}
        text = fuzz.dump_yaml(rng, data).decode("utf-8", "surrogatepass")
        if load_yaml(text, "r.yaml", ProblemSink()) is not None:
            break
    text = _commented(rng, text)
    after = assert_formatted_well(text, FileKind.RULES, "r.yaml")
    if after is not None:
        for marker in re.findall(r"(?:note|eol)-\d+", text):
            assert marker in after  # as a comment, or as the text of a value it landed in


# -- the layout -----------------------------------------------------------------------------------------

GOLDEN_IN = {
    "pack.yaml": """\
# The manifest: its header comment stays on top.
files: [rules.yaml]   # evaluation order
version: 1.0.0
tests: [tests/*.yaml]
# the pack's name
name: golden
""",
    "rules.yaml": """\
# Header of the rule file.

lists:
    # tools that write
    write_tools: [fs_write, fs_edit]    # by name
rules:
# the first rule
-   decision: deny   # deny, not ask
    tools: ["@write_tools"]
    # what the rule is
    id: no-writes
    stage: pre-execute
    reason: 'No {name}: it writes.'\x20\x20\x20
    when: "length(paths(@)) > `0` && !contains(name, '\\u200B')"


-   id: mask
    # which stage
    stage: post-execute
    x-owner: security   # a field fmt does not know stays, after the known ones
    tools: [read]
    redact:
    -   keep_last: 4    # the last four digits stay
        # the card number
        path: card.number
    -   replace_with: ~
        keys: [cvv]
    # The end of the rules.
""",
    "tests/t.yaml": """\
tests:
    -   expect: {rule: no-writes, decision: deny}   # the gate
        call: {arguments: {path: a.txt}, agent: bot, name: fs_write}
        name: a write is denied
""",
}

GOLDEN_OUT = {
    "pack.yaml": """\
# The manifest: its header comment stays on top.
# the pack's name
name: golden
version: 1.0.0
files: [rules.yaml]   # evaluation order
tests: [tests/*.yaml]
""",
    "rules.yaml": """\
# Header of the rule file.

lists:
  # tools that write
  write_tools: [fs_write, fs_edit]    # by name
rules:
  # the first rule
  # what the rule is
  - id: no-writes
    stage: pre-execute
    tools: ["@write_tools"]
    when: "length(paths(@)) > `0` && !contains(name, '\\u200B')"
    decision: deny   # deny, not ask
    reason: 'No {name}: it writes.'


  - id: mask
    # which stage
    stage: post-execute
    tools: [read]
    redact:
      # the card number
      - path: card.number
        keep_last: 4    # the last four digits stay
      - keys: [cvv]
        replace_with: null
    x-owner: security   # a field fmt does not know stays, after the known ones
# The end of the rules.
""",
    "tests/t.yaml": """\
tests:
  - name: a write is denied
    call: {name: fs_write, agent: bot, arguments: {path: a.txt}}
    expect: {decision: deny, rule: no-writes}   # the gate
""",
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, "utf-8")
    return folder


def test_the_layout_keys_in_order_comments_in_place(tmp_path: Path) -> None:
    folder = _write(tmp_path / "golden", GOLDEN_IN)
    code, out, _ = cli("fmt", folder)
    assert code == 0
    assert {name: (folder / name).read_text("utf-8") for name in GOLDEN_OUT} == GOLDEN_OUT
    assert out.count("reformatted ") == 3 and "3 file(s) reformatted, 0 left unchanged" in out
    for name, text in GOLDEN_IN.items():
        assert _comment_texts((folder / name).read_text("utf-8")) == _comment_texts(text), name


def test_the_key_orders_follow_the_schemas() -> None:
    rule = key_order(FileKind.RULES, ("rules", 3))
    assert rule is not None and rule[:5] == ("id", "description", "stage", "tools", "when")
    stages = yaml.safe_load((ROOT / "schemas" / "rules.yaml").read_text("utf-8"))
    assert {field for stage in stages.values() for field in stage} <= set(rule)
    manifest = key_order(FileKind.MANIFEST, ())
    assert manifest is not None and manifest[:3] == ("name", "version", "description")
    assert key_order(FileKind.RULES, ("lists",)) is None  # list names stay as written
    assert key_order(FileKind.TESTS, ("tests", 0, "call", "arguments")) is None


VALUES = {
    # An invisible character stays an escape; a visible one written as an escape is written as itself.
    "escapes": (
        'rules:\n  - {id: a, reason: "zero\\u200Bwidth, e\\u00e9"}\n',
        'rules:\n  - {id: a, reason: "zero\\u200Bwidth, eé"}\n',
    ),
    # Quotes are kept as written, and block scalars too.
    "quotes": (
        "rules:\n- id: 'a'\n  reason: >-\n    folded\n    text\n",
        "rules:\n  - id: 'a'\n    reason: >-\n      folded\n      text\n",
    ),
    # Null is `null`; a BOM, CRLF, trailing spaces and blank lines at the end go.
    "null-bom-crlf": (
        "\ufefflists: {a: [~, null]}   \r\nrules: []\r\n\r\n\r\n",
        "lists: {a: [null, null]}\nrules: []\n",
    ),
    # A file with an alias keeps its key order: moving a key could put the alias before its anchor.
    "alias": (
        "rules:\n- stage: guard\n  id: &i a\n  reason: *i\n",
        "rules:\n  - stage: guard\n    id: &i a\n    reason: *i\n",
    ),
    # `---` goes (ruamel drops it), and the comments above it stay.
    "document-start": (
        "# yaml-language-server: $schema=../.schemas/rule-file.json\n---\nrules: []\n",
        "# yaml-language-server: $schema=../.schemas/rule-file.json\nrules: []\n",
    ),
    # A string written over several lines is joined into one line (the same value).
    "joined": ("rules:\n  - id: a\n    reason: one\n      two\n", "rules:\n  - id: a\n    reason: one two\n"),
}


@pytest.mark.parametrize(("before", "after"), VALUES.values(), ids=VALUES.keys())
def test_values_are_written_as_they_were(before: str, after: str) -> None:
    assert format_text(before.encode("utf-8"), FileKind.RULES, "r.yaml", ProblemSink()) == after
    assert_formatted_well(before.encode("utf-8"), FileKind.RULES)


def test_a_raw_line_separator_is_refused_with_the_escape_to_write() -> None:
    sink = ProblemSink()
    assert format_text('rules:\n  - {id: a, reason: "x\u2028y"}\n', FileKind.RULES, "r.yaml", sink) is None
    (problem,) = sink.problems
    assert (problem.code, str(problem.location)) == (PE801, "r.yaml:2:23")
    assert "U+2028 is a line break to some YAML readers" in problem.message and '"\\u2028"' in (problem.hint or "")


# -- the command line -------------------------------------------------------------------------------------


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return _write(tmp_path / "golden", GOLDEN_IN)


def test_check_exits_1_naming_each_file_and_changes_nothing(golden: Path) -> None:
    before = _files(golden)
    code, out, err = cli("fmt", "--check", golden)
    assert code == 1 and err == ""
    assert sorted(re.findall(r"would reformat (\S+)", out)) == sorted(str(golden / n) for n in GOLDEN_IN)
    assert "3 file(s) would be reformatted, 0 already formatted" in out
    assert _files(golden) == before


def test_diff_prints_a_unified_diff_and_changes_nothing(golden: Path, tmp_path: Path) -> None:
    before = _files(golden)
    code, out, err = cli("fmt", "--diff", golden)
    assert code == 0
    assert _files(golden) == before
    assert f"--- {golden / 'pack.yaml'}\n+++ {golden / 'pack.yaml'}\n" in out
    assert "-files: [rules.yaml]   # evaluation order\n" in out and "+  - id: no-writes\n" in out
    assert "would reformat" in err and "would reformat" not in out  # `fmt --diff > fix.patch` is a clean patch
    if shutil.which("patch"):
        (tmp_path / "fix.patch").write_text(out, "utf-8")
        subprocess.run(["patch", "-p0", "-s", "-i", str(tmp_path / "fix.patch")], check=True, cwd="/")
        assert {n: (golden / n).read_text("utf-8") for n in GOLDEN_OUT} == GOLDEN_OUT


def test_check_and_diff_together_print_the_diff_and_exit_1(golden: Path) -> None:
    code, out, _ = cli("fmt", "--check", "--diff", golden)
    assert code == 1 and out.startswith("--- ")


def test_diff_is_coloured_on_request_only(golden: Path) -> None:
    assert "\x1b[" not in cli("fmt", "--diff", golden)[1]
    coloured = cli("fmt", "--diff", "--color", "always", golden)[1]
    assert "\x1b[31m-files: [rules.yaml]" in coloured and "\x1b[32m+version: 1.0.0" in coloured


def test_fmt_rewrites_in_place_then_has_nothing_to_do(golden: Path) -> None:
    (golden / "rules.yaml").chmod(0o640)
    code, out, _ = cli("fmt", golden)
    assert code == 0 and "reformatted " + str(golden / "rules.yaml") in out
    assert stat.S_IMODE((golden / "rules.yaml").stat().st_mode) == 0o640  # the rename keeps the file's mode
    assert not [p for p in golden.rglob("*") if p.name.endswith(".tmp")]
    after = _files(golden)
    assert cli("fmt", golden)[1].endswith("0 file(s) reformatted, 3 left unchanged\n")
    assert cli("fmt", "--check", golden)[0] == 0
    assert _files(golden) == after


def test_a_file_that_cannot_be_written_is_reported_and_left_whole(
    golden: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from policyengine.packs import formatter

    def refuse(source: Any, target: Any) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(cast(Any, formatter).os, "replace", refuse)
    before = _files(golden)
    code, _, err = cli("fmt", golden)
    assert code == 2
    assert f"error: cannot write {golden / 'pack.yaml'}: Permission denied (0 file(s) reformatted before it" in err
    assert "hint: make the file and its folder writable" in err
    assert _files(golden) == before  # and no temporary file is left behind


def test_a_symlinked_rule_file_stays_a_symlink(golden: Path) -> None:
    real = golden / "real-rules.yaml"
    (golden / "rules.yaml").rename(real)
    os.symlink("real-rules.yaml", golden / "rules.yaml")
    assert cli("fmt", golden)[0] == 0
    assert (golden / "rules.yaml").is_symlink()
    assert real.read_text("utf-8") == GOLDEN_OUT["rules.yaml"]


def test_a_broken_yaml_file_is_refused_and_nothing_is_written(golden: Path) -> None:
    broken = 'tests:\n  - name: "never closed\n'
    (golden / "tests" / "t.yaml").write_text(broken, "utf-8")
    before = _files(golden)
    code, out, err = cli("fmt", golden)
    assert code == 2 and out == ""
    assert f"{golden / 'tests' / 't.yaml'}:2:11: error PE101" in err
    assert "nothing was formatted" in err
    assert _files(golden) == before  # the other files, which need formatting, are left alone too
    assert cli("fmt", "--check", golden)[0] == 2


def test_a_comment_ruamel_would_drop_is_refused_at_the_comment(golden: Path) -> None:
    (golden / "rules.yaml").write_text("rules:\n  - {id: a,   # the id\n     stage: guard}\n", "utf-8")
    before = _files(golden)
    code, _, err = cli("fmt", golden)
    assert code == 2
    assert f"{golden / 'rules.yaml'}:2:15: error PE801: formatting would drop this comment" in err
    assert "^^^^^^^^" in err and "hint: move it onto a line of its own" in err
    assert _files(golden) == before


def test_a_rule_file_outside_the_pack_is_not_touched(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("rules:\n    - id: x\n", "utf-8")
    folder = _write(tmp_path / "p", {"pack.yaml": "name: p\nversion: 1.0.0\nfiles: [../outside.yaml]\n"})
    code, _, err = cli("fmt", folder)
    assert code == 2 and "PE403" in err and "outside the pack folder" in err
    assert outside.read_text("utf-8") == "rules:\n    - id: x\n"


def test_a_missing_pack_is_a_usage_problem(tmp_path: Path) -> None:
    code, _, err = cli("fmt", tmp_path / "nope")
    assert code == 2 and "PE108" in err


def test_without_ruamel_fmt_says_how_to_install_it(golden: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "policyengine.packs.formatter")
    monkeypatch.setitem(sys.modules, "ruamel.yaml", None)  # `import ruamel.yaml` now fails, as when not installed
    before = _files(golden)
    code, out, err = cli("fmt", golden)
    assert code == 2 and out == ""
    assert "needs ruamel.yaml" in err and "pip install 'agent-policyengine[fmt]'" in err
    assert _files(golden) == before


def test_no_other_verb_and_no_import_loads_ruamel() -> None:
    code = (
        "import sys, policyengine\n"
        "from policyengine.cli.main import main\n"
        "assert main(['check', 'policies/baseline']) == 0\n"
        "assert main(['schema', 'pack']) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith(('ruamel', 'policyengine.packs.formatter'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip().splitlines()[-1] == "[]"
