"""The runtime: the registry, the six stages over one installation, the tool body, approval, audit.

Internal: the supported API is what `policyengine` itself exports.
"""
