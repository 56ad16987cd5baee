"""Tokens by their shape, not their vendor: prefixed tokens and capability URLs (round eleven, set I).

Ten rounds of prefix lists (ghp_, glpat-, sk_live_...) did not generalise: every red team found a
vendor no list named (Sentry's sntryu_, Brevo's xkeysib-, Fireworks' fw_, Honeycomb's hcaik_,
Octopus's API-, ClickUp's pk_<id>_, LaunchDarkly's sdk-<uuid>), and their bodies (hex, one case)
fail the entropy floor. These readers take the shapes themselves:

- a prefixed token: a short vendor prefix (2-10 letters, any case) glued by `_` or `-` (with an
  optional numeric account part: `pk_34957321_`) to a body of 20+ letters and digits that is no
  word (it holds 2+ digits and is not made of words), or to a UUID when the prefix names a key
  (sdk, mob, key, api, token...). Prefixes of public ids (Stripe's cus_/pi_/evt_, Anthropic's
  msg_/toolu_, OpenAI's call_/chatcmpl-, req_, build-, sha256-...) are the benign filter; a prefix
  glued after another word (`Linux-node-<hash>`, a cache key) or a file name (`main-<hash>.js`) is
  no token.
- hex in groups that are no UUID's (32-8-8: Mailgun's current key), 40+ hex digits in all.
- kubeadm's bootstrap token (6 and 16 lower-case letters and digits apart by a dot) and Airtable's
  legacy key (`key` and 14 mixed characters), two documented layouts with no separator to read.
- a capability URL: a URL whose path holds a token-shaped segment after a segment that names a
  hook or an ingest endpoint (hooks, webhook, build_hooks, deploy_hooks, formatted_webhook, input,
  receiver, intake, ingest, deploy) - there a UUID or a hex run is the capability, not an id - or
  whose query gives a credential-named parameter (code, key, token, sig, secret...) a token-shaped
  value in any alphabet (Azure Functions' `?code=`). Hidden: the token segments to the path's end.

Every reader is linear and bounded (MAX_RUNS candidates per text and reader); GATE is their RE2
prefilter (secret_encodings lists it with its readers).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

import re2

MAX_RUNS: Final = 64
# The kinds these readers report (the scanner lets its views read a text these alone matched).
KINDS: Final = frozenset(
    {
        "prefixed-token",
        "hex-key (grouped)",
        "kubeadm-token",
        "airtable-key",
        "capability-url",
        "capability-url (query)",
        "labelled-token",
    }
)

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_HOOK_WORDS = r"hooks?|webhooks?|inputs?|receiver|intake|ingest|deploy"
_QUERY_NAMES = (
    r"code|k|key|apikey|api_key|api-key|token|access_token|accesstoken|auth|auth_token|authtoken|sig|signature"
    r"|secret|client_secret|private_token|sas|pat|pass|passwd|password|pwd"
)

# RE2 gate: a prefix glued to 20 token characters, a prefix and a UUID, a bootstrap token, an
# Airtable key, a hook word's path segment followed by another one, a credential-named query value.
_SHAPE_GATE = (
    rf"[A-Za-z][_\-](?:[0-9]{{3,12}}[_\-])?[A-Za-z0-9]{{20}}|[A-Za-z][_\-]{_UUID}"
    r"|\b[a-z0-9]{6}\.[a-z0-9]{16}\b|\bkey[A-Za-z0-9]{14}\b|[0-9a-f]{16}-[0-9a-f]{8}"
    rf"|(?i:/[a-z0-9_\-]{{0,24}}(?:{_HOOK_WORDS})/[^\s/?#\"'<>]{{1,80}})"
    rf"|(?i:[?&](?:{_QUERY_NAMES})=)[^&#\s\"'<>]{{20}}"
)

_PREFIXED = re.compile(
    rf"(?<![A-Za-z0-9_\-./+%\\])([A-Za-z]{{2,10}})[_\-](?:([0-9]{{3,12}})[_\-])?({_UUID}|[A-Za-z0-9]{{20,512}})"
    r"((?:-[A-Za-z0-9]{8,64})?)(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])"
)
_BOOTSTRAP = re.compile(r"(?<![A-Za-z0-9_\-./])[a-z0-9]{6}\.[a-z0-9]{16}(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])")
_AIRTABLE = re.compile(r"(?<![A-Za-z0-9_\-./])key[A-Za-z0-9]{14}(?![A-Za-z0-9_\-])")
_UUID_RE = re.compile(_UUID)
# Hex in groups that are no UUID's (8-4-4-4-12): a long first group and 40+ hex digits in all
# (Mailgun's current key, 32-8-8). A UUID is an id; other groupings of random hex are keys.
_HEX_GROUPS = re.compile(r"(?<![0-9A-Za-z\-])[0-9a-f]{16,64}(?:-[0-9a-f]{4,64}){1,4}(?![0-9A-Za-z\-])")
_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}")
_HEX = re.compile(r"[0-9a-fA-F]+")

# Prefixes of public identifiers (objects, requests, messages, builds, digests): their bodies are
# as random as a key's, and they are printed, logged and posted by design.
ID_PREFIXES: Final = frozenset(
    {
        # Stripe's object ids
        "acct", "ba", "card", "ch", "cs", "cus", "dp", "evt", "file", "in", "ii", "link", "pi", "pm", "po",
        "price", "prod", "py", "re", "seti", "si", "src", "sub", "tok", "txn", "tr", "pyr", "ibt", "cbtxn",
        # model and agent APIs' ids
        "msg", "toolu", "call", "chatcmpl", "cmpl", "asst", "thread", "run", "step", "batch", "ft", "ftjob",
        "vs", "resp", "req", "request", "compl", "srvtoolu", "org", "proj", "user", "usr", "team", "ws",
        # ids, digests, builds, caches, content addresses
        "id", "uid", "uuid", "guid", "oid", "obj", "item", "sha", "sha1", "sha256", "sha384", "sha512", "md5",
        "blake", "hash", "commit", "rev", "build", "release", "ver", "version", "cache", "layer", "img",
        "image", "blob", "chunk", "node", "trace", "span", "event", "order", "ord", "inv", "invoice", "cust",
        "customer", "doc", "page", "test", "tmp", "temp", "job", "task", "ticket", "issue", "case",
        "ref", "tx", "txid", "addr", "block", "nonce", "etag", "chan", "channel", "room",
        "device", "dev", "host", "vm", "instance", "vol", "snap", "ami", "sg", "subnet", "vpc", "eni",
        "rtb", "igw", "nat", "acl", "lt", "eipalloc", "eipassoc", "pcx", "tgw", "vpce", "fs", "fsmt",
    }
)  # fmt: skip
# A UUID after these is a key (LaunchDarkly's sdk-/mob-, "key-<uuid>", "token_<uuid>"); after any
# other prefix it is an id.
UUID_KEY_PREFIXES: Final = frozenset(
    {"sdk", "mob", "key", "apikey", "api", "tok", "token", "secret", "sec", "sk", "pk", "auth", "pat", "sa"}
)


def _no_words(body: str) -> bool:
    """True when a body reads as generated characters: 2+ digits, and 1 in 8 digits or at most half of it words."""
    digits = sum(c.isdigit() for c in body)
    if digits < 2 or digits == len(body):
        return False
    if digits * 8 >= len(body):
        return True  # one digit in eight: random base36 or hex has one in three or more, words none
    return sum(len(w) for w in _WORDISH.findall(body)) <= len(body) // 2


def prefixed_token(prefix: str, account: str | None, body: str) -> bool:
    """True for a vendor-prefixed token: no id's prefix, a key's body (a UUID only after a key word)."""
    word = prefix.lower()
    if word in ID_PREFIXES:
        return False
    if _UUID_RE.fullmatch(body):
        return word in UUID_KEY_PREFIXES
    if account is None and len(body) == 40 and _HEX.fullmatch(body):
        return False  # a prefix and a git commit ("fix-<sha>", "pr-<sha>"): a commit is public
    return _no_words(body)


def _located(finder: Any, reader: re.Pattern[str], text: str, back: int) -> Iterator[re.Match[str]]:
    """The reader's matches near the finder's (RE2: one linear pass), at most MAX_RUNS of each.

    Python's regex tries every position of a long text (a megabyte of prose: 0.6 s for the label
    reader); RE2 finds the few candidates, and the reader reads a window around each.
    """
    end = 0
    for n, hit in enumerate(finder.finditer(text)):
        if n >= MAX_RUNS:
            break
        for m in reader.finditer(text, max(end, hit.start() - back), min(len(text), hit.end() + _WINDOW)):
            end = m.end()
            yield m


_WINDOW = 640  # characters read after a candidate's start (a token is at most 512 with its prefix)
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_PREFIX_FIND = re2.compile(rf"[A-Za-z][_\-](?:[0-9]{{3,12}}[_\-])?(?:[A-Za-z0-9]{{20}}|{_UUID})", _RE2_OPTIONS)
_HEX_GROUPS_FIND = re2.compile(r"[0-9a-f]{16}[0-9a-f]*-[0-9a-f]{4}", _RE2_OPTIONS)
_BOOTSTRAP_FIND = re2.compile(r"[a-z0-9]{6}\.[a-z0-9]{16}", _RE2_OPTIONS)
_AIRTABLE_FIND = re2.compile(r"key[A-Za-z0-9]{14}", _RE2_OPTIONS)


def prefixed_hits(text: str) -> list[tuple[str, int, int, str]]:
    """Vendor-prefixed tokens, hex in groups, kubeadm bootstrap tokens and Airtable keys in a text."""
    hits: list[tuple[str, int, int, str]] = []
    for m in _located(_PREFIX_FIND, _PREFIXED, text, 10):
        if prefixed_token(m.group(1), m.group(2), m.group(3)):
            hits.append(("prefixed-token", m.start(), m.end(), m.group(0)))
    for m in _located(_HEX_GROUPS_FIND, _HEX_GROUPS, text, 64):
        digits = m.group(0).replace("-", "")
        if len(digits) >= 40 and _no_words(digits) and sum(c.isalpha() for c in digits) >= 4:
            hits.append(("hex-key (grouped)", m.start(), m.end(), m.group(0)))
    for m in _located(_BOOTSTRAP_FIND, _BOOTSTRAP, text, 0):
        secret = m.group(0)[7:]
        if sum(c.isdigit() for c in secret) >= 2 and sum(c.isalpha() for c in secret) >= 4:
            hits.append(("kubeadm-token", m.start(), m.end(), m.group(0)))
    for m in _located(_AIRTABLE_FIND, _AIRTABLE, text, 0):
        body = m.group(0)[3:]
        if any(c.isdigit() for c in body) and any(c.islower() for c in body) and any(c.isupper() for c in body):
            hits.append(("airtable-key", m.start(), m.end(), m.group(0)))
    return hits


_URL = re.compile(r"(?i)\b(?:https?|wss?)://[^\s\"'<>`\\]{1,2048}")
_URL_FIND = re2.compile(r"(?i)\b(?:https?|wss?)://", _RE2_OPTIONS)
_HOOK_SEGMENT = re.compile(rf"(?i)[a-z0-9_\-]{{0,24}}(?:{_HOOK_WORDS})")
_QUERY_PAIR = re.compile(rf"(?i)[?&]((?:{_QUERY_NAMES}))=([^&#\s\"'<>]{{16,512}})")
_SEGMENT_TOKEN = re.compile(r"[A-Za-z0-9_\-@]{20,512}={0,2}")
_HOOK_DEPTH = 5  # path segments read after a hook word


_SEGMENT_PIECES = re.compile(r"[_\-@]")
_QUERY_TOKEN = re.compile(r"[A-Za-z0-9+/_\-.~=]+")


def token_segment(segment: str) -> bool:
    """True for a path segment that holds a token: 20+ token characters, not a slug of words or a number."""
    if not _SEGMENT_TOKEN.fullmatch(segment):
        return False
    pieces = [p for p in _SEGMENT_PIECES.split(segment.rstrip("=")) if p]
    if len(pieces) >= 2 and all(p.isalpha() or p.isdigit() or len(p) <= 3 for p in pieces):
        return False  # "release-2024-notes-v2", "getting-started": words and numbers
    if segment.isdigit():
        return False
    return any(c.isdigit() for c in segment) and any(c.isalpha() for c in segment)


def query_token(value: str) -> bool:
    """True for a credential-named query parameter's value that is token-shaped (any alphabet)."""
    body = value.rstrip("=").replace("%2B", "+").replace("%2F", "/").replace("%3D", "=")
    if len(body) < 20 or not _QUERY_TOKEN.fullmatch(body):
        return False
    return _no_words(body)


def capability_hits(text: str) -> list[tuple[str, int, int, str]]:
    """Capability URLs: a token segment after a hook word in the path, a token under a key-named query name."""
    hits: list[tuple[str, int, int, str]] = []
    for url in _located(_URL_FIND, _URL, text, 0):
        start = url.start()
        whole = url.group(0)
        path_start = whole.find("/", whole.index("://") + 3)
        if path_start < 0:
            continue
        path_end = len(whole)
        for mark in "?#":
            cut = whole.find(mark, path_start)
            if cut >= 0:
                path_end = min(path_end, cut)
        segments = whole[path_start + 1 : path_end].split("/")
        offset = path_start + 1
        after_hook = -1
        for i, segment in enumerate(segments):
            if after_hook >= 0 and i - after_hook <= _HOOK_DEPTH and token_segment(segment):
                hits.append(("capability-url", start + offset, start + path_end, whole[offset:path_end]))
                break
            if _HOOK_SEGMENT.fullmatch(segment):
                after_hook = i
            offset += len(segment) + 1
        for pair in _QUERY_PAIR.finditer(whole, path_end):
            if query_token(pair.group(2)):
                hits.append(("capability-url (query)", start + pair.start(2), start + pair.end(2), pair.group(2)))
    return hits


# "Token", "key", "access key" and "secret" in other languages (English is read by the scanner's
# service-key and assignment shapes): a token-shaped value a few words after one is the credential.
# Latin-script words as the scanner's normalisation leaves them (accents dropped) and as written.
_LATIN_LABELS: Final = (
    "jeton", "cle", "clé", "clef", "clave", "chave", "chiave", "gettone", "schlussel", "schlüssel",
    "zugangsschlussel", "zugangsschlüssel", "sleutel", "toegangssleutel", "klucz", "nyckel", "nogle",
    "nøgle", "nokkel", "nøkkel", "avain", "klic", "klíč", "kulcs", "cheie", "anahtar", "kunci", "khoa",
    "khóa", "belirtec", "belirteç", "токен", "ключ", "ключа", "κλειδί", "κλειδι", "διακριτικό",
    # as the scanner's normalisation leaves them (look-alike letters folded to Latin)
    "k\u03bb\u03b5\u03b9\u03b4\u03b9",
    "\u03b4\u03b9ak\u03c1\u03b9\u03c4\u03b9ko",
    "\u043a\u043b\u044e\u0447a",
    "\u0442o\u043ae\u043d",
)  # fmt: skip
_SCRIPT_LABELS: Final = (
    "令牌", "密钥", "秘钥", "金鑰", "密鑰", "トークン", "キー", "鍵", "토큰", "키", "مفتاح", "رمز", "टोकन", "कुंजी",
    # normalised: Hangul decomposed, vowel signs dropped
    "\u0915\u091c\u0940",
    "\u110f\u1175",
    "\u1110\u1169\u110f\u1173\u11ab",
)  # fmt: skip
# Labels that start with an ASCII letter start a word ("cle" in "Vehicle" is none; RE2's \b is ASCII's).
_ASCII_HEADED = [w for w in _LATIN_LABELS if w[0].isascii()]
_OTHER_HEADED = [w for w in (*_LATIN_LABELS, *_SCRIPT_LABELS) if not w[0].isascii()]
_LABEL_GATE = rf"(?i:\b(?:{'|'.join(_ASCII_HEADED)})|{'|'.join(_OTHER_HEADED)})[^\n]{{0,24}}[A-Za-z0-9]{{20}}"
_LABELLED = re.compile(
    rf"(?i)(?:(?<![^\W\d_])(?:{'|'.join(_LATIN_LABELS)})(?![^\W\d_])|{'|'.join(_SCRIPT_LABELS)})"
    r"[^\n]{0,24}?(?<![A-Za-z0-9_\-])([A-Za-z0-9_\-]{20,256})(?![A-Za-z0-9_\-])"
)


_LABEL_FIND = re2.compile(_LABEL_GATE, _RE2_OPTIONS)
# The RE2 gate of every reader here (secret_encodings lists it with its own readers).
GATE: Final = f"{_SHAPE_GATE}|{_LABEL_GATE}"


def labelled_hits(text: str) -> list[tuple[str, int, int, str]]:
    """Token-shaped values a few characters after a foreign word for token, key or secret."""
    found: list[tuple[str, int, int, str]] = []
    for m in _located(_LABEL_FIND, _LABELLED, text, 0):
        value = m.group(1)
        if _UUID_RE.fullmatch(value) or _no_words(value.replace("-", "").replace("_", "")):
            found.append(("labelled-token", m.start(1), m.end(1), value))
    return found


# Round eleven (set I): a custom header ("x-honeycomb-team", "x-cf-global") names its vendor, not
# the credential, and glued names ("userkey", "apptoken") hide the credential word inside one
# word. Under either, a token-shaped value is the credential; ids, traces and versions are not.
_NAME_PIECES = re.compile(r"[A-Za-z0-9]+")
_NOT_CREDENTIAL_HEADER: Final = frozenset(
    {
        "request", "trace", "span", "correlation", "delivery", "event", "version", "type", "etag", "cache",
        "checksum", "hash", "signature", "sig", "digest", "forwarded", "real", "ip", "host", "agent",
        "content", "length", "encoding", "language", "ratelimit", "rate", "limit", "remaining", "reset",
        "parent", "sampled", "sampling", "context", "timestamp", "time", "date", "region", "zone", "cloud",
        "cdn", "served", "powered", "frame", "xss", "origin", "referrer", "debug", "build", "commit", "sha",
        "idempotency", "dedup", "dedupe", "nonce", "lock", "routing", "partition", "sort", "primary", "foreign",
        "public", "pub", "pubkey", "publickey",
    }
)  # fmt: skip
_GLUED_ENDINGS = ("key", "token", "secret")
_WORDS_ENDING_KEY: Final = frozenset({"monkey", "turkey", "donkey", "hockey", "whiskey", "jockey", "hotkey", "passkey"})
_TOKEN_VALUE = re.compile(r"[A-Za-z0-9_\-]{20,130}")


def credential_name(name: str) -> bool:
    """True for a custom header (x-vendor-word, no id word) or a glued name ending in key, token or secret."""
    words = [w.lower() for w in _NAME_PIECES.findall(name[:64])]
    if not words:
        return False
    if words[0] == "x" and len(words) >= 2:
        return not any(w in _NOT_CREDENTIAL_HEADER or w.endswith("id") or w.endswith("ids") for w in words[1:])
    last = words[-1]
    if not last.endswith(_GLUED_ENDINGS) or last in _GLUED_ENDINGS or last in _WORDS_ENDING_KEY:
        return False
    stem = last[: -len(next(e for e in _GLUED_ENDINGS if last.endswith(e)))]
    return not any(w in _NOT_CREDENTIAL_HEADER for w in (*words[:-1], stem)) and not stem.startswith("pub")


def token_value(value: str) -> bool:
    """True for a token-shaped value: 20-130 token characters, no words."""
    return bool(_TOKEN_VALUE.fullmatch(value)) and _no_words(value.replace("-", ""))


def named_token(name: str, value: str) -> bool:
    """True for a token-shaped value under credential_name's names."""
    return token_value(value) and credential_name(name)


def hits(text: str) -> list[tuple[str, int, int, str]]:
    """Every token this module reads in a text."""
    return prefixed_hits(text) + capability_hits(text) + labelled_hits(text)
