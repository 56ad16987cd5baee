"""Properties of a pack checked over the calls its catalog admits (`policyengine verify`): docs/verify.md."""

from policyengine.verify._properties import Property, PropertyKind, load_properties
from policyengine.verify._search import Outcome, PropertyResult, SearchBudget, verify

__all__ = ["Outcome", "Property", "PropertyKind", "PropertyResult", "SearchBudget", "load_properties", "verify"]
