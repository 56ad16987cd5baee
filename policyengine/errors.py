"""The root exception class and the user-facing errors under it."""

from __future__ import annotations


class PolicyEngineError(Exception):
    """Root of every error a user of policyengine can cause; carries its CLI exit code."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class DefinitionError(PolicyEngineError):
    """A tool definition is malformed (bad name, schema, callable...)."""


class RegistrationError(PolicyEngineError):
    """A registration was refused (duplicate tool name, bad listener, ...)."""


class FrozenError(PolicyEngineError, TypeError):
    """Someone tried to mutate a frozen value (arguments, results)."""


class FreezeError(PolicyEngineError, TypeError):
    """A value cannot be frozen because it is not plain JSON data."""


class UsageError(PolicyEngineError):
    """The API was used in a way it does not support."""


class SessionStoreError(PolicyEngineError):
    """A session store could not be opened, read or written; rules that read the session fail closed."""


# The distribution's name on the package index (the import package and the CLI are `policyengine`;
# the index's `policyengine` is an unrelated project): every install hint names it.
DISTRIBUTION = "agent-policyengine"


def install_hint(extra: str) -> str:
    """How to install an extra: from the package index, or from a checkout."""
    return f"pip install '{DISTRIBUTION}[{extra}]' (from a checkout: pip install '.[{extra}]')"


class AuditFileError(PolicyEngineError):
    """An audit file that cannot be kept private: not a regular file, or readable by others and not ours to tighten."""
