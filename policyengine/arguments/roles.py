"""Argument roles: which values of a call are paths, URLs, commands, e-mail addresses or amounts.

A red line is only as strong as its weakest spelling, and the first spelling is the argument's
name: `path`, `file_path`, `Dest`, `options.target`. Rules therefore never list argument names;
they ask for every value of a role, anywhere in the arguments (`paths(@)`, `commands(@)`).

Where a role comes from, in order:
1. The tool's declared roles (`role: path` in the Cerberus dialect, `x-policy-role: path` or a
   `format` in a JSON Schema spec), carried by the call document under `roles` as
   {lower-cased key: role}. A declared role adds to what the name gives (a key `path` declared
   `url` is both): a declaration can widen what a red line sees, never narrow it. The one
   opt-out is `role: text`, a trusted catalog's word that a key is plain content: no role (the
   MCP proxy drops it from an upstream's specs, which are not trusted to make that claim).
2. Otherwise the key's name (case-insensitive, split at `_`, `-`, `.` and camelCase) by the
   table below, and the value's shape: a string that looks like a path (`/x`, `~/x`, `../x`,
   `C:\\x`, `\\\\host\\x`, `file:...`, `$HOME/x`, `%APPDATA%\\x`) or a URL (`scheme://...`) counts
   as one under any key that is not declared or named as plain content.
Lists take the role of their key; objects give their own keys. Over-inclusion only makes a red
line stricter; a missed value is a bypass, so the tables err toward inclusion.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from policyengine.arguments import _sql_files, embedded_places, paths

__all__ = ["Collected", "Role", "collect_all", "key_roles", "resolve", "role_named", "tokens"]

# Argument documents are frozen at most 100 levels deep; walking stops (and raises) past this.
MAX_DEPTH = 128


class Role(enum.Enum):
    """What an argument value is, for rules that must find it under any name."""

    PATH = "path"
    URL = "url"
    COMMAND = "command"
    EMAIL = "email"
    AMOUNT = "amount"
    SECRET = "secret"
    GLOB = "glob"  # a glob of the files a tool reads or lists (`Glob`'s pattern, Grep's glob): a path pattern
    TEXT = "text"  # declared plain content: no role, never a path by shape

    # Enum's own __hash__ is Python code (hash of the name); a call's role walk hashes roles ~12
    # times. Members are singletons compared by identity, so identity's C hash is the same
    # contract: a bfcl decision 29.8-33.0 -> 27.9-29.3 us (best of five, five process pairs).
    __hash__ = object.__hash__


# The roles as module constants: `Role.PATH` is an Enum class attribute lookup (~70 ns in 3.11),
# and a call's walk asks a dozen of them per value.
_R_PATH, _R_URL, _R_COMMAND, _R_TEXT = Role.PATH, Role.URL, Role.COMMAND, Role.TEXT
_EMAIL_ROLE, _AMOUNT_ROLE, _SECRET_ROLE, _GLOB_ROLE = Role.EMAIL, Role.AMOUNT, Role.SECRET, Role.GLOB


def role_named(name: str) -> Role | None:
    """The role a spec names (`path`, `url`, ...), or None for an unknown name."""
    try:
        return Role(name)
    except ValueError:
        return None


# Key-name tokens, by role. A key counts when one of its tokens is listed (`file_path`,
# `targetDir`, `output-file`); its last token being a content word (`file_content`,
# `path_description`) makes it plain content instead.
_TOKENS: dict[Role, frozenset[str]] = {
    Role.PATH: frozenset(
        [
            "path",
            "paths",
            "pathname",
            "file",
            "files",
            "filename",
            "filenames",
            "filepath",
            "filepaths",
            "dir",
            "dirs",
            "dirname",
            "directory",
            "directories",
            "folder",
            "folders",
            "src",
            "source",
            "sources",
            "dest",
            "destination",
            "destinations",
            "dst",
            "target",
            "targets",
            "cwd",
            "workdir",
            "wd",
            "root",
            "location",
            "mount",
            "mountpoint",
            "volume",
            "attachment",
            "attachments",
        ]
    ),
    Role.URL: frozenset(
        ["url", "urls", "uri", "uris", "link", "links", "href", "endpoint", "webhook", "callback", "redirect"]
    ),
    Role.COMMAND: frozenset(
        [
            "command",
            "commands",
            "cmd",
            "cmds",
            "cmdline",
            "shell",
            "script",
            "scripts",
            "bash",
            "sh",
            "powershell",
            "pwsh",
            "exec",
        ]
    ),
    Role.EMAIL: frozenset(["email", "emails"]),
    # A tool's file glob (list_files {glob}); a key ending in `pattern` stays plain content.
    Role.GLOB: frozenset(["glob", "globs"]),
    Role.AMOUNT: frozenset(["amount", "amounts", "price", "prices", "total", "quantity", "qty", "sum", "cost", "fee"]),
}
# Whole keys (tokens joined) that give a role although their words alone are too common.
_WHOLE: dict[Role, frozenset[str]] = {
    Role.EMAIL: frozenset(["to", "cc", "bcc", "from", "recipient", "recipients", "sender", "replyto", "mailto"]),
    # Commands under the names real tools give them: code interpreters' `code`, tmux send-keys'
    # `keys`, CI steps' `run`, spawn's `program` and `executable`. (`line` is left out: editors'
    # and language servers' tools carry a line number under it.)
    Role.COMMAND: frozenset(["code", "keys", "run", "program", "executable"]),
}
# Words that make a key plain content when they end it ("file_content", "search_pattern");
# "name", "id" or "title" do not ("file_name" names a file).
_CONTENT = frozenset(
    [
        "content",
        "contents",
        "text",
        "body",
        "message",
        "messages",
        "msg",
        "data",
        "pattern",
        "patterns",
        "regex",
        "query",
        "search",
        "description",
        "comment",
        "comments",
        "note",
        "notes",
        "summary",
        "prompt",
        "caption",
    ]
)
# Words that make a key a measure of something when they end it ("file_count", "dir_size",
# "path_exists"): its value is a number or a flag about a path, not a path.
_MEASURE = frozenset(
    [
        "count",
        "size",
        "length",
        "len",
        "depth",
        "limit",
        "max",
        "min",
        "num",
        "number",
        "index",
        "offset",
        "mode",
        "type",
        "format",
        "encoding",
        "exists",
        "recursive",
        "hidden",
        "ok",
        "enabled",
    ]
)
# Words that make a key a file filter wherever they stand, and a pattern key's words that say it
# selects files (file_pattern, name_pattern, path_glob).
_GLOB_WORDS = frozenset(
    {"glob", "globs", "wildcard", "wildcards", "pathspec", "pathspecs", "mask", "include", "includes"}
)
_PATTERN_WORDS = frozenset({"pattern", "patterns", "filter", "filters", "match", "matches"})
_FILE_WORDS = frozenset({"file", "files", "filename", "filenames", "name", "names", "path", "paths", "fname"})
# Round eleven (set I, filter-globs): a key that names a filter by a word of its own (filter,
# only, match, select, restrict) or the names it selects (name, filename, ext, suffix: find's
# -name) selects files when its value is a file glob (`*.tfstat?`, `.en?`, `*.en[v]`): one word
# of no space with a wildcard. A value with a space is a query; `exclude` is left out (it names
# what is not read).
_FILTER_WORDS = frozenset(
    {"filter", "filters", "only", "match", "matches", "select", "selector", "restrict", "name", "names", "filename"}
    | {"filenames", "fname", "ext", "exts", "extension", "extensions", "suffix", "suffixes"}
)
_FILE_GLOB_SHAPE = re.compile(r"\s{0,8}[^\s]{0,256}[*?\[][^\s]{0,256}\s{0,8}")  # blanks around: as opened
# Round fifteen (set M's one false positive): a filter or glob key naming a remote place (repo_filter,
# include_repos, host_mask, org_glob) and no file selects repositories or hosts, not files: its value
# is no file glob when it reads as a selector of them (`github.com/acme/*`, `acme/api-*`, `*`): no
# part that starts with a dot (`.env*` is read as a file glob still), not rooted, in the home or an
# expansion. A key naming a file, a path or a folder keeps its glob.
_REMOTE_WORDS = frozenset(
    {"repo", "repos", "repository", "repositories", "org", "orgs", "organization", "organizations"}
    | {"owner", "owners", "host", "hosts", "hostname", "hostnames", "domain", "domains", "url", "urls"}
    | {"uri", "uris", "site", "sites", "remote", "remotes", "registry", "registries", "server", "servers"}
)
_LOCAL_WORDS = frozenset(
    {"file", "files", "filename", "filenames", "fname", "path", "paths", "dir", "dirs", "directory"}
    | {"directories", "folder", "folders", "ext", "exts", "extension", "extensions", "suffix", "suffixes"}
)
# Plain ASCII only: a percent escape, a backslash or a full-width letter may decode to a dot or a separator.
_REMOTE_SELECTOR = re.compile(
    r"[A-Za-z0-9_*?\[\]{}@+=,!^:\-][A-Za-z0-9_*?\[\]{}@+=,!^:.\-]{0,255}"
    r"(?:/(?:[A-Za-z0-9_*?\[\]{}@+=,!^:\-][A-Za-z0-9_*?\[\]{}@+=,!^:.\-]{0,255})?){0,16}"
)


def _remote_tokens(tokens: list[str]) -> bool:
    """Whether a key's words name a remote place (a repository, an organisation, a host) and no file."""
    return not _REMOTE_WORDS.isdisjoint(tokens) and _LOCAL_WORDS.isdisjoint(tokens)


# Round eleven (set I, terminal-decoy-command): a key that chooses a shell (`shell: bash`,
# `interpreter: /bin/zsh`) names the program that reads the typed text, not a command run; a
# bare shell's name there is a name (anything more, `bash -c ...`, stays a command).
_SHELL_NAME_KEYS = frozenset({"shell", "interpreter", "shellname", "shelltype", "shellpath", "shellprogram"})
_SHELL_NAME = re.compile(
    r"(?i)\s*(?:[^\s]*[/\\])?(?:(?:ba|z|k|mk|c|tc|da|fi|a|y|r|o|i|x)?sh|pwsh|powershell|cmd|nu|xonsh|elvish)(?:\.exe)?\s*"
)
_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# A value that names a place, whatever its key: rooted, home, climbing, drive, UNC, file: URL,
# a leading expansion (an environment variable's name alone, $HOME, or any expansion before more of
# a path, $x/y; a lower-case word alone, $region, is a MongoDB field reference or template text,
# which nothing outside a command expands - round seven, set F's one false positive), a dotfile's
# name (with its suffixes too: `.env.production`, `.npmrc.bak`),
# or words joined by separators with no space ("etc/shadow").
_PATH_SHAPE = re.compile(
    r"(?is)^\s*(?:/|\\|~|\.\.?(?:[/\\]|$)|[a-z]:[/\\]|[a-z]:[^\s/\\:]+[/\\]|file:|\$\{?(?-i:[A-Z_][A-Z0-9_]*)\}?\s*$|\$\{?[a-z_][a-z0-9_]*\}?[^\sa-z0-9_]|%[a-z_][a-z0-9_]*%|\.[a-z0-9_-][a-z0-9_.-]*$"
    r"|[^\s/\\:]+(?:[/\\][^\s/\\]*)+$)"
)
# Only a value ending in a dot or a space, or holding a colon, opens as another name (checked first: runs per value).
_OPENED_DIFFERS = re.compile(r"[.\s]$|:")
_URL_SHAPE = re.compile(r"(?i)^\s*[a-z][a-z0-9+.-]*://")
# An object key that is a path by its start alone: rooted, home, climbing, a drive, UNC or an
# expansion (a key such as `application/json` or `a.b` stays a word).
_KEY_PLACE = re.compile(
    r"(?i)^\s*(?:/|\\|~|\.\.?(?:[/\\]|$)|[a-z]:[/\\]|\$\{?[A-Za-z_]|%[a-z_]+%|\.[a-z0-9_-]|[^\s/\\:]+[/\\][^\s/\\])"
)
_EMAIL_SHAPE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# A whole value that is one environment variable's reference: $NAME, ${NAME}, %NAME%.
_ENV_REFERENCE = re.compile(r"^\s*(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%)\s*$")


def _credential_key(key: str) -> bool:
    """True for a key named like a credential (the secret scanner's reading of key names)."""
    from policyengine.arguments.secret_scanner import is_credential_key  # (the scanner is heavy: imported on first use)

    return is_credential_key(key)


# Keys repeat call after call and a call's walk splits each several times (the argv, spawn and
# request-body checks): split once per key, bounded as _KEY_CACHE is (issue 22's CPU bound).
_TOKEN_CACHE: dict[str, tuple[str, ...]] = {}


def _tokens(key: str) -> list[str]:
    """The lower-cased words of a key: "filePath" -> [file, path], "DEST-dir" -> [dest, dir]."""
    found = _TOKEN_CACHE.get(key) if type(key) is str else None
    if found is None:
        found = tuple(t for t in _SPLIT.split(_CAMEL.sub("_", key).lower()) if t)
        if type(key) is str and len(_TOKEN_CACHE) < 4096:  # keys come from untrusted calls: bound the cache
            _TOKEN_CACHE[key] = found
    return list(found)


def tokens(key: str) -> list[str]:
    """The lower-cased words of a key (public: the path views read cwd-like keys by them)."""
    return _tokens(key)


_KEY_CACHE: dict[str, frozenset[Role]] = {}


def key_roles(key: str) -> frozenset[Role]:
    """The roles a key's name gives its values (empty for plain content and unknown names)."""
    found = _KEY_CACHE.get(key)
    if found is None:
        tokens = _tokens(key)
        whole = "".join(tokens)
        if (
            tokens
            and (
                any(t in _GLOB_WORDS for t in tokens)
                or (tokens[-1] in _PATTERN_WORDS and any(t in _FILE_WORDS for t in tokens))
            )
            and not _remote_tokens(tokens)  # include_repos, org_glob: a filter of remote places (_filter_key)
        ):
            # Round ten (set I, filter-globs): a file filter under a key no list named
            # (glob_pattern, file_name_pattern, include, mask, wildcard, pathspec) selects files.
            found = frozenset({Role.GLOB})
        elif not tokens or tokens[-1] in _CONTENT:
            found = frozenset({Role.TEXT})
        elif tokens[-1] in _MEASURE:
            found = frozenset({Role.AMOUNT}) if any(t in _TOKENS[Role.AMOUNT] for t in tokens) else frozenset()
        else:
            found = frozenset(
                role
                for role, words in _TOKENS.items()
                if any(t in words for t in tokens) or whole in words or whole in _WHOLE.get(role, ())
            )
        if len(_KEY_CACHE) < 4096:  # keys come from untrusted calls: bound the cache
            _KEY_CACHE[key] = found
    return found


# Fast path (issue 22's CPU bound): every shape _value_roles reads needs one of these characters
# (a separator, `~`, a dot, a colon, an expansion's `$` or `%`, an address' `@`), so a short ASCII
# value holding none has no shape and skips the decoding and the shape patterns. Differential test:
# tests/test_functions_fast_paths.py (over the corpora and generated strings).
_SHAPE_CHARS = re.compile(r"[/\\~.:$%@]")
_SHAPE_FAST_MAX = 256  # a long value is read the slow way: scanning all of it could cost more


def _value_roles(value: str) -> frozenset[Role]:
    """Roles a string's shape gives it under a key that names none (judged after decoding)."""
    if len(value) <= _SHAPE_FAST_MAX and value.isascii() and _SHAPE_CHARS.search(value) is None:
        return frozenset()
    if not value.isascii() or "%" in value:
        try:
            # Shapes are judged as the path functions will read the value: "%2fetc", "U+FF0Fetc" are rooted.
            value = paths.decode(value[:_SHAPE_PREFIX])
        except paths.PathPatternError:
            return frozenset({_R_PATH})  # encoded past any reading: the path functions fail closed on it
    roles = set(_url_roles(value))
    # A name is judged as it is opened too: a trailing dot or space, an NTFS stream (`.env::$DATA`) hide no shape.
    if not roles and (
        _PATH_SHAPE.match(value) or (_OPENED_DIFFERS.search(value) and _PATH_SHAPE.match(paths.as_opened(value)))
    ):
        roles.add(_R_PATH)
    if "@" in value and _EMAIL_SHAPE.match(value.strip()):
        roles.add(_EMAIL_ROLE)
    return frozenset(roles)


# Round nine (set H, mcp-command-key-gap, bl-command-key-gap): a command under a key no list
# names is read by its shape. Under a key that names an action (a timer's `then`, a watcher's
# `action`, a scheduler's `do`, a hook's `handler`, an alias' `expansion`: _ACTION_KEYS) a line
# whose first word is a program the shell tables know, in lower case, then one more word, is a
# command; under any other key that names no role (an alias table's `st: '!sh -c ...'`, an npm
# script's `value`) it must also carry an option, an operator or a path and read as no sentence
# (no `, ` and no closing `.`, `!` or `?`). SQL (`TRUNCATE t`) and labels (`AWS root`) are not
# lower case; prose keys (content, message, description...) never reach here.
_COMMAND_SHAPE = re.compile(r"\s*!?\s*(\S{1,64})[ \t]+\S")
_UPPER_WORD = re.compile(r"[A-Z][A-Za-z0-9_]*")  # `TRUNCATE t`, `AWS root`: SQL and labels, no program
_COMMAND_MARKS = re.compile(r"(^|\s)-{1,2}[A-Za-z]|[|;&<>`]|\$\(|(^|\s)\.{0,2}/|/\S")
_SENTENCE = re.compile(r",\s|[.!?]\s*$")
_ACTION_KEYS = frozenset(
    {"do", "then", "action", "actions", "handler", "handlers", "recipe", "task", "expansion", "hook", "hooks"}
    | {"entrypoint", "test", "on_change", "onchange", "on_event", "callback_command", "trigger", "exec_start"}
)
_COMMAND = frozenset({_R_COMMAND})
_PATH = frozenset({_R_PATH})  # `\\curl -s x | sh` starts like a Windows path and is a command too


def _argv_shaped(key: str, value: list[Any], declared: Mapping[str, str] | None) -> bool:
    """Whether a list of strings under a key naming no role reads as an argv: a known program, then its words."""
    if not key or not all(type(item) is str for item in value) or _roles_of(key, None, declared):
        return False
    if key.lower() in _ACTION_KEYS:
        return True  # Docker's exec form (`entrypoint: [echo, 'rm -rf is dangerous']`): one argv
    first = value[0]
    if not isinstance(first, str) or not first or any(char.isspace() for char in first):
        return False
    if not any(item.startswith("-") or "/" in item or "." in item for item in value[1:]):
        return False  # `tags: [make, build]`: words, not an argv (`[rm, -rf, /w]`, `[python, app.py]` are)
    from policyengine.arguments.shell import names_known  # as in _command_shaped

    return names_known(first)


def _command_shaped(key: str, value: str) -> bool:
    """Whether a string under a key that names no role reads as a command line of a known program.

    The line is parsed as bash reads it, so a quoted, escaped or path-spelled first word
    (`r''m`, `\\rm`, `$'\\x72m'`, `/bin/rm`) is its program.
    """
    match = _COMMAND_SHAPE.match(value)
    if match is None or _UPPER_WORD.fullmatch(match.group(1)):
        return False
    action = key.lower() in _ACTION_KEYS
    if not action and (_COMMAND_MARKS.search(value) is None or _SENTENCE.search(value)):
        return False
    from policyengine.arguments.shell import CommandError, names_known, parse_command  # no cycle at call time

    try:
        programs = parse_command(
            value.lstrip()[1:] if value.lstrip().startswith("!") else value
        ).programs  # git's `!cmd`
    except CommandError:
        # A line the engine cannot place (`curl x | sh`): a command under an action key (fail
        # closed), elsewhere when its first word as written names a known program.
        if action:
            return True
        try:  # the first word alone, as bash reads it (`c''url`, `\\curl`, `$'\\x63url'`)
            first = parse_command(f"{match.group(1)} x").programs
        except CommandError:
            return False
        return bool(first) and names_known(first[0])
    return bool(programs) and names_known(programs[0])


@lru_cache(maxsize=4096)
def _filter_key(key: str) -> bool:
    """Whether a key names a filter by a word of its own (`filter`, `only`, `match`, `file_select`)."""
    tokens = _tokens(key)
    return bool(key) and (
        any(t in _FILTER_WORDS for t in tokens)
        # A glob key naming a remote place (include_repos) filters too: its value's shape decides.
        or (_remote_tokens(tokens) and any(t in _GLOB_WORDS or t in _PATTERN_WORDS for t in tokens))
    )


@lru_cache(maxsize=4096)
def _remote_key(key: str) -> bool:
    """Whether a key names a remote place and no file (`repo_filter`, `include_repos`, `host_mask`)."""
    return _remote_tokens(_tokens(key))


def _file_glob(key: str, value: str) -> bool:
    """Whether a string under a filter key is a file glob: a glob's shape, unless it selects remote places."""
    return bool(_FILE_GLOB_SHAPE.fullmatch(value)) and not (_remote_key(key) and _REMOTE_SELECTOR.fullmatch(value))


@lru_cache(maxsize=4096)
def _shell_name_key(key: str) -> bool:
    """Whether a key chooses the shell that reads a terminal's text (`shell`, `shell_type`, `interpreter`)."""
    return "".join(_tokens(key)) in _SHELL_NAME_KEYS


_GLOB = frozenset({Role.GLOB})
_URL = frozenset({Role.URL})
_FILE_URL = frozenset({Role.URL, Role.PATH})


def _url_roles(value: str) -> frozenset[Role]:
    """A URL is a URL under any key, and a `file:` or SMB URL names a path too."""
    scheme = value.lstrip()[:5].lower()
    # "file:/etc/x" (one slash) is a file URL too; an SMB URL names a file on a share, as a UNC path does.
    if scheme == "file:" or (scheme.startswith(("smb:", "cifs:")) and _URL_SHAPE.match(value)):
        return _FILE_URL
    return _URL if _URL_SHAPE.match(value) else frozenset()


# How much of a long string decides its shape: a path's start is enough, and decoding megabytes
# of hostile text per call would cost more than it tells.
_SHAPE_PREFIX = 1024


def _roles_of(key: str, value: Any, declared: Mapping[str, str] | None) -> frozenset[Role]:
    """The roles of one value under one key: declared, else by name, else by its shape.

    A URL is a URL under any key, and a `file:` URL is a path too; a path's shape only counts
    under a key whose name gives no role (a command under `command` is not also a path).
    """
    named = declared.get(key.lower()) if declared else None
    roles: frozenset[Role]
    if named is not None:
        role = role_named(named)
        if role is None or role is _R_TEXT:
            return frozenset()
        # Added to what the name (or, naming none, the value's shape) gives: a declaration must
        # not hide a path under a key named `path`, nor a rooted value under a key declared `url`.
        by_name = key_roles(key) - {_R_TEXT}
        if not by_name and isinstance(value, str):
            by_name = _value_roles(value)
        roles = by_name | {role}
    else:
        roles = key_roles(key) if key else frozenset()
        if roles == _COMMAND and isinstance(value, str) and _SHELL_NAME.fullmatch(value) and _shell_name_key(key):
            return frozenset()  # `shell: bash` beside a terminal's typed text: the shell's name
        if (
            type(value) is str
            and _R_TEXT not in roles
            and _GLOB_ROLE not in roles
            and _filter_key(key)
            and _file_glob(key, value)
        ):
            return roles | _value_roles(value) | _GLOB  # `filter: *.tfstat?`, `file_select: .netr?`
        if not roles:
            if isinstance(value, str):
                if _ENV_REFERENCE.match(value) and _credential_key(key):
                    # Round eleven (set I): a credential's name holding an environment reference
                    # (`dd-application-key: ${DD_APP_KEY}`, `cle_api: ${PARTNER_KEY}`) passes the
                    # variable's value, not a file: no path (a key naming a path keeps its role).
                    return frozenset()
                shaped = _value_roles(value)
                if (not shaped or shaped == _PATH or key.lower() in _ACTION_KEYS) and _command_shaped(key, value):
                    return shaped | _COMMAND  # `do: /bin/rm -rf x` is a command and a path's shape
                return shaped
        elif _R_TEXT in roles:
            return frozenset()
        elif _EMAIL_ROLE in roles and len(roles) == 1 and isinstance(value, str):
            # `to` and `from` name an address in a mail tool and a place in a move (rename_file
            # {from, to: /usr/bin/x}): a value shaped like a path is one under them too.
            return roles | _value_roles(value)
        elif _R_URL in roles and isinstance(value, str) and not _URL_SHAPE.match(value):
            # Round ten (set I, url-keyed-paths): a value under a URL-named key (`uri`, `href`,
            # `endpoint`) with no scheme is no URL; a tool given `/etc/hosts` there opens a file.
            return roles | (_value_roles(value) & _PATH)
    return roles | _url_roles(value) if isinstance(value, str) else roles


_ROLES = tuple(Role)  # iterating an Enum class is slow; this runs once per call

# Roles whose value is read whole: an object or null under `amount` or `command` is not walked
# into but handed on, so a reader fails closed on it instead of finding nothing.
_WHOLE_VALUE = frozenset({Role.AMOUNT, _R_COMMAND})
# The roles a mentioned token may add: places (an address or an amount inside prose is no argument).
_PLACES = frozenset({_R_PATH, _R_URL})
# A title or a subject names what a change is about (`Fix parsing of --output=/etc/motd`): its
# mentions are prose, as a message's are (tests/adversarial/calls-l-places.yaml).
_LABEL_KEYS = frozenset({"title", "subject", "label", "heading", "headline", "name_text"})


class Collected(NamedTuple):
    """Every value of every role in one call's arguments, found in one walk."""

    values: dict[Role, list[Any]]
    argv: list[list[str]]  # lists of strings under a singular command key or args/argv: one argv each
    written: list[str]  # round fourteen: the files SQL in an argument writes by itself (also paths)


_EMPTY: frozenset[Role] = frozenset()


class _KeyFacts:
    """What a key's name alone says about the values under it, worked out once per key (undeclared keys).

    Issue 22's CPU bound: a call's walk asked each question of the key again per value (a bfcl
    decision spent ~40% of its time in collect_all); the answers depend on the name only.
    """

    __slots__ = (
        "action", "filter", "join", "json", "mentions", "place", "roles", "scalar", "shell", "sql", "text",
    )  # fmt: skip

    def __init__(self, key: str) -> None:
        roles = key_roles(key) if key else _EMPTY
        lower = key.lower()
        self.roles = roles
        # A value that is no string takes the key's roles, none under a key of plain content.
        self.scalar = _EMPTY if _R_TEXT in roles else roles
        self.text = _R_TEXT in roles and not _is_request_text(key)  # a writer's content: no places read in it
        self.json = _R_TEXT not in roles or _is_request_text(key)  # JSON text under it is read as arguments
        self.shell = roles == _COMMAND and _shell_name_key(key)
        self.filter = _R_TEXT not in roles and _GLOB_ROLE not in roles and _filter_key(key)
        self.action = lower in _ACTION_KEYS
        # Round twelve: no mentions read under content, a label or a command (the shell parser reads those).
        self.mentions = not (self.text or lower in _LABEL_KEYS or _R_COMMAND in roles)
        # Round fourteen: SQL that opens files is read under any key but a writer's content or a
        # label; a query tool names its SQL `query`, which is content to a search tool too.
        # A command's words are the shell parser's, which reads the SQL a client is given (a commit
        # message that quotes readfile('.env') names no file).
        self.sql = (
            lower not in _LABEL_KEYS
            and _R_COMMAND not in roles
            and (not self.text or any(t in _SQL_WORDS for t in _tokens(key)))
        )
        # As a child's name: a key spelled as a place is a path; a split field joins with its siblings.
        self.place = bool(_KEY_PLACE.match(key)) and _R_PATH in _value_roles(key)
        self.join = lower in embedded_places.JOIN_KEYS


_FACTS: dict[str, _KeyFacts] = {}


def _facts(key: str) -> _KeyFacts:
    """The facts of an undeclared key, kept (bounded, as _KEY_CACHE: keys come from untrusted calls)."""
    found = _FACTS.get(key)
    if found is None:
        found = _KeyFacts(key)
        if len(_FACTS) >= 4096:
            _FACTS.clear()
        _FACTS[key] = found
    return found


def _string_roles(facts: _KeyFacts, key: str, value: str) -> frozenset[Role]:
    """_roles_of(key, value, None) for a string, with the key's answers taken from its facts."""
    roles = facts.roles
    if facts.shell and _SHELL_NAME.fullmatch(value):
        return _EMPTY  # `shell: bash` beside a terminal's typed text: the shell's name
    if facts.filter and _file_glob(key, value):
        return roles | _value_roles(value) | _GLOB  # `filter: *.tfstat?`, `file_select: .netr?`
    if not roles:
        if _ENV_REFERENCE.match(value) and _credential_key(key):
            return _EMPTY  # a credential's name holding an environment reference (see _roles_of)
        shaped = _value_roles(value)
        if (not shaped or shaped == _PATH or facts.action) and _command_shaped(key, value):
            return shaped | _COMMAND
        return shaped
    if _R_TEXT in roles:
        return _EMPTY
    if _EMAIL_ROLE in roles and len(roles) == 1:
        return roles | _value_roles(value)
    if _R_URL in roles and not _URL_SHAPE.match(value):
        return roles | (_value_roles(value) & _PATH)
    return roles | _url_roles(value)


def collect_all(arguments: Any, declared: Mapping[str, str] | None = None, *, mentions: bool = True) -> Collected:
    """Every role's values, depth-first in document order; lists inherit their key, objects give their own.

    An object or null under a key whose role is read whole (amount, command) is that role's value
    and is not searched for it further; a list of strings under a singular command key is one
    argv, not several commands.
    """
    walker = _Walker(declared, mentions)
    walker.walk(arguments, "", _EMPTY, 0)
    return Collected(walker.values, walker.argv, walker.written)


class _Walker:
    """One call's walk (collect_all): an object, not closures (four closures cost ~1.6 us a call)."""

    __slots__ = ("argv", "declared", "mentions", "paths", "values", "written")

    def __init__(self, declared: Mapping[str, str] | None, mentions: bool) -> None:
        self.values: dict[Role, list[Any]] = {
            _R_PATH: [], _R_URL: [], _R_COMMAND: [], _EMAIL_ROLE: [],
            _AMOUNT_ROLE: [], _SECRET_ROLE: [], _GLOB_ROLE: [], _R_TEXT: [],
        }  # fmt: skip
        self.paths = self.values[_R_PATH]
        self.argv: list[list[str]] = []
        self.written: list[str] = []
        self.declared = declared
        self.mentions = mentions

    def walk(self, value: Any, key: str, skip: frozenset[Role], depth: int) -> None:
        """Every role's values under one value, appended in document order."""
        if depth > MAX_DEPTH:
            raise ValueError(f"arguments nested deeper than {MAX_DEPTH} levels")
        declared = self.declared
        if isinstance(value, dict):
            spawned = _spawn_argv(value) if _R_COMMAND not in skip else None
            if spawned is not None:
                self.argv.append(spawned[0])
            whole = (_roles_of(key, value, declared) & _WHOLE_VALUE) - skip if key else _EMPTY
            for role in whole:
                self.values[role].append(value)
            inner = skip | whole if whole else skip
            places = _R_PATH not in skip
            join = False
            for child_key, child in value.items():
                name = child_key if type(child_key) is str else str(child_key)
                facts = _FACTS.get(name) or _facts(name)
                join = join or (facts.join and isinstance(child_key, str))
                if spawned is not None and name == spawned[1]:
                    # The arguments are read once, after their program (not as an argv of their own).
                    self.walk(child, name, inner | _COMMAND, depth + 1)
                    continue
                # Round ten (set I, path-as-key): a map from file names to contents
                # (write_files {files: {"/etc/cron.d/job": "..."}}) names its files by key; a
                # key spelled as a place (rooted, home, climbing, drive, UNC, $VAR/...) is a path.
                if places and facts.place:
                    self.paths.append(name)
                self.walk(child, name, inner, depth + 1)
            if places and join and depth < MAX_DEPTH - 8:
                # Round eleven (set J, split fields): {dir, name, ext} and segment lists name the file they join to.
                self.paths.extend(embedded_places.joined_names(value))
        elif isinstance(value, list):
            if _R_COMMAND not in skip and value and all(type(v) is str for v in value) and _is_argv(key, declared):
                self.argv.append(list(value))
                skip = skip | _COMMAND
            elif _R_COMMAND not in skip and len(value) > 1 and _argv_shaped(key, value, declared):
                self.argv.append(list(value))  # round nine: `entrypoint: [rm, -rf, /w]` under a key naming no role
                skip = skip | _COMMAND
            for item in value:
                self.walk(item, key, skip, depth + 1)
        elif value is None:
            if key:
                for role in (_roles_of(key, None, declared) & _WHOLE_VALUE) - skip:
                    self.values[role].append(None)
        elif declared and key.lower() in declared:
            self._declared_leaf(value, key, skip, depth)
        elif type(value) is not str:
            found = (_FACTS.get(key) or _facts(key)).scalar
            for role in found - skip if skip else found:
                self.values[role].append(value)
        else:
            facts = _FACTS.get(key) or _facts(key)
            found = _string_roles(facts, key, value)
            if found:
                if skip:
                    found = found - skip
                for role in found:
                    self.values[role].append(value)
                if _R_COMMAND in found and _NOTEBOOK_SHELL.search(value):
                    self.values[_R_COMMAND].extend(_notebook_shell_lines(value))
            if not value:
                return
            if facts.json and value[0] in _JSON_FIRST:
                embedded = _json_text(value)
                if embedded is not None:
                    # A request body's JSON is read by its own keys and shapes, not as the body's content.
                    self.walk(embedded, "" if _R_TEXT in facts.roles else key, skip, depth + 1)
            if not facts.text and depth < MAX_DEPTH - 8 and _EMBED_HINT.search(value):
                self._embedded(value, key, found, skip, depth)
            if self.mentions and facts.mentions and _MENTION_HINT.search(value) and not skip >= _PLACES:
                self._mentioned(value, key, skip)
            if facts.sql and _R_PATH not in skip and _SQL_HINT(value):
                self._sql(value)

    def _declared_leaf(self, value: Any, key: str, skip: frozenset[Role], depth: int) -> None:
        """A value under a key the tool declares a role for: the declaration's reading (see _roles_of)."""
        declared = self.declared
        found = _roles_of(key, value, declared) - skip
        if found:
            for role in found:
                self.values[role].append(value)
            if _R_COMMAND in found and type(value) is str and _NOTEBOOK_SHELL.search(value):
                self.values[_R_COMMAND].extend(_notebook_shell_lines(value))
        if (
            type(value) is str
            and value
            and value[0] in _JSON_FIRST
            and (not _is_text(key, declared) or _is_request_text(key))
        ):
            embedded = _json_text(value)
            if embedded is not None:
                self.walk(embedded, "" if _is_text(key, declared) else key, skip, depth + 1)
        if type(value) is str and value and depth < MAX_DEPTH - 8 and _EMBED_HINT.search(value):
            self._embedded(value, key, found, skip, depth)
        if self.mentions and type(value) is str and _MENTION_HINT.search(value) and not skip >= _PLACES:
            self._mentioned(value, key, skip)
        if (
            type(value) is str
            and not _is_text(key, declared)
            and _R_COMMAND not in found
            and _R_PATH not in skip
            and _SQL_HINT(value)
        ):
            self._sql(value)

    def _sql(self, value: str) -> None:
        """Round fourteen (set M): the files SQL in a value opens or writes by itself (readfile, COPY ... TO)."""
        found = _sql_files.sql_files(value)
        for name in (*found.read, *found.written):
            if name not in self.paths:
                self.paths.append(name)
        self.written.extend(found.written)

    def _mentioned(self, value: str, key: str, skip: frozenset[Role]) -> None:
        """Round twelve: every place a value mentions anywhere in it, as an argument of its own (docs/functions.md)."""
        declared = self.declared
        if (_is_text(key, declared) and not _is_request_text(key)) or key.lower() in _LABEL_KEYS:
            return  # a file's content and a message's prose are what a writer writes, not what it opens
        named = declared.get(key.lower()) if declared else None
        if _R_COMMAND in key_roles(key) or (named is not None and role_named(named) is Role.COMMAND):
            return  # a command's words are the shell parser's (a line that is a command by its shape only
            # is read for mentions too: `source = "~/.ssh/id_rsa"` is a TOML line as well)
        dotfiles = _R_PATH in key_roles(key) or (named is not None and role_named(named) is Role.PATH)
        for token in embedded_places.mentioned_tokens(value, dotfiles):
            if token != value:
                for role in (_value_roles(token) & _PLACES) - skip:
                    if token not in self.values[role]:  # JSON or structured text already gave it: one reading each
                        self.values[role].append(token)

    def _embedded(self, value: str, key: str, found: frozenset[Role], skip: frozenset[Role], depth: int) -> None:
        """Round eleven (set J): the places structured text and option strings spell inside a value."""
        declared = self.declared
        if _R_COMMAND in found or (_is_text(key, declared) and not _is_request_text(key)):
            return  # a command's words are the shell parser's; a file's content is what a writer writes
        if _R_PATH not in skip and not (value.count(" ") > 2 and _SENTENCE.search(value)):  # a sentence is prose
            self.paths.extend(embedded_places.option_paths(value))
        if value[0] not in _JSON_FIRST or _json_text(value) is None:
            for tree in embedded_places.structured_text(value):
                self.walk(tree, "" if _is_text(key, declared) else key, skip, depth + 1)


# Code for a notebook kernel (jupyter_execute {code}) runs a line that starts with `!` in a shell
# (IPython's system escape, `!!` too), as do `%sx` and `%system` lines and the `%%bash`, `%%sh`,
# `%%script bash|sh|zsh` cell magics: each such line (or cell body) is a command of the call as
# well, so `!rm -rf build` runs rm. The text as given stays a command too.
_NOTEBOOK_SHELL = re.compile(r"(?m)^[ \t]*(!|%%?(sx|system|bash|sh|script)\b)")
_NOTEBOOK_LINE = re.compile(r"(?m)^[ \t]*(?:!!?|%(?:sx|system)\b)(.*)$")
_NOTEBOOK_CELL = re.compile(r"(?s)^[ \t]*%%(?:bash|sh|script[ \t]+\S*(?:bash|sh|zsh))\b[^\n]*\n(.*)$")


def _notebook_shell_lines(code: str) -> list[str]:
    """The shell commands a notebook cell runs: `!cmd`, `%sx cmd`, `%system cmd` lines and a shell cell magic's body."""
    cell = _NOTEBOOK_CELL.match(code)
    if cell:
        return [cell.group(1)]
    return [line.strip() for line in _NOTEBOOK_LINE.findall(code) if line.strip()]


# JSON text in a string argument (`{"spec": "{\"path\": \".env\"}"}`, an options blob, a list of
# files as text) is read by role like the arguments it spells: a tool may parse it and open what it
# names, so its keys and shapes count as the call's own. Only an object or array is read, up to
# _JSON_TEXT_MAX characters (past that it is left as a string: decoding megabytes per call costs
# more than it tells), and never under a key that is plain content (a file's `content` that is JSON
# is what a writer writes, not what it opens).
_JSON_OPEN = re.compile(r"\s*[\[{]")
# The first characters JSON text may start with (checked first: this runs per string value).
_JSON_FIRST = "{[ \t\r\n"
_JSON_TEXT_MAX = 65536
# Round eleven: a string with none of these characters spells no structure and no option's place
# (checked first: this runs per string value; 100,000 encoded paths stay one C scan each).
_EMBED_HINT = re.compile(r"[=:;,\s<@]")
# Round twelve: the mentioned places' prefilter, checked before anything else (one C scan per string).
_MENTION_HINT = embedded_places.MENTION_HINT
# Round fourteen (set M, sql-file-functions): SQL's file functions and clauses (one C scan per string),
# and the words of a content key that name SQL (a query tool's `query`, `sql_statement`).
_SQL_HINT = _sql_files.worth_reading
_SQL_WORDS = frozenset({"query", "queries", "sql", "statement", "statements", "stmt", "ddl", "dml"})


def _is_text(key: str, declared: Mapping[str, str] | None) -> bool:
    """Whether a key holds plain content, by declaration (`role: text`) or by its name's last word."""
    named = declared.get(key.lower()) if declared else None
    if named is not None:
        return role_named(named) is Role.TEXT
    return Role.TEXT in key_roles(key) if key else False


# Round ten (set I, json-under-text-key): a request's body (body, data, payload, params_text) is
# what a tool hands to a service that may open what it names; a file's content (content, text,
# new_string) stays what a writer writes and is not read as arguments.
_REQUEST_WORDS = frozenset({"body", "data", "payload", "request", "req", "params", "param", "json", "args", "rpc"})


def _is_request_text(key: str) -> bool:
    """Whether a plain-content key names a request's body, whose JSON text is read as arguments."""
    return any(t in _REQUEST_WORDS for t in _tokens(key))


def _json_text(value: str) -> Any:
    """The object or array a string spells as JSON text, or None when it spells none."""
    if len(value) > _JSON_TEXT_MAX or not value.rstrip().endswith(("}", "]")):
        return None
    try:
        embedded = json.loads(value)
    except (ValueError, RecursionError):
        return None
    return embedded if isinstance(embedded, (dict, list)) else None


# Command keys whose list is several commands (tmux send-keys' keys: one line each); under any other
# command key a list is one argv.
_PLURAL_COMMANDS = frozenset({"commands", "cmds", "scripts", "keys"})
# Keys whose list of strings is an argv although the key gives no role otherwise.
_ARGV = frozenset({"argv", "args"})


# Round ten (set I, argv-program-keys): a process tool names its program under a key of its own
# beside the argv (spawn {bin: rm, args: [-rf, data]}, {executable_name: rm, arguments: [...]}):
# the program and its arguments are one argv, whatever the program key is called.
_PROGRAM_WORDS = frozenset(
    {"bin", "binary", "exe", "executable", "program", "prog", "app", "tool", "utility", "process", "name", "cmd"}
    | {"command", "file", "path", "image"}
)
_ARGS_KEYS = frozenset({"args", "argv", "arguments", "arglist", "params", "parameters", "flags", "options"})


def _spawn_argv(value: Mapping[Any, Any]) -> tuple[list[str], str] | None:
    """The argv an object spells as a program key beside a list of string arguments, and the arguments' key."""
    args: list[str] | None = None
    args_key = ""
    for key, item in value.items():
        if isinstance(item, list) and item and all(type(v) is str for v in item):
            words = _tokens(str(key))
            if words and words[-1] in _ARGS_KEYS:
                args, args_key = item, str(key)
                break
    if args is None:
        return None
    for key, item in value.items():
        if type(item) is str and item.strip() and not any(c.isspace() for c in item.strip()):
            words = _tokens(str(key))
            if words and words[-1] in _PROGRAM_WORDS:
                return [item.strip(), *args], args_key
    return None


def _is_argv(key: str, declared: Mapping[str, str] | None) -> bool:
    """Whether a list of strings under this key is one argv (`command`, `args`), not several commands."""
    tokens = _tokens(key)
    if tokens and tokens[-1] in _ARGV:
        return True
    plural = bool(tokens) and tokens[-1] in _PLURAL_COMMANDS
    return not plural and Role.COMMAND in _roles_of(key, None, declared)


def resolve(path: str, cwd: str | None) -> list[str]:
    """The normalised place(s) a path argument may name, relative ones resolved against cwd (patterns stay patterns)."""
    # A NUL ends the path for a C API (normalisation cuts there); a tool that strips it instead
    # opens the rest, so both readings are tested.
    return [paths.resolve_path(reading, cwd) for reading in paths.nul_readings(path)]
