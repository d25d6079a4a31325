"""A real HTTP server on 127.0.0.1 for web-tool tests: fixed routes, scripted replies, recorded requests.

Typical use:

    with LocalWebServer({"/page": Reply(200, "<html>…</html>", "text/html")}) as server:
        fetch(server.url("/page"))
        assert server.requests[0].path == "/page"
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.loopback import HTTPLoopbackServer


@dataclass
class Reply:
    """One HTTP response."""

    status: int = 200
    body: bytes | str = b""
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, value: Any, status: int = 200) -> Reply:
        return cls(status, json.dumps(value), "application/json")


@dataclass
class Request:
    """What the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


Route = Reply | Callable[[Request], Reply]


class LocalWebServer(HTTPLoopbackServer):
    """Serves `routes` (path -> Reply or function of the Request) on an ephemeral port in a daemon thread.

    The port is bound at construction (a test may name it before serving).
    """

    def __init__(self, routes: dict[str, Route], *, host: str = "127.0.0.1", port: int = 0) -> None:
        """`host`/`port`: another loopback address or a fixed port (two servers on one port, e.g. DNS rebinding)."""
        super().__init__()
        self.host = host
        self.routes = routes
        self.requests: list[Request] = []
        self.bind(port)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """Answer from `routes`, recording each request."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                request = Request(self.command, parts.path, parse_qs(parts.query), dict(self.headers),
                                  self.rfile.read(length) if length else b"")
                server.requests.append(request)
                route = server.routes.get(parts.path)
                reply = Reply(404, "not found", "text/plain") if route is None else (
                    route(request) if callable(route) else route)
                body = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self.send_response(reply.status)
                if reply.content_type:
                    self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _serve

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

        return Handler

    @property
    def host_port(self) -> str:
        """`HOST:PORT`, the FETCH_ALLOWED_HOSTS entry that lets fetching tools reach this server."""
        return f"{self.host}:{self.port}"

    def url(self, path: str) -> str:
        """The full URL of `path` on this server."""
        return self.base + path

    def hits(self, path: str) -> int:
        """How many requests reached `path`."""
        return sum(1 for r in self.requests if r.path == path)
