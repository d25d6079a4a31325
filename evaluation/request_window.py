"""A request ceiling learnt from the provider's first 429 when it announces nothing else.

A provider that sends no `x-ratelimit-*` headers and names no limit still says two things when it
refuses: *that* the window is full, and (in `Retry-After`) when its oldest request leaves it. A batch
starts at full speed, so at the first refusal every request admitted since the start is still in the
provider's window: the window holds `n` = the requests it admitted before refusing, and it is
`elapsed since the first of them + Retry-After` long. From then on at most `n` requests start in any
window of that length (plus a small margin), which is the ceiling itself, not a guess below it.
A later refusal means the guess was one too generous: the window is widened to what that refusal
says and the count lowered by one.
"""

from __future__ import annotations

import contextlib
from collections import deque
from dataclasses import dataclass

SLACK_S = 0.02
"""Seconds added to the learnt window: a request's start here and its arrival there differ by the network's jitter."""


@dataclass(frozen=True)
class LearntWindow:
    """`requests` at most per `window_s` seconds, as the provider's refusals told."""

    requests: int
    window_s: float

    @property
    def per_minute(self) -> float:
        """The ceiling as a per-minute rate."""
        return self.requests * 60.0 / self.window_s


def learn_window(admitted_at: list[float], refused_at: float, retry_after_s: float | None) -> LearntWindow | None:
    """The window a first refusal implies (see the module docstring); None when it says too little.

    `admitted_at`: start times of the requests the provider took before refusing the one started at `refused_at`.
    """
    if retry_after_s is None or retry_after_s <= 0 or len(admitted_at) < 2:
        return None
    return LearntWindow(len(admitted_at), refused_at - min(admitted_at) + retry_after_s)


class RequestLog:
    """Start times of recent requests, to keep at most `limit.requests` in any window (not thread-safe)."""

    def __init__(self, limit: LearntWindow, margin: float = 0.01) -> None:
        self.limit = limit
        self.margin = margin
        self._starts: deque[float] = deque()

    @property
    def span_s(self) -> float:
        """The window enforced: the provider's, a little wider (clocks and network jitter)."""
        return self.limit.window_s * (1.0 + self.margin) + SLACK_S

    def ready_at(self, now: float) -> float:
        """When the next request may start."""
        while self._starts and now - self._starts[0] >= self.span_s:
            self._starts.popleft()
        if len(self._starts) < self.limit.requests:
            return now
        return self._starts[-self.limit.requests] + self.span_s

    def take(self, now: float) -> None:
        """A request starts now."""
        self._starts.append(now)

    def refund(self, started: float) -> None:
        """A refused request: the provider did not count it."""
        with contextlib.suppress(ValueError):
            self._starts.remove(started)

    def seed(self, starts: list[float]) -> None:
        """The requests already in the provider's window when the limit was learnt."""
        self._starts = deque(sorted(starts))

    def tighten(self, refused_at: float, retry_after_s: float | None) -> None:
        """A refusal despite the log: one request fewer per window, and the window as long as it says."""
        in_window = [t for t in self._starts if refused_at - t < self.span_s]
        longer = (refused_at - in_window[0] + retry_after_s) if retry_after_s and in_window else 0.0
        fewer = min(self.limit.requests, len(in_window) or self.limit.requests) - 1
        self.limit = LearntWindow(max(1, fewer), max(self.limit.window_s, longer))
