"""The one rate-aware limiter a batch shares: smooth request spacing, a common pause on 429, recovery.

Every model request of every concurrent task asks `acquire()` first (the agent's LLM client does, via
the `RequestGate` protocol), so the whole batch speaks to the provider at one controlled pace:

- **known limit** (`LLM_REQUESTS_PER_MINUTE` > 0): requests start one `60/rpm` interval apart (plus a
  small safety margin), never in bursts, so a provider that enforces its limit as a steady rate
  (many quantise a per-minute limit into seconds) is never exceeded;
- **unknown limit**: requests go as fast as tasks produce them until the first 429; the interval is
  then set from the pace at which the latest requests got through (time spent waiting for a
  per-minute quota to reset left out), or from a short Retry-After when nothing was measured yet,
  and it shrinks again slowly while no 429 comes;
- **on 429** everyone pauses until the server's `Retry-After` (or a default backoff) and restarts
  spaced out, so a limit hit by one task never turns into a retry storm that fails another.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from config import Settings

if TYPE_CHECKING:  # the limiter is imported before langchain is needed
    from models.client import ResponseInfo


class RunStopped(RuntimeError):
    """Raised by `acquire()` once the run's stop event is set: the request is not sent."""


@dataclass(frozen=True)
class LimiterStats:
    """What the limiter did, for summaries and benchmarks."""

    admitted: int
    successes: int
    rate_limited: int
    waited_s: float
    interval_s: float
    known_rpm: float


class RateLimiter:
    """Shared admission control for one run's model requests (implements `models.client.RequestGate`)."""

    WINDOW_S = 60.0
    """Successes older than this are forgotten (providers count requests per minute)."""
    RECENT = 20
    """How many of the latest successes measure the pace the provider allows."""
    RESET_S = 10.0
    """A Retry-After longer than this is a quota reset (a per-minute window refilling), not a pace."""

    def __init__(self, requests_per_minute: float = 0.0, *, safety: float = 0.02, no_hint_pause: float = 10.0,
                 recovery: float = 0.01, calm_s: float = 2.0, stop: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] | None = None) -> None:
        """`safety` widens the known interval a little (clock jitter); `recovery` is the fraction the interval
        shrinks per success once `calm_s` seconds passed without a 429; `no_hint_pause` is the common pause
        when a 429 carries no Retry-After."""
        if requests_per_minute < 0:
            raise ValueError("requests_per_minute must be >= 0 (0 = unknown)")
        self.known_rpm = float(requests_per_minute)
        self._floor = 60.0 / requests_per_minute * (1.0 + safety) if requests_per_minute > 0 else 0.0
        self._interval = self._floor
        self._no_hint_pause = no_hint_pause
        self._recovery = recovery
        self._calm_s = calm_s
        self._stop = stop
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_at = float("-inf")
        self._paused_until = float("-inf")
        self._episode_until = float("-inf")
        self._last_limited = float("-inf")
        self._epoch = 0
        self._started: float | None = None
        self._successes: deque[float] = deque()
        self._resets: deque[tuple[float, float]] = deque()
        self._admitted = self._n_success = self._n_limited = 0
        self._waited = 0.0

    @classmethod
    def from_settings(cls, settings: Settings, *, stop: threading.Event | None = None) -> "RateLimiter":
        """The limiter a batch uses: the configured rpm (0 = adaptive) and the configured backoff."""
        return cls(settings.LLM_REQUESTS_PER_MINUTE, no_hint_pause=settings.RATE_LIMIT_RETRY_BASE_DELAY, stop=stop)

    # -- RequestGate ------------------------------------------------------------------------------
    def acquire(self, estimated_tokens: int = 0) -> None:
        """Block until this request's slot; a 429 arriving meanwhile sends it behind the common pause."""
        while True:
            self._check_stop()
            with self._lock:
                now = self._clock()
                if self._started is None:
                    self._started = now
                slot = max(now, self._next_at, self._paused_until)
                self._next_at = slot + self._interval
                epoch = self._epoch
            if slot > now:
                self._wait(slot - now)
            with self._lock:
                if self._epoch == epoch:
                    self._admitted += 1
                    self._waited += max(0.0, self._clock() - now)
                    return

    def on_success(self, info: ResponseInfo | None = None) -> None:
        """A request went through: count it, and speed up a little if no 429 came recently."""
        with self._lock:
            now = self._clock()
            self._n_success += 1
            self._successes.append(now)
            self._trim(now)
            if now - self._last_limited >= self._calm_s and self._interval > self._floor:
                self._interval = max(self._floor, self._interval * (1.0 - self._recovery))

    def on_rate_limited(self, retry_after: float | None, info: ResponseInfo | None = None) -> None:
        """A 429: everyone pauses until Retry-After, and (once per episode) the interval widens."""
        with self._lock:
            now = self._clock()
            self._n_limited += 1
            self._last_limited = now
            pause = max(0.0, retry_after if retry_after is not None else self._no_hint_pause)
            self._paused_until = max(self._paused_until, now + pause)
            if pause > self.RESET_S:
                self._resets.append((now, now + pause))
            if now >= self._episode_until:
                # 429s of requests already in flight belong to this same episode: slow down once, to a
                # little under the pace that got through; knowing nothing yet, to the server's short
                # Retry-After (a steady-rate limit's spacing), else to half speed.
                achieved = self._achieved_interval(now)
                if achieved is not None:
                    widened = achieved * 1.05
                elif retry_after is not None and 0 < retry_after <= self.RESET_S:
                    widened = retry_after
                else:
                    widened = self._interval * 1.5
                self._interval = max(self._floor, self._interval * 1.05, widened, 0.01)
            self._episode_until = self._paused_until + self._interval
            self._next_at = self._paused_until
            self._epoch += 1

    # -- introspection ----------------------------------------------------------------------------
    @property
    def interval_s(self) -> float:
        """Current minimum gap between request starts (0 = no spacing)."""
        return self._interval

    def stats(self) -> LimiterStats:
        """Counters since the limiter was made."""
        with self._lock:
            return LimiterStats(self._admitted, self._n_success, self._n_limited, round(self._waited, 3),
                                round(self._interval, 4), self.known_rpm)

    # -- internals --------------------------------------------------------------------------------
    def _achieved_interval(self, now: float) -> float | None:
        """Mean gap between the latest successes (up to RECENT of them, within the last minute): the pace the
        provider let through just before it said no. None when too few requests got through to tell."""
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

    def _check_stop(self) -> None:
        if self._stop is not None and self._stop.is_set():
            raise RunStopped("the run was stopped; request not sent")

    def _wait(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        elif self._stop is not None:
            if self._stop.wait(seconds):
                raise RunStopped("the run was stopped; request not sent")
        else:
            time.sleep(seconds)


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
