"""The decision service's app served for real by Uvicorn in a thread, on a free port, as `serve` runs it."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import uvicorn

from policyengine.cli import serve as serve_verb
from policyengine.service.http_protocol import protocol_class


class Served:
    """A Uvicorn server in a thread, on a socket bound to a free port before it starts."""

    def __init__(self, app: Any, http: str = "auto", header_timeout: float = 10.0, one_send: bool = True) -> None:
        sock = serve_verb.bind("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        protocol = protocol_class(http, header_timeout, one_send)  # as serve runs it
        config = uvicorn.Config(app, log_level="warning", timeout_keep_alive=2, lifespan="on", http=protocol)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[sock])), name="test-serve", daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the server did not start"
            time.sleep(0.005)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
