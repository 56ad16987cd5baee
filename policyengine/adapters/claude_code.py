"""Claude Code's hook protocol: a PreToolUse or PostToolUse event on stdin, the packs' answer on stdout.

Claude Code runs the hook command once per tool call, in a fresh process, with the event as one
JSON object on stdin (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `tool_name`,
`tool_input`, `tool_use_id`, and `tool_response` after the call), and reads the answer as JSON on
stdout, or exit code 2 with the reason on stderr (a block). The protocol followed is the hooks
reference (https://code.claude.com/docs/en/hooks): PreToolUse `hookSpecificOutput`
{`hookEventName`, `permissionDecision`, `permissionDecisionReason`}; PostToolUse `decision:
"block"` with `reason`, and `hookSpecificOutput.updatedToolOutput` (every tool, Claude Code
2.1.121 and later) or `updatedMCPToolOutput` (MCP tools, earlier versions) for a replaced output.

What the packs answer, in the protocol's terms (docs/claude-code.md has the table):
- PreToolUse: deny and ask as they are; an allow by a rule is `allow` (no prompt); an allow by
  the packs' default leaves the call to Claude Code's own permission rules (no decision); a
  default of deny or ask denies or asks (fail closed); arguments that do not fit the tool's
  schema deny, with the reason.
- PostToolUse: a redaction replaces the output; a block (or a call pre-execute would refuse)
  blocks with the reason and replaces the output with a withheld copy.
- Sessions (packs with session rules only): PreToolUse decides in the event's `session_id` and
  writes the decision; PostToolUse writes what the response adds (labels, fingerprints). The
  store is claude_code_sessions.py's (SQLite in the cache folder); a failing one denies or blocks.

Speed: a call is one process, so this module decides with the Decider and the rule chains
directly (no registry, no event loop: asyncio alone costs ~20 ms), reads packs through the
compiled-pack cache (packs/cache.py), and builds only the called tool's definition from the
catalog. The decisions are those of `evaluate()` on a registry holding the same packs and
catalog: tests/test_hook_claude_code.py compares them, and replays the audit log with dry-run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policyengine.values.decisions import AcceptValue, Ask, Block, Deny, PreDecision, Source, SourceKind
from policyengine.values.frozen import FrozenDict, freeze, thaw

if TYPE_CHECKING:
    from policyengine.adapters.claude_code_sessions import HookSessions
    from policyengine.packs.last_good import KeptPacks
    from policyengine.packs.loader import Pack
    from policyengine.tools.definition import ToolDefinition
    from policyengine.values.results import MonitorHit

__all__ = [
    "AGENT",
    "BUILTIN_CATALOG",
    "EVENTS",
    "Decision",
    "Event",
    "Hook",
    "HookError",
    "Policy",
    "answer",
    "audit_record",
    "parse_event",
]

AGENT = "claude-code"  # the `agent` field of every call document (rules may read it)
BUILTIN_CATALOG = Path(__file__).with_name("claude_code_tools.json")
PRE, POST = "PreToolUse", "PostToolUse"
EVENTS = (PRE, POST)
MAX_EVENT_BYTES = 64 << 20  # Write contents and Read results ride in the event; more is refused, not parsed
WITHHELD = "[withheld by policy]"
REGISTRY = Source(SourceKind.REGISTRY, "registry")  # what evaluate() names for validation and engine faults
_MISSING: Any = object()


class HookError(Exception):
    """The event cannot be answered (unreadable input, a pack that does not load): exit 2, this on stderr."""


# -- the event ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """The fields of a hook event the answer depends on."""

    hook: str
    tool: str
    arguments: Mapping[str, Any]
    cwd: str | None
    session_id: str | None
    tool_use_id: str | None
    response: Any = _MISSING  # PostToolUse's tool_response

    @property
    def has_response(self) -> bool:
        """Whether the event carries the tool's response (PostToolUse)."""
        return self.response is not _MISSING


def parse_event(raw: bytes) -> Event:
    """The event in `raw` (stdin's bytes); HookError saying what is wrong and how to fix it."""
    if len(raw) > MAX_EVENT_BYTES:
        raise HookError(f"the event is over {MAX_EVENT_BYTES:,} bytes; not parsed")
    if not raw.strip():
        raise HookError("no event on stdin: Claude Code sends the hook event as one JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise HookError(f"the event is not UTF-8 (byte {error.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise HookError(f"the event is not JSON: {error.msg} (line {error.lineno}, column {error.colno})") from None
    except RecursionError:
        raise HookError("the event is not JSON this hook can read: nested too deeply") from None
    except ValueError as error:  # an integer of more digits than Python converts
        raise HookError(f"the event is not JSON this hook can read: {error}") from None
    if not isinstance(data, dict):
        raise HookError(f"the event must be a JSON object, got {_json_type(data)}")
    hook = data.get("hook_event_name")
    if hook not in EVENTS:
        shown = f"{hook!r}" if isinstance(hook, str) else "missing" if hook is None else _json_type(hook)
        raise HookError(
            f"hook_event_name is {shown}: this hook answers PreToolUse and PostToolUse; "
            "register `policyengine hook claude-code` under those events only"
        )
    tool = data.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise HookError("the event has no tool_name (a non-empty string)")
    arguments = data.get("tool_input")
    if not isinstance(arguments, dict):
        got = "missing" if arguments is None else _json_type(arguments)
        raise HookError(f"the event's tool_input must be a JSON object, got {got}")
    cwd = data.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not _absolute(cwd)):
        raise HookError(f"the event's cwd must be an absolute path, got {cwd!r}")
    strings = {k: data.get(k) for k in ("session_id", "tool_use_id")}
    for key, value in strings.items():
        if value is not None and not isinstance(value, str):
            raise HookError(f"the event's {key} must be a string, got {_json_type(value)}")
    if hook == POST and "tool_response" not in data:
        raise HookError("a PostToolUse event needs tool_response")
    return Event(
        hook,
        tool,
        arguments,
        cwd,
        strings["session_id"],
        strings["tool_use_id"],
        data["tool_response"] if hook == POST else _MISSING,
    )


def _absolute(path: str) -> bool:
    # POSIX or Windows, whatever this machine is: Claude Code sends the session's real directory.
    return path.startswith(("/", "\\\\")) or (len(path) > 2 and path[1] == ":" and path[2] in "/\\")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


# -- the decision ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """What the packs make of one call: `evaluate()`'s answer, with the verdict as its string value."""

    verdict: str  # allow, deny, ask, invalid, error
    stage: str | None
    source: Source | None
    reason: str | None
    arguments: Any = None  # as policy saw them (validated, frozen)
    post: str | None = None  # accepted, rewritten, blocked (PostToolUse)
    value: Any = None
    content: Any = None
    rewrites: tuple[Source, ...] = ()
    feedback: str | None = None
    value_changed: bool = False
    monitored: tuple[MonitorHit, ...] = ()  # what rules in monitor mode would have done (nothing was enforced)


class Policy:
    """Packs and a tool catalog, deciding calls as a registry holding them would."""

    def __init__(
        self,
        packs: Sequence[Pack],
        catalogs: Sequence[Path],
        read: Callable[[Path], bytes] | None = None,
        tools: Mapping[str, ToolDefinition] | None = None,
        sessions: HookSessions | None = None,
    ) -> None:
        self.packs = tuple(packs)
        # The packs' session rules and their store; None when no pack has any (nothing is read or written).
        self.sessions = sessions
        self.catalogs = tuple(catalogs)
        self._read = read or (lambda path: path.read_bytes())
        # Every tool of the catalogs when they were loaded whole (first load); else built per name.
        self._tools = tools
        self._built: dict[str, ToolDefinition | None] = {}  # per name, for the helper's many calls
        self.cwd = next((p.cwd for p in self.packs if p.cwd), None)

    def definition(self, name: str) -> ToolDefinition | None:
        """The catalog's definition of `name` (the first catalog that has it), or None."""
        if self._tools is not None:
            return self._tools.get(name)
        if name in self._built:
            return self._built[name]
        found = None
        for path in self.catalogs:
            found = _lookup(path, self._read(path), name)
            if found is not None:
                break
        if len(self._built) < 1024:  # names come from the model: the memo stays bounded
            self._built[name] = found
        return found

    def decide(self, event: Event) -> Decision:
        """The decision for the event's call; with a response (PostToolUse), what post-execute makes of it.

        Rules in monitor mode record what they would have done in the decision's `monitored`.
        """
        from policyengine.values.results import MONITORED

        hits: list[MonitorHit] = []
        token = MONITORED.set(hits)
        try:
            decision = self._decide(event)
        finally:
            MONITORED.reset(token)
        return replace(decision, monitored=tuple(hits)) if hits else decision

    def _decide(self, event: Event) -> Decision:
        """decide(), with the monitor hits being recorded."""
        from policyengine.enforce.decider import Decider
        from policyengine.values.call import call_document

        name = event.tool
        definition = self.definition(name)
        if definition is not None:
            frozen, problems = definition.validate_arguments(event.arguments)
            if frozen is None:
                reason = f"invalid arguments for tool {name!r}: {'; '.join(problems)}"
                return Decision("invalid", "validation", REGISTRY, reason, event.arguments)
        else:
            try:
                frozen = freeze(event.arguments)
            except Exception as error:  # FreezeError: too deep, not JSON
                return Decision("invalid", "validation", REGISTRY, str(error), event.arguments)
        assert isinstance(frozen, FrozenDict)
        tags = definition.tags if definition is not None else frozenset()
        roles = definition.roles if definition is not None else None
        cwd = event.cwd if event.cwd is not None else self.cwd
        decider = Decider(self.packs, tags={name: tags})
        if self.sessions is not None:
            return self._decide_in_session(event, decider, definition, frozen, cwd, roles, tags)
        document = call_document(name, frozen, AGENT, event.tool_use_id or "", cwd, roles)
        decision, red_line = decider.stages(name, document)
        admitted = _admission(decision, red_line, frozen)
        if admitted.verdict == "deny" or not event.has_response:
            return admitted
        return self._review(admitted, definition, document, tags, event.response)

    def _decide_in_session(
        self,
        event: Event,
        decider: Any,
        definition: ToolDefinition | None,
        frozen: FrozenDict,
        cwd: str | None,
        roles: Any,
        tags: frozenset[str],
    ) -> Decision:
        """`decide` in the call's session: PreToolUse writes its decision, PostToolUse its result (never a decision)."""
        from policyengine.errors import SessionStoreError
        from policyengine.runtime import session_steps
        from policyengine.values.call import ToolCall

        assert self.sessions is not None
        inst = self.sessions.installation
        call_id = event.tool_use_id or ""
        call = ToolCall(
            call_id, event.tool, frozen, AGENT, cwd=cwd, roles=roles, tags=tags, session_id=event.session_id
        )
        store = session_steps.SESSION_STORE
        if not event.has_response:
            try:
                with self.sessions.store.turn(event.session_id):  # load, decide, write: one call of a session at a time
                    opened = session_steps.opened(inst, call)
                    if isinstance(opened, str):
                        return Decision("deny", "pre-execute", store, opened, frozen)
                    decision, red_line = decider.stages(event.tool, opened.document)
                    failed = session_steps.decided(inst, opened, decision, red_line)
            except SessionStoreError as error:
                reason = f"Denied: the session store failed ({error.message}); the call is refused."
                return Decision("deny", "pre-execute", store, reason, frozen)
            if failed is not None and red_line is None and not isinstance(decision, Deny):
                red_line = Deny(failed, store)
            return _admission(decision, red_line, frozen)
        opened = session_steps.opened(inst, call)
        if isinstance(opened, str):  # the result cannot be recorded: withheld
            return Decision("error", "post-execute", store, opened.replace("Denied:", "Blocked:", 1), frozen)
        reading = opened
        if opened.session is not None and call_id:
            opened = opened.with_session(_without_call(opened.session, call_id))
        # Pre-execute again, as PreToolUse decided it: on the session without this call's own entry.
        decision, red_line = decider.stages(event.tool, opened.document)
        admitted = _admission(decision, red_line, frozen)
        if admitted.verdict == "deny":
            return admitted  # the call ran although policy refuses it: its output is withheld, nothing recorded

        def record(value: Any, content: Any) -> str | None:
            return session_steps.reviewed(inst, reading, value, content)

        return self._review(admitted, definition, opened.document, tags, event.response, record)

    def _review(
        self,
        admitted: Decision,
        definition: ToolDefinition | None,
        document: FrozenDict,
        tags: frozenset[str],
        response: Any,
        record: Callable[[Any, Any], str | None] | None = None,
    ) -> Decision:
        """Post-execute over the tool's response, layer by layer, as PackPostExecute reviews a pending result.

        `record` writes the response (as the tool returned it) to the call's session once no rule
        blocked it; a reason it returns blocks the response (the session store failed).
        """
        from policyengine.packs.rules import rewrite_post
        from policyengine.runtime.rewrites import apply_rewrite
        from policyengine.tools.definition import content_problems, render_text, unknown_tool
        from policyengine.values.call import PendingResult
        from policyengine.values.results import Stage

        name = document["name"]
        arguments = document["arguments"]
        try:
            value = freeze(response)
            content = _content_of(definition, arguments, value, content_problems, render_text)
        except Exception as error:
            reason = f"recorded result is malformed: {error}"
            return replace(admitted, verdict="error", stage="post-execute", source=REGISTRY, reason=reason)
        # The registry's own rewrite step (a tool outside the catalog: no output schema, the default render).
        pending = PendingResult(value, content, definition or unknown_tool(name), ())
        changed = False
        for pack in self.packs:
            rules = pack.rules_for(Stage.POST_EXECUTE, name, tags)
            if not rules:
                continue
            for rewrite in rewrite_post(rules, document, pending.value, pending.content, None):
                if isinstance(rewrite, Block):
                    return _blocked(admitted, rewrite.feedback, rewrite.source)
                who = rewrite.source or REGISTRY
                try:
                    rewritten = apply_rewrite(arguments, pending, rewrite, who)
                except Exception as error:
                    return _blocked(admitted, f"{who} failed ({_describe(error)}); failing closed", who)
                changed = changed or (rewritten is not pending and isinstance(rewrite, AcceptValue))
                pending = rewritten
        failed = record(value, content) if record is not None else None
        if failed is not None:
            from policyengine.runtime.session_steps import SESSION_STORE

            return _blocked(admitted, failed, SESSION_STORE)
        post = "rewritten" if pending.rewrites else "accepted"
        return replace(
            admitted,
            post=post,
            value=pending.value,
            content=pending.content,
            rewrites=pending.rewrites,
            value_changed=changed,
        )


def _admission(decision: PreDecision, red_line: Deny | None, frozen: Any) -> Decision:
    """What pre-execute and the guards make of a call: denied (by either), asked, or allowed."""
    if isinstance(decision, Deny):
        return Decision("deny", "pre-execute", decision.source, decision.reason, frozen)
    if red_line is not None:
        return Decision("deny", "guard", red_line.source, red_line.reason, frozen)
    if isinstance(decision, Ask):
        return Decision("ask", "pre-execute", decision.source, decision.reason, frozen)
    return Decision("allow", "pre-execute", decision.source, None, frozen)


def _without_call(session: FrozenDict, call_id: str) -> FrozenDict:
    """The session document without the call's own entry among the recent calls (what PreToolUse read)."""
    from policyengine.values.frozen import FrozenList

    calls = [c for c in session["calls"] if c["call_id"] != call_id]
    if len(calls) == len(session["calls"]):
        return session
    return FrozenDict._of({**session, "calls": FrozenList._of(calls)})


def _blocked(admitted: Decision, feedback: str, source: Source | None) -> Decision:
    content = freeze([{"type": "text", "text": feedback}])
    rewrites = (source,) if source is not None else ()
    return replace(admitted, post="blocked", content=content, rewrites=rewrites, feedback=feedback)


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _content_of(
    definition: ToolDefinition | None, arguments: Any, value: Any, problems: Callable[..., Any], default: Any
) -> Any:
    """What the model sees of the response: MCP content blocks as they are, anything else rendered."""
    if isinstance(value, list) and value and not problems(value):
        return value
    return _rendered(definition, arguments, value, problems, default)


def _rendered(
    definition: ToolDefinition | None, arguments: Any, value: Any, problems: Callable[..., Any], default: Any
) -> Any:
    render = definition.render if definition is not None else default
    content = render(arguments, value)
    found = problems(content)
    if found:
        raise ValueError(f"render returned bad content: {'; '.join(found)}")
    return freeze(content)


def _lookup(path: Path, data: bytes, name: str) -> ToolDefinition | None:
    """The definition of `name` in one catalog file, building that tool alone."""
    from policyengine.tools.catalog import load_catalog

    for entry in _entries(path, data):
        if _entry_name(entry) == name:
            return load_catalog([entry]).get(name)
    return None


def _entries(path: Path, data: bytes) -> list[Any]:
    """The definitions of a catalog file as JSON values (the shapes load_catalog reads)."""
    text = data.decode("utf-8-sig")
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:  # JSON Lines under another suffix
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(whole, list):
        return whole
    if isinstance(whole, dict):
        result = whole.get("result")
        tools = whole.get("tools", result.get("tools") if isinstance(result, dict) else None)
        return tools if isinstance(tools, list) else [whole]
    return []


def _entry_name(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return None
    function = entry.get("function")
    if entry.get("type") == "function" and isinstance(function, dict):
        return function.get("name")
    return entry.get("name")


# -- one hook command ------------------------------------------------------------------------


class Hook:
    """The packs of one `hook claude-code` command, loaded once, answering events.

    A process answers one event; the warm helper (cli/hook.py) answers many with one Hook, which
    loads the packs again whenever a file they were read from changes.
    """

    def __init__(self, folders: Sequence[str], cache: Path | None, sessions: str | None = None) -> None:
        from policyengine.adapters.claude_code_sessions import LazyStore, default_spec

        self.folders = list(folders)
        self.cache = cache
        # Where sessions live (`--sessions`, else sessions.sqlite3 in the cache folder): opened on first use,
        # kept open across pack reloads (the helper's), never opened for packs without session rules.
        self.sessions = LazyStore(sessions if sessions is not None else default_spec(cache))
        self._policy: Policy | None = None
        self._digests: dict[str, str] = {}
        self._redaction: Any = None  # the audit's redaction (the packs' rules), built on the first record
        # Set while the packs do not load and the last good ones decide (packs/last_good.py); None otherwise.
        self.kept: KeptPacks | None = None
        self._loaded_at = 0.0  # when the packs deciding now were loaded
        self._broken: tuple[tuple[str, int, int], ...] = ()  # the folders' files when loading them last failed

    def respond(self, raw: bytes, audit: str | None, otel: Any = None) -> tuple[int, str, str]:
        """(exit code, stdout, stderr) for one event: 0 and the answer, or 2 and the reason. Never raises.

        `audit` is the audit file, `otel` an OtelExport: the call's record goes to both (redacted).
        """
        try:
            event = parse_event(raw)
            policy = self.policy()
            decision = policy.decide(event)
            response = answer(event, decision)
            kept = self.kept.notice() if self.kept is not None else None
            if kept is not None:  # loudly: Claude Code shows a systemMessage to the user, stderr goes to its log
                response["systemMessage"] = f"policyengine: {kept}"
            said: list[str] = [f"policyengine hook: {kept}"] if kept is not None else []
            if audit or otel is not None:
                self._record(event, decision, policy, audit, otel, said, kept)
            # ASCII: a lone surrogate from the event's own escapes must not make the answer unwritable.
            return 0, json.dumps(response, ensure_ascii=True) + "\n", "".join(f"{line}\n" for line in said)
        except HookError as error:
            message = str(error)
        except RecursionError:
            message = "the event is nested too deeply to decide; the call is refused"
        except Exception as error:
            message = _failure(error)
        return 2, "", f"policyengine hook: {message}\n"

    def _record(
        self,
        event: Event,
        decision: Decision,
        policy: Policy,
        audit: str | None,
        otel: Any,
        said: list[str],
        kept: str | None = None,
    ) -> None:
        """Write the call's audit record (redacted by the packs, 0600); HookError when it cannot be written."""
        from policyengine.audit import AuditRedaction, AuditWriter, pack_set_digest
        from policyengine.errors import AuditFileError

        cwd = event.cwd if event.cwd is not None else policy.cwd
        record = audit_record(event, decision, cwd, pack_set_digest(policy.packs))
        if kept is not None:
            record["pack_error"] = kept  # the packs did not load: the last good ones decided this call
        if self._redaction is None:
            self._redaction = AuditRedaction(lambda: self._policy.packs if self._policy is not None else ())
        writer = AuditWriter(audit or None, redaction=self._redaction, otel=otel, keep_open=False, warn=said.append)
        try:
            writer.write(record)
        except (OSError, AuditFileError) as error:
            # An audit log was asked for: a call it cannot record is refused, not run unrecorded.
            why = error.strerror or error if isinstance(error, OSError) else error.message
            raise HookError(
                f"cannot write the audit log {audit}: {why}; check the path and its permissions, or drop --audit"
            ) from None

    def policy(self) -> Policy:
        """The packs and their catalog, loaded through the cache; again when a source file changed.

        When they no longer load, the last good packs decide (this process's, else the cache's entry)
        and `kept` says so; with none, the load's error is raised (every call refused).
        """
        from policyengine.packs.cache import source_digests
        from policyengine.packs.last_good import folder_state

        previous = self._policy
        if previous is not None and self.kept is not None:
            # The last good packs decide: load again only once something under the folders changed (a fix
            # may touch a file the kept packs were not read from, one the broken manifest names).
            if folder_state(self.folders) == self._broken:
                return previous
        elif previous is not None:
            try:
                if source_digests(previous.packs) == self._digests:
                    return previous
            except OSError:
                pass  # a file went away: load again, which reports it
        try:
            policy = self._load()
        except Exception as error:
            return self._last_good(error, previous)
        self.kept = None
        return policy

    def _last_good(self, error: Exception, previous: Policy | None) -> Policy:
        """The last good packs once `error` broke loading (this process's, else the cache's); else raises it."""
        from policyengine.errors import PolicyEngineError
        from policyengine.packs.cache import last_good_packs
        from policyengine.packs.last_good import KeptPacks, failed_load, folder_state

        if not isinstance(error, PolicyEngineError):
            raise error  # an engine fault, not a broken edit: refused as always
        policy, loaded_at = previous, self._loaded_at
        if policy is None:
            found = last_good_packs(self.folders, self.cache)
            if found is None:
                raise error  # no last good packs (a first load): every call is refused, as always
            policy = self._policy_of(found.packs, {}, None)
            loaded_at = found.loaded_at or 0.0
        self._policy, self._loaded_at = policy, loaded_at  # kept for the next call (the helper's many)
        self._broken = folder_state(self.folders)  # the next call loads again only once this changes
        self.kept = KeptPacks(policy.packs, loaded_at, failed_load(error, self.folders))
        return policy

    def _load(self) -> Policy:
        """The packs from the cache or their YAML (raises what loading raises)."""
        import time

        from policyengine.packs.cache import load_packs_cached, source_digests
        from policyengine.packs.loader import catalog_for

        self._policy = None
        # From YAML, the catalogs are loaded whole (every problem reported) before an entry is written;
        # a hit means they passed, and only the called tool is built from them.
        loaded = load_packs_cached(self.folders, self.cache, check=catalog_for)
        policy = self._policy_of(loaded.packs, loaded.files, loaded.checked)
        self._digests = source_digests(loaded.packs, loaded.files)
        self._policy, self._loaded_at = policy, loaded.loaded_at or time.time()
        return policy

    def _policy_of(self, packs: tuple[Pack, ...], files: Mapping[str, bytes], checked: Any) -> Policy:
        """A Policy over loaded packs: their catalogs read from `files` when held, else from disk."""

        def read(path: Path) -> bytes:
            cached = files.get(str(path.resolve()))
            return cached if cached is not None else path.read_bytes()

        catalogs = _catalogs(packs) or [BUILTIN_CATALOG]
        from policyengine.adapters.claude_code_sessions import HookSessions

        return Policy(packs, catalogs, read, checked, HookSessions.of(packs, self.sessions))


def _catalogs(packs: Sequence[Pack]) -> list[Path]:
    """The packs' catalog files in layer order, each once (as catalog_for reads them)."""
    seen: set[str] = set()
    found = []
    for pack in packs:
        if pack.catalog is not None and str(pack.catalog.resolve()) not in seen:
            seen.add(str(pack.catalog.resolve()))
            found.append(pack.catalog)
    return found


def _failure(error: Exception) -> str:
    """A failure as the reason Claude Code shows: a pack's problems rendered, anything else named."""
    from policyengine.errors import PolicyEngineError
    from policyengine.values.problems import PackLoadError

    if isinstance(error, PackLoadError):
        return "the packs do not load; every call is refused until they do:\n" + error.render(color=False)
    if isinstance(error, PolicyEngineError):
        return str(error)
    return f"internal error ({type(error).__name__}: {error}); the call is refused (please report)"


# -- the answer -----------------------------------------------------------------------------


def answer(event: Event, decision: Decision) -> dict[str, Any]:
    """The JSON object to print for the event."""
    if event.hook == PRE:
        return _pre_answer(decision)
    return _post_answer(event, decision)


def _pre_answer(decision: Decision) -> dict[str, Any]:
    source = decision.source
    if decision.verdict == "allow":
        if source is None or source.kind is SourceKind.DEFAULT:
            return {}  # no rule decided: Claude Code's own permission rules do
        chosen, reason = "allow", f"Allowed by policy ({_by(source)})."
    elif decision.verdict == "ask":
        chosen, reason = "ask", f"{decision.reason or 'Approve this call?'}{_bracket(source)}"
    else:  # deny, invalid and error all refuse: fail closed
        chosen, reason = "deny", f"{decision.reason or 'Denied by policy.'}{_bracket(source)}"
    return {
        "hookSpecificOutput": {
            "hookEventName": PRE,
            "permissionDecision": chosen,
            "permissionDecisionReason": reason,
        }
    }


def _post_answer(event: Event, decision: Decision) -> dict[str, Any]:
    mcp = event.tool.startswith("mcp__")
    specific: dict[str, Any] = {"hookEventName": POST}
    if decision.verdict not in ("allow", "ask"):
        # The call ran although policy refuses it (no PreToolUse hook, or a bypass): withhold its output.
        reason = f"{decision.reason or 'Refused by policy.'}{_bracket(decision.source)}"
        return _withheld(event, specific, reason, mcp)
    if decision.post == "blocked":
        who = decision.rewrites[0] if decision.rewrites else None
        return _withheld(event, specific, f"{decision.feedback}{_bracket(who)}", mcp)
    if decision.post != "rewritten":
        return {}
    if decision.value_changed:
        replaced = thaw(decision.value)
    elif mcp:
        replaced = thaw(decision.content)  # display content is all an MCP result is
    else:
        # A display-only rewrite of a built-in tool's output has no place in its shape: the model
        # reads the rewritten content as the block's reason instead of the original output.
        text = "\n".join(block.get("text", "") for block in thaw(decision.content) if isinstance(block, dict))
        return _withheld(event, specific, text, mcp)
    specific["updatedToolOutput"] = replaced
    if mcp:
        specific["updatedMCPToolOutput"] = replaced
    return {"hookSpecificOutput": specific}


def _withheld(event: Event, specific: dict[str, Any], reason: str, mcp: bool) -> dict[str, Any]:
    if mcp:
        specific["updatedToolOutput"] = specific["updatedMCPToolOutput"] = [{"type": "text", "text": reason}]
    else:
        specific["updatedToolOutput"] = _withhold(event.response, 0)
    return {"decision": "block", "reason": reason, "hookSpecificOutput": specific}


def _withhold(value: Any, depth: int) -> Any:
    """The response with every string, number and list emptied, in its own shape (Claude Code checks the shape)."""
    if depth > 100:
        return None
    if isinstance(value, str):
        return WITHHELD
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return 0
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {k: _withhold(v, depth + 1) for k, v in value.items()}
    return None


def _by(source: Source | None) -> str:
    """Who decided, for the reason Claude Code shows: the rule and its pack, or the pack's default."""
    if source is None:
        return ""
    if source.kind is SourceKind.DEFAULT:
        return f"default of pack {source.pack}" if source.pack else source.name
    return f"rule {source.name} of pack {source.pack}" if source.pack else source.name


def _bracket(source: Source | None) -> str:
    by = _by(source)
    return f" [policyengine: {by}]" if by else " [policyengine]"


# -- the audit record -----------------------------------------------------------------------

# Who answers when policy asks: Claude Code puts the call to its user in its permission prompt.
PROMPT = "the Claude Code user (permission prompt)"


def audit_record(event: Event, decision: Decision, cwd: str | None, pack_digest: str | None = None) -> dict[str, Any]:
    """The call's audit record (policyengine.audit's one format), which `policyengine dry-run` replays.

    A PreToolUse that asks records the question (`approval.answer` "asked"); Claude Code tells a
    hook nothing of the answer, but a PostToolUse of a call policy asks about means the tool ran,
    so its user allowed it: that record says so.
    """
    from policyengine.audit import audit_record as build

    arguments = decision.arguments if decision.arguments is not None else event.arguments
    result = None
    if decision.post is not None:
        # As post-execute left it: what policy hid never reaches the log.
        blocked = decision.post == "blocked"
        result = {
            "outcome": "blocked" if blocked else "ok",
            "value": None if blocked else thaw(decision.value),
            "content": thaw(decision.content),
        }
    approval = None
    if decision.verdict == "ask":
        ran = event.has_response
        approval = {
            "answer": "allowed-once" if ran else "asked",
            "by": PROMPT,
            "at": time.time(),
            "reason": "the tool ran after policy asked, so the person allowed it" if ran else decision.reason,
        }
    return build(
        front_end="claude-code-hook",
        name=event.tool,
        call_id=event.tool_use_id or "",
        arguments=arguments,
        agent=AGENT,
        decision=decision.verdict,
        stage=decision.stage,
        source=decision.source,
        reason=decision.reason,
        rewrites=[s.name for s in decision.rewrites],
        post=decision.post,
        result=result,
        approval=approval,
        session_id=event.session_id,
        cwd=cwd,
        event=event.hook,
        pack_digest=pack_digest,
        monitored=[hit.to_json() for hit in decision.monitored],
    )
