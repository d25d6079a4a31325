"""A real HTTP server on 127.0.0.1 for web-tool tests: fixed routes, scripted replies, recorded requests.

Typical use:

    with LocalWebServer({"/page": Reply(200, "<html>…</html>", "text/html")}) as server:
        fetch(server.url("/page"))
        assert server.requests[0].path == "/page"
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


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


class LocalWebServer:
    """Serves `routes` (path -> Reply or function of the Request) on an ephemeral port in a daemon thread."""

    def __init__(self, routes: dict[str, Route], *, host: str = "127.0.0.1", port: int = 0) -> None:
        """`host`/`port`: another loopback address or a fixed port (two servers on one port, e.g. DNS rebinding)."""
        self.routes = routes
        self.requests: list[Request] = []
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

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's host is text
        return f"http://{host}:{port}"

    @property
    def host_port(self) -> str:
        """`127.0.0.1:PORT`, the FETCH_ALLOWED_HOSTS entry that lets fetching tools reach this server."""
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's host is text
        return f"{host}:{port}"

    def url(self, path: str) -> str:
        return self.base + path

    def hits(self, path: str) -> int:
        """How many requests reached `path`."""
        return sum(1 for r in self.requests if r.path == path)

    def __enter__(self) -> LocalWebServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
