"""The local places a URL names behind its scheme: custom schemes, wrappers, loopback file transfers.

Round thirteen (set K, custom-scheme-file-uris, browser-wrapped-file-urls). A file server's own
scheme (`fs://`, `vfs://`, `local://`, `workspace://`, `vscode-file://`) names a local file as
`file://` does, and a wrapper (`view-source:`, `jar:...!/`, `blob:`, a URL inside a URL's query)
opens what it wraps. The engine knows the network's schemes; a URL under any other scheme is read
as a local place unless its layout says otherwise: its path part is a rooted path
(`fs://localhost/home/u/.netrc` is /home/u/.netrc), and its authority and path together a relative
one (`workspace://.env` is the workspace's .env). A file-transfer scheme (`sftp`, `scp`, `ssh`,
`rsync`, `ftp`) to this machine (any loopback spelling) names the local file too. Over-inclusion
only makes a red line stricter; every reading is bounded (_MAX_TEXT characters, _MAX_DEPTH
wrappers, _MAX_INNER inner URLs).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from policyengine.arguments.paths import _is_loopback

__all__ = ["UNKNOWN_ENTRY", "URL_LEAD", "url_places"]

# A climbing archive entry's unknown landing place (an expansion, as the shell's `$_files` is: unknown).
UNKNOWN_ENTRY = "$_entry"
_MAX_TEXT = 4096  # a URL longer than this is read by its first characters: a place is named at its start
_MAX_DEPTH = 4  # wrappers inside wrappers (view-source:jar:file:...), bounded
_MAX_INNER = 8  # URLs inside one URL's query, bounded

# A value that starts with a scheme of two characters or more (one letter and a colon is a drive).
URL_LEAD = re.compile(r"(?i)\s*[a-z][a-z0-9+.-]{1,31}:")
_SCHEME = re.compile(r"(?i)\s*([a-z][a-z0-9+.-]{1,31}):")
# A URL inside another one (`?u=file:///etc/passwd`, `/redirect/fs://localhost/x`): a scheme after a
# character that ends a name, percent-decoded first.
_INNER = re.compile(r"(?i)(?<=[=/?&#!:@(,;])(?:file:|[a-z][a-z0-9+.-]{1,31}://)")
_INNER_END = re.compile(r"[&#\s\"'<>]")

# Network schemes whose path is a file system's path on the host: to this machine, a local file.
_FILE_TRANSFER = frozenset(
    {
        "afp", "bzr+ssh", "dav", "davs", "ftp", "ftps", "git", "git+ssh", "hg+ssh", "nfs", "rsync", "scp", "sftp",
        "ssh", "ssh+git", "svn+ssh", "webdav", "webdavs",
    }
)  # fmt: skip
# Schemes of the network: the place is on another machine, unless a file transfer's host is this one.
_NETWORK = _FILE_TRANSFER | frozenset(
    {
        "abfs", "abfss", "adl", "amqp", "amqps", "az", "azure", "b2", "bzr", "cassandra", "coap", "coaps", "cos",
        "couchbase", "couchdb", "cvs", "dns", "docker", "doh", "elasticsearch", "gcs", "git+http", "git+https",
        "gopher", "grpc", "grpcs", "gs", "hdfs", "hg", "hg+http", "hg+https", "http", "https", "imap", "imaps", "ipp",
        "ipps", "irc", "ircs", "kafka", "ldap", "ldapi", "ldaps", "mariadb", "minio", "mongodb", "mongodb+srv", "mqtt",
        "mqtts", "mssql", "mysql", "nats", "news", "nntp", "oci", "oracle", "oss", "pop", "pop3", "pop3s", "postgres",
        "postgresql", "r2", "rdp", "redis", "rediss", "registry", "rtmp", "rtmps", "rtsp", "s3", "s3a", "s3n", "sip",
        "sips", "smtp", "smtps", "spice", "sqlserver", "ssl", "stomp", "svn", "svn+http", "svn+https", "swift", "tcp",
        "telnet", "tls", "udp", "vnc", "wasb", "wasbs", "webhdfs", "ws", "ws+unix", "wss", "xmpp",
    }
)  # fmt: skip
# Schemes that name no place at all (an address, a number, an identifier, a page of the browser's own).
_NO_PLACE = frozenset(
    {"mailto", "tel", "sms", "urn", "data", "javascript", "about", "magnet", "news", "geo", "bitcoin", "ethereum"}
    | {"cid", "mid", "xmpp", "sip", "sips"}
)
# Wrappers whose rest is the URL they open (`jar:` splits its archive from its entry at `!/`).
_WRAPPERS = frozenset(
    {"view-source", "jar", "blob", "filesystem", "jdbc", "wyciwyg", "feed", "zip", "vnd.sun.star.zip"}
)


def url_places(value: str) -> list[str]:
    """The local places a URL names behind its scheme (empty for a network URL or a value that is no URL)."""
    text = value[:_MAX_TEXT].strip()
    found: list[str] = []
    _read(text, found, 0)
    if "%" in text:
        decoded = unquote(text)
        if decoded != text:
            _read(decoded, found, 0)
    return list(dict.fromkeys(found))


def _read(text: str, found: list[str], depth: int) -> None:
    """Add the places one URL names to `found`, its wrappers and inner URLs read too."""
    if depth > _MAX_DEPTH:
        return
    match = _SCHEME.match(text)
    if match is None:
        return
    scheme = match.group(1).lower()
    rest = text[match.end() :]
    if scheme in _WRAPPERS:
        if scheme == "jar" and "!" in rest:
            archive, _, entry = rest.partition("!")
            _read(archive, found, depth + 1)
            # The entry read below the archive, as a folder: an entry that climbs (`!/../../x`) leaves it.
            _read(archive.rstrip("/") + "/" + entry.lstrip("/"), found, depth + 1)
            names = [name for name in re.split(r"[/\\]+", _path_part(entry)) if name]
            if ".." in names:
                # Where a climbing entry lands is the extracting tool's business (zip-slip): a place the
                # engine cannot know, with the entry's own names after it.
                found.append("/".join([UNKNOWN_ENTRY, *(name for name in names if name not in (".", ".."))]))
        else:
            _read(rest, found, depth + 1)
        return
    if scheme == "file" or "file" in scheme.split("+"):
        if depth:
            found.append("file:" + rest)  # a wrapped file URL (the paths functions read `file:`)
        return
    _inner_urls(rest, found, depth)
    if scheme in _NO_PLACE:
        return
    if not rest.startswith("//"):
        # An opaque URL (`fs:/etc/x`, `vfs:~/.ssh/id_rsa`): its rest is a path when rooted or in a home.
        if scheme not in _NETWORK and rest.startswith(("/", "~")):
            found.append(_path_part(rest))
        return
    authority, slash, path = rest[2:].partition("/")
    path = _path_part(slash + path)
    host = authority.rpartition("@")[2]
    if scheme in _NETWORK:
        if scheme in _FILE_TRANSFER and path and _is_loopback(_host_name(host)):
            found.append(path[1:] if path.startswith("/~") else path)
        return
    # A scheme the engine does not know: its path part is a rooted path, its authority a first name.
    if path.strip("/"):
        found.append(path[1:] if path.startswith("/~") else path)
    name = _path_part(host)
    if name:
        found.append(name + path if path != "/" else name)


def _inner_urls(rest: str, found: list[str], depth: int) -> None:
    """The places URLs inside a URL name (`https://h/?u=file:///etc/passwd`)."""
    for count, inner in enumerate(_INNER.finditer(rest)):
        if count >= _MAX_INNER:
            return
        end = _INNER_END.search(rest, inner.start())
        _read(rest[inner.start() : end.start() if end else None], found, depth + 1)


def _path_part(text: str) -> str:
    """A URL's path without its query and fragment."""
    for mark in ("?", "#"):
        text = text.partition(mark)[0]
    return text


def _host_name(host: str) -> str:
    """An authority's host without its port ("localhost:22", "[::1]:22")."""
    host = host.lower()
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.rpartition(":")[0] if host.count(":") == 1 else host
