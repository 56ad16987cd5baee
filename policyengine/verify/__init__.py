"""Properties of a pack checked over the calls its catalog admits (`policyengine verify`): docs/verify.md."""

from policyengine.verify._analysis import overturned_rules
from policyengine.verify._diff import DiffClass, SemanticDiff, semantic_diff
from policyengine.verify._properties import Property, PropertyFiles, PropertyKind, load_properties, load_property_files
from policyengine.verify._search import Outcome, PropertyResult, SearchBudget, unstated_red_lines, verify

__all__ = [
    "DiffClass",
    "Outcome",
    "Property",
    "PropertyFiles",
    "PropertyKind",
    "PropertyResult",
    "SearchBudget",
    "SemanticDiff",
    "load_properties",
    "load_property_files",
    "overturned_rules",
    "semantic_diff",
    "unstated_red_lines",
    "verify",
]
