"""Rule analysis for `check`: allow and ask rules that never take effect, shown by the red lines' proofs.

A pre-execute rule that allows or asks about a call has no effect when an enforcing red line
covers every tool it names and its condition implies the red line's (_implication.py): every call
it lets on is denied by the red line anyway (guards are monotonic). Such a rule is dead weight,
or a sign that it was meant for other calls: PE902, a warning at the rule.

A rule whose condition can never hold - evaluated to false from its literals alone, for every tool
it names when it names tools (`tool_matches(name, [...])` of another tool's name, `contains([], @)`,
`` `false` ``) - never applies: PE903, a warning (for a red line: it never fires).
"""

from __future__ import annotations

from collections.abc import Sequence

from policyengine.packs.loader import Pack
from policyengine.packs.rules import Mode, RuleDecision
from policyengine.values.problems import Problem, Severity, register_code
from policyengine.values.results import Stage
from policyengine.verify._implication import (
    fold,
    implied_by_guard,
    normalised,
    red_lines,
    simplified,
    truthy,
)

__all__ = ["PE902", "PE903", "never_applying", "overturned_rules"]

PE902 = register_code("PE902", "allow or ask rule always overturned by a red line")
PE903 = register_code("PE903", "rule whose condition can never hold")


def overturned_rules(packs: Sequence[Pack]) -> list[Problem]:
    """PE902 for each enforcing pre-execute allow or ask rule whose every call an enforcing red line denies."""
    guards = red_lines(packs)
    problems: list[Problem] = []
    for pack in packs:
        for rule in pack.rules:
            if rule.stage is not Stage.PRE_EXECUTE or rule.mode is not Mode.ENFORCE or rule.labels:
                continue
            if rule.verb not in (RuleDecision.ALLOW, RuleDecision.ASK) or rule.when is None:
                continue
            red_line = implied_by_guard(rule.when.text, pack.lists, rule.tools, guards)
            if red_line is None:
                continue
            verb = rule.verb.value
            problems.append(
                Problem(
                    PE902,
                    f"rule {rule.id!r} ({verb}) never takes effect: every call it would {verb} is denied by red line "
                    f"{red_line.id!r} of pack {red_line.source.pack!r}",
                    rule.location,
                    rule_id=rule.id,
                    hint="delete the rule, or narrow it to the calls the red line lets on (docs/verify.md)",
                    severity=Severity.WARNING,
                )
            )
    return problems


def never_applying(packs: Sequence[Pack]) -> list[Problem]:
    """PE903 for each rule whose condition evaluates false from its literals, for every tool it names."""
    problems: list[Problem] = []
    for pack in packs:
        for rule in pack.rules:
            if rule.when is None:
                continue
            condition = normalised(rule.when.text, pack.lists)
            names = (
                sorted(rule.tools.names) if rule.tools.names and not rule.tools.globs and not rule.tools.tags else []
            )
            folded = [fold(condition, name) for name in names] or [simplified(condition)]
            if not all(f.get("type") == "literal" and not truthy(f.get("value")) for f in folded):
                continue
            what = "red line never fires" if rule.stage is Stage.GUARD else "rule never applies"
            problems.append(
                Problem(
                    PE903,
                    f"{what}: the condition of {rule.id!r} is false for every call"
                    + (f" of {', '.join(names)}" if names else ""),
                    rule.location,
                    rule_id=rule.id,
                    hint="check the condition's literals and the tool names it tests (docs/verify.md)",
                    severity=Severity.WARNING,
                )
            )
    return problems
