"""Packs put in front of tools: pack stages on a registry, the synchronous decider, evaluate and explain.

Internal: the supported API is what `policyengine` itself exports.
"""
