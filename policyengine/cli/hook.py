"""The hook verb: answer an agent's hook protocol (Claude Code) on stdin and stdout.

An agent runs the hook once per tool call, in a fresh process, so this verb is the CLI's hot
path. `cli/main.py` hands `policyengine hook ...` straight to `main` here, which parses its own
options and loads nothing it does not need.

A fresh process that decides alone pays for Python, the rule language and, for shell commands,
tree-sitter and the secret detector (~130 ms over a bare interpreter even with the packs from
the compiled-pack cache, packs/cache.py). So the first call also starts a warm helper: one
background process per pack set, holding the packs loaded, answering over a Unix socket in
the cache folder. Later calls hand it their event (~20-30 ms over a bare interpreter).
The helper answers exactly as the process would (the same `Hook.respond`), reloads the packs
when a file they were read from changes, serves only its own user (the folder is 0700, and the
peer's uid is checked), and exits after 15 idle minutes or when the engine's code changes.
Anything wrong with it (missing, stale, busy past the timeout, an answer for other packs) and
the call is decided in-process. `POLICYENGINE_HOOK_HELPER=off` (or `POLICYENGINE_CACHE=off`)
never starts one.

Every failure (unreadable input, a pack or catalog that does not load, a fault of the engine)
exits 2 with the reason on stderr and nothing on stdout: Claude Code's protocol reads that as a
block, so a broken hook refuses calls instead of letting them through. Nothing is ever raised.

Sessions (docs/claude-code.md, "Sessions") live in `sessions.sqlite3` in the cache folder, or
where `--sessions SPEC` / `POLICYENGINE_HOOK_SESSIONS` say: every process and the helper open
the same store, so the helper holds nothing a restart would lose. A helper serves one store.

Helper wire format, both ways: frames of a 4-byte big-endian length and that many bytes. The
client sends a JSON header ({"v": 1, "packs": [...], "audit": path or null, "sessions": spec or
null}) and the event's raw bytes; the helper answers one JSON frame ({"v", "packs", "sessions",
"exit", "out", "err"}, or {"v", "packs", "sessions", "stale": true} when it is about to exit).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from policyengine.errors import UsageError

NAME = "hook"
HELP = "answer a Claude Code hook event (stdin JSON) with the packs' decision"
EXIT_OK, EXIT_BLOCK = 0, 2

HELPER_ENV = "POLICYENGINE_HOOK_HELPER"
SESSIONS_ENV = "POLICYENGINE_HOOK_SESSIONS"  # the session store, when --sessions is not given
IDLE_SECONDS = 15 * 60.0  # a helper nobody called for this long exits
REPLY_SECONDS = 10.0  # a helper that takes longer is given up on: the call is decided in-process
MAX_EVENT_BYTES = 64 << 20  # as adapters/claude_code.py: larger events are refused, not parsed
MAX_REPLY_BYTES = 16 << 20
# The layers whose code the helper runs: an edit or an upgrade of any of them retires it.
HELPER_LAYERS = (  # tests/test_architecture.py checks it holds every layer the helper imports
    "values",
    "tools",
    "arguments",
    "language",
    "sessions",
    "packs",
    "runtime",
    "enforce",
    "audit",  # the helper writes the audit record: an edit of its redaction must retire the helper
    "adapters",
    "cli",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The hook verb's options."""
    parser.add_argument("agent", choices=["claude-code"], help="whose hook protocol to speak")
    from policyengine.cli.pack_folders import PACK_HELP, resolve_pack  # a folder, else a shipped pack's name

    parser.add_argument("--pack", action="append", required=True, type=resolve_pack, metavar="PACK", help=PACK_HELP)
    parser.add_argument(
        "--audit", metavar="FILE", help="append one audit record per decided call (credentials redacted, file 0600)"
    )
    parser.add_argument(
        "--otel",
        action="store_true",
        help="export each call's record as an OpenTelemetry span and log (OTEL_* environment; decided in-process)",
    )
    parser.add_argument(
        "--sessions",
        metavar="SPEC",
        help="where session state lives: sqlite:PATH or redis://HOST:PORT/DB "
        "(default: $POLICYENGINE_HOOK_SESSIONS, else sessions.sqlite3 in the cache folder)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the warm helper itself


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting: a bad option is a block too (exit 2, stderr)."""

    def error(self, message: str) -> Any:
        raise UsageError(f"{self.prog}: {message}", hint=f"run `{self.prog} --help`")


def main(argv: list[str], *, out: TextIO, err: TextIO) -> int:
    """`policyengine hook ...` without the rest of the CLI: its own parser, then `run`."""
    import contextlib

    parser = _Parser(prog="policyengine hook", description=HELP)
    add_arguments(parser)
    parser.add_argument("--color", choices=["auto", "always", "never"], default="never", help=argparse.SUPPRESS)
    try:
        with contextlib.redirect_stdout(out):  # --help prints to the given stream
            args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)
    except UsageError as error:
        _say(err, f"policyengine hook: {error}\n")
        return EXIT_BLOCK
    return run(args, out, err, False)


def run(args: argparse.Namespace, out: TextIO, err: TextIO, color: bool) -> int:
    """`hook claude-code`: read one event on stdin, print the answer; 2 and the reason on stderr on any failure."""
    try:
        sessions = _store_spec(args.sessions)
        if args.serve:
            return _serve(args.pack, sessions=sessions)
        raw = _stdin()
        folders = [os.path.realpath(folder) for folder in args.pack]
        audit = os.path.abspath(args.audit) if args.audit else None
        # With --otel the call is decided here: the exporter sends from the process holding the caller's OTEL_*.
        place = _helper_place() if not args.otel else None
        answered = _ask_helper(place, folders, raw, audit, sessions) if place is not None else None
        alone = answered is None
        if answered is None:
            from policyengine.adapters.claude_code import Hook
            from policyengine.packs.cache import cache_dir

            otel = _exporter() if args.otel else None
            try:
                answered = Hook(folders, cache_dir(), sessions).respond(raw, audit, otel)
            finally:
                if otel is not None:
                    otel.close()  # one call per process: what it batched is sent before the answer is out
        code, stdout, stderr = answered
        _write(out, err, stdout, stderr)
        if alone and place is not None:
            _start_helper(place, folders, sessions)  # after the answer is out: the call does not wait for it
        return code
    except UsageError as error:  # a --sessions the hook cannot use: every call is refused until it is fixed
        _say(err, f"policyengine hook: {error}\n")
        return EXIT_BLOCK
    except Exception as error:  # stdin unreadable, stdout gone: a block, said where it can be
        _say(err, f"policyengine hook: internal error ({type(error).__name__}: {error}); the call is refused\n")
        return EXIT_BLOCK


def _exporter() -> Any:
    """The OpenTelemetry exporter of --otel (UsageError when the [otel] extra is missing: every call is refused)."""
    from policyengine.audit import OtelExport

    return OtelExport()


def _store_spec(given: str | None) -> str | None:
    """The store `--sessions` (else the environment) names, absolute; None for the default. UsageError when unusable."""
    spec = given if given is not None else os.environ.get(SESSIONS_ENV) or None
    if spec is None:
        return None
    spec = spec.strip()
    if spec == "memory":
        raise UsageError(
            "--sessions memory keeps nothing between hook processes (Claude Code starts one per event)",
            hint="use sqlite:PATH (the default is sessions.sqlite3 in the cache folder) or redis://HOST:PORT/DB",
        )
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return spec
    path = spec.removeprefix("sqlite:")
    if not path:
        raise UsageError(f"--sessions {spec!r} names no file", hint="write sqlite:/absolute/path/sessions.sqlite3")
    # Claude Code runs hooks in the session's directory, and the helper in /: a relative path is pinned here.
    return "sqlite:" + os.path.abspath(os.path.expanduser(path))


def _write(out: TextIO, err: TextIO, stdout: str, stderr: str) -> None:
    if stdout:
        out.write(stdout)
        out.flush()
    if stderr:
        _say(err, stderr)


def _say(err: TextIO, text: str) -> None:
    try:
        err.write(text)
        err.flush()
    except Exception:  # stderr is gone too: the exit code still blocks
        pass


def _stdin() -> bytes:
    """stdin's bytes (a text stream without a buffer, as tests give, is encoded back)."""
    stream = sys.stdin
    if stream is None:
        return b""
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        data: bytes = buffer.read(MAX_EVENT_BYTES + 1)
        return data
    return str(stream.read(MAX_EVENT_BYTES + 1)).encode("utf-8", "surrogatepass")


# -- the warm helper: client --------------------------------------------------------------


def _helper_place() -> Path | None:
    """The cache folder, when a helper may serve from it (POSIX, not turned off, private to the user)."""
    if os.environ.get(HELPER_ENV, "").strip().lower() in ("0", "off", "no", "false") or sys.platform == "win32":
        return None
    from policyengine.packs.cache import cache_dir

    place = cache_dir()
    if place is None:
        return None
    try:
        info = os.stat(place)
    except OSError:
        return place  # not there yet: the first call creates it (privately) while it decides
    import stat

    return place if stat.S_ISDIR(info.st_mode) and _ours(info) and not info.st_mode & 0o077 else None


def _ours(info: os.stat_result) -> bool:
    getuid = getattr(os, "getuid", None)
    return getuid is None or info.st_uid == getuid()


def _address(place: Path, folders: list[str], sessions: str | None = None) -> tuple[Path, Path]:
    """The helper's socket and lock for this pack set and session store (and this Python): a name the path allows."""
    import zlib

    # Without --sessions the identity is what it was before sessions: a running helper stays valid.
    named = [folders] if sessions is None else [folders, sessions]
    identity = json.dumps([sys.executable, str(Path(__file__).resolve()), *named]).encode("utf-8")
    name = f"hook-{zlib.crc32(identity):08x}{zlib.adler32(identity):08x}"
    return place / f"{name}.sock", place / f"{name}.lock"


def _ask_helper(
    place: Path, folders: list[str], raw: bytes, audit: str | None, sessions: str | None = None
) -> tuple[int, str, str] | None:
    """The helper's (exit, stdout, stderr) for the event; None when there is none that can answer."""
    import socket
    import stat

    address, _lock = _address(place, folders, sessions)
    try:
        info = os.lstat(address)
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or not _ours(info):
        return None  # not a socket of ours: never talk to it
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(REPLY_SECONDS)
            conn.connect(str(address))
            header = {"v": 1, "packs": folders, "audit": audit, "sessions": sessions}
            _send(conn, json.dumps(header).encode("utf-8"))
            _send(conn, raw)
            reply = json.loads(_receive(conn, MAX_REPLY_BYTES))
        if reply.get("v") != 1 or reply.get("packs") != folders or reply.get("sessions") != sessions:
            return None
        if reply.get("stale"):
            return None
        code, stdout, stderr = reply["exit"], reply["out"], reply["err"]
        if type(code) is not int or not isinstance(stdout, str) or not isinstance(stderr, str):
            return None
        return code, stdout, stderr
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def _start_helper(place: Path, folders: list[str], sessions: str | None = None) -> None:
    """Start the helper for this pack set in the background, unless one holds its lock (it runs or starts)."""
    lock = _address(place, folders, sessions)[1]
    if _locked(lock):
        return
    import contextlib
    import subprocess

    command = [sys.executable, "-m", "policyengine", "hook", "claude-code", "--serve"]
    for folder in folders:
        command += ["--pack", folder]
    if sessions is not None:
        command += ["--sessions", sessions]
    # It starts in /, so it finds this very package even when only the caller's directory held it.
    package_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    # No helper (OSError): every call decides in-process, as this one did.
    with contextlib.suppress(OSError):
        # Detached: its own session, no inherited pipes (Claude Code waits for the hook's stdout to close).
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            cwd="/",
            env=env,
        )


def _locked(lock: Path) -> bool:
    """Whether a helper holds the lock (so none should be started)."""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the probe's lock
    return False


def _send(conn: Any, data: bytes) -> None:
    conn.sendall(len(data).to_bytes(4, "big") + data)


def _receive(conn: Any, limit: int) -> bytes:
    size = int.from_bytes(_exactly(conn, 4), "big")
    if size > limit:
        raise ValueError(f"a frame of {size:,} bytes is over the {limit:,}-byte limit")
    return _exactly(conn, size)


def _exactly(conn: Any, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise ValueError("the connection closed mid-frame")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# -- the warm helper: server --------------------------------------------------------------


def _serve(packs: list[str], idle: float = IDLE_SECONDS, *, sessions: str | None = None) -> int:
    """Answer events for one pack set until `idle` seconds pass unasked; 0 at once when another helper serves."""
    import contextlib
    import fcntl
    import signal
    import socket

    from policyengine.adapters.claude_code import Hook
    from policyengine.packs.cache import cache_dir, fingerprint

    folders = [os.path.realpath(folder) for folder in packs]
    place = _helper_place()
    if place is None:
        return EXIT_OK
    place.mkdir(mode=0o700, parents=True, exist_ok=True)
    address, lock = _address(place, folders, sessions)
    lock_fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock_fd)
        return EXIT_OK  # another helper serves (or starts to)
    os.ftruncate(lock_fd, 0)
    os.write(lock_fd, f"{os.getpid()}\n".encode())  # who serves, for whoever must stop it (SIGTERM)
    with contextlib.suppress(ValueError):  # not the main thread (tests serve from one): no handler to set
        signal.signal(signal.SIGTERM, lambda _signal, _frame: sys.exit(0))  # leave through `finally`: no stale socket
    hook = Hook(folders, cache_dir(), sessions)
    with contextlib.suppress(Exception):
        hook.policy()  # loaded before the first call arrives; a problem is answered per call
    code = fingerprint(HELPER_LAYERS)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(address)  # the lock is ours: a socket left there is a dead helper's
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(address))
        os.chmod(address, 0o600)
        inode = os.stat(address).st_ino
        server.listen(64)
        server.settimeout(idle)
        while True:
            try:
                conn, _peer = server.accept()
            except TimeoutError:
                return EXIT_OK  # idle
            with conn:
                if not _serve_one(conn, hook, folders, code, fingerprint, sessions):
                    return EXIT_OK  # the engine changed under it: the next call starts a new one
            try:
                if os.stat(address).st_ino != inode:
                    return EXIT_OK  # its socket was replaced or removed
            except OSError:
                return EXIT_OK
    finally:
        server.close()
        with contextlib.suppress(OSError):
            if os.stat(address).st_ino == inode:
                os.unlink(address)
        os.close(lock_fd)


def _serve_one(
    conn: Any, hook: Any, folders: list[str], code: str, fingerprint: Any, sessions: str | None = None
) -> bool:
    """Answer one connection; False when the helper must exit (its code is stale)."""
    conn.settimeout(REPLY_SECONDS)
    try:
        if not _same_user(conn):
            return True
        header = json.loads(_receive(conn, 1 << 16))
        raw = _receive(conn, MAX_EVENT_BYTES + 1)
        audit = header.get("audit")
        stale = json.dumps({"v": 1, "packs": folders, "sessions": sessions, "stale": True}).encode("utf-8")
        if header.get("v") != 1 or header.get("packs") != folders or header.get("sessions") != sessions:
            _send(conn, stale)
            return True
        if fingerprint(HELPER_LAYERS) != code:
            _send(conn, stale)
            return False
        if audit is not None and (not isinstance(audit, str) or not os.path.isabs(audit)):
            return True
        exit_code, stdout, stderr = hook.respond(raw, audit)
        reply = {"v": 1, "packs": folders, "sessions": sessions, "exit": exit_code, "out": stdout, "err": stderr}
        _send(conn, json.dumps(reply).encode("utf-8"))
    except (OSError, ValueError, AttributeError):
        pass  # a client that went away or sent garbage: it decides in-process
    return True


def _same_user(conn: Any) -> bool:
    """Whether the peer runs as this user (Linux SO_PEERCRED; elsewhere the 0700 folder is the fence)."""
    import socket
    import struct

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    return bool(uid == os.getuid())
