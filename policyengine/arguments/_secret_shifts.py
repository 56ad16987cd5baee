"""Provider tokens under a Caesar shift or Atbash, found by their shifted prefix (round fifteen, set N).

A token posted "with each letter moved forward 7" or "atbash it" keeps its length, digits and
separators, and its prefix becomes one of 26 fixed strings: `glpat-` shifted by 7 is `nswha-`,
`xoxb-` by 2 is `zqzd-`, in Atbash `clcy-`. PREFIXES are the providers' documented prefixes (as
secret_scanner's shapes have them, with at least three letters: a shorter head matches too much
prose); SHIFTED maps every shifted and mirrored spelling of each to how it was made, so the gate is a
list of literals (one DFA pass, no per-token work), and a token it finds is shifted back and read by
the scanner, which decides whether it is a key. Case is kept (a shift moves `A` among capitals).
Secret_scanner's older reader (_unshifted) reads the 4-capital AWS ids and `xxx_` + 36 heads; this
table adds the rest. A keyword cipher (Vigenere) has no fixed image of the prefix: out of scope.
"""

from __future__ import annotations

import re
from typing import Final

PREFIXES: Final = (
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "glptt-",
    "glrt-",
    "gldt-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "xoxr-",
    "xoxe-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "whsec_",
    "sk-ant-",
    "sk-proj-",
    "npm_",
    "shpat_",
    "shpss_",
    "shpca_",
    "shppa_",
    "dop_v1_",
    "doo_v1_",
    "dor_v1_",
    "sbp_",
    "pul-",
    "dapi",
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "AIza",
    "LTAI",
    "NRAK-",
    "PMAK-",
    "hvs.",
    "hvb.",
)


def shift_letters(text: str, shift: int | None) -> str:
    """Each letter moved forward by `shift` (Caesar), or mirrored (Atbash) when shift is None."""
    out = []
    for c in text:
        base = 65 if "A" <= c <= "Z" else 97 if "a" <= c <= "z" else 0
        if not base:
            out.append(c)
        elif shift is None:
            out.append(chr(base + 25 - (ord(c) - base)))
        else:
            out.append(chr(base + (ord(c) - base + shift) % 26))
    return "".join(out)


def _shifted_table() -> dict[str, list[int | None]]:
    """Every shifted (1-25) and mirrored spelling of each prefix -> the ways it was made (to undo)."""
    table: dict[str, list[int | None]] = {}
    for prefix in PREFIXES:
        for shift in (*range(1, 26), None):
            table.setdefault(shift_letters(prefix, shift), []).append(shift)
    return table


SHIFTED: Final = _shifted_table()
# The gate (RE2 and Python): a shifted prefix at a word's start and 16 more token characters.
GATE: Final = (
    r"(?:^|[^A-Za-z0-9_\-.])(?:"
    + "|".join(re.escape(p) for p in sorted(SHIFTED, key=len, reverse=True))
    + r")[A-Za-z0-9_\-]{16}"
)
_TOKEN: Final = re.compile(
    r"(?<![A-Za-z0-9_\-.])(" + "|".join(re.escape(p) for p in sorted(SHIFTED, key=len, reverse=True)) + r")"
    r"[A-Za-z0-9_\-]{16,512}"
)
_MAX_TOKENS: Final = 16


def readings(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, the token shifted back, "shifted" or "atbash") of each token whose head is a shifted prefix."""
    found: list[tuple[int, int, str, str]] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        for shift in SHIFTED[match.group(1)]:
            if shift is None:
                found.append((match.start(), match.end(), shift_letters(token, None), "atbash"))
            else:
                found.append((match.start(), match.end(), shift_letters(token, 26 - shift), "shifted"))
        if len(found) >= _MAX_TOKENS:
            break
    return found
