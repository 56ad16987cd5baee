"""Positive shapes of the benign values the secret readers exempt (round eleven, set J).

Every exemption here holds only when the WHOLE value is the benign thing: a template is made of
template words, a code reference names a credential, a store reference is a scheme and a path, an
option says how there is no password, a public block is complete and well-formed. Set J hid
passwords behind one template word ("velvet-sample-orbit-canyon"), a credential stem inside a word
("monkey_business_forever": key), an unclosed bracket ("Xk9mP2(vL7qRt"), a leading "--"
("--velvet-canyon-orbit"), a store's scheme ("vault:Tangerine88Harbor") and an armor header
("-----BEGIN CERTIFICATE-----" over 44 random characters): each is now read as the secret it is.
"""

import base64
import binascii
import re
import zlib
from typing import Final

# The words a code reference names a credential by (whole words of the identifier, not stems:
# "monkey" holds "key", "passion" holds "pass", "tokens_of_amber_light" holds "token").
CODE_CREDENTIAL_WORDS: Final = frozenset(
    {
        "password", "passwd", "pass", "pwd", "pw", "passphrase", "passcode", "secret", "secrets", "token",
        "key", "apikey", "auth", "credential", "credentials", "cred", "creds", "cookie", "session", "psk",
        "pin", "otp", "jwt", "bearer", "hash",
    }
)  # fmt: skip
# A word after the credential's in a variable's name: password_input, token_value, key_file.
_QUALIFIERS: Final = frozenset(
    {
        "input", "value", "val", "env", "var", "file", "path", "str", "string", "raw", "plain", "bytes",
        "b64", "hex", "text", "field", "hash", "hashed", "digest", "encoded", "encrypted", "ref", "name", "id",
        "arg", "param", "data", "obj", "config", "cfg", "prompt", "source", "src", "fn", "func",
    }
)  # fmt: skip
# Objects a dotted code reference starts from (settings.X, self.x, os.environ.x, process.env.X).
_CODE_OBJECTS: Final = frozenset(
    {
        "self", "this", "cls", "settings", "config", "conf", "cfg", "os", "env", "environ", "process", "args",
        "opts", "options", "params", "request", "req", "ctx", "context", "secrets", "vars", "app", "form",
        "kwargs", "props", "state", "inputs", "input", "values", "user", "creds", "credentials", "auth",
        "cli", "flags", "parsed", "cmd", "data", "payload", "body", "session", "module", "exports", "window",
        "import", "meta", "runtime", "globals", "local", "locals", "instance", "obj", "item", "record", "row",
        "account", "client", "conn", "connection", "db", "database", "ENV", "Rails", "System", "Environment",
    }
)  # fmt: skip
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_CALL = re.compile(r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)([(\[])")
_CLASS_CHANGES = re.compile(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")
_CLOSERS: Final = {"(": ")", "[": "]"}
_ARGUMENT = re.compile(r"[\w.$]+")  # one plain argument or index: token_urlsafe(32), row[key], get(self.name)


def name_words(name: str) -> list[str]:
    """The lower-case words of an identifier: snake_case, camelCase, dots and digits split."""
    return [w.lower() for w in _NAME_WORDS.findall(name)]


def _names_credential(name: str) -> bool:
    """True when an identifier's last word is a credential word, or a credential word and a qualifier."""
    words = name_words(name)
    if not words:
        return False
    if words[-1] in CODE_CREDENTIAL_WORDS:
        return True
    return len(words) >= 2 and words[-2] in CODE_CREDENTIAL_WORDS and words[-1] in _QUALIFIERS


def _code_name(name: str) -> bool:
    """True for a callee's name as code writes it: each part at most two changes between letters and digits."""
    return all(len(_CLASS_CHANGES.findall(part)) <= 2 for part in name.split("."))


def code_reference(word: str, after: str = "", *, calls_only: bool = False) -> bool:
    """True when a value's first word IS a code reference: a closed call or subscript, or a name of a credential.

    `after` is the character that ended the word in the text (a quote or a closing bracket closes
    a call the word opened: `getenv("X")` reads as `getenv(`). An unclosed bracket inside a word
    ("Xk9mP2(vL7qRt") is a generated password's symbol, not code. `calls_only`: only a call or a
    subscript counts (after a dict's or an object's ":").
    """
    call = _CALL.match(word)
    if call is not None:
        rest = word[call.end() :]
        closer = _CLOSERS[call.group(2)]
        if not _code_name(call.group(1)):
            return False
        if not rest:
            return after[:1] in ("'", '"', "`", closer) or not after
        if rest.endswith("=") and _IDENTIFIER.fullmatch(rest[:-1]):
            return after[:1] in ("'", '"', "`")  # a keyword argument's quoted value: get_token(scope='read')
        return after[:1] == closer and _ARGUMENT.fullmatch(rest) is not None
    if calls_only:
        return False  # after ":" a bare name is a YAML value ("password: new_password"), a call is code
    if not _code_name(word):
        return False  # "Xy7kL9mQ2pw" ends in "pw" when split, but no name is written so
    if _DOTTED.fullmatch(word):
        parts = word.split(".")
        return parts[0] in _CODE_OBJECTS or any(_names_credential(p) for p in parts)
    if _IDENTIFIER.fullmatch(word) and ("_" in word or word.isupper() or word != word.lower()):
        return _names_credential(word)
    return False


def bare_name(word: str) -> bool:
    """True for a name alone: no dot, no call, no subscript (what a shell assignment takes as a literal)."""
    return _IDENTIFIER.fullmatch(word) is not None and "$" not in word


# Template words: a value made of them describes the secret ("your-api-key-here", "replace_me").
TEMPLATE_MARKERS: Final = frozenset(
    {"your", "here", "replace", "insert", "placeholder", "example", "sample", "dummy", "todo", "fixme"}
)
_TEMPLATE_VOCABULARY: Final = TEMPLATE_MARKERS | frozenset(
    {
        "me", "my", "the", "a", "an", "this", "goes", "put", "enter", "real", "actual", "own", "new", "some",
        "with", "of", "for", "to", "change", "default", "generated", "fake", "test", "xxx", "tbd", "value",
        "string", "api", "key", "token", "secret", "password", "pass", "passwd", "pwd", "passphrase", "access",
        "client", "id", "auth", "credential", "credentials", "user", "username", "name", "app", "db",
        "database", "service", "account", "private", "public", "signing", "webhook", "bot", "session",
        "cookie", "url", "host", "email", "project", "org", "team", "site", "server", "admin", "root", "bearer",
        "jwt", "oauth", "hook", "smtp", "ssh", "aws", "s3", "gcp", "azure", "github", "gitlab", "slack",
        "stripe", "openai", "sendgrid", "twilio", "personal", "pat", "live", "prod", "dev", "staging",
    }
)  # fmt: skip
_TEMPLATE_SHAPE = re.compile(r"(?i)[a-z]+(?:[_\-. ][a-z]+)*")
_MARKER = re.compile("(?i)" + "|".join(sorted(TEMPLATE_MARKERS)))


def template_words(text: str) -> bool:
    """True when the whole value is a description in template words: a marker, and at most one other word."""
    if len(text) > 96 or _MARKER.search(text) is None or _TEMPLATE_SHAPE.fullmatch(text) is None:
        return False  # (the marker first: one search, and most values hold none)
    words = name_words(text)
    if not TEMPLATE_MARKERS.intersection(words):
        return False
    others = sum(word not in _TEMPLATE_VOCABULARY for word in words)
    return others == 0 or (others == 1 and len(words) >= 3)


# Long options that say how there is no password, or where it comes from: Kickstart's rootpw
# --lock / --iscrypted / --plaintext, passwd --stdin, docker login --password-stdin.
NO_PASSWORD_OPTIONS: Final = frozenset(
    {
        "lock", "locked", "iscrypted", "plaintext", "stdin", "password-stdin", "passphrase-stdin",
        "password-file", "passfile", "prompt", "ask", "askpass", "ask-pass", "no-password", "nopassword",
        "empty", "none", "disabled", "disable", "interactive", "from-env", "from-file", "env", "file",
        "random", "generate", "unset", "crypted", "encrypted", "hashed", "allow-ssh", "expire", "delete",
    }
)  # fmt: skip
_OPTIONS_VALUE = re.compile(r"--([a-z]+(?:-[a-z]+)*)(?:[ \t]+--([a-z]+(?:-[a-z]+)*))*")


def no_password_option(text: str) -> bool:
    """True when the whole value is one or more known long options (`--lock`, `--iscrypted --lock`)."""
    if _OPTIONS_VALUE.fullmatch(text) is None:
        return False
    return all(part[2:] in NO_PASSWORD_OPTIONS for part in text.split())


# References to a secret store, by each store's own reference syntax: 1Password's
# op://vault/item[/section]/field, Vault's vault:path/to/secret[#key] (the path has a folder),
# an AWS Secrets Manager ARN (partition, region, 12-digit account, secret:name).
_STORE_REFERENCE = re.compile(
    r"op://[^/\s]+(?:/[^/\s]+){1,3}"
    r"|vault:(?://)?[\w.\-]+(?:/[\w.\-]+)+(?:#[\w.\-]+)?"
    r"|arn:aws[\w-]*:secretsmanager:[a-z]{2}(?:-[a-z]+)+-[0-9]:[0-9]{12}:secret:[\w/+=.@\-]+"
)
_SEGMENTS = re.compile(r"[^/:#\s]+")


def _secret_shaped(segment: str) -> bool:
    """True for a path segment shaped like a password: upper, lower and digits mixed, or letters-digits-letters."""
    if len(segment) < 8:
        return False
    upper = any(c.isupper() for c in segment)
    mixed = upper and any(c.islower() for c in segment) and any(c.isdigit() for c in segment)
    return mixed or len(_CLASS_CHANGES.findall(segment)) >= 2


def store_reference(text: str) -> bool:
    """True when the whole value is a secret store's reference with nothing secret-shaped in its path."""
    if not text.startswith(("op:", "vault:", "arn:")) or len(text) > 256 or _STORE_REFERENCE.fullmatch(text) is None:
        return False
    body = text.split(":", 1)[1]
    if text.startswith("arn:"):
        body = text.split(":secret:", 1)[1]
    return not any(_secret_shaped(segment) for segment in _SEGMENTS.findall(body))


# Armored public material, complete: BEGIN and the same label's END, base64 lines between (PGP's
# header lines and checksum aside), and a body that decodes to what the label says: DER (a
# SEQUENCE, 0x30) for certificates, keys, requests, CRLs and PKCS #7; an OpenPGP packet (high bit
# set) for PGP blocks; the SSHSIG magic for SSH signatures.
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN ((?:RSA |EC |DSA |SSH2 )?PUBLIC KEY|(?:TRUSTED |X509 )?CERTIFICATE(?: REQUEST)?"
    r"|NEW CERTIFICATE REQUEST|X509 CRL|PGP PUBLIC KEY BLOCK|PGP SIGNATURE|PKCS7|SSH SIGNATURE)-----"
)
_ARMOR_HEADER = re.compile(r"[A-Za-z][A-Za-z\-]*: .*")
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_MAX_BLOCK = 1 << 16


def _well_formed(label: str, body: str) -> bool:
    """True when an armored block's body is base64 that decodes to the structure its label names."""
    lines = [line.strip() for line in body.replace("\\n", "\n").splitlines()]
    lines = [line for line in lines if line]
    if label.startswith("PGP"):
        lines = [line for line in lines if not _ARMOR_HEADER.fullmatch(line)]
        if lines and lines[-1].startswith("=") and len(lines[-1]) == 5:
            lines = lines[:-1]  # the CRC-24 checksum line
    if not lines or not all(_BASE64_LINE.fullmatch(line) for line in lines):
        return False
    data = "".join(lines)
    try:
        head = base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    if not head:
        return False
    if label == "SSH SIGNATURE":
        return head.startswith(b"SSHSIG")
    if label.startswith("PGP"):
        return _pgp_packet(head)
    # DER: a SEQUENCE in the long length form whose first element is a SEQUENCE, an INTEGER or an
    # OID (a certificate's tbsCertificate, a key's AlgorithmIdentifier, PKCS #7's contentType).
    offset = _der_header(head)
    return head[0] == 0x30 and 0 < offset < len(head) and head[offset] in (0x02, 0x06, 0x30, 0xA0)


def _der_header(data: bytes) -> int:
    """Where a DER value's content starts after its tag and long-form length (0 when it has no such header)."""
    if len(data) < 2 or data[1] < 0x81:
        return 0
    count = data[1] & 0x7F
    return 2 + count if count <= 4 else 0


def _pgp_packet(data: bytes) -> bool:
    """True when the data opens with an OpenPGP key or signature packet: its tag, its length, version 3 to 6."""
    if len(data) < 3 or not data[0] & 0x80:
        return False
    if data[0] & 0x40:  # new format: the tag in the low six bits, one, two or five length octets
        tag = data[0] & 0x3F
        first = data[1]
        offset = 2 if first < 192 else 3 if first < 224 else 6
    else:  # old format: the tag in bits 2-5, the length's size in the low two bits
        tag = (data[0] >> 2) & 0x0F
        offset = 1 + (1, 2, 4, 0)[data[0] & 3]
    return tag in (2, 4, 6, 14) and offset < len(data) and data[offset] in (3, 4, 5, 6)


def public_block_spans(text: str) -> list[tuple[int, int]]:
    """Spans of complete, well-formed armored public blocks, from BEGIN to the end of the END line."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while (match := _PUBLIC_BLOCK.search(text, pos)) is not None:
        label = match.group(1)
        end_marker = f"-----END {label}-----"
        end = text.find(end_marker, match.end(), match.end() + _MAX_BLOCK)
        if end < 0:
            pos = match.end()  # no END: not a public block, its lines are read
            continue
        if _well_formed(label, text[match.end() : end]):
            spans.append((match.start(), end + len(end_marker)))
        pos = end + len(end_marker)
    return spans


# A passphrase of plain words under an environment variable's name ("BORG_PASSPHRASE=correct horse
# battery staple", "RESTIC_PASSWORD: purple monkey dishwasher gravel", "The VAULT_UNSEAL_PASSPHRASE
# is seven lanterns over harbor"): a variable named for a password holds it, whatever its shape.
# Prose about the variable ("BORG_PASSPHRASE is read from the environment", "RESTIC_PASSWORD: see
# the vault entry") starts with a status or prose word or holds an article, a pronoun or an auxiliary.
_ENV_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Z][A-Z0-9]{3,}")
PASSPHRASE_NAME_WORDS: Final = frozenset(
    {"password", "passwd", "pass", "pwd", "passphrase", "phrase", "passcode", "psk", "secret", "pw"}
)
_PROSE_STARTS: Final = frozenset(
    {
        "read", "never", "not", "no", "optional", "required", "mandatory", "needed", "used", "loaded", "passed",
        "given", "kept", "taken", "rotated", "exported", "defined", "available", "now", "still", "only",
        "also", "ask", "use", "see", "set", "unset", "managed", "generated", "provided", "supplied", "stored",
        "saved", "empty", "missing", "blank", "ignored", "deprecated", "renamed", "removed", "changed", "reset",
        "always", "usually", "sometimes", "often", "like", "same", "different", "longer", "shorter", "at",
        "in", "on", "from", "to", "for", "by", "with", "via", "here", "there", "below", "above", "enter",
        "click", "please", "check", "contact", "type", "paste", "fill", "put", "leave", "keep", "do", "must",
        "should", "will", "can", "may", "too", "less", "more", "exactly", "case", "sensitive", "hidden",
        "encrypted", "hashed", "masked", "redacted", "none", "null", "true", "false", "yes", "ok", "valid",
        "invalid", "wrong", "incorrect", "expired", "weak", "strong", "secure", "insecure", "unknown",
    }
)  # fmt: skip
_PROSE_MARKERS: Final = frozenset(
    {
        "the", "a", "an", "it", "its", "this", "that", "these", "those", "when", "if", "unless", "because",
        "be", "been", "being", "is", "are", "was", "were", "has", "have", "had", "should", "must", "will",
        "would", "can", "could", "may", "might", "not", "never", "no", "your", "our", "their", "my", "his",
        "her", "we", "you", "they", "i", "he", "she", "them", "us", "me", "from", "at", "by", "via", "using",
        "into", "before", "after", "until", "while", "which", "who", "where", "what", "how", "please", "than",
        "variable", "environment", "env", "file", "value", "set", "read", "see", "ask", "use",
    }
)  # fmt: skip
_PLAIN_WORDS = re.compile(r"[ \t]*([A-Za-z][a-z]{1,19})(?=[ \t.,;:!?)'\"`\r\n]|$)")
_CLAUSE_END = re.compile(r"[ \t]*(?:[.;!?,)'\"`]|\r?\n|$)")


def env_passphrase(key: str, text: str, start: int) -> tuple[int, int] | None:
    """The span of 3 to 8 plain words at `start` ending their clause, under a password variable's name."""
    name = key.split()[-1].strip("\"'`$") if key.split() else ""
    if (
        not _ENV_NAME.fullmatch(name)
        or name_words(name)[-1:] == []
        or name_words(name)[-1] not in PASSPHRASE_NAME_WORDS
    ):
        return None
    words: list[re.Match[str]] = []
    pos = start
    while len(words) <= 8 and (match := _PLAIN_WORDS.match(text, pos)) is not None:
        words.append(match)
        pos = match.end()
    if not 3 <= len(words) <= 8 or _CLAUSE_END.match(text, pos) is None:
        return None
    lowered = [match.group(1).lower() for match in words]
    if lowered[0] in _PROSE_STARTS or _PROSE_MARKERS.intersection(lowered):
        return None
    return words[0].start(1), words[-1].end(1)


# Hosts whose URLs carry public document and media ids (a Google Doc's 44 characters, a Drive
# file's 33, an Imgur album's): a generated-looking run in such a URL is the document's name. On
# any other host a run the high-entropy rule calls a key elsewhere is one in a URL too (round
# eleven: a 40-character key in a path, a fragment or an unnamed parameter left with the request).
PUBLIC_ID_HOSTS: Final = (
    "google.com", "googleapis.com", "googleusercontent.com", "youtube.com", "youtu.be", "figma.com",
    "imgur.com", "github.com", "githubusercontent.com", "gitlab.com", "bitbucket.org", "codesandbox.io",
    "notion.so", "notion.site", "dropbox.com", "box.com", "onedrive.live.com", "1drv.ms", "sharepoint.com",
    "miro.com", "airtable.com", "loom.com", "vimeo.com", "canva.com", "codepen.io", "jsfiddle.net",
    "replit.com", "colab.research.google.com", "kaggle.com", "huggingface.co", "archive.org",
)  # fmt: skip
_URL_HOST = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://(?:[^/?#@\s]*@)?([^/?#:\s]+)(?::[0-9]{1,5})?")
# Round thirteen (set K): the first scheme://host of the word decided, so a proxy that fetches
# another URL (web.archive.org/save/<url>, translate.google.com/?u=<url>, docs.google.com/viewer?url=)
# or a decoy "x://google.com/" carried a key to any receiver. A public host now exempts a run only
# in its own layout: an http(s) URL, the run in the path and not its first segment (a document id
# follows a word: /d/<id>, /file/d/<id>, /blob/<sha>) or the value of an id parameter (?v=, ?id=),
# and nothing between the host and the run names another place (a scheme, a host, an encoded URL).
_ID_PARAMETERS: Final = frozenset({"v", "id", "list", "docid", "fileid"})
_LONG_SEGMENT = 20  # a segment this long is an id or a key, not a folder's name
_URL_PARTS = re.compile(r"[/?&#=;]")
_URL_PARAMETERS = re.compile(r"[?&#;]")
_NESTED_PLACE = re.compile(r"(?i)://|%3a%2f|%2f%2f|:/|(?:^|[/=?&#.])[a-z0-9\-]+\.[a-z]{2,}(?::[0-9]+)?(?:/|$)")


def public_id_url(url: str, run_start: int | None = None) -> bool:
    """True when the run at url[run_start:] (its last segment by default) is in a public host's id layout."""
    match = _URL_HOST.search(url)
    if match is None or match.group(1).lower() not in ("http", "https"):
        return False
    host = match.group(2).lower().rstrip(".")
    if not any(host == suffix or host.endswith("." + suffix) for suffix in PUBLIC_ID_HOSTS):
        return False
    start = max(url.rfind("/") + 1 if run_start is None else run_start, match.end())
    # A run in a path holds its folders ("/document/d/<id>/edit"): one segment of it is the id, and
    # a second long one beside it is no part of the layout (a key after the document's id).
    segments = url[start:].split("/")
    long = [n for n, part in enumerate(segments) if len(part) >= _LONG_SEGMENT] or [len(segments) - 1]
    if len(long) > 1:
        return False
    start += sum(len(part) + 1 for part in segments[: long[0]])
    between = url[match.end() : start]
    if _NESTED_PLACE.search(between) or any(len(part) >= _LONG_SEGMENT for part in _URL_PARTS.split(between)):
        return False
    if "?" in between or "#" in between:
        name = _URL_PARAMETERS.split(between)[-1]
        return name.endswith("=") and name[:-1].lower() in _ID_PARAMETERS
    return between.startswith("/") and len([part for part in between.split("/") if part]) >= 1


# --- digests named by their algorithm ------------------------------------------------------------
# Round thirteen (set K): a label ("sha256:", "h1:", "md5=") or an SRI prefix ("sha512-") voided any
# run after it, so a key went out behind four characters. A label now holds only for a payload of
# exactly its algorithm's size, in hex or in base64 (unpadded: exactly; padded: within two characters,
# as hand-written lock files have them), and nothing glued on: a 40-character key is no SHA-256
# (64 hex, 43 base64), nor an MD5 (32, 22).
_DIGEST_BYTES: Final = {
    "md5": (16,), "sha1": (20,), "sha224": (28,), "sha256": (32,), "sha384": (48,), "sha512": (64,),
    "blake2b": (32, 64), "blake2s": (32,), "blake3": (32,), "h1": (32,),
}  # fmt: skip
_DIGEST_LABEL = re.compile(
    r"(?i)(?:(?<![A-Za-z0-9])(h1)|(sha1|sha224|sha256|sha384|sha512|md5|blake2[bs]|blake3))[:=]$"
)
_BASE64_LABELLED: Final = frozenset({"h1", "sha256", "sha384", "sha512"})  # OCI, go.sum, HTTP's Digest
_SRI = re.compile(r"(?i)(sha1|sha256|sha384|sha512|md5)-")
_HEX_DIGEST = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_BASE64_BODY = re.compile(r"[A-Za-z0-9+/]+|[A-Za-z0-9_\-]+")


def digest_payload(text: str, start: int, token: str) -> tuple[str, str] | None:
    """(algorithm, payload) when a digest's label stands before the run or an SRI prefix starts it, else None."""
    sri = _SRI.match(token)
    if sri is not None:
        return sri.group(1).lower(), token[sri.end() :]
    label = _DIGEST_LABEL.search(text, max(0, start - 8), start)
    if label is None:
        return None
    algorithm = (label.group(1) or label.group(2)).lower()
    # After a label, MD5, SHA-1, SHA-224 and BLAKE digests are printed in hex (md5sum, b3sum):
    # base64 of their size after one is a key of that length.
    return algorithm if algorithm in _BASE64_LABELLED else algorithm + ":hex", token


def exact_digest(algorithm: str, payload: str) -> bool:
    """True when the payload is exactly one digest of the algorithm: hex of its size, or base64 of it."""
    algorithm, _, only = algorithm.partition(":")
    sizes = _DIGEST_BYTES.get(algorithm, ())
    if algorithm != "h1" and len(payload) in {2 * n for n in sizes} and _HEX_DIGEST.fullmatch(payload):
        return True
    body = payload.rstrip("=")
    if only == "hex":
        return False
    if len(payload) - len(body) > 2 or not _BASE64_BODY.fullmatch(body):
        return False
    lengths = {-(-4 * n // 3) for n in sizes}  # unpadded base64 of n bytes
    if body == payload:
        return len(body) in lengths
    # Padded: hand-written lock files and docs pad a digest a character or two off its length (a
    # key with "=" glued on is one of those lengths still: within two of a digest's).
    return any(abs(len(body) - n) <= 2 for n in lengths)


def labelled_digest(text: str, start: int, token: str) -> bool:
    """True when the run at text[start:] is a labelled digest of exactly its algorithm's size."""
    found = digest_payload(text, start, token)
    return found is not None and exact_digest(*found)


# --- media in data: URIs -------------------------------------------------------------------------
# Round thirteen (set K): any run after "base64," was read as a data: URI's content, so a key went
# out behind eight characters. A data: URI's payload is exempt only when its bytes are the media
# its type declares, checked by their own structure: PNG's chunks and their CRCs, GIF's blocks to
# its trailer, JPEG's segments to its end marker, the RIFF, BMP and WOFF sizes. Text types need no
# exemption: base64 of text is decoded and read (a random key decodes to no text).
_DATA_URI = re.compile(r"(?i)data:([a-z]+/[a-z0-9.+\-]+)(?:;[a-z0-9.\-]+=[^;,\s\"']*)*;base64,$")
_MAX_MEDIA_TYPE = 120  # characters before "base64," searched for "data:<type>"


def _png(data: bytes) -> bool:
    """True for a whole PNG: the signature, then chunks whose CRCs hold, to IEND at the end."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    pos = 8
    while pos + 12 <= len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        end = pos + 12 + length
        if not kind.isalpha() or end > len(data):
            return False
        if zlib.crc32(data[pos + 4 : end - 4]) != int.from_bytes(data[end - 4 : end], "big"):
            return False
        if kind == b"IEND":
            return end == len(data)
        pos = end
    return False


def _gif_sub_blocks(data: bytes, pos: int) -> int:
    """The position after a GIF's sub-blocks starting at pos (-1 when they run past the data)."""
    while pos < len(data):
        size = data[pos]
        pos += 1 + size
        if size == 0:
            return pos
    return -1


def _gif(data: bytes) -> bool:
    """True for a whole GIF: the header, its color table, then extension and image blocks to the trailer."""
    if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 14:
        return False
    pos = 13 + (3 << ((data[10] & 7) + 1) if data[10] & 0x80 else 0)
    while 0 <= pos < len(data):
        block = data[pos]
        if block == 0x3B:
            return pos + 1 == len(data)
        if block == 0x21 and pos + 1 < len(data):
            pos = _gif_sub_blocks(data, pos + 2)
        elif block == 0x2C and pos + 10 < len(data):
            flags = data[pos + 9]
            pos += 10 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0) + 1  # descriptor, table, LZW size
            pos = _gif_sub_blocks(data, pos)
        else:
            return False
    return False


def _jpeg(data: bytes) -> bool:
    """True for a whole JPEG: SOI, then marker segments of their lengths to the scan, ending at EOI."""
    if data[:3] != b"\xff\xd8\xff" or data[-2:] != b"\xff\xd9":
        return False
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker == 0xDA:
            return True  # the scan: entropy-coded data to the EOI checked above
        pos += 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
    return False


def _sized(data: bytes) -> bool:
    """True for RIFF (WebP), BMP and WOFF files whose header states their whole length."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return int.from_bytes(data[4:8], "little") + 8 == len(data)
    if data[:2] == b"BM" and len(data) >= 14:
        return int.from_bytes(data[2:6], "little") == len(data)
    if data[:4] in (b"wOFF", b"wOF2") and len(data) >= 12:
        return int.from_bytes(data[8:12], "big") == len(data)
    return False


def _icon(data: bytes) -> bool:
    """True for an ICO file: its directory's entries point inside the data and cover it to the end."""
    count = int.from_bytes(data[4:6], "little")
    if data[:4] != b"\x00\x00\x01\x00" or not 1 <= count <= 16 or len(data) < 6 + 16 * count:
        return False
    ends = []
    for entry in range(6, 6 + 16 * count, 16):
        size = int.from_bytes(data[entry + 8 : entry + 12], "little")
        offset = int.from_bytes(data[entry + 12 : entry + 16], "little")
        ends.append(offset + size)
        if offset < 6 + 16 * count:
            return False
    return max(ends) == len(data)


_MEDIA_CHECKS: Final = {
    "image/png": _png, "image/apng": _png, "image/gif": _gif, "image/jpeg": _jpeg, "image/jpg": _jpeg,
    "image/pjpeg": _jpeg, "image/webp": _sized, "image/bmp": _sized, "font/woff": _sized, "font/woff2": _sized,
    "application/font-woff": _sized, "image/x-icon": _icon, "image/vnd.microsoft.icon": _icon,
}  # fmt: skip


def media_data_uri(text: str, start: int, token: str) -> bool:
    """True when the run at text[start:] is a data: URI's payload whose bytes are the media its type declares."""
    match = _DATA_URI.search(text, max(0, start - _MAX_MEDIA_TYPE), start)
    if match is None:
        return False
    check = _MEDIA_CHECKS.get(match.group(1).lower())
    body = token.rstrip("=").replace("-", "+").replace("_", "/")
    if check is None or len(body) % 4 == 1:
        return False
    try:
        data = binascii.a2b_base64(body + "=" * (-len(body) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return False
    return check(data)


_DICEWARE = re.compile(r"[A-Za-z]{3,12}(?:([-_.])[A-Za-z]{3,12})(?:\1[A-Za-z]{3,12}){1,6}")


def diceware(word: str) -> bool:
    """True for a diceware passphrase in one word: 3 to 8 words of letters, one separator, no prose or template."""
    if _DICEWARE.fullmatch(word) is None or template_words(word):
        return False
    words = name_words(word)
    return not (_GLUE_WORDS.intersection(words) or _PROSE_STARTS.intersection(words[:1]))


# Articles, auxiliaries and pronouns that make joined words a phrase ("see-the-docs", "is-not-set").
_GLUE_WORDS: Final = frozenset(
    {"the", "a", "an", "is", "are", "was", "were", "be", "been", "has", "have", "had", "will", "would",
     "should", "must", "can", "could", "not", "no", "it", "this", "that", "in", "on", "at", "of", "to"}
)  # fmt: skip
