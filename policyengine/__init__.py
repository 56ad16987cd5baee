"""policyengine: security policy between an AI agent and the tools it calls.

This module is the supported API. Its names load on first use (PEP 562): `import policyengine`
loads only the errors, so a command-line verb or a hook pays only for what it uses. Loading
everything eagerly took ~240 ms here (asyncio ~30 ms, cerberus ~25 ms, the YAML loader, the rule
and JMESPath compilers); docs/architecture.md lists what each entry point loads.
"""

from __future__ import annotations

from policyengine.errors import (
    DefinitionError,
    FreezeError,
    FrozenError,
    PolicyEngineError,
    RegistrationError,
    UsageError,
)

# Not `from typing import TYPE_CHECKING`: typing costs ~10 ms, a third of this import; checkers know the idiom.
TYPE_CHECKING = False

if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ loads each name
    from typing import Any

    from policyengine.audit import AuditRecorder
    from policyengine.enforce.evaluate import Evaluation, PostOutcome, Verdict, evaluate
    from policyengine.enforce.install import PolicyLayers, ReloadReport, pack_bundle
    from policyengine.packs.loader import Pack, load_pack, load_packs
    from policyengine.runtime.approval import ApprovalAnswer, ApprovalRequest, ApprovalService
    from policyengine.runtime.registry import Bundle, Handle, Registry
    from policyengine.tools.catalog import load_catalog, tool_from_spec
    from policyengine.tools.definition import ToolDefinition, define_tool
    from policyengine.values.call import Dispatch, PendingResult, ToolCall
    from policyengine.values.cancellation import AbortKind, AbortReason, Signal
    from policyengine.values.decisions import (
        Accept,
        AcceptValue,
        Allow,
        Ask,
        Block,
        Deny,
        Source,
        SourceKind,
        accept,
        accept_value,
        allow,
        ask,
        block,
        deny,
    )
    from policyengine.values.frozen import FrozenDict, FrozenList, freeze, thaw
    from policyengine.values.problems import Location, PackLoadError, Problem, Severity
    from policyengine.values.results import Outcome, Stage, ToolResult

# Where each lazily loaded name lives.
_LAZY = {
    "AbortKind": "policyengine.values.cancellation",
    "AbortReason": "policyengine.values.cancellation",
    "Accept": "policyengine.values.decisions",
    "AcceptValue": "policyengine.values.decisions",
    "Allow": "policyengine.values.decisions",
    "ApprovalAnswer": "policyengine.runtime.approval",
    "ApprovalRequest": "policyengine.runtime.approval",
    "ApprovalService": "policyengine.runtime.approval",
    "Ask": "policyengine.values.decisions",
    "AuditRecorder": "policyengine.audit",
    "Block": "policyengine.values.decisions",
    "Bundle": "policyengine.runtime.registry",
    "Verdict": "policyengine.enforce.evaluate",
    "Deny": "policyengine.values.decisions",
    "Dispatch": "policyengine.values.call",
    "Evaluation": "policyengine.enforce.evaluate",
    "FrozenDict": "policyengine.values.frozen",
    "FrozenList": "policyengine.values.frozen",
    "Handle": "policyengine.runtime.registry",
    "Location": "policyengine.values.problems",
    "Outcome": "policyengine.values.results",
    "Pack": "policyengine.packs.loader",
    "PackLoadError": "policyengine.values.problems",
    "PendingResult": "policyengine.values.call",
    "PolicyLayers": "policyengine.enforce.install",
    "PostOutcome": "policyengine.enforce.evaluate",
    "Problem": "policyengine.values.problems",
    "Registry": "policyengine.runtime.registry",
    "ReloadReport": "policyengine.enforce.install",
    "Severity": "policyengine.values.problems",
    "Signal": "policyengine.values.cancellation",
    "Source": "policyengine.values.decisions",
    "SourceKind": "policyengine.values.decisions",
    "Stage": "policyengine.values.results",
    "ToolCall": "policyengine.values.call",
    "ToolDefinition": "policyengine.tools.definition",
    "ToolResult": "policyengine.values.results",
    "accept": "policyengine.values.decisions",
    "accept_value": "policyengine.values.decisions",
    "allow": "policyengine.values.decisions",
    "ask": "policyengine.values.decisions",
    "block": "policyengine.values.decisions",
    "define_tool": "policyengine.tools.definition",
    "deny": "policyengine.values.decisions",
    "evaluate": "policyengine.enforce.evaluate",
    "freeze": "policyengine.values.frozen",
    "load_catalog": "policyengine.tools.catalog",
    "load_pack": "policyengine.packs.loader",
    "load_packs": "policyengine.packs.loader",
    "pack_bundle": "policyengine.enforce.install",
    "thaw": "policyengine.values.frozen",
    "tool_from_spec": "policyengine.tools.catalog",
}


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use; `__version__` from the package metadata."""
    module = _LAZY.get(name)
    if module is not None:
        from importlib import import_module

        value = getattr(import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name == "__version__":
        from importlib import metadata

        from policyengine.errors import DISTRIBUTION

        try:
            # The one place the version is written is pyproject.toml; an installed package knows it
            # (by the distribution's name: the index's `policyengine` is another project).
            return metadata.version(DISTRIBUTION)
        except metadata.PackageNotFoundError:  # a source tree on sys.path without an install
            return "0+unknown"
    raise AttributeError(f"module 'policyengine' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The exported names, loaded or not."""
    return sorted(__all__)


__all__ = [
    "AbortKind",
    "AbortReason",
    "Accept",
    "AcceptValue",
    "Allow",
    "ApprovalAnswer",
    "ApprovalRequest",
    "ApprovalService",
    "Ask",
    "AuditRecorder",
    "Block",
    "Bundle",
    "DefinitionError",
    "Deny",
    "Dispatch",
    "Evaluation",
    "FreezeError",
    "FrozenDict",
    "FrozenError",
    "FrozenList",
    "Handle",
    "Location",
    "Outcome",
    "Pack",
    "PackLoadError",
    "PendingResult",
    "PolicyEngineError",
    "PolicyLayers",
    "PostOutcome",
    "Problem",
    "RegistrationError",
    "Registry",
    "ReloadReport",
    "Severity",
    "Signal",
    "Source",
    "SourceKind",
    "Stage",
    "ToolCall",
    "ToolDefinition",
    "ToolResult",
    "UsageError",
    "Verdict",
    "__version__",
    "accept",
    "accept_value",
    "allow",
    "ask",
    "block",
    "define_tool",
    "deny",
    "evaluate",
    "freeze",
    "load_catalog",
    "load_pack",
    "load_packs",
    "pack_bundle",
    "thaw",
    "tool_from_spec",
]
