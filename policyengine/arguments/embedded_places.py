"""Places a string argument spells inside itself: structured text, option strings, split names.

Round eleven (set J). A tool may parse a string argument and open what it names: a playbook's
YAML (`copy: {dest: /etc/sudoers.d/x}`), a TOML or INI job (`[output] path = "/etc/x"`), an
MSBuild project's XML (`DestinationFolder="C:\\Windows\\System32"`), an option string
(`--output=/etc/motd`, `-C /etc/nginx`, `file=/var/log/syslog`, `out:/x`, `sqlite:////x`), or a
file named only by joining fields (`{dir, name, ext}`, `segments: [home, dev, .ssh, id_rsa]`).
Each reader here gives what such a string names, to be read by role as the call's own arguments:
over-inclusion only makes a red line stricter. Every reader is bounded (_TEXT_MAX characters,
_NODES_MAX nodes) and linear: YAML is read as its event stream, so an alias is never expanded.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from policyengine.arguments._scheme_places import URL_LEAD, url_places

__all__ = ["joined_names", "mentioned_tokens", "option_paths", "structured_text"]

_TEXT_MAX = 65536  # as roles' JSON text: past this a string is left as a string
_NODES_MAX = 4096  # YAML/XML nodes read from one string
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Structured text worth parsing: several lines, a YAML flow or block start, an INI/TOML section,
# an XML element, or a one-line `key: value` / `key = value`.
_STRUCTURED_HINT = re.compile(r"\n|^\s*(?:<[A-Za-z?!]|\[|-\s|[A-Za-z_][\w.-]*\s*[:=]\s*\S)")
_XML_START = re.compile(r"^\s*<[A-Za-z?!]")
_XML_ATTR = re.compile(r"([A-Za-z_][\w.:-]{0,63})\s*=\s*(?:\"([^\"<]{0,4096})\"|'([^'<]{0,4096})')")
_XML_ELEMENT_TEXT = re.compile(r"<([A-Za-z_][\w.:-]{0,63})(?:\s[^<>]{0,4096})?>([^<>]{1,4096})</\1\s*>")


def _yaml_tree(text: str) -> list[Any]:
    """The documents of YAML text built from its events (aliases read as empty, never expanded)."""
    documents: list[Any] = []
    stack: list[list[Any]] = []  # [container, pending mapping key]

    def add(item: Any) -> None:
        if not stack:
            documents.append(item)
            return
        frame = stack[-1]
        container = frame[0]
        if isinstance(container, list):
            container.append(item)
        elif frame[1] is None:
            frame[1] = item if isinstance(item, str) else ""
        else:
            key = frame[1]
            # A repeated key keeps every value: each is read (a later one does not hide an earlier one).
            if key in container:
                container[f"{key}\x00{len(container)}"] = item
            else:
                container[key] = item
            frame[1] = None

    for nodes, event in enumerate(yaml.parse(text, Loader=_LOADER)):
        if nodes >= _NODES_MAX:
            break
        if isinstance(event, yaml.MappingStartEvent):
            stack.append([{}, None])
        elif isinstance(event, yaml.SequenceStartEvent):
            stack.append([[], None])
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            add(stack.pop()[0])
        elif isinstance(event, yaml.ScalarEvent):
            add(event.value)
        elif isinstance(event, yaml.AliasEvent):
            add("")
    while stack:  # cut short: what was read so far still counts
        add(stack.pop()[0])
    return [d for d in documents if isinstance(d, (dict, list))]


def _ini_tree(text: str) -> dict[str, Any] | None:
    """An INI file's sections as {section: {key: value}} (no interpolation), or None."""
    parser = configparser.RawConfigParser(strict=False, allow_no_value=True, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys as written
    try:
        parser.read_string(text)
    except (configparser.Error, ValueError):
        return None
    tree = {section: dict(parser.items(section)) for section in parser.sections()}
    return tree or None


def _xml_pairs(text: str) -> list[dict[str, str]]:
    """An XML text's attributes and leaf elements' text as one-key objects (no parser, no entities)."""
    pairs: list[dict[str, str]] = []
    for match in _XML_ATTR.finditer(text):
        pairs.append({match.group(1): match.group(2) if match.group(2) is not None else match.group(3)})
        if len(pairs) >= _NODES_MAX:
            return pairs
    for match in _XML_ELEMENT_TEXT.finditer(text):
        if match.group(2).strip():
            pairs.append({match.group(1): match.group(2).strip()})
        if len(pairs) >= _NODES_MAX:
            break
    return pairs


# A `key: value`, `key = value` or `- key: value` line, read whatever the document's syntax: a
# document broken on purpose (a stray line, an encoded or full-width character a parser rejects)
# still names its places line by line.
_KEY_LINE = re.compile(
    r"(?m)^[ \t]*(?:-[ \t]+)?[\"']?([A-Za-z_][\w.-]{0,63})[\"']?[ \t]*[:=][ \t]*"
    r"(?:[\"']([^\"'\n]{1,4096})[\"']|([^\s\"'{\[#][^\n]{0,4095}))"
)


_FLOW_PAIR = re.compile(r"[{,][ \t]*[\"']?([A-Za-z_][\w.-]{0,63})[\"']?[ \t]*:[ \t]+[\"']?([^,{}\[\]\n\"']{1,4096})")


def _key_lines(text: str) -> list[dict[str, str]]:
    """Every `key: value` / `key = value` line of a text as a one-key object, quotes taken off."""
    pairs: list[dict[str, str]] = []
    for match in _KEY_LINE.finditer(text):
        item = match.group(2) if match.group(2) is not None else match.group(3).rstrip()
        pairs.append({match.group(1): item})
        if len(pairs) >= _NODES_MAX:
            return pairs
    for match in _FLOW_PAIR.finditer(text):  # a flow mapping's pairs (`{path: /etc}`)
        pairs.append({match.group(1): match.group(2).rstrip()})
        if len(pairs) >= _NODES_MAX:
            break
    return pairs


# A configuration file's `${NAME}` is its own interpolation of a variable (compose, Spring, a
# deploy template), never a file the text names: a whole value spelled so is read as no value.
_INTERPOLATION = re.compile(r"^\s*(?:\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\}|%[A-Za-z_][A-Za-z0-9_]*%)\s*$")


def _without_interpolations(tree: Any) -> Any:
    """`tree` with every string that is one variable interpolation as a whole replaced by None."""
    if isinstance(tree, dict):
        return {key: _without_interpolations(item) for key, item in tree.items()}
    if isinstance(tree, list):
        return [_without_interpolations(item) for item in tree]
    if isinstance(tree, str) and _INTERPOLATION.match(tree):
        return None
    return tree


def structured_text(value: str) -> list[Any]:
    """The objects and lists YAML, TOML, INI or XML text in a string spells, `${NAME}` values read as none."""
    trees = _structured_text(value)
    try:
        return [_without_interpolations(tree) for tree in trees]
    except RecursionError:
        return trees  # read as spelled: more places, never fewer


def _structured_text(value: str) -> list[Any]:
    """The objects and lists YAML, TOML, INI or XML text in a string spells (empty when it spells none)."""
    if len(value) > _TEXT_MAX or not _STRUCTURED_HINT.search(value):
        return []
    if _XML_START.match(value):
        pairs = _xml_pairs(value)
        return [pairs] if pairs else []
    lines: list[Any] = [pairs] if "\n" in value and (pairs := _key_lines(value)) else []
    found: list[Any] = []
    try:
        found = _yaml_tree(value)
    except (yaml.YAMLError, RecursionError, ValueError):
        found = []
    if found:
        return found + lines
    if "=" in value:
        try:
            return [tomllib.loads(value), *lines]
        except (tomllib.TOMLDecodeError, RecursionError, ValueError):
            pass
        ini = _ini_tree(value)
        if ini is None and "\n" in value and not value.lstrip().startswith("["):
            ini = _ini_tree("[_]\n" + value)  # a section-less properties/env file
        if ini is not None:
            return [ini, *lines]
    return lines


# A place inside an option string: after `--opt=`, `key=`, `key:` (not `://`), `-o `/`--opt `,
# or a separator (`;`, `,`), a rooted, home, drive or UNC path; a drive letter's colon (`C:\\x`)
# is no key. A URL-like `scheme:///x` (sqlite, file-ish DSNs) names the file /x too.
_OPTION_PLACE = re.compile(
    r"(?:(?:^|[\s;,&|/])-{1,2}[A-Za-z][\w.-]{0,63}[\s=]+|(?:^|[\s;,&|\"'(\[{])(?![A-Za-z]:[\\/])[A-Za-z_][\w.-]{0,63}\s*[=:](?!//)|(?<=[;,]))"
    r"[\"']?((?:/|\\|~/|~$|[A-Za-z]:[\\/]|(?i:%(?:25)*(?:2f|5c)|%c0%af|%c1%9c|%e0%80%af|%u2215|%uff0f))[^\s;,\"'|&<>]*)"
)
_DSN_FILE = re.compile(r"(?i)^\s*[a-z][a-z0-9+.-]{0,31}:///+([^\s?#]+)")
_VOLUME = re.compile(r"^\s*((?:/|~/)[^\s:]*):(?:/|~/|[A-Za-z])")


def option_paths(value: str) -> list[str]:
    """Paths an option string names inside it (`--output=/etc/motd`, `-C /etc/nginx`, `out:/x`, `sqlite:////x`)."""
    if len(value) > _TEXT_MAX:
        value = value[:_TEXT_MAX]
    found = [match.group(1) for match in _OPTION_PLACE.finditer(value)]
    dsn = _DSN_FILE.match(value)
    if dsn:
        found.append("/" + dsn.group(1).lstrip("/"))
    if URL_LEAD.match(value):
        # Round thirteen: a custom scheme's or a wrapper's local place (`fs://localhost/x`, `workspace://.env`).
        found.extend(place for place in url_places(value) if place not in found)
    volume = _VOLUME.match(value)
    if volume:
        found.append(volume.group(1))  # a volume spec `/etc:/host-etc` names its host side
    return [f for f in found if f.strip("/\\~")] if found else []


# Split names (cc-path-split-fields, bl-env-name-split): a folder, a name and an extension under
# separate keys, or a path's segments as a list, name the file they join to.
_DIR_KEYS = frozenset({"dir", "directory", "folder", "base", "basedir", "base_dir", "parent", "root", "location"})
_NAME_KEYS = frozenset({"name", "filename", "file_name", "stem", "basename", "base_name", "file"})
_EXT_KEYS = frozenset({"ext", "extension", "suffix", "filetype", "file_type", "file_ext", "format"})
# `format` names an extension only beside a folder (`{base, name, format}`); alone it is a report's format.
_WEAK_EXT_KEYS = frozenset({"format"})
# A segment list is rooted when its first segment is a root folder (`[home, dev, .ssh, id_rsa]`).
_ROOT_WORDS = frozenset({"home", "users", "root", "etc", "var", "usr", "opt", "library", "system", "private", "srv"})
_SEGMENT_KEYS = frozenset({"segments", "parts", "path_parts", "pathparts", "path_segments", "path_components"})


def _strings_under(value: Mapping[Any, Any], keys: frozenset[str]) -> Iterator[str]:
    for key, item in value.items():
        if isinstance(key, str) and key.lower() in keys and type(item) is str and item.strip():
            yield item.strip()


_JOIN_KEYS = _NAME_KEYS | _SEGMENT_KEYS
JOIN_KEYS = _JOIN_KEYS  # roles' walk: a key that joins with its siblings (its fast path)


def joined_names(value: Mapping[Any, Any]) -> list[str]:
    """The paths an object's split fields join to: dir/name.ext, name.ext, and its segments' join."""
    # Fast path (issue 22's CPU bound: every object of every call comes here): every joined path
    # starts from a name key or a segment list, so an object with neither joins to nothing.
    # tests/test_embedded_places.py compares with _joined_names over the corpus.
    if not any(isinstance(key, str) and key.lower() in _JOIN_KEYS for key in value):
        return []
    return _joined_names(value)


def _joined_names(value: Mapping[Any, Any]) -> list[str]:
    """joined_names without its fast path."""
    found: list[str] = []
    names = list(_strings_under(value, _NAME_KEYS))
    nested = [v for k, v in value.items() if isinstance(k, str) and k.lower() in _NAME_KEYS and isinstance(v, dict)]
    for inner in nested:
        found.extend(joined_names(inner))
    dirs = list(_strings_under(value, _DIR_KEYS))
    exts = list(_strings_under(value, _EXT_KEYS if dirs else _EXT_KEYS - _WEAK_EXT_KEYS))
    segments: list[str] = []
    for key, item in value.items():
        if isinstance(key, str) and key.lower() in _SEGMENT_KEYS and isinstance(item, list):
            parts = [p for p in item if type(p) is str]
            if parts and len(parts) == len(item) and len(parts) <= 64:
                segments.append("/".join(p.strip("/\\") if i else p.rstrip("/\\") for i, p in enumerate(parts)))
    stems = [f"{n}.{e.lstrip('.')}" for n in names[:4] for e in exts[:4]] if names and exts else []
    for stem in stems:
        found.append(stem)
        for folder in [*dirs[:4], *segments[:4]]:
            found.append(folder.rstrip("/\\") + "/" + stem)
    for seg in list(segments):
        head, _, last = seg.rpartition("/")
        if head.count("/") >= 2 and 0 < len(last) <= 40 and last[:1].isalnum() and "." not in last.rstrip(". "):
            segments.append(f"{head}.{last}")  # the last segment an extension (`[..., prod.auto, tfvars]`)
    for seg in segments:
        found.append(seg)
        if seg.split("/", 1)[0].lower() in _ROOT_WORDS:
            found.append("/" + seg)  # segments from the root (`[home, dev, .ssh, id_rsa]`)
        for name in names[:4]:
            found.append(seg + "/" + name)
        for stem in stems:
            found.append(seg + "/" + stem)
    if nested:
        for inner_path in joined_names_of_nested(nested):
            for folder in [*dirs[:4], *segments[:4]]:
                found.append(folder.rstrip("/\\") + "/" + inner_path)
    return list(dict.fromkeys(found))


def joined_names_of_nested(nested: list[Any]) -> list[str]:
    """The names nested name objects join to (`file: {name, ext}`), for their parent's folders."""
    return [name for inner in nested for name in joined_names(inner) if "/" not in name]


# Round twelve: mentioned places. Eleven rounds of red teams each found the next form that hides a
# place (YAML, option strings, SQL `COPY t FROM '/etc/shadow'`, HCL, a crontab line, a markdown
# link, `k=v;k2=/etc/x`, a sentence under `source`). Structure-agnostic: a string is cut into
# tokens at every character no path or URL spelling holds as the path functions read it, and each
# token shaped like a place (roles' whole-value shape test) is read as an argument of its own.
# A value holding no separator, `~`, expansion (`$HOME`, `${X}`, not `$5000`), encoding or `%NAME%`
# (not `50% off`) or leading-dot word mentions no place (one C scan: this runs per string).
MENTION_HINT = re.compile(r"[/\\~]|\$[{A-Za-z_]|%[0-9A-Za-z_]|(?:^|[^\w.])\.[\w-]")
# A token: a URL (`scheme://`, an IPv6 host in brackets, up to a character no URL in prose keeps:
# blanks, quotes, brackets, `,` `;` `|` `<` `>`), or a run of characters other than blanks, quotes,
# `=` `,` `;` `(` `)` `[` `]` `{` `}` `<` `>` `|` `&` `@` and backtick, where `${NAME}` stays one
# piece. Its colons are read by _colon_parts.
_TOKEN = re.compile(
    r"(?i)[a-z][a-z0-9+.-]{0,31}://(?:\[[0-9a-f:.%]{0,64}\])?[^\s\"'`<>|{}()\[\],;]*"
    r"|(?:\$\{[A-Za-z_][A-Za-z0-9_]*\}|[^\s\"'`=,;()\[\]{}<>|&@])+"
)
_SCHEME = re.compile(r"(?i)[a-z][a-z0-9+.-]{0,31}://")
# A token worth the shape test: a separator, `~`, an expansion, an encoding, or a leading dot.
_CANDIDATE = re.compile(r"[/\\~]|\$[{A-Za-z_]|%[0-9A-Za-z_]|^\.[\w-]")
# One environment variable alone (`$DB_PASSWORD`, `${GITHUB_TOKEN}`, `%APPDATA%`) inside a value
# is template text, not a place: only an expansion before more of a path (`$HOME/.ssh`) is read.
_ENV_ALONE = re.compile(r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%)$")
# Separators alone (`/>` closing an XML element, `a / b`), a bare `~` or `~` before a number
# (`~5 min`, `~Gr8v...` a password) in prose name no place as mentions (the whole value is still read by shape).
_NOISE = re.compile(r"^(?:[/\\]+|~[^/\\]*)$")
# A dotfile's bare name (`.env`, `.npmrc`), opened relative to the working folder: in a title or a
# commit's words (`fix: load .env lazily`) it is a file's name, not an argument (tests/adversarial).
_DOTFILE = re.compile(r"^\.[\w-][^/\\]*$")
# Past this many distinct candidates only strong ones are read: a start at a root, a home, a drive,
# an expansion, an encoding or a scheme, or a climb (`a/../../etc`): a relative word pair (`3/4`)
# names nothing outside the working folder, so padding with them hides nothing.
_MENTIONS_MAX = 256
_STRONG_MAX = 1024
_STRONG = re.compile(r"(?i)^(?:[/\\~$%]|[a-z]:|[a-z][a-z0-9+.-]*://)|\.\.")


def _colon_parts(token: str) -> list[str]:
    """The readings of a token's colons: a key's (`out:/x`), a host's (`host:/etc/x`), a drive's, a volume's.

    A colon splits (`out:/x` -> /x), except that one letter before a colon is a drive too
    (`C:\\x`, and `s:/etc/x` both as a drive path and as /etc/x), a URL's scheme keeps its
    colons (`cfg:http://h/x` -> http://h/x), and what follows a place is a volume's container side or
    its mode (`./site:/usr/share/nginx/html:ro`, `/etc:/host-etc` name their host side only); a
    bare IPv6 address splits into hex words, which spell nothing.
    """
    url = _SCHEME.search(token)
    head, tail = (token[: url.start()], token[url.start() :]) if url else (token, "")
    parts = head.split(":")
    found: list[str] = []
    after_place = False
    for index, part in enumerate(parts):
        if after_place:
            break
        following = parts[index + 1] if index + 1 < len(parts) else tail
        if len(part) == 1 and part.isalpha() and following and not following.startswith("//"):
            found.append(f"{part}:{following}")
        if part:
            found.append(part)
            after_place = _CANDIDATE.search(part) is not None
    if tail and not after_place:
        found.append(tail)
    return found


def mentioned_tokens(value: str, dotfiles: bool = True) -> list[str]:
    """The tokens of a string that may name a place (each to be judged by roles' shape test), distinct, in order.

    A token that is the whole value is left (the value is read whole by its key and shape); a
    dotfile's bare name (`.env`) counts only when `dotfiles` (under a key that names a path).
    """
    if len(value) > _TEXT_MAX:
        value = value[:_TEXT_MAX]
    if MENTION_HINT.search(value) is None:
        return []
    whole = value.strip()
    found: list[str] = []
    seen: set[str] = set()
    weak = strong = 0
    for match in _TOKEN.finditer(value):
        token = match.group()
        if _CANDIDATE.search(token) is None or (token == whole and "://" not in token):
            continue  # the whole value is read whole (`C:\\Users\\x.py` is no \\Users\\x.py); `cfg:http://h` is not
        pieces = _colon_parts(token) if ":" in token and not _SCHEME.match(token) else [token]
        if ":" in token and URL_LEAD.match(token):
            pieces += url_places(token)  # round thirteen: the local place behind a URL's scheme or wrapper
        for piece in pieces:
            bare = piece.rstrip(".!?")
            # the sentence's full stop (`from /etc/shadow.`) is read without, and with (a name may end in a dot)
            for reading in (piece, bare) if bare and bare != piece else (piece,):
                if (
                    reading in seen
                    or reading == whole
                    or _CANDIDATE.search(reading) is None
                    or _ENV_ALONE.match(reading)
                    or _NOISE.match(reading)
                ):
                    continue
                if not dotfiles and _DOTFILE.match(reading):
                    continue
                seen.add(reading)
                if _STRONG.search(reading):
                    strong += 1
                    if strong > _STRONG_MAX:
                        continue
                else:
                    weak += 1
                    if weak > _MENTIONS_MAX:
                        continue
                found.append(reading)
        if strong > _STRONG_MAX and weak > _MENTIONS_MAX:
            break
    return found
