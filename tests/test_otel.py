"""Audit records exported as OpenTelemetry spans and log records: decision, rule, stage, pack digest, tool, session.

Tested against the SDK's in-memory exporters, and against a local OTLP/HTTP receiver the test
starts (an http.server decoding the protobuf requests with opentelemetry-proto), which the hook
CLI (`--otel`) and the registry's recorder (`otel=True`) reach through the standard OTEL_* environment.
Spans never carry arguments, results or reasons.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from policyengine import PolicyLayers, Registry
from policyengine.audit import SPAN_NAME, AuditRecorder, OtelExport, attributes_of
from policyengine.tools.catalog import tool_from_spec

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "policies" / "baseline"
TOKEN = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
SPEC = {
    "name": "http_post",
    "description": "POST a body to a URL.",
    "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}, "body": {}}, "required": ["url"]},
}


def _registry(tmp_path: Path, otel: Any) -> tuple[Registry, PolicyLayers, AuditRecorder]:
    registry = Registry()
    registry.register(tool_from_spec(SPEC).with_execute(lambda a: {"status": 200}))
    layers = PolicyLayers.install(registry, [str(BASELINE)])
    recorder = AuditRecorder(tmp_path / "audit.jsonl", packs=lambda: layers.packs, otel=otel)
    registry.on_result(recorder, name="audit")
    return registry, layers, recorder


def test_a_decision_is_a_span_and_a_log_record_with_decision_rule_and_pack_digest(tmp_path: Path) -> None:
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    tracing, logging = TracerProvider(), LoggerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    logging.add_log_record_processor(SimpleLogRecordProcessor(logs))
    registry, layers, recorder = _registry(tmp_path, OtelExport(tracer_provider=tracing, logger_provider=logging))
    registry.call_sync("http_post", {"url": "https://api.example.com", "body": {"token": TOKEN}}, call_id="c1")
    registry.call_sync("http_post", {"url": "https://api.example.com", "body": {"note": "hi"}}, call_id="c2")
    recorder.close()
    denied, allowed = spans.get_finished_spans()
    assert denied.name == allowed.name == SPAN_NAME
    digest = layers.packs[0].digest
    assert denied.attributes is not None and allowed.attributes is not None
    assert denied.attributes["policyengine.decision"] == "deny"
    assert denied.attributes["policyengine.rule"] == "no-secrets-to-network"
    assert denied.attributes["policyengine.stage"] in ("pre-execute", "guard")
    assert denied.attributes["policyengine.pack_digest"] == denied.attributes["policyengine.pack.digest"] == digest
    assert denied.attributes["policyengine.tool"] == denied.attributes["gen_ai.tool.name"] == "http_post"
    assert denied.attributes["policyengine.call_id"] == "c1" and denied.attributes["policyengine.redacted"] is True
    assert allowed.attributes["policyengine.decision"] == "allow" and "policyengine.rule" not in allowed.attributes
    # Never the arguments: nothing of the call's body is in any attribute.
    shown = json.dumps([dict(s.attributes or {}) for s in (denied, allowed)])
    assert TOKEN not in shown and "api.example.com" not in shown and "hi" not in json.loads(shown)[1].values()
    first, second = (item.log_record for item in logs.get_finished_logs())
    assert first.attributes is not None and first.attributes["policyengine.rule"] == "no-secrets-to-network"
    assert "deny" in str(first.body) and "no-secrets-to-network" in str(first.body) and TOKEN not in str(first.body)
    assert first.trace_id == denied.context.trace_id and first.span_id == denied.context.span_id
    assert second.attributes is not None and second.attributes["policyengine.decision"] == "allow"


def test_attributes_leave_out_what_is_unknown_and_carry_the_approval_and_session() -> None:
    record: dict[str, Any] = {
        "decision": "ask",
        "rule": None,
        "name": "run",
        "call_id": "x",
        "session_id": "s-1",
        "arguments": {"command": "rm -rf /"},
        "reason": "Run it?",
        "approval": {"answer": "denied", "by": "alice", "at": 1.0, "reason": None},
        "rewrites": [],
    }
    attributes = attributes_of(record)
    assert attributes == {
        "policyengine.decision": "ask",
        "policyengine.tool": "run",
        "policyengine.call_id": "x",
        "policyengine.session_id": "s-1",
        "gen_ai.tool.name": "run",
        "gen_ai.tool.call.id": "x",
        "policyengine.approval.answer": "denied",
        "policyengine.approval.by": "alice",
    }


# -- a local OTLP/HTTP receiver ------------------------------------------------------------------


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP endpoint on a free port: decodes /v1/traces and /v1/logs protobuf requests."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.spans: list[Any] = []
        self.logs: list[Any] = []
        self.lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/v1/traces":
            request: Any = ExportTraceServiceRequest()
            request.ParseFromString(body)
            found = [s for r in request.resource_spans for scope in r.scope_spans for s in scope.spans]
            with self.server.lock:
                self.server.spans.extend(found)
        elif self.path == "/v1/logs":
            request = ExportLogsServiceRequest()
            request.ParseFromString(body)
            found = [x for r in request.resource_logs for scope in r.scope_logs for x in scope.log_records]
            with self.server.lock:
                self.server.logs.extend(found)
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads what arrived."""


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _attributes(item: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in item.attributes:
        value = kv.value
        kind = value.WhichOneof("value")
        out[kv.key] = (
            [v.string_value for v in value.array_value.values] if kind == "array_value" else getattr(value, kind)
        )
    return out


def test_the_hook_exports_its_decision_to_an_otlp_receiver(receiver: Receiver, tmp_path: Path) -> None:
    event = {
        "session_id": "otel-session",
        "cwd": "/workspace",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": "/workspace/.env"},
        "tool_use_id": "toolu_otel",
    }
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_SERVICE_NAME": "hook-under-test",
        "POLICYENGINE_HOOK_HELPER": "off",
        "POLICYENGINE_CACHE": str(tmp_path / "cache"),
    }
    pack = ROOT / "policies" / "claude-code"
    command = [sys.executable, "-m", "policyengine", "hook", "claude-code", "--pack", str(pack), "--otel"]
    command += ["--sessions", f"sqlite:{tmp_path / 'sessions.sqlite3'}"]
    done = subprocess.run(
        command, input=json.dumps(event), capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    [span] = receiver.spans  # sent before the hook answered: the process flushes on its way out
    attributes = _attributes(span)
    assert span.name == SPAN_NAME
    assert attributes["policyengine.decision"] == "deny" and attributes["policyengine.rule"]
    assert attributes["policyengine.pack_digest"].startswith("sha256:")
    assert attributes["policyengine.session_id"] == "otel-session"
    assert attributes["policyengine.front_end"] == "claude-code-hook"
    assert ".env" not in json.dumps(attributes)  # the arguments never leave in telemetry
    [log] = receiver.logs
    assert _attributes(log)["policyengine.rule"] == attributes["policyengine.rule"]
    assert log.trace_id == span.trace_id


def test_the_registry_recorder_exports_through_the_otel_environment(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    registry, layers, recorder = _registry(tmp_path, True)
    registry.call_sync("http_post", {"url": "https://api.example.com", "body": {"token": TOKEN}}, call_id="o1")
    recorder.close()  # flushes the batch
    [span] = receiver.spans
    attributes = _attributes(span)
    assert (attributes["policyengine.decision"], attributes["policyengine.rule"]) == ("deny", "no-secrets-to-network")
    assert attributes["policyengine.pack_digest"] == layers.packs[0].digest
    assert len(receiver.logs) == 1
    assert (tmp_path / "audit.jsonl").stat().st_mode & 0o077 == 0


def test_the_mcp_proxy_exports_each_call_with_otel_and_no_audit_file(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}}
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
    packs = ["--pack", str(BASELINE), "--pack", str(ROOT / "tests" / "data" / "mcp_proxy")]
    upstream = ["--", sys.executable, str(ROOT / "tests" / "mcp_upstream_server.py")]
    args = ["-m", "policyengine", "mcp-proxy", *packs, "--otel", *upstream]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(tmp_path), env=env)

    async def calls() -> None:
        with open(tmp_path / "proxy.stderr", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("echo", {"text": "hello"})
                await session.call_tool("delete_record", {"id": 7})

    asyncio.run(calls())  # the proxy exits when its client closes: its exporter flushes then
    decided = sorted(
        (_attributes(s)["policyengine.tool"], _attributes(s)["policyengine.decision"]) for s in receiver.spans
    )
    assert decided == [("delete_record", "deny"), ("echo", "allow")], decided
    assert all(_attributes(s)["policyengine.front_end"] == "mcp-proxy" for s in receiver.spans)
    assert list(tmp_path.glob("*.jsonl")) == []  # --otel alone writes no file


def test_the_decision_service_exports_each_decision_record(tmp_path: Path) -> None:
    """`serve --otel`: create_app's `otel` gets the decision record where the decision log's is built."""
    import httpx

    from policyengine.service.app import create_app
    from policyengine.service.packs_state import PacksState
    from served import Served

    spans = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    export = OtelExport(tracer_provider=tracing, logger_provider=LoggerProvider())
    served = Served(create_app(PacksState([BASELINE]), reload_interval=None, otel=export))
    try:
        body = {"name": "http_post", "arguments": {"url": "https://api.example.com", "body": {"token": TOKEN}}}
        answer = httpx.post(served.url + "/v1/decide", json=body, timeout=10).json()
    finally:
        served.stop()
    [span] = spans.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["policyengine.decision"] == answer["decision"] == "deny"
    assert span.attributes["policyengine.rule"] == answer["rule"] == "no-secrets-to-network"
    assert span.attributes["policyengine.pack_digest"] == answer["pack_digest"]
    assert span.attributes["policyengine.front_end"] == "service"
    assert TOKEN not in json.dumps(dict(span.attributes))
