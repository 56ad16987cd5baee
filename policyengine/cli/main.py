"""The command line: `main(argv) -> int`, testable in-process.

Exit codes: 0 clean, 1 findings or failing tests, 2 usage error or invalid input.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from policyengine import __version__
from policyengine.cli.report import paint, problem_json, sarif, table, use_color
from policyengine.enforce.install import PolicyLayers
from policyengine.errors import PolicyEngineError, UsageError
from policyengine.packs.loader import Pack, load_packs
from policyengine.runtime.registry import Registry
from policyengine.values.problems import PackLoadError, Severity, render_problems

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so main() owns every exit code."""

    def error(self, message: str) -> Any:
        raise UsageError(f"{self.prog}: {message}", hint=f"run `{self.prog} --help`")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every verb."""
    parser = _Parser(prog="policyengine", description="Security policy between an AI agent and the tools it calls.")
    parser.add_argument("--version", action="version", version=f"policyengine {__version__}")
    parser.add_argument("--color", choices=["auto", "always", "never"], default="auto", help="colour output")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    # --color is accepted before or after the verb; SUPPRESS keeps the top-level default.
    common = _Parser(add_help=False)
    common.add_argument("--color", choices=["auto", "always", "never"], default=argparse.SUPPRESS, help="colour output")

    check = verbs.add_parser("check", parents=[common], help="load and lint packs")
    check.add_argument("packs", nargs="+", metavar="PACK", help="pack folders, in layer order")
    check.add_argument("--tools", metavar="FILE", help="tool catalog (JSON Lines or JSON) to check rules against")
    check.add_argument("--strict", action="store_true", help="warnings fail the check (exit 1)")
    check.add_argument("--format", choices=["text", "json", "sarif"], default="text")

    test = verbs.add_parser("test", parents=[common], help="run the packs' policy tests")
    test.add_argument("packs", nargs="+", metavar="PACK", help="pack folders, in layer order")
    test.add_argument("--require-tests", action="store_true", help="a pack without tests fails")
    test.add_argument("--coverage", action="store_true", help="report rules no test exercised")
    test.add_argument("--threshold", type=float, metavar="PERCENT", help="minimum rule coverage (with --coverage)")
    test.add_argument("--format", choices=["text", "json", "junit"], default="text")

    explain = verbs.add_parser("explain", parents=[common], help="explain the decision for one call")
    explain.add_argument("--pack", action="append", required=True, metavar="PACK", help="pack folder (repeat)")
    explain.add_argument("call", metavar="CALL", help="a JSON file or inline JSON: {name, arguments, result?}")
    explain.add_argument("--tools", metavar="FILE", help="tool catalog, to validate arguments")
    explain.add_argument("--format", choices=["text", "json"], default="text")

    schema = verbs.add_parser("schema", parents=[common], help="print JSON Schemas of the file formats")
    schema.add_argument("name", nargs="?", help="one of the schema names (default: all)")
    schema.add_argument("--format", choices=["json"], default="json")

    _add_dry_run(verbs, common)
    return parser


def _add_dry_run(verbs: Any, common: argparse.ArgumentParser) -> None:
    try:
        from policyengine.cli.dry_run import add_arguments
    except ImportError:  # the dry-run verb ships with its own module
        return
    add_arguments(verbs.add_parser("dry-run", parents=[common], help="evaluate recorded calls against packs"))


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the CLI; return the exit code (0 clean, 1 findings, 2 usage or invalid input)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        with contextlib.redirect_stdout(out):  # --help and --version print to the given stream
            args = build_parser().parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    except PolicyEngineError as error:
        print(f"error: {error}", file=err)
        return error.exit_code
    if args.verb is None:
        print(f"policyengine {__version__}: use one of check, test, explain, schema, dry-run (see --help)", file=out)
        return EXIT_OK
    color = use_color(out, args.color)
    handlers: dict[str, Callable[[argparse.Namespace, TextIO, bool], int]] = {
        "check": cmd_check,
        "test": cmd_test,
        "explain": cmd_explain,
        "schema": cmd_schema,
    }
    try:
        if args.verb == "dry-run":
            from policyengine.cli.dry_run import run as dry_run

            return dry_run(args, out, err, color)
        return handlers[args.verb](args, out, color)
    except PackLoadError as error:
        if getattr(args, "format", "text") == "json":
            print(json.dumps({"ok": False, "problems": [problem_json(p) for p in error.problems]}, indent=2), file=out)
        elif getattr(args, "format", "text") == "sarif":
            print(json.dumps(sarif(error.problems), indent=2), file=out)
        else:
            print(error.render(color=use_color(err, args.color)), file=err)
        return error.exit_code
    except PolicyEngineError as error:
        print(f"error: {error}", file=err)
        return error.exit_code


def _catalog(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    from policyengine.tools.catalog import load_catalog

    return load_catalog(path)


def cmd_check(args: argparse.Namespace, out: TextIO, color: bool) -> int:
    """`check`: load every pack (all-or-nothing), then lint; warnings fail only with --strict."""
    from policyengine.packs.lint import lint

    packs = load_packs(args.packs)
    problems = lint(packs, _catalog(args.tools))
    warnings = [p for p in problems if p.severity is Severity.WARNING]
    failed = bool(warnings) and args.strict
    if args.format == "json":
        print(
            json.dumps(
                {
                    "ok": not failed,
                    "packs": [_pack_json(p) for p in packs],
                    "problems": [problem_json(p) for p in problems],
                },
                indent=2,
            ),
            file=out,
        )
    elif args.format == "sarif":
        print(json.dumps(sarif(problems), indent=2), file=out)
    else:
        if problems:
            print(render_problems(problems, color=color), file=out)
        rules = sum(len(p.rules) for p in packs)
        verdict = paint("FAIL", "31;1", color) if failed else paint("ok", "32;1", color)
        print(
            f"{verdict}: {len(packs)} pack(s), {rules} rules, {len(warnings)} warning(s)"
            + (" (--strict)" if args.strict else ""),
            file=out,
        )
    return EXIT_FINDINGS if failed else EXIT_OK


def _pack_json(pack: Pack) -> dict[str, Any]:
    return {
        "name": pack.name,
        "version": pack.version,
        "digest": pack.digest,
        "path": str(pack.path),
        "rules": [r.id for r in pack.rules],
    }


def cmd_test(args: argparse.Namespace, out: TextIO, color: bool) -> int:
    """`test`: run the policy tests of every pack; failures, missing tests or low coverage exit 1."""
    from policyengine.testing.runner import discover, format_report, run_tests, to_json, to_junit

    if args.threshold is not None and not 0 <= args.threshold <= 100:
        raise UsageError(f"--threshold must be a percentage from 0 to 100, got {args.threshold:g}")
    layers = PolicyLayers.install(Registry(), args.packs)
    files = discover(layers.packs)
    report = run_tests(layers, files, require_tests=args.require_tests)
    threshold = args.threshold if args.coverage else None
    ok = report.ok(threshold)
    if args.format == "json":
        print(json.dumps(to_json(report, threshold=threshold), indent=2), file=out)
    elif args.format == "junit":
        print(to_junit(report), file=out)
    else:
        print(format_report(report, threshold=threshold), file=out)
    return EXIT_OK if ok else EXIT_FINDINGS


def _read_call(text: str) -> dict[str, Any]:
    source = text
    if not text.lstrip().startswith("{"):
        try:
            source = Path(text).read_text("utf-8")
        except UnicodeDecodeError as error:
            raise UsageError(f"call file {text} is not UTF-8 (byte {error.start})") from None
        except OSError as error:
            raise UsageError(
                f"cannot read call file {text}: {error.strerror or error}",
                hint='pass a JSON file or inline JSON such as \'{"name": "greet", "arguments": {}}\'',
            ) from None
    try:
        call = json.loads(source)
    except json.JSONDecodeError as error:
        raise UsageError(f"call is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise UsageError("a call is a JSON object with a string `name` and an object `arguments`")
    if not isinstance(call.get("arguments", {}), dict):
        raise UsageError("`arguments` must be a JSON object")
    return call


def cmd_explain(args: argparse.Namespace, out: TextIO, color: bool) -> int:
    """`explain`: stage by stage, every rule considered and what decided."""
    from policyengine.enforce.explain import explain

    call = _read_call(args.call)
    registry = Registry()
    for definition in (_catalog(args.tools) or {}).values():
        registry.register(definition)
    layers = PolicyLayers.install(registry, args.pack)
    result = call.get("result")
    explanation = asyncio.run(
        explain(
            layers,
            call["name"],
            call.get("arguments", {}),
            agent=call.get("agent", "agent"),
            call_id=call.get("call_id"),
            result=result if isinstance(result, dict) else None,
            cwd=call["cwd"] if isinstance(call.get("cwd"), str) else None,
        )
    )
    ev = explanation.evaluation
    if args.format == "json":
        print(
            json.dumps(
                {
                    "call": {"name": call["name"], "arguments": call.get("arguments", {})},
                    "decision": ev.decision.value,
                    "stage": ev.stage.value if ev.stage else None,
                    "rule": ev.source.rule_id if ev.source else None,
                    "default": bool(ev.source and not ev.source.rule_id),
                    "pack": ev.source.pack if ev.source else None,
                    "digest": ev.source.digest if ev.source else None,
                    "reason": ev.reason,
                    "considered": [c.to_json() for c in explanation.considered],
                    "post": ev.post.value if ev.post else None,
                    "value": ev.value,
                    "rewrites": [s.name for s in ev.rewrites],
                    "feedback": ev.feedback,
                },
                indent=2,
                default=str,
            ),
            file=out,
        )
        return EXIT_OK
    rows = [
        [
            c.stage.value,
            c.rule,
            c.pack or "",
            "error: " + c.error if c.error else ("matched" if c.matched else "no"),
            c.location or "",
        ]
        for c in explanation.considered
    ]
    print(f"call {call['name']} {json.dumps(call.get('arguments', {}))}", file=out)
    print(
        table(rows, ["stage", "rule", "pack", "condition", "where"], color) if rows else "no rule applies to this tool",
        file=out,
    )
    who = "-" if ev.source is None else ev.source.name if ev.source.kind.value == "default" else f"{ev.source}"
    colour = {"allow": "32;1", "ask": "33;1"}.get(ev.decision.value, "31;1")
    print(
        f"\ndecision: {paint(ev.decision.value, colour, color)} by {who}"
        + (f" at {ev.stage.value}" if ev.stage else "")
        + (f"\nreason: {ev.reason}" if ev.reason else ""),
        file=out,
    )
    if ev.post is not None:
        print(
            f"post-execute: {ev.post.value}"
            + (f" by {', '.join(s.name for s in ev.rewrites)}" if ev.rewrites else "")
            + (f"\nfeedback: {ev.feedback}" if ev.feedback else ""),
            file=out,
        )
        if ev.value is not None:
            print(f"value: {json.dumps(ev.value, default=str)}", file=out)
    return EXIT_OK


def cmd_schema(args: argparse.Namespace, out: TextIO, _color: bool) -> int:
    """`schema`: the JSON Schemas of rule files, manifests, tests and recorded calls."""
    from policyengine.tools.json_schema import export_schemas

    schemas = export_schemas()
    if args.name is not None:
        if args.name not in schemas:
            raise UsageError(f"unknown schema {args.name!r}", hint=f"choose one of: {', '.join(sorted(schemas))}")
        print(json.dumps(schemas[args.name], indent=2), file=out)
    else:
        print(json.dumps(schemas, indent=2), file=out)
    return EXIT_OK
