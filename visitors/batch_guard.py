"""What an app batch run must pass before it spends, and the watch that stops it when nobody looks.

- size: one run from the app holds at most `BATCH_MAX_TASKS` tasks (the CLI has no such cap);
- slots: one running batch per session (`BatchControl.running`) and `BATCH_MAX_RUNNING` over all;
- the watch: gradio queues every progress update for the client; when updates pile up unread for
  `BATCH_UNWATCHED_STOP_S` (the client never opened the result stream, or left), the run is
  stopped like the Stop button does: no new task starts, what finished is checkpointed, Resume
  (or the CLI's `--resume` on the folder) continues.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from config import Settings


class RunSlots:
    """The app's count of running batches, capped by BATCH_MAX_RUNNING (one per `ui.runtime.Runtime`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running = 0

    def take(self, limit: int) -> bool:
        """Claim a slot; False when `limit` runs are going already."""
        with self._lock:
            if self.running >= limit:
                return False
            self.running += 1
            return True

    def give(self) -> None:
        """Release a slot claimed by `take`."""
        with self._lock:
            self.running = max(0, self.running - 1)


def busy_message(settings: Settings) -> str:
    """What a visitor reads when every batch slot is taken."""
    return (f"⏳ {settings.BATCH_MAX_RUNNING} batch run(s) are going already on this app (BATCH_MAX_RUNNING); "
            "try again when one has finished.")


def size_refusal(count: int, settings: Settings) -> str | None:
    """The refusal when a selection of `count` tasks is over BATCH_MAX_TASKS; None when it fits."""
    cap = settings.BATCH_MAX_TASKS
    if count <= cap:
        return None
    return (f"❌ The selection holds {count:,} tasks; one run from the app takes at most {cap:,} (BATCH_MAX_TASKS). "
            "Set Max samples, a level or task ids.")


class ListenerWatch:
    """Whether a client still reads a run's updates: `unread()` counts updates queued for it and not yet sent."""

    def __init__(self, unread: Callable[[], int], grace_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._unread, self._grace, self._clock = unread, grace_s, clock
        self._since: float | None = None

    def listening(self) -> bool:
        """False once updates have stayed unread for the grace period."""
        if self._unread() == 0:
            self._since = None
            return True
        now = self._clock()
        if self._since is None:
            self._since = now
        return now - self._since < self._grace


def gradio_unread(demo: Any, session_hash: str | None) -> Callable[[], int]:
    """Updates gradio holds for `session_hash` that no result stream has taken yet.

    Reads gradio's per-session message queue (`Blocks._queue.pending_messages_per_session`,
    gradio 6): a connected client drains it within milliseconds.
    """
    def unread() -> int:
        queue = getattr(getattr(demo, "_queue", None), "pending_messages_per_session", {}).get(session_hash)
        return queue.qsize() if queue is not None else 0

    return unread
