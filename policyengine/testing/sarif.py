"""The SARIF 2.1.0 log both `policyengine check` and `policyengine test` write, around their own results."""

from __future__ import annotations

from typing import Any

from policyengine import __version__

__all__ = ["SARIF_SCHEMA", "sarif_location", "sarif_log"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def sarif_log(
    rules: list[dict[str, Any]], results: list[dict[str, Any]], *, information_uri: str | None = None
) -> dict[str, Any]:
    """A log of one run of policyengine: the rules its results name, and the results."""
    driver: dict[str, Any] = {"name": "policyengine", "version": __version__}
    if information_uri is not None:
        driver["informationUri"] = information_uri
    driver["rules"] = rules
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}


def sarif_location(uri: str, line: int, column: int) -> list[dict[str, Any]]:
    """A result's `locations`: one physical place."""
    return [
        {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": line, "startColumn": column}}}
    ]
