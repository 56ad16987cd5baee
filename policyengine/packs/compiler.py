"""Rule compiler: validated rule documents -> compiled rules; every problem collected."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

import re2

from policyengine.arguments.redact import REDACTED, Redaction, key_matcher, parse_path
from policyengine.errors import FreezeError
from policyengine.language.expressions import PE308, Expression, Report, Template, compile_expression, compile_template
from policyengine.packs.rule_schemas import Path, schema, schema_problems
from policyengine.packs.rules import Mode, Rule, RuleDecision, ToolMatcher
from policyengine.packs.yaml_source import SourceDoc
from policyengine.values.decisions import Source, SourceKind
from policyengine.values.frozen import freeze
from policyengine.values.problems import Problem, ProblemSink, Severity
from policyengine.values.results import RULE_STAGES, Stage

# Redaction replaces whole matches: no capture groups, so RE2 keeps to its fastest linear engines.
_RE2_MATCH_ONLY = re2.Options()
_RE2_MATCH_ONLY.never_capture = True
_RE2_MATCH_ONLY.log_errors = False

# A session label: what `label:` adds and `session.labels` holds (docs/sessions.md).
_LABEL = re.compile(r"[a-z0-9][a-z0-9._:-]{0,63}")


class FileCompiler:
    """Compiles the rules of one rule file of a pack, reporting into a shared sink."""

    def __init__(
        self,
        doc: SourceDoc,
        lists: Mapping[str, list[Any]],
        pack: str,
        sink: ProblemSink,
        *,
        digest: str = "",
        compiled: dict[tuple[str, str], Any] | None = None,
        mode: Mode = Mode.ENFORCE,
    ) -> None:
        self.doc, self.lists, self.pack, self.sink, self.digest = doc, lists, pack, sink, digest
        self.mode = mode  # the pack's `mode:`: monitor puts every rule of the pack in monitor mode
        self.used_lists: set[str] = set()
        # Expressions and templates that compiled cleanly, by text: reasons repeat across a
        # pack's rules, and the compiled values are immutable. Shared by the files of one pack
        # (same lists); a text with problems is compiled again where it appears, to report there.
        self.compiled: dict[tuple[str, str], Any] = {} if compiled is None else compiled

    def compile(self) -> list[Rule]:
        """Every rule of the file that compiled cleanly (problems go to the sink)."""
        rules = []
        raw_rules = self.doc.data.get("rules")
        # A `rules:` that is not a list was reported by the schema already.
        for i, raw in enumerate(raw_rules if isinstance(raw_rules, list) else []):
            if isinstance(raw, Mapping):
                try:
                    rule = self.rule(raw, ("rules", i))
                except Exception as error:  # an engine bug on one rule: refuse the pack, located, never crash
                    self._report(
                        PE308,
                        f"internal error compiling rule: {type(error).__name__}: {error} (please report)"[:400],
                        ("rules", i),
                        raw.get("id") if isinstance(raw.get("id"), str) else None,
                        hint="this is a policyengine bug, not a mistake in the rule",
                    )
                    continue
                if rule is not None:
                    rules.append(rule)
        return rules

    def rule(self, raw: Mapping[str, Any], path: Path) -> Rule | None:
        """One rule: schema of its stage, then expressions, templates and rewrites."""
        rule_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        stage_name = raw.get("stage")
        schemas = schema("rules")
        if not isinstance(stage_name, str) or stage_name not in {s.value for s in RULE_STAGES}:
            close = difflib.get_close_matches(str(stage_name), [s.value for s in RULE_STAGES], n=1)
            self._report(
                "PE205" if stage_name is not None else "PE203",
                f"rule stage must be one of pre-execute, guard, execute, post-execute (got {stage_name!r})",
                (*path, "stage"),
                rule_id,
                hint=f"did you mean {close[0]!r}?" if close else None,
            )
            return None
        stage = Stage(stage_name)
        before = len(self.sink.errors)
        self.sink.extend(schema_problems(self.doc, dict(raw), schemas[stage.value], path, rule_id))
        if len(self.sink.errors) > before:
            self.salvage(raw, path, rule_id)
            return None
        assert rule_id is not None  # the schema requires it
        tools = self.tools(raw["tools"], (*path, "tools"), rule_id)
        when = self.expression(raw.get("when"), (*path, "when"), rule_id)
        fields: dict[str, Any] = {}
        if "label" in raw:
            fields["labels"] = self.labels(raw["label"], (*path, "label"), rule_id)
        if stage is Stage.PRE_EXECUTE and "label" in raw:
            pass  # a label rule decides nothing
        elif stage in (Stage.PRE_EXECUTE, Stage.GUARD):
            fields["verb"] = RuleDecision(raw.get("decision", "deny"))
            fields["final"] = bool(raw.get("final", False))
            fields["reason"] = self.template(raw.get("reason"), (*path, "reason"), rule_id)
        elif stage is Stage.EXECUTE:
            if "timeout" not in raw and "retries" not in raw:
                self._report(
                    "PE203",
                    "an execute rule needs `timeout`, `retries`, or both",
                    path,
                    rule_id,
                    hint="e.g. timeout: 30 (seconds) and retries: 2",
                )
            fields.update(timeout=raw.get("timeout"), retries=raw.get("retries", 0), backoff=raw.get("backoff", 0.0))
        else:
            actions = [k for k in ("redact", "content", "block", "label") if k in raw]
            if not actions:
                self._report(
                    "PE203",
                    "a post-execute rule needs one of `redact`, `content`, `block` or `label`",
                    path,
                    rule_id,
                    hint="redact rewrites the value; content only changes what the model sees",
                )
            fields["content"] = self.template(raw.get("content"), (*path, "content"), rule_id)
            fields["block"] = self.template(raw.get("block"), (*path, "block"), rule_id)
            fields["redactions"] = tuple(
                r
                for i, op in enumerate(raw.get("redact") or [])
                if (r := self.redaction(op, (*path, "redact", i), rule_id)) is not None
            )
        if len(self.sink.errors) > before or tools is None:
            return None
        return Rule(
            id=rule_id,
            stage=stage,
            tools=tools,
            when=when,
            description=raw.get("description", ""),
            source=Source(SourceKind.RULE, rule_id, self.pack, self.digest),
            location=self.doc.locate((*path, "id")),
            mode=Mode.MONITOR if self.mode is Mode.MONITOR else Mode(raw.get("mode", Mode.ENFORCE.value)),
            **fields,
        )

    def labels(self, value: Any, path: Path, rule_id: str) -> tuple[str, ...]:
        """A rule's `label:` (one name or a list), each name checked; problems go to the sink."""
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        out: list[str] = []
        for i, name in enumerate(names):
            where = path if isinstance(value, str) else (*path, i)
            if not isinstance(name, str) or not _LABEL.fullmatch(name):
                self._report(
                    "PE203",
                    f"label {name!r} is not a label name",
                    where,
                    rule_id,
                    hint="lowercase letters, digits, '.', '_', ':' or '-', starting with a letter or digit "
                    "(e.g. private-data, secret:seen)",
                )
            elif name not in out:
                out.append(name)
        if not names:
            self._report("PE203", "`label:` names no label", path, rule_id, hint="e.g. label: private-data")
        return tuple(out)

    def salvage(self, raw: Mapping[str, Any], path: Path, rule_id: str | None) -> None:
        """Compile what is well-typed in a rule the schema refused: every problem in one run."""
        label = rule_id or "?"
        if isinstance(raw.get("tools"), list) and all(isinstance(t, str) for t in raw["tools"]):
            self.tools(raw["tools"], (*path, "tools"), label)
        if isinstance(raw.get("when"), str):
            self.expression(raw["when"], (*path, "when"), label)
        for key in ("reason", "content", "block"):
            if isinstance(raw.get(key), str):
                self.template(raw[key], (*path, key), label)

    def _report(self, code: str, message: str, path: Path, rule_id: str | None, hint: str | None = None) -> None:
        """A problem of this file at `path`, into the sink."""
        self.sink.add(self.doc.problem(code, message, path, rule_id=rule_id, hint=hint))

    def reporter(self, path: Path, rule_id: str | None) -> Report:
        """A Report that places character offsets inside the scalar at `path`."""

        def report(code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
            self.sink.add(
                self.doc.problem(code, message, path, rule_id=rule_id, hint=hint, column_offset=offset, width=width)
            )

        return report

    def expression(self, text: Any, path: Path, rule_id: str) -> Expression | None:
        """Compile a `when:` condition, if present."""
        found: Expression | None = self._compile("when", text, path, rule_id)
        return found

    def template(self, text: Any, path: Path, rule_id: str) -> Template | None:
        """Compile a reason, content or block template, if present."""
        found: Template | None = self._compile("template", text, path, rule_id)
        return found

    def _compile(self, kind: str, text: str | None, path: Path, rule_id: str) -> Any:
        """A `when` or a template (None for none), compiled once per text; a text with problems reports each time."""
        if text is None:
            return None
        self.used_lists.update(name for name in self.lists if f"lists.{name}" in text)
        found = self.compiled.get((kind, text))
        if found is None:
            compile_text = compile_expression if kind == "when" else compile_template
            found = compile_text(text, self.lists, self.reporter(path, rule_id))
            if found is not None:
                self.compiled[kind, text] = found
        return found

    def tools(self, entries: list[str], path: Path, rule_id: str) -> ToolMatcher | None:
        """Names, globs and @lists -> a matcher; unknown lists are problems."""
        names: set[str] = set()
        globs: list[str] = []
        tags: set[str] = set()
        ok = True
        for i, entry in enumerate(entries):
            items: list[Any] = [entry]
            if entry.startswith("tag:"):
                tag = entry[len("tag:") :].strip().lower()
                if not tag:
                    self._report(
                        "PE310",
                        "empty capability tag in tools",
                        (*path, i),
                        rule_id,
                        hint="name a tag the tools carry: tag:destructive, tag:read-only, tag:open-world",
                    )
                    ok = False
                tags.add(tag)
                continue
            if entry.startswith("@"):
                name = entry[1:]
                if name not in self.lists:
                    close = difflib.get_close_matches(name, list(self.lists), n=1)
                    self._report(
                        "PE304",
                        f"unknown list {name!r} in tools",
                        (*path, i),
                        rule_id,
                        hint=f"did you mean @{close[0]}?" if close else "declare it under `lists:`",
                    )
                    ok = False
                    continue
                self.used_lists.add(name)
                items = list(self.lists[name])
            for item in map(str, items):
                if any(c in item for c in "*?["):
                    globs.append(item)
                else:
                    names.add(item)
        return ToolMatcher(frozenset(names), tuple(globs), frozenset(tags)) if ok else None

    def redaction(self, op: Mapping[str, Any], path: Path, rule_id: str) -> Redaction | None:
        """One `redact:` entry: path, keys or pattern, replaced or masked."""
        common = {"replace_with": op.get("replace_with", REDACTED), "keep_last": op.get("keep_last")}
        try:
            freeze(common["replace_with"])
        except FreezeError as error:  # .inf or .nan: not JSON, the rewritten value could not be frozen
            self._report(
                "PE201",
                f"replace_with {error.message}",
                (*path, "replace_with"),
                rule_id,
                hint="replace with a string, a finite number, a boolean or null",
            )
            return None
        if "path" in op:
            parsed = parse_path(op["path"])
            if parsed is None:
                self._report(
                    "PE201",
                    f"bad value path {op['path']!r}",
                    (*path, "path"),
                    rule_id,
                    hint="use keys, [N] and [*], e.g. bookings[*].card_number",
                )
                return None
            return Redaction(path=parsed, **common)
        if "keys" in op:
            globs: list[str] = []
            for i, key in enumerate(op["keys"]):
                if key.startswith("@"):
                    if key[1:] not in self.lists:
                        self._report(
                            "PE304",
                            f"unknown list {key[1:]!r} in keys",
                            (*path, "keys", i),
                            rule_id,
                            hint="declare it under `lists:`",
                        )
                        return None
                    self.used_lists.add(key[1:])
                    globs.extend(map(str, self.lists[key[1:]]))
                else:
                    globs.append(key)
            try:
                return Redaction(keys=key_matcher(globs), **common)
            except (re2.error, ValueError) as error:
                self._report(
                    "PE306",
                    f"bad key pattern: {error}",
                    (*path, "keys"),
                    rule_id,
                    hint="key patterns are globs: * any characters, ? one character, [abc] a set",
                )
                return None
        if "pattern" in op:
            try:
                pattern = re2.compile(op["pattern"], _RE2_MATCH_ONLY)
            except re2.error as error:
                self._report(
                    "PE306",
                    f"bad regular expression: {error}",
                    (*path, "pattern"),
                    rule_id,
                    hint="patterns use RE2 syntax (no backreferences or lookaround)",
                )
                return None
            return Redaction(pattern=pattern, **common)
        if op.get("secrets") is True:
            return Redaction(secrets=True, **common)
        if op.get("cards") is True:
            return Redaction(cards=True, **common)
        self._report("PE203", "a redact entry needs `path`, `keys`, `pattern`, `secrets` or `cards`", path, rule_id)
        return None


def unused_list_warnings(doc: SourceDoc, declared: Mapping[str, Any], used: set[str]) -> list[Problem]:
    """Warnings for lists declared in this file that no rule of the pack uses."""
    return [
        doc.problem("PE404", f"list {name!r} is never used", ("lists", name), severity=Severity.WARNING, key=True)
        for name in declared
        if name not in used
    ]
