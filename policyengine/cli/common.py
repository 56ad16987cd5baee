"""What several verbs share: the exit codes and reading a tool catalog."""

from __future__ import annotations

from typing import Any

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def load_tools(path: str | None) -> dict[str, Any] | None:
    """The tool catalog given by --tools, or None without one."""
    if path is None:
        return None
    from policyengine.tools.catalog import load_catalog

    return load_catalog(path)
