"""Bearer-token authentication in front of the service: checked before a request's body is read."""

from __future__ import annotations

import hmac

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from policyengine.service.metrics import ServiceMetrics

__all__ = ["OPEN_PATHS", "BearerAuth"]

OPEN_PATHS = frozenset({"/healthz", "/metrics", "/openapi.json"})
"""The paths that need no token: the probes and the schema."""


class BearerAuth:
    """Every request but the probes and the schema needs `Authorization: Bearer <token>`, before its body is read."""

    def __init__(self, app: ASGIApp, token: str, metrics: ServiceMetrics) -> None:
        self.app = app
        self.token = token.encode("utf-8")
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # An allowlist, not a prefix: a path spelt so that it slips past a check of `/v1/` still needs the token.
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        scheme, _, credential = given.partition(b" ")
        if scheme.lower() == b"bearer" and hmac.compare_digest(credential.strip(), self.token):
            await self.app(scope, receive, send)
            return
        error = "invalid_token" if given else "invalid_request"
        reason = "the bearer token is wrong" if given else "this service needs `Authorization: Bearer <token>`"
        self.metrics.rejected("401")
        response = JSONResponse(
            {"error": reason},
            status_code=401,
            headers={"WWW-Authenticate": f'Bearer realm="policyengine", error="{error}"'},
        )
        await response(scope, receive, send)
