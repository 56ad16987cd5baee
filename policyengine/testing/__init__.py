"""Policy unit tests: the runner, coverage and reports.

Internal: the supported API is what `policyengine` itself exports.
"""
