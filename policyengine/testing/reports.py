"""Reports of a policy-test run: plain text for a terminal, JSON, and JUnit XML for CI."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from policyengine.testing.runner import MISMATCH, TestReport, TestResult

__all__ = ["format_report", "to_json", "to_junit"]

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
