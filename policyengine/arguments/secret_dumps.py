"""Credential files and dumps that name no credential, read by their layout (round thirteen, set K).

The detector finds a credential by its shape or by a name written before it; the documents here
carry one in a layout their program defines, with no label. Each reader recognises the layout as
a whole and returns the span of the secret only, so the rest of the text stays readable:

- **Service credential files**: Postfix's sasl_passwd (`[host]:587 user:password`), PPP's
  chap/pap-secrets (`"user" * "password" *`), OpenVPN's auth-user-pass (a user line, a password
  line and nothing else), `user:password` files (rsyncd.secrets, Mosquitto's plain passwd,
  htpasswd's `user:$apr1$...`, every line of the text in that layout), Dovecot's passwd-file
  (`user:{PLAIN}password:...`), davfs2 secrets (`url user password`), Nagios' resource.cfg
  (`$USER3$=password`), ipsec.secrets (`left right : PSK "x"`), and a router's
  `username u secret 0 x` / `password 7 x`.
- **Windows credential dumps**: pwdump, secretsdump and smbpasswd lines (`user[:RID]:LM:NT`, the
  LM field may be X's), secretsdump's Kerberos keys (`user:aes256-cts-hmac-sha1-96:<hex>`) and LSA
  secrets (the lines under `[*] _SC_x`, `[*] DefaultPassword`, `[*] $MACHINE.ACC`), mimikatz's
  hash lines (`* NTLM : <hex>`, `Hash NTLM: <hex>`, `ntlm- 0: <hex>`, `rc4_hmac_nt <hex>`),
  `klist -K`'s keys (`(0x<hex>)` on a principal's line) and a Kerberos ticket in base64 (a
  KRB-CRED starts `doI`: Rubeus, kirbi files).
- **Key/value replies one item a line**: redis-cli's bare replies (`CONFIG GET`, `HGETALL` piped:
  the name on one line, the value on the next, in pairs from the first line).

Every reader sits behind one RE2 gate compiled at import (GATE, joined into secret_layouts'
documents gate by the caller): a text none of them can match costs one linear pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Final

NameTest = Callable[[str], Any]
Span = tuple[int, int]

_HEX = r"[0-9A-Fa-f]"
# Windows dumps.
_LM_FIELD = rf"(?:{_HEX}{{32}}|X{{32}}|NO PASSWORD[X*]{{21}})"
_PWDUMP = rf"(?m:^[^\s:]{{1,64}}(?::[0-9]{{1,10}})?:{_LM_FIELD}:{_HEX}{{32}}(?::|[ \t]*$))"
_ENCTYPE = (
    r"(?i:aes(?:128|256)-cts-hmac-sha(?:1-96|256-128|384-192)|des3?-cbc-(?:md5|crc|sha1)"
    r"|rc4[_\-]hmac(?:[_\-]nt)?|arcfour-hmac(?:-md5)?)"
)
_KERBEROS_KEY = rf"(?m:^[^\s:]{{1,128}}:{_ENCTYPE}:{_HEX}{{16,}})"
# mimikatz's bulleted fields ("* NTLM : x", "* SHA1 : x"), its DCSync lines ("Hash NTLM: x",
# "ntlm- 0: x") and its key lists ("rc4_hmac_nt x", "aes256_hmac x"); a bare "SHA1: x" is a digest.
_HASH_WORD = (
    r"(?i:\*[ \t]*(?:ntlm|nt|lm|sha1|dpapi|aes(?:128|256))|ntlm|nthash|lmhash|nt[ \t]+hash"
    r"|hash[ \t]+(?:ntlm|lm|nt)|(?:ntlm|lm)[ \t]*-[ \t]*[0-9]{1,3}"
    r"|rc4_hmac(?:_nt|_old|_nt_exp|_old_exp)?|rc4_md4|des_cbc_md5|aes(?:128|256)_hmac(?:_plain)?)"
)
_HASH_LINE = rf"(?m:^[ \t]*{_HASH_WORD}[ \t]*(?::[ \t]*|[ \t]+){_HEX}{{16,}}[ \t]*$)"
_KEYTAB_KEY = r"(?m:^[ \t]*[0-9]{1,5}[ \t]+[^\s]*@[^\s]+[^\n]*\(0x[0-9A-Fa-f]{16,}\)[ \t]*$)"
_TICKET = r"\bdoI[A-Za-z0-9+/]{60}"
_LSA_HEADER = r"(?m:^\[\*\][ \t]+(?:_SC_\S+|DefaultPassword|\$MACHINE\.ACC|DPAPI_SYSTEM|NL\$KM|L\$\S+)[ \t]*$)"
# Service credential files.
_SASL = r"(?m:^[ \t]*(?:\[[^\]\s]+\]|[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+)(?::[0-9]{1,5})?[ \t]+[^\s:]+:\S)"
_CHAP = r"(?m:^[ \t]*\"[^\"\n]+\"[ \t]+\S+[ \t]+\"|^[ \t]*\S+[ \t]+\*[ \t]+\S+[ \t]+(?:\*|[0-9]))"
_USER_SECRET = r"(?m:^[ \t]*[A-Za-z0-9_][\w.@\-\\]{0,63}:[^\s:]{4,}[ \t]*$)"
_DOVECOT = r"(?m:^[^\s:]{1,64}:\{[A-Za-z0-9.\-]{2,24}\}[^\s:])"
_DAVFS = r"(?m:^[ \t]*(?:[A-Za-z][A-Za-z0-9+.\-]*://\S+|/\S*)[ \t]+\S+[ \t]+\S+[ \t]*$)"
_NAGIOS = r"(?m:^[ \t]*\$USER[0-9]{1,3}\$[ \t]*=)"
_IPSEC = r"(?:^|[ \t]):[ \t]*(?i:psk|eap|xauth|ntlm|pin)[ \t]+\S"
_DEVICE = r"(?m:^[ \t]*(?:username|enable|user)\b[^\n]*\b(?:secret|password)[ \t]+[0-9][ \t]+\S)"
# Key/value replies: a line that is one name, then a line that is one value.
_PAIR_LINE = r"(?m:^[\w.:\-]{0,64}(?i:pass|pwd|secret|token|key|auth|cred|psk)[\w.:\-]{0,64}\r?\n[ \t]*\S)"
_AUTH_USER_PASS = r"\A[ \t]*[A-Za-z][\w.@\-]{0,63}[ \t]*\r?\n[ \t]*\S{6,128}[ \t]*\r?\n?\z"
_GATES: Final = (
    _PWDUMP, _KERBEROS_KEY, _HASH_LINE, _KEYTAB_KEY, _TICKET, _LSA_HEADER, _SASL, _CHAP, _USER_SECRET, _DOVECOT,
    _DAVFS, _NAGIOS, _IPSEC, _DEVICE, _PAIR_LINE, _AUTH_USER_PASS,
)  # fmt: skip
GATE: Final = "|".join(f"(?:{g})" for g in _GATES)


def maybe_dump(text: str) -> bool:
    """A cheap gate before GATE: every layout here holds `:`, a line break, `=`, `*` or `doI`, or starts a path.

    (Substring tests in C: most arguments - names, sentences, ids - hold none, and skip the RE2 pass.)
    """
    return ":" in text or "\n" in text or "=" in text or "*" in text or "doI" in text or text.lstrip().startswith("/")


_MAX_READS = 256  # lines read per reader and text; past it, the first ones are hidden
_MAX_LINE = 4096


def _lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of the text, the line break not included."""
    pos = 0
    n = len(text)
    while pos <= n:
        end = text.find("\n", pos)
        end = n if end < 0 else end
        yield pos, end if end == pos or text[end - 1] != "\r" else end - 1
        pos = end + 1


# ---------------------------------------------------------------------------------------------
# What a password looks like when nothing names it
# ---------------------------------------------------------------------------------------------

_CRYPT = re.compile(
    r"\$(?:1|2[abxy]?|5|6|7|y|gy|apr1|argon2(?:id|i|d)|pbkdf2[\w\-]*|sha1|md5)\$\S{8,}|\{[A-Z0-9.\-]{2,24}\}\S{4,}"
)
_VERSION_OR_NAME = re.compile(r"[vV]?[0-9][\w.\-+]*|[\w\-]+(?:\.[\w\-]+)+|[0-9A-Fa-f]{7,}|[A-Za-z]+")
_PASSWORD_SYMBOLS = frozenset("!#$%^&*?~+=@")


def password_like(word: str) -> bool:
    """True for one word a person or a generator would use as a password (no label vouches for it).

    Mixed case with a digit (CedarStone5019), letters with digits and a symbol (s3cret!x), or a
    crypt or {SCHEME} hash (htpasswd, Dovecot). Versions, host and file names, hex ids, plain words
    and numbers are not: they are what a name:value line holds otherwise.
    """
    if not 6 <= len(word) <= 128 or any(c.isspace() for c in word):
        return False
    if _CRYPT.fullmatch(word):
        return True  # before the path test: a crypt hash's salt and digest hold "/"
    if "/" in word or "\\" in word:
        return False
    if _VERSION_OR_NAME.fullmatch(word):
        return False
    upper = any(c.isupper() for c in word)
    lower = any(c.islower() for c in word)
    digit = any(c.isdigit() for c in word)
    symbol = any(c in _PASSWORD_SYMBOLS for c in word)
    return (upper and lower and digit) or ((upper or lower) and digit and symbol)


# ---------------------------------------------------------------------------------------------
# Readers
# ---------------------------------------------------------------------------------------------

_PWDUMP_RE = re.compile(
    rf"[^\s:]{{1,64}}(?::[0-9]{{1,10}})?:({_HEX}{{32}}|X{{32}}|NO PASSWORD[X*]{{21}}):({_HEX}{{32}})(?=:|[ \t]*$)"
)
_KERBEROS_KEY_RE = re.compile(rf"[^\s:]{{1,128}}:{_ENCTYPE}:({_HEX}{{16,}})")
_HASH_LINE_RE = re.compile(rf"[ \t]*{_HASH_WORD}[ \t]*(?::[ \t]*|[ \t]+)({_HEX}{{16,}})[ \t]*")
_KEYTAB_RE = re.compile(r"[ \t]*[0-9]{1,5}[ \t]+\S*@\S+[^\n]*\(0x([0-9A-Fa-f]{16,})\)[ \t]*")
_TICKET_RE = re.compile(r"\bdoI[A-Za-z0-9+/]{60,}={0,2}(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/]{16,}={0,2})*")
_LSA_HEADER_RE = re.compile(_LSA_HEADER)
_SECTION_END = re.compile(r"\[\*\]|\s*$")


def _windows_spans(text: str, is_placeholder: NameTest) -> list[Span]:
    """Hashes, keys, tickets and LSA secrets in Windows and Kerberos credential dumps."""
    spans: list[Span] = []
    reads = 0
    for start, end in _lines(text):
        if reads >= _MAX_READS * 4 or end - start > _MAX_LINE:
            continue
        reads += 1
        if (m := _PWDUMP_RE.match(text, start, end)) is not None:
            if not m.group(1).startswith(("X", "NO")):
                spans.append(m.span(1))
            spans.append(m.span(2))
        else:
            m = (
                _KERBEROS_KEY_RE.match(text, start, end)
                or _HASH_LINE_RE.fullmatch(text, start, end)
                or _KEYTAB_RE.fullmatch(text, start, end)
            )
            if m is not None:
                spans.append(m.span(1))
    for n, m in enumerate(_TICKET_RE.finditer(text)):
        if n >= _MAX_READS:
            break
        spans.append(m.span())
    for n, header in enumerate(_LSA_HEADER_RE.finditer(text)):
        if n >= _MAX_READS:
            break
        spans.extend(_lsa_section(text, header.end() + 1, is_placeholder))
    return spans


def _lsa_section(text: str, pos: int, is_placeholder: NameTest) -> list[Span]:
    """The secrets of the lines under one LSA secret's header: what follows `name:` (or the whole line)."""
    spans: list[Span] = []
    for n, (start, end) in enumerate(_lines(text[pos:])):
        if n >= 16:
            break
        line = text[pos + start : pos + end]
        if _SECTION_END.match(line) or line.startswith("[-]"):
            break
        colon = line.find(":")
        at = colon + 1 if colon >= 0 else len(line) - len(line.lstrip())
        value = line[at:].strip()
        if value and not is_placeholder(value):
            first = pos + start + at + (len(line[at:]) - len(line[at:].lstrip()))
            spans.append((first, first + len(value)))
    return spans


_SASL_RE = re.compile(
    r"[ \t]*(?:\[[^\]\s]+\]|[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+)(?::[0-9]{1,5})?[ \t]+[^\s:/]+:(\S+)[ \t]*"
)
_CHAP_QUOTED = re.compile(r"[ \t]*\"[^\"\n]+\"[ \t]+(?:\*|\"[^\"\n]*\"|\S+)[ \t]+\"([^\"\n]+)\"(?:[ \t]+\S+)*[ \t]*")
_CHAP_BARE = re.compile(r"[ \t]*[A-Za-z0-9_][\w.@\-]*[ \t]+\*[ \t]+(\S+)[ \t]+(?:\*|[0-9][0-9.\-/]*)[ \t]*")
# The user has two characters at least: "C:\\Windows" is a drive and a path.
_USER_SECRET_RE = re.compile(r"[ \t]*[A-Za-z0-9_][\w.@\-\\]{1,63}:([^\s:]{4,})[ \t]*")
_DOVECOT_RE = re.compile(r"[^\s:]{1,64}:\{[A-Za-z0-9.\-]{2,24}\}([^\s:]+)(?::[^\n]*)?")
_DAVFS_RE = re.compile(r"[ \t]*(?:[A-Za-z][A-Za-z0-9+.\-]*://\S+|/\S*)[ \t]+(\S+)[ \t]+(\"[^\"\n]+\"|\S+)[ \t]*")
_NAGIOS_RE = re.compile(r"[ \t]*\$USER[0-9]{1,3}\$[ \t]*=[ \t]*(\S(?:[^\n]*\S)?)[ \t]*")
_IPSEC_RE = re.compile(r"[^\n]*?(?<![^ \t\n]):[ \t]*(?i:psk|eap|xauth|ntlm|pin)[ \t]+(\"[^\"\n]*\"|\S+)")
_DEVICE_RE = re.compile(r"[ \t]*(?:username|enable|user)\b[^\n]*?\b(?:secret|password)[ \t]+[0-9][ \t]+(\S+)")
_COMMENT = re.compile(r"[ \t]*(?:#|;|//)")
# (pattern, group, how the line matches: fullmatch or match, whether the value must look like a
# password): the file layouts one line at a time, the most specific first.
_FILE_LINES: Final = (
    (_DOVECOT_RE, 1, True, False),
    (_NAGIOS_RE, 1, True, False),
    (_IPSEC_RE, 1, False, False),
    (_DEVICE_RE, 1, False, False),
    (_SASL_RE, 1, True, True),
    (_CHAP_QUOTED, 1, True, False),
    (_CHAP_BARE, 1, True, True),
)


def _file_line(text: str, start: int, end: int) -> tuple[str, Span | None] | None:
    """("file", span or None) for a line in a credential file's layout, ("user", span) for user:password; else None."""
    for pattern, group, whole, password in _FILE_LINES:
        m = pattern.fullmatch(text, start, end) if whole else pattern.match(text, start, end)
        if m is None or (password and not password_like(m.group(group))):
            continue
        if pattern is _NAGIOS_RE and m.group(1).startswith("/"):
            return "file", None  # a plugin directory, not a password
        return "file", _unquoted(text, m.span(group))
    m = _DAVFS_RE.fullmatch(text, start, end)
    if m is not None:
        value = _unquoted(text, m.span(2))
        if m.group(2).startswith('"') or password_like(text[value[0] : value[1]]):
            return "file", value
    m = _USER_SECRET_RE.fullmatch(text, start, end)
    if m is not None and password_like(m.group(1)):
        return "user", m.span(1)
    return None


def _unquoted(text: str, span: Span) -> Span:
    """The span without the quotes around it."""
    a, b = span
    if b - a >= 2 and text[a] == text[b - 1] and text[a] in "\"'":
        return a + 1, b - 1
    return a, b


def _file_spans(text: str, is_placeholder: NameTest) -> list[Span]:
    """Passwords of service credential files, each line read in its program's layout."""
    spans: list[Span] = []
    users: list[Span] = []  # user:password lines (see below for when they count)
    other = False
    reads = 0
    for start, end in _lines(text):
        if start == end or not text[start:end].strip() or _COMMENT.match(text, start, end):
            continue
        reads += 1
        if reads > _MAX_READS * 4 or end - start > _MAX_LINE:
            other = True
            break
        found = _file_line(text, start, end)
        if found is None:
            other = True
        elif found[0] == "user" and found[1] is not None:
            users.append(found[1])
        elif found[1] is not None and not is_placeholder(text[found[1][0] : found[1][1]]):
            spans.append(found[1])
    # A user:password file is the whole text, or two accounts at least beside other lines (`echo hi;
    # cat rsyncd.secrets`): one such line among others is as often a tag or a name (app:Release2024).
    if users and (not other or len(users) >= 2):
        spans.extend(users)
    return spans


_AUTH_USER_PASS_RE = re.compile(r"[ \t]*[A-Za-z][\w.@\-]{0,63}[ \t]*\r?\n[ \t]*(\S{6,128})[ \t]*(?:\r?\n)?")


def _auth_user_pass_spans(text: str) -> list[Span]:
    """OpenVPN's auth-user-pass: the whole text is a user line and a password line."""
    m = _AUTH_USER_PASS_RE.fullmatch(text)
    return [m.span(1)] if m is not None and password_like(m.group(1)) else []


_PAIR_NAME = re.compile(r"[A-Za-z_][\w.:\-]{0,63}")
_SNAKE_NAME = re.compile(r"[a-z]+(?:_[a-z0-9]+)+")


def _pair_spans(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """Bare name/value replies one item a line (redis-cli piped): a credential name's value, on the next line.

    The lines are read in pairs from the start of each block of non-blank lines, so a list of names
    one a line ("id, email, password, created_at") hides nothing unless its pairs line up that way
    and the value is no name of the same kind.
    """
    spans: list[Span] = []
    block: list[Span] = []

    def flush() -> None:
        """Read the block's lines two by two."""
        if len(block) < 2 or len(block) % 2:
            return
        for (ka, kb), (va, vb) in zip(block[0::2], block[1::2], strict=True):
            name = text[ka:kb].strip()
            value = text[va:vb].strip()
            if not _PAIR_NAME.fullmatch(name) or not is_name(name):
                continue
            if not value or " " in value or is_placeholder(value) or is_name(value) or _SNAKE_NAME.fullmatch(value):
                continue  # a name ("created_at") is the next name of a list, not a value
            first = va + (len(text[va:vb]) - len(text[va:vb].lstrip()))
            spans.append((first, first + len(value)))

    for reads, (start, end) in enumerate(_lines(text)):
        if reads >= _MAX_READS * 8:
            break
        if not text[start:end].strip():
            flush()
            block = []
        else:
            block.append((start, end))
    flush()
    return spans


def dump_spans(text: str, is_name: NameTest, is_placeholder: NameTest) -> list[Span]:
    """(start, end) of each secret the layouts of this module find in text (the caller passed GATE)."""
    spans = _windows_spans(text, is_placeholder)
    spans.extend(_file_spans(text, is_placeholder))
    spans.extend(_auth_user_pass_spans(text))
    spans.extend(_pair_spans(text, is_name, is_placeholder))
    return spans
