"""The rule language: the JMESPath compiler and the engine's functions over what arguments hold (arguments/).

Internal: the supported API is what `policyengine` itself exports.
"""
