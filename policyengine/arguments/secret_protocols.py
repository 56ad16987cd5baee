"""Passwords as login protocols write them: SMTP, IMAP, POP3, FTP, Redis, IRC (round ten, set I).

A protocol's login line names its password by position, not by a label or a key: `AUTH PLAIN
<base64 of NUL user NUL password>`, the base64 line after SMTP's `334 UGFzc3dvcmQ6` ("Password:"),
IMAP's `tag LOGIN user password`, POP3's `USER x` then `PASS y`, FTP scripts' `user name password`,
Redis's `AUTH [user] password` (MONITOR's quoted words, RESP's `$4 AUTH`), NickServ's `IDENTIFY
[account] password`. Each reader knows its command's grammar, so the value in the password's
place is the password whatever its shape; what is in that place and is plainly no password (a
reply word, a placeholder, a file name) is left. A base64 blob after AUTH or AUTHENTICATE is a
SASL credential when it decodes to fields apart by NUL (PLAIN) or SOH (XOAUTH2).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Iterator
from typing import Final

# The RE2 gate (secret_encodings reads it with its readers): a command of a login, written as the
# protocol writes it. Anything it does not match holds no protocol login.
GATE: Final = (
    r"\bAUTH(?:ENTICATE)?[ \t]+(?:[A-Z0-9\-]+[ \t]+)?[A-Za-z0-9+/]{8}"
    r"|\bAUTH(?:ENTICATE)?[ \t]+(?:PLAIN|XOAUTH2?|OAUTHBEARER)\b"
    r"|UGFzc3dvcmQ6"
    r"|[A-Za-z0-9.*]{1,12}[ \t]+(?:LOGIN|login)[ \t]+[^\s]+[ \t]+[^\s]"
    r"|\bPASS[ \t]+[^\s]"
    r"|(?i:nickserv)[ \t]+:?(?i:identify)[ \t]+[^\s]|(?i:/ns[ \t]+identify)[ \t]+[^\s]"
    r"|(?i:\"auth\")[ \t]+\"|(?i:\$4\r?\nauth\r?\n)|(?m:^[ \t]*AUTH[ \t]+[^\s])"
    r"|(?m:(?:^[ \t]*|:[ \t]+)(?:user|USER)[ \t]+[A-Za-z0-9][^\s]*[ \t]+[^\s]*[0-9][^\s]*[ \t]*\r?$)"
)

_B64 = r"[A-Za-z0-9+/]{8,}={0,2}"
_SASL_WORD = re.compile(rf"(?<![A-Za-z0-9+/=]){_B64}(?![A-Za-z0-9+/=])")
_MAX_SASL_WORDS = 64  # base64 words decoded per text
_LOGIN_PROMPT = re.compile(r"UGFzc3dvcmQ6")
_B64_WORD = re.compile(r"[A-Za-z0-9+/]{4,}={0,2}")
_PROMPT_WINDOW = 64  # characters after the "Password:" prompt where the client's answer stands
_WORD = r"(\"[^\"\n]{1,128}\"|[^\s\"]{1,128})"
# IMAP's tag holds a digit (a001, A1, 12): "PLAIN LOGIN but rejects" is a capability list in prose.
_IMAP = re.compile(
    rf"(?:^|(?<=\s))[A-Za-z.]{{0,8}}[0-9][A-Za-z0-9.]{{0,8}}[ \t]+(?:LOGIN|login)[ \t]+[^\s]+[ \t]+{_WORD}"
)
_POP3_PASS = re.compile(r"\bPASS[ \t]+([^\s]{1,128})")
_POP3_USER = re.compile(r"\bUSER[ \t]+[^\s]+")
_POP3_LINE = re.compile(r"(?m)^[ \t]*(?:[CS]:[ \t]*|[<>\-=~]{1,3}[ \t]*)?PASS[ \t]+([^\s]{1,128})[ \t]*\r?$")
_USER_BACK = 96  # characters before PASS where POP3's USER stands
_NICKSERV = re.compile(r"(?i)(?:nickserv[ \t]+:?|/ns[ \t]+)identify[ \t]+([^\s]{1,128})(?:[ \t]+([^\s]{1,128}))?")
_REDIS_MONITOR = re.compile(r"(?i)\"auth\"[ \t]+\"([^\"\n]{1,256})\"(?:[ \t]+\"([^\"\n]{1,256})\")?")
_REDIS_RESP = re.compile(
    r"(?i)\$4\r?\nauth\r?\n\$[0-9]{1,3}\r?\n([^\r\n]{1,256})(?:\r?\n\$[0-9]{1,3}\r?\n([^\r\n]{1,256}))?"
)
_REDIS_LINE = re.compile(r"(?m)^[ \t]*AUTH[ \t]+([^\s]{1,128})(?:[ \t]+([^\s]{1,128}))?[ \t]*\r?$")
# FTP's `user NAME PASSWORD` as a script's line: at a line's start (or after "script: ") and ending it.
_FTP_USER = re.compile(
    r"(?m)(?:^[ \t]*|:[ \t]+)(?:user|USER)[ \t]+[A-Za-z0-9][A-Za-z0-9_.@\-]{0,63}[ \t]+([^\s]{1,128})[ \t]*\r?$"
)
# Words in a password's place that are a server's reply or a sentence, not a password.
_NOT_PASSWORDS: Final = frozenset(
    {"ok", "no", "bad", "is", "was", "the", "a", "an", "and", "or", "to", "for", "with", "without", "fails",
     "failed", "works", "rejected", "accepted", "completed", "command", "required", "needed", "missing", "first",
     "then", "after", "before", "again", "later", "only", "here", "there", "now", "ready", "as", "in", "on"}
)  # fmt: skip
_FILE_NAME = re.compile(r".*/.*|.*\.(?:js|jsx|ts|tsx|py|go|rb|rs|java|txt|log|md|json|yaml|yml)")

Hit = tuple[str, int, int, str]


def _password(word: str, is_placeholder: Callable[[str], bool], *, minimum: int = 4) -> bool:
    """True when a word in a password's place may be the password (not a reply word, a placeholder or a file)."""
    bare = word.strip("\"'")
    return (
        len(bare) >= minimum
        and bare.lower() not in _NOT_PASSWORDS
        and not is_placeholder(bare)
        and _FILE_NAME.fullmatch(bare) is None
        and not bare.isupper()
    )


def _b64_text(word: str) -> bytes | None:
    """The bytes a strict base64 word decodes to, or None."""
    if len(word) % 4:
        return None
    try:
        return binascii.a2b_base64(word, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


def _sasl_fields(data: bytes) -> bool:
    """True for SASL PLAIN (authzid NUL user NUL password) or XOAUTH2 (user=... SOH auth=...) bytes."""
    if b"\x00" in data:
        fields = data.split(b"\x00")
        return len(fields) >= 3 and bool(fields[-1]) and all(32 <= b < 127 or b >= 128 for b in fields[-1])
    return b"\x01auth=" in data  # XOAUTH2 (user=...) and OAUTHBEARER (n,a=...)


def _printable(data: bytes) -> bool:
    """True for 4+ bytes of printable text (a typed answer, not random bytes)."""
    return len(data) >= 4 and all(32 <= b < 127 for b in data)


def _span(match: re.Match[str], group: int) -> Hit:
    """The hit for one group of a match, quotes left out."""
    start, end = match.span(group)
    word = match.group(group)
    if len(word) >= 2 and word[0] == word[-1] == '"':
        start, end = start + 1, end - 1
    return ("protocol-login", start, end, match.string[start:end])


def login_hits(text: str, is_placeholder: Callable[[str], bool]) -> Iterator[Hit]:
    """The passwords of protocol logins in the text (module docstring)."""
    # Once a text names AUTH or AUTHENTICATE, every base64 word that decodes to SASL's fields is the
    # credential wherever it stands (on the command's line, or alone on the next as IMAP and IRC send it).
    for n, match in enumerate(_SASL_WORD.finditer(text)):
        if n >= _MAX_SASL_WORDS:
            break
        data = _b64_text(match.group())
        if data is not None and _sasl_fields(data):
            yield ("protocol-login", match.start(), match.end(), match.group())
    for match in _LOGIN_PROMPT.finditer(text):
        window_end = min(len(text), match.end() + _PROMPT_WINDOW)
        for word in _B64_WORD.finditer(text, match.end(), window_end):
            data = _b64_text(word.group())
            if data is not None and _printable(data):
                yield ("protocol-login", word.start(), word.end(), word.group())
                break
    for match in _IMAP.finditer(text):
        if _password(match.group(1), is_placeholder):
            yield _span(match, 1)
    seen: set[int] = set()
    for match in _POP3_PASS.finditer(text):
        if _POP3_USER.search(text, max(0, match.start() - _USER_BACK), match.start()) and _password(
            match.group(1), is_placeholder
        ):
            seen.add(match.start(1))
            yield _span(match, 1)
    for match in _POP3_LINE.finditer(text):
        if match.start(1) not in seen and _password(match.group(1), is_placeholder, minimum=6):
            yield _span(match, 1)
    for match in _NICKSERV.finditer(text):
        group = 2 if match.group(2) else 1
        if _password(match.group(group), is_placeholder):
            yield _span(match, group)
    for pattern in (_REDIS_MONITOR, _REDIS_RESP, _REDIS_LINE):
        for match in pattern.finditer(text):
            group = 2 if match.group(2) else 1
            # "AUTH LOGIN prompts": an upper-case first word is SMTP's mechanism, not Redis's user.
            if pattern is _REDIS_LINE and (match.group(1).isupper() or len(match.group(group)) < 6):
                continue
            if _password(match.group(group), is_placeholder):
                yield _span(match, group)
    for ftp in _FTP_USER.finditer(text):
        given = ftp.group(1)
        # A password by position after a name, which prose also writes ("user bob has 3 keys"): it must
        # hold a letter and a digit, as FTP scripts' passwords here do, and be no reply word.
        if any(c.isdigit() for c in given) and any(c.isalpha() for c in given) and _password(given, is_placeholder):
            yield _span(ftp, 1)
