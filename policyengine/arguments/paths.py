"""Path normalisation, containment and glob matching for security rules (no JMESPath here).

Everything in this module normalises FOR MATCHING, not for opening files: when two spellings
might name the same file on some system, they normalise to the same string. Over-matching
only makes a rule stricter; under-matching would let a spelling slip past it.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import itertools
import re
import socket
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

import re2  # type: ignore[import-untyped,unused-ignore]

from policyengine.arguments import _ignorables
from policyengine.arguments._glob_classes import class_end

__all__ = [
    "UNKNOWN",
    "FoldedPath",
    "PathPattern",
    "PathPatternError",
    "as_opened",
    "decode",
    "escape_pattern",
    "glob_to_regex",
    "is_unknown",
    "normalize_path",
    "nul_readings",
    "path_escapes",
    "path_matches",
    "path_surely_matches",
    "path_surely_within",
    "path_within",
    "resolve_path",
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
# Default-ignorable code points (variation selectors, tags, U+034F...) and the Hangul fillers render
# as nothing, like the format characters above, but many are not in Cf (U+FE0F is Mn, U+3164 Lo).
_IGNORABLES: dict[int, None] = dict.fromkeys(
    code for first, last in _ignorables.RANGES for code in range(first, last + 1)
)

# Code points NTFS's upcase table folds onto a letter that casefolding keeps apart: Windows opens
# ".g\u0131t-credentials" as ".git-credentials" (U+0131 upper-cases to "I"). Derived from Unicode (every code
# point whose one-character upper case casefolds to another string; a test re-derives it over all of Unicode).
_NTFS_FOLDS = {0x0131: "i"}

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern becomes an exception, not stderr noise

# A parsed root: "" for a relative path, "/" for POSIX, "c:/" for a Windows drive, UNKNOWN for
# a path whose place cannot be known (a home or variable expansion, a climb above an unknown
# start, a device or object path, a share of this machine, an 8.3 short name).
Root = str
UNKNOWN: Root = "?"


class PathPatternError(ValueError):
    """A path or glob pattern that cannot be normalised or compiled; callers fail closed."""


def _drop_invisible(text: str) -> str:
    """Remove control, format, surrogate and default-ignorable code points."""
    if text.isascii():
        return text.translate(_ASCII_CONTROLS)
    text = text.translate(_IGNORABLES)
    return "".join(ch for ch in text if unicodedata.category(ch) not in _DROPPED_CATEGORIES)


# A run of IIS-style "%uXXXX" escapes, or a run of "%XX" bytes (decoded together: one character may take several).
_ESCAPES = re.compile(r"(?:%u[0-9a-f]{4})+|(?:%[0-9a-f]{2})+", re.IGNORECASE)


def _unquote(text: str) -> str:
    """Percent-decode, reading "%uXXXX" escapes and overlong UTF-8 as lenient servers do."""
    return _ESCAPES.sub(_decode_escapes, text) if "%" in text else text


def _decode_escapes(match: re.Match[str]) -> str:
    """The text one run of escapes spells."""
    run = match.group()
    if run[1] in "uU":
        units = "".join(chr(int(run[i + 2 : i + 6], 16)) for i in range(0, len(run), 6))
        # UTF-16 code units: a surrogate pair is one character, a lone surrogate becomes U+FFFD.
        return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _lenient_utf8(bytes.fromhex(run.replace("%", "")))


def _continuations(lead: int) -> int:
    """How many continuation bytes a UTF-8 lead byte announces; -1 for a byte that cannot lead."""
    if lead < 0x80:
        return 0
    # 5- and 6-byte forms (0xf8-0xfd) are not UTF-8 any more, but old decoders read them (overlong only).
    for more, (low, high) in enumerate(((0xC0, 0xDF), (0xE0, 0xEF), (0xF0, 0xF7), (0xF8, 0xFB), (0xFC, 0xFD)), 1):
        if low <= lead <= high:
            return more
    return -1


def _lenient_utf8(data: bytes) -> str:
    """Decode UTF-8 accepting overlong forms ("%c0%ae" is "."), as old and lenient decoders do."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    i = 0
    while i < len(data):
        lead = data[i]
        more = _continuations(lead)
        tail = data[i + 1 : i + 1 + more] if more > 0 else b""
        if more < 0 or len(tail) < more or any(byte & 0xC0 != 0x80 for byte in tail):
            out.append("\ufffd")
            i += 1
            continue
        code = lead & (0x7F >> (more + 1)) if more else lead
        for byte in tail:
            code = code << 6 | byte & 0x3F
        out.append(chr(code) if code <= 0x10FFFF else "\ufffd")
        i += 1 + more
    return "".join(out)


def _cut_at_nul(text: str) -> str:
    """What a C API opens: the string up to its first NUL (an encoded %00 counts once decoded)."""
    return text[: text.index("\x00")] if "\x00" in text else text


def _decode(text: str) -> str:
    """Fold look-alikes, case and percent-encoding until the string stops changing."""
    text = _cut_at_nul(text)
    if text.isascii() and "%" not in text:
        # What the rounds compute for plain ASCII (NFKC and unquote change nothing), in one pass;
        # an ASCII string is printable exactly when it has no control to drop.
        return text.lower() if text.isprintable() else text.lower().translate(_ASCII_CONTROLS)
    return _decode_rounds(text)


def decode(text: str) -> str:
    """The text as the path functions read it: NFKC, casefolded, invisible characters dropped, percent-decoded."""
    return _decode(text)


def _strip_nul(text: str) -> str:
    """What a tool that drops NULs opens: the string without them."""
    return text.replace("\x00", "")


def _decode_rounds(text: str, nul: Callable[[str], str] = _cut_at_nul) -> str:
    """The general decoding loop (tests pin _decode's shortcut to it); `nul` says what a NUL does."""
    for _ in range(MAX_DECODE_ROUNDS):
        before = text
        # NFKC maps full-width and compatibility forms (U+FF0E for ".", U+FF05 for "%") to ASCII; casefold after
        # it and NFKC again, because case folding can produce non-normalised sequences.
        text = unicodedata.normalize("NFKC", text)
        text = unicodedata.normalize("NFKC", text.casefold()).translate(_NTFS_FOLDS)
        # Dropping invisible characters can join "%2" and "e" into a new escape, so it runs
        # inside the loop, before decoding. A NUL (raw or decoded from %00) is not dropped but
        # ends the path: a C API opens what stands before it (".env\0/../notes.txt" opens .env).
        text = _drop_invisible(nul(text))
        # Decode until stable: a tool or proxy may decode more than once (%252e -> %2e -> .).
        text = nul(_unquote(text))
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


def as_opened(text: str) -> str:
    """The text with its last name cleaned as lenient filesystems open it (`.env::$DATA`, `.env. ` are `.env`)."""
    head, sep, last = text.rpartition("/") if "/" in text else text.rpartition("\\")
    cleaned = _clean_component(last)
    return f"{head}{sep}{cleaned}" if cleaned else text


def _split_root(text: str) -> tuple[Root, str]:
    """Separate the root ("/", "c:/", "" for relative, UNKNOWN) from the rest of a decoded path."""
    # file: URLs name local paths, whatever the host: "file:///x", "file://localhost/x" and
    # "file://127.0.0.1/x" all mean "/x", and a named host may be this machine.
    if text.startswith("file:"):
        text = text[len("file:") :]
        # On Windows "file://host/share/x" is the UNC path "\\\\host\\share\\x": kept as one where the share
        # places it (a WSL distro, a drive's administrative share), else the host is dropped.
        if text.startswith("//"):
            slash = text.find("/", 2)
            host = text[2 : slash if slash >= 0 else None].rpartition("@")[2]  # a userinfo names no other host
            rest = text[slash:] if slash >= 0 else "/"
            unc = _unc("//" + host + rest)
            text = unc if _WSL_SHARE.match(unc) or _ADMIN_SHARE.match(unc) else rest
    # An SMB URL ("smb://host/C$/x", "cifs://host/share/x") names what the UNC path "\\\\host\\share\\x" names.
    if text.startswith(_SMB_SCHEMES):
        text = "//" + text.partition(":")[2].lstrip("/")
    # The device namespace with doubled separators ("///.//x" after "\\" -> "/") is still it (over-matching).
    device = _DEVICE_PREFIX.match(text) if text.startswith("//") else None
    if device:
        text = f"//{device.group(1)}/{text[device.end() :]}"
    # The NT object namespace "\??\C:\x" is what "\\?\C:\x" names.
    if text.startswith("/??/"):
        text = "//?/" + text[4:]
    # Win32 device prefixes "\\?\C:\x" and "\\.\C:\x" name the same file as "C:\x"; any other
    # device or object path (GLOBALROOT, a volume GUID, a pipe) names a place no rule can see.
    if text.startswith(("//?/", "//./")):
        rest = text[4:]
        if rest.startswith("unc/"):
            text = "/" + rest[3:]
        elif len(rest) >= 3 and rest[1] == ":" and "a" <= rest[0] <= "z" and rest[2] == "/":
            text = rest
        else:
            # "\\.\C:" with no separator after the drive is the raw volume, not its root folder (round thirteen).
            return UNKNOWN, text
    if text.startswith("//"):
        text = _unc(text)
    wsl = _WSL_SHARE.match(text)
    if wsl:
        # "\\\\wsl$\\Ubuntu\\etc\\shadow" opens a WSL distro's "/etc/shadow": the share is the distro's root
        # (any distro: named after it, so over-matching). Extra leading slashes change nothing for Windows.
        return "/", "/" + text[wsl.end() :]
    share = _SHARE.match(text)
    if share:
        host, name = share.group(1), share.group(2)
        after = text[share.end() :]
        if len(name) == 2 and name[1] == "$" and "a" <= name[0] <= "z":
            # A drive's administrative share ("\\host\c$\x") opens that drive; the host may be this
            # machine under any of its names, so it counts as the local drive (over-matching).
            text = f"{name[0]}:/{after}"
        elif name == "admin$":
            text = f"c:/windows/{after}"  # ADMIN$ is %SystemRoot%
        elif _is_loopback(host):
            return UNKNOWN, text  # a share of this machine: any local folder
    # "/c:/windows" (file:///C:/Windows, or a URL path) names the drive, not a folder "c:".
    if len(text) >= 3 and text[0] == "/" and text[2] == ":" and "a" <= text[1] <= "z":
        text = text[1:]
    if text == "?:" or text.startswith("?:/"):
        return UNKNOWN, text  # a root-relative Windows path: the root of a drive the engine cannot know
    if text.startswith("/"):
        return "/", text
    if len(text) >= 2 and text[1] == ":" and "a" <= text[0] <= "z":
        # "C:foo" (drive-relative) is treated as "c:/foo": rooted either way, so over-matching.
        return text[:2] + "/", text[2:]
    return "", text


# "//host/share" after decoding and "\\" -> "/": a UNC path.
_SHARE = re.compile(r"//([^/]+)/([^/]+)(?:/|$)")
# WSL's shares of its distros' root directories: "\\\\wsl$\\<distro>" and "\\\\wsl.localhost\\<distro>".
# In a path pattern the shell's literal "$" is written "[$]".
_WSL_SHARE = re.compile(r"/{2,}wsl(?:\$|\[\$\]|\.localhost)\.?/+[^/]+(?:/+|$)")
_SMB_SCHEMES = ("smb:", "cifs:")
_ADMIN_SHARE = re.compile(r"//[^/]+/(?:[a-z]\$|admin\$)(?:/|$)")


def _unc(text: str) -> str:
    """A UNC path with its empty and "." components dropped, so the host and share stand first ("//h/./c$/x")."""
    body = text.lstrip("/")
    lead = text[: len(text) - len(body)]
    return lead + "/".join(part for part in body.split("/") if part not in ("", "."))


def _is_loopback(host: str) -> bool:
    """Whether a UNC host names this machine: every loopback spelling, "0.0.0.0" included."""
    host = host.strip("[]").rstrip(".")
    if host in ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback") or host.endswith(".localhost"):
        return True
    if host.endswith(".ipv6-literal.net"):  # Windows' UNC spelling of an IPv6 address: "0--1.ipv6-literal.net"
        host = host[: -len(".ipv6-literal.net")].replace("-", ":")
    try:
        # inet_aton reads every spelling the C resolver accepts: 127.1, 0x7f.1, 017700000001, 2130706433.
        if socket.inet_aton(host)[0] in (0, 127):
            return True
    except (OSError, ValueError):
        pass
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or address.is_unspecified or (mapped is not None and mapped.is_loopback)


MAX_PATH_LENGTH = 32_768  # Windows' own limit; Linux's PATH_MAX is 4,096

# A component a shell or Windows expands to another place: "$HOME", "${X}", "$(cmd)", "%USERPROFILE%".
# A backtick is a command substitution as the shell parser leaves it (`cat \`echo .env\``).
_EXPANSION = re.compile(r"\$[a-z_{(0-9@*#?!-]|%[a-z_][a-z0-9_()-]*%|`")
# An 8.3 short name on a drive ("progra~1", "windo~1", "env~1" for .env): it stands for a long
# name the engine cannot know.
_SHORT_NAME = re.compile(r"[^~./]{1,6}~[0-9]{1,6}(?:\.[^.]{0,3})?")


def _parse(path: str, classify: bool = True) -> tuple[Root, tuple[str, ...]]:
    """Return the root and the lexically resolved components of a path, Windows' junctions followed."""
    root, parts = _parse_lexically(path, classify)
    if parts:
        start = _drive_start(root, parts)
        if start >= 0 and len(parts) > start and parts[start] in _JUNCTION_HEADS:
            parts = _through_junctions(parts, start)
    return root, parts


# Windows' compatibility junctions (present on every install since Vista), from the drive's root; "*" is
# any user's folder. Each opens its target, so "C:\Users\All Users\Microsoft\Windows\Start Menu" is a
# place in C:\ProgramData, and a list naming the target catches every old name for it.
_JUNCTIONS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("documents and settings",), ("users",)),
    (("users", "all users"), ("programdata",)),
    (("users", "default user"), ("users", "default")),
    (("programdata", "application data"), ("programdata",)),
    (("programdata", "desktop"), ("users", "public", "desktop")),
    (("programdata", "documents"), ("users", "public", "documents")),
    (("programdata", "favorites"), ("users", "public", "favorites")),
    (("programdata", "start menu"), ("programdata", "microsoft", "windows", "start menu")),
    (("programdata", "templates"), ("programdata", "microsoft", "windows", "templates")),
    (("users", "*", "application data"), ("users", "*", "appdata", "roaming")),
    (("users", "*", "local settings"), ("users", "*", "appdata", "local")),
    (("users", "*", "my documents"), ("users", "*", "documents")),
    (("users", "*", "cookies"), ("users", "*", "appdata", "roaming", "microsoft", "windows", "cookies")),
    (("users", "*", "nethood"), ("users", "*", "appdata", "roaming", "microsoft", "windows", "network shortcuts")),
    (("users", "*", "printhood"), ("users", "*", "appdata", "roaming", "microsoft", "windows", "printer shortcuts")),
    (("users", "*", "recent"), ("users", "*", "appdata", "roaming", "microsoft", "windows", "recent")),
    (("users", "*", "sendto"), ("users", "*", "appdata", "roaming", "microsoft", "windows", "sendto")),
    (("users", "*", "start menu"), ("users", "*", "appdata", "roaming", "microsoft", "windows", "start menu")),
    (("users", "*", "templates"), ("users", "*", "appdata", "roaming", "microsoft", "windows", "templates")),
    (("users", "*", "appdata", "local", "application data"), ("users", "*", "appdata", "local")),
    (
        ("users", "*", "appdata", "local", "history"),
        ("users", "*", "appdata", "local", "microsoft", "windows", "history"),
    ),
    (
        ("users", "*", "appdata", "local", "temporary internet files"),
        ("users", "*", "appdata", "local", "microsoft", "windows", "inetcache"),
    ),
    (("users", "*", "documents", "my music"), ("users", "*", "music")),
    (("users", "*", "documents", "my pictures"), ("users", "*", "pictures")),
    (("users", "*", "documents", "my videos"), ("users", "*", "videos")),
)
_JUNCTION_HEADS = frozenset(key[0] for key, _target in _JUNCTIONS)
# Drive letters as POSIX tools mount them: WSL's /mnt/c, Cygwin's /cygdrive/c, MSYS2's /c.
_MOUNTS = frozenset({"mnt", "cygdrive"})


def _drive_start(root: Root, parts: tuple[str, ...]) -> int:
    """Where a drive's root lies among the components (-1 when the path is on no drive)."""
    if len(root) == 3:
        return 0  # "c:/"
    if root == UNKNOWN:
        if parts[0] != "?:":
            return -1
        # "\\Users\\All Users" is on the current drive's root; "\\mnt\\c\\Users" is read as the packs
        # read "?:/mnt/c/...": a POSIX tool given the slashes as backslashes opens the mount.
        if len(parts) > 3 and parts[1] in _MOUNTS and len(parts[2]) == 1 and parts[3] in _JUNCTION_HEADS:
            return 3
        if len(parts) > 2 and len(parts[1]) == 1 and parts[2] in _JUNCTION_HEADS:
            return 2
        return 1
    if root == "/":
        if len(parts[0]) == 1:
            return 1
        if parts[0] in _MOUNTS and len(parts) > 1 and len(parts[1]) == 1:
            return 2
    return -1


def _through_junctions(parts: tuple[str, ...], start: int) -> tuple[str, ...]:
    """The components with every junction from the drive's root replaced by its target."""
    for _ in range(len(_JUNCTIONS)):  # a target may start another junction ("documents and settings/all users")
        rest = parts[start:]
        for key, target in _JUNCTIONS:
            if len(rest) >= len(key) and all(k in ("*", r) for k, r in zip(key, rest, strict=False)):
                mapped = tuple(rest[i] if name == "*" else name for i, name in enumerate(target))
                parts = parts[:start] + mapped + rest[len(key) :]
                break
        else:
            return parts
    return parts


def _parse_lexically(path: str, classify: bool = True) -> tuple[Root, tuple[str, ...]]:
    """Return the root and the lexically resolved components of a path.

    With `classify` (paths, not patterns), a path whose place cannot be known gets the root
    UNKNOWN and keeps its spelling in its components (the first carries the root), so it renders,
    and parses again, as written: "~root/.ssh", "$home/x", "../../etc", "//?/globalroot/x".
    """
    if len(path) > MAX_PATH_LENGTH:
        # No filesystem opens a longer path, and normalising megabytes of hostile text would
        # stall the event loop: refuse it, so the rule fails closed.
        raise PathPatternError(f"path of {len(path):,} characters is longer than {MAX_PATH_LENGTH:,}")
    if path.isascii() and "%" not in path and path.isprintable():
        # Plain ASCII (most paths): _decode is lower(), and the common roots need no _split_root.
        text = path.lower().strip()
        backslash = "\\" in text
        if classify and text[:1] == "\\":
            text = _root_relative(text)
        text = text.replace("\\", "/")
        if text[:1] == "/" and text[1:2] != "/" and text[2:3] != ":" and text[1:4] != "??/":
            root, rest = "/", text
        elif text[:1] != "/" and text[1:2] != ":" and not text.startswith(("file:", *_SMB_SCHEMES)):
            root, rest = "", text
        else:
            root, rest = _split_root(text)
        ascii_rest = True
    else:
        text = _decode(path).strip()
        backslash = "\\" in text  # decoded: `%5c` and a full-width backslash are Windows' separator too
        text = (_root_relative(text) if classify else text).replace("\\", "/")
        root, rest = _split_root(text)
        ascii_rest = rest.isascii()
    if root == UNKNOWN:
        return root, _unknown_parts(rest)
    if (
        ascii_rest
        and ":" not in rest
        and " " not in rest
        and "./" not in rest
        and not rest.endswith(".")
        and "$" not in rest
        and "`" not in rest
        and "~" not in rest
        and "%" not in rest
    ):
        # The common case: no component needs cleaning, none is "." or "..", none expands.
        # Decoding left no ASCII whitespace but " " (controls are dropped), so strip() has nothing to do.
        parts = tuple(filter(None, rest.split("/")))
        if classify and parts and parts[-1][:3] in _DOS_DEVICE_HEADS:
            return _dos_device(root, parts, len(root) == 3 or backslash) or (root, parts)
        return root, parts
    parts = _components(root, rest)
    if classify and parts and parts[-1][:3] in _DOS_DEVICE_HEADS:
        device = _dos_device(root, parts, len(root) == 3 or backslash)
        if device is not None:
            return device
    if classify and root == "/" and parts[:1] == ("??",):
        return UNKNOWN, ("//?", *parts[1:])  # "\\??:\\x" cleans to "/??/x": the NT object namespace again
    if classify and _unplaceable(root, parts, rest[:1] == "~"):
        return UNKNOWN, (root[:-1], *parts) if root else parts
    return root, parts


def _root_relative(text: str) -> str:
    """ "\\Windows\\x" is on the current drive, which the engine cannot know: it becomes "?:/windows/x"."""
    if text[:1] == "\\" and text[1:2] not in ("\\", "/", "?") and text[2:3] != ":":
        return "?:/" + text[1:]
    return text  # "\\c:\\x" names drive c: as "/c:/x" does


def _unknown_name(part: str, first: bool, short_names: bool) -> bool:
    """Whether a component stands for a name the engine cannot know.

    A leading home ("~", "~root") or climb (".."), an expansion ("$x", "%x%"), and where the
    path is on a drive an 8.3 short name ("progra~1").
    """
    return (
        (first and part.startswith("~"))
        or part == ".."
        or _EXPANSION.search(part) is not None
        or (short_names and _SHORT_NAME.fullmatch(part) is not None)
    )


def _unplaceable(root: Root, parts: tuple[str, ...], tilde: bool = True) -> bool:
    """Whether a resolved path names no place the engine can know (see docs/functions.md)."""
    # A resolved rooted path holds no "..", and "~" only counts first in a relative one, as
    # written first: "./~bin" is a folder named "~bin" (bash expands no tilde after "./").
    # An 8.3 short name counts on a drive, and on a drive as POSIX tools mount it (/mnt/c/ENV~1,
    # /cygdrive/c/x, MSYS2's /c/x: set N, cc-win-secret-aliases): from the drive's root on.
    drive = 0 if len(root) == 3 else _drive_start(root, parts) if root == "/" and parts else -1
    if drive > 0 and not parts[drive - 1].isalpha():
        drive = -1  # "/_/x" is no drive's mount (the packs' own base for unplaced names)
    return any(_unknown_name(part, i == 0 and not root and tilde, 0 <= drive <= i) for i, part in enumerate(parts))


def _unknown_parts(text: str) -> tuple[str, ...]:
    """The components of a device or loopback-share path: its prefix, then what follows, resolved."""
    match = _SHARE.match(text)
    if text.startswith("?:"):
        head, rest = "?:", text[3:]
    elif text.startswith(("//?/", "//./")):
        head, rest = text[:3], text[4:]
        device = _device_itself(rest)
        if device is not None:
            return (f"{head}/{device}",)
    elif match:
        head, rest = text[: match.end()].rstrip("/"), text[match.end() :]
    else:
        return _components("/", text)
    return (head, *_components("/", rest))


_DEVICE_PREFIX = re.compile(r"/{2,}([.?])/+")
# The object namespace's folders that lead to a device (`//?/GLOBALROOT/Device/HarddiskVolume1`).
_DEVICE_FOLDERS = frozenset({"globalroot", "device", "??", "global"})


def _device_itself(rest: str) -> str | None:
    """The device a device-namespace path names itself (a disk, a volume, a port), or None when it names a file on one.

    Round thirteen (set K, device-namespace-paths): `//./PhysicalDrive0`, `//./C:`, `//./HarddiskVolume3`
    and `//?/GLOBALROOT/Device/HarddiskVolumeShadowCopy1` (as `\\\\.\\` and `\\\\?\\` read after decoding)
    open a whole disk or volume: a raw read holds every file on it, so the path is one unknown component
    (any name below it may be read) and every glob may match it. A path below the device (`.../Windows/x`)
    keeps its names.
    """
    names = [part for part in rest.split("/") if part not in ("", ".")]
    start = 0
    while start < len(names) - 1 and names[start] in _DEVICE_FOLDERS:
        start += 1
    if len(names) - start > 1:
        return None
    return "/".join(names)


# Windows' reserved device names: the last name of a path (in any folder, with any extension, after
# NFKC has made `COM¹` `com1`) opens the device, not a file (round thirteen, set K, dos-device-names).
_DOS_DEVICE = re.compile(r"(?:con|prn|aux|nul|com[0-9]|lpt[0-9]|conin\$|conout\$)")
_DOS_DEVICE_HEADS = frozenset({"con", "prn", "aux", "nul", "com", "lpt"})


def _dos_device(root: Root, parts: tuple[str, ...], windows: bool) -> Reading | None:
    """The device a path's reserved last name opens (NUL is /dev/null), or None when it names a file.

    In a Windows-shaped path (`windows`: a drive, a backslash) every such name is a device, with any
    extension (`C:\\x\\AUX.txt`, `.\\aux`). Elsewhere a name with an extension (`aux.c`) is an ordinary
    file, and so is a word (`ps aux`, `/tmp/con`), unless it can only be a device (`CONIN$`, `COM1`).
    """
    last = parts[-1]
    base, dot, _ext = last.partition(".")
    base = base.rstrip(" ")
    if not _DOS_DEVICE.fullmatch(base):
        return None
    if not windows and (dot or base.isalpha()):
        return None
    if base == "nul":
        return "/", ("dev", "null")
    return UNKNOWN, (f"//./{base}",)


def _components(root: Root, rest: str) -> tuple[str, ...]:
    """Clean and lexically resolve the components after the root (the general case)."""
    parts: list[str] = []
    # Round twelve (set K, cc-tilde-system-users): a leading "~NAME" is a home the engine cannot
    # place (~root, ~sys, ~www-data), so a climb out of it ("~sys/../usr/bin") goes nowhere known and
    # keeps it; "~+" is bash's $PWD, the directory itself ("~+/.." climbs out of the cwd).
    home = not root and rest[:1] == "~"
    for index, raw in enumerate(rest.split("/")):
        # Empty components are repeated slashes and "." is the current directory: both vanish.
        part = _clean_component(raw)
        if part in ("", ".") or (home and index == 0 and part == "~+"):
            continue
        if part == "..":
            if home and len(parts) == 1 and parts[0] == _clean_component(rest.split("/", 1)[0]):
                parts.append("..")  # out of an unknown home: unknown still
            else:
                _climb(parts, root)
            continue
        parts.append(part)
    return tuple(parts)


def _climb(parts: list[str], root: Root) -> None:
    """Resolve one ".." after `parts`: the last name goes, or a relative path keeps the climb."""
    if parts and parts[-1] != "..":
        parts.pop()
    elif not root:
        # A relative path may climb above its start; keep the ".." so escapes stay visible.
        parts.append("..")
    # At a root, ".." stays at the root ("/.." is "/"), as every OS resolves it.


@lru_cache(maxsize=CACHE_SIZE)
def _parse_cached(path: str) -> tuple[Root, tuple[str, ...]]:
    """Parse a short, frequently reused string (a rule's directory, taken as written) once."""
    return _parse(path, classify=False)


def _parse_any(path: str) -> tuple[Root, tuple[str, ...]]:
    """Parse a rule's directory, using the cache only for short strings."""
    return _parse_cached(path) if len(path) <= _CACHEABLE_LENGTH else _parse(path, classify=False)


# Call arguments get their own small cache: several rules read the same path in one call, and
# attacker-chosen paths must not evict the rules' own directories from the cache above.
_parse_subject_cached = lru_cache(maxsize=256)(_parse)


def _parse_subject(path: str) -> tuple[Root, tuple[str, ...]]:
    """Parse a call's path argument, caching short ones briefly."""
    return _parse_subject_cached(path) if len(path) <= _CACHEABLE_LENGTH else _parse(path)


def _join(root: Root, parts: tuple[str, ...]) -> str:
    """Render a parsed path; a relative path with no components is "."."""
    if root and root != UNKNOWN:
        return root + "/".join(parts)
    if len(parts) == 1 and parts[0] in ("?:", "//?", "//."):
        return parts[0] + "/"  # a bare unknown root keeps its slash, so it parses back the same
    return "/".join(parts) or "."


def normalize_path(path: str) -> str:
    """Return the matching form of a path: decoded, lexically resolved, slash-separated, casefolded.

    A PathPattern stays one while a wildcard or bracket is left in it.
    """
    if type(path) is PathPattern:
        return _as_pattern(_join(*_pattern_readings(path)[0]))
    return _carry(_join(*_parse_subject(path)), _literal_resolve(path, None))


def _as_list(values: str | Iterable[str]) -> list[str]:
    """Accept one string or several."""
    return [values] if isinstance(values, str) else list(values)


def is_unknown(path: str) -> bool:
    """Whether the path names no place the engine can know (home, variable, climb, device...)."""
    readings = _pattern_readings(path) if type(path) is PathPattern else _readings(path)
    return any(root == UNKNOWN for root, _parts in readings)


def _readings(path: str) -> list[tuple[Root, tuple[str, ...]]]:
    """The parsed path, and when it holds a NUL also the reading of a tool that strips NULs.

    Normalisation cuts at NUL (a C API opens what stands before it); a tool that drops it
    instead opens the rest (".e\\0nv" is ".env"). "May" tests take either, "surely" tests both.
    """
    return [_parse_subject(reading) for reading in nul_readings(path)]


# Every code point whose NFKC form (casefolded or not) holds "%": ASCII, the small and the full-width percent sign.
_PERCENT_SIGNS = frozenset("%\ufe6a\uff05")


def nul_readings(path: str) -> tuple[str, ...]:
    """The path, and when it holds a NUL (raw or in any escape paths decode) also the path with its NULs stripped."""
    if type(path) is PathPattern:
        # A pattern's brackets are not decoded (bash reads them); only a written NUL or %00 counts.
        if "\x00" not in path and "%00" not in path:
            return (path,)
        return (path, PathPattern(path.replace("\x00", "").replace("%00", "")))
    if "\x00" not in path and not _PERCENT_SIGNS.intersection(path):
        # No NUL can appear by decoding without a percent sign, and no code point but these three folds to one
        # (NFKC, casefolded; checked over all of Unicode by a test): skip two full decodings of a huge text.
        return (path,)
    # Escapes nest and fold (`%2500`, `%u0000`, overlong `%c0%80`, full-width U+FF05 U+FF10 U+FF10): the NUL is
    # found in the decoded text, so the stripped reading is decoded too (decoding it again is a no-op).
    try:
        stripped = _decode_rounds(path, _strip_nul)
        if stripped == _decode_rounds(path):
            return (path,)
    except PathPatternError:
        return (path,)  # the path itself fails to decode, and its reading fails closed
    return (path, stripped)


# Other roots of the same system, from "/": a path below one names the system's own file as surely as the
# plain path (`/rootfs/etc/shadow` is the node's /etc/shadow). "*" is any one name. "May" tests read a path
# both ways; "surely" tests never (an alias widens what may be forbidden, never what is allowed).
_ROOT_ALIASES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("rootfs",), ()),  # cAdvisor's and many node agents' mount of the host's root
    (("host",), ()),  # Falco, node-exporter: /host/etc is the host's /etc
    (("hostfs",), ()),  # Elastic's Beats
    (("host-root",), ()),
    (("proc", "*", "root"), ()),  # every process's view of its root: /proc/self/root/etc is /etc
    (("sysroot", "ostree", "deploy", "*", "deploy", "*"), ()),  # an OSTree deployment (Fedora CoreOS, Silverblue)
    (("sysroot", "ostree", "deploy", "*", "var"), ("var",)),
    (("ostree", "deploy", "*", "deploy", "*"), ()),  # /ostree links to /sysroot/ostree
    (("ostree", "deploy", "*", "var"), ("var",)),
    (("sysroot",), ()),  # the physical root (OSTree) and the real root seen from an initramfs
    ((".snapshots", "*", "snapshot"), ()),  # snapper's btrfs snapshots of the root
    (("volumes", "*"), ()),  # macOS: any volume may be the system's ("/Volumes/Macintosh HD")
    (("system", "volumes", "data"), ()),  # macOS's data volume, firmlinked into the root
    (("nix", "var", "nix", "profiles", "system"), ()),  # NixOS builds /etc from the system profile
    (("run", "current-system"), ()),
    (("run", "booted-system"), ()),
    (("mnt", "sysimage"), ()),  # Anaconda's installed system
    (("run", "host"), ()),  # Flatpak's and toolbox's view of the host's root
)
# Set N (bl-unlisted-host-mount-roots): a top-level folder named as a root mount is one, by its name's
# shape rather than a list - node agents' and debug pods' /hostroot, /host_root, /host-rootfs, /node-root,
# /noderoot; an initramfs' /newroot, /new_root, /oldroot; /realroot, /chroot-root, /guestroot, /rootfs_host.
_ROOT_MOUNT_NAME = re.compile(
    r"(?:host|node|new|old|real|target|chroot|guest|sys|container|vm)[-_.]?root(?:[-_.]?fs)?"
    r"|(?:host|node)[-_.]?(?:fs|rootfs|root[-_.]fs)|root[-_.]?fs(?:[-_.]?(?:host|node))?"
)
# Set N (bl-mnt-installer-roots): where another system's root is mounted by hand or by an installer - /mnt
# itself (Arch's pacstrap /mnt), a named mount below it (/mnt/gentoo, /mnt/debian, /mnt/lfs), two names deep
# (WSLg's /mnt/wslg/distro, GCE's /mnt/disks/NAME, /media/USER/DISK), a chroot's folder. "*" is any one name
# but a drive letter (/mnt/c is drive C:, read above). Such a mount is read as a root only when the name after
# it is one of a root's own system folders (_SYSTEM_HEADS): /mnt/gentoo/etc/x is /etc/x, while
# /mnt/data/photos stays a data disk. A suffix test on a path's tail below a root-relative mount point, so a
# project's own etc/ (/workspace/mnt/etc, ~/project/etc) is not read, nor a deeper folder (/mnt/data/a/b/etc).
_MOUNT_PARENTS: tuple[tuple[str, ...], ...] = (
    ("mnt",),
    ("mnt", "*"),
    ("mnt", "*", "*"),
    ("media", "*"),
    ("media", "*", "*"),
    ("run", "media", "*", "*"),
    ("srv", "chroot", "*"),
    ("chroot",),
    ("chroot", "*"),
)
_SYSTEM_HEADS = frozenset({"etc", "usr", "boot", "var", "root", "bin", "sbin", "lib", "lib32", "lib64", "libx32"})
_ALIAS_HEADS = frozenset(key[0] for key, _target in _ROOT_ALIASES) | frozenset(key[0] for key in _MOUNT_PARENTS)
MAX_ALIAS_ROUNDS = 3  # an alias inside an alias (/rootfs/sysroot/ostree/...), bounded


def _name_may_be(part: str, name: str, pattern: bool) -> bool:
    """Whether a component is the table's name ("*": any name); a pattern's component when it may expand to it."""
    if name == "*":
        return part not in ("..", "**")
    return part == name or (pattern and _is_pattern(part) and fnmatch.fnmatchcase(name, part))


def _mounted_root(parts: tuple[str, ...], key: tuple[str, ...], pattern: bool) -> bool:
    """Whether the path runs through a mount point of _MOUNT_PARENTS into a root's system folder."""
    if len(parts) <= len(key):
        return False
    for part, name in zip(parts, key, strict=False):
        if not _name_may_be(part, name, pattern) or (name == "*" and len(part) == 1 and not _is_pattern(part)):
            return False
    head = parts[len(key)]
    return head in _SYSTEM_HEADS or (
        pattern and _is_pattern(head) and any(fnmatch.fnmatchcase(name, head) for name in _SYSTEM_HEADS)
    )


def _alias_readings(root: Root, parts: tuple[str, ...], pattern: bool = False) -> list[Reading]:
    """The same place read from the system's other roots: `d:/windows` may be `c:/windows`, `/rootfs/etc` is `/etc`.

    Windows may be installed on any drive, and its program and user folders moved to another one, so a path
    on a drive other than C: is also read on C: (and WSL's, Cygwin's and MSYS2's mounts of a drive likewise).
    """
    found: list[Reading] = []
    todo = [(root, parts)]
    for _ in range(MAX_ALIAS_ROUNDS):
        following: list[Reading] = []
        for r, p in todo:
            if len(r) == 3 and r != "c:/":
                following.append(("c:/", p))
            elif r == "/" and p:
                if p[0] in _MOUNTS and len(p) > 1 and len(p[1]) == 1 and p[1] != "c":
                    following.append(("/", (p[0], "c", *p[2:])))
                elif len(p[0]) == 1 and p[0] not in ("c", "*", "?"):
                    following.append(("/", ("c", *p[1:])))
                if p[0] in _ALIAS_HEADS or (pattern and _is_pattern(p[0])):
                    for key, target in _ROOT_ALIASES:
                        if len(p) > len(key) and all(_name_may_be(a, b, pattern) for a, b in zip(p, key, strict=False)):
                            following.append(("/", (*target, *p[len(key) :])))
                    following += [("/", p[len(key) :]) for key in _MOUNT_PARENTS if _mounted_root(p, key, pattern)]
                if len(p) > 1 and _ROOT_MOUNT_NAME.fullmatch(p[0]):
                    following.append(("/", p[1:]))
        found += following
        todo = following
        if not todo:
            break
    return found


# A copy's name, as file managers and browsers write it: the copy holds what the original does, so a name with
# these affixes read off is tested too (`.env copy`, `.pgpass - Copy`, `Copy of .env`, `.env (1)`,
# `secrets copy.yml`). Group "name" + "ext" is the original. Editors' backup and swap affixes (`.env~`,
# `.netrc.bak`, `#.env#`) are the packs' to read off (their rules' affix lists), not the engine's.
_COPY_NAME = re.compile(
    r"copy(?: \(\d+\))? of (?P<of>.+)"  # Windows XP's Explorer
    r"|(?P<name>.+?)(?:"
    r" - copy(?: \(\d+\))?"  # Windows' Explorer
    r"| copy(?: \d+)?"  # macOS's Finder
    r"| ?\((?:copy|another copy|\d+(?:st|nd|rd|th) copy|copy \d+|\d+)\)"  # GNOME's Files, browsers' downloads
    r")(?P<ext>\.[^./ ]+)?"
)
# The same over a whole path, one search: most paths hold no copy's name, and their names are not searched.
_COPY_ANYWHERE = re.compile(r"cop|\(")
MAX_COPY_ROUNDS = 3  # a copy of a copy (".env copy (1)", "Copy of .env - Copy"), bounded


def _original_name(part: str) -> str | None:
    """The name a copy was made from (see _COPY_NAME), or None when the name is no copy's."""
    match = _COPY_NAME.fullmatch(part) if "cop" in part or "(" in part else None
    if match is None:
        return None
    if match["of"] is not None:
        return match["of"]
    return str(match["name"]) + (match["ext"] or "")


def _copy_readings(root: Root, parts: tuple[str, ...]) -> list[Reading]:
    """The path with a copy's affixes read off each name in turn: a copy of a secret file (or folder) is one too."""
    found: list[Reading] = []
    for index, part in enumerate(parts):
        original, rounds = part, 0
        while rounds < MAX_COPY_ROUNDS and (name := _original_name(original)) and name not in (".", ".."):
            original, rounds = name, rounds + 1
            found.append((root, (*parts[:index], original, *parts[index + 1 :])))
    return found


def _may_readings(readings: list[Reading], pattern: bool = False, copies: bool = False) -> list[Reading]:
    """Readings for a "may" test: each one, and each read from the system's other roots (see _ROOT_ALIASES).

    With `copies` (name globs: secret files), also each with a copy's affixes read off.
    """
    # A root-relative path written with "\\" ("\\rootfs\\etc") is also a POSIX path for a tool that turns "\\" into "/".
    readings = readings + [("/", parts[1:]) for root, parts in readings if _drive_unknown(root, parts)]
    extra = [
        alias
        for root, parts in readings
        if pattern
        or (len(root) == 3 and root != "c:/")
        or (
            root == "/"
            and parts
            and (
                parts[0] in _ALIAS_HEADS
                or parts[0] in _MOUNTS
                or len(parts[0]) == 1
                or (("root" in parts[0] or "fs" in parts[0]) and _ROOT_MOUNT_NAME.fullmatch(parts[0]) is not None)
            )
        )
        for alias in _alias_readings(root, parts, pattern)
    ]
    if copies and not pattern:
        extra += [
            copy
            for root, parts in readings + extra
            if _COPY_ANYWHERE.search("/".join(parts))
            for copy in _copy_readings(root, parts)
        ]
    return readings + extra if extra else readings


def _drive_unknown(root: Root, parts: tuple[str, ...]) -> bool:
    """A root-relative path written with "\\" ("?:/windows/x"): its components are known, its root is not."""
    return root == UNKNOWN and bool(parts) and parts[0] == "?:"


def _within(root: Root, parts: tuple[str, ...], dir_root: Root, dir_parts: tuple[str, ...]) -> bool:
    """Whether a known path is the directory or below it, component by component."""
    if dir_root != root or parts[: len(dir_parts)] != dir_parts:
        return False
    # "../x" is not inside "." nor "../../x" inside "..": the leading climbs must agree.
    return bool(root) or _climbs(parts) == _climbs(dir_parts)


def _may_within(root: Root, parts: tuple[str, ...], directories: Iterable[tuple[Root, tuple[str, ...]]]) -> bool:
    """Whether one reading may lie in one of the parsed directories."""
    if _drive_unknown(root, parts):
        # The root of some drive, or "/" for a tool that turns "\\" into "/" on POSIX: within any
        # rooted directory with the same components.
        return any(
            parts[: len(d_parts)] == d_parts
            if d_root == UNKNOWN
            else bool(d_root) and parts[1 : 1 + len(d_parts)] == d_parts
            for d_root, d_parts in directories
        )
    if root == UNKNOWN:
        return True
    return any(_within(root, parts, *directory) for directory in directories)


def path_within(path: str, dirs: str | Iterable[str]) -> bool:
    """Whether the path may be one of the directories or below one: a path of unknown place may be."""
    directories = [_parse_any(directory) for directory in _as_list(dirs)]
    if type(path) is PathPattern:
        return any(
            _pattern_may_within(root, parts, directories)
            for root, parts in _may_readings(_pattern_readings(path), pattern=True)
        )
    return any(_may_within(root, parts, directories) for root, parts in _may_readings(_readings(path)))


def path_surely_within(path: str, dirs: str | Iterable[str]) -> bool:
    """Whether the path is surely one of the directories or below one: a path of unknown place is not."""
    directories = [_parse_any(directory) for directory in _as_list(dirs)]
    if type(path) is PathPattern:
        # Every expansion is inside only when the components up to the directory's depth are literal.
        return all(
            root != UNKNOWN
            and not _too_large(parts)
            and any(_within(root, _literal_prefix(parts), *directory) for directory in directories)
            for root, parts in _pattern_readings(path)
        ) and _literally_within(path, _as_list(dirs))
    return all(
        root != UNKNOWN and any(_within(root, parts, *directory) for directory in directories)
        for root, parts in _readings(path)
    ) and _literally_within(path, _as_list(dirs))


def within_matcher(dirs: Iterable[str]) -> Callable[[str], bool]:
    """path_within with the directories parsed once (for rules whose directories are literals)."""
    parsed = [_parse_any(directory) for directory in dirs]
    # A known place is within a directory when the directory is one of its prefixes: a set lookup per
    # prefix (up to the deepest directory) instead of a scan of every directory (109 in bfcl's red line).
    known = frozenset(parsed)
    deepest = max((len(d_parts) for _, d_parts in parsed), default=0)

    def may_within(root: Root, parts: tuple[str, ...]) -> bool:
        if root == UNKNOWN:  # (a drive-unknown reading too): as _may_within reads it
            return _may_within(root, parts, parsed)
        return any(
            (root, parts[:k]) in known and (bool(root) or _climbs(parts) == _climbs(parts[:k]))
            for k in range(min(len(parts), deepest) + 1)
        )

    def within(path: str) -> bool:
        if type(path) is PathPattern:
            return any(
                _pattern_may_within(root, parts, parsed)
                for root, parts in _may_readings(_pattern_readings(path), pattern=True)
            )
        return any(may_within(root, parts) for root, parts in _may_readings(_readings(path)))

    return within


def _known_tail(parts: tuple[str, ...]) -> tuple[str, ...] | None:
    """The components after the last one whose name is unknown; None when the last is unknown.

    Unknown names: a leading home ("~root") or climb (".."), a device or share prefix, an
    expansion ("$x", "%x%"), an 8.3 short name. What follows them is spelled out.
    """
    last = -1
    for index, part in enumerate(parts):
        # The first component of an unknown path may be its device, share or drive prefix.
        if (index == 0 and (part.startswith("//") or part == "?:")) or _unknown_name(part, index == 0, True):
            last = index
    return parts[last + 1 :] if last + 1 < len(parts) else None


def _known_names(parts: tuple[str, ...]) -> tuple[str, ...]:
    """The components whose names are known, in order: one reading of a path whose unknowns are "." or empty.

    An expansion may be "." (or nothing), so the names before it may stay in the path: `.env/$x/y`
    may be `.env/y`. An 8.3 name or a device prefix never climbs, so what precedes it stays too.
    """
    return tuple(
        part
        for index, part in enumerate(parts)
        if not ((index == 0 and (part.startswith("//") or part == "?:")) or _unknown_name(part, index == 0, True))
    )


@lru_cache(maxsize=CACHE_SIZE)
def _straddles(pattern: str) -> bool:
    """Whether a glob could match across an unknown component: anchored, or more than one component."""
    root, parts = _parse(pattern, classify=False)
    return bool(root) or len(parts) != 1 or parts[0] == "**"


def _may_match(root: Root, parts: tuple[str, ...], regex: Any, straddles: bool) -> bool:
    """Whether one reading may match a compiled path glob (or alternation)."""
    if _drive_unknown(root, parts):
        # Tested as if on the system drive, and as a POSIX path (a tool may turn "\\" into "/").
        return any(regex.fullmatch(_join(r, parts[1:])) is not None for r in ("/", "c:/"))
    if root != UNKNOWN:
        return regex.fullmatch(_join(root, parts)) is not None
    # An unknown name may be anything, so a glob that could span it may match; a one-component
    # glob (".env", "*.pem") is tested on the names that follow it, unless the last is unknown,
    # and on every known name (the unknowns read as "."): `.env/$x/y` may be `.env/y`.
    tail = _known_tail(parts)
    return (
        straddles
        or tail is None
        or regex.fullmatch("/".join(tail)) is not None
        or regex.fullmatch("/".join(_known_names(parts))) is not None
    )


_SEEN_PATTERNS = 1024


def globs_matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    """path_matches with every glob compiled into one RE2 alternation (one match per call)."""
    patterns = list(patterns)
    regex = re2.compile("|".join(f"(?:{_path_glob_to_regex(p)})" for p in patterns), _RE2_OPTIONS)
    straddles = any(_straddles(p) for p in patterns)
    automata: list[tuple[Automaton, bool]] = []
    # A pattern subject's answer, kept: searching the automata's product costs ~0.2-5 ms, and one
    # call's glob meets the same rule's globs again in the next calls (the spelling test of
    # calls-git-b asked 144 distinct subjects 1,820 times: 9.5 s of its 13.9). A PathPattern is
    # its text, so the text is the key; dropped whole when full.
    seen: dict[str, bool] = {}

    def matches(path: str) -> bool:
        if type(path) is PathPattern:
            found = seen.get(path)
            if found is None:
                if not automata:  # built on the first pattern subject: plain paths never need them
                    automata.extend((_name_rule_automaton(p), _straddles(p)) for p in patterns)
                rules = automata + _spelled_rules(path, patterns)
                found = any(
                    _pattern_may_match(root, parts, rules)
                    for root, parts in _may_readings(_pattern_readings(path), pattern=True)
                )
                if len(seen) >= _SEEN_PATTERNS:
                    seen.clear()
                seen[str(path)] = found
            return found
        return any(
            _may_match(root, parts, regex, straddles) for root, parts in _may_readings(_readings(path), copies=True)
        )

    return matches


def _climbs(parts: tuple[str, ...]) -> int:
    """Count the leading ".." components of a resolved relative path."""
    count = 0
    while count < len(parts) and parts[count] == "..":
        count += 1
    return count


def path_escapes(path: str) -> bool:
    """Whether the path leaves a workspace: absolute, climbing above its start, or of unknown place."""
    # "~/x", "$HOME/x", "%USERPROFILE%/x" and "../x" parse with the root UNKNOWN.
    if type(path) is PathPattern:
        return any(root for root, _parts in _pattern_readings(path, strip_nul=False))
    return bool(_parse_subject(path)[0])


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
    return _glob_regex(*_parse(pattern, classify=False))


@lru_cache(maxsize=CACHE_SIZE)
def _compiled_literal_glob(pattern: str, windows: bool) -> re2._Regexp | None:
    """A path glob read literally in one shape (nothing folded; NTFS upper case on drives), for literal readings."""
    reading = _literal_parse(pattern, windows if windows or not _WINDOWS_ABSOLUTE.match(pattern) else None)
    if reading is None:
        return None
    try:
        return re2.compile(_glob_regex(*reading), _RE2_OPTIONS)
    except re2.error as err:
        raise PathPatternError(f"invalid path pattern {pattern!r}: {err}") from None


def _glob_regex(root: Root, parts: tuple[str, ...]) -> str:
    """The RE2 pattern of a parsed path glob."""
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
    """Whether the path may match any gitignore-like glob: a path of unknown place may.

    For a PathPattern: whether some expansion may match (the two globs' languages meet).
    """
    if type(path) is PathPattern:
        listed = _as_list(patterns)
        rules = [(_name_rule_automaton(p), _straddles(p)) for p in listed] + _spelled_rules(path, listed)
        return any(
            _pattern_may_match(root, parts, rules)
            for root, parts in _may_readings(_pattern_readings(path), pattern=True)
        )
    compiled = [(_compiled_path_glob(p), _straddles(p)) for p in _as_list(patterns)]
    return any(
        _may_match(root, parts, regex, straddles)
        for root, parts in _may_readings(_readings(path), copies=True)
        for regex, straddles in compiled
    )


def path_surely_matches(path: str, patterns: str | Iterable[str]) -> bool:
    """Whether the path surely matches any gitignore-like glob: a path of unknown place does not."""
    compiled = [_compiled_path_glob(pattern) for pattern in _as_list(patterns)]
    if type(path) is PathPattern:
        # Only a pattern that names one path (its brackets hold one character each) surely matches.
        # So does one whose last name is literal when a floating one-name glob takes that name
        # (`**/.env.example` is surely a `.env.example`, wherever its folders are).
        names_only = [_compiled_path_glob(p) for p in _as_list(patterns) if _floating_name(p)]
        literal = [(root, _literal_prefix(parts), parts) for root, parts in _pattern_readings(path)]
        return all(
            not _too_large(parts)
            and (
                (
                    root != UNKNOWN
                    and len(names) == len(parts)
                    and any(regex.fullmatch(_join(root, names)) is not None for regex in compiled)
                )
                or (
                    # A climb above a relative path's start leaves its place unknown, as for a plain path.
                    root != UNKNOWN
                    and bool(parts)
                    and _component_literal(parts[-1]) not in (None, "..", "**")
                    and any(regex.fullmatch(_component_literal(parts[-1]) or "") is not None for regex in names_only)
                )
            )
            for root, names, parts in literal
        ) and _literally_matches(path, _as_list(patterns))
    return all(
        root != UNKNOWN and any(regex.fullmatch(_join(root, parts)) is not None for regex in compiled)
        for root, parts in _readings(path)
    ) and _literally_matches(path, _as_list(patterns))


def _literally_matches(path: str, patterns: list[str]) -> bool:
    """Whether the literal reading of the path (a pattern's: as written) surely matches a glob read literally."""
    reading = _literal_reading(path)
    if reading is None:
        return False
    root, parts = reading
    windows = len(root) == 3
    names = _literal_prefix(parts) if type(path) is PathPattern else parts
    globs = [(pattern, _compiled_literal_glob(pattern, windows)) for pattern in patterns]
    if len(names) == len(parts):
        text = _join(root, names)
        if any(regex is not None and regex.fullmatch(text) is not None for _pattern, regex in globs):
            return True
    if type(path) is not PathPattern or not parts:
        return False
    # A pattern whose last name is literal, taken by a floating one-name glob (as in the folded test above).
    last = _component_literal(parts[-1])
    return last not in (None, "..", "**") and any(
        regex is not None and _floating_name(pattern) and regex.fullmatch(last or "") is not None
        for pattern, regex in globs
    )


def _floating_name(pattern: str) -> bool:
    """Whether a glob is one relative name (`.env.example`, `*.md`): it matches any path with such a name."""
    root, parts = _parse(pattern, classify=False)
    return not root and len(parts) == 1 and parts[0] != "**"


# -- path patterns -----------------------------------------------------------------------------


class PathPattern(str):
    """A glob path: `*`, `?`, `[...]` select names (never `/`); `[*]` `[?]` `[[]` `[$]` `[~]` are literal characters."""

    __slots__ = ()


# Past these a pattern subject is not searched: it may match and may lie anywhere, and is surely nothing.
MAX_PATTERN_LENGTH = 1024
MAX_PATTERN_WILDCARDS = 16

_METACHARACTERS = re.compile(r"[*?\[]")


def escape_pattern(text: str) -> PathPattern:
    """A PathPattern naming exactly the literal text: `*`, `?` and `[` become `[*]`, `[?]` and `[[]`."""
    return PathPattern(_METACHARACTERS.sub(lambda match: f"[{match.group()}]", text))


def _as_pattern(text: str) -> str:
    """A normalised pattern's text as a PathPattern, or a plain str once no metacharacter is left."""
    return PathPattern(text) if _METACHARACTERS.search(text) else text


# A character set: (complemented, sorted inclusive code point ranges). Both sides of a match use it.
Charset = tuple[bool, tuple[tuple[int, int], ...]]
_ANY: Charset = (True, ())
_NOT_SLASH: Charset = (True, ((0x2F, 0x2F),))
_NOT_DOT_OR_SLASH: Charset = (True, ((0x2E, 0x2F),))


def _without_dot(charset: Charset) -> Charset:
    """The set less ".": what a bracket expression may match at the start of a name."""
    negated, ranges = charset
    if negated:
        return True, _merged_ranges([*ranges, (0x2E, 0x2E)])
    kept: list[tuple[int, int]] = []
    for low, high in ranges:
        if low <= 0x2E <= high:
            kept.extend(r for r in ((low, 0x2D), (0x2F, high)) if r[0] <= r[1])
        else:
            kept.append((low, high))
    return False, tuple(kept)


def _merged_ranges(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Sorted ranges with overlapping and adjacent ones joined."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


def _literal(ch: str) -> Charset:
    """The set of one character."""
    return (False, ((ord(ch), ord(ch)),))


def _covered(low: int, high: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    """Whether sorted ranges cover every code point from low to high."""
    for first, last in ranges:
        if first > low:
            return False
        low = max(low, last + 1)
        if low > high:
            return True
    return False


def _meets(a: Charset, b: Charset) -> bool:
    """Whether two character sets share a character."""
    negated_a, ranges_a = a
    negated_b, ranges_b = b
    if not negated_a and not negated_b and len(ranges_a) == 1 and len(ranges_b) == 1:
        # Two literals or single ranges, the common case in a search: one comparison.
        return ranges_a[0][0] <= ranges_b[0][1] and ranges_b[0][0] <= ranges_a[0][1]
    if negated_a and negated_b:
        return True  # two complements of finite sets always do
    if negated_a:
        a, b = b, a
    if not b[0]:
        return any(low <= other_high and other_low <= high for low, high in a[1] for other_low, other_high in b[1])
    return any(not _covered(low, high, b[1]) for low, high in a[1])


def _class_charset(text: str, start: int, end: int, subject: bool) -> Charset:
    """The set a bracket expression text[start:end + 1] matches within a component, as _translate_class reads it."""
    i = start + 1
    negate = text[i] in "!^"
    body = text[i + negate : end]
    ranges: list[tuple[int, int]] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            low, high = body[k], body[k + 2]
            if low > high and not subject:
                raise PathPatternError(f"glob range {low}-{high} is reversed in {text!r}")
            ranges.extend(_subject_range(low, high) if subject else [(ord(low), ord(high))])
            k += 3
        else:
            ranges.append((ord(body[k]), ord(body[k])))
            k += 1
    if negate:
        # In a path, a complemented class still never matches the separator.
        ranges.append((0x2F, 0x2F))
    return (negate, _merged_ranges(ranges))


def _subject_range(low: str, high: str) -> list[tuple[int, int]]:
    """A subject's range, widened for the case folding it went through: `[a-z]` may have been `[A-z]`."""
    first = min(ord(v) for v in (low, low.upper(), low.lower()) if len(v) == 1)
    last = max(ord(v) for v in (high, high.upper(), high.lower()) if len(v) == 1)
    if first > last:
        return []  # a reversed range matches nothing, as in bash
    widened = [(first, last)]
    if first <= ord("Z") and last >= ord("A"):
        # Names are matched casefolded, so an upper-case member stands for its lower-case letter.
        widened.append((max(first, ord("A")) + 32, min(last, ord("Z")) + 32))
    if last > 0x7F:
        widened.append((0x80, 0x10FFFF))  # non-ASCII case mappings are not worth precision here
    return widened


def _simplify_classes(text: str) -> str:
    """A subject's bracket expressions with POSIX classes (`[[:alpha:]]`) or a ":" become `?` (any one character)."""
    if "[" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] != "[":
            out.append(text[i])
            i += 1
            continue
        j = i + 1
        if j < len(text) and text[j] in "!^":
            j += 1
        if j < len(text) and text[j] == "]":
            j += 1
        odd = False
        while j < len(text) and text[j] not in "]/\\":
            if text[j] == "[" and text[j + 1 : j + 2] in (":", "=", "."):
                close = text.find(text[j + 1] + "]", j + 2)
                if close >= 0:
                    odd, j = True, close + 2
                    continue
            odd = odd or text[j] == ":"
            j += 1
        if odd and j < len(text) and text[j] == "]":
            out.append("?")  # over-matching: a class of unknown members may be any character
            i = j + 1
        else:
            out.append("[")
            i += 1
    return "".join(out)


# While built: state -> [(charset or None for an epsilon move, next state)]; the last state accepts.
Edges = list[list[tuple[Charset | None, int]]]
# Built: each state's character moves and whether it accepts, both over its epsilon closure.
Automaton = tuple[tuple[tuple[tuple[Charset, int], ...], ...], tuple[bool, ...]]


class _Builder:
    """Builds a token automaton the way _path_glob_to_regex writes its regex, piece by piece."""

    __slots__ = ("edges", "state")

    def __init__(self) -> None:
        self.edges: Edges = [[]]
        self.state = 0

    def _new(self) -> int:
        self.edges.append([])
        return len(self.edges) - 1

    def char(self, charset: Charset) -> None:
        """One character of the set."""
        target = self._new()
        self.edges[self.state].append((charset, target))
        self.state = target

    def text(self, text: str) -> None:
        """Literal text."""
        for ch in text:
            self.char(_literal(ch))

    def star(self, charset: Charset) -> None:
        """Any run of characters of the set (a fresh state, so its loop joins nothing before it)."""
        loop = self._new()
        self.edges[self.state].append((None, loop))
        self.edges[loop].append((charset, loop))
        self.state = loop

    def any_prefix(self) -> None:
        """`(?:.*/)?`: nothing, or any text ending in "/"."""
        loop, after = self._new(), self._new()
        self.edges[self.state].append((None, after))
        self.edges[self.state].append((None, loop))
        self.edges[loop].append((_ANY, loop))
        self.edges[loop].append((_literal("/"), after))
        self.state = after

    def any_suffix(self) -> None:
        """`(?:/.*)?`: nothing, or "/" and any text."""
        loop, after = self._new(), self._new()
        self.edges[self.state].append((None, after))
        self.edges[self.state].append((_literal("/"), loop))
        self.edges[loop].append((_ANY, loop))
        self.edges[loop].append((None, after))
        self.state = after

    def component(self, part: str, subject: bool) -> None:
        """One component's glob, as _translate_glob reads it in path mode.

        In a subject (a shell word, a tool's glob) no wildcard matches a name's leading dot, as in bash
        without dotglob, Python's glob and ripgrep: `*.md` never names `.env.md`, `[.]env` never `.env`.
        """
        i = 0
        while i < len(part):
            ch = part[i]
            leading = subject and i == 0
            if ch == "*":
                while i < len(part) and part[i] == "*":
                    i += 1
                if leading:
                    # Empty, it would put what follows first: `*.env` never names ".env".
                    self.visible_name(empty=i < len(part) and part[i] != ".")
                else:
                    self.star(_NOT_SLASH)
                continue
            if ch == "?":
                self.char(_NOT_DOT_OR_SLASH if leading else _NOT_SLASH)
            elif ch == "[" and (end := class_end(part, i)) >= 0:
                charset = _class_charset(part, i, end, subject)
                self.char(_without_dot(charset) if leading else charset)
                i = end + 1
                continue
            else:
                self.char(_literal(ch))
            i += 1

    def visible_name(self, empty: bool) -> None:
        """A leading `*`: a run that does not start with a dot, or (when allowed) nothing."""
        inside, after = self._new(), self._new()
        if empty:
            self.edges[self.state].append((None, after))
        self.edges[self.state].append((_NOT_DOT_OR_SLASH, inside))
        self.edges[inside].append((_NOT_SLASH, inside))
        self.edges[inside].append((None, after))
        self.state = after

    def visible_components(self, leading_sep: bool, trailing_sep: bool) -> None:
        """A subject's whole-component `**`: no components, or names that do not start with a dot (bash's globstar)."""
        start, inside, begin, after = self.state, self._new(), self._new(), self._new()
        self.edges[start].append((None, after))
        if leading_sep:
            self.edges[start].append((_literal("/"), begin))
        else:
            self.edges[start].append((None, begin))
        self.edges[begin].append((_NOT_DOT_OR_SLASH, inside))
        self.edges[inside].append((_NOT_SLASH, inside))
        self.edges[inside].append((_literal("/"), begin))
        self.edges[inside].append((_literal("/"), after) if trailing_sep else (None, after))
        self.state = after

    def components(self, parts: tuple[str, ...], subject: bool) -> bool:
        """The components joined by "/" (a whole-component "**" spans any number); whether one is still open."""
        need_sep = False
        for index, part in enumerate(parts):
            if part == "**" and subject:
                last = index == len(parts) - 1
                if need_sep and not last:
                    self.char(_literal("/"))
                self.visible_components(leading_sep=need_sep and last, trailing_sep=not last)
                need_sep = False
                continue
            if part == "**":
                if index == len(parts) - 1:
                    if need_sep:
                        self.any_suffix()
                    else:
                        self.star(_ANY)
                else:
                    if need_sep:
                        self.char(_literal("/"))
                    self.any_prefix()
                need_sep = False
                continue
            if need_sep:
                self.char(_literal("/"))
            self.component(part, subject)
            need_sep = True
        return need_sep

    def done(self) -> Automaton:
        """The automaton with epsilon moves folded in: the search then meets only character moves."""
        edges, final = self.edges, self.state
        moves: list[tuple[tuple[Charset, int], ...]] = []
        accepts: list[bool] = []
        for state in range(len(edges)):
            closure, stack = {state}, [state]
            while stack:
                for charset, target in edges[stack.pop()]:
                    if charset is None and target not in closure:
                        closure.add(target)
                        stack.append(target)
            moves.append(
                tuple(
                    (charset, target)
                    for member in sorted(closure)
                    for charset, target in edges[member]
                    if charset is not None
                )
            )
            accepts.append(final in closure)
        return tuple(moves), tuple(accepts)


@lru_cache(maxsize=CACHE_SIZE)
def _rule_automaton(pattern: str) -> Automaton:
    """A rule's path glob as a token automaton, piece for piece what _path_glob_to_regex compiles."""
    root, parts = _parse(pattern, classify=False)
    builder = _Builder()
    if root:
        builder.text(root)
        if not parts:
            builder.star(_ANY)
    elif not parts:
        builder.star(_ANY)
    else:
        builder.any_prefix()  # a relative pattern floats
    if parts and builder.components(parts, subject=False):
        builder.any_suffix()  # a match on a directory covers everything below it
    return builder.done()


@lru_cache(maxsize=CACHE_SIZE)
def _name_rule_automaton(pattern: str) -> Automaton:
    """A rule's glob as a pattern subject meets it: a last name with a wildcard names files, not folders.

    `*.pem` covers what lies below a folder named `x.pem` for a path that spells the folder out, but
    a pattern's wildcards would otherwise meet it in every folder they pass (`src/**/*.ts` "may" be
    `src/x.pem/a.ts`, `*/notes.md` "may" be `k.key/notes.md`), and every Glob call and `cat src/*/x`
    would be a secret read. A pattern meets such a rule only with the name it ends in; a literal
    folder name (`certs.pem/*`) is still matched, as a plain path would be. Deliberate (docs/functions.md).
    """
    root, parts = _parse(pattern, classify=False)
    if not parts or parts[-1] == "**" or (not _is_pattern(parts[-1]) and parts[-1].startswith(".")):
        # A hidden name (`.ssh`) is never produced by a wildcard, so below it stays covered (`.*/config`).
        return _rule_automaton(pattern)
    builder = _Builder()
    if root:
        builder.text(root)
    else:
        builder.any_prefix()
    last = parts[-1]
    if len(last) > 1 and last.endswith("*") and not last.endswith("**"):
        # `id_rsa*` names a key and its variants (id_rsa_work, id_rsa2), not a further extension:
        # `*.md` is not `id_rsa.md`. A pattern that spells the name (`id_r*`, `*rsa`, `id_rsa.b*`) meets it.
        if builder.components((*parts[:-1], last[:-1]), subject=False) and last[:-1]:
            builder.star(_NOT_DOT_OR_SLASH)
        return builder.done()
    builder.components(parts, subject=False)
    return builder.done()


def _spelled_rules(subject: str, patterns: Iterable[str]) -> list[tuple[Automaton, bool]]:
    """Whole rules the subject spells itself: `id_rsa*` by a name starting `id_rsa`, `secrets` by a folder `secrets`."""
    # "\\" separates names as in the subject's readings (`a\\b\\x` names a folder `b` as `a/b/x` does).
    components = _WINDOWS_SEPARATORS.split(subject.casefold())
    name = components[-1]
    head = _name_head(name)
    starred = "*" in name
    found: list[tuple[Automaton, bool]] = []
    for pattern in patterns:
        last = pattern.rsplit("/", 1)[-1].casefold()
        prefix = last[: min((last.find(c) for c in "*?[" if c in last), default=len(last))]
        if (prefix and last.endswith("*") and _head_may_spell(head, starred, prefix)) or (
            prefix == last and last in components  # a folder the subject names itself: `secrets/*.txt`
        ):
            found.append((_rule_automaton(pattern), _straddles(pattern)))
    return found


MIN_SPELLED_HEAD = 2  # characters a name's head must spell before a `*` to stand for a rule's name


def _name_head(name: str) -> tuple[Charset, ...]:
    """The sets of a subject name's characters before its first `*`: each `?` or `[..]` one character of a set.

    A name spells a rule's literal prefix when each of these characters may be the prefix's: `[k]ubeconfig.yaml`
    and `k?beconfig.yaml` spell `kubeconfig` as surely as `kubeconfig.yaml` does (the shell opens that file),
    so a bracket or `?` never hides a name from `kubeconfig*`. A leading wildcard never stands for a dot.
    """
    sets: list[Charset] = []
    i = 0
    while i < len(name) and name[i] != "*":
        ch = name[i]
        if ch == "?":
            charset = _NOT_SLASH
        elif ch == "[" and (end := class_end(name, i)) >= 0:
            try:
                charset = _class_charset(name, i, end, subject=True)
            except PathPatternError:  # pragma: no cover - a subject's reversed range is empty, never raised
                charset = _ANY
            sets.append(_without_dot(charset) if i == 0 else charset)
            i = end + 1
            continue
        else:
            charset = _literal(ch)
        sets.append(_without_dot(charset) if i == 0 and ch == "?" else charset)
        i += 1
    return tuple(sets)


def _head_may_spell(head: tuple[Charset, ...], starred: bool, prefix: str) -> bool:
    """Whether the name's head (see _name_head) may spell the prefix, character for character.

    A head cut short by a `*` (`ku*.yaml`, `i?_r*.pub`) may spell the rest of the prefix with that `*`:
    the shell opens `kubeconfig.yaml`. A head shorter than MIN_SPELLED_HEAD (`*.md`, `[a-c]*.md`) spells no
    name in particular and is left to the name's own reading (see _name_rule_automaton), or every glob
    would be a secret read.
    """
    if len(head) < min(len(prefix), MIN_SPELLED_HEAD) or (len(head) < len(prefix) and not starred):
        return False
    return all(_meets(charset, _literal(ch)) for charset, ch in zip(head, prefix, strict=False))


def _too_large(parts: tuple[str, ...]) -> bool:
    """Whether a pattern is past the bounds of a search (then it may match anything and surely matches nothing)."""
    text = "/".join(parts)
    return len(text) > MAX_PATTERN_LENGTH or text.count("*") + text.count("?") + text.count("[") > MAX_PATTERN_WILDCARDS


def _subject_automaton(root: Root, parts: tuple[str, ...]) -> Automaton | None:
    """A pattern subject's rendered path as a token automaton; None past the size bounds."""
    if _too_large(parts):
        return None
    builder = _Builder()
    builder.text(root)
    if parts:
        builder.components(parts, subject=True)
    elif not root:
        builder.text(".")
    return builder.done()


def _intersect(left: Automaton, right: Automaton) -> bool:
    """Whether some string is accepted by both automata: a search of the product, each pair of states once."""
    left_moves, left_accepts = left
    right_moves, right_accepts = right
    seen = {(0, 0)}
    stack = [(0, 0)]
    while stack:
        p, q = stack.pop()
        if left_accepts[p] and right_accepts[q]:
            return True
        right_q = right_moves[q]
        for a, p_next in left_moves[p]:
            for b, q_next in right_q:
                pair = (p_next, q_next)
                if pair not in seen and (a is b or _meets(a, b)):
                    seen.add(pair)
                    stack.append(pair)
    return False


def _text_automaton(text: str, below: bool) -> Automaton:
    """Literal text, with `below` also anything under it."""
    builder = _Builder()
    builder.text(text)
    if below:
        builder.any_suffix()
    return builder.done()


def _is_pattern(part: str) -> bool:
    """Whether a component holds a wildcard or a bracket expression."""
    return "*" in part or "?" in part or ("[" in part and "]" in part)


def _component_literal(part: str) -> str | None:
    """The one name a component can match (`[e]nv` is "env"), or None when it is a pattern."""
    if not _is_pattern(part):
        return part
    out: list[str] = []
    i = 0
    while i < len(part):
        if part[i] in "*?":
            return None
        end = class_end(part, i) if part[i] == "[" else -1
        if end < 0:
            out.append(part[i])
            i += 1
            continue
        negate, ranges = _class_charset(part, i, end, subject=True)
        if negate or len(ranges) != 1 or ranges[0][0] != ranges[0][1]:
            return None
        if i == 0 and ranges[0][0] == 0x2E:
            return None  # `[.]env` matches no name (a leading dot must be literal): bash passes it on as written
        out.append(chr(ranges[0][0]))
        i = end + 1
    return "".join(out)


_DOT_NAMES = {name: _text_automaton(name, False) for name in (".", "..")}

# Past this many components that may be "." or "..", their readings are not spelled out (3 each).
MAX_DOT_COMPONENTS = 3

Reading = tuple[Root, tuple[str, ...]]


def _dot_names(part: str) -> tuple[str, ...]:
    """Which of "." and ".." a pattern component may expand to."""
    # No shell's `*` or `?` matches the leading dot of "." or "..", with or without dotglob.
    if not _is_pattern(part) or part[0] in "*?":
        return ()
    builder = _Builder()
    builder.component(part, subject=True)
    automaton = builder.done()
    return tuple(name for name, dots in _DOT_NAMES.items() if _intersect(automaton, dots))


# The device and object prefixes "\\\\?\\" and "\\??\\" spelled with wildcards.
_DEVICE_GLOB = re.compile(r"[/\\](?:[/\\]\?|\?\?)(?=[/\\])")
_STAND_IN = "\ue000"  # a private-use character: no normalisation step changes it
# A first component with a wildcard, ending in ":": it may be a drive letter.
_PATTERN_DRIVE = re.compile(r"[^/\\:]*[*?\[][^/\\:]*:(?=[/\\]|$)")


def _parse_pattern(path: str) -> tuple[Reading, ...]:
    """_parse for a PathPattern: the reading as written first, then those where a component is "." or ".."."""
    if len(path) > MAX_PATH_LENGTH:
        raise PathPatternError(f"path of {len(path):,} characters is longer than {MAX_PATH_LENGTH:,}")
    text = _simplify_classes(_decode(path))
    if any(_STAND_IN <= ch <= chr(_STAND_INS + MAX_DOT_COMPONENTS) for ch in text if not ch.isascii()):
        # The stand-ins below would be confused with the path's own characters: refuse (fail closed).
        raise PathPatternError("path pattern holds private-use characters U+E000-U+E003")
    wildcards = ""
    if device := _DEVICE_GLOB.match(text):
        # As a glob, "/??/x" is a two-letter directory and "//?/x" a one-letter one: parsed with a
        # stand-in name, so _parse does not read the device spelling (that reading is added apart).
        wildcards = device.group().lstrip("/\\")
        text = "/" + _STAND_IN * len(wildcards) + text[device.end() :]
    elif drive := _PATTERN_DRIVE.match(text):
        text = "?:" + text[drive.end() :]  # "[cd]:\\x", "*:/x": the root of some drive
    names_back = {_STAND_IN * len(wildcards): wildcards} if wildcards else {}
    raw = re.split(r"[/\\]", text)
    if "**" in raw and ".." in raw[raw.index("**") :]:
        # "**" may be no component at all, so the ".." after it may climb above what precedes it.
        root, parts = _parse(text)
        parts = tuple(names_back.get(part, part) for part in parts)
        return ((UNKNOWN, ("..", *parts)),) if root != UNKNOWN else ((root, parts),)
    # Components that may expand to "." or "..": each is read as a name (a stand-in, so that _parse
    # resolves around it), as "." and as "..".
    dots: dict[str, tuple[str, ...]] = {}

    def stand_in(match: re.Match[str]) -> str:
        names = _dot_names(_clean_component(match.group()))
        if not names or len(dots) >= MAX_DOT_COMPONENTS:
            if names:
                dots[""] = ()  # past the bound: marked, see below
            return match.group()
        key = chr(_STAND_INS + len(dots))
        dots[key] = (match.group(), *names)
        return key

    text = _DOT_CANDIDATE.sub(stand_in, text)
    names_back.update((key, options[0]) for key, options in dots.items() if key)
    readings: list[Reading] = []
    keys = [key for key in dots if key]
    for choice in itertools.product(*(dots[key] for key in keys)):
        reading = text
        for key, name in zip(keys, choice, strict=True):
            reading = reading.replace(key, name if name in (".", "..") else key)
        root, parts = _parse(reading)
        readings.append((root, tuple(names_back.get(part, part) for part in parts)))
    if "" in dots:
        # "$*" is a last name of unknown place: the pattern may match and lie anywhere, and surely nowhere.
        root, parts = readings[0]
        readings.append((UNKNOWN, ((root[:-1],) if root and root != UNKNOWN else ()) + (*parts, "$*")))
    return tuple(dict.fromkeys(readings))


# A component holding a dot and a wildcard or bracket: it may be "." or "..".
_DOT_CANDIDATE = re.compile(r"[^/\\]*[.\[][^/\\]*")
_STAND_INS = 0xE001  # private-use characters, one per component read three ways


_parse_pattern_cached = lru_cache(maxsize=256)(_parse_pattern)


def _pattern_readings(path: str, strip_nul: bool = True) -> list[Reading]:
    """_readings for a PathPattern (its own cache: a pattern and the equal str parse differently)."""
    texts = nul_readings(path) if strip_nul else (path,)
    readings = [
        parsed
        for text in texts
        for parsed in (_parse_pattern_cached(text) if len(text) <= _CACHEABLE_LENGTH else _parse_pattern(text))
    ]
    if _DEVICE_GLOB.match(path.lstrip()):
        # When nothing matches, bash passes the pattern as written, and Windows reads "\\?\\" as a device prefix.
        readings += [_parse_subject(str(text)) for text in texts]
    return readings


def _pattern_may_match(root: Root, parts: tuple[str, ...], rules: Sequence[tuple[Automaton, bool]]) -> bool:
    """_may_match for a pattern reading: whether its expansions and one of the globs share a path."""
    if _drive_unknown(root, parts):
        readings = [("/", parts[1:]), ("c:/", parts[1:])]
    elif root != UNKNOWN:
        readings = [(root, parts)]
    else:
        tail = _known_tail(parts)
        if tail is None or all(part == "**" for part in tail):
            return True  # the last name is the unknown one (a "**" after it may be no name at all)
        known = _known_names(parts)
        readings = [("", tail)] if known == tail else [("", tail), ("", known)]
        if any(straddles for _automaton, straddles in rules):
            return True
    subjects = [_subject_automaton(r, p) for r, p in readings]
    if any(subject is None for subject in subjects):
        return True  # too large to search: it may match
    return any(_intersect(subject, rule) for subject in subjects if subject for rule, _straddles in rules)


def _may_start_with(parts: tuple[str, ...], dir_parts: tuple[str, ...]) -> bool:
    """Whether some expansion of pattern components is the directory's components or below them."""
    if not dir_parts:
        return True
    if not parts:
        return False
    subject = _subject_automaton("", parts)
    return subject is None or _intersect(subject, _text_automaton("/".join(dir_parts), below=True))


def _pattern_may_within(
    root: Root, parts: tuple[str, ...], directories: Iterable[tuple[Root, tuple[str, ...]]]
) -> bool:
    """_may_within for a pattern reading."""
    if _drive_unknown(root, parts):
        return any(
            _may_start_with(parts, d_parts)
            if d_root == UNKNOWN
            else bool(d_root) and _may_start_with(parts[1:], d_parts)
            for d_root, d_parts in directories
        )
    if root == UNKNOWN:
        return True
    # A known pattern place holds no "..", so a relative directory must not climb either.
    return any(
        d_root == root and (bool(root) or not _climbs(d_parts)) and _may_start_with(parts, d_parts)
        for d_root, d_parts in directories
    )


def _literal_prefix(parts: tuple[str, ...]) -> tuple[str, ...]:
    """The names of the leading components that can match one name only."""
    names: list[str] = []
    for part in parts:
        name = _component_literal(part)
        if name is None:
            break
        names.append(name)
    return tuple(names)


def resolve_path(path: str, cwd: str | None) -> str:
    """The normalised path, relative ones (and climbs) resolved against the working directory.

    A PathPattern stays one while a wildcard or bracket is left in it (the directory's own are escaped).
    """
    if type(path) is PathPattern:
        return _resolve_pattern(path, cwd)
    root, parts = _parse_subject(path)
    climbs = root == UNKNOWN and bool(parts) and parts[0] == ".."
    if cwd is None or not (root == "" or climbs):
        folded = _join(root, parts)
    else:
        folded = _join(*_parse(_join(*_parse_subject(cwd)) + "/" + "/".join(parts)))
    return _carry(folded, _literal_resolve(path, cwd))


# -- literal readings --------------------------------------------------------------------------
#
# Normalisation folds every spelling a lenient system may open as the same file (case, NFKC, invisible
# characters, percent escapes, trailing dots and spaces, NTFS streams, "\\" as a separator): right for deny
# rules, which must catch every reading. An allow must hold for every reading too, and Linux folds none of
# these: "/home/dev/Project", "/home/dev/project." and "/home/dev/other\\..\\project" are siblings of the
# project there. So the "surely" tests also check the literal reading: on a POSIX path the bytes as written
# ("/" the only separator, "." and ".." resolved); on a drive path what NTFS opens ("\\" and "/" separate,
# letters compared by their one-character upper case, nothing else folded). A literal reading that names no
# place (a share, a device, a root- or drive-relative path) is surely nowhere.


class FoldedPath(str):
    """A normalised path that remembers its literal reading (see above): the "surely" tests check both."""

    literal: str | None  # the literal reading rendered; None when it names no place

    def __new__(cls, text: str = "", literal: str | None = None) -> FoldedPath:
        # Defaults, because library code builds "another of the same type" as type(text)() (re2's sub does).
        self = super().__new__(cls, text)
        object.__setattr__(self, "literal", literal)
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a FoldedPath is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a FoldedPath is immutable")

    def __reduce__(self) -> tuple[type[FoldedPath], tuple[str, str | None]]:
        return FoldedPath, (str(self), self.literal)


_WINDOWS_ABSOLUTE = re.compile(r"[a-zA-Z]:(?:[/\\]|$)")
_WINDOWS_SEPARATORS = re.compile(r"[/\\]")


def _ntfs_upper(text: str) -> str:
    """Letters as NTFS compares them: each by its one-character upper case (U+0131 is "I"; "\u00df" stays)."""
    if text.isascii():
        return text.upper()
    return "".join(up if len(up := ch.upper()) == 1 else ch for ch in text)


def _literal_parse(text: str, windows: bool | None = None) -> Reading | None:
    """The literal reading of a path (see above); `windows` forces the shape of a relative one."""
    text = _cut_at_nul(text)
    if windows is None:
        windows = _WINDOWS_ABSOLUTE.match(text) is not None
        if not windows and (text[:1] == "\\" or text[:2] == "//" or text[1:2] == ":"):
            return None  # a share, a device, root- or drive-relative: no literal place
    root: Root = ""
    if windows:
        if _WINDOWS_ABSOLUTE.match(text):
            root, text = text[0].upper() + ":/", text[2:]
        names = _WINDOWS_SEPARATORS.split(_ntfs_upper(text))
    else:
        if text[:1] == "/":
            root = "/"
        names = text.split("/")
    parts: list[str] = []
    for name in names:
        if name in ("", "."):
            continue
        if name == "..":
            _climb(parts, root)
            continue
        parts.append(name)
    return root, tuple(parts)


_literal_parse_dir = lru_cache(maxsize=CACHE_SIZE)(_literal_parse)


def _literal_resolve(path: str, cwd: str | None) -> Reading | None:
    """The literal reading of a path resolved against the working directory (None: no literal place)."""
    written = path.literal if type(path) is FoldedPath else path
    if written is None:
        return None
    reading = _literal_parse(written)
    if reading is None or reading[0] or cwd is None:
        return reading
    # The cwd is the same for every path of a call (and of a session): its reading is cached.
    base = _literal_parse_dir(cwd.literal if type(cwd) is FoldedPath and cwd.literal is not None else str(cwd))
    if base is None:
        return None
    windows = len(base[0]) == 3
    return _literal_parse(_join(*base) + "/" + written, windows)


def _carry(folded: str, literal: Reading | None) -> str:
    """The folded path, as a FoldedPath when its own literal reading is not the one it was folded from."""
    if literal is not None and _literal_parse(folded) == literal:
        return folded
    return FoldedPath(folded, None if literal is None else _join(*literal))


def _literal_reading(path: str) -> Reading | None:
    """The literal reading a "surely" test checks: a FoldedPath's remembered one, else the text's own."""
    if type(path) is FoldedPath:
        return None if path.literal is None else _literal_parse(path.literal)
    return _literal_parse(path)


def _same_shape(literal: Reading, folded: Reading) -> bool:
    """Whether folding changed names only, never the path's shape (its root, separators and climbs).

    Between the literal and the folded reading lie readings that fold some things and not others: a tool
    that percent-decodes on a case-sensitive system opens "%2fhome%2fdev%2fProject%2fx" (one name in the
    project, literally) as the sibling "/home/dev/Project/x". When folding moved a separator, a climb or the
    root, some such reading is elsewhere; when it only renamed components one for one, every reading has the
    literal one's shape and lies where the literal and the folded readings both lie.
    """
    root, parts = literal
    folded_root, folded_parts = folded
    if root.lower() != folded_root or len(parts) != len(folded_parts):
        return False
    try:
        return all(
            _clean_component(_decode(name)) == name_folded
            for name, name_folded in zip(parts, folded_parts, strict=True)
        )
    except PathPatternError:
        return False


def _literally_within(path: str, dirs: Iterable[str]) -> bool:
    """Whether the literal reading of the path is one of the directories (read literally) or below one."""
    reading = _literal_reading(path)
    if reading is None:
        return False
    root, parts = reading
    pattern = type(path) is PathPattern
    if not _same_shape(reading, _pattern_readings(path)[0] if pattern else _parse_subject(path)):
        return False
    if pattern:
        parts = _literal_prefix(parts)  # as written: every expansion is inside only through literal names
    for directory in dirs:
        place = _literal_parse_dir(directory)
        if place is not None and _within(root, parts, *place):
            return True
    return False


def _resolve_pattern(path: PathPattern, cwd: str | None) -> str:
    """resolve_path for a PathPattern."""
    root, parts = _pattern_readings(path)[0]
    if cwd is not None and (root == "" or (root == UNKNOWN and parts[:1] == ("..",))):
        # Where resolve_path resolves a plain path: relative, or climbing above its start.
        base = escape_pattern(_join(*_parse_subject(cwd)))
        root, parts = _parse_pattern(PathPattern(base + "/" + _join(root, parts)))[0]
    return _as_pattern(_join(root, parts))
