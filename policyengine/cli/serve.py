"""The serve verb: the packs as an HTTP decision service (Starlette on Uvicorn); docs/serve.md."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import math
import os
import shutil
import socket
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from policyengine.errors import UsageError, install_hint
from policyengine.service.http_protocol import DEFAULT_HEADER_TIMEOUT as HEADER_TIMEOUT
from policyengine.service.http_protocol import HTTP_PARSERS

NAME = "serve"
HELP = "serve the packs' decisions over HTTP (decide, review, metrics, hot reload)"

# The defaults, repeated from policyengine/service/app.py so `--help` needs no Starlette (a test
# holds them equal); the head deadline's comes from http_protocol.py, which imports none.
MAX_BODY_BYTES = 1 << 20
BODY_TIMEOUT = 10.0
DECISION_TIMEOUT = 5.0
KEEP_ALIVE_TIMEOUT = 5.0
RELOAD_INTERVAL = 2.0
MAX_CONNECTIONS = 1024
PORT = 8484
SESSION_TTL = 24 * 3600.0  # sessions/stores.DEFAULT_TTL: a day after a session's last entry
_SERVER_MODULES = {"starlette", "uvicorn", "prometheus_client", "anyio", "h11", "click"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The serve verb's options."""
    from policyengine.cli.pack_folders import PACK_HELP, resolve_pack  # a folder, else a shipped pack's name

    parser.add_argument("--pack", action="append", default=[], type=resolve_pack, metavar="PACK", help=PACK_HELP)
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=PORT, help=f"the port to listen on (default {PORT}; 0: any free one)"
    )
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        help="a file holding the bearer token every /v1/ request must carry (default: no authentication)",
    )
    logs = parser.add_mutually_exclusive_group()
    logs.add_argument(
        "--audit",
        metavar="FILE",
        dest="decision_log",
        help="append every decision to FILE (JSON Lines, dry-run replays it)",
    )
    logs.add_argument(
        "--decision-log",
        metavar="TARGET",
        dest="decision_log",
        help="the decision log: FILE.jsonl (rotated), FILE.db or sqlite:PATH (SQLite)",
    )
    parser.add_argument(
        "--otel",
        action="store_true",
        help="export each decision as an OpenTelemetry span and log (OTLP/HTTP to the OTEL_* environment's endpoint; "
        "needs the [otel] extra)",
    )
    parser.add_argument(
        "--sessions",
        metavar="SPEC",
        help="where sessions live: sqlite:PATH (one machine), redis://HOST:PORT/DB (replicas sharing sessions) "
        "or memory (default: SQLite beside the decision log, FILE.sessions.sqlite3, else "
        "$XDG_STATE_HOME/policyengine/serve-sessions.sqlite3)",
    )
    parser.add_argument(
        "--session-ttl",
        type=float,
        default=SESSION_TTL,
        metavar="SECONDS",
        help=f"a session expires this long after its last entry (default {SESSION_TTL:g}, a day)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=MAX_BODY_BYTES,
        metavar="N",
        help=f"largest request body; a larger one is refused with 413 (default {MAX_BODY_BYTES:,})",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=BODY_TIMEOUT,
        metavar="SECONDS",
        help=f"longest a client may take to send a body; then 408 (default {BODY_TIMEOUT:g})",
    )
    parser.add_argument(
        "--decision-timeout",
        type=float,
        default=DECISION_TIMEOUT,
        metavar="SECONDS",
        help=f"a large call (64 KiB or more, decided beside the event loop) not decided by then is denied "
        f"(default {DECISION_TIMEOUT:g})",
    )
    parser.add_argument(
        "--header-timeout",
        type=float,
        default=HEADER_TIMEOUT,
        metavar="SECONDS",
        help=f"a connection that sends no complete request head for this long is closed (default {HEADER_TIMEOUT:g})",
    )
    parser.add_argument(
        "--keep-alive-timeout",
        type=float,
        default=KEEP_ALIVE_TIMEOUT,
        metavar="SECONDS",
        help=f"how long an idle connection stays open (default {KEEP_ALIVE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=MAX_CONNECTIONS,
        metavar="N",
        help=f"connections and requests at once; more are answered 503 (default {MAX_CONNECTIONS})",
    )
    parser.add_argument(
        "--reload-interval",
        type=float,
        default=RELOAD_INTERVAL,
        metavar="SECONDS",
        help=f"how often the pack folders are checked for changes (default {RELOAD_INTERVAL:g}; 0: only on SIGHUP)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="where calls that carry no cwd start (default: the packs' cwd)")
    parser.add_argument(
        "--tools", metavar="FILE", help="tool catalog: validate arguments against it (default: the packs' `catalog:`)"
    )
    parser.add_argument(
        "--unknown-tools",
        choices=["invalid", "decide"],
        default="invalid",
        help="with a catalog, a tool it lacks is invalid (default, as dry-run), or decided without validation",
    )
    parser.add_argument(
        "--bundle", metavar="URL|PATH", help="a signed pack bundle to serve (first layer) and poll for new versions"
    )
    parser.add_argument("--public-key", metavar="KEY", help="the Ed25519 public key --bundle is signed with")
    parser.add_argument(
        "--http",
        choices=HTTP_PARSERS,
        default="auto",
        help="the HTTP/1.1 parser: httptools (C, installed with agent-policyengine[server]) or h11 (pure Python); "
        "auto: httptools when installed (default)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes answering on the one port (default: one per core; 1: this process alone; "
        "--sessions memory: 1)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"], help="(default info)"
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`serve`: check the options, load the packs, then serve until SIGTERM or SIGINT (drained, exit 0)."""
    if not args.pack and not args.bundle:
        raise UsageError("serve needs packs to decide with", hint="give --pack DIR (repeatable) or --bundle URL|PATH")
    if bool(args.bundle) != bool(args.public_key):
        raise UsageError("--bundle and --public-key go together", hint="give the bundle and the key it is signed with")
    if args.max_body_bytes < 1024:
        raise UsageError(
            f"--max-body-bytes {args.max_body_bytes} is too small", hint="give at least 1024 (default 1 MiB)"
        )
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port", hint="give 1-65535, or 0 for any free port")
    if args.max_connections < 1:
        raise UsageError(f"--max-connections {args.max_connections} is not a count", hint="give 1 or more")
    _positive("--body-timeout", args.body_timeout)
    _positive("--decision-timeout", args.decision_timeout)
    _positive("--header-timeout", args.header_timeout)
    _positive("--keep-alive-timeout", args.keep_alive_timeout)
    _positive("--session-ttl", args.session_ttl)
    if not (math.isfinite(args.reload_interval) and args.reload_interval >= 0):
        raise UsageError(f"--reload-interval {args.reload_interval:g} is not a number of seconds", hint="e.g. 2, or 0")
    if args.cwd is not None and not os.path.isdir(args.cwd):
        raise UsageError(f"--cwd {args.cwd} is not a directory", hint="give the directory relative paths start from")
    token = read_token(args.token_file, err) if args.token_file else None
    workers = _workers(args)
    try:
        service: Any = importlib.import_module("policyengine.service.app")
        uvicorn: Any = importlib.import_module("uvicorn")
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in _SERVER_MODULES:
            raise
        raise UsageError(
            f"serve needs Starlette, Uvicorn and prometheus-client, which are not installed ({error.name} is missing)",
            hint=install_hint("server"),
        ) from None
    from policyengine.service.decision_log import open_decision_log
    from policyengine.service.http_protocol import protocol_class
    from policyengine.service.packs_state import PacksState
    from policyengine.service.workers import Supervisor, run_server

    _log_to(err, args.log_level)
    workdir: str | None = None
    share: str | None = None
    exports: list[Any] = []  # the OpenTelemetry exporters this process built: flushed before it exits

    def build(slot: int) -> tuple[Any, Any, Any, Any]:
        """The whole service in this process (the parent's check, or a worker): app, packs, sessions, log."""
        folders = list(args.pack)
        poll = None
        if args.bundle:
            assert workdir is not None
            bundle_folders, poll = _bundle(args.bundle, args.public_key, os.path.join(workdir, f"w{slot}"), folders)
            folders = bundle_folders
        sessions = open_sessions(args.sessions, args.decision_log, args.session_ttl)
        state = PacksState(folders, cwd=args.cwd, tools=args.tools, unknown_tools=args.unknown_tools, sessions=sessions)
        if poll is not None:
            poll = poll(state)
        decision_log = open_decision_log(args.decision_log) if args.decision_log else None
        otel = None
        if args.otel:
            from policyengine.audit import OtelExport

            otel = OtelExport()
            exports.append(otel)
        app = service.create_app(
            state,
            token=token,
            decision_log=decision_log,
            max_body_bytes=args.max_body_bytes,
            body_timeout=args.body_timeout,
            decision_timeout=args.decision_timeout,
            reload_interval=args.reload_interval or None,
            poll=poll,
            metrics_share=Path(share) if share else None,
            otel=otel,
        )
        return app, state, sessions, decision_log

    def config(app: Any) -> Any:
        return uvicorn.Config(
            app,
            log_level=args.log_level,
            http=protocol,
            timeout_keep_alive=args.keep_alive_timeout,
            limit_concurrency=args.max_connections,
            lifespan="on",
            server_header=False,
            proxy_headers=False,
            access_log=args.log_level == "debug",
        )

    def worker(slot: int, listening: socket.socket) -> int:
        app = build(slot)[0]
        try:
            run_server(config(app), listening)
        finally:
            close_exports()
        return 0

    def close_exports() -> None:
        while exports:
            exports.pop().close()  # what is batched is sent before the process exits (or forks its workers)

    def cleanup(slot: int) -> None:
        if workdir is not None:  # a dead worker's bundle folders: its replacement fetches its own
            shutil.rmtree(os.path.join(workdir, f"w{slot}"), ignore_errors=True)

    try:
        if args.bundle:
            workdir = tempfile.mkdtemp(prefix="policyengine-bundle-")
        if workers > 1:
            share = tempfile.mkdtemp(prefix="policyengine-metrics-")
        # Built here whatever the worker count: a pack, store or log that cannot open stops serve before it listens.
        app, state, sessions, decision_log = build(0)
        try:
            protocol = protocol_class(args.http, args.header_timeout)
        except ImportError:
            raise UsageError(
                "--http httptools: httptools is not installed",
                hint=f"{install_hint('server')}, or --http h11",
            ) from None
        share_port = workers > 1 and balanced_accepts()
        sock = bind(args.host, args.port, share_port=share_port)
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        print(f"policyengine serve: http://{shown}:{port} (packs {state.current.digest})", file=err, flush=True)
        print(f"policyengine serve: sessions in {describe_sessions(sessions)}", file=err, flush=True)
        if workers == 1:
            run_server(config(app), sock)
            return 0
        # One socket a worker where the kernel balances them (Linux's SO_REUSEPORT hashes each
        # connection to one): on one shared socket the first worker's loop accepted a burst of
        # keep-alive connections whole (every one of 64 in 2 of 6 wrk runs, benchmarks/README.md).
        listen = (lambda: bind(args.host, port, share_port=True)) if share_port else None
        # Each worker opens its own: a SQLite connection or a log descriptor must not cross a fork.
        if decision_log is not None:
            decision_log.close()
        if hasattr(sessions, "close"):
            sessions.close()
        close_exports()  # an exporter's threads do not cross a fork: each worker builds its own
        del app, state, sessions, decision_log
        cleanup(0)
        return Supervisor(sock, workers, worker, err, cleanup, listen=listen).run()
    finally:
        close_exports()
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        if share is not None:
            shutil.rmtree(share, ignore_errors=True)


def _workers(args: argparse.Namespace) -> int:
    """How many worker processes: --workers, else one per core (one for sessions in memory, which is per process)."""
    memory = (args.sessions or "").strip() == "memory"
    if args.workers is None:
        return 1 if memory else max(1, os.cpu_count() or 1)
    if args.workers < 1:
        raise UsageError(f"--workers {args.workers} is not a count", hint="give 1 or more (default: one per core)")
    if memory and args.workers > 1:
        raise UsageError(
            f"--sessions memory keeps sessions in one process, and --workers {args.workers} runs several",
            hint="give --sessions sqlite:PATH or redis://HOST:PORT/DB (shared by the workers), or --workers 1",
        )
    return int(args.workers)


def default_sessions(decision_log: str | None) -> str:
    """The store when --sessions is not given: SQLite beside the decision log, else in the user's state folder."""
    if decision_log:
        from policyengine.service.decision_log import sqlite_path

        log = Path(sqlite_path(decision_log))
        return "sqlite:" + str(log.with_name(log.stem + ".sessions.sqlite3"))
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return "sqlite:" + os.path.join(state, "policyengine", "serve-sessions.sqlite3")


def open_sessions(spec: str | None, decision_log: str | None, ttl: float) -> Any:
    """The session store every snapshot shares; one that cannot open stops the service before it listens."""
    from policyengine.errors import SessionStoreError
    from policyengine.sessions.stores import open_store

    spec = spec or default_sessions(decision_log)
    try:
        return open_store(spec, ttl=ttl)
    except SessionStoreError as error:
        hint = (
            "start the Redis server, check the URL (redis://HOST:PORT/DB), then " + install_hint("redis")
            if spec.startswith(("redis://", "rediss://", "unix://"))
            else "give --sessions sqlite:PATH in a folder this user can write, redis://HOST:PORT/DB, or memory"
        )
        raise UsageError(f"--sessions: cannot open the session store {spec}: {error.message}", hint=hint) from None


def describe_sessions(store: Any) -> str:
    """Where the store keeps sessions, for the startup line (a Redis URL without its password)."""
    if hasattr(store, "path"):
        return f"sqlite:{store.path} (ttl {store.ttl:g}s)"
    if hasattr(store, "url"):
        from urllib.parse import urlsplit

        url = urlsplit(store.url)
        shown = url._replace(netloc=url.hostname + (f":{url.port}" if url.port else "")) if url.hostname else url
        return f"{shown.geturl()} (ttl {store.ttl:g}s)"
    return f"memory (this process only, ttl {store.ttl:g}s)"


def balanced_accepts() -> bool:
    """Whether the kernel spreads connections over sockets sharing a port (Linux; elsewhere the last one gets them)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def bind(host: str, port: int, *, share_port: bool = False) -> socket.socket:
    """A listening socket on host:port (port 0: a free one), bound before the server starts so the URL is known.

    `share_port`: with SO_REUSEPORT, so that each worker can listen on a socket of its own (workers.py).
    """
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if share_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as error:
        raise UsageError(
            f"cannot listen on {host}:{port}: {error.strerror or error}",
            hint="give another --port (0: any free one) or a --host this machine has",
        ) from None
    sock.set_inheritable(True)
    return sock


def read_token(path: str, err: TextIO) -> str:
    """The bearer token in `path` (surrounding whitespace stripped); warns when others may read the file."""
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
        mode = os.stat(path).st_mode
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(
            f"--token-file: cannot read {path}: {error}", hint="give a readable file holding the token"
        ) from None
    if not text or any(c.isspace() for c in text) or not text.isprintable():
        raise UsageError(
            f"--token-file {path} does not hold one token", hint="write one line of printable characters, no spaces"
        )
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        print(f"policyengine serve: warning: {path} is readable by others; chmod 600 {path}", file=err, flush=True)
    return text


def _bundle(source: str, public_key: str, workdir: str, packs: list[str]) -> tuple[list[str], Any]:
    """The bundle's verified folder first, then `packs`; and the poll that reloads a new version of it."""
    from policyengine.service.bundles import BundleError, BundleSource
    from policyengine.service.packs_state import PacksState

    try:
        bundles = BundleSource(source, public_key, workdir)
        first = bundles.poll()
    except BundleError as error:
        raise UsageError(f"--bundle {source}: {error}", hint="serve a bundle that verifies with --public-key") from None
    assert first is not None  # the first poll of a source always fetches

    def poller(state: PacksState) -> Any:
        async def poll() -> None:
            try:
                folder = await asyncio.to_thread(bundles.poll)
            except BundleError as error:
                state.report_failure(f"bundle {source} refused: {error}")
                return
            if folder is not None:
                await state.reload_async([str(folder), *packs])

        return poll

    return [str(first), *packs], poller


def _log_to(err: TextIO, level: str) -> None:
    """Reloads and their failures go to stderr beside Uvicorn's own lines."""
    logger = logging.getLogger("policyengine.service")
    if not logger.handlers:
        handler = logging.StreamHandler(err)
        handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(level.upper())


def _positive(option: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{option} {value:g} is not a positive number of seconds", hint=f"e.g. {option} 10")
