"""Packs: YAML source with positions, the loader, the rule compiler, rule chains and their probe plans, lint.

Internal: the supported API is what `policyengine` itself exports.
"""
