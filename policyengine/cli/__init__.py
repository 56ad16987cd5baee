"""The command line: argument parsing, one module per verb, report formats.

Internal: the supported API is what `policyengine` itself exports.
"""
