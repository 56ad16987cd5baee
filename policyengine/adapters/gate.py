"""The core the framework adapters share: packs loaded once, tools from their JSON Schemas, decide and review.

A framework runs the tool itself; the gate only answers what policy would do. `decide` answers
ALLOW, ASK or DENY for a call (anything else, an invalid call or a fault of the gate, is DENY
with the reason); `review` answers what post-execute makes of a real result: ACCEPTED,
REWRITTEN (redacted value and content) or BLOCKED (feedback in place of the result).

Sessions (docs/adapters.md): with a `session_id`, `decide` writes the call's decision entry once
(a second `decide` of the same call, as a resumed graph or an approval makes, answers what the
first did) and `review` writes only the RESULT entry (post-execute's labels, fingerprints).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, is_dataclass, replace
from pathlib import Path
from typing import Any

from policyengine.audit import AuditRecorder
from policyengine.enforce.decision_point import Answer, DecisionPoint, Question, closed, settle
from policyengine.enforce.evaluate import Evaluation, Verdict, fault_denial
from policyengine.enforce.install import PolicyLayers
from policyengine.errors import RegistrationError
from policyengine.runtime.registry import Registry
from policyengine.tools.catalog import tool_from_spec
from policyengine.tools.definition import ToolDefinition
from policyengine.values.decisions import Source, SourceKind
from policyengine.values.frozen import thaw
from policyengine.values.results import Approval, Stage

__all__ = ["GATE", "AuditOption", "PolicyGate", "plain", "text_of"]

# An adapter's `audit=`: a file to write the records to, or a recorder several adapters share.
AuditOption = str | Path | AuditRecorder | None

# What rules in monitor mode would have done, one INFO line per hit (docs/rules.md, `mode:`).
monitor_log = logging.getLogger("policyengine.monitor")

GATE = Source(SourceKind.REGISTRY, "policy gate")
# Decisions of calls in a session kept until their result is reviewed, so a call decided twice is
# written (and counted) once; the oldest go first past this many calls awaiting a result.
REMEMBERED_CALLS = 4096
# Calls of one session are decided one at a time (read, decide, write): striped locks by session id.
_STRIPES = 64

Remembered = tuple[str, str, str, str]  # session id, call id, tool name, arguments as JSON


class PolicyGate:
    """Packs installed once on a registry of the framework's tools; decides calls and reviews results."""

    def __init__(
        self,
        packs: Sequence[str | Path],
        *,
        cwd: str | None = None,
        agent: str = "agent",
        registry: Registry | None = None,
        audit: AuditOption = None,
        otel: bool | Callable[[Mapping[str, Any]], None] = False,
        front_end: str = "registry",
    ) -> None:
        if isinstance(packs, (str, Path)):
            packs = [packs]  # one folder given bare: a str is a Sequence, of letters
        self.registry = registry if registry is not None else Registry(cwd=cwd)
        self.layers = PolicyLayers.install(self.registry, packs)  # PackLoadError lists every problem
        self.point = DecisionPoint(self.registry, GATE)
        self.agent = agent
        self.audit: AuditRecorder | None = None
        self.attach_audit(audit, otel, front_end)
        self._specs: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._decided: OrderedDict[Remembered, Evaluation] = OrderedDict()
        self._sessions = [threading.Lock() for _ in range(_STRIPES)]
        # The session of calls whose framework names none: every such call of this gate shares it (stricter
        # than a session per conversation, never an empty one: labels and counters of all of them add up).
        self.shared_session = "gate-" + secrets.token_hex(16)

    @property
    def uses_sessions(self) -> bool:
        """True when some installed rule reads or labels the session (calls then need a session id)."""
        return self.registry.installation.sessions is not None

    # -- tools ---------------------------------------------------------------

    def register(self, spec: Mapping[str, Any]) -> ToolDefinition:
        """Register a tool from its MCP or OpenAI JSON Schema spec (once per name); raise DefinitionError."""
        definition = tool_from_spec(spec, source="an agent framework's tool")
        with self._lock:
            known = self.registry.tools.get(definition.name)
            if known is not None:
                if self._specs.get(definition.name) != spec:
                    raise RegistrationError(
                        f"a different tool named {definition.name!r} is already registered on this policy gate",
                        hint="tool names are the only identity a model sends back; give each tool set its own gate",
                    )
                return known
            self.registry.register(definition)
            self._specs[definition.name] = spec
        return definition

    def knows(self, name: str) -> bool:
        """True once a tool of that name is registered."""
        return name in self._specs

    # -- decisions -------------------------------------------------------------

    def decide(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None,
        *,
        call_id: str | None = None,
        cwd: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
    ) -> Evaluation:
        """What policy does with this call: ALLOW, ASK or DENY (an invalid call, or any fault, denies).

        With a `session_id`, the first decision of a call (by `call_id`) is written to its session;
        deciding the same call again answers the first decision and writes nothing.
        """
        try:
            key = self._key(session_id, call_id, name, arguments)
            if key is None:
                return _closed(settle(self._ask(name, arguments, None, call_id, cwd, agent, session_id)))
            with self._sessions[hash(key[0]) % _STRIPES]:  # read, decide, write: one call of the session at a time
                known = self._recall(key)
                if known is not None:
                    return known
                answer = self._ask(name, arguments, None, call_id, cwd, agent, session_id)
                return self._remember(key, _closed(settle(answer)))
        except Exception as error:  # fails closed: a gate that cannot answer denies
            return _failed(name, "deciding", error)

    async def adecide(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None,
        *,
        call_id: str | None = None,
        cwd: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
    ) -> Evaluation:
        """`decide` from a coroutine: the asynchronous stages, if any, run on the caller's loop."""
        try:
            key = self._key(session_id, call_id, name, arguments)
            if key is None:
                answer = self._ask(name, arguments, None, call_id, cwd, agent, session_id)
                return _closed(answer if isinstance(answer, Evaluation) else await answer())
            lock = self._sessions[hash(key[0]) % _STRIPES]
            with lock:  # packs alone decide without awaiting: the lock is never held across an await
                known = self._recall(key)
                if known is not None:
                    return known
                answer = self._ask(name, arguments, None, call_id, cwd, agent, session_id)
                if isinstance(answer, Evaluation):
                    return self._remember(key, _closed(answer))
            # Python listeners: their stages await on the caller's loop, so calls of a session may overlap here.
            known = self._recall(key)
            return known if known is not None else self._remember(key, _closed(await answer()))
        except Exception as error:
            return _failed(name, "deciding", error)

    def review(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None,
        value: Any,
        content: Any = None,
        *,
        call_id: str | None = None,
        cwd: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
    ) -> Evaluation:
        """What post-execute makes of a real result; `post` is always set (any fault blocks).

        With a `session_id`, the call was decided (and written) by `decide`: only post-execute
        runs, and the result's entry (labels, fingerprints) is written to the session.
        """
        try:
            result = {"value": plain(value), "content": content}
            if session_id and self.uses_sessions:
                answer = self._review_only(name, arguments, result, call_id, cwd, agent, session_id)
            else:
                answer = self._ask(name, arguments, result, call_id, cwd, agent)
            return _reviewed(settle(answer))
        except Exception as error:  # fails closed: a result the gate cannot review never reaches the model
            return _failed(name, "reviewing the result of", error).blocked()

    async def areview(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None,
        value: Any,
        content: Any = None,
        *,
        call_id: str | None = None,
        cwd: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
    ) -> Evaluation:
        """`review` from a coroutine."""
        try:
            result = {"value": plain(value), "content": content}
            if session_id and self.uses_sessions:
                answer = self._review_only(name, arguments, result, call_id, cwd, agent, session_id)
            else:
                answer = self._ask(name, arguments, result, call_id, cwd, agent)
            return _reviewed(answer if isinstance(answer, Evaluation) else await answer())
        except Exception as error:
            return _failed(name, "reviewing the result of", error).blocked()

    # -- audit -------------------------------------------------------------------

    def attach_audit(
        self, audit: AuditOption, otel: bool | Callable[[Mapping[str, Any]], None] = False, front_end: str = "registry"
    ) -> None:
        """Write an audit record per call (docs/audit.md) to `audit` (a file, or a shared recorder) and/or to OTel."""
        if isinstance(audit, AuditRecorder):
            self.audit = audit
        elif audit is not None or otel:
            # Redacted by the packs in force (reloads included), written 0600.
            self.audit = AuditRecorder(audit, packs=lambda: self.layers.packs, otel=otel, front_end=front_end)

    def record(
        self,
        answer: Evaluation,
        name: str,
        arguments: Any,
        *,
        call_id: str | None,
        session_id: str | None = None,
        cwd: str | None = None,
        agent: str | None = None,
        approval: Approval | None = None,
    ) -> None:
        """Write the call's audit record, when an audit is attached (its failures are counted, never raised)."""
        if self.audit is None:
            return
        given = _arguments(name, arguments)
        self.audit.evaluation(
            answer,
            name=name,
            arguments=given if not isinstance(given, Evaluation) else {"unparsed": str(arguments)},
            call_id=call_id,
            agent=agent or self.agent,
            session_id=session_id,
            cwd=cwd if cwd is not None else self.registry.cwd,
            approval=approval,
        )

    # -- sessions ----------------------------------------------------------------

    def forget(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None,
        *,
        call_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        """The call ended without running (denied, or a person refused it): a later call reusing its id is decided."""
        key = self._key(session_id, call_id, name, arguments)
        if key is not None:
            with self._lock:
                self._decided.pop(key, None)

    def _key(
        self, session_id: str | None, call_id: str | None, name: str, arguments: Mapping[str, Any] | str | None
    ) -> Remembered | None:
        """The call's identity in its session, or None when no session is written (no id, or no session rules)."""
        if not session_id or not call_id or not self.uses_sessions:
            return None
        given: Any = arguments
        if isinstance(arguments, str):  # JSON text (one framework hook) and an object (another) are one call
            try:
                given = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                return (session_id, call_id, name, arguments)
        return (session_id, call_id, name, json.dumps(plain(given), sort_keys=True, default=str))

    def _recall(self, key: Remembered) -> Evaluation | None:
        with self._lock:
            return self._decided.get(key)

    def _remember(self, key: Remembered, answer: Evaluation) -> Evaluation:
        with self._lock:
            self._decided[key] = answer
            while len(self._decided) > REMEMBERED_CALLS:
                self._decided.popitem(last=False)
        return answer

    def _review_only(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None,
        result: Mapping[str, Any],
        call_id: str | None,
        cwd: str | None,
        agent: str | None,
        session_id: str | None,
    ) -> Answer:
        """Post-execute alone over a decided call's result; a call policy denied is blocked."""
        key = self._key(session_id, call_id, name, arguments)
        if key is not None:
            with self._lock:
                decided = self._decided.pop(key, None)  # reviewed: a later call reusing the id is decided afresh
            if decided is not None and decided.decision is Verdict.DENY:
                return decided
        parsed = _arguments(name, arguments)
        if isinstance(parsed, Evaluation):
            return parsed
        question = Question(name, parsed, agent=agent or self.agent, call_id=call_id, cwd=cwd, session_id=session_id)
        return self.point.ask_review(question, result)

    def _ask(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None,
        result: Mapping[str, Any] | None,
        call_id: str | None,
        cwd: str | None,
        agent: str | None,
        session_id: str | None = None,
    ) -> Answer:
        """The decision point's answer: now when packs alone decide, else deferred (Python listeners await)."""
        parsed = _arguments(name, arguments)
        if isinstance(parsed, Evaluation):
            return parsed
        question = Question(name, parsed, agent=agent or self.agent, call_id=call_id, cwd=cwd, session_id=session_id)
        return self.point.ask(question, result)


def _arguments(name: str, arguments: Mapping[str, Any] | str | None) -> Mapping[str, Any] | Evaluation:
    """The arguments as an object: JSON text is parsed; anything but an object is invalid, so denied."""
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as error:
            reason = f"invalid arguments for tool {name!r}: not JSON ({error.msg} at character {error.pos})"
            return Evaluation(Verdict.DENY, Stage.VALIDATION, GATE, reason)
    if not isinstance(arguments, Mapping):
        reason = f"invalid arguments for tool {name!r}: expected a JSON object, got {type(arguments).__name__}"
        return Evaluation(Verdict.DENY, Stage.VALIDATION, GATE, reason)
    return arguments


def _closed(answer: Evaluation) -> Evaluation:
    """ALLOW and ASK as they are; INVALID and ERROR deny, with their reason (monitor hits logged)."""
    for hit in answer.monitored:
        # The framework runs the tool itself: the log is where a rule being staged shows what it would do.
        monitor_log.info(
            "policyengine: monitor: rule %s (%s) would %s: %s", hit.rule, hit.stage.value, hit.would.value, hit.reason
        )
    return closed(answer)


def _reviewed(answer: Evaluation) -> Evaluation:
    """A reviewed result; a call policy would not admit now (packs reloaded since, say) is blocked."""
    if answer.monitored:  # the call's decision reported its own hits: a review adds only post-execute's
        answer = replace(answer, monitored=tuple(h for h in answer.monitored if h.stage is Stage.POST_EXECUTE))
    answer = _closed(answer)
    if answer.post is None or answer.decision is Verdict.DENY:
        return answer.blocked()
    return answer


def _failed(name: str, doing: str, error: Exception) -> Evaluation:
    return fault_denial(GATE, name, doing, error)


def plain(value: Any) -> Any:
    """A tool's output as plain JSON data: models and dataclasses dumped, anything else not JSON as text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return plain(dump(mode="json"))
    if is_dataclass(value) and not isinstance(value, type):
        return plain(asdict(value))
    return str(value)


def text_of(content: Any) -> str:
    """The text of content blocks (a string as it is; other blocks as JSON), for a framework that takes text."""
    content = thaw(content)
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False, default=str)
    parts = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        else:
            parts.append(block if isinstance(block, str) else json.dumps(block, ensure_ascii=False, default=str))
    return "\n".join(parts)
