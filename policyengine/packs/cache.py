"""Compiled packs cached on disk, so a hook process rebuilds them without YAML, schemas or the rule compiler.

Loading a pack from YAML costs ~30 ms of work and ~40 ms of imports (the YAML parser, the
shipped schemas, the rule compiler, cerberus); a Claude Code hook is a fresh process per tool
call. Compiled rules hold closures (compiled JMESPath), which cannot be pickled, so an entry
holds what the compiler made of the YAML as plain JSON: every field of every rule, with
conditions and templates as their text. A load compiles those texts again (~0.1 ms each) and
builds the same `Pack` and `Rule` objects the loader builds.

Trust: an entry is never taken on its word.
- It is used only for the exact bytes it was built from: it records the SHA-256 of every file
  the packs were read from (manifests, rule files, catalogs), with their resolved paths, and a
  load reads and hashes them again; any difference rebuilds it.
- It is keyed by the folders as given and as resolved, and records a fingerprint of the
  engine's code (size and mtime of its modules and schemas): an upgrade or an edit rebuilds it.
- It is JSON (never pickle: a forged entry must not be able to run code), with a checksum
  over its payload, read only from a folder that belongs to the user and is closed to others
  (0700), from a regular file owned by the user that no one else can write; never through a
  symlink.
- It is written only when the rebuilt packs serialize exactly as the loaded ones, and only
  when every field of `Pack` and `Rule` is one this module knows (a new field disables the
  cache instead of being dropped). Writes are atomic (a temporary file, then a rename).
- Anything wrong (missing, corrupt, stale, foreign, unreadable) means: load from YAML, write
  a new entry. The cache can make a load faster, never different. A process running as the
  same user could still forge an entry, as it could edit the packs or the agent's settings;
  the shipped claude-code pack refuses agent writes to the cache folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

# Only the standard library at the top: `cache_dir` and `fingerprint` serve the hook's helper
# client, which must start in milliseconds; the packs' classes load with the first pack.
if TYPE_CHECKING:
    from policyengine.arguments.redact import Redaction
    from policyengine.language.expressions import Report, Template
    from policyengine.packs.loader import Pack
    from policyengine.packs.rules import Rule
    from policyengine.values.decisions import PreDecision, Source

__all__ = [
    "FORMAT",
    "CachedPacks",
    "cache_dir",
    "fingerprint",
    "last_good_packs",
    "load_packs_cached",
    "source_digests",
]

FORMAT = 3  # 2: rules carry their session labels; 3: packs and rules carry their mode (enforce, monitor)
MAX_ENTRY_BYTES = 32 << 20  # an entry larger than this is not read (a pack set of ~100,000 rules)
ENV = "POLICYENGINE_CACHE"
OFF = frozenset({"", "0", "off", "no", "false", "none"})

# Every field the serializer writes; a field of Pack or Rule outside these (and the derived ones)
# means the engine grew something this module does not know: no entry is written.
_PACK_FIELDS = frozenset(
    {
        "name",
        "version",
        "description",
        "default",
        "digest",
        "rules",
        "lists",
        "path",
        "files",
        "tests",
        "cwd",
        "mode",
        "catalog",
    }
)
# Lint output the hook does not report; the rule indexes, built in __post_init__.
_PACK_SKIPPED = frozenset({"warnings", "index", "labelling"})
_RULE_FIELDS = frozenset(
    {
        "id",
        "stage",
        "tools",
        "when",
        "source",
        "description",
        "location",
        "verb",
        "final",
        "reason",
        "timeout",
        "retries",
        "backoff",
        "redactions",
        "content",
        "block",
        "labels",
        "mode",
    }
)
_RULE_DERIVED = frozenset({"applies", "predicate"})
_REDACTION_FIELDS = frozenset({"path", "keys", "pattern", "replace_with", "keep_last", "secrets", "cards"})
_RE2_OPTIONS = (
    "case_sensitive",
    "dot_nl",
    "literal",
    "longest_match",
    "max_mem",
    "never_capture",
    "never_nl",
    "one_line",
    "perl_classes",
    "posix_syntax",
    "word_boundary",
    "log_errors",
)
# The modules whose code decides what an entry holds or means, and the shipped schemas.
CODE_FOLDERS = ("packs", "language", "arguments", "tools", "values")  # tests/test_architecture.py checks it
MANIFEST = "pack.yaml"  # as packs/loader.py names it (not imported: this module's top stays light)


class CachedPacks:
    """Packs loaded through the cache: the packs, whether the entry was used, and the files' bytes."""

    __slots__ = ("checked", "files", "hit", "loaded_at", "packs")

    def __init__(
        self,
        packs: tuple[Pack, ...],
        hit: bool,
        files: Mapping[str, bytes],
        checked: Any = None,
        loaded_at: float | None = None,
    ) -> None:
        self.packs = packs
        # When the entry was written (the packs last loaded from YAML); None for packs just loaded.
        self.loaded_at = loaded_at
        self.hit = hit
        # Each file read for the packs, by resolved path: a caller can read a catalog without opening it again.
        self.files = files
        # What `check` returned on a load from YAML (None on a hit: the entry was written after it passed).
        self.checked = checked


def _sha256(data: bytes) -> str:
    import hashlib  # not at the top: OpenSSL's binding costs the helper client ~3 ms it never needs

    return hashlib.sha256(data).hexdigest()


def cache_dir() -> Path | None:
    """`$POLICYENGINE_CACHE`, else `$XDG_CACHE_HOME/policyengine`, else ~/.cache/policyengine; None when turned off."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in OFF else Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "policyengine"


def load_packs_cached(
    folders: Sequence[str | Path], directory: Path | None, check: Callable[[tuple[Pack, ...]], Any] | None = None
) -> CachedPacks:
    """`load_packs(folders)`, through the cache in `directory` (None: no cache); raises what load_packs raises.

    `check` runs on packs loaded from YAML before an entry is written (what it raises propagates
    and nothing is written), so an entry stands for packs that passed it: the hook checks the
    packs' catalogs this way, once per change instead of once per call.
    """
    from policyengine.packs.loader import load_packs

    given = [str(f) for f in folders]
    try:
        resolved = [str(Path(f).resolve()) for f in given]
    except (OSError, RuntimeError):  # a symlink loop: the loader reports it
        packs = load_packs(folders)
        return CachedPacks(packs, False, {}, check(packs) if check is not None else None)
    place = _usable(directory) if directory is not None else None
    name = _entry_name(given, resolved)
    code = fingerprint(CODE_FOLDERS)
    if place is not None:
        found = _read_entry(place / name, name, code, given)
        if found is not None:
            return found
    packs = load_packs(folders)
    checked = check(packs) if check is not None else None
    if place is not None:
        with contextlib.suppress(Exception):  # the cache is an optimisation: failing to write changes nothing
            _write_entry(place, name, code, given, packs)
    return CachedPacks(packs, False, {}, checked)


def last_good_packs(folders: Sequence[str | Path], directory: Path | None) -> CachedPacks | None:
    """The packs these folders last loaded as (the cache's entry), whatever the files hold now; None if none.

    For a hook whose packs no longer load (packs/last_good.py): the entry is checked as any other
    (ours, closed to others, its checksum, this engine's code) except against the files' bytes,
    since the files are exactly what broke. The entry's mtime says when those packs were loaded.
    """
    if directory is None:
        return None
    given = [str(f) for f in folders]
    try:
        resolved = [str(Path(f).resolve()) for f in given]
    except (OSError, RuntimeError):
        return None
    place = _usable(directory)
    if place is None:
        return None
    name = _entry_name(given, resolved)
    return _read_entry(place / name, name, fingerprint(CODE_FOLDERS), given, verify=False)


def _entry_name(given: Sequence[str], resolved: Sequence[str]) -> str:
    text = json.dumps([FORMAT, list(given), list(resolved)], separators=(",", ":"))
    return f"packs-{_sha256(text.encode('utf-8'))[:32]}.json"


def fingerprint(layers: Sequence[str]) -> str:
    """Size and mtime of these layers' modules and data files, and of the schemas: an upgrade or an edit changes it."""
    package = Path(__file__).resolve().parent.parent
    folders = [package / name for name in layers]
    # Installed, the schemas ship inside the package; in a checkout they sit beside it.
    folders += [package / "schemas", package.parent / "schemas"]
    parts: list[str] = []
    for folder in folders:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            parts.append(f"{folder.name}: none")  # a folder gone (a checkout's schemas when installed) counts too
            continue
        for entry in entries:
            if entry.name.endswith((".py", ".yaml", ".json")):
                with contextlib.suppress(OSError):
                    info = entry.stat()
                    parts.append(f"{folder.name}/{entry.name}:{info.st_size}:{info.st_mtime_ns}")
    return _sha256("\n".join(parts).encode("utf-8"))


def _usable(directory: Path) -> Path | None:
    """The cache folder, created private to the user; None when it is not ours or is open to others."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(directory)
        if not stat.S_ISDIR(info.st_mode) or not _ours(info):
            return None
        if info.st_mode & 0o077:
            os.chmod(directory, 0o700)  # our own folder, opened by someone's umask or chmod: close it
        return directory
    except OSError:
        return None


def _ours(info: os.stat_result) -> bool:
    getuid = getattr(os, "getuid", None)
    return getuid is None or info.st_uid == getuid()


def _read_entry(path: Path, name: str, code: str, given: Sequence[str], *, verify: bool = True) -> CachedPacks | None:
    """The packs of a valid, fresh entry; None for anything else (missing, foreign, corrupt, stale).

    `verify=False` skips only the check of the source files' bytes (last_good_packs).
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _ours(info) or info.st_mode & 0o022 or info.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as stream:
            raw = stream.read(MAX_ENTRY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        entry = json.loads(raw)
        payload = entry["payload"]
        if entry.get("checksum") != _checksum(payload):
            return None
        if payload["format"] != FORMAT or payload["name"] != name or payload["code"] != code:
            return None
        if payload["given"] != list(given):
            return None
        files = _verified_sources(payload["sources"]) if verify else {}
        if files is None:
            return None
        packs = tuple(_pack_from(p, dict(p["lists"])) for p in payload["packs"])
    except Exception:  # whatever is wrong with an entry, it is rebuilt: never trusted, never fatal
        return None
    return CachedPacks(packs, True, files, loaded_at=info.st_mtime)


def _verified_sources(sources: Any) -> dict[str, bytes] | None:
    """The bytes of every source file, when each still resolves and hashes as recorded; else None."""
    files: dict[str, bytes] = {}
    for given, resolved, digest in sources:
        try:
            if str(Path(given).resolve()) != resolved:
                return None
            data = Path(resolved).read_bytes()
        except (OSError, RuntimeError):
            return None
        if _sha256(data) != digest:
            return None
        files[resolved] = data
    return files


def _checksum(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return _sha256(text.encode("ascii"))


def _write_entry(place: Path, name: str, code: str, given: Sequence[str], packs: Sequence[Pack]) -> None:
    """Write the entry atomically, after checking that it rebuilds the same packs; skip when it would not."""
    if not _fields_known():
        return
    serialized = [_pack_json(p) for p in packs]
    rebuilt = [_pack_from(p, dict(p["lists"])) for p in json.loads(json.dumps(serialized))]
    if [_pack_json(p) for p in rebuilt] != serialized:
        return
    sources = []
    for pack in packs:
        for file in _sources_of(pack):
            resolved = str(file.resolve())
            sources.append([str(file), resolved, _sha256(Path(resolved).read_bytes())])
    payload = {"format": FORMAT, "name": name, "code": code, "given": list(given), "sources": sources}
    payload["packs"] = serialized
    data = json.dumps({"payload": payload, "checksum": _checksum(payload)}, separators=(",", ":"))
    import tempfile  # the write path only: ~3 ms the warm path does not pay

    fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=place)  # 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(data)
        os.replace(temporary, place / name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def source_digests(packs: Sequence[Pack], files: Mapping[str, bytes] | None = None) -> dict[str, str]:
    """SHA-256 of every file the packs were read from, by resolved path (`files`: bytes already read)."""
    digests = {}
    for pack in packs:
        for file in _sources_of(pack):
            resolved = str(file.resolve())
            data = (files or {}).get(resolved)
            digests[resolved] = _sha256(data if data is not None else Path(resolved).read_bytes())
    return digests


def _sources_of(pack: Pack) -> list[Path]:
    files = [pack.path / MANIFEST, *(pack.path / rel for rel in pack.files)]
    return files + ([pack.catalog] if pack.catalog is not None else [])


def _fields_known() -> bool:
    import dataclasses

    from policyengine.arguments.redact import Redaction
    from policyengine.packs.loader import Pack
    from policyengine.packs.rules import Rule

    pack = {f.name for f in dataclasses.fields(Pack)}
    rule = {f.name for f in dataclasses.fields(Rule)}
    redaction = {f.name for f in dataclasses.fields(Redaction)}
    return (
        pack == _PACK_FIELDS | _PACK_SKIPPED and rule == _RULE_FIELDS | _RULE_DERIVED and redaction == _REDACTION_FIELDS
    )


# -- Pack and Rule as JSON, and back --------------------------------------------------------


def _pack_json(pack: Pack) -> dict[str, Any]:
    return {
        "name": pack.name,
        "version": pack.version,
        "description": pack.description,
        "default": _decision_json(pack.default),
        "digest": pack.digest,
        "lists": {k: list(v) for k, v in pack.lists.items()},
        "path": str(pack.path),
        "files": list(pack.files),
        "tests": list(pack.tests),
        "cwd": pack.cwd,
        "mode": pack.mode.value,
        "catalog": str(pack.catalog) if pack.catalog is not None else None,
        "rules": [_rule_json(r) for r in pack.rules],
    }


def _pack_from(data: Mapping[str, Any], lists: dict[str, Any]) -> Pack:
    from policyengine.packs.loader import Pack
    from policyengine.packs.rules import Mode

    # The compiler hands each file every list of the pack, as lists: so does the rebuild.
    plain = {k: list(v) for k, v in lists.items()}
    return Pack(
        name=data["name"],
        version=data["version"],
        description=data["description"],
        default=_decision_from(data["default"]),
        digest=data["digest"],
        rules=tuple(_rule_from(r, plain) for r in data["rules"]),
        lists={k: tuple(v) for k, v in lists.items()},
        path=Path(data["path"]),
        files=tuple(data["files"]),
        tests=tuple(data["tests"]),
        cwd=data["cwd"],
        mode=Mode(data["mode"]),
        catalog=Path(data["catalog"]) if data["catalog"] is not None else None,
    )


def _source_json(source: Source | None) -> list[Any] | None:
    return None if source is None else [source.kind.value, source.name, source.pack, source.digest]


def _source_from(data: Any) -> Source | None:
    from policyengine.values.decisions import Source, SourceKind

    return None if data is None else Source(SourceKind(data[0]), data[1], data[2], data[3])


def _decision_json(decision: PreDecision) -> dict[str, Any]:
    from policyengine.values.decisions import Allow, Ask, Deny

    kind = "deny" if isinstance(decision, Deny) else "ask" if isinstance(decision, Ask) else "allow"
    reason = None if isinstance(decision, Allow) else decision.reason
    return {"kind": kind, "reason": reason, "source": _source_json(decision.source)}


def _decision_from(data: Mapping[str, Any]) -> PreDecision:
    from policyengine.values.decisions import Allow, Ask, Deny

    source = _source_from(data["source"])
    if data["kind"] == "deny":
        return Deny(data["reason"], source)
    if data["kind"] == "ask":
        return Ask(data["reason"], source)
    return Allow(source)


def _rule_json(rule: Rule) -> dict[str, Any]:
    location = rule.location
    return {
        "id": rule.id,
        "stage": rule.stage.value,
        "tools": {
            "names": sorted(rule.tools.names),
            "globs": list(rule.tools.globs),
            "tags": sorted(rule.tools.tags),
        },
        "when": rule.when.text if rule.when is not None else None,
        "source": _source_json(rule.source),
        "description": rule.description,
        "location": [location.file, location.line, location.column] if location is not None else None,
        "verb": rule.verb.value if rule.verb is not None else None,
        "final": rule.final,
        "reason": _text(rule.reason),
        "timeout": rule.timeout,
        "retries": rule.retries,
        "backoff": rule.backoff,
        "redactions": [_redaction_json(r) for r in rule.redactions],
        "content": _text(rule.content),
        "block": _text(rule.block),
        "labels": list(rule.labels),
        "mode": rule.mode.value,
    }


def _rule_from(data: Mapping[str, Any], lists: Mapping[str, Any]) -> Rule:
    from policyengine.language.expressions import compile_expression, compile_template
    from policyengine.packs.rules import Mode, Rule, RuleDecision, ToolMatcher
    from policyengine.values.problems import Location
    from policyengine.values.results import Stage

    tools = data["tools"]
    location = data["location"]
    source = _source_from(data["source"])
    assert source is not None
    return Rule(
        id=data["id"],
        stage=Stage(data["stage"]),
        tools=ToolMatcher(frozenset(tools["names"]), tuple(tools["globs"]), frozenset(tools["tags"])),
        when=_recompiled(compile_expression, data["when"], lists),
        source=source,
        description=data["description"],
        location=Location(location[0], location[1], location[2]) if location is not None else None,
        verb=RuleDecision(data["verb"]) if data["verb"] is not None else None,
        final=data["final"],
        reason=_recompiled(compile_template, data["reason"], lists),
        timeout=data["timeout"],
        retries=data["retries"],
        backoff=data["backoff"],
        redactions=tuple(_redaction_from(r) for r in data["redactions"]),
        content=_recompiled(compile_template, data["content"], lists),
        block=_recompiled(compile_template, data["block"], lists),
        labels=tuple(data["labels"]),
        mode=Mode(data["mode"]),
    )


def _text(template: Template | None) -> str | None:
    return template.text if template is not None else None


class _Refused(Exception):
    """A cached text that no longer compiles: the entry is stale (the language changed), so it is rebuilt."""


def _refuse(code: str, message: str, offset: int = 0, width: int = 1, hint: str | None = None) -> None:
    raise _Refused(f"{code}: {message}")


_Compiled = TypeVar("_Compiled")


def _recompiled(
    compile_text: Callable[[str, Mapping[str, Any], Report], _Compiled | None],
    text: str | None,
    lists: Mapping[str, Any],
) -> _Compiled | None:
    """A cached expression or template text compiled again; _Refused when it no longer compiles."""
    if text is None:
        return None
    found = compile_text(text, lists, _refuse)
    if found is None:
        raise _Refused(text)
    return found


def _redaction_json(redaction: Redaction) -> dict[str, Any]:
    return {
        "path": list(redaction.path) if redaction.path is not None else None,
        "keys": _pattern_json(redaction.keys),
        "pattern": _pattern_json(redaction.pattern),
        "replace_with": redaction.replace_with,
        "keep_last": redaction.keep_last,
        "secrets": redaction.secrets,
        "cards": redaction.cards,
    }


def _redaction_from(data: Mapping[str, Any]) -> Redaction:
    from policyengine.arguments.redact import Redaction

    return Redaction(
        path=tuple(data["path"]) if data["path"] is not None else None,
        keys=_pattern_from(data["keys"]),
        pattern=_pattern_from(data["pattern"]),
        replace_with=data["replace_with"],
        keep_last=data["keep_last"],
        secrets=data["secrets"],
        cards=data["cards"],
    )


def _pattern_json(pattern: Any) -> dict[str, Any] | None:
    if pattern is None:
        return None
    options = pattern.options
    return {"text": pattern.pattern, "options": {name: getattr(options, name) for name in _RE2_OPTIONS}}


def _pattern_from(data: Mapping[str, Any] | None) -> Any:
    if data is None:
        return None
    import re2  # type: ignore[import-untyped,unused-ignore]

    options = re2.Options()
    for name, value in data["options"].items():
        if name not in _RE2_OPTIONS:
            raise _Refused(f"unknown RE2 option {name}")
        setattr(options, name, value)
    return re2.compile(data["text"], options)
