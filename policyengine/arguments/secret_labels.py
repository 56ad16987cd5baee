"""Credential labels in any language and spelling, and the values prose gives after them (round eight).

The secret scanner reads a value as a credential when a label names it. This module holds what
makes a label and what makes a value after one, as tables a reader can check:

- `PASSWORD_WORDS`: the word for "password" in the languages of the EU, the UN and the thirty most
  spoken languages (and the regional ones software ships: Catalan, Basque, Welsh...), in native
  script and in ASCII transliteration. Labels are compared after the scanner's normalisation
  (accents dropped, look-alike letters folded) and `fold` (letters NFKD leaves whole: ə, ł, ø, ß).
- `password_misspelling`: the English word however it is misspelt or shortened, by its consonant
  skeleton (passwrd, pasword, passowrd, pssword, pword, p.w. are all p-s-w-r-d or p-w-r-d).
- `CODE_LABELS`: what a short numeric secret is called (PIN, PUK, passcode, door, alarm and gate
  codes, a safe's combination): a run of digits after one is the secret.
- `label_prose_hits`: values prose gives after a strong label whatever their shape - a password of
  letters only ("the VPN password is sandcastle"), a passphrase of plain words, a PIN's digits, a
  generated code after a credential noun ("the unseal code is Vn48Tq2Lm9Xa").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Final

__all__ = [
    "CODE_LABELS",
    "COPULAS",
    "ENGLISH_WORDS",
    "MISSPELLINGS",
    "PASSWORD_FIELDS",
    "PASSWORD_WORDS",
    "PUNCTUATED_GATE",
    "QUERY_GATE",
    "SECRET_NOUNS",
    "USER_FIELDS",
    "fold",
    "label_prose_hits",
    "label_regex",
    "label_words",
    "password_misspelling",
    "punctuated",
    "punctuated_hits",
    "query_pair_hits",
]

# The word for "password" by language (ISO 639-1 code, or 639-3 where 639-1 has none): native
# script first, then the ASCII transliterations people type when their keyboard lacks it. Sources:
# the CLDR, Wikipedia's interlanguage titles of "Password" and the locales of common software.
PASSWORD_WORDS: Final[dict[str, tuple[str, ...]]] = {
    # The European Union's 24 languages.
    "bg": ("парола", "parola"),
    "cs": ("heslo",),
    "da": ("adgangskode", "kodeord"),
    "de": ("passwort", "kennwort"),
    "el": ("κωδικός πρόσβασης", "συνθηματικό", "kodikos prosvasis", "synthimatiko"),
    "en": ("password", "passphrase", "passcode", "passwd"),
    "es": ("contraseña", "clave", "contrasena"),
    "et": ("parool", "salasõna", "salasona"),
    "fi": ("salasana",),
    "fr": ("mot de passe", "mot-de-passe", "motdepasse", "mdp"),
    "ga": ("pasfhocal", "focal faire"),
    "hr": ("lozinka", "zaporka"),
    "hu": ("jelszó", "jelszo"),
    "it": ("parola d'ordine",),
    "lt": ("slaptažodis", "slaptazodis"),
    "lv": ("parole",),
    "mt": ("kelma sigrieta",),
    "nl": ("wachtwoord",),
    "pl": ("hasło", "haslo"),
    "pt": ("senha", "palavra-passe", "palavra passe"),
    "ro": ("parolă", "parola"),
    "sk": ("heslo",),
    "sl": ("geslo",),
    "sv": ("lösenord", "losenord"),
    # The UN's six: Arabic, Chinese, Russian (English, French, Spanish above).
    "ar": ("كلمة المرور", "كلمة السر", "kalimat al-sir", "kalimat almurur"),
    "zh": ("密码", "密碼", "口令", "mima", "kouling"),
    "ru": ("пароль", "parol"),
    # The most spoken languages after those (Ethnologue's top thirty).
    "hi": ("पासवर्ड", "कूटशब्द", "kootshabd"),
    "bn": ("পাসওয়ার্ড",),
    "ur": ("پاس ورڈ",),
    "id": ("kata sandi", "katasandi", "sandi"),
    "ms": ("kata laluan", "katalaluan"),
    "ja": ("パスワード", "暗証番号", "パスフレーズ", "pasuwado", "pasuwaado"),
    "ko": ("비밀번호", "암호", "비번", "bimilbeonho"),
    "mr": ("संकेतशब्द", "sanketshabd"),
    "te": ("పాస్‌వర్డ్", "సంకేతపదం"),
    "ta": ("கடவுச்சொல்", "kadavuchol", "kadavuchchol"),
    "tr": ("şifre", "sifre", "parola"),
    "vi": ("mật khẩu", "mat khau"),
    "fa": ("رمز عبور", "گذرواژه", "ramz-e obur", "ramz obur", "gozarvazheh"),
    "jv": ("tembung sandhi", "sandhi"),
    "ha": ("kalmar sirri",),
    "gu": ("પાસવર્ડ",),
    "th": ("รหัสผ่าน", "rahat phan"),
    "am": ("የይለፍ ቃል",),
    "pa": ("ਪਾਸਵਰਡ",),
    "kn": ("ಪಾಸ್‌ವರ್ಡ್",),
    "ml": ("പാസ്‌വേഡ്",),
    "my": ("စကားဝှက်",),
    "yo": ("ọrọ aṣínà", "oro asina"),
    "sw": ("nenosiri", "neno siri"),
    "tl": ("kontrasenyas",),
    # Neighbours and regional languages software ships (and set G's red team wrote in).
    "uk": ("пароль", "гасло", "haslo"),
    "be": ("пароль", "гасло"),
    "sr": ("лозинка", "шифра", "lozinka", "šifra", "sifra"),
    "bs": ("lozinka", "šifra"),
    "mk": ("лозинка", "лозинка"),
    "sq": ("fjalëkalim", "fjalekalim", "fjalëkalimi", "fjalekalimi"),
    "ca": ("contrasenya",),
    "gl": ("contrasinal",),
    "eu": ("pasahitza", "pasahitz"),
    "cy": ("cyfrinair",),
    "af": ("wagwoord",),
    "nb": ("passord",),
    "nn": ("passord",),
    "is": ("lykilorð", "lykilord"),
    "az": ("şifrə", "parol", "sifre"),
    "uz": ("parol", "maxfiy so'z"),
    "kk": ("құпия сөз", "құпиясөз", "kupiya soz", "qupiya soz"),
    "ky": ("сырсөз", "syrsoz"),
    "mn": ("\u043d\u0443\u0443\u0446 \u04af\u0433", "nuuts ug"),  # escaped: ruff reads its letters as look-alikes
    "ka": ("პაროლი", "paroli"),
    "hy": ("գաղտնաբառ", "gaghtnabar"),
    "he": ("סיסמה", "סיסמא", "sisma"),
    "eo": ("pasvorto",),
    "ne": ("पासवर्ड",),
    "si": ("මුරපදය", "murapadaya"),
    "km": ("ពាក្យសម្ងាត់",),
    "lo": ("ລະຫັດຜ່ານ",),
    "zu": ("iphasiwedi",),
    "xh": ("igama lokugqitha",),
    "ps": ("پټنوم",),
    "tg": ("гузарвожа", "рамз"),
    "tk": ("açarsöz", "acarsoz"),
    "lb": ("passwuert",),
    "fo": ("loyniorð",),
    "gd": ("facal-faire",),
    "br": ("ger-tremen",),
    "la": ("tessera",),
}

# Letters NFKD leaves whole, folded as a keyboard without them spells them.
_LETTERS: Final = str.maketrans(  # the dotless i is escaped: ruff reads it as a look-alike
    {"ə": "e", "\u0131": "i", "ł": "l", "ø": "o", "æ": "ae", "œ": "oe", "ð": "d", "þ": "th", "ß": "ss", "đ": "d"}
)


def fold(text: str) -> str:
    """The text as labels are compared: case-folded, accents dropped, whole letters (ə, ł, ß) spelled in ASCII."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold().translate(_LETTERS))
    return "".join(c for c in text if not unicodedata.combining(c)).translate(_LETTERS)


# "Is" in the same languages (and "reads", "stands at"): a value right after one is told by its label.
COPULAS: Final = frozenset(
    {
        "is", "was", "are", "be", "now", "es", "era", "fue", "ist", "war", "lautet", "lautete", "je", "bylo", "byl",
        "jest", "est", "etait", "e", "sono", "eh", "sao", "foi", "ar", "var", "er", "on", "oli", "olur", "dir",
        "dur", "ir", "yra", "ei", "van", "este", "ni", "ndi", "adalah", "ialah", "zni", "znie",
        "wynosi", "brzmi", "glasi", "это", "\u0435", "є", "是", "为", "為", "は", "는", "은", "\u2014", "\u2013",
    }
)  # fmt: skip

# Copulas that are English words too ("reset it on macOS", "o" and "e" as letters): only after a
# foreign label, where they are the verb.
ENGLISH_WORDS: Final = frozenset({"on", "e", "o", "la", "er", "ar", "dir", "a", "be", "are", "now", "van", "ni"})
_ENGLISH_LINKS: Final = frozenset({"is", "was", "now", "are"})

# What a short numeric secret is called: the value is the digits after it. "PIN" counts in
# capitals or before "code"/"number"/a link (the verb "pin" is common in lower case: "pin the version").
CODE_LABELS: Final = (
    r"puk2?|passcode|pass[ \t]code|pin[ \t-]?(?:code|number|no\.?|#)|unlock[ \t]code|security[ \t]pin"
    r"|(?:door|alarm|gate|entry|entrance|keypad|lock|garage|building|safe|locker|access|unlock|disarm|vault"
    r"|sim|voicemail|phone|card|atm)[ \t_\-]?(?:code|pin|combo|combination)"
    r"|keypad|combination|combo|暗証番号|pin-kod|pinkod|pin-code|mã pin"
)

# Nouns of a credential without "password" ("the unseal code is X", "magic word for the share: X",
# "enrolment key for laptops: X"), and "use X to get in": the value must look generated (_generated).
SECRET_NOUNS: Final = r"code|key|word|phrase|passkey"

# The misspellings password_misspelling accepts, as a regex for the scanner's gates (the function decides).
MISSPELLINGS: Final = (
    r"p[aeiouy]{0,2}s{1,3}[aeiouy]{0,2}w[aeiouy]{0,2}r?[aeiouy]{0,2}d|p[aeiou]?w[aeiou]?r?d|p\.w\.?|p/w"
)

# A login form's fields in a query string: a user field beside a one-letter or short password field
# ("?u=admin&p=x"); "p" alone is a page, beside a user it is the user's password.
USER_FIELDS: Final = r"u|usr|user|username|uname|login|email|uid|account|acct"
PASSWORD_FIELDS: Final = r"p|pw|pwd|pass|pswd|passwd|pword|pwrd"
QUERY_GATE: Final = rf"(?i:[?&;](?:{USER_FIELDS}|{PASSWORD_FIELDS})=[^&#\s]*&)"
_QUERY_PAIR = re.compile(
    rf"(?i)[?&;](?:{USER_FIELDS})=[^&#\s]+&(?:{PASSWORD_FIELDS})=([^&#\s]+)"
    rf"|[?&;](?:{PASSWORD_FIELDS})=([^&#\s]+)&(?:{USER_FIELDS})="
)

# Words that are no password after "password is": status, quantity, function words, verbs.
_NOT_A_VALUE: Final = frozenset(
    {
        "required", "optional", "mandatory", "needed", "correct", "incorrect", "wrong", "invalid", "valid",
        "weak", "strong", "short", "long", "empty", "blank", "missing", "same", "different", "new", "old",
        "secure", "insecure", "unsafe", "safe", "simple", "complex", "easy", "hard", "good", "bad", "fine",
        "ok", "okay", "set", "unset", "reset", "changed", "expired", "stored", "saved", "hidden", "visible",
        "encrypted", "hashed", "unknown", "default", "temporary", "random", "unique", "sensitive", "case",
        "not", "too", "also", "still", "just", "only", "now", "then", "here", "there", "below", "above",
        "attached", "enclosed", "inside", "elsewhere", "private", "public", "secret", "confidential",
        "the", "a", "an", "this", "that", "these", "those", "it", "its", "my", "your", "our", "their", "his",
        "her", "what", "which", "where", "how", "why", "who", "when", "whatever", "none", "null",
        "nil", "true", "false", "yes", "no", "on", "off", "enabled", "disabled", "active",
        "inactive", "locked", "unlocked", "pending", "ready", "done", "gone", "lost", "forgotten", "known",
        "working", "broken", "fixed", "managed", "rotated", "shared", "sent", "given", "used",
        "in", "at", "for", "to", "of", "by", "with", "from", "via", "and", "or", "but", "as", "if",
        "be", "being", "been", "is", "was", "are", "were", "will", "would", "should", "must", "can", "could",
        "may", "might", "shall", "please", "see", "check", "ask", "use", "enter", "type", "click", "contact",
        "field", "value", "policy", "length", "hint", "manager", "link", "page", "form", "rules",
        "requirements", "change", "update", "expiry", "expiration", "strength", "prompt", "protected",
        "something", "nothing", "anything", "everything", "one", "two", "three", "identical",
        "unchanged", "accepted", "rejected", "denied", "right", "great",
        "redacted", "masked", "xxx", "tbd", "todo", "n/a", "na", "later", "soon",
        # A request about the password, not its value ("password is help", "password forgot").
        "help", "forgot", "support", "assistance", "issue", "problem", "question",
        "welcome", "password", "passphrase", "passcode", "pin", "username", "user", "login", "account",
        # Sizes and forms: "the pwd is characters long", "password: letters and digits".
        "characters", "chars", "digits", "letters", "numbers", "symbols", "words", "minimum", "maximum",
        "min", "max", "lowercase", "uppercase", "alphanumeric", "numeric", "mixed",
        # Credential words themselves ("password is passwords", "the password is token").
        "token", "key", "code", "credential", "session", "cookie", "auth", "security", "card", "number",
    }
)  # fmt: skip
# Words no passphrase holds: a sentence about the passphrase, not the passphrase.
_FUNCTION_WORDS: Final = frozenset(
    {
        "the", "a", "an", "in", "at", "for", "to", "of", "on", "by", "with", "from", "via", "and", "or", "but",
        "as", "if", "is", "was", "are", "be", "been", "must", "should", "will", "can", "could", "please", "see",
        "ask", "use", "enter", "contact", "click", "check", "not", "no", "it", "this", "that", "your", "our",
        "my", "you", "we", "they", "has", "have", "had", "do", "does", "same", "one", "than", "least",
        "required", "optional", "set", "reset", "changed", "stored", "saved", "sent", "shared", "later",
        "since", "until", "after", "before", "when", "where", "how", "what", "which", "who", "here", "there",
    }
)  # fmt: skip
# Endings of adjectives, participles and adverbs: "password is encrypted / expiring / securely".
_NOT_A_VALUE_ENDINGS: Final = ("ed", "ing", "ly", "able", "ible", "ive", "ous", "ful", "less", "ent", "ant", "ary")

_USE_TO_ENTER = re.compile(r"(?i)[ \t]+\S+[ \t]+to[ \t]+(?:get|log|sign|access|unlock|open|enter)")
_WORD = re.compile(r"[^\s,;.!?()\[\]{}<>\"'`]+")
_SENTENCE_END = re.compile(r"[ \t]*(?:$|[,;.!?(\n]|<-|-[ \t]|\u2014|\u2013)")
_PLAIN = re.compile(r"[a-z]{4,40}")
_PASSPHRASE_WORD = re.compile(r"[a-z]{2,20}")
_DIGITS = re.compile(r"[0-9]{4,12}|[0-9]{2}(?:-[0-9]{2}){2,3}")
_CLASS_CHANGE = re.compile(r"(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[a-z])")

# The English word misspelt or shortened, by its consonants: vowels dropped, doubled letters
# single ("passwrd", "pasword", "passowrd", "pssword" are p-s-w-r-d; "pword", "pwrd" p-w-r-d).
_SKELETONS: Final = frozenset({"pswrd", "pswd", "pwrd"})
_VOWELS = re.compile(r"[aeiouy]")
_DOUBLED = re.compile(r"(.)\1+")


def password_misspelling(word: str) -> bool:
    """True for a spelling of "password" with letters dropped, doubled or swapped (passwrd, pword, p.w.)."""
    word = word.lower().replace(".", "")
    if not 2 <= len(word) <= 10 or not word.isalpha() or not word.startswith("p"):
        return False
    if word in ("pw", "psw", "pwd"):
        return True
    skeleton = _DOUBLED.sub(r"\1", _VOWELS.sub("", word))
    # One vowel at most where the skeleton has no s: "powered" and "prowled" are words.
    return skeleton in _SKELETONS and (skeleton != "pwrd" or len(_VOWELS.findall(word)) <= 1)


def label_regex(normalise: Callable[[str], str]) -> str:
    """The table's words as one alternation, as `normalise` writes them (long words first)."""
    # Not English's: the scanner's own alternatives read them with word boundaries ("PasswordMinLength" is none).
    spellings = [word for language, words in PASSWORD_WORDS.items() if language != "en" for word in words]
    # Both as the text carries them (normalise keeps ə, ł) and as a keyboard without them types them.
    forms = {normalise(word).casefold() for word in spellings} | {normalise(fold(word)) for word in spellings}
    escaped = {re.escape(form).replace("\\ ", "[ +]") for form in forms}
    return "|".join(sorted(escaped, key=len, reverse=True))


def label_words(normalise: Callable[[str], str]) -> frozenset[str]:
    """The table's words folded and normalised as keys are, spaces and dashes removed."""
    return frozenset(
        re.sub(r"[\s\-'_]+", "", fold(normalise(fold(word))))
        for spellings in PASSWORD_WORDS.values()
        for word in spellings
    )


def _generated(word: str) -> bool:
    """True for a word a generator made: 10-64 letters and digits, both cases, classes interleaved."""
    if not 10 <= len(word) <= 64 or not word.isalnum() or not word.isascii():
        return False
    digits = sum(c.isdigit() for c in word)
    upper = sum(c.isupper() for c in word)
    return digits >= 3 and upper >= 2 and any(c.islower() for c in word) and len(_CLASS_CHANGE.findall(word)) >= 6


def _plain_value(word: str) -> bool:
    """True for a word of letters that may be a password: no status word, function word or adjective's ending."""
    lower = word.lower()
    if not _PLAIN.fullmatch(lower) or lower in _NOT_A_VALUE or lower.removesuffix("s") in _NOT_A_VALUE:
        return False
    return not lower.endswith(_NOT_A_VALUE_ENDINGS) or len(lower) >= 10


Hit = tuple[str, int, int, str]


def _value_after(text: str, start: int, end: int, links: Iterable[str]) -> tuple[int, re.Match[str]] | None:
    """The first word after a label within a few words, with how many words came before it."""
    allowed = frozenset(links)
    for k, match in enumerate(_WORD.finditer(text, start, end)):
        if k >= 8:
            return None
        word = match.group().lower()
        if word in allowed or word.endswith(":"):
            continue
        return k, match
    return None


Spans = Iterable[Sequence[tuple[int, int]]]
_SHORT_LABEL = 7  # a label shorter than this must start a word ("clave", not "enclave")
_PIN_LINK = re.compile(r"[ \t]*(?:[:=#]|is\b|was\b|[0-9])", re.IGNORECASE)


def label_prose_hits(text: str, strong: Spans, codes: Spans, nouns: Spans, *, budget: int, past: str) -> list[Hit]:
    """Values told after a label whatever their shape: letters-only passwords, passphrases, PINs, generated codes."""
    # The spans come from the scanner's RE2 programs (one linear pass each); each label reads a
    # bounded window after it, and past `budget` labels the rest is reported unread (`past`).
    hits: list[Hit] = []
    for n, (start, end) in enumerate(spans[0] for spans in strong):
        if n >= budget:
            return [*hits, (past, start, len(text), text[start:])]
        if end - start < _SHORT_LABEL and start and text[start - 1].isalpha():
            continue
        hit = _password_value(text, end, _window(text, end, 160), text[start:end])
        if hit:
            hits.append(hit)
    for n, (start, end) in enumerate(spans[0] for spans in codes):
        if n >= budget:
            return [*hits, (past, start, len(text), text[start:])]
        if text[start:end] in ("pin", "Pin") and not _PIN_LINK.match(text, end):
            continue  # the verb: "pin the version", "Pin it to the board"
        hit = _code_value(text, end, _window(text, end, 96))
        if hit:
            hits.append(hit)
    for n, (start, end) in enumerate(spans[0] for spans in nouns):
        if n >= budget:
            return [*hits, (past, start, len(text), text[start:])]
        if text[start:end].lower() == "use" and not _USE_TO_ENTER.match(text, end):
            continue
        for k, match in enumerate(_WORD.finditer(text, end, _window(text, end, 96))):
            if k >= 8:
                break
            if _generated(match.group()):
                hits.append(("password (prose)", match.start(), match.end(), match.group()))
                break
    return hits


def _window(text: str, start: int, size: int) -> int:
    """The end of what a label reads: `size` characters on its line."""
    line_end = text.find("\n", start, start + size)
    return line_end if line_end >= 0 else min(len(text), start + size)


def _password_value(text: str, start: int, end: int, label: str) -> Hit | None:
    """After a password's word: "is|was|:" then one plain word ending the clause, or a passphrase's words."""
    # The link: a colon or "=" right after the label, or a copula within a few words ("the
    # password for alice on the NAS is X"); each copula is tried ("was changed, it is now X").
    rest = text[start:end].lstrip()
    # A word of letters alone after a foreign label needs a colon: "clave" and "parola" are also
    # "key" and "word" ("la clave del exito es la constancia").
    english = _ENGLISH_LABEL.fullmatch(label) is not None
    colon = rest[:1] in (":", "=")
    if colon:
        words = list(_WORD.finditer(text, text.index(rest[0], start) + 1, end))[:12]
        candidates = [0]
    else:
        words = list(_WORD.finditer(text, start, end))[:16]
        links = _ENGLISH_LINKS if english else COPULAS
        candidates = [k + 1 for k, match in enumerate(words) if match.group().lower() in links]
    phrase = "phrase" in label.lower()
    for at in candidates:
        while at < len(words) and words[at].group().lower() in _BEFORE_VALUE:
            at += 1
        if at >= len(words):
            continue
        hit = _value_at(text, words[at:], phrase=phrase, colon=colon, plain=english or colon)
        if hit:
            return hit
    return None


_ENGLISH_LABEL = re.compile(rf"(?i)password|passphrase|pass[ \t]phrase|passcode|passwd|{MISSPELLINGS}")
_BEFORE_VALUE: Final = frozenset({"now", "still", "just", "simply", "currently", "set", "to", "is", "was"})


def _value_at(text: str, words: list[re.Match[str]], *, phrase: bool, colon: bool, plain: bool) -> Hit | None:
    """The password the words after a label's link tell: a passphrase's plain words, or one word ending the clause."""
    if phrase or colon:
        # A passphrase: plain words to the clause's end ("correct horse battery staple (for ...)").
        run = []
        for match in words:
            if not _PASSPHRASE_WORD.fullmatch(match.group()):
                break
            run.append(match)
            if _SENTENCE_END.match(text, match.end()):
                break
        body = run[1:] if run[:1] and run[0].group() in ("the", "a") and phrase else run
        if (
            3 <= len(body) <= 8
            and _SENTENCE_END.match(text, body[-1].end())
            and not any(m.group() in _FUNCTION_WORDS for m in body)
        ):
            return ("password (prose)", body[0].start(), body[-1].end(), text[body[0].start() : body[-1].end()])
    first = words[0]
    value = first.group()
    if ((plain and _plain_value(value)) or _told_value(value)) and _SENTENCE_END.match(text, first.end()):
        return ("password (prose)", first.start(), first.end(), value)
    return None


_TOLD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-_.!@#$%^&*+=?~]{3,63}")
_SIZE_OR_VERSION = re.compile(r"(?i)v?[0-9.]+[a-z]{0,6}|[0-9]+(?:chars?|characters|digits)")


def _told_value(word: str) -> bool:
    """True for a word with a digit and a letter told after a password's label ("nimbus2468"): not a size or version."""
    if not _TOLD.fullmatch(word) or word.lower() in _NOT_A_VALUE:
        return False
    letters = sum(c.isalpha() for c in word)
    digits = sum(c.isdigit() for c in word)
    # "12chars", "v2", "8+" and versions are sizes and numbers, not passwords.
    return letters >= 3 and digits >= 1 and not _SIZE_OR_VERSION.fullmatch(word)


def _code_value(text: str, start: int, end: int) -> Hit | None:
    """After a PIN's or a code's name: its digits, directly, after a colon or a copula, or after "for X is"."""
    previous = ""
    for k, match in enumerate(_WORD.finditer(text, start, end)):
        if k >= 8:
            return None
        word = match.group()
        if _DIGITS.fullmatch(word):
            if (
                k == 0
                or previous in COPULAS
                or previous.endswith(":")
                or text[match.start() - 2 : match.start()].strip() == ":"
            ):
                return ("pin (prose)", match.start(), match.end(), word)
            return None
        if any(c.isdigit() for c in word):
            return None  # another number first ("pin numpy to 1.26")
        previous = word.lower()
    return None


def query_pair_hits(text: str) -> list[Hit]:
    """A password field beside a user field in a query string ("?u=admin&p=granite5150")."""
    hits: list[Hit] = []
    for match in _QUERY_PAIR.finditer(text):
        group = 1 if match.start(1) >= 0 else 2
        value = match.group(group)
        if len(value) >= 4 and not (value.isdigit() and len(value) < 6):
            hits.append(("password (query)", match.start(group), match.end(group), value))
    return hits


# Round eight (post-password-symbol-gap): a generated password cut by punctuation the shape view
# does not count as a symbol ("Kp7/Wm3/Xr9q", "Mx9.Bq4.Lzt", "Nq4(Vr8)Tzk") or led by a symbol
# ("*Rt7vQ2mK9", "?Blue7Sky9x"). The gate wants a digit, punctuation and a capital in a row, or a
# symbol before a capitalised word with a digit; the reader wants every piece mixed.
PUNCTUATED_GATE: Final = r"[0-9][./()_\-][A-Z][a-z0-9]|(?:^|\s)[*?!~^&][A-Z][a-z]+[0-9]"
_LEADING = "*?!~^&"  # not "#" (a hashtag), "@" (a mention), "$" or "%" (a variable)
_PIECE_SPLIT = re.compile(r"[./()_\-]")
_BLANK_WORD = re.compile(r"\S+")


def _pieces_mixed(piece: str) -> bool:
    """True for a piece with two classes of letters and digits at least ("Kp7", "Lzt", "Wm3")."""
    return sum((any(c.isupper() for c in piece), any(c.islower() for c in piece), any(c.isdigit() for c in piece))) >= 2


def punctuated(word: str) -> bool:
    """True for a generated password cut by punctuation or led by a symbol: upper, lower, digits, every piece mixed."""
    if not 8 <= len(word) <= 32 or not word.isascii() or "://" in word or "@" in word:
        return False
    core = word[1:] if word[0] in _LEADING else word
    if not (any(c.isupper() for c in core) and any(c.islower() for c in core) and any(c.isdigit() for c in core)):
        return False
    pieces = _PIECE_SPLIT.split(core.rstrip(")"))
    if not all(piece.isalnum() for piece in pieces) or len(pieces) > 5:
        return False
    if len(pieces) == 1:
        # One piece after a leading symbol: letters and digits interleaved like a generator's.
        return core is not word and len(_CLASS_CHANGE.findall(core)) >= 5 and sum(c.isdigit() for c in core) >= 2
    return len(pieces) >= 3 and all(2 <= len(piece) <= 6 and _pieces_mixed(piece) for piece in pieces)


def punctuated_hits(text: str, gates: Spans) -> list[Hit]:
    """The words around the gate's matches that punctuated() accepts, as "password (shape)"."""
    hits: list[Hit] = []
    last = -1
    for spans in gates:
        at = spans[0][0]
        if text[at].isspace():
            at += 1  # the gate's blank before a leading symbol
        if at < last:
            continue  # one look per word
        begin = at
        while begin > 0 and not text[begin - 1].isspace() and at - begin < 40:
            begin -= 1
        match = _BLANK_WORD.match(text, begin)
        if match is None:
            continue
        last = match.end()
        word = match.group().rstrip(",;:.!?'\"").lstrip("'\"([")
        if punctuated(word):
            start = text.find(word, match.start(), match.end())
            hits.append(("password (shape)", start, start + len(word), word))
    return hits
