"""The gap a one-at-a-time batch leaves between task starts (`BATCH_QUESTION_DELAY`).

Separate from the rate limiter: it spaces whole tasks, not model requests, and knows no budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class StartSpacer:
    """Minimum gap between task starts (`BATCH_QUESTION_DELAY` when a batch runs one task at a time)."""

    def __init__(self, min_gap: float, *, stop: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.min_gap = max(0.0, min_gap)
        self._stop = stop
        self._clock = clock
        self._lock = threading.Lock()
        self._next_at = float("-inf")

    def wait_turn(self) -> bool:
        """Block until the next task may start; False if the run was stopped meanwhile."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_at)
            self._next_at = slot + self.min_gap
        delay = slot - now
        if delay > 0:
            if self._stop is not None:
                return not self._stop.wait(delay)
            time.sleep(delay)
        return not (self._stop is not None and self._stop.is_set())
