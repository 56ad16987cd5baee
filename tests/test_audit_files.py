"""The audit writer's file: created 0600 whatever the umask, a looser one tightened loudly (ours) or refused (not ours).

Records are redacted before they are written, as whole lines under a lock.
"""

from __future__ import annotations

import io
import json
import logging
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from policyengine.audit import AuditRecorder, AuditWriter, audit_record, open_private
from policyengine.errors import AuditFileError, PolicyEngineError

TOKEN = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that takes nothing away: what the file gets is what the writer asked for."""
    before = os.umask(0)
    try:
        yield
    finally:
        os.umask(before)


def record(call_id: str = "c1", **extra: object) -> dict[str, object]:
    fields: dict[str, object] = {
        "front_end": "registry",
        "name": "http_post",
        "call_id": call_id,
        "arguments": {"url": "https://api.example.com", "token": TOKEN},
        "agent": "agent",
        "decision": "deny",
        "stage": "pre-execute",
        "source": None,
        "reason": f"Denied: the call carries {TOKEN}",
    }
    fields.update(extra)
    return audit_record(**fields)  # type: ignore[arg-type]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_audit_file_is_created_0600_even_with_a_umask_of_nothing(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "audit.jsonl"
    os.close(open_private(path))
    assert mode(path) == 0o600


def test_records_are_redacted_before_they_are_written(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "audit.jsonl"
    writer = AuditWriter(path)
    written = writer.write(record())
    writer.close()
    text = path.read_text("utf-8")
    assert TOKEN not in text and mode(path) == 0o600
    (line,) = (json.loads(x) for x in text.splitlines())
    assert line == written and line["redacted"] is True
    assert line["arguments"] == {"url": "https://api.example.com", "token": "[REDACTED]"}
    assert line["reason"] == "Denied: the call carries [REDACTED]"


def test_a_file_others_can_read_is_tightened_and_said_on_the_logger_and_to_the_caller(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text("")
    path.chmod(0o644)
    said: list[str] = []
    with caplog.at_level(logging.WARNING, logger="policyengine.audit"):
        AuditWriter(path, warn=said.append).write(record())
    assert mode(path) == 0o600
    assert len(said) == 1 and "was mode 0644" in said[0] and "tightened to 0600" in said[0]
    assert "tightened to 0600" in caplog.text


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root (CI runs as root)")
def test_a_loose_file_of_another_user_is_refused_saying_how_to_fix_it(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text("theirs\n")
    path.chmod(0o644)
    os.chown(path, 65534, 65534)
    with pytest.raises(AuditFileError) as refused:
        AuditWriter(path).write(record())
    assert isinstance(refused.value, PolicyEngineError)
    assert "not ours to tighten" in str(refused.value) and "chmod 600" in str(refused.value)
    assert path.read_text() == "theirs\n" and mode(path) == 0o644


def test_a_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "audit.fifo"
    os.mkfifo(fifo)
    with pytest.raises(AuditFileError, match="not a regular file"):
        open_private(fifo)


def test_the_recorder_counts_a_refused_file_and_never_raises(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fifo = tmp_path / "audit.fifo"
    os.mkfifo(fifo)
    recorder = AuditRecorder(fifo)
    with caplog.at_level(logging.ERROR, logger="policyengine.audit"):
        recorder.write(record())
    assert (recorder.failures, recorder.written) == (1, 0)
    assert recorder.last_error is not None and "AuditFileError" in recorder.last_error


def test_parallel_writers_of_one_file_write_whole_lines(tmp_path: Path) -> None:
    """As parallel hook processes do: each writer opens the file for its record, under an flock."""
    path = tmp_path / "audit.jsonl"

    def burst(n: int) -> None:
        for i in range(25):
            AuditWriter(path, keep_open=False).write(record(f"{n}-{i}", arguments={"note": "x" * 5000}))

    threads = [threading.Thread(target=burst, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = sorted(json.loads(line)["call_id"] for line in path.read_text("utf-8").splitlines())
    assert ids == sorted(f"{n}-{i}" for n in range(4) for i in range(25))


def test_a_record_utf8_cannot_carry_is_written_escaped(tmp_path: Path) -> None:
    stream = io.StringIO()
    AuditWriter(stream).write(record(arguments={"folder": "bad\ud800"}))
    assert json.loads(stream.getvalue())["arguments"] == {"folder": "bad\ud800"}
