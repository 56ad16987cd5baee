"""Properties of a pack checked over the calls its catalog admits (`policyengine verify`): docs/verify.md."""

from policyengine.verify._analysis import overturned_rules
from policyengine.verify._diff import DiffClass, SemanticDiff, semantic_diff
from policyengine.verify._properties import Property, PropertyKind, load_properties
from policyengine.verify._search import Outcome, PropertyResult, SearchBudget, verify

__all__ = [
    "DiffClass",
    "Outcome",
    "Property",
    "PropertyKind",
    "PropertyResult",
    "SearchBudget",
    "SemanticDiff",
    "load_properties",
    "overturned_rules",
    "semantic_diff",
    "verify",
]
