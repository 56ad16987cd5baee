"""The audit: one record per call from every front end, redacted, written 0600, optionally exported to OpenTelemetry."""

from policyengine.audit._otel import SPAN_NAME, OtelExport, attributes_of
from policyengine.audit._record import (
    FIELDS,
    FRONT_ENDS,
    audit_record,
    evaluation_record,
    pack_set_digest,
    result_record,
)
from policyengine.audit._recorder import AuditRecorder
from policyengine.audit._redaction import REDACTED_FIELDS, AuditRedaction, redactions_of
from policyengine.audit._writer import AuditWriter, open_private

__all__ = [
    "FIELDS",
    "FRONT_ENDS",
    "REDACTED_FIELDS",
    "SPAN_NAME",
    "AuditRecorder",
    "AuditRedaction",
    "AuditWriter",
    "OtelExport",
    "attributes_of",
    "audit_record",
    "evaluation_record",
    "open_private",
    "pack_set_digest",
    "redactions_of",
    "result_record",
]
