"""A pack's session rules: its `label:` rules, whether it reads `session`, and the fingerprints it needs.

The runtime asks this object (runtime/session_steps.SessionRules) at three points of a call
(docs/sessions.md); a pack with neither a label rule nor a rule that reads the session has
none, so its calls load and write nothing.
"""

from __future__ import annotations

import re
from typing import Any

from policyengine.language import fingerprints, session_reads
from policyengine.language.expressions import Expression
from policyengine.packs.loader import Pack
from policyengine.packs.rules import EXPLAIN, Rule, _test, post_document
from policyengine.runtime.session_steps import Labels
from policyengine.values.call import ToolCall
from policyengine.values.results import Stage
from policyengine.values.session import spent

# A rule reads the session when its condition or reason names `session` or a session function;
# a false positive (an argument named session) only loads the session document for nothing.
_READS = re.compile(r"\bsession\b|\bsession_(?:count|sum|secrets)\s*\(")
_SECRETS = re.compile(r"\bsession_secrets\s*\(")
# A call's amounts are read (amounts(@): a walk of the arguments) only for a pack that sums or reads them.
_AMOUNTS = re.compile(r"\bsession_sum\s*\(|\bamount\b")


def _texts(rule: Rule) -> list[str]:
    out = [rule.when.text] if rule.when is not None else []
    for template in (rule.reason, rule.content, rule.block):
        if template is not None:
            out.append(getattr(template, "text", "") or "")
    return out


class PackSessionRules:
    """What one pack does with sessions."""

    __slots__ = ("_amounts", "pack", "reads", "wants_prints")

    def __init__(self, pack: Pack, amounts: Expression | None) -> None:
        self.pack = pack
        texts = [t for rule in pack.rules for t in _texts(rule)]
        self.reads = any(_READS.search(t) for t in texts)
        self.wants_prints = any(_SECRETS.search(t) for t in texts)
        self._amounts = amounts if any(_AMOUNTS.search(t) for t in texts) else None

    @classmethod
    def of(cls, pack: Pack, amounts: Expression | None) -> PackSessionRules | None:
        """The pack's session rules, or None when it has nothing to do with sessions."""
        found = cls(pack, amounts)
        labelled = any(rule.labels for rule in pack.rules)
        return found if found.reads or labelled else None

    def _matching(self, stage: Stage, call: ToolCall, document: Any) -> Labels:
        out: list[tuple[str, str]] = []
        explain = EXPLAIN.get()
        for rule in self.pack.labelling[stage].for_tool(call.name, call.tags):
            try:
                hit = _test(rule, document, explain)
            except Exception:
                hit = True  # a label rule that fails to evaluate labels: labels only make later calls stricter
            if hit:
                out.extend((label, rule.id) for label in rule.labels)
        return tuple(out)

    def pre_labels(self, call: ToolCall) -> Labels:
        """Each pre-execute label rule that matches the call."""
        return self._matching(Stage.PRE_EXECUTE, call, call.document)

    def post_labels(self, call: ToolCall, value: Any, content: Any) -> Labels:
        """Each post-execute label rule that matches the result."""
        if not self.pack.labelling[Stage.POST_EXECUTE].rules:
            return ()
        return self._matching(Stage.POST_EXECUTE, call, post_document(call.document, value, content))

    def prints(self, call: ToolCall, value: Any, key: bytes) -> tuple[str, ...]:
        """Fingerprints of every secret the secret detector finds in the result (when a rule reads them)."""
        if not self.wants_prints:
            return ()
        from policyengine.language import secret_scanner

        found: list[str] = []

        def keep(secret: Any) -> Any:
            found.append(secret if isinstance(secret, str) else str(secret))
            return secret

        secret_scanner.hide_secrets(value, keep)
        return fingerprints.prints_of(found, key)

    def amount(self, call: ToolCall) -> float:
        """The sum of the call's amounts (amounts(@))."""
        if self._amounts is None:
            return 0.0
        try:
            return spent(self._amounts.search(call.document))
        except Exception:
            return 0.0

    def key_id(self, key: bytes) -> str:
        """The id the session document names the store's key by."""
        return session_reads.register_key(key)
