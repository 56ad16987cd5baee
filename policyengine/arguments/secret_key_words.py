"""Qualified credential keys: a credential word with qualifiers after it is still the credential.

Round nine (set H): `DB_PASSWORD_ADMIN`, `jwt_secret_v2`, `token_gitlab`, `smtp.password.legacy`,
`API_KEY_FALLBACK`, `secret.eu-west` name the credential for one account, version, provider or
region. The scanner's rule was "the key ENDS with a credential word" (after a short list of
suffixes: _prod, _rw, _hash), so every qualifier not on that list escaped. Qualifiers are an open
class (every provider, region, role and version), so they are not listed: a strong credential
word followed by up to three words is the credential UNLESS one of those words says the value is
ABOUT the credential (its hint, length, expiry, policy, name, URL, type) - a closed class, listed
here. Unknown qualifiers count as the credential (the deny rules fail closed on them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Final

# The words that are the credential itself wherever they sit in a key (not "pass", "pin", "auth",
# "session", "key" alone: bypass_cache, pin_count, auth_method, session_timeout, key_id).
STRONG_WORDS: Final = frozenset(
    {
        "password", "passwd", "passphrase", "passcode", "pwd", "secret", "secrets", "token", "apikey",
        "privatekey", "secretkey", "credential", "credentials", "creds", "psk", "passkey", "bearer", "pass",
    }
)  # fmt: skip

# Two-word credentials ending in "key" that stay one with a qualifier ("api_key_gitlab").
STRONG_PAIRS: Final = frozenset({("api", "key"), ("private", "key"), ("secret", "key"), ("access", "key")})

# Words after a credential word that make the value something about the credential, not it:
# metadata (name, id, type, version, url, path, arn), limits and counts, times, policy and state,
# the machinery around it (manager, store, endpoint, provider, scanning) and flags.
ABOUT_WORDS: Final = frozenset(
    {
        # names, places and references
        "name", "names", "id", "ids", "identifier", "type", "types", "kind", "url", "uri", "urls", "link",
        "endpoint", "endpoints", "path", "paths", "file", "filename", "files", "dir", "directory", "folder",
        "location", "ref", "reference", "refs", "from", "arn", "env", "var", "variable", "field", "fields", "label",
        "labels", "prompt", "placeholder", "header", "param", "parameter", "source", "sources", "target",
        # round thirteen: a lookup table that holds them (Postfix's smtp_sasl_password_maps = hash:/etc/...)
        "map", "maps", "lookup",
        "format", "version", "versions", "index", "offset", "position", "key", "keys", "mount",
        "engine", "backend", "store", "stores", "manager", "management", "provider", "providers", "service",
        "server", "host", "issuer", "audience", "scope", "scopes", "claims", "role", "roles",
        "accessor", "class", "selector", "metadata", "meta", "description", "desc", "title", "owner",
        # sizes, counts and limits
        "hint", "hints", "count", "counts", "length", "len", "size", "min", "max", "minimum", "maximum",
        "limit", "limits", "budget", "usage", "used", "uses", "cost", "costs", "rate", "estimate", "total",
        "number", "num", "bits", "chars", "characters", "logprobs", "logprob", "bucket", "window",
        # times and life
        "expiry", "expires", "expiration", "expire", "expired", "ttl", "age", "lifetime", "timeout",
        "validity", "date", "time", "timestamp", "at", "on", "since", "until", "last", "created",
        "updated", "changed", "modified", "rotated", "rotation", "rotate", "renewable", "renew", "refresh",
        "issued", "days", "seconds", "minutes", "hours",
        # policy, rules and state
        "policy", "policies", "rule", "rules", "requirements", "requirement", "complexity", "strength",
        "quality", "score", "pattern", "regex", "validation", "validator", "valid", "invalid", "error",
        "errors", "message", "msg", "status", "state", "mode", "method", "methods", "flag", "flags",
        "enabled", "disabled", "enable", "disable", "require", "requires", "required", "optional", "set",
        "exists", "present",
        "protected", "protection", "auth", "authentication", "based", "less", "grant", "exchange",
        "introspection", "revocation", "revoke", "revoked", "reset", "change", "recovery", "forgot",
        "reuse", "history", "attempts", "retries", "lockout", "login", "scanning", "detection",
        "detector", "generator", "generation", "algorithm", "algo", "alg", "scheme", "salt",
        "iterations", "rounds", "display", "visible", "visibility", "shown", "show", "hide",
        "toggle", "mask", "masked", "redacted", "check", "checker", "test", "tests", "example", "sample",
        "template", "spec", "schema", "doc", "docs", "help", "info", "details", "stats", "report",
        "is", "has", "can", "should", "needs", "need",
        # what "pass" means when it is no password: pass_through, pass_rate, pass_fail, pass_mark
        "through", "thru", "fail", "failed", "mark", "threshold", "percent", "pct", "ratio", "rates",
        "along", "by", "word", "words", "phrase", "code", "codes",
        # a file named for the credential (./scripts/db-password.sh, token.txt): its name, not its value
        "sh", "bash", "zsh", "ps1", "bat", "cmd", "exe", "py", "js", "ts", "rb", "go", "pl", "php", "txt", "md",
        "json", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "csv", "log", "gpg", "asc", "pem", "bak",
        "tmp", "lock", "pid", "sock", "html", "j2", "tpl", "tmpl", "dist",
    }
)  # fmt: skip

MAX_QUALIFIERS = 3  # "db_password_admin_eu_west" is a name; a longer tail is a sentence


def qualified_credential(words: list[str], ends_with_credential: Callable[[list[str]], bool]) -> bool:
    """True when a strong credential word (or pair) is followed by qualifiers only, none of them ABOUT it."""
    for i in range(len(words) - 2, -1, -1):
        word = words[i]
        # A two-word credential ending in "key" (api_key, session_key, signing_key: the scanner's
        # CREDENTIAL_ENDINGS, asked through ends_with_credential) is as strong as a word.
        strong = word in STRONG_WORDS or (i > 0 and (words[i - 1], word) in STRONG_PAIRS) or (word == "key" and i > 0)
        if not strong:
            continue
        tail = words[i + 1 :]
        if len(tail) > MAX_QUALIFIERS or any(w in ABOUT_WORDS for w in tail):
            return False  # the nearest credential word decides: "token_limit_admin" is a limit
        # What precedes the word may still undo it (next_token_v2 is a cursor): the ending rule decides.
        return ends_with_credential(words[: i + 1])
    return False


# Keys under a credential parent whose values say who or where, not the secret: {"credentials":
# {"username": "bob", "password": "x"}} holds one secret, not two.
META_WORDS: Final = frozenset(
    {
        "user", "username", "login", "email", "mail", "owner", "account", "principal", "subject", "host",
        "hostname", "port", "realm", "domain", "namespace", "region", "zone", "project",
        "tenant", "org", "organization", "team", "group", "note", "notes", "comment", "comments", "tag", "tags",
        "enabled", "disabled", "provider", "issuer", "created", "updated", "expires", "description",
    }
)  # fmt: skip


def about_child(words: list[str]) -> bool:
    """True when a key below a credential parent names something about the secret or its owner, not the secret."""
    return any(w in ABOUT_WORDS or w in META_WORDS for w in words)


def plural_credential(words: list[str], is_credential_words: Callable[[list[str]], bool]) -> bool:
    """True for the plural of a credential's name ("passwords", "api_keys", "access_tokens", "pins", "creds")."""
    if not words or len(words[-1]) < 4 or not words[-1].endswith("s"):
        return False
    return is_credential_words([*words[:-1], words[-1][:-1]])


# Round ten (set I): a token's or an API key's name in another language (cle_api, clave_api,
# chiave_segreta, chave_secreta, jeton_acces, zugangsschluessel, токен_доступа, 访问令牌, APIキー,
# 비밀키, klucz_api). The password's word in other languages is secret_labels' table; these are the
# KEY and TOKEN words, which are also ordinary words (a game's jetons, a door's clé, an LLM's
# токены): they name a credential only with a word that says what the key opens (api, access,
# secret, private, auth), and never with a word about the key (its version, count, limit).
FOREIGN_KEY_NOUNS: Final = frozenset(
    {
        "cle", "clef", "clave", "llave", "chiave", "chave", "schluessel", "schlussel", "klucz", "sleutel",
        "nyckel", "nokkel", "noegle", "avain", "anahtar", "kulcs", "klic", "kljuc", "ключ", "jeton", "gettone",
        "токен", "токена", "ficha",
    }
)  # fmt: skip
FOREIGN_QUALIFIERS: Final = frozenset(
    {
        "api", "acces", "acceso", "accesso", "acesso", "zugang", "zugangs", "zugriff", "zugriffs", "dostepu",
        "toegang", "toegangs", "atkomst", "tilgang", "доступа", "доступ", "secret", "secrete", "secreta", "secreto",
        "segreta", "segreto", "geheim", "geheime", "geheimer", "geheimen", "privee", "prive", "privada", "privado",
        "privata", "privato", "privat", "private", "prywatny", "tajny", "секретный", "приватный", "auth",
        "authentification", "autenticacion", "autenticazione", "autenticacao", "authentifizierung", "апи",
    }
)  # fmt: skip
# Words about the key, in the languages above (its version, number, limit, name, expiry).
FOREIGN_ABOUT: Final = frozenset(
    {
        "version", "versao", "versione", "nombre", "nome", "nom", "numero", "anzahl", "nummer", "limite",
        "limit", "grenze", "longueur", "longitud", "lunghezza", "laenge", "expiration", "expiracion",
        "scadenza", "ablauf", "type", "tipo", "typ", "id", "rotation", "rotacion", "rotazione",
        "количество", "лимит", "срок", "тип", "имя",
    }
)  # fmt: skip
# Scripts without spaces: the credential's word inside the key (访问令牌, アクセストークン, 비밀키), unless
# a word about it is there too (令牌数: a token count; トークン上限: a limit).
CJK_CREDENTIAL_WORDS: Final = (
    "令牌", "密钥", "秘钥", "密鑰", "金鑰", "秘密鍵", "トークン", "シークレット", "apiキー", "アクセスキー",
    "비밀키", "토큰", "시크릿", "api키", "액세스키", "인증키",
)  # fmt: skip
CJK_ABOUT: Final = (
    "数",
    "長",
    "长度",
    "限制",
    "上限",
    "制限",
    "期限",
    "有效期",
    "名",
    "类型",
    "種類",
    "수",
    "개수",
    "제한",
    "만료",
    "이름",
)
_FOREIGN_SPLIT = re.compile(r"[\W_]+")


def _fold(key: str) -> str:
    """The key lower-cased with its accents dropped (clé -> cle, schlüssel -> schlussel)."""
    decomposed = unicodedata.normalize("NFKD", key.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("ß", "ss")


def foreign_credential_key(key: str) -> bool:
    """True when a key names an API key or a token in another language (module notes above)."""
    lower = key.lower()  # not decomposed: NFKD takes Hangul apart into its letters
    if any(word in lower for word in CJK_CREDENTIAL_WORDS):
        return not any(word in lower for word in CJK_ABOUT)
    folded = _fold(_CAMEL_SPLIT.sub("_", key))
    words = [w for w in _FOREIGN_SPLIT.split(folded) if w]
    if not words or any(w in FOREIGN_ABOUT or w in ABOUT_WORDS for w in words):
        return False
    nouns = [w for w in words if w in FOREIGN_KEY_NOUNS]
    if nouns:
        return any(w in FOREIGN_QUALIFIERS for w in words)
    # Glued (German, Dutch, Nordic): zugangsschluessel, geheimschlussel, toegangssleutel.
    for word in words:
        for noun in FOREIGN_KEY_NOUNS:
            if word.endswith(noun) and len(word) > len(noun) and word[: -len(noun)] in FOREIGN_QUALIFIERS:
                return True
    return False


_CAMEL_SPLIT = re.compile(r"(?<=[a-z0-9\u00e0-\u00ff])(?=[A-Z])")
