"""Properties of a pack checked over the calls its catalog admits (`policyengine verify`): docs/verify.md."""

from policyengine.verify._analysis import never_applying, overturned_rules
from policyengine.verify._diff import DiffClass, SemanticDiff, semantic_diff
from policyengine.verify._properties import Property, PropertyFiles, PropertyKind, load_properties, load_property_files
from policyengine.verify._recheck import Recheck, recheck
from policyengine.verify._search import Outcome, PropertyResult, SearchBudget, unstated_red_lines, verify

__all__ = [
    "DiffClass",
    "Outcome",
    "Property",
    "PropertyFiles",
    "PropertyKind",
    "PropertyResult",
    "Recheck",
    "SearchBudget",
    "SemanticDiff",
    "load_properties",
    "load_property_files",
    "never_applying",
    "overturned_rules",
    "recheck",
    "semantic_diff",
    "unstated_red_lines",
    "verify",
]
