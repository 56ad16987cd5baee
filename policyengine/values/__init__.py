"""Values every layer shares: frozen data, decisions, calls, results, cancellation signals, load problems.

Internal: the supported API is what `policyengine` itself exports.
"""
