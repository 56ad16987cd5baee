"""The decision service: packs served over HTTP, decision logs, signed pack bundles.

Internal: the supported entry points are `policyengine serve`, `bundle` and `logs`.
"""
