"""Reports of a policy-test run and of a spelling run: plain text for a terminal, JSON, JUnit XML and SARIF for CI."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from policyengine.testing.runner import MISMATCH, TestReport, TestResult
from policyengine.testing.sarif import sarif_location, sarif_log
from policyengine.testing.spellings import Finding, SpellingReport, Verdict

__all__ = [
    "WEAKER_SPELLING",
    "format_report",
    "format_spellings",
    "spellings_json",
    "spellings_junit",
    "spellings_sarif",
    "to_json",
    "to_junit",
]

WEAKER_SPELLING = "PT006"
"""The code of a spelling decided more weakly than its original."""

# Characters XML 1.0 cannot hold at all, even escaped.
_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """Text safe for XML 1.0: characters it cannot carry are written as \\uXXXX."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _seconds(value: float) -> str:
    return f"{value:.6f}"


def to_junit(report: TestReport) -> str:
    """JUnit XML: one testsuite per test file, one testcase per test, failures with expected vs got."""
    root = ET.Element(
        "testsuites",
        name="policyengine policy tests",
        tests=str(report.total + len(report.failures)),
        failures=str(report.failed + len(report.failures)),
        errors="0",
        skipped=str(report.skipped),
        time=_seconds(report.duration),
    )
    coverage = {p.name: p.coverage for p in report.packs}
    by_file: dict[str, list[TestResult]] = {}
    for result in report.results:
        by_file.setdefault(result.file, []).append(result)
    for file, results in by_file.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=_xml(file),
            tests=str(len(results)),
            failures=str(sum(1 for r in results if not r.passed and not r.skipped)),
            errors="0",
            skipped=str(sum(1 for r in results if r.skipped)),
            time=_seconds(sum(r.duration for r in results)),
            file=_xml(file),
        )
        pack = results[0].pack
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="pack", value=_xml(pack))
        if pack in coverage:
            ET.SubElement(properties, "property", name="pack.coverage", value=f"{coverage[pack]:.1f}")
        for result in results:
            case = ET.SubElement(
                suite,
                "testcase",
                name=_xml(result.name),
                classname=_xml(f"{pack}.{Path(file).stem}"),
                file=_xml(file),
                line=str(result.line),
                time=_seconds(result.duration),
            )
            if result.skipped:
                ET.SubElement(case, "skipped", message=_xml(result.failures[0].message if result.failures else ""))
            elif not result.passed:
                failure = ET.SubElement(
                    case,
                    "failure",
                    message=_xml(result.failures[0].message if result.failures else "failed"),
                    type=result.failures[0].code if result.failures else MISMATCH,
                )
                failure.text = _xml("\n".join(result.messages))
    if report.failures:
        suite = ET.SubElement(
            root,
            "testsuite",
            name="packs",
            tests=str(len(report.failures)),
            failures=str(len(report.failures)),
            errors="0",
            skipped="0",
            time=_seconds(0.0),
        )
        for run_failure in report.failures:
            file = run_failure.location.file if run_failure.location else ""
            case = ET.SubElement(suite, "testcase", name=_xml(run_failure.message), classname="packs", file=_xml(file))
            element = ET.SubElement(case, "failure", message=_xml(run_failure.message), type=run_failure.code)
            element.text = _xml(str(run_failure))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def to_json(report: TestReport, *, threshold: float | None = None) -> dict[str, Any]:
    """The report as JSON-ready data (ok is computed with `threshold`)."""
    return {
        "ok": report.ok(threshold),
        "ran": report.ran,
        "threshold": threshold,
        "summary": {
            "tests": report.total,
            "passed": report.passed,
            "failed": report.failed,
            "skipped": report.skipped,
            "coverage": report.coverage,
            "duration": report.duration,
        },
        "failures": [f.to_json() for f in report.failures],
        "packs": [p.to_json() for p in report.packs],
        "results": [r.to_json() for r in report.results],
    }


def format_report(report: TestReport, *, threshold: float | None = None) -> str:
    """A plain-text report for a terminal: failures, per-pack totals, unexercised rules, verdict."""
    lines: list[str] = []
    for result in report.results:
        if result.passed:
            continue
        lines.append(f"{result.status.upper()} {result.file}:{result.line}: {result.name}")
        lines.extend(f"  {message}" for message in result.messages)
    lines.extend(f"FAILED {failure}" for failure in report.failures)
    for pack in report.packs:
        lines.append(
            f"pack {pack.name}: {pack.passed}/{pack.tests} passed, {pack.failed} failed, {pack.skipped} not run; "
            f"coverage {pack.coverage:.1f}% ({len(pack.exercised)}/{pack.rules} rules)"
        )
        lines.extend(f"  not exercised: {r.id} ({r.stage}) at {r.location}" for r in pack.unexercised)
    verdict = "ok" if report.ok(threshold) else "FAILED"
    bar = f", threshold {threshold:g}%" if threshold is not None else ""
    lines.append(
        f"{verdict}: {report.passed} passed, {report.failed} failed, {report.skipped} not run; "
        f"coverage {report.coverage:.1f}%{bar}"
    )
    return "\n".join(lines)


# -- spellings ----------------------------------------------------------------------------------


def _decided(verdict: Verdict) -> str:
    return verdict.decision + (f"/{verdict.post}" if verdict.post else "")


def _finding_message(finding: Finding) -> str:
    spelling = finding.spelling
    missed = finding.missed_by or "nothing"
    return (
        f"{spelling.kind} spelling {spelling.mutator} of {spelling.where} "
        f"({spelling.original!r} -> {spelling.spelled!r}) "
        f"is decided {_decided(finding.spelled)} (rule {finding.spelled.rule or 'none'}), "
        f"the original {_decided(finding.original)} by {missed}, which misses this spelling"
    )


def _spelling_totals(report: SpellingReport) -> dict[str, Any]:
    return {
        "subjects": report.subjects,
        "spellings": report.spellings,
        "weaker": len(report.weaker),
        "not_compared": len(report.not_compared),
        "seed": report.seed,
        "max_per_value": report.max_per_value,
        "budget": report.budget,
        "budget_exhausted": report.exhausted,
        "duration": report.duration,
    }


def spellings_json(report: SpellingReport) -> dict[str, Any]:
    """A spelling run as JSON-ready data."""
    return {
        "ok": report.ok,
        "summary": _spelling_totals(report),
        "weaker": [f.to_json() for f in report.weaker],
        "not_compared": [f.to_json() for f in report.not_compared],
    }


def _cell(text: str, limit: int = 60) -> str:
    shown = ascii(text)[1:-1] if not text.isprintable() else text
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def format_spellings(report: SpellingReport) -> str:
    """A plain-text table of the weaker spellings and the verdict."""
    lines: list[str] = []
    if report.weaker:
        headers = ["original", "spelling", "value", "original decision", "spelled decision", "missed by"]
        rows = [
            [
                f.subject.label,
                f"{f.spelling.kind}/{f.spelling.mutator}",
                _cell(f"{f.spelling.where}={f.spelling.spelled}"),
                _decided(f.original),
                _decided(f.spelled),
                f.missed_by or "-",
            ]
            for f in report.weaker
        ]
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
        for row in [headers, ["-" * w for w in widths], *rows]:
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    if report.not_compared:
        lines.append(
            f"{len(report.not_compared)} spellings not compared "
            "(invalid or error on one side; --format json lists them)"
        )
    if report.exhausted:
        lines.append(f"budget of {report.budget} spellings spent: not every call was spelled (raise --spelling-budget)")
    verdict = "ok" if report.ok else "FAILED"
    lines.append(
        f"{verdict}: {len(report.weaker)} weaker of {report.spellings} spellings of {report.subjects} calls "
        f"(seed {report.seed}, at most {report.max_per_value} per value)"
    )
    return "\n".join(lines)


def spellings_junit(report: SpellingReport) -> str:
    """JUnit XML: one testcase per original with a weaker spelling, each spelling a failure line."""
    by_subject: dict[str, list[Finding]] = {}
    for finding in report.weaker:
        by_subject.setdefault(finding.subject.label, []).append(finding)
    totals = {
        "tests": str(max(report.subjects, len(by_subject))),
        "failures": str(len(by_subject)),
        "errors": "0",
        "skipped": "0",
        "time": _seconds(report.duration),
    }
    root = ET.Element("testsuites", {"name": "policyengine spellings", **totals})
    suite = ET.SubElement(root, "testsuite", {"name": "spellings", **totals})
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="seed", value=str(report.seed))
    ET.SubElement(properties, "property", name="spellings", value=str(report.spellings))
    for label, findings in by_subject.items():
        location = findings[0].subject.location
        attributes = {"name": _xml(label), "classname": "spellings"}
        if location is not None:
            attributes |= {"file": _xml(location.file), "line": str(location.line)}
        case = ET.SubElement(suite, "testcase", attributes)
        failure = ET.SubElement(case, "failure", message=_xml(_finding_message(findings[0])), type=WEAKER_SPELLING)
        failure.text = _xml("\n".join(_finding_message(f) for f in findings))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def spellings_sarif(report: SpellingReport) -> dict[str, Any]:
    """A SARIF 2.1.0 log: each weaker spelling a result at its test (or nowhere, for a recorded call)."""
    results = []
    for finding in report.weaker:
        result: dict[str, Any] = {
            "ruleId": WEAKER_SPELLING,
            "level": "error",
            "message": {"text": f"{finding.subject.label}: {_finding_message(finding)}"},
            "properties": {"policyRule": finding.missed_by, **finding.to_json()},
        }
        location = finding.subject.location
        if location is not None:
            uri = location.file.replace("\\", "/").removeprefix("./")
            result["locations"] = sarif_location(uri, location.line, location.column)
        results.append(result)
    return sarif_log(
        [{"id": WEAKER_SPELLING, "shortDescription": {"text": "a spelling is decided more weakly than the original"}}],
        results,
    )
