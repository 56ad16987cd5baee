"""The audit recorder: a result observer writing every call in the recorded-call format.

It writes the canonical value **as post-execute left it**: a value redacted by a rule is
written redacted, so secrets that policy hid never reach the audit log, and replaying the log
shows what the model and the observers actually saw. Each record is flushed as it is written:
a crash loses at most the record being written.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from policyengine.values.results import Outcome, Stage, ToolResult

log = logging.getLogger("policyengine.runtime.audit")


def policy_decision(result: ToolResult) -> tuple[str, str | None]:
    """(decision as a dry-run reports it, deciding rule or listener) for a live result."""
    if result.outcome is Outcome.INVALID:
        return "invalid", result.source.rule_id if result.source else None
    if result.outcome is Outcome.DENIED and result.stage in (Stage.PRE_EXECUTE, Stage.GUARD):
        return "deny", result.source.rule_id if result.source else None
    if result.stage is Stage.APPROVAL or result.asked:
        # The policy asked; whether a person then agreed is the outcome, not the decision.
        who = result.admitted_by or result.source
        return "ask", who.rule_id if who else None
    if result.admitted_by is None and result.stage is None and result.outcome is not Outcome.OK:
        return "error", result.source.rule_id if result.source else None
    return "allow", result.admitted_by.rule_id if result.admitted_by else None


def record_of(result: ToolResult) -> dict[str, Any]:
    """One recorded-call line for a result."""
    decision, rule = policy_decision(result)
    source = result.source if decision in ("deny", "invalid") else result.admitted_by
    record: dict[str, Any] = {
        "call_id": result.call_id,
        "name": result.name,
        "arguments": result.arguments,
        "agent": result.agent,
        "timestamp": time.time(),
        "result": {"outcome": result.outcome.value, "value": result.value, "content": result.content},
        "decision": decision,
        "stage": result.stage.value if result.stage else None,
        "rule": rule,
        "reason": result.reason,
        "pack": source.pack if source else None,
        "digest": source.digest if source else None,
        "rewrites": [s.name for s in result.rewrites],
    }
    if result.cwd is not None:
        record["cwd"] = result.cwd  # a dry-run resolves the replayed call's relative paths against it
    if result.monitored:  # what rules in monitor mode would have done; only then, so other records are as they were
        record["monitored"] = [hit.to_json() for hit in result.monitored]
    if result.session_id is not None:
        # A dry-run of the log replays the session in record order, at `time`: when the call was
        # decided (now, less what it spent after that: approval, body, review), as its session entry says.
        after = sum(float(result.timings.get(stage.value, 0.0)) for stage in _AFTER_DECISION)
        record["session_id"] = result.session_id
        record["time"] = record["timestamp"] - after
        record["labels"] = sorted(result.labels)  # what the session held when the call was decided
    return record


# The stages a call goes through after its decision was written to its session.
_AFTER_DECISION = (Stage.APPROVAL, Stage.EXECUTE, Stage.POST_EXECUTE, Stage.FINALIZE, Stage.RESULT)


class AuditRecorder:
    """Append every call to a JSON Lines file (or stream); its failures are counted, never raised.

    Install with `registry.on_result(recorder, name="audit")`. `failures` counts records that
    could not be written; `last_error` says why. The call path is never blocked by it.
    """

    def __init__(self, target: str | Path | IO[str]) -> None:
        self._lock = threading.Lock()
        self.failures = 0
        self.written = 0
        self.last_error: str | None = None
        self._path: Path | None = None
        self._stream: IO[str] | None = None
        self._torn = False  # a failed write may have left half a line behind
        if isinstance(target, (str, Path)):
            self._path = Path(target)
        else:
            self._stream = target

    def __call__(self, result: ToolResult) -> None:
        """Write one record and flush it."""
        record = record_of(result)
        try:
            line = json.dumps(record, ensure_ascii=False, default=str)
        except ValueError:
            # An integer too long for json (over 4,300 digits) must not hide a call from audit:
            # write it as a string rather than dropping the record.
            line = json.dumps(printable(record), ensure_ascii=False, default=str)
        except Exception as error:  # a value json cannot write is still a visible failure
            self._fail(result, error)
            return
        with self._lock:
            start: int | None = None
            try:
                stream = self._open()
                start = _tell(stream)
                # After a failure the file may end mid-line: start on a line of our own, so the
                # torn record is lost alone and every later record stays readable.
                stream.write(("\n" if self._torn else "") + line + "\n")
                stream.flush()
                self._torn = False
                self.written += 1
            except Exception as error:
                # Torn only if the failed write left something behind, or we cannot tell; a file
                # that would not even open was not written to.
                if self._stream is not None and (start is None or _tell(self._stream) != start):
                    self._torn = True
                self._fail(result, error)

    def _open(self) -> IO[str]:
        if self._stream is None:
            assert self._path is not None
            self._stream = self._path.open("a", encoding="utf-8")
        return self._stream

    def _fail(self, result: ToolResult, error: Exception) -> None:
        self.failures += 1
        self.last_error = f"{type(error).__name__}: {error}"
        log.error("policyengine audit: could not record call %s: %s", result.call_id, self.last_error)
        if self._path is not None and self._stream is not None:
            with contextlib.suppress(Exception):  # reopen on the next record: the disk may recover
                self._stream.close()
            self._stream = None

    def close(self) -> None:
        """Close the file (a stream passed in stays open)."""
        with self._lock:
            if self._path is not None and self._stream is not None:
                self._stream.close()
                self._stream = None


def _tell(stream: IO[str]) -> int | None:
    try:
        return stream.tell()
    except Exception:
        return None


def printable(value: Any) -> Any:
    """A copy json can always write: integers it cannot print become strings."""
    if isinstance(value, Mapping):
        return {k: printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            str(value)
        except ValueError:
            return f"<integer of about {value.bit_length() * 30103 // 100000:,} digits>"
    return value
