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
import tempfile
from pathlib import Path
from typing import Any, TextIO

from policyengine.errors import UsageError
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
    parser.add_argument("--pack", action="append", default=[], metavar="DIR", help="a policy pack (repeatable)")
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
        help="the HTTP/1.1 parser: httptools (C, installed with policyengine[server]) or h11 (pure Python); "
        "auto: httptools when installed (default)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"], help="(default info)"
    )


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`serve`: check the options, load the packs, then serve until interrupted (SIGINT, SIGTERM)."""
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
    try:
        service: Any = importlib.import_module("policyengine.service.app")
        uvicorn: Any = importlib.import_module("uvicorn")
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in _SERVER_MODULES:
            raise
        raise UsageError(
            f"serve needs Starlette, Uvicorn and prometheus-client, which are not installed ({error.name} is missing)",
            hint="pip install '.[server]' (in a policyengine checkout)",
        ) from None
    from policyengine.service.decision_log import open_decision_log
    from policyengine.service.http_protocol import protocol_class
    from policyengine.service.packs_state import PacksState

    _log_to(err, args.log_level)
    workdir: str | None = None
    otel: Any = None
    try:
        folders = list(args.pack)
        poll = None
        if args.bundle:
            workdir = tempfile.mkdtemp(prefix="policyengine-bundle-")
            bundle_folders, poll = _bundle(args.bundle, args.public_key, workdir, folders)
            folders = bundle_folders
        sessions = open_sessions(args.sessions, args.decision_log, args.session_ttl)
        state = PacksState(folders, cwd=args.cwd, tools=args.tools, unknown_tools=args.unknown_tools, sessions=sessions)
        if poll is not None:
            poll = poll(state)
        decision_log = open_decision_log(args.decision_log) if args.decision_log else None
        if args.otel:
            from policyengine.audit import OtelExport

            otel = OtelExport()
        app = service.create_app(
            state,
            token=token,
            decision_log=decision_log,
            max_body_bytes=args.max_body_bytes,
            body_timeout=args.body_timeout,
            decision_timeout=args.decision_timeout,
            reload_interval=args.reload_interval or None,
            poll=poll,
            otel=otel,
        )
        try:
            protocol = protocol_class(args.http, args.header_timeout)
        except ImportError:
            raise UsageError(
                "--http httptools: httptools is not installed",
                hint="pip install '.[server]' (in a policyengine checkout), or --http h11",
            ) from None
        sock = bind(args.host, args.port)
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        print(f"policyengine serve: http://{shown}:{port} (packs {state.current.digest})", file=err, flush=True)
        print(f"policyengine serve: sessions in {describe_sessions(sessions)}", file=err, flush=True)
        config = uvicorn.Config(
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
        asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
    finally:
        if otel is not None:
            otel.close()  # what is batched is sent before the process exits
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


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
            "start the Redis server, check the URL (redis://HOST:PORT/DB) and `pip install 'policyengine[redis]'`"
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


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one), bound before the server starts so the URL is known."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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
