"""What a call's arguments hold: paths, URLs, roles, shell commands, secrets and their fingerprints, redaction.

The readers the rule language's functions (language/functions.py) call; they know nothing of rules.
Internal: the supported API is what `policyengine` itself exports.
"""
