"""The dry-run: recorded calls in, decision records out, locally or on a Dask cluster.

Internal: the supported API is what `policyengine` itself exports.
"""
