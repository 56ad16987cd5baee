"""A pack's session rules: its `label:` rules, whether it reads `session`, and the fingerprints it needs.

The runtime asks this object (runtime/session_steps.SessionRules) at three points of a call
(docs/sessions.md); a pack with neither a label rule nor a rule that reads the session has
none, so its calls load and write nothing.
"""

from __future__ import annotations

import re
from typing import Any

from policyengine.arguments import fingerprints
from policyengine.language import session_reads
from policyengine.language.expressions import Expression, compile_expression
from policyengine.packs.loader import Pack
from policyengine.packs.rules import EXPLAIN, Mode, Rule, _test, monitored, post_document
from policyengine.runtime.session_steps import Labels
from policyengine.values.call import ToolCall
from policyengine.values.results import Stage, Would
from policyengine.values.session import spent

# A rule reads the session when its condition or reason names `session` or a session function;
# a false positive (an argument named session) only loads the session document for nothing.
_READS = re.compile(r"\bsession\b|\bsession_(?:count|sum|secrets)\s*\(")
_SECRETS = re.compile(r"\bsession_secrets\s*\(")
# A call's amounts are read (amounts(@): a walk of the arguments) only for a pack that sums or reads them.
_AMOUNTS = re.compile(r"\bsession_sum\s*\(|\bamount\b")


# Fields of `session` that no entry of an unlabelled, uncounted call can change.
_PLAIN_FIELDS = frozenset({"id", "now", "labels", "secrets", "overflowed"})


def _is_session(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "field" and node.get("value") == "session"


def _literal_strings(node: Any) -> list[str] | None:
    """A selector written as a literal (a string, a list of strings, a folded @list); None otherwise."""
    if node.get("type") == "literal":
        value = node.get("value")
        if isinstance(value, str):
            return [value]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        return None
    if node.get("type") == "multi_select_list":
        found = [_literal_strings(child) for child in node.get("children", ())]
        if all(f is not None and len(f) == 1 for f in found):
            return [f[0] for f in found if f is not None]
    return None


def _selectors(node: Any, found: list[str]) -> bool:
    """Collect the selectors of session_count/session_sum; False when the expression reads the session otherwise.

    Reading `session.calls`, `session.earlier` or `session` whole needs every call in the log;
    the counters need only the calls their literal selectors name.
    """
    if not isinstance(node, dict):
        return node is None or type(node) is int  # a slice's bounds; anything else unknown: every call is written
    kind, children = node.get("type"), node.get("children") or []
    if kind == "function_expression" and node.get("value") in ("session_count", "session_sum"):
        selector = _literal_strings(children[1]) if len(children) == 3 and _is_session(children[0]) else None
        if selector is None:
            return False
        found.extend(selector)
        return _selectors(children[2], found)
    if kind == "subexpression" and children and _is_session(children[0]):
        second = children[1] if len(children) > 1 else None
        if isinstance(second, dict) and second.get("type") == "field" and second.get("value") in _PLAIN_FIELDS:
            return all(_selectors(child, found) for child in children[2:])
        return False
    if kind == "subexpression" and children:
        # `arguments.session`: a field after the first names a key of what came before, not the session.
        later = (c for c in children[1:] if not (isinstance(c, dict) and c.get("type") == "field"))
        return _selectors(children[0], found) and all(_selectors(child, found) for child in later)
    if _is_session(node):
        return False
    return all(_selectors(child, found) for child in children)


def _expressions(rule: Rule) -> list[Expression]:
    out = [rule.when] if rule.when is not None else []
    for template in (rule.reason, rule.content, rule.block):
        if template is not None:
            out.extend(part for part in template.parts if isinstance(part, Expression))
    return out


_AMOUNTS_EXPRESSION: list[Expression] = []


def amounts_expression() -> Expression:
    """`amounts(@)`, compiled once: what a call spends, for session_sum."""
    if not _AMOUNTS_EXPRESSION:

        def refuse(code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
            raise AssertionError(f"amounts(@) failed to compile: {code} {message}")

        found = compile_expression("amounts(@)", {}, refuse)
        assert found is not None
        _AMOUNTS_EXPRESSION.append(found)
    return _AMOUNTS_EXPRESSION[0]


def _texts(rule: Rule) -> list[str]:
    out = [rule.when.text] if rule.when is not None else []
    for template in (rule.reason, rule.content, rule.block):
        if template is not None:
            out.append(getattr(template, "text", "") or "")
    return out


class PackSessionRules:
    """What one pack does with sessions."""

    __slots__ = ("_amounts", "_counted", "lists_calls", "pack", "reads", "selectors", "wants_prints")

    def __init__(self, pack: Pack) -> None:
        self.pack = pack
        texts = [t for rule in pack.rules for t in _texts(rule)]
        self.reads = any(_READS.search(t) for t in texts)
        self.wants_prints = any(_SECRETS.search(t) for t in texts)
        self._amounts = amounts_expression() if any(_AMOUNTS.search(t) for t in texts) else None
        # The tools the pack's counters select, or None when some rule reads the whole log (then every
        # decided call is written); a call no counter selects and no label rule labels writes nothing.
        found: list[str] = []
        whole = all(_selectors(e.parsed.parsed, found) for rule in pack.rules for e in _expressions(rule))
        self.selectors: tuple[str, ...] | None = tuple(dict.fromkeys(found)) if whole else None
        self.lists_calls = self.selectors is None
        self._counted: dict[tuple[str, frozenset[str]], bool] = {}

    @classmethod
    def of(cls, pack: Pack) -> PackSessionRules | None:
        """The pack's session rules, or None when it has nothing to do with sessions."""
        found = cls(pack)
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
            if hit and rule.mode is Mode.MONITOR:  # recorded, not added: later calls stay as they were
                monitored(rule, Would.LABEL, "would label the session " + ", ".join(rule.labels))
            elif hit:
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
        from policyengine.arguments import secret_scanner

        found: list[str] = []

        def keep(secret: Any) -> Any:
            found.append(secret if isinstance(secret, str) else str(secret))
            return secret

        secret_scanner.hide_secrets(value, keep)
        return fingerprints.prints_of(found, key)

    def counts(self, call: ToolCall) -> bool:
        """Whether some rule may count this call later (then its decision must be in the log)."""
        if self.selectors is None:
            return True
        key = (call.name, call.tags)
        found = self._counted.get(key)
        if found is None:
            if len(self._counted) >= 10_000:  # names can come from untrusted recorded calls
                self._counted.clear()
            found = self._counted[key] = session_reads.selected(self.selectors, call.name, tuple(call.tags))
        return found

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
