"""What a call's result says for its audit record: the decision as a dry-run reports it, and JSON-safe values.

The record itself is built, redacted and written by `policyengine.audit` (one record and one
writer for every front end); this layer only reads a ToolResult.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from policyengine.values.results import Outcome, Stage, ToolResult


def policy_decision(result: ToolResult) -> tuple[str, str | None]:
    """(decision as a dry-run reports it, deciding rule or listener) for a live result."""
    if result.outcome is Outcome.INVALID:
        return "invalid", result.source.rule_id if result.source else None
    if result.outcome is Outcome.DENIED and result.stage in (Stage.PRE_EXECUTE, Stage.GUARD):
        return "deny", result.source.rule_id if result.source else None
    if result.stage is Stage.APPROVAL or result.asked:
        # The policy asked; whether a person then agreed is the outcome, not the decision.
        who = result.admitted_by or result.source
        return "ask", who.rule_id if who else None
    if result.admitted_by is None and result.stage is None and result.outcome is not Outcome.OK:
        return "error", result.source.rule_id if result.source else None
    return "allow", result.admitted_by.rule_id if result.admitted_by else None


def printable(value: Any) -> Any:
    """A copy json can always write: integers it cannot print become strings."""
    if isinstance(value, Mapping):
        return {k: printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            str(value)
        except ValueError:
            return f"<integer of about {value.bit_length() * 30103 // 100000:,} digits>"
    return value
