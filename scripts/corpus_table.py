"""Print docs/security.md's table of the adversarial corpus from tests/adversarial/calls-*.yaml.

    python scripts/corpus_table.py          # the table, as Markdown
    python scripts/corpus_table.py --write  # replace the table in docs/security.md

tests/test_adversarial.py checks that the table in the docs is this one, so it cannot go stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "adversarial"
DOC = ROOT / "docs" / "security.md"
BEGIN = "<!-- corpus-table: begin (scripts/corpus_table.py) -->"
END = "<!-- corpus-table: end -->"
WIDTH = 140


def _what(description: str) -> str:
    """The file's description, cut at a word boundary so a table row stays readable."""
    text = " ".join(description.split())
    if len(text) <= WIDTH:
        return text
    return text[:WIDTH].rsplit(" ", 1)[0] + " ..."


def table() -> str:
    """The Markdown table: one row per case file, refusals (deny, ask, invalid) and allowed cases counted."""
    rows = ["| file | what | cases | refused | allowed |", "| --- | --- | --- | --- | --- |"]
    totals = [0, 0, 0]
    for path in sorted(CORPUS.glob("calls-*.yaml")):
        # libyaml when PyYAML has it (as the pack reader): the same data, ~7x faster on 2 MB of cases.
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        cases = data["cases"]
        allowed = sum(1 for case in cases if case["expect"] == "allow")
        counts = [len(cases), len(cases) - allowed, allowed]
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        what = _what(str(data.get("description", ""))).replace("|", "\\|")
        rows.append(f"| {path.stem.removeprefix('calls-')} | {what} | " + " | ".join(map(str, counts)) + " |")
    rows.append("| **total** | | " + " | ".join(f"**{n:,}**" for n in totals) + " |")
    return "\n".join(rows) + "\n"


def documented() -> str:
    """The table as docs/security.md has it, between its markers."""
    text = DOC.read_text(encoding="utf-8")
    return text[text.index(BEGIN) + len(BEGIN) + 1 : text.index(END)]


def main(argv: list[str]) -> int:
    """Print the table, or write it into the docs with --write."""
    if argv == ["--write"]:
        text = DOC.read_text(encoding="utf-8")
        start, end = text.index(BEGIN) + len(BEGIN) + 1, text.index(END)
        DOC.write_text(text[:start] + table() + text[end:], encoding="utf-8")
        return 0
    sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
