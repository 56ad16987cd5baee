"""policyengine: security policy between an AI agent and the tools it calls."""

from policyengine.enforce.evaluate import Decision, Evaluation, PostOutcome, evaluate
from policyengine.enforce.install import PolicyLayers, ReloadReport, pack_bundle
from policyengine.errors import (
    DefinitionError,
    FreezeError,
    FrozenError,
    PolicyEngineError,
    RegistrationError,
    UsageError,
)
from policyengine.packs.loader import Pack, load_pack, load_packs
from policyengine.runtime.approval import ApprovalAnswer, ApprovalRequest, ApprovalService
from policyengine.runtime.registry import Bundle, Handle, Registry
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


def __getattr__(name: str) -> str:
    """`__version__`, read from the installed package's metadata on first use (importlib.metadata costs ~30 ms)."""
    if name != "__version__":
        raise AttributeError(f"module 'policyengine' has no attribute {name!r}")
    from importlib import metadata

    try:
        # The one place the version is written is pyproject.toml; an installed package knows it.
        return metadata.version("policyengine")
    except metadata.PackageNotFoundError:  # a source tree on sys.path without an install
        return "0+unknown"


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
    "Block",
    "Bundle",
    "Decision",
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
    "load_pack",
    "load_packs",
    "pack_bundle",
    "thaw",
]
