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

__version__ = "0.1.0"

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
