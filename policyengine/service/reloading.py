"""The reload watcher: the pack folders polled on a beat (and a bundle source with them), SIGHUP at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from policyengine.service.packs_state import PacksState

log = logging.getLogger("policyengine.service")

__all__ = ["watch"]


async def watch(
    state: PacksState,
    wake: asyncio.Event,
    interval: float | None,
    poll: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Reload when a pack file changes, every `interval` seconds (None: only when woken) or at once on `wake`."""
    while True:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(interval):
                await wake.wait()
        hup = wake.is_set()
        wake.clear()
        try:
            if poll is not None:
                await poll()
            if hup or await asyncio.to_thread(state.changed):
                await state.reload_async()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("policyengine serve: the reload watcher failed; it tries again on the next beat")
