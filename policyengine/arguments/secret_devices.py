"""Credentials in network device configuration (round fourteen, set M): SNMP, IKE, RADIUS/TACACS+, Cisco, Juniper.

A running configuration names its secrets by statement, not by a key the assignment reader knows:
`snmp-server community N3tneg85EI RW`, `crypto isakmp key X address 0.0.0.0`, `radius-server host h key X`,
`tacacs-server key 7 0822455D0A16`, `username u privilege 15 password 7 ...`, `enable secret 9 $9$...`,
`ip ospf message-digest-key 1 md5 X`, `ntp authentication-key 1 md5 X`, `key-string 7 ...`, net-snmp's
`rocommunity X` and `createUser u SHA X AES Y`, Juniper's `pre-shared-key ascii-text "$9$..."`. The table
below is that syntax, one statement a line; the value after it (after the encryption type: 0 clear, 7 and
Juniper's $9$ reversible, 5, 8 and 9 hashes, all of them secrets) is reported. Juniper's `$9$` string is a
secret wherever it stands: it is reversibly encoded.

What is not: the statements around them (`service password-encryption`, `key chain RIP-KEYS`,
`crypto isakmp policy 10`, `snmp-server location`), placeholders (`<string>`, `WORD`) and the defaults
everyone knows (`public`, `private`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

# One statement a line: what comes before the value (the value is the group _VALUE appends).
_STATEMENTS: Final = (
    r"snmp-server[ \t]+community",
    r"(?:set[ \t]+)?snmp[ \t]+community",
    r"(?:ro|rw)community6?",
    r"com2sec6?[ \t]+\S+[ \t]+\S+",  # net-snmp: com2sec NAME SOURCE COMMUNITY
    r"crypto[ \t]+isakmp[ \t]+key(?:[ \t]+[06])?",
    r"pre-shared-key(?:[ \t]+(?:ascii-text|hexadecimal|local|remote))?(?:[ \t]+[06])?",
    r"(?:radius|tacacs)(?:-server)?\b[^\n]{0,80}?[ \t]key(?:[ \t]+[067])?",
    r"(?:message-digest-key|authentication-key)[ \t]+[0-9]+[ \t]+md5(?:[ \t]+[07])?",
    r"authentication-key(?:[ \t]+[07])?",
    r"key-string(?:[ \t]+[07])?",
    r"(?:password|secret)[ \t]+[0-9]",
    r"enable[ \t]+(?:password|secret)(?:[ \t]+level[ \t]+[0-9]+)?(?:[ \t]+[0-9])?",
    r"username[ \t]+\S+(?:[ \t]+privilege[ \t]+[0-9]+)?[ \t]+(?:password|secret)(?:[ \t]+[0-9])?",
    r"neighbor[ \t]+\S+[ \t]+password(?:[ \t]+[07])?",
    r"wpa-psk[ \t]+(?:ascii|hex)(?:[ \t]+[07])?",
    r"encrypted-password",
    r"createUser[ \t]+(?:-e[ \t]+\S+[ \t]+)?\S+[ \t]+(?:MD5|SHA(?:-?[0-9]+)?)",
    r"createUser[ \t]+(?:-e[ \t]+\S+[ \t]+)?\S+[ \t]+(?:MD5|SHA(?:-?[0-9]+)?)[ \t]+\S+[ \t]+(?:DES|AES(?:-?[0-9]+)?)",
    r"v3[ \t]+auth[ \t]+(?:md5|sha\S*)",
    r"v3[ \t]+auth[ \t]+(?:md5|sha\S*)[ \t]+\S+[ \t]+priv[ \t]+(?:des|3des|aes(?:[ \t]+[0-9]+)?)",
)
_VALUE: Final = r"[ \t]+(\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"';]{1,128})"
# One regexp a statement: two may name two values of one line (createUser's two pass phrases).
_STATEMENT_RES: Final = tuple(re.compile(rf"(?i)(?<![\w-])(?:{s}){_VALUE}") for s in _STATEMENTS)
_JUNIPER_9: Final = re.compile(r"\$9\$[A-Za-z0-9./\-]{6,}")
# The gate, for the prefilter (RE2, ASCII): a statement's word or Juniper's $9$.
GATE: Final = (
    r"(?i:community|isakmp|pre-shared-key|radius|tacacs|digest-key|authentication-key|key-string"
    r"|createuser|wpa-psk|encrypted-password|v3[ \t]+auth|(?:password|secret)[ \t]+[0-9][ \t])|\$9\$"
)
_GATE_RE: Final = re.compile(GATE)
# Words a statement's value never is: the next keyword of a statement, not a secret.
_NOT_VALUES: Final = frozenset(
    {
        "address",
        "hostname",
        "ascii-text",
        "hexadecimal",
        "local",
        "remote",
        "level",
        "view",
        "ro",
        "rw",
        "public",
        "private",
        "string",
        "word",
        "line",
        "key",
        "password",
        "secret",
        "encryption",
        "chain",
        "config",
        "configured",
        "md5",
        "sha",
        "aes",
        "des",
    }
)
_MIN_VALUE: Final = 4


def gate(text: str) -> bool:
    """True when a text may hold a device statement's secret (one regexp search)."""
    return _GATE_RE.search(text) is not None


def hits(text: str, is_placeholder: Callable[[str], bool]) -> list[tuple[str, int, int, str]]:
    """(kind, start, end, value) of each secret a configuration statement names, or a Juniper $9$ string."""
    found: dict[tuple[int, int], str] = {}
    for match in (m for pattern in _STATEMENT_RES for m in pattern.finditer(text)):
        start, end = match.span(1)
        value = match.group(1)
        if value[:1] in "\"'":
            value, start, end = value[1:-1], start + 1, end - 1
        bare = value.strip("<>[]{}")
        if len(value) < _MIN_VALUE or value.lower() in _NOT_VALUES or bare != value or is_placeholder(value):
            continue
        found[(start, end)] = value
    for match in _JUNIPER_9.finditer(text):
        if not any(s <= match.start() < e for s, e in found):
            found[match.span()] = match.group()
    return [("device-config-secret", start, end, value) for (start, end), value in sorted(found.items())]
