"""Upload bytes per client address: one client cannot fill the server's disk through gradio's upload route.

Anyone may POST files to `/gradio_api/upload` without calling any handler, and gradio keeps them until
its cache sweep (two hours here, `delete_cache` in app.py): five 99 MB uploads from one anonymous client
stayed on disk that long. This ASGI middleware counts the bytes each client address (`visitors.client_address`,
the queue's parser: X-Forwarded-For only from a TRUSTED_PROXIES peer) uploaded within that window and answers
429 once VISITOR_MAX_UPLOAD_MB would be passed; an upload without Content-Length is answered 411 (a
browser always sends it). What a session keeps is bounded separately (`Session`), and freed when it ends.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from config import Settings
from visitors.client_address import TrustedProxies, from_scope

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


class UploadQuota:
    """Refuse uploads past `max_bytes` per client address within `window_s` seconds."""

    def __init__(self, app: ASGIApp, max_bytes: int, window_s: float,
                 proxies: TrustedProxies | None = None) -> None:
        self.app, self.max_bytes, self.window_s = app, max_bytes, window_s
        self.proxies = proxies or TrustedProxies()
        self._sent: defaultdict[str, deque[tuple[float, int]]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _admit(self, address: str, size: int) -> int | None:
        """Record `size` bytes for `address`; None when admitted, else the bytes it already used."""
        now = time.monotonic()
        with self._lock:
            sent = self._sent[address]
            while sent and now - sent[0][0] > self.window_s:
                sent.popleft()
            used = sum(n for _, n in sent)
            if used + size > self.max_bytes:
                return used
            sent.append((now, size))
            return None

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        """Pass everything through except an upload over its address's budget (answered 429) or without a length."""
        if (scope.get("type") != "http" or scope.get("method") != "POST"
                or not scope.get("path", "").endswith("/upload")):
            await self.app(scope, receive, send)
            return
        length = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"content-length"), "")
        if not length.isdigit():
            await _reply(send, 411, "Uploads need a Content-Length.")
            return
        used = self._admit(from_scope(self.proxies, scope), int(length))
        if used is not None:
            await _drain(receive)  # read (and drop) the body: replying mid-upload resets the client's connection
            await _reply(send, 429,
                         f"Your address uploaded {used / 2**20:.0f} MB in the last {self.window_s / 3600:g} h; "
                         f"the limit is {self.max_bytes / 2**20:.0f} MB (VISITOR_MAX_UPLOAD_MB).")
            return
        await self.app(scope, receive, send)


async def _drain(receive: Callable[[], Awaitable[Any]]) -> None:
    while True:
        message = await receive()
        if message.get("type") != "http.request" or not message.get("more_body"):
            return


async def _reply(send: Callable[[Any], Awaitable[None]], status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def middleware(settings: Settings, window_s: float) -> Any:
    """The starlette `Middleware` entry for `gr.Blocks.launch(app_kwargs={"middleware": [...]})`."""
    from starlette.middleware import Middleware

    return Middleware(UploadQuota, max_bytes=int(settings.VISITOR_MAX_UPLOAD_MB * 2**20), window_s=window_s,
                      proxies=TrustedProxies.of(settings))
