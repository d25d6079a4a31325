"""Which waiting request the batch's limiter serves first: the one whose task has gone furthest.

Under a rate limit, requests queue in the limiter. Served in arrival order (or by whichever thread
wakes first), a long chain of steps waits behind every one-step task at each of its steps, and the
batch ends with it alone: the idle tail. A task that has already made many requests is, most likely,
the critical path (GAIA's long research chains), so among the requests ready to go, the one whose task
has made the most requests goes first (ties: the earliest to ask). Only ready requests compete: each
waiter records when its budgets open (its slot) at every look, and one whose slot is later (held back
by its own token budget) never blocks another that fits now; one whose slot has come goes at its next
look, which is no later than that slot. Under a window of N requests, a task that has not gone as
far also leaves one free place per long task further along that is running (in a tool or awaiting an answer):
its next request comes within moments, and a window filled in one clump would otherwise hold it back
until the window's end at every step.
"""

from __future__ import annotations

from dataclasses import dataclass

EPSILON_S = 1e-6
LONG_AFTER = 3
"""A task that has made this many requests has shown it is a long one (most tasks make two to four)."""


@dataclass
class _Waiter:
    progress: int
    """Requests the waiter's task was admitted before this one."""
    seq: int
    slot: float = float("inf")
    """When its last look found every budget open for it."""


class Waiters:
    """Requests waiting in `RateLimiter.acquire` (not thread-safe: the limiter holds its lock)."""

    def __init__(self) -> None:
        self._waiting: dict[int, _Waiter] = {}
        self._seq = 0
        self._progress: dict[int, int] = {}
        """Requests admitted so far per task (by the thread running it), for the tasks running now."""

    def join(self, task: int) -> int:
        """A request of `task` (its thread's id) starts waiting; its key."""
        self._seq += 1
        self._waiting[self._seq] = _Waiter(self._progress.get(task, 0), self._seq)
        return self._seq

    def served(self, task: int) -> None:
        """A request of `task` was admitted."""
        self._progress[task] = self._progress.get(task, 0) + 1

    def restart(self, task: int) -> None:
        """The thread `task` starts (or ended) a task: its count starts again."""
        self._progress.pop(task, None)

    def ahead(self, key: int) -> int:
        """Running long tasks that have gone further than the waiter `key`'s (their next request should not wait).

        Only a task past LONG_AFTER requests counts: a place kept for a short task about to end goes unused, and
        every such gap pushes the rest of the batch later.
        """
        mine = self._waiting[key].progress
        return sum(1 for p in self._progress.values() if p > mine and p >= LONG_AFTER)

    def leave(self, key: int) -> None:
        """The request went (or gave up)."""
        self._waiting.pop(key, None)

    def may_go(self, key: int, slot: float, now: float) -> bool:
        """Record `key`'s slot; True when it has come and no waiter whose slot came too is further along (or older)."""
        me = self._waiting[key]
        me.slot = slot
        if slot > now + EPSILON_S:
            return False
        rank = (-me.progress, me.seq)
        return all(w.slot > now + EPSILON_S or (-w.progress, w.seq) >= rank for w in self._waiting.values())

    def __len__(self) -> int:
        return len(self._waiting)
