"""Tools and their parameters: definitions, the compiled validator, Cerberus <-> JSON Schema, catalogs.

Internal: the supported API is what `policyengine` itself exports.
"""
