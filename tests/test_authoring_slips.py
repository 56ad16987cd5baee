"""A new author's slips, each refused by `check --strict` with the pack's own catalog: located, with a fix hint.

The pack is the one the issue was found with (run_sql, send_email, write_file, http_get, and a
payment tool), written once correctly and then with one slip at a time. The correct pack must
pass; each slip must fail `--strict` with its own code at its own line and column.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from policyengine.cli.main import main


def _tool(name: str, **properties: str) -> str:
    return json.dumps(
        {
            "name": name,
            "description": f"the {name} tool",
            "parameters": {
                "type": "dict",
                "properties": {key: {"type": kind} for key, kind in properties.items()},
                "required": list(properties),
            },
        }
    )


CATALOG = "\n".join(
    [
        _tool("run_sql", query="string", database="string"),
        _tool("send_email", to="string", subject="string", body="string"),
        _tool("write_file", path="string", content="string"),
        _tool("http_get", url="string"),
        _tool("pay", to="string", amount="float"),
    ]
)

RULES = """\
rules:
  - id: no-external-mail
    stage: pre-execute
    tools: [send_email]
    when: "!ends_with(arguments.to, '@example.com')"
    decision: deny
    reason: "mail to {arguments.to} leaves the company"
  - id: ask-payments
    stage: pre-execute
    tools: [pay]
    when: "arguments.amount > `0`"
    decision: ask
    reason: "pay {arguments.amount} to {arguments.to}?"
  - id: no-drop
    stage: guard
    tools: [run_sql]
    when: "contains(lower(arguments.query), 'drop table')"
    reason: "no DROP TABLE"
"""

# (name, what the slip replaces, with what, the code, the line of the finding)
SLIPS = [
    ("argument-the-tool-does-not-have", "ends_with(arguments.to,", "ends_with(arguments.recipient,", "PE601", 5),
    ("string-literal-against-a-number", "arguments.amount > `0`", "arguments.amount > '0'", "PE602", 11),
    ("filter-on-a-string-after-a-flatten", "lower(arguments.query)", "[arguments.query][][?@ == 'x']", "PE603", 17),
    ("template-naming-a-missing-argument", "pay {arguments.amount} to", "pay {arguments.sum} to", "PE605", 13),
    ("tools-entry-naming-no-catalog-tool", "tools: [run_sql]", "tools: [run_sq1]", "PE606", 16),
]


def _pack(folder: Path, rules: str, *, extra: dict[str, str] | None = None) -> Path:
    folder.mkdir()
    (folder / "pack.yaml").write_text(
        "name: mail\nversion: 1.0.0\ncatalog: tools.jsonl\nfiles: [rules.yaml]\n", "utf-8"
    )
    (folder / "tools.jsonl").write_text(CATALOG + "\n", "utf-8")
    (folder / "rules.yaml").write_text(rules, "utf-8")
    for name, text in (extra or {}).items():
        (folder / name).write_text(text, "utf-8")
    return folder


def _check(folder: Path) -> tuple[int, list[dict[str, object]]]:
    out = io.StringIO()
    code = main(["check", "--strict", "--format", "json", str(folder)], out=out, err=io.StringIO())
    return code, json.loads(out.getvalue())["problems"]


def test_the_correct_pack_passes_strict_check_against_its_catalog(tmp_path: Path) -> None:
    assert _check(_pack(tmp_path / "p", RULES)) == (0, [])


@pytest.mark.parametrize(("name", "old", "new", "code", "line"), SLIPS, ids=[s[0] for s in SLIPS])
def test_each_slip_fails_strict_check_located_with_a_hint(
    tmp_path: Path, name: str, old: str, new: str, code: str, line: int
) -> None:
    assert old in RULES
    exit_code, problems = _check(_pack(tmp_path / "p", RULES.replace(old, new, 1)))
    assert exit_code == 1
    found = [p for p in problems if p["code"] == code]
    assert found, f"{name}: expected {code}, got {[p['code'] for p in problems]}"
    first = found[0]
    assert str(first["file"]).endswith("rules.yaml") and first["line"] == line, first
    assert int(str(first["column"])) > 1 and first["hint"]


def test_a_rule_identical_to_an_earlier_one_with_a_stronger_decision_is_dead(tmp_path: Path) -> None:
    first = RULES.split("rules:\n")[1].split("  - id: ask-payments")[0]
    weaker = first.replace("id: no-external-mail", "id: ask-external-mail").replace("decision: deny", "decision: ask")
    exit_code, problems = _check(_pack(tmp_path / "p", RULES + weaker))
    assert exit_code == 1
    dead = [p for p in problems if p["code"] == "PE507"]
    assert dead and dead[0]["rule"] == "ask-external-mail" and "no-external-mail" in str(dead[0]["message"])
    assert dead[0]["hint"]


def test_a_rule_file_the_manifest_does_not_list_is_reported(tmp_path: Path) -> None:
    exit_code, problems = _check(_pack(tmp_path / "p", RULES, extra={"more-rules.yaml": RULES}))
    assert exit_code == 1
    unlisted = [p for p in problems if p["code"] == "PE509"]
    assert unlisted and str(unlisted[0]["file"]).endswith("more-rules.yaml")
