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
from .frozen import FrozenDict, FrozenList, freeze, thaw
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
    "DefinitionError",
    "Deny",
    "Dispatch",
    "FreezeError",
    "FrozenDict",
    "FrozenError",
    "FrozenList",
    "Handle",
    "Outcome",
    "PendingResult",
    "PolicyEngineError",
    "RegistrationError",
    "Registry",
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
    "freeze",
    "thaw",
]
