"""The type of a value named for a message, from a table each caller words its own way."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["TypeNames", "type_name"]

TypeNames = Sequence[tuple[type | tuple[type, ...], str]]
"""(type or types, name) pairs, tried in order: bool before int, since a boolean is an int."""


def type_name(value: Any, names: TypeNames) -> str:
    """The name of the first entry `value` is an instance of; its class name when none is."""
    for kind, name in names:
        if isinstance(value, kind):
            return name
    return type(value).__name__
