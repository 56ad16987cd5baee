"""policyengine: security policy between an AI agent and the tools it calls."""

from .approval import ApprovalAnswer, ApprovalRequest, ApprovalService
from .call import Dispatch, PendingResult, ToolCall
from .decisions import (
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
from .errors import DefinitionError, FreezeError, FrozenError, PolicyEngineError, RegistrationError, UsageError
from .evaluate import Decision, Evaluation, PostOutcome, evaluate
from .frozen import FrozenDict, FrozenList, freeze, thaw
from .install import PolicyLayers, ReloadReport, pack_bundle
from .packs import Pack, load_pack, load_packs
from .problems import Location, PackLoadError, Problem, Severity
from .registry import Bundle, Handle, Registry
from .results import Outcome, Stage, ToolResult
from .signal import AbortKind, AbortReason, Signal
from .tools import ToolDefinition, define_tool


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
