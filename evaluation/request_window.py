"""A request ceiling learnt from the provider's first 429 when it announces nothing else.

A provider that sends no `x-ratelimit-*` headers and names no limit still says two things when it
refuses: *that* the window is full, and (in `Retry-After`) when its oldest request leaves it. A batch
starts at full speed, so at the first refusal every request admitted since the start is still in the
provider's window: the window holds `n` = the requests it admitted before refusing, and it is
`elapsed since the first of them + Retry-After` long. From then on at most `n` requests start in any
window of that length (plus a small margin), which is the ceiling itself, not a guess below it.
A later refusal says which guess was off. With a full window by the log's own count, the timing was:
a request starts here a moment before the provider counts it, and that moment varies (a busy machine,
the network), so the margin grows by how early the request was (its Retry-After). With fewer in the
window than learnt, the count was: it drops to what the window held. Requests also reach the provider
in an order a moment apart from the one they started in here, so the answers of the requests still in
flight at the first refusal correct the count by one each way (`FirstRefusal`).
"""

from __future__ import annotations

import contextlib
from collections import deque
from dataclasses import dataclass

SLACK_S = 0.02
"""Seconds added to the learnt window: a request's start here and its arrival there differ by the network's jitter.
Small to begin with (each window pays it), it grows by the Retry-After of any refusal under a full log."""
MAX_SLACK_SHARE = 0.1
"""The margin grows after refusals up to this share of the window."""
JITTER_SHARE = 0.05
"""How much earlier than the provider gets it a start here may be stamped, as a share of the window (a busy machine
sends a request a tenth of a second or more after admitting it): the refusals that causes are timing, not count."""


@dataclass(frozen=True)
class LearntWindow:
    """`requests` at most per `window_s` seconds, as the provider's refusals told."""

    requests: int
    window_s: float

    @property
    def per_minute(self) -> float:
        """The ceiling as a per-minute rate."""
        return self.requests * 60.0 / self.window_s


@dataclass(frozen=True)
class FirstRefusal:
    """The refusal a window was learnt from; the requests in flight then tell whether its count held.

    The count took every request started before the refused one as admitted. One of those refused after
    all reached the provider after it (one fewer fits); one started after it and admitted before the
    oldest left the window reached the provider before it (one more fits).
    """

    seq: int
    """The refused request's admission number."""
    oldest_leaves: float
    """Its start plus the Retry-After: when the window's oldest request leaves it."""
    answered: float
    """When the refusal came: requests started earlier were in flight then."""

    def correction(self, seq: int, started: float, *, refused: bool) -> int:
        """How the answer of request `seq` (started at `started`) changes the learnt count: -1, 0 or 1."""
        if seq == self.seq or started >= self.answered:
            return 0
        if refused:
            return -1 if seq < self.seq else 0
        return 1 if seq > self.seq and started < self.oldest_leaves else 0


def learn_window(admitted_at: list[float], refused_at: float, retry_after_s: float | None) -> LearntWindow | None:
    """The window a first refusal implies (see the module docstring); None when it says too little.

    `admitted_at`: start times of the requests the provider took before refusing the one started at `refused_at`.
    Each of them may be the window's oldest (which leaves it at `refused_at + Retry-After`); a candidate is kept
    only if no earlier moment had more requests in such a window than it allows, and of those the shortest window
    wins (providers count per second or per minute, not per quarter hour). At a batch's start, when every request
    is still in the window, the only candidate is the first request.
    """
    starts = sorted(t for t in admitted_at if t <= refused_at)
    if retry_after_s is None or retry_after_s <= 0 or len(starts) < 2:
        return None
    best: LearntWindow | None = None
    for k, oldest in enumerate(starts):
        window = refused_at + retry_after_s - oldest
        candidate = LearntWindow(len(starts) - k, window)
        if len(starts) - k < 2 or not _consistent(starts, candidate):
            continue
        if best is None or candidate.window_s < best.window_s:
            best = candidate
    return best


def _consistent(starts: list[float], limit: LearntWindow) -> bool:
    """No start had more than `limit.requests` starts (itself included) in the window ending with it."""
    first = 0
    for i, at in enumerate(starts):
        while at - starts[first] >= limit.window_s:
            first += 1
        if i - first + 1 > limit.requests:
            return False
    return True


class RequestLog:
    """Start times of recent requests, to keep at most `limit.requests` in any window (not thread-safe)."""

    def __init__(self, limit: LearntWindow, origin: FirstRefusal | None = None, margin: float = 0.01) -> None:
        self.limit = limit
        self.origin = origin
        """The refusal the limit was learnt from."""
        self.margin = margin
        self.slack_s = SLACK_S
        self._starts: deque[float] = deque()
        self._gone: deque[float] = deque()
        """Starts that left the enforced window lately: the provider, which got them later, may still count them."""

    @property
    def span_s(self) -> float:
        """The window enforced: the provider's, a little wider (clocks and network jitter)."""
        return self.limit.window_s * (1.0 + self.margin) + self.slack_s

    def ready_at(self, now: float) -> float:
        """When the next request may start."""
        while self._starts and now - self._starts[0] >= self.span_s:
            self._gone.append(self._starts.popleft())
        while self._gone and now - self._gone[0] >= 2 * self.span_s:
            self._gone.popleft()
        if len(self._starts) < self.limit.requests:
            return now
        return self._starts[-self.limit.requests] + self.span_s

    def free(self, now: float) -> int:
        """Requests that may start now."""
        self.ready_at(now)  # forgets the starts that left the window
        return max(0, self.limit.requests - len(self._starts))

    def take(self, now: float) -> None:
        """A request starts now."""
        self._starts.append(now)

    def refund(self, started: float) -> None:
        """A refused request: the provider did not count it."""
        for starts in (self._starts, self._gone):
            with contextlib.suppress(ValueError):
                starts.remove(started)
                return

    def seed(self, starts: list[float]) -> None:
        """The requests already in the provider's window when the limit was learnt."""
        self._starts = deque(sorted(starts))
        self._gone.clear()

    def answered(self, seq: int, started: float) -> None:
        """The provider took request `seq`: one in flight at the first refusal may correct the count."""
        if self.origin is not None:
            self._recount(self.origin.correction(seq, started, refused=False))

    def refused(self, seq: int, started: float, retry_after_s: float | None) -> None:
        """A later refusal: one in flight at the first corrects the count, one the log let through tightens it."""
        if self.origin is not None and (delta := self.origin.correction(seq, started, refused=True)):
            self._recount(delta)  # it reached the provider after the first refused one
        elif self.origin is None or started >= self.origin.answered:
            self.tighten(started, retry_after_s)

    def _recount(self, delta: int) -> None:
        if delta:
            self.limit = LearntWindow(max(1, self.limit.requests + delta), self.limit.window_s)

    def held_at(self, refused_at: float, retry_after_s: float | None) -> int:
        """Starts before `refused_at` the provider may still have held when it refused the one started then.

        Those in the enforced window, and those since a window before its oldest leaves (`refused_at` +
        Retry-After), less the jitter: a start is stamped here a little before the provider gets it, so one the
        log has let go of may still count there. Read as a lower count, such a refusal once took a batch from 10 to
        5 per window.
        """
        jitter = max(self.slack_s, self.limit.window_s * JITTER_SHARE)
        since = min(refused_at - self.span_s, refused_at + (retry_after_s or 0.0) - self.limit.window_s - jitter)
        return sum(1 for t in (*self._gone, *self._starts) if since < t < refused_at)

    def tighten(self, refused_at: float, retry_after_s: float | None) -> None:
        """A refusal despite the log: a wider margin (the timing was off) or a lower count (see the module)."""
        in_window = self.held_at(refused_at, retry_after_s)
        if in_window >= self.limit.requests - 1:
            grown = self.slack_s + (retry_after_s if retry_after_s is not None else SLACK_S)
            self.slack_s = min(grown, self.limit.window_s * MAX_SLACK_SHARE)
        else:
            self.limit = LearntWindow(max(1, in_window), self.limit.window_s)
