"""Tool names folded to one spelling, and `tools:` patterns matched against them after the same folding."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from fnmatch import translate
from functools import lru_cache

from policyengine.arguments._glob_classes import class_end

# Separators that only spell a word boundary: `delete-file`, `delete.file`, `delete file`.
_SEPARATORS = frozenset("-_.:/\\ \t\n\r\f\v")
_CACHE_SIZE = 4096
_RUNS = re.compile("_+")


def _fold(text: str, pattern: bool) -> str:
    """One folding for names and patterns; in a pattern, `[...]` classes are only casefolded."""
    # NFKC first: a full-width Bash is Bash; format characters (zero-width joiners) spell nothing.
    text = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if pattern and c == "[":
            end = class_end(text, i)  # -1 when unclosed: a literal
            if end > i:
                body = text[i : end + 1]
                # `write[A-Z]*` meant the capital that starts a camelCase word: the boundary it stood for.
                if out and (out[-1].islower() or out[-1].isdigit()) and _capitals_only(body):
                    out.append("_")
                out.append(body.casefold())
                i = end + 1
                continue
        if c in _SEPARATORS:
            out.append("_")
        else:
            prev = text[i - 1] if i else ""
            nxt = text[i + 1] if i + 1 < n else ""
            # deleteFile -> delete_File, HTTPRequest -> HTTP_Request, s3Bucket -> s3_Bucket.
            if c.isupper() and (prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower())):
                out.append("_")
            out.append(c)
        i += 1
    return _RUNS.sub("_", "".join(out).casefold()).strip("_")


def _capitals_only(body: str) -> bool:
    """A class such as `[A-Z]` or `[A-Z0-9]`: its letters are all capitals (not negated)."""
    inner = body[1:-1]
    letters = [c for c in inner if c.isalpha()]
    return bool(letters) and not inner.startswith(("!", "^")) and all(c.isupper() for c in letters)


@lru_cache(maxsize=_CACHE_SIZE)
def fold_tool_name(name: str) -> str:
    """`deleteFile`, `Delete-File`, `delete.file`, `DELETE_FILE` -> `delete_file` (docs/rules.md)."""
    return _fold(name, pattern=False)


@lru_cache(maxsize=_CACHE_SIZE)
def fold_tool_pattern(pattern: str) -> str:
    """A `tools:` glob folded as names are, `*`, `?` and `[...]` kept: `mcp__*__deleteFile` -> `mcp_*_delete_file`."""
    return _fold(pattern, pattern=True)


def compile_tool_patterns(patterns: Iterable[str]) -> re.Pattern[str] | None:
    """The folded globs as one regex to fullmatch a folded name; None for no pattern."""
    # fnmatch.translate always yields a valid regex (an unclosed `[` is a literal, `[z-a]` matches nothing).
    parts = [translate(fold_tool_pattern(p)) for p in patterns]
    return re.compile("|".join(f"(?:{p})" for p in parts)) if parts else None


@lru_cache(maxsize=_CACHE_SIZE)
def tool_matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """tool_matches with the names folded and the globs compiled once (a rule's literal list: at load)."""
    globs = [p for p in patterns if any(c in p for c in "*?[")]
    names = frozenset(fold_tool_name(p) for p in patterns if p not in globs)
    regex = compile_tool_patterns(globs)

    def matches(name: str) -> bool:
        folded = fold_tool_name(name)
        return folded in names or (regex is not None and regex.fullmatch(folded) is not None)

    return matches


def tool_matches(name: str, patterns: Iterable[str]) -> bool:
    """Whether the tool name matches any name or glob, both folded (docs/functions.md, tool_matches)."""
    return tool_matcher(tuple(patterns))(name)


# Letters NFKD does not take apart (no combining mark): a tool named in Polish, Danish or German
# may spell them, and a lexicon lists the plain ASCII word (usuń -> usun, ß -> ss).
_PLAIN_LETTERS = str.maketrans(
    {"ß": "ss", "ø": "o", "ł": "l", "đ": "d", "æ": "ae", "œ": "oe", "\u0131": "i", "þ": "th"}
)
_MCP_TOOL = re.compile(r"(?i)^\s*mcp__.*?__(.+)$", re.DOTALL)


@lru_cache(maxsize=_CACHE_SIZE)
def tool_words(name: str) -> tuple[str, ...]:
    """The words of a tool's own name, folded as names are and with accents dropped (docs/functions.md).

    An MCP tool's server prefix (`mcp__SERVER__`) is left out: a server is named for what it
    serves, the tool for what it does. `mcp__fichiers__supprimerDossier` gives (supprimer,
    dossier), `mcp__dateien__verzeichnis_löschen` gives (verzeichnis, loschen).
    """
    own = _MCP_TOOL.match(name)
    folded = fold_tool_name(own.group(1) if own else name)
    if not folded.isascii():
        # Accents are marks on a letter (NFKD splits them off); a lexicon lists the plain word.
        decomposed = unicodedata.normalize("NFKD", folded.translate(_PLAIN_LETTERS))
        folded = "".join(c for c in decomposed if not unicodedata.combining(c))
    return tuple(word for word in folded.split("_") if word)
