"""URLs a tool takes in parts: a host argument beside its port, path, scheme or query (urls(@) reads them joined).

Round fourteen (set L, cc-metadata-loopback-token-endpoints). An HTTP tool may split the URL it
fetches into fields (`mcp__http__request {host: localhost, port: 50342, path: /oauth2/token}`);
read one field at a time, no URL predicate sees `http://localhost:50342/oauth2/token`, which is
Azure Cloud Shell's managed-identity token endpoint. An object with a host-like key and at least
one other URL part is read as the URL those parts make (scheme `http` when none is given), so the
metadata predicates (a host and port, a host and path) meet it whole. Over-inclusion only adds a
URL: a red line over urls(@) gets stricter. The walk is bounded (_MAX_DEPTH objects down,
_MAX_URLS URLs, _MAX_PART characters a part).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

__all__ = ["split_urls"]

_MAX_DEPTH = 3  # objects inside objects read for parts ({request: {target: {host, port}}})
_MAX_URLS = 64  # URLs one call's parts may make
_MAX_PART = 2048  # characters of one part read (a host or path longer than this is cut)

# Argument names (lower case, `_` and `-` taken out) that give a URL's host - names that say host and
# nothing else (a `target` or `address` may be a file or a mailbox) - and the other parts.
_HOST_KEYS = frozenset(
    {
        "host", "hostname", "hostaddr", "server", "servername", "ip", "ipaddress", "ipaddr", "targethost",
        "remotehost", "netloc", "authority", "domain",
    }
)  # fmt: skip
_PORT_KEYS = frozenset({"port", "portnumber", "targetport", "remoteport", "serverport"})
_PATH_KEYS = frozenset({"path", "pathname", "urlpath", "uripath", "resourcepath"})
_SCHEME_KEYS = frozenset({"scheme", "protocol", "proto"})
_QUERY_KEYS = frozenset({"query", "querystring", "qs", "params", "queryparams"})
_PART_KEYS = _PORT_KEYS | _PATH_KEYS | _SCHEME_KEYS | _QUERY_KEYS

_SCHEME = re.compile(r"(?i)^\s*([a-z][a-z0-9+.-]{0,31})\s*(:/*)?\s*$")
_PORT = re.compile(r"^\s*([0-9]{1,5})\s*$")
# A host that already carries a port (`localhost:50342`, `[::1]:50342`), not a bare IPv6 address.
_HOST_PORT = re.compile(r"^(\[[^\]]*\]|[^:\[\]]*):[0-9]{1,5}$")


def _key(name: Any) -> str:
    """An argument's name as the tables hold it: lower case, without `_`, `-` and blanks."""
    return str(name).lower().replace("_", "").replace("-", "").replace(" ", "")


def _host(value: str) -> str | None:
    """The host part as a URL writes it (an IPv6 address bracketed); None for a value that is a URL itself."""
    host = value.strip()[:_MAX_PART]
    if not host or "://" in host or any(c in host for c in "/?#@ \t\r\n"):
        return None
    if host.count(":") >= 2 and not host.startswith("["):
        return f"[{host}]"  # fd00:a9fe:a9fe::1, ::1
    return host


def _query(value: Any) -> str | None:
    """A query part given as text (`a=b`, `?a=b`) or as an object of names and plain values."""
    if isinstance(value, str):
        text = value.strip()[:_MAX_PART].lstrip("?")
        return text or None
    if isinstance(value, dict):
        pairs = [
            f"{quote(str(k), safe='')}={quote(str(v)[:_MAX_PART], safe='')}"
            for k, v in value.items()
            if isinstance(v, (str, int, float)) and not isinstance(v, bool)
        ]
        return "&".join(pairs) or None
    return None


def _joined(parts: dict[str, Any], host: str) -> str:
    """The URL one object's parts make."""
    scheme = "http"
    for key in _SCHEME_KEYS:
        match = _SCHEME.match(parts[key]) if isinstance(parts.get(key), str) else None
        if match:
            scheme = match.group(1).lower()
            break
    port = ""
    for key in _PORT_KEYS:
        value = parts.get(key)
        text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
        match = _PORT.match(text) if isinstance(text, str) else None
        if match and not _HOST_PORT.match(host):
            port = f":{int(match.group(1))}"
            break
    path = ""
    for key in _PATH_KEYS:
        value = parts.get(key)
        if isinstance(value, str) and value.strip():
            text = value.strip()[:_MAX_PART]
            path = text if text.startswith("/") else f"/{text}"
            break
    query = next((q for key in _QUERY_KEYS if key in parts for q in (_query(parts[key]),) if q), None)
    return f"{scheme}://{host}{port}{path}{'?' + query if query else ''}"


def split_urls(arguments: Any) -> list[str]:
    """The URLs the arguments give in parts: an object's host-like value joined with its port, path, scheme, query."""
    found: list[str] = []
    if isinstance(arguments, dict):
        _walk(arguments, found, 0)
    return found


def _walk(value: dict[str, Any], found: list[str], depth: int) -> None:
    """Append the URL this object's parts make, then those of the objects inside it."""
    parts: dict[str, Any] = {}
    hosts: list[str] = []
    for name, item in value.items():
        key = _key(name)
        if key in _HOST_KEYS and isinstance(item, str):
            hosts.append(item)
        elif key in _PART_KEYS:
            parts.setdefault(key, item)
    if parts:
        for text in hosts:
            host = _host(text)
            if host is not None and len(found) < _MAX_URLS:
                found.append(_joined(parts, host))
    if depth + 1 < _MAX_DEPTH:
        for item in value.values():
            if isinstance(item, dict) and len(found) < _MAX_URLS:
                _walk(item, found, depth + 1)
