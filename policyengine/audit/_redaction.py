"""What an audit record hides before it is written: the packs' redaction rules, then the secret scanner.

The arguments, the result, the reason and the approval's reason of every record pass through
the packs' post-execute `redact:` entries that name keys, patterns, secrets or cards, of rules
without a `when:` condition (the same Redaction objects post-execute applies, here applied
whatever tool the call named: an audit log errs on hiding), and then through the secret scanner,
refused calls included: a call refused because it carried a credential must not leave that
credential in the log. Entries by `path:` name places in one tool's result and are applied by
post-execute itself, whose output the record already holds. A record that had anything replaced
says `"redacted": true` (a dry-run of it may decide differently from the live call, which the
record's `decision` keeps).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from policyengine.arguments.redact import REDACTED, Redaction
from policyengine.values.frozen import thaw
from policyengine.values.results import Stage

if TYPE_CHECKING:
    from policyengine.packs.loader import Pack

__all__ = ["REDACTED_FIELDS", "AuditRedaction", "redactions_of"]

# The fields a record may carry a credential in: what the agent sent, what the tool returned, the
# reason (a rule may have quoted the arguments) and the approval (its reason repeats the call's).
REDACTED_FIELDS = ("arguments", "result", "reason", "approval")

PacksGiven = Sequence["Pack"] | Callable[[], Sequence["Pack"]]


def redactions_of(packs: Sequence[Pack]) -> tuple[Redaction, ...]:
    """The packs' post-execute redactions without a `when:` that apply to any value: by key, pattern, secrets, cards.

    A rule with a condition redacts what its condition picks (`[^\\s]+` of a credential printer's
    output, say): applied to every record it would hide everything; post-execute applied it to
    the results it picked, and the record holds those results as it left them.
    """
    return tuple(
        redaction
        for pack in packs
        for rule in pack.rules
        if rule.stage is Stage.POST_EXECUTE and rule.when is None
        for redaction in getattr(rule, "redactions", ())
        if redaction.path is None
    )


class AuditRedaction:
    """Hides credentials in a record: the packs' redactions (the packs as they are now), then the secret scanner."""

    def __init__(self, packs: PacksGiven = ()) -> None:
        self._packs = packs
        self._seen: tuple[Pack, ...] | None = None
        self._redactions: tuple[Redaction, ...] = ()

    def redactions(self) -> tuple[Redaction, ...]:
        """The redactions of the packs in force (read again when the packs were reloaded)."""
        packs = tuple(self._packs() if callable(self._packs) else self._packs)
        seen = self._seen
        # By identity: a reload builds new Pack objects, and comparing packs field by field costs a walk of their rules.
        if seen is None or len(seen) != len(packs) or any(a is not b for a, b in zip(seen, packs, strict=True)):
            self._redactions, self._seen = redactions_of(packs), packs
        return self._redactions

    def __call__(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of the record with every credential in REDACTED_FIELDS replaced, marked `redacted` if any was."""
        from policyengine.arguments.secret_scanner import hide_secrets  # ~10 ms of patterns: on first record

        redactions = self.redactions()
        out = dict(record)
        hidden = False
        for field in REDACTED_FIELDS:
            if field not in out or out[field] is None:
                continue
            given = thaw(out[field])
            try:
                value = given
                for redaction in redactions:
                    value = redaction.apply(value)
                value = hide_secrets(value, _hide)
            except (ValueError, RecursionError):
                value = REDACTED  # too deep to scan: nothing unscanned reaches the log
            if value != given:
                hidden = True
            out[field] = value
        if hidden:
            out["redacted"] = True
        return out


def _hide(_value: Any) -> str:
    return REDACTED
