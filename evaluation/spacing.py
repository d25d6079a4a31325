"""The gap the batch's limiter leaves between request starts, when no budget the provider announced sets the pace.

With a configured rpm, requests start one `60/rpm` interval apart (a little wider: clock jitter). With
no limit known, a 429 that explains nothing widens the interval once per episode, to a little under the
pace that got through before it (the latest successes, quota resets left out); while no 429 comes, it
shrinks slowly back toward the floor. Headers or a learnt window replace the spacing altogether.
"""

from __future__ import annotations

from collections import deque


class Spacing:
    """The minimum gap between request starts, widened by 429s and recovering while calm (not thread-safe)."""

    WINDOW_S = 60.0
    """Successes older than this are forgotten (providers count requests per minute)."""
    RECENT = 20
    """How many of the latest successes measure the pace the provider allows."""
    RESET_S = 10.0
    """A Retry-After longer than this is a quota reset (a per-minute window refilling), not a pace."""

    def __init__(self, requests_per_minute: float = 0.0, *, safety: float = 0.02, recovery: float = 0.01,
                 calm_s: float = 2.0) -> None:
        """The floor from a configured rpm (0 = none); `safety`, `recovery` and `calm_s`: see `RateLimiter`."""
        self._safety = safety
        self.floor = 60.0 / requests_per_minute * (1.0 + safety) if requests_per_minute > 0 else 0.0
        """The interval never goes below this (the configured or named rate)."""
        self.interval = self.floor
        """Current minimum gap between request starts (0 = no spacing)."""
        self._recovery = recovery
        self._calm_s = calm_s
        self._episode_until = float("-inf")
        self._last_limited = float("-inf")
        self._successes: deque[float] = deque()
        self._resets: deque[tuple[float, float]] = deque()

    def succeeded(self, now: float) -> None:
        """A request went through: remember when, and speed up a little once `calm_s` passed without a 429."""
        self._successes.append(now)
        self._trim(now)
        if now - self._last_limited >= self._calm_s and self.interval > self.floor:
            self.interval = max(self.floor, self.interval * (1.0 - self._recovery))

    def refused(self, now: float, retry_after: float | None, pause: float, resume_at: float, *, explained: bool,
                windowed: bool) -> None:
        """A 429: requests resume at `resume_at`; unless the provider's numbers `explained` it, slow down.

        A long `pause` is a quota reset, left out of the pace measured later (unless a learnt window,
        `windowed`, sets the pace); the 429s of requests already in flight belong to the same episode.
        """
        self._last_limited = now
        if pause > self.RESET_S and not windowed:
            self._resets.append((now, now + pause))
        if now >= self._episode_until and not explained:
            self._widen(now, retry_after)
        self._episode_until = resume_at + self.interval

    def keep_to(self, rate_per_s: float) -> None:
        """A request rate a 429's message named: never start faster than it."""
        self.floor = max(self.floor, 1.0 / rate_per_s * (1.0 + self._safety))
        self.interval = max(self.interval, self.floor)

    def clear(self) -> None:
        """The provider's headers or a learnt window set the pace now: no spacing."""
        self.floor = self.interval = 0.0

    def _widen(self, now: float, retry_after: float | None) -> None:
        """Slow down once per episode.

        To a little under the pace that got through; knowing nothing yet, to the server's short Retry-After (a
        steady-rate limit's spacing), else to half speed.
        """
        achieved = self._achieved_interval(now)
        if achieved is not None:
            widened = achieved * 1.05
        elif retry_after is not None and 0 < retry_after <= self.RESET_S:
            widened = retry_after
        else:
            widened = self.interval * 1.5
        self.interval = max(self.floor, self.interval * 1.05, widened, 0.01)

    def _achieved_interval(self, now: float) -> float | None:
        """Mean gap between the latest successes (up to RECENT of them, within the last minute).

        The pace the provider let through just before it said no. None when too few requests got through to tell.
        """
        self._trim(now)
        count = min(len(self._successes), self.RECENT)
        if count < 3:
            return None
        since = self._successes[-count]
        # Time spent waiting for a quota reset says nothing about the pace: leave it out.
        reset = sum(max(0.0, min(end, now) - max(start, since)) for start, end in self._resets)
        return max(0.0, now - since - reset) / count

    def _trim(self, now: float) -> None:
        while self._successes and now - self._successes[0] > self.WINDOW_S:
            self._successes.popleft()
        while self._resets and now - self._resets[0][1] > self.WINDOW_S:
            self._resets.popleft()
