"""The dry-run verb: options, progress, the summary printed, the exit code that gates CI.

With `--spellings` it spells every recorded call instead (docs/spellings.md) and fails on any
spelling decided more weakly than the call as recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from policyengine.cli.common import EXIT_FINDINGS, EXIT_OK, PACK_HELP, resolve_pack
from policyengine.cli.report import paint, table
from policyengine.cli.test import add_spelling_arguments, check_spelling_arguments, declared_roles, print_spellings
from policyengine.dryrun.engine import (
    HIT_STAGES,
    MAX_LINE_BYTES,
    Batch,
    Engine,
    Setup,
    Summary,
    evaluate_all,
    parse_line,
    read_lines,
)
from policyengine.errors import UsageError
from policyengine.values.problems import Location

if TYPE_CHECKING:
    from policyengine.testing.spellings import SpellingReport

NAME = "dry-run"
HELP = "evaluate recorded calls against packs"
FAIL_ON = ("deny", "ask", "changed", "invalid", "error")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The dry-run verb's options."""
    parser.add_argument("calls", metavar="CALLS.jsonl", help="recorded calls, one JSON object per line")
    parser.add_argument("--pack", action="append", required=True, type=resolve_pack, metavar="PACK", help=PACK_HELP)
    parser.add_argument(
        "--against", action="append", type=resolve_pack, metavar="PACK", help="a second pack set to compare with"
    )
    parser.add_argument("--output", metavar="OUT.jsonl", help="write one record per input line here")
    parser.add_argument(
        "--tools", metavar="FILE", help="tool catalog: validate arguments against it (default: the packs')"
    )
    parser.add_argument(
        "--unknown-tools",
        choices=["invalid", "decide"],
        default="invalid",
        help="with a catalog, a tool it lacks is invalid (default), or decided without validation "
        "(as the Claude Code hook decides MCP tools)",
    )
    parser.add_argument(
        "--cwd", metavar="DIR", help="working directory of calls that record none (default: the pack's `cwd:`)"
    )
    parser.add_argument(
        "--format", choices=["table", "json", "junit", "sarif"], default="table", help="junit, sarif: with --spellings"
    )
    parser.add_argument("--fail-on", default="", metavar="LIST", help=f"exit 1 on any of: {', '.join(FAIL_ON)}")
    parser.add_argument("--workers", type=int, default=0, metavar="N", help="processes (default: every core)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="run on a Dask cluster ('local' starts one)")
    parser.add_argument("--max-line-bytes", type=int, default=MAX_LINE_BYTES, help=argparse.SUPPRESS)
    add_spelling_arguments(parser)


class Progress:
    """A progress bar on a terminal, shown only once a run lasts more than a second."""

    def __init__(self, total: int, stream: TextIO, enabled: bool) -> None:
        self.total, self.stream, self.enabled = total, stream, enabled
        self.done, self.start, self.shown = 0, time.monotonic(), False

    def advance(self, n: int) -> None:
        """Count n more lines."""
        self.done += n
        if not self.enabled or time.monotonic() - self.start < 1.0:
            return
        self.shown = True
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        rate = self.done / max(time.monotonic() - self.start, 1e-9)
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done:,}/{self.total:,} {rate:,.0f}/s")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """The dry-run verb: evaluate, write records, print the summary, gate on --fail-on."""
    fail_on = {f.strip() for f in args.fail_on.split(",") if f.strip()}
    unknown = fail_on - set(FAIL_ON)
    if unknown:
        raise UsageError(f"--fail-on: unknown {', '.join(sorted(unknown))}", hint=f"use any of {', '.join(FAIL_ON)}")
    if "changed" in fail_on and not args.against:
        raise UsageError("--fail-on changed needs --against")
    if args.spellings:
        check_spelling_arguments(args)
        if args.against or args.output or fail_on:
            raise UsageError("--spellings reports spellings only: drop --against, --output and --fail-on")
    elif args.format in ("junit", "sarif"):
        raise UsageError(f"--format {args.format} reports spellings: add --spellings")
    setup = Setup(
        tuple(args.pack), tuple(args.against or ()), args.tools, args.max_line_bytes, args.cwd, args.unknown_tools
    )
    lines = read_lines(args.calls)
    engine = Engine(setup)  # loads (and checks) every pack once, before any work starts
    if args.spellings:
        return print_spellings(_spell_calls(engine, lines, args), args.format, out)
    summary = Summary(engine.rule_ids, engine.stages)
    progress = Progress(len(lines), err, bool(getattr(err, "isatty", lambda: False)()))
    batches = _batches(engine, lines, args)
    try:
        sink = open(args.output, "w", encoding="utf-8") if args.output else None  # noqa: SIM115
    except OSError as error:
        raise UsageError(f"cannot write --output {args.output}: {error.strerror or error}") from None
    try:
        for batch in batches:
            summary.merge(batch.summary)
            if sink is not None:
                sink.write(batch.text)
            progress.advance(batch.size)
    finally:
        progress.close()
        if sink is not None:
            sink.close()
    if args.format == "json":
        print(json.dumps(summary.to_json(), indent=2), file=out)
    else:
        print(render_summary(summary, color), file=out)
    hit = ({d for d in fail_on if summary.decisions.get(d)} | ({"changed"} if summary.changed else set())) & fail_on
    if hit:
        print(f"failing: found {', '.join(sorted(hit))} (--fail-on {args.fail_on})", file=err)
        return EXIT_FINDINGS
    return EXIT_OK


# One hit table per part of the pipeline: (heading, stages, what a hit counts).
_HIT_TABLES = (
    ("pre-execute and guard rules", ("pre-execute", "guard"), "decided"),
    ("execute rules", ("execute",), "would wrap"),
    ("post-execute rules", ("post-execute",), "results"),
)


def render_summary(summary: Summary, color: bool) -> str:
    """The summary as tables for a person."""
    data = summary.to_json()
    parts = [f"{summary.calls:,} calls"]
    parts.append(table([[d, f"{n:,}"] for d, n in sorted(summary.decisions.items())], ["decision", "calls"], color))
    if summary.post:
        parts.append(table([[p, f"{n:,}"] for p, n in sorted(summary.post.items())], ["post-execute", "calls"], color))
    parts += _hits_by_stage(summary, data, color)
    if data.get("monitored") or data.get("against_monitored"):
        from policyengine.cli.monitor_hits import hits_table

        if data.get("monitored"):
            parts.append(hits_table(data["monitored"], color))
        if data.get("against_monitored"):
            parts.append("--against:\n" + hits_table(data["against_monitored"], color))
    if summary.reasons:
        parts.append(
            table([[f"{n:,}", r[:100]] for r, n in summary.reasons.most_common(5)], ["calls", "top reasons"], color)
        )
    if summary.changed:
        rows = [
            [rule, f"{len(lines):,}", ", ".join(map(str, lines[:10])) + (" ..." if len(lines) > 10 else "")]
            for rule, lines in sorted(summary.changed.items())
        ]
        parts.append(paint(f"{data['changed_calls']:,} calls changed", "33;1", color))
        parts.append(table(rows, ["rule", "changed", "lines"], color))
    return "\n\n".join(parts)


def _hits_by_stage(summary: Summary, data: dict[str, Any], color: bool) -> list[str]:
    """One hit table per part of the pipeline, each followed by its rules never hit."""
    parts = []
    never = set(data["never_hit"])
    for heading, stages, counted in _HIT_TABLES:
        hits = [(rule, stage, n) for stage in stages for rule, n in data["hits_by_stage"][stage].items()]
        hits.sort(key=lambda hit: -hit[2])  # stable: equal counts keep the summary's order
        mixed = len(stages) > 1  # pre-execute rules and guards share a table: say which is which
        if hits:
            rows = [[rule, *([stage] if mixed else []), f"{n:,}"] for rule, stage, n in hits]
            parts.append(table(rows, [heading, *(["stage"] if mixed else []), counted], color))
        idle = [r for r in summary.rule_ids if r in never and summary.stages.get(r) in stages]
        if idle:
            parts.append(f"{heading} never hit: " + ", ".join(idle))
    if data["not_exercised"]:
        parts.append(
            "post-execute rules not exercised: no recorded results reached post-execute (record calls with "
            "their `result` to try them): " + ", ".join(data["not_exercised"])
        )
    unstaged = [r for r in data["never_hit"] if summary.stages.get(r) not in HIT_STAGES]
    if unstaged:  # a Summary built without the rules' stages
        parts.append("rules never hit: " + ", ".join(unstaged))
    return parts


def _batches(engine: Engine, lines: Sequence[tuple[int, bytes]], args: argparse.Namespace) -> Iterator[Batch]:
    if args.scheduler:
        from policyengine.dryrun.dask_executor import evaluate_on_dask

        yield from evaluate_on_dask(engine.setup, lines, args.scheduler)
        return
    yield from evaluate_all(engine, lines, args.workers or os.cpu_count() or 1)


def _spell_calls(engine: Engine, lines: Sequence[tuple[int, bytes]], args: argparse.Namespace) -> SpellingReport:
    """Every recorded call and its spellings, each decided as a line of the dry-run (in this process)."""
    from policyengine.testing.spellings import Call, Subject, Verdict, check

    subjects = []
    for number, raw in lines:
        call, _problem = parse_line(raw, engine.setup.max_line_bytes)
        if call is None:
            continue  # a line the dry-run cannot read has nothing to spell
        cwd, result = call.get("cwd"), call.get("result")
        subjects.append(
            Subject(
                f"{args.calls}:{number}" + (f" {call['call_id']}" if call.get("call_id") else ""),
                Call(
                    call["name"],
                    call.get("arguments", {}),
                    cwd if isinstance(cwd, str) else None,
                    result if isinstance(result, dict) else None,
                    str(call.get("agent", "agent")),
                    str(call.get("call_id", "")),
                ),
                Location(args.calls, number, 1),
            )
        )

    def decide(call: Call) -> Verdict:
        line: dict[str, Any] = {"name": call.name, "arguments": call.arguments, "agent": call.agent}
        line |= {"call_id": call.call_id} if call.call_id else {}
        line |= {"cwd": call.cwd} if call.cwd is not None else {}
        line |= {"result": call.result} if call.result is not None else {}
        record = engine.record(0, json.dumps(line, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        rule = record.get("rule") or ("default" if record.get("default") else None)
        rewrites = tuple(record.get("rewrites", ()))
        return Verdict(record["decision"], rule, record.get("post"), record.get("value"), rewrites)

    return check(
        subjects,
        decide,
        roles=declared_roles(engine.main.registry.tools),
        seed=args.seed,
        max_per_value=args.max_spellings,
        budget=args.spelling_budget,
    )
