"""The one audit writer: JSON Lines, one whole line per record, in a file only its owner can read.

The file is created 0600 with O_CREAT|O_EXCL, so it is never readable by others, not even for
the moment between creating and changing its mode. An existing file that others can read is
tightened to 0600 when it is ours and refused when it is not (AuditFileError), and either is said
loudly: a warning on the `policyengine.audit` logger and through `warn` (stderr by default).
Each record is redacted (`_redaction.py`) before it is encoded, then written as one line under
a lock (and an flock: parallel hook processes append to one file) and flushed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from policyengine.audit._redaction import AuditRedaction
from policyengine.errors import AuditFileError
from policyengine.runtime.audit import printable

__all__ = ["AuditWriter", "open_private"]

log = logging.getLogger("policyengine.audit")

PRIVATE = 0o600
Warn = Callable[[str], None]


def _stderr(message: str) -> None:
    with contextlib.suppress(Exception):  # stderr may be gone; the logger has said it too
        print(message, file=sys.stderr, flush=True)


def open_private(path: str | Path, *, warn: Warn | None = None) -> int:
    """An append descriptor on `path`, a file only its owner can read (created 0600, or tightened, or refused)."""
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    try:
        # O_EXCL: this call creates the file, with 0600 from its first moment (a umask only takes bits away).
        return os.open(path, flags | os.O_CREAT | os.O_EXCL, PRIVATE)
    except FileExistsError:
        pass
    if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open below; a device is no log
        raise AuditFileError(
            f"the audit file {path} is not a regular file", hint="give the path of a file (it is created 0600)"
        )
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise AuditFileError(
                f"the audit file {path} is not a regular file", hint="give the path of a file (it is created 0600)"
            )
        loose = stat.S_IMODE(info.st_mode) & 0o077
        if loose:
            getuid = getattr(os, "getuid", None)
            fchmod = getattr(os, "fchmod", None)
            if fchmod is None or (getuid is not None and info.st_uid != getuid()):
                raise AuditFileError(
                    f"the audit file {path} is readable or writable by others (mode "
                    f"{stat.S_IMODE(info.st_mode):04o}) and is not ours to tighten; audit records hold what agents did",
                    hint=f"chmod 600 {path} as its owner, or give another path",
                )
            fchmod(fd, stat.S_IMODE(info.st_mode) & ~0o077 | PRIVATE)
            message = (
                f"policyengine audit: {path} was mode {stat.S_IMODE(info.st_mode):04o} (others could read what "
                "agents did); tightened to 0600"
            )
            log.warning(message)
            (warn or _stderr)(message)
        return fd
    except BaseException:
        os.close(fd)
        raise


def encode(record: Mapping[str, Any]) -> bytes:
    """One JSON line, newline included; ASCII-escaped when the record holds text UTF-8 cannot carry."""
    try:
        text = json.dumps(record, ensure_ascii=False, default=str)
    except ValueError:
        # An integer too long for json to print (over 4,300 digits) must not hide a call: written as a string.
        record = printable(record)
        text = json.dumps(record, ensure_ascii=False, default=str)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a \ud800 escape in the call
        return (json.dumps(record, ensure_ascii=True, default=str) + "\n").encode("ascii")


class AuditWriter:
    """Writes audit records, redacted first, to a private JSON Lines file (or a text stream a caller owns).

    A `target` of None writes no file (OpenTelemetry alone was asked for).
    `write` raises (OSError, AuditFileError) so each front end decides what a lost record means:
    the hook refuses the call, the registry's recorder counts it and goes on. `otel` (an
    `OtelExport`) also gets every record, redacted, as a span and a log record.
    """

    def __init__(
        self,
        target: str | Path | IO[str] | None,
        *,
        redaction: AuditRedaction | None = None,
        otel: Callable[[Mapping[str, Any]], None] | None = None,
        keep_open: bool = True,
        warn: Warn | None = None,
    ) -> None:
        self.redaction = redaction if redaction is not None else AuditRedaction()
        self.otel = otel
        self.keep_open = keep_open
        self.warn = warn
        self._lock = threading.Lock()
        self._path: Path | None = None
        self._stream: IO[str] | None = None
        self._fd: int | None = None
        self._torn = False  # a failed write may have left part of a line behind
        self._nowhere = target is None
        if isinstance(target, (str, Path)):
            self._path = Path(target)
        elif target is not None:
            self._stream = target

    @property
    def path(self) -> Path | None:
        """The file written to (None for a stream)."""
        return self._path

    def prepare(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """The record as it will be written: redacted."""
        return self.redaction(record)

    def write(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Redact, export (OTel) and append one record as one flushed line; returns what was written."""
        written = self.prepare(record)
        data = encode(written)
        if self.otel is not None:
            try:
                self.otel(written)
            except Exception as error:  # telemetry never decides a call, nor stops its record
                log.error("policyengine audit: OpenTelemetry export failed: %s: %s", type(error).__name__, error)
        if self._nowhere:
            return written
        with self._lock:
            if self._stream is not None:
                self._write_stream(data.decode("utf-8", "surrogatepass"))
            else:
                self._write_file(data)
        return written

    def _write_stream(self, text: str) -> None:
        stream = self._stream
        assert stream is not None
        start = _tell(stream)
        try:
            # After a failure the stream may end mid-line: start on a line of our own.
            stream.write(("\n" if self._torn else "") + text)
            stream.flush()
            self._torn = False
        except Exception:
            if start is None or _tell(stream) != start:
                self._torn = True
            raise

    def _write_file(self, data: bytes) -> None:
        fd = self._fd
        if fd is None:
            assert self._path is not None
            fd = open_private(self._path, warn=self.warn)
        try:
            _lock(fd)  # parallel processes (hooks) append to one file: one whole line at a time
            if self._torn:
                data = b"\n" + data
            view = memoryview(data)
            while view:
                count = os.write(fd, view)
                self._torn = True
                view = view[count:]
            self._torn = False
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            self._fd = None  # reopen on the next record: the disk may recover
            raise
        if self.keep_open:
            _unlock(fd)
            self._fd = fd
        else:
            os.close(fd)  # releases the flock
            self._fd = None

    def close(self) -> None:
        """Close the file (a stream passed in stays open)."""
        with self._lock:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None


def _tell(stream: IO[str]) -> int | None:
    try:
        return stream.tell()
    except Exception:
        return None


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: O_APPEND writes of one line are what there is
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def _unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:
        return
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
