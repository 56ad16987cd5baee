"""Path normalisation, containment and glob matching for security rules (no JMESPath here).

Everything in this module normalises FOR MATCHING, not for opening files: when two spellings
might name the same file on some system, they normalise to the same string. Over-matching
only makes a rule stricter; under-matching would let a spelling slip past it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from urllib.parse import unquote

import re2  # type: ignore[import-untyped,unused-ignore]

__all__ = [
    "PathPatternError",
    "glob_to_regex",
    "normalize_path",
    "path_escapes",
    "path_matches",
    "path_within",
]

# Each decoding round strictly shortens a changing string, so the loop ends anyway; the bound
# stops quadratic work on inputs like "%25252525...2e" and fails closed instead of guessing.
MAX_DECODE_ROUNDS = 32

# Normalised patterns and directories are reused across calls; the bound keeps a flood of
# distinct rule inputs from growing memory without limit.
CACHE_SIZE = 1024

# Long strings are normalised without caching so one huge argument cannot pin memory.
_CACHEABLE_LENGTH = 4096

# Cc (controls incl. NUL, tab, newline), Cf (zero-width and bidi marks) and Cs (lone
# surrogates, which cannot even be encoded as UTF-8) are invisible: a name written with them
# displays, and often resolves, like the name without them.
_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
_ASCII_CONTROLS = {code: None for code in (*range(0x20), 0x7F)}

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern becomes an exception, not stderr noise

# A parsed root: "" for a relative path, "/" for POSIX, "c:/" for a Windows drive.
Root = str


class PathPatternError(ValueError):
    """A path or glob pattern that cannot be normalised or compiled; callers fail closed."""


def _drop_invisible(text: str) -> str:
    """Remove control, format and surrogate code points."""
    if text.isascii():
        return text.translate(_ASCII_CONTROLS)
    return "".join(ch for ch in text if unicodedata.category(ch) not in _DROPPED_CATEGORIES)


def _decode(text: str) -> str:
    """Fold look-alikes, case and percent-encoding until the string stops changing."""
    if text.isascii() and "%" not in text:
        # What the rounds compute for plain ASCII (NFKC and unquote change nothing), in one pass;
        # an ASCII string is printable exactly when it has no control to drop.
        return text.lower() if text.isprintable() else text.lower().translate(_ASCII_CONTROLS)
    return _decode_rounds(text)


def _decode_rounds(text: str) -> str:
    """The general decoding loop (tests pin _decode's shortcut to it)."""
    for _ in range(MAX_DECODE_ROUNDS):
        before = text
        # NFKC maps full-width and compatibility forms (U+FF0E for ".", U+FF05 for "%") to ASCII; casefold after
        # it and NFKC again, because case folding can produce non-normalised sequences.
        text = unicodedata.normalize("NFKC", text)
        text = unicodedata.normalize("NFKC", text.casefold())
        # Dropping invisible characters can join "%2" and "e" into a new escape, so it runs
        # inside the loop, before decoding.
        text = _drop_invisible(text)
        # Decode until stable: a tool or proxy may decode more than once (%252e -> %2e -> .).
        text = unquote(text, errors="replace")
        if text == before:
            return text
    raise PathPatternError(f"path is percent-encoded more than {MAX_DECODE_ROUNDS} levels deep")


def _clean_component(part: str) -> str:
    """Normalise one path component the way lenient filesystems and tools read it."""
    # An NTFS alternate data stream ("x.env::$DATA", "x.env:zone") opens the base file.
    if ":" in part:
        part = part[: part.index(":")]
    part = part.strip()
    # Windows ignores trailing dots and spaces (".env." opens ".env"); "." and ".." keep theirs.
    if part.strip("."):
        part = part.rstrip(". ")
    return part


def _split_root(text: str) -> tuple[Root, str]:
    """Separate the root ("/", "c:/" or "" for relative) from the rest of a decoded path."""
    # file: URLs name local paths; "file://localhost/x" and "file:///x" both mean "/x".
    if text.startswith("file:"):
        text = text[len("file:") :]
        if text.startswith("//localhost/"):
            text = text[len("//localhost") :]
        elif text.startswith("///"):  # file:///x: an empty authority, then the path
            text = text[2:]
    # Win32 device prefixes "\\?\C:\x" and "\\.\C:\x" name the same file as "C:\x".
    if text.startswith(("//?/", "//./")):
        text = text[4:]
        if text.startswith("unc/"):
            text = "/" + text[3:]
    # The administrative share of the machine itself names its drive: "\\localhost\c$\x" and
    # "\\127.0.0.1\c$\x" open "c:\x" (a rule on c:/windows must see them).
    local_share = _LOCAL_SHARE.match(text)
    if local_share:
        text = f"{local_share.group(1)}:/{text[local_share.end() :]}"
    # "/c:/windows" (file:///C:/Windows, or a URL path) names the drive, not a folder "c:".
    if len(text) >= 3 and text[0] == "/" and text[2] == ":" and "a" <= text[1] <= "z":
        text = text[1:]
    if text.startswith("/"):
        return "/", text
    if len(text) >= 2 and text[1] == ":" and "a" <= text[0] <= "z":
        # "C:foo" (drive-relative) is treated as "c:/foo": rooted either way, so over-matching.
        return text[:2] + "/", text[2:]
    return "", text


# "//localhost/c$/", "//127.0.0.1/c$", "//[::1]/c$/" after decoding and "\\" -> "/".
_LOCAL_SHARE = re.compile(r"//(?:localhost|127\.0\.0\.1|\[?::1\]?)/([a-z])\$(?:/|$)")

MAX_PATH_LENGTH = 32_768  # Windows' own limit; Linux's PATH_MAX is 4,096


def _parse(path: str) -> tuple[Root, tuple[str, ...]]:
    """Return the root and the lexically resolved components of a path."""
    if len(path) > MAX_PATH_LENGTH:
        # No filesystem opens a longer path, and normalising megabytes of hostile text would
        # stall the event loop: refuse it, so the rule fails closed.
        raise PathPatternError(f"path of {len(path):,} characters is longer than {MAX_PATH_LENGTH:,}")
    if path.isascii() and "%" not in path and path.isprintable():
        # Plain ASCII (most paths): _decode is lower(), and the common roots need no _split_root.
        text = path.lower().strip().replace("\\", "/")
        if text[:1] == "/" and text[1:2] != "/" and text[2:3] != ":":
            root, rest = "/", text
        elif text[:1] != "/" and text[1:2] != ":" and not text.startswith("file:"):
            root, rest = "", text
        else:
            root, rest = _split_root(text)
        ascii_rest = True
    else:
        text = _decode(path).strip().replace("\\", "/")
        root, rest = _split_root(text)
        ascii_rest = rest.isascii()
    if ascii_rest and ":" not in rest and " " not in rest and "./" not in rest and not rest.endswith("."):
        # The common case: no component needs cleaning, and none is "." or ".." (they end in ".").
        # Decoding left no ASCII whitespace but " " (controls are dropped), so strip() has nothing to do.
        return root, tuple(filter(None, rest.split("/")))
    return root, _components(root, rest)


def _components(root: Root, rest: str) -> tuple[str, ...]:
    """Clean and lexically resolve the components after the root (the general case)."""
    parts: list[str] = []
    for raw in rest.split("/"):
        # Empty components are repeated slashes and "." is the current directory: both vanish.
        part = _clean_component(raw)
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not root:
                # A relative path may climb above its start; keep the ".." so escapes stay visible.
                parts.append("..")
            # At a root, ".." stays at the root ("/.." is "/"), as every OS resolves it.
            continue
        parts.append(part)
    return tuple(parts)


@lru_cache(maxsize=CACHE_SIZE)
def _parse_cached(path: str) -> tuple[Root, tuple[str, ...]]:
    """Parse a short, frequently reused string (a rule's directory) once."""
    return _parse(path)


def _parse_any(path: str) -> tuple[Root, tuple[str, ...]]:
    """Parse a path, using the cache only for short strings."""
    return _parse_cached(path) if len(path) <= _CACHEABLE_LENGTH else _parse(path)


# Call arguments get their own small cache: several rules read the same path in one call, and
# attacker-chosen paths must not evict the rules' own directories from the cache above.
_parse_subject_cached = lru_cache(maxsize=256)(_parse)


def _parse_subject(path: str) -> tuple[Root, tuple[str, ...]]:
    """Parse a call's path argument, caching short ones briefly."""
    return _parse_subject_cached(path) if len(path) <= _CACHEABLE_LENGTH else _parse(path)


def _join(root: Root, parts: tuple[str, ...]) -> str:
    """Render a parsed path; a relative path with no components is "."."""
    if root:
        return root + "/".join(parts)
    return "/".join(parts) or "."


def normalize_path(path: str) -> str:
    """Return the matching form of a path: decoded, lexically resolved, slash-separated, casefolded."""
    return _join(*_parse_subject(path))


def _as_list(values: str | Iterable[str]) -> list[str]:
    """Accept one string or several."""
    return [values] if isinstance(values, str) else list(values)


def path_within(path: str, dirs: str | Iterable[str]) -> bool:
    """Whether the normalised path is one of the directories or below one of them."""
    root, parts = _parse_subject(path)
    for directory in _as_list(dirs):
        dir_root, dir_parts = _parse_any(directory)
        if dir_root != root or parts[: len(dir_parts)] != dir_parts:
            continue
        # "../x" is not inside "." nor "../../x" inside "..": the leading climbs must agree.
        if not root and _climbs(parts) != _climbs(dir_parts):
            continue
        return True
    return False


def within_matcher(dirs: Iterable[str]) -> Callable[[str], bool]:
    """path_within with the directories parsed once (for rules whose directories are literals)."""
    parsed = [_parse_any(directory) for directory in dirs]
    climbs = [_climbs(dir_parts) for _root, dir_parts in parsed]

    def within(path: str) -> bool:
        root, parts = _parse_subject(path)
        for (dir_root, dir_parts), dir_climbs in zip(parsed, climbs, strict=True):
            if dir_root != root or parts[: len(dir_parts)] != dir_parts:
                continue
            if not root and _climbs(parts) != dir_climbs:
                continue
            return True
        return False

    return within


def globs_matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    """path_matches with every glob compiled into one RE2 alternation (one match per call)."""
    regex = re2.compile("|".join(f"(?:{_path_glob_to_regex(p)})" for p in patterns), _RE2_OPTIONS)

    def matches(path: str) -> bool:
        return regex.fullmatch(normalize_path(path)) is not None

    return matches


def _climbs(parts: tuple[str, ...]) -> int:
    """Count the leading ".." components of a resolved relative path."""
    count = 0
    while count < len(parts) and parts[count] == "..":
        count += 1
    return count


def path_escapes(path: str) -> bool:
    """Whether the path leaves a workspace: absolute, climbing above its start, or home/variable-based."""
    root, parts = _parse_subject(path)
    if root:
        return True
    # "~/x", "$HOME/x" and "%USERPROFILE%/x" resolve outside the workspace once a shell expands them.
    return bool(parts) and (parts[0] == ".." or parts[0][0] in "~$%")


# -- globs -------------------------------------------------------------------------------------


def _escape_char(ch: str) -> str:
    """Quote one character for RE2; non-ASCII characters are literals and must not be escaped."""
    if ch.isascii() and not ch.isalnum() and ch != "_":
        return "\\" + ch
    return ch


def _translate_class(pattern: str, start: int, path_mode: bool) -> tuple[str, int] | None:
    """Translate the bracket expression at pattern[start] ('['); None if it is not closed."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    body_start = i
    # A "]" right after "[" or "[!" is a member, as in fnmatch and POSIX.
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    end = pattern.find("]", i)
    if end < 0:
        return None
    body = pattern[body_start:end]
    out: list[str] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            low, high = body[k], body[k + 2]
            if low > high:
                raise PathPatternError(f"glob range {low}-{high} is reversed in {pattern!r}")
            out.append(f"{_escape_char(low)}-{_escape_char(high)}")
            k += 3
        else:
            out.append(_escape_char(body[k]))
            k += 1
    members = "".join(out)
    if negate:
        # In a path, a negated class still never matches the separator.
        return f"[^{members}{'/' if path_mode else ''}]", end + 1
    return f"[{members}]", end + 1


def _translate_glob(pattern: str, path_mode: bool) -> str:
    """Translate fnmatch syntax to RE2 syntax; in path mode "*" and "?" stop at "/"."""
    star = "[^/]*" if path_mode else ".*"
    one = "[^/]" if path_mode else "."
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            # Runs of "*" are one "*"; emitting one quantifier keeps the program small.
            while i < len(pattern) and pattern[i] == "*":
                i += 1
            out.append(star)
            continue
        if ch == "?":
            out.append(one)
        elif ch == "[":
            translated = _translate_class(pattern, i, path_mode)
            if translated is not None:
                out.append(translated[0])
                i = translated[1]
                continue
            out.append("\\[")
        else:
            out.append(_escape_char(ch))
        i += 1
    return "".join(out)


def glob_to_regex(pattern: str) -> str:
    """Return an RE2 pattern, anchored by fullmatch, for an fnmatch-style glob ("*" crosses "/")."""
    return "(?s)" + _translate_glob(pattern, path_mode=False)


def _path_glob_to_regex(pattern: str) -> str:
    """Return an RE2 pattern for a path glob, matched with fullmatch against a normalised path."""
    root, parts = _parse(pattern)
    body: list[str] = []
    need_sep = False
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            # "**" as a whole component spans any number of components, including none.
            if last:
                body.append("(?:/.*)?" if need_sep else ".*")
                need_sep = False  # already covers everything below
            else:
                body.append(("/" if need_sep else "") + "(?:.*/)?")
                need_sep = False
            continue
        body.append(("/" if need_sep else "") + _translate_glob(part, path_mode=True))
        need_sep = True
    regex = "".join(body)
    # A match on a directory covers everything below it, as in gitignore.
    below = "(?:/.*)?" if need_sep else ""
    if root:
        # An anchored pattern matches from the root; "/" alone matches every absolute path.
        return "(?s)" + "".join(map(_escape_char, root)) + (regex + below if parts else ".*")
    if not parts:
        return "(?s).*"  # "." or "": the whole tree; over-matching is the safe reading
    # A relative pattern floats: it may start at any component, like "**/pattern", so a rule
    # written as "secrets/*.key" also catches "/home/u/repo/secrets/a.key".
    return "(?s)(?:.*/)?" + regex + below


@lru_cache(maxsize=CACHE_SIZE)
def _compiled_path_glob(pattern: str) -> re2._Regexp:
    """Compile a path glob once."""
    regex = _path_glob_to_regex(pattern)
    try:
        return re2.compile(regex, _RE2_OPTIONS)
    except re2.error as err:
        raise PathPatternError(f"invalid path pattern {pattern!r}: {err}") from None


def path_matches(path: str, patterns: str | Iterable[str]) -> bool:
    """Whether the normalised path matches any gitignore-like glob (see docs/functions.md)."""
    normalized = normalize_path(path)
    return any(_compiled_path_glob(pattern).fullmatch(normalized) is not None for pattern in _as_list(patterns))
