"""Loading rule expressions never crashes: every JMESPath form compiles, and engine faults become located problems.

Slices used to crash the load-time checks (their AST children are ints and None, not nodes);
any other internal fault while compiling a rule now refuses the pack with a PE308 problem at the
expression (or the rule), never a traceback out of `check`, `dry-run` or `PolicyLayers.install`.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any, cast

import jmespath
import pytest
import yaml

from policyengine import PackLoadError, PolicyLayers, Registry, Verdict, evaluate, freeze, load_pack
from policyengine.cli.main import main
from policyengine.language import expressions as expressions_module
from policyengine.language.functions import OPTIONS
from policyengine.language.syntax import describe_syntax_error, parse_with_spans
from policyengine.packs import compiler as compiler_module
from policyengine.values.problems import CODES

MANIFEST = "name: p\nversion: 1.0.0\nfiles: [r.yaml]\n"


def rule_file(when: str, reason: str = "no") -> str:
    """One deny rule for tool `t` with the given condition (single-quoted YAML, quotes doubled)."""
    quoted = when.replace("'", "''")
    # The list only where a condition uses it: an unused list is a warning (PE404) in every problem list.
    lists = "lists:\n  names: [a, b, c]\n" if "lists." in when else ""
    rules = (
        "rules:\n"
        "  - id: r1\n"
        "    stage: pre-execute\n"
        "    tools: [t]\n"
        f"    when: '{quoted}'\n"
        "    decision: deny\n"
        f"    reason: '{reason}'\n"
    )
    return lists + rules


def write_pack(folder: Path, when: str, reason: str = "no") -> Path:
    """A one-rule pack in folder (see rule_file)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pack.yaml").write_text(MANIFEST, "utf-8")
    (folder / "r.yaml").write_text(rule_file(when, reason), "utf-8")
    return folder


DOCUMENTS: list[dict[str, Any]] = [
    {"name": "t", "arguments": {"tags": ["a", "b", "c", "d"]}},
    {"name": "t", "arguments": {"tags": ["a"]}},
    {"name": "t", "arguments": {"tags": []}},
    {"name": "t", "arguments": {"tags": "abcd"}},
    {"name": "t", "arguments": {"tags": [{"a": 1}, {"a": 2}, {"b": 3}]}},
    {"name": "t", "arguments": {}},
]

SLICES = [
    "length(arguments.tags[1:]) > `0`",
    "arguments.tags[1:]",
    "arguments.tags[::-1]",
    "arguments.tags[:1]",
    "arguments.tags[-2:]",
    "arguments.tags[1:3:2]",
    "arguments.tags[::-2][0]",
    "arguments.tags[1:].a",
    "arguments.tags[1:][*].a",
    "arguments.tags[:2][?a]",
    "arguments.tags[1:] | [0]",
    "[arguments.tags[1:], arguments.tags[:1]][]",
    "{tail: arguments.tags[1:]}",
    "!(arguments.tags[1:])",
    "arguments.tags[?@ != 'a'][1:]",
    "sort_by(arguments.tags[1:], &to_string(@))",
]


@pytest.mark.parametrize("when", SLICES)
def test_a_slice_in_a_condition_loads_and_evaluates_as_jmespath(tmp_path: Path, when: str) -> None:
    pack = load_pack(write_pack(tmp_path / "pack", when))
    expression = pack.rules[0].when
    assert expression is not None and expression.compiled is not None, "a slice must compile, not fall back"
    for document in DOCUMENTS:
        try:
            want: Any = ("ok", jmespath.search(when, document, options=OPTIONS))
        except Exception as error:
            want = ("raise", type(error))
        try:
            got: Any = ("ok", expression.search(freeze(document)))
        except Exception as error:
            got = ("raise", type(error))
        assert got == want, f"{when!r} on {document}"


def test_a_slice_of_a_named_list_is_folded_at_load(tmp_path: Path) -> None:
    pack = load_pack(write_pack(tmp_path / "pack", "lists.names[1:]"))
    expression = pack.rules[0].when
    assert expression is not None
    assert expression.search(freeze({})) == ["b", "c"]
    assert expression.parsed.parsed["children"][0]["children"][0]["type"] == "literal"


def test_a_negated_path_through_a_slice_is_still_refused(tmp_path: Path) -> None:
    """`!a[1:]` slices the boolean `!a`, always null: PE307, as for `!a.b`."""
    with pytest.raises(PackLoadError) as caught:
        load_pack(write_pack(tmp_path / "pack", "!arguments.tags[1:]"))
    assert caught.value.codes == ("PE307",)


def test_a_zero_slice_step_loads_and_fails_closed_when_it_runs(tmp_path: Path) -> None:
    folder = write_pack(tmp_path / "pack", "arguments.tags[::0]")
    registry = Registry()
    PolicyLayers.install(registry, [folder])
    denied = asyncio.run(evaluate(registry, "t", {"tags": ["a", "b"]}))
    assert denied.decision is Verdict.DENY
    assert denied.reason is not None and "rule 'r1' could not be evaluated" in denied.reason
    assert "slice step cannot be zero" in denied.reason
    # Like jmespath, a slice of something that is not an array is null before the step is looked at.
    assert asyncio.run(evaluate(registry, "t", {"tags": "ab"})).decision is Verdict.ALLOW


def test_check_install_and_dry_run_accept_a_pack_with_slices(tmp_path: Path) -> None:
    """The issue's reproducer: each entry point crashed with AttributeError in _resolve."""
    folder = write_pack(tmp_path / "pack", "length(arguments.tags[1:]) > `0`")
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(folder)], out=out, err=err) == 0, err.getvalue()
    registry = Registry()
    PolicyLayers.install(registry, [folder])
    assert asyncio.run(evaluate(registry, "t", {"tags": ["a", "b"]})).decision is Verdict.DENY
    assert asyncio.run(evaluate(registry, "t", {"tags": ["a"]})).decision is Verdict.ALLOW
    calls, records = tmp_path / "calls.jsonl", tmp_path / "out.jsonl"
    calls.write_text(json.dumps({"name": "t", "arguments": {"tags": ["a", "b"]}, "call_id": "c1"}) + "\n", "utf-8")
    code = main(
        ["dry-run", "--pack", str(folder), str(calls), "--output", str(records), "--workers", "1"], out=out, err=err
    )
    assert code == 0, err.getvalue()
    assert json.loads(records.read_text("utf-8").splitlines()[0])["decision"] == "deny"


# -- internal faults become located problems --------------------------------------------------------


def _boom(*_args: Any, **_kwargs: Any) -> Any:
    """Stands in for any engine function: an internal fault."""
    raise RuntimeError("boom")


def _column_of(folder: Path, needle: str) -> tuple[int, int]:
    """1-based line and column of the first occurrence of needle in r.yaml."""
    for number, line in enumerate((folder / "r.yaml").read_text("utf-8").splitlines(), 1):
        if needle in line:
            return number, line.index(needle) + 1
    raise AssertionError(needle)


@pytest.mark.parametrize("target", ["compile_ast", "_resolve"])
def test_an_internal_fault_compiling_a_condition_is_a_located_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    folder = write_pack(tmp_path / "pack", "arguments.amount >= `10000`")
    monkeypatch.setattr(expressions_module, target, _boom)
    with pytest.raises(PackLoadError) as caught:
        load_pack(folder)
    (problem,) = caught.value.problems
    assert problem.code == "PE308" and "PE308" in CODES
    assert problem.message == "internal error compiling expression: RuntimeError: boom (please report)"
    assert problem.rule_id == "r1"
    assert problem.location is not None
    line, column = _column_of(folder, "arguments.amount")
    assert (problem.location.file, problem.location.line, problem.location.column) == (
        str(folder / "r.yaml"),
        line,
        column,
    )


def test_an_internal_fault_in_the_jmespath_parser_is_a_located_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_pack(tmp_path / "pack", "arguments.x == 'y'")
    monkeypatch.setattr(cast(Any, expressions_module).jmespath, "compile", _boom)
    with pytest.raises(PackLoadError) as caught:
        load_pack(folder)
    assert {(p.code, p.rule_id) for p in caught.value.problems} == {("PE308", "r1")}


def test_an_internal_fault_in_a_template_placeholder_points_at_the_placeholder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_pack(tmp_path / "pack", "arguments.x == 'y'", reason="denied for {agent}")
    real = cast(Any, expressions_module).compile_ast

    def fail_on_agent(ast: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if ast.get("value") == "agent":
            raise KeyError("children")
        return real(ast, *args, **kwargs)

    monkeypatch.setattr(expressions_module, "compile_ast", fail_on_agent)
    with pytest.raises(PackLoadError) as caught:
        load_pack(folder)
    (problem,) = caught.value.problems
    assert problem.code == "PE308" and problem.message.startswith("internal error compiling expression: KeyError")
    assert problem.location is not None
    assert (problem.location.line, problem.location.column) == _column_of(folder, "agent}")


def test_an_internal_fault_splitting_a_template_is_a_located_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_pack(tmp_path / "pack", "arguments.x == 'y'", reason="denied for {agent}")
    monkeypatch.setattr(expressions_module, "placeholder_end", _boom)
    with pytest.raises(PackLoadError) as caught:
        load_pack(folder)
    (problem,) = caught.value.problems
    assert problem.code == "PE308" and problem.message.startswith("internal error compiling template: RuntimeError")
    assert problem.location is not None
    assert (problem.location.line, problem.location.column) == _column_of(folder, "denied for")


def test_an_internal_fault_elsewhere_in_a_rule_is_a_problem_at_the_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_pack(tmp_path / "pack", "arguments.x == 'y'")
    monkeypatch.setattr(compiler_module.FileCompiler, "tools", _boom)
    with pytest.raises(PackLoadError) as caught:
        load_pack(folder)
    (problem,) = caught.value.problems
    assert problem.code == "PE308" and problem.rule_id == "r1"
    assert problem.message == "internal error compiling rule: RuntimeError: boom (please report)"
    assert problem.location is not None and problem.location.file == str(folder / "r.yaml")
    assert problem.location.line == _column_of(folder, "id: r1")[0]


def test_an_internal_fault_never_escapes_check_or_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`policyengine check` exits 2 with the rendered problem; install refuses and installs nothing."""
    good = write_pack(tmp_path / "good", "arguments.x == 'y'")
    registry = Registry()
    PolicyLayers.install(registry, [good])
    folder = write_pack(tmp_path / "pack", "arguments.amount >= `10000`")
    monkeypatch.setattr(expressions_module, "compile_ast", _boom)
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(folder), "--color", "never"], out=out, err=err) == 2
    assert "PE308" in err.getvalue() and "internal error compiling expression" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    with pytest.raises(PackLoadError):
        PolicyLayers.install(Registry(), [folder])
    assert asyncio.run(evaluate(registry, "t", {"x": "y"})).decision is Verdict.DENY


# -- syntax errors say what was found at the caret and what could have come there ------------------

SYNTAX_CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "cases" / "syntax" / "jmespath_errors.yaml").read_text("utf-8")
)


def test_the_syntax_case_file_covers_enough_mistakes() -> None:
    assert len(SYNTAX_CASES) >= 12
    assert all(set(case) <= {"expression", "message", "column", "hint"} for case in SYNTAX_CASES)


@pytest.mark.parametrize("case", SYNTAX_CASES, ids=[c["expression"] for c in SYNTAX_CASES])
def test_a_syntax_error_says_what_was_found_and_what_was_expected(case: dict[str, Any], tmp_path: Path) -> None:
    text = case["expression"]
    reported: list[tuple[Any, ...]] = []
    assert expressions_module.compile_expression(text, {}, lambda *problem: reported.append(problem)) is None
    ((code, message, offset, _width, hint),) = reported
    assert code == "PE301"
    assert message.startswith("invalid JMESPath: ") and case["message"] in message
    assert "None" not in message and "token" not in message  # no parser internals
    assert offset + 1 == case["column"], message
    assert case.get("hint", "") in (hint or "")
    # In a pack, the same words at `file:line:column`: the `when:` scalar's column plus the
    # expression's (rule_file single-quotes it, so each quote before the caret is written twice).
    with pytest.raises(PackLoadError) as refused:
        load_pack(write_pack(tmp_path / "pack", text))
    (problem,) = refused.value.problems
    assert problem.code == "PE301" and problem.message == message
    assert problem.location is not None
    column = len("    when: '") + case["column"] + text[:offset].count("'")
    assert (problem.location.line, problem.location.column) == (5, column)


def test_an_empty_condition_says_it_is_empty() -> None:
    reported: list[tuple[Any, ...]] = []
    assert expressions_module.compile_expression("", {}, lambda *problem: reported.append(problem)) is None
    assert [(code, message) for code, message, *_ in reported] == [
        ("PE301", "invalid JMESPath: the expression is empty")
    ]


def _compliance_expressions() -> list[str]:
    folder = Path(__file__).parent / "data" / "jmespath-compliance"
    return [
        case["expression"]
        for path in sorted(folder.glob("*.json"))
        for group in json.loads(path.read_text("utf-8"))
        for case in group["cases"]
    ]


@pytest.mark.filterwarnings("ignore:deprecated string literal syntax")
def test_the_spanned_parser_builds_jmespaths_ast_and_explains_each_of_its_syntax_errors() -> None:
    """On the JMESPath compliance suite: the same AST, the same errors, and words for every syntax error."""
    expressions = _compliance_expressions()
    assert len(expressions) > 700
    explained = 0
    for text in expressions:
        try:
            wanted = jmespath.compile(text).parsed
        except jmespath.exceptions.JMESPathError:
            with pytest.raises(jmespath.exceptions.JMESPathError):
                parse_with_spans(text)
            problem = describe_syntax_error(text)
            assert problem is not None, text
            assert "None" not in problem.message and "\n" not in problem.message, text
            assert 0 <= problem.offset <= len(text), text
            explained += 1
            continue
        ast, spans = parse_with_spans(text)
        assert ast == wanted, text
        assert all(0 <= start <= end <= len(text) for start, end in spans.values()), text
    assert explained > 80
