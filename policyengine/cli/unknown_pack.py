"""The error of a `--pack` value that names nothing: its own module, so the resolver imports it only to raise it."""

from __future__ import annotations

from policyengine.errors import UsageError
from policyengine.values.problems import PackLoadError

__all__ = ["UnknownPackError"]


class UnknownPackError(PackLoadError, UsageError):
    """A `--pack` value that is neither a folder nor a shipped pack's name: problem PE108, and a usage error."""
