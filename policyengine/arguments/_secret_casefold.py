"""Provider tokens of one-case alphabets posted in the other case (round fifteen, set N).

An AWS key id is capitals and digits; Twilio, DigitalOcean, Shopify, Square, Pulumi and Databricks
keys are a prefix and lower-case hex; a New Relic user key is capitals. Their shapes are
case-sensitive, but the alphabet carries no case: `akiakxq5rhxuewhexung`, a shouted
`DOP_V1_4901EC...` or a lower-cased hashtag is the key to whoever changes the case back. Each
entry of TABLE is one provider's prefix (matched in any case), its body's characters (in any case)
and length, and the case the provider writes: a match that is not already in that case is read in
it, and kept when its body is a key's (digits in it, letters where the alphabet has letters).
"""

from __future__ import annotations

import re
from typing import Final

# (kind, prefix, body characters, body length, canonical case): prefixes and lengths as the shapes
# of secret_scanner._SHAPES have them (gitleaks' rules). A New Relic key cut into a hashtag loses its
# hyphen ("#nrak..."): the hyphen is optional in the folded form only.
TABLE: Final = (
    ("aws-access-key", r"(?:akia|asia|abia|acca)", "a-z2-7", "16", "upper"),
    ("provider-token", r"sk", "0-9a-f", "32", "SK"),
    ("provider-token", r"shp(?:at|ss|ca|pa)_", "0-9a-f", "32", "lower"),
    ("provider-token", r"do[opr]_v1_", "0-9a-f", "64", "lower"),
    ("provider-token", r"dapi", "0-9a-f", "32", "lower"),
    ("provider-token", r"sq[upa]_", "0-9a-f", "40", "lower"),
    ("provider-token", r"pul-", "0-9a-f", "40", "lower"),
    ("provider-token", r"sbp_", "0-9a-f", "40", "lower"),
    ("provider-token", r"key-", "0-9a-f", "32", "lower"),
    ("provider-token", r"nrak-?", "0-9a-z", "27", "upper"),
)
_ENTRIES: Final = tuple(
    (kind, re.compile(rf"(?i)\b{prefix}([{chars}]{{{length}}})\b"), chars, case)
    for kind, prefix, chars, length, case in TABLE
)
# The gate (RE2 and Python alike): any entry in any case.
GATE: Final = (
    r"(?i:\b(?:" + "|".join(f"{prefix}[{chars}]{{{length}}}" for _, prefix, chars, length, _ in TABLE) + r")\b)"
)
_GATE: Final = re.compile(GATE)
_MAX_HITS: Final = 16


def _canonical(token: str, case: str) -> str:
    """The token in its provider's case ("SK": capital prefix, small body)."""
    if case == "SK":
        return "SK" + token[2:].lower()
    return token.upper() if case == "upper" else token.lower()


def _key_body(body: str, chars: str) -> bool:
    """A key's body, not a word or a number: digits in it, and letters where its alphabet has them."""
    digits = sum(c.isdigit() for c in body)
    letters = len(body) - digits
    if chars == "0-9a-f":
        return digits >= 2 and letters >= 2  # hex: a run of digits is a number, of letters a word
    return digits >= (1 if chars == "a-z2-7" else 2) and letters >= 2


def hits(text: str) -> list[tuple[str, int, int, str]]:
    """(kind, start, end, the token in its provider's case) of each one-case token posted in another case."""
    found: list[tuple[str, int, int, str]] = []
    if _GATE.search(text) is None:
        return found
    for kind, pattern, chars, case in _ENTRIES:
        for match in pattern.finditer(text):
            token = match.group()
            canonical = _canonical(token, case)
            if canonical == token:
                continue  # already in its own case: the shape's
            if _key_body(match.group(1).lower(), chars):
                found.append((f"{kind} (case-folded)", match.start(), match.end(), canonical))
                if len(found) >= _MAX_HITS:
                    return found
    return found
