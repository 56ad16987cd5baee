"""Extra JMESPath functions for security rules: linear-time matching, paths and string helpers."""

from __future__ import annotations

import ipaddress
import re
import shlex
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Sequence
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar
from urllib.parse import unquote

import jmespath
import jmespath.functions
import re2  # type: ignore[import-untyped,unused-ignore]
from jmespath.exceptions import JMESPathError, JMESPathTypeError

from policyengine.arguments import _host_values, _url_parts, _url_pins, paths, roles
from policyengine.language import session_reads, tool_names

# Imported for its side effect: it registers FrozenDict/FrozenList with jmespath's type tables,
# without which every signature check below would reject frozen call documents.
from policyengine.values import frozen  # noqa: F401

# The roles the views read, as module constants: `roles.Role.PATH` is a module and an Enum class
# attribute lookup (~90 ns in 3.11), asked several times per call (issue 22's CPU bound).
_PATH_ROLE, _GLOB_ROLE, _COMMAND_ROLE, _URL_ROLE = roles.Role.PATH, roles.Role.GLOB, roles.Role.COMMAND, roles.Role.URL
_EMAIL_ROLE, _AMOUNT_ROLE, _SECRET_ROLE = roles.Role.EMAIL, roles.Role.AMOUNT, roles.Role.SECRET

# jmespath checks types by class name: a PathPattern (a shell operand bash expands as a glob) and a
# FoldedPath (a normalised path that remembers its literal reading) are strings to every function,
# `join`, `contains` and comparisons included.
for _string_class in (paths.PathPattern, paths.FoldedPath):
    jmespath.functions.TYPES_MAP.setdefault(_string_class.__name__, "string")
    if _string_class.__name__ not in jmespath.functions.REVERSE_TYPES_MAP["string"]:
        jmespath.functions.REVERSE_TYPES_MAP["string"] = (
            *jmespath.functions.REVERSE_TYPES_MAP["string"],
            _string_class.__name__,
        )

__all__ = ["FUNCTIONS", "OPTIONS", "PolicyFunctions", "function_arity"]

# Compiled patterns are reused across calls; the bound keeps distinct patterns from leaking memory.
CACHE_SIZE = 1024

# strings() and contains_any() walk nested values. Frozen arguments stop at frozen.MAX_DEPTH (100)
# levels; the margin leaves room for the call envelope ({"arguments": ...}) around them, so
# only values no frozen document can hold hit the limit (and then raise: fail closed).
MAX_DEPTH = 128

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # invalid patterns surface as JMESPath errors, not stderr lines
# regex_replace reads groups; matching never does, and without captures RE2 keeps to its
# fastest linear engines (a 1 MB adversarial match: ~10 ms instead of ~0.7 s).
_RE2_CAPTURING = re2.Options()
_RE2_CAPTURING.log_errors = False
_RE2_OPTIONS.never_capture = True

_F = TypeVar("_F", bound=Callable[..., Any])


def _signature(*arguments: dict[str, Any]) -> Callable[[_F], _F]:
    """Typed wrapper of jmespath's signature decorator (the original is untyped)."""
    decorator: Callable[[_F], _F] = jmespath.functions.signature(*arguments)
    return decorator


def _pattern_error(function: str, pattern: str, err: Exception) -> JMESPathError:
    """Build the error raised for a pattern that cannot be compiled."""
    # re2 reports its parser message as bytes; show it as text.
    detail = err.args[0] if err.args else err
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    return JMESPathError(f"In function {function}(), invalid pattern {pattern!r}: {detail}")


@lru_cache(maxsize=CACHE_SIZE)
def _compile_regex(pattern: str, capture: bool = False) -> Any:
    """Compile an RE2 regular expression once (RE2 guarantees linear-time matching)."""
    return re2.compile(pattern, _RE2_CAPTURING if capture else _RE2_OPTIONS)


@lru_cache(maxsize=CACHE_SIZE)
def _compile_glob(pattern: str) -> Any:
    """Compile an fnmatch-style glob to RE2 once."""
    return re2.compile(paths.glob_to_regex(pattern), _RE2_OPTIONS)


def _regex(function: str, pattern: str) -> Any:
    """Return the compiled regex or raise a JMESPath error naming the function."""
    try:
        return _compile_regex(pattern, capture=function == "regex_replace")
    except (re2.error, UnicodeEncodeError) as err:
        raise _pattern_error(function, pattern, err) from None


def _glob(function: str, pattern: str) -> Any:
    """Return the compiled glob or raise a JMESPath error naming the function."""
    try:
        return _compile_glob(pattern)
    except (re2.error, paths.PathPatternError, UnicodeEncodeError) as err:
        raise _pattern_error(function, pattern, err) from None


def _patterns(value: str | Sequence[str]) -> Sequence[str]:
    """One pattern or an array of patterns (element types are checked by the signature)."""
    return (value,) if isinstance(value, str) else value


# What one evaluation of a rule may spend on path tests it applies itself (paths(@) has its own
# budget per call, MAX_PATHS below): `arguments.paths[?path_within(@, ...)]` over 100,000 paths
# took ~1.6 s. Past it the rule fails closed. Expression.search opens a budget for expressions
# that may call a path test (PATH_TESTS) per item of a list, rules' and templates' alike; a path
# test called from Python, outside an evaluation, has none.
PATH_TESTS = frozenset(
    {"normalize_path", "path_within", "path_surely_within", "path_matches", "path_surely_matches", "path_unknown",
     "path_escapes", "resolve_path"}
)  # fmt: skip


class PathBudget:
    """The path tests one evaluation has made, and their characters."""

    __slots__ = ("characters", "tests")

    def __init__(self) -> None:
        self.tests = 0
        self.characters = 0


PATH_BUDGET: ContextVar[PathBudget | None] = ContextVar("policyengine_path_budget", default=None)


_open_budget = PATH_BUDGET.get


def _spend(function: str, path: str) -> None:
    """Count one path test against the open budget; JMESPathError (the rule fails closed) past it."""
    budget = _open_budget()
    if budget is None:
        return
    budget.tests += 1
    budget.characters += len(path)
    if budget.tests > MAX_PATHS or budget.characters > MAX_PATH_CHARACTERS:
        raise JMESPathError(
            f"In function {function}(), the rule tests more than {MAX_PATHS:,} paths or {MAX_PATH_CHARACTERS:,} "
            "characters of paths in one call; split the call"
        )


def _path_run(function: str, path: str, action: Callable[[], Any]) -> Any:
    """_run for a path test, counted against the evaluation's budget first."""
    _spend(function, path)
    return _run(function, action)


def _run(function: str, action: Callable[[], Any]) -> Any:
    """Run a path or RE2 operation, turning its failures into JMESPath errors (fail closed)."""
    try:
        return action()
    except paths.PathPatternError as err:
        raise JMESPathError(f"In function {function}(), {err}") from None
    except UnicodeEncodeError as err:
        # RE2 works on UTF-8; a lone surrogate in the subject cannot be encoded.
        raise JMESPathError(f"In function {function}(), the string is not valid Unicode: {err}") from None


def _session_run(function: str, action: Callable[[], Any]) -> Any:
    """Run a session read, turning a bad window into a JMESPath error (fail closed)."""
    try:
        return action()
    except (ValueError, KeyError, TypeError) as err:
        raise JMESPathError(f"In function {function}(), {err}") from None


class _GroupRef(NamedTuple):
    """A group reference in a replacement template: a number or a group name."""

    ref: str


@lru_cache(maxsize=CACHE_SIZE)
def _parse_template(template: str) -> tuple[str | _GroupRef, ...]:
    """Split a replacement into literals and group references (\\1, \\g<name>, \\\\)."""
    # The re2 wrapper's own expansion runs literals through unicode_escape, which corrupts
    # non-ASCII text, so replacements are expanded here instead.
    pieces: list[str | _GroupRef] = []
    literal: list[str] = []
    i = 0
    while i < len(template):
        ch = template[i]
        nxt = template[i + 1] if i + 1 < len(template) else ""
        if ch == "\\" and nxt.isdigit() and nxt.isascii():
            end = i + 2
            if end < len(template) and template[end].isdigit() and template[end].isascii():
                end += 1
            pieces.append("".join(literal))
            literal.clear()
            pieces.append(_GroupRef(template[i + 1 : end]))
            i = end
        elif ch == "\\" and nxt == "g" and template.startswith("<", i + 2) and ">" in template[i + 3 :]:
            end = template.index(">", i + 3)
            pieces.append("".join(literal))
            literal.clear()
            pieces.append(_GroupRef(template[i + 3 : end]))
            i = end + 1
        elif ch == "\\" and nxt == "\\":
            literal.append("\\")
            i += 2
        else:
            literal.append(ch)
            i += 1
    pieces.append("".join(literal))
    return tuple(piece for piece in pieces if piece != "")


def _resolve_group(regex: Any, ref: str, template: str) -> int:
    """Turn a group reference into a group index valid for this regex."""
    index: int | None = int(ref) if ref.isdigit() else regex.groupindex.get(ref)
    if index is None or not 0 <= index <= regex.groups:
        raise JMESPathError(f"In function regex_replace(), replacement {template!r} refers to unknown group {ref!r}")
    return index


def _type_error(function: str, value: Any, expected: list[str]) -> JMESPathTypeError:
    """jmespath's own type error, naming the value's JMESPath type."""
    actual = jmespath.functions.TYPES_MAP.get(type(value).__name__, type(value).__name__)
    return JMESPathTypeError(function, value, actual, expected)


def _json_key(value: Any, depth: int = 0) -> Hashable:
    """A hashable key under which two values are equal exactly when JSON says they are equal."""
    if depth > MAX_DEPTH:
        raise JMESPathError(f"In function contains_any(), value nested deeper than {MAX_DEPTH} levels")
    # bool before number: in Python True == 1, in JSON (and jmespath's ==) they differ.
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)  # 1 and 1.0 are the same JSON number and hash alike
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("a", tuple(_json_key(item, depth + 1) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, _json_key(item, depth + 1)) for key, item in value.items()))
    raise _type_error("contains_any", value, ["boolean", "number", "string", "null", "array", "object"])


def _role_reader(what: str, doc: str) -> Callable[[Any, Any], list[Any]]:
    """The function `what(@)`: one role view of a call document, by _by_role."""

    @_signature({"types": []})
    def read(self: Any, document: Any) -> list[Any]:
        return _by_role(document, what)

    read.__name__ = read.__qualname__ = f"_func_{what}"
    read.__doc__ = doc
    return read


def _path_test(test: Callable[[str, Any], bool], doc: str) -> Callable[[Any, str, Any], bool]:
    """The function named like `test`: whether a path passes it against directories or patterns."""
    name = test.__name__

    @_signature({"types": ["string"]}, {"types": ["string", "array-string"]})
    def run(self: Any, path: str, against: str | Sequence[str]) -> bool:
        return bool(_path_run(name, path, lambda: test(path, against)))

    run.__name__ = run.__qualname__ = f"_func_{name}"
    run.__doc__ = doc
    return run


class PolicyFunctions(jmespath.functions.Functions):  # type: ignore[misc]
    """jmespath's built-in functions plus the matching and path functions security rules need."""

    @_signature({"types": ["string"]}, {"types": ["string", "array-string"]})
    def _func_glob_match(self, subject: str, patterns: str | Sequence[str]) -> bool:
        """Whether the whole string matches any fnmatch-style glob, case-sensitively."""
        compiled = [_glob("glob_match", pattern) for pattern in _patterns(patterns)]
        return bool(_run("glob_match", lambda: any(c.fullmatch(subject) is not None for c in compiled)))

    @_signature({"types": ["string"]}, {"types": ["string", "array-string"]})
    def _func_regex_match(self, subject: str, patterns: str | Sequence[str]) -> bool:
        """Whether any RE2 regular expression matches somewhere in the string."""
        compiled = [_regex("regex_match", pattern) for pattern in _patterns(patterns)]
        return bool(_run("regex_match", lambda: any(c.search(subject) is not None for c in compiled)))

    @_signature({"types": ["string"]}, {"types": ["string"]}, {"types": ["string"]})
    def _func_regex_replace(self, subject: str, pattern: str, replacement: str) -> str:
        """Replace every match of an RE2 regular expression; \\1 and \\g<name> insert groups."""
        regex = _regex("regex_replace", pattern)
        pieces = [
            piece if isinstance(piece, str) else _resolve_group(regex, piece.ref, replacement)
            for piece in _parse_template(replacement)
        ]

        def expand(match: Any) -> str:
            # An unmatched optional group inserts nothing, as in Python's re.
            return "".join(piece if isinstance(piece, str) else (match.group(piece) or "") for piece in pieces)

        return str(_run("regex_replace", lambda: regex.sub(expand, subject)))

    @_signature({"types": ["string"]})
    def _func_normalize_path(self, path: str) -> str:
        """The matching form of a path (see paths.normalize_path); a pattern stays a PathPattern."""
        normalized: str = _path_run("normalize_path", path, lambda: paths.normalize_path(path))
        return normalized

    @_signature({"types": ["string"]}, {"types": ["string"]})
    def _func_resolve_path(self, path: str, cwd: str) -> str:
        """The path as paths(@) places it: normalised, a relative one resolved against cwd."""
        resolved = _path_run("resolve_path", path, lambda: _resolve_path(path, cwd))
        # A FoldedPath keeps the literal reading it was folded from, for the "surely" tests after it.
        return resolved if type(resolved) is paths.FoldedPath else str(resolved)

    _func_path_within = _path_test(
        paths.path_within, "Whether the path is one of the directories or below one of them."
    )
    _func_path_surely_within = _path_test(
        paths.path_surely_within,
        "Whether the path is surely one of the directories or below one (unknown places are not).",
    )
    _func_path_matches = _path_test(
        paths.path_matches, "Whether the path may match any gitignore-like path glob (unknown places may)."
    )
    _func_path_surely_matches = _path_test(
        paths.path_surely_matches,
        "Whether the path surely matches any gitignore-like path glob (unknown places do not).",
    )

    @_signature({"types": ["string"]})
    def _func_path_unknown(self, path: str) -> bool:
        """Whether the path names no place the engine can know (home, variable, climb, device...)."""
        return bool(_path_run("path_unknown", path, lambda: paths.is_unknown(path)))

    _func_paths = _role_reader(
        "paths", "Every path in a call (by role, resolved against its cwd), command operands included."
    )
    _func_paths_outside_cwd = _role_reader(
        "paths_outside_cwd",
        "The call's paths (as paths() gives them) that are not surely within its cwd; all of them with no cwd.",
    )
    _func_written = _role_reader(
        "written",
        "The paths the call's commands may write (redirections, destinations, outputs), resolved as paths() are.",
    )
    _func_swept = _role_reader(
        "swept", "The places the call's commands hand to a program that may read below them, resolved as paths() are."
    )
    _func_cache_folders = _role_reader(
        "cache_folders",
        "The folders the call's commands persist as a toolchain's cache (a later clean empties them), as paths().",
    )
    _func_urls = _role_reader("urls", "Every URL in a call, by role.")

    @_signature({"types": ["string"]})
    def _func_url_host(self, url: str) -> str | None:
        """The canonical host of a URL (any IPv4 spelling as a dotted quad), or null when it names none."""
        return url_host(url)

    @_signature({"types": []})
    def _func_address_values(self, value: Any) -> list[str]:
        """The canonical address of every value that spells one in any form (dotted, decimal, hex, octets), any key."""
        try:
            return _host_values.address_values(value, _ipv4, _ipv6)
        except ValueError as error:  # nesting no document holds: fail closed
            raise JMESPathError(f"In function address_values(), {error}") from None

    @_signature({"types": ["string"]})
    def _func_url_path(self, url: str) -> str | None:
        """The path of a URL, decoded, case-folded and with dot segments resolved, or null when it names no host."""
        return url_path(url)

    _func_commands = _role_reader(
        "commands", "Every shell command in a call, by role (an argv list is joined as the shell would read it)."
    )
    _func_programs = _role_reader(
        "programs", "Every program the call's shell commands would run (basename, lower case), parsed for real."
    )
    _func_invocations = _role_reader(
        "invocations",
        "What each program with subcommands is asked to do (`git daemon`, `python -m http.server`), parsed.",
    )
    _func_emails = _role_reader("emails", "Every e-mail address in a call, by role.")
    _func_secrets = _role_reader(
        "secrets",
        'What looks like a credential anywhere in a call\'s arguments, as "kind at where" (never the secret).',
    )
    _func_amounts = _role_reader(
        "amounts", "Every amount in a call, by role, as sent (ordering comparisons fail closed on non-numbers)."
    )

    @_signature({"types": ["string"]})
    def _func_path_escapes(self, path: str) -> bool:
        """Whether the path leaves the workspace (absolute, "..", "~" or a variable)."""
        return bool(_path_run("path_escapes", path, lambda: paths.path_escapes(path)))

    @_signature({"types": ["string"]})
    def _func_lower(self, subject: str) -> str:
        """The string in lower case."""
        return subject.lower()

    @_signature({"types": ["string"]})
    def _func_upper(self, subject: str) -> str:
        """The string in upper case."""
        return subject.upper()

    @_signature({"types": ["string", "array"]}, {"types": ["array"]})
    def _func_contains_any(self, subject: str | Sequence[Any], needles: Sequence[Any]) -> bool:
        """String: whether any needle is a substring. Array: whether any needle equals an element."""
        if isinstance(subject, str):
            for needle in needles:
                if not isinstance(needle, str):
                    # A number cannot be a substring; saying "no" would hide a rule bug, so raise.
                    raise _type_error("contains_any", needle, ["string"])
            return any(needle in subject for needle in needles)
        # Hash both sides once: linear instead of comparing every pair.
        wanted = {_json_key(needle) for needle in needles}
        return any(_json_key(item) in wanted for item in subject)

    @_signature({"types": []})
    def _func_strings(self, value: Any) -> list[str]:
        """Every string value in a value, depth-first (object keys are not included)."""
        found: list[str] = []
        _collect_strings(value, found, 0)
        return found

    @_signature({"types": ["array-number"]})
    def _func_product(self, numbers: Sequence[float]) -> float:
        """The product of an array of numbers (JMESPath has no arithmetic operators): 1 for []."""
        result: float = 1
        for number in numbers:
            result *= number
        return result

    @_signature({"types": []})
    def _func_is_string(self, value: Any) -> bool:
        """Whether the value is a string."""
        return isinstance(value, str)

    @_signature({"types": ["string"]}, {"types": ["string", "array-string"]})
    def _func_tool_matches(self, name: str, patterns: str | Sequence[str]) -> bool:
        """Whether a tool name matches any name or glob, both folded as `tools:` selectors fold them."""
        return tool_names.tool_matches(name, _patterns(patterns))

    @_signature({"types": ["object", "null"]}, {"types": ["string", "array-string"]}, {"types": ["string", "number"]})
    def _func_session_count(self, session: Any, selector: str | Sequence[str], window: str | float) -> int:
        """Earlier calls of the session (allowed or asked) to tools a name, glob or tag:NAME selects, in a window."""
        count: int = _session_run("session_count", lambda: session_reads.session_count(session, selector, window))
        return count

    @_signature({"types": ["object", "null"]}, {"types": ["string", "array-string"]}, {"types": ["string", "number"]})
    def _func_session_sum(self, session: Any, selector: str | Sequence[str], window: str | float) -> float:
        """What earlier calls of the session (allowed or asked) to the selected tools spent, in a window."""
        total: float = _session_run("session_sum", lambda: session_reads.session_sum(session, selector, window))
        return total

    @_signature({"types": []})
    def _func_session_secrets(self, document: Any) -> list[str]:
        """Where the call carries a secret an earlier result of its session held, raw, encoded or split."""
        return session_reads.session_secrets(document)

    @_signature({"types": ["string"]})
    def _func_tool_words(self, name: str) -> list[str]:
        """The words of a tool's own name (no MCP server prefix), folded as names are, accents dropped."""
        return list(tool_names.tool_words(name))


# A place no rule can know: `path_within` says it may lie anywhere, `path_surely_within` says not surely inside.
_UNPLACED = "$_unplaced"


def _resolve_path(path: str, cwd: str) -> str:
    """resolve_path() for one path: its readings with and without a NUL must agree, or it is unplaced."""
    places = {paths.resolve_path(reading, cwd) for reading in paths.nul_readings(path)}
    return places.pop() if len(places) == 1 else _UNPLACED


# -- URL hosts ---------------------------------------------------------------------------------

# A scheme, then `//`: the authority runs to the first `/`, `\\` (read as `/` by browsers), `?` or `#`.
# WHATWG parsers (browsers, fetch, Node) also read `http:/host`, `http:\\host` and `http:host` for the special
# schemes, and a scheme-relative `//host`; tabs and newlines anywhere in a URL are dropped.
_SCHEME = re.compile(r"(?i)^(?:(?:https?|wss?|ftp):[/\\]*|[a-z][a-z0-9+.-]*:[/\\]{2}|[/\\]{2})")
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
_AUTHORITY_END = re.compile(r"[/\\?#]")
# What a DNS name or an address may hold once folded; anything else (`$H`, `*`, `{a,b}`) is unplaced.
_HOST_CHARS = re.compile(r"^[a-z0-9._:\[\]%-]*$")
# IDNA's label separators besides "." (ideographic, full-width and half-width full stops).
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
_V4_PART = re.compile(r"(?i)^(?:0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$")
# Prefixes whose low 32 bits are an IPv4 address the packet reaches: IPv4-mapped, IPv4-translated (SIIT), NAT64's
# well-known prefix and its local-use block (RFC 8215, 64:ff9b:1::/48, deployed as /96 prefixes inside it).
_EMBEDS_V4 = tuple(
    ipaddress.IPv6Network(net) for net in ("::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48")
)


def _ipv4(host: str) -> str | None:
    """The dotted quad of any spelling inet_aton (or a URL parser) accepts: 1-4 parts, decimal, 0-octal, 0x-hex."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_V4_PART.match(part) for part in parts):
        return None
    numbers = [
        int(part[2:] or "0", 16) if part[:2].lower() == "0x" else int(part, 8 if part[0] == "0" else 10)
        for part in parts
    ]
    *leading, last = numbers
    if any(number > 0xFF for number in leading) or last >= 1 << 8 * (5 - len(parts)):
        return None
    value = last
    for shift, number in enumerate(leading):
        value |= number << 8 * (3 - shift)
    return str(ipaddress.IPv4Address(value))


# Tunnels whose address carries the IPv4 the packet is delivered to: 6to4 (RFC 3056, 2002:V4ADDR::/48, the
# IPv4 in bits 16-47) and Teredo (RFC 4380, 2001:0::/32, the client's IPv4 in the last 32 bits, inverted).
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")


def _ipv6(host: str) -> str | None:
    """An IPv6 address compressed canonically, or the IPv4 it embeds (mapped, `::a.b.c.d`, NAT64, 6to4, Teredo)."""
    try:
        address = ipaddress.IPv6Address(host.partition("%")[0])  # a zone (`%eth0`) names no other host
    except ValueError:
        return None
    value = int(address)
    if any(address in net for net in _EMBEDS_V4) or (value >> 32 == 0 and value > 1):
        return str(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    if address in _SIX_TO_FOUR:
        return str(ipaddress.IPv4Address((value >> 80) & 0xFFFFFFFF))
    if address in _TEREDO:
        return str(ipaddress.IPv4Address(~value & 0xFFFFFFFF))
    return address.compressed


# Wildcard DNS services answer a name that spells an address with that address, for anyone: `169.254.169.254.nip.io`,
# `169-254-169-254.sslip.io`, `a9fea9fe.nip.io` (hex), `fd00-ec2--254.sslip.io` (IPv6, "--" for "::"). Such a
# name is its address, as surely as the address written in a URL.
_WILDCARD_DNS = ("sslip.io", "nip.io", "xip.io", "traefik.me")
_DASHED_V4 = re.compile(r"(?:^|.*-)([0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3})")
_HEX_V4 = re.compile(r"(?:^|.*-)([0-9a-f]{8})")
_DOTTED_V4 = re.compile(r"[0-9]{1,3}")


def _wildcard_address(host: str) -> str | None:
    """The address a wildcard DNS name spells (see _WILDCARD_DNS), canonical; None for any other name."""
    suffix = next((s for s in _WILDCARD_DNS if host.endswith("." + s)), None)
    if suffix is None:
        return None
    labels = host[: -len(suffix) - 1].split(".")
    if len(labels) >= 4 and all(_DOTTED_V4.fullmatch(label) for label in labels[-4:]):
        return _ipv4(".".join(str(int(label)) for label in labels[-4:]))
    last = labels[-1]
    if dashed := _DASHED_V4.fullmatch(last):
        return _ipv4(".".join(str(int(n)) for n in dashed[1].split("-")))
    if hexed := _HEX_V4.fullmatch(last):
        return str(ipaddress.IPv4Address(int(hexed[1], 16)))
    return _ipv6(last.replace("-", ":")) if "-" in last else None


def _authority_host(url: str) -> str | None:
    """The host part of a URL, of `host:port`, `user@host` or scp's `host:path`, as written."""
    text = url.strip().translate(_TAB_NEWLINE)
    scheme = _SCHEME.match(text)
    if scheme:
        text = text[scheme.end() :]
    authority = _AUTHORITY_END.split(text, 1)[0] if scheme else text.split("/", 1)[0]
    host = authority.rpartition("@")[2]  # the last `@` ends the userinfo, as URL parsers read it
    if host.startswith("["):
        end = host.find("]")
        host = host[: end + 1] if end >= 0 else host
    else:
        host = host.partition(":")[0]
    return host or None


@lru_cache(maxsize=CACHE_SIZE)
def url_host(url: str) -> str | None:
    """The canonical host of a URL (see docs/functions.md#url_host); unplaceable hosts as written."""
    written = _authority_host(url)
    if written is None:
        return None
    host = written
    # Decode and fold until stable: a percent-escape may spell a full-width character and back.
    for _ in range(3):
        before = host
        host = unicodedata.normalize("NFKC", unquote(host, errors="replace")).casefold().translate(_DOTS)
        if host == before:
            break
    if not _HOST_CHARS.match(host):
        return written
    if host.startswith("[") and host.endswith("]"):
        return _ipv6(host[1:-1]) or written
    host = host.rstrip(".")
    if ":" in host:
        return _ipv6(host) or written
    return _ipv4(host) or _wildcard_address(host) or host or None


_QUERY_START = re.compile(r"[?#]")


@lru_cache(maxsize=CACHE_SIZE)
def url_path(url: str) -> str | None:
    """The path of a URL as a server routes it (see docs/functions.md#url_path), or null when it names no host."""
    if _authority_host(url) is None:
        return None
    text = url.strip().translate(_TAB_NEWLINE)
    scheme = _SCHEME.match(text)
    rest = text[scheme.end() :] if scheme else text
    cut = _AUTHORITY_END.search(rest)
    if cut is None or rest[cut.start()] in "?#":
        return "/"
    path = _QUERY_START.split(rest[cut.start() :], maxsplit=1)[0]
    # Decode and fold until stable (%2e%2e, %252e, full-width letters), as url_host reads names;
    # a server reads `\` as `/` (WHATWG) and resolves dot segments before routing.
    for _ in range(3):
        before = path
        path = unicodedata.normalize("NFKC", unquote(path, errors="replace")).casefold()
        if path == before:
            break
    out: list[str] = []
    for segment in path.replace("\\", "/").split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if out:
                out.pop()
            continue
        out.append(segment)
    return "/" + "/".join(out)


# The roles of the last documents asked about: several rules of one call read the same roles,
# and a call document is built once per call, so identity is the key. A rule may also ask about a
# value it builds (`secrets([... hosts ...])`), which would evict the call document if only the
# last one were kept: the call's 10 MB body was then scanned once per rule (0.9 s each). So the
# last few are kept, newest first, in one tuple read and replaced whole: a thread evaluating
# another call can never hand this one its views.
_MEMO_SIZE = 4
_memo: tuple[tuple[Any, dict[str, Any]], ...] = ()


def _by_role(document: Any, what: str) -> list[Any]:
    """One role view of a call document (or of bare arguments), computed once per document."""
    return list(_view(document, what))


def view_is_empty(document: Any, what: str) -> bool:
    """Whether a role view of a document is surely empty; False when it cannot be read (the rule runs, fails closed)."""
    try:
        return not _view(document, what)
    except JMESPathError:
        return False


def _view(document: Any, what: str) -> list[Any]:
    """_by_role's memoised list itself (callers copy it or only read it)."""
    global _memo
    held = _memo
    # The newest first, unrolled: every rule of a call asks about the same document, so the
    # first entry answers all but the first question (a generator per question cost ~0.4 us).
    views: dict[str, Any] | None = (
        held[0][1] if held and held[0][0] is document else next((v for d, v in held if d is document), None)
    )
    if views is None:
        views = {}
        # Holds the documents, so their ids cannot be reused while memoised.
        _memo = ((document, views), *held[: _MEMO_SIZE - 1])
    found = views.get(what)
    if found is None:
        try:
            call = views.get("") or views.setdefault("", _call_parts(document))
            found = views[what] = _ROLE_VIEWS[what](call)
        except Exception as error:  # a value the engine cannot place fails the rule closed
            raise JMESPathError(f"In function {what}(), {error}") from None
    return found  # type: ignore[no-any-return]


class _Call:
    """What the role views read: the arguments, their roles found in one walk, the cwd, the parsed commands."""

    # Computed on first use and kept, by hand: Python 3.11's cached_property takes a lock shared by
    # every instance (a bfcl decision 28.1-29.4 -> 26.7-28.9 us, four process pairs). One is built
    # per call document; two threads reading the same one would at worst compute a view twice.
    __slots__ = ("_commands", "_parsed", "arguments", "cwd", "found")

    def __init__(self, arguments: Any, found: roles.Collected, cwd: str | None) -> None:
        self.arguments, self.found, self.cwd = arguments, found, cwd
        self._commands: list[str] | None = None
        self._parsed: list[Any] | None = None

    @property
    def commands(self) -> list[str]:
        """The call's shell commands; a list under `command`, `cmd`, `args` or `argv` is one argv."""
        if self._commands is None:
            self._commands = _command_texts(self.found)  # raises, uncached, on a command it cannot read
        return self._commands

    @property
    def parsed(self) -> list[Any]:
        """Each command parsed once, for paths(@) and programs(@) alike."""
        if self._parsed is None:
            commands = self.commands
            if not commands:
                self._parsed = []
            else:
                from policyengine.arguments import shell  # tree-sitter loads only when a call carries a command

                self._parsed = [shell.parse_command(text) for text in commands]
        return self._parsed


def _call_parts(document: Any) -> _Call:
    """The arguments, their roles and the cwd of a call document; anything else is taken as the arguments."""
    if isinstance(document, dict) and isinstance(document.get("arguments"), dict):
        cwd = document.get("cwd")
        arguments = document["arguments"]
        return _Call(
            arguments, roles.collect_all(arguments, document.get("roles")), cwd if isinstance(cwd, str) else None
        )
    return _Call(document, roles.collect_all(document), None)


def _command_texts(found: roles.Collected) -> list[str]:
    texts: list[str] = []
    for value in found.values[_COMMAND_ROLE]:
        if value is None:
            continue  # no command given
        if not isinstance(value, str):
            raise ValueError(f"a command argument is {_json_type(value)}, not a string or an argv list")
        texts.append(value)
    # A list of strings under `command`, `cmd`, `args` or `argv` is one argv (["rm", "-rf", "/"]);
    # under `commands` each string is a command.
    texts.extend(shlex.join(argv) for argv in found.argv)
    return texts


def _json_type(value: Any) -> str:
    """ "an object", "a number"...: the JSON name of a value's type, for messages."""
    name = jmespath.functions.TYPES_MAP.get(type(value).__name__, type(value).__name__)
    return f"an {name}" if name[:1] in "aeiou" else f"a {name}"


# What one call's paths may add up to before the call is refused instead of read: placing a path
# costs ~60 us, and deep percent-encoding ~0.65 us a character more (measured here; 100,000
# encoded paths took 8.8 s a call before). At these limits the worst call takes about a second.
MAX_PATHS = 10_000
MAX_PATH_CHARACTERS = 1_000_000


# The readers' fast paths (issue 22's CPU bound) can be turned off, so the differential test
# (tests/test_functions_fast_paths.py) compares them with the code they skip, call by call.
_FAST_PATHS = True


def _paths(call: _Call) -> list[str]:
    found_roles = call.found
    if _FAST_PATHS and not (
        found_roles.values[_PATH_ROLE]
        or found_roles.values[_GLOB_ROLE]
        or found_roles.values[_COMMAND_ROLE]
        or found_roles.argv
    ):
        # Fast path (issue 22's CPU bound): no path, glob or command argument gives nothing to
        # place, so the bases, the globs and the parse below are skipped (tests/test_functions_fast_paths.py).
        return []
    values = call.found.values[_PATH_ROLE]
    for value in values:
        if not isinstance(value, str):
            # A number or a flag where a path belongs cannot be placed: the rule fails closed.
            raise ValueError(f"a path argument is {_json_type(value)}, not a string")
    if _FAST_PATHS and not (found_roles.values[_GLOB_ROLE] or found_roles.values[_COMMAND_ROLE] or found_roles.argv):
        given: list[str] = list(values)  # fast path: no glob to expand, no command to parse
    else:
        given = [*values, *_globs(call), *(operand for command in call.parsed for operand in command.operands)]
    if len(given) > MAX_PATHS:
        raise ValueError(
            f"the call names {len(given):,} paths, more than the {MAX_PATHS:,} one call may carry; split the call"
        )
    characters = sum(map(len, given))
    if characters > MAX_PATH_CHARACTERS:
        raise ValueError(
            f"the call's paths add up to {characters:,} characters, more than the {MAX_PATH_CHARACTERS:,} "
            "one call may carry; split the call"
        )
    found: list[str] = []
    bases = _own_bases(call)
    present: set[str] = set()  # what `found` holds, when there are bases: a call may name 10,000 paths
    for value in given:
        # A shell operand bash globs (`cat .en?`) is a paths.PathPattern: resolving keeps its type.
        readings = _resolve(value, call.cwd)
        found.extend(readings)
        if bases:
            present.update(readings)
            for base in bases:
                # Round ten (set I, tool-own-cwd): a tool that works in its own folder argument
                # (run_command {command: "cat etc/sudoers", cwd: "/"}) opens a relative path there.
                for reading in _resolve(value, base):
                    if reading not in present:
                        present.add(reading)
                        found.append(reading)
    return found


# The readings of plain path strings already placed, by (path, cwd): an agent names the same files
# and folders call after call, and placing one costs ~25k instructions (decoding, folding, the
# literal reading). Only exact str values and cwds (a FoldedPath or PathPattern carries more than
# its text), short ones, are kept; the table is bounded (calls are untrusted) and emptied when full.
# resolve() is a function of its two strings alone: tests/test_functions_fast_paths.py compares.
_RESOLVED: dict[tuple[str, str | None], tuple[str, ...]] = {}
_RESOLVED_MAX = 4096
_RESOLVED_TEXT_MAX = 512


def _resolve(path: str, cwd: str | None) -> list[str]:
    """roles.resolve(path, cwd), remembered for plain short strings (fast path, issue 22's CPU bound)."""
    if (
        not _FAST_PATHS
        or type(path) is not str
        or len(path) > _RESOLVED_TEXT_MAX
        or (cwd is not None and (type(cwd) is not str or len(cwd) > _RESOLVED_TEXT_MAX))
    ):
        return roles.resolve(path, cwd)
    key = (path, cwd)
    found = _RESOLVED.get(key)
    if found is None:
        found = tuple(roles.resolve(path, cwd))
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.clear()
        _RESOLVED[key] = found
    return list(found)


_ROOTED = re.compile(r"(?i)^(/|[a-z?]:/)")
# Top-level argument keys (words joined, lower case) that give the folder a tool works in.
_OWN_BASE_KEYS = frozenset(
    {"cwd", "workdir", "workingdir", "workingdirectory", "wd", "dir", "directory", "chdir", "basedir", "rootdir"}
    | {"root", "cwdpath", "currentdir", "currentdirectory", "workspace", "workspacedir", "projectdir", "basepath"}
    | {"base", "rootpath", "rootdirectory", "basedirectory", "chroot", "workingpath"}
)


# Round eleven (set I, tool-own-cwd): a key whose last word names a folder (mount, mountpoint,
# chroot, target_dir, dest_folder, prefix, build context, repo, volume) gives one too
# (read_file {mount: /, file: boot/x}): a relative path beside it is also read from there (an
# extra reading only adds places).
_OWN_BASE_WORDS = frozenset(
    {"dir", "directory", "folder", "root", "base", "mount", "mountpoint", "cwd", "workdir", "chroot", "prefix"}
    | {"context", "home", "project", "repo", "repository", "workspace", "share", "drive", "volume", "location"}
)


@lru_cache(maxsize=CACHE_SIZE)
def _own_base_key(key: str) -> bool:
    """Whether an argument's name gives the folder a tool works in (names repeat: tokenised once)."""
    words = roles.tokens(key)
    return "".join(words) in _OWN_BASE_KEYS or (bool(words) and words[-1] in _OWN_BASE_WORDS)


def _own_bases(call: _Call) -> list[str]:
    """The folders, other than the call's cwd, that a tool's own cwd-like arguments name (resolved)."""
    if not isinstance(call.arguments, dict):
        return []
    bases: list[str] = []
    for key, value in call.arguments.items():
        if isinstance(value, str) and value.strip() and _own_base_key(str(key)):
            for base in roles.resolve(value, call.cwd):
                if isinstance(base, str) and not isinstance(base, paths.PathPattern) and base != call.cwd:
                    bases.append(base)
    return bases


def _written(call: _Call) -> list[str]:
    """The places the call's commands may write, resolved against the cwd and the tool's own folders."""
    sql = call.found.written
    if not (call.found.values[roles.Role.COMMAND] or call.found.argv or sql):
        return []  # fast path: no command and no SQL that writes, nothing written
    found: dict[str, None] = {}
    for value in sql:
        # Round fourteen (set M): a file SQL writes by itself (writefile, lo_export, COPY ... TO).
        found.update(dict.fromkeys(_resolve(value, call.cwd)))
    return list(found | _command_places(call, lambda command: command.writes))


def _swept(call: _Call) -> list[str]:
    """The places the call's commands hand to a program that may read what is below them (Command.swept)."""
    if not (call.found.values[roles.Role.COMMAND] or call.found.argv):
        return []  # fast path: no command, nothing handed by one
    return list(_command_places(call, lambda command: command.swept))


def _cache_folders(call: _Call) -> list[str]:
    """The folders the call's commands persist as a cache that a later clean empties (Command.cache_folders)."""
    if not (call.found.values[roles.Role.COMMAND] or call.found.argv):
        return []  # fast path: no command, no setting
    return list(_command_places(call, lambda command: command.cache_folders))


def _command_places(call: _Call, places: Callable[[Any], Iterable[str]]) -> dict[str, None]:
    """The places each parsed command gives (`places(command)`), resolved against the cwd and the tool's folders."""
    found: dict[str, None] = {}
    bases = _own_bases(call)
    for command in call.parsed:
        for value in places(command):
            for cwd in (call.cwd, *bases):
                found.update(dict.fromkeys(_resolve(value, cwd)))
    return found


def _paths_outside_cwd(call: _Call) -> list[str]:
    """The call's paths that are not surely within its cwd (with no cwd: the rooted and unknown ones)."""
    if call.cwd is None:
        # A relative path with no cwd is the project's by default (as the tool sees it).
        return [path for path in _paths(call) if _ROOTED.match(path) or paths.is_unknown(path)]
    return [path for path in _paths(call) if not paths.path_surely_within(path, call.cwd)]


def _globs(call: _Call) -> list[str]:
    """The files a tool's glob arguments select (`Glob {pattern: "**/.e*"}`), as path patterns."""
    globs = call.found.values[_GLOB_ROLE]
    if not globs:
        return []
    from policyengine.arguments import shell  # brace expansion lives with the shell's

    found: list[str] = []
    for value in globs:
        if not isinstance(value, str):
            raise ValueError(f"a glob argument is {_json_type(value)}, not a string")
        found.extend(shell.glob_operands(value))
    return found


def _urls(call: _Call) -> list[str]:
    """The URL arguments, then the URLs the call's commands name (`curl http://169.254.169.254/`)."""
    found = [value for value in call.found.values[_URL_ROLE] if isinstance(value, str)]
    found.extend(url for command in call.parsed for url in command.urls)
    # Round fourteen (set L): a URL given in parts ({host, port, path}) is read joined as well.
    found.extend(_url_parts.split_urls(call.arguments))
    # Round fifteen (set M): where a pin or proxy argument sends the connection ({resolve: h:80:ADDR}).
    found.extend(_url_pins.argument_pins(call.arguments))
    return found


def _strings_of(role: roles.Role) -> Callable[[_Call], list[Any]]:
    def view(call: _Call) -> list[Any]:
        return [v for v in call.found.values[role] if isinstance(v, str)]

    return view


def _secrets(call: _Call) -> list[str]:
    from policyengine.arguments import secret_reader
    from policyengine.arguments import (
        secret_scanner as secrets,  # the detector's patterns compile only when a pack asks for secrets
    )

    # One reader for the guards and for redaction: what a `secrets: true` redaction would hide in
    # these arguments (a vault table, an XML key/value pair, a column table) is a secret here too.
    found = [f"{f.kind} at {f.where}" for f in secret_reader.found_secrets(call.arguments, path="arguments")]
    # The words a shell passes (`admin:'sec''ret'` is `admin:secret`, `a=AK; b=IA...; "$a$b"` joined),
    # as a list: the scanner glues sibling pieces itself, and joining them with blanks would make
    # `'API_KEY=' src` a key and its value. A command that cannot be read is scanned as written
    # above, and other red lines refuse it.
    try:
        words = [word for command in call.parsed for word in command.words] if call.commands else []
    except Exception:
        words = []
    if words:
        found.extend(f"{f.kind} at {f.where}" for f in secrets.find_secrets(words, path="command words"))
    # A parameter the tool declares `role: secret` is one, whatever its value looks like.
    found.extend("declared secret" for v in call.found.values[_SECRET_ROLE] if v != "")
    return found


def _command_lines(call: _Call) -> list[str]:
    """The call's commands as written, then each argument vector as bash passes its words (shell.Command.lines)."""
    # A table that reads a subcommand or option from the text must meet it however the shell spells
    # it (`git $'\x63lean'`, `d=cle; git ${d}an`, `docker volume "r"m`): the words after quote
    # removal, $'..' decoding and the line's variables are added. Adding texts only makes an
    # any-of test on commands(@) match more. A command that cannot be read adds none: the
    # red lines that parse it refuse it.
    commands = call.commands
    if not commands:
        return commands
    try:
        parsed = call.parsed
    except Exception:
        return commands
    seen = dict.fromkeys(commands)
    for command in parsed:
        seen.update(dict.fromkeys(command.lines))
    return list(seen)


_ROLE_VIEWS: dict[str, Callable[[_Call], Any]] = {
    "secrets": _secrets,
    "paths": _paths,
    "paths_outside_cwd": _paths_outside_cwd,
    "written": _written,
    "swept": _swept,
    "cache_folders": _cache_folders,
    "urls": _urls,
    "emails": _strings_of(_EMAIL_ROLE),
    "amounts": lambda call: call.found.values[_AMOUNT_ROLE],
    "commands": _command_lines,
    "programs": lambda call: [program for command in call.parsed for program in command.programs],
    "invocations": lambda call: list(dict.fromkeys(item for command in call.parsed for item in command.invocations)),
}


def _collect_strings(value: Any, found: list[str], depth: int) -> None:
    """Append the string leaves of value to found, refusing absurd nesting (fail closed)."""
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, (list, dict)):
        if depth >= MAX_DEPTH:
            raise JMESPathError(f"In function strings(), value nested deeper than {MAX_DEPTH} levels")
        for item in value.values() if isinstance(value, dict) else value:
            _collect_strings(item, found, depth + 1)


FUNCTIONS = PolicyFunctions()
OPTIONS = jmespath.Options(custom_functions=FUNCTIONS)


def _arity(signature: Sequence[dict[str, Any]]) -> tuple[int, int | None]:
    """(min, max) argument counts; a variadic last parameter is required once, then unbounded."""
    if signature and signature[-1].get("variadic"):
        return len(signature), None
    return len(signature), len(signature)


_ARITY: dict[str, tuple[int, int | None]] = {
    name: _arity(spec["signature"]) for name, spec in sorted(PolicyFunctions.FUNCTION_TABLE.items())
}


def function_arity() -> dict[str, tuple[int, int | None]]:
    """Argument counts (min, max or None) of every function an expression may call."""
    return dict(_ARITY)


# Which argument of which function is a pattern, and how to compile it: the rule compiler
# checks literal patterns at load time instead of failing (closed) on every call.
PATTERN_ARGUMENTS: dict[str, tuple[int, Callable[[str, str], Any]]] = {
    "regex_match": (1, _regex),
    "regex_replace": (1, _regex),
    "glob_match": (1, _glob),
    "path_matches": (1, _glob),
}


def pattern_problem(function: str, argument: int, value: Any) -> str | None:
    """Why a literal pattern argument cannot compile, or None when it is fine (or not a pattern)."""
    spec = PATTERN_ARGUMENTS.get(function)
    if spec is None or spec[0] != argument:
        return None
    for pattern in _patterns(value) if isinstance(value, (str, list)) else ():
        if not isinstance(pattern, str):
            continue
        try:
            spec[1](function, pattern)
        except JMESPathError as error:
            return str(error)
    return None


# -- specialisation ----------------------------------------------------------------------------

DYNAMIC = object()  # an argument only known at call time
FALLBACK = object()  # the specialised body is unsure: run the general function (and its errors)


def _specialize(name: str, constants: Sequence[Any]) -> Callable[[Any], Any] | None:
    """A one-argument body for `name(subject, <literal patterns>)`, built once at rule load.

    Literal directories are parsed once and literal globs and regexes become one RE2
    alternation, so a call costs one parse and one match. Anything unusual returns FALLBACK,
    and the general function runs with jmespath's own checks and errors.
    """
    if len(constants) != 2 or constants[0] is not DYNAMIC or constants[1] is DYNAMIC:
        return None
    literal = constants[1]
    patterns = [literal] if isinstance(literal, str) else literal
    if not isinstance(patterns, list) or not patterns or any(type(p) is not str for p in patterns):
        return None
    try:
        test: Callable[[str], bool]
        if name == "path_within":
            test = paths.within_matcher(patterns)
        elif name == "path_matches":
            test = paths.globs_matcher(patterns)
        elif name == "glob_match":
            glob = re2.compile("|".join(f"(?:{paths.glob_to_regex(p)})" for p in patterns), _RE2_OPTIONS)
            test = _re2_test(glob, anchored=True)
        elif name == "tool_matches":
            test = tool_names.tool_matcher(tuple(patterns))
        elif name == "regex_match":
            regex = re2.compile("|".join(f"(?:{p})" for p in patterns), _RE2_OPTIONS)
            test = _re2_test(regex, anchored=False)
        else:
            return None
    except Exception:  # a pattern the general path will report (and fail closed on) at run time
        return None

    counted = name in PATH_TESTS

    def run(subject: Any) -> Any:
        if (
            type(subject) is not str
            and type(subject) is not paths.PathPattern
            and type(subject) is not paths.FoldedPath
        ):
            return FALLBACK
        if counted:
            _spend(name, subject)  # raises past the budget: the rule fails closed, no fallback
        try:
            return test(subject)
        except Exception:
            return FALLBACK

    return run


_NO_SPAN = (-1, -1)


def _re2_test(regex: Any, anchored: bool) -> Callable[[str], bool]:
    """Whether a compiled pattern finds (or, anchored, fully matches) a string: a yes/no, built once.

    Fast path (issue 22's CPU bound): the re2 wrapper's search builds a generator, a Match and
    its character offsets on every call (3-8 us); whether there is a match is one call of the
    engine on the UTF-8 text (~1.5 us), as the wrapper makes it. Without that engine handle the
    wrapper is used. Differential test: tests/test_functions_fast_paths.py.
    """
    engine = getattr(regex, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "ANCHOR_BOTH" if anchored else "UNANCHORED", None)
    if not _FAST_PATHS or engine is None or anchor is None or not hasattr(engine, "Match"):
        if anchored:
            return lambda subject: regex.fullmatch(subject) is not None
        return lambda subject: regex.search(subject) is not None
    match = engine.Match

    def test(subject: str) -> bool:
        encoded = subject.encode("utf-8")  # as the wrapper encodes: a lone surrogate raises alike
        return bool(match(anchor, encoded, 0, len(encoded))[0] != _NO_SPAN)

    return test


PolicyFunctions.specialize = staticmethod(_specialize)
