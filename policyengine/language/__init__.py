"""The rule language: the JMESPath compiler, the engine's functions, paths, roles, commands, secrets, redaction.

Internal: the supported API is what `policyengine` itself exports.
"""
