"""The packs a server decides with: the current installation, reloaded atomically in a worker thread.

Each reload builds a whole new registry off the event loop and swaps one reference: a request
takes the snapshot once, when it starts, and decides on it to the end, whatever reloads meanwhile.
A reload that fails keeps the last good snapshot and remembers why (`last_error`). Every
snapshot's registry writes the same session store, so sessions outlive reloads.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from policyengine.enforce.install import PolicyLayers
from policyengine.errors import PolicyEngineError
from policyengine.packs.last_good import KeptPacks, failed_load, folder_state
from policyengine.packs.loader import Pack, catalog_for
from policyengine.runtime.registry import Registry
from policyengine.values.session import SessionStore

log = logging.getLogger("policyengine.service")

__all__ = ["PacksState", "ReloadResult", "ServedPacks", "combined_digest"]


def combined_digest(packs: Sequence[Pack]) -> str:
    """One pack: its own digest; several: sha256 over their digests in layer order."""
    if len(packs) == 1:
        return packs[0].digest
    joined = "\n".join(f"{p.name}@{p.digest}" for p in packs)
    return "sha256:" + hashlib.sha256(joined.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ServedPacks:
    """One installation of the packs: its own registry, the packs, their digest, when it was loaded."""

    registry: Registry
    packs: tuple[Pack, ...]
    folders: tuple[Path, ...]
    digest: str
    loaded_at: float
    # With a tool catalog, a tool it lacks is `invalid`, as `dry-run` decides (unless told to decide it).
    require_tool: bool = False


@dataclass(frozen=True)
class ReloadResult:
    """What a reload did: swapped in a new snapshot, or kept the last good one and why."""

    swapped: bool
    digest: str
    error: str | None


def _build(
    folders: tuple[Path, ...], cwd: str | None, tools: str | None, unknown_tools: str, sessions: SessionStore | None
) -> ServedPacks:
    """Load and install the packs on a registry of their own, with their catalog's tools (raises on any problem)."""
    # Every snapshot shares the one session store: a reload keeps every session's labels and counters.
    layers = PolicyLayers.install(Registry(cwd=cwd, sessions=sessions), folders)
    # The tools `dry-run` would validate against: --tools, else the packs' `catalog:`, else none.
    catalog = catalog_for(layers.packs, tools)
    for definition in (catalog or {}).values():
        layers.registry.register(definition)
    digest = combined_digest(layers.packs)
    require = catalog is not None and unknown_tools == "invalid"
    return ServedPacks(layers.registry, layers.packs, folders, digest, time.time(), require)


class PacksState:
    """The current snapshot, its reloads (serialized, off the event loop) and the last reload error."""

    def __init__(
        self,
        folders: Sequence[str | Path],
        *,
        cwd: str | None = None,
        tools: str | None = None,
        unknown_tools: str = "invalid",
        sessions: SessionStore | None = None,
    ) -> None:
        if not folders:
            raise PolicyEngineError("no pack folder to serve", hint="give at least one --pack DIR")
        if unknown_tools not in ("invalid", "decide"):
            raise PolicyEngineError(f"unknown_tools {unknown_tools!r}", hint="use 'invalid' or 'decide'")
        self.cwd, self.tools, self.unknown_tools = cwd, tools, unknown_tools
        if sessions is None:
            from policyengine.sessions.stores import MemoryStore

            sessions = MemoryStore()  # not one per snapshot: a reload must not forget the sessions
        self.sessions: SessionStore = sessions
        self._folders = tuple(Path(f) for f in folders)
        self._seen = folder_state(self._folders)
        self._current = _build(
            self._folders, cwd, tools, unknown_tools, self.sessions
        )  # the first load must succeed: nothing to fall back to
        self.last_error: str | None = None
        self.last_error_at: float | None = None
        self.reloads = 0
        self.failures = 0
        self._lock = threading.Lock()
        self.listeners: list[Callable[[ReloadResult], None]] = []

    @property
    def current(self) -> ServedPacks:
        """The snapshot new requests decide on."""
        return self._current

    @property
    def folders(self) -> tuple[Path, ...]:
        """The folders the packs load from."""
        return self._folders

    def changed(self) -> bool:
        """True when a file under the pack folders was added, removed or modified since the last load."""
        return folder_state(self._folders) != self._seen

    def reload(self, folders: Sequence[str | Path] | None = None) -> ReloadResult:
        """Load the packs again (from `folders` if given) and swap; a failure keeps the last good snapshot."""
        with self._lock:  # one reload at a time: a slow one must not swap over a newer one
            wanted = tuple(Path(f) for f in folders) if folders is not None else self._folders
            seen = folder_state(wanted)  # before loading: an edit during the load triggers another reload
            self._seen = seen
            try:
                snapshot = _build(wanted, self.cwd, self.tools, self.unknown_tools, self.sessions)
            except Exception as error:  # fail closed: whatever went wrong, the last good packs keep deciding
                current = self._current
                kept = KeptPacks(current.packs, current.loaded_at, failed_load(error, wanted))
                self.failures += 1
                self.last_error = kept.notice()
                self.last_error_at = time.time()
                log.error("policyengine serve: %s", self.last_error)
                result = ReloadResult(False, self._current.digest, self.last_error)
            else:
                self._current, self._folders = snapshot, wanted
                self.reloads += 1
                self.last_error = self.last_error_at = None
                log.info("policyengine serve: packs reloaded, digest %s", snapshot.digest)
                result = ReloadResult(True, snapshot.digest, None)
        self._tell(result)
        return result

    def report_failure(self, message: str) -> ReloadResult:
        """A reload that failed before loading (a bundle that did not verify): counted and reported like one."""
        with self._lock:
            self.failures += 1
            self.last_error = f"{message}; keeping {self._current.digest}"
            self.last_error_at = time.time()
            log.error("policyengine serve: %s", self.last_error)
            result = ReloadResult(False, self._current.digest, self.last_error)
        self._tell(result)
        return result

    def _tell(self, result: ReloadResult) -> None:
        for listener in self.listeners:
            try:
                listener(result)
            except Exception:  # a metric that fails to count must not undo a reload
                log.exception("policyengine serve: a reload listener failed")

    async def reload_async(self, folders: Sequence[str | Path] | None = None) -> ReloadResult:
        """`reload` in a worker thread: the event loop keeps answering on the current snapshot meanwhile."""
        return await asyncio.to_thread(self.reload, folders)
