"""`explain --trace`: each condition evaluated node by node, equal to the compiled condition, and why it failed.

The trace runs the rule's AST through the fallback interpreter, recording every node; its final
value must be exactly what the compiled closure returns. That is checked on every rule of the
rule-case corpus (tests/cases/*.yaml) against every call of its group, and on every rule of the
shipped packs against every recorded BFCL call.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from policyengine import PolicyLayers, Registry, freeze
from policyengine.cli.main import main
from policyengine.enforce.evaluate import call_for
from policyengine.enforce.explain import explain
from policyengine.language.expressions import Expression, compile_expression
from policyengine.language.trace import ExpressionTrace, Step, compact, trace
from policyengine.packs.rules import post_document
from policyengine.values.results import Stage
from support import scaled
from test_rule_cases import _case_files, _read, _write_pack, same_json

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "policies" / "baseline"
BFCL = ROOT / "policies" / "bfcl"
README = ROOT / "README.md"

DOCUMENT = freeze(
    {
        "name": "place_order",
        "arguments": {"order_type": "Buy", "symbol": "AAPL", "price": 227.16, "amount": 100, "items": [{"x": 1}]},
        "agent": "agent",
        "call_id": "c1",
    }
)


def cli(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv] + ["--color", "never"], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def compiled(text: str, lists: dict[str, Any] | None = None) -> Expression:
    problems: list[tuple[Any, ...]] = []
    expression = compile_expression(text, lists or {}, lambda *p: problems.append(p))
    assert expression is not None, problems
    return expression


def outcome(search: Any, document: Any) -> tuple[str, Any]:
    """("value", v) or ("error", "Type: message"): what evaluating gave."""
    try:
        return "value", search(document)
    except Exception as error:
        return "error", f"{type(error).__name__}: {error}"


def assert_same(expression: Expression, document: Any, where: str) -> ExpressionTrace:
    """The trace ends with exactly what the compiled condition returns (or raises)."""
    traced = trace(expression, document)
    kind, wanted = outcome(expression.search, document)
    if kind == "error":
        assert traced.error is not None and f"{type(traced.error).__name__}: {traced.error}" == wanted, where
    else:
        assert traced.error is None, f"{where}: {traced.error}"
        assert same_json(traced.value, wanted) or traced.value == wanted, f"{where}: {traced.value!r} != {wanted!r}"
    assert traced.matched == (kind == "value" and expression.test(document)), where
    for step in steps(traced.root):  # each step is its own text of the expression
        if step.span is not None:
            assert expression.text[step.span[0] : step.span[1]] == step.text, where
        else:
            assert step.kind in ("element", "index", "slice", "flatten", "index_expression", "key_val_pair"), where
    return traced


def steps(step: Step) -> list[Step]:
    out = [step]
    for child in step.children:
        out.extend(steps(child))
    return out


# -- the README's walkthrough ----------------------------------------------------------------------


def _readme_call() -> str:
    match = re.search(r"policyengine explain --pack policies/bfcl '(\{.*\})'", README.read_text("utf-8"))
    assert match, "the README's walkthrough has an explain command"
    return match.group(1)


def _readme_sample() -> list[str]:
    text = README.read_text("utf-8")
    match = re.search(r"```text\n(trace:\n.*?)```", text, re.S)
    assert match, "the README shows a sample of explain --trace"
    return match.group(1).splitlines()


@pytest.fixture(scope="module")
def walkthrough_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """policies/bfcl with the walkthrough's edit: approval above 20,000 instead of 25,000."""
    pack = tmp_path_factory.mktemp("walkthrough") / "bfcl"
    shutil.copytree(BFCL, pack)
    gate = pack / "gate.yaml"
    text = gate.read_text("utf-8")
    assert text.count("`25000`") == 1
    gate.write_text(text.replace("`25000`", "`20000`"), "utf-8")
    return pack


def test_trace_on_the_readme_example_shows_every_sub_expression_value(walkthrough_pack: Path) -> None:
    code, out, err = cli("explain", "--pack", walkthrough_pack, "--trace", _readme_call())
    assert code == 0, err
    lines = out.splitlines()
    # The README's sample is the output, line for line and in order.
    sample = _readme_sample()
    start = lines.index(sample[0])
    assert lines[start : start + 1] == ["trace:"]
    found = [line for line in lines[start:] if line in sample]
    assert found[: len(sample)] == sample
    # Every sub-expression of the rule that asks, with its value.
    for line in (
        "  product([arguments.price, arguments.amount]) > `20000`  => true",
        "    product([arguments.price, arguments.amount])  => 22716.0",
        "      [arguments.price, arguments.amount]  => [227.16, 100]",
        "        arguments.price  => 227.16",
        "        arguments.amount  => 100",
        "    `20000`  => 20000",
    ):
        assert line in lines
    # A rule that did not match says why.
    assert "  why: product([arguments.price, arguments.amount]) > `100000` is false (22716.0 > 100000)" in lines
    assert "execute trading-deadline: matched (no condition)" in lines


def test_trace_on_the_readme_example_as_json(walkthrough_pack: Path) -> None:
    code, out, err = cli("explain", "--pack", walkthrough_pack, "--trace", "--format", "json", _readme_call())
    assert code == 0, err
    data = json.loads(out)
    assert data["decision"] == "ask" and data["rule"] == "ask-large-orders"
    by_rule = {c["rule"]: c for c in data["considered"]}
    traced = by_rule["ask-large-orders"]["trace"]
    assert traced["matched"] is True and traced["why"] is None and traced["agrees"] is True
    tree = traced["tree"]
    assert (tree["kind"], tree["text"], tree["value"], tree["span"]) == (
        "comparator",
        "product([arguments.price, arguments.amount]) > `20000`",
        True,
        [0, 54],
    )
    product, limit = tree["children"]
    assert (product["text"], product["value"]) == ("product([arguments.price, arguments.amount])", 22716.0)
    assert [(c["text"], c["value"]) for c in product["children"][0]["children"]] == [
        ("arguments.price", 227.16),
        ("arguments.amount", 100),
    ]
    assert (limit["text"], limit["value"]) == ("`20000`", 20000)
    over = by_rule["deny-orders-over-limit"]["trace"]
    assert over["matched"] is False and "22716.0 > 100000" in over["why"]
    assert "trace" not in by_rule["trading-deadline"]  # no condition, nothing to trace


def test_without_trace_the_output_is_unchanged(walkthrough_pack: Path) -> None:
    code, out, _ = cli("explain", "--pack", walkthrough_pack, _readme_call())
    assert code == 0 and "trace:" not in out and "=>" not in out
    code, out, _ = cli("explain", "--pack", walkthrough_pack, "--format", "json", _readme_call())
    assert all("trace" not in c for c in json.loads(out)["considered"])


def test_trace_of_post_execute_rules_reads_the_result_as_earlier_rules_left_it(tmp_path: Path) -> None:
    post = "post-execute"
    first = {
        "rules": [
            {
                "id": "redact-password",
                "stage": post,
                "tools": ["http_get"],
                "when": "result.value.password != null",
                "redact": [{"keys": ["password"]}],
            },
            {
                "id": "block-a-leak",
                "stage": post,
                "tools": ["http_get"],
                "when": "contains(to_string(result.value), 'hunter2')",
                "block": "leak",
            },
        ]
    }
    second = {
        "rules": [
            {
                "id": "say-redacted",
                "stage": post,
                "tools": ["http_get"],
                "when": "result.value.password == '[REDACTED]'",
                "content": "{result.value.user}",
            }
        ]
    }
    _write_pack(tmp_path / "org", {"files": {"results.yaml": first}}, "org")
    _write_pack(tmp_path / "team", {"files": {"results.yaml": second}}, "team")
    call = {
        "name": "http_get",
        "arguments": {"url": "https://api.example.com/me"},
        "result": {"value": {"user": "ada", "password": "hunter2"}},
    }
    code, out, err = cli(
        "explain",
        "--pack",
        tmp_path / "org",
        "--pack",
        tmp_path / "team",
        "--trace",
        "--format",
        "json",
        json.dumps(call),
    )
    assert code == 0, err
    considered = {c["rule"]: c for c in json.loads(out)["considered"]}
    assert [considered[r]["matched"] for r in ("redact-password", "block-a-leak", "say-redacted")] == [
        True,
        False,
        True,
    ]
    assert all(c["trace"]["agrees"] for c in considered.values())
    # Each rule read the value as the rules before it left it: the redaction, then the next layer.
    leak = considered["block-a-leak"]["trace"]["tree"]
    assert leak["children"][0]["value"] == '{"user":"ada","password":"[REDACTED]"}'
    assert considered["say-redacted"]["trace"]["tree"]["children"][0]["value"] == "[REDACTED]"


# -- the trace equals the compiled condition -------------------------------------------------------


def _corpus_groups() -> list[tuple[str, int]]:
    return [(path.name, i) for path in _case_files() for i, _ in enumerate(_read(path))]


@pytest.mark.parametrize(("file", "index"), _corpus_groups(), ids=lambda v: str(v))
def test_trace_equals_the_compiled_condition_on_the_rule_case_corpus(file: str, index: int, tmp_path: Path) -> None:
    group = _read(ROOT / "tests" / "cases" / file)[index]
    specs = group["layers"] if "layers" in group else [group["pack"]]
    folders = []
    for i, spec in enumerate(specs):
        _write_pack(tmp_path / f"layer{i}", spec, f"layer-{i}")
        folders.append(tmp_path / f"layer{i}")
    layers = PolicyLayers.install(Registry(), folders)
    rules = [rule for pack in layers.packs for rule in pack.rules if rule.when is not None]
    for case in group["cases"]:
        call = case["call"]
        document = call_for(
            layers.registry,
            call["name"],
            freeze(call.get("arguments", {})),
            call.get("agent", "agent"),
            call.get("call_id", "c"),
            None,
        ).document
        result = case.get("result")
        post = post_document(document, freeze(result.get("value")), freeze(result.get("content"))) if result else None
        for rule in rules:
            doc = post if rule.stage is Stage.POST_EXECUTE and post is not None else document
            assert rule.when is not None
            assert_same(rule.when, doc, f"{file}:{index} {rule.id} on {call}")
        # And explain's own traces end where the evaluation did, post-execute rules included.
        explanation = asyncio.run(
            explain(
                layers,
                call["name"],
                call.get("arguments", {}),
                agent=call.get("agent", "agent"),
                call_id=call.get("call_id"),
                result=result,
                trace=True,
            )
        )
        for considered in explanation.considered:
            assert considered.trace_agrees, f"{file}:{index} {considered.rule} on {call}"


def test_trace_equals_the_compiled_condition_on_the_shipped_packs_and_bfcl_calls(
    bfcl_calls: tuple[dict[str, Any], ...],
) -> None:
    registry = Registry()
    layers = PolicyLayers.install(registry, [BASELINE, BFCL])
    rules = [rule for pack in layers.packs for rule in pack.rules if rule.when is not None]
    assert len(rules) >= 12
    traced = 0
    # Every fourth call in the suite (every call from POLICYENGINE_TEST_SCALE=4): ~290 calls x 14 rules.
    for recorded in bfcl_calls[:: max(1, 4 // scaled(1))]:
        document = call_for(
            registry, recorded["name"], freeze(recorded.get("arguments", {})), "agent", recorded["call_id"], None
        ).document
        for rule in rules:  # every rule on every call, not only the calls of its tools: more shapes
            assert rule.when is not None
            assert_same(rule.when, document, f"{rule.id} on {recorded['call_id']}")
            traced += 1
    assert traced >= 290 * 12


# -- what the tree shows -----------------------------------------------------------------------------


def test_every_step_shows_its_own_text_from_the_expression() -> None:
    text = "(arguments.items[?x == `1`] | length(@) > `0`) && !contains(keys(arguments), 'nope')"
    traced = assert_same(compiled(text), DOCUMENT, text)
    for step in steps(traced.root):
        if step.kind == "element":
            continue
        assert step.span is not None, step
        assert text[step.span[0] : step.span[1]] == step.text
    assert [s.text for s in traced.root.children] == [
        "(arguments.items[?x == `1`] | length(@) > `0`)",
        "!contains(keys(arguments), 'nope')",
    ]


def test_a_named_list_shows_as_written_with_its_value() -> None:
    traced = assert_same(
        compiled("contains(lists.symbols[0:2], arguments.symbol)", {"symbols": ["AAPL", "MSFT"]}), DOCUMENT, ""
    )
    (function,) = [s for s in steps(traced.root) if s.kind == "function_expression"]
    texts = {s.text: s.value for s in steps(traced.root)}
    assert function.value is True
    assert texts["lists.symbols"] == ["AAPL", "MSFT"]
    assert texts["arguments.symbol"] == "AAPL"


def test_each_element_a_filter_tested_is_shown_up_to_a_limit() -> None:
    document = freeze({"arguments": {"n": list(range(25))}})
    traced = trace(compiled("arguments.n[?@ > `30`]"), document, max_elements=3)
    (filtered,) = [s for s in steps(traced.root) if s.kind == "filter_projection"]
    elements = [c for c in filtered.children if c.kind == "element"]
    assert [e.value for e in elements] == [0, 1, 2]
    assert filtered.omitted == 22
    assert "... 22 more element(s)" in "\n".join(traced.lines())
    assert traced.why() == "arguments.n[?@ > `30`] is []: none of the 25 element(s) of arguments.n passes the filter"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            "arguments.price > `1000` && arguments.symbol == 'AAPL'",
            "arguments.price > `1000` is false (227.16 > 1000)",
        ),
        (
            "arguments.path == 'a.txt'",
            'arguments.path == \'a.txt\' is false (null == "a.txt"); arguments has no field "path"',
        ),
        ("nothing.here", 'nothing.here is null: the call has no field "nothing"'),
        ("arguments.items[3].x", "arguments.items[3].x is null: arguments.items has no element [3]: it has 1"),
        (
            "arguments.price.x",
            'arguments.price.x is null: arguments.price is a number 227.16, not an object, so it has no field "x"',
        ),
        (
            "contains(['MSFT', 'IBM'], arguments.symbol)",
            "contains(['MSFT', 'IBM'], arguments.symbol) is false (arguments.symbol = \"AAPL\")",
        ),
        (
            "!contains(keys(arguments), 'symbol')",
            "!contains(keys(arguments), 'symbol') is false: contains(keys(arguments), 'symbol') is true",
        ),
        (
            "arguments.a || arguments.b",
            'arguments.a is null: arguments has no field "a"; arguments.b is null: arguments has no field "b"',
        ),
        (
            "arguments.items[?x > `5`] | length(@) > `0`",
            "arguments.items[?x > `5`] is []: none of the 1 element(s) of arguments.items passes the filter, "
            "so length(@) > `0` is false (0 > 0)",
        ),
        (
            "arguments.symbol >= `1`",
            "arguments.symbol >= `1` raised OrderingError: ordering comparison `>=` needs two numbers or two "
            "strings, got string and number",
        ),
        (
            "length(arguments.items[?x > `0`].x) > `0` && lower(arguments.price) == 'x'",
            "lower(arguments.price) raised JMESPathTypeError: In function lower(), invalid type for value: 227.16, "
            "expected one of: ['string'], received: \"number\"",
        ),
    ],
)
def test_why_names_the_sub_expression_that_made_the_condition_fail(text: str, why: str) -> None:
    traced = assert_same(compiled(text), DOCUMENT, text)
    assert not traced.matched
    assert traced.why() == why


def test_the_side_a_short_circuit_skipped_is_shown_as_not_evaluated() -> None:
    traced = assert_same(compiled("arguments.price > `1000` && arguments.symbol == 'AAPL'"), DOCUMENT, "")
    assert traced.lines()[-1] == "  arguments.symbol == 'AAPL'  (not evaluated)"
    assert traced.root.to_json()["children"][1] == {
        "text": "arguments.symbol == 'AAPL'",
        "kind": "comparator",
        "span": [28, 54],
        "evaluated": False,
    }


def test_a_matching_condition_has_no_why() -> None:
    assert assert_same(compiled("arguments.symbol == 'AAPL'"), DOCUMENT, "").why() is None


def test_an_error_is_shown_where_it_was_raised() -> None:
    traced = assert_same(compiled("arguments.amount > `1` && arguments.items >= `1`"), DOCUMENT, "")
    lines = traced.lines()
    assert lines[0].startswith("arguments.amount > `1` && arguments.items >= `1`  => raised OrderingError")
    assert any(
        line.startswith("  arguments.items >= `1`  => raised OrderingError: ordering comparison `>=` needs two numbers")
        for line in lines
    )


def test_long_values_are_cut_with_an_ellipsis_and_their_length() -> None:
    document = freeze({"arguments": {"text": "x" * 500}})
    traced = trace(compiled("arguments.text == 'y'"), document)
    line = next(line for line in traced.lines() if line.lstrip().startswith("arguments.text  =>"))
    assert line.endswith("… (502 chars)") and len(line) < 120
    assert compact("x" * 500, 20) == '"xxxxxxxxxxxxxxxxxx… (502 chars)'
    assert compact({"a": [1, 2]}) == '{"a": [1, 2]}'
    tree = traced.to_json(limit=100)
    (left, _right) = tree["tree"]["children"]
    assert left["value_length"] == 502 and "value" not in left


def test_a_function_that_evaluates_an_expression_reference_shows_each_evaluation() -> None:
    traced = assert_same(compiled("max_by(arguments.items, &x).x"), DOCUMENT, "")
    texts = [s.text for s in steps(traced.root)]
    assert "&x" in texts and "[0]" in texts
    assert "<&expression>" in "\n".join(traced.lines())


def test_a_trace_of_the_corpus_reaches_its_expression_depth_limit_gracefully() -> None:
    document = freeze({"arguments": {"n": list(range(2000))}})
    traced = trace(compiled("arguments.n[?@ > `5000`] | length(@) > `0`"), document, max_steps=100)
    assert traced.truncated and traced.value is False
    assert traced.lines()[-1].startswith("... (the evaluation went on")
