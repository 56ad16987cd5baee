"""Output for people and machines: colour on terminals, JSON, SARIF for code scanning."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TextIO

from policyengine.testing.sarif import sarif_location, sarif_log
from policyengine.values.problems import CODES, Problem, Severity


def use_color(stream: TextIO, choice: str = "auto") -> bool:
    """Colour only on a terminal, never when NO_COLOR is set, unless forced."""
    if choice in ("always", "never"):
        return choice == "always"
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ


def paint(text: str, code: str, color: bool) -> str:
    """Wrap text in an ANSI colour when colour is on."""
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def problem_json(problem: Problem) -> dict[str, Any]:
    """A problem as a JSON object."""
    loc = problem.location
    return {
        "code": problem.code,
        "severity": problem.severity.value,
        "message": problem.message,
        "file": loc.file if loc else None,
        "line": loc.line if loc else None,
        "column": loc.column if loc else None,
        "rule": problem.rule_id,
        "hint": problem.hint,
    }


def sarif(problems: Sequence[Problem]) -> dict[str, Any]:
    """A SARIF 2.1.0 log so code-scanning views show each problem inline."""
    codes = sorted({p.code for p in problems})
    results = []
    for p in problems:
        result: dict[str, Any] = {
            "ruleId": p.code,
            "level": "error" if p.severity is Severity.ERROR else "warning",
            "message": {"text": p.message + (f" (hint: {p.hint})" if p.hint else "")},
        }
        if p.rule_id:
            result["properties"] = {"policyRule": p.rule_id}
        if p.location:
            result["locations"] = sarif_location(_uri(p.location.file), p.location.line, p.location.column)
        results.append(result)
    return sarif_log(
        [{"id": c, "shortDescription": {"text": CODES.get(c, c)}} for c in codes],
        results,
        information_uri="https://github.com/policyengine/policyengine",
    )


def _uri(path: str) -> str:
    # SARIF viewers resolve relative URIs against the repository root; keep them relative.
    return path.replace(os.sep, "/").removeprefix("./")


def table(rows: Sequence[Sequence[str]], headers: Sequence[str], color: bool = False) -> str:
    """A plain aligned text table (no dependency: a few dozen rows at most)."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "  ".join(paint(str(h).ljust(w), "1", color) for h, w in zip(headers, widths, strict=True))
    out = [line.rstrip()]
    for row in rows:
        out.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(out)
