"""Pack loader: a folder with a manifest and rule files, loaded all-or-nothing."""

from __future__ import annotations

import gc
import hashlib
import json
import linecache
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from policyengine.packs.compiler import FileCompiler, schema, schema_problems, unused_list_warnings
from policyengine.packs.rules import Chain, Rule, RuleIndex
from policyengine.packs.yaml_source import SourceDoc, load_yaml
from policyengine.values.decisions import Allow, Ask, Deny, PreDecision, Source, SourceKind
from policyengine.values.problems import Location, Problem, ProblemSink
from policyengine.values.results import RULE_STAGES, Stage

MANIFEST = "pack.yaml"


@dataclass(frozen=True, eq=False)
class Pack:
    """A loaded, compiled pack: manifest fields, rules in order, and a content digest."""

    name: str
    version: str
    description: str
    default: PreDecision
    digest: str
    rules: tuple[Rule, ...]
    lists: Mapping[str, tuple[Any, ...]]
    path: Path
    files: tuple[str, ...]
    tests: tuple[str, ...] = ()
    warnings: tuple[Problem, ...] = ()
    # Where calls that carry no cwd start (manifest `cwd:`); None: relative climbs are unknown.
    cwd: str | None = None
    index: dict[Stage, RuleIndex] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for stage in RULE_STAGES:
            self.index[stage] = RuleIndex(tuple(r for r in self.rules if r.stage is stage))

    def rules_for(self, stage: Stage, tool: str, tags: frozenset[str] = frozenset()) -> Chain:
        """The rules of `stage` that can apply to `tool` (carrying `tags`), in pack order (cached per name)."""
        return self.index[stage].for_tool(tool, tags)

    def rule(self, rule_id: str) -> Rule | None:
        """A rule by id."""
        return next((r for r in self.rules if r.id == rule_id), None)


def digest_of(manifest: Mapping[str, Any], documents: Sequence[tuple[str, Any]]) -> str:
    """sha256 over canonical JSON of the parsed content: formatting and comments do not count."""
    canonical = json.dumps(
        {"manifest": manifest, "files": [[name, data] for name, data in documents]},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _read(path: Path, display: str, sink: ProblemSink) -> SourceDoc | None:
    try:
        raw = path.read_bytes()
    except OSError as error:
        manifest = path.name == MANIFEST
        sink.add(
            Problem(
                "PE108",
                f"cannot read {display}: {error.strerror or error}",
                Location(display, 1, 1),
                hint="a pack is a folder holding pack.yaml; check the folder given"
                if manifest
                else "check the path in the manifest's `files:`",
            )
        )
        return None
    return load_yaml(raw, display, sink)


def _default(manifest: Mapping[str, Any], name: str) -> PreDecision:
    kind = manifest.get("default", "allow")
    source = Source(SourceKind.DEFAULT, f"default of pack {name}", name)
    if kind == "allow":
        return Allow(source)
    reason = manifest.get("default_reason") or f"No rule of pack {name} allowed this call (default: {kind})."
    return Deny(reason, source) if kind == "deny" else Ask(reason, source)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a pack is built.

    Loading allocates hundreds of thousands of long-lived objects (marks, AST nodes, closures),
    and each allocation burst triggers a collection that rescans all of them: about 40% of the
    time of a 10,000-rule load. Reference counting still frees everything short-lived.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_pack(folder: str | Path, *, sink: ProblemSink | None = None) -> Pack:
    """Load and compile one pack; raise PackLoadError listing every problem, install nothing."""
    own = sink is None
    sink = sink or ProblemSink()
    with _collector_paused():
        pack = _load(Path(folder), sink)
    if own:
        sink.raise_if_errors()
    assert pack is not None or sink.errors
    return pack  # type: ignore[return-value]


def _load(folder: Path, sink: ProblemSink) -> Pack | None:
    display = str(folder / MANIFEST)
    manifest_doc = _read(folder / MANIFEST, display, sink)
    if manifest_doc is None:
        return None
    manifest = manifest_doc.data
    if not isinstance(manifest, dict):
        sink.add(manifest_doc.problem("PE107", "the manifest must be a mapping", ()))
        return None
    problems = schema_problems(manifest_doc, manifest, schema("pack"), (), None)
    sink.extend(problems)
    if problems:
        return None
    name = manifest["name"]
    docs: list[SourceDoc] = []
    seen: set[str] = set()
    for i, rel in enumerate(manifest["files"]):
        if rel in seen:
            sink.add(manifest_doc.problem("PE403", f"{rel} is listed twice", ("files", i)))
            continue
        seen.add(rel)
        target = folder / rel
        try:
            outside = not target.resolve().is_relative_to(folder.resolve())
            present = target.is_file()
        except (OSError, ValueError, RuntimeError) as error:  # RuntimeError: a symlink loop
            sink.add(manifest_doc.problem("PE403", f"rule file {rel} cannot be opened: {error}", ("files", i)))
            continue
        if outside:
            # A pack is one folder: a rule file outside it would be installed unreviewed with it.
            sink.add(
                manifest_doc.problem(
                    "PE403",
                    f"rule file {rel} is outside the pack folder",
                    ("files", i),
                    hint="keep rule files inside the pack folder",
                )
            )
            continue
        if not present:
            sink.add(
                manifest_doc.problem(
                    "PE403",
                    f"rule file {rel} not found in {folder}",
                    ("files", i),
                    hint="paths are relative to the pack folder",
                )
            )
            continue
        doc = _read(target, str(target), sink)
        if doc is None:
            continue
        if not isinstance(doc.data, dict):
            sink.add(doc.problem("PE107", "a rule file must be a mapping with `lists:` and `rules:`", ()))
            continue
        sink.extend(schema_problems(doc, doc.data, schema("rule-file"), (), None))
        docs.append(doc)
    lists: dict[str, tuple[Any, ...]] = {}
    for doc in docs:
        declared = doc.data.get("lists")
        for list_name, values in (declared if isinstance(declared, dict) else {}).items():
            if list_name in lists:
                sink.add(
                    doc.problem(
                        "PE402",
                        f"list {list_name!r} is declared twice in pack {name}",
                        ("lists", list_name),
                        key=True,
                        hint="declare each list once",
                    )
                )
            elif isinstance(values, list):
                lists[list_name] = tuple(values)
    digest = digest_of(manifest, [(doc.filename.rsplit("/", 1)[-1], doc.data) for doc in docs])
    rules: list[Rule] = []
    used: set[str] = set()
    compiled: dict[tuple[str, str], Any] = {}
    for doc in docs:
        compiler = FileCompiler(
            doc, {k: list(v) for k, v in lists.items()}, name, sink, digest=digest, compiled=compiled
        )
        rules.extend(compiler.compile())
        used |= compiler.used_lists
    warnings = [w for doc in docs for w in unused_list_warnings(doc, _lists_of(doc), used)]
    _unique_raw_ids(docs, name, sink)
    default = _default(manifest, name)
    default = replace(default, source=replace(default.source, digest=digest)) if default.source else default
    sink.extend(warnings)
    if sink.errors:
        return None
    return Pack(
        name=name,
        version=manifest["version"],
        description=manifest.get("description", ""),
        default=default,
        digest=digest,
        rules=tuple(rules),
        lists=lists,
        path=folder,
        files=tuple(manifest["files"]),
        tests=tuple(manifest.get("tests") or ()),
        warnings=tuple(warnings),
        cwd=manifest.get("cwd"),
    )


def _unique_raw_ids(docs: Sequence[SourceDoc], pack: str, sink: ProblemSink) -> None:
    """Duplicate ids within a pack, found in the documents: a rule with other problems counts too."""
    first: dict[str, Location] = {}
    for doc in docs:
        raw_rules = doc.data.get("rules")
        for i, raw in enumerate(raw_rules if isinstance(raw_rules, list) else []):
            rule_id = raw.get("id") if isinstance(raw, dict) else None
            if not isinstance(rule_id, str):
                continue
            where = doc.locate(("rules", i, "id"))
            if rule_id in first:
                sink.add(
                    doc.problem(
                        "PE401",
                        f"rule id {rule_id!r} is already used by pack {pack} at {first[rule_id]}",
                        ("rules", i, "id"),
                        rule_id=rule_id,
                        hint="rule ids must be unique across every loaded layer",
                    )
                )
            else:
                first[rule_id] = where


def _lists_of(doc: SourceDoc) -> dict[str, Any]:
    """The `lists:` of a rule file, or {} when it is not a mapping (the schema reported it)."""
    declared = doc.data.get("lists")
    return declared if isinstance(declared, dict) else {}


def check_unique_ids(rules: Iterable[Rule], sink: ProblemSink) -> None:
    """Report every rule id used by more than one layer, with the later rule's source line."""
    first: dict[str, Rule] = {}
    for rule in rules:
        other = first.setdefault(rule.id, rule)
        if other is not rule:
            loc = rule.location
            line = linecache.getline(loc.file, loc.line).rstrip("\n") if loc else None
            sink.add(
                Problem(
                    "PE401",
                    f"rule id {rule.id!r} is already used by pack {other.source.pack} at {other.location}",
                    loc,
                    rule_id=rule.id,
                    hint="rule ids must be unique across every loaded layer",
                    source_line=line or None,
                    caret_width=len(rule.id),
                )
            )


def load_packs(folders: Sequence[str | Path]) -> tuple[Pack, ...]:
    """Load layers in order (organisation, project, session); all-or-nothing across them."""
    sink = ProblemSink()
    with _collector_paused():
        packs = [_load(Path(f), sink) for f in folders]
    loaded = [p for p in packs if p is not None]
    if len(loaded) == len(packs):
        check_unique_ids([r for p in loaded for r in p.rules], sink)
    sink.raise_if_errors()
    return tuple(loaded)
