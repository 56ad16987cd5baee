"""The audit recorder: the record of every call written by the one writer, from a registry or an adapter.

On a registry, install it as a result observer: `registry.on_result(AuditRecorder(path, packs=layers.packs))`.
The adapters (LangChain, OpenAI Agents SDK) call `evaluation` with what their gate decided. Its
own failures are counted (`failures`, `last_error`) and logged, never raised: the call path is
never blocked by it (the Claude Code hook, which can refuse a call it cannot record, uses the
writer directly).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from policyengine.audit._record import evaluation_record, pack_set_digest, result_record
from policyengine.audit._redaction import AuditRedaction, PacksGiven
from policyengine.audit._writer import AuditWriter, Warn
from policyengine.values.results import Approval, ToolResult

if TYPE_CHECKING:
    from policyengine.enforce.evaluate import Evaluation

__all__ = ["AuditRecorder"]

log = logging.getLogger("policyengine.audit")


class AuditRecorder:
    """Writes one audit record per call to a private JSON Lines file (or a stream); failures counted, never raised.

    A `target` of None writes no file: the records only go to OpenTelemetry (`otel`).

    `packs` (a sequence, or a function returning the packs in force) gives the redaction rules
    applied to every record and the `pack_digest` it carries; `otel` exports each record as an
    OpenTelemetry span and log record (True: to the OTLP endpoint the OTEL_* environment names).
    """

    def __init__(
        self,
        target: str | Path | IO[str] | None,
        *,
        packs: PacksGiven = (),
        otel: bool | Callable[[Mapping[str, Any]], None] = False,
        front_end: str = "registry",
        warn: Warn | None = None,
    ) -> None:
        exporter: Callable[[Mapping[str, Any]], None] | None
        if otel is True:
            from policyengine.audit._otel import OtelExport

            exporter = OtelExport()
        else:
            exporter = otel or None
        self._packs = packs
        self.front_end = front_end
        self.writer = AuditWriter(target, redaction=AuditRedaction(packs), otel=exporter, warn=warn)
        self._lock = threading.Lock()
        self.failures = 0
        self.written = 0
        self.last_error: str | None = None

    @property
    def pack_digest(self) -> str | None:
        """The digest of the packs in force, as records carry it."""
        packs = self._packs() if callable(self._packs) else self._packs
        return pack_set_digest(tuple(packs))

    def __call__(self, result: ToolResult) -> None:
        """Write the record of a call a registry ran (a result observer)."""
        try:
            record = result_record(result, front_end=self.front_end, pack_digest=self.pack_digest)
        except Exception as error:
            self._fail(result.call_id, error)
            return
        self.write(record)

    def evaluation(
        self,
        evaluation: Evaluation,
        *,
        name: str,
        arguments: Any,
        call_id: str | None,
        agent: str,
        session_id: str | None = None,
        cwd: str | None = None,
        approval: Approval | None = None,
    ) -> None:
        """Write the record of a call an adapter's gate decided (and reviewed, once `post` is set)."""
        try:
            record = evaluation_record(
                evaluation,
                front_end=self.front_end,
                name=name,
                arguments=arguments,
                call_id=call_id,
                agent=agent,
                session_id=session_id,
                cwd=cwd,
                approval=approval,
                pack_digest=self.pack_digest,
            )
        except Exception as error:
            self._fail(call_id, error)
            return
        self.write(record)

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one record through the writer; a failure is counted and logged."""
        try:
            self.writer.write(record)
        except Exception as error:
            self._fail(record.get("call_id"), error)
            return
        with self._lock:
            self.written += 1

    def _fail(self, call_id: object, error: Exception) -> None:
        with self._lock:
            self.failures += 1
            self.last_error = f"{type(error).__name__}: {error}"
        log.error("policyengine audit: could not record call %s: %s", call_id, self.last_error)

    def close(self) -> None:
        """Close the file (a stream passed in stays open) and flush the OpenTelemetry exporter."""
        self.writer.close()
        close = getattr(self.writer.otel, "close", None)
        if callable(close):
            close()
