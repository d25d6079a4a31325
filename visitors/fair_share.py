"""Fair share of the app's queue: one browser session (or one client address) cannot fill it for everyone.

Gradio's queue holds APP_QUEUE_MAX_SIZE events in all; 70 joins whose results one client never read
used to give every other visitor `503 Queue is full`. `install()` wraps the queue's `push` so a join
is refused (the same 503, with a message that says why) when its session already has
VISITOR_MAX_QUEUED events waiting or running, or its client address VISITOR_MAX_QUEUED_PER_ADDRESS.
The address comes from `visitors.client_address` (X-Forwarded-For only from a TRUSTED_PROXIES peer), the
same parser the upload budget uses. Previews, lookups and task loads (concurrency id "light", whose
slots all sessions share) are capped per session at VISITOR_MAX_LIGHT_JOBS, so one session's queue
places cannot hold every preview slot while another visitor waits. Joins are checked one at a
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
from visitors.client_address import TrustedProxies, from_request

LIGHT = "light"
"""The concurrency id of previews, RAG lookups and task loads (ui/debug_tab.py, ui/batch_tab.py)."""


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
    per_light, proxies = settings.VISITOR_MAX_LIGHT_JOBS, TrustedProxies.of(settings)

    async def push(body: Any, request: Any, username: str | None) -> tuple[bool, Any, str]:
        async with lock:
            session, address = getattr(body, "session_hash", None), from_request(proxies, request)
            light = _concurrency_id(demo, body) == LIGHT
            mine = here = light_mine = 0
            for event in _events(queue):
                own = bool(session) and event.session_hash == session
                mine += own
                light_mine += own and event.concurrency_id == LIGHT
                here += bool(address) and from_request(proxies, event.request) == address
            if light and light_mine >= per_light:
                return False, (f"This session already has {light_mine} preview, lookup or task load waiting or "
                               f"running (VISITOR_MAX_LIGHT_JOBS={per_light}); wait for it to finish."), "queue_full"
            if mine >= per_session:
                return False, (f"This session already has {mine} requests waiting or running (VISITOR_MAX_QUEUED="
                               f"{per_session}); wait for them to finish."), "queue_full"
            if here >= per_address:
                return False, (f"Your address already has {here} requests waiting or running "
                               f"(VISITOR_MAX_QUEUED_PER_ADDRESS={per_address}); wait for them to finish."), \
                    "queue_full"
            return await original(body, request, username)

    queue.push = push  # type: ignore[assignment,method-assign]


def _concurrency_id(demo: gr.Blocks, body: Any) -> str | None:
    """The concurrency id of the event a join asks for (None when its fn_index names none)."""
    index = getattr(body, "fn_index", None)
    fn = demo.fns.get(index) if isinstance(index, int) else None
    return getattr(fn, "concurrency_id", None)
