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
from typing import TYPE_CHECKING, Any

from policyengine.packs.rules import Chain, Mode, Rule, RuleIndex
from policyengine.values.decisions import Allow, Ask, Deny, PreDecision, Source, SourceKind
from policyengine.values.problems import Location, Problem, ProblemSink
from policyengine.values.results import RULE_STAGES, Stage

if TYPE_CHECKING:
    from policyengine.packs.yaml_source import SourceDoc
    from policyengine.tools.definition import ToolDefinition

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
    # Manifest `mode:`: MONITOR puts every rule in monitor mode, and the pack's default is not applied.
    mode: Mode = Mode.ENFORCE
    # The tool catalog the pack is written against (manifest `catalog:`, inside the pack folder):
    # authoring metadata for check, test, explain and dry-run, outside the digest.
    catalog: Path | None = None
    index: dict[Stage, RuleIndex] = field(default_factory=dict, repr=False)
    # Label rules (pre-execute, post-execute) are kept apart: they decide nothing, they label the session.
    labelling: dict[Stage, RuleIndex] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for stage in RULE_STAGES:
            self.index[stage] = RuleIndex(tuple(r for r in self.rules if r.stage is stage and not r.labels))
            self.labelling[stage] = RuleIndex(tuple(r for r in self.rules if r.stage is stage and r.labels))

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
    # The YAML reader and the rule compiler load on first use: a hook that rebuilds packs from
    # its cache (packs/cache.py) needs neither (with cerberus and yaml, ~40 ms of imports).
    from policyengine.packs.yaml_source import load_yaml

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


def _default(manifest: Mapping[str, Any], name: str, mode: Mode = Mode.ENFORCE) -> PreDecision:
    kind = manifest.get("default", "allow")
    source = Source(SourceKind.DEFAULT, f"default of pack {name}", name)
    if kind == "allow" or mode is Mode.MONITOR:  # a pack in monitor mode enforces nothing, its default included
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
    from policyengine.packs.compiler import FileCompiler, unused_list_warnings
    from policyengine.packs.rule_schemas import schema, schema_problems

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
    catalog = _catalog(folder, manifest_doc, manifest.get("catalog"), sink)
    # The catalog is authoring metadata, not policy: pointing a pack at a catalog (or at another
    # one) keeps its digest, and a pack without `catalog:` hashes exactly as before the key existed.
    content = {k: v for k, v in manifest.items() if k != "catalog"}
    digest = digest_of(content, [(doc.filename.rsplit("/", 1)[-1], doc.data) for doc in docs])
    rules: list[Rule] = []
    used: set[str] = set()
    compiled: dict[tuple[str, str], Any] = {}
    mode = Mode(manifest.get("mode", Mode.ENFORCE.value))
    for doc in docs:
        compiler = FileCompiler(
            doc, {k: list(v) for k, v in lists.items()}, name, sink, digest=digest, compiled=compiled, mode=mode
        )
        rules.extend(compiler.compile())
        used |= compiler.used_lists
    warnings = [w for doc in docs for w in unused_list_warnings(doc, _lists_of(doc), used)]
    _unique_raw_ids(docs, name, sink)
    default = _default(manifest, name, mode)
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
        mode=mode,
        catalog=catalog,
    )


def _catalog(folder: Path, manifest_doc: SourceDoc, rel: str | None, sink: ProblemSink) -> Path | None:
    """The manifest's `catalog:` as a path, once it names a readable file inside the pack folder (else PE403)."""
    if rel is None:
        return None
    target = folder / rel
    where = ("catalog",)
    try:
        outside = not target.resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError, RuntimeError) as error:  # RuntimeError: a symlink loop
        sink.add(manifest_doc.problem("PE403", f"tool catalog {rel} cannot be opened: {error}", where))
        return None
    if outside:
        # As for rule files: a pack is one folder, reviewed and shipped as a whole.
        sink.add(
            manifest_doc.problem(
                "PE403",
                f"tool catalog {rel} is outside the pack folder",
                where,
                hint="copy the catalog into the pack folder (two layers may hold identical copies)",
            )
        )
        return None
    try:
        found = target.is_file()
    except OSError as error:  # a name too long for the file system, say: pathlib lets that one through
        sink.add(manifest_doc.problem("PE403", f"tool catalog {rel[:80]} cannot be opened: {error.strerror}", where))
        return None
    if not found:
        sink.add(
            manifest_doc.problem(
                "PE403",
                f"tool catalog {rel} not found in {folder}",
                where,
                hint="the path is relative to the pack folder; remove `catalog:` if the pack has no catalog",
            )
        )
        return None
    try:
        with target.open("rb"):
            pass  # only readability: the verbs that use the catalog parse it and report its problems
    except OSError as error:
        sink.add(
            manifest_doc.problem(
                "PE403",
                f"tool catalog {rel} cannot be read: {error.strerror or error}",
                where,
                hint="check the file's permissions",
            )
        )
        return None
    return target


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


def catalog_for(packs: Sequence[Pack], tools: str | Path | None = None) -> dict[str, ToolDefinition] | None:
    """The tools to check and evaluate against: the `tools` file, else the union of the layers' catalogs, else None."""
    # Layers may name one file or hold identical copies; a tool two catalogs define differently is
    # a CatalogError (PE703) at the later pack's `catalog:`: which one a call would meet is unknowable.
    from policyengine.tools.catalog import DUPLICATE_TOOL, CatalogError, load_catalog

    if tools is not None:
        return load_catalog(tools)
    merged: dict[str, ToolDefinition] = {}
    owner: dict[str, Pack] = {}
    read: set[Path] = set()
    problems: list[Problem] = []
    for pack in packs:
        if pack.catalog is None or pack.catalog.resolve() in read:
            continue
        read.add(pack.catalog.resolve())
        clashes: dict[int, tuple[Pack, list[str]]] = {}
        for name, definition in load_catalog(pack.catalog).items():
            first = owner.setdefault(name, pack)
            if first is pack:
                merged[name] = definition
            elif _spec(merged[name]) != _spec(definition):
                clashes.setdefault(id(first), (first, []))[1].append(name)
        for first, names in clashes.values():
            shown = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            problems.append(
                _manifest_problem(
                    pack,
                    DUPLICATE_TOOL,
                    f"the catalogs of pack {first.name} ({first.catalog}) and pack {pack.name} ({pack.catalog}) "
                    f"define {shown} differently",
                    "a tool name has one definition: make the catalogs agree, drop one `catalog:`, or pass "
                    "--tools FILE to use one catalog for every layer",
                )
            )
    if problems:
        raise CatalogError(problems)
    return merged if read else None


def _spec(definition: ToolDefinition) -> str:
    """What a model and the rules see of a tool: its MCP spec (schemas, description), tags and roles."""
    roles = sorted(definition.roles.items()) if definition.roles else None
    return json.dumps([definition.to_mcp(), sorted(definition.tags), roles], sort_keys=True, default=str)


def _manifest_problem(pack: Pack, code: str, message: str, hint: str) -> Problem:
    """A problem at the pack manifest's `catalog:` (read again, for its position)."""
    display = str(pack.path / MANIFEST)
    doc = _read(pack.path / MANIFEST, display, ProblemSink())
    if doc is None:  # pragma: no cover - the manifest loaded a moment ago
        return Problem(code, message, Location.start_of(display), hint=hint)
    return doc.problem(code, message, ("catalog",), hint=hint)
