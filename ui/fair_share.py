"""Fair share of the app's queue: one browser session (or one client address) cannot fill it for everyone.

Gradio's queue holds APP_QUEUE_MAX_SIZE events in all; 70 joins whose results one client never read
used to give every other visitor `503 Queue is full`. `install()` wraps the queue's `push` so a join
is refused (the same 503, with a message that says why) when its session already has
VISITOR_MAX_QUEUED events waiting or running, or its client address VISITOR_MAX_QUEUED_PER_ADDRESS.
The address is the last `X-Forwarded-For` hop when a proxy sets one (a Space's), else the socket's
peer: the hop the nearest proxy added is the one a client cannot choose. Joins are checked one at a
time (an asyncio lock), so a burst cannot slip past the count. Gradio offers no hook for this: the
wrapper relies on `Queue.push(body, request, username)` and the queue's `event_queue_per_concurrency_id`
and `active_jobs`, which tests/app/test_visitor_budgets.py holds to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import gradio as gr

from config import Settings


def client_address(request: Any) -> str:
    """The client's address as the nearest proxy saw it ('' when unknown)."""
    headers = getattr(request, "headers", None) or {}
    forwarded = headers.get("x-forwarded-for", "") if hasattr(headers, "get") else ""
    if forwarded.strip():
        return forwarded.split(",")[-1].strip()
    client = getattr(request, "client", None)
    return str(getattr(client, "host", "") or "")


def _events(queue: Any) -> Iterator[Any]:
    for event_queue in list(queue.event_queue_per_concurrency_id.values()):
        yield from list(event_queue.queue)
    for job in list(queue.active_jobs):
        yield from job or ()


def install(demo: gr.Blocks, settings: Settings) -> None:
    """Wrap `demo`'s queue (after `demo.queue(...)`) with the per-session and per-address limits."""
    queue = demo._queue
    original = queue.push
    lock = asyncio.Lock()
    per_session, per_address = settings.VISITOR_MAX_QUEUED, settings.VISITOR_MAX_QUEUED_PER_ADDRESS

    async def push(body: Any, request: Any, username: str | None) -> tuple[bool, Any, str]:
        async with lock:
            session, address = getattr(body, "session_hash", None), client_address(request)
            mine = here = 0
            for event in _events(queue):
                mine += bool(session) and event.session_hash == session
                here += bool(address) and client_address(event.request) == address
            if mine >= per_session:
                return False, (f"This session already has {mine} requests waiting or running (VISITOR_MAX_QUEUED="
                               f"{per_session}); wait for them to finish."), "queue_full"
            if here >= per_address:
                return False, (f"Your address already has {here} requests waiting or running "
                               f"(VISITOR_MAX_QUEUED_PER_ADDRESS={per_address}); wait for them to finish."), \
                    "queue_full"
            return await original(body, request, username)

    queue.push = push  # type: ignore[assignment,method-assign]
