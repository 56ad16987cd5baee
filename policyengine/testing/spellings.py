"""Spellings: the same path, URL, command or secret written another way, decided again to find the rule that misses it.

Every bypass of a red line is a spelling: `.ENV`, `./.env`, `%2eenv`, `c''at .en?`, `2852039166`
for `169.254.169.254`, a key sent base64-encoded. `check` takes calls (policy tests or recorded
calls), writes each value that has a role (path, URL, command; secrets anywhere, in the arguments
and in a recorded result) in equivalent spellings, decides every spelled call with the same
`Decider` as the original and reports each spelling whose decision is weaker than the original's:
allow < ask < deny, and for a recorded result, output that was redacted or withheld (rewritten,
blocked) must not be accepted, nor keep the spelled secret in its rewritten value. `invalid` and
`error` are their own: reported as not compared, never as weaker.

The spellings are the engine's normalisation steps (`arguments/paths.py`, `arguments/shell.py`)
run backwards; `docs/spellings.md` lists them. Generation is deterministic for a seed: each value's
candidates are enumerated in a fixed order and at most `max_per_value` are drawn by a
`random.Random` seeded with the seed and a CRC of the value, and a run stops at `budget` spellings.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ipaddress
import json
import random
import re
import time
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from policyengine.arguments.roles import Role, collect_all
from policyengine.arguments.secret_scanner import hide_secrets, is_credential_key
from policyengine.enforce.evaluate import Evaluation, evaluate, evaluate_sync
from policyengine.enforce.install import PolicyLayers
from policyengine.values.decisions import SourceKind
from policyengine.values.frozen import thaw
from policyengine.values.problems import Location

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_MAX_PER_VALUE",
    "Call",
    "Decider",
    "Finding",
    "Spelling",
    "SpellingReport",
    "Subject",
    "Verdict",
    "check",
    "layers_decider",
    "spell_argv_word",
    "spell_call",
    "spell_command",
    "spell_path",
    "spell_secret",
    "spell_url",
]

DEFAULT_MAX_PER_VALUE = 24
DEFAULT_BUDGET = 20_000

# What a decision is worth against a spelling: a lower rank is weaker.
_RANK = {"allow": 0, "ask": 1, "deny": 2}
_REDACTED = frozenset({"rewritten", "blocked"})


# -- what is decided ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """A call to decide: tool, arguments, working directory, recorded result, agent and call id."""

    name: str
    arguments: Any
    cwd: str | None = None
    result: Mapping[str, Any] | None = None
    agent: str = "agent"
    call_id: str = ""


@dataclass(frozen=True)
class Verdict:
    """What the policy did with a call: decision, the rule that decided, post-execute and its value."""

    decision: str
    rule: str | None
    post: str | None = None
    value: Any = None
    rewrites: tuple[str, ...] = ()
    reason: str | None = None


Decider = Callable[[Call], Verdict]


@dataclass(frozen=True)
class Subject:
    """An original call and where it comes from (a policy test, a line of recorded calls)."""

    label: str
    call: Call
    location: Location | None = None


@dataclass(frozen=True)
class Spelling:
    """One spelled call: which value was spelled (kind, where), how (mutator), and as what."""

    kind: str  # path, url, command, secret, nesting
    mutator: str
    where: str
    original: str
    spelled: str
    call: Call = field(repr=False)


@dataclass(frozen=True)
class Finding:
    """A spelling decided: weaker than the original, or not compared (invalid, error)."""

    subject: Subject
    spelling: Spelling
    original: Verdict
    spelled: Verdict
    weaker: bool

    @property
    def missed_by(self) -> str | None:
        """The rule(s) that decided the original: for output, the rewrites that redacted it."""
        if self.spelling.where.startswith("result") and self.original.rewrites:
            return ", ".join(self.original.rewrites)
        return self.original.rule

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record."""
        return {
            "subject": self.subject.label,
            "location": str(self.subject.location) if self.subject.location else None,
            "tool": self.subject.call.name,
            "kind": self.spelling.kind,
            "mutator": self.spelling.mutator,
            "where": self.spelling.where,
            "original_value": self.spelling.original,
            "spelled_value": self.spelling.spelled,
            "original": _verdict_json(self.original),
            "spelled": _verdict_json(self.spelled),
            "missed_by": self.missed_by,
            "weaker": self.weaker,
        }


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    shown = {"decision": verdict.decision, "rule": verdict.rule, "post": verdict.post}
    return shown | ({"reason": verdict.reason} if verdict.reason else {})


@dataclass(frozen=True)
class SpellingReport:
    """Every weaker spelling and every spelling that could not be compared, with the run's totals."""

    weaker: tuple[Finding, ...]
    not_compared: tuple[Finding, ...]
    subjects: int
    spellings: int
    seed: int
    max_per_value: int
    budget: int
    exhausted: bool
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        """True when no spelling got a weaker decision than its original."""
        return not self.weaker


# -- deciding -----------------------------------------------------------------------------------


def layers_decider(layers: PolicyLayers, *, require_tool: bool = False) -> Decider:
    """Decide calls as `policyengine test` does: the installed layers, a tool outside the catalog invalid."""

    def decide(call: Call) -> Verdict:
        options: dict[str, Any] = {
            "agent": call.agent,
            "call_id": call.call_id or None,
            "result": call.result,
            "cwd": call.cwd,
            "require_tool": require_tool and call.name not in layers.registry.tools,
        }
        evaluation = evaluate_sync(layers.registry, call.name, call.arguments, **options)
        if evaluation is None:
            evaluation = asyncio.run(evaluate(layers.registry, call.name, call.arguments, **options))
        return _verdict(evaluation)

    return decide


def _verdict(evaluation: Evaluation) -> Verdict:
    source = evaluation.source
    rule = None if source is None else ("default" if source.kind is SourceKind.DEFAULT else source.name)
    post = evaluation.post.value if evaluation.post is not None else None
    value = thaw(evaluation.value) if post == "rewritten" else None
    return Verdict(evaluation.decision.value, rule, post, value, tuple(s.name for s in evaluation.rewrites))


def _compare(original: Verdict, spelled: Verdict, spelling: Spelling) -> bool | None:
    """Whether the spelled verdict is weaker (None: invalid or error on either side, not compared)."""
    if original.decision not in _RANK or spelled.decision not in _RANK:
        return None
    if _RANK[spelled.decision] < _RANK[original.decision]:
        return True
    if original.post in _REDACTED and spelling.kind == "secret" and spelling.where.startswith("result"):
        if spelled.post not in _REDACTED:
            return True
        # Rewritten around the secret but not over it: the spelled secret is still in the output.
        return spelled.post == "rewritten" and spelling.spelled in json.dumps(spelled.value, ensure_ascii=False)
    return False


def _decided(decide: Decider, call: Call) -> Verdict:
    """The decider's verdict; a fault is an `error` verdict (not compared), so one spelling cannot end the run."""
    try:
        return decide(call)
    except Exception as error:
        return Verdict("error", None, reason=f"{type(error).__name__}: {error}")


def check(
    subjects: Iterable[Subject],
    decide: Decider,
    *,
    roles: Callable[[str], Mapping[str, str] | None] = lambda _name: None,
    seed: int = 0,
    max_per_value: int = DEFAULT_MAX_PER_VALUE,
    budget: int = DEFAULT_BUDGET,
    first_weaker: bool = False,
) -> SpellingReport:
    """Decide every subject and its spellings; report the weaker ones (roles: a tool's declared roles).

    `first_weaker`: stop at the first weaker spelling (a known finding needs one to show it still holds).
    """
    if max_per_value < 1 or budget < 1:
        raise ValueError("max_per_value and budget must be at least 1")
    started = time.perf_counter()
    weaker: list[Finding] = []
    not_compared: list[Finding] = []
    count = subjects_seen = 0
    exhausted = False
    for subject in subjects:
        subjects_seen += 1
        if exhausted:
            continue
        original = _decided(decide, subject.call)
        for spelling in spell_call(subject.call, roles(subject.call.name), seed=seed, max_per_value=max_per_value):
            if count >= budget:
                exhausted = True
                break
            count += 1
            spelled = _decided(decide, spelling.call)
            verdict = _compare(original, spelled, spelling)
            if verdict is None:
                not_compared.append(Finding(subject, spelling, original, spelled, False))
            elif verdict:
                weaker.append(Finding(subject, spelling, original, spelled, True))
                if first_weaker:
                    break
        if first_weaker and weaker:
            break
    return SpellingReport(
        tuple(weaker),
        tuple(not_compared),
        subjects_seen,
        count,
        seed,
        max_per_value,
        budget,
        exhausted,
        time.perf_counter() - started,
    )


# -- which values to spell ----------------------------------------------------------------------

# A place in a JSON document: keys and list indexes from its root.
_Path = tuple[str | int, ...]


def _leaves(value: Any, at: _Path = ()) -> Iterator[tuple[_Path, str]]:
    """Every string in a JSON-like value with its place, depth-first in document order."""
    if isinstance(value, str):
        yield at, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, (*at, str(key)))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _leaves(item, (*at, i))


def _key(at: _Path) -> str:
    """The key a value stands under (a list item: its list's key)."""
    for part in reversed(at):
        if isinstance(part, str):
            return part
    return ""


def _replaced(value: Any, at: _Path, new: Any) -> Any:
    """A copy of a JSON-like value with the value at `at` replaced."""
    if not at:
        return new
    head, rest = at[0], at[1:]
    if isinstance(value, Mapping):
        return {k: (_replaced(v, rest, new) if k == head else v) for k, v in value.items()}
    items = list(value)
    index = int(head)  # a list's place is always an index (see _leaves)
    items[index] = _replaced(items[index], rest, new)
    return items


def _label(root: str, at: _Path) -> str:
    return root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in at)


def _roles_of(key: str, value: str, declared: Mapping[str, str] | None) -> set[Role]:
    """The roles the engine gives one string under one key (as collect_all reads it), mentions aside."""
    # A place mentioned inside a value (`p/w` in a sentence, `DROP/**/TABLE` in SQL) makes the value no
    # path: its path spellings are not equivalents of the text, so only whole-value readings count here.
    found = collect_all({key: value} if key else value, declared, mentions=False).values
    return {role for role, values in found.items() if values}


def _secrets_in(key: str, value: str) -> list[str]:
    """The secret texts the scanner finds in one string under one key (the whole string if no span is known)."""
    found: list[str] = []

    def hide(text: Any) -> Any:
        if isinstance(text, str) and text not in found:
            found.append(text)
        return text

    hide_secrets({key: value} if key else value, hide)
    return found


def _rng(seed: int, *parts: str) -> random.Random:
    # A CRC, not hash(): str hashes are salted per process and the draw must not be.
    return random.Random(seed * 1_000_003 + zlib.crc32("\x00".join(parts).encode("utf-8", "surrogatepass")))


def _draw(candidates: Iterable[tuple[str, str]], original: str, k: int, rng: random.Random) -> list[tuple[str, str]]:
    """At most k distinct spellings, each differing from the original, drawn in a seeded order."""
    unique: dict[str, str] = {}
    for mutator, spelled in candidates:
        if spelled != original and spelled not in unique:
            unique[spelled] = mutator
    pool = list(unique.items())
    picked = pool if len(pool) <= k else rng.sample(pool, k)
    return [(mutator, spelled) for spelled, mutator in picked]


def spell_call(
    call: Call, declared: Mapping[str, str] | None = None, *, seed: int = 0, max_per_value: int = DEFAULT_MAX_PER_VALUE
) -> Iterator[Spelling]:
    """Every spelling of a call: its paths, URLs, commands and secrets, in the arguments and the result."""
    for at, value in _leaves(call.arguments):
        key = _key(at)
        where = _label("arguments", at)
        roles = _roles_of(key, value, declared)
        generators: list[tuple[str, Iterable[tuple[str, str]]]] = []
        if Role.COMMAND in roles and at and isinstance(at[-1], int) and _in_argv(call.arguments, at, key, declared):
            # A word of an argv list: no shell reads it, so only spellings that need no shell.
            roles.discard(Role.COMMAND)
            generators.append(("command", spell_argv_word(at[-1], value, call.cwd)))
        if Role.PATH in roles and not _URL_SHAPE.match(value):  # a URL's path and query are case-sensitive
            paths = spell_path(value, call.cwd)
            if _secrets_in(key, value):
                # A path by shape that carries a secret is text around it (`</password>`): rewriting all of it
                # rewrites that text (and the secret) too, so the secret's rules would meet another value.
                paths = ((m, p) for m, p in paths if m not in _WHOLE_VALUE_REWRITES)
            generators.append(("path", paths))
        if Role.URL in roles:
            generators.append(("url", spell_url(value)))
        if Role.COMMAND in roles:
            generators.append(("command", spell_command(value, call.cwd)))
        for kind, candidates in generators:
            rng = _rng(seed, kind, where, value)
            for mutator, spelled in _draw(candidates, value, max_per_value, rng):
                new = replace(call, arguments=_replaced(call.arguments, at, spelled))
                yield Spelling(kind, mutator, where, value, spelled, new)
        yield from _spell_secrets(call, at, key, value, where, seed, max_per_value, whole=not roles)
        if roles and len(at) == 1:
            yield from _nestings(call, at, value, where, in_list=Role.COMMAND not in roles)
    result = call.result
    if isinstance(result, Mapping) and "value" in result:
        for at, value in _leaves(result["value"]):
            where = _label("result.value", at)
            for secret in _secrets_in(_key(at), value):
                rng = _rng(seed, "secret", where, secret)
                for mutator, spelled in _draw(spell_secret(secret), secret, max_per_value, rng):
                    new_value = _replaced(result["value"], at, value.replace(secret, spelled))
                    new = replace(call, result={**result, "value": new_value})
                    yield Spelling("secret", mutator, where, secret, spelled, new)


def _spell_secrets(
    call: Call, at: _Path, key: str, value: str, where: str, seed: int, k: int, *, whole: bool
) -> Iterator[Spelling]:
    """Spellings of the secrets in one argument, and the whole-value secret split across two arguments.

    `whole`: whether a secret that is the whole value may be spelled; a path, URL or command encoded
    whole no longer names what it named, so its rules would be compared with another call.
    """
    for secret in _secrets_in(key, value):
        if secret == value and not whole:
            continue
        rng = _rng(seed, "secret", where, secret)
        for mutator, spelled in _draw(spell_secret(secret), secret, k, rng):
            new = replace(call, arguments=_replaced(call.arguments, at, value.replace(secret, spelled)))
            yield Spelling("secret", mutator, where, secret, spelled, new)
        whole = secret == value and (is_credential_key(key) or _BARE_TOKEN.fullmatch(value) is not None)
        if whole and len(at) >= 1 and isinstance(at[-1], str):
            # The receiver joins the halves: half under the key, half under a sibling key. Only a value
            # that is the secret alone: halves of a URL or a sentence are no longer what they were.
            half = len(value) // 2
            parent = at[:-1]
            holder = _get(call.arguments, parent)
            if isinstance(holder, Mapping):
                sibling = f"{at[-1]}_2"
                moved = {**holder, at[-1]: value[:half], sibling: value[half:]}
                new = replace(call, arguments=_replaced(call.arguments, parent, moved))
                shown = f"{value[:half]} | {value[half:]}"
                yield Spelling("secret", "split-across-arguments", where, value, shown, new)


def _in_argv(arguments: Any, at: _Path, key: str, declared: Mapping[str, str] | None) -> bool:
    """Whether the list holding the value at `at` is one argv (as collect_all reads it)."""
    holder = _get(arguments, at[:-1])
    return bool(collect_all({key: holder}, declared).argv)


# Path spellings that rewrite the whole value (every separator, every letter), not one component.
_WHOLE_VALUE_REWRITES = frozenset(
    {"backslashes", "double-slashes", "percent-encoded-separator", "overlong-separator", "upper-case", "swap-case"}
)
_BARE_TOKEN = re.compile(r"[A-Za-z0-9_+/=.:-]{8,}")
# A scheme of two letters or more (`C:/` is a drive): `file:/etc` doubled to `file://etc` would name a host.
_URL_SHAPE = re.compile(r"(?i)^\s*[a-z][a-z0-9+.-]+:/")


def _get(value: Any, at: _Path) -> Any:
    for part in at:
        value = value[part]
    return value


def _nestings(call: Call, at: _Path, value: str, where: str, *, in_list: bool) -> Iterator[Spelling]:
    """A top-level argument with a role moved into a list (not a command: a list is its argv) and under another key."""
    key = at[0]
    args = call.arguments
    if not isinstance(args, Mapping) or not isinstance(key, str):
        return
    if in_list:
        listed = {k: ([v] if k == key else v) for k, v in args.items()}
        yield Spelling("nesting", "in-a-list", where, value, json.dumps([value]), replace(call, arguments=listed))
    nested = {k: v for k, v in args.items() if k != key} | {"options": {key: value}}
    yield Spelling(
        "nesting",
        "under-another-key",
        where,
        value,
        json.dumps({"options": {key: value}}),
        replace(call, arguments=nested),
    )


# -- paths --------------------------------------------------------------------------------------

_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}
_IGNORABLES = (("zero-width-space", "\u200b"), ("variation-selector", "\ufe0f"), ("hangul-filler", "\u3164"))


def _split_last(path: str) -> tuple[str, str]:
    """(everything up to and including the last separator, the last component)."""
    cut = max(path.rfind("/"), path.rfind("\\")) + 1
    return path[:cut], path[cut:]


def spell_path(path: str, cwd: str | None = None) -> Iterator[tuple[str, str]]:
    """(mutator, spelling) pairs naming the same file as `path`, in a fixed order."""
    if not path or "\x00" in path:
        return
    head, name = _split_last(path)
    # Judged as the engine reads it: a name of full-width slashes folds (NFKC) to a rooted path, not a relative one.
    folded = unicodedata.normalize("NFKC", path)
    yield "upper-case", path.upper()
    yield "swap-case", path.swapcase()
    if "/" in path:
        yield "backslashes", path.replace("/", "\\")
        # Past the first character: a leading "//" would name a UNC share, another place.
        yield "double-slashes", path[:1] + path[1:].replace("/", "//")
    if head:
        yield "dot-segment", f"{head}./{name}"
        yield "climb-back", f"{head}x/../{name}"
    elif not re.match(r"^(?:[~$%/\\]|[A-Za-z]:)", folded) and "%" not in path:
        # Only for a plainly relative name: "%2fetc" decodes to a rooted path that "./" would make relative.
        yield "dot-slash", f"./{name}"
        yield "climb-back", f"x/../{name}"
    if name and name not in (".", ".."):
        yield "trailing-dot", path + "."
        yield "trailing-space", path + " "
        yield "data-stream", path + "::$DATA"
        first = name[0]
        code = ord(first)
        if code < 0x80:
            yield "percent-encoded", f"{head}%{code:02x}{name[1:]}"
            yield "double-percent-encoded", f"{head}%25{code:02x}{name[1:]}"
            yield "percent-u", f"{head}%u{code:04x}{name[1:]}"
            yield "overlong-utf8", f"{head}%{0xC0 | code >> 6:02x}%{0x80 | code & 0x3F:02x}{name[1:]}"
        yield "full-width", head + "".join(_FULLWIDTH.get(c, c) for c in name)
        for mutator, mark in _IGNORABLES:
            yield mutator, f"{head}{name[:1]}{mark}{name[1:]}"
    if "/" in path:
        yield "percent-encoded-separator", path.replace("/", "%2f")
        yield "overlong-separator", path.replace("/", "%c0%af")
    if cwd:
        base = cwd.rstrip("/") + "/"
        if path.startswith(base) and len(path) > len(base):
            yield "relative-to-cwd", path[len(base) :]
        elif not folded.startswith(("/", "\\", "~", "$", "%")) and not re.match(r"^[A-Za-z]:", folded):
            yield "absolute-from-cwd", base + path


# -- URLs ---------------------------------------------------------------------------------------


def _ip_spellings(host: str) -> Iterator[tuple[str, str]]:
    """Other spellings of an IPv4 address that inet_aton and browsers read as the same address."""
    try:
        address = ipaddress.IPv4Address(host)
    except ValueError:
        return
    number = int(address)
    octets = [int(o) for o in host.split(".")]
    yield "ip-decimal", str(number)
    yield "ip-hex", hex(number)
    yield "ip-octal-dotted", ".".join(f"0{o:o}" for o in octets)
    yield "ip-hex-dotted", ".".join(f"0x{o:x}" for o in octets)
    yield "ip-short", f"{octets[0]}.{octets[1]}.{octets[2] * 256 + octets[3]}"
    yield "ipv6-mapped", f"[::ffff:{host}]"


def spell_url(url: str) -> Iterator[tuple[str, str]]:
    """(mutator, spelling) pairs of a URL reaching the same host and resource, in a fixed order."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        port = parts.port
    except ValueError:
        return
    if not parts.scheme or not host:
        return
    userinfo = parts.netloc.rpartition("@")[0]
    at = f"{userinfo}@" if userinfo else ""
    tail = f":{port}" if port is not None else ""

    def netloc(new_host: str, new_at: str = at, new_tail: str = tail) -> str:
        return f"{new_at}{new_host}{new_tail}"

    def url_with(new_netloc: str, scheme: str = parts.scheme, path: str = parts.path) -> str:
        return urlunsplit((scheme, new_netloc, path, parts.query, parts.fragment))

    shown = f"[{host}]" if ":" in host else host
    yield "host-upper-case", url_with(netloc(shown.upper()))
    yield "scheme-upper-case", url_with(parts.netloc, scheme=parts.scheme.upper())
    if ":" not in host and not host.endswith("."):  # a second dot is an empty label, no host
        yield "host-trailing-dot", url_with(netloc(host + "."))
        for mutator, spelled in _ip_spellings(host):
            yield mutator, url_with(netloc(spelled))
    if not userinfo:  # an existing one may be the credential a rule looks for: never dropped
        yield "userinfo", url_with(netloc(shown, "user@"))
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    if default is not None and port is None:
        yield "default-port", url_with(netloc(shown, at, f":{default}"))
    if parts.path and len(parts.path) > 1:
        first = parts.path[1]
        if first.isascii() and first not in "%/":
            yield "path-percent-encoded", url_with(parts.netloc, path=f"/%{ord(first):02X}{parts.path[2:]}")
        yield "path-dot-segment", url_with(parts.netloc, path="/." + parts.path)


# -- commands -----------------------------------------------------------------------------------

# A word bash reads as itself: no quotes, expansions, globs, braces, escapes or operators.
_PLAIN = re.compile(r"[A-Za-z0-9_./~:@%+=,-]+")
_WORD = re.compile(r"(?:(?<=^)|(?<=[\s;&|<>(]))[A-Za-z0-9_./~:@%+=,-]+(?=$|[\s;&|<>)])")
_PROGRAM = re.compile(r"^(\s*)([A-Za-z0-9_.+~/-]+)(?=$|\s)")
# Builtins and keywords: no /bin/x of them, and wrappers cannot run them.
_BUILTINS = frozenset(
    {"cd", "export", "source", ".", "eval", "exec", "set", "unset", "alias", "trap", "read", "declare", "local"}
    | {"if", "then", "else", "fi", "for", "while", "until", "do", "done", "case", "esac", "function", "!", "{", "}"}
    | {"[[", "]]", "time", "builtin", "command", "shopt", "ulimit", "umask", "return", "exit", "break", "continue"}
)
_WRAPPERS = (("command", "command "), ("env", "env "), ("nice", "nice "), ("timeout", "timeout 5 "))


def _ansi_c(word: str) -> str:
    """A word as bash's $'...' quoting with its first letter as a hex escape."""
    return "$'" + "".join(f"\\x{ord(c):02x}" if i == 0 else c for i, c in enumerate(word)) + "'"


def _operand_spellings(word: str, *, globs: bool) -> Iterator[tuple[str, str]]:
    """Shell spellings of one operand naming the same path after quote removal, globbing or brace expansion."""
    head, name = _split_last(word)
    if len(name) < 2 or name in ("..",):
        return
    yield "operand-empty-quotes", f"{head}{name[0]}''{name[1:]}"
    yield "operand-double-quoted", f'{head}"{name}"'
    yield "operand-backslash", f"{head}\\{name}"
    yield "operand-ansi-c", f"{head}{_ansi_c(name)}"
    if globs:
        yield "operand-glob-question", f"{head}{name[:-1]}?"
        yield "operand-glob-star", f"{head}{name[:2]}*"
        yield "operand-glob-class", f"{head}{_glob_class(name)}"
    yield "operand-brace", f"{head}{{{name},x}}"


def _glob_class(name: str) -> str:
    """A file name with its first letter as a one-letter bracket class: the glob matches that name alone."""
    # A leading dot must stay literal: bash globs match a dotfile only through an explicit dot.
    at = 1 if name.startswith(".") else 0
    return f"{name[:at]}[{name[at]}]{name[at + 1 :]}"


def _quoted(text: str) -> str:
    """A word single-quoted for bash when it holds anything but plain characters."""
    return text if _PLAIN.fullmatch(text) else "'" + text.replace("'", "'\\''") + "'"


def _program_spellings(program: str) -> Iterator[tuple[str, str]]:
    """Spellings of the word bash runs: quotes on its name, its directory written another way, a bracket glob."""
    head, name = _split_last(program)
    if name.startswith("~"):
        return  # a quoted or globbed `~` is no longer expanded
    if len(name) >= 2:
        yield "program-empty-quotes", f"{head}{name[0]}''{name[1:]}"
    # Quotes go around the name only: a quoted `~/` would not be expanded.
    yield "program-double-quoted", f'{head}"{name}"'
    yield "program-backslash", f"{head}\\{name}"
    yield "program-ansi-c", f"{head}{_ansi_c(name)}"
    if not head:
        yield "program-as-path", f"/usr/bin/{program}"
        yield "program-as-bin-path", f"/bin/{program}"
        return
    # Only what exec resolves the same on every system: no case, trailing dot or look-alike of a program's file.
    for mutator, spelled in spell_path(program):
        if mutator in ("dot-segment", "double-slashes", "climb-back"):
            yield "program-" + mutator, _shell_word(spelled)
    if name not in (".", ".."):
        # bash expands a glob in the command word too; one without a `/` would match in the cwd, not on PATH.
        yield "program-glob-class", f"{head}{_glob_class(name)}"


def spell_command(command: str, cwd: str | None = None) -> Iterator[tuple[str, str]]:
    """(mutator, spelling) pairs of a command line that bash runs the same way, in a fixed order."""
    match = _PROGRAM.match(command)
    if match and match.group(2) not in _BUILTINS and "=" not in match.group(2):
        lead, program = match.group(1), match.group(2)
        rest = command[match.end() :]
        for mutator, spelled in _program_spellings(program):
            yield mutator, f"{lead}{spelled}{rest}"
        for mutator, prefix in _WRAPPERS:
            yield f"wrapper-{mutator}", f"{lead}{prefix}{program}{rest}"
    program_at = match.start(2) if match else -1
    operands = [
        m
        for m in _WORD.finditer(command)
        if m.start() != program_at
        and not m.group().startswith("-")
        and "=" not in m.group()
        and "%" not in m.group()
        and ("/" in m.group() or "." in m.group())  # a word without a path's shape: an option value, a subcommand
        and not _WINDOWS_SWITCH.fullmatch(m.group())  # `cmd /c`, `rd /s /q`: a switch, whose `/c.` is not `/c`
    ]
    # A `cd` moves every relative operand: the working directory no longer says where one is.
    moves = re.search(r"(?:^|[\s;&|(])(?:cd|pushd|popd)(?=$|[\s;&|)])", command) is not None
    for word_match in operands:
        word = word_match.group()
        start, end = word_match.span()
        before, after = command[:start], command[end:]
        for mutator, spelled in _operand_spellings(word, globs=_names_a_file(word)):
            yield mutator, before + spelled + after
        if _URL_SHAPE.match(word) or ":" in word:
            continue  # a URL, a `rev:path` or `host:path` is not a path of this machine as written
        # curl's `@file` names the file after the `@`: that part is spelled, the `@` kept.
        prefix, path = ("@", word[1:]) if word.startswith("@") else ("", word)
        for mutator, spelled in spell_path(path, None if moves else cwd):
            if mutator in _SHELL_SAFE_PATH_MUTATORS and not (mutator == "trailing-dot" and _PROGRAM_FILE.search(path)):
                yield "operand-" + mutator, before + prefix + _shell_word(spelled) + after
        if len(operands) == 1 and not moves:
            # Only with one operand: a `cd` moves every relative operand, not just the one spelled.
            head, name = _split_last(word)
            if head.rstrip("/") and name and not word.startswith(("~", "@")) and ":" not in word:
                yield "cd-then-relative", f"cd {_quoted(head.rstrip('/'))} && {before}{name}{after}"


def _names_a_file(word: str) -> bool:
    """Whether the word is itself a file's name, so a glob of it matches that file (not `@file`, `rev:path`, a URL)."""
    return "@" not in word and ":" not in word


# A Windows program's switch (`/c`, `/s`, `/a:h`): spelled as a path it would be another switch.
_WINDOWS_SWITCH = re.compile(r"/[A-Za-z?](?::\S*)?")


# An operand under a bin directory is a program a wrapper runs (`sudo /bin/rm`): exec folds no trailing dot.
_PROGRAM_FILE = re.compile(r"(?:^|/)s?bin/[^/]+$")


# Path spellings a shell hands on unchanged (a shell decodes no percent-escape and folds no look-alike).
_SHELL_SAFE_PATH_MUTATORS = frozenset(
    {"upper-case", "dot-segment", "dot-slash", "climb-back", "double-slashes", "trailing-dot", "relative-to-cwd"}
    | {"absolute-from-cwd"}
)


def _shell_word(path: str) -> str:
    """A path as one shell word; a leading `~/` stays unquoted, or bash would not expand it."""
    if path.startswith("~/"):
        return "~/" + _quoted(path[2:])
    return _quoted(path)


def spell_argv_word(index: int, word: str, cwd: str | None = None) -> Iterator[tuple[str, str]]:
    """(mutator, spelling) pairs of one word of an argv list (exec'd without a shell), in a fixed order."""
    if index == 0:
        if word and "/" not in word and word not in _BUILTINS:
            yield "program-as-path", f"/usr/bin/{word}"
            yield "program-as-bin-path", f"/bin/{word}"
        return
    if word.startswith("-") or not ("/" in word or "." in word):
        return  # an option or a word without a path's shape
    for mutator, spelled in spell_path(word, cwd):
        yield "operand-" + mutator, spelled


# -- secrets ------------------------------------------------------------------------------------


def spell_secret(secret: str) -> Iterator[tuple[str, str]]:
    """(mutator, spelling) pairs carrying the same secret: encodings the receiver decodes, look-alikes."""
    raw = secret.encode("utf-8", "surrogatepass")
    yield "base64", base64.b64encode(raw).decode("ascii")
    yield "base64-url", base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    yield "hex", binascii.hexlify(raw).decode("ascii")
    yield "url-encoded", "".join(f"%{b:02X}" for b in raw)
    if secret[:1].isascii():
        yield "url-encoded-first", f"%{ord(secret[0]):02X}{secret[1:]}"
    yield "zero-width-space", secret[:1] + "\u200b" + secret[1:]
    yield "full-width", "".join(_FULLWIDTH.get(c, c) for c in secret)
