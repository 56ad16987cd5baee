"""The decision service's OpenAPI 3.1 document, hand-written (tests/test_serve.py checks it against the routes)."""

from __future__ import annotations

from typing import Any

from policyengine.service.requests import MAX_SESSION_ID

__all__ = ["OPENAPI"]

_NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
_CALL_PROPERTIES: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1, "description": "the tool's name"},
    "arguments": {"type": "object", "description": "the call's arguments"},
    "cwd": {**_NULLABLE_STRING, "description": "where the call's relative paths start (default: the packs' cwd)"},
    "call_id": {**_NULLABLE_STRING, "description": "the call's id (default: a new one, echoed back)"},
    "agent": {**_NULLABLE_STRING, "description": "who makes the call (default: agent)"},
    "session_id": {
        **_NULLABLE_STRING,
        "maxLength": MAX_SESSION_ID,
        "description": "the agent's session: rules that read `session` see what the session did before; a decide "
        "records the call in it, a review the labels and secrets of its result, under the call_id the "
        "decide answered (default: none, an empty session, nothing recorded)",
    },
}
_DECISION_PROPERTIES: dict[str, Any] = {
    "decision": {"type": "string", "enum": ["allow", "deny", "ask", "invalid"]},
    "stage": {**_NULLABLE_STRING, "description": "the pipeline stage that decided"},
    "rule": {**_NULLABLE_STRING, "description": "the deciding rule (null: a pack's default)"},
    "pack": _NULLABLE_STRING,
    "reason": _NULLABLE_STRING,
    "call_id": {"type": "string"},
    "pack_digest": {"type": "string", "description": "the digest of the installation that decided"},
}
_ERROR = {
    "description": "refused before deciding",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def _json_body(ref: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}}


def _answer(ref: str, description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
    }


_V1_ERRORS = {"400": _ERROR, "401": _ERROR, "408": _ERROR, "413": _ERROR}


def _v1_post(summary: str, body: str, answer: str, description: str) -> dict[str, Any]:
    """A v1 POST path: a bearer token, a JSON `body`, the `answer` or a refusal before deciding."""
    return {
        "post": {
            "summary": summary,
            "security": [{"bearer": []}],
            "requestBody": _json_body(body),
            "responses": {"200": _answer(answer, description), **_V1_ERRORS},
        }
    }


OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "policyengine decision service", "version": "1"},
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Call": {
                "type": "object",
                "required": ["name", "arguments"],
                "additionalProperties": False,
                "properties": _CALL_PROPERTIES,
            },
            "CallWithResult": {
                "type": "object",
                "required": ["name", "arguments", "result"],
                "additionalProperties": False,
                "properties": {
                    **_CALL_PROPERTIES,
                    "result": {
                        "type": "object",
                        "required": ["value"],
                        "additionalProperties": False,
                        "properties": {
                            "value": {"description": "the tool's output"},
                            "content": {"type": ["array", "null"], "description": "the content blocks the model sees"},
                        },
                    },
                },
            },
            "Decision": {"type": "object", "required": list(_DECISION_PROPERTIES), "properties": _DECISION_PROPERTIES},
            "Review": {
                "type": "object",
                "required": [*_DECISION_PROPERTIES, "post", "value", "content", "rewrites", "feedback"],
                "properties": {
                    **_DECISION_PROPERTIES,
                    "post": {"type": "string", "enum": ["accepted", "rewritten", "blocked"]},
                    "value": {"description": "the value as post-execute left it (null when blocked)"},
                    "content": {"type": "array", "description": "the content the model may see"},
                    "rewrites": {"type": "array", "items": {"type": "string"}},
                    "feedback": _NULLABLE_STRING,
                },
            },
            "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
            "Packs": {
                "type": "object",
                "properties": {
                    "pack_digest": {"type": "string"},
                    "packs": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "version": {"type": "string"},
                                "digest": {"type": "string"},
                                "path": {"type": "string"},
                                "rules": {"type": "integer"},
                            },
                        },
                    },
                },
            },
            "Health": {
                "type": "object",
                "properties": {
                    "ok": {"type": "boolean"},
                    "pack_digest": {"type": "string"},
                    "digests": {"type": "object", "additionalProperties": {"type": "string"}},
                    "loaded_at": {"type": "number"},
                    "reload_error": _NULLABLE_STRING,
                    "pid": {"type": "integer", "description": "the worker process that answered"},
                },
            },
        },
    },
    "paths": {
        "/v1/decide": _v1_post("What pre-execute and the guards do with a call", "Call", "Decision", "the decision"),
        "/v1/review": _v1_post(
            "What post-execute makes of a call's result (and the call's decision)",
            "CallWithResult",
            "Review",
            "the review",
        ),
        "/v1/packs": {
            "get": {
                "summary": "The packs deciding now",
                "security": [{"bearer": []}],
                "responses": {"200": _answer("Packs", "the packs"), "401": _ERROR},
            }
        },
        "/healthz": {
            "get": {
                "summary": "Liveness, the packs' digests, the last reload error",
                "responses": {"200": _answer("Health", "health")},
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus metrics",
                "responses": {"200": {"description": "Prometheus text", "content": {"text/plain": {}}}},
            }
        },
        "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}},
    },
}
"""The service's OpenAPI document, hand-written (tests/test_serve.py checks it against the routes)."""
