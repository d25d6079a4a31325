"""Close the event loops gradio replaces while the app is built, so none is garbage-collected open.

gradio's `safe_get_lock()` / `safe_get_stop_event()` (the queue, the server app) create a new event loop
and `set_event_loop` it whenever none is running — four or five times at start-up, each one replacing
the last. The replaced loops are collected later, their self-pipe sockets first, and each prints an
"Exception ignored in BaseEventLoop.__del__ … Invalid file descriptor: -1" traceback. A policy that
closes the loop it replaces (when that loop is not running) ends them cleanly; asyncio locks are bound
to a loop only on first use, so nothing held them.
"""

from __future__ import annotations

import asyncio


class ClosingEventLoopPolicy(asyncio.DefaultEventLoopPolicy):
    """The default policy, except that a loop replaced by `set_event_loop` is closed (unless running)."""

    def set_event_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Set the thread's loop; close the one it replaces when that is idle."""
        old = self._local._loop  # type: ignore[attr-defined]  # the base policy's per-thread slot
        super().set_event_loop(loop)
        if old is not None and old is not loop and not old.is_running() and not old.is_closed():
            old.close()


def close_replaced_event_loops() -> None:
    """Install the policy for this process (before the app is built)."""
    if not isinstance(asyncio.get_event_loop_policy(), ClosingEventLoopPolicy):
        asyncio.set_event_loop_policy(ClosingEventLoopPolicy())
