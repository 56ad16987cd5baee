"""Audit records exported as OpenTelemetry spans and log records (the `[otel]` extra).

Each record becomes one span, `policyengine.decision`, and one log record in that span's
context, both carrying the decision, stage, rule, pack, the deciding pack's digest and the pack
set's digest, the tool, call id, session id, front end and agent, what post-execute did and the
approval's answer. Never the arguments, the result or the reason: telemetry pipelines are read
by more people than audit files. Where they go is the standard OTEL_* environment
(OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, ..._LOGS_ENDPOINT,
OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME), read by the OTLP/HTTP exporters; or pass your
own tracer and logger providers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from policyengine.errors import UsageError

__all__ = ["SPAN_NAME", "OtelExport", "attributes_of"]

SPAN_NAME = "policyengine.decision"
_SCOPE = "policyengine.audit"

# Record field -> attribute, for the scalar fields a span may carry (never arguments, result or reason).
_ATTRIBUTES = (
    ("decision", "policyengine.decision"),
    ("stage", "policyengine.stage"),
    ("rule", "policyengine.rule"),
    ("pack", "policyengine.pack"),
    ("digest", "policyengine.pack.digest"),
    ("pack_digest", "policyengine.pack_digest"),
    ("name", "policyengine.tool"),
    ("call_id", "policyengine.call_id"),
    ("session_id", "policyengine.session_id"),
    ("front_end", "policyengine.front_end"),
    ("agent", "policyengine.agent"),
    ("post", "policyengine.post"),
    ("redacted", "policyengine.redacted"),
)


def attributes_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """The span and log attributes of an audit record (unknown fields left out: OTel has no null)."""
    out: dict[str, Any] = {}
    for field, name in _ATTRIBUTES:
        value = record.get(field)
        if isinstance(value, (str, bool, int, float)) and value != "":
            out[name] = value
    if isinstance(record.get("name"), str):
        out["gen_ai.tool.name"] = record["name"]  # the GenAI semantic conventions' name for it
    if record.get("call_id"):
        out["gen_ai.tool.call.id"] = str(record["call_id"])
    rewrites = record.get("rewrites")
    if isinstance(rewrites, Sequence) and not isinstance(rewrites, str) and rewrites:
        out["policyengine.rewrites"] = [str(r) for r in rewrites]
    monitor = record.get("monitor")
    if isinstance(monitor, Sequence) and not isinstance(monitor, str) and monitor:
        out["policyengine.monitor"] = [str(r) for r in monitor]
    approval = record.get("approval")
    if isinstance(approval, Mapping):
        for key in ("answer", "by"):
            if isinstance(approval.get(key), str):
                out[f"policyengine.approval.{key}"] = approval[key]
    return out


class OtelExport:
    """Exports each audit record as a span and a log record; `close()` flushes (and shuts down what it built).

    Without providers, it builds its own: OTLP over HTTP/protobuf to the endpoint the OTEL_*
    environment names (default http://localhost:4318), batched, with `service.name` from
    OTEL_SERVICE_NAME (default "policyengine").
    """

    def __init__(self, *, tracer_provider: Any = None, logger_provider: Any = None) -> None:
        try:
            from opentelemetry.sdk._logs import LoggerProvider
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
        except ImportError as error:
            raise UsageError(
                f"OpenTelemetry export needs the OpenTelemetry SDK, which is not installed ({error.name} is missing)",
                hint="pip install 'agent-policyengine[otel]' (or '.[otel]' from a checkout)",
            ) from None
        from policyengine import __version__

        self._owned: list[Any] = []
        resource = None
        if tracer_provider is None or logger_provider is None:
            resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "policyengine"})
        if tracer_provider is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            tracer_provider = TracerProvider(resource=resource)
            tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            self._owned.append(tracer_provider)
        if logger_provider is None:
            from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
            from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

            logger_provider = LoggerProvider(resource=resource)
            logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
            self._owned.append(logger_provider)
        self.tracer_provider = tracer_provider
        self.logger_provider = logger_provider
        self._tracer = tracer_provider.get_tracer(_SCOPE, __version__)
        self._logger = logger_provider.get_logger(_SCOPE, __version__)

    def __call__(self, record: Mapping[str, Any]) -> None:
        """Export one record: a span (the decision) and a log record in its context."""
        from opentelemetry._logs import SeverityNumber
        from opentelemetry.trace import SpanKind, set_span_in_context

        attributes = attributes_of(record)
        stamp = record.get("timestamp")
        at = int(float(stamp) * 1e9) if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None
        span = self._tracer.start_span(SPAN_NAME, kind=SpanKind.INTERNAL, attributes=attributes, start_time=at)
        span.end(end_time=at)
        decision = str(record.get("decision"))
        refused = decision in ("deny", "invalid", "error") or record.get("post") == "blocked"
        by = f"rule {record['rule']}" if record.get("rule") else "no rule"
        pack = f" of pack {record['pack']}" if record.get("pack") else ""
        self._logger.emit(
            timestamp=at,
            context=set_span_in_context(span),
            severity_number=SeverityNumber.WARN if refused else SeverityNumber.INFO,
            severity_text="WARN" if refused else "INFO",
            body=f"policyengine {decision}: tool {record.get('name')} ({by}{pack})",
            attributes=attributes,
            event_name=SPAN_NAME,
        )

    def flush(self) -> None:
        """Send what is batched now."""
        self.tracer_provider.force_flush()
        self.logger_provider.force_flush()

    def close(self) -> None:
        """Flush; shut down the providers this exporter built (those passed in stay the caller's)."""
        for provider in (self.tracer_provider, self.logger_provider):
            flush = getattr(provider, "force_flush", None)
            if callable(flush):
                flush()
        for provider in self._owned:
            provider.shutdown()
        self._owned = []
