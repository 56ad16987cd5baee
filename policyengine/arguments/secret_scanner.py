"""Secret detection in JSON-like values: credential keys, token shapes, key/value text and card numbers.

What counts as a secret, in order of how it is found:

1. **Credential keys.** A non-empty scalar (a string that is no placeholder, or a number) under a
   key that names a credential (`password`, `client_secret`, `x-api-key`, `aws_secret_access_key`,
   `cvv2`...; the table is `CREDENTIAL_WORDS`, `CREDENTIAL_ENDINGS` and `CREDENTIAL_SUFFIXES`
   below), also as a pair `["Authorization", "Bearer x"]` or an entry
   `{"name"|"key"|"header": "DB_PASSWORD", "value": "x"}`. Keys that only *mention* a credential
   (`password_hint`, `token_count`, `max_tokens`, `next_page_token`, `secret_santa_name`) are not.
2. **Token shapes** in any string: AWS access keys, private key blocks of any kind (PEM, PGP,
   OpenSSH, PuTTY, encrypted), GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google, npm,
   PyPI, SendGrid and Hugging Face tokens, JWTs, `user:password@` in URLs; provider tokens whose
   body is hex or upper case (Shopify, DigitalOcean, Databricks, Mailgun, Twilio, SonarQube, Pulumi,
   New Relic, Supabase, Postman: gitleaks' prefixes), Telegram bot tokens, Discord webhooks and bot
   tokens, Azure AD client secrets, Braintree access tokens, a token as a URL's user, hex keys and
   UUIDs a name vouches for (`?k=<hex>`, `datadog: <hex>`, `token <uuid>`), private-key bodies
   without their armor (OpenSSH, PKCS#1, PKCS#8, SEC1), and wallet seed phrases (12-24 BIP-39
   words whose checksum holds, or a run of exactly a seed's length). A key header counts only with
   a key body after it. Capability URLs (Azure SAS `sig=`, OCI `/p/.../n/`, Slack triggers, Teams,
   Mattermost and Zapier hooks), pwdump NTLM lines, Nostr `nsec1` keys, and a hex key a key word
   names on its line. Round six: prefix-less families by alphabet and length (Vault `s.`, Azure
   DevOps PATs, Twilio SID and token, Mailchimp `-usNN`, New Relic `NRAL`, a hex key or UUID a
   provider's name vouches for a few words before it), capability URLs by path word
   (`/hooks/<id>/<token>`, `/with/key/<key>`, `/t/<token>/`) and 64-byte JSON arrays (keypairs).
3. **Assignments in text** whose key is a credential key: JSON `"password": "x"`, YAML
   `client_secret: x`, INI/.env `KEY = x`, query strings `?access_token=x`, headers
   `Authorization: Bearer x`, flags `--password x`, XML `<password>x</password>`, prose
   (`my password is Hunter2!`, `the password for dr_smith is x`, `token: x`), and credential
   files: `.netrc` (`machine h login u password x`), `.pgpass` (`host:port:db:user:x`) and
   name/value lines (Kubernetes `- name: DB_PASSWORD` / `value: x`); the column of a table (CSV,
   TSV, Markdown, SQL result grids) whose header is a credential key; a value marked
   `"sensitive": true`. Values that read as prose
   ("password: click the link"), links ("Reset your password: https://..."), status words,
   placeholders and code references (`password = get_password()`) are not secrets.
4. **Card numbers**: 13 to 19 digits in any grouping (spaces, dashes, dots, none, Unicode
   digits; slashes, bars, plus signs, brackets, line breaks and middle dots in a card's own
   grouping), passing the Luhn check and starting with 2-6 (the payment-card industries; a
   13-digit millisecond timestamp starts with 1) or UATP's 15 digits from 1, in text, as JSON
   numbers and split across the digit strings of one list or object.
5. **High entropy**, narrowly: a run of 32-512 base64-alphabet characters mixing upper case,
   lower case and digits, above the entropy 99% of random keys of its length reach, and not
   words, a path, part of a URL, a data: URI or base64 of text. Hex is never enough (hashes).
   Published values are not secrets: integrity hashes (`sha512-...`, `sha256:...`), SSH public
   keys (`ssh-ed25519 AAAA...`) and armored public blocks (public keys, certificates).
6. **Encoded**: runs of 16+ base64-alphabet characters are decoded (base64 standard or URL-safe,
   padded or not; hex; base32) and, when they decode to text, scanned again with the 64 characters
   before them, two levels deep; runs of decimal character codes are read as their text; the kind
   names the encodings, outermost first (`aws-access-key (base64, hex)`). Percent-encoding and
   `\\xNN`/`\\uNNNN`/octal escapes are decoded by normalisation (below). A budget bounds the work per
   string (DECODE_BUDGET, MAX_DECODED); past it one finding, PAST_DECODING_BUDGET, says so.
7. **Split**: a token with a strong prefix (AKIA, ghp_, github_pat_, glpat-, xox?-, sk_live_,
   sk-, AIza, npm_, hf_) written in pieces, glued back: quoted words (`"AKIA" "IOSF..."`,
   `"AKIA""IOSF..."`, `"a" + "b"`), words of four characters or more, and the sibling string
   values of one object or list (`{"a": "ghp_16C7", "b": "e42F..."}`, reported at the
   container), also in JSON text or JSON inside other text (`curl -d '{"a": ...}'`, parsed),
   and across consecutive string values of the document wherever they sit
   (`{"content": "AKIA", "tags": ["IOSF..."]}`). Bounded by MAX_SPLIT per string (past it,
   PAST_SPLIT_BUDGET).
8. **Views**: runs of single characters with one repeated separator (`A K I A ...`, `a-b-c`,
   `a.b.c`, `a,b,c`) glued back and scanned; strong-prefix tokens written backwards or in ROT13; card digits
   spelled as words (`four-one-one-one 1111 ...`); passwords in prose without a credential key
   (a phrase such as `login:`, `pw for the db:`, `passphrase`, `curl -u user:x`, or the word
   password in the languages of secret_labels.PASSWORD_WORDS or misspelt, then a word
   shaped like a password; round eight: after a strong label any value that ends the clause,
   letters only or a passphrase, a PIN's or a door code's digits, a generated code after a
   credential's noun, a user and a password field in a query string, a generated password cut
   by punctuation); a word of a strong password's own shape with no phrase at all
   (`password (shape)`: upper, lower, digits and an inner symbol interleaved); strong-prefix tokens
   cut by one repeated punctuation mark (`AKIA_A0BB_...`), in ROT47, as `;`-joined codes or binary
   octets; cards in their own grouping with short fillers (`4539:5260:...`, `5425x3019x...`);
   and, when nothing else is found, a shell command as bash's quote
   removal leaves it (`'a''b'`, `\\x`, plain `a=x` assignments put in, repeated options' values
   side by side).

Strings are scanned after normalisation: NFKD, invisible and combining characters dropped,
Unicode digits, dashes and Latin look-alikes folded to ASCII, percent-encoding, `\\uXXXX` and
`&#NN;` escapes decoded, until stable (plain ASCII without escapes skips it). Placeholders
(masks, `[REDACTED]`, `<your-key>`, `${VAR}`, `{{ var }}`) exempt only rules 1 and 3: a token
shape or a card is reported wherever it stands. `changeme` is no placeholder: it is a working
default password.

Speed: one walk records credential keys and long numbers and collects every string (keys
too); the strings are joined and searched once by one RE2 program (the prefilter), and when it
finds no candidate no string is analysed. Otherwise only the strings it picks are, each by the
few patterns an RE2 Set says can match. Sibling strings are joined and searched once more, for
split tokens only.

Rewrites (hide_secrets) replace the secret inside the string: JSON text is parsed with the span
of every value, and only the secret values (or keys) are replaced, so the document stays valid
JSON; other text has the spans of its findings replaced. What comes out is scanned again: a
secret left (found only once decoded, or by a view the spans miss) hides the whole string.

Token shapes, the private key headers, the AWS secret-key context and the keyword stems are
ported from detect-secrets 1.5.0 (Yelp, Apache License 2.0, https://github.com/Yelp/detect-secrets;
its private-key and keyword plugins credit pre-commit-hooks and bandit), rewritten for RE2 and
extended; benchmarks/secrets.py compares the two.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import hmac
import itertools
import json
import math
import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import unquote

import re2

from policyengine.arguments import _secret_casefold as _casefold
from policyengine.arguments import _secret_directives as _directives
from policyengine.arguments import _secret_flipped as _flipped
from policyengine.arguments import _secret_framings as _framings
from policyengine.arguments import _secret_shifts as _shifts
from policyengine.arguments import secret_byte_codes as _byte_codes
from policyengine.arguments import secret_cardforms as _cardforms
from policyengine.arguments import secret_cardgroups as _cardgroups
from policyengine.arguments import secret_cardwords as _cardwords
from policyengine.arguments import secret_carriers as _carriers
from policyengine.arguments import secret_charsets as _charsets
from policyengine.arguments import secret_cvvnames as _cvvnames
from policyengine.arguments import secret_devices as _devices
from policyengine.arguments import secret_documents as _documents
from policyengine.arguments import secret_encodings as _encodings
from policyengine.arguments import secret_exemptions as _exemptions
from policyengine.arguments import secret_key_words as _key_words_mod
from policyengine.arguments import secret_labels as _labels
from policyengine.arguments import secret_layouts as _layouts
from policyengine.arguments import secret_lookalikes as _lookalikes
from policyengine.arguments import secret_numerals as _numerals
from policyengine.arguments import secret_protocols as _protocols
from policyengine.arguments import secret_spoken as _spoken
from policyengine.arguments import secret_tokens as _tokens

__all__ = [
    "CREDENTIAL_ENDINGS",
    "CREDENTIAL_SUFFIXES",
    "CREDENTIAL_WORDS",
    "DECODE_BUDGET",
    "MAX_DECODED",
    "MAX_DECODE_LEVELS",
    "MAX_DECODE_ROUNDS",
    "MAX_DEPTH",
    "MAX_SPLIT",
    "PAST_DECODING_BUDGET",
    "PAST_SPLIT_BUDGET",
    "Finding",
    "card_numbers",
    "find_secrets",
    "hide_cards",
    "hide_secrets",
    "is_credential_key",
    "pair_value",
]

# Deeper values raise ValueError so a guard fails closed instead of skipping what it cannot see.
MAX_DEPTH: Final = 128

# As in paths.py: each round shortens a changing string; the bound stops quadratic work on
# "%252525..." and fails closed instead of guessing.
MAX_DECODE_ROUNDS: Final = 32

# JSON text inside a string is parsed and scanned as a value; bigger texts are scanned as text only.
_MAX_JSON_TEXT = 1 << 20

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_MATCH_ONLY = re2.Options()
_MATCH_ONLY.log_errors = False
_MATCH_ONLY.never_capture = True


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret: its kind, where it is in the scanned value, and a masked excerpt."""

    kind: str
    where: str
    excerpt: str


# ---------------------------------------------------------------------------------------------
# Credential keys
# ---------------------------------------------------------------------------------------------

# A key is split into lowercase words (camelCase, '_', '-', '.', spaces), trailing digits and
# CREDENTIAL_SUFFIXES are dropped, and what is left must END with one of these. Ending, not
# containing: "password_hint" and "token_count" mention a credential, their value is not one.
CREDENTIAL_WORDS: Final = frozenset(
    {
        "password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw",
        "passwort", "contrasena", "senha", "wachtwoord",
        "secret", "secrets",
        "token",
        "apikey", "privatekey", "secretkey",
        "auth", "authorization", "cookie", "cookies",
        "session", "sessionid", "jsessionid", "phpsessid",
        "credential", "credentials", "creds",
        "cvv", "cvc", "cvn", "cv2", "pin", "otp", "totp", "hotp",
        # WPA's pre-shared key (wpa_supplicant's psk=, hostapd's wpa_psk) and a WebAuthn or device passkey.
        "psk", "passkey",
        # A wallet's mnemonic, a bearer token under its scheme's name, a Nostr secret key, a keypair
        # file's array (Solana's id.json holds the private key): the value is the credential.
        "mnemonic", "bearer", "nsec", "keypair",
        # Redis's own names for its password and its replicas' (CONFIG GET requirepass, masterauth).
        "requirepass", "masterauth",
        # Round seven: the password's abbreviations (psw, pswd, pwrd: a 1Password field's label) and
        # a VPN's pre-shared key named alone (preshared, presharedkey: WireGuard's PresharedKey).
        "psw", "pswd", "pswrd", "pwrd", "preshared", "presharedkey",
        # Round eight: a SIM's unblocking key. The password in other languages and misspelt are
        # read by _label_key (secret_labels.PASSWORD_WORDS, password_misspelling).
        "puk",
    }
)  # fmt: skip

# Multi-word endings: "x-api-key", "aws_secret_access_key", "card_verification_number".
CREDENTIAL_ENDINGS: Final = frozenset(
    {
        ("api", "key"), ("private", "key"), ("priv", "key"), ("secret", "key"), ("access", "key"),
        ("signing", "key"), ("encryption", "key"), ("master", "key"), ("auth", "key"),
        ("session", "key"), ("client", "key"), ("account", "key"), ("service", "key"),
        ("storage", "key"), ("subscription", "key"), ("app", "key"), ("application", "key"),
        ("security", "code"), ("verification", "code"), ("mfa", "code"), ("otp", "code"),
        ("auth", "code"), ("authorization", "code"), ("pin", "code"), ("pin", "number"),
        ("card", "verification", "number"), ("card", "verification", "value"),
        ("card", "verification", "code"), ("security", "answer"), ("secret", "answer"),
        ("set", "cookie"), ("mot", "de", "passe"),
        ("card", "code"), ("verification", "value"), ("card", "cid"), ("security", "value"),
        # The networks' long names (round eleven): Card Validation Code / Number, Card Authentication
        # Value, Card Identification Number, Card Verification Data.
        ("card", "validation", "code"), ("card", "validation", "number"), ("card", "validation", "value"),
        ("card", "authentication", "value"), ("card", "authentication", "code"),
        ("card", "identification", "number"), ("card", "identification", "code"), ("card", "verification", "data"),
        # Keys named for what they sign or derive, not for being secret: an HMAC key, Rails'
        # secret_key_base (every session and cookie of the app is signed with it), a pre-shared key.
        ("hmac", "key"), ("secret", "key", "base"), ("shared", "key"), ("wpa", "key"), ("seed", "phrase"),
        ("recovery", "phrase"), ("mnemonic", "phrase"), ("backup", "phrase"),
        # Other names of the same things: a passphrase in two words, a TOTP seed, 2FA recovery
        # codes (each logs in once without the second factor), a secret word, a Solana keypair.
        ("pass", "phrase"), ("otp", "seed"), ("totp", "seed"), ("mfa", "seed"), ("2fa", "seed"),
        ("otp", "secret"), ("recovery", "codes"), ("recovery", "code"), ("backup", "codes"),
        ("secret", "word"), ("secret", "phrase"), ("wallet", "seed"), ("seed", "words"),
        # Keys named for the power they give (Algolia's adminKey, Segment's writeKey, New Relic's
        # license key, LaunchDarkly's sdkKey, FCM's server key) and a Wi-Fi key as netsh and
        # Windows' profile XML name it (Key Content, keyMaterial).
        ("admin", "key"), ("write", "key"), ("ingest", "key"), ("license", "key"), ("sdk", "key"),
        ("server", "key"), ("root", "key"), ("deploy", "key"), ("management", "key"),
        ("key", "content"), ("key", "material"), ("network", "key"), ("wep", "key"),
        # Round eight: a symmetric cipher's key by its algorithm or use (aes_key, enc_key, WPA2_KEY),
        # an authenticator's setup key, and the codes that open a door, an alarm, a safe or a SIM
        # (door_code, alarm_code, unlock_code, safe_combination, puk: secretlabels.CODE_LABELS).
        ("aes", "key"), ("des", "key"), ("enc", "key"), ("encrypt", "key"), ("crypt", "key"),
        ("crypto", "key"), ("cipher", "key"), ("wrap", "key"), ("wrapping", "key"), ("wpa2", "key"),
        ("wpa3", "key"), ("setup", "key"), ("totp", "key"), ("otp", "key"), ("mfa", "key"), ("2fa", "key"),
        ("authenticator", "key"), ("door", "code"), ("alarm", "code"), ("gate", "code"), ("entry", "code"),
        ("keypad", "code"), ("lock", "code"), ("unlock", "code"), ("garage", "code"), ("safe", "code"),
        ("disarm", "code"), ("access", "code"), ("safe", "combination"), ("lock", "combination"),
        ("door", "pin"), ("sim", "pin"),
    }
    # Token abbreviated after what it opens (Twilio CLI's authTok, session_tkn); "tok" alone is a word's
    # token. Only qualifiers the assignment pattern's stems hold (_STEMS), so text finds them too.
    | {(qualifier, short) for qualifier in ("auth", "oauth", "session", "secret", "bearer") for short in ("tok", "tkn")}
)  # fmt: skip

# Words after the credential that keep it one: "password_confirm", "token_value", "secret_b64".
CREDENTIAL_SUFFIXES: Final = frozenset(
    {
        "value", "val", "str", "string", "text", "raw", "plain", "plaintext", "clear", "cleartext",
        "b64", "base64", "hex", "enc", "encrypted", "hash", "hashed", "digest", "bytes", "data",
        "confirm", "confirmation", "again", "repeat", "repeated", "verify", "new", "old",
        "current", "input", "contents", "content",
        # Round eight: the encoding a Wi-Fi key is shown in (wifi_psk_ascii, wpa_key_hex).
        "ascii", "utf8",
        # Environments and roles after the credential: "pw_prod_rw", "db_password_staging".
        "prod", "production", "prd", "dev", "development", "staging", "stage", "stg", "test", "testing",
        "qa", "uat", "local", "live", "sandbox", "primary", "secondary", "backup", "rw", "ro", "readonly",
        "readwrite",
    }
)  # fmt: skip

# A single word that ends with one of these is a credential ("dbpassword", "accesstoken",
# "clientsecret"); shorter words (pass, pin, pwd...) must stand alone ("bypass", "spin").
_COMPOUND_ENDINGS = (
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "secret",
    "token",
    "apikey",
    "privatekey",
    "passkey",
)

# Credentials by ending, but the word before makes them something else: pagination cursors,
# tokenizer vocabulary, idempotency keys and links or toggles about a password.
_NOT_CREDENTIAL_BEFORE: Final = {
    "token": frozenset(
        {
            "page", "next", "nextpage", "prev", "previous", "continuation", "pagination", "cursor",
            "sync", "resume", "cancellation", "idempotency", "max", "num", "total", "count",
            "input", "output", "prompt", "completion", "eos", "bos", "pad", "unk", "sep", "cls",
            "mask", "special", "start", "end", "stop",
        }
    ),
    "password": frozenset({"forgot", "reset", "show", "hide", "toggle", "no"}),
}  # fmt: skip

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")

# The classification of a key is pure and keys repeat (one schema, many calls): a plain dict,
# bounded so a flood of distinct keys cannot grow memory without limit.
_KEY_CACHE: dict[str, bool] = {}
_KEY_CACHE_SIZE = 8192
_KEY_CACHE_LENGTH = 128


def _key_words(key: str) -> list[str]:
    """The lowercase words of a key, as CREDENTIAL_* tables spell them."""
    if not key.isascii() or "%" in key or "\\" in key or "&#" in key:
        key = _normalise(key)
    words = _NOT_ALNUM.split(_CAMEL.sub("_", key).lower())
    return [w for w in words if w]


def _credential_words(words: list[str]) -> bool:
    """True when the words (already split) name a credential."""
    while words:
        if _ends_with_credential(words):
            return True
        # Drop what may follow a credential without changing what the value is ("password_2",
        # "token_value"), one word at a time: "card_verification_value" matched before it.
        if len(words) > 1 and (words[-1].isdigit() or words[-1] in CREDENTIAL_SUFFIXES):
            # "passwd_file_contents": a file's contents are the credential, its name alone is not.
            drop = 2 if words[-1] in ("contents", "content") and len(words) > 2 and words[-2] == "file" else 1
            words = words[:-drop]
        else:
            return False
    return False


def _ends_with_credential(words: list[str]) -> bool:
    """True when the last words are a credential word or ending, and what precedes does not undo it."""
    return _ends_with_credential_word(words) or _labels_qualified(words)


def _labels_qualified(words: list[str]) -> bool:
    """A strong credential word followed by qualifiers ("DB_PASSWORD_ADMIN": secret_key_words)."""
    return len(words) > 1 and _key_words_mod.qualified_credential(words, _ends_with_credential_word)


def _ends_with_credential_word(words: list[str]) -> bool:
    """True when the last words are a credential word or ending, and what precedes does not undo it."""
    last = words[-1] if words[-1] in CREDENTIAL_WORDS else words[-1].rstrip("0123456789") or words[-1]  # "cvv2"
    before = words[-2] if len(words) > 1 else ""
    if (before, last) in CREDENTIAL_ENDINGS or (*words[-3:-1], last) in CREDENTIAL_ENDINGS:
        return True
    if last in CREDENTIAL_WORDS:
        ending = last
    elif _label_word(last) or (len(words) > 1 and _label_word(before + last)):
        return before not in _NOT_CREDENTIAL_BEFORE["password"]
    else:
        ending = next((e for e in _COMPOUND_ENDINGS if last.endswith(e)), "")
        if not ending:
            return _glued_credential(words)
        # A compound word: "nexttoken" and "forgotpassword" are read as two words.
        if last != ending:
            before = last[: -len(ending)]
    excluded = _NOT_CREDENTIAL_BEFORE.get(ending)
    return not (excluded and before in excluded)


# Round ten (set I): credential names glued into one lower-case word (dbpass, rootpw, adminpwd,
# accesskey, signingkey, licensekey). A two-word ending glued ("accesskey" is access_key) is the
# ending; a short password word (pass, pwd, pw, psw) after a name of two letters or more is the
# password of what it names (an open class: db, smtp, wifi, vnc, mysqlroot), unless the whole word
# is one of the English words that end so (a closed class, listed).
_GLUED_ENDINGS: Final = tuple(sorted({"".join(e) for e in CREDENTIAL_ENDINGS if len(e) == 2}, key=len, reverse=True))
_GLUED_SHORT: Final = ("pass", "pwd", "pw", "psw")
_NOT_GLUED: Final = frozenset(
    {
        "bypass", "compass", "surpass", "trespass", "encompass", "overpass", "underpass", "impass", "impasse",
        "firstpass", "secondpass", "onepass", "twopass", "multipass", "singlepass", "renderpass", "subpass",
        "boardingpass", "daypass", "hallpass", "buspass", "skipass", "seasonpass", "highpass", "lowpass",
        "bandpass", "allpass", "notchpass", "morepass", "oldpwd", "cwd", "showpass", "nopass",
    }
)  # fmt: skip
# Header names "x-<vendor>-key" and "x-<vendor>-api" (x-rapidapi-key, x-appwrite-key, x-octopus-api):
# a custom header named for a key is the key, whoever the vendor is.
_HEADER_KEY_ENDINGS: Final = frozenset({"key", "api", "apikey", "token", "secret"})
# ...unless the word before names a key that locates or deduplicates (x-cache-key, x-idempotency-key).
_HEADER_NOT_KEY: Final = frozenset(
    {
        "cache", "idempotency", "idempotent", "routing", "partition", "sort", "dedup", "deduplication",
        "request", "trace", "correlation", "object", "public", "primary", "hash", "row", "lookup", "group",
        "message", "event", "upload", "content", "shard", "retry", "sequence", "ordering", "version",
    }
)  # fmt: skip


def _glued_credential(words: list[str]) -> bool:
    """True for a credential's name glued into one word ("dbpass", "accesskey") or a custom key header."""
    last = words[-1]
    if len(words) >= 3 and words[0] == "x" and last in _HEADER_KEY_ENDINGS:
        return words[-2] not in _HEADER_NOT_KEY
    if last in _NOT_GLUED:
        return False
    if last.endswith(_GLUED_ENDINGS):
        return True
    for short in _GLUED_SHORT:
        # a name before it, not a number ("2pw") or a letter ("xpw")
        if last.endswith(short) and len(last) - len(short) >= 2 and last[: -len(short)].isalpha():
            return True
    # "rapidapikey", "coinapikey": a key after a word ending in "api" is an API key.
    return len(words) > 1 and last == "key" and words[-2].endswith("api")


# Words in any script: what is no blank or ASCII punctuation (Indic vowel signs are no \w).
_UNICODE_WORDS = re.compile(r"[^\s!-/:-@\[-`{-~]+")


def _label_word(word: str) -> bool:
    """True for the password's word in another language (or compounded: "adminkennwort") or misspelt ("passwrd")."""
    if word in _LABEL_WORDS or _labels.password_misspelling(word):
        return True
    return len(word) >= 7 and word.endswith(_LONG_LABELS)


def _label_key(key: str) -> bool:
    """True for a key in any script whose last words are the password's word ("лозинка", "şifrə", "p.w.")."""
    folded = _labels.fold(_CAMEL.sub("_", _normalise(key)))
    words = _UNICODE_WORDS.findall(folded)
    while len(words) > 1 and (words[-1].isdigit() or words[-1] in CREDENTIAL_SUFFIXES):
        words = words[:-1]
    if not words:
        return False
    if _label_word(words[-1]) or "".join(words[-3:]) in _LABEL_WORDS or "".join(words[-2:]) in _LABEL_WORDS:
        return not (len(words) > 1 and words[-2] in _NOT_CREDENTIAL_BEFORE["password"])
    return _labels.password_misspelling("".join(words)) and len(words) <= 2  # "p.w.", "P W"


def is_credential_key(key: str) -> bool:
    """True when `key` names a credential: its value is a secret whatever it looks like."""
    known = _KEY_CACHE.get(key)
    if known is not None:
        return known
    result = (
        _credential_words(_key_words(key))
        or ((not key.isascii() or "." in key or " " in key) and _label_key(key))
        or _key_words_mod.foreign_credential_key(key)
    )
    if len(key) <= _KEY_CACHE_LENGTH and len(_KEY_CACHE) < _KEY_CACHE_SIZE:
        _KEY_CACHE[key] = result
    return result


# ---------------------------------------------------------------------------------------------
# Placeholders and plausible values
# ---------------------------------------------------------------------------------------------

_AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "negotiate", "ntlm", "bot", "oauth", "apikey"})
_NULL_WORDS = frozenset({"none", "null", "nil", "undefined", "n/a", "na", "redacted", "hidden", "masked", "filtered"})

# Status and schema words that follow "password:" in prose, forms and docs, never a password.
_STOPWORDS = _NULL_WORDS | frozenset(
    {
        "required", "optional", "true", "false", "yes", "no", "invalid", "incorrect", "wrong",
        "expired", "missing", "empty", "reset", "changed", "updated", "set", "unset", "ok",
        "enabled", "disabled", "read", "write", "admin", "all", "any", "string", "str", "text",
        "int", "integer", "bool", "boolean", "number", "object", "type", "field", "value",
        "enter", "click", "see", "below", "above", "here", "there", "must", "should", "will",
        "can", "cannot", "please", "needed", "needs", "protected", "sent", "stored", "saved",
    }
)  # fmt: skip
_CLOSING = {"[": "]", "<": ">", "(": ")", "{": "}"}
_URL_VALUE = re.compile(r"(?i)[a-z][a-z0-9+.\-]*://|www\.")

# Strings that stand for a secret without being one. A template reference may carry a secret
# inside it ("${hunter2}"); the adversary who knows that can as well drop the key name, so the
# exemption costs no real protection and spares every config template. Shapes still apply.
_PLACEHOLDER = re2.compile(
    "|".join(
        (
            r"[*•●·#xX._\- ]*[*•●·#][*•●·#xX._\- ]*",  # a mask: ****, ••••, ***-**
            r"[xX]{3,}|[._\- ]+",  # xxxx, ---, ...
            r"[*•●·#xX]{3,}[A-Za-z0-9]{1,4}",  # a mask keeping the last few characters
            # [REDACTED], <your-api-key>, {password}: a bracketed description of the value
            r"[\[<({]\s*[\w.\- ]*(?i:redacted|hidden|filtered|masked|removed|omitted|secret|password|passwd|token"
            r"|key|credential|your|insert|enter|placeholder|example|value|here)[\w.\- ]*\s*[\]>)}]",
            r"(?i:redacted|hidden|filtered|masked)",
            r"\$\{\{?\s*[A-Za-z_][\w.\-]*\s*\}\}?",  # ${VAR}, ${{ secrets.X }} (not ${VAR:-default})
            r"\$[A-Z_][A-Z0-9_]*|%[A-Z_][A-Z0-9_]*%",  # $VAR, %VAR%
            r"\{\{\s*[A-Za-z_][\w.\-]*\s*\}\}",  # {{ var }}
            # Round eleven (set J): a reference to a secret store and a description in template words
            # ("your-api-key-here") are recognised whole by secret_exemptions (store_reference,
            # template_words), not by a scheme or one template word: "vault:Tangerine88Harbor" and
            # "velvet-sample-orbit-canyon" are passwords.
        )
    ),
    _MATCH_ONLY,
)
_MAX_PLACEHOLDER = 256  # a longer value stands for nothing: it is the value
_placeholder_raw = getattr(_PLACEHOLDER, "_regexp", None)
_ANCHOR_BOTH = getattr(getattr(re2, "_Anchor", None), "ANCHOR_BOTH", None)


def _placeholder_shape(text: str) -> bool:
    """True when the whole text is a mask, a marker or a reference (the extension's Match: no wrapper cost)."""
    if _placeholder_raw is not None and _ANCHOR_BOTH is not None:
        data = text.encode("utf-8", "surrogatepass")
        return bool(_placeholder_raw.Match(_ANCHOR_BOTH, data, 0, len(data))[0][0] >= 0)
    return _PLACEHOLDER.fullmatch(text) is not None


def _is_placeholder(text: str) -> bool:
    """True for empty values, masks, redaction markers, template references and scheme words."""
    text = text.strip()
    words = text.split(None, 1)
    if len(words) == 2 and words[0].lower() in _AUTH_SCHEMES:
        text = words[1].strip()  # "Bearer ${TOKEN}": the scheme is no secret, look at the rest
    return (
        not text
        or text.lower() in _NULL_WORDS
        or text.lower() in _AUTH_SCHEMES
        or (len(text) <= _MAX_PLACEHOLDER and _placeholder_shape(text))
        or _exemptions.template_words(text)
        or _exemptions.store_reference(text)
    )


# A long option as a credential key's whole value (Kickstart's `rootpw --lock`) says how there is no
# password: secret_exemptions.no_password_option knows those options by name (round eleven: a
# passphrase that starts with "--" is no option).


def _secret_scalar(value: Any) -> bool:
    """True for a scalar that is a secret under a credential key: a number, or a string that is no placeholder."""
    if isinstance(value, str):
        return not _is_placeholder(value) and not _exemptions.no_password_option(value)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _looks_secret(text: str) -> bool:
    """True for a word that prose would not use: 6+ characters with a digit, a symbol or inner capitals."""
    if len(text) < 6:
        return False
    inner = text[1:]
    return any(c.isdigit() or not c.isalnum() for c in text) or any(c.isupper() for c in inner)


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------

# Latin look-alikes an agent can swap in to break a token shape (TR39 confusables, the common ones).
_CONFUSABLES = dict(
    zip(
        (
            "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0423\u0406\u0408\u0405\u051a"
            "\u051c\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501\u051b\u051d\u04bb\u04cf"
            "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u03bf\u03bd"
            "\u03b1\u03ba\u0131\u0237"
        ),
        "ABEKMHOPCTXYIJSQWaeopcyxijsdqwhlABEZHIKMNOPTYXovakij",
        strict=True,
    )
)

# Invisible letters that are no format characters (Hangul fillers, braille blank, Khmer vowels).
_INVISIBLE_LETTERS = (0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x17B4, 0x17B5)


@cache
def _fold_table() -> dict[int, str | None]:
    """The str.translate table of the normalisation (built on first use: ~60 ms)."""
    table: dict[int, str | None] = {c: None for c in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)}
    for code in (*range(0x80, 0x30000), *range(0xE0000, 0xE1000)):
        category = unicodedata.category(chr(code))
        if category in ("Mn", "Me", "Cf", "Cs", "Cc"):
            table[code] = None  # zero-width, combining, bidi, tag, control and lone surrogate
        elif category == "Nd":
            table[code] = str(unicodedata.digit(chr(code)))
        elif category == "Zs":
            table[code] = " "
        elif category == "Pd":
            table[code] = "-"
    for code in _INVISIBLE_LETTERS:
        table[code] = None
    table.update({ord(k): v for k, v in _CONFUSABLES.items()})
    # Round thirteen: numerals no Nd or NFKD fold reads (CJK 一二三, dingbat ❶❷❸) write digits too.
    table.update(_numerals.numerals())
    return table


_ESCAPE = re.compile(
    r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\([\"'\\/])|&#(?:([0-9]{1,7})|[xX]([0-9a-fA-F]{1,6}));"
    r"|\\([0-3][0-7]{2})"  # octal, as printf, echo -e and C strings read it: "\101\113\111\101"
)
_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'", "&#39;": "'"}
_ENTITY = re.compile(r"&(?:amp|lt|gt|quot|apos);")


def _unescape(match: re.Match[str]) -> str:
    """One backslash or numeric character escape, decoded."""
    code_hex4, code_hex2, char, decimal, hex_, octal = match.groups()
    if char is not None:
        return char
    if octal is not None:
        return chr(int(octal, 8))
    code = int(code_hex4 or code_hex2 or hex_, 16) if decimal is None else int(decimal)
    return chr(code) if code < 0x110000 else "\ufffd"


# RFC 2047's encoded words in mail headers ("=?utf-8?Q?Caf=C3=A9?=", "=?UTF-8?B?c2tfbGl2ZV8=?="): the
# text a mail reader shows (round fourteen). Read as words, their "?" and "=" made a password's shape.
_ENCODED_WORD = re.compile(r"=\?([A-Za-z0-9_\-]{1,40})(?:\*[A-Za-z\-]{1,20})?\?([QqBb])\?([^?\s]{0,1000})\?=")
_QP_BYTE = re.compile(rb"=([0-9A-Fa-f]{2})")


def _encoded_word(match: re.Match[str]) -> str:
    """One RFC 2047 encoded word, decoded (its charset when Python knows it, else UTF-8; bad bytes replaced)."""
    charset, how, body = match.groups()
    try:
        if how in "Qq":
            data = _QP_BYTE.sub(
                lambda m: bytes([int(m.group(1), 16)]), body.replace("_", " ").encode("ascii", "replace")
            )
        else:
            data = base64.b64decode(body + "=" * (-len(body) % 4), validate=False)
    except (ValueError, binascii.Error):
        return match.group()
    try:
        return data.decode(charset, "replace")
    except LookupError:
        return data.decode("utf-8", "replace")


def _decode_round(text: str) -> str:
    """One round of decoding: named entities, escapes and numeric entities, percent-encoding, MIME words."""
    if "=?" in text:
        text = _ENCODED_WORD.sub(_encoded_word, text)
    # Only named entities with their semicolon: "&sect" without one would eat "&secret=".
    if "&" in text:
        text = _ENTITY.sub(lambda m: _ENTITIES[m.group(0)], text)
    if "\\" in text or "&#" in text:
        text = _ESCAPE.sub(_unescape, text)
    if "%" in text:
        text = unquote(text, errors="replace")
    return text


def _normalise(text: str) -> str:
    """The string as a reader would take it: look-alikes folded, invisibles dropped, escapes decoded."""
    table = _fold_table()
    for _ in range(MAX_DECODE_ROUNDS):
        before = text
        text = _decode_round(text)
        if not text.isascii():
            # NFKD splits accents off and folds full-width and styled letters; the table then drops
            # the marks with every invisible character and folds digits, dashes and look-alikes.
            text = unicodedata.normalize("NFKD", text).translate(table)
        elif not text.isprintable():
            text = text.translate(table)
        if text == before:
            return text
    raise ValueError(f"string is encoded more than {MAX_DECODE_ROUNDS} levels deep")


# Round eight: "password" in other languages (secret_labels.PASSWORD_WORDS), as keys are read:
# normalised, folded, without spaces ("mot de passe", "kata sandi" are one word here); the long
# ones also end a compound ("benutzerkennwort", "adminsalasana").
_LABEL_WORDS: Final = _labels.label_words(_normalise)
_LONG_LABELS: Final = tuple(word for word in _LABEL_WORDS if len(word) >= 6 and word.isascii())

# ---------------------------------------------------------------------------------------------
# Text patterns
# ---------------------------------------------------------------------------------------------

# Token shapes: one alternative per kind, in priority order (at one position the first wins).
_SHAPES: Final = (
    (
        "private-key",
        r"BEGIN[ \t]+(?:[A-Z0-9]+[ \t]+){0,4}PRIVATE[ \t]+KEY|Proc-Type:[ \t]*4,[ \t]*ENCRYPTED"
        r"|DEK-Info:[ \t]*[A-Z0-9-]+,|PuTTY-User-Key-File-[0-9]|AGE-SECRET-KEY-1[0-9A-Z]{20,}",
    ),
    ("aws-access-key", r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"),
    # The same id folded to lower case, as a DNS name carries it ("akia5awf...9vbx.exfil.example"):
    # DNS is case-insensitive, so exfiltration through a name lowercases; checked for digits.
    ("aws-access-key", r"\b(?:akia|asia|abia|acca)[0-9a-z]{16}\b"),
    ("aws-secret-key", r"(?i:aws).{0,20}(?i:key|pwd|pw|password|pass|token|secret).{0,20}['\"][0-9A-Za-z/+]{40}['\"]"),
    ("github-token", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36,}|github_pat_[A-Za-z0-9_]{22,}"),
    ("gitlab-token", r"glpat-[A-Za-z0-9_\-]{20,}"),
    ("slack-token", r"xox[abpsre]-[A-Za-z0-9\-]{10,}"),
    ("slack-webhook", r"hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+"),
    ("stripe-key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9+/=]{20,}"),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai-key", r"\bsk-[A-Za-z0-9_\-]{20,}"),
    ("google-api-key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("google-oauth-token", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("npm-token", r"npm_[A-Za-z0-9]{36}"),
    ("pypi-token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    ("sendgrid-key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{34,}"),
    # Provider tokens whose body is hex or upper case (no mixed-case test can find them): their
    # prefixes and lengths from gitleaks' rules (config/gitleaks.toml: mailgun-private-api-token,
    # shopify-*, digitalocean-*, databricks-api-token, twilio-api-key, pulumi-api-token,
    # new-relic-user-api-key, postman-api-token, sonar; Supabase "sbp_" from its docs).
    (
        "provider-token",
        r"\bkey-[0-9a-f]{32}\b|\bshp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}\b|\bdo[opr]_v1_[0-9a-f]{64}\b"
        r"|\bdapi[0-9a-f]{32}(?:-[0-9])?\b|\bSK[0-9a-fA-F]{32}\b|\bsq[upa]_[0-9a-f]{40}\b|\bpul-[0-9a-f]{40}\b"
        r"|\bNRAK-[0-9A-Z]{27}\b|\bsbp_[0-9a-f]{40}\b|\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b",
    ),
    # gitleaks' telegram-bot-api-token (a bot id, a colon, 'A' and 34 characters) and the
    # Discord webhook URL (its token is the last path segment).
    ("telegram-bot-token", r"[0-9]{5,16}:A[0-9A-Za-z_\-]{34}\b"),
    # (any host and spelling of it: the id and the 60+ character token after "/webhooks/" are the shape).
    ("discord-webhook", r"(?i:/webhooks/)[0-9]{17,20}/[A-Za-z0-9_\-]{60,}"),
    ("jwt", r"eyJ[A-Za-z0-9_\-]{4,}={0,2}\.[A-Za-z0-9_\-]{4,}={0,2}\.[A-Za-z0-9_\-+/=]*"),
    # A private key's body without its armor: base64 of OpenSSH's "openssh-key-v1" magic, of a
    # PKCS#1 RSA key (SEQUENCE, INTEGER 0, INTEGER n), of an unencrypted PKCS#8 key (version 0 and
    # the rsaEncryption OID) and of a SEC1 P-256 EC key; the whole base64 block is the key. These
    # prefixes are the DER structure itself: certificates and public keys start otherwise.
    (
        "private-key-body",
        r"(?:b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/]{2}(?:AIBAAKC|QIBADANBgkqhkiG9w0BAQEFAASC)|MHcCAQEEI)"
        # 16+ more characters (the prefix alone, in docs and patterns, is no key); a short word after it is text.
        r"[A-Za-z0-9+/=]{16,}(?:(?:\r?\n|\\r\\n|\\n)[ \t]*[A-Za-z0-9+/=]{8,})*",
    ),
    # Provider tokens by their documented shapes (gitleaks: discord-client-secret and Discord's bot
    # token, azure-ad-client-secret, braintree access tokens): a Discord bot token is the bot's id in
    # base64 (checked: it decodes to digits), a timestamp and an HMAC; an Azure AD client secret has
    # "<digit>Q~" at its fourth character; a Braintree token names its environment.
    ("discord-bot-token", r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}\b"),
    ("azure-client-secret", r"\b[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,48}"),
    ("braintree-token", r"access_token\$(?:production|sandbox|development)\$[0-9a-z]{16}\$[0-9a-f]{32}"),
    ("basic-auth", r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#\[\]@\"'<>]*:[^\s/?#\[\]@\"'<>]+@"),
    # A hex key or UUID right after a service's name ("datadog: 37beb2...", "HEROKU_API = 5d4f..."): the
    # services whose keys are bare hex or UUIDs, from gitleaks' keyword rules (config/gitleaks.toml).
    (
        "service-key",
        r"(?i:\b(?:adafruit|adobe|algolia|asana|bitbucket|bittrex|codecov|confluent|datadog|dd|droneci|dropbox|etsy"
        r"|facebook|fastly|finicity|flickr|freshbooks|gitter|heroku|hubspot|intercom|launchdarkly|linkedin|mailchimp"
        r"|mailgun|mapbox|mattermost|messagebird|netlify|newrelic|okta|plaid|sendbird|sentry|snyk|squarespace"
        r"|sumologic|travis|twilio|twitch|typeform|yandex|zendesk"
        # A credential's own name vouches too: "token 03764def-...", "API key is 5d4f...", "hmac: ...".
        r"|token|secret|api[_.\-]?key|apikey|access[_.\-]?key|auth[_.\-]?key|hmac|signing[_.\-]?key|password"
        # Round seven: an application id that is its key (OpenWeatherMap's appid) and a license key.
        r"|appid|app[_.\-]id|licen[cs]e)"
        r"[\w.\-]{0,20})[\"']?(?:[ \t]*[:=][ \t]*|[ \t]+(?i:is[ \t]+|was[ \t]+)?)[\"']?"
        r"(?:[0-9a-fA-F]{32,}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b",
    ),
    # A token as a URL's user ("https://<token>@github.com/..."): 20+ token characters, no colon.
    ("url-user-token", r"[A-Za-z][A-Za-z0-9+.\-]*://[A-Za-z0-9_\-]{20,}@"),
    # A key-named query parameter with a long hex value ("?k=37beb2...", "&api_key=..."): hex alone
    # is a hash, under a key's name it is the key.
    (
        "query-key",
        r"[?&;](?i:k|key|apikey|api_key|api-key|access_key|accesskey|app_key|appkey|auth|sig|signature"
        # Round seven: an application's id that is its key (OpenWeatherMap's appid) and license keys.
        r"|appid|app_id|app-id|license|licence|license_key|licensekey|license-key|lic)"
        r"=[0-9A-Fa-f]{32,}\b",
    ),
    # Capability URLs: the URL itself is the credential (whoever holds it reads, writes or posts), so
    # its secret part is the shape whatever the host: an Azure SAS (sv=... and sig=), an OCI
    # pre-authenticated request (/p/<token>/n/), Slack workflow triggers and workflow webhooks,
    # Teams (webhook.office.com/webhookb2/...), Mattermost (/hooks/<26 lower-case characters>)
    # and Zapier catch hooks. Shapes from gitleaks' rules and the providers' docs.
    ("azure-sas-url", r"[?&](?i:sig)=[A-Za-z0-9%+/]{20,}={0,2}"),
    # Signed URLs (round seven): CloudFront's canned and custom policies (Signature= with
    # Key-Pair-Id), S3's SigV2 and V4 and GCS's V4 query signatures: the signature grants the object.
    ("signed-url", r"[?&](?:Signature|X-Amz-Signature|X-Goog-Signature)=[A-Za-z0-9%~_+/=\-]{40,}"),
    ("oci-par-url", r"/p/[A-Za-z0-9_\-]{20,}/n/[a-z0-9_\-]+/b/"),
    (
        "chat-webhook",
        # By path, whatever the host's spelling (case, port, trailing dot), as discord-webhook.
        r"/(?:triggers|workflows)/T[A-Z0-9]{6,}/[0-9A-Za-z]{6,}/[0-9a-f]{16,}"
        r"|(?i:/webhookb2/)[A-Za-z0-9@\-]+/(?i:IncomingWebhook)/[0-9a-f]{32}"
        r"|/hooks/[a-z0-9]{26}\b|/hooks/catch/[0-9]{4,}/[a-z0-9]{5,}"
        # Round seven: Make (Integromat) hooks, Feishu / Lark custom bots (their token is a UUID, so
        # capability-url's "a UUID is an id" does not apply), DingTalk and WeCom robots, Google
        # Apps Script web apps (/macros/s/<deployment id>/exec runs as its owner).
        r"|(?i:\bhook\.(?:[a-z0-9]+\.)?(?:make|integromat)\.com)/[a-z0-9]{20,}"
        r"|/open-apis/bot/v2/hook/[0-9A-Za-z\-]{20,}|(?i:/robot/send\?access_token=)[0-9a-f]{32,}"
        r"|(?i:/cgi-bin/webhook/send\?key=)[0-9a-f\-]{32,}|/macros/s/AKfyc[A-Za-z0-9_\-]{20,}",
    ),
    # Windows password hashes as pwdump, secretsdump and fgdump print them: user:RID:LM:NT:::, the NT
    # hash (32 hex) logs in as the user by itself (pass-the-hash).
    ("ntlm-hash", r"[^\s:]{1,64}:[0-9]{1,10}:[0-9A-Fa-f]{32}:[0-9A-Fa-f]{32}:::"),
    # A hex key a sentence vouches for ("signing material 0x654d...", "HMAC used for the callbacks
    # c67a...", "private key: 0xf20d..."): a key word, a few words, then 32+ hex on the same line.
    # Words that make the hex a digest, an id or an address void it (_shape_ok): a hash is public.
    (
        "hex-key",
        r"(?i:\b(?:private|priv|signing|signer|secret|hmac|seed|key[ \t]+material|pk"
        # Round six: the names of symmetric keys ("AEAD master", "AES-256 key", a KEK or DEK, a license key).
        r"|aead|aes(?:[\-_ ]?(?:128|192|256))?|kek|dek|master[ \t_\-]?(?:key|secret)|encryption[ \t_\-]?key"
        r"|license[ \t_\-]?key|server[ \t_\-]?token)\b)[^\n]{0,48}?"
        r"\b(?:0x)?[0-9a-fA-F]{32,}\b",
    ),
    # Nostr's private key (bech32 "nsec1" and 58 characters): the account itself.
    ("nostr-key", r"\bnsec1[02-9ac-hj-np-z]{58}\b"),
    # Round seven: credential formats with a documented layout and no shape above. Alibaba Cloud's
    # AccessKey id (LTAI and 20, gitleaks' alibaba-access-key-id), Square's access token and
    # application secret (sq0atp-, sq0csp-), a 1Password account's Secret Key (A3-, the account id,
    # 26 characters in groups), an Asana personal access token (1/ or 2/, ids, a colon, 32 hex),
    # an Oracle connect string with its password (jdbc:oracle:thin:user/PASSWORD@, sqlplus
    # user/PASSWORD@db), BitLocker's 48-digit recovery password (eight groups of six digits, each a
    # multiple of 11: checked) and a FileVault / Apple personal recovery key (six groups of four
    # capitals and digits: checked for both). App passwords (Apple app-specific, Google app
    # passwords: 16 lower-case letters in four groups of four) have no prefix: the words "app
    # password", "app pw" or "app-specific" before them are the shape.
    ("alibaba-key", r"\bLTAI[A-Za-z0-9]{12,20}\b"),
    # Its AccessKey secret (30 base62 characters) under an "sk" or "secret" name ("sk_value = ...").
    (
        "alibaba-secret",
        r"(?i:\b(?:sk|access[_.\-]?key[_.\-]?secret)[\w.\-]{0,12})[\"']?[ \t]*[:=][ \t]*[\"']?[A-Za-z0-9]{30}\b",
    ),
    ("square-token", r"\bsq0atp-[0-9A-Za-z_\-]{22,60}|\bsq0csp-[0-9A-Za-z_\-]{40,60}"),
    ("1password-secret-key", r"\bA3-[A-Z0-9]{6}-[A-Z0-9]{6}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b"),
    ("asana-token", r"\b[12]/[0-9]{8,20}(?:/[0-9]{8,20})?:[0-9a-f]{32}\b"),
    (
        "oracle-connect",
        r"(?i:jdbc:oracle:(?:thin|oci8?|kprb):|\b(?:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl)[ \t]+(?:-[A-Za-z]+[ \t]+)*)"
        r"[\"']?[A-Za-z_][\w$#.]{0,63}/[^\s/@\"']{1,128}@",
    ),
    ("bitlocker-key", r"\b[0-9]{6}(?:-[0-9]{6}){7}\b"),
    ("recovery-key", r"\b[A-Z0-9]{4}(?:-[A-Z0-9]{4}){5}\b"),
    (
        "app-password",
        r"(?i:\bapp(?:lication)?[ \t\-]?(?:specific|pw|pwd|pass(?:word)?s?)\b)[^\n]{0,40}?"
        r"\b(?:[a-z]{4}-[a-z]{4}-[a-z]{4}-[a-z]{4}|[a-z]{4} [a-z]{4} [a-z]{4} [a-z]{4})\b",
    ),
    # Token families from gitleaks' rules that no shape above covers: Vault service and batch tokens,
    # Dynatrace, Mapbox secret tokens, GitLab's other tokens (pipeline triggers, runners, deploy,
    # feed, incoming mail, SCIM, OAuth app secrets), Azure DevOps PATs under their name.
    (
        "provider-token",
        r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}\b|\bdt0[a-z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b"
        r"|\bsk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"
        r"|\b(?:glptt|glrt|gldt|glft|glimt|glsoat|gloas|GR1348941)-?[A-Za-z0-9_\-]{20,}\b"
        # Round seven: an Airtable personal access token (pat, a 14-character id, a dot, 64 hex).
        r"|\bpat[A-Za-z0-9]{14}\.[0-9a-f]{64}\b",
    ),
    # A legacy Vault service token ("s." and 24 base62 characters; checked: mixed case and a digit,
    # not words) and a New Relic license key (36 hex and "NRAL"); the hex and base32 families with no
    # prefix are found by _family_hits (their patterns here would double the prefilter's cost).
    ("vault-token", r"\bs\.[A-Za-z0-9]{24}\b"),
    ("newrelic-key", r"\b[0-9a-fA-F]{36}NRAL\b"),
    # Capability URLs in general: a long random path segment after a path word that names a hook, a
    # key or a token ("/with/key/<key>" IFTTT, "/hooks/<id>/<token>" Rocket.Chat, "/t/<token>/" conda
    # channels, "/token/<x>"): whoever holds the URL holds the key. Checked: the segment is random.
    (
        "capability-url",
        r"/(?i:hooks?|webhooks?|keys?|tokens?|t|secrets?|apikey|api-key|api_key)"
        r"/(?:[A-Za-z0-9_\-]{6,40}/)?[A-Za-z0-9_\-]{20,}",
    ),
)
_SHAPE_KINDS: Final = tuple(kind for kind, _ in _SHAPES)
_SHAPE_RE = re2.compile("|".join(f"({pattern})" for _, pattern in _SHAPES), _OPTIONS)

# Assignments: an identifier (optionally after one word: "API key", "your password") holding a
# credential stem, a separator, then a quoted value or one or two bare words (a scheme and its
# token, or a word and the prose after it). Every CREDENTIAL_* entry holds a stem (tests pin it).
_STEMS = (
    r"pass|pwd|pw|psw|psk|preshared|phrase|secret|token|key|auth|cookie|sess|cred|cvv|cvc|cvn|pin|otp|contrase|senha|wachtwoord"
    r"|mnemonic|bearer|nsec|recovery|backup|seed"
    r"|(?:security|verification|mfa)[_ .\-]?(?:code|answer|value)"
    r"|card[_ .\-]?(?:verification|validation|authentication|identification|code|cid)|cv2"
    # Round eight: codes by what they open, the password misspelt (pasword, pssword, p.w.) and in
    # other languages (secret_labels.PASSWORD_WORDS, ASCII spellings: "KENNWORT=x", "haslo: x").
    r"|puk|(?:door|alarm|gate|entry|keypad|lock|garage|safe|disarm|access)[_ .\-]?(?:code|combination|pin)"
    r"|pas+o?w|ps+w|p\.w|"
    + "|".join(sorted((re.escape(w) for w in _LABEL_WORDS if w.isascii() and len(w) >= 5), key=len, reverse=True))
)
# Programs that take a password as an option's value, from their manuals: the programs (a regex
# alternation) and what stands before the value (an option, a blank or nothing when glued; for
# smbclient's -U user%password and lftp's -u user,password, the user part too).
PASSWORD_OPTIONS: Final = (
    ("sshpass", r"-p[ \t]*"),
    ("redis-cli", r"-a[ \t]+"),
    ("ldapsearch|ldapmodify|ldapadd|ldapdelete|ldapwhoami|ldappasswd|ldapcompare|ldapmodrdn|ldapexop", r"-w[ \t]*"),
    ("sqlcmd|bcp|ipmitool|zip|unzip", r"-P[ \t]*"),
    ("7z|7za|7zr|rar|unrar", r"-p"),
    (
        "mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|rdesktop|evil-winrm|crackmapexec|nxc|netexec",
        r"-p[ \t]+",
    ),
    ("xfreerdp|wlfreerdp", r"[/\-]p:"),
    ("openssl", r"-pass(?:in|out)[ \t]+['\"]?pass:"),
    ("smbclient|rpcclient|smbget|smbcacls|smbmap|smbtree", r"(?:-U|--user(?:=|[ \t]))[ \t]*['\"]?[^\s%'\"]+%"),
    ("lftp", r"-u[ \t]+['\"]?[^\s,'\"]+,"),
    # Package managers' logins (round six): nuget's -Password (dotnet nuget's --password is a flag
    # already), cargo login's token operand, twine's -p.
    ("nuget|dotnet", r"-(?i:password)[ \t]+"),
    ("cargo", r"login(?:[ \t]+--registry(?:[ \t]+|=)\S+)?[ \t]+"),
    ("twine", r"-p[ \t]+"),
)
_KEY = rf"(?:[A-Za-z0-9_.\-]+ )?[A-Za-z0-9_.\-]*(?i:{_STEMS})[A-Za-z0-9_.\-]*"
_WORD = r"[^\s\"'`&;,<>)\]}]+"
_VALUE = rf"\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|{_WORD}(?:[ \t]+{_WORD})?"
_ASSIGNMENT = (
    rf"({_KEY})[\"'\]]{{0,2}}(\s*(?::=|=>|\?=|\+=|==?|:)\s*|[ \t]+(?i:is|was)[ \t]+)({_VALUE})"
    rf"|--({_KEY})[ \t]+({_VALUE})"
    rf"|<({_KEY})(?:\s[^<>]*)?>([^<\n]+)</"
    # Prose naming whose credential it is: "the password for dr_smith is x", "token of the bot was x".
    rf"|({_KEY})[ \t]+(?i:for|of|to|on)[ \t]+(?:[^\s]{{1,64}}[ \t]+){{1,4}}?(?i:is|was)[ \t]+({_VALUE})"
    # .netrc: "machine host login user password x", on one line or several.
    r"|(?:\bmachine[ \t]+\S+|\bdefault)(?:\s+(?:login|account|port|protocol)[ \t]+\S+)*\s+(password)[ \t]+(\S+)"
    # A name/value pair in YAML or JSON-ish text (Kubernetes env: "- name: DB_PASSWORD\n  value: x").
    rf"|\b(?:name|key)[\"']?[ \t]*[:=][ \t]*[\"']?([A-Za-z0-9_.\-]+)[\"']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*)?(?:-[ \t]+)?"
    rf"[\"']?value[\"']?[ \t]*[:=][ \t]*({_VALUE})"
    # .pgpass: "host:port:database:user:password", one entry a line.
    r"|(?m:^(?:[A-Za-z*][\w.\-]*|[0-9]{1,3}(?:\.[0-9]{1,3}){3}):(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:(\S+)$)"
    # A key and its value as the arguments of a definition: PHP define('DB_PASSWORD', 'x'),
    # Dockerfile "ENV KEY value", csh "setenv KEY value", C "#define KEY "x"", "set -x KEY value" (fish).
    rf"|\bdefine\s*\(\s*[\"']({_KEY})[\"']\s*,\s*({_VALUE})"
    rf"|(?:\bENV|\bsetenv|#[ \t]*define|\bset[ \t]+-[gxU]+)[ \t]+({_KEY})[ \t]+({_VALUE})"
    # SQL: IDENTIFIED BY 'x' (MySQL, Oracle), WITH [ENCRYPTED] PASSWORD 'x' (PostgreSQL).
    r"|(?i:\bidentified[ \t]+(?:with[ \t]+\S+[ \t]+)?by|\bwith[ \t]+(?:encrypted[ \t]+)?password)"
    r"[ \t]+('[^'\n]*'|\"[^\"\n]*\")"
    # A password glued to -p (mysql, mysqldump, mysqladmin) or after docker login's -p.
    r"|\bmysql[a-z]*\b[^\n]*?[ \t]-p([^\s\-][^\s]*)|\blogin\b[^\n]*?[ \t]-p[ \t]+([^\s\-][^\s]*)"
    # PowerShell's ConvertTo-SecureString "x" -AsPlainText: the plain text is the password.
    r"|(?i:ConvertTo-SecureString)[ \t]+(?:-String[ \t]+)?('[^'\n]*'|\"[^\"\n]*\")"
    # Programs that take a password as an option's value (PASSWORD_OPTIONS below), one alternative each.
    + "".join(
        rf"|\b(?:{programs})\b[^\n]*?[ \t]{option}('[^'\n]*'|\"[^\"\n]*\"|[^\s\-'\"`][^\s'\"`,;]*)"
        for programs, option in PASSWORD_OPTIONS
    )
    # A configuration command is an assignment with a blank for its "=" (round six, package
    # managers): "composer config [-g] bearer.HOST x" (and github-oauth, gitlab-token, http-basic
    # USER x...), "poetry config pypi-token.NAME x" set a token whatever the key's last word is;
    # "yarn config set npmAuthToken x", "npm config set KEY x" are read as KEY = x; "bundle config
    # [set] HOST user:x" and BUNDLE_HOST=user:x carry Bundler's source credentials.
    + r"|\bconfig[ \t]+(?:set[ \t]+)?(?:-{1,2}[A-Za-z][\w\-]*[ \t]+)*"
    r"(?i:bearer|github-oauth|gitlab-token|gitlab-oauth|http-basic|bitbucket-oauth|pypi-token)\.[\w.\-]+[ \t]+"
    r"(?:[^\s'\"-][^\s'\"]*[ \t]+)?('[^'\n]*'|\"[^\"\n]*\"|[^\s\-'\"`][^\s'\"`,;]*)"
    + rf"|\bconfig[ \t]+(?:set[ \t]+)?(?:-{{1,2}}[A-Za-z][\w\-]*[ \t]+)*({_KEY})[ \t]+({_VALUE})"
    r"|\bbundle[ \t]+config\b(?:[ \t]+set)?(?:[ \t]+--?[\w\-]+)*[ \t]+[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)+[ \t]+"
    r"['\"]?[^\s:'\"@]+:([^\s'\"]+)"
    r"|\bBUNDLE_[A-Z0-9_]+__[A-Z0-9_]+[ \t]*=[ \t]*['\"]?[^\s:'\"@]+:([^\s'\"]+)"
)
# Where each alternative of _ASSIGNMENT puts its key, its separator and its value (group numbers;
# a string is a fixed key or separator for the alternatives that imply one).
_ALTERNATIVES: Final[tuple[tuple[int | str, int | str, int], ...]] = (
    (1, 2, 3),
    (4, " ", 5),
    (6, ":", 7),
    (8, " is ", 9),
    (10, " ", 11),
    (12, ":", 13),
    ("password", ":", 14),
    (15, ",", 16),
    (17, " ", 18),
    ("password", ":", 19),
    ("password", "=", 20),
    ("password", " ", 21),
    ("password", " ", 22),
    *(("password", " ", 23 + n) for n in range(len(PASSWORD_OPTIONS))),
    ("password", " ", 23 + len(PASSWORD_OPTIONS)),
    (24 + len(PASSWORD_OPTIONS), " ", 25 + len(PASSWORD_OPTIONS)),
    ("password", ":", 26 + len(PASSWORD_OPTIONS)),
    ("password", ":", 27 + len(PASSWORD_OPTIONS)),
)
_ASSIGNMENT_RE = re2.compile(_ASSIGNMENT, _OPTIONS)
# Value groups of the alternatives whose value is a token operand, not an option's value: it must look like one.
_TOKEN_OPERANDS: Final = frozenset(23 + n for n, (programs, _) in enumerate(PASSWORD_OPTIONS) if programs == "cargo")

# Card runs: digits with at most a short separator between them, 13 digits or more. The
# prefilter and ASCII text use the ASCII form (normalised text has its digits, dashes and spaces
# folded); raw text with Unicode digits or invisible characters inside (cards redaction) uses
# the Unicode form, compiled on first use: its classes take 20 ms to compile and a program 13
# times bigger.
# Slashes, bars, plus signs, brackets and line breaks ("4532/0151/...", "(4532)(0151)...", one group
# a line) also join groups, but only in a card's own grouping (see _card_grouping).
_ASCII_CARD_RUN = r"[0-9](?:(?:[ \t._\-/|+()\r\n]{1,6}|,)?[0-9]){12,}"
_ASCII_CARD_RE = re2.compile(_ASCII_CARD_RUN, _MATCH_ONLY)
# The gate (prefilter, categories): the run with the usual separators, and with the weak ones
# only in a card's grouping (fours, Amex's 4-6-5, two halves one a line), also across the dots
# normalisation leaves ("4532·0151..."): strings are joined by line breaks for the prefilter, and a
# line break between any digits would let every call with two numbers through.
# A card's own groups (4-4-4-4, Amex's 4-6-5, Diners' 4-6-4) with anything short and digit-free
# between them: "4539:5260:...", "4539, 5260, ...", "card#4539#...", "5425x3019x...", "4539 and
# 6821 and ...", "4539 5260 (cont.) 1815 9083"; a look-alike letter for a digit inside a group. Only the
# card's grouping is read this way (any filler between arbitrary digits would read lists of numbers).
_CARD_FILLER = r"[^0-9\n]{1,12}"
_SPREAD_CARD = (
    rf"[0-9OoSlIBZ]{{4}}(?:{_CARD_FILLER}[0-9OoSlIBZ]{{4}}){{3}}"
    rf"|[0-9]{{4}}{_CARD_FILLER}[0-9]{{6}}{_CARD_FILLER}[0-9]{{4,5}}"
)
_WEAK = r"[ \t/|+()\r\n\x{B7}\x{2022}\x{2027}\x{2219}\x{22C5}\x{30FB}\x{FF65}]{1,6}"
_CARD_GATE = (
    r"[0-9](?:(?:[ \t._\-]{1,6}|,)?[0-9]){12,}"
    rf"|[0-9]{{4}}(?:{_WEAK}[0-9]{{4}}){{2,3}}{_WEAK}[0-9]{{1,4}}|[0-9]{{4}}{_WEAK}[0-9]{{6}}{_WEAK}[0-9]{{4,5}}"
    r"|(?m:^[0-9]{8}\n[0-9]{5,8}$)"
    rf"|{_SPREAD_CARD}"
    r"|(?:5[0678]|6[37])[0-9]{2}[ \-]?[0-9]{4}[ \-]?[0-9]{4}"  # a 12-digit Maestro (_maestro_spans)
)
_GAP = (
    r"(?:[\p{Zs}\p{Cf}\p{Mn}\t._\-\x{2010}-\x{2015}\x{2212}\x{FE58}\x{FE63}\x{FF0D}\x{FF0E}"
    r"/|+()\r\n\x{B7}\x{2022}\x{2027}\x{2219}\x{22C5}\x{30FB}\x{FF65}]{1,6}|,)?"
)


@cache
def _unicode_card_re() -> Any:
    """The card run pattern over Unicode digits, separators and invisible characters."""
    digit = rf"[\p{{Nd}}{_numerals.re2_class()}]"  # round thirteen: CJK and dingbat numerals too
    return re2.compile(rf"{digit}(?:{_GAP}{digit}){{12,}}", _MATCH_ONLY)


# High entropy: long runs of the base64 alphabet (see _high_entropy for what passes).
_TOKEN_RUN = r"[A-Za-z0-9+/_\-]{32,}={0,2}"
_TOKEN_RE = re2.compile(_TOKEN_RUN, _MATCH_ONLY)

# Encoded candidates: runs of the base64 alphabet (hex is a subset) long enough to hide a short
# token (16 characters: 12 bytes), decoded and scanned again (see _decoded_hits for the budget).
_ENCODED_RUN = r"[A-Za-z0-9+/_\-]{16,}={0,2}"
_ENCODED_RE = re2.compile(_ENCODED_RUN, _MATCH_ONLY)
# Only runs that can be text once decoded are decoded: hex, or base64 with 16 characters in a row
# shaped like base64 of ASCII (each 4-character group starts with one of the 32 values an ASCII
# byte's top six bits give, A-Z or a-f). Identifiers and file names rarely are (none of ~10,000 in
# a megabyte of them; "distanceToNextVehicle", "final_report_2024" are not), so ordinary text keeps
# its fast path. Non-ASCII text encoded whole still passes where 12 ASCII bytes follow each other.
_ENCODED_GATE = (
    r"(?:[A-Za-f][A-Za-z0-9+/_\-]{3}){4}|[0-9A-Fa-f]{16}|[A-Z2-7]{16}|(?:[0-9]{2,3}[ \t]*[,;+][ \t]*){15}[0-9]"
    r"|(?:=[0-9A-Fa-f]{2}){16}"  # quoted-printable (round seven)
    r"|(?:[01]{8}[ \t,;]?){7}[01]{8}"
    r"|(?:[0-9A-Fa-f]{2}[:. \-]){15}[0-9A-Fa-f]{2}"
    r"|(?m:^begin(?:-base64)? [0-7]{3,4} )"  # uuencode's header (uudecode reads the lines after it)
)
# Lower-case base32 (round seven) has no gate of its own (it would cost every text's prefilter):
# a run of it long enough to hold a token is a token run (_TOKENS_AT), whose runs are decoded
# too; _folded_base32 tells such a run, failing at its first other character.
_ENCODED_GATE_RE = re.compile(_ENCODED_GATE)

# Split tokens: a shape with a strong prefix written in pieces ("AKIA" "IOSF...", "AKIA""IOSF...",
# sibling values {"a": "ghp_16C7", "b": "e42F..."}), matched with gaps of quotes, spaces, '+' and
# ',' between any two characters. Sibling values are joined with SIBLING, a gap of its own.
SIBLING: Final = "\x1f"
_SPLIT_GAP = r"[\s\"'`+,\x1f#@]{1,8}"  # "#" and "@": a token cut into hashtags or mentions (round six)
_SPLIT_SHAPES: Final = (
    ("aws-access-key", ("AKIA", "ASIA", "ABIA", "ACCA"), "0-9A-Z", 16),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "A-Za-z0-9_", 36),
    ("github-token", ("github_pat_",), "A-Za-z0-9_", 22),
    ("gitlab-token", ("glpat-",), "A-Za-z0-9_\\-", 20),
    ("slack-token", ("xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-"), "A-Za-z0-9\\-", 10),
    ("stripe-key", ("sk_live_", "rk_live_", "sk_test_", "rk_test_"), "0-9A-Za-z", 16),
    ("anthropic-key", ("sk-ant-",), "A-Za-z0-9_\\-", 20),
    ("openai-key", ("sk-",), "A-Za-z0-9_\\-", 20),
    ("google-api-key", ("AIza",), "0-9A-Za-z_\\-", 35),
    ("npm-token", ("npm_",), "A-Za-z0-9", 36),
    ("huggingface-token", ("hf_",), "A-Za-z0-9", 34),
)


_NAMED_HEADS: Final = tuple(prefix for _, prefixes, _, _ in _SPLIT_SHAPES for prefix in prefixes)


def _gappy(prefixes: tuple[str, ...], chars: str, count: int) -> str:
    """A prefix and `count` characters of a class, with an optional gap between any two."""
    gap = f"(?:{_SPLIT_GAP})?"
    heads = "|".join(gap.join(re.escape(c) for c in prefix) for prefix in prefixes)
    return rf"\b(?:{heads})(?:{gap}[{chars}]){{{count}}}" if count else rf"\b(?:{heads})"


_SPLIT = "|".join(_gappy(prefixes, chars, count) for _, prefixes, chars, count in _SPLIT_SHAPES)
_SPLIT_RE = re2.compile(_SPLIT, _MATCH_ONLY)
# The prefilter's part: the prefixes alone (gaps allowed), a superset that keeps its DFA small (the
# whole gappy program in it costs 10x on long texts).
_SPLIT_HEADS = "|".join(_gappy(prefixes, "", 0) for _, prefixes, _, _ in _SPLIT_SHAPES)
# Separated tokens: the same prefixes cut by one punctuation mark that repeats through the token
# ("ghp_.EBf.u1W...", "AKIA_A0BB_Z2LG_...", "sk_liv/e_inFx/...", "npm_G:JnWmx:..."): any mark a
# reader is told to drop. The head is the prefix (a mark allowed between its characters) and a
# mark within the next 24 characters; _separated_hits drops each mark in turn and reads the shape.
_SEPARATORS: Final = ".|~/:;_-#*^!="  # not the backslash: the shell view drops it as bash does
_SEPARATOR_CLASS = "[" + re.escape(_SEPARATORS) + "]"
_SEPARATED_HEADS = "|".join(
    rf"\b(?:{'|'.join(f'(?:{_SEPARATOR_CLASS})?'.join(re.escape(c) for c in prefix) for prefix in prefixes)})"
    rf"[A-Za-z0-9_\-]{{0,24}}{_SEPARATOR_CLASS}[A-Za-z0-9]"
    for _, prefixes, _, _ in _SPLIT_SHAPES
)
_SEPARATED_HEADS_RE = re2.compile(_SEPARATED_HEADS, _MATCH_ONLY)
_SEPARATED_WORD = re.compile(r"[A-Za-z0-9" + re.escape(_SEPARATORS) + r"]{1,512}")
# What the prefilter and the category set look for: split or separated heads.
_SPLIT_GATE = f"{_SPLIT_HEADS}|{_SEPARATED_HEADS}"
# The same shapes without gaps, anchored: what the pieces glued back together must be.
_SPLIT_WHOLE: Final = tuple(
    re.compile(rf"(?:{'|'.join(map(re.escape, prefixes))})[{chars}]{{{count},}}")
    for _, prefixes, chars, count in _SPLIT_SHAPES
)
# Pieces are runs of token characters; a glued token is read up to _MAX_GLUED characters from
# its start (tokens are shorter), so each match costs a bounded read.
_PIECE = re.compile(r"[A-Za-z0-9_\-]*")
_MAX_GLUED = 512
_SPLIT_MINIMUM: Final = tuple(min(map(len, prefixes)) + count for _, prefixes, _, count in _SPLIT_SHAPES)
# The longest each token is (AWS ids, classic GitHub, Google and npm tokens have one length): pieces
# are not glued past it, so a page of "AKIA AKIA ..." costs a few pieces per candidate, not 512.
_SPLIT_MAXIMUM: Final = (20, 40, 128, 64, 160, 128, 160, 200, 39, 40, 64)
_GAP_RUN = re.compile(_SPLIT_GAP)
# Candidates glued and checked per string (each costs an RE2 search and a bounded read); past it,
# as for decoding, the rest is reported unchecked (PAST_SPLIT_BUDGET) rather than passed: ordinary
# text has a handful.
MAX_SPLIT: Final = 4096
PAST_SPLIT_BUDGET: Final = "unchecked pieces (past the split budget)"
_STRONG_GAP = re.compile(r"[\"'`\x1f]")

# Letters written apart ("A K I A I O S F...", "A-K-I-A-...", "g l p a t - a B..."): a run of single
# characters (a dash among them), each followed by one separator; the gate lets any separators
# through, _SPACED_RUN wants one repeated.
# The separator may be two marks ("g-.h-.p-._-.e...", round six) and a bar, colon, semicolon or star.
_SPACED_GATE = r"[A-Za-z0-9_](?:[ .,\-|:;*]{1,2}[A-Za-z0-9_\-]){11,}"
_SPACED_RUN = re.compile(
    r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_]([ .,\-|:;*]{1,2})[A-Za-z0-9_\-](?:\1[A-Za-z0-9_\-]){10,}(?![A-Za-z0-9_\-])"
)
_SPACED_GATE_RE = re2.compile(_SPACED_GATE, _MATCH_ONLY)
_MAX_SPACED = 64  # runs glued per string; past it, the rest is reported unchecked (PAST_SPLIT_BUDGET)

# Passwords in prose without a credential key ("login with admin / P@ssw0rd2024!", "pw for the db:
# Tr0ub4dor&3", "curl -u admin:s3cretPass"): a phrase that introduces a credential, then a word in
# the next few that has a password's shape (see _password_like). The gate wants a digit after the
# phrase on its line (every password shape holds one): a bare "password" key costs nothing.
# The word "password" (and "passphrase", "PIN") in the languages with the most speakers and in
# the locales software ships (the CLDR and Wikipedia's interlanguage titles of "Password"), as
# the scanner reads it: normalised like the text (accents dropped, look-alike letters folded).
# No word boundary before (Chinese and Japanese have none) and a few letters allowed after
# (Turkish "şifresi", Swedish "lösenordet", Finnish "salasanan", Russian "пароля").
_PASSWORD_WORDS_I18N: Final = (
    "пароль", "парол", "пароли", "гасло", "密码", "密碼", "口令", "パスワード", "暗証番号", "암호", "비밀번호",
    "şifre", "parola", "hasło", "haslo", "lösenord", "salasana", "jelszó", "heslo", "geslo", "lozinka",
    "kata sandi", "kata laluan", "κωδικός", "συνθηματικό", "contraseña", "clave", "mot de passe",
    "passwort", "kennwort", "senha", "wachtwoord", "adgangskode", "passord", "lykilorð", "parool",
    "slaptažodis", "mật khẩu", "รหัสผ่าน", "كلمة المرور", "كلمة السر", "رمز عبور", "סיסמה",
    "पासवर्ड", "পাসওয়ার্ড", "கடவுச்சொல்", "パスフレーズ", "비번", "contrasinal", "palavra-passe",
    "mã pin", "пин-код", "pin-kod", "pin-code", "pinkod",
)  # fmt: skip
# A space inside a phrase may be a form's '+' ("mot+de+passe" in a query string).
_I18N_ROUND7 = "|".join(
    sorted(
        {re.escape(_normalise(word).casefold()).replace("\\ ", "[ +]") for word in _PASSWORD_WORDS_I18N},
        key=len,
        reverse=True,
    )
)
# Round eight: with secret_labels.PASSWORD_WORDS, the word in the EU's, the UN's and the most spoken
# languages, native and transliterated. The prefilter reads the new words in a program of their own
# (_LABEL_GATE): in the phrases' program they doubled the cost of a 4 KB batch.
_I18N_WORDS = "|".join(
    sorted(
        {re.escape(_normalise(word).casefold()).replace("\\ ", "[ +]") for word in _PASSWORD_WORDS_I18N}
        | set(_labels.label_regex(_normalise).split("|")),
        key=len,
        reverse=True,
    )
)
# Round six: words that name a password without saying it ("NAS combo: x", "wifi x", "unlocks
# with x") and an account pointed at its password ("Grafana admin -> x"): the value after them must
# still have a password's shape (_password_like), as after "login".
_PROSE_OTHER_WORDS = r"combo|combination|wi-?fi|wlan|psk|unlock(?:s|ed)?[ \t]+with|opens[ \t]+with"
# Round seven: the password's word abbreviated (psw, pswd, p/w, pwrd) or in French shorthand
# (mdp, "mot de passe"), and "credentials" in other languages (Zugangsdaten, identifiants...):
# after them, as after "password" and "login", a word must still have a password's shape.
_PASSWORD_ABBREVIATIONS = r"psw(?:r?d)?|pw(?:or|r)d|passw|p/w|mdp"
_CREDENTIAL_WORDS_I18N = (
    r"zugangsdaten|anmeldedaten|logindaten|identifiants|credenciales|credenziali|credenciais"
    r"|inloggegevens|toegangsgegevens|dane[ \t]+logowania|inloggningsuppgifter"
)
_PROSE_ARROW = r"(?:admin|administrator|root|superuser|user(?:name)?|account|login)[ \t]*(?:->|=>|\x{2192}|\x{21D2})"
_PROSE_PHRASES = (
    r"(?i:\b(?:log[ \-]?in|sign[ \-]?in|logon|credentials?|creds|pw|pwd|pass|passwd|passphrase|passcode"
    rf"|password|passwort|{_PROSE_OTHER_WORDS}|{_PASSWORD_ABBREVIATIONS}|{_CREDENTIAL_WORDS_I18N})\b[^\n]*[0-9])"
    rf"|(?i:\b{_PROSE_ARROW}[^\n]*[0-9])"
    # Round eleven: a login's user and a diceware passphrase in one word, no digit ("login: ana /
    # velvet-canyon-orbit-lantern"; _password_like takes it only right after its user or word).
    r"|(?i:\b(?:log[ \-]?in|sign[ \-]?in|logon|credentials?|creds)\b"
    r"[^\n]*[A-Za-z]{3}[\-_.][A-Za-z]{3,12}[\-_.][A-Za-z]{3})"
    rf"|(?i:(?:{_I18N_ROUND7})[^\n]*[0-9])|(?:^|\s)(?:-u|--user|--proxy-user)[ =]"
    # The value before the word: "Use X as the password", "X\n(that is the password above)".
    r"|(?i:[0-9][^\n]*\n?[^\n]*\b(?:pw|pwd|passwd|passphrase|passcode|password|passwort)\b)"
)
# Round eight (_label_prose_hits): a password's word with no digit after it ("the VPN password is
# sandcastle"), misspelt ("passwrd: x"); a PIN's or a code's name, then digits; a credential's
# noun then a generated word ("the unseal code is Vn48Tq2Lm9Xa"); a login's user and password
# fields side by side in a query string ("?u=admin&p=x"). A program of its own in the prefilter's
# parts: with the phrases above, the reverse DFA that finds a match's start outgrows its memory.
_LABEL_GATE = (
    # A word after the label on its line: a key alone ("password") is the key rules' (and no view's).
    rf"(?i:\b(?:password|passphrase|pass[ \t]phrase|passcode|passwd|{_labels.MISSPELLINGS})"
    r"[^A-Za-z0-9\n][^\n]*[A-Za-z])"
    rf"|(?i:(?:{_I18N_WORDS})\pL{{0,6}}[ \t:=\x{{FF1A}}'\x{{2019}}][^\n]*[^\s])"
    rf"|\bPIN\b|(?i:\b(?:pin|{_labels.CODE_LABELS})\b[^\n]*[0-9])"
    rf"|(?i:\b(?:{_labels.SECRET_NOUNS})\b[^\n]*[a-z][0-9])|(?i:\buse[ \t]+\S+[ \t]+to[ \t]+(?:get|log|sign))"
    rf"|(?i:[?&;](?:{_labels.USER_FIELDS})=[^&\s]+&(?:{_labels.PASSWORD_FIELDS})="
    rf"|[?&;](?:{_labels.PASSWORD_FIELDS})=[^&\s]+&(?:{_labels.USER_FIELDS})=)"
    # and a generated password cut by punctuation or led by a symbol ("Kp7/Wm3/Xr9q", "*Rt7vQ2mK9").
    rf"|{_labels.PUNCTUATED_GATE}"
)
_PROSE_TRIGGER = f"{_PROSE_PHRASES}|{_LABEL_GATE}"
# The prefilter only meets ASCII text (every other string is analysed): its label gate holds the
# table's ASCII spellings alone, at a word's start (a compound's label is the assignment's stem).
_LABEL_GATE_ASCII = _LABEL_GATE.replace(
    f"(?:{_I18N_WORDS})", "\\b(?:" + "|".join(word for word in _I18N_WORDS.split("|") if word.isascii()) + ")"
)
_PROSE_TRIGGER_RE = re2.compile(
    rf"(?i:\b(?:((?:log[ \-]?in|sign[ \-]?in|logon|credentials?|creds|{_CREDENTIAL_WORDS_I18N}"
    rf"|{_PROSE_OTHER_WORDS})\b|{_PROSE_ARROW}))|(\b(?:pw|pwd|pass|passwd|passphrase|passcode"
    rf"|password|passwort|{_PASSWORD_ABBREVIATIONS})\b|(?:{_I18N_WORDS})\pL{{0,6}}))"
    r"|(?:^|\s)(-u|--user|--proxy-user)[ =]",
    _OPTIONS,
)
_PROSE_NAMING = re.compile(rf"(?i:{_PROSE_OTHER_WORDS})")  # the round-six words (see _prose_hits)
_PROSE_ARROW_END = re.compile(r"(?:->|=>|\u2192|\u21d2)$")  # an account pointed at its password
_PROSE_WINDOW = 96  # characters read after a trigger, on its line
_PROSE_WORDS = 10  # words read after a trigger ("pass for the shared account is the reverse of X")
# Round eight: with "is" in the languages of secret_labels.PASSWORD_WORDS ("la clave es x", "heslo je x").
_PROSE_LINK = (
    frozenset({"is", "was", "to", ":", "=", "-", "/", "'s", "\u2019s", "s"}) | _labels.COPULAS - _labels.ENGLISH_WORDS
)
_PROSE_BEFORE = 6  # words read before a password word, back to the line before it
_POSSESSIVE = ("'s ", "\u2019s ", "'s\t", "'s+")
_WORDS = re.compile(r"\S+")
# A query string's words: '+' is its space and '&' ends its field ("?q=password+policy&p=2" is two fields).
_FORM_WORDS = re.compile(r"[^\s+&]+")

# Strong-prefix tokens written backwards ("a4B8...C61_phg" is a ghp_ token): the prefix reversed at
# the end of a run of the token's characters, read back and checked as the token it is.
_REVERSED_SHAPES: Final = tuple(
    (index, rf"[{chars}]{{{count}}}(?:{'|'.join(re.escape(p[::-1]) for p in prefixes)})")
    for index, (_, prefixes, chars, count) in enumerate(_SPLIT_SHAPES)
)
# The same tokens in ROT13 ("NXVN..." is an AKIA key id): the prefix rotated, the body's class is
# closed under rotation; read back by rotating again. Both ways share one pattern and one category.
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm"
)
_ROTATED_SHAPES: Final = tuple(
    (index, rf"\b(?:{'|'.join(re.escape(p.translate(_ROT13)) for p in prefixes)})[{chars}]{{{count}}}")
    for index, (_, prefixes, chars, count) in enumerate(_SPLIT_SHAPES)
    if chars in ("0-9A-Z", "A-Za-z0-9", "A-Za-z0-9_", "0-9A-Za-z")  # classes rotation keeps
)
# And in ROT47 (every printable character but the space turned half way round: "89A0" is "ghp_"):
# the prefix and each character of the body's class rotated; read back by rotating again.
_ROT47 = str.maketrans({c: chr(33 + (c - 33 + 47) % 94) for c in range(33, 127)})


def _rot47_class(chars: str) -> str:
    """A character class of the ROT47 images of the characters `[chars]` matches."""
    pattern = re.compile(f"[{chars}]")
    return "".join(re.escape(chr(c).translate(_ROT47)) for c in range(33, 127) if pattern.fullmatch(chr(c)))


_ROT47_SHAPES: Final = tuple(
    (index, rf"(?:{'|'.join(re.escape(p.translate(_ROT47)) for p in prefixes)})[{_rot47_class(chars)}]{{{count}}}")
    for index, (_, prefixes, chars, count) in enumerate(_SPLIT_SHAPES)
    if len(prefixes[0]) >= 4  # "sk-", "hf_" rotated are three common characters: the longer prefixes only
)
_REVERSED_GATE = "|".join(pattern for _, pattern in (*_REVERSED_SHAPES, *_ROTATED_SHAPES, *_ROT47_SHAPES))
# RE2 (linear): a backtracking "[chars]{36,}_phg" reads every long run once per position.
_REVERSED_RE = re2.compile(
    "|".join(f"({pattern})" for _, pattern in (*_REVERSED_SHAPES, *_ROTATED_SHAPES, *_ROT47_SHAPES)), _OPTIONS
)

# Digits spelled as words ("card four-one-one-one 1111 1111 1111"): a number word followed by
# another or by a digit lets the text through; the words are read as digits and the card check runs on that view.
_NUMBER_WORDS: Final = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_SPELLED_GATE = rf"(?i:\b(?:{'|'.join(_NUMBER_WORDS)})[ \t,.\-]{{1,3}}(?:(?:{'|'.join(_NUMBER_WORDS)})\b|[0-9]))"
# A word and the separators after it become its digit: "four, one 1111" reads "41111".
_NUMBER_WORD_RE = re.compile(rf"(?i)\b({'|'.join(_NUMBER_WORDS)}|oh)\b[ \t,.\-]{{0,3}}")
_DIGIT_OF = {word: str(n) for n, word in enumerate(_NUMBER_WORDS)} | {"oh": "0"}

# Everything above in one pass, plus what makes a plain ASCII string need decoding first. No
# match here (on all the strings of a document at once) means no finding in any of them.
_NEEDS_DECODING = (
    r"%[0-9A-Fa-f]{2}|\\[ux\"'\\/]|\\[0-3][0-7]{2}|&#|&(?:amp|lt|gt|quot|apos);|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
    r"|=\?[A-Za-z0-9_\-]{1,40}(?:\*[A-Za-z\-]{1,20})?\?[QqBb]\?"  # an RFC 2047 encoded word (_ENCODED_WORD)
)
# JSON text in a string is parsed (its keys and pairs count): a string that starts with { or [.
_JSON_START = r"(?m:^\s*[\[{])"
# Every alternative that may start a finding; a string none of them matches holds none.
_PLAIN_GATES = (*(p for _, p in _SHAPES), _ASSIGNMENT, _CARD_GATE, _TOKEN_RUN)
# Tables (CSV, TSV, Markdown, psql and mysql result grids): a header cell named like a credential,
# a delimiter beside it, then a line break (rows follow). _table_hits reads the structure.
_TABLE_GATE = (
    rf"(?m:(?:^|[,;\t|])[ \t]*[\"']?[A-Za-z0-9_ .\-]*(?i:{_STEMS})[A-Za-z0-9_ .\-]*[\"']?[ \t]*"
    r"(?:[,;\t|][^\n]*)?\r?\n[^\n]*[,;\t|+])"
)
# Wallet seed phrases: twelve or more words of 3-8 lower-case letters in a row (BIP-39's words), one
# a line and numbered ("1. legal") or on one line; _seed_hits checks the words and the checksum.
# A '+' is a query string's space (a phrase sent as ?m=legal+winner+...).
_SEED_SEPARATOR = r"(?:[ \t,+]+|[ \t]*\r?\n[ \t]*(?:[0-9]{1,2}[.):][ \t]*)?)"
_SEED_GATE = rf"\b(?:[a-z]{{3,8}}{_SEED_SEPARATOR}){{11}}[a-z]{{3,8}}\b"
_SEED_RUN_RE = re2.compile(rf"\b(?:[a-z]{{3,8}}{_SEED_SEPARATOR}){{11,}}[a-z]{{3,8}}\b", _MATCH_ONLY)
# A password by its shape alone ("prod db: sa / Xk9#mP2vL7q!", "use hP3#vn8Lq!s2 to unlock"): a letter,
# a digit and a symbol side by side, in any order; _strong_password_hits reads the word around them.
_PW_SYMBOL = r"[!#$%^&*?~@+]"
_STRONG_GATE = (
    rf"[A-Za-z][0-9]{_PW_SYMBOL}|[A-Za-z]{_PW_SYMBOL}[0-9]|[0-9][A-Za-z]{_PW_SYMBOL}"
    rf"|[0-9]{_PW_SYMBOL}[A-Za-z]|{_PW_SYMBOL}[A-Za-z][0-9]|{_PW_SYMBOL}[0-9][A-Za-z]"
)
_VIEW_GATES = (_SPACED_GATE, _PROSE_TRIGGER, _REVERSED_GATE, _SPELLED_GATE, _TABLE_GATE, _SEED_GATE, _STRONG_GATE)
# Encodings the base64/hex decoder does not read (round six), each a gate and a reader (_coded_hits):
# character codes apart by blanks (decimal or octal: "103 104 112 95", "147 150 160 137"),
# chr() chains ("chr(103)+chr(104)"), Morse code, base85 and Ascii85 words (four symbols in a word,
# as base64 never has), 64-byte JSON arrays (a Solana keypair: "[41, 65, 43, ...]"), and strong-prefix
# tokens under any Caesar shift or Atbash ("jks_..." is ghp_ shifted by 3, "ZPRZ..." is AKIA).
_CODED_GATES: Final = (
    r"(?:[0-9]{2,3}[ \t]+){15}[0-9]{2,3}|(?i:chr|char)\([ \t]*[0-9]{2,3}[ \t]*\)[ \t]*[+.,&|]?[ \t]*(?i:chr|char)\("
    r"|(?:[.\-]+[ \t/]+){15}[.\-]",
    # Unbounded runs: counted ones multiply the states of the Set's DFA. Not '=' or '&' (assignments and
    # query strings have them in a row); a random base85 word of 20 has about four of the others.
    r"(?:[0-9A-Za-z+\-_]*[!#$%()*;<>?@^`{|}~]){3}",
    r"\[[ \t]*(?:[0-9]{1,3}[ \t]*,[ \t]*){15}[0-9]",
    r"\b[A-Za-z]{3}_[A-Za-z0-9]{36}\b|\b[A-Z]{4}[A-Z0-9]{16}\b",
)
# A backslash before a letter, which bash drops ("s\\k_live_..."), variables glued to each other
# or to a word ("$a$b", "${a}k", "s$b") and quoted option values in a row: the shell view
# (_shell_view) may rebuild a token that no other gate sees.
_SHELL_GATE = (
    r"\\[\w\-]|\$[A-Za-z_]\w*\$|\$\{[A-Za-z_]\w*\}[\w$]|[A-Za-z0-9]\$\{?[A-Za-z_]"
    r"|['\"][ \t]+-{1,2}[A-Za-z][\w\-]*(?:[ \t]+|=)['\"]"  # quoted values of options in a row: -d 'a' -d 'b'
)
# Round fourteen (set M): readers with a gate of their own, searched in every analysed string and in
# the prefilter: network device configuration (secret_devices), cards in other bases or as sums
# (secret_cardforms), the radio alphabet (secret_spoken); round fifteen: one-case tokens in the other case
# (_secret_casefold), provider prefixes under a Caesar shift or Atbash (_secret_shifts), `name value`
# configuration lines (_secret_directives).
_MORE_GATE = (
    f"(?:{_devices.GATE})|(?:{_cardforms.GATE})|(?:{_spoken.GATE})|(?:{_casefold.GATE})|(?:{_shifts.GATE})"
    f"|(?:{_directives.GATE})"
)
# Round fifteen (set N): cards in other languages' digit words, halves, a digit too many, powers of ten.
_MORE_GATE += f"|(?:{_cardwords.GATE})"
# The DFA of this program needs more than RE2's default memory on 4 KB texts (it then falls back to
# its NFA: ~100x slower on BFCL batches); states are built only as a search meets them.
_PREFILTER_OPTIONS = re2.Options()
_PREFILTER_OPTIONS.log_errors = False
_PREFILTER_OPTIONS.never_capture = True
_PREFILTER_OPTIONS.max_mem = 64 << 20
_PREFILTER_GATES: Final = (
    *_PLAIN_GATES,
    *(f"{_PROSE_PHRASES}|{_LABEL_GATE_ASCII}" if gate == _PROSE_TRIGGER else gate for gate in _VIEW_GATES),
    _SHELL_GATE,
    _ENCODED_GATE,
    _SPLIT_GATE,
    _NEEDS_DECODING,
    _JSON_START,
    *_CODED_GATES,
    _carriers.ASCII_GATE,  # round thirteen: bits in tabs and spaces (secret_carriers)
    _MORE_GATE,  # round fourteen (_more_hits)
)
_PREFILTER = re2.compile("|".join(f"(?:{p})" for p in _PREFILTER_GATES), _PREFILTER_OPTIONS)
# The same alternatives in two programs, for finding where matches are (_candidates): RE2 finds a
# match's start with a reverse DFA, and the reverse of the whole alternation outgrows its memory
# (the NFA then costs 70x on a 4 KB batch); the parts alone stay small.
_TABLE_GATE_RE = re2.compile(_TABLE_GATE, _MATCH_ONLY)
_PREFILTER_PARTS: Final = (
    # With the prefilter's memory: under RE2's default 8 MB the DFA of every shape and assignment
    # ran out on 4 KB batches and fell back to the NFA (~100x: 19 ms a BFCL batch round, 0.2 ms now).
    re2.compile("|".join(f"(?:{p})" for p in (*_PLAIN_GATES, _NEEDS_DECODING, _JSON_START)), _PREFILTER_OPTIONS),
    re2.compile(f"{_ENCODED_GATE}|{_SPLIT_GATE}", _MATCH_ONLY),
    re2.compile(
        "|".join(f"(?:{p})" for p in (_SPACED_GATE, _PROSE_PHRASES, _REVERSED_GATE, _SPELLED_GATE, _SHELL_GATE)),
        _MATCH_ONLY,
    ),
    re2.compile(_LABEL_GATE_ASCII, _MATCH_ONLY),
    # Tables and seed phrases each alone: with the views above in one program, their states multiply
    # (RE2's DFA outgrows its memory and the NFA costs 400x on a 4 KB batch).
    _TABLE_GATE_RE,
    re2.compile(_SEED_GATE, _MATCH_ONLY),
    re2.compile(_STRONG_GATE, _MATCH_ONLY),
    re2.compile("|".join(f"(?:{p})" for p in (*_CODED_GATES, _carriers.ASCII_GATE)), _MATCH_ONLY),
)
# Round eight's readers (secret_encodings) read pieces apart by line breaks: over the strings of a
# document joined by line breaks their gate would match across values ("cityA\ncityB\n94016") and
# send most documents to the slow path. Their gate is searched over the strings joined by NUL,
# which no reader takes for a separator (same offsets as the line-break join).
_ENCODINGS_GATE_RE = re2.compile(_encodings.GATE, _PREFILTER_OPTIONS)
_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
# One 'has a match' on UTF-8 bytes for every gate (the extension's Match, no wrapper overhead).
_raw_search = _encodings.raw_search
_MORE_GATE_RE = re2.compile(_MORE_GATE, _MATCH_ONLY)
_more_search = _raw_search(_MORE_GATE_RE)


_needs_decoding_raw = _raw_search(re2.compile(_NEEDS_DECODING, _MATCH_ONLY))
_encodings_search = _raw_search(_ENCODINGS_GATE_RE)


def _needs_decoding(text: str) -> bool:
    """True when a string holds an escape, an entity or a control character (RE2: ~20x re on a megabyte)."""
    return _needs_decoding_raw(text.encode("utf-8", "surrogatepass"))


# A Set answers from its DFA alone (see _SET_LIMIT); memory is taken only as states are built.
_SET_OPTIONS = re2.Options()
_SET_OPTIONS.log_errors = False
_SET_OPTIONS.never_capture = True
_SET_OPTIONS.max_mem = 64 << 20


def _set_matcher(patterns: Iterable[str]) -> Callable[[bytes], Sequence[int] | None]:
    """RE2's Set over the patterns: the indexes of those that match anywhere (empty or None: none)."""
    compiled = re2.Set.SearchSet(_SET_OPTIONS)
    for pattern in patterns:
        compiled.Add(pattern)
    compiled.Compile()
    raw = getattr(compiled, "_set", None)
    if raw is not None and callable(getattr(raw, "Match", None)):
        return raw.Match  # type: ignore[no-any-return]  # the extension's own method: a third faster
    return compiled.Match  # type: ignore[no-any-return]


# RE2's Set answers a third faster than a regexp search, but only from its DFA: one that ran out
# of memory would answer "no match". A search builds at most one DFA state per byte, and 2,048
# states of these programs take a few MB, well inside the Set's budget; longer texts go to the
# regexp, which falls back to its NFA (tests compare the two on random texts).
_SET_LIMIT = 2048
# One DFA over every gate is the product of the gates' automata: on varied text its states outgrew
# the 64 MB budget, and RE2 threw the cache away and built states again byte by byte - 560 us for
# a red-team call's JSON (mean 61 bytes) and 5 ms for a 300-byte paragraph of prose, against 7 us
# and 37 us with one DFA per group of eight gates (the big tables alone). A short text stays on the
# one DFA: it meets few states, which stay warm for the short values most calls are made of
# (1.0 us a BFCL value; 10.8 us through the groups). Measured on tests/adversarial, docs/*.md in
# 300-byte pieces and examples/bfcl-calls.jsonl (benchmarks/prefilter.py prints the three).
_SHORT_TEXT = 32
_GROUP_SIZE = 8
_ALONE = 3000  # characters: a gate this long (a table of names) gets a DFA of its own


def _groups(patterns: Sequence[str], size: int) -> list[list[int]]:
    """The patterns' indexes, in groups of `size` small patterns, and each big one alone."""
    small = [n for n, pattern in enumerate(patterns) if len(pattern) <= _ALONE]
    big = [[n] for n, pattern in enumerate(patterns) if len(pattern) > _ALONE]
    return [small[i : i + size] for i in range(0, len(small), size)] + big


# The answers for texts up to _SEEN_LENGTH bytes are kept (a pure function's: dropped whole when
# full): a call's values come back in the next calls and in the log's redaction, and the groups
# cost ~1-15 us a text where the one DFA, warm, cost ~1 (BFCL's decide median +2 us without
# this). Short texts' too: the one DFA took 0.6-3 us a BFCL value in a loop over them, a kept
# answer ~0.1 (hide_secrets on a BFCL call's arguments 27.6 -> 24 us, find 8.7 -> 7.2).
_SEEN_SIZE = 4096
_T = TypeVar("_T")
_SEEN_LENGTH = 512


_K = TypeVar("_K", str, bytes)


def _remembered(answer: Callable[[_K], _T], seen: dict[_K, _T]) -> Callable[[_K], _T]:
    """`answer`, its answers for texts up to _SEEN_LENGTH long kept in `seen` (dropped whole at _SEEN_SIZE)."""

    def matches(data: _K) -> _T:
        if len(data) > _SEEN_LENGTH:
            return answer(data)  # (benchmarks/prefilter.py sets _SEEN_LENGTH to -1: every text searched)
        found = seen.get(data)
        if found is None:
            if len(seen) >= _SEEN_SIZE:
                seen.clear()
            found = seen[data] = answer(data)
        return found

    return matches


def _kept(whole: Callable[[bytes], _T], search: Callable[[bytes], _T]) -> Callable[[bytes], _T]:
    """`whole` on a short text, `search` on a longer one; the answers for texts up to _SEEN_LENGTH bytes kept."""

    def first(data: bytes) -> _T:
        return whole(data) if len(data) <= _SHORT_TEXT else search(data)

    return _remembered(first, {})


def _any_matcher(patterns: Sequence[str]) -> Callable[[bytes], bool]:
    """Whether any pattern matches somewhere in a text of at most _SET_LIMIT bytes."""
    whole = _set_matcher(["|".join(f"(?:{p})" for p in patterns)])
    grouped = tuple(
        _set_matcher(["|".join(f"(?:{patterns[n]})" for n in group)]) for group in _groups(patterns, _GROUP_SIZE)
    )
    return _kept(lambda data: bool(whole(data)), lambda data: any(match(data) for match in grouped))


def _indexes_matcher(patterns: Sequence[str]) -> Callable[[bytes], frozenset[int]]:
    """The indexes of the patterns that match somewhere in a text of at most _SET_LIMIT bytes."""
    whole = _set_matcher(patterns)
    grouped = tuple((tuple(group), _set_matcher([patterns[n] for n in group])) for group in _groups(patterns, 1))
    return _kept(
        lambda data: frozenset(whole(data) or ()),
        lambda data: frozenset(group[i] for group, match in grouped for i in match(data) or ()),
    )


_prefilter_set = _any_matcher(_PREFILTER_GATES)
_prefilter_regexp = _raw_search(_PREFILTER)
# One string: the prefilter and round eight's gate in one program (one pass over a long text).
_PREFILTER_ALL = re2.compile(f"{_PREFILTER.pattern}|(?:{_encodings.GATE})", _PREFILTER_OPTIONS)
_PREFILTER_ALL_GATES: Final = (*_PREFILTER_GATES, _encodings.GATE)
_encodings_gate_set = _any_matcher((_encodings.GATE,))


def _prefilter_all_set(data: bytes) -> bool:
    """_PREFILTER_ALL_GATES on a text of at most _SET_LIMIT bytes: the prefilter's groups, then round eight's gate.

    The prefilter's own DFAs answer both (each DFA's states take memory: a second set of groups
    over the same gates took ~100 MB more on the corpora).
    """
    return _prefilter_set(data) or _encodings_gate_set(data)


_prefilter_all_regexp = _raw_search(_PREFILTER_ALL)


def _prefilter(text: str, *, encodings: bool = True) -> bool:
    """True when the text holds a candidate for any analysis (or needs decoding first)."""
    data = text.encode("utf-8", "surrogatepass")  # a lone surrogate matches nothing anyway
    if encodings:
        return _prefilter_all_set(data) if len(data) <= _SET_LIMIT else _prefilter_all_regexp(data)
    return _prefilter_set(data) if len(data) <= _SET_LIMIT else _prefilter_regexp(data)


def _matches(pattern: Any, text: str) -> Iterator[Sequence[tuple[int, int]]]:
    """The spans (whole match, then each group; (-1, -1) when unset) of each match, left to right."""
    raw = getattr(pattern, "_regexp", None)
    if text.isascii() and raw is not None and _UNANCHORED is not None:
        # ASCII: byte offsets are character offsets, and the extension's Match on bytes skips
        # the wrapper's per-match bookkeeping (a third of the time on short strings).
        data = text.encode("ascii")
        n = len(data)
        pos = 0
        while pos <= n:
            spans = raw.Match(_UNANCHORED, data, pos, n)
            start, end = spans[0]
            if start < 0:
                return
            yield spans
            pos = end if end > start else end + 1
        return
    groups = range(pattern.groups + 1)
    for m in pattern.finditer(text):
        yield [m.span(i) for i in groups]


# Which analyses a string needs, in one pass: RE2's Set reports which patterns match anywhere.
_SHAPES_AT, _ASSIGNMENTS_AT, _CARDS_AT, _TOKENS_AT, _ENCODED_AT, _SPLIT_AT = range(6)
_SPACED_AT, _PROSE_AT, _REVERSED_AT, _SPELLED_AT, _TABLE_AT, _SEED_AT = range(6, 12)
_STRONG_AT = 12
_CODES_AT, _BASE85_AT, _BYTE_ARRAY_AT, _SHIFTED_AT = range(13, 17)
_ENCODINGS_AT = 17  # round eight's readers (secret_encodings)
_ALL_CATEGORIES = frozenset(range(18))
_CATEGORY_PATTERNS: Final = (
    "|".join(p for _, p in _SHAPES),
    _ASSIGNMENT,
    _CARD_GATE,
    _TOKEN_RUN,
    _ENCODED_GATE,
    _SPLIT_GATE,
    *_VIEW_GATES,
    *_CODED_GATES,
    _encodings.GATE,
)
_categories_set = _indexes_matcher(_CATEGORY_PATTERNS)
_split_search = _raw_search(_SPLIT_RE)
_SPLIT_HEADS_RE = re2.compile(_SPLIT_HEADS, _MATCH_ONLY)
_ANCHOR_START = getattr(getattr(re2, "_Anchor", None), "ANCHOR_START", None)
_split_heads_search = _raw_search(_SPLIT_HEADS_RE)
_encoded_gate = _raw_search(re2.compile(_ENCODED_GATE, _MATCH_ONLY))


def _categories(text: str) -> frozenset[int]:
    """The analyses (_SHAPES_AT...) whose pattern matches somewhere in the text."""
    data = text.encode("utf-8", "surrogatepass")
    return _categories_set(data) if len(data) <= _SET_LIMIT else _ALL_CATEGORIES


# ---------------------------------------------------------------------------------------------
# Validators and excerpts
# ---------------------------------------------------------------------------------------------


def _mask(secret: str) -> str:
    """A masked excerpt: at most the first quarter (up to four characters) and the length."""
    shown = secret[: min(4, len(secret) // 4)]
    return f"{shown}…({len(secret)} chars)"


def _jwt_ok(token: str) -> bool:
    """True when the header of a JWT-shaped token decodes to a JSON object."""
    header = token.split(".", 1)[0].rstrip("=")
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))
        return isinstance(json.loads(decoded), dict)
    except (binascii.Error, ValueError):
        return False


_DIGIT = re.compile(r"[0-9]")
_LOWER = re.compile(r"[a-z]")
_UPPER = re.compile(r"[A-Z]")


def _random_looking(token: str) -> bool:
    """True when a token mixes lower case, upper case and digits, as generated keys do."""
    return bool(_DIGIT.search(token) and _LOWER.search(token) and _UPPER.search(token))


_NOT_A_KEY_LABEL = re.compile(
    r"(?i)hash|sha|digest|checksum|commit|version|release|(?:^|[_.\-])(?:id|uuid|guid)[\"']?[ \t]*[:=]"
)


def _discord_id(part: str) -> bool:
    """True when the first part of a Discord token is base64 of a snowflake id (17-20 digits)."""
    try:
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20


# What follows a key header when a key is there: its armor's dashes, line breaks (also as "\n"
# escapes), RFC 1421 header lines (Proc-Type, DEK-Info) and base64. A header alone ("grep -rn
# 'BEGIN PRIVATE KEY' tests/", docs, a pattern) carries no key. The bare phrase without the armor's
# dashes needs a longer body: a word of prose after it must not pass for one.
_ARMORED_BODY = re.compile(
    r"(?:[ \t]+BLOCK)?-{5}(?:\s|\\[rn])*(?:[A-Za-z\-]+:[^\n]*(?:\n|\\n)(?:\s|\\[rn])*)*[A-Za-z0-9+/=]{4}"
)
_BARE_BODY = re.compile(
    r"(?:[ \t]+BLOCK)?-{0,4}(?:\s|\\[rn])+(?:[A-Za-z\-]+:[^\n]*(?:\n|\\n)(?:\s|\\[rn])*)*[A-Za-z0-9+/=]{16}"
)


def _key_header_ok(text: str, start: int, end: int) -> bool:
    """True when a BEGIN ... PRIVATE KEY header is followed by a key body (other key shapes always pass)."""
    if not text.startswith("BEGIN", start):
        return True
    return bool(_ARMORED_BODY.match(text, end) or _BARE_BODY.match(text, end))


_NOT_A_HEX_KEY = re.compile(
    r"(?i)sha|hash|digest|checksum|commit|\btx|transaction|address|block|fingerprint|\bid\b|uuid|rev|version|public"
)


# Words that make a value near a provider's name an id, a hash or a build, not its key.
_NOT_A_PROVIDER_KEY = re.compile(
    r"(?i)sha|hash|digest|checksum|commit|version|release|build|\bid\b|uuid|guid|\bapp\b|dyno|request|trace|event"
)
_HEX_ID = re.compile(r"[0-9a-fA-F\-]+")
_SLUG_SEPARATOR = re.compile(r"[-_]")
# A path segment of words and numbers ("release-2024-notes-v2", "deploy_done_2024_12"): a slug, not a key.
_WORD_SLUG = re.compile(r"(?:[A-Za-z]{2,}|[0-9]{1,8})(?:[_\-](?:[A-Za-z]{2,}|[0-9]{1,8}))*")


def _shape_ok(kind: str, text: str) -> bool:
    """Checks on a shape match that the pattern alone cannot make."""
    if kind == "jwt":
        return _jwt_ok(text)
    if kind in ("openai-key", "anthropic-key"):
        return _random_looking(text)  # "sk-learn-compatible-estimators" is no key
    if kind == "basic-auth":
        password = text[text.index(":", text.index("://") + 3) + 1 : -1]  # scheme://user:PASSWORD@
        return not _is_placeholder(unquote(password))
    if kind == "url-user-token":
        user = text[text.index("://") + 3 : -1]
        return bool(_DIGIT.search(user) and (_LOWER.search(user) or _UPPER.search(user))) and not _is_placeholder(user)
    if kind == "aws-access-key" and text.islower():
        return sum(c.isdigit() for c in text[4:]) >= 2 and sum(c.isalpha() for c in text[4:]) >= 2
    if kind == "discord-bot-token":
        return _discord_id(text.split(".", 1)[0])
    if kind == "azure-client-secret":
        return _random_looking(text)
    if kind == "service-key":
        return not _NOT_A_KEY_LABEL.search(text)  # "sentry_release_sha: ...", "asana_task_id = ...": ids and hashes
    if kind == "hex-key":
        return not _NOT_A_HEX_KEY.search(text)
    if kind == "vault-token":
        body = text[2:]
        return _random_looking(body) and sum(len(w) for w in _WORDISH.findall(body)) <= len(body) // 2
    if kind == "capability-url":
        segment = text.rsplit("/", 1)[1]
        digits = sum(c.isdigit() for c in segment)
        if _WORD_SLUG.fullmatch(segment) or _HEX_ID.fullmatch(segment):
            return False  # a slug of words, or a hex id or UUID (the id of a token, not the token)
        pieces = _SLUG_SEPARATOR.split(segment)
        if len(pieces) >= 3 and all(p.isalpha() or p.isdigit() or len(p) <= 3 for p in pieces):
            return False  # a title slug ("/t/How-To-Install-V2-On-Ubuntu-22", a forum topic)
        return _random_looking(segment) or (digits >= 3 and len(segment) - digits >= 8)
    if kind == "alibaba-key":
        return _random_looking(text[4:]) or (len(text) == 24 and bool(_DIGIT.search(text, 4)))
    if kind == "alibaba-secret":
        return _random_looking(text[-30:])
    if kind == "oracle-connect":
        password = text[text.rindex("/", 0, len(text) - 1) + 1 : -1]
        return not _is_placeholder(password)
    if kind == "bitlocker-key":
        return all(int(group) % 11 == 0 for group in text.split("-"))  # (each is 11 times a 16-bit word)
    if kind == "recovery-key":
        body = text.replace("-", "")
        if _HEX_ID.fullmatch(body):
            return False  # hex in groups is a fingerprint or an id; a recovery key uses all 36 characters
        return sum(c.isdigit() for c in body) >= 4 and sum(c.isalpha() for c in body) >= 4
    if kind == "provider-token" and text.startswith("SK"):
        return bool(_DIGIT.search(text, 2)) and bool(re.search("[a-fA-F]", text[2:]))  # hex, not a word
    return True


# Entropy thresholds by length: about the 1st percentile of random base64 strings of that
# length (measured), so 99% of generated keys pass while identifiers made of words do not.
_ENTROPY_FLOOR = ((32, 4.15), (40, 4.4), (64, 4.85), (128, 5.35), (512, 5.8))
_MAX_TOKEN = 512  # longer runs are data (images, archives), and keys have headers


# c * log2(c) for every count a token of _MAX_TOKEN characters can have: entropy in C-level loops.
_C_LOG_C = [0.0] + [c * math.log2(c) for c in range(1, _MAX_TOKEN + 3)]


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character (H = log2 n - sum(c log2 c) / n over the counts c)."""
    n = len(text)
    return math.log2(n) - sum(map(_C_LOG_C.__getitem__, Counter(text).values())) / n


def _entropy_floor(n: int) -> float:
    """The entropy a random base64 token of length n reaches 99% of the time (interpolated)."""
    for (n0, e0), (n1, e1) in itertools.pairwise(_ENTROPY_FLOOR):
        if n <= n1:
            return e0 + (e1 - e0) * (math.log2(max(n, n0)) - math.log2(n0)) / (math.log2(n1) - math.log2(n0))
    return _ENTROPY_FLOOR[-1][1]


_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}")
_PUBLIC_KEY_BEFORE = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp(?:256|384|521)|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com"
    r"|[a-z0-9-]+-cert-v01@openssh\.com)[ \t]+$"
)
# Round ten (set I): Vault's unseal and recovery shares are 33 bytes (a 32-byte key and the share's
# x coordinate), 66 hex digits: no digest has that length (32, 40, 56, 64, 96, 128), and the one
# other 33-byte value in hex, a compressed elliptic-curve public key, starts 02 or 03. Hex is never
# a secret by its shape otherwise (ids and digests); at this length it is one.
_KEY_SHARE = re.compile(r"[0-9a-f]{66}|[0-9A-F]{66}")


def _high_entropy(text: str, start: int, token: str) -> bool:
    """True for a run that reads as a generated key rather than words, hex, a path or data."""
    body = token.rstrip("=")
    if not 32 <= len(body) <= _MAX_TOKEN:
        return False
    # A data: URI carries content, not a credential: when its bytes are the media its type declares
    # (round thirteen: "base64," alone no longer voids what follows; secret_exemptions.media_data_uri).
    if text[max(0, start - 7) : start].lower() == "base64," and _exemptions.media_data_uri(text, start, token):
        return False
    # Integrity hashes (SRI "sha512-...", digests "sha256:...") and public keys ("ssh-ed25519 AAAA...")
    # are published on purpose: lock files and authorized_keys must come back whole. Round thirteen:
    # only a payload of exactly the algorithm's size is one; another is read without its label.
    digest = _exemptions.digest_payload(text, start, token)
    if digest is not None:
        if _exemptions.exact_digest(*digest):
            return False
        body = digest[1].rstrip("=")
        if len(body) < 32:
            return False
    if body.startswith("AAAA") and _PUBLIC_KEY_BEFORE.search(text, max(0, start - 48), start):
        return False
    if body.count("/") > len(body) // 8:
        return False  # a path: random base64 has one '/' in 64 characters
    if _KEY_SHARE.fullmatch(token) and token[:2] not in ("02", "03"):
        return True  # a Vault unseal or recovery share (module note at _KEY_SHARE), wherever it stands
    # Inside a URL: document ids and signatures; a URL's secrets are caught by the basic-auth,
    # query-string and token-shape rules.
    window = max(0, start - 512)  # bounded: a long text with no space must not be read back per run
    word_start = max(text.rfind(" ", window, start), text.rfind("\n", window, start), window - 1)
    # Round eleven (set J): only on a host of public document ids (secret_exemptions.public_id_url);
    # elsewhere a generated run in a URL's path, fragment or unnamed parameter is read as anywhere.
    if "://" in text[word_start + 1 : start]:
        if _exemptions.public_id_url(text[word_start + 1 : start + len(token)], start - word_start - 1):
            return False
        # A URL's run is read a path segment at a time: "com/builds/01HZX..." is a host's end, a
        # folder and a 26-character ULID, not one 37-character key.
        body = max(body.split("/"), key=len)
        if len(body) < 32:
            return False
    # Identifiers are made of words ("getUserAccountInformation"): random text rarely is.
    if not _random_looking(body) or sum(len(w) for w in _WORDISH.findall(body)) > len(body) // 2:
        return False
    if _entropy(body) < _entropy_floor(len(body)):
        return False
    return not _encoded_text(body)


_PRINTABLE_BYTES = bytes([9, 10, 13, *range(32, 127)])


def _encoded_text(token: str) -> bool:
    """True when a token is base64 of text (a JSON cursor, a message): encoded data, not a random key."""
    try:
        decoded = base64.b64decode(token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return False
    if decoded[:1] in _DEFLATE_HEADS:
        # A compressed stream of text is text: the decoder reads what it holds (round thirteen).
        inflated = _inflated(decoded)
        decoded = decoded if inflated is decoded or not inflated else inflated
    unprintable = len(decoded.translate(None, _PRINTABLE_BYTES))
    return unprintable <= len(decoded) * 0.1


_DOUBLED = str.maketrans("0123456789", "0246813579")  # the digit sum of twice each digit


def _luhn(digits: str) -> bool:
    """The Luhn checksum of a digit string (digit sums by byte sums: no Python loop)."""
    odd = digits[-1::-2]
    even = digits[-2::-2].translate(_DOUBLED)
    return (sum(odd.encode()) + sum(even.encode()) - 48 * len(digits)) % 10 == 0


def _is_card(digits: str) -> bool:
    """13-19 digits, an issuer of payment cards (2-6: Mastercard, Amex, Visa...; 15 digits from 1: UATP), Luhn-valid."""
    # Other first digits are airlines, health, telecom and national ids: with them, one
    # millisecond timestamp in ten (13 digits starting with 1) would pass Luhn. UATP (airline
    # cards, ISO/IEC 7812 issuer 1) is 15 digits: no timestamp of our decades has that length.
    return _issuer(digits, 0, len(digits)) and _luhn(digits)


def _issuer(digits: str, begin: int, end: int) -> bool:
    """True when digits[begin:end] has a card's length and a card issuer's first digit."""
    first = digits[begin]
    return 13 <= end - begin <= 19 and ("2" <= first <= "6" or (first == "1" and end - begin == 15))


# Separators that join groups only in a card's own grouping: fours (the last 1-4), or Amex's 4-6-5.
_WEAK_SEPARATOR = re.compile(r"[/|+()\r\n\u00b7\u2022\u2027\u2219\u22c5\u30fb\uff65]")


def _card_grouping(run: str, lengths: Sequence[int]) -> bool:
    """True unless the run is joined by a weak separator in other than a card's grouping."""
    if not _WEAK_SEPARATOR.search(run):
        return True
    *head, last = lengths
    return (bool(head) and all(n == 4 for n in head) and 1 <= last <= 4) or list(lengths) in ([4, 6, 5], [4, 6, 4])


_ASCII_DIGITS = re.compile(r"[0-9]+")
_NOT_DIGITS = re.compile(r"[^0-9]+")
# Inside a longer run, the stretches a card can sit in: groups of 3-6 digits, or 13-19 at once.
_CARD_LIKE = re2.compile(r"[0-9]{3,6}(?:(?:[ \t._\-]{1,6}|,)[0-9]{3,6})+|[0-9]{13,19}", _MATCH_ONLY)


def _card_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, digits) of each card number in text, any grouping, any Unicode digits."""
    found: list[tuple[int, int, str]] = []
    for spans in _matches(_ASCII_CARD_RE if text.isascii() else _unicode_card_re(), text):
        run_start, run_end = spans[0]
        if not text.isascii():
            groups = _unicode_groups(text, run_start, run_end)
            if _card_grouping(text[run_start:run_end], [len(g) for g, _, _ in groups]):
                found.extend(_card_windows(groups))
                continue
            # Not a card's grouping: the parts between weak separators are runs of their own.
            cuts = [
                run_start,
                *(m.start() + run_start for m in _WEAK_SEPARATOR.finditer(text[run_start:run_end])),
                run_end,
            ]
            for a, b in itertools.pairwise(cuts):
                found.extend(_card_windows([g for g in groups if a <= g[1] and g[2] <= b]))
            continue
        whole = _NOT_DIGITS.sub("", text[run_start:run_end])
        if _is_card(whole) and _card_grouping(
            text[run_start:run_end], [len(g) for g in _ASCII_DIGITS.findall(text, run_start, run_end)]
        ):
            found.append((run_start, run_end, whole))  # any grouping, as long as it is the whole run
            continue
        run = text[run_start:run_end]
        for stretch in _matches(_CARD_LIKE, run):
            a, b = stretch[0]
            groups = [
                (m.group(), run_start + m.start(), run_start + m.end()) for m in _ASCII_DIGITS.finditer(run, a, b)
            ]
            # RE2 has no lookbehind: a stretch may start or end inside a longer group; drop that part.
            if a > 0 and run[a - 1].isdigit():
                groups = groups[1:]
            if b < len(run) and run[b].isdigit():
                groups = groups[:-1]
            found.extend(_card_windows(groups, whole_run=False))
    if text.isascii() and _spread_card_search(text.encode("ascii")):
        found.extend(_spread_cards(text, _Taken((start, end) for start, end, _ in found)))
    if text.isascii():
        found.extend(_maestro_spans(text, _Taken((start, end) for start, end, _ in found)))
    if found and "\n" in text:
        # Round fourteen: the byte columns of a hex dump are hex, not a card ("2021 2223 2425 2627").
        found = [hit for hit in found if not _framings.hex_column(text, hit[0], hit[1])]
    return found


# Round eleven: Maestro issues 12- to 19-digit numbers; the card reader starts at 13 (a 12-digit
# number is a phone number, an AWS account or an order as often). A 12-digit run is a card when it
# is Luhn-valid and starts with a Maestro range (50, 56-58, 63, 67), whole or in groups of four,
# and is no phone number (+), ARN account (:), decimal or part of a longer number or word.
_MAESTRO_12 = re.compile(
    r"(?<![0-9A-Za-z+:./\-])(?:5[0678]|6[37])[0-9]{2}([ \-]?)[0-9]{4}\1[0-9]{4}"
    r"(?![0-9A-Za-z]|[.:/\-][0-9]|[ \t][0-9]{3})"
)
_NOT_A_CARD_BEFORE = re.compile(r"(?i)account|acct|\baws\b|\barn\b|phone|\btel\b|mobile|\bfax\b|whatsapp|\bid\b")


_maestro_search = _raw_search(re2.compile(r"(?:5[0678]|6[37])[0-9]{2}[ \-]?[0-9]{4}[ \-]?[0-9]{4}", _MATCH_ONLY))


def _maestro12(digits: str) -> bool:
    """True for 12 digits from a Maestro range that pass Luhn."""
    return len(digits) == 12 and digits[:2] in ("50", "56", "57", "58", "63", "67") and _luhn(digits)


def _maestro_spans(text: str, taken: _Taken) -> list[tuple[int, int, str]]:
    """12-digit Maestro numbers (_MAESTRO_12) not already inside a card found."""
    found: list[tuple[int, int, str]] = []
    if not _maestro_search(text.encode("ascii")):
        return found  # one RE2 pass: Python's regex would try every position of a long text
    for n, m in enumerate(_MAESTRO_12.finditer(text)):
        if n >= MAX_SPLIT:
            break
        digits = _NOT_DIGITS.sub("", m.group())
        if taken.overlaps(m.start(), m.end()) or not _maestro12(digits):
            continue
        if m.start() >= 2 and text[m.start() - 1] in " \t" and text[m.start() - 2].isdigit():
            continue  # the last groups of a longer number ("1234 5678 9012 3456")
        if _NOT_A_CARD_BEFORE.search(text, max(0, m.start() - 24), m.start()):
            continue
        found.append((m.start(), m.end(), digits))
    return found


_SPREAD_CARD_RE = re2.compile(_SPREAD_CARD, _MATCH_ONLY)
_CARD_GROUP = re.compile(r"[0-9OoSlIBZ]+")
_spread_card_search = _raw_search(_SPREAD_CARD_RE)
# Letters that stand for digits (O/0, l/1, I/1, S/5, B/8, Z/2; round six): one a group, and the
# whole must pass Luhn (a look-alike read wrong fails it nine times in ten).
_O_TO_ZERO = str.maketrans("OoSlIBZ", "0051182")


def _spread_cards(text: str, taken: _Taken) -> list[tuple[int, int, str]]:
    """Cards in their own grouping with other fillers between the groups (see _SPREAD_CARD)."""
    hits: list[tuple[int, int, str]] = []
    for n, spans in enumerate(_matches(_SPREAD_CARD_RE, text)):
        start, end = spans[0]
        if n >= MAX_SPLIT:
            break  # a text of thousands of number groups: the cards among the first are reported
        if taken.overlaps(start, end) or text[start - 1 : start].isalnum() or text[end : end + 1].isalnum():
            continue  # part of a longer number or word ("10000", "Oooo")
        found = [m for m in _CARD_GROUP.finditer(text, start, end) if _DIGIT.search(m.group())]
        groups = [m.group() for m in found]
        # Fillers hold at most two words ("and", "(cont.)"): a sentence between groups joins none.
        if any(len(text[a.end() : b.start()].split()) > 2 for a, b in itertools.pairwise(found)):
            continue
        if any(sum(c.isdigit() for c in g) < len(g) - 1 for g in groups):
            continue  # one look-alike letter per group at most: "Oooo", "BOSS" are words
        digits = "".join(groups).translate(_O_TO_ZERO)
        if _is_card(digits):
            hits.append((start, end, digits))
    return hits


def _unicode_groups(text: str, run_start: int, run_end: int) -> list[tuple[str, int, int]]:
    """The digit groups of a run with Unicode digits, separators and invisible characters."""
    groups: list[tuple[str, int, int]] = []
    digits: list[str] = []
    start = end = -1
    for i in range(run_start, run_end):
        ch = text[i]
        value = _numerals.digit_value(ch)
        if value is not None:
            if not digits:
                start = i
            digits.append(chr(48 + value))
            end = i + 1
        elif digits and unicodedata.category(ch) not in ("Cf", "Mn"):
            groups.append(("".join(digits), start, end))
            digits = []
    if digits:
        groups.append(("".join(digits), start, end))
    return groups


def _card_windows(groups: list[tuple[str, int, int]], *, whole_run: bool = True) -> list[tuple[int, int, str]]:
    """The cards in one run of digit groups: the whole run, or card-like groups inside a longer one."""
    if not groups:
        return []
    digits = "".join(g for g, _, _ in groups)
    if whole_run and _is_card(digits):
        return [(groups[0][1], groups[-1][2], digits)]
    # A longer run ("4111 1111 1111 1111 123", "1.5 4111-1111-..."): windows of whole groups.
    # Any grouping is accepted only for a whole run; inside, groups of 3-6 digits (card-like)
    # or one group of 13-19, so that lists of small numbers do not pass Luhn one time in ten.
    ends = list(itertools.accumulate(len(g) for g, _, _ in groups))  # digits up to the end of group k
    # last_short[k]: the last group at or before k that cannot be part of a multi-group window.
    last_short = list(
        itertools.accumulate((k if not 3 <= len(g) <= 6 else -1 for k, (g, _, _) in enumerate(groups)), max, initial=-1)
    )[1:]
    found: list[tuple[int, int, str]] = []
    i = 0
    n = len(groups)
    while i < n:
        begin = ends[i] - len(groups[i][0])
        # The windows that start with group i and hold 13-19 digits: a bisection, then <= 7 tries.
        j = bisect.bisect_left(ends, begin + 13, i)
        taken = False
        while j < n and ends[j] - begin <= 19 and "1" <= digits[begin] <= "6":
            if i != j and last_short[j] >= i:
                break
            if _issuer(digits, begin, ends[j]) and _luhn(digits[begin : ends[j]]):
                found.append((groups[i][1], groups[j][2], digits[begin : ends[j]]))
                i, taken = j + 1, True
                break
            j += 1
        if not taken:
            i += 1
    return found


# ---------------------------------------------------------------------------------------------
# Text analysis
# ---------------------------------------------------------------------------------------------

_Hit = tuple[str, int, int, str]  # kind, start, end, the secret text (for the excerpt only)


def _budgeted(pattern: Any, text: str, hits: list[_Hit]) -> Iterator[Sequence[tuple[int, int]]]:
    """The first MAX_SPLIT matches' spans; past them the rest of the text is one unchecked hit (fail closed)."""
    for n, spans in enumerate(_matches(pattern, text)):
        if n >= MAX_SPLIT:
            hits.append((PAST_SPLIT_BUDGET, spans[0][0], len(text), text[spans[0][0] :]))
            return
        yield spans


# Round eleven (set I): credential words that also start namespaced names ("session:count", a
# Redis key; "token:read", an OAuth scope): glued by a bare colon to a plain word, they are a name.
# Password words are not among them ("password:sandcastle" is a password).
_NAMESPACE_STEMS: Final = frozenset({"session", "sessions", "sess", "token", "tokens", "auth", "cookie", "cookies"})


def _assignment_secret(key: str, sep: str, raw: str, after: str = "") -> str | None:
    """The secret of one `key <sep> value` in text, or None when it is no credential or no secret."""
    if not is_credential_key(key.strip("-_. ")):
        return None
    quoted = raw[:1] in "\"'`"
    prose = sep.strip().lower() in ("is", "was")
    if quoted:
        value = raw[1:-1]
        if _is_placeholder(value) or (prose and not _looks_secret(value)) or _translation(key, value):
            return None
        return value
    if "\n" in sep:
        return None  # "password:\nnext line": only a quoted value on the next line counts
    words = raw.split()
    first = words[0]
    more = len(words) > 1
    if first.lower() in _AUTH_SCHEMES and more:
        first, more = words[1], False  # "Authorization: Bearer x": the token after the scheme
    if prose or more:
        first = first.rstrip(".!?:")  # the end of a sentence is no part of the value
    # Under three characters a bare word in text is a count or a flag ("session: 3"), rarely a secret.
    bare = first.rstrip(".!?:").lstrip("[({")  # "password: [true]": a list of a status word
    if len(bare) < 3 or _is_placeholder(first) or bare.lower() in _STOPWORDS:
        return None
    if sep.strip() and _exemptions.no_password_option(first):
        return None  # "rootpw: --lock" (a key and its value); a command's "token --host" is read on
    if sep == ":" and key.lower() in _NAMESPACE_STEMS and not _looks_secret(bare):
        return None  # a namespaced name, not a pair: Redis's "session:count", a scope's "token:read"
    # A bare word stops before a closing bracket: "value: [REDACTED]" reads as "[REDACTED", and
    # "DB_PASSWORD=${DB_PASSWORD}" as "${DB_PASSWORD": closed again, it is the placeholder it was.
    if first[0] in _CLOSING and _is_placeholder(first + _CLOSING[first[0]]):
        return None
    if first.count("{") > first.count("}") and _is_placeholder(first + "}" * (first.count("{") - first.count("}"))):
        return None
    # A link is where to set a password ("Reset your password: https://..."), not one; a URL's own
    # password is the basic-auth shape's.
    if _URL_VALUE.match(first) and not first.lower().startswith(("op:", "vault:")):
        return None  # (a secret store's scheme is no link: op://Summer2024Sunrise is store_reference's to judge)
    # A code reference is recognised whole (secret_exemptions.code_reference, round eleven): a
    # closed call or subscript, or a name whose last word is a credential's ("new_password").
    follows = raw[len(words[0]) : len(words[0]) + 1] if more else after
    # A shell's or an .env file's KEY=value (upper-case name, no spaces) takes a bare word as a
    # literal: DB_PASSWORD=harbor_lantern_password sets that string (only a dotted name or a call is code).
    shell = (
        sep == "="
        and _SHELL_NAME.fullmatch(key.split()[-1] if key.split() else key) is not None
        and _exemptions.bare_name(first)
    )
    if (
        sep.strip() in ("=", "==", ":=", "=>", "?=", "+=", ",")
        and not shell
        and _exemptions.code_reference(first, follows)
    ):
        return None
    if sep.strip() == ":" and _exemptions.code_reference(first, follows, calls_only=True):
        return None  # a dict's value read from code: 'PASSWORD': os.environ['DB_PASSWORD']
    # Prose: "is"/"was", or a colon followed by more words ("password: click the link").
    if (prose or more) and not _looks_secret(first):
        return None
    return None if _translation(key, first) else first


_SHELL_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")


def _translation(key: str, value: str) -> bool:
    """True for a glossary's line: the password's word translated ("'contrasenya' = password"), not a password."""
    word = _labels.fold(value.strip(_WORD_EDGE))
    if not (word in CREDENTIAL_WORDS or word in _LABEL_WORDS):
        return False
    last = _UNICODE_WORDS.findall(_labels.fold(_normalise(key)))[-1:]
    return last != [word]


def _assignments(text: str, taken: _Taken) -> Iterable[_Hit]:
    """Credential assignments in text whose value is not already inside a shape match."""
    for spans in _matches(_ASSIGNMENT_RE, text):
        # Which alternative matched: the first whose value group is set.
        key_at, sep_at, value_at = next(alt for alt in _ALTERNATIVES if spans[alt[2]][0] >= 0)
        key = key_at if isinstance(key_at, str) else text[spans[key_at][0] : spans[key_at][1]]
        sep = sep_at if isinstance(sep_at, str) else text[spans[sep_at][0] : spans[sep_at][1]]
        value_start, value_end = spans[value_at]
        raw = text[value_start:value_end]
        if value_at == 7:
            raw = raw.strip()  # <password> x </password>
        elif value_at == 21 and raw.isdigit():
            continue  # "login ... -p 2222": a port
        elif value_at in _TOKEN_OPERANDS and not (len(raw) >= 16 and _DIGIT.search(raw)):
            continue  # "cargo login then paste it": an operand that is a word, not a token
        secret = _assignment_secret(key, sep, raw, text[value_end : value_end + 1])
        if secret is None:
            # A passphrase in plain words under a password variable's name (round eleven, set J).
            phrase = (
                _exemptions.env_passphrase(key, text, value_start)
                if sep.strip().lower() in ("=", ":", "is", "was") and raw[:1] not in "\"'`"
                else None
            )
            if phrase is not None and not taken.overlaps(*phrase):
                yield ("keyword", phrase[0], phrase[1], text[phrase[0] : phrase[1]])
            continue
        # The span of the secret itself (not its key, quotes or scheme), for redaction.
        start = text.find(secret, value_start, value_end)
        end = start + len(secret)
        if not taken.overlaps(start, end):
            yield ("keyword", start, end, secret)


class _Taken:
    """Spans already reported, merged and sorted, so an overlap test is one bisection."""

    __slots__ = ("ends", "starts")

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        """Merge the spans."""
        self.starts: list[int] = []
        self.ends: list[int] = []
        for start, end in sorted(spans):
            if self.ends and start <= self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], end)
            else:
                self.starts.append(start)
                self.ends.append(end)

    def covers(self, start: int, end: int) -> bool:
        """True when [start, end) lies inside one taken span."""
        i = bisect.bisect_right(self.starts, start) - 1
        return i >= 0 and self.ends[i] >= end

    def overlaps(self, start: int, end: int) -> bool:
        """True when [start, end) meets a taken span."""
        i = bisect.bisect_right(self.starts, start)
        return (i > 0 and self.ends[i - 1] > start) or (i < len(self.starts) and self.starts[i] < end)


_HEX_TAIL = re.compile(r"[0-9a-fA-F][0-9a-fA-F\-]{31,}$")


def _shape_span(kind: str, text: str, start: int, end: int, key_end: int) -> tuple[int, int]:
    """What to hide of a shape match: a key block up to its END marker at key_end (-1: none), a URL's password."""
    if kind == "private-key":
        # The header names the key; the key is what follows, up to the END marker or the end.
        if text[max(0, start - 5) : start] == "-----":
            start -= 5
        if key_end < 0:
            return start, len(text)
        close = text.find("-----", key_end + 8, key_end + 100)  # "-----END RSA PRIVATE KEY-----"
        return start, close + 5 if close >= 0 else min(len(text), key_end + 8)
    if kind == "basic-auth":
        scheme_end = text.index("://", start) + 3
        return text.index(":", scheme_end) + 1, end - 1  # user:PASSWORD@
    if kind == "url-user-token":
        return text.index("://", start) + 3, end - 1  # scheme://TOKEN@
    if kind in ("query-key", "signed-url"):
        return text.index("=", start) + 1, end
    if kind == "capability-url":
        return text.rindex("/", start, end) + 1, end  # the key segment: the URL stays readable
    if kind == "oracle-connect":
        return text.rindex("/", start, end - 1) + 1, end - 1  # user/PASSWORD@
    if kind == "alibaba-secret":
        return end - 30, end
    if kind == "app-password":
        return end - 19, end  # the password, not the words that name it
    if kind in ("service-key", "hex-key"):
        value = _HEX_TAIL.search(text, start, end)
        return (value.start(), end) if value else (start, end)
    return start, end


def _token_ok(index: int, token: str) -> bool:
    """True when a glued token reads as one of its shape: random keys mix cases and digits, AWS ids hold a digit."""
    kind = _SPLIT_SHAPES[index][0]
    if kind in ("openai-key", "anthropic-key", "github-token", "google-api-key"):
        return _random_looking(token)  # "sk-" "learn-compatible-estimators": words, not a key
    return kind != "aws-access-key" or any(c.isdigit() for c in token)


_OPTION_PIECE = re.compile(r"-{1,2}[A-Za-z][A-Za-z\-]*[ \t=]")  # a shell option standing alone ("-d ", "--data=")


def _glued(text: str, start: int, index: int) -> tuple[str, int, bool] | None:
    """(token glued back from the pieces at `start`, its end, whether it crossed a sibling), or None."""
    # None when the pieces make no token, or when the first piece alone is one (the raw shape's).
    limit = min(len(text), start + _MAX_GLUED)
    words: list[str] = []
    ends: list[int] = []
    gaps: list[str] = []
    pos = start
    while True:
        word_end = _PIECE.match(text, pos, limit).end()  # type: ignore[union-attr]
        words.append(text[pos:word_end])
        ends.append(word_end)
        gap = _GAP_RUN.match(text, word_end, limit)
        if gap is None:
            break
        after = _PIECE.match(text, gap.end(), limit).end()  # type: ignore[union-attr]
        if after == gap.end():
            break
        if _OPTION_PIECE.match(text, gap.end(), limit) and gap.group()[-1:] in (" ", "\t"):
            break  # "'sk' -d '_live_...'": an option between two quoted values is no piece of a token
        # Spaces alone join only pieces of four characters or more: prose ("AKIA KEYS ARE ...") has
        # short words, a token cut in two does not. Quotes and sibling values join any pieces.
        if not _STRONG_GAP.search(gap.group()) and (len(words[-1]) < 4 or after - gap.end() < 4):
            break
        # Past the shape's minimum a token may go on ("github_pat_" keys are 93 characters), but
        # once it reads as a key a short piece is a neighbour's ("ok"), not the token's end.
        so_far = "".join(words)
        if len(so_far) >= _SPLIT_MAXIMUM[index] or (
            len(so_far) >= _SPLIT_MINIMUM[index] and after - gap.end() < 8 and _token_ok(index, so_far)
        ):
            break
        gaps.append(gap.group())
        pos = gap.end()
    match = _SPLIT_WHOLE[index].match("".join(words))
    token = match.group()[: _SPLIT_MAXIMUM[index]] if match else ""
    if len(token) < _SPLIT_MINIMUM[index] or len(token) <= len(words[0]) or not _token_ok(index, token):
        return None
    first = _SPLIT_WHOLE[index].match(words[0])
    if first is not None and _token_ok(index, first.group()):
        return None  # the first piece is a token as it stands
    used = next(k for k, total in enumerate(itertools.accumulate(map(len, words))) if total >= len(token))
    end = ends[used] - (sum(map(len, words[: used + 1])) - len(token))
    return token, end, any(SIBLING in gap for gap in gaps[:used])


def _split_hits(text: str, taken: _Taken, *, siblings: bool = False) -> list[_Hit]:
    """Tokens with a strong prefix written in pieces; with `siblings`, only those crossing a SIBLING mark."""
    hits: list[_Hit] = []
    # The prefixes are searched first and the whole gappy shape is matched only where one starts:
    # searched through a text, the gappy program takes ~0.7 ms per match (its DFA gives up).
    anchored = _split_anchored(text)
    for spans in _budgeted(_SPLIT_HEADS_RE, text, hits):
        start = spans[0][0]
        end = anchored(start)
        if end < 0 or taken.covers(start, end):
            continue
        # Which shape: the first (in _SPLIT_SHAPES order, as the alternation) whose prefix starts the pieces.
        compact = _GAP_RUN.sub("", text[start:end])
        index = next(i for i, (_, prefixes, _, _) in enumerate(_SPLIT_SHAPES) if compact.startswith(prefixes))
        glued = _glued(text, start, index)
        if glued is not None and (glued[2] or not siblings):
            hits.append((f"{_SPLIT_SHAPES[index][0]} (split)", start, glued[1], glued[0]))
    return hits


def _separated_hits(text: str, taken: _Taken) -> list[_Hit]:
    """Strong-prefix tokens cut by one repeated punctuation mark ("AKIA_A0BB_Z2LG_..."), the mark dropped."""
    hits: list[_Hit] = []
    for spans in _budgeted(_SEPARATED_HEADS_RE, text, hits):
        start = spans[0][0]
        word = _SEPARATED_WORD.match(text, start)
        if word is None or taken.overlaps(start, word.end()):
            continue
        found = _separated_token(word.group())
        if found is not None:
            hits.append((f"{found[0]} (split)", start, word.end(), found[1]))
    return hits


def _separated_token(word: str) -> tuple[str, str] | None:
    """(kind, token) when dropping one punctuation mark from the word leaves a strong-prefix token at its start."""
    for mark in set(word) & set(_SEPARATORS):
        pieces = word.split(mark)
        glued = "".join(pieces)
        for index, whole in enumerate(_SPLIT_WHOLE):
            match = whole.match(glued)
            if match is None:
                continue
            token = match.group()[: _SPLIT_MAXIMUM[index]]
            if len(token) < _SPLIT_MINIMUM[index] or len(token) <= len(pieces[0]) or not _token_ok(index, token):
                continue
            # An AWS id's body is upper case and digits, as are names ("ASIA_PACIFIC_SALES_2024"): a
            # generated id cut in pieces has digits in most of them, a name in few.
            if _SPLIT_SHAPES[index][0] == "aws-access-key":
                body = [p for p in pieces[1:] if p]
                if sum(1 for p in body if _DIGIT.search(p)) * 2 <= len(body) or any(
                    len(p) >= 6 and p.isalpha() for p in body
                ):
                    continue
            return _SPLIT_SHAPES[index][0], token
    return None


def _split_anchored(text: str) -> Callable[[int], int]:
    """The end of the gappy shape that starts at a position of the text (-1: none), read in a bounded window."""
    raw = getattr(_SPLIT_RE, "_regexp", None)
    if text.isascii() and raw is not None and _ANCHOR_START is not None:
        data = text.encode("ascii")
        n = len(data)
        return lambda pos: int(raw.Match(_ANCHOR_START, data, pos, min(n, pos + _MAX_GLUED))[0][1])

    def match(pos: int) -> int:
        """The end of the shape at pos in non-ASCII text (character offsets), or -1."""
        found = _SPLIT_RE.match(text, pos, min(len(text), pos + _MAX_GLUED))
        return -1 if found is None else int(found.end())

    return match


def _split_pieces(pieces: Sequence[str]) -> tuple[list[_Hit], list[int]]:
    """Tokens split across sibling strings, and the indexes of the pieces they take."""
    joined = SIBLING.join(pieces)
    if not joined.isascii() or _needs_decoding(joined):
        pieces = [_normalise(piece) for piece in pieces]
        joined = SIBLING.join(pieces)
    if not _split_search(joined.encode("utf-8", "surrogatepass")):
        return [], []
    hits = _split_hits(joined, _Taken(()), siblings=True)
    if not hits:
        return [], []
    starts = list(itertools.accumulate((len(p) + 1 for p in pieces[:-1]), initial=0))
    taken: set[int] = set()
    for _, start, end, _ in hits:
        taken.update(range(bisect.bisect_right(starts, start) - 1, bisect.bisect_right(starts, end - 1)))
    return hits, sorted(taken)


# Decoding budget, per string and per level: DECODE_BUDGET characters of decoded text and
# MAX_DECODED runs that decode to text (runs that decode to binary, such as images, cost one
# linear decode and count for nothing). Every run before the budget runs out is decoded; past it
# the rest is scanned raw and one finding, PAST_DECODING_BUDGET, says that it was not decoded (a
# guard fails closed on it, a redaction hides the rest of the string).
MAX_DECODE_LEVELS: Final = 2
DECODE_BUDGET: Final = 1 << 20
MAX_DECODED: Final = 1024
PAST_DECODING_BUDGET: Final = "undecoded (past the decoding budget)"
_MIN_ENCODED = 16
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")
_NOT_TEXT_BYTES = bytes(b for b in range(256) if b not in _PRINTABLE_BYTES and b < 128)


def _as_text(data: bytes) -> str | None:
    """Decoded bytes as text when they read as text (UTF-8 or UTF-16 of ASCII, few control bytes), else None."""
    # Round fourteen: UTF-16 with a byte-order mark, UTF-32 and EBCDIC are read too (secret_charsets).
    data = _charsets.unwrapped(data)
    # UTF-16 (PowerShell's and iconv's encoding of ASCII text): a NUL after or before every character.
    if len(data) >= 8 and not len(data) % 2 and (not data[1::2].strip(b"\0") or not data[0::2].strip(b"\0")):
        data = data[0::2] if not data[1::2].strip(b"\0") else data[1::2]
    if len(data.translate(None, _NOT_TEXT_BYTES)) < len(data) * 0.9:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        ebcdic = _charsets.ebcdic(data)
        if ebcdic is None:
            return None
        text = ebcdic.decode("utf-8")
    # Round thirteen: text carried in Unicode inside the encoding is read too (secret_carriers).
    return _carriers.flat(text) if _carriers.gate(text) else text


def _b64(run: str) -> str | None:
    """A run decoded as base64 (standard or URL-safe, padded or not) when it gives text, else None."""
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:
        return None
    try:
        # binascii directly: b64decode(validate=True) runs a regexp over the run first.
        data = binascii.a2b_base64(body + "=" * (-len(body) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return None
    return _as_text(_inflated(data) if data[:1] in _DEFLATE_HEADS else data)


# gzip ("H4sI..." once base64) and zlib streams are inflated before they are read: a compressed
# secret is still one (round six). At most _MAX_INFLATED bytes come out (a zip bomb costs nothing).
# Round thirteen: xz, LZMA and bzip2 too (secret_encodings.decompressed).
_DEFLATE_HEADS = (b"\x1f", b"\x78", *_encodings.COMPRESSED_HEADS)
_MAX_INFLATED = 1 << 16


def _inflated(data: bytes) -> bytes:
    """The bytes a gzip, zlib, xz, LZMA or bzip2 stream inflates to (at most _MAX_INFLATED), or the data itself."""
    if data[:1] in _encodings.COMPRESSED_HEADS:
        out = _encodings.decompressed(data, _MAX_INFLATED)
        return data if out is None else out
    if not (data[:2] == b"\x1f\x8b" or (len(data) > 2 and data[0] == 0x78 and (data[0] << 8 | data[1]) % 31 == 0)):
        return data
    try:
        return zlib.decompressobj(wbits=47).decompress(data, _MAX_INFLATED)
    except zlib.error:
        return data


def _decodings(run: str) -> Iterator[tuple[str, str]]:
    """(encoding, text) for each way a run decodes to text: hex, base32, base64, or base64 or hex pieces."""
    for encoding, text, _ in _run_decodings(run):
        yield encoding, text


def _run_decodings(run: str) -> Iterator[tuple[str, str, int]]:
    """(encoding, text, offset) for each way a run decodes: whole (offset 0), or a piece of it at its offset."""
    body = run.rstrip("=")
    if not len(body) % 2 and _HEX.fullmatch(body):
        text = _as_text(bytes.fromhex(body))
        if text is not None:
            yield "hex", text, 0
            return
    if len(body) % 8 in (0, 2, 4, 5, 7) and (_BASE32.fullmatch(body) or _folded_base32(body)):
        try:
            text = _as_text(base64.b32decode(body.upper() + "=" * (-len(body) % 8)))
        except binascii.Error:
            text = None
        if text is not None:
            yield "base32", text, 0
            return
    text = _b64(run)
    if text is not None:
        yield "base64", text, 0
        return
    yield from _piece_decodings(body)


def _piece_decodings(body: str) -> Iterator[tuple[str, str, int]]:
    """(encoding, text, offset in the run) for the pieces of a run that does not decode whole."""
    # "prefix_QUtJ..." or "x-QUtJ...": a word glued to the payload shifts its alignment. Split at
    # -, _ and / (a URL path: "/botNDYw..."), and a word glued without one ("xQUtJ...", "botNDYw...")
    # dropped one to three characters at a time, from the run or from each piece.
    pieces = [m for m in _PIECES.finditer(body) if len(m.group()) >= _MIN_ENCODED and m.group() != body]
    if "+" in body and len(body) <= _MAX_FORM_RUN and _FORM_RUN.search(body):
        # A query string's words are joined by '+' ("text=Le+mot+de+passe+est+<hex>"): its words too
        # (short runs with '+' between words only: binary base64 has '+' everywhere).
        known = {m.span() for m in pieces}
        pieces += [
            m
            for m in _FORM_PIECES.finditer(body)
            if len(m.group()) >= _MIN_ENCODED and m.group() != body and m.span() not in known
        ]
    for at, piece in [(m.start(), m.group()) for m in pieces] or [(0, body)]:
        for k in (0, 1, 2, 3) if pieces else (1, 2, 3):
            if len(piece) - k < _MIN_ENCODED:
                break
            shifted = piece[k:]
            if not len(shifted) % 2 and _HEX.fullmatch(shifted):
                text = _as_text(bytes.fromhex(shifted))
                if text is not None:
                    yield "hex", text, at + k
                    break
            if (text := _b64(shifted)) is not None:
                yield "base64", text, at + k
                break


_PIECES = re.compile(r"[^-_/]+")
_FORM_PIECES = re.compile(r"[^-_/+]+")
_FORM_RUN = re.compile(r"[A-Za-z]{2,}\+[A-Za-z]{2,}\+")
_MAX_FORM_RUN = 512
_TOKEN_WHOLE = re.compile(_TOKEN_RUN)
_CONTEXT = 64  # characters before an encoded run read with what it decodes to (a provider's name: _PROVIDER_WINDOW)
_BASE32 = re.compile(r"[A-Z2-7]+")  # RFC 4648 base32: upper-case letters and 2-7
# Round seven: base32 folded to lower case (a DNS name, a chat that lowercases), with some digits.
_BASE32_FOLDED = re.compile(r"[a-z2-7]+")
_BASE32_DIGITS = re.compile(r"[2-7]")
# A lower-case base32 payload cut into DNS labels ("<63>.<rest>.exfil.example.org"): the labels
# are glued, one more at a time, and read again.
_DNS_LABELS = re.compile(r"(?<![A-Za-z0-9.\-])[a-z2-7]{16,63}(?:\.[a-z0-9\-]{1,63}){1,8}")
_dns_labels_gate = _raw_search(re2.compile(r"[a-z2-7]{16}\.[a-z0-9\-]", _MATCH_ONLY))


def _decoded_hits(text: str, taken: _Taken, level: int) -> list[_Hit]:
    """Secrets inside the encoded runs of a text, each reported at its run (kind names the encoding)."""
    hits: list[_Hit] = []
    if len(text) > _SET_LIMIT and not _encoded_gate(text.encode("utf-8", "surrogatepass")):
        return hits  # one RE2 pass: a long text without a candidate (_categories answers "all" for it)
    budget = DECODE_BUDGET
    decoded_runs = 0
    for spans in _matches(_ENCODED_RE, text):
        start, end = spans[0]
        if taken.covers(start, end) or not (
            _ENCODED_GATE_RE.search(text, start, end) or _folded_base32(text[start:end].rstrip("="))
        ):
            continue  # a finding as it stands (a part may be one by chance: digits in hex), or no text inside
        if decoded_runs >= MAX_DECODED or budget <= 0:
            # Fail closed: what the budget leaves undecoded is reported, from here to the end.
            hits.append((PAST_DECODING_BUDGET, start, len(text), text[start:]))
            break
        # A run longer than the budget is decoded up to it (a multiple of 4: base64 and hex stay aligned).
        stop = end if end - start <= budget * 2 else start + budget * 2 // 4 * 4
        for encoding, decoded, offset in _run_decodings(text[start:stop]):
            decoded_runs += 1
            budget -= len(decoded)
            if not decoded.isascii() and _carriers.gate(decoded):
                # A payload in Unicode carriers that reads as no text (round thirteen): possibly secret.
                hits.extend(
                    (f"possibly secret (unreadable {how}, {encoding})", start, end, decoded)
                    for how, _ in _carriers.read(decoded).unreadable
                )
            escaped = decoded  # codes written as escapes (\\x4d, \\115, &#77;) before _normalise spells them
            if not decoded.isascii() or _needs_decoding(decoded):
                decoded = _normalise(decoded)
            # Read in its place: what stands before the run on its line and the character after it
            # make a secret of what a name or a position vouches for ("?k=<hex>", "https://<token>@").
            # What follows vouches too: "Use <hex> as the password", "<base64>\n(that is the password)".
            at = start + offset
            before = text[max(text.rfind("\n", max(0, at - _CONTEXT), at) + 1, at - _CONTEXT) : at]
            view = before + decoded + text[end : end + _CONTEXT]
            found = len(hits)
            for kind, hit_start, _, secret in _analyse(view, level + 1):
                if not len(before) <= hit_start < len(before) + len(decoded):
                    continue  # a secret of the context alone is the text's own finding
                base, _, inner = kind.partition(" (")
                hits.append((f"{base} ({encoding}{', ' + inner[:-1] if inner else ''})", start, end, secret))
            for folded in _lookalikes.views(decoded) if len(hits) == found else ():
                # Round fourteen: look-alike letters inside an encoded run are read as ASCII too (base64 of
                # a token drawn in small capitals), as _text_hits reads them in a plain string.
                for kind, hit_start, _, secret in _analyse(before + folded + text[end : end + _CONTEXT], level + 1):
                    if len(before) <= hit_start < len(before) + len(folded):
                        hits.append((f"{kind.partition(' (')[0]} ({encoding}, look-alike letters)", start, end, secret))
            if len(hits) == found and escaped != decoded:
                hits.extend(
                    (f"{kind.partition(' (')[0]} ({encoding}, {kind.partition(' (')[2][:-1]})", start, end, secret)
                    for kind, _, _, secret in _escaped_code_hits(escaped, level + 1)
                )
            # A run that decodes to one random token is an encoded key wherever it stands: the URL
            # around it ("?q=<base64>") voids high entropy for the run, not for what it hides.
            token = decoded.strip()
            if len(hits) == found and _TOKEN_WHOLE.fullmatch(token) and _high_entropy(token, 0, token):
                hits.append((f"high-entropy ({encoding})", start, end, token))
            # JSON once decoded is a value: its keys and pairs count as they would in the clear.
            parsed = _json_container(decoded) if _json_text(decoded) else None
            if parsed is not None:
                for _, kind, excerpt in _find(parsed, (), level + 1):
                    hits.append((f"{kind} ({encoding})", start, end, excerpt))
    return hits


# Character codes written out ("103,104,112,95,..." is "ghp_..."): 16 or more printable ASCII
# codes in decimal, separated by commas, read as the text they spell.
# Codes joined by commas or semicolons (one mark through the run), and binary octets ("01001000
# 01101011 ..."): any list separator a reader is told to read the codes from.
_CHAR_CODES = re.compile(
    r"(?<![0-9.])(?:[0-9]{2,3}[ \t]*([,;+])[ \t]*)(?:[0-9]{2,3}[ \t]*\1[ \t]*){14,}[0-9]{2,3}(?![0-9.])"
)
_BINARY_OCTETS = re.compile(r"(?<![01])(?:[01]{8}[ \t,;]?){7,}[01]{8}(?![01])")
_MAX_CHAR_CODE_RUNS = 16
_CHAR_CODE_GATE = r"(?:[0-9]{2,3}[ \t]*[,;+][ \t]*){15}[0-9]|(?:[01]{8}[ \t,;]?){7}[01]{8}"
_char_code_gate = _raw_search(re2.compile(_CHAR_CODE_GATE, _MATCH_ONLY))


def _from_char_codes(codes: Iterable[int]) -> str | None:
    """The text a sequence of character codes spells when all are printable ASCII, else None."""
    chars = []
    for code in codes:
        if not 32 <= code < 127:
            return None
        chars.append(chr(code))
    return "".join(chars)


# Hex bytes written apart ("41:4b:49:41:...", "41 4b 49 41 ...", "\\x41\\x4b" is an escape): 16 or
# more pairs with one separator, read as the bytes they spell (xxd -r -p reads them back).
# Round seven: quoted-printable's "=67=68=70..." (every byte escaped) is hex bytes with "=" before each.
_SEPARATED_HEX = r"[0-9A-Fa-f]{2}(?:[:. \-][0-9A-Fa-f]{2}){15,}|(?:=[0-9A-Fa-f]{2}){16,}"
_SEPARATED_HEX_RE = re2.compile(_SEPARATED_HEX, _MATCH_ONLY)
_separated_hex_gate = _raw_search(_SEPARATED_HEX_RE)


def _folded_base32(body: str) -> bool:
    """True for a run of base32 folded to lower case: a-z and 2-7 only, three digits or more."""
    return _BASE32_FOLDED.fullmatch(body) is not None and len(_BASE32_DIGITS.findall(body)) >= 3


def _dns_label_hits(text: str, level: int) -> list[_Hit]:
    """Lower-case base32 cut into a host name's labels, glued label by label and decoded."""
    hits: list[_Hit] = []
    if not _dns_labels_gate(text.encode("utf-8", "surrogatepass")):
        return hits  # one RE2 pass first: the pattern below has a look-behind
    for n, match in enumerate(_DNS_LABELS.finditer(text)):
        if n >= _MAX_CHAR_CODE_RUNS:
            break
        labels = match.group().split(".")
        glued = labels[0]
        for label in labels[1:]:
            if not _BASE32_FOLDED.fullmatch(label):
                break
            glued += label
            if len(glued) % 8 not in (0, 2, 4, 5, 7):
                continue
            decoded = _as_text(base64.b32decode(glued.upper() + "=" * (-len(glued) % 8)))
            found = [] if decoded is None else _analyse(decoded, level + 1)
            if found:
                hits.extend((f"{k.partition(' (')[0]} (dns labels)", *match.span(), v) for k, _, _, v in found)
                break
    return hits


def _separated_hex_hits(text: str, level: int) -> list[_Hit]:
    """Secrets spelled as hex bytes written apart, each reported at its run."""
    hits: list[_Hit] = []
    if not _separated_hex_gate(text.encode("utf-8", "surrogatepass")):
        return hits
    for n, spans in enumerate(_matches(_SEPARATED_HEX_RE, text)):
        start, end = spans[0]
        if n >= _MAX_CHAR_CODE_RUNS:
            hits.append((PAST_DECODING_BUDGET, start, len(text), text[start:]))
            break
        run = text[start:end]
        if run[0] == "=":
            run = run[1:].replace("=", ":")  # quoted-printable: one "=" before each byte
        if len(set(run[2::3])) != 1:
            continue  # one separator throughout, as a dump writes them
        decoded = _as_text(bytes.fromhex("".join(run[i : i + 2] for i in range(0, len(run), 3))))
        if decoded is None:
            continue
        for kind, _, _, secret in _analyse(decoded, level + 1):
            hits.append((f"{kind.partition(' (')[0]} (hex bytes)", start, end, secret))
    return hits


# uuencode (begin MODE NAME, then lines of a length character and 4-character groups, "`" and end):
# the body is read as the bytes it spells.
_UUENCODED = re.compile(r"(?m)^begin [0-7]{3,4} [^\n]*\r?\n((?:[ -`][ -`]{0,84}[ \t]*\r?\n){1,256})")


def _uuencoded_hits(text: str, level: int) -> list[_Hit]:
    """Secrets inside uuencoded blocks, each reported at its body."""
    hits: list[_Hit] = []
    if "begin " not in text:
        return hits
    for n, match in enumerate(_UUENCODED.finditer(text)):
        if n >= _MAX_CHAR_CODE_RUNS:
            break
        data = b""
        for line in match.group(1).splitlines():
            try:
                data += binascii.a2b_uu(line.rstrip(" \t") or " ")
            except binascii.Error:
                break
        decoded = _as_text(data) if data else None
        if decoded is None:
            continue
        for kind, _, _, secret in _analyse(decoded, level + 1):
            hits.append((f"{kind.partition(' (')[0]} (uuencode)", match.start(1), match.end(1), secret))
    return hits


def _char_code_hits(text: str, level: int) -> list[_Hit]:
    """Secrets spelled as runs of decimal character codes, each reported at its run."""
    hits: list[_Hit] = []
    if not _char_code_gate(text.encode("utf-8", "surrogatepass")):
        return hits  # one RE2 pass: the backtracking pattern below reads only texts that have a run
    runs = itertools.chain(
        ((m, [int(code) for code in _ASCII_DIGITS.findall(m.group())]) for m in _CHAR_CODES.finditer(text)),
        ((m, [int(octet, 2) for octet in re.findall("[01]{8}", m.group())]) for m in _BINARY_OCTETS.finditer(text)),
    )
    for n, (match, codes) in enumerate(runs):
        if n >= _MAX_CHAR_CODE_RUNS:
            hits.append((PAST_DECODING_BUDGET, match.start(), len(text), text[match.start() :]))
            break
        decoded = _from_char_codes(codes)
        if decoded is None:
            continue
        for kind, _, _, secret in _analyse(decoded, level + 1):
            hits.append((f"{kind.partition(' (')[0]} (char codes)", match.start(), match.end(), secret))
    return hits


# Token families with no fixed prefix but a fixed alphabet and length (round six), found in one
# small RE2 program run only on texts whose categories hold a token run or a hex run (the
# prefilter passes them already): an Azure DevOps PAT (exactly 52 lower-case base32 characters,
# RFC 4648's a-z2-7; checked: digits and a random text's entropy), a Twilio account SID with its
# 32-hex auth token beside it, a Mailchimp key (32 hex, "-us" and its datacenter), and a hex key
# or UUID a provider's name vouches for a few words before it on its line ("Plaid client <id> /
# <secret>", "HEROKU creds <uuid>", "X-Postmark-Server <uuid>"; service-key wants the value right
# after the name). Words that make the value an id, a hash or a build void the last.
# No capture groups (the kind is read off the match): submatches of a 10 MB hex run cost 0.3 s.
_FAMILY_RE = re2.compile(
    r"\b[a-z2-7]{52}\b|\bAC[0-9a-f]{32}\b[^\n0-9a-f]{1,12}[0-9a-f]{32}\b|\b[0-9a-f]{32}-us[0-9]{1,2}\b"
    r"|\b(?:[0-9a-fA-F]{30,128}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b",
    _MATCH_ONLY,
)
_BASE32_LOWER = re.compile(r"[a-z2-7]{52}")
_TWILIO = re.compile(r"AC[0-9a-f]{32}[^\n0-9a-f]")
_MAILCHIMP = re.compile(r"[0-9a-f]{32}-us[0-9]{1,2}")
_PROVIDER_BEFORE = re.compile(
    r"(?i)\b(?:algolia|heroku|mailchimp|mailgun|newrelic|new[ \t]relic|plaid|postmark|sendgrid|twilio|pagerduty"
    r"|segment|circleci|rollbar|bugsnag|airtable|contentful|launchdarkly|datadog|sentry|okta|zendesk)\b[^\n]{0,40}$"
)
_PROVIDER_WINDOW = 64  # characters read back from a hex value for a provider's name
_FAMILY_CATEGORIES = frozenset({_TOKENS_AT, _ENCODED_AT})


# Round eleven: hex of a length no digest, id or address has is a key whatever names it (Jenkins'
# API token, 34; Cloudflare's global key, 37). Digests are 32 (MD5, UUIDs), 40 (SHA-1, git, an
# Ethereum address), 48, 56, 64 (SHA-256), 96, 128 hex; ids are 24 (ObjectId) or 32.
# Read up to 47 characters: longer hex runs are dump lines (xxd -p writes 60) and data as often.
_DIGEST_LENGTHS: Final = frozenset({40})
_ODD_HEX = re.compile(r"[0-9a-f]{33,47}|[0-9A-F]{33,47}")
_HEX_LINE = re.compile(r"[ \t]*[0-9A-Fa-f]{16,}[ \t]*\r?$", re.M)


def _odd_hex_key(text: str, start: int, token: str) -> bool:
    """True for one-case hex of 33-47 characters and no digest's length, not 0x data, a dump or a labelled digest."""
    if len(token) in _DIGEST_LENGTHS or not _ODD_HEX.fullmatch(token):
        return False
    if len(token) % 2 == 0 and _as_text(bytes.fromhex(token)) is not None:
        return False  # hex of text: the decoder reads what it says
    if token[:4].lower() in ("3080", "3081", "3082", "3083"):
        return False  # DER (a SEQUENCE): a certificate's or a key's dump, read by the key readers
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    if not text[line_start:start].strip() and line_end >= 0 and _HEX_LINE.match(text, line_end + 1):
        return False  # a line of a hex dump (the next line is hex too)
    if text[max(0, start - 2) : start] in ("0x", "0X") or _exemptions.labelled_digest(text, start, token):
        return False
    before = text[max(0, start - 24) : start]
    if _NOT_A_HEX_KEY.search(before):
        return False  # "commit 1183f4...", "tx hash: ...": named as public
    return sum(c.isdigit() for c in token) >= 4 and sum(not c.isdigit() for c in token) >= 4


def _family_hits(text: str, taken: _Taken) -> list[_Hit]:
    """Tokens of the prefix-less families (_FAMILY_RE), each checked as its kind."""
    hits: list[_Hit] = []
    for spans in _budgeted(_FAMILY_RE, text, hits):
        start, end = spans[0]
        token = text[start:end]
        if _BASE32_LOWER.fullmatch(token):
            kind = "azure-devops-pat"
        elif _TWILIO.match(token):
            kind = "twilio-credentials"
        elif _MAILCHIMP.fullmatch(token):
            kind = "mailchimp-key"
        else:
            kind = "provider-key"
        if taken.overlaps(start, end):
            continue
        if kind == "azure-devops-pat":
            # Random base32 has ~10 digits in 52 characters and ~4.6 bits of entropy; words have neither.
            if sum(c.isdigit() for c in token) < 4 or _entropy(token) < 4.2:
                continue
        elif kind == "provider-key":
            line = max(text.rfind("\n", max(0, start - _PROVIDER_WINDOW), start) + 1, start - _PROVIDER_WINDOW)
            named = _PROVIDER_BEFORE.search(text, line, start)
            if named is None and _odd_hex_key(text, start, token):
                kind = "hex-key (no digest length)"
            elif named is None or _NOT_A_PROVIDER_KEY.search(text, named.start(), end):
                continue
        hits.append((kind, start, end, token))
    return hits


# Readers of _CODED_GATES (Python regexps, run only on texts whose gate matched; all bounded).
_SPACED_CODES = re.compile(r"(?<![0-9.])(?:[0-9]{2,3}[ \t]+){15,}[0-9]{2,3}(?![0-9.])")
_CHR_CALL = re.compile(r"(?i:chr|char)\([ \t]*([0-9]{1,3})[ \t]*\)")
_CHR_JOIN = re.compile(r"[ \t]*[+.,&|]?[ \t]*")
_MORSE_RUN = re.compile(r"(?<![.\-\w])[.\-]{1,6}(?:(?:[ \t]{1,3}|[ \t]*/[ \t]*)[.\-]{1,6}){15,}(?![.\-\w])")
# The older run reader knows letters, digits, `_` and `-` of the ITU table (secret_byte_codes reads the rest).
_MORSE: Final = {code: char for code, char in _byte_codes.MORSE_TABLE.items() if char.isalnum() or char in "_-"}
# A word (printable ASCII, no blank) with three of the symbols base64 and query strings never have.
_BASE85_SYMBOL = r"[!#$%()*;<>?@^`{|}~]"
_BASE85_RE = re2.compile(rf"[!-~]*{_BASE85_SYMBOL}[!-~]*{_BASE85_SYMBOL}[!-~]*{_BASE85_SYMBOL}[!-~]*", _MATCH_ONLY)
_MAX_BASE85 = 256  # words decoded per string; past it, the rest is reported undecoded (PAST_DECODING_BUDGET)
_CODED_SEARCH: Final = tuple(
    (at, _raw_search(re2.compile(gate, _MATCH_ONLY)))
    for at, gate in zip((_CODES_AT, _BASE85_AT, _BYTE_ARRAY_AT, _SHIFTED_AT), _CODED_GATES, strict=True)
)
_coded_any = _raw_search(re2.compile("|".join(f"(?:{gate})" for gate in _CODED_GATES), _PREFILTER_OPTIONS))
_BASE85_ALPHABET = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~")
_BYTE_ARRAY = re.compile(r"\[[ \t]*[0-9]{1,3}(?:[ \t]*,[ \t]*[0-9]{1,3}){63}[ \t]*,?[ \t]*\]")
_SHIFTED_TOKEN = re.compile(r"\b[A-Za-z]{3}_[A-Za-z0-9]{36}\b|\b[A-Z]{4}[A-Z0-9]{16}\b")
_SHIFT_PREFIXES: Final = ("ghp", "gho", "ghu", "ghs", "ghr", "npm", "akia", "asia", "abia", "acca")
_MAX_CODED = 16  # runs read per string and reader; past it, the rest is reported unchecked


def _shift_letters(token: str, shift: int | None) -> str:
    """The token with each letter shifted back by `shift` (Caesar), or mirrored when shift is None (Atbash)."""
    return _shifts.shift_letters(token, None if shift is None else -shift)


def _unshifted(token: str) -> Iterator[str]:
    """Readings of a token whose prefix is a known prefix under a Caesar shift or Atbash."""
    head = token[: 4 if token[3] != "_" else 3].lower()
    for known in _SHIFT_PREFIXES:
        if len(known) != len(head):
            continue
        shifts = {(ord(a) - ord(b)) % 26 for a, b in zip(head, known, strict=True)}
        if len(shifts) == 1 and not shifts & {0, 13}:  # ROT13 is the reversed view's (_ROTATED_SHAPES)
            yield _shift_letters(token, shifts.pop())
        elif all(ord(a) - 97 == 25 - (ord(b) - 97) for a, b in zip(head, known, strict=True)):
            yield _shift_letters(token, None)


_OCTAL_DIGITS = frozenset("01234567")


def _codes_text(codes: list[str]) -> Iterator[tuple[str, str]]:
    """(encoding, text) for character codes read in decimal and, when they can be, in octal."""
    if all(set(c) <= _OCTAL_DIGITS for c in codes):
        text = _from_char_codes(int(c, 8) for c in codes)
        if text is not None:
            yield "octal codes", text
    text = _from_char_codes(int(c) for c in codes)
    if text is not None:
        yield "char codes", text


def _coded_hits(text: str, categories: frozenset[int], level: int) -> list[_Hit]:
    """Secrets in the encodings of _CODED_GATES, each reported at its run with the encoding named."""
    found: list[tuple[str, int, int, str]] = []  # (encoding, start, end, decoded)
    hits: list[_Hit] = []
    if len(text) > _SET_LIMIT:
        # _categories answers "all" for a long text: one RE2 pass per gate says which readers it needs.
        data = text.encode("utf-8", "surrogatepass")
        if not _coded_any(data):
            return hits  # one pass says none of the gates matches (the usual case)
        categories = frozenset(at for at, search in _CODED_SEARCH if search(data))
    if _CODES_AT in categories:
        for n, match in enumerate(_SPACED_CODES.finditer(text)):
            if n >= _MAX_CODED:
                break
            found.extend((how, *match.span(), decoded) for how, decoded in _codes_text(match.group().split()))
        chain: list[re.Match[str]] = []
        for call in [*_CHR_CALL.finditer(text), None]:
            if call is not None and (not chain or _CHR_JOIN.fullmatch(text, chain[-1].end(), call.start())):
                chain.append(call)
                continue
            if len(chain) >= 8:
                decoded = _from_char_codes(int(m.group(1)) for m in chain)
                if decoded is not None:
                    found.append(("chr()", chain[0].start(), chain[-1].end(), decoded))
            chain = [call] if call is not None else []
        for n, match in enumerate(_MORSE_RUN.finditer(text)):
            if n >= _MAX_CODED:
                break
            letters = [_MORSE.get(code) for code in re.split(r"[ \t/]+", match.group())]
            if None not in letters:
                found.append(("morse", *match.span(), "".join(c for c in letters if c)))
    if _BASE85_AT in categories:
        tried = 0
        for spans in _matches(_BASE85_RE, text):
            start, end = spans[0]
            word = text[start:end]
            if not 20 <= len(word) <= 512 or not _random_looking(word):
                continue
            if tried >= _MAX_BASE85:
                hits.append((PAST_DECODING_BUDGET, start, len(text), text[start:]))
                break
            tried += 1
            # The word, and the value after a query's or an assignment's '=' ("?d=<ascii85>").
            for candidate in {word, word.rsplit("=", 1)[-1], word.rsplit(":", 1)[-1]}:
                if len(candidate) < 20:
                    continue
                for how, data in _base85_bytes(candidate):
                    decoded = _as_text(data)
                    if decoded is not None:
                        found.append((how, start, end, decoded))
    if _BYTE_ARRAY_AT in categories:
        for n, match in enumerate(_BYTE_ARRAY.finditer(text)):
            if n >= _MAX_CODED:
                break
            values = [int(v) for v in _ASCII_DIGITS.findall(match.group())]
            # 64 bytes, each a byte, as random as a key (a histogram or a pixel row repeats values).
            if max(values) <= 255 and len(set(values)) >= 40:
                found.append(("byte array", *match.span(), ""))
    if _SHIFTED_AT in categories:
        for n, match in enumerate(_SHIFTED_TOKEN.finditer(text)):
            if n >= MAX_SPLIT:
                break
            found.extend(("shifted", *match.span(), decoded) for decoded in _unshifted(match.group()))
    for how, start, end, decoded in found:
        if how == "byte array":
            hits.append(("wallet-keypair (byte array)", start, end, text[start:end]))
            continue
        for kind, _, _, secret in _analyse(decoded, level + 1):
            hits.append((f"{kind.partition(' (')[0]} ({how})", start, end, secret))
    return hits


def _base85_bytes(word: str) -> Iterator[tuple[str, bytes]]:
    """(encoding, bytes) for each way a word decodes: Ascii85 (with or without <~ ~>), base85 (RFC 1924)."""
    body = word[2:-2] if word.startswith("<~") and word.endswith("~>") else word
    decoders: list[tuple[str, str, Callable[[str], bytes]]] = []
    if all("!" <= c <= "u" or c == "z" for c in body):
        decoders.append(("ascii85", body, base64.a85decode))
    if _BASE85_ALPHABET.issuperset(word):
        decoders.append(("base85", word, base64.b85decode))
    for how, encoded, decode in decoders:
        try:
            data = decode(encoded)
        except ValueError:
            continue
        yield how, data


def _analyse(text: str, level: int = 0) -> list[_Hit]:
    """Every secret in one (normalised) string, with the span to hide; `level`: decodings already done."""
    categories = _categories(text)
    if not categories:
        found = _more_hits(text, [], level)
        return _framings.outside_dump_columns(text, found) if found else found
    hits: list[_Hit] = []
    if _SHAPES_AT in categories:
        key_end = hidden_until = -1  # the next "-----END" after a key header, and the span hidden so far
        for spans in _matches(_SHAPE_RE, text):
            index = next(i for i in range(1, len(spans)) if spans[i][0] >= 0) - 1
            kind = _SHAPE_KINDS[index]
            match_start, match_end = spans[0]
            if hidden_until >= len(text):
                break  # the rest of the text is one key block
            if match_start < hidden_until:
                continue  # inside a key block already reported (and hidden whole)
            if _shape_ok(kind, text[match_start:match_end]) and (
                kind != "private-key" or _key_header_ok(text, match_start, match_end)
            ):
                if kind == "private-key" and key_end != -2 and key_end < match_end:
                    # Searched again only past the last END found: one pass however many headers.
                    key_end = text.find("-----END", match_end)
                    key_end = -2 if key_end < 0 else key_end  # -2: no END up to the end of the text
                start, end = _shape_span(kind, text, match_start, match_end, max(key_end, -1))
                if kind == "private-key":
                    hidden_until = end
                # The excerpt of a key block is its header; of the rest, the part that is hidden.
                hits.append(
                    (kind, start, end, text[match_start:match_end] if kind == "private-key" else text[start:end])
                )
    if categories & _FAMILY_CATEGORIES:
        hits.extend(_family_hits(text, _Taken((start, end) for _, start, end, _ in hits)))
    if _ASSIGNMENTS_AT in categories:
        hits.extend(_assignments(text, _Taken((start, end) for _, start, end, _ in hits)))
    if _CARDS_AT in categories:
        hits.extend(("card-number", start, end, digits) for start, end, digits in _card_spans(text))
    if _TOKENS_AT in categories:
        spans = [(start, end) for _, start, end, _ in hits]
        if "-----BEGIN " in text:
            spans.extend(_exemptions.public_block_spans(text))
        taken = _Taken(spans)
        for spans in _matches(_TOKEN_RE, text):
            start, end = spans[0]
            if not taken.overlaps(start, end) and _high_entropy(text, start, text[start:end]):
                hits.append(("high-entropy", start, end, text[start:end]))
    if _SPLIT_AT in categories:
        hits.extend(_split_hits(text, _Taken((start, end) for _, start, end, _ in hits)))
    if categories & _FAMILY_CATEGORIES and level < MAX_DECODE_LEVELS:
        hits.extend(_decoded_hits(text, _Taken((start, end) for _, start, end, _ in hits), level))
        hits.extend(_char_code_hits(text, level))
        hits.extend(_separated_hex_hits(text, level))
        hits.extend(_dns_label_hits(text, level))
        hits.extend(_uuencoded_hits(text, level))
    if categories & _CODED_AT and level < MAX_DECODE_LEVELS:
        hits.extend(_coded_hits(text, categories, level))
    if categories & _VIEWS_AT:
        hits.extend(_view_hits(text, categories, _Taken((start, end) for _, start, end, _ in hits), level))
    if _SPLIT_AT in categories:
        # Last: a token the views glue back (one mark after every character) keeps their name.
        hits.extend(_separated_hits(text, _Taken((start, end) for _, start, end, _ in hits)))
    if _ENCODINGS_AT in categories:
        # Last: what another reader already named keeps its name (a token cut by one mark, a prose password).
        hits.extend(_encoding_hits(text, _Taken((start, end) for _, start, end, _ in hits), level))
    hits = _more_hits(text, hits, level)
    # Round fourteen: a hex dump's byte columns hold digit and base32-like groups by chance (_secret_framings).
    return _framings.outside_dump_columns(text, hits) if hits else hits


def _more_hits(text: str, hits: list[_Hit], level: int) -> list[_Hit]:
    """The hits with round fourteen's readers' own added (what another reader found keeps its name)."""
    if not _more_search(text.encode("utf-8", "surrogatepass")):
        return hits
    taken = _Taken((start, end) for _, start, end, _ in hits)
    hits.extend(hit for hit in _devices.hits(text, _is_placeholder) if not taken.overlaps(hit[1], hit[2]))
    hits.extend(hit for hit in _cardforms.hits(text, _is_card) if not taken.overlaps(hit[1], hit[2]))
    hits.extend(hit for hit in _cardwords.hits(text, _is_card) if not taken.overlaps(hit[1], hit[2]))
    # Round fifteen: one-case tokens posted in the other case (_secret_casefold).
    hits.extend(hit for hit in _casefold.hits(text) if not taken.overlaps(hit[1], hit[2]))
    for name, start, end, value in _directives.lines(text):
        # Round fifteen: a `name value` configuration line (redis's masterauth, keepalived's auth_pass).
        if (
            not taken.overlaps(start, end)
            and len(value) >= _MIN_DIRECTIVE_VALUE
            and value.lower() not in _STOPWORDS
            and is_credential_key(name)
            and _secret_scalar(value)
        ):
            hits.append(("keyword (directive)", start, end, value))
    for start, end, unshifted, how in _shifts.readings(text) if level < MAX_DECODE_LEVELS else ():
        # Round fifteen: a token whose head is a provider prefix shifted; kept only if it reads as a key.
        if not taken.overlaps(start, end):
            hits.extend(
                (f"{kind.partition(' (')[0]} ({how})", start, end, secret)
                for kind, _, _, secret in _analyse(unshifted, level + 1)
            )
    for start, end, spelled, alphabet in _spoken.spelled_runs(text) if level < MAX_DECODE_LEVELS else ():
        if taken.overlaps(start, end):
            continue
        # Read with the words before it on its line: a label there vouches ("password: TANGO romeo ...").
        before = text[max(text.rfind("\n", max(0, start - _CONTEXT), start) + 1, start - _CONTEXT) : start]
        # A speller rarely says the case: words in one case are also read as capitals (an AWS key id).
        for reading in (spelled, spelled.upper()) if spelled.islower() else (spelled,):
            found = [hit for hit in _analyse(before + reading, level + 1) if hit[2] > len(before)]
            hits.extend((f"{kind.partition(' (')[0]} ({alphabet})", start, end, secret) for kind, _, _, secret in found)
            if found:
                taken = _Taken([*zip(taken.starts, taken.ends, strict=True), (start, end)])
                break
    return hits


_MIN_DIRECTIVE_VALUE = 6  # a directive's value shorter than this is a mode or a number ("auth_type PASS")
_CODED_AT = frozenset({_CODES_AT, _BASE85_AT, _BYTE_ARRAY_AT, _SHIFTED_AT})


def _encoding_hits(text: str, taken: _Taken, level: int) -> list[_Hit]:
    """Secrets round eight's readers show (secret_encodings): bytes apart, wrapped encodings, setup keys."""
    which = _encodings.readers(text)
    hits: list[_Hit] = []
    if "setup" in which:
        hits.extend(_encodings.setup_keys(text))
    if "openssl" in which:
        hits.extend(_encodings.openssl_private_values(text))
    if "wifi" in which:
        hits.extend(hit for hit in _encodings.wifi_keys(text) if not taken.overlaps(hit[1], hit[2]))
    if "protocol" in which:
        hits.extend(hit for hit in _protocols.login_hits(text, _is_placeholder) if not taken.overlaps(hit[1], hit[2]))
    if "tokens" in which:
        # A token that starts like a named shape is left to the readers that glue it (a piece of a
        # token cut across values is that shape's, not a token of its own).
        hits.extend(
            hit
            for hit in _tokens.hits(text)
            if not taken.overlaps(hit[1], hit[2]) and not hit[3].startswith(_NAMED_HEADS)
        )
    deeper = level < MAX_DECODE_LEVELS
    decoded: list[tuple[str, int, int, bytes]] = []
    if deeper and "bytes" in which:
        decoded.extend(_encodings.byte_runs(text))
    if deeper and "radix" in which:
        decoded.extend(_encodings.radix_words(text))
    for how, start, end, glued in _encodings.piece_runs(text, which):
        if taken.overlaps(start, end):
            continue
        found = False
        if deeper and how == "wrapped":
            for encoding, data in _encodings.glued_decodings(glued):
                reading = _as_text(data)
                for kind, _, _, secret in _analyse(reading, level + 1) if reading else ():
                    hits.append((f"{kind.partition(' (')[0]} (wrapped {encoding})", start, end, secret))
                    found = True
        if not found and how in ("split-token", "grouped") and _high_entropy(glued, 0, glued):
            hits.append((f"high-entropy ({'split' if how == 'split-token' else how})", start, end, glued))
    for how, start, end, data in decoded:
        reading = _as_text(data)
        if reading is None or len(reading) < 8 or taken.covers(start, end):
            continue
        for kind, _, _, secret in _analyse(reading, level + 1):
            hits.append((f"{kind.partition(' (')[0]} ({how})", start, end, secret))
    if deeper and "codes" in which:
        hits.extend(
            _byte_code_hits(
                text, _Taken([*zip(taken.starts, taken.ends, strict=True), *((s, e) for _, s, e, _ in hits)]), level
            )
        )
    return hits


# A word's part: four letters or more in a row, three of them lower case in a row, one a vowel ("Copper",
# "hunter"). Codes that are data (ages, scores, readings) spell capitals, symbols and scattered letters.
_LETTER_RUN = re.compile(r"[A-Za-z]{4,}")
_LOWER_RUN = re.compile(r"[a-z]{4}")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")


def _encoded_password(word: str, *, cased: bool) -> bool:
    """True for a word spelled in character codes that is shaped like a password (round fourteen)."""
    # Writing a word as codes is telling it: the codes stand where "password:" would (near=True).
    # Morse has no case: its word is read in lower case.
    if not 8 <= len(word) <= 64 or any(c.isspace() for c in word):
        return False
    word = word if cased else word.lower()
    return any(_LOWER_RUN.search(run) and _VOWEL.search(run) for run in _LETTER_RUN.findall(word)) and _password_like(
        word, near=True
    )


_byte_codes_gate = _raw_search(re2.compile(_byte_codes.GATE, _MATCH_ONLY))


def _escaped_code_hits(text: str, level: int) -> list[_Hit]:
    """Runs of codes written as escapes, in the string folded but not unescaped (`_normalise` spells them out)."""
    if level >= MAX_DECODE_LEVELS:
        return []
    folded = text if text.isascii() else unicodedata.normalize("NFKD", text).translate(_fold_table())
    # Percent-encoding over the escapes ("%5Cx4d\\x61..."): read with it decoded too.
    for view in dict.fromkeys((folded, unquote(folded, errors="replace") if "%" in folded else folded)):
        if _byte_codes_gate(view.encode("utf-8", "surrogatepass")):
            hits = _byte_code_hits(view, _Taken(()), level)
            if hits:
                return hits
    return []


def _byte_code_hits(text: str, taken: _Taken, level: int) -> list[_Hit]:
    """Secrets spelled as runs of eight character codes or more (secret_byte_codes), each reported at its run."""
    hits: list[_Hit] = []
    for how, start, end, spelled, cased in _byte_codes.runs(text):
        if taken.covers(start, end):
            continue  # a reader of round six or eight read the run already and named what it holds
        if cased and len(spelled) < _MIN_ENCODED and sum(c.islower() for c in spelled) < 3:
            # A short run (a password's length, not a key's) of data (scores, readings: 50 to 100) spells
            # capitals, digits and symbols, which a password's shape also has: a word has lower case.
            continue
        found = _analyse(spelled, level + 1)
        hits.extend((f"{kind.partition(' (')[0]} ({how})", start, end, secret) for kind, _, _, secret in found)
        if not found and _encoded_password(spelled.strip(), cased=cased):
            hits.append((f"password ({how})", start, end, spelled.strip()))
    return hits


_VIEWS_AT = frozenset({_SPACED_AT, _PROSE_AT, _REVERSED_AT, _SPELLED_AT, _TABLE_AT, _SEED_AT, _STRONG_AT})


def _view_hits(text: str, categories: frozenset[int], taken: _Taken, level: int) -> list[_Hit]:
    """Secrets a rewritten view shows: letters glued back, prose passwords, reversed tokens, spelled digits."""
    hits: list[_Hit] = []
    if _SPACED_AT in categories:
        hits.extend(_spaced_hits(text, taken, level))
    if _PROSE_AT in categories:
        hits.extend(_prose_hits(text, taken))
        hits.extend(_label_prose_hits(text, _Taken((start, end) for _, start, end, _ in hits) if hits else taken))
    if _REVERSED_AT in categories:
        hits.extend(_reversed_hits(text, taken))
    if _SPELLED_AT in categories:
        hits.extend(_spelled_hits(text, taken))
    if _TABLE_AT in categories:
        hits.extend(_table_hits(text, taken))
    if _SEED_AT in categories:
        hits.extend(_seed_hits(text, taken))
    if _STRONG_AT in categories:
        hits.extend(_strong_password_hits(text, _Taken((start, end) for _, start, end, _ in hits) if hits else taken))
    return hits


_STRONG_GATE_RE = re2.compile(_STRONG_GATE, _MATCH_ONLY)
_NOT_SPACE = re.compile(r"\S+")
_FIELD_PIECES = re.compile(r"[^=&\s]+")
_FORM_BODY = re.compile(r"[A-Za-z_][\w.\-]*=[^=&\s]*(?:&[A-Za-z_][\w.\-]*=[^=&\s]*)+")
_STRONG_SYMBOLS = frozenset("!#$%^&*?~@+")
# Characters of code, markup and paths: a word holding one is an expression, not a password a
# person types or is told ("a[i]!=b", "{0!r}", "$HOME/x").
_CODE_CHARACTERS = frozenset("()[]{}<>\"'`/\\,;")
_MAX_STRONG = 64
_MIN_STRONG_CHANGES = 5  # changes of character class inside the word: "Xk9#mP2vL7q!" has 10


def _strong_password(word: str) -> bool:
    """True for a word a generator or a person made as a password: 8-64 characters, all four classes, interleaved."""
    if not 8 <= len(word) <= _MAX_STRONG or _CODE_CHARACTERS.intersection(word) or _EMAIL.fullmatch(word):
        return False
    # Symbols inside the word: an edge one is punctuation ("Why3D?"), a hashtag ("#Web3Dev2024") or
    # markup ("**Step1A**"); '@' alone is an address, '+' alone base64, '$' or '%' first a variable.
    symbols = _STRONG_SYMBOLS.intersection(word.strip("!?*~#+"))
    if not symbols or symbols in ({"@"}, {"+"}) or word.startswith(("$", "%")):
        return False
    if not (_UPPER.search(word) and _LOWER.search(word) and _DIGIT.search(word)) or _is_placeholder(word):
        return False
    classes = ["u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "s" for c in word]
    return sum(a != b for a, b in itertools.pairwise(classes)) >= _MIN_STRONG_CHANGES


def _strong_password_hits(text: str, taken: _Taken) -> list[_Hit]:
    """Passwords told without a name ("wifi is Vx7#pQ2m!rT", "sa / Xk9#mP2vL7q!"): words of a password's shape."""
    # A secret needs no keyword when its shape says it: upper and lower case, digits and symbols
    # interleaved (5 class changes or more) in one word no code, path, address or variable is.
    # Weaker passwords ("Summer2024!") still need a phrase (_prose_hits) or a key.
    hits: list[_Hit] = []
    last = 0
    for n in itertools.count():
        gate = _STRONG_GATE_RE.search(text, last)
        if gate is None:
            break
        at = gate.start()
        if n >= MAX_SPLIT:
            hits.append((PAST_SPLIT_BUDGET, at, len(text), text[at:]))
            break
        # One look per word: the search goes on after it (a megabyte of base64 is one word).
        begin = max(text.rfind(" ", last, at), text.rfind("\n", last, at), text.rfind("\t", last, at), last - 1) + 1
        word = _NOT_SPACE.match(text, begin)
        if word is None:
            last = at + 1
            continue
        last = word.end()
        if last - begin > 4 * _MAX_STRONG:
            continue  # no password, nor a form body of a few fields
        if "=?" in word.group() and _ENCODED_WORD.search(word.group()):
            continue  # a MIME encoded word ("=?utf-8?Q?Caf=C3=A9?="): read decoded (_decode_round), not as a word
        # A form body's fields ("u=sa&p=Xk9#mP2vL7q!") one by one, then the word whole.
        for field in (*_FIELD_PIECES.finditer(text, begin, last), word):
            value = field.group().strip(_WORD_EDGE)
            if field is word and _FORM_BODY.fullmatch(value):
                break  # a whole form body: its '&' and '=' join fields ("ip=2001:db8::1&mac=00:1A:2B")
            if _strong_password(value):
                start = text.find(value, field.start(), field.end())
                if not taken.overlaps(start, start + len(value)):
                    hits.append(("password (shape)", start, start + len(value), value))
                break
    return hits


@cache
def _bip39_words() -> dict[str, int]:
    """BIP-39's English word list (bip39_english.txt, MIT: see bip39_english.LICENSE), word to index."""
    words = (Path(__file__).parent / "bip39_english.txt").read_text(encoding="ascii").split()
    return {word: index for index, word in enumerate(words)}


_SEED_LENGTHS = (24, 21, 18, 15, 12)
_SEED_WORD = re.compile(r"[a-z]+")
_SEED_SEPARATOR_RE = re.compile(_SEED_SEPARATOR)
_ELECTRUM_PREFIXES = ("01", "100", "101", "102")  # standard, segwit, 2FA, 2FA segwit


def _seed_valid(indexes: Sequence[int], words: Sequence[str]) -> bool:
    """True when the words are a wallet seed: BIP-39's checksum holds, or Electrum's version hash does."""
    bits = "".join(f"{i:011b}" for i in indexes)
    size = len(bits) * 32 // 33
    entropy = int(bits[:size], 2).to_bytes(size // 8, "big")
    checksum = f"{hashlib.sha256(entropy).digest()[0]:08b}"[: len(bits) - size]
    if bits[size:] == checksum:
        return True
    version = hmac.new(b"Seed version", " ".join(words).encode(), hashlib.sha512).hexdigest()
    return version.startswith(_ELECTRUM_PREFIXES)


def _seed_hits(text: str, taken: _Taken) -> list[_Hit]:
    """Wallet seed phrases: 12-24 BIP-39 words in a row whose checksum holds (the phrase is the private key)."""
    # Twelve list words in a row are rare in prose (the list has no "the", "a", "is", "of"); the
    # checksum (or Electrum's version hash) then leaves one run in 16 to 256 of those. Only the runs
    # RE2 finds (twelve words of the list's shape or more) are read word by word.
    table = _bip39_words()
    hits: list[_Hit] = []
    read_until = -1  # the end of the last lines read for Monero's seeds
    for n, spans in enumerate(_matches(_SEED_RUN_RE, text)):
        if n >= _MAX_TABLES * 4:
            break
        run: list[re.Match[str]] = []
        for match in [*_SEED_WORD.finditer(text, *spans[0]), None]:
            joined = (
                match is not None
                and match.group() in table
                and (not run or _SEED_SEPARATOR_RE.fullmatch(text, run[-1].end(), match.start()) is not None)
            )
            if joined and match is not None:
                run.append(match)
                continue
            if len(run) >= _SEED_LENGTHS[-1]:
                hits.extend(_seed_windows(text, run, table, taken))
            run = [match] if match is not None and match.group() in table else []
        if spans[0][0] >= read_until:
            read_until = _line_bounds(text, *spans[0])[1]
            hits.extend(_monero_seeds(text, *spans[0], _Taken((start, end) for _, start, end, _ in hits), taken))
    return hits


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The start of the line before `start`'s and the end of `end`'s line."""
    begin = text.rfind("\n", 0, max(0, text.rfind("\n", 0, start))) + 1
    stop = text.find("\n", end)
    return begin, len(text) if stop < 0 else stop


_MONERO_WORDS = re.compile(r"\b[a-z]{3,12}\b")
_MONERO_LENGTH = 25


def _monero_seeds(text: str, start: int, end: int, *takens: _Taken) -> list[_Hit]:
    """Monero's 25-word seeds (other word lists than BIP-39's): the 25th word is the checksum word."""
    # Monero (and its forks) append a checksum word: the word at crc32(the first three letters of
    # each of the 24 words) mod 24, repeated. Read on the run RE2 found and the words around it,
    # whatever the list (one in 24 runs passes the index, fewer still repeat the word there).
    words = list(_MONERO_WORDS.finditer(text, *_line_bounds(text, start, end)))
    names = [m.group() for m in words]
    hits: list[_Hit] = []
    i = 0
    while i + _MONERO_LENGTH <= len(words):
        window = words[i : i + _MONERO_LENGTH]
        last = names[i + 24]
        if last not in names[i : i + 24]:  # the cheap test first: the checksum word repeats one of the 24
            i += 1
            continue
        prefix = "".join(word[:3] for word in names[i : i + 24]).encode()
        joined = all(
            _SEED_SEPARATOR_RE.fullmatch(text, a.end(), b.start()) is not None for a, b in itertools.pairwise(window)
        )
        # 24 words drawn from Monero's 1626 repeat one in six seeds, two in a hundred: a window
        # that repeats more is word salad (a log's small vocabulary passes the index one in 24).
        if last == names[i + zlib.crc32(prefix) % 24] and joined and len(set(names[i : i + 24])) >= 23:
            first, end_at = window[0].start(), window[-1].end()
            if not any(taken.overlaps(first, end_at) for taken in takens):
                hits.append(("seed-phrase", first, end_at, " ".join(names[i : i + 25])))
            i += _MONERO_LENGTH
            continue
        i += 1
    return hits


_SEED_LIST_COMMA = re.compile(r"[ \t]*,")


def _seed_alone(text: str, run: list[re.Match[str]]) -> bool:
    """True for a run of exactly 12, 15, 18, 21 or 24 list words, not a comma list, mostly distinct."""
    # The checksum rejects a phrase with one word changed (or made up by hand): it is still a key a
    # wallet asks to confirm, and a made-up phrase is indistinguishable from a real one to a
    # reader. A run of a seed's exact length between words off the list (or the string's ends) is
    # one; a longer run is prose or a word list and needs the checksum window by window. A list
    # with commas ("apple, banana, ...") is an enumeration, and a repeated word is no phrase.
    if len(run) not in _SEED_LENGTHS or len({m.group() for m in run}) < len(run) - 2:
        return False
    return not any(_SEED_LIST_COMMA.match(text, a.end()) for a in run[:-1])


def _seed_windows(text: str, run: list[re.Match[str]], table: dict[str, int], taken: _Taken) -> list[_Hit]:
    """The seed phrases inside one run of list words, longest first, not overlapping."""
    hits: list[_Hit] = []
    if _seed_alone(text, run):
        start, end = run[0].start(), run[-1].end()
        if not taken.overlaps(start, end):
            hits.append(("seed-phrase", start, end, " ".join(m.group() for m in run)))
        return hits
    i = 0
    while i + _SEED_LENGTHS[-1] <= len(run):
        for length in _SEED_LENGTHS:
            window = run[i : i + length]
            if len(window) < length:
                continue
            words = [m.group() for m in window]
            # In a run longer than any seed, a window that repeats words is word salad (a log of a
            # small vocabulary, round thirteen's decompressed text): the checksum alone passes one
            # window in 16 of those. A run of a seed's length is read whole (BIP-39's test vectors repeat).
            salad = len(run) > _SEED_LENGTHS[0] and len(set(words)) < length - 2
            if not salad and _seed_valid([table[w] for w in words], words):
                start, end = window[0].start(), window[-1].end()
                if not taken.overlaps(start, end):
                    hits.append(("seed-phrase", start, end, " ".join(words)))
                i += length
                break
        else:
            i += 1
    return hits


_MAX_TABLES = 16  # header lines read per string
_MAX_ROWS = 1000  # rows read per table; a longer table has its credential column hidden up to there
_DELIMITERS = (",", "\t", "|", ";")
_RULE_LINE = re.compile(r"[ \t|+:\-=]*")  # a Markdown or result grid's rule: |---|---|, +----+, ----+----
_NOT_A_ROW = re.compile(r"\(\d+ rows?\)|\d+ rows? in set")  # psql's and mysql's footers


def _cells(line: str, delimiter: str) -> list[tuple[str, int]]:
    """The cells of one table line with their offsets in it (outer pipes of a grid dropped)."""
    cells: list[tuple[str, int]] = []
    pos = 0
    for part in line.split(delimiter):
        cells.append((part, pos))
        pos += len(part) + 1
    if delimiter == "|" and len(cells) > 1:
        if not cells[0][0].strip():
            cells = cells[1:]
        if cells and not cells[-1][0].strip():
            cells = cells[:-1]
    return cells


def _table_hits(text: str, taken: _Taken) -> list[_Hit]:
    """Values in a table column whose header names a credential: CSV, TSV, Markdown, SQL result grids."""
    # Only lines the gate picks are read as headers (RE2, linear): a long text is not split per line.
    hits: list[_Hit] = []
    done = 0  # where the last table read ended
    for n, spans in enumerate(_matches(_TABLE_GATE_RE, text)):
        if n >= _MAX_TABLES:
            break
        line_start = text.rfind("\n", 0, spans[0][0]) + 1
        if line_start < done:
            continue
        done = _table_at(text, line_start, taken, hits)
    return hits


_HEADER_CELL = re.compile(r"[A-Za-z_][\w .\-/#]{0,39}")


def _line_end(text: str, start: int) -> int:
    """Where the line that starts at `start` ends (its newline, or the end of the text)."""
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _table_at(text: str, line_start: int, taken: _Taken, hits: list[_Hit]) -> int:
    """Read the table whose header line starts at line_start into hits; return where it ends."""
    line_end = _line_end(text, line_start)
    line = text[line_start:line_end]
    delimiter = max(_DELIMITERS, key=line.count)
    header = _cells(line, delimiter) if line.count(delimiter) else []
    names = [cell.strip().strip("\"'` ") for cell, _ in header]
    # A header is a row of column names: short words (a prose line with commas, a table row of
    # descriptions, a YAML mapping are not), at least two of them.
    if sum(bool(name) for name in names) < 2 or not all(not name or _HEADER_CELL.fullmatch(name) for name in names):
        return line_end
    columns = [n for n, name in enumerate(names) if name and is_credential_key(name)]
    if not columns:
        return line_end
    # Tokenizer and pagination columns ("token") hold words: there a value must look generated.
    strict = {n for n in columns if _key_words(header[n][0])[-1:] in (["token"], ["tokens"])}
    pos = line_end + 1
    for _ in range(_MAX_ROWS):
        if pos > len(text):
            break
        end = _line_end(text, pos)
        row = text[pos:end]
        if not (_RULE_LINE.fullmatch(row) and row.strip()):
            cells = _cells(row, delimiter)
            if len(cells) != len(header) or _NOT_A_ROW.search(row):
                return pos
            for n in columns:
                cell, at = cells[n]
                value = cell.strip().strip("\"'`")
                if len(value) < 3 or _is_placeholder(value) or (n in strict and not _looks_secret(value)):
                    continue
                start = pos + at + cell.index(value)
                if not taken.overlaps(start, start + len(value)):
                    hits.append(("keyword (table)", start, start + len(value), value))
        pos = end + 1
    return pos


def _spaced_hits(text: str, taken: _Taken, level: int) -> list[_Hit]:
    """Secrets in runs of single characters written apart by one separator, glued back and scanned."""
    hits: list[_Hit] = []
    # RE2 finds the stretches (linear); the backreference that wants one separator runs inside them only.
    runs = (m for spans in _matches(_SPACED_GATE_RE, text) for m in _SPACED_RUN.finditer(text, *spans[0]))
    for n, match in enumerate(runs):
        start, end = match.span()
        if n >= _MAX_SPACED:
            hits.append((PAST_SPLIT_BUDGET, start, len(text), text[start:]))
            break
        if taken.covers(start, end):
            continue  # "4 1 1 1 ...": a card run already
        # One separator after each character: every (1 + its length)-th character is the text.
        glued = match.group()[:: len(match.group(1)) + 1]
        # The glued text holds no separator, so it has no run of its own: no deeper recursion.
        for kind, _, _, secret in _analyse(glued, level):
            hits.append((f"{kind.partition(' (')[0]} (spaced)", start, end, secret))
    return hits


_EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+")
# Not passwords: a host, a version, a date or time, a file name with its extension.
_HOST_OR_VERSION = re.compile(
    r"(?i)(?:[a-z0-9\-]+\.)+[a-z]{2,}|v?[0-9]+(?:\.[0-9]+)+.*|.*[0-9]\.[0-9].*|[0-9:\-TZ.+]+"
    r"|[\w.\-]+\.[A-Za-z][A-Za-z0-9]{0,5}"
)
_PASSWORD_SYMBOLS = frozenset("!@#$%^&*+=?~<>|;")
_WORD_EDGE = "\"'`([{<,.;:)]}>"


def _password_like(word: str, *, near: bool) -> bool:
    """True for a word shaped like a password: 8-64 characters, mixed classes, no link, path, file, host or version."""
    if not 8 <= len(word) <= 64 or _is_placeholder(word) or _URL_VALUE.match(word) or "/" in word or "\\" in word:
        return False
    if _EMAIL.fullmatch(word) or _HOST_OR_VERSION.fullmatch(word) or _HEX.fullmatch(word):
        return False
    letters = sum(c.isalpha() for c in word)
    digits = sum(c.isdigit() for c in word)
    if near and not digits and _exemptions.diceware(word):
        return True  # "login: ana / velvet-sample-orbit-canyon": words joined into one (round eleven)
    if not letters or not digits:
        return False
    upper = any(c.isupper() for c in word)
    lower = any(c.islower() for c in word)
    if any(c in _PASSWORD_SYMBOLS for c in word) or (upper and lower and digits >= 3):
        return True
    # "correct-horse-battery-staple-91": words and digits, a password only right after its keyword;
    # so are lower-case words run into a year or a number ("autumnleaves2024", "winter2023sa", round
    # seven), but not an identifier with an underscore ("db_password2").
    return near and (
        (letters >= 4 and not word.isidentifier())
        or (upper and lower)
        or (letters >= 4 and digits >= 2 and "_" not in word)
    )


_CLASS_CHANGE = re.compile(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")
# Words that are no user name in "login jdoe / x", "creds for the contractor: jdoe x" (round seven).
_NOT_A_USER = frozenset(
    {"for", "the", "as", "to", "with", "is", "was", "and", "or", "of", "on", "in", "at", "via", "using", "by"}
    | {"a", "an"}
)
_USER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._\-]{1,31}|[^@\s]+@[A-Za-z0-9.\-]+")


def _mixed_password(word: str) -> bool:
    """True for letters and digits interleaved in both cases ("Tr0ub4dor3xq"): no name, year or model number."""
    return any(c.isupper() for c in word) and any(c.islower() for c in word) and len(_CLASS_CHANGE.findall(word)) >= 4


def _prose_hits(text: str, taken: _Taken) -> list[_Hit]:
    """Passwords introduced by a phrase ("login: admin / x", "pw for the db: x", "passphrase x", "-u user:x")."""
    hits: list[_Hit] = []
    for spans in _budgeted(_PROSE_TRIGGER_RE, text, hits):
        end = spans[0][1]
        flag = spans[3][0] >= 0
        if text[end : end + 1] in ("'", '"') and not flag and not text.startswith(_POSSESSIVE, end):
            continue  # a quoted key ("password": ...): the key and assignment rules read structure
        line_end = text.find("\n", end, end + _PROSE_WINDOW)
        window_end = line_end if line_end >= 0 else min(len(text), end + _PROSE_WINDOW)
        password_word = spans[2][0] >= 0
        naming = spans[1][0] >= 0 and (
            _PROSE_NAMING.fullmatch(text, spans[1][0], spans[1][1]) is not None
            or _PROSE_ARROW_END.search(text, spans[1][0], spans[1][1]) is not None
        )
        pos = end
        previous = ""
        # A credential phrase's user and password pair ("login jdoe / x", "creds: jdoe x"): the word
        # after the user (or after a slash after it) is read as right after a password's word.
        pairs = spans[1][0] >= 0 and not naming
        user_at = -9
        form = "+" in text[spans[0][0] : end] or text[end : end + 1] == "+" or text.startswith("'s+", end)
        for k, word_match in enumerate((_FORM_WORDS if form else _WORDS).finditer(text[pos:window_end])):
            if k >= _PROSE_WORDS or (flag and k >= 1):
                break
            raw = word_match.group()
            word = raw.strip(_WORD_EDGE)
            if flag or (k == 0 and ":" in word and not password_word):
                word = word.partition(":")[2].strip(_WORD_EDGE)  # user:password
            elif password_word and k == 0 and word[:1] == "=":
                word = word[1:]  # "pswd=x": an abbreviation no assignment key holds
            near = password_word and (k == 0 or previous in _PROSE_LINK or previous.endswith(":"))
            if pairs and (k == user_at + 1 or (k == user_at + 2 and previous == "/")):
                near = True
            if flag:
                secret = word if word and not _is_placeholder(word) and _looks_secret(word) else ""
            else:
                secret = word if _password_like(word, near=near) else ""
                if (
                    secret
                    and (
                        raw.startswith("=")
                        or text[max(0, pos + word_match.start() - 4) : pos + word_match.start()].rstrip().endswith("=")
                    )
                    and _exemptions.code_reference(secret)
                ):
                    secret = ""  # "password = settings.DB_PASSWORD": code naming the credential (round eleven)
                if secret and naming and not _PASSWORD_SYMBOLS.intersection(secret) and not _mixed_password(secret):
                    secret = ""  # after "wifi", "combo", "admin ->": a symbol too ("wifi SSID: Corp-Guest-2024")
                if secret and naming and _strong_password(secret) and _STRONG_GATE_RE.search(secret):
                    break  # "wifi Vx7#pQ2m!rT": the shape view names it (password (shape)) without the word
            if (
                pairs
                and not secret
                and (k == 0 or previous.endswith(":"))
                and word.lower() not in _NOT_A_USER
                and _USER_NAME.fullmatch(word)
            ):
                user_at = k
            previous = raw.lower()
            if not secret:
                if raw.endswith(('",', "',", '"}', "'}")):
                    break  # the end of a quoted value: what follows is another field's
                continue
            start = text.find(secret, pos + word_match.start(), pos + word_match.end())
            if not taken.overlaps(start, start + len(secret)):
                hits.append(("password (prose)", start, start + len(secret), secret))
            break
        else:
            if password_word:
                hits.extend(_prose_before(text, spans[0][0], taken))
    return hits


def _prose_before(text: str, trigger: int, taken: _Taken) -> list[_Hit]:
    """A password written before its word ("Use X as the password", "X\n(that is the password above)")."""
    # Back to the start of the line before; the nearest word first. Only a word with a password's
    # own shape counts (no "near" leniency), and no assignment ("MIN_LENGTH=12 for the password").
    line = text.rfind("\n", 0, trigger)
    begin = max(0, text.rfind("\n", 0, line) + 1 if line >= 0 else 0, trigger - 2 * _PROSE_WINDOW)
    words = list(re.finditer(r"\S+", text[begin:trigger]))[-_PROSE_BEFORE:]
    for word_match in reversed(words):
        word = word_match.group().strip(_WORD_EDGE)
        if "=" in word or ":" in word or not _password_like(word, near=False):
            continue
        start = text.find(word, begin + word_match.start(), begin + word_match.end())
        if start >= 0 and not taken.overlaps(start, start + len(word)):
            return [("password (prose)", start, start + len(word), word)]
        return []
    return []


# Round eight: values a label gives whatever their shape (secret_labels.label_prose_hits), found
# by RE2 (linear; Python's re on the table's alternation cost 0.5 s a megabyte).
_STRONG_LABEL = (
    rf"(?i:\b(?:password|passphrase|pass[ \t]phrase|passcode|passwd|{_labels.MISSPELLINGS})\b|\bp\.w\.?"
    rf"|(?:{_I18N_WORDS})\pL{{0,6}})"
)
_CODE_LABEL = rf"\bPIN\b|(?i:\b(?:pin|{_labels.CODE_LABELS})\b)"
_NOUN = rf"(?i:\b(?:{_labels.SECRET_NOUNS}|use)\b)"
_CODE_WORD = re.compile(rf"(?i:{_labels.CODE_LABELS})")
# One pass for every label kind (a megabyte costs one linear scan, not five): the group says which.
_LABELS_RE = re2.compile(
    f"({_STRONG_LABEL})|({_CODE_LABEL})|({_NOUN})|({_labels.PUNCTUATED_GATE})|({_labels.QUERY_GATE})", _OPTIONS
)


def _label_prose_hits(text: str, taken: _Taken) -> list[_Hit]:
    """Passwords of letters only, passphrases, PINs and generated codes told after their label (round eight)."""
    kinds: list[list[Sequence[tuple[int, int]]]] = [[], [], [], [], []]
    for spans in _matches(_LABELS_RE, text):
        group = next(i for i in range(1, 6) if spans[i][0] >= 0)
        kinds[group - 1].append((spans[group],))
        if group == 1 and _CODE_WORD.fullmatch(text, *spans[group]):
            kinds[1].append((spans[group],))  # "passcode" is both: a password's word and a PIN's
        elif group == 2:
            kinds[2].append((spans[group],))  # "access code": a PIN's digits or a generated code
    hits = _labels.label_prose_hits(text, *kinds[:3], budget=MAX_SPLIT, past=PAST_SPLIT_BUDGET)
    hits.extend(_labels.punctuated_hits(text, kinds[3]))
    if kinds[4]:
        hits.extend(_labels.query_pair_hits(text))
    return [
        hit
        for hit in hits
        if not taken.overlaps(hit[1], hit[2]) and not _is_placeholder(hit[3]) and not _assigned_code(text, hit[1])
    ]


_CODE_TOKEN = re.compile(r"[\w.$]+[(\[]?")


def _assigned_code(text: str, start: int) -> bool:
    """True when the word at `start` begins a code reference after "=" ("password = settings.DB_PASSWORD")."""
    if not text[max(0, start - 4) : start].rstrip().endswith("="):
        return False
    token = _CODE_TOKEN.match(text, start)
    if token is None:
        return False
    return _exemptions.code_reference(token.group().rstrip("."), text[token.end() : token.end() + 1])


def _reversed_hits(text: str, taken: _Taken) -> list[_Hit]:
    """Strong-prefix tokens written backwards, each read back and checked as its shape."""
    hits: list[_Hit] = []
    for spans in _budgeted(_REVERSED_RE, text, hits):
        start, end = spans[0]
        group = next(i for i in range(1, len(spans)) if spans[i][0] >= 0) - 1
        rot47 = group - len(_REVERSED_SHAPES) - len(_ROTATED_SHAPES)
        rotated = group >= len(_REVERSED_SHAPES) and rot47 < 0
        if rot47 >= 0:
            index, token, how = _ROT47_SHAPES[rot47][0], text[start:end].translate(_ROT47), "rot47"
        elif rotated:
            index, token, how = (
                _ROTATED_SHAPES[group - len(_REVERSED_SHAPES)][0],
                text[start:end].translate(_ROT13),
                "rot13",
            )
        else:
            index, token, how = group, text[start:end][::-1], "reversed"
        if taken.overlaps(start, end) or not _SPLIT_WHOLE[index].match(token) or not _token_ok(index, token):
            continue
        hits.append((f"{_SPLIT_SHAPES[index][0]} ({how})", start, end, token))
    return hits


def _spelled_hits(text: str, taken: _Taken) -> list[_Hit]:
    """Card numbers with digits spelled as words, found in the view where each word is its digit."""
    view = _NUMBER_WORD_RE.sub(lambda m: _DIGIT_OF[m.group(1).lower()], text[: _MAX_GLUED * 8])
    if view == text:
        return []
    # The view's offsets differ from the text's: the finding names the spelled run, the rewrite
    # falls back to hiding the whole string (the rescan still finds it).
    return (
        [("card-number (spelled)", 0, len(text), digits) for _, _, digits in _card_spans(view)]
        if not taken.covers(0, len(text))
        else []
    )


def _excerpt(kind: str, secret: str) -> str:
    """The excerpt of a hit: a card shows its last four digits, a key block its header."""
    if kind.startswith("card-number"):
        return f"…{secret[-4:]} ({len(secret)} digits)"
    if kind == "private-key":
        return secret[:60]  # the header names the kind of key; the key itself follows it
    return _mask(secret)


def _json_text(text: str) -> bool:
    """True for a string that may be JSON text (an object or an array)."""
    return text.lstrip()[:1] in ("{", "[") and len(text) <= _MAX_JSON_TEXT


def _json_findings(text: str, depth: int) -> list[_Raw]:
    """Findings in a string holding JSON text, scanned as the value it encodes."""
    if not _json_text(text):
        return []
    # JSON in a string ("body": "{\"name\": \"DB_PASSWORD\", \"value\": ...}") is a value:
    # every structural rule (keys, pairs, name/value entries) applies inside it.
    parsed = _json_container(text)
    return [] if parsed is None else _find(parsed, (), depth + 1)


def _json_container(text: str) -> dict[Any, Any] | list[Any] | None:
    """The object or array a JSON text holds; None when it is not JSON or holds a scalar."""
    try:
        parsed = json.loads(text)
    except RecursionError as error:
        raise ValueError("JSON text nested too deeply to scan") from error
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict | list) else None


# JSON inside other text ("curl -d '{...}'", a log line): where an object or array may start.
_EMBEDDED_JSON = re.compile(r"[\[{]\s*[\"\[{]")
_MAX_EMBEDDED = 16  # tries per string: each may read to the end of the text before it fails
_DECODER = json.JSONDecoder()


def _embedded_json_findings(text: str, depth: int) -> list[_Raw]:
    """Findings in the JSON objects and arrays inside a text that is not JSON itself."""
    found: list[_Raw] = []
    pos = tries = 0
    while tries < _MAX_EMBEDDED and (start := _EMBEDDED_JSON.search(text, pos)) is not None:
        tries += 1
        try:
            value, end = _DECODER.raw_decode(text, start.start())
        except RecursionError as error:
            raise ValueError("JSON text nested too deeply to scan") from error
        except ValueError:
            pos = start.start() + 1
            continue
        # The structural rules (sibling values, name/value entries, credential keys) apply inside.
        found.extend(_find(value, (), depth + 1))
        pos = end
    return found


# What bash removes or joins: adjacent quoted pieces, a backslash before a letter, an option
# between two values (so the values of repeated options meet as pieces).
_SHELL_QUOTING = re.compile(r"['\"]{2}|\\[\w\-]|\s-{1,2}[A-Za-z]|\$\{?[A-Za-z_]")
_SHELL_JOINS = re.compile(r"(?<=[^\s'\"])(?:''|\"\"|'\"|\"')(?=[^\s'\"])|\\(?=[\w\-])")
_SHELL_OPTION = re.compile(r"(?<=[^\s])(['\"]?)\s+-{1,2}[A-Za-z][\w\-]*(?:\s+|=)(['\"]?)(?=[A-Za-z0-9_\-])")


# "a=AKIAIOSF; b=ODNN7EXAMPLE; curl -d "k=$a$b"": plain assignments, put in for their references.
_SHELL_ASSIGNMENT = re.compile(r"(?:^|(?<=[;&|\s(]))([A-Za-z_]\w*)=('[^'\n]*'|\"[^\"$`\\\n]*\"|[^\s;&|'\"$`()<>]*)")
_SHELL_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
_MAX_SHELL_VARIABLES = 64


def _shell_view(text: str) -> str:
    """The text as bash's quote removal leaves its words, with repeated options' values side by side."""
    if "$" in text:
        variables: dict[str, str] = {}
        for n, match in enumerate(_SHELL_ASSIGNMENT.finditer(text)):
            if n >= _MAX_SHELL_VARIABLES:
                break
            value = match.group(2)
            variables[match.group(1)] = value[1:-1] if value[:1] in ("'", '"') else value
        if variables:
            text = _SHELL_REFERENCE.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group()), text)
    view = _SHELL_JOINS.sub("", text)
    return _SHELL_OPTION.sub("' '", view)


_FORM_SPACES = re.compile(r"[?&=][^\s?&=]*[A-Za-z]{2}\+[A-Za-z0-9'/]+\+")
_WORD_KINDS = frozenset({"password (prose)", "keyword"})
_FORM_BLANKS = str.maketrans("+&", "  ")


def _text_hits(text: str, depth: int) -> list[tuple[str, str]]:
    """(kind, excerpt) of every secret in a string, raw and normalised, JSON text included."""
    seen: dict[tuple[str, str], None] = {}
    normal = text
    if text.isascii() and not _needs_decoding(text):
        hits = _analyse(text)
    else:
        normal = _normalise(text)
        hits = _analyse(normal)
        if not hits and text.isascii():
            # Decoding can also break a match ("password=%20%20%20x"): then the raw text decides.
            hits = _analyse(text) or (_escaped_code_hits(text, 0) if "%" in text else [])
        elif not hits:
            # Escapes behind look-alikes or invisibles (full-width backslashes, a zero-width space after one):
            # the codes as written are read (round fourteen).
            hits = _escaped_code_hits(text, 0)
    if not hits and "+" in normal and _FORM_SPACES.search(normal):
        # A query string or form body writes spaces as '+' ("?text=my+pw's+X"): read it with spaces
        # (one character for one, so spans stay those of the text). Only what the words show counts:
        # prose and key/value findings; a base64 run cut at its '+' is no token. '&' ends a field:
        # "?q=password+policy&p=2" is a search for two words and a page, not "policy&p=2" (round eight).
        hits = [hit for hit in _analyse(normal.translate(_FORM_BLANKS)) if hit[0] in _WORD_KINDS]
    if (not hits or all(hit[0] in _tokens.KINDS for hit in hits)) and _SHELL_QUOTING.search(normal):
        # A shell command's words after quote removal: 'secure''Pass123', AKIA\IOSF..., and the
        # values of repeated options (-d 'sk_live_4eC' -d 'LyjW...') side by side as quoted pieces.
        # A piece read as a shape-only token ('lpat-...' of 'g' 'lpat-...') does not stop it.
        view = _shell_view(normal)
        if view != normal:
            hits = _analyse(view) or hits
    for kind, _, _, secret in hits:
        seen[(kind, _excerpt(kind, secret))] = None
    json_hits = _json_findings(text, depth) if _json_text(text) else _embedded_json_findings(normal, depth)
    if not json_hits and normal != text and _json_text(normal) and not _json_text(text):
        json_hits = _json_findings(normal, depth)
    elif not json_hits and normal != text and _json_text(text) and _json_container(text) is None:
        # '{\u200b"db_password": ...}' is no JSON as written; normalised (the invisible dropped) it is.
        json_hits = _json_findings(normal, depth)
    for _, kind, excerpt in json_hits:
        seen[(kind, excerpt)] = None
    carried = _carried(text)
    if carried is not None:
        # Round thirteen: text carried in TAG characters, variation selectors, invisible or blank bits,
        # Braille, base100 emoji or enclosed letters, read in views of the string (secret_carriers).
        seen.update(dict.fromkeys(_carriers.hits(carried, lambda view: _text_hits(view, depth))))
    for view in _lookalikes.views(normal):
        # Round fourteen: letters of other scripts read as ASCII (Lisu, Cherokee, small capitals).
        seen.update(dict.fromkeys((f"{kind} (look-alike letters)", seen_) for kind, seen_ in _text_hits(view, depth)))
    for view in _flipped.views(text):
        # Round fifteen: words written upside down, turned back (_secret_flipped; the raw text: the
        # normalisation folds some flipped letters to others: long s, a flipped J, to s).
        seen.update(dict.fromkeys((f"{kind} (flipped text)", seen_) for kind, seen_ in _text_hits(view, depth)))
    return list(seen)


def _carried(text: str) -> str | None:
    """The string as carriers read it (escapes decoded, nothing folded) when it may carry text in Unicode."""
    if _carriers.gate(text):
        return text
    if ("%" in text or "\\" in text or "&#" in text) and _needs_decoding(text):
        # '%F3%A0%81%A7', '\\udb40\\udc67', '&#xE0067;': _normalise would decode them and drop what they are.
        raw = _unescaped(text)
        if raw != text and _carriers.gate(raw):
            return raw
    return None


def _unescaped(text: str) -> str:
    """The string with its escapes, entities and percent-encoding decoded, and nothing folded."""
    for _ in range(MAX_DECODE_ROUNDS):
        before = text
        text = _decode_round(text)
        if text == before:
            break
    # JSON writes an astral character as two escaped surrogates ("\\udb40\\udc67"): one character again.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


# ---------------------------------------------------------------------------------------------
# Walking values
# ---------------------------------------------------------------------------------------------

_Path = tuple[str | int, ...]
_Raw = tuple[_Path, str, str]  # where (segments), kind, excerpt
_PAIR_NAMES = ("name", "key", "header", "label", "field", "title", "variable", "var")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _format(path: str, segments: _Path) -> str:
    """A document path: `a.b[0]`, with `["odd key"]` for keys that are not identifiers."""
    out = path
    for segment in segments:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif _IDENTIFIER.fullmatch(segment):
            out += f".{segment}" if out else segment
        else:
            out += f"[{json.dumps(segment, ensure_ascii=False)}]"
    return out


def pair_value(value: dict[Any, Any] | list[Any], is_name: Callable[[str], Any]) -> Any:
    """The index or key of a pair's value when its name passes `is_name`, else None."""
    # ["Authorization", "Bearer x"] gives 1; {"name": "DB_PASSWORD", "value": "x"} (also "key" or
    # "header" for the name, in any case) gives the key spelling "value" in that dict.
    if isinstance(value, list):
        return 1 if len(value) == 2 and isinstance(value[0], str) and is_name(value[0]) else None
    # A value marked sensitive ({"sensitive": true, "type": "string", "value": "x"}: Terraform's
    # `output -json` and state) is a secret by its owner's word, whatever its name.
    value_key = None
    named = False
    for k, v in value.items():
        lower = k.lower() if isinstance(k, str) else ""
        if lower == "value":
            value_key = k
        elif (lower in _PAIR_NAMES and isinstance(v, str) and not named and is_name(v)) or (
            lower == "sensitive" and v is True
        ):
            named = True
    return value_key if named else None


def _value_key(value: dict[Any, Any]) -> Any:
    """The key spelling "value" in an object (any case), or None."""
    if not _maybe_pair(value):
        return None
    return next((k for k in value if isinstance(k, str) and k.lower() == "value"), None)


def _header_pair(value: dict[Any, Any]) -> Any:
    """A {name, value} record (a HAR header): a custom header's or glued key's name and a token as its value."""
    key = pair_value(value, _tokens.credential_name)
    item = value.get(key) if key is not None else None
    return key if isinstance(item, str) and _tokens.token_value(item) else None


def _maybe_pair(value: dict[Any, Any]) -> bool:
    """A cheap test before pair_value: the dict has a "value" key (the usual spellings)."""
    return "value" in value or "Value" in value or "VALUE" in value


def _card_number_value(value: int | float) -> str | None:
    """The digits of a JSON number that is a card number, else None."""
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer() and abs(value) < 1e19):
            return None
        value = int(value)
    if not 10**11 <= abs(value) < 10**19:
        return None
    digits = str(abs(value))
    return digits if _is_card(digits) or _maestro12(digits) else None


def _find(value: Any, at: _Path, depth: int) -> list[_Raw]:
    """All findings in a value, with paths as segments."""
    texts: list[str] = []
    places: list[tuple[_Path, str | int | None]] = []
    credentials: dict[_Path, _Raw] = {}
    numbers: list[_Raw] = []
    groups: list[tuple[_Path, list[int]]] = []
    containers: list[tuple[Any, _Path, bool]] = []
    _walk(value, at, depth, texts, places, credentials, numbers, groups, containers)
    joined = "\n".join(texts)
    # The fast path: one prefilter pass over every string (keys included) finds no candidate.
    # Non-ASCII text is looked at once normalised. A split token has its prefix in the joined
    # text too (the walk puts sibling values side by side; see _walk).
    if joined.isascii() and not _prefilter(joined):
        # One pass (the prefilter and round eight's gate together): nothing anywhere, not even
        # pieces across values. Integers are not in the joined text: a card cut into numbers
        # ([4961, 1516, ...]) is read here, and digit groups in one field of each object of a list.
        for item, where, ints in containers:  # (a loop: most calls have one container or none)
            if (ints and _number_groups(item)) or (
                not isinstance(item, dict) and item and isinstance(item[0], dict) and _column_digits(item)
            ):
                numbers.extend(_sibling_findings(item, where))
        return [*credentials.values(), *numbers]
    if containers:  # (one string alone has no siblings: no pass over it for pieces)
        # Which kinds of pieces the document has at all: digit groups, random pieces (one pass each).
        digits = [len(t) for t in texts if len(t) <= 8 and t.isdigit()]
        has_digits = len(digits) >= 2 and sum(digits) >= 13
        random = _encodings.random_pieces_gate(joined)
        for item, where, ints in containers:
            if (ints and _number_groups(item)) or ((has_digits or random) and _sibling_gate(item, random=random)):
                numbers.extend(_sibling_findings(item, where))
    if (
        joined.isascii()
        and len(texts) > 1
        and not _prefilter(joined, encodings=False)
        and not _encodings_search(_nul_join(texts).encode("ascii"))
    ):
        # Round eight's gate matched only across values ("cityA\ncityB\n94016"): the NUL join keeps
        # pieces apart; a card or a key cut across sibling values was read above.
        return [*credentials.values(), *numbers]
    found = [*_scan_texts(texts, places, depth), *(_split_groups(texts, groups) if groups else [])]
    found.extend(
        (where, "card-number (split)", _excerpt("card-number", digits)) for where, digits in _card_groups(texts, groups)
    )
    if not found and not isinstance(value, str) and _split_heads_search(joined.encode("utf-8", "surrogatepass")):
        found = _split_neighbours(value, at)
    # A credential's value that also matched a shape is reported once, by its shape.
    shaped = {where for where, _, _ in found}
    return [*(raw for where, raw in credentials.items() if where not in shaped), *found, *numbers]


def _keyed_cards(value: dict[Any, Any] | list[Any] | tuple[Any, ...], at: _Path) -> list[_Raw]:
    """Cards written as a bare hex or base-36 word under a card's key or beside its expiry or CVV (secret_cardforms)."""
    items = value if isinstance(value, dict) else list(value)
    return [
        ((*at, key), kind, _excerpt("card-number", digits))
        for key, kind, digits in _cardforms.keyed_hits(items, _is_card, _cvv_name)
    ]


def _split_groups(texts: list[str], groups: list[tuple[_Path, list[int]]]) -> list[_Raw]:
    """Tokens split across the sibling strings of one object or list, reported at the container."""
    # One search over every group first: most documents have no strong prefix anywhere.
    everything = "\n".join(SIBLING.join(texts[i] for i in indexes) for _, indexes in groups)
    if everything.isascii() and not _split_search(everything.encode("ascii")):
        return []
    found: list[_Raw] = []
    for where, indexes in groups:
        hits, _ = _split_pieces([texts[i] for i in indexes])
        found.extend((where, kind, _mask(secret)) for kind, _, _, secret in hits)
    return found


def _sibling_card(items: Sequence[Any]) -> str | None:
    """The card number that sibling strings of digits make together (["4532", "0151", ...]), or None."""
    if not 2 <= len(items) <= 6 or not all(isinstance(x, str) and x.strip().isdigit() and x.isascii() for x in items):
        return None
    parts = [x.strip() for x in items]
    lengths = [len(x) for x in parts]
    digits = "".join(parts)
    # A card's grouping (fours, Amex's 4-6-5) or a card cut in two halves; lists of other numbers
    # (years, counts) would pass Luhn one time in ten.
    halves = len(parts) == 2 and lengths[0] == 8 and 5 <= lengths[1] <= 8
    grouped = _card_grouping("/", lengths)
    return digits if (halves or grouped) and _is_card(digits) else None


def _sibling_token(glued: str) -> bool:
    """True when pieces glued from sibling values read as a generated key."""
    return _high_entropy(glued, 0, glued)


def _sibling_findings(value: dict[Any, Any] | list[Any] | tuple[Any, ...], at: _Path) -> list[_Raw]:
    """Cards and keys cut across the values of one container, or one field of each object in a list."""
    found: list[_Raw] = []
    for column, values in _sibling_columns(value):
        if not _sibling_candidates(values):
            continue
        for indexes, kind, secret in _encodings.sibling_secrets(values, _is_card, _sibling_token):
            where = (*at, min(indexes)) if column is None else (*at, min(indexes), column)
            found.append((where, kind, _excerpt("card-number", secret) if kind.startswith("card") else _mask(secret)))
    return found


def _sibling_gate(value: dict[Any, Any] | list[Any] | tuple[Any, ...], *, random: bool = True) -> bool:
    """True when a container's strings (or its objects' fields) may hold a card or a key cut across them."""
    items = value.values() if isinstance(value, dict) else value
    strings = [x for x in items if type(x) is str]
    objects = [x for x in items if isinstance(x, dict)]  # (a list in C, not any() over a generator)
    if objects:
        strings += [v for x in objects for v in x.values() if type(v) is str]
    if len(strings) < 2:
        return False
    # Digit groups in separate strings ("4620", "9665", ...) or random pieces of a key.
    groups = [len(x) for x in strings if len(x) <= 8 and x.isdigit()]
    if len(groups) >= 2 and sum(groups) >= 13:  # enough digits for a card
        return True
    return random and _encodings.random_pieces_gate("\n".join(strings))


def _column_digits(value: dict[Any, Any] | list[Any] | tuple[Any, ...]) -> bool:
    """True for a list of objects whose fields hold groups of digits ([{"text": "4620"}, ...]): apart in the walk."""
    if isinstance(value, dict) or not value or not isinstance(value[0], dict):
        return False
    groups = [
        len(v)
        for item in value
        if isinstance(item, dict)
        for v in item.values()
        if type(v) is str and len(v) <= 8 and v.isdigit()
    ]
    return len(groups) >= 2 and sum(groups) >= 13  # enough digits for a card


def _sibling_candidates(values: list[Any]) -> bool:
    """True when sibling values may hold a cut card or key: integer groups, digit groups, random pieces."""
    if _number_groups(values):
        return True
    strings = [v for v in values if type(v) is str]
    if len(strings) < 2:
        return False
    groups = [len(x) for x in strings if len(x) <= 8 and x.isdigit()]
    return (len(groups) >= 2 and sum(groups) >= 13) or _encodings.random_pieces_gate("\n".join(strings))


def _number_groups(value: dict[Any, Any] | list[Any] | tuple[Any, ...]) -> bool:
    """True when a container holds integers that could be groups of a card's digits (two or more, 13 digits)."""
    items = value.values() if isinstance(value, dict) else value
    groups = [len(str(x)) for x in items if type(x) is int and 100 <= x < 10**8]
    return len(groups) >= 2 and sum(groups) >= 13


def _sibling_columns(value: dict[Any, Any] | list[Any] | tuple[Any, ...]) -> Iterator[tuple[Any, list[Any]]]:
    """(field or None, values): a container's own values, and each field of a list of objects."""
    if isinstance(value, dict):
        yield None, list(value.values())
        return
    items = list(value)
    yield None, items
    if 2 <= len(items) <= _MAX_LEAVES and all(isinstance(x, dict) for x in items):
        for key in list(items[0])[:12]:
            yield key, [x.get(key) for x in items]


def _sibling_marks(value: dict[Any, Any] | list[Any] | tuple[Any, ...], *, cards_only: bool) -> set[tuple[Any, Any]]:
    """(index or key, field or None) of the sibling values that hold a piece of a card or key cut across them."""
    marks: set[tuple[Any, Any]] = set()
    keys = list(value) if isinstance(value, dict) else None
    for column, values in _sibling_columns(value):
        if not _sibling_candidates(values):
            continue
        for indexes, kind, _ in _encodings.sibling_secrets(values, _is_card, _sibling_token):
            if cards_only and not kind.startswith("card"):
                continue
            marks.update(((keys[i] if keys is not None else i), column) for i in indexes)
    return marks


def _card_groups(texts: list[str], groups: list[tuple[_Path, list[int]]]) -> Iterator[tuple[_Path, str]]:
    """Card numbers split across the sibling strings of one object or list, reported at the container."""
    for where, indexes in groups:
        if len(indexes) <= 6 and texts[indexes[0]][:1].isdigit():
            digits = _sibling_card([texts[i] for i in indexes])
            if digits is not None:
                yield where, digits


_MAX_CHAR_CODES = 4096  # the longest list of numbers read as character codes
_MAX_LEAVES = 4096  # string leaves glued for neighbours; past it the rest is reported unchecked


def _leaves(value: Any, out: list[str]) -> None:
    """The string leaves of a value in document order (dict values in order, then list items)."""
    if len(out) > _MAX_LEAVES:
        return
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _leaves(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _leaves(item, out)


def _split_neighbours(value: Any, at: _Path) -> list[_Raw]:
    """A strong-prefix token begun in one value of a call and continued in the next ones, wherever they sit."""
    # {"content": "AKIA", "tags": ["IOSF..."]}: the string values of one call, in document order,
    # glued with SIBLING gaps and searched once (a token cut inside its prefix included).
    leaves: list[str] = []
    _leaves(value, leaves)
    if len(leaves) > _MAX_LEAVES:
        return [(at, PAST_SPLIT_BUDGET, _mask(leaves[_MAX_LEAVES]))]
    if len(leaves) < 2:
        return []
    hits, _ = _split_pieces(leaves)
    return [(at, kind, _mask(secret)) for kind, _, _, secret in hits]


# The name of a `[name, value]` pair (["Authorization", "Bearer ..."]): a JSON text or a sentence as the
# first item is a value beside another, not a name (its credential words would make the second a secret).
_PAIR_NAME: Final = re.compile(r"[^{}\[\]\"'\n\r=]{1,80}")


def _walk(
    value: Any,
    at: _Path,
    depth: int,
    texts: list[str],
    places: list[tuple[_Path, str | int | None]],
    credentials: dict[_Path, _Raw],
    numbers: list[_Raw],
    groups: list[tuple[_Path, list[int]]],
    containers: list[tuple[Any, _Path, bool]] | None = None,
) -> None:
    """Collect the strings to scan (with where they are) and the credential and number findings."""
    # Strings are the common leaf: their place is kept as (parent path, key) so no path tuple
    # is built for a leaf unless a finding needs it.
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    # An object's keys, then its string values, then its containers: the string values of one
    # container sit side by side in the joined text, so the prefilter's split prefixes (gaps allowed,
    # newline among them) see a prefix cut across two values, and no split check runs without one.
    if isinstance(value, dict):
        pair = (pair_value(value, _pair_name) or _header_pair(value)) if _maybe_pair(value) else None
        strings: list[str] = []
        string_places: list[tuple[_Path, str | int | None]] = []
        nested: list[tuple[str, Any]] | None = None
        ints = 0
        jwk = _encodings.jwk_private(value) if "kty" in value else None
        public_jwk = jwk == []
        worded = False  # a string of a bare word's length (secret_cardforms.keyed_hits)
        for key, item in value.items():
            if not isinstance(key, str):
                key = str(key)
            texts.append(key)  # a secret can hide in a key too
            places.append((at, key))
            known = _KEY_CACHE.get(key)
            text = isinstance(item, str)  # (tested once: most values are strings)
            if (
                known
                or (known is None and is_credential_key(key))
                or key == pair
                or (jwk and key in jwk)
                or (text and 20 <= len(item) <= 130 and _encodings.key_material(key, item))
            ):
                _credential(item, (*at, key), credentials)
            if public_jwk and key in _encodings.JWK_PUBLIC:
                continue  # a public JSON Web Key's modulus and coordinates are published on purpose
            if text:
                strings.append(item)
                string_places.append((at, key))
                worded = worded or (9 <= len(item) <= 20 and item.strip().isalnum() and not item.isalpha())
            elif item is not None and item is not True and item is not False:
                if nested is None:
                    nested = []
                nested.append((key, item))
                ints += type(item) is int
        if worded:
            numbers.extend(_keyed_cards(value, at))
        if len(strings) > 1:
            groups.append((at, list(range(len(texts), len(texts) + len(strings)))))
        if containers is not None and (len(strings) > 1 or ints > 1):
            containers.append((value, at, ints > 1))  # two values or more that may be pieces of one card or key
        texts.extend(strings)
        places.extend(string_places)
        for key, item in nested or ():
            # A plural parent ("api_keys", "passwords"): only containers and numbers are nested.
            if key[-1:] in "sS" and plural_parent(key, item):
                _parent_secrets(item, (*at, key), credentials, plural=True, depth=depth)
            _walk(item, (*at, key), depth + 1, texts, places, credentials, numbers, groups, containers)
    elif isinstance(value, list | tuple):
        if (
            len(value) == 2
            and isinstance(value[0], str)
            and _PAIR_NAME.fullmatch(value[0])
            and is_credential_key(value[0])
        ):
            _credential(value[1], (*at, 1), credentials)
        first = len(texts)
        ints = 0
        for i, item in enumerate(value):
            if isinstance(item, str):
                texts.append(item)
                places.append((at, i))
            else:
                ints += type(item) is int
        if 2 <= len(texts) - first <= 8 and "/" in "".join(texts[first:]):
            numbers.extend(_keyed_cards(value, at))  # a bare word beside a month and year (04/29)
        if 3 <= len(value) <= 6:
            numbers.extend(((*at, i), "password (connection)", _mask(value[i])) for i in _connection_password(value))
        if len(texts) - first >= 3:
            words = texts[first:]
            # Set and suffix tests in C first: most lists name no program of the table.
            if not _PROGRAM_NAMES.isdisjoint(words) or any(w.endswith(_PROGRAM_PATHS) for w in words):
                numbers.extend(_argv_findings(words, at))
        if _MIN_ENCODED <= len(value) <= _MAX_CHAR_CODES and type(value[0]) is int:
            # [103, 104, 112, 95, ...]: a list of character codes is the text it spells, scanned as one.
            spelled = _from_char_codes(x if type(x) is int else -1 for x in value)
            if spelled is not None:
                texts.append(spelled)
                places.append((at, None))
        if len(value) >= _byte_codes.MIN_CODES:
            # ["43", "6f", "70", ...], [67, 111, 112, ...]: one code per item is a run of codes, read as one
            # (round fourteen: the reader judges the word they spell, as it does in a string).
            if len(texts) - first == len(value):
                codes = _byte_codes.joined_items(texts[first:])
            else:
                codes = _byte_codes.joined_numbers(value) if type(value[0]) is int else None
            if codes is not None:
                texts.append(codes)
                places.append((at, None))
        if len(texts) - first > 1:
            groups.append((at, list(range(first, len(texts)))))
        if containers is not None and 2 <= len(value) <= _MAX_LEAVES:
            containers.append((value, at, ints > 1))  # items that may be pieces of one card or key
        for i, item in enumerate(value):
            if not isinstance(item, str) and item is not None and item is not True and item is not False:
                _walk(item, (*at, i), depth + 1, texts, places, credentials, numbers, groups, containers)
    elif isinstance(value, str):
        texts.append(value)
        places.append((at, None))
    elif value is None or isinstance(value, bool):
        return
    elif isinstance(value, int | float):
        if not -1e12 < value < 1e12:  # long enough to be a card number (or not finite)
            digits = _card_number_value(value)
            if digits is not None:
                numbers.append((at, "card-number", _excerpt("card-number", digits)))
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


# A command's words as a list (the words a shell passes, an exec tool's argv): a program of
# PASSWORD_OPTIONS among them, by its name or path, has its options read with the words that follow.
_PROGRAM_NAMES = frozenset(name for programs, _ in PASSWORD_OPTIONS for name in programs.split("|"))
_PROGRAM_PATHS = tuple(f"{sep}{name}{ext}" for name in _PROGRAM_NAMES for sep in "/\\" for ext in ("", ".exe"))
_PROGRAM_WORD = re.compile(
    rf"(?:[^\s]*[/\\])?(?:{'|'.join(programs for programs, _ in PASSWORD_OPTIONS)})(?:\.exe)?", re.I
)
_PASSWORD_OPTION_RE = re.compile(
    "|".join(
        rf"(?:^|[ \t])(?:{programs})(?:\.exe)?[ \t](?:[^\n]*?[ \t])?{option}([^\s\-'\"][^\s'\"]*)"
        for programs, option in PASSWORD_OPTIONS
    ),
    re.I,
)
_MAX_ARGV = 256  # words read per list


def _argv_findings(items: Sequence[Any], at: _Path) -> list[_Raw]:
    """Passwords given to a program's password option in a list of words (["smbclient", "-U", "u%x"])."""
    words = [x for x in items[:_MAX_ARGV] if isinstance(x, str)]
    if not any(len(w) < 64 and _PROGRAM_WORD.fullmatch(w) for w in words):
        return []
    joined = " ".join(w.rpartition("/")[2] if _PROGRAM_WORD.fullmatch(w) else w for w in words)
    found: list[_Raw] = []
    for match in _PASSWORD_OPTION_RE.finditer(joined):
        value = next(g for g in match.groups() if g is not None)
        if not _is_placeholder(value):
            found.append((at, "keyword", _mask(value)))
    return found


_HOST = re.compile(r"(?i)(?:[a-z0-9\-]+\.)+[a-z]{2,}|localhost|[0-9]{1,3}(?:\.[0-9]{1,3}){3}")


def _connection_password(items: Sequence[Any]) -> set[int]:
    """The index of a password in a connection tuple (host, port, user, password in any order), if any."""
    # ["mail.example.com", 587, "ops", "Gp7!Wz3#Kq8v"]: positional settings (SMTP, a database) carry no
    # key; a host, a port and a word with a password's own shape beside them make the tuple one.
    ports = [
        x for x in items if (type(x) is int and 0 < x < 65536) or (isinstance(x, str) and x.isdigit() and len(x) <= 5)
    ]
    if not ports or not any(isinstance(x, str) and len(x) <= 253 and _HOST.fullmatch(x) for x in items):
        return set()
    return {i for i, x in enumerate(items) if isinstance(x, str) and not _HOST.fullmatch(x) and _tuple_password(x)}


def _tuple_password(word: str) -> bool:
    """True for a connection tuple's word with a password's own shape, as written or once decoded (hex, base64)."""
    if _password_like(word.strip(_WORD_EDGE), near=False):
        return True
    if len(word) < _MIN_ENCODED or len(word) > 2 * DECODE_BUDGET or not _ENCODED_RE.fullmatch(word):
        return False
    return any(_password_like(decoded.strip(), near=False) for _, decoded in _decodings(word))


def _scalars(item: Any) -> bool:
    """True for a non-empty list of scalars (a credential key's list is its values)."""
    return isinstance(item, list | tuple) and bool(item) and not any(isinstance(x, dict | list | tuple) for x in item)


def _credential(item: Any, at: _Path, credentials: dict[_Path, _Raw]) -> None:
    """Record the value of a credential key (a scalar, each of a list of scalars, or an object's "value")."""
    if _scalars(item):
        for i, x in enumerate(item):
            _credential(x, (*at, i), credentials)
    elif isinstance(item, dict) and (value_key := _value_key(item)) is not None:
        # {"db_password": {"type": "string", "value": "x"}}: a credential key's object carries the
        # credential in its "value" (Terraform outputs, SSM parameters, Kubernetes env entries).
        _credential(item[value_key], (*at, value_key), credentials)
    elif not isinstance(item, dict | list | tuple) and _secret_scalar(item):
        credentials[at] = (at, "keyword", _mask(str(item)))
    elif isinstance(item, str) and _exemptions.no_password_option(item):
        return  # "rootpw": "--lock": an option saying there is no password (no_password_option)
    else:
        # Round nine: a credential parent whose children are plain names ({"creds": {"ana": x}},
        # {"auth": {"users": {...}}}, [{"owner": "ana", "v": x}]): each child not about the secret is one.
        _parent_secrets(item, at, credentials, plural=False, depth=0)


def _parent_secrets(item: Any, at: _Path, credentials: dict[_Path, _Raw], *, plural: bool, depth: int) -> None:
    """Record the string leaves below a credential parent that _child_secret takes (names about them skipped)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(item, str):
        if _child_secret(item, plural=plural):
            credentials[at] = (at, "keyword", _mask(item))
        return
    for where, child in _credential_children(item):
        _parent_secrets(child, (*at, where), credentials, plural=plural, depth=depth + 1)


def _credential_children(item: Any) -> Iterator[tuple[Any, Any]]:
    """The children of a credential parent that hold the secret: all but those named about it (owner, expiry)."""
    if isinstance(item, dict):
        for key, child in item.items():
            if is_credential_key(str(key)) or not _key_words_mod.about_child(_key_words(str(key))):
                yield key, child
    elif isinstance(item, list | tuple):
        yield from enumerate(item)


def _child_secret(text: str, *, plural: bool) -> bool:
    """A string below a credential parent is its secret unless a placeholder; below a plural name
    ("tokens": a tokenizer's words, too), only one that prose would not write (_looks_secret)."""
    return not _is_placeholder(text) and (not plural or _looks_secret(text))


_BASE64_NAME = re.compile(r"(?:[A-Za-z0-9+/]{4}){2,64}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _pair_name(name: str) -> bool:
    """A {name, value} entry's name naming a credential, also in base64 (etcd's JSON: "L2FwcC9kYi9wYXNzd29yZA==")."""
    if is_credential_key(name):
        return True
    if len(name) < 8 or not _BASE64_NAME.fullmatch(name):
        return False
    try:
        decoded = base64.b64decode(name, validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return False
    return decoded.isprintable() and is_credential_key(decoded.rstrip("/").rsplit("/", 1)[-1])


def plural_parent(key: str, item: Any) -> bool:
    """True when a container sits under the plural of a credential's name ("passwords", "api_keys", "pins")."""
    if not isinstance(item, dict | list | tuple) or not item or not key.endswith(("s", "S")):
        return False
    known = _PLURAL_CACHE.get(key)
    if known is None:
        known = _key_words_mod.plural_credential(_key_words(key), _credential_words)
        if len(key) <= _KEY_CACHE_LENGTH and len(_PLURAL_CACHE) < _KEY_CACHE_SIZE:
            _PLURAL_CACHE[key] = known
    return known


_PLURAL_CACHE: dict[str, bool] = {}  # plural_parent's answer by key, bounded like _KEY_CACHE


def _scan_texts(texts: list[str], places: list[tuple[_Path, str | int | None]], depth: int) -> list[_Raw]:
    """Findings in the collected strings: the non-ASCII ones, and the ASCII ones the prefilter picks."""
    plain = [i for i, text in enumerate(texts) if text.isascii()]
    picked = {i for i, text in enumerate(texts) if not text.isascii()}
    picked.update(plain[i] for i in _candidates([texts[i] for i in plain]))
    found: list[_Raw] = []
    for i in sorted(picked):
        at, key = places[i]
        where = at if key is None else (*at, key)
        found.extend((where, kind, excerpt) for kind, excerpt in _text_hits(texts[i], depth))
    return found


def _nul_join(texts: list[str]) -> str:
    """The strings joined by NUL: what round eight's readers read, with no run across two strings."""
    return "\0".join(texts)


def _candidates(texts: list[str]) -> set[int]:
    """Indexes of the ASCII texts the prefilter matches, from passes over them all joined."""
    if len(texts) < 8:
        return {i for i, text in enumerate(texts) if _prefilter(text)}
    # One search per match over the joined text instead of one per string: a match is mapped
    # to every string it overlaps (one reaching across the newline marks both, and the string
    # it consumed part of is then analysed whole), so no string with a match is left out.
    starts = list(itertools.accumulate((len(t) + 1 for t in texts[:-1]), initial=0))
    picked: set[int] = set()
    joined = "\n".join(texts)
    matches = itertools.chain(
        itertools.chain.from_iterable(_matches(part, joined) for part in _PREFILTER_PARTS),
        _matches(_ENCODINGS_GATE_RE, _nul_join(texts)),  # same offsets; no match across strings
        _matches(_MORE_GATE_RE, _nul_join(texts)),  # round fourteen's readers (_more_hits)
    )
    for spans in matches:
        start, end = spans[0]
        first = bisect.bisect_right(starts, start) - 1
        last = bisect.bisect_right(starts, max(start, end - 1)) - 1
        picked.update(range(first, last + 1))
    return picked


def find_secrets(value: Any, *, path: str = "") -> list[Finding]:
    """Every secret in a JSON-like value; `where` is the path below `path` (ValueError past MAX_DEPTH)."""
    return [Finding(kind, _format(path, where), excerpt) for where, kind, excerpt in _find(value, (), 0)]


def card_numbers(text_or_number: str | int | float) -> list[str]:
    """The Luhn-valid card numbers (digits only) in a string or a JSON number, in any grouping."""
    if isinstance(text_or_number, bool):
        return []
    if isinstance(text_or_number, int | float):
        digits = _card_number_value(text_or_number)
        return [digits] if digits is not None else []
    text = text_or_number
    if not text.isascii() or _needs_decoding(text):
        text = _normalise(text)
    return [digits for _, _, digits in _card_spans(text)]


# ---------------------------------------------------------------------------------------------
# Rewrites (redact.py)
# ---------------------------------------------------------------------------------------------


def text_has_secret(text: str) -> bool:
    """True when find_secrets would report anything in this string."""
    if text.isascii() and not _prefilter(text):
        return False
    return bool(_text_hits(text, 0))


def hide_secrets(value: Any, hide: Callable[[Any], Any], depth: int = 0) -> Any:
    """The value with every string or number find_secrets reports replaced by hide(it) (itself if none)."""
    if depth == 0:
        if not _find(value, (), 0) and not _layout_candidate(value, 0):
            return value  # nothing to hide: one walk and one prefilter pass decide it for most values
        hidden = hide_secrets(value, hide, 1)
        # A token begun in one value and ended in the next (wherever they sit) is hidden in both.
        # The glue check goes first: with nothing marked, _hide_neighbours would rebuild `hidden` as
        # it is, and the second scan it saves cost more than the whole first pass (BFCL's 143
        # records with a keyed credential: 54 us of 157, always finding nothing).
        marked = _neighbour_marks(hidden)
        return _hide_neighbours(hidden, hide, marked) if marked and _find(hidden, (), 0) else hidden
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        return _hide_in_text(value, hide)
    if isinstance(value, dict):
        pair = (pair_value(value, _pair_name) or _header_pair(value)) if _maybe_pair(value) else None
        if pair is None:
            # A name and a value in sibling fields under other spellings ({"OptionName": .., "Value": ..},
            # {"k": .., "v": ..}, {"ParameterKey": .., "ParameterValue": ..}): see secret_layouts.
            pair = _layouts.record_value(value, is_credential_key)
        table = _layouts.column_table(value, is_credential_key)
        pieces = _split_keys(list(value.items()))
        pieces |= {key for key, _ in _sibling_marks(value, cards_only=False)}
        out: dict[Any, Any] = {}
        jwk = _encodings.jwk_private(value) if "kty" in value else None
        for key, item in value.items():
            if jwk == [] and key in _encodings.JWK_PUBLIC:
                out[key] = item  # a public JSON Web Key is published on purpose
                continue
            hidden = (
                _hide_credential(item, hide, depth + 1)
                if key == pair
                or is_credential_key(str(key))
                or (jwk and key in jwk)
                or (isinstance(item, str) and _encodings.key_material(str(key), item))
                else _hide_parent(item, hide, depth + 1, plural=True)
                if plural_parent(str(key), item)
                else hide(item)
                if key in pieces
                else _hide_columns(item, table[1], hide, depth + 1)
                if table is not None and key == table[0]
                else _hide_in_text(item, hide, str(key))
                if isinstance(item, str)
                else hide_secrets(item, hide, depth + 1)
            )
            if isinstance(key, str) and text_has_secret(key):
                # A secret used as a key ({"ghp_...": "alice"}) is hidden too; two hidden keys
                # must not overwrite each other's values.
                key = masked = str(hide(key))
                n = 1
                while key in out or key in value:
                    n += 1
                    key = f"{masked}#{n}"
            out[key] = hidden
        return out
    if isinstance(value, list | tuple):
        if len(value) == 2 and isinstance(value[0], str):
            # A pair by its name as given, or as rewritten: '{"client_secret": "***"}' reads as a name
            # ending in "secret" once its value is masked, and what follows it must not stay bare.
            name = hide_secrets(value[0], hide, depth + 1)
            if is_credential_key(value[0]) or (isinstance(name, str) and is_credential_key(name)):
                return [name, _hide_credential(value[1], hide, depth + 1)]
        columns = _layouts.header_rows(list(value), is_credential_key) if value and isinstance(value[0], list) else []
        if columns:  # rows of a table whose first row names its columns: [["email", "api_key"], [..]]
            return [value[0], *_hide_columns(list(value[1:]), columns, hide, depth + 1)]
        pieces = _split_keys(list(enumerate(value)))
        if 3 <= len(value) <= 6:
            pieces |= _connection_password(value)
        pieces |= set(_layouts.alternating_values(list(value), is_credential_key))  # round thirteen
        marks = _sibling_marks(value, cards_only=False)
        pieces |= {i for i, column in marks if column is None}
        hidden_items = [
            hide(item) if i in pieces else hide_secrets(item, hide, depth + 1) for i, item in enumerate(value)
        ]
        for i, column in marks:
            if column is not None and isinstance(hidden_items[i], dict) and column in hidden_items[i]:
                hidden_items[i] = {**hidden_items[i], column: hide(value[i][column])}
        return hidden_items
    if isinstance(value, int | float) and not isinstance(value, bool) and _card_number_value(value) is not None:
        return hide(value)
    return value


def _hide_columns(rows: Any, columns: list[int], hide: Callable[[Any], Any], depth: int) -> Any:
    """The rows of a column table with the credential columns' cells hidden, the rest scanned."""
    if not isinstance(rows, list):
        return hide_secrets(rows, hide, depth)
    out: list[Any] = []
    for row in rows:
        if isinstance(row, list):
            out.append(
                [
                    _hide_credential(cell, hide, depth + 1) if i in columns else hide_secrets(cell, hide, depth + 1)
                    for i, cell in enumerate(row)
                ]
            )
        else:
            out.append(hide_secrets(row, hide, depth + 1))
    return out


def _layout_spans(text: str, label: str = "") -> list[tuple[int, int]]:
    """Spans of layout secrets in text, read as written, normalised and decoded like the detector reads text.

    A layout in full-width letters, with invisible characters or %-escapes is read in the normalised
    view and hides the whole string (no span of the view is one of the text); one inside a base64 or
    hex run hides that run.
    """
    spans = _layouts.layout_spans(text, is_credential_key, _is_placeholder, label)
    if _framings.maybe_framed(text):  # round fourteen: values in a format's framing (_secret_framings)
        spans.extend(_framed_spans(text))
    if spans or len(text) > _layouts.MAX_TEXT:
        return spans  # a text too long for layouts is not decoded for them either (the detector still scans it)
    if not text.isascii() or _needs_decoding(text):
        view = _normalise(text)
        if view != text and (
            _layouts.layout_spans(view, is_credential_key, _is_placeholder, label)
            or (_framings.maybe_framed(view) and _framed_spans(view))
        ):
            return [(0, len(text))]
    if len(text) >= _MIN_ENCODED and _encoded_gate(text.encode("utf-8", "surrogatepass")):
        for start, end in _decodable_runs(text):
            for _, decoded in _decodings(text[start:end]):
                if _layouts.layout_spans(decoded, is_credential_key, _is_placeholder, label) or (
                    _framings.maybe_framed(decoded) and _framed_spans(decoded)
                ):
                    spans.append((start, end))
                    break
    return spans


def _framed_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the credentials a framing of the text holds (the caller checked maybe_framed)."""
    return _framings.framed_spans(text, _framed_view_spans, is_credential_key, _is_placeholder)


def _framed_view_spans(view: str) -> list[tuple[int, int]]:
    """What the detector and the layout readers find in a framing's view (all of it when only decoding shows it)."""
    if view.isascii() and not _needs_decoding(view):
        spans = [(start, end) for _, start, end, _ in _analyse(view)]
    else:
        spans = [(0, len(view))] if _text_hits(view, 0) else []
    return spans + _layouts.layout_spans(view, is_credential_key, _is_placeholder)


def layout_candidate(value: Any) -> bool:
    """True when hide_secrets may rewrite a value the detector finds nothing in (secret_reader's gate)."""
    return _layout_candidate(value, 0)


def format_path(path: str, segments: tuple[str | int, ...]) -> str:
    """A document path below `path` as findings spell it (secret_reader)."""
    return _format(path, segments)


def _json_layout(text: str) -> bool:
    """True when a JSON text holds a record or column table (read once parsed, with its keys)."""
    if not _json_text(text) or not _layouts.maybe_record(text):
        return False  # a record or column names a credential or marks its value secret: no word, no parse
    parsed = _json_container(text)
    return parsed is not None and _layout_candidate(parsed, 1)


def _layout_text(text: str) -> bool:
    """Whether a text may hold a layout secret_layouts reads, or a JSON record or table of one."""
    return bool(_layout_spans(text)) or _json_layout(text)


# The answers for texts up to _SEEN_LENGTH characters are kept, as the gates keep theirs (a pure
# function's: dropped whole when full). Every record the decision log redacts asks it of each
# string: 15 us a BFCL call's arguments, ~4 RE2 searches and a key-word rewrite a string.
_LAYOUT_SEEN: dict[str, bool] = {}
_layout_text_kept = _remembered(_layout_text, _LAYOUT_SEEN)


def _layout_candidate(value: Any, depth: int) -> bool:
    """True when a value may hold a layout secret_layouts reads (strings through one RE2 gate each)."""
    if depth > MAX_DEPTH:
        return True  # hide_secrets raises there
    if isinstance(value, str):
        return _layout_text_kept(value)
    if isinstance(value, dict):
        if _layouts.record_value(value, is_credential_key) is not None:
            return True
        if _layouts.column_table(value, is_credential_key) is not None:
            return True
        return any(_layout_candidate(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        if value and isinstance(value[0], list) and _layouts.header_rows(list(value), is_credential_key):
            return True
        if value and isinstance(value[0], str) and _layouts.alternating_values(list(value), is_credential_key):
            return True  # a flat name/value list (HGETALL through a JSON client)
        return any(_layout_candidate(v, depth + 1) for v in value)
    return False


def _neighbour_marks(value: Any) -> set[int]:
    """The indexes (in _leaves order) of the string leaves that glue with a neighbour into a token."""
    leaves: list[str] = []
    _leaves(value, leaves)
    return set(_split_pieces(leaves[: _MAX_LEAVES + 1])[1])


def _hide_neighbours(value: Any, hide: Callable[[Any], Any], marked: set[int]) -> Any:
    """The value with the marked string leaves (_neighbour_marks) hidden."""
    counter = itertools.count()

    def rebuild(item: Any) -> Any:
        """The item with the marked leaves hidden (leaves numbered as _leaves numbers them)."""
        if isinstance(item, str):
            return hide(item) if next(counter) in marked else item
        if isinstance(item, dict):
            return {k: rebuild(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [rebuild(v) for v in item]
        return item

    return rebuild(value)


def _split_keys(items: list[tuple[Any, Any]]) -> set[Any]:
    """The keys (or indexes) of sibling strings that hold pieces of one split token."""
    strings = [(key, item) for key, item in items if isinstance(item, str)]
    if len(strings) < 2:
        return set()
    if _sibling_card([item for _, item in strings]) is not None:
        return {key for key, _ in strings}
    _, taken = _split_pieces([item for _, item in strings])
    return {strings[i][0] for i in taken}


def _hide_in_text(text: str, hide: Callable[[Any], Any], label: str = "") -> Any:
    """A string with each secret replaced inside it (JSON text stays JSON), or hide(string) when that cannot be done.

    `label` is the key the string was found under (a 32-byte hex value under "hash" is no wallet key).
    """
    plain = text.isascii() and not _needs_decoding(text)
    hits = (not plain or _prefilter(text)) and bool(_text_hits(text, 0))
    # Layouts the detector does not read (tables, records in XML, hex dumps): secret_layouts.
    layout = _layout_spans(text, label)
    if not hits and not layout and not _json_layout(text):
        return text
    rewritten = _hide_in_json(text, hide) if _json_text(text) else None
    if rewritten is not None and rewritten == text and not hits:
        return text  # JSON text read as JSON: its values were each read with their keys
    if rewritten is None and not plain and hits:
        # Found only once decoded ("%67hp_...", a zero-width space inside): no span in the raw text.
        return hide(text)
    if rewritten is None:
        spans: list[tuple[int, int]] = []
        found = [(start, end) for _, start, end, _ in _analyse(text)] if hits else []
        for start, end in sorted([*found, *layout]):
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
            else:
                spans.append((start, end))
        rewritten = _replace(text, spans, hide)
    # Fail closed: what is returned is scanned again; a secret left (one only decoding shows, one
    # the spans missed) hides the whole string.
    if rewritten != text and not _text_hits(rewritten, 0):
        return rewritten
    return hide(text)


_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JSON_LITERALS = {"true": True, "false": False, "null": None}


class _JsonSpans:
    """The span of every value and key of a JSON text, by path (None on duplicate keys or bad JSON)."""

    __slots__ = ("keys", "text", "values")

    def __init__(self, text: str) -> None:
        """Record the spans of text (a JSON object or array)."""
        self.text = text
        self.values: dict[_Path, tuple[int, int]] = {}
        self.keys: dict[_Path, tuple[int, int]] = {}

    def parse(self) -> bool:
        """True when the whole text is one JSON value without duplicate keys."""
        try:
            end = self._value(_JSON_SPACE.match(self.text, 0).end(), (), 0)  # type: ignore[union-attr]
        except (ValueError, IndexError):
            return False
        return _JSON_SPACE.match(self.text, end).end() == len(self.text)  # type: ignore[union-attr]

    def _value(self, pos: int, at: _Path, depth: int) -> int:
        """Record the value at pos (and what it holds); return where it ends."""
        if depth > MAX_DEPTH:
            raise ValueError("too deep")
        text = self.text
        ch = text[pos]
        if ch == "{":
            end = self._object(pos + 1, at, depth)
        elif ch == "[":
            end = self._array(pos + 1, at, depth)
        elif ch == '"':
            end = json.decoder.scanstring(text, pos + 1)[1]  # type: ignore[attr-defined]
        else:
            literal = next((w for w in _JSON_LITERALS if text.startswith(w, pos)), None)
            match = None if literal else _JSON_NUMBER.match(text, pos)
            if literal is None and match is None:
                raise ValueError("not JSON")
            end = pos + len(literal) if literal else match.end()  # type: ignore[union-attr]
        self.values[at] = (pos, end)
        return end

    def _object(self, pos: int, at: _Path, depth: int) -> int:
        """Record the members of the object whose "{" is before pos; return where it ends."""
        text = self.text
        pos = _JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] == "}":
            return pos + 1
        while True:
            if text[pos] != '"':
                raise ValueError("not JSON")
            key, end = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
            where = (*at, key)
            if where in self.keys:
                raise ValueError("duplicate key")  # json.loads keeps the last: spans would miss the first
            self.keys[where] = (pos, end)
            pos = _JSON_SPACE.match(text, end).end()  # type: ignore[union-attr]
            if text[pos] != ":":
                raise ValueError("not JSON")
            pos = self._value(_JSON_SPACE.match(text, pos + 1).end(), where, depth + 1)  # type: ignore[union-attr]
            pos = _JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos] == "}":
                return pos + 1
            if text[pos] != ",":
                raise ValueError("not JSON")
            pos = _JSON_SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]

    def _array(self, pos: int, at: _Path, depth: int) -> int:
        """Record the items of the array whose "[" is before pos; return where it ends."""
        text = self.text
        pos = _JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] == "]":
            return pos + 1
        index = 0
        while True:
            pos = self._value(pos, (*at, index), depth + 1)
            pos = _JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if text[pos] == "]":
                return pos + 1
            if text[pos] != ",":
                raise ValueError("not JSON")
            pos = _JSON_SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            index += 1


def _hide_in_json(text: str, hide: Callable[[Any], Any]) -> str | None:
    """JSON text with only its secret values (and keys) replaced, still valid JSON; None when not JSON."""
    parsed = _json_container(text)
    spans = _JsonSpans(text)
    if parsed is None or not spans.parse():
        return None
    return _json_rewritten(text, parsed, hide_secrets(parsed, hide, 1), spans)


def _json_rewritten(text: str, before: Any, after: Any, spans: _JsonSpans) -> str:
    """The JSON text with each leaf (or key) that `after` changed from `before` replaced in place (same shape)."""
    edits: list[tuple[int, int, str]] = []
    _json_edits(before, after, (), spans, edits)
    out: list[str] = []
    last = 0
    for start, end, replacement in sorted(edits):
        out.append(text[last:start])
        out.append(replacement)
        last = end
    out.append(text[last:])
    return "".join(out)


def _json_edits(before: Any, after: Any, at: _Path, spans: _JsonSpans, edits: list[tuple[int, int, str]]) -> None:
    """The text edits that turn the JSON of `before` into that of `after` (same shape, some leaves hidden)."""
    if isinstance(before, dict) and isinstance(after, dict) and len(before) == len(after):
        for (key, item), (new_key, new_item) in zip(before.items(), after.items(), strict=True):
            if new_key != key:
                start, end = spans.keys[(*at, key)]
                edits.append((start, end, json.dumps(new_key, ensure_ascii=False)))
            _json_edits(item, new_item, (*at, key), spans, edits)
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (item, new_item) in enumerate(zip(before, after, strict=True)):
            _json_edits(item, new_item, (*at, i), spans, edits)
    elif before != after or type(before) is not type(after):
        start, end = spans.values[at]
        edits.append((start, end, json.dumps(after, ensure_ascii=False)))


def _replace(text: str, spans: Iterable[tuple[int, int]], hide: Callable[[Any], Any]) -> str:
    """The text with each (start, end) span replaced by str(hide(span text))."""
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(str(hide(text[start:end])))
        last = end
    out.append(text[last:])
    return "".join(out)


def _hide_credential(item: Any, hide: Callable[[Any], Any], depth: int) -> Any:
    """A credential key's value: scalars hidden (lists of them item by item), containers walked."""
    if _scalars(item):
        return [_hide_credential(x, hide, depth + 1) for x in item]
    if isinstance(item, dict) and (value_key := _value_key(item)) is not None:
        return {
            k: _hide_credential(v, hide, depth + 1) if k == value_key else hide_secrets(v, hide, depth + 1)
            for k, v in item.items()
        }
    if not isinstance(item, dict | list | tuple) and _secret_scalar(item):
        return hide(item)
    if isinstance(item, dict | list | tuple):
        return _hide_parent(item, hide, depth, plural=False)
    return hide_secrets(item, hide, depth)


def _hide_parent(item: Any, hide: Callable[[Any], Any], depth: int, *, plural: bool) -> Any:
    """A credential parent with the leaves _parent_secrets records hidden, the rest scanned (one reading for both)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(item, str):
        return hide(item) if _child_secret(item, plural=plural) else hide_secrets(item, hide, depth)
    if not isinstance(item, dict | list | tuple):
        return hide_secrets(item, hide, depth)
    if isinstance(item, dict):
        # Read as any object first (its own credential keys, records, tables), then each child
        # that holds the parent's secret read as one.
        scanned = hide_secrets(item, hide, depth + 1)
        if not isinstance(scanned, dict) or list(scanned) != list(item):
            return scanned
        children = {k for k, _ in _credential_children(item)}
        return {
            k: _hide_parent(v, hide, depth + 1, plural=plural) if k in children and scanned[k] == v else scanned[k]
            for k, v in item.items()
        }
    return [_hide_parent(v, hide, depth + 1, plural=plural) for v in item]


def hide_cards(value: Any, hide: Callable[[Any], Any], depth: int = 0) -> Any:
    """A copy with every card number replaced by hide(it): the card's characters in strings, whole numbers."""
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        return _hide_cards_in(value, hide)
    if isinstance(value, dict):
        strings = [v for v in value.values() if isinstance(v, str)]
        if _sibling_card(strings) is not None:
            pieces = iter(_hide_pieces(strings, hide))
            return {k: next(pieces) if isinstance(v, str) else hide_cards(v, hide, depth + 1) for k, v in value.items()}
        value = _hide_cvv_fields(value, hide)
        marked = _sibling_marks(value, cards_only=True) if len(value) >= 2 else set()
        if marked:
            # A card cut across fields beside others ({"g1": "4572", ..., "holder": "Alice"}): its pieces.
            pieces = iter(
                _hide_pieces([str(value[k]) for k, _ in sorted(marked, key=lambda m: list(value).index(m[0]))], hide)
            )
            order = [k for k in value if (k, None) in marked]
            masked = dict(zip(order, pieces, strict=True))
            return {
                _card_key(k, hide): masked[k] if k in masked else hide_cards(v, hide, depth + 1)
                for k, v in value.items()
            }
        return {
            _card_key(k, hide): _hide_cards_in(v, hide, str(k))
            if isinstance(v, str)
            else hide_cards(v, hide, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        strings = [v for v in value if isinstance(v, str)]
        if _sibling_card(strings) is not None:
            pieces = iter(_hide_pieces(strings, hide))
            return [next(pieces) if isinstance(v, str) else hide_cards(v, hide, depth + 1) for v in value]
        out = [hide_cards(v, hide, depth + 1) for v in value]
        _hide_groups_across(value, out, hide)
        if value and isinstance(value[0], list) and (cvv := _layouts.header_rows(list(value), _cvv_name)):
            # Rows under a header naming a CVV column ([["last4", "cvv"], ["0366", "739"]]).
            for row in out[1:]:
                if isinstance(row, list):
                    for i in cvv:
                        if i < len(row) and _cvv_value(row[i]):
                            row[i] = _hide_cvv(row[i], hide)
        marks = _sibling_marks(value, cards_only=True) if len(value) >= 2 else set()
        own = sorted(i for i, column in marks if column is None)
        for i, masked_piece in zip(own, _hide_pieces([str(value[i]) for i in own], hide), strict=True):
            out[i] = masked_piece
        columns = {column for _, column in marks if column is not None}
        for column in columns:
            rows = sorted(i for i, c in marks if c == column)
            for i, masked_piece in zip(rows, _hide_pieces([str(value[i][column]) for i in rows], hide), strict=True):
                if isinstance(out[i], dict):
                    out[i] = {**out[i], column: masked_piece}
        return out
    if isinstance(value, int | float) and not isinstance(value, bool) and _card_number_value(value) is not None:
        return hide(value)
    return value


# Card verification values under other names (round eight): a field whose words name one (cvv,
# cvc, csc, ccv, cid... anywhere in it), or "security"/"check"/"verification" then "code", "value",
# "number" or "no" (sec_no, securityNo, card_check_value) beside a field about the card; and a
# {name, value} record whose name is such a label ({"field": "CVV", "val": "500"}). Only values of
# three or four digits are masked, whole (a keep_last mask would keep them all).
_CVV_WORDS = frozenset({"cvv", "cvv2", "cvc", "cvc2", "cvn", "cvn2", "cav2", "ccv", "csc", "cvd", "cve", "csv", "cid"})
_CVV_HEADS = frozenset({"security", "sec", "check", "verification", "verify"})
_CVV_TAILS = frozenset({"code", "value", "number", "no", "num", "digits", "val", "nr"})
_CARD_CONTEXT = re.compile(r"(?i)card|last_?4|last_?four|exp|pan\b|holder|brand|network|issuer")
_CVV_VALUE = re.compile(r"[0-9]{3,4}")


def _cvv_name(name: str) -> bool:
    """True for a field name or a label that names a card verification value."""
    words = _key_words(name[:64])
    if _CVV_WORDS.intersection(words):
        return True
    if any(a in _CVV_HEADS and b in _CVV_TAILS for a, b in itertools.pairwise(words)):
        return True
    # Round fifteen: letters apart, abbreviations, the code on the back (secret_cvvnames).
    return _card_network_name(words) or _cvvnames.cvv_name(words)


# The networks' own long names (round eleven, set J): Mastercard's Card Validation Code, JCB's Card
# Authentication Value, Amex's Card Identification Number, UnionPay's Card Validation Number,
# Discover's Card Verification Data: "card", a checking word, and what it is. Without "card"
# before them the same words are metadata (validation_status, authentication_method).
_CVV_NETWORK_MIDDLES = frozenset(
    {"verification", "validation", "authentication", "identification", "security", "check"}
)
_CVV_NETWORK_TAILS = frozenset({"code", "value", "number", "data", "digits", "no", "num", "nr", "val"})


def _card_network_name(words: list[str]) -> bool:
    """True for card, a checking word and a value's word in a row (card_validation_code, cardAuthenticationValue)."""
    return any(
        a == "card" and b in _CVV_NETWORK_MIDDLES and c in _CVV_NETWORK_TAILS
        for a, b, c in zip(words, words[1:], words[2:], strict=False)
    )


def _cvv_value(item: Any) -> bool:
    """True for three or four digits, as a string or a number."""
    if type(item) is int:
        return 100 <= item <= 9999 or 0 <= item < 100
    return isinstance(item, str) and _CVV_VALUE.fullmatch(item.strip()) is not None


def _hide_cvv(item: Any, hide: Callable[[Any], Any]) -> Any:
    """A verification value hidden whole: the replacement, or stars when the mask keeps its length."""
    text = str(item)
    hidden = hide(text)
    return hidden if not isinstance(hidden, str) or len(hidden) != len(text) else "*" * len(text)


def _hide_cvv_fields(value: dict[Any, Any], hide: Callable[[Any], Any]) -> dict[Any, Any]:
    """The object with its verification values hidden: by a field's name beside the card, or a record's label."""
    record = _layouts.record_value(value, _cvv_name) if len(value) <= 12 else None
    if record is not None and _cvv_value(value[record]):
        return {**value, record: _hide_cvv(value[record], hide)}
    names = [k for k in value if isinstance(k, str)]
    if not any(_cvv_name(k) for k in names):
        return value
    context = any(_CARD_CONTEXT.search(k) for k in names)
    out = dict(value)
    for key in names:
        words = _key_words(key[:64])
        explicit = bool(_CVV_WORDS.intersection(words)) or _cvvnames.explicit_name(words)
        if _cvv_name(key) and (explicit or context) and _cvv_value(value[key]):
            out[key] = _hide_cvv(value[key], hide)
    return out


def _card_key(key: Any, hide: Callable[[Any], Any]) -> Any:
    """An object's key with the card number in it masked ({"4566546552416380": {...}}): a key is content too."""
    if not isinstance(key, str) or (key.isascii() and not _ASCII_CARD_RE.search(key)):
        return key
    masked = _hide_cards_in(key, hide)
    return masked if isinstance(masked, str) else key


def _hide_pieces(pieces: list[str], hide: Callable[[Any], Any]) -> list[Any]:
    """Sibling strings that make one card, hidden as the card they make: its mask cut back into their lengths."""
    # ["4539", "1488", "0343", "6467"] with keep_last 4: each piece alone is "the last four" and
    # would stay whole; the card's mask "************6467" cut in fours hides all but the last.
    parts = [piece.strip() for piece in pieces]
    digits = "".join(parts)
    masked = hide(digits)
    if not isinstance(masked, str) or len(masked) != len(digits) or masked == digits:
        return [hide(piece) for piece in pieces]
    out: list[Any] = []
    pos = 0
    for part in parts:
        out.append(masked[pos : pos + len(part)])
        pos += len(part)
    return out


# A card verification value written as text next to its label ("CVV: 737", "security code 1234"):
# key-based redaction sees only object keys, and the masks keep short values whole.
# Round eight: up to three link words or marks between the label and the value, across a line
# break ("CVV code 481", "CVV number: 482", "cvv was 483", "CVV (484)", "CVV:\n486", "cvv488").
_CVV_LABEL = (
    r"(?i:\b(?:cvv2?|cvc2?|cvn2?|cav2|ccv|csc|cvd|security[ _\-]?code|card[ _\-]?code"
    r"|card[ _\-]?(?:verification|validation|authentication|identification|security|check)"
    r"[ _\-]?(?:code|value|number|data|digits)"
    r"|verification[ _\-]?(?:value|code)"
    rf"|{_cvvnames.PROSE_LABEL}))"
    r"(?:[\"')]?[ \t\r\n]*(?:[:=#(\-]|(?i:code|number|num|no|value|is|was|of|are)\b)){0,3}[ \t\r\n]*[\"'(]?[0-9]{3,4}\b"
)
# The value masked: three or four digits, or any word after the label that holds a digit (Unicode
# digits in full width, an escape, an encoding of the digits: "%37%33%37", "NzM3"); a status word stays.
_CVV_RE = re.compile(
    _CVV_LABEL.replace("[0-9]{3,4}\\b", r"([^\s,;\"']{0,24}\d[^\s,;\"']{0,24})").replace("(?i:", "(?:", 1),
    re.IGNORECASE,
)
_CVV_GATE = _CVV_LABEL.replace("[0-9]{3,4}\\b", r"[^\s,;\"']{0,24}\pN")


def _hide_verification_values(text: str, hide: Callable[[Any], Any]) -> str:
    """The text with each labelled card verification value masked whole (keep_last would keep it all)."""

    def masked(match: re.Match[str]) -> str:
        """The match with its digits replaced."""
        digits = match.group(1)
        hidden = hide(digits)
        # A replacement ("[REDACTED]") is used as given; a mask (same length) would keep the last digits.
        replacement = hidden if isinstance(hidden, str) and len(hidden) != len(digits) else "*" * len(digits)
        return (
            match.group()[: match.start(1) - match.start()]
            + replacement
            + match.group()[match.end(1) - match.start() :]
        )

    if text.isascii() or not _numerals.has_numeral(text):
        return _CVV_RE.sub(masked, text)
    # Round thirteen: digits written as CJK or dingbat numerals ("CVV ❼❸❼") are read in a view with
    # them folded one for one (same length), and masked where they stand in the text.
    view = _numerals.fold(text)
    out: list[str] = []
    last = 0
    for match in _CVV_RE.finditer(view):
        out.append(text[last : match.start()])
        written = match.group(1)
        hidden = hide(written)
        replacement = hidden if isinstance(hidden, str) and len(hidden) != len(written) else "*" * len(written)
        out.append(text[match.start() : match.start(1)] + replacement + text[match.end(1) : match.end()])
        last = match.end()
    out.append(text[last:])
    return "".join(out)


_ascii_card_run = _raw_search(_ASCII_CARD_RE)
_cvv_gate = _raw_search(re2.compile(_CVV_GATE, _MATCH_ONLY))
# What may hide a card in an ASCII text, in one pass: an escape, an encoded run, a run of digits.
_card_gate = _raw_search(
    re2.compile(
        f"(?:{_NEEDS_DECODING})|(?:{_ENCODED_GATE})|(?:{_ASCII_CARD_RUN})|(?:{_SPREAD_CARD})|{_layouts.CARD_GATE}"
        r"|(?:5[0678]|6[37])[0-9]{2}[ \-]?[0-9]{4}[ \-]?[0-9]{4}",  # a 12-digit Maestro (_maestro_spans)
        _MATCH_ONLY,
    )
)


def _has_card_run(text: str) -> bool:
    """True when an ASCII text holds a run of 13 digits or more, in any grouping."""
    return _ascii_card_run(text.encode("ascii"))


def _hide_cards_in(text: str, hide: Callable[[Any], Any], label: str = "") -> Any:
    """A string with each card's characters replaced (_hide_cards_read), then the cards whose groups stand apart."""
    out = _hide_cards_read(text, hide, label)
    # Round fifteen: groups apart across layout, markup or prose (secret_cardgroups), read last so
    # that what the card reader masks keeps its mask; a masked group is no group any more.
    if isinstance(out, str) and _cardgroups.maybe_groups(out):
        written = [("pieces", spans) for spans in _cardgroups.card_groups(out, _is_card)]
        if written:
            return _hide_card_layouts(out, written, hide)
    return out


def _hide_cards_read(text: str, hide: Callable[[Any], Any], label: str = "") -> Any:
    """A string with each card's characters replaced; the whole string when only decoding shows a card.

    A base64 or hex run that decodes to a card is replaced whole (`NDExMTEx...` is a card too).
    Labelled verification values ("CVV: 737") are masked too. `label` is the key the string came under.
    """
    carried = _carried(text)
    if carried is not None:
        # A card carried in TAG characters, selectors or bits (round thirteen): masked in the string
        # with its carriers decoded in place (a mask of the carriers would keep the last digits).
        view = _carriers.decoded(carried)
        masked = _hide_cards_in(view, hide, label) if view != text else view
        if masked != view:
            return masked
    if len(text) >= 6 and (
        _cvv_gate(text.encode("utf-8", "surrogatepass")) or (not text.isascii() and _numerals.has_numeral(text))
    ):
        text = _hide_verification_values(text, hide)
    if len(text) >= 6 and _documents.cvv_gate(text):
        # Round nine: the value before its label, words between, the next line, a CVV column.
        cvv = _documents.cvv_spans(text, _cvv_name)
        if cvv:
            text = _replace(text, sorted(set(cvv)), lambda digits: _hide_cvv(digits, hide))
    if len(text) < 12:
        return text  # (12: a Maestro's shortest number, _maestro_spans)
    if text.isascii() and not _card_gate(text.encode("ascii")):
        return text  # one RE2 pass on the common path: nothing below could match
    # Cards written reversed, in labelled pieces or with digits spelled out: secret_layouts.
    written = _layouts.card_layout_spans(text, _is_card, label)
    if written:
        text = _hide_card_layouts(text, written, hide)
    encoded = not text.isascii() or _needs_decoding(text)
    runs = _encoded_card_runs(text) if _encoded_gate(text.encode("utf-8", "surrogatepass")) else []
    if (
        not encoded
        and not runs
        and not _has_card_run(text)
        and not _spread_card_search(text.encode("ascii"))
        and not _MAESTRO_12.search(text)
    ):
        return text
    spans = _card_spans(text)
    if encoded and len(card_numbers(text)) > len(spans):
        # Digits written as escapes ("%34%31...") have no span in the raw text: hide it whole.
        return hide(text)
    cut = sorted([*((start, end) for start, end, _ in spans), *runs])
    joined: list[tuple[int, int]] = []
    for start, end in cut:  # a card's digits may sit inside a hex run: one span for both
        if joined and start < joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], end))
        else:
            joined.append((start, end))
    return _replace(text, joined, hide) if joined else text


def _hide_groups_across(value: list[Any] | tuple[Any, ...], out: list[Any], hide: Callable[[Any], Any]) -> None:
    """Mask in `out` the cards whose groups stand in sibling strings of `value` (secret_cardgroups)."""
    # Read in the strings as already masked: a card one string holds is masked there, and stays so.
    where = [i for i, v in enumerate(value) if isinstance(v, str) and isinstance(out[i], str)]
    if len(where) < 3:
        return
    items: list[str] = [out[i] for i in where]
    edits: dict[int, list[tuple[int, int, str]]] = {}
    for card in _cardgroups.across_items(items, _is_card):
        parts = [items[k][start:end] for k, start, end in card]
        for (k, start, end), masked in zip(card, _hide_pieces(parts, hide), strict=True):
            edits.setdefault(k, []).append((start, end, str(masked)))
    for k, spans in edits.items():
        text = items[k]
        pieces: list[str] = []
        last = 0
        for start, end, masked in sorted(spans):
            pieces.extend((text[last:start], masked))
            last = end
        pieces.append(text[last:])
        out[where[k]] = "".join(pieces)


def _hide_card_layouts(text: str, written: list[_layouts.CardLayout], hide: Callable[[Any], Any]) -> str:
    """The text with each card secret_layouts found masked as the card it is (a mask keeps its real last digits)."""
    edits: list[tuple[int, int, str]] = []
    for kind, spans in written:
        parts = [text[start:end] for start, end in spans]
        if kind == "reversed":
            masked = hide(parts[0][::-1])
            same = isinstance(masked, str) and len(masked) == len(parts[0])
            replacements = [masked[::-1] if same else str(masked)]
        elif kind == "pieces":
            replacements = [str(r) for r in _hide_pieces(parts, hide)]
        else:
            replacements = [str(hide(parts[0]))]
        edits.extend((start, end, r) for (start, end), r in zip(spans, replacements, strict=True))
    out: list[str] = []
    last = 0
    for start, end, replacement in sorted(edits):
        if start < last:
            continue  # overlapping readings of one card: the first is enough
        out.append(text[last:start])
        out.append(replacement)
        last = end
    out.append(text[last:])
    return "".join(out)


def _encoded_card_runs(text: str) -> list[tuple[int, int]]:
    """Base64 and hex runs that decode to text holding a card (the runs of _decodable_runs)."""
    found: list[tuple[int, int]] = []
    for start, end in _decodable_runs(text):
        if any(card_numbers(decoded) for _, decoded in _decodings(text[start:end])):
            found.append((start, end))
    return found


def _decodable_runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of the encoded runs layouts and cards decode: the first MAX_DECODED, none over 2x DECODE_BUDGET."""
    runs: list[tuple[int, int]] = []  # a list, not a generator: no frame resumed per run
    for n, spans in enumerate(_matches(_ENCODED_RE, text)):
        if n >= MAX_DECODED:
            break
        start, end = spans[0]
        if end - start <= 2 * DECODE_BUDGET:
            runs.append((start, end))
    return runs
