"""Serving on every core: a parent that binds the socket once and supervises forked workers, each a whole service.

Pre-fork, as gunicorn's arbiter does: the parent binds the listening socket and forks `workers`
children, each running the service on its own event loop with its own packs (reloaded by its own
watcher), session store connection, decision log writer and metrics (shared through files,
metrics.py). Where the kernel balances sockets that share a port (Linux's SO_REUSEPORT: `listen`
is given), each worker listens on a socket of its own and the kernel hashes every connection to
one of them; a worker that dies takes its socket with it (the parent closes its copy, so new
connections go to the others) and its replacement gets a new one. Elsewhere every worker accepts
on the one socket, and the first whose loop is free may take a burst of connections whole.

The parent serves nothing: it restarts a worker that dies (and says so; one that keeps dying at
start waits longer each time), forwards SIGHUP (reload now) to every worker, and on SIGTERM or
SIGINT closes its copies of the sockets, asks every worker to stop (SIGTERM: stop accepting, answer
what is in flight, write the decision log, exit) and exits 0 once they all have. A second SIGTERM
or SIGINT makes the workers stop at once, without waiting for what is in flight.

With one worker nothing is forked: the service runs in the process itself (`run_server`).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TextIO

import uvicorn

from policyengine.errors import PolicyEngineError

__all__ = ["Server", "Supervisor", "run_server"]

# A worker that exits within this many seconds of its start is restarted after a growing pause.
_QUICK_DEATH = 5.0
_MAX_PAUSE = 30.0


class Server(uvicorn.Server):
    """Uvicorn's server, which exits 0 after a graceful stop on SIGTERM or SIGINT instead of re-raising the signal."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """SIGTERM, SIGINT: stop accepting, drain, shut the app down; a second SIGINT stops at once."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        signals = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in signals}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)
        # Uvicorn re-raises the signal here, so the process dies of it: the service drained and wrote its
        # log, which is a clean stop, and says so with exit status 0.


def run_server(config: uvicorn.Config, sock: socket.socket) -> None:
    """Serve `config`'s app on `sock` in this process until SIGTERM or SIGINT (then drained)."""
    import asyncio

    asyncio.run(Server(config).serve(sockets=[sock]))


@dataclass
class _Worker:
    slot: int
    pid: int
    started: float


class Supervisor:
    """The parent of `workers` forked workers, each running `serve(slot, socket)` (which returns its exit status)."""

    def __init__(
        self,
        sock: socket.socket,
        workers: int,
        serve: Callable[[int, socket.socket], int],
        err: TextIO,
        on_exit: Callable[[int], None],
        listen: Callable[[], socket.socket] | None = None,
    ) -> None:
        if workers < 2:
            raise ValueError(f"a supervisor runs 2 workers or more, not {workers}")
        self.sock = sock
        self.count = workers
        self.serve = serve
        self.err = err
        self.on_exit = on_exit  # told the slot of a worker that exited (to clean up after it)
        self.listen = listen  # a new socket on the same port, or None: every worker accepts on `sock`
        self.listening: dict[int, socket.socket] = {0: sock} if listen is not None else {}  # by slot
        self.workers: dict[int, _Worker] = {}  # by pid
        self.pauses: dict[int, float] = {}  # by slot: the pause before the next restart
        self.due: dict[int, float] = {}  # by slot: when a dead worker's replacement starts
        self.stopping = 0  # stop signals received
        self.restarts = 0
        self._wake_r, self._wake_w = -1, -1

    def _say(self, message: str) -> None:
        with contextlib.suppress(Exception):
            print(f"policyengine serve: {message}", file=self.err, flush=True)

    def run(self) -> int:
        """Start the workers, supervise them until stopped; 0 when every worker stopped cleanly."""
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        handled = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD)
        previous = {sig: signal.getsignal(sig) for sig in handled}
        old_wakeup = signal.set_wakeup_fd(self._wake_w)
        try:
            signal.signal(signal.SIGTERM, self._stop)
            signal.signal(signal.SIGINT, self._stop)
            signal.signal(signal.SIGHUP, self._forward_hup)
            signal.signal(signal.SIGCHLD, lambda _sig, _frame: None)  # only to wake the select below
            for slot in range(self.count):
                self._spawn(slot)
            self._say(f"{self.count} workers: pids {', '.join(str(w.pid) for w in self.workers.values())}")
            return self._supervise()
        finally:
            signal.set_wakeup_fd(old_wakeup)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            os.close(self._wake_r)
            os.close(self._wake_w)

    def _stop(self, sig: int, _frame: Any) -> None:
        self.stopping += 1
        if self.stopping == 1:
            # No new worker, no new connection: what the kernel queued and no worker took is refused.
            for listening in (self.sock, *self.listening.values()):
                with contextlib.suppress(OSError):
                    listening.close()
            self._signal_all(signal.SIGTERM)
        else:
            self._signal_all(signal.SIGINT)  # a second SIGINT makes uvicorn stop at once

    def _forward_hup(self, _sig: int, _frame: Any) -> None:
        self._signal_all(signal.SIGHUP)

    def _signal_all(self, sig: int) -> None:
        for pid in list(self.workers):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def _supervise(self) -> int:
        clean = True
        while True:
            if self.stopping and not self.workers:
                return 0 if clean else 1
            timeout = 1.0
            if not self.stopping and self.due:
                timeout = max(0.0, min(min(self.due.values()) - time.monotonic(), 1.0))
            with contextlib.suppress(InterruptedError):
                select.select([self._wake_r], [], [], timeout)
            with contextlib.suppress(BlockingIOError):
                while os.read(self._wake_r, 512):
                    pass
            clean = self._reap() and clean
            if not self.stopping:
                now = time.monotonic()
                for slot, when in sorted(self.due.items()):
                    if when <= now:
                        del self.due[slot]
                        self.restarts += 1
                        self._spawn(slot)

    def _reap(self) -> bool:
        """Collect the workers that exited; schedule their replacements. False when one stopped badly."""
        clean = True
        while self.workers:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.workers.clear()
                break
            if pid == 0:
                break
            worker = self.workers.pop(pid, None)
            if worker is None:
                continue
            with contextlib.suppress(Exception):
                self.on_exit(worker.slot)
            how = _status(status)
            if self.stopping:
                if how != "exit status 0":
                    clean = False
                    self._say(f"worker {worker.slot} (pid {pid}) stopped with {how}")
                continue
            if self.listen is not None:
                # Connections the kernel queued on the dead worker's socket are lost with it; closing
                # the parent's copy sends new ones to the other workers until the replacement listens.
                with contextlib.suppress(KeyError, OSError):
                    self.listening.pop(worker.slot).close()
            lived = time.monotonic() - worker.started
            pause = 0.0
            if lived < _QUICK_DEATH:
                pause = self._longer_pause(worker.slot)
            else:
                self.pauses.pop(worker.slot, None)
            self._say(
                f"worker {worker.slot} (pid {pid}) exited with {how} after {lived:.1f}s; "
                + (f"starting another in {pause:g}s" if pause else "starting another")
            )
            self.due[worker.slot] = time.monotonic() + pause
        return clean

    def _longer_pause(self, slot: int) -> float:
        """The slot's next pause before a restart: 0.5 s, then doubled each time, up to _MAX_PAUSE."""
        pause = self.pauses[slot] = min(_MAX_PAUSE, max(0.5, 2 * self.pauses.get(slot, 0.25)))
        return pause

    def _socket(self, slot: int) -> socket.socket | None:
        """The socket the slot's worker listens on; None (said, retried later) when a new one cannot be bound."""
        if self.listen is None:
            return self.sock
        if slot not in self.listening:
            try:
                self.listening[slot] = self.listen()
            except (OSError, PolicyEngineError) as error:
                pause = self._longer_pause(slot)
                self.due[slot] = time.monotonic() + pause
                self._say(f"worker {slot}: cannot listen again ({error}); trying in {pause:g}s")
                return None
        return self.listening[slot]

    def _spawn(self, slot: int) -> None:
        listening = self._socket(slot)
        if listening is None:
            return
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the parent's code
            code = 1
            try:
                signal.set_wakeup_fd(-1)
                os.close(self._wake_r)
                os.close(self._wake_w)
                for other in (self.sock, *self.listening.values()):
                    if other is not listening:
                        other.close()  # only the parent and its owner hold a socket: it closes with its worker
                for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
                    signal.signal(sig, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.default_int_handler)
                code = self.serve(slot, listening)
            except PolicyEngineError as error:  # a pack or a store that broke since serve started: said plainly
                with contextlib.suppress(Exception):
                    self._say(f"worker {slot} cannot start: {error}")
            except BaseException:
                with contextlib.suppress(Exception):
                    traceback.print_exc(file=self.err)
            finally:
                with contextlib.suppress(Exception):
                    self.err.flush()
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        self.workers[pid] = _Worker(slot, pid, time.monotonic())


def _status(status: int) -> str:
    """A wait status in words."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(ValueError):
            return f"signal {sig} ({signal.Signals(sig).name})"
        return f"signal {sig}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
