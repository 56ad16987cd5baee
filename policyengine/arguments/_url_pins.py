"""Where a pin or proxy option sends a call's connection, read as the URLs of the hosts it reaches.

Round fifteen (set M, cc-metadata-resolve-pinning). A URL may name an ordinary host while an
option sends the connection elsewhere: curl's `--resolve h:80:ADDR` and `--connect-to`, a
browser's `--host-resolver-rules='MAP h ADDR'` or `--proxy-server=ADDR`, docker's
`--add-host h:ADDR`, ssh's `-L 8169:ADDR:80`, wget's `-e http_proxy=ADDR`, a `*_proxy` variable,
an HTTP tool's `{resolve: ...}` or `{connect_to: [...]}` argument, a browser tool's launch
arguments. Each address operand of such an option is read as a host the call reaches
(`http://ADDR[:PORT]`), so the metadata predicates over urls(@) - url_host() reads every IPv4
spelling and IPv4-embedding IPv6 - meet it in any spelling. A value that does not parse in its
option's syntax is read piece by piece (each word and each `:`-separated part a host): over-
inclusion only adds a URL, and a red line over urls(@) gets stricter.

The tables (documented in docs/functions.md, urls(@)):

| syntax | written | read as reached |
| resolve | HOST:PORT:ADDR[,ADDR] (a leading + or -) | each ADDR, at PORT |
| connect-to | HOST1:PORT1:HOST2:PORT2 | HOST2, at PORT2 |
| host-rules | MAP PATTERN REPLACEMENT[:PORT], ... (EXCLUDE, ~NOTFOUND reach nothing) | each REPLACEMENT |
| proxy | [SCHEME=][SCHEME://]HOST[:PORT], ... or ;-separated | each proxy |
| add-host | NAME:ADDR or NAME=ADDR | ADDR |
| forward | [BIND:]PORT:HOST:HOSTPORT (ssh -L/-R), HOST:PORT (ssh -W) | HOST, at HOSTPORT |
| setting | NAME=VALUE, NAME a proxy setting (wget -e, git -c) | VALUE as a proxy |
| hosts | /etc/hosts lines (ADDR NAME...), NAME:ADDR, NAME=ADDR, or a name | each ADDR |

Values that are not literal (`--resolve "h:80:$ADDR"`) are read as written: an expansion is
no address (a known limit, docs/security.md).
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = [
    "ANY_PROGRAM_OPTIONS",
    "PIN_KEYS",
    "PROGRAM_OPTIONS",
    "PROXY_VARIABLES",
    "argument_pins",
    "option_syntax",
    "targets",
]

RESOLVE = "resolve"
CONNECT_TO = "connect-to"
HOST_RULES = "host-rules"
PROXY = "proxy"
ADD_HOST = "add-host"
FORWARD = "forward"
SETTING = "setting"
HOSTS = "hosts"

# Long options that pin or proxy a connection in any program that takes them (a browser and what
# launches one, curl, docker/podman/nerdctl, pip, npm, aria2c...): read in every command's words
# and in a tool's argument vectors (`launchOptions.args`, `launch_args`, `chrome_flags`).
ANY_PROGRAM_OPTIONS: dict[str, str] = {
    "--host-resolver-rules": HOST_RULES,
    "--host-rules": HOST_RULES,
    "--proxy-server": PROXY,
    "--proxy-pac-url": PROXY,
    "--proxy": PROXY,
    "--preproxy": PROXY,
    "--http-proxy": PROXY,
    "--https-proxy": PROXY,
    "--all-proxy": PROXY,
    "--socks4": PROXY,
    "--socks4a": PROXY,
    "--socks5": PROXY,
    "--socks5-hostname": PROXY,
    "--resolve": RESOLVE,
    "--connect-to": CONNECT_TO,
    "--add-host": ADD_HOST,
}

# Options of one program, named as its grammar reports them (a short option without its dash).
PROGRAM_OPTIONS: dict[str, dict[str, str]] = {
    "curl": {"--resolve": RESOLVE, "--connect-to": CONNECT_TO},
    "ssh": {"L": FORWARD, "R": FORWARD, "W": FORWARD},
    "autossh": {"L": FORWARD, "R": FORWARD, "W": FORWARD},
    "wget": {"e": SETTING, "--execute": SETTING},
    "wget2": {"e": SETTING, "--execute": SETTING},
}

# Environment variables a client reads its proxy from (compared in lower case).
PROXY_VARIABLES = frozenset(
    {"http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "socks_proxy", "ws_proxy", "wss_proxy", "grpc_proxy"}
)
# Settings that name a proxy (wget -e http_proxy=..., git -c http.proxy=...), lower case.
_PROXY_SETTINGS = PROXY_VARIABLES | {"proxy", "http.proxy", "https.proxy", "remote.origin.proxy"}

# A tool's argument names (lower case, `_`, `-` and blanks taken out) that hold pins or proxies;
# an object under one is read with its syntax, key by key (`proxy: {server: ...}`, `hosts: {h: ADDR}`).
PIN_KEYS: dict[str, str] = {
    "resolve": RESOLVE,
    "resolves": RESOLVE,
    "curlresolve": RESOLVE,
    "connectto": CONNECT_TO,
    "hostresolverrules": HOST_RULES,
    "hostrules": HOST_RULES,
    "resolverrules": HOST_RULES,
    "proxy": PROXY,
    "proxies": PROXY,
    "proxyserver": PROXY,
    "proxyurl": PROXY,
    "proxyhost": PROXY,
    "proxypacurl": PROXY,
    "httpproxy": PROXY,
    "httpsproxy": PROXY,
    "allproxy": PROXY,
    "socksproxy": PROXY,
    "addhost": ADD_HOST,
    "addhosts": ADD_HOST,
    "extrahosts": ADD_HOST,
    "hosts": HOSTS,
    "hostsfile": HOSTS,
    "hostaliases": HOSTS,
    "hostsentries": HOSTS,
    "hostentries": HOSTS,
    "hostmap": HOSTS,
    "hostsmap": HOSTS,
    "hostmapping": HOSTS,
    "hostmappings": HOSTS,
    "hostoverrides": HOSTS,
    "dnsoverrides": HOSTS,
    "dnsmap": HOSTS,
    "staticdns": HOSTS,
}

_MAX_DEPTH = 8  # objects and lists inside one another read for pins
_MAX_URLS = 64  # URLs one call's pins may make
_MAX_PART = 4096  # characters of one value read

_CONNECT_TO = re.compile(r"[^:]*:[^:]*:(\[[^\]]*\]|[^:]*):(.*)")
_PORT = re.compile(r"[0-9]{1,5}")
_SCHEME_PREFIX = re.compile(r"(?i)^[a-z][a-z0-9+.-]*=")
# Pieces of a value no syntax places: words, then `:`-separated parts outside brackets.
_WORDS = re.compile(r"[\s,;=|'\"]+")
_PARTS = re.compile(r"\[[^\]]*\]|[^:\[\]]+")
# An option of ANY_PROGRAM_OPTIONS inside a string (a flags string, one argv item): its value.
_ARGV_OPTION = re.compile(
    r"(?:^|[\s'\"])(" + "|".join(re.escape(o) for o in sorted(ANY_PROGRAM_OPTIONS, key=len, reverse=True)) + r")"
    r"(?:=|\s+)(?:'([^']*)'|\"([^\"]*)\"|([^\s'\"]+))"
)
_IPV6 = re.compile(r"[0-9A-Fa-f:.%]*:[0-9A-Fa-f:.%]*:[0-9A-Fa-f:.%]*")


def option_syntax(program: str, option: str) -> str | None:
    """The pin syntax of one program's option (as its grammar names it), or None."""
    table = PROGRAM_OPTIONS.get(program)
    syntax = table.get(option) if table is not None else None
    return syntax if syntax is not None else ANY_PROGRAM_OPTIONS.get(option)


def _bracketed(host: str) -> str:
    """A host as a URL writes it: an IPv6 address in brackets."""
    host = host.strip()
    if host.count(":") >= 2 and not host.startswith("["):
        return f"[{host}]"
    return host


def _url(host: str, port: str = "") -> str | None:
    """`http://HOST[:PORT]` for one address operand; None for an empty one."""
    host = _bracketed(host)
    if not host or any(char in host for char in "/?#@ \t\r\n"):
        return None
    port = port.strip()
    return f"http://{host}:{port}" if _PORT.fullmatch(port) else f"http://{host}"


def _pieces(value: str) -> list[str]:
    """A value no syntax places, read piece by piece: each word and each `:` part of it a host."""
    found: list[str] = []
    for word in _WORDS.split(value):
        if not word:
            continue
        if "://" in word:
            found.append(word)
            continue
        candidates = [word] if _IPV6.fullmatch(word) else [part for part in _PARTS.findall(word) if part]
        for part in candidates:
            if (url := _url(part.strip("[]") if part.startswith("[") else part)) is not None:
                found.append(url)
    return found


def _resolve(value: str) -> list[str] | None:
    """curl --resolve HOST:PORT:ADDR[,ADDR]."""
    pieces = value.strip().lstrip("+-").split(":", 2)
    if len(pieces) < 3 or not _PORT.fullmatch(pieces[1]):
        return None
    found = [_url(address.strip().strip("[]"), pieces[1]) for address in pieces[2].split(",") if address.strip()]
    return [url for url in found if url is not None]


def _connect_to(value: str) -> list[str] | None:
    """curl --connect-to HOST1:PORT1:HOST2:PORT2 (an empty HOST2 is the URL's own host)."""
    target = _CONNECT_TO.fullmatch(value.strip())
    if target is None:
        return None
    url = _url(target.group(1).strip("[]"), target.group(2)) if target.group(1) else None
    return [url] if url is not None else []


def _host_rules(value: str) -> list[str] | None:
    """Chromium's MAP PATTERN REPLACEMENT[:PORT] rules, comma-separated."""
    found: list[str] = []
    for rule in value.split(","):
        words = rule.split()
        if not words:
            continue
        verb = words[0].upper()
        if verb == "EXCLUDE" and len(words) == 2:
            continue
        if verb != "MAP" or len(words) != 3:
            return None
        replacement = words[2]
        if replacement.startswith("~"):
            continue  # ~NOTFOUND: the name resolves to nothing
        bracket = re.fullmatch(r"\[([^\]]*)\](?::([0-9]{1,5}))?", replacement)
        if bracket is not None:
            url = _url(bracket.group(1), bracket.group(2) or "")
        elif replacement.count(":") == 1:
            url = _url(*replacement.split(":"))
        else:
            url = _url(replacement)
        if url is not None:
            found.append(url)
    return found


def _proxy(value: str) -> list[str] | None:
    """Proxies: a URL or HOST[:PORT], each perhaps for one scheme (`https=h:3128`), `;`- or `,`-separated."""
    found: list[str] = []
    for item in re.split(r"[;,\s]+", value.strip()):
        if not item:
            continue
        if "://" not in item:
            item = _SCHEME_PREFIX.sub("", item)
        if item.lower() in ("direct://", "direct", "<-loopback>", "<local>") or not item:
            continue
        if "://" in item:
            found.append(item)
        elif "@" in item:
            found.append(f"http://{item}")  # user:password@HOST:PORT: url_host() reads past the user
        elif (url := _url(item)) is not None:
            found.append(url)
    return found


def _add_host(value: str) -> list[str] | None:
    """docker --add-host NAME:ADDR or NAME=ADDR (ADDR perhaps IPv6, bracketed or not)."""
    text = value.strip()
    if "=" in text:
        address = text.partition("=")[2]
    elif ":" in text:
        address = text.partition(":")[2]
    else:
        return None
    url = _url(address.strip().strip("[]"))
    return [url] if url is not None else []


def _forward(value: str) -> list[str] | None:
    """ssh -L/-R [BIND:]PORT:HOST:HOSTPORT and -W HOST:PORT: the HOST the tunnel reaches."""
    parts = _PARTS.findall(value.strip())
    if len(parts) >= 3:
        url = _url(parts[-2].strip("[]"), parts[-1])
    elif len(parts) == 2 and not _PORT.fullmatch(parts[0]):
        url = _url(parts[0].strip("[]"), parts[1])
    else:
        return []  # a dynamic forward or a socket: no host
    return [url] if url is not None else []


def _setting(value: str) -> list[str] | None:
    """NAME=VALUE where NAME is a proxy setting (`http_proxy=ADDR`, `http.proxy=ADDR`); others reach nothing."""
    name, sign, setting = value.partition("=")
    if not sign:
        return []
    if name.strip().lower().replace(" ", "") in _PROXY_SETTINGS:
        return _proxy(setting) or []
    return []


def _hosts(value: str) -> list[str] | None:
    """/etc/hosts lines (ADDR NAME...), NAME:ADDR or NAME=ADDR items, or plain names: the addresses."""
    found: list[str] = []
    for line in value.splitlines() or [value]:
        line = line.partition("#")[0].strip()
        if not line:
            continue
        words = line.split()
        if len(words) > 1:
            url = _url(words[0].strip("[]"))  # a hosts line: the address first
            found.extend([url] if url is not None else [])
        elif _IPV6.fullmatch(line) or line.startswith("["):
            found.extend([url] if (url := _url(line.strip("[]"))) is not None else [])
        elif "=" in line or ":" in line:
            found.extend(_add_host(line) or [])
        elif (url := _url(line)) is not None:
            found.append(url)
    return found


_SYNTAXES = {
    RESOLVE: _resolve,
    CONNECT_TO: _connect_to,
    HOST_RULES: _host_rules,
    PROXY: _proxy,
    ADD_HOST: _add_host,
    FORWARD: _forward,
    SETTING: _setting,
    HOSTS: _hosts,
}


def targets(syntax: str, value: str) -> list[str]:
    """The URLs of the hosts one option value in `syntax` sends the connection to (pieces when it does not parse)."""
    value = value[:_MAX_PART]
    found = _SYNTAXES[syntax](value)
    return _pieces(value) if found is None else found


def argument_pins(arguments: Any) -> list[str]:
    """The URLs a tool's arguments pin or proxy the call to: by argument name and in argument vectors."""
    found: dict[str, None] = {}
    _walk(arguments, None, found, 0)
    return list(found)


@functools.lru_cache(maxsize=4096)
def _syntax_of(name: str) -> str | None:
    """The pin syntax an argument's name gives (PIN_KEYS: lower case, without `_`, `-` and blanks), or None."""
    return PIN_KEYS.get(name.lower().replace("_", "").replace("-", "").replace(" ", ""))


def _add(found: dict[str, None], urls: list[str]) -> None:
    """Keep URLs, up to _MAX_URLS."""
    for url in urls:
        if len(found) >= _MAX_URLS:
            return
        found[url] = None


def _string(value: str, syntax: str | None, found: dict[str, None]) -> None:
    """One string: in its argument's syntax, and the pin options written in it (`--host-resolver-rules=...`)."""
    if syntax is not None:
        _add(found, targets(syntax, value))
    if value.startswith("--") and (option := value.partition("=")[0]) in ANY_PROGRAM_OPTIONS and "=" in value:
        _add(found, targets(ANY_PROGRAM_OPTIONS[option], value.partition("=")[2]))  # one argv item: all its value
    elif "--" in value:
        for match in _ARGV_OPTION.finditer(value[:_MAX_PART]):
            operand = next((group for group in match.groups()[1:] if group is not None), "")
            _add(found, targets(ANY_PROGRAM_OPTIONS[match.group(1)], operand))


def _walk(value: Any, syntax: str | None, found: dict[str, None], depth: int) -> None:
    """Read one argument value; an object's keys name the syntax of what is below them."""
    if depth > _MAX_DEPTH or len(found) >= _MAX_URLS:
        return
    if isinstance(value, str):
        if syntax is not None or "--" in value:  # the prefilter: a plain string costs one C scan
            _string(value, syntax, found)
    elif isinstance(value, dict):
        for name, item in value.items():
            own = _syntax_of(name) if isinstance(name, str) else None
            if syntax in (HOSTS, ADD_HOST) and own is None and isinstance(name, str):
                _add(found, targets(HOSTS, name))  # {hosts: {"169.254.169.254": [names]}}
            if isinstance(item, (str, dict, list)):
                _walk(item, own or syntax, found, depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str) and item in ANY_PROGRAM_OPTIONS and index + 1 < len(value):
                following = value[index + 1]
                if isinstance(following, str):
                    _add(found, targets(ANY_PROGRAM_OPTIONS[item], following))  # ["--resolve", "h:80:ADDR"]
            if isinstance(item, (str, dict, list)):
                _walk(item, syntax, found, depth + 1)
