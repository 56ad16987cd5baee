"""Credentials in configuration written as `name value` lines (round fifteen, set N).

Redis (`masterauth granitefalcon`, `requirepass ...`), keepalived (`auth_pass k33pal1v`), Squid,
Postfix and many daemons write a setting as its name, blanks and its value, with no `=` or `:` for
the assignment reader to take. A line that is exactly a name and one value, where the name holds a
credential's stem, is offered to the scanner, which keeps it when the name is a credential's
(is_credential_key) and the value is one (not a placeholder, not a status word).
"""

from __future__ import annotations

import re
from typing import Final

_STEM: Final = r"(?:pass|pwd|pw|auth|secret|token|key|cred)"
# The gate (RE2 and Python): a line of a name with a stem, blanks, one word of four or more, maybe ';'.
GATE: Final = rf"(?im:^[ \t]*[A-Za-z0-9_.\-]*{_STEM}[A-Za-z0-9_.\-]*[ \t]+[^\s\"'=:]" + r"[^\s]{3,}[ \t]*;?[ \t]*$)"
_LINE: Final = re.compile(
    rf"(?im)^[ \t]*([A-Za-z][A-Za-z0-9_.\-]*{_STEM}[A-Za-z0-9_.\-]*|{_STEM}[A-Za-z0-9_.\-]*)[ \t]+"
    r"([^\s\"'=:][^\s]{3,}?)[ \t]*;?[ \t]*$"
)
_MAX_LINES: Final = 32
# A credential's plain word as the name is prose ("Password policy", "Passwort vergessen", "token
# rotation"): a directive's name is an identifier (auth_pass, smtp-password) or a glued one (masterauth).
_PROSE_NAMES: Final = frozenset(
    {
        "password", "passwords", "passwort", "passwd", "pass", "passphrase", "passcode", "pw", "pwd",
        "token", "tokens", "secret", "secrets", "key", "keys", "auth", "credential", "credentials", "creds",
    }
)  # fmt: skip


def lines(text: str) -> list[tuple[str, int, int, str]]:
    """(name, start, end, value) of each `name value` line whose name holds a credential's stem."""
    found: list[tuple[str, int, int, str]] = []
    for match in _LINE.finditer(text):
        if match.group(1).lower() in _PROSE_NAMES:
            continue
        found.append((match.group(1), match.start(2), match.end(2), match.group(2)))
        if len(found) >= _MAX_LINES:
            break
    return found
