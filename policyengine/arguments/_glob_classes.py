"""Where a glob's bracket expression closes: path patterns and `tools:` patterns read `[...]` alike."""


def class_end(text: str, start: int) -> int:
    """The index of the "]" closing the bracket expression at text[start], or -1 (then "[" is literal)."""
    i = start + 1
    if i < len(text) and text[i] in "!^":
        i += 1
    # A "]" right after "[" or "[!" is a member, as in fnmatch and POSIX.
    if i < len(text) and text[i] == "]":
        i += 1
    return text.find("]", i)
