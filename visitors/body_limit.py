"""Request bodies bounded before anything parses them: one anonymous client cannot grow the app's memory by GBs.

Gradio reads a queue join's or an API call's whole body into memory (`await request.json()`) before
any check of ours runs: twelve anonymous 200 MB joins grew the app by 3.8 GiB. This ASGI middleware
answers 413 when a request's declared Content-Length passes APP_MAX_REQUEST_KB (nothing of the body
is read), and ends a body sent without a length (chunked) as a disconnect once it passes the same
cap. The upload route is left to gradio's streaming multipart parser (written to disk in chunks,
capped by MAX_UPLOAD_MB) and to the per-address upload budget (`visitors.upload_quota`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from config import Settings

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """Refuse request bodies over `max_bytes` on every HTTP route but the upload route."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a request through when its body fits; answer 413 (unread) when its declared length does not."""
        if scope.get("type") != "http" or scope.get("path", "").endswith("/upload"):
            await self.app(scope, receive, send)
            return
        length = next((v for k, v in scope.get("headers", []) if k.lower() == b"content-length"), None)
        if length is not None and (not length.strip().isdigit() or int(length) > self.max_bytes):
            await _refuse(send, f"The request body is {length.decode('latin-1')} bytes; the app reads at most "
                                f"{self.max_bytes // 1024:,} KiB per request (APP_MAX_REQUEST_KB).")
            return
        await self.app(scope, _counted(receive, self.max_bytes), send)


def _counted(receive: Receive, max_bytes: int) -> Receive:
    """`receive` that turns a body past `max_bytes` (one sent without a length) into a disconnect."""
    seen = 0

    async def counted() -> Any:
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body", b""))
            if seen > max_bytes:
                return {"type": "http.disconnect"}
        return message

    return counted


async def _refuse(send: Send, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def middleware(settings: Settings) -> Any:
    """The starlette `Middleware` entry for `gr.Blocks.launch(app_kwargs={"middleware": [...]})`."""
    from starlette.middleware import Middleware

    return Middleware(BodyLimit, max_bytes=settings.APP_MAX_REQUEST_KB * 1024)
