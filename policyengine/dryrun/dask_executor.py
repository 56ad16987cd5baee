"""Dry-run on a Dask cluster, for call logs larger than one machine (optional extra)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from policyengine.dryrun.engine import Batch, Engine, Setup, in_order, units
from policyengine.errors import UsageError, install_hint

# One engine per worker process, keyed by its setup: packs load once, not once per chunk.
_ENGINES: dict[Setup, Engine] = {}


def _evaluate_chunk(setup: Setup, chunk: Sequence[tuple[int, bytes]]) -> Batch:
    engine = _ENGINES.get(setup)
    if engine is None:
        engine = _ENGINES[setup] = Engine(setup)
    return engine.batch(chunk)


def evaluate_on_dask(setup: Setup, lines: Sequence[tuple[int, bytes]], scheduler: str) -> Iterator[Batch]:
    """Batches of record lines in input order, computed on a Dask cluster.

    `scheduler` is a scheduler address (tcp://host:8786) or `local` for a cluster on this
    machine. The work units hold every session whole (`units`): a worker replays a session's
    records in order, as the local path does; units are gathered in order and put back in
    input order, so the output lines up with the input exactly as the local path's does.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--scheduler needs the distributed extra", hint=install_hint("distributed")) from None
    cluster = (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        if scheduler == "local"
        else None
    )
    client = Client(cluster if cluster is not None else scheduler)
    try:
        parts = units(lines)
        futures = [client.submit(_evaluate_chunk, setup, unit, pure=False) for unit in parts]
        yield from in_order([unit[0][0] for unit in parts], (future.result() for future in futures))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
