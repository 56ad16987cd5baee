"""Card groups apart in a tool's output: layout, markup and prose between them (round fifteen, set N).

The card reader joins a card's own groups (4-4-4-4, Amex's 4-6-5, Diners' 4-6-4) across short
separators and fillers of up to twelve characters on one line. A tool also prints the groups
apart, each in its own place:

- **layout**: one group a line under deep indentation, tabs, blank lines, list bullets (`* `, `- `),
  quote prefixes (`> `) or box-drawing frames (`│ 4485 │`);
- **markup**: each group in its own HTML/XML element, ANSI colour escapes, a Markdown link, LaTeX
  commands (`\\mathtt{4532}\\;`), BBCode tags, JSON fields (`"first_group":"4929","second_group":..`);
- **prose**: a sentence between groups ("the next block is", "and after that", Japanese
  「、続けて次の四桁をお伝えしますと」).

Each text is read in a *view* of the same length where markup tokens (tags, escapes, link targets,
entities, commands) are blanked, so offsets stay the text's own. In the view a *group* is a run of
ASCII digits that touches no other letter or digit; the groups in a row are a *chain* while what
stands between two of them holds no number of its own (a date, a count, a price breaks it) and is
at most MAX_FILLER characters once whitespace runs count as one. Windows of a card's grouping in a
chain are read as one card when the digits pass the card check (an issuer's first digit, a card's
length, Luhn). Two groups or more that read as years (1900-2099) make no card: a list of years
passes Luhn one time in ten.

Out of scope: groups in Unicode digits, groups of other lengths (those are the card reader's),
fillers longer than MAX_FILLER, a number between the groups.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

import re2

Span = tuple[int, int]

MAX_FILLER: Final = 48  # characters between two groups once markup is blanked and whitespace runs count one
_MAX_RAW_FILLER: Final = 400  # characters between two groups as written (markup included)
_MAX_GROUPS: Final = 4096  # digit runs read per text
_MAX_TEXT: Final = 1 << 20

# The gate (RE2: linear): three runs of a card's groups' lengths within bounded reach of each other (the
# fillers may hold digits: an escape's "1;31", an entity's "&#160;", a key's "g2").
GATE: Final = r"[0-9]{4}[^0-9](?:(?s:.){0,400}[^0-9])?[0-9]{4,6}[^0-9](?:(?s:.){0,400}[^0-9])?[0-9]{4,5}"
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.never_capture = True
_GATE_RE: Final = re2.compile(GATE, _OPTIONS)

# Markup blanked in the view (each token by as many spaces): ANSI escapes (CSI and OSC), HTML/XML
# tags (a comment is one), entities, BBCode tags, a Markdown link's target, LaTeX commands and spacing.
_MARKUP: Final = re.compile(
    r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,256}(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
    r"|</?[A-Za-z!?][^<>]{0,400}>"
    r"|&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z]{2,8});"
    r"|\[/?[A-Za-z*]{1,16}(?:=[^\[\]\n]{0,64})?\]"
    r"|\]\([^()\s]{0,256}\)"
    r"|\\[A-Za-z]+|\\[,;:! ]",
    re.DOTALL,
)
_RUN: Final = re.compile(r"[0-9]+")
_SPACES: Final = re.compile(r"\s+")
_GROUPINGS: Final = ((4, 4, 4, 4), (4, 6, 5), (4, 6, 4))


def maybe_groups(text: str) -> bool:
    """True when the text may hold a card's groups apart (one linear pass)."""
    return 16 <= len(text) <= _MAX_TEXT and _GATE_RE.search(text) is not None


def view(text: str) -> str:
    """The text with its markup tokens blanked, one space a character (offsets stay the text's)."""
    return _MARKUP.sub(lambda m: " " * (m.end() - m.start()), text)


def _filler_ok(between: str) -> bool:
    """True when what stands between two groups (in the view) is short and holds no number of its own."""
    if len(between) > _MAX_RAW_FILLER:
        return False
    if len(_SPACES.sub(" ", between)) > MAX_FILLER:
        return False
    # A digit inside a word ("group2", "h1") is part of the word; a number of its own breaks the chain.
    return all(_glued(between, m.start(), m.end()) for m in _RUN.finditer(between))


def _glued(text: str, start: int, end: int) -> bool:
    """True when text[start:end] touches an ASCII letter (a digit of a word, not a number)."""
    return (start > 0 and text[start - 1].isascii() and text[start - 1].isalpha()) or (
        end < len(text) and text[end].isascii() and text[end].isalpha()
    )


def _is_year(group: str) -> bool:
    """True for a four-digit group that reads as a year of 1900-2099."""
    return len(group) == 4 and group[:2] in ("19", "20")


def _chains(seen: str) -> list[list[Span]]:
    """The chains of groups in the view: groups in a row with acceptable fillers between them."""
    chains: list[list[Span]] = []
    chain: list[Span] = []
    for n, match in enumerate(_RUN.finditer(seen)):
        if n >= _MAX_GROUPS:
            break
        start, end = match.span()
        if _glued(seen, start, end):
            continue  # a digit of a word: filler, judged with the filler around it
        if not 4 <= end - start <= 6 or (chain and not _filler_ok(seen[chain[-1][1] : start])):
            if len(chain) >= 3:
                chains.append(chain)
            chain = []
        if 4 <= end - start <= 6:
            chain.append((start, end))
    if len(chain) >= 3:
        chains.append(chain)
    return chains


def card_groups(text: str, is_card: Callable[[str], bool]) -> list[list[Span]]:
    """The spans of each card's groups written apart (see the module's docstring), in the text's offsets."""
    if not maybe_groups(text):
        return []
    seen = view(text)
    found: list[list[Span]] = []
    for chain in _chains(seen):
        i = 0
        while i < len(chain):
            taken = False
            for grouping in _GROUPINGS:
                window = chain[i : i + len(grouping)]
                if len(window) != len(grouping) or tuple(b - a for a, b in window) != grouping:
                    continue
                groups = [seen[a:b] for a, b in window]
                if sum(_is_year(g) for g in groups) >= 2:
                    continue
                if is_card("".join(groups)):
                    found.append(window)
                    i += len(window)
                    taken = True
                    break
            if not taken:
                i += 1
    return found


def across_items(items: Sequence[str], is_card: Callable[[str], bool]) -> list[list[tuple[int, int, int]]]:
    """Cards whose groups stand in sibling strings ("first 4556", "then 3773", ...): (item, start, end) per group."""
    if not 3 <= len(items) <= 64 or any(len(item) > 4096 for item in items):
        return []
    joined = "\n".join(items)
    starts: list[int] = []
    pos = 0
    for item in items:
        starts.append(pos)
        pos += len(item) + 1
    out: list[list[tuple[int, int, int]]] = []
    for spans in card_groups(joined, is_card):
        card: list[tuple[int, int, int]] = []
        for start, end in spans:
            k = max(i for i, s in enumerate(starts) if s <= start)
            card.append((k, start - starts[k], end - starts[k]))
        if len({k for k, _, _ in card}) > 1:  # in one string the string's own reading finds it
            out.append(card)
    return out
